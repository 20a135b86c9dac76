//! Hedged requests: a second attempt once the first has gone unanswered for the hedge delay;
//! the first reply wins, the loser is abandoned but still worked on.

use crate::common;

use common::{experiment, run_one, traced};
use retrysim::config::{Origin, Source};
use retrysim::metrics::{BusinessState, Estimate, Moments, Outcome, Status};
use retrysim::time::Tick;

/// A write whose first call takes 100 ticks and whose second takes 10: hedged after 20, the
/// hedge answers at 30 and wins. The primary, abandoned, still reaches the server at 100, where
/// the key replays the hedge's receipt.
const RACE: &str = r#"
name = "race"
[workload]
tasks = 1
[[tool]]
name = "charge"
script = [{ outcome = "ok", after = 100 }, { outcome = "ok", after = 10 }]
[[policy]]
name = "hedged"
max_attempts = 2
hedge_delay = 20
idempotency_key = "per_intent"
"#;

#[test]
fn the_first_reply_wins_and_the_loser_still_reaches_the_server() {
    let exp = experiment(RACE);
    let [(r, attempts)] = traced(&exp, 0).try_into().expect("one intent");
    assert_eq!(
        (r.status, r.end, r.attempts, r.hedges),
        (Status::Succeeded, Tick(30), 2, 1)
    );
    assert_eq!((r.effects, r.business_state), (1, BusinessState::Confirmed));
    let seen: Vec<_> = attempts
        .iter()
        .map(|a| (a.dispatch.0, a.end.0, a.outcome, a.committed))
        .collect();
    assert_eq!(
        seen,
        [
            (0, 30, Outcome::Cancelled, false),
            (20, 30, Outcome::Ok, true)
        ],
        "the primary is abandoned when the hedge answers, and commits nothing at 100"
    );

    // Without a hedge the same call waits the whole 100 ticks.
    let exp = experiment(&RACE.replace("hedge_delay = 20\n", ""));
    let [(r, _)] = traced(&exp, 0).try_into().expect("one intent");
    assert_eq!((r.end, r.attempts, r.hedges), (Tick(100), 1, 0));

    // A hedge is an attempt: with one allowed, none goes out.
    let exp = experiment(&RACE.replace("max_attempts = 2", "max_attempts = 1"));
    let [(r, _)] = traced(&exp, 0).try_into().expect("one intent");
    assert_eq!((r.end, r.attempts, r.hedges), (Tick(100), 1, 0));
}

/// A failed reply does not end a race: the client waits for the other attempt.
#[test]
fn a_failure_waits_for_the_other_attempt() {
    let text = RACE.replace(
        r#"[{ outcome = "ok", after = 100 }, { outcome = "ok", after = 10 }]"#,
        r#"[{ outcome = "ok", after = 100 }, { outcome = "5xx", after = 10 }]"#,
    );
    let exp = experiment(&text);
    let [(r, attempts)] = traced(&exp, 0).try_into().expect("one intent");
    assert_eq!(
        (r.status, r.end, r.attempts),
        (Status::Succeeded, Tick(100), 2)
    );
    let outcomes: Vec<_> = attempts.iter().map(|a| a.outcome).collect();
    assert_eq!(outcomes, [Outcome::Ok, Outcome::ServerError]);
}

#[test]
fn only_calls_safe_to_send_twice_are_hedged() {
    let text = RACE.replace("idempotency_key = \"per_intent\"\n", "");
    let e = Source {
        name: "race.toml".into(),
        text,
        origin: Origin::Text,
    }
    .sweep()
    .map(|_| ())
    .expect_err("a write without a key cannot be hedged");
    let e = e.to_string();
    for part in [
        "race.toml:11:15: policy[0].hedge_delay",
        "\"charge\" is not safe to send twice",
        "read_only",
    ] {
        assert!(e.contains(part), "{part:?} not in\n{e}");
    }
}

/// Every call whose round trip reaches the hedge delay is hedged, and no other: the share of
/// hedged intents is a binomial proportion around P(round trip ≥ delay), which the lognormal
/// gives exactly. Checked at the p50 and p95 of the shipped hedging config.
#[test]
fn the_share_hedged_is_the_chance_a_call_outlasts_the_delay() {
    let text = std::fs::read_to_string("configs/hedging.toml").unwrap();
    let exp = experiment(&text);
    let search = &exp.tools[0];
    let result = run_one(exp.clone());
    let mut checked = 0;
    for (policy, r) in exp.policies.iter().zip(&result.policies) {
        let Some(delay) = policy.hedges.delay.on(search).unwrap() else {
            continue;
        };
        let p = search.times_out(delay).unwrap();
        let p_index = exp.policies.iter().position(|q| q == policy).unwrap();
        let hedges: Vec<u32> = traced(&exp, p_index)
            .iter()
            .map(|(r, _)| r.hedges)
            .collect();
        let hedged: Moments = hedges.iter().map(|&h| f64::from(h)).collect();
        let est = Estimate::at_level(&hedged, 0.999);
        assert!(
            est.contains(p),
            "{}: {} ± {} hedged vs {p}",
            policy.name,
            est.mean,
            est.half_width
        );
        let sent: u32 = hedges.iter().sum();
        assert_eq!(r.totals.hedges, u64::from(sent));
        checked += 1;
    }
    assert_eq!(checked, 2, "hedge-p95 and hedge-p50");
}

/// The shipped hedging config tells its story: a hedge at the p95 costs about 5 % more calls
/// and halves the p99; retrying at a p95 timeout costs the same but fails calls it gives up.
#[test]
fn hedging_at_the_p95_halves_the_tail_for_a_few_percent_more_calls() {
    let text = std::fs::read_to_string("configs/hedging.toml").unwrap();
    let exp = experiment(&text);
    let result = run_one(exp.clone());
    let by_name = |name: &str| {
        let i = exp.policies.iter().position(|p| p.name == name).unwrap();
        &result.policies[i]
    };
    let (plain, p95) = (by_name("no-hedge"), by_name("hedge-p95"));
    let load =
        |r: &retrysim::run::PolicyResult| r.estimate(retrysim::metrics::Measure::Attempts).mean;
    assert!(load(p95) < 1.07, "{}", load(p95));
    assert!(p95.completion_p99.0 * 2 < plain.completion_p99.0 + plain.completion_p99.0 / 10);
    assert_eq!(
        p95.completion_p50, plain.completion_p50,
        "the median call is never hedged"
    );
    let retry = by_name("timeout-p95-retry");
    assert!(retry.estimate(retrysim::metrics::Measure::Success).mean < 1.0);
    assert_eq!(p95.estimate(retrysim::metrics::Measure::Success).mean, 1.0);
}

/// A read-only call hedged as gRPC's `hedgingPolicy` does (`hedging = "staggered"`, 3
/// attempts, 20 ticks apart): `script` lists each attempt's outcome and time. The attempts
/// as (dispatch, end, outcome), and how the call ended and when.
fn staggered(script: &str) -> (Vec<(u64, u64, Outcome)>, Status, u64) {
    let exp = experiment(&format!(
        "name = \"g\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"search\"\nkind = \"read_only\"\n\
         script = [{script}]\n[[policy]]\nname = \"grpc\"\nmax_attempts = 3\nhedge_delay = 20\n\
         hedging = \"staggered\"\nretry_on = [\"5xx\"]\n"
    ));
    let [(r, attempts)] = traced(&exp, 0).try_into().expect("one intent");
    let seen = attempts
        .iter()
        .map(|a| (a.dispatch.0, a.end.0, a.outcome))
        .collect();
    (seen, r.status, r.end.0)
}

#[test]
fn staggered_hedges_go_out_every_delay_until_the_cap() {
    // Every attempt slow: three out at 0, 20 and 40; the first answer, at 100, wins.
    let (seen, status, end) = staggered(
        "{ outcome = \"ok\", after = 100 }, { outcome = \"ok\", after = 100 }, \
         { outcome = \"ok\", after = 100 }",
    );
    assert_eq!(
        seen,
        [
            (0, 100, Outcome::Ok),
            (20, 100, Outcome::Cancelled),
            (40, 100, Outcome::Cancelled)
        ]
    );
    assert_eq!((status, end), (Status::Succeeded, 100));
}

#[test]
fn a_non_fatal_status_sends_the_next_hedge_at_once() {
    // The primary's 5xx at 5 sends the next attempt then, not at 20; its hedge follows at 25.
    let (seen, status, end) = staggered(
        "{ outcome = \"5xx\", after = 5 }, { outcome = \"ok\", after = 100 }, \
         { outcome = \"ok\", after = 10 }",
    );
    assert_eq!(
        seen,
        [
            (0, 5, Outcome::ServerError),
            (5, 35, Outcome::Cancelled),
            (25, 35, Outcome::Ok)
        ]
    );
    assert_eq!((status, end), (Status::Succeeded, 35));
}

#[test]
fn a_fatal_status_ends_the_call_and_abandons_the_hedges() {
    // The hedge's 403 at 30 ends the call at once, the primary still out abandoned.
    let (seen, status, end) = staggered(
        "{ outcome = \"ok\", after = 100 }, { outcome = \"403\", after = 10 }, \
         { outcome = \"ok\", after = 100 }",
    );
    assert_eq!(
        seen,
        [
            (0, 30, Outcome::Cancelled),
            (
                20,
                30,
                Outcome::Refused(retrysim::model::FailureClass::Forbidden)
            )
        ]
    );
    assert_eq!(
        (status, end),
        (
            Status::Stopped(retrysim::metrics::StopReason::PermanentFailure),
            30
        )
    );
    // Under single hedging the 403 waits for the primary, which answers at 100.
    let exp = experiment(
        "name = \"g\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"search\"\nkind = \"read_only\"\n\
         script = [{ outcome = \"ok\", after = 100 }, { outcome = \"403\", after = 10 }]\n\
         [[policy]]\nname = \"single\"\nmax_attempts = 3\nhedge_delay = 20\nretry_on = [\"5xx\"]\n",
    );
    let [(r, _)] = traced(&exp, 0).try_into().expect("one intent");
    assert_eq!((r.status, r.end), (Status::Succeeded, Tick(100)));
}
