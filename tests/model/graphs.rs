//! Call graphs: services that make calls of their own, each edge with its policy; the calls on
//! every edge against the closed form for independent layers, and the bounds that hold in any
//! run.

use std::io;
use std::path::Path;

use retrysim::config::{Origin, Source};
use retrysim::metrics::{Sample, StopReason};
use retrysim::policy::Attempts;
use retrysim::run::{Observer, Options, PointResult, jobs};
use retrysim::sweep::{Point, Sweep};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::common::{self, traced};

fn sweep_of(text: &str) -> Result<Sweep, String> {
    Source {
        name: "graph.toml".into(),
        text: text.into(),
        origin: Origin::Text,
    }
    .sweep()
    .map_err(|e| e.to_string())
}

/// Every point of `sweep`, run.
fn run_all(sweep: Sweep) -> Vec<PointResult> {
    struct All(Vec<PointResult>);
    impl Observer for All {
        fn point_done(&mut self, _: usize, _: &Point, result: &PointResult) -> io::Result<()> {
            self.0.push(result.clone());
            Ok(())
        }
    }
    let mut all = All(Vec::new());
    jobs(sweep, &Options::default(), &mut all).unwrap();
    all.0
}

/// The shipped layered experiment: every edge's calls per top-level intent agree with the
/// closed form within a 95 % interval across the replications, Bonferroni-corrected over every
/// edge, configuration and point the form covers; where the replications all counted the same,
/// within less than one call over every intent counted. At the db down, a retry at each of three
/// layers makes 27 calls there and a retry at one layer 3.
#[test]
fn layered_calls_follow_the_closed_form() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/layered-retries.toml");
    let sweep = Source::read(&path).and_then(|s| s.sweep()).unwrap();
    let points: Vec<Point> = sweep.points().collect();
    let results = run_all(sweep);
    let checks: usize = (results.iter())
        .flat_map(|r| &r.policies)
        .filter(|p| p.edge_theory.is_some())
        .map(|p| p.edge_calls.len())
        .sum();
    assert!(checks >= 50, "{checks} checks");
    let alpha = 0.05 / checks as f64;
    let mut covered = 0;
    for (point, result) in points.iter().zip(&results) {
        for (p, policy) in result.policies.iter().enumerate() {
            let Some(theory) = &policy.edge_theory else {
                continue;
            };
            for (e, m) in policy.edge_calls.iter().enumerate() {
                let n = m.count() as f64;
                let se = (m.variance() / n).sqrt();
                let expected = theory[e];
                let at = format!("{:?} policy {p} edge {e}", point.params);
                if se == 0.0 {
                    // Every replication counted the same: they agree with the form where it
                    // is off by less than one call over all the intents counted.
                    let intents = policy.totals.edges[0].intents as f64;
                    let gap = (m.mean() - expected).abs() * intents;
                    assert!(gap < 1.0, "{at}: {} vs {expected}", m.mean());
                } else {
                    let t = StudentsT::new(0.0, 1.0, n - 1.0)
                        .unwrap()
                        .inverse_cdf(1.0 - alpha / 2.0);
                    let gap = (m.mean() - expected).abs();
                    assert!(
                        gap <= t * se,
                        "{at}: {} vs {expected}, t·se {}",
                        m.mean(),
                        t * se
                    );
                }
                covered += 1;
            }
        }
    }
    assert_eq!(covered, checks);
    // The db down: 27 calls at the bottom for three retrying layers, 3 for one.
    let down = results.last().unwrap();
    let db = 2;
    let calls: Vec<f64> = (down.policies.iter())
        .map(|p| p.edge_calls[db].mean())
        .collect();
    assert_eq!(calls[..3], [27.0, 3.0, 3.0]);
    assert!(calls[3] < 1.5, "a budget at every layer: {}", calls[3]);
}

/// In any run, the calls over an edge are at most the top-level intents times the attempts
/// each edge above it allows, and the first tries over an edge are at most its caller's
/// attempts times the calls each makes there.
#[test]
fn calls_at_a_layer_never_exceed_the_attempts_above_it() {
    let text = r#"
        name = "bounded"
        seed = 7
        [workload]
        tasks = 300
        [[tool]]
        name = "api"
        server_error = 0.2
        calls = ["auth", ["db", "cache"]]
        [[tool]]
        name = "auth"
        server_error = 0.3
        [[tool]]
        name = "db"
        server_error = 0.4
        reply_loss = 0.1
        [[tool]]
        name = "cache"
        server_error = 0.5
        [[policy]]
        name = "retry"
        max_attempts = 3
        retry_on = ["5xx", "reset"]
        edge."api->db" = { max_attempts = 4, retry_on = ["5xx", "reset"] }
    "#;
    let sweep = sweep_of(text).unwrap();
    let exp = sweep.base.clone();
    let result = common::run_one(exp.clone());
    let edges = &result.policies[0].totals.edges;
    let names: Vec<String> = exp.graph.edges.iter().map(|e| e.name(&exp.tools)).collect();
    assert_eq!(names, ["task->api", "api->auth", "api->db", "api->cache"]);
    let limit = |e: usize| match exp.policies[0].on_edge(e).rule.retry.max_attempts {
        Attempts::AtMost(n) => u64::from(n),
        Attempts::Unlimited => unreachable!(),
    };
    let top = edges[0].intents;
    assert_eq!(top, 300);
    assert!(edges[0].calls <= top * limit(0));
    for e in 1..4 {
        // One call per attempt at the api, each making at most its edge's attempts.
        assert!(edges[e].intents <= edges[0].calls, "edge {e}");
        assert!(edges[e].calls <= edges[e].intents * limit(e), "edge {e}");
        assert!(edges[e].calls <= top * limit(0) * limit(e), "edge {e}");
    }
    // The db and the cache are called together, after auth succeeded: as often as each other.
    assert_eq!(edges[2].intents, edges[3].intents);
    assert!(edges[2].intents <= edges[1].successes);
    // A reply lost after the db committed is a duplicate when the call is retried.
    assert!(edges[2].duplicates > 0);
}

/// A task's calls are the same intent for intent whether or not the config also holds a
/// service the task never reaches: a graph of one edge is the model without graphs.
#[test]
fn a_service_the_task_never_calls_changes_none_of_its_calls() {
    let plain = r#"
        name = "one-edge"
        seed = 11
        [workload]
        tasks = 500
        calls = ["charge"]
        [[tool]]
        name = "charge"
        request_loss = 0.1
        server_error = 0.1
        reply_loss = 0.1
        [[policy]]
        name = "retry"
        max_attempts = 4
        retry_on = ["reset", "5xx"]
        backoff = { kind = "exponential", initial_delay = "20ms", jitter = "full" }
    "#;
    let with_service =
        format!("{plain}\n[[tool]]\nname = \"api\"\ncalls = [\"db\"]\n[[tool]]\nname = \"db\"\n");
    let a = sweep_of(plain).unwrap().base;
    let b = sweep_of(&with_service).unwrap().base;
    assert!(!a.graph.has_services() && b.graph.has_services());
    assert_eq!(traced(&a, 0), traced(&b, 0));
}

/// A call that leads back to a tool on the way is refused where it is written, naming the
/// cycle; an edge a configuration names must exist, and has no name of its own.
#[test]
fn cycles_and_unknown_edges_are_refused_where_written() {
    let base = |calls_db: &str, edge: &str| {
        format!(
            r#"
            name = "cyclic"
            [workload]
            tasks = 1
            calls = ["api"]
            [[tool]]
            name = "api"
            calls = ["db"]
            [[tool]]
            name = "db"
            {calls_db}
            [[policy]]
            name = "p"
            {edge}
            "#
        )
    };
    let err = sweep_of(&base("calls = [\"api\"]", "")).unwrap_err();
    assert!(err.contains("a cycle: api → db → api"), "{err}");
    assert!(err.contains("tool[1].calls[0]"), "{err}");
    let err = sweep_of(&base("", "edge.\"api->dB\" = { max_attempts = 2 }")).unwrap_err();
    assert!(err.contains("unknown value \"api->dB\""), "{err}");
    assert!(err.contains("did you mean \"api->db\"?"), "{err}");
    let err = sweep_of(&base("", "edge.\"api->db\" = { name = \"x\" }")).unwrap_err();
    assert!(
        err.contains("an edge's policy is named by its edge"),
        "{err}"
    );
    let err = sweep_of(&base("calls = [[]]", "")).unwrap_err();
    assert!(err.contains("an empty stage"), "{err}");
}

/// The shipped deadline experiment: carried down, the caller's deadline stops the api's
/// retries of the slow tool once the task has stopped waiting, so the work done for no one,
/// summed over the edges and at the slow tool, is less than where every hop keeps its own
/// deadline (what is left is work its own timeouts abandoned, which only a server that
/// abandons work at the deadline saves: see below); success is no lower.
#[test]
fn a_propagated_deadline_leaves_less_work_orphaned() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/deadline-propagation.toml");
    let exp = Source::read(&path).and_then(|s| s.sweep()).unwrap().base;
    let result = common::run_one(exp.clone());
    let orphaned = |p: usize| -> u64 {
        (result.policies[p].totals.edges.iter())
            .map(|e| e.orphaned)
            .sum()
    };
    let tops = |p: usize| result.policies[p].totals.calls() as f64;
    assert!(orphaned(0) as f64 / tops(0) > 0.3, "{}", orphaned(0));
    assert!(
        orphaned(1) < orphaned(0),
        "{} vs {}",
        orphaned(1),
        orphaned(0)
    );
    let slow = exp.graph.find(Some(0), 1).expect("api->slow");
    let at_slow = |p: usize| result.policies[p].totals.edges[slow].orphaned;
    assert!(at_slow(1) < at_slow(0), "{} vs {}", at_slow(1), at_slow(0));
    let success = |p: usize| {
        let e = &result.policies[p].totals.edges[0];
        e.successes as f64 / e.intents as f64
    };
    assert!(success(1) >= success(0), "{} vs {}", success(1), success(0));
}

/// The shipped fan-out: the p99 of a call fanning out to N leaves is the closed form's
/// F⁻¹(0.99^(1/N)) within a distribution-free 95 % interval for the 99th percentile of the
/// intents measured (the order statistics at ranks n·0.99 ± z·√(n·0.99·0.01), Bonferroni over
/// the points, each read within the histogram's 0.1 %); a hedge per leaf cuts it at N = 100.
#[test]
fn a_fan_out_takes_the_time_of_its_slowest_call() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/fan-out.toml");
    let sweep = Source::read(&path).and_then(|s| s.sweep()).unwrap();
    let results = run_all(sweep);
    let z = statrs::distribution::Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - 0.05 / (2.0 * results.len() as f64));
    for (i, result) in results.iter().enumerate() {
        let plain = &result.policies[0];
        let form = plain.fan_out_p99.expect("the form holds without hedging").0 as f64;
        assert!(
            result.policies[1].fan_out_p99.is_none(),
            "no form for hedges"
        );
        let n = plain.totals.edges[0].intents as f64;
        let spread = z * (n * 0.99 * 0.01).sqrt();
        let (lo, hi) = ((n * 0.99 - spread) / n, ((n * 0.99 + spread) / n).min(1.0));
        let at = |q: f64| plain.totals.completion.at(q).0 as f64;
        let (low, high) = (at(lo) * 0.999, at(hi) * 1.001 + 1.0);
        assert!(
            low <= form && form <= high,
            "point {i}: {form} outside [{low}, {high}]"
        );
    }
    let wide = results.last().unwrap();
    let (plain, hedged) = (
        wide.policies[0].completion_p99,
        wide.policies[1].completion_p99,
    );
    assert!(
        hedged.0 as f64 <= 0.8 * plain.0 as f64,
        "{hedged} vs {plain}"
    );
}

/// Duplicates at the layer below a retry, per call of the task, against the closed form: with
/// a reply lost after the api's work on a share b of its attempts and 3 attempts at the top,
/// payments is called once per attempt that reached the api, so a call of the task makes D
/// duplicates there with P(D ≥ 1) = b and P(D = 2) = b²: E\[D\] = b + b², Var\[D\] =
/// b + 3b² − (b + b²)². Without a key, or with a key made at the api (new at each retry
/// above), the mean is within its 95 % interval, Bonferroni over the two; with the task's key
/// forwarded, payments commits once per call of the task: no duplicate at all.
#[test]
fn a_forwarded_key_makes_the_layer_below_a_retry_commit_once() {
    let exp = common::shipped("keys-across-hops.toml");
    let b: f64 = 0.1;
    let (mean, var) = (b + b * b, b + 3.0 * b * b - (b + b * b).powi(2));
    let result = common::run_one(exp.clone());
    let payments = exp.graph.find(Some(0), 1).expect("api->payments");
    let z = statrs::distribution::Normal::new(0.0, 1.0)
        .unwrap()
        .inverse_cdf(1.0 - 0.05 / 4.0);
    for p in 0..2 {
        let totals = &result.policies[p].totals;
        let n = totals.calls() as f64;
        let measured = totals.edges[payments].duplicates as f64 / n;
        let half = z * (var / n).sqrt();
        assert!(
            (measured - mean).abs() < half,
            "{}: {measured} vs {mean} ± {half}",
            exp.policies[p].name
        );
    }
    // A key made at the api keeps the api's own record once; only the forwarded one reaches
    // payments.
    let own = &result.policies[1].totals;
    assert_eq!(own.edges[0].duplicates, 0);
    let forwarded = &result.policies[2].totals;
    assert_eq!(forwarded.edges[payments].duplicates, 0);
    assert_eq!(forwarded.edges[payments].effects, forwarded.calls());
    // The same draws in all three: the keys change what commits, not what is sent.
    let calls = |p: usize| result.policies[p].totals.edges[payments].calls;
    assert!(calls(0) == calls(1) && calls(1) == calls(2));
}

/// The shipped fallback chain: every call of the task is served at most once, by the primary
/// or by the fallback (their successes add up to the task's), a configuration without a
/// fallback never calls it, falling back serves calls the primary could not, and a cooldown
/// spares the dead primary most of its calls, and the client most of its attempts, while the
/// calls it rests go to the fallback.
#[test]
fn a_fallback_serves_what_the_primary_cannot_and_a_cooldown_rests_it() {
    let exp = common::shipped("fallback-chain.toml");
    let result = common::run_one(exp.clone());
    let (primary, secondary) = (
        exp.graph.find(None, 0).expect("task->primary"),
        exp.graph.find(None, 1).expect("task->secondary"),
    );
    let figures = |p: usize| {
        let t = &result.policies[p].totals;
        let stopped: u64 = StopReason::ALL.iter().map(|&r| t.stopped(r)).sum();
        let succeeded = t.calls() - stopped;
        let served = t.edges[primary].successes + t.edges.get(secondary).map_or(0, |e| e.successes);
        assert_eq!(served, succeeded, "{}", exp.policies[p].name);
        let to_secondary = t.edges.get(secondary).map_or(0, |e| e.calls);
        (
            succeeded as f64 / t.calls() as f64,
            t.tools[0].calls_while_down,
            to_secondary,
            t.edges[primary].calls + to_secondary,
        )
    };
    let (none, fallback, cooled) = (figures(0), figures(1), figures(2));
    assert_eq!(none.2, 0, "no fallback, no call to it");
    assert!(fallback.0 > none.0 + 0.2, "{fallback:?} vs {none:?}");
    assert!(cooled.0 > none.0 + 0.2, "{cooled:?} vs {none:?}");
    // Resting the primary spares it most of the calls it would fail, and the client most of
    // its attempts; the calls it rests go to the fallback instead.
    assert!(cooled.1 * 3 < fallback.1, "{cooled:?} vs {fallback:?}");
    assert!(cooled.3 < fallback.3, "{cooled:?} vs {fallback:?}");
    assert!(cooled.2 > fallback.2, "{cooled:?} vs {fallback:?}");
}

/// Fallbacks and forwarded keys refused where written, saying what would do.
#[test]
fn fallbacks_and_forwarded_keys_are_refused_where_they_cannot_work() {
    let base = |api: &str, policy: &str| {
        format!(
            r#"
            name = "refused"
            [workload]
            tasks = 1
            calls = ["api"]
            [[tool]]
            name = "api"
            calls = ["db"]
            {api}
            [[tool]]
            name = "db"
            [[tool]]
            name = "replica"
            [[policy]]
            name = "p"
            {policy}
            "#
        )
    };
    let refused = |api: &str, policy: &str, says: &[&str]| {
        let err = sweep_of(&base(api, policy)).unwrap_err();
        for s in says {
            assert!(err.contains(s), "{s}: {err}");
        }
    };
    refused(
        "",
        "fallback = [\"replica\"]",
        &["policy[0].fallback", "belongs to the edge"],
    );
    refused(
        "",
        "edge.\"api->db\" = { fallback = [\"replicaa\"] }",
        &["edge.\"api->db\".fallback[0]", "did you mean \"replica\"?"],
    );
    refused(
        "",
        "edge.\"api->db\" = { fallback = [\"db\"] }",
        &["the call's own tool"],
    );
    refused(
        "",
        "edge.\"api->db\" = { fallback = [\"api\"] }",
        &["would call itself"],
    );
    refused(
        "",
        "edge.\"api->db\" = { cooldown = \"5s\" }",
        &["edge.\"api->db\".cooldown", "has none"],
    );
    refused(
        "",
        "edge.\"api->db\" = { fallback = [\"replica\"], cooldown_after = 0 }",
        &["cooldown_after", "1 or more"],
    );
    // A fallback that calls back up the graph is a cycle.
    let err = sweep_of(
        &base("", "edge.\"api->db\" = { fallback = [\"replica\"] }").replace(
            "name = \"replica\"",
            "name = \"replica\"\n            calls = [\"api\"]",
        ),
    )
    .unwrap_err();
    assert!(err.contains("a cycle: api → replica → api"), "{err}");
    refused(
        "",
        "idempotency_key = \"forward\"",
        &["policy[0].idempotency_key", "a task has no request"],
    );
    refused(
        "",
        "edge.\"api->db\" = { idempotency_key = \"forward\" }",
        &[
            "edge.\"api->db\".idempotency_key",
            "\"task->api\" carry none",
            "(none)",
        ],
    );
    sweep_of(&base(
        "",
        "idempotency_key = \"per_intent\"\nedge.\"api->db\" = { idempotency_key = \"forward\" }",
    ))
    .unwrap();
    // The configuration's own key stands on the task's calls, even where every edge is named.
    refused(
        "",
        "idempotency_key = \"forward\"\nedge.\"task->api\" = { idempotency_key = \"per_intent\" }\nedge.\"api->db\" = { idempotency_key = \"forward\" }",
        &["policy[0].idempotency_key", "stands on the task's calls"],
    );
    // A fallback's own edge has no list: a chain follows its primary's.
    refused(
        "",
        "edge.\"api->db\" = { fallback = [\"replica\"] }\nedge.\"api->replica\" = { fallback = [\"db\"] }",
        &["is a fallback of \"api->"],
    );
}

/// A key forwarded to the calls of a fan-out is joined with each call: three calls are three
/// operations, each committed once however often the task retried the api.
#[test]
fn a_forwarded_key_keeps_the_calls_of_a_fan_out_apart() {
    let exp = sweep_of(
        r#"
        name = "forwarded-fan-out"
        seed = 3
        [workload]
        tasks = 300
        clients = 300
        calls = ["api"]
        [[tool]]
        name = "api"
        calls = [{ call = "payments", times = 3 }]
        reply_loss = 0.3
        [[tool]]
        name = "payments"
        [[policy]]
        name = "forwarded"
        max_attempts = 4
        retry_on = ["reset"]
        idempotency_key = "per_intent"
        edge."api->payments" = { idempotency_key = "forward" }
        "#,
    )
    .unwrap()
    .base;
    let result = common::run_one(exp.clone());
    let totals = &result.policies[0].totals;
    let payments = exp.graph.find(Some(0), 1).expect("api->payments");
    assert!(
        totals.edges[payments].calls > 3 * totals.calls(),
        "the task retried"
    );
    assert_eq!(totals.edges[payments].effects, 3 * totals.calls());
    assert_eq!(totals.edges[payments].duplicates, 0);
}

/// With the deadline carried down and servers that abandon work at it, no work is done for no
/// one on any edge: every attempt's work ends by the moment its client stops waiting, and
/// that moment is the one above's. Without abandoning, the same runs leave work orphaned.
#[test]
fn abandoning_at_a_carried_deadline_orphans_nothing() {
    let config = |abandon: bool| {
        format!(
            r#"
            name = "abandon"
            seed = 7
            [workload]
            tasks = 400
            clients = 400
            calls = ["api"]
            [[tool]]
            name = "api"
            calls = ["db", ["cache", "slow"]]
            abandon_at_deadline = {abandon}
            service_time = {{ dist = "exponential", mean = "20ms" }}
            [[tool]]
            name = "db"
            abandon_at_deadline = {abandon}
            service_time = {{ dist = "exponential", mean = "30ms" }}
            server_error = 0.2
            [[tool]]
            name = "cache"
            abandon_at_deadline = {abandon}
            workers = 4
            service_time = {{ dist = "exponential", mean = "5ms" }}
            [[tool]]
            name = "slow"
            abandon_at_deadline = {abandon}
            service_time = {{ dist = "lognormal", median = "60ms", sigma = 0.9 }}
            [[policy]]
            name = "propagate"
            max_attempts = 3
            retry_on = ["5xx", "timeout"]
            timeout = "150ms"
            deadline = "400ms"
            deadline_propagation = "propagate"
            "#
        )
    };
    let orphaned = |abandon: bool| -> u64 {
        let exp = sweep_of(&config(abandon)).unwrap().base;
        let result = common::run_one(exp);
        let totals = &result.policies[0].totals;
        assert!(totals.calls() == 400);
        totals.edges.iter().map(|e| e.orphaned).sum()
    };
    assert!(orphaned(false) > 0);
    assert_eq!(orphaned(true), 0);
}

/// A task's own calls in stages: `a`, then `b` and `c` together (each starting as `a` ends),
/// then `d`, optional. The task succeeds when every needed call did, whatever `d` did; a
/// needed call's failure ends the task there, no later stage called. Calls per task's call on
/// each edge agree with the closed form, which follows the stages, within a 95 % interval
/// across the replications, Bonferroni over the edges.
#[test]
fn a_task_calls_in_stages_and_passes_an_optional_failure() {
    let config = |b_fails: f64| {
        format!(
            r#"
            name = "staged"
            seed = 11
            replications = 10
            [workload]
            tasks = 500
            clients = 500
            calls = ["a", ["b", "c"], {{ call = "d", optional = true }}]
            [[tool]]
            name = "a"
            server_error = 0.3
            [[tool]]
            name = "b"
            server_error = {b_fails}
            [[tool]]
            name = "c"
            [[tool]]
            name = "d"
            server_error = 1.0
            [[policy]]
            name = "two-attempts"
            max_attempts = 2
            retry_on = ["5xx"]
            "#
        )
    };
    let exp = sweep_of(&config(0.2)).unwrap().base;
    assert!(exp.graph.is_measured() || exp.workload.stages.is_some());
    for (r, _) in common::traced(&exp, 0) {
        let place = r.intent % 4;
        if place == 1 || place == 2 {
            // b and c start together, as a's call ends.
            let a = common::records(&exp, 0)
                .into_iter()
                .find(|x| x.intent == r.intent - place)
                .expect("a ran first");
            assert_eq!(r.start, a.end, "intent {}", r.intent);
        }
    }
    let result = common::run_one(exp.clone());
    let totals = &result.policies[0].totals;
    // Every task succeeds exactly when a, b and c did: d always fails, and passes.
    let (pa, pb) = (1.0 - 0.3 * 0.3, 1.0 - 0.2 * 0.2);
    let tasks = totals.tasks as f64;
    let share = totals.tasks_succeeded as f64 / tasks;
    let p = pa * pb;
    let half = 1.96 * (p * (1.0 - p) / tasks).sqrt();
    assert!((share - p).abs() < half, "{share} vs {p} ± {half}");
    let theory = result.policies[0]
        .edge_theory
        .as_ref()
        .expect("the form holds");
    let alpha = 0.05 / theory.len() as f64;
    for (e, m) in result.policies[0].edge_calls.iter().enumerate() {
        let n = m.count() as f64;
        let t = StudentsT::new(0.0, 1.0, n - 1.0)
            .unwrap()
            .inverse_cdf(1.0 - alpha / 2.0);
        let half = t * (m.variance() / n).sqrt();
        assert!(
            (m.mean() - theory[e]).abs() <= half.max(1e-9),
            "edge {e}: {} vs {} ± {half}",
            m.mean(),
            theory[e]
        );
    }
    // A needed call that always fails ends every task at its stage: d is never called.
    let exp = sweep_of(&config(1.0)).unwrap().base;
    let result = common::run_one(exp.clone());
    let totals = &result.policies[0].totals;
    assert_eq!(totals.tasks_succeeded, 0);
    let d = exp.graph.find(None, 3).expect("task->d");
    assert_eq!(totals.edges.get(d).map_or(0, |e| e.calls), 0);
    let err = sweep_of(&config(0.0).replace("calls = [\"a\",", "calls = [[], \"a\",")).unwrap_err();
    assert!(
        err.contains("workload.calls[0]") && err.contains("an empty stage"),
        "{err}"
    );
}

/// `tools.csv` has a row for every tool a configuration can reach (`Experiment::reached_by`),
/// known from the config: the layers below the task's call, and a fallback only where the
/// configuration's policy names it — a service's too; a tool nothing calls has none.
#[test]
fn a_configuration_reaches_the_tools_below_its_calls_and_its_fallbacks() {
    let reached = |file: &str| {
        let exp = common::shipped(file);
        (exp.policies.iter())
            .map(|p| {
                let reached = exp.reached_by(p);
                (exp.tools.iter().zip(reached))
                    .filter(|(_, r)| *r)
                    .map(|(t, _)| t.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        reached("model-fallback.toml"),
        ["primary", "primary large", "primary large"]
    );
    assert!(
        reached("layered-retries.toml")
            .iter()
            .all(|r| r == "api service db")
    );
    // A service's fallback is reached by the configuration that names it, and by no other.
    let exp = common::experiment(
        "name = \"g\"\n[workload]\ntasks = 10\ncalls = [\"api\"]\n\
         [[tool]]\nname = \"api\"\ncalls = [\"db\"]\n[[tool]]\nname = \"db\"\n\
         [[tool]]\nname = \"replica\"\n[[tool]]\nname = \"idle\"\n\
         [[policy]]\nname = \"plain\"\n\
         [[policy]]\nname = \"falls-back\"\nedge.\"api->db\" = { fallback = [\"replica\"] }\n",
    );
    let names = |p: usize| {
        let reached = exp.reached_by(&exp.policies[p]);
        (exp.tools.iter().zip(reached))
            .filter(|(_, r)| *r)
            .map(|(t, _)| t.name.as_str())
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!([names(0), names(1)], ["api db", "api db replica"]);
}
