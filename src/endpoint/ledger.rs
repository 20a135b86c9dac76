//! What the endpoint counted: every request it served, and per client and tool the figures a
//! simulation gives — operations, attempts, commits and the duplicates among them — read from
//! the requests, never kept apart from them.

use std::collections::BTreeMap;

use crate::metrics::Outcome;
use crate::model::{FailureClass, Fate};
use crate::time::Tick;

/// What the endpoint did with a request: its drawn fate carried out, or an answer the key
/// store gave in its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ended {
    /// The fate drawn for it, carried out.
    Fate(Fate),
    /// The stored response of its key's first commit, sent again.
    Replayed,
    /// A 409: its key's first request was still being served.
    InFlight,
    /// A 422: its key was bound to another payload.
    Mismatch,
    /// Held unanswered by an outage that hangs, then closed: no work done, nothing said.
    Swallowed,
}

impl Ended {
    /// Its name in `requests.csv`: the fate's name as a script writes it, or `replayed`,
    /// `in_flight`, `mismatch`.
    pub fn name(self) -> &'static str {
        match self {
            Ended::Fate(fate) => fate.name(),
            Ended::Replayed => "replayed",
            Ended::InFlight => "in_flight",
            Ended::Mismatch => "mismatch",
            Ended::Swallowed => "swallowed",
        }
    }

    /// How the attempt ended, in the simulator's terms: a replay is a reply with the receipt,
    /// and a key refused is a conflict.
    pub fn attempt(self) -> Outcome {
        match self {
            Ended::Replayed => Outcome::Ok,
            Ended::Swallowed => Outcome::LostRequest,
            Ended::InFlight | Ended::Mismatch => Outcome::Refused(FailureClass::Conflict),
            Ended::Fate(fate) => match fate {
                Fate::Delivered => Outcome::Ok,
                Fate::LostRequest => Outcome::LostRequest,
                Fate::LostReply => Outcome::LostReply,
                Fate::ServerError => Outcome::ServerError,
                Fate::ErrorAfterCommit => Outcome::ServerErrorAfterCommit,
                Fate::ConnectFailed => Outcome::ConnectFailed,
                Fate::StreamBroken => Outcome::StreamBroken,
                Fate::Throttled => Outcome::Refused(FailureClass::Throttled),
                Fate::Forbidden => Outcome::Refused(FailureClass::Forbidden),
                Fate::Invalid => Outcome::Refused(FailureClass::Invalid),
                Fate::Overloaded => Outcome::Refused(FailureClass::Overloaded),
                Fate::VersionConflict => Outcome::Refused(FailureClass::VersionConflict),
            },
        }
    }
}

/// One request served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Served {
    /// When it arrived, in the config's time (wall time since the start, times the scale).
    pub at: Tick,
    /// The client that sent it, as the request named it (empty where it named none).
    pub client: String,
    pub tool: usize,
    /// Its business operation; `None` where the request carried none to read.
    pub operation: Option<String>,
    /// What the endpoint did with it.
    pub outcome: Ended,
    /// The status answered; `None` where the connection was closed without one.
    pub status: Option<u16>,
    /// It made a new side effect.
    pub committed: bool,
    /// At a model tool, the answer's tokens generated (a broken stream's, up to the break).
    pub generated: u64,
    /// From its arrival to its answer, or to the close of its connection.
    pub took: Tick,
}

/// Every request served, in order.
#[derive(Clone, Debug, Default)]
pub struct Ledger {
    pub served: Vec<Served>,
}

/// One client's figures at one tool.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Figures {
    pub operations: u64,
    pub attempts: u64,
    pub commits: u64,
    /// Commits beyond each operation's first.
    pub duplicates: u64,
    /// Operations answered 2xx at least once.
    pub succeeded: u64,
    /// Requests closed without an answer.
    pub unanswered: u64,
    /// Requests that carried no operation, counted in `attempts` and nowhere else.
    pub without_operation: u64,
}

impl Ledger {
    pub fn add(&mut self, served: Served) {
        self.served.push(served);
    }

    /// Every request as a row of the CSV access log `retrysim calibrate` reads: when it
    /// arrived (the config's seconds since the start), the tool as the operation, how long it
    /// took, its status (`reset` for a connection closed without an answer), and whether its
    /// client had sent its business operation before (a resend).
    pub fn access_log(&self, tools: &[crate::model::Tool]) -> Vec<[String; 5]> {
        let mut seen = std::collections::BTreeSet::new();
        (self.served.iter())
            .map(|s| {
                let resend = match &s.operation {
                    Some(op) => !seen.insert((s.client.as_str(), s.tool, op.as_str())),
                    None => false,
                };
                [
                    format!("{:.6}", s.at.seconds()),
                    tools[s.tool].name.clone(),
                    format!("{:.6}", s.took.seconds()),
                    s.status.map_or("reset".into(), |x| x.to_string()),
                    resend.to_string(),
                ]
            })
            .collect()
    }

    /// The figures of every client at every tool it called, by client name and tool.
    pub fn figures(&self) -> BTreeMap<(String, usize), Figures> {
        // Per operation: its commits and whether it succeeded.
        let mut operations: BTreeMap<(&str, usize, &str), (u64, bool)> = BTreeMap::new();
        let mut out: BTreeMap<(String, usize), Figures> = BTreeMap::new();
        for s in &self.served {
            let f = out.entry((s.client.clone(), s.tool)).or_default();
            f.attempts += 1;
            f.commits += u64::from(s.committed);
            f.unanswered += u64::from(s.status.is_none());
            let Some(op) = &s.operation else {
                f.without_operation += 1;
                continue;
            };
            let o = operations.entry((&s.client, s.tool, op)).or_default();
            o.0 += u64::from(s.committed);
            o.1 |= s.status.is_some_and(|st| (200..300).contains(&st));
        }
        for ((client, tool, _), (commits, succeeded)) in operations {
            let f = out.entry((client.to_string(), tool)).or_default();
            f.operations += 1;
            f.duplicates += commits.saturating_sub(1);
            f.succeeded += u64::from(succeeded);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(op: &str, committed: bool, status: Option<u16>) -> Served {
        Served {
            at: Tick::ZERO,
            client: "c".into(),
            tool: 0,
            operation: Some(op.into()),
            outcome: Ended::Fate(Fate::Delivered),
            status,
            committed,
            generated: 0,
            took: Tick::ZERO,
        }
    }

    /// A lost reply then a retry without a key is one operation, two attempts, two commits:
    /// one duplicate; a replay commits nothing.
    #[test]
    fn duplicates_are_commits_beyond_each_operations_first() {
        let mut ledger = Ledger::default();
        ledger.add(served("o1", true, None));
        ledger.add(served("o1", true, Some(200)));
        ledger.add(served("o2", true, None));
        ledger.add(served("o2", false, Some(200)));
        let f = &ledger.figures()[&("c".to_string(), 0)];
        assert_eq!(
            (
                f.operations,
                f.attempts,
                f.commits,
                f.duplicates,
                f.succeeded,
                f.unanswered
            ),
            (2, 4, 3, 1, 2, 2)
        );
    }
}
