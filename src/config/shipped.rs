//! The shipped experiments, compiled into the binary as the default one is, so `retrysim serve`
//! offers every one of them from any folder. A test holds this list to `configs/`.

/// Every shipped config: its path in the repository and its text.
pub const SHIPPED: &[(&str, &str)] = &[
    (
        "configs/agent-crash.toml",
        include_str!("../../configs/agent-crash.toml"),
    ),
    (
        "configs/attempts-curve.toml",
        include_str!("../../configs/attempts-curve.toml"),
    ),
    (
        "configs/broken-streams.toml",
        include_str!("../../configs/broken-streams.toml"),
    ),
    (
        "configs/bursty-faults.toml",
        include_str!("../../configs/bursty-faults.toml"),
    ),
    (
        "configs/calibrated.toml",
        include_str!("../../configs/calibrated.toml"),
    ),
    (
        "configs/closed-forms.toml",
        include_str!("../../configs/closed-forms.toml"),
    ),
    (
        "configs/compare-demo-after.toml",
        include_str!("../../configs/compare-demo-after.toml"),
    ),
    (
        "configs/compare-demo.toml",
        include_str!("../../configs/compare-demo.toml"),
    ),
    (
        "configs/concurrency-limit.toml",
        include_str!("../../configs/concurrency-limit.toml"),
    ),
    (
        "configs/deadline-propagation.toml",
        include_str!("../../configs/deadline-propagation.toml"),
    ),
    (
        "configs/duplicate-curve.toml",
        include_str!("../../configs/duplicate-curve.toml"),
    ),
    (
        "configs/endpoint-demo.toml",
        include_str!("../../configs/endpoint-demo.toml"),
    ),
    (
        "configs/endpoint-llm.toml",
        include_str!("../../configs/endpoint-llm.toml"),
    ),
    (
        "configs/failure-domains.toml",
        include_str!("../../configs/failure-domains.toml"),
    ),
    (
        "configs/fallback-chain.toml",
        include_str!("../../configs/fallback-chain.toml"),
    ),
    (
        "configs/fan-out.toml",
        include_str!("../../configs/fan-out.toml"),
    ),
    (
        "configs/hedging.toml",
        include_str!("../../configs/hedging.toml"),
    ),
    (
        "configs/incident-recorded.toml",
        include_str!("../../configs/incident-recorded.toml"),
    ),
    (
        "configs/incident-replay.toml",
        include_str!("../../configs/incident-replay.toml"),
    ),
    (
        "configs/jitter-contention-sweep.toml",
        include_str!("../../configs/jitter-contention-sweep.toml"),
    ),
    (
        "configs/jitter-contention.toml",
        include_str!("../../configs/jitter-contention.toml"),
    ),
    (
        "configs/keys-across-hops.toml",
        include_str!("../../configs/keys-across-hops.toml"),
    ),
    (
        "configs/layered-retries.toml",
        include_str!("../../configs/layered-retries.toml"),
    ),
    (
        "configs/lease-vs-timeout.toml",
        include_str!("../../configs/lease-vs-timeout.toml"),
    ),
    (
        "configs/loss-grid.toml",
        include_str!("../../configs/loss-grid.toml"),
    ),
    (
        "configs/lost-reply-1m.toml",
        include_str!("../../configs/lost-reply-1m.toml"),
    ),
    (
        "configs/lost-reply.toml",
        include_str!("../../configs/lost-reply.toml"),
    ),
    (
        "configs/metastability-map.toml",
        include_str!("../../configs/metastability-map.toml"),
    ),
    (
        "configs/model-fallback.toml",
        include_str!("../../configs/model-fallback.toml"),
    ),
    (
        "configs/partial-outage.toml",
        include_str!("../../configs/partial-outage.toml"),
    ),
    (
        "configs/rate-limited-provider.toml",
        include_str!("../../configs/rate-limited-provider.toml"),
    ),
    (
        "configs/real-clients.toml",
        include_str!("../../configs/real-clients.toml"),
    ),
    (
        "configs/reliability-layer.toml",
        include_str!("../../configs/reliability-layer.toml"),
    ),
    (
        "configs/replicas.toml",
        include_str!("../../configs/replicas.toml"),
    ),
    (
        "configs/retry-amplification.toml",
        include_str!("../../configs/retry-amplification.toml"),
    ),
    (
        "configs/retry-budgets.toml",
        include_str!("../../configs/retry-budgets.toml"),
    ),
    (
        "configs/retry-storm-ramp.toml",
        include_str!("../../configs/retry-storm-ramp.toml"),
    ),
    (
        "configs/retry-storm.toml",
        include_str!("../../configs/retry-storm.toml"),
    ),
    (
        "configs/scenarios/cooperative-budget.toml",
        include_str!("../../configs/scenarios/cooperative-budget.toml"),
    ),
    (
        "configs/scenarios/exactly-one-order.toml",
        include_str!("../../configs/scenarios/exactly-one-order.toml"),
    ),
    (
        "configs/scenarios/one-deadline-one-budget.toml",
        include_str!("../../configs/scenarios/one-deadline-one-budget.toml"),
    ),
    (
        "configs/scenarios/payload-binding.toml",
        include_str!("../../configs/scenarios/payload-binding.toml"),
    ),
    (
        "configs/scenarios/reconciliation.toml",
        include_str!("../../configs/scenarios/reconciliation.toml"),
    ),
    (
        "configs/scenarios/reliability-bugs.toml",
        include_str!("../../configs/scenarios/reliability-bugs.toml"),
    ),
    (
        "configs/scenarios/time-and-calls.toml",
        include_str!("../../configs/scenarios/time-and-calls.toml"),
    ),
    (
        "configs/should-retry.toml",
        include_str!("../../configs/should-retry.toml"),
    ),
    (
        "configs/thundering-herd.toml",
        include_str!("../../configs/thundering-herd.toml"),
    ),
    (
        "configs/timeout-percentile.toml",
        include_str!("../../configs/timeout-percentile.toml"),
    ),
    (
        "configs/token-burn.toml",
        include_str!("../../configs/token-burn.toml"),
    ),
    (
        "configs/tokens-per-minute.toml",
        include_str!("../../configs/tokens-per-minute.toml"),
    ),
    (
        "configs/tune-incident.toml",
        include_str!("../../configs/tune-incident.toml"),
    ),
    (
        "configs/tune-retry.toml",
        include_str!("../../configs/tune-retry.toml"),
    ),
    (
        "configs/tune-under-bursts.toml",
        include_str!("../../configs/tune-under-bursts.toml"),
    ),
    (
        "configs/zombie-worker.toml",
        include_str!("../../configs/zombie-worker.toml"),
    ),
    (
        "configs/zone-outage.toml",
        include_str!("../../configs/zone-outage.toml"),
    ),
];

/// The latency files shipped configs name, by their path in the repository, so a served copy of
/// `configs/` can be laid out anywhere and its configs read them as they would in the repository.
pub const SHIPPED_DATA: &[(&str, &str)] = &[
    (
        "configs/data/calibrated/get-v1-search.csv",
        include_str!("../../configs/data/calibrated/get-v1-search.csv"),
    ),
    (
        "configs/data/calibrated/post-v1-charges.csv",
        include_str!("../../configs/data/calibrated/post-v1-charges.csv"),
    ),
    (
        "configs/data/incident-recorded/arrivals.csv",
        include_str!("../../configs/data/incident-recorded/arrivals.csv"),
    ),
    (
        "configs/data/incident-recorded/get-v1-search-health.csv",
        include_str!("../../configs/data/incident-recorded/get-v1-search-health.csv"),
    ),
    (
        "configs/data/incident-recorded/get-v1-search.csv",
        include_str!("../../configs/data/incident-recorded/get-v1-search.csv"),
    ),
    (
        "configs/data/pilot-latencies.csv",
        include_str!("../../configs/data/pilot-latencies.csv"),
    ),
];

#[cfg(test)]
mod tests {
    use super::{SHIPPED, SHIPPED_DATA};

    /// A config added to `configs/` is offered by `retrysim serve` only once it is listed here.
    #[test]
    fn every_shipped_config_is_compiled_in() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut on_disk = Vec::new();
        for dir in ["configs", "configs/scenarios"] {
            for entry in std::fs::read_dir(root.join(dir)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                if name.ends_with(".toml") {
                    on_disk.push(format!("{dir}/{name}"));
                }
            }
        }
        on_disk.sort();
        let listed: Vec<&str> = SHIPPED.iter().map(|(path, _)| *path).collect();
        assert_eq!(listed, on_disk);
        for (path, text) in SHIPPED.iter().chain(SHIPPED_DATA) {
            assert_eq!(
                *text,
                std::fs::read_to_string(root.join(path)).unwrap(),
                "{path}"
            );
        }
        // Every latency file a shipped config names is compiled in beside it.
        for (path, text) in SHIPPED {
            let dir = std::path::Path::new(path).parent().unwrap();
            for named in text.split("file = \"").skip(1) {
                let file = dir.join(named.split('"').next().unwrap());
                let file = file.to_str().unwrap();
                assert!(
                    SHIPPED_DATA.iter().any(|(p, _)| *p == file),
                    "{path} names {file}"
                );
            }
        }
    }
}
