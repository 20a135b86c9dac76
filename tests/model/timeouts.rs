//! Per-attempt timeouts: abandoned attempts that still commit, silence, a server that makes a
//! retry wait behind the work it abandoned, and the closed forms with a timeout.

use crate::common;

use common::{assert_pair_agrees, experiment, max_attempts, records, run_one, traced};
use retrysim::Experiment;
use retrysim::config::{Origin, Source};
use retrysim::metrics::{BusinessState, Outcome, Status, StopReason};
use retrysim::policy::{Attempts, KeyScope};
use retrysim::theory::closed_forms;
use retrysim::time::Tick;

/// One tool with constant 1 ms network legs and an exponential service time, so a timeout's
/// chance of firing is exactly known.
fn timed(a: f64, b: f64, tasks: u64, policies: &str) -> Experiment {
    experiment(&format!(
        r#"
        name = "t"
        seed = 31
        [workload]
        tasks = {tasks}
        clients = 200
        [[tool]]
        name = "order"
        request_loss = {a}
        reply_loss = {b}
        request_latency = {{ dist = "constant", value = "1ms" }}
        service_time = {{ dist = "exponential", mean = "10ms" }}
        reply_latency = {{ dist = "constant", value = "1ms" }}
        {policies}
        "#
    ))
}

/// With p = P(round trip ≥ τ), a late reply is a lost one that commits: the measured means lie
/// within a 99.9 % interval of the closed forms with b + (1 − a − b)·p, with and without a key.
#[test]
fn timeouts_agree_with_closed_forms() {
    for (a, b, timeout, n) in [
        (0.0, 0.0, "\"p50\"", Attempts::AtMost(3)),
        (0.1, 0.1, "\"p80\"", Attempts::AtMost(4)),
        (0.0, 0.2, "\"p90\"", Attempts::Unlimited),
        (0.05, 0.0, "\"15ms\"", Attempts::AtMost(2)),
    ] {
        let max = max_attempts(n);
        let exp = timed(
            a,
            b,
            20_000,
            &format!(
                r#"[[policy]]
                name = "no-key"
                max_attempts = {max}
                timeout = {timeout}
                [[policy]]
                name = "key"
                max_attempts = {max}
                timeout = {timeout}
                idempotency_key = "per_intent""#
            ),
        );
        let tool = &exp.tools[0];
        let wait = exp.policies[0].time.timeout.on(tool).unwrap().unwrap();
        let p = tool.times_out(wait).unwrap();
        assert!(p > 0.05 && p < 0.95, "{timeout}: p = {p}");
        let theory = |key| closed_forms(a, b + (1.0 - a - b) * p, n, key);
        if a == 0.0 && b == 0.0 && n == Attempts::AtMost(3) {
            let attempts = theory(KeyScope::None).attempts;
            assert!((attempts - (1.0 + p + p * p)).abs() < 1e-12);
        }
        assert_pair_agrees(&run_one(exp), theory, &format!("{timeout} {n:?}"));
    }
}

/// A timeout is the client's decision only: the server finishes the work and commits, after
/// the client has given up, and the intent counts that effect as a ghost.
#[test]
fn an_abandoned_attempt_still_commits() {
    let exp = experiment(
        r#"
        name = "t"
        [workload]
        tasks = 50
        [[tool]]
        name = "charge"
        service_time = { dist = "constant", value = "50ms" }
        [[policy]]
        name = "impatient"
        timeout = "10ms"
        "#,
    );
    for r in records(&exp, 0) {
        assert_eq!(r.status, Status::Stopped(StopReason::AttemptLimit));
        assert_eq!(
            r.end,
            r.start.after(Tick(10_000)),
            "the client stops at its timeout"
        );
        assert_eq!((r.timeouts, r.effects), (1, 1), "the server commits anyway");
        assert!(r.is_ghost());
        assert_eq!(r.business_state, BusinessState::Unknown);
    }
}

/// One worker, 100 ms of work per request, a 50 ms timeout and 3 attempts: each retry waits in
/// line behind the attempt it abandoned. Attempt 1 is served 1–101 ms, attempt 2 (sent at 50)
/// 101–201, attempt 3 (sent at 100) 201–301; the client stops at 150 ms. Every attempt commits
/// without a key; with one, once.
#[test]
fn a_retry_waits_behind_the_work_it_abandoned() {
    let config = |key: &str| {
        format!(
            r#"
            name = "t"
            [workload]
            tasks = 1
            [[tool]]
            name = "model"
            workers = 1
            service_time = {{ dist = "constant", value = "100ms" }}
            [[policy]]
            name = "p"
            max_attempts = 3
            timeout = "50ms"
            idempotency_key = "{key}"
            "#
        )
    };
    let plain = traced(&experiment(&config("none")), 0);
    let keyed = traced(&experiment(&config("per_intent")), 0);
    for ((r, attempts), committed) in [
        (&plain[0], [true, true, true]),
        (&keyed[0], [true, false, false]),
    ] {
        assert_eq!(r.status, Status::Stopped(StopReason::AttemptLimit));
        let effects = committed.iter().filter(|&&c| c).count() as u32;
        assert_eq!((r.attempts, r.timeouts, r.effects), (3, 3, effects));
        assert_eq!(r.end, Tick(150_000));
        // The trace: sent at 0, 50 and 100 ms, each abandoned 50 ms later; with the key only
        // the first commits, the later two replay its receipt.
        for (k, a) in attempts.iter().enumerate() {
            let sent = Tick(50_000 * k as u64);
            assert_eq!((a.dispatch, a.end), (sent, sent.after(Tick(50_000))));
            assert_eq!(
                (a.granted, a.outcome),
                (Some(Tick(50_000)), Outcome::Timeout)
            );
            assert_eq!(a.committed, committed[k], "attempt {k}");
        }
    }
    // With as many workers as requests, the second attempt is served at once and its reply
    // (51 + 100 + 1 = 152 ms) still misses its 100 ms deadline; nothing waits in line.
    let unlimited = config("none").replace("workers = 1\n", "");
    let r = records(&experiment(&unlimited), 0)[0];
    assert_eq!((r.attempts, r.effects, r.end), (3, 3, Tick(150_000)));
}

/// A loss seen as silence is noticed only by a timeout; without one, the intent waits until the
/// horizon and is reported hung, its outcome unknown.
#[test]
fn silence_without_a_timeout_hangs() {
    let config = |timeout: &str| {
        format!(
            r#"
            name = "t"
            seed = 4
            horizon = "10s"
            [workload]
            tasks = 2000
            clients = 2000         # a hung intent holds its client: give every task one
            [[tool]]
            name = "t"
            request_loss = 0.3
            loss_seen_as = "silence"
            [[policy]]
            name = "p"
            max_attempts = 10
            {timeout}
            "#
        )
    };
    let hanging = records(&experiment(&config("")), 0);
    let hung: Vec<_> = hanging
        .iter()
        .filter(|r| r.status == Status::Stopped(StopReason::Hung))
        .collect();
    // 30 % of 2000: a binomial count, here within 4 standard deviations (±82).
    assert!(
        (hung.len() as f64 - 600.0).abs() < 82.0,
        "{} hung",
        hung.len()
    );
    for r in &hung {
        assert_eq!((r.attempts, r.end), (1, Tick(10_000_000)));
        assert_eq!(r.business_state, BusinessState::Unknown);
    }
    let timed = records(&experiment(&config("timeout = \"20ms\"")), 0);
    assert!(
        timed
            .iter()
            .all(|r| r.status != Status::Stopped(StopReason::Hung))
    );
    assert!(timed.iter().any(|r| r.timeouts > 0));
}

fn refused(policy: &str, service: &str, request: &str) -> String {
    let text = format!(
        r#"
        name = "t"
        [workload]
        tasks = 1
        [[tool]]
        name = "t"
        request_latency = {request}
        service_time = {service}
        [[policy]]
        name = "p"
        {policy}
        "#
    );
    match (Source {
        name: "c.toml".into(),
        text,
        origin: Origin::Text,
    })
    .sweep()
    {
        Ok(_) => panic!("accepted {policy}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn timeouts_the_latencies_cannot_answer_are_refused() {
    let constant = "{ dist = \"constant\", value = \"1ms\" }";
    let exponential = "{ dist = \"exponential\", mean = \"1ms\" }";
    let e = refused("timeout = \"p90\"", constant, exponential);
    assert!(
        e.contains("policy[0].timeout") && e.contains("constant request and reply"),
        "{e}"
    );
    let e = refused("timeout = \"2x max\"", exponential, constant);
    assert!(e.contains("has no maximum"), "{e}");
    let e = refused("timeout = \"soon\"", constant, constant);
    assert!(
        e.contains("is not a timeout") && e.contains("\"p50\""),
        "{e}"
    );
    let e = refused("timeout = 0", constant, constant);
    assert!(e.contains("is not a timeout"), "{e}");
    let e = refused(
        "max_attempts = \"unlimited\"\ntimeout = \"1ms\"",
        constant,
        constant,
    );
    assert!(e.contains("never end"), "every attempt outlasts 1 ms: {e}");
}

/// A rule from the latency is resolved once, at validation, for the tools a configuration calls:
/// a tool that no task calls, whose latencies could not answer it, is no reason to refuse the
/// config, nor to fail once it runs.
#[test]
fn a_tool_no_task_calls_never_needs_a_timeout() {
    for rule in [
        "timeout = \"p90\"",
        "timeout = \"2x max\"",
        "hedge_delay = \"p90\"",
    ] {
        let exp = experiment(&format!(
            r#"
            name = "t"
            [workload]
            tasks = 20
            calls = ["order"]
            [[tool]]
            name = "order"
            kind = "read_only"
            request_latency = {{ dist = "constant", value = "1ms" }}
            service_time = {{ dist = "uniform", min = "1ms", max = "3ms" }}
            reply_latency = {{ dist = "constant", value = "1ms" }}
            [[tool]]
            name = "idle"
            request_latency = {{ dist = "exponential", mean = "1ms" }}
            service_time = {{ dist = "exponential", mean = "1ms" }}
            [[policy]]
            name = "p"
            max_attempts = 2
            {rule}
            "#
        ));
        assert_eq!(
            exp.policies[0].time.waits[1],
            retrysim::policy::Waits::default()
        );
        let result = run_one(exp);
        assert_eq!(result.policies[0].totals.intents(), 20, "{rule}");
    }
}

/// A reply at exactly the timeout's tick is late by default, P(round trip ≥ τ); with
/// `timeout_tie = "in_time"` it is taken, P(round trip > τ). A percentile timeout on a
/// constant service time always ties, so the two rules part completely.
#[test]
fn a_reply_at_the_timeout_is_late_unless_the_tie_says_in_time() {
    let run = |tie: &str| {
        let exp = experiment(&format!(
            r#"
            name = "t"
            [workload]
            tasks = 50
            [[tool]]
            name = "order"
            request_latency = {{ dist = "constant", value = "1ms" }}
            service_time = {{ dist = "constant", value = "8ms" }}
            reply_latency = {{ dist = "constant", value = "1ms" }}
            [[policy]]
            name = "p"
            max_attempts = 2
            retry_on = ["timeout"]
            idempotency_key = "per_intent"
            timeout = "p50"
            {tie}
            "#
        ));
        let theory = run_one(exp.clone()).policies[0]
            .theory
            .expect("closed forms");
        let r = &records(&exp, 0)[0];
        (r.timeouts, r.status, theory.attempts)
    };
    // Late: both attempts reach their 10 ms timeout; theory says p = 1, 2 attempts.
    assert_eq!(run(""), (2, Status::Stopped(StopReason::AttemptLimit), 2.0));
    assert_eq!(run("timeout_tie = \"late\""), run(""));
    // In time: the reply at 10 ms is taken; p = 0, 1 attempt.
    assert_eq!(
        run("timeout_tie = \"in_time\""),
        (0, Status::Succeeded, 1.0)
    );
}
