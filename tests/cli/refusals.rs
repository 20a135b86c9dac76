//! A catalogue of bad input, each case through the binary: configs, command-line arguments,
//! latency CSVs and output folders. Every case must exit with its code, say where the problem
//! is, print no panic, write nothing to stdout and leave no output behind.

use crate::binary;

use std::fs;
use std::path::Path;

use binary::{files, retrysim, text};

/// A valid config, which each config case breaks in one place.
pub const GOOD: &str = r#"name = "good"
seed = 1

[workload]
tasks = 10

[[tool]]
name = "charge"
request_loss = 0.1
reply_loss = 0.2
service_time = { dist = "constant", value = "1ms" }

[[policy]]
name = "p"
max_attempts = 3
"#;

/// A config with an empirical service time read from `lat.csv`.
const EMPIRICAL: &str = r#"name = "good"
[workload]
tasks = 10
[[tool]]
name = "charge"
service_time = { dist = "empirical", file = "lat.csv" }
[[policy]]
name = "p"
"#;

/// One bad input: the files to write (`c.toml` and any other), the arguments, the exit code,
/// and what the message must say.
pub struct Case {
    pub name: &'static str,
    pub files: Vec<(&'static str, Vec<u8>)>,
    pub args: Vec<String>,
    pub code: i32,
    pub says: Vec<&'static str>,
}

fn config_case(name: &'static str, text: String, says: &[&'static str]) -> Case {
    Case {
        name,
        files: vec![("c.toml", text.into_bytes())],
        args: vec!["run".into(), "c.toml".into()],
        code: 2,
        says: says.to_vec(),
    }
}

/// `GOOD` with `from` replaced by `to`, which must be in it.
fn good_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

fn with_policy(extra: &str) -> String {
    good_with(
        "max_attempts = 3\n",
        &format!("max_attempts = 3\n{extra}\n"),
    )
}

fn config_cases() -> Vec<Case> {
    [
        tool_cases(),
        key_cases(),
        keyed_cases(),
        crash_cases(),
        policy_cases(),
        sweep_and_file_cases(),
        latency_file_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Workers that crash: a rate or a scripted point, times above 0, one call held at a time.
fn crash_cases() -> Vec<Case> {
    let crashing = |crash: &str| good_with("tasks = 10", &format!("tasks = 10\ncrash = {crash}"));
    vec![
        config_case(
            "workers that crash neither at a rate nor at a point",
            crashing("{ lease = \"1s\" }"),
            &[
                "workload.crash",
                "`mean_uptime = \"60s\"`",
                "`renewed = false`",
            ],
        ),
        config_case(
            "a lease of 0",
            crashing("{ mean_uptime = \"10s\", lease = \"0s\" }"),
            &["workload.crash.lease", "a duration above 0"],
        ),
        config_case(
            "a mean uptime of 0",
            crashing("{ mean_uptime = \"0s\", lease = \"1s\" }"),
            &["workload.crash.mean_uptime", "crashes every worker at once"],
        ),
        config_case(
            "crashing workers beside calls in stages",
            good_with(
                "tasks = 10",
                "tasks = 10\ncalls = [[\"charge\", \"charge\"]]\n\
                 crash = { mean_uptime = \"10s\", lease = \"1s\" }",
            ),
            &["workload.crash", "calls in stages", "one after another"],
        ),
        config_case(
            "a stall within the lease",
            crashing("{ at = \"10ms\", lease = \"2s\", stall = \"1s\" }"),
            &["workload.crash.stall", "a stall longer than the lease"],
        ),
        config_case(
            "an unknown durability",
            with_policy("durability = \"intent-log\""),
            &["policy[0].durability", "intent_log"],
        ),
        config_case(
            "durability none beside tasks of several calls",
            with_policy("durability = \"none\"").replacen(
                "tasks = 10",
                "tasks = 10\ncalls = [\"charge\", \"charge\"]\n\
                 crash = { mean_uptime = \"10s\", lease = \"1s\" }",
                1,
            ),
            &["policy[0].durability", "2 calls", "\"checkpoint\""],
        ),
        config_case(
            "a crash in a schedule where no worker crashes at a rate",
            good_with(
                "seed = 1\n",
                "seed = 1\nschedule = [\"ok\", \"crash_in_flight\"]\n",
            ),
            &["schedule[1]", "no crash point", "mean_uptime"],
        ),
        config_case(
            "no deliveries of a work item",
            crashing("{ mean_uptime = \"10s\", lease = \"1s\", max_deliveries = 0 }"),
            &["workload.crash.max_deliveries", "1 or more"],
        ),
        config_case(
            "deliveries past the bound",
            crashing("{ mean_uptime = \"10s\", lease = \"1s\", max_deliveries = 5000 }"),
            &["workload.crash.max_deliveries", "1 to 1000"],
        ),
        config_case(
            "the admission rule under renewed leases",
            with_policy("timeout = \"100ms\"\nadmit_within_lease = true").replacen(
                "tasks = 10",
                "tasks = 10\ncrash = { mean_uptime = \"10s\", lease = \"1s\" }",
                1,
            ),
            &["policy[0].admit_within_lease", "renewed = false"],
        ),
        config_case(
            "the admission rule without a timeout",
            with_policy("admit_within_lease = true").replacen(
                "tasks = 10",
                "tasks = 10\ncrash = { lease = \"1s\", renewed = false }",
                1,
            ),
            &["policy[0].timeout", "no timeout", "shorter than the lease"],
        ),
        config_case(
            "the admission rule with a timeout of the whole term",
            with_policy("timeout = \"1s\"\nadmit_within_lease = true").replacen(
                "tasks = 10",
                "tasks = 10\ncrash = { lease = \"1s\", renewed = false }",
                1,
            ),
            &["policy[0].timeout", "no send is ever admitted"],
        ),
    ]
}

/// A keyed balancer and the gates per shard it allows: nothing that routes around a shard.
fn keyed_cases() -> Vec<Case> {
    vec![
        config_case(
            "a retry on another replica beside a keyed balancer",
            with_policy("balancer = \"by_key\"\nretry_host = \"other\""),
            &[
                "policy[0].retry_host",
                "a key lives on one shard",
                "\"same\"",
            ],
        ),
        config_case(
            "outlier ejection beside a keyed balancer",
            with_policy("balancer = \"by_key\"\noutlier_detection = { consecutive_5xx = 5 }"),
            &["policy[0].outlier_detection", "scope = \"shard\""],
        ),
        config_case(
            "gates per shard without a keyed balancer",
            with_policy("scope = \"shard\"\nbreaker = { consecutive_failures = 5 }"),
            &["policy[0].scope", "balancer = \"by_key\" beside it"],
        ),
    ]
}

/// A tool's faults, replicas and bursts.
fn tool_cases() -> Vec<Case> {
    let cases = vec![
        config_case(
            "a probability above 1",
            good_with("reply_loss = 0.2", "reply_loss = 1.5"),
            &["c.toml:10:14: tool[0].reply_loss", "not a probability"],
        ),
        config_case(
            "probabilities over 1 together",
            good_with("reply_loss = 0.2", "reply_loss = 0.95"),
            &["c.toml:", "tool[0]", "at most 1"],
        ),
        config_case(
            "no replicas",
            good_with("reply_loss = 0.2", "reply_loss = 0.2\nreplicas = 0"),
            &["tool[0].replicas", "0 replicas serve no call", "1 or more"],
        ),
        config_case(
            "a replica past the last",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nreplicas = 3\nreplica = [{ index = 3, server_error = 0.5 }]",
            ),
            &["tool[0].replica[0].index", "replica 3 of 3", "index 0 to 2"],
        ),
        config_case(
            "a replica named twice",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nreplicas = 3\nreplica = [{ index = 1 }, { index = 1 }]",
            ),
            &["tool[0].replica[1].index", "a second entry for replica 1"],
        ),
        config_case(
            "a replica whose faults add up past 1",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nreplicas = 2\nreplica = [{ index = 0, server_error = 0.9 }]",
            ),
            &["tool[0].replica[0]", "more than 1"],
        ),
        config_case(
            "a burst whose bad state's faults add up past 1",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nburst = { good = \"9s\", bad = \"1s\", in_bad = { server_error = 0.9 } }",
            ),
            &[
                "tool[0].burst.in_bad",
                "the bad state's fault probabilities add up to",
            ],
        ),
        config_case(
            "a burst with a bad spell of 0",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nburst = { good = \"9s\", bad = \"0s\" }",
            ),
            &["tool[0].burst.bad", "a spell of 0 never happens"],
        ),
        config_case(
            "two tools of one failure domain with different spells",
            good_with(
                "reply_loss = 0.2\n",
                "reply_loss = 0.2\nburst = { good = \"9s\", bad = \"1s\", domain = \"db\" }\n\
                 [[tool]]\nname = \"refund\"\n\
                 burst = { good = \"9s\", bad = \"2s\", domain = \"db\" }\n",
            ),
            &[
                "tool[1].burst",
                "the failure domain \"db\" has spells of good = 9s, bad = 1s in tool `charge`",
                "good = \"9s\", bad = \"1s\" here too",
            ],
        ),
        config_case(
            "spells per replica at a tool with one server",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nburst = { good = \"9s\", bad = \"1s\", per_replica = true }",
            ),
            &["tool[0].burst.per_replica", "`replicas = N` (N ≥ 2)"],
        ),
        config_case(
            "two tools of one failure domain, one with spells per replica",
            good_with(
                "reply_loss = 0.2\n",
                "reply_loss = 0.2\nreplicas = 2\n\
                 burst = { good = \"9s\", bad = \"1s\", domain = \"db\", per_replica = true }\n\
                 [[tool]]\nname = \"refund\"\n\
                 burst = { good = \"9s\", bad = \"1s\", domain = \"db\" }\n",
            ),
            &[
                "tool[1].burst",
                "spells per replica in tool `charge`",
                "per_replica = true here too",
            ],
        ),
    ];
    cases
}

/// Unknown keys and values: durations, counts and names.
fn key_cases() -> Vec<Case> {
    let long_name = format!("name = \"{}\"", "x".repeat(101));
    let cases = vec![
        config_case(
            "an unknown balancer",
            with_policy("balancer = \"least_outstandng\""),
            &["policy[0].balancer", "least_outstanding"],
        ),
        config_case(
            "a peak EWMA decay beside another balancer",
            with_policy("balancer = \"random\"\npeak_ewma_decay = \"5s\""),
            &[
                "policy[0].peak_ewma_decay",
                "balancer = \"peak_ewma\" beside it",
            ],
        ),
        config_case(
            "a peak EWMA decay of 0",
            with_policy("balancer = \"peak_ewma\"\npeak_ewma_decay = \"0s\""),
            &["policy[0].peak_ewma_decay", "keeps no average"],
        ),
        config_case(
            "an unknown top-level key",
            good_with("seed = 1", "seed = 1\nsede = 2"),
            &["c.toml:3:1: sede", "unknown field `sede`"],
        ),
        config_case(
            "an unknown tool key",
            good_with("reply_loss = 0.2", "reply_los = 0.2"),
            &["c.toml:10:1: tool[0].reply_los", "unknown field"],
        ),
        config_case(
            "an unknown policy key",
            with_policy("retries = 2"),
            &["c.toml:16:1: policy[0].retries", "unknown field"],
        ),
        config_case(
            "a negative duration",
            good_with("value = \"1ms\"", "value = \"-5ms\""),
            &["c.toml:11:", "service_time.value", "negative"],
        ),
        config_case(
            "a duration finer than a tick",
            good_with("value = \"1ms\"", "value = \"0.5us\""),
            &["c.toml:11:", "service_time.value"],
        ),
        config_case(
            "a duration without a known unit",
            good_with("value = \"1ms\"", "value = \"1 fortnight\""),
            &["c.toml:11:", "service_time.value"],
        ),
        config_case(
            "zero attempts",
            good_with("max_attempts = 3", "max_attempts = 0"),
            &["c.toml:15:16: policy[0].max_attempts"],
        ),
        config_case(
            "zero tasks",
            good_with("tasks = 10", "tasks = 0"),
            &["c.toml:5:9: workload.tasks", "0 tasks"],
        ),
        config_case(
            "zero replications",
            good_with("seed = 1", "seed = 1\nreplications = 0"),
            &["c.toml:3:16: replications"],
        ),
        config_case(
            "a zero horizon",
            good_with("seed = 1", "seed = 1\nhorizon = 0"),
            &["c.toml:3:11: horizon", "runs nothing"],
        ),
        config_case(
            "a name with capitals",
            good_with("name = \"good\"", "name = \"Good\""),
            &["c.toml:1:8: name", "cannot be used as a name"],
        ),
        config_case(
            "a name too long for a folder",
            good_with("name = \"good\"", &long_name),
            &["c.toml:1:8: name", "too long", "at most 100"],
        ),
        config_case(
            "a tool named twice",
            good_with("[[policy]]", "[[tool]]\nname = \"charge\"\n\n[[policy]]"),
            &["c.toml:14:8: tool[1].name", "named twice"],
        ),
        config_case(
            "a call to no tool",
            good_with("tasks = 10", "tasks = 10\ncalls = [\"refund\"]"),
            &["c.toml:6:", "workload.calls", "refund"],
        ),
    ];
    cases
}

/// A policy's rules, and those that hold across keys.
fn policy_cases() -> Vec<Case> {
    let cases = vec![
        config_case(
            "a percentile timeout on random legs",
            good_with(
                "reply_loss = 0.2",
                "reply_loss = 0.2\nrequest_latency = { dist = \"exponential\", mean = \"1ms\" }",
            )
            .replace("max_attempts = 3", "max_attempts = 3\ntimeout = \"p90\""),
            &["policy[0].timeout", "constant request and reply"],
        ),
        config_case(
            "a multiple of a maximum that does not exist",
            good_with(
                "dist = \"constant\", value = \"1ms\"",
                "dist = \"exponential\", mean = \"1ms\"",
            )
            .replace("max_attempts = 3", "max_attempts = 3\ntimeout = \"2x max\""),
            &["policy[0].timeout", "no maximum"],
        ),
        config_case(
            "a hedge on a write without a key",
            with_policy("hedge_delay = \"5ms\""),
            &[
                "c.toml:16:15: policy[0].hedge_delay",
                "not safe to send twice",
            ],
        ),
        config_case(
            "a lookup without a key",
            with_policy("lookup_before_retry = true"),
            &["policy[0].lookup_before_retry", "no stable one"],
        ),
        config_case(
            "admission without a deadline",
            with_policy(
                "admission = { reserve = \"1s\", min_attempt = \"1s\", timeout_cap = \"1s\" }",
            ),
            &["c.toml:16:13: policy[0].admission", "deadline"],
        ),
        config_case(
            "layers beside max_attempts",
            with_policy("layers = [{ name = \"a\", max_attempts = 2 }]"),
            &["policy[0]", "max_attempts"],
        ),
        config_case(
            "endless retries",
            good_with("request_loss = 0.1", "request_loss = 0.8")
                .replace("max_attempts = 3", "max_attempts = \"unlimited\""),
            &["c.toml:15:16: policy[0].max_attempts", "never end"],
        ),
        config_case(
            "an unknown retry budget",
            with_policy("retry_budget = { kind = \"leaky\" }"),
            &["policy[0].retry_budget.kind", "unknown value \"leaky\""],
        ),
        config_case(
            "a breaker rate above 1",
            with_policy("breaker = { failure_rate = 2.0 }"),
            &["policy[0].breaker.failure_rate"],
        ),
        config_case(
            "a backoff that shrinks",
            with_policy("backoff = { multiplier = 0.5 }"),
            &["policy[0].backoff.multiplier"],
        ),
        config_case(
            "an unknown timeout tie",
            with_policy("timeout_tie = \"early\""),
            &[
                "c.toml:16:15: policy[0].timeout_tie",
                "\"late\", \"in_time\"",
            ],
        ),
    ];
    cases
}

/// Sweeps, charts, TOML itself and the file read.
fn sweep_and_file_cases() -> Vec<Case> {
    // "café" in Latin-1, in a comment on line 14.
    let at = GOOD.find("name = \"p\"").unwrap() + "name = \"p\"".len();
    let latin = [
        &GOOD.as_bytes()[..at],
        b" # caf\xE9",
        &GOOD.as_bytes()[at..],
    ]
    .concat();
    let mut big = GOOD.to_string();
    big.push_str(&format!("# {}\n", "x".repeat(1024 * 1024)));
    let long_line = good_with("seed = 1", &format!("seed = {}x", "1".repeat(200_000)));
    let cases = vec![
        config_case(
            "a sweep over an unknown key",
            format!(
                "{GOOD}[sweep]\n[[sweep.axis]]\npath = \"tool.charge.reply_lost\"\nvalues = [0.1]\n"
            ),
            &["c.toml:", "sweep.axis[0]", "reply_lost"],
        ),
        config_case(
            "a swept value out of range",
            format!(
                "{GOOD}[sweep]\n[[sweep.axis]]\npath = \"tool.charge.reply_loss\"\nvalues = [0.1, 1.5]\n"
            ),
            &[
                "c.toml:19:16: sweep.axis[0]",
                "at tool.charge.reply_loss = 1.5",
                "not a probability",
            ],
        ),
        config_case(
            "a grid chart for one axis",
            format!(
                "{GOOD}[output]\ncharts = [\"grid\"]\n[sweep]\n[[sweep.axis]]\npath = \"tool.charge.reply_loss\"\nvalues = [0.1]\n"
            ),
            &["c.toml:17:11: output.charts", "needs a sweep of 2 axes"],
        ),
        config_case(
            "a timeline for a sweep",
            format!(
                "{GOOD}[output]\ncharts = [\"timeline\"]\ntimeseries = \"1s\"\n[sweep]\n[[sweep.axis]]\npath = \"tool.charge.reply_loss\"\nvalues = [0.1]\n"
            ),
            &["c.toml:17:11: output.charts", "timeline"],
        ),
        config_case(
            "an unknown chart",
            format!("{GOOD}[output]\ncharts = [\"pie\"]\n"),
            &["c.toml:17:11: output.charts[0]", "unknown value \"pie\""],
        ),
        config_case(
            "a type error",
            good_with("tasks = 10", "tasks = \"ten\""),
            &["c.toml:5:9: workload.tasks", "invalid type"],
        ),
        config_case(
            "a syntax error",
            good_with("[workload]", "[workload"),
            &["c.toml:4:10:", "unclosed table"],
        ),
        config_case(
            "a missing required key",
            good_with("tasks = 10", "clients = 3"),
            &[
                "c.toml:4:1: workload.tasks",
                "neither how many tasks",
                "tasks = N",
            ],
        ),
        Case {
            name: "a Latin-1 byte",
            files: vec![("c.toml", latin)],
            args: vec!["run".into(), "c.toml".into()],
            code: 2,
            says: vec!["c.toml:14:17:", "byte 0xE9 is not UTF-8", "^"],
        },
        config_case(
            "a file over 1 MiB",
            big,
            &["c.toml: cannot read the config", "larger than 1024 KiB"],
        ),
        config_case(
            "a 200 000-character line",
            long_line,
            &["c.toml:2:8:", "…", "^"],
        ),
    ];
    cases
}

/// A latency file that is not one: a bad cell, a wrong column, a negative delay, missing, or
/// outside the config's folder.
fn latency_file_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    // Latency CSVs beside the config.
    for (name, csv, says) in [
        (
            "a latency that is not a duration",
            "latency\n1ms\nabc\n",
            vec!["lat.csv:3", "abc"],
        ),
        (
            "a latency file without its column",
            "delay\n1ms\n",
            vec!["lat.csv", "latency"],
        ),
        ("an empty latency file", "latency\n", vec!["lat.csv", "no"]),
        (
            "a negative latency",
            "latency\n-3ms\n",
            vec!["lat.csv:2", "negative"],
        ),
    ] {
        cases.push(Case {
            name,
            files: vec![("c.toml", EMPIRICAL.into()), ("lat.csv", csv.into())],
            args: vec!["run".into(), "c.toml".into()],
            code: 2,
            says,
        });
    }
    cases.push(Case {
        name: "a latency file that is missing",
        files: vec![("c.toml", EMPIRICAL.into())],
        args: vec!["run".into(), "c.toml".into()],
        code: 2,
        says: vec!["c.toml:6:", "lat.csv"],
    });
    cases.push(Case {
        name: "a latency file outside the config's folder",
        files: vec![("c.toml", EMPIRICAL.replace("lat.csv", "../lat.csv").into())],
        args: vec!["run".into(), "c.toml".into()],
        code: 2,
        says: vec!["c.toml:6:", "../lat.csv"],
    });
    cases
}

/// Runs `case` in a fresh folder and checks everything a refusal promises.
pub fn refused(case: &Case, dir: &Path) {
    for (name, bytes) in &case.files {
        fs::write(dir.join(name), bytes).unwrap();
    }
    let before = files(dir);
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let out = retrysim(&args, dir);
    let err = text(&out.stderr);
    let label = case.name;
    assert_eq!(out.status.code(), Some(case.code), "{label}: {err}");
    for phrase in &case.says {
        assert!(err.contains(phrase), "{label}: no {phrase:?} in\n{err}");
    }
    assert!(!err.contains("panicked"), "{label}: {err}");
    assert!(err.len() < 4000, "{label}: {} bytes of stderr", err.len());
    assert!(out.stdout.is_empty(), "{label}: {}", text(&out.stdout));
    assert_eq!(files(dir), before, "{label}: something was written");
    assert!(!dir.join("out").exists(), "{label}: out/ was created");
}

#[test]
fn bad_configs_are_refused_where_they_are_wrong() {
    let cases = config_cases();
    assert!(cases.len() >= 40, "{} config cases", cases.len());
    for case in &cases {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("cfg");
        fs::create_dir(&dir).unwrap();
        refused(case, &dir);
    }
}

/// An error's guess comes before the list of what is allowed, every named value gets one
/// (a distribution, "unlimited"), and a type is said in words, not as Rust's.
#[test]
fn guesses_come_first_and_types_are_in_words() {
    let cases = [
        (
            GOOD.replace("reply_loss = 0.2", "reply_los = 0.2"),
            vec![
                "unknown field `reply_los`\n",
                "= did you mean `reply_loss`?\n= allowed: `name`",
            ],
        ),
        (
            GOOD.replace(
                "value = \"1ms\"",
                "value = \"1ms\" }\nrequest_latency = { dist = \"exponental\", mean = \"1ms\"",
            ),
            vec![
                "unknown distribution \"exponental\"",
                "= did you mean \"exponential\"?\n= allowed:",
            ],
        ),
        (
            GOOD.replace("max_attempts = 3", "max_attempts = \"unlimted\""),
            vec!["= did you mean \"unlimited\"?"],
        ),
        (
            GOOD.replace("reply_loss = 0.2", "reply_loss = \"x\""),
            vec!["expected a number"],
        ),
        (
            GOOD.replace("tasks = 10", "tasks = \"x\""),
            vec!["expected a whole number, 0 or more"],
        ),
    ];
    for (config, says) in cases {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("c.toml"), &config).unwrap();
        let out = retrysim(&["run", "c.toml"], tmp.path());
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        // The footer lines are indented to the gutter's width, which the line number sets.
        let lines: Vec<&str> = err.lines().map(str::trim_start).collect();
        let flat = lines.join("\n");
        for phrase in says {
            assert!(flat.contains(phrase), "no {phrase:?} in\n{err}");
        }
        assert!(!err.contains("f64") && !err.contains("u64"), "{err}");
    }
}

/// A range whose steps do not reach its stop is refused, saying where they stop, in a file and
/// on the command line alike, rather than ending short without a word.
#[test]
fn a_range_that_misses_its_stop_is_refused() {
    let sweep = "\n[sweep]\n[[sweep.axis]]\npath = \"tool.charge.reply_loss\"\nstart = 0.0\nstop = 0.5\nstep = 0.3\n";
    for (config, args) in [
        (format!("{GOOD}{sweep}"), vec!["run", "c.toml"]),
        (
            GOOD.to_string(),
            vec![
                "run",
                "c.toml",
                "--scan",
                "tool.charge.reply_loss=0:0.5:0.3",
            ],
        ),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("c.toml"), &config).unwrap();
        let out = retrysim(&args, tmp.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("sweep.axis[0].stop: the steps stop at 0.3, short of the stop"),
            "{err}"
        );
        assert!(err.contains("(0.3 or 0.6)"), "{err}");
        assert!(!tmp.path().join("out").exists());
    }
}
