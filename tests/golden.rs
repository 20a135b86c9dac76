//! The contract behind `out/`: every shipped config, rerun now, writes the committed output byte
//! for byte — CSV, manifest and charts. One test per config, so the harness runs them in
//! parallel, each reports every difference it finds, and one is rerun by name
//! (`cargo test --test golden layered_retries`). `.ci/run` checks the same through the binary.

#[path = "shipped/mod.rs"]
mod shipped;

use retrysim::config::Source;
use retrysim::produce;
use retrysim::reproduce;
use retrysim::run::Options;

use shipped::root;

/// Reruns `source` into a scratch folder and compares every file with its committed output.
fn writes_its_committed_output(source: &Source) {
    let scratch = tempfile::tempdir().unwrap();
    let sweep = source.sweep().unwrap_or_else(|e| panic!("{e}"));
    let reference = root().join("out").join(&sweep.base.name);
    // A config with [tune] writes what `retrysim tune` does.
    let staging = match source.tune().unwrap_or_else(|e| panic!("{e}")) {
        Some(spec) => {
            retrysim::tune::into_folder(source, spec, scratch.path(), &Options::default())
                .unwrap()
                .1
        }
        None => {
            let (results, staging) =
                produce::into_staging(source, sweep, scratch.path(), &Options::default(), &mut ())
                    .unwrap();
            assert!(results.complete());
            staging
        }
    };
    let differences = reproduce::folders(&reference, staging.path()).unwrap();
    assert!(
        differences.is_empty(),
        "{}:\n{}",
        source.name,
        differences
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A test per shipped config, by its path under `configs/`, and one that the list is whole.
macro_rules! shipped_configs {
    ($($test:ident => $path:literal,)*) => {
        $(
            #[test]
            fn $test() {
                let path = root().join("configs").join($path);
                writes_its_committed_output(&Source::read(&path).unwrap());
            }
        )*

        /// Every config the repository ships has its test above: a new one cannot be missed.
        #[test]
        fn every_shipped_config_is_listed() {
            let mut listed: Vec<std::path::PathBuf> =
                [$($path),*].iter().map(|p| root().join("configs").join(p)).collect();
            listed.sort();
            let mut shipped: Vec<std::path::PathBuf> = ["configs", "configs/scenarios"]
                .iter()
                .flat_map(|dir| std::fs::read_dir(root().join(dir)).unwrap())
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "toml"))
                .filter(|p| !p.ends_with("configs/closed-forms.toml"))
                .collect();
            shipped.sort();
            assert_eq!(listed, shipped);
        }
    };
}

/// The built-in default experiment, which `out/closed-forms` holds.
#[test]
fn closed_forms() {
    writes_its_committed_output(&Source::builtin());
}

shipped_configs! {
    attempts_curve => "attempts-curve.toml",
    broken_streams => "broken-streams.toml",
    bursty_faults => "bursty-faults.toml",
    calibrated => "calibrated.toml",
    concurrency_limit => "concurrency-limit.toml",
    deadline_propagation => "deadline-propagation.toml",
    duplicate_curve => "duplicate-curve.toml",
    failure_domains => "failure-domains.toml",
    fallback_chain => "fallback-chain.toml",
    fan_out => "fan-out.toml",
    hedging => "hedging.toml",
    incident_recorded => "incident-recorded.toml",
    incident_replay => "incident-replay.toml",
    jitter_contention_sweep => "jitter-contention-sweep.toml",
    jitter_contention => "jitter-contention.toml",
    keys_across_hops => "keys-across-hops.toml",
    layered_retries => "layered-retries.toml",
    loss_grid => "loss-grid.toml",
    lost_reply_1m => "lost-reply-1m.toml",
    lost_reply => "lost-reply.toml",
    metastability_map => "metastability-map.toml",
    model_fallback => "model-fallback.toml",
    rate_limited_provider => "rate-limited-provider.toml",
    real_clients => "real-clients.toml",
    reliability_layer => "reliability-layer.toml",
    replicas => "replicas.toml",
    retry_amplification => "retry-amplification.toml",
    retry_budgets => "retry-budgets.toml",
    retry_storm_ramp => "retry-storm-ramp.toml",
    retry_storm => "retry-storm.toml",
    should_retry => "should-retry.toml",
    thundering_herd => "thundering-herd.toml",
    timeout_percentile => "timeout-percentile.toml",
    token_burn => "token-burn.toml",
    tune_retry => "tune-retry.toml",
    tune_under_bursts => "tune-under-bursts.toml",
    tune_incident => "tune-incident.toml",
    tokens_per_minute => "tokens-per-minute.toml",
    zone_outage => "zone-outage.toml",
    partial_outage => "partial-outage.toml",
    agent_crash => "agent-crash.toml",
    zombie_worker => "zombie-worker.toml",
    lease_vs_timeout => "lease-vs-timeout.toml",
    endpoint_demo => "endpoint-demo.toml",
    endpoint_llm => "endpoint-llm.toml",
    compare_demo => "compare-demo.toml",
    compare_demo_after => "compare-demo-after.toml",
    cooperative_budget => "scenarios/cooperative-budget.toml",
    exactly_one_order => "scenarios/exactly-one-order.toml",
    one_deadline_one_budget => "scenarios/one-deadline-one-budget.toml",
    payload_binding => "scenarios/payload-binding.toml",
    reconciliation => "scenarios/reconciliation.toml",
    reliability_bugs => "scenarios/reliability-bugs.toml",
    time_and_calls => "scenarios/time-and-calls.toml",
}
