//! What a page lets a reader change: the main keys a config sets, read from its TOML, each with
//! the input that suits it and the `--set` path a change goes through, so a value the page sends
//! is checked, and refused, exactly as the command line's would be.

use retrysim::policy::{Jitter, KeyScope};
use toml::{Table, Value};

/// How a key is edited on the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// A tool's fault probability: a slider from 0 to the most the config takes (below 1 less
    /// the tool's other faults at their largest; at most 0.95), in steps of 0.01.
    Share(f64),
    /// Attempts counting the first: a slider from 1 to 10.
    Attempts,
    /// A whole number of at least 1 (tasks, clients, replications, failures).
    Count,
    /// A number of at least the least the config takes: a backoff multiplier 1 (a delay that
    /// grows), an arrival rate 0.
    Number(f64),
    /// A factor on the whole load: a slider from 0.1 to 2 in steps of 0.05.
    Factor,
    /// A duration as a config writes one (`"200ms"`, `"2s"`).
    Duration,
    /// One of the words a key accepts.
    Choice(Vec<&'static str>),
}

/// One key a page shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Control {
    /// The `--set` path: `tool.charge.reply_loss`.
    pub path: String,
    /// What the page calls it: `charge · reply loss (b)`.
    pub label: String,
    /// The value as the config writes it.
    pub written: String,
    /// The value the page starts from: the written one, or a teaching size (see [`TEACHING`]).
    pub start: String,
    pub input: Input,
}

/// The largest workload a page starts from, so a change is redrawn within a second: at most
/// this many replications and tasks. A reader sets them back to the config's own for its
/// full run; the page says what the config writes beside each.
pub const TEACHING: [(&str, u64); 2] = [("replications", 5), ("workload.tasks", 2000)];

/// The keys of a tool, of a policy and of the workload a page offers, where the config sets them.
fn tool_keys() -> [(&'static str, &'static str, Input); 6] {
    [
        ("request_loss", "request loss (a)", Input::Share(0.95)),
        ("reply_loss", "reply loss (b)", Input::Share(0.95)),
        ("server_error", "5xx share", Input::Share(0.95)),
        ("burst.good", "good spells (mean)", Input::Duration),
        ("burst.bad", "bad spells (mean)", Input::Duration),
        (
            "burst.in_bad.server_error",
            "5xx share while bad",
            Input::Share(0.95),
        ),
    ]
}

fn policy_keys() -> [(&'static str, &'static str, Input); 8] {
    let jitters = Jitter::ALL.iter().map(|j| j.name()).collect();
    let keys = KeyScope::ALL.iter().map(|k| k.name()).collect();
    [
        ("max_attempts", "attempts", Input::Attempts),
        ("timeout", "timeout", Input::Duration),
        ("idempotency_key", "idempotency key", Input::Choice(keys)),
        (
            "backoff.initial_delay",
            "backoff: first delay",
            Input::Duration,
        ),
        ("backoff.max_delay", "backoff: cap", Input::Duration),
        (
            "backoff.multiplier",
            "backoff: multiplier",
            Input::Number(1.0),
        ),
        ("backoff.jitter", "jitter", Input::Choice(jitters)),
        (
            "breaker.consecutive_failures",
            "breaker: failures to open",
            Input::Count,
        ),
    ]
}

fn workload_keys() -> [(&'static str, &'static str, Input); 6] {
    [
        ("tasks", "tasks", Input::Count),
        ("clients", "clients", Input::Count),
        ("duration", "arrivals for", Input::Duration),
        (
            "mean_interarrival",
            "mean time between tasks",
            Input::Duration,
        ),
        ("rate", "arrival rate (per second)", Input::Number(0.0)),
        ("rate_scale", "load (× the rate schedule)", Input::Factor),
    ]
}

/// The controls for a config's TOML: its replications, workload, each tool's losses and each
/// policy's retry keys, in that order, where the config sets them. A key a sweep axis moves is
/// left out: setting it would collapse the sweep to one point.
pub fn controls(config: &Table) -> Vec<Control> {
    let swept = swept_paths(config);
    let mut out = Vec::new();
    let mut offer = |path: String, label: String, value: &Value, input: Input| {
        if swept.contains(&path) || !fits(&input, value) {
            return;
        }
        let written = shown(value);
        let start = TEACHING
            .iter()
            .find(|(p, _)| *p == path)
            .and_then(|(_, most)| value.as_integer().map(|v| (v as u64).min(*most)))
            .map_or_else(|| written.clone(), |v| v.to_string());
        out.push(Control {
            path,
            label,
            written,
            start,
            input,
        });
    };
    if let Some(v) = config.get("replications") {
        offer(
            "replications".into(),
            "replications".into(),
            v,
            Input::Count,
        );
    }
    if let Some(Value::Table(workload)) = config.get("workload") {
        // A rate schedule is moved as a whole by its scale, 1 unless the config sets it.
        let unscaled = Value::Float(1.0);
        for (key, label, input) in workload_keys() {
            let scaled =
                key == "rate_scale" && matches!(workload.get("rate"), Some(Value::Array(_)));
            let value = lookup(workload, key).or(scaled.then_some(&unscaled));
            if let Some(v) = value {
                offer(format!("workload.{key}"), label.into(), v, input);
            }
        }
    }
    for (section, keys) in [
        ("tool", tool_keys().to_vec()),
        ("policy", policy_keys().to_vec()),
    ] {
        for (name, table) in named(config, section) {
            for (key, label, input) in &keys {
                if let Some(v) = lookup(table, key) {
                    let path = format!("{section}.{name}.{key}");
                    let input = match input {
                        Input::Share(_) => Input::Share(most_share(config, name, table, key)),
                        other => other.clone(),
                    };
                    offer(path, format!("{name} · {label}"), v, input);
                }
            }
        }
    }
    out
}

/// A tool's fault probabilities: together they must stay below 1.
const FAULTS: [&str; 9] = [
    "request_loss",
    "reply_loss",
    "server_error",
    "throttled",
    "forbidden",
    "invalid",
    "connect_failure",
    "error_after_commit",
    "overloaded",
];

/// The most a slider may offer for fault `key` of tool `name`: the config takes a tool's faults
/// only while they add up to less than 1 (retrying until a reply never ends otherwise), so it
/// is 1 less the tool's other faults, each at its largest (a swept one at its sweep's largest
/// value), a step below, rounded down to the slider's steps; at most 0.95. A bad state's fault
/// (`burst.in_bad.…`) is bounded by the bad state's others and may bring them to 1.
fn most_share(config: &Table, name: &str, tool: &Table, key: &str) -> f64 {
    // A bad state's fault is bounded by the bad state's others: its own where `in_bad` sets
    // them, the tool's where it does not.
    let (within, leaf) = match key.strip_prefix("burst.in_bad.") {
        Some(leaf) => ("burst.in_bad.", leaf),
        None => ("", key),
    };
    let largest = |k: &str| {
        let own = lookup(tool, &format!("{within}{k}")).or_else(|| tool.get(k));
        let written = own.and_then(number).unwrap_or(0.0);
        let swept = axis_values(config, &format!("tool.{name}.{within}{k}"));
        swept.into_iter().fold(written, f64::max)
    };
    let others: f64 = FAULTS
        .iter()
        .filter(|k| **k != leaf)
        .map(|k| largest(k))
        .sum();
    // A tool's faults stay a step below 1; a bad state's may reach it (the state ends).
    let step = if within.is_empty() { 0.01 } else { 0.0 };
    let most = libm::floor((1.0 - others - step) * 100.0 + 1e-9) / 100.0;
    most.clamp(0.0, 0.95)
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Float(x) => Some(*x),
        Value::Integer(n) => Some(*n as f64),
        _ => None,
    }
}

/// The numbers a `[[sweep.axis]]` on `path` takes: its values, or its range's ends.
fn axis_values(config: &Table, path: &str) -> Vec<f64> {
    let axes = (config.get("sweep").and_then(|s| s.get("axis")))
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    (axes.iter().filter_map(Value::as_table))
        .filter(|a| a.get("path").and_then(Value::as_str) == Some(path))
        .flat_map(|a| {
            let listed = a.get("values").and_then(Value::as_array).cloned();
            let ends = ["start", "stop"].iter().filter_map(|k| a.get(*k).cloned());
            listed.unwrap_or_default().into_iter().chain(ends)
        })
        .filter_map(|v| number(&v))
        .collect()
}

/// The `[[tool]]` or `[[policy]]` tables with their names.
fn named<'a>(config: &'a Table, section: &str) -> Vec<(&'a str, &'a Table)> {
    let Some(Value::Array(items)) = config.get(section) else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(Value::as_table)
        .filter_map(|t| Some((t.get("name")?.as_str()?, t)))
        .collect()
}

/// The value at a dotted key inside `table`.
fn lookup<'a>(table: &'a Table, dotted: &str) -> Option<&'a Value> {
    let mut parts = dotted.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}

/// The paths a `[sweep]` moves: `[[sweep.axis]]`'s `path`, and a zip's or grid's paths.
pub fn swept_paths(config: &Table) -> Vec<String> {
    let mut paths = Vec::new();
    let mut collect = |value: &Value| {
        let mut stack = vec![value];
        while let Some(v) = stack.pop() {
            match v {
                Value::Table(t) => {
                    if let Some(Value::String(p)) = t.get("path") {
                        paths.push(p.clone());
                    }
                    stack.extend(t.values());
                }
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
    };
    if let Some(sweep) = config.get("sweep") {
        collect(sweep);
    }
    paths
}

/// Whether the config's value is one the input can show: a page never offers a slider for a
/// key the config gives as a table or a word it cannot hold.
fn fits(input: &Input, value: &Value) -> bool {
    match (input, value) {
        (Input::Share(_), Value::Float(_) | Value::Integer(_)) => true,
        (Input::Attempts, Value::Integer(_)) => true,
        (Input::Attempts, Value::String(s)) => s == "unlimited",
        (Input::Count, Value::Integer(n)) => *n >= 1,
        (Input::Number(_) | Input::Factor, Value::Float(_) | Value::Integer(_)) => true,
        (Input::Duration, Value::String(_)) => true,
        (Input::Choice(words), Value::String(s)) => words.contains(&s.as_str()),
        _ => false,
    }
}

/// A value as `--set` takes it: numbers and words bare.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(text: &str) -> Vec<Control> {
        controls(&text.parse::<Table>().unwrap())
    }

    /// A bursty tool offers its spells' means and its bad state's 5xx share, bounded by the bad
    /// state's other faults (the tool's own where `in_bad` leaves them out), up to 1 with them.
    #[test]
    fn offers_a_bursty_tools_spells_and_bad_state() {
        let found = of(r#"
            [[tool]]
            name = "charge"
            request_loss = 0.02
            reply_loss = 0.1
            burst = { good = "332s", bad = "20s", in_bad = { server_error = 0.88 } }
        "#);
        let get = |path: &str| found.iter().find(|c| c.path == path).cloned();
        assert_eq!(get("tool.charge.burst.good").unwrap().written, "332s");
        assert_eq!(get("tool.charge.burst.bad").unwrap().input, Input::Duration);
        let bad = get("tool.charge.burst.in_bad.server_error").unwrap();
        assert_eq!(bad.input, Input::Share(0.88));
        assert_eq!(bad.label, "charge · 5xx share while bad");
    }

    #[test]
    fn offers_the_keys_a_config_sets_and_skips_what_a_sweep_moves() {
        let found = of(r#"
            replications = 20
            [workload]
            tasks = 10000
            clients = 4
            [[tool]]
            name = "charge"
            request_loss = 0.1
            reply_loss = 0.0
            [[policy]]
            name = "no-key"
            max_attempts = "unlimited"
            backoff = { initial_delay = "200ms", jitter = "full" }
            [[sweep.axis]]
            path = "tool.charge.reply_loss"
        "#);
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "replications",
                "workload.tasks",
                "workload.clients",
                "tool.charge.request_loss",
                "policy.no-key.max_attempts",
                "policy.no-key.backoff.initial_delay",
                "policy.no-key.backoff.jitter",
            ]
        );
        // Teaching sizes: the start is capped, what the config writes is kept beside it.
        assert_eq!(
            (found[0].written.as_str(), found[0].start.as_str()),
            ("20", "5")
        );
        assert_eq!(
            (found[1].written.as_str(), found[1].start.as_str()),
            ("10000", "2000")
        );
        assert_eq!(found[2].start, "4");
        assert_eq!(found[4].start, "unlimited");
        assert!(matches!(&found[6].input, Input::Choice(words) if words.contains(&"decorrelated")));
    }

    /// A loss's slider stops where the config would refuse it: 1 less the tool's other faults
    /// at their largest, a swept one at its sweep's end, a step below.
    #[test]
    fn a_loss_slider_offers_only_what_the_config_takes() {
        let found = of(r#"
            [[tool]]
            name = "charge"
            request_loss = 0.1
            reply_loss = 0.0
            server_error = 0.05
            [[sweep.axis]]
            path = "tool.charge.reply_loss"
            start = 0.0
            stop = 0.5
            step = 0.1
        "#);
        let most = |path: &str| match &found.iter().find(|c| c.path == path).unwrap().input {
            Input::Share(most) => *most,
            other => panic!("{other:?}"),
        };
        assert_eq!(most("tool.charge.request_loss"), 0.44);
        assert_eq!(most("tool.charge.server_error"), 0.39);
        let lone = of("[[tool]]\nname = \"t\"\nreply_loss = 0.0\n");
        assert_eq!(lone[0].input, Input::Share(0.95));
    }

    /// A number box starts where the config's own check does: a multiplier that grows the
    /// delay (≥ 1), an arrival rate of zero or more.
    #[test]
    fn a_number_box_offers_only_what_the_config_takes() {
        let found = of("name = \"x\"\n[workload]\nrate = 5.0\nduration = \"10s\"\n\
            [[tool]]\nname = \"t\"\n[[policy]]\nname = \"p\"\n\
            backoff = { kind = \"exponential\", multiplier = 2.0 }\n");
        let least = |path: &str| match found.iter().find(|c| c.path == path).map(|c| &c.input) {
            Some(Input::Number(least)) => *least,
            other => panic!("{path}: {other:?}"),
        };
        assert_eq!(least("policy.p.backoff.multiplier"), 1.0);
        assert_eq!(least("workload.rate"), 0.0);
    }

    #[test]
    fn a_rate_schedule_gets_a_load_slider_at_its_scale() {
        let found = of(r#"
            [workload]
            duration = "120s"
            rate = [{ at = "0s", per_second = 50 }]
        "#);
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["workload.duration", "workload.rate_scale"]);
        assert_eq!(
            (found[1].written.as_str(), found[1].input.clone()),
            ("1.0", Input::Factor)
        );
        let set = of("[workload]\nrate = [{ at = \"0s\", per_second = 5 }]\nrate_scale = 0.8\n");
        assert_eq!(set[0].written, "0.8");
    }

    #[test]
    fn leaves_out_values_an_input_cannot_hold() {
        let found = of(r#"
            [[policy]]
            name = "p"
            max_attempts = "forever"
            timeout = { p99 = "2s" }
            idempotency_key = "per_intent"
        "#);
        let paths: Vec<&str> = found.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["policy.p.idempotency_key"]);
    }
}
