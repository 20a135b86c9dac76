//! The shipped experiments' relations: what each is meant to show, checked on its own run.

use std::path::Path;

use crate::common::{self, shipped, traced};
use retrysim::config::Source;
use retrysim::metrics::{IntentRecord, Outcome, Status};

/// The reliability layer's relations: retries recover blips, retry-only charges twice, the key
/// stops that, and the breaker spares the tool that is down for a success or a few.
#[test]
fn reliability_layer_relations() {
    let exp = shipped("reliability-layer.toml");
    let search = exp.tools.iter().position(|t| t.name == "search").unwrap();
    let summary: Vec<(u32, u32, u32, u32, u32)> = (0..exp.policies.len())
        .map(|p| {
            let rs: Vec<IntentRecord> = traced(&exp, p).into_iter().map(|(r, _)| r).collect();
            let sum = |f: &dyn Fn(&IntentRecord) -> u32| rs.iter().map(f).sum::<u32>();
            let tasks = rs
                .iter()
                .filter(|r| r.tool != search && r.status == Status::Succeeded)
                .count() as u32;
            let search_calls = sum(&|r| if r.tool == search { r.attempts } else { 0 });
            (
                tasks,
                search_calls,
                sum(&|r| r.effects.saturating_sub(1)),
                sum(&|r| r.short_circuited),
                sum(&|r| r.calls_while_down),
            )
        })
        .collect();
    let [naive, retry_only, reliable] = summary[..] else {
        panic!("three configurations");
    };
    assert!(
        naive.0 < reliable.0 && reliable.0 <= retry_only.0,
        "{summary:?}"
    );
    assert!(
        retry_only.0 - reliable.0 <= 5,
        "the breaker costs a few successes: {summary:?}"
    );
    assert!(
        retry_only.2 > 0 && reliable.2 == 0,
        "duplicates: {summary:?}"
    );
    assert!(
        reliable.1 * 10 < retry_only.1 * 6,
        "the breaker cuts calls to search: {summary:?}"
    );
    assert!(
        reliable.4 * 2 <= retry_only.4,
        "at least half fewer calls reach search while it is down: {summary:?}"
    );
    assert!(
        retry_only.4 > naive.4,
        "retries hammer the outage: {summary:?}"
    );
    assert!(reliable.3 > 0 && naive.3 == 0 && retry_only.3 == 0);
}

/// The load-versus-failure sweep at 20 % and 100 % failures, one replication each. Three attempts
/// without a budget send exactly 3 calls when everything fails. A gRPC bucket can fund no more
/// retries than the 5 tokens above its threshold plus 0.1 per success, so calls per task stay
/// under 1 + (6 + 0.1·successes)/tasks, about 1.1×; the AWS quota funds at most 500/5 = 100
/// retries with no success to refund them.
#[test]
fn retry_budgets_hold_the_load_down() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/retry-budgets.toml");
    let sweep = Source::read(&path).and_then(|s| s.sweep()).unwrap();
    let mut checked = Vec::new();
    for point in &sweep.points {
        let failure = point.params[0].to_string();
        if failure != "0.2" && failure != "1" {
            continue;
        }
        checked.push(failure.clone());
        let exp = retrysim::Experiment {
            replications: 1,
            ..point.experiment.clone()
        };
        let result = common::run_one(exp.clone());
        for (policy, r) in exp.policies.iter().zip(&result.policies) {
            let tasks = r.totals.tasks as f64;
            let calls = r.estimate(retrysim::metrics::Measure::Attempts).mean;
            let successes = r.totals.tasks_succeeded as f64;
            let at = format!("{} at {failure}", policy.name);
            match (policy.name.as_str(), failure.as_str()) {
                ("no-retries", _) => assert_eq!(calls, 1.0, "{at}"),
                ("no-budget", "1") => assert_eq!(calls, 3.0, "{at}"),
                ("no-budget", _) => assert!(calls > 1.2, "{at}: {calls}"),
                ("token-bucket", _) => {
                    assert!(
                        calls <= 1.0 + (6.0 + 0.1 * successes) / tasks,
                        "{at}: {calls}"
                    )
                }
                ("aws-standard", "1") => assert!(calls <= 1.0 + 100.0 / tasks, "{at}: {calls}"),
                _ => {}
            }
        }
    }
    assert_eq!(checked, ["0.2", "1"]);
}

/// The timeline of the default experiment adds up to its tool totals, stretch by stretch, and
/// its calls to a tool that is down all fall inside the outage (20 s to 35 s).
#[test]
fn the_timeline_adds_up_to_the_tool_totals() {
    let exp = shipped("reliability-layer.toml");
    let width = exp.output.timeline.expect("the default keeps a timeline");
    let result = common::run_one(exp.clone());
    let search = exp.tools.iter().position(|t| t.name == "search").unwrap();
    let ok = Outcome::Ok.index();
    for (policy, r) in exp.policies.iter().zip(&result.policies) {
        let timeline = r.timeline().expect("kept");
        for t in 0..exp.tools.len() {
            let buckets = timeline.buckets(t);
            let sum = |f: fn(&retrysim::metrics::timeline::Bucket) -> u64| -> u64 {
                buckets.iter().map(f).sum()
            };
            let totals = r.tool_totals(t);
            let at = format!("{} at {}", policy.name, exp.tools[t].name);
            assert_eq!(sum(|b| b.calls), totals.calls, "{at}");
            assert_eq!(sum(|b| b.calls_while_down), totals.calls_while_down, "{at}");
            assert_eq!(sum(|b| b.short_circuited), totals.short_circuited, "{at}");
            assert_eq!(sum(|b| b.successes), totals.outcomes[ok], "{at}");
        }
        let down: Vec<u64> = (timeline.buckets(search).iter().enumerate())
            .filter(|(_, b)| b.calls_while_down > 0)
            .map(|(i, _)| i as u64 * width.0)
            .collect();
        assert!(!down.is_empty(), "{}", policy.name);
        assert!(
            down.iter()
                .all(|&from| (20_000_000..35_000_000).contains(&from)),
            "{}: {down:?}",
            policy.name
        );
    }
}

/// `configs/concurrency-limit.toml`: a limit moves the waiting from the server's line, where an
/// abandoned call still costs work, to the client's: fewer calls, more successes, sooner.
#[test]
fn a_concurrency_limit_beats_a_retry_storm_of_ones_own_making() {
    let exp = shipped("concurrency-limit.toml");
    let result = common::run_one(exp.clone());
    let by = |name: &str| {
        let i = exp.policies.iter().position(|p| p.name == name).unwrap();
        let r = &result.policies[i];
        (
            r.estimate(retrysim::metrics::Measure::Success).mean,
            r.estimate(retrysim::metrics::Measure::Attempts).mean,
            r.completion_p50,
        )
    };
    let (none, fixed, aimd) = (by("no-limit"), by("fixed-8"), by("aimd"));
    assert!(
        none.0 < 0.2 && fixed.0 == 1.0 && aimd.0 > 0.95,
        "{none:?} {fixed:?} {aimd:?}"
    );
    assert!(fixed.1 < 1.01 && fixed.1 < aimd.1 && aimd.1 < none.1);
    assert!(fixed.2 < none.2 && aimd.2 < none.2);
}
