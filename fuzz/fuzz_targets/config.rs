//! Config text through everything validation promises: parse → validate → a tiny run. Any
//! panic, or a run that does not end, is a bug: a config validation accepts must run, and one
//! it refuses must get an error that displays.

#![no_main]

use libfuzzer_sys::fuzz_target;
use retrysim::config::{ConfigError, Source};
use retrysim::model::{Arrival, Workload};
use retrysim::sim::{self, Job};
use retrysim::theory;
use retrysim::time::Tick;

/// The most intents a fuzzed config may run, over every point, configuration and replication.
const MAX_INTENTS: u64 = 2_000;
/// Runs are cut at this much simulated time, so a slow-burning config stays quick.
const HORIZON: Tick = Tick(10_000_000);

fuzz_target!(|data: &[u8]| {
    let text = match String::from_utf8(data.to_vec()) {
        Ok(text) => text,
        Err(e) => {
            let _ = ConfigError::not_utf8("fuzz.toml", &e).to_string();
            return;
        }
    };
    let source = Source {
        name: "fuzz.toml".into(),
        text,
        dir: None,
    };
    let mut sweep = match source.sweep() {
        Ok(sweep) => sweep,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let intents: u64 = sweep
        .points
        .iter()
        .map(|p| {
            let exp = &p.experiment;
            let calls = exp.workload.calls.len() as u64;
            (exp.policies.len() as u64)
                .saturating_mul(exp.replications)
                .saturating_mul(tasks(&exp.workload))
                .saturating_mul(calls)
        })
        .fold(0, u64::saturating_add);
    if intents > MAX_INTENTS {
        return;
    }
    // Each run on its own, as the pool would run it, without the cost of starting threads.
    for (point, p) in sweep.points.iter_mut().enumerate() {
        let exp = &mut p.experiment;
        exp.horizon = exp.horizon.min(HORIZON);
        for (policy, rule) in exp.policies.iter().enumerate() {
            let _ = theory::for_policy(exp, rule);
            for replication in 0..exp.replications {
                let job = Job {
                    point,
                    policy,
                    replication,
                };
                sim::simulate(exp, job, |_, _| {});
            }
        }
    }
});

/// The tasks a workload brings: its count, or for one bounded by time alone twice the expected
/// arrivals (the count is a draw, and a bound must hold for almost every draw).
fn tasks(w: &Workload) -> u64 {
    let expected = match (w.duration, &w.arrival) {
        (Some(d), Arrival::Poisson { mean_gap }) => d.0 as f64 / mean_gap,
        (Some(d), Arrival::Scheduled(s)) => s.expected(0.0, d.0 as f64),
        _ => f64::INFINITY,
    };
    let bound = (2.0 * expected + 10.0).min(u64::MAX as f64) as u64;
    w.tasks.map_or(bound, |n| n.min(bound))
}
