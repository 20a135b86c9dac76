//! Call graphs: services that make calls of their own, each edge with its policy; the calls on
//! every edge against the closed form for independent layers, and the bounds that hold in any
//! run.

use std::io;
use std::path::Path;

use retrysim::config::{Origin, Source};
use retrysim::metrics::Sample;
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
    let points: Vec<Point> = sweep.points.clone();
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
    let limit = |e: usize| match exp.policies[0].on_edge(e).retry.max_attempts {
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
/// retries of the slow tool once the task has stopped waiting, so no attempt is orphaned where
/// every hop keeping its own deadline orphans half a call per intent; success is no lower.
#[test]
fn a_propagated_deadline_leaves_no_work_orphaned() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/deadline-propagation.toml");
    let exp = Source::read(&path).and_then(|s| s.sweep()).unwrap().base;
    let result = common::run_one(exp.clone());
    let orphaned = |p: usize| -> u64 {
        (result.policies[p].totals.edges.iter())
            .map(|e| e.orphaned)
            .sum()
    };
    let tops = |p: usize| result.policies[p].totals.edges[0].intents as f64;
    assert!(orphaned(0) as f64 / tops(0) > 0.3, "{}", orphaned(0));
    assert_eq!(orphaned(1), 0);
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
