//! Config validation: each rule's message names the key and says what is allowed.

use retrysim::config::{Origin, Source};

pub const BASE: &str = r#"name = "c"
[workload]
tasks = 10
[[tool]]
name = "t"
[[policy]]
name = "p"
"#;

/// Validates `BASE` with `from` replaced by `to`, expecting an error.
pub fn error(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    let text = BASE.replace(from, to);
    match (Source {
        name: "c.toml".into(),
        text,
        origin: Origin::Text,
    })
    .sweep()
    .map(|s| s.base)
    {
        Ok(_) => panic!("accepted: {to}"),
        Err(e) => e.to_string(),
    }
}

pub fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} not in\n{message}");
    }
}

#[test]
fn the_base_config_is_valid_and_fills_defaults() {
    let exp = (Source {
        name: "c.toml".into(),
        text: BASE.into(),
        origin: Origin::Text,
    })
    .sweep()
    .map(|s| s.base)
    .unwrap();
    assert_eq!(exp.replications, 1);
    assert_eq!(exp.workload.clients, 100);
    assert_eq!(exp.horizon, retrysim::time::Tick(86_400_000_000));
    assert_eq!(
        exp.policies[0].rule.retry.max_attempts,
        retrysim::policy::Attempts::AtMost(1)
    );
}

#[test]
fn words_outside_their_set_list_the_allowed_ones() {
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nbackoff = { jitter = \"ful\" }\n",
    );
    assert_says(
        &e,
        &[
            "c.toml:8:",
            "policy[0].backoff.jitter",
            "\"ful\"",
            "\"none\", \"full\", \"equal\", \"decorrelated\"",
        ],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nretry_on = [\"reset\", \"timout\"]\n",
    );
    assert_says(
        &e,
        &["policy[0].retry_on[1]", "\"reset\", \"5xx\", \"timeout\""],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nidempotency_key = \"per-intent\"\n",
    );
    assert_says(&e, &["policy[0].idempotency_key", "\"per_intent\""]);
}

#[test]
fn latency_tables_take_their_distributions_keys_only() {
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"constant\", mean = \"1ms\" }\n",
    );
    assert_says(
        &e,
        &["tool[0].service_time.mean", "does not apply", "value"],
    );
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"lognormal\", median = \"1ms\" }\n",
    );
    assert_says(
        &e,
        &["tool[0].service_time", "needs one of `sigma` and `p99`"],
    );
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"lognormal\", median = \"5ms\", p99 = \"2ms\" }\n",
    );
    assert_says(&e, &["tool[0].service_time.p99", "p99 ≥ median"]);
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"gamma\", shape = 0, mean = \"2ms\" }\n",
    );
    assert_says(&e, &["tool[0].service_time.shape", "not a positive number"]);
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"weibull\", shape = 1.5 }\n",
    );
    assert_says(&e, &["tool[0].service_time", "needs `scale`"]);
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"empirical\", file = \"x.csv\" }\n",
    );
    assert_says(&e, &["tool[0].service_time.file", "cannot read files"]);
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"uniform\", min = 5, max = 2 }\n",
    );
    assert_says(&e, &["tool[0].service_time.max", "below min"]);
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"normal\", value = 1 }\n",
    );
    assert_says(&e, &["tool[0].service_time.dist", "\"lognormal\""]);
}

#[test]
fn cross_field_rules_are_placed() {
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nrequest_loss = 0.6\nreply_loss = 0.6\n",
    );
    assert_says(&e, &["tool[0]", "more than 1"]);
    let e = error("tasks = 10\n", "tasks = 10\narrival = \"poisson\"\n");
    assert_says(
        &e,
        &["workload.mean_interarrival", "needs mean_interarrival"],
    );
    let e = error("tasks = 10\n", "tasks = 10\nmean_interarrival = \"1ms\"\n");
    assert_says(&e, &["workload.mean_interarrival", "batch"]);
    let e = error("tasks = 10\n", "tasks = 10\ncalls = [\"x\"]\n");
    assert_says(&e, &["workload.calls[0]", "\"t\""]);
    let e = error("name = \"p\"\n", "name = \"p\"\n[[policy]]\nname = \"p\"\n");
    assert_says(&e, &["policy[1].name", "named twice"]);
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nbackoff = { initial_delay = \"2s\", max_delay = \"1s\" }\n",
    );
    assert_says(&e, &["policy[0].backoff.max_delay", "below initial_delay"]);
    let e = error("name = \"c\"", "name = \"C c\"");
    assert_says(&e, &["c.toml:1:8: name", "cannot be used as a name"]);
}

#[test]
fn layers_take_the_retry_rule_and_are_checked_one_by_one() {
    let two = "layers = [{ name = \"agent\", max_attempts = 2 }, { name = \"sdk\" }]\n";
    let e = error(
        "name = \"p\"\n",
        &format!("name = \"p\"\nmax_attempts = 3\n{two}"),
    );
    assert_says(
        &e,
        &[
            "c.toml:8:16: policy[0].max_attempts",
            "each layer has its own",
        ],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nlayers = [{ name = \"a\" }, { name = \"a\" }]\n",
    );
    assert_says(
        &e,
        &["policy[0].layers[1].name", "a second layer named \"a\""],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nlayers = [{ name = \"a\", max_attempts = 0 }]\n",
    );
    assert_says(&e, &["policy[0].layers[0].max_attempts"]);
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nlayers = [{ name = \"a\", tries = 2 }]\n",
    );
    assert_says(&e, &["tries", "max_attempts"]);
    let e = error("name = \"p\"\n", "name = \"p\"\nreset_each_layer = true\n");
    assert_says(&e, &["policy[0].reset_each_layer", "no layers"]);
    let e = error("name = \"p\"\n", "name = \"p\"\nlayers = []\n");
    assert_says(&e, &["policy[0].layers", "no layers"]);
}

#[test]
fn a_time_series_needs_a_width_that_fits_the_horizon() {
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ncharts = [\"goodput\"]\n",
    );
    assert_says(
        &e,
        &[
            "output.charts",
            "no time series is kept",
            "timeseries = \"1s\"",
        ],
    );
    // The story timeline is drawn from the traces: a config that keeps the time series only is
    // told which chart it meant.
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ntimeseries = \"1s\"\ncharts = [\"timeline\"]\n",
    );
    assert_says(
        &e,
        &[
            "output.charts",
            "intents.csv and attempts.csv",
            "\"goodput\" chart",
            "attempts = true",
        ],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ntimeseries = \"1ms\"\n",
    );
    assert_says(
        &e,
        &[
            "output.timeseries",
            "more than 1000000 bins",
            "at least 86.4ms",
        ],
    );
}

#[test]
fn type_errors_keep_their_place() {
    let e = error("tasks = 10", "tasks = \"ten\"");
    assert_says(&e, &["c.toml:3:9: workload.tasks", "invalid type"]);
    let e = error("name = \"c\"", "name = \"c\"\nseed = -1");
    assert_says(&e, &["c.toml:2:8: seed"]);
    let e = error("[workload]", "[workload]\nunknown = 1");
    assert_says(&e, &["workload.unknown", "unknown field"]);
}

/// A config in a folder of its own, beside a file of measured latencies.
fn with_latencies(
    csv: &str,
    file: &str,
) -> (tempfile::TempDir, Result<retrysim::sweep::Sweep, String>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("configs");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("pilot.csv"), csv).unwrap();
    std::fs::write(tmp.path().join("outside.csv"), csv).unwrap();
    let text = BASE.replace(
        "name = \"t\"\n",
        &format!("name = \"t\"\nservice_time = {{ dist = \"empirical\", file = \"{file}\" }}\n"),
    );
    std::fs::write(dir.join("c.toml"), &text).unwrap();
    let result = Source::read(&dir.join("c.toml"))
        .and_then(|s| s.sweep())
        .map_err(|e| e.to_string());
    (tmp, result)
}

#[test]
fn empirical_latencies_are_read_beside_the_config_and_nowhere_else() {
    let (_tmp, sweep) = with_latencies("latency\n483ms\n470ms\n0.5s\n470000\n", "pilot.csv");
    let sweep = sweep.unwrap();
    let retrysim::model::Latency::Empirical(e) = &sweep.base.tools[0].service_time else {
        panic!("not empirical");
    };
    let ticks: Vec<u64> = e.samples.iter().map(|t| t.0).collect();
    assert_eq!(
        ticks,
        [470_000, 470_000, 483_000, 500_000],
        "sorted, units and ticks alike"
    );

    let (_tmp, outside) = with_latencies("latency\n1ms\n", "../outside.csv");
    assert_says(
        &outside.unwrap_err(),
        &["service_time.file", "outside the config's folder"],
    );
    let (_tmp, missing) = with_latencies("latency\n1ms\n", "nope.csv");
    assert_says(&missing.unwrap_err(), &["service_time.file", "cannot find"]);
    let (_tmp, bad) = with_latencies("latency\n1ms\nsoon\n", "pilot.csv");
    assert_says(&bad.unwrap_err(), &["pilot.csv:3:", "`soon`"]);
    let (_tmp, headless) = with_latencies("ms\n1\n", "pilot.csv");
    assert_says(&headless.unwrap_err(), &["no `latency` column"]);
}

#[test]
fn a_line_needs_workers_and_a_count() {
    let e = error("name = \"t\"\n", "name = \"t\"\nline_limit = 4\n");
    assert_says(
        &e,
        &[
            "tool[0].line_limit",
            "a line forms only in front of a limited number of workers",
            "workers = N",
        ],
    );
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nworkers = 2\nline_limit = 0\n",
    );
    assert_says(
        &e,
        &[
            "tool[0].line_limit",
            "0 is not a number of requests in line",
            "\"unlimited\"",
        ],
    );
    let e = error(
        "name = \"t\"\n",
        "name = \"t\"\nworkers = 2\nline_order = \"random\"\n",
    );
    assert_says(
        &e,
        &[
            "tool[0].line_order",
            "unknown value \"random\"",
            "\"fifo\", \"lifo\"",
        ],
    );
}

/// A sweep's points read a latency file once between them: each is made again, as it runs,
/// from what was read when the sweep was — the same samples even once the file is gone.
#[test]
fn a_sweeps_points_read_a_latency_file_once() {
    let tmp = tempfile::tempdir().unwrap();
    let text = BASE.replace(
        "name = \"t\"\n",
        "name = \"t\"\nservice_time = { dist = \"empirical\", file = \"pilot.csv\" }\n",
    ) + "[sweep]\n[[sweep.axis]]\npath = \"workload.tasks\"\nvalues = [1, 2, 3]\n";
    std::fs::write(tmp.path().join("pilot.csv"), "latency\n7ms\n5ms\n").unwrap();
    std::fs::write(tmp.path().join("c.toml"), &text).unwrap();
    let sweep = Source::read(&tmp.path().join("c.toml"))
        .and_then(|s| s.sweep())
        .unwrap();
    std::fs::remove_file(tmp.path().join("pilot.csv")).unwrap();
    assert_eq!(sweep.len(), 3);
    for i in 0..sweep.len() {
        let point = sweep.point(i);
        let retrysim::model::Latency::Empirical(e) = &point.experiment.tools[0].service_time else {
            panic!("not empirical");
        };
        let ticks: Vec<u64> = e.samples.iter().map(|t| t.0).collect();
        assert_eq!(ticks, [5_000, 7_000], "point {i}");
    }
}
