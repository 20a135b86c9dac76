//! The simulation against its theory and its own contracts: closed forms, common random
//! numbers, idempotency keys.

use crate::common;

use common::{assert_agrees, assert_pair_agrees, experiment, max_attempts, records, run_one};
use retrysim::Experiment;
use retrysim::metrics::{BusinessState, IntentRecord, Measure, Sample, Status, StopReason};
use retrysim::model::FailureClass;
use retrysim::policy::{Attempts, KeyScope};
use retrysim::theory::closed_forms;
use retrysim::time::Tick;

/// An experiment of `tasks` single-call tasks on one tool, with the given policy tables.
fn lossy(a: f64, e: f64, b: f64, tasks: u64, policies: &str) -> Experiment {
    experiment(&format!(
        r#"
        name = "t"
        seed = 99
        [workload]
        tasks = {tasks}
        clients = 50
        [[tool]]
        name = "charge"
        request_loss = {a}
        server_error = {e}
        reply_loss = {b}
        service_time = {{ dist = "exponential", mean = "3ms" }}
        {policies}
        "#
    ))
}

/// The measured means lie within a 99.9 % confidence interval of the closed forms at every
/// (a, b, N) point — a stated level, not a tolerance tuned until it passes. With 5 measures at
/// 12 points a correct simulator fails this about 6 % of the time for a random seed; the seed is
/// fixed, so the outcome is too.
#[test]
fn measurements_agree_with_closed_forms() {
    let points = [
        (0.1, 0.0, 0.2, Attempts::AtMost(1)),
        (0.1, 0.0, 0.2, Attempts::AtMost(2)),
        (0.1, 0.0, 0.2, Attempts::AtMost(3)),
        (0.1, 0.0, 0.2, Attempts::Unlimited),
        (0.3, 0.0, 0.3, Attempts::AtMost(5)),
        (0.0, 0.0, 0.5, Attempts::Unlimited),
        // A 5xx before the commit counts with the lost requests in a.
        (0.05, 0.1, 0.15, Attempts::AtMost(4)),
    ];
    for (a, e, b, n) in points {
        let max = max_attempts(n);
        let exp = lossy(
            a,
            e,
            b,
            20_000,
            &format!(
                r#"[[policy]]
                name = "no-key"
                max_attempts = {max}
                [[policy]]
                name = "key"
                max_attempts = {max}
                idempotency_key = "per_intent""#
            ),
        );
        assert_pair_agrees(
            &run_one(exp),
            |key| closed_forms(a + e, b, n, key),
            &format!("a={a} e={e} b={b} {n:?}"),
        );
    }
}

#[test]
fn a_per_intent_key_never_duplicates_and_a_per_attempt_key_does() {
    let exp = lossy(
        0.1,
        0.0,
        0.3,
        5_000,
        r#"[[policy]]
        name = "per-intent"
        max_attempts = 6
        idempotency_key = "per_intent"
        [[policy]]
        name = "per-attempt"
        max_attempts = 6
        idempotency_key = "per_attempt""#,
    );
    let keyed = records(&exp, 0);
    assert!(
        keyed.iter().all(|r| r.effects <= 1),
        "one effect at most per intent"
    );
    assert!(keyed.iter().any(|r| r.attempts > 1), "retries did happen");
    let per_attempt = records(&exp, 1);
    let duplicates: u32 = per_attempt.iter().map(|r| r.duplicates()).sum();
    // Theory: (1−a)(1−q⁶)/(1−q) − (1−a⁶) ≈ 0.4844 per intent, so about 2 400 in 5 000.
    let expected = closed_forms(0.1, 0.3, Attempts::AtMost(6), KeyScope::PerAttempt).duplicates;
    let mean = f64::from(duplicates) / 5_000.0;
    assert!((mean - expected).abs() < 0.05, "{mean} vs {expected}");
}

/// Changing the policy leaves the draws of every shared attempt as they were: the k-th attempt
/// of intent i has the same fate and latencies under every configuration.
#[test]
fn configurations_meet_the_same_faults() {
    let backoff = r#"backoff = { kind = "exponential", initial_delay = "5ms", max_delay = "40ms", jitter = "full" }"#;
    let exp = lossy(
        0.15,
        0.05,
        0.2,
        3_000,
        &format!(
            r#"[[policy]]
            name = "naive"
            [[policy]]
            name = "capped"
            max_attempts = 3
            {backoff}
            [[policy]]
            name = "unlimited"
            max_attempts = "unlimited"
            {backoff}
            [[policy]]
            name = "unlimited-keyed"
            max_attempts = "unlimited"
            idempotency_key = "per_intent"
            {backoff}"#
        ),
    );
    let [naive, capped, unlimited, keyed] = [0, 1, 2, 3].map(|p| records(&exp, p));
    // Start times differ with the policy (a client frees up sooner or later), so compare each
    // intent's own duration.
    let took = |r: &IntentRecord| r.end.since(r.start);
    for i in 0..naive.len() {
        let (n, c, u, k) = (&naive[i], &capped[i], &unlimited[i], &keyed[i]);
        assert_eq!(
            (n.intent, c.intent, u.intent),
            (k.intent, k.intent, k.intent)
        );
        if n.status == Status::Succeeded {
            // The first attempt got through under every policy, at the same moment.
            assert_eq!((c.attempts, u.attempts), (1, 1));
            assert_eq!((took(c), took(u)), (took(n), took(n)));
        } else {
            assert!(c.attempts > 1 || c.status != Status::Succeeded);
        }
        if c.status == Status::Succeeded {
            // Same faults and same jitter: the unlimited policy follows the same path.
            assert_eq!(
                (u.attempts, took(u), u.effects),
                (c.attempts, took(c), c.effects)
            );
        }
        // A key changes what the server does, never what the network does.
        assert_eq!(
            (k.attempts, took(k), k.status),
            (u.attempts, took(u), u.status)
        );
        assert_eq!(k.effects, u.effects.min(1));
    }
}

#[test]
fn replications_are_independent_and_estimated_across_runs() {
    let mut exp = lossy(
        0.1,
        0.0,
        0.2,
        500,
        "[[policy]]\nname = \"p\"\nmax_attempts = 3",
    );
    exp.replications = 8;
    let means: Vec<f64> = (0..8)
        .map(|replication| {
            let job = retrysim::sim::Job {
                point: 0,
                policy: 0,
                replication,
            };
            let run = retrysim::sim::totals(&exp, job);
            run.totals.get(Measure::Attempts).mean()
        })
        .collect();
    let results = run_one(exp);
    let p = &results.policies[0];
    assert_eq!((p.replications, p.totals.intents()), (8, 8 * 500));
    assert!(
        means.windows(2).any(|w| w[0] != w[1]),
        "replications draw different numbers"
    );
    let est = p.estimate(Measure::Attempts);
    let average = means.iter().sum::<f64>() / 8.0;
    assert!((est.mean - average).abs() < 1e-12);
    assert!(est.half_width > 0.0 && est.contains(1.0 + 0.3 + 0.09));
}

#[test]
fn the_horizon_stops_a_run_and_leaves_intents_hung() {
    let mut exp = lossy(0.0, 0.0, 0.0, 10, "[[policy]]\nname = \"p\"");
    exp.horizon = Tick(1_500);
    exp.workload.clients = 10;
    let recs = records(&exp, 0);
    assert_eq!(recs.len(), 10);
    assert!(
        recs.iter()
            .all(|r| r.status == Status::Stopped(StopReason::Hung))
    );
    assert!(recs.iter().all(|r| r.end == Tick(1_500)));
    // Each was cut off with its attempt on the way: it may yet take effect.
    assert!(
        recs.iter()
            .all(|r| r.business_state == BusinessState::Unknown)
    );

    // Cut off while waiting out a backoff after a refusal: nothing can have happened.
    let mut exp = lossy(
        0.0,
        1.0,
        0.0,
        10,
        r#"[[policy]]
        name = "p"
        max_attempts = 5
        backoff = { kind = "constant", initial_delay = "1s", jitter = "none" }"#,
    );
    exp.horizon = Tick(500_000);
    let recs = records(&exp, 0);
    assert!(recs.iter().all(|r| r.attempts == 1));
    assert!(
        recs.iter()
            .all(|r| r.status == Status::Stopped(StopReason::Hung))
    );
    assert!(
        recs.iter()
            .all(|r| r.business_state == BusinessState::NotAttempted)
    );
}

/// A task calls its tools in order and stops at the first call that fails: later calls are
/// never started.
#[test]
fn a_task_stops_at_its_first_failed_call() {
    let exp = experiment(
        r#"
        name = "t"
        seed = 5
        [workload]
        tasks = 2000
        calls = ["search", "charge"]
        [[tool]]
        name = "search"
        request_loss = 0.25
        [[tool]]
        name = "charge"
        reply_loss = 0.1
        [[policy]]
        name = "naive"
        "#,
    );
    let recs = records(&exp, 0);
    let searches: Vec<&IntentRecord> = recs.iter().filter(|r| r.tool == 0).collect();
    let charges: Vec<&IntentRecord> = recs.iter().filter(|r| r.tool == 1).collect();
    assert_eq!(searches.len(), 2000);
    let searched = searches
        .iter()
        .filter(|r| r.status == Status::Succeeded)
        .count();
    assert_eq!(
        charges.len(),
        searched,
        "a charge follows each successful search only"
    );
    for c in &charges {
        let s = recs.iter().find(|r| r.intent == c.intent - 1).unwrap();
        assert_eq!((s.tool, s.status), (0, Status::Succeeded));
        assert_eq!(
            c.start, s.end,
            "the next call starts when the previous one ends"
        );
    }
    let results = run_one(exp);
    let charged = charges
        .iter()
        .filter(|r| r.status == Status::Succeeded)
        .count() as u64;
    assert_eq!(results.policies[0].totals.tasks_succeeded, charged);
    assert_eq!(
        results.policies[0].theory, None,
        "the two tools differ, so no closed form"
    );
}

/// Poisson arrivals: with a client free for every task, intents start at the arrival times,
/// whose gaps average the configured mean (within 4 standard errors; the gap's standard
/// deviation equals its mean).
#[test]
fn poisson_arrivals_have_the_configured_mean_gap() {
    let exp = experiment(
        r#"
        name = "t"
        seed = 8
        [workload]
        tasks = 20000
        clients = 20000
        arrival = "poisson"
        mean_interarrival = "2ms"
        [[tool]]
        name = "t"
        [[policy]]
        name = "p"
        "#,
    );
    let mut starts: Vec<u64> = records(&exp, 0).iter().map(|r| r.start.0).collect();
    starts.sort_unstable();
    let mean_gap = *starts.last().unwrap() as f64 / starts.len() as f64;
    let se = 2_000.0 / (starts.len() as f64).sqrt();
    assert!((mean_gap - 2_000.0).abs() < 4.0 * se, "{mean_gap}");
}

/// gRPC-style retry throttling on a tool that always fails, tasks one after another: tokens go
/// 10 → 7 over the first task's three attempts, 7 → 6 on the second task's first failure (a retry
/// is allowed above 5) and 5 on its retry's failure; from then on no retry is allowed.
#[test]
fn a_token_bucket_stops_retrying_once_half_spent() {
    let exp = experiment(
        r#"
        name = "t"
        [workload]
        tasks = 6
        clients = 1
        [[tool]]
        name = "down"
        script = [{ outcome = "5xx", after = 5 }]
        [[policy]]
        name = "budgeted"
        max_attempts = 3
        retry_budget = { kind = "token_bucket", max_tokens = 10, token_ratio = 0.1 }
        "#,
    );
    let attempts: Vec<u32> = records(&exp, 0).iter().map(|r| r.attempts).collect();
    assert_eq!(attempts, [3, 2, 1, 1, 1, 1]);
    let reasons: Vec<Status> = records(&exp, 0).iter().map(|r| r.status).collect();
    assert_eq!(reasons[0], Status::Stopped(StopReason::AttemptLimit));
    assert!(
        reasons[1..]
            .iter()
            .all(|&s| s == Status::Stopped(StopReason::RetryBudgetExhausted))
    );
}

/// A 429 is a refusal before the commit: no effect and tried again, so it counts with a in the
/// closed forms; each retry after one waits the Retry-After it names. Where the policy stops on
/// Retry-After, no closed form is claimed.
#[test]
fn a_throttled_call_waits_and_counts_with_the_lost_requests() {
    let config = |retry_after: &str| {
        format!(
            r#"
            name = "t"
            seed = 7
            [workload]
            tasks = 20000
            clients = 50
            [[tool]]
            name = "charge"
            request_loss = 0.05
            throttled = 0.15
            reply_loss = 0.1
            retry_after = "50ms"
            [[policy]]
            name = "p"
            max_attempts = 4
            retry_after = "{retry_after}"
            "#
        )
    };
    let exp = experiment(&config("honour"));
    let result = run_one(exp.clone());
    let theory = closed_forms(0.2, 0.1, Attempts::AtMost(4), KeyScope::None);
    assert_eq!(result.policies[0].theory, Some(theory));
    assert_agrees(&result.policies[0], &theory, "throttled");
    let wait = Tick(50_000);
    for (r, attempts) in common::traced(&exp, 0) {
        let throttled_then_retried = attempts[..attempts.len() - 1]
            .iter()
            .filter(|a| a.outcome == retrysim::metrics::Outcome::Refused(FailureClass::Throttled))
            .count() as u64;
        assert_eq!(r.backoff, Tick(wait.0 * throttled_then_retried), "{r:?}");
    }

    let exp = experiment(&config("stop"));
    let result = run_one(exp.clone());
    assert_eq!(result.policies[0].theory, None);
    let stopped = result.policies[0].totals.stopped(StopReason::NotRetryable);
    assert!(stopped > 0);
}

/// With a lookup before every resend of an ambiguous write, an idempotent receiver and a lookup
/// that always answers at once, a lost reply is found committed: attempts are
/// (1 − a^N)/(1 − a), nothing is duplicated and nothing is a ghost. The run is checked against
/// those forms, not the no-lookup ones it would contradict; a lagging lookup has no form.
#[test]
fn reconciliation_has_its_own_closed_forms() {
    for n in [Attempts::AtMost(3), Attempts::Unlimited] {
        let exp = lossy(
            0.1,
            0.05,
            0.2,
            20_000,
            &format!(
                r#"[[policy]]
                name = "reconciling"
                max_attempts = {}
                retry_on = ["reset", "5xx"]
                idempotency_key = "per_intent"
                lookup_before_retry = true"#,
                max_attempts(n)
            ),
        );
        let result = run_one(exp);
        let p = &result.policies[0];
        let theory = retrysim::theory::reconciled(0.1 + 0.05, 0.2, n);
        assert_eq!(p.theory, Some(theory), "{n:?}");
        // No duplicates, no ghosts, the tool's own losses reported, fewer attempts than a key.
        let reported = (theory.duplicates, theory.ghost, theory.a, theory.b);
        assert_eq!(reported, (0.0, 0.0, 0.1 + 0.05, 0.2));
        let keyed = closed_forms(0.1 + 0.05, 0.2, n, KeyScope::PerIntent);
        assert_ne!(theory.attempts, keyed.attempts);
        assert_agrees(p, &theory, &format!("reconciled {n:?}"));
    }
    let lagging = lossy(
        0.1,
        0.0,
        0.2,
        10,
        r#"[[policy]]
        name = "reconciling"
        max_attempts = 3
        retry_on = ["reset"]
        idempotency_key = "per_intent"
        lookup_before_retry = true"#,
    );
    let mut lagging = lagging;
    lagging.tools[0].lookup.lag = Tick(1);
    assert_eq!(run_one(lagging).policies[0].theory, None);
}

/// A run for its totals folds finished attempts as it goes; a run that hands every attempt on
/// holds them all. The two are one run: every configuration of these shipped experiments
/// (hedges, lookups, records, staggered attempts, layers, outages) totals the same either way.
#[test]
fn folding_finished_attempts_changes_no_total() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for file in [
        "reliability-layer.toml",
        "hedging.toml",
        "concurrency-limit.toml",
        "real-clients.toml",
        "scenarios/reconciliation.toml",
        "scenarios/payload-binding.toml",
        "scenarios/reliability-bugs.toml",
        "scenarios/cooperative-budget.toml",
    ] {
        let source = retrysim::config::Source::read(&root.join(file)).unwrap();
        let mut exp = source.sweep().unwrap().point(0).experiment;
        if let Some(tasks) = exp.workload.tasks.as_mut() {
            *tasks = (*tasks).min(2000);
        }
        for policy in 0..exp.policies.len() {
            let job = retrysim::sim::Job {
                point: 0,
                policy,
                replication: 0,
            };
            let folded = retrysim::sim::totals(&exp, job);
            let held = retrysim::sim::simulate(&exp, job, |_, _| {});
            assert_eq!(folded, held, "{file}, configuration {policy}");
        }
    }
}
