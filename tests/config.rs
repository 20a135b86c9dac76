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
    })
    .experiment()
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
    })
    .experiment()
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
        "name = \"p\"\nretry_on = [\"reset\", \"timeout\"]\n",
    );
    assert_says(&e, &["policy[0].retry_on[1]", "\"reset\", \"5xx\""]);
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
    assert_says(&e, &["tool[0].service_time", "needs `sigma`"]);
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
fn type_errors_keep_their_place() {
    let e = error("tasks = 10", "tasks = \"ten\"");
    assert_says(&e, &["c.toml:3:9: workload.tasks", "invalid type"]);
    let e = error("name = \"c\"", "name = \"c\"\nseed = -1");
    assert_says(&e, &["c.toml:2:8: seed"]);
    let e = error("[workload]", "[workload]\nunknown = 1");
    assert_says(&e, &["workload.unknown", "unknown field"]);
}
