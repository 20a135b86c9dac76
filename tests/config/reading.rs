//! Config validation: each rule's message names the key and says what is allowed.

use retrysim::config::Source;

const BASE: &str = r#"name = "c"
[workload]
tasks = 10
[[tool]]
name = "t"
[[policy]]
name = "p"
"#;

/// Validates `BASE` with `from` replaced by `to`, expecting an error.
fn error(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from}");
    let text = BASE.replace(from, to);
    match (Source {
        name: "c.toml".into(),
        text,
        dir: None,
    })
    .sweep()
    .map(|s| s.base)
    {
        Ok(_) => panic!("accepted: {to}"),
        Err(e) => e.to_string(),
    }
}

fn assert_says(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{part:?} not in\n{message}");
    }
}

#[test]
fn the_base_config_is_valid_and_fills_defaults() {
    let exp = (Source {
        name: "c.toml".into(),
        text: BASE.into(),
        dir: None,
    })
    .sweep()
    .map(|s| s.base)
    .unwrap();
    assert_eq!(exp.replications, 1);
    assert_eq!(exp.workload.clients, 100);
    assert_eq!(exp.horizon, retrysim::time::Tick(86_400_000_000));
    assert_eq!(
        exp.policies[0].retry.max_attempts,
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
fn a_timeline_needs_a_width_that_fits_the_horizon() {
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ncharts = [\"calls-over-time\"]\n",
    );
    assert_says(
        &e,
        &["output.charts", "no timeline is kept", "timeline = \"1s\""],
    );
    // The story timeline is drawn from the traces: a config that keeps the old calls-over-time
    // table only is told which chart it meant.
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ntimeline = \"1s\"\ncharts = [\"timeline\"]\n",
    );
    assert_says(
        &e,
        &[
            "output.charts",
            "intents.csv and attempts.csv",
            "calls-over-time",
            "attempts = true",
        ],
    );
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\n[output]\ntimeline = \"1us\"\n",
    );
    assert_says(
        &e,
        &[
            "output.timeline",
            "more than 10000000 stretches",
            "at least 8.64ms",
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

/// The sweep `BASE` plus `sweep` expands to, or its error.
fn sweep(sweep: &str) -> Result<retrysim::sweep::Sweep, String> {
    Source {
        name: "c.toml".into(),
        text: format!("{BASE}[[tool]]\nname = \"u\"\n{sweep}"),
        dir: None,
    }
    .sweep()
    .map_err(|e| e.to_string())
}

/// Each point's parameters, as the CSV would show them.
fn params(s: &retrysim::sweep::Sweep) -> Vec<Vec<String>> {
    s.points
        .iter()
        .map(|p| p.params.iter().map(ToString::to_string).collect())
        .collect()
}

#[test]
fn a_grid_crosses_axes_with_the_last_varying_fastest() {
    let s = sweep(
        "[sweep]\n\
         [[sweep.axis]]\npath = \"tool.t.reply_loss\"\nvalues = [0.1, 0.2]\n\
         [[sweep.axis]]\npath = \"workload.clients\"\nvalues = [1, 5, 9]\n",
    )
    .unwrap();
    let want: Vec<Vec<&str>> = vec![
        vec!["0.1", "1"],
        vec!["0.1", "5"],
        vec!["0.1", "9"],
        vec!["0.2", "1"],
        vec!["0.2", "5"],
        vec!["0.2", "9"],
    ];
    assert_eq!(params(&s), want);
    let p = &s.points[4].experiment;
    assert_eq!(p.tools[0].faults.reply_loss, 0.2);
    assert_eq!(p.tools[1].faults.reply_loss, 0.0, "only the named tool");
    assert_eq!(p.workload.clients, 5);
    assert_eq!(
        s.base.workload.clients, 100,
        "the base is the config as written"
    );
}

#[test]
fn zipped_axes_pair_their_values_and_must_be_as_long() {
    let axes = "[[sweep.axis]]\npath = \"tool.request_loss\"\nvalues = [0.1, 0.2]\n\
                [[sweep.axis]]\npath = \"tool.reply_loss\"\nvalues = [0.3, 0.4]\n";
    let s = sweep(&format!("[sweep]\nmode = \"zip\"\n{axes}")).unwrap();
    assert_eq!(params(&s), vec![vec!["0.1", "0.3"], vec!["0.2", "0.4"]]);
    // Without a tool name the key is set on every tool.
    for t in &s.points[1].experiment.tools {
        assert_eq!((t.faults.request_loss, t.faults.reply_loss), (0.2, 0.4));
    }
    let e = sweep(&format!(
        "[sweep]\nmode = \"zip\"\n{}",
        axes.replace("[0.3, 0.4]", "[0.3]")
    ))
    .unwrap_err();
    assert_says(&e, &["sweep.axis[1]", "as many values", "has 2", "has 1"]);
}

#[test]
fn ranges_give_clean_decimals_durations_and_integers() {
    let range = |path: &str, start: &str, stop: &str, step: &str| {
        sweep(&format!(
            "[sweep]\n[[sweep.axis]]\npath = \"{path}\"\nstart = {start}\nstop = {stop}\nstep = {step}\n"
        ))
        .map(|s| params(&s).into_iter().map(|p| p[0].clone()).collect::<Vec<_>>())
    };
    assert_eq!(
        range("tool.t.reply_loss", "0.0", "0.5", "0.1").unwrap(),
        ["0", "0.1", "0.2", "0.3", "0.4", "0.5"]
    );
    assert_eq!(
        range("workload.tasks", "10", "40", "15").unwrap(),
        ["10", "25", "40"]
    );
    assert_eq!(
        range("horizon", "\"500ms\"", "\"2s\"", "\"500ms\"").unwrap(),
        ["500ms", "1s", "1.5s", "2s"]
    );
    let e = range("horizon", "\"1s\"", "2", "\"1s\"").unwrap_err();
    assert_says(&e, &["sweep.axis[0].stop", "one kind"]);
    let e = range("workload.tasks", "10", "5", "1").unwrap_err();
    assert_says(&e, &["sweep.axis[0].stop", "below start"]);
    let e = range("workload.tasks", "1", "5", "0").unwrap_err();
    assert_says(&e, &["sweep.axis[0].step", "more than 0"]);
}

#[test]
fn a_path_may_add_a_key_or_table_the_config_left_out() {
    let s = sweep(
        "[sweep]\n[[sweep.axis]]\npath = \"policy.p.backoff.initial_delay\"\nvalues = [\"1ms\", \"2ms\"]\n",
    )
    .unwrap();
    assert_eq!(
        s.points[1].experiment.policies[0].backoff.initial_delay,
        retrysim::time::Tick(2_000)
    );
}

#[test]
fn bad_sweeps_point_at_the_path_or_value_at_fault() {
    let axis = |body: &str| sweep(&format!("[sweep]\n[[sweep.axis]]\n{body}\n")).unwrap_err();
    let e = axis("path = \"tool.t.reply_los\"\nvalues = [0.1]");
    assert_says(
        &e,
        &[
            "c.toml:12:8: sweep.axis[0].path",
            "unknown field `reply_los`",
            "reply_loss",
        ],
    );
    let e = axis("path = \"tool.t.reply_loss\"\nvalues = [0.1, 1.5]");
    assert_says(
        &e,
        &[
            "c.toml:13:16: sweep.axis[0]",
            "at tool.t.reply_loss = 1.5",
            "not a probability",
            "allowed: a number from 0 to 1",
        ],
    );
    let e = axis("path = \"workload.tasks\"\nvalues = [5, \"many\"]");
    assert_says(
        &e,
        &[
            "c.toml:13:14: sweep.axis[0]",
            "workload.tasks",
            "invalid type",
        ],
    );
    let e = axis("path = \"workload.tasks\"\nvalues = []");
    assert_says(&e, &["sweep.axis[0].values", "no points"]);
    let e = axis("path = \"seed\"\nvalues = [1, 2]");
    assert_says(&e, &["sweep.axis[0].path", "whole experiment"]);
    let e = axis("path = \"tool.t\"\nvalues = [1]");
    assert_says(&e, &["sweep.axis[0].path", "names a tool"]);
    let e = axis("path = \"workload.tasks\"");
    assert_says(&e, &["sweep.axis[0]", "has no values"]);
    let e = sweep("[sweep]\naxis = []\n").unwrap_err();
    assert_says(&e, &["sweep.axis", "no axis"]);
    let e = sweep(
        "[sweep]\nmode = \"cross\"\n[[sweep.axis]]\npath = \"workload.tasks\"\nvalues = [1]\n",
    )
    .unwrap_err();
    assert_says(&e, &["sweep.mode", "\"grid\", \"zip\""]);
    let e = sweep("[output]\ncharts = [\"grid\"]\n").unwrap_err();
    assert_says(
        &e,
        &["output.charts", "needs a sweep of 2 axes", "comparison"],
    );
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
