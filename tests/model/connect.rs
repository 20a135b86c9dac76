//! A failed connection: the request never left, so any call may be sent again after it —
//! through the safety gate, and under `retry_on = ["connect"]`, urllib3's rule for a POST — and
//! a rule that retries resets retries it too. Held against the closed forms, where it acts as
//! a lost request the client knows of.

use retrysim::metrics::{Outcome, Status, StopReason};
use retrysim::policy::{Attempts, KeyScope};
use retrysim::theory::closed_forms;

use crate::common::{assert_pair_agrees, experiment, run_one, traced};

/// One intent on a write that is not idempotent, whose attempts end as `script` lists, met by
/// a policy with `rules`: its status and its attempts' outcomes.
fn story(script: &str, rules: &str) -> (Status, Vec<Outcome>) {
    let exp = experiment(&format!(
        "name = \"c\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\nscript = [{script}]\n\
         [[policy]]\nname = \"p\"\nmax_attempts = 4\nbackoff = {{ kind = \"constant\", \
         initial_delay = \"1ms\" }}\n{rules}\n"
    ));
    let (record, attempts) = traced(&exp, 0).remove(0);
    (record.status, attempts.iter().map(|a| a.outcome).collect())
}

const THEN_OK: &str = "{ outcome = \"ok\", after = \"10ms\" }";

#[test]
fn a_failed_connection_passes_the_safety_gate_where_a_reset_stops() {
    let connect = format!("{{ outcome = \"connect\", after = \"2ms\" }}, {THEN_OK}");
    let (status, outcomes) = story(&connect, "safety_gate = true");
    assert_eq!(status, Status::Succeeded);
    assert_eq!(outcomes, [Outcome::ConnectFailed, Outcome::Ok]);
    let lost = format!("{{ outcome = \"lost_reply\", after = \"2ms\" }}, {THEN_OK}");
    let (status, outcomes) = story(&lost, "safety_gate = true");
    assert_eq!(
        status,
        Status::Stopped(StopReason::NeedsReconciliation),
        "a lost reply may have committed: the gate stops it"
    );
    assert_eq!(outcomes, [Outcome::LostReply]);
}

#[test]
fn connect_alone_retries_only_failed_connections() {
    let mixed = format!(
        "{{ outcome = \"connect\", after = \"2ms\" }}, {{ outcome = \"5xx\", after = \"2ms\" }}, \
         {THEN_OK}"
    );
    // The default rule retries resets, and with them failed connections.
    let (status, outcomes) = story(&mixed, "");
    assert_eq!(status, Status::Succeeded);
    assert_eq!(outcomes.len(), 3);
    // urllib3's rule for a POST: a failed connection again, a 5xx not.
    let (status, outcomes) = story(&mixed, "retry_on = [\"connect\"]");
    assert_eq!(status, Status::Stopped(StopReason::NotRetryable));
    assert_eq!(outcomes, [Outcome::ConnectFailed, Outcome::ServerError]);
    // A rule without resets or connections stops at the first.
    let (status, outcomes) = story(&mixed, "retry_on = [\"5xx\"]");
    assert_eq!(status, Status::Stopped(StopReason::NotRetryable));
    assert_eq!(outcomes, [Outcome::ConnectFailed]);
}

#[test]
fn a_failed_connection_is_seen_after_the_request_leg() {
    let exp = experiment(
        "name = \"c\"\nseed = 3\n[workload]\ntasks = 200\n[[tool]]\nname = \"t\"\n\
         connect_failure = 0.5\nrequest_latency = { dist = \"constant\", value = \"7ms\" }\n\
         service_time = { dist = \"constant\", value = \"20ms\" }\n\
         reply_latency = { dist = \"constant\", value = \"5ms\" }\n\
         [[policy]]\nname = \"p\"\nmax_attempts = 1\n",
    );
    let mut failed = 0;
    for (_, attempts) in traced(&exp, 0) {
        let a = attempts[0];
        let took = (a.end.0 - a.dispatch.0) / 1000;
        match a.outcome {
            Outcome::ConnectFailed => {
                failed += 1;
                assert_eq!(took, 7);
                assert!(!a.committed);
            }
            Outcome::Ok => assert_eq!(took, 32),
            other => panic!("{other:?}"),
        }
    }
    // Binomial(200, 0.5): 99.9 % of runs fall in 77..=123.
    assert!((77..=123).contains(&failed), "{failed}");
}

/// With failed connections beside lost requests and replies, the forms hold with the
/// connections counted in a: they commit nothing and are retried.
#[test]
fn failed_connections_add_to_a_in_the_closed_forms() {
    let (loss, connect, b) = (0.05, 0.15, 0.2);
    let exp = experiment(&format!(
        "name = \"c\"\nseed = 11\nreplications = 4\n[workload]\ntasks = 5000\n[[tool]]\n\
         name = \"t\"\nidempotent = true\nrequest_loss = {loss}\nconnect_failure = {connect}\n\
         reply_loss = {b}\n\
         [[policy]]\nname = \"none\"\nmax_attempts = 4\n\
         [[policy]]\nname = \"key\"\nmax_attempts = 4\nidempotency_key = \"per_intent\"\n"
    ));
    let result = run_one(exp);
    let forms = |key: KeyScope| closed_forms(loss + connect, b, Attempts::AtMost(4), key);
    assert_pair_agrees(&result, forms, "connect");
}
