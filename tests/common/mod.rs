//! Helpers shared by the integration tests. Each test crate uses a subset of them.
#![allow(dead_code)]

use retrysim::Experiment;
use retrysim::config::Source;
use retrysim::metrics::{AttemptRecord, IntentRecord};
use retrysim::run::{Options, PointResult, run};
use retrysim::sim::{self, Job};
use retrysim::sweep::Sweep;

/// The experiment a config without a sweep describes; panics with the error otherwise.
pub fn experiment(toml: &str) -> Experiment {
    Source {
        name: "test.toml".into(),
        text: toml.into(),
        dir: None,
    }
    .sweep()
    .map(|s| s.base)
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs an experiment on its own and returns its one point.
pub fn run_one(exp: Experiment) -> PointResult {
    let mut results = run(Sweep::single(exp), &Options::default(), &mut ()).unwrap();
    results.points.remove(0)
}

/// Every intent record of replication 0 of `policy`, in intent order.
pub fn records(exp: &Experiment, policy: usize) -> Vec<IntentRecord> {
    traced(exp, policy).into_iter().map(|(r, _)| r).collect()
}

/// Every intent record of replication 0 of `policy` with its attempts, in intent order.
pub fn traced(exp: &Experiment, policy: usize) -> Vec<(IntentRecord, Vec<AttemptRecord>)> {
    let mut out = Vec::new();
    let job = Job {
        point: 0,
        policy,
        replication: 0,
    };
    sim::run(exp, job, |r, attempts| out.push((*r, attempts.to_vec())));
    out.sort_by_key(|(r, _)| r.intent);
    out
}
