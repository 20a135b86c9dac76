//! Config text through everything validation promises: parse → validate → a tiny run. Any
//! panic, or a run that does not end, is a bug: a config validation accepts must run, and one
//! it refuses must get an error that displays.

#![no_main]

use libfuzzer_sys::fuzz_target;
use retrysim::config::{ConfigError, Source};
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
                // A workload bounded by time alone is not run here: its size is a draw.
                .saturating_mul(exp.workload.tasks.unwrap_or(u64::MAX))
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
