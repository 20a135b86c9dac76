//! Helpers shared by the integration tests. Each test crate uses a subset of them.
#![allow(dead_code)]

use std::path::Path;

use retrysim::Experiment;
use retrysim::config::{Origin, Source};
use retrysim::metrics::{AttemptRecord, Estimate, IntentRecord, Measure};
use retrysim::policy::{Attempts, KeyScope};
use retrysim::run::PointResult;
use retrysim::run::PolicyResult;
use retrysim::sim::{self, Job};
use retrysim::theory::ClosedForms;

/// The experiment a config without a sweep describes; panics with the error otherwise.
pub fn experiment(toml: &str) -> Experiment {
    Source {
        name: "test.toml".into(),
        text: toml.into(),
        origin: Origin::Text,
    }
    .sweep()
    .map(|s| s.base)
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs an experiment on its own and returns its one point as the output files see it, with
/// its completion histogram and timeline (a run's `Results` keep neither).
pub fn run_one(exp: Experiment) -> PointResult {
    retrysim::run::single_point(exp).unwrap()
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
    sim::simulate(exp, job, |r, attempts| out.push((*r, attempts.to_vec())));
    out.sort_by_key(|(r, _)| r.intent);
    out
}

/// `max_attempts` as a config writes it.
pub fn max_attempts(n: Attempts) -> String {
    match n {
        Attempts::AtMost(n) => n.to_string(),
        Attempts::Unlimited => "\"unlimited\"".into(),
    }
}

/// A run of a no-key / per-intent-key pair of configurations: each applies the closed forms
/// `theory` gives for its key, and its measures agree with them.
pub fn assert_pair_agrees(
    result: &PointResult,
    theory: impl Fn(KeyScope) -> ClosedForms,
    label: &str,
) {
    for (p, key) in result
        .policies
        .iter()
        .zip([KeyScope::None, KeyScope::PerIntent])
    {
        let theory = theory(key);
        assert_eq!(p.theory, Some(theory), "{label}: the run's closed forms");
        assert_agrees(p, &theory, &format!("{label} {key:?}"));
    }
}

/// Every measure, over the intents of every replication, lies within a 99.9 % interval of its
/// closed form;
/// `label` says which case failed.
pub fn assert_agrees(result: &PolicyResult, theory: &ClosedForms, label: &str) {
    agrees(theory, label, |m| {
        Estimate::at_level(result.totals.get(m), 0.999)
    });
}

/// As [`assert_agrees`], each interval across the replications' means: where the intents of
/// one run are not independent of each other (bursts), an interval across them is too narrow.
pub fn assert_agrees_across_replications(result: &PolicyResult, theory: &ClosedForms) {
    agrees(theory, &result.name, |m| result.estimate_at(m, 0.999));
}

/// Every measure's `estimate` holds its closed form.
fn agrees(theory: &ClosedForms, label: &str, estimate: impl Fn(Measure) -> Estimate) {
    for (m, expected) in [
        (Measure::Attempts, theory.attempts),
        (Measure::Effects, theory.effects),
        (Measure::Duplicates, theory.duplicates),
        (Measure::Success, theory.success),
        (Measure::Ghost, theory.ghost),
    ] {
        let est = estimate(m);
        assert!(
            est.contains(expected),
            "{label} {m:?}: {} ± {} vs {expected}",
            est.mean,
            est.half_width
        );
    }
}

/// The experiment of a shipped config, by its path under `configs/`.
pub fn shipped(config: &str) -> Experiment {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("configs/{config}"));
    Source::read(&path)
        .and_then(|s| s.sweep())
        .map(|s| s.base)
        .unwrap_or_else(|e| panic!("{e}"))
}
