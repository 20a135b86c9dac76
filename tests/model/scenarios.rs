//! The reference scenarios, reproduced to the tick from the shipped configs in
//! `configs/scenarios/`.

use crate::common;

use common::{shipped, traced};
use retrysim::Experiment;
use retrysim::metrics::{AttemptRecord, BusinessState, IntentRecord, Outcome, Status, StopReason};
use retrysim::time::Tick;

/// The one intent each configuration of a scenario runs, with its attempts, by name.
fn rows(exp: &Experiment) -> Vec<(String, IntentRecord, Vec<AttemptRecord>)> {
    exp.policies
        .iter()
        .enumerate()
        .map(|(p, policy)| {
            let mut intents = traced(exp, p);
            assert_eq!(intents.len(), 1, "{}: one operation", policy.name);
            let (r, attempts) = intents.remove(0);
            (policy.name.clone(), r, attempts)
        })
        .collect()
}

fn stopped(reason: StopReason) -> Status {
    Status::Stopped(reason)
}

#[test]
fn one_deadline_one_budget() {
    let exp = shipped("scenarios/one-deadline-one-budget.toml");
    let want = [
        (
            "reset-per-layer",
            27,
            162,
            stopped(StopReason::AttemptLimit),
            0,
        ),
        (
            "shared-cap-4",
            4,
            24,
            stopped(StopReason::DispatchBudgetExhausted),
            0,
        ),
        (
            "shared-deadline-20",
            4,
            20,
            stopped(StopReason::DeadlineExceeded),
            0,
        ),
        (
            "shared-cap-4-deadline-20",
            4,
            20,
            stopped(StopReason::DeadlineExceeded),
            0,
        ),
        (
            "shared-deadline-14-backoff",
            2,
            14,
            stopped(StopReason::DeadlineExceeded),
            8,
        ),
        ("cancel-at-4", 1, 4, stopped(StopReason::Cancelled), 0),
        (
            "unknown-non-idempotent",
            1,
            3,
            stopped(StopReason::NeedsReconciliation),
            0,
        ),
        ("unknown-read-only", 2, 6, Status::Succeeded, 0),
        ("unknown-idempotent-key", 2, 6, Status::Succeeded, 0),
    ];
    let got = rows(&exp);
    assert_eq!(got.len(), want.len());
    for ((name, r, attempts), (wname, n, end, status, backoff)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(
            (r.attempts, r.end, r.status, r.backoff),
            (n, Tick(end), status, Tick(backoff)),
            "{name}"
        );
        assert_eq!(r.start, Tick::ZERO);
        let business = match name.as_str() {
            "unknown-non-idempotent" => Some((BusinessState::Unknown, 1)),
            "unknown-read-only" => Some((BusinessState::ReadOnly, 0)),
            "unknown-idempotent-key" => Some((BusinessState::Confirmed, 1)),
            _ => None,
        };
        if let Some((state, effects)) = business {
            assert_eq!((r.business_state, r.effects), (state, effects), "{name}");
        }
        if name == "unknown-idempotent-key" {
            assert!(
                attempts
                    .iter()
                    .all(|a| a.committed == (a.dispatch == Tick::ZERO))
            );
        }
        if name == "reset-per-layer" {
            // Every deepest scope is 3 calls in 18 ticks: its fresh 20-tick deadline and cap of
            // 4 never bind, and each scope's first call is granted the whole 20 again.
            let granted: Vec<u64> = attempts
                .iter()
                .filter_map(|a| a.granted.map(|t| t.0))
                .collect();
            assert_eq!(granted, [20, 14, 8].repeat(9));
            assert_eq!(attempts.iter().filter(|a| a.layer == 0).count(), 3);
            assert_eq!(attempts.iter().filter(|a| a.layer == 2).count(), 18);
        }
        if name == "shared-deadline-20" {
            let sent: Vec<u64> = attempts.iter().map(|a| a.dispatch.0).collect();
            assert_eq!(sent, [0, 6, 12, 18], "dispatches of the deadline-only run");
            assert_eq!(
                attempts[3].granted,
                Some(Tick(2)),
                "the last call gets what is left"
            );
        }
    }
}

#[test]
fn time_and_calls() {
    let exp = shipped("scenarios/time-and-calls.toml");
    let got = rows(&exp);
    let ms = |t: u64| Tick(t * 1_000);
    // deadline 1.00 s: 0.20 timeout + 0.05 backoff + 0.10 success = 0.35 s; 1 call unit left.
    let (_, r, a) = &got[0];
    assert_eq!(
        (r.status, r.attempts, r.end),
        (Status::Succeeded, 2, ms(350))
    );
    assert_eq!(
        exp.policies[0].time.limits.dispatch_cap.unwrap() - r.attempts,
        1
    );
    assert_eq!(a[1].granted, Some(ms(200)), "w = min(0.20, 1.00 − 0.25)");
    // deadline 0.30 s: the second call is granted min(0.20, 0.05) and times out at the deadline.
    let (_, r, a) = &got[1];
    assert_eq!(
        (r.status, r.attempts, r.end),
        (stopped(StopReason::DeadlineExceeded), 2, ms(300))
    );
    assert_eq!(
        (a[1].granted, a[1].outcome),
        (Some(ms(50)), Outcome::Timeout)
    );
    // deadline 0.21 s: the backoff no longer fits, and no second call starts.
    let (_, r, _) = &got[2];
    assert_eq!(
        (r.status, r.attempts, r.end, r.backoff),
        (stopped(StopReason::DeadlineExceeded), 1, ms(210), ms(10))
    );
    // The slow first call commits after the client gave up on it; the one key keeps it to a
    // single effect.
    assert!(got.iter().all(|(_, r, _)| r.effects == 1));
}

#[test]
fn reliability_bugs() {
    let exp = shipped("scenarios/reliability-bugs.toml");
    let configuration = |name: &str| {
        let p = exp.policies.iter().position(|p| p.name == name).unwrap();
        traced(&exp, p)
            .into_iter()
            .map(|(r, _)| r)
            .collect::<Vec<_>>()
    };
    let total = |rs: &[IntentRecord], f: fn(&IntentRecord) -> u32| rs.iter().map(f).sum::<u32>();
    // 1. The double charge: 2 effects per charge without a key, 1 with one.
    let (plain, keyed) = (configuration("retry-only"), configuration("reliable"));
    assert_eq!((plain.len(), keyed.len()), (12, 12));
    assert!(
        plain
            .iter()
            .all(|r| r.effects == 2 && r.status == Status::Succeeded)
    );
    assert!(
        keyed
            .iter()
            .all(|r| r.effects == 1 && r.status == Status::Succeeded)
    );
    // 2. The hung call: 5.0 s without a timeout, aborted at 1.0 s with one (and still charged).
    for (name, took) in [("no-timeout", 5_000_000), ("timeout-1s", 1_000_000)] {
        for r in configuration(name) {
            assert_eq!(r.end.since(r.start), Tick(took), "{name}");
            assert_eq!(r.effects, 1, "{name}: the server finishes the work");
        }
    }
    // 3. The hammered outage: 12 calls without a breaker, 3 sent and 9 short-circuited with one.
    let open = configuration("no-breaker");
    assert_eq!(total(&open, |r| r.attempts), 12);
    let broken = configuration("breaker");
    assert_eq!(total(&broken, |r| r.attempts), 3);
    assert_eq!(total(&broken, |r| r.short_circuited), 9);
    assert!(
        broken[3..]
            .iter()
            .all(|r| r.status == stopped(StopReason::BreakerOpen) && r.attempts == 0)
    );
}

#[test]
fn cooperative_budget() {
    let exp = shipped("scenarios/cooperative-budget.toml");
    let s = |x: f64| Tick((x * 1_000_000.0).round() as u64);
    let want = [
        ("worked-example", 2, 4.7, Status::Succeeded, 0.5),
        (
            "small-budget",
            0,
            0.0,
            stopped(StopReason::BudgetTooSmall),
            0.0,
        ),
        ("transient-then-success", 2, 2.5, Status::Succeeded, 0.5),
        (
            "retry-does-not-fit",
            1,
            3.0,
            stopped(StopReason::BudgetTooSmall),
            0.0,
        ),
        (
            "forbidden",
            1,
            1.0,
            stopped(StopReason::PermanentFailure),
            0.0,
        ),
        ("throttled", 1, 1.0, stopped(StopReason::NotRetryable), 0.0),
        (
            "retry-after",
            1,
            1.0,
            stopped(StopReason::NotRetryable),
            0.0,
        ),
        (
            "repeated-timeouts",
            3,
            13.5,
            stopped(StopReason::AttemptLimit),
            1.5,
        ),
        ("worked-example-12s", 2, 10.7, Status::Succeeded, 0.5),
        (
            "late-success",
            1,
            13.0,
            stopped(StopReason::DeadlineExceeded),
            0.0,
        ),
    ];
    let got = rows(&exp);
    assert_eq!(got.len(), want.len());
    for ((name, r, attempts), (wname, n, end, status, backoff)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(
            (r.attempts, r.end, r.status, r.backoff),
            (n, s(end), status, s(backoff)),
            "{name}"
        );
        if name == "worked-example" {
            // 2.8 s left after the 503 at 3.2 s; after the 0.5 s wait, min(4, 2.3 − 1) = 1.3 s.
            assert_eq!(attempts[1].granted, Some(s(1.3)));
        }
        if name == "worked-example-12s" || name == "late-success" {
            // A call no timer can cut still shows what the client granted it: the worked
            // example as written, 4.0 s, then 1.3 s after the 503 at 9.2 s.
            let granted: Vec<_> = attempts.iter().map(|a| a.granted).collect();
            let want = if name == "late-success" {
                vec![Some(s(4.0))]
            } else {
                vec![Some(s(4.0)), Some(s(1.3))]
            };
            assert_eq!(granted, want, "{name}");
        }
        if name == "late-success" {
            // Found on return, not accepted, but kept: the receipt is evidence of the effect.
            assert_eq!(
                r.business_state,
                retrysim::metrics::BusinessState::Confirmed
            );
            assert_eq!(
                (attempts[0].end, attempts[0].outcome),
                (s(13.0), retrysim::metrics::Outcome::Ok),
                "a blocking call outlasts its grant: no timer cuts it"
            );
        }
        if name == "repeated-timeouts" {
            let sent: Vec<Tick> = attempts.iter().map(|a| a.dispatch).collect();
            assert_eq!(sent, [s(0.0), s(4.5), s(9.5)], "waits of 0.5 s, then 1.0 s");
        }
    }
}

#[test]
fn reconciliation() {
    let exp = shipped("scenarios/reconciliation.toml");
    use retrysim::metrics::BusinessState::{Confirmed, Unknown};
    let want = [
        ("lost-reply", 1, 1, 1, Status::Succeeded, Confirmed),
        ("lost-request", 2, 1, 1, Status::Succeeded, Confirmed),
        (
            "failed-lookup",
            1,
            1,
            1,
            stopped(StopReason::NeedsReconciliation),
            Unknown,
        ),
        (
            "non-idempotent",
            1,
            1,
            0,
            stopped(StopReason::NeedsReconciliation),
            Unknown,
        ),
        ("lagging-lookup", 2, 1, 1, Status::Succeeded, Confirmed),
    ];
    for ((name, r, _), (wname, sends, lookups, effects, status, business)) in
        rows(&exp).iter().zip(want)
    {
        assert_eq!(name, wname);
        assert_eq!(
            (r.attempts, r.lookups, r.effects, r.status, r.business_state),
            (sends, lookups, effects, status, business),
            "{name}"
        );
    }
}

#[test]
fn payload_binding() {
    let exp = shipped("scenarios/payload-binding.toml");
    let want = [
        ("same-payload", 1, Status::Succeeded, Outcome::Ok),
        (
            "changed-payload",
            1,
            stopped(StopReason::IdempotencyConflict),
            Outcome::Refused(retrysim::model::FailureClass::Conflict),
        ),
        ("rotated-key", 2, Status::Succeeded, Outcome::Ok),
        ("forgotten-key", 2, Status::Succeeded, Outcome::Ok),
    ];
    let got = rows(&exp);
    assert_eq!(got.len(), want.len());
    for ((name, r, attempts), (wname, effects, status, second)) in got.iter().zip(want) {
        assert_eq!(name, wname);
        assert_eq!(
            (r.attempts, r.effects, r.status),
            (2, effects, status),
            "{name}"
        );
        assert_eq!(r.business_state, BusinessState::Confirmed, "{name}");
        assert_eq!(attempts[0].outcome, Outcome::LostReply);
        assert_eq!(attempts[1].outcome, second, "{name}");
        let again = name == "rotated-key" || name == "forgotten-key";
        assert_eq!(attempts[1].committed, again, "{name}");
    }
}
