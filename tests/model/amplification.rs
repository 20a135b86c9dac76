//! Load amplification with many clients (`configs/retry-amplification.toml`): what three
//! retries, an adaptive retry bucket and a retry breaker, each kept per client, do to the load
//! a failing server sees, and how the number of clients changes it.

use retrysim::metrics::{Measure, Sample};
use retrysim::run::PointResult;

use crate::common::{self, shipped};

/// The config at one point: the server failing a share `p` of attempts, `callers` clients.
fn point(p: f64, callers: u32) -> (Vec<String>, PointResult) {
    let mut exp = shipped("retry-amplification.toml");
    exp.tools[0].faults.server_error = p;
    exp.workload.callers = callers;
    let names = exp.policies.iter().map(|p| p.name.clone()).collect();
    (names, common::run_one(exp))
}

/// Calls per first try, by configuration name.
fn amplification(at: &(Vec<String>, PointResult), name: &str) -> f64 {
    let i = at.0.iter().position(|n| n == name).unwrap();
    at.1.policies[i].estimate(Measure::Attempts).mean
}

/// No retries is no amplification; three retries follow the closed form 1 + p + p² + p³: the
/// mean over every intent of every replication lies within four standard errors of it, the
/// error from the closed form's own variance (a chance of 6 in 100 000 to fail by luck); a
/// retry breaker holds the load near one once failures pass its 10 %;
/// and the adaptive bucket sits between.
#[test]
fn budgets_and_breakers_hold_the_load_that_retries_multiply() {
    for (p, callers) in [(0.2, 10), (0.5, 10), (0.5, 1000)] {
        let at = point(p, callers);
        let label = format!("p = {p}, {callers} clients");
        assert_eq!(amplification(&at, "no-retries"), 1.0, "{label}");
        let three = amplification(&at, "three-retries");
        let i = at.0.iter().position(|n| n == "three-retries").unwrap();
        let pooled = at.1.policies[i].totals.get(Measure::Attempts);
        // Attempts k = 1, 2, 3 with chance p^(k−1)·(1 − p), and 4 with chance p³.
        let chance = |k: i32| {
            if k < 4 {
                p.powi(k - 1) * (1.0 - p)
            } else {
                p.powi(3)
            }
        };
        let mean: f64 = (1..=4).map(|k| f64::from(k) * chance(k)).sum();
        let square: f64 = (1..=4).map(|k| f64::from(k * k) * chance(k)).sum();
        let error = ((square - mean * mean) / pooled.count() as f64).sqrt();
        assert!((mean - (1.0 + p + p * p + p * p * p)).abs() < 1e-12);
        assert!(
            (pooled.mean() - mean).abs() < 4.0 * error,
            "{label}: {} vs {mean} ± {error}",
            pooled.mean()
        );
        let breaker = amplification(&at, "retry-breaker");
        let bucket = amplification(&at, "adaptive-bucket");
        assert!(breaker < 1.01, "{label}: {breaker}");
        assert!(breaker < bucket && bucket < three, "{label}: {bucket}");
    }
}

/// The adaptive bucket, kept per client, amplifies more the more clients share the load: each
/// sees fewer calls, and every bucket starts full.
#[test]
fn an_adaptive_bucket_per_client_weakens_as_clients_multiply() {
    let few = amplification(&point(0.5, 10), "adaptive-bucket");
    let many = amplification(&point(0.5, 1000), "adaptive-bucket");
    assert!(few < 1.15 && many > 1.5, "{few} vs {many}");
}
