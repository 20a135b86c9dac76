//! botocore's adaptive mode against a provider that throttles: the send-rate limiter stays off
//! until the first 429, then holds back first attempts too, and the client sends at about the
//! rate the provider allows instead of being refused.

use retrysim::metrics::Outcome;

use crate::common::{experiment, traced};

/// 30 tasks a second for a minute against a tool that takes 10 a second (a token bucket of
/// burst 10), met by botocore's standard and adaptive modes.
fn provider() -> retrysim::Experiment {
    experiment(
        "name = \"s\"\nseed = 7\n[workload]\narrival = \"poisson\"\nmean_interarrival = \"33333us\"\n\
         duration = \"60s\"\nclients = 100000\n[[tool]]\nname = \"t\"\n\
         rate_limit = { per_second = 10, burst = 10 }\n\
         service_time = { dist = \"constant\", value = \"20ms\" }\n\
         [[policy]]\nname = \"standard\"\npreset.botocore = {}\n\
         [[policy]]\nname = \"adaptive\"\npreset.botocore = { mode = \"adaptive\" }\n",
    )
}

#[test]
fn adaptive_mode_holds_back_first_attempts_after_a_throttle() {
    let exp = provider();
    let throttles = |policy: usize| {
        let stories = traced(&exp, policy);
        let attempts: Vec<_> = stories.iter().flat_map(|(_, a)| a.iter()).collect();
        let refused = attempts
            .iter()
            .filter(|a| a.outcome == Outcome::Refused(retrysim::model::FailureClass::Throttled))
            .count();
        // First attempts that went out later than their task arrived.
        let held = stories
            .iter()
            .filter(|(r, a)| a.first().is_some_and(|a| a.dispatch > r.start))
            .count();
        let first_throttle = attempts
            .iter()
            .filter(|a| a.outcome == Outcome::Refused(retrysim::model::FailureClass::Throttled))
            .map(|a| a.end)
            .min();
        let held_before = stories
            .iter()
            .filter(|(r, a)| {
                a.first().is_some_and(|a| a.dispatch > r.start)
                    && first_throttle.is_some_and(|t| r.start < t)
            })
            .count();
        (refused as f64 / attempts.len() as f64, held, held_before)
    };
    let (standard, standard_held, _) = throttles(0);
    let (adaptive, adaptive_held, held_before) = throttles(1);
    assert_eq!(
        standard_held, 0,
        "standard mode never holds a first attempt"
    );
    assert!(
        adaptive_held > 100,
        "{adaptive_held} first attempts held back"
    );
    assert_eq!(held_before, 0, "nothing is held before the first throttle");
    // Standard mode sends at the offered 30 a second, two thirds of it refused; adaptive sends
    // near the 10 allowed, so far fewer of its attempts are refused.
    assert!(standard > 0.5, "standard: {standard}");
    assert!(
        adaptive < standard / 2.0,
        "adaptive {adaptive} vs standard {standard}"
    );
}
