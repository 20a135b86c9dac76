//! The record of one attempt: the trace a teacher draws a timeline from.

use crate::model::{FailureClass, Fate};
use crate::time::Tick;

/// How an attempt ended for the client. The trace knows what the client cannot: whether a
/// silent or reset attempt lost its request or its reply.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A reply with the receipt.
    Ok,
    /// The request never reached the server.
    LostRequest,
    /// The connection failed, and the client knows the request never left.
    ConnectFailed,
    /// The server did the work; its reply was lost.
    LostReply,
    /// A transient error (5xx) before the commit.
    ServerError,
    /// A 5xx after the commit: the work was done.
    ServerErrorAfterCommit,
    /// Refused before the commit: 429, 403 or another 4xx; or a conflict, the key being bound
    /// to another payload.
    Refused(FailureClass),
    /// The client stopped waiting; the attempt went on without it.
    Timeout,
    /// The operation was cancelled while the attempt was awaited; it went on without it.
    Cancelled,
    /// Still awaited when the run ended.
    Unanswered,
    /// A model's stream broke part-way: the tokens streamed so far were generated.
    StreamBroken,
}

/// The outcomes' names, and their `tools.csv` columns made from them, in one list.
macro_rules! outcomes {
    [$($name:literal),* $(,)?] => {
        /// Every outcome's name, in the order `index` numbers them.
        pub const NAMES: [&'static str; [$($name),*].len()] = [$($name),*];
        /// Each outcome's column in `tools.csv`, in the same order.
        pub const COLUMNS: [&'static str; [$($name),*].len()] = [$(concat!("outcome_", $name)),*];
    };
}

impl Outcome {
    outcomes![
        "ok",
        "lost_request",
        "lost_reply",
        "5xx",
        "429",
        "403",
        "4xx",
        "conflict",
        "timeout",
        "cancelled",
        "unanswered",
        "503",
        "conflict_version",
        "connect",
        "5xx_after_commit",
        "stream_broken",
    ];

    /// How an attempt of fate `fate` ended when `failure` (none: a receipt) reached the
    /// client: the trace tells a lost request from a lost reply, which the client cannot.
    pub fn of(failure: Option<FailureClass>, fate: Fate) -> Outcome {
        match (failure, fate) {
            (None, _) => Outcome::Ok,
            (Some(FailureClass::ServerError), Fate::ErrorAfterCommit) => {
                Outcome::ServerErrorAfterCommit
            }
            (Some(FailureClass::ServerError), _) => Outcome::ServerError,
            (Some(FailureClass::Reset), Fate::LostRequest) => Outcome::LostRequest,
            (Some(FailureClass::Reset), _) => Outcome::LostReply,
            (Some(FailureClass::Connect), _) => Outcome::ConnectFailed,
            (Some(FailureClass::StreamBroken), _) => Outcome::StreamBroken,
            (Some(class), _) => Outcome::Refused(class),
        }
    }

    /// The outcome's position in [`Outcome::NAMES`] (a test holds the two in step).
    pub fn index(self) -> usize {
        match self {
            Outcome::Ok => 0,
            Outcome::LostRequest => 1,
            Outcome::LostReply => 2,
            Outcome::ServerError => 3,
            Outcome::Refused(class) => match class {
                FailureClass::Throttled => 4,
                FailureClass::Forbidden => 5,
                FailureClass::Invalid => 6,
                FailureClass::Conflict => 7,
                FailureClass::Overloaded => 11,
                FailureClass::VersionConflict => 12,
                // Not refusals: a reset or a timeout has its own outcome.
                FailureClass::Reset
                | FailureClass::ServerError
                | FailureClass::Timeout
                | FailureClass::Connect
                | FailureClass::StreamBroken => {
                    unreachable!("only refusals are refused")
                }
            },
            Outcome::Timeout => 8,
            Outcome::Cancelled => 9,
            Outcome::Unanswered => 10,
            Outcome::ConnectFailed => 13,
            Outcome::ServerErrorAfterCommit => 14,
            Outcome::StreamBroken => 15,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::LostRequest => "lost_request",
            Outcome::ConnectFailed => "connect",
            Outcome::LostReply => "lost_reply",
            Outcome::ServerError => "5xx",
            Outcome::ServerErrorAfterCommit => "5xx_after_commit",
            Outcome::Refused(class) => class.name(),
            Outcome::Timeout => "timeout",
            Outcome::Cancelled => "cancelled",
            Outcome::Unanswered => "unanswered",
            Outcome::StreamBroken => "stream_broken",
        }
    }
}

/// One attempt of an intent, numbered from 0 by its position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptRecord {
    /// The retry layer whose attempt this dispatch began, 0 the outermost: the first dispatch
    /// begins an attempt of every layer and counts as layer 0's.
    pub layer: u8,
    pub dispatch: Tick,
    /// When the outcome reached the client, or the client stopped waiting.
    pub end: Tick,
    /// The wait the client granted it (`None`: no timeout or deadline), recorded even for a
    /// non-cooperative call that no timer can cut.
    pub granted: Option<Tick>,
    pub outcome: Outcome,
    /// It made a new side effect at the server (a replayed receipt makes none).
    pub committed: bool,
    /// What the reconciliation lookup made right after it found, if one was made: the trace
    /// shows where each lookup sits without a row of its own.
    pub lookup: Option<Lookup>,
    /// The replica it was sent to (0 at a tool with one server).
    pub replica: u16,
    /// The worker that sent it (0 the call's first; see [`crate::model::Crash`]), which the
    /// key it carried may depend on.
    pub worker: u16,
}

/// The answer of a reconciliation lookup, as the trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// The key's commit was there.
    Found,
    /// The server showed no commit for the key.
    NotFound,
    /// The lookup itself failed.
    Failed,
}

impl Lookup {
    /// Every answer's name, after `none` for an attempt no lookup followed.
    pub const NAMES: [&'static str; 4] = ["none", "found", "not_found", "failed"];

    pub fn name(self) -> &'static str {
        match self {
            Lookup::Found => "found",
            Lookup::NotFound => "not_found",
            Lookup::Failed => "failed",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_sits_at_its_name() {
        let refusals = [
            FailureClass::Throttled,
            FailureClass::Forbidden,
            FailureClass::Invalid,
            FailureClass::Conflict,
            FailureClass::Overloaded,
            FailureClass::VersionConflict,
        ];
        let all = [
            Outcome::Ok,
            Outcome::LostRequest,
            Outcome::LostReply,
            Outcome::ServerError,
            Outcome::ServerErrorAfterCommit,
            Outcome::Timeout,
            Outcome::Cancelled,
            Outcome::Unanswered,
            Outcome::ConnectFailed,
            Outcome::StreamBroken,
        ]
        .into_iter()
        .chain(refusals.map(Outcome::Refused));
        let mut seen = Vec::new();
        for outcome in all {
            assert_eq!(Outcome::NAMES[outcome.index()], outcome.name());
            seen.push(outcome.index());
        }
        seen.sort_unstable();
        assert_eq!(seen, (0..Outcome::NAMES.len()).collect::<Vec<_>>());
    }
}
