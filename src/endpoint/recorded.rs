//! A real run in the simulator's terms: each client a configuration, each business operation
//! it sent an intent, each request an attempt. The simulator's own writers then write the real
//! run in the files a simulated one has (`summary.csv`, `runs.csv`, `tools.csv`, the traces), so
//! `retrysim compare` holds the two against each other as it holds two simulated runs.
//!
//! The endpoint sees only what reaches it, so a few of the simulator's counts are read off the
//! wire: an operation *succeeded* where a request of it was answered 2xx; it *stopped*, when no
//! request was, for the reason its last answer suggests (a 4xx other than a 429: a permanent
//! failure; a key refused: a conflict; anything else: its attempts ran out); its *backoff* is the
//! time between one request's answer and the next request. Requests that named no operation
//! belong to no intent: they are counted in `endpoint.csv` alone.

use std::collections::BTreeMap;

use super::ledger::{Ended, Ledger, Served};
use crate::experiment::Experiment;
use crate::metrics::{
    AttemptRecord, BusinessState, IntentRecord, Outcome, Status, StopReason, Totals,
};
use crate::model::{FailureClass, IntentBill};
use crate::policy::Policy;
use crate::sim::RunResult;
use crate::time::Tick;

/// What a client that names itself nowhere is called.
pub const UNNAMED: &str = "unnamed";

/// One client's requests as a run: its totals, and each operation with its attempts in order.
pub struct Recorded {
    pub run: RunResult,
    pub intents: Vec<(IntentRecord, Vec<AttemptRecord>)>,
}

/// The real run of `exp`'s tools that `ledger` counted: an experiment with one configuration per
/// client, by name, and each client's run. A client named as one of the config's configurations
/// is written with that configuration's settings, which its name claims; any other with every
/// default. Neither is taken as what the client did: no closed form is drawn from them.
pub fn runs(exp: &Experiment, ledger: &Ledger) -> (Experiment, Vec<Recorded>) {
    // Each client's operations, in the order of their first requests.
    let mut clients: BTreeMap<&str, Vec<Vec<&Served>>> = BTreeMap::new();
    let mut seen: BTreeMap<(&str, usize, &str), usize> = BTreeMap::new();
    for s in &ledger.served {
        let Some(op) = &s.operation else { continue };
        let client = match s.client.as_str() {
            "" => UNNAMED,
            name => name,
        };
        let ops = clients.entry(client).or_default();
        let at = *seen.entry((client, s.tool, op)).or_insert_with(|| {
            ops.push(Vec::new());
            ops.len() - 1
        });
        ops[at].push(s);
    }
    let mut real = exp.clone();
    real.name = format!("{}.endpoint", exp.name);
    real.description = format!(
        "real clients of retrysim endpoint serving {}'s tools, one configuration per client",
        exp.name
    );
    real.replications = 1;
    real.policies = clients
        .keys()
        .map(|&c| match exp.policies.iter().find(|p| p.name == c) {
            Some(claimed) => claimed.clone(),
            None => {
                let mut policy = Policy::new(c);
                policy.time.waits = (policy.resolve_waits(&exp.tools, &exp.workload.calls))
                    .expect("a policy without a timeout has no wait to resolve");
                policy
            }
        })
        .collect();
    real.output.intents = true;
    real.output.attempts = true;
    real.output.charts.clear();
    real.output.timeseries = None;
    let recorded = clients
        .into_values()
        .map(|ops| client_run(exp, &ops))
        .collect();
    (real, recorded)
}

/// One client's operations as a run.
fn client_run(exp: &Experiment, ops: &[Vec<&Served>]) -> Recorded {
    let mut totals = Totals::default();
    let mut intents = Vec::with_capacity(ops.len());
    for (n, requests) in ops.iter().enumerate() {
        let (record, attempts) = intent(exp, n as u64, requests);
        let mut outcomes = [0u32; Outcome::NAMES.len()];
        for a in &attempts {
            outcomes[a.outcome.index()] += 1;
        }
        totals.add(&record, &outcomes);
        totals.tasks += 1;
        totals.tasks_succeeded += u64::from(record.status == Status::Succeeded);
        intents.push((record, attempts));
    }
    Recorded {
        run: RunResult { totals, events: 0 },
        intents,
    }
}

/// Operation number `n`, sent as `requests` (in the order they arrived), as an intent.
fn intent(exp: &Experiment, n: u64, requests: &[&Served]) -> (IntentRecord, Vec<AttemptRecord>) {
    let attempts: Vec<AttemptRecord> = requests
        .iter()
        .map(|s| AttemptRecord {
            layer: 0,
            dispatch: s.at,
            end: s.at.after(s.took),
            granted: None,
            outcome: s.outcome.attempt(),
            committed: s.committed,
            lookup: None,
            replica: 0,
            worker: 0,
        })
        .collect();
    let backoff = (attempts.windows(2))
        .map(|w| w[1].dispatch.since(w[0].end))
        .fold(Tick::ZERO, Tick::after);
    let answered = |s: &&&Served| s.status.is_some_and(|st| (200..300).contains(&st));
    let status = match requests.iter().find(answered) {
        Some(_) => Status::Succeeded,
        None => Status::Stopped(stopped(requests.last().expect("a request").outcome)),
    };
    let tool = requests[0].tool;
    let ambiguous = attempts.iter().any(|a| {
        matches!(
            a.outcome,
            Outcome::LostRequest
                | Outcome::LostReply
                | Outcome::ServerError
                | Outcome::ServerErrorAfterCommit
                | Outcome::StreamBroken
        )
    });
    let business_state = match status {
        _ if exp.tools[tool].server.reads_only() => BusinessState::ReadOnly,
        Status::Succeeded => BusinessState::Confirmed,
        Status::Stopped(StopReason::IdempotencyConflict) => BusinessState::Confirmed,
        Status::Stopped(_) if ambiguous => BusinessState::Unknown,
        Status::Stopped(_) => BusinessState::NotAttempted,
    };
    let count = |f: fn(&AttemptRecord) -> bool| attempts.iter().filter(|a| f(a)).count() as u32;
    let record = IntentRecord {
        intent: n,
        tool,
        edge: 0,
        attempts: attempts.len() as u32,
        effects: count(|a| a.committed),
        timeouts: 0,
        backoff,
        short_circuited: 0,
        lookups: 0,
        hedges: 0,
        calls_while_down: 0,
        reads: 0,
        writes: 0,
        conflicts: 0,
        status,
        business_state,
        start: attempts[0].dispatch,
        end: attempts.iter().map(|a| a.end).max().expect("an attempt"),
        bill: IntentBill::default(),
        crashes: 0,
        takeovers: 0,
        takeover_duplicates: 0,
        redone: 0,
        zombie_sends: 0,
        fenced: 0,
        lapses: 0,
        held_afresh: 0,
        dead_lettered: false,
        first_crash: None,
    };
    (record, attempts)
}

/// Why a client stopped, as far as its last answer tells: a refusal no repeat can change, a
/// key refused, or its attempts run out.
fn stopped(last: Ended) -> StopReason {
    match last.attempt() {
        Outcome::Refused(FailureClass::Forbidden | FailureClass::Invalid) => {
            StopReason::PermanentFailure
        }
        Outcome::Refused(FailureClass::Conflict) => StopReason::IdempotencyConflict,
        _ => StopReason::AttemptLimit,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Fate;

    fn served(client: &str, op: &str, at: u64, outcome: Ended, status: Option<u16>) -> Served {
        Served {
            at: Tick(at),
            client: client.into(),
            tool: 0,
            operation: Some(op.into()),
            outcome,
            status,
            committed: matches!(outcome, Ended::Fate(Fate::Delivered | Fate::LostReply)),
            generated: 0,
            took: Tick(10),
        }
    }

    /// Two clients, by name; a lost reply then a retry answered 200 is one intent of two
    /// attempts, two effects (a duplicate), waiting from the first's close to the second; an
    /// operation refused 403 stops as a permanent failure with nothing done.
    #[test]
    fn each_client_is_a_configuration_and_each_operation_an_intent() {
        let text = "name = \"e\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n\
                    [[policy]]\nname = \"p\"\n";
        let exp = (crate::config::Source::from_text("e.toml", text).sweep())
            .unwrap()
            .base;
        let mut ledger = Ledger::default();
        let lost = Ended::Fate(Fate::LostReply);
        ledger.add(served("b", "o1", 0, lost, None));
        ledger.add(served("a", "x", 5, Ended::Fate(Fate::Forbidden), Some(403)));
        ledger.add(served(
            "b",
            "o1",
            100,
            Ended::Fate(Fate::Delivered),
            Some(200),
        ));
        let (real, runs) = runs(&exp, &ledger);
        let names: Vec<&str> = real.policies.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        let (a, _) = &runs[0].intents[0];
        assert_eq!(a.status, Status::Stopped(StopReason::PermanentFailure));
        assert_eq!(a.business_state, BusinessState::NotAttempted);
        let (b, attempts) = &runs[1].intents[0];
        assert_eq!((b.attempts, b.effects, b.duplicates()), (2, 2, 1));
        assert_eq!((b.status, b.backoff), (Status::Succeeded, Tick(90)));
        assert_eq!(attempts[0].outcome, Outcome::LostReply);
        assert_eq!((b.start, b.end), (Tick(0), Tick(110)));
        assert_eq!(runs[1].run.totals.tasks_succeeded, 1);
    }
}
