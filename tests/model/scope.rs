//! Where the closed forms stop applying: a tool unlike their model, a failure the policy does not
//! retry, a safety gate that stops unsafe retries, drifting arguments under a key the server
//! honours. Each case sits beside one the forms do describe, so both directions are held.

use retrysim::config::{Origin, Source};
use retrysim::theory::for_policy;

/// Whether each policy of the config made of `tool` and `policies` gets closed forms.
fn theory_of(tool: &str, policies: &str) -> Vec<bool> {
    let text =
        format!("name = \"t\"\n[workload]\ntasks = 10\n[[tool]]\nname = \"w\"\n{tool}\n{policies}");
    let sweep = Source {
        name: "t.toml".into(),
        text,
        origin: Origin::Text,
    }
    .sweep()
    .unwrap_or_else(|e| panic!("{e}"));
    let exp = &sweep.point(0).experiment;
    exp.policies
        .iter()
        .map(|p| for_policy(exp, p).is_some())
        .collect()
}

const LOSSES: &str = "request_loss = 0.1\nreply_loss = 0.2";
const RETRIES: &str = "[[policy]]\nname = \"r\"\nmax_attempts = 3\n";

#[test]
fn a_gate_that_stops_unsafe_retries_has_no_closed_form() {
    let safe = "[[policy]]\nname = \"safe\"\nmax_attempts = 3\nsafety_gate = true\n\
                idempotency_key = \"per_intent\"\n";
    let unsafe_ = "[[policy]]\nname = \"unsafe\"\nmax_attempts = 3\nsafety_gate = true\n";
    assert_eq!(
        theory_of(LOSSES, &format!("{safe}{unsafe_}")),
        [true, false]
    );
}

#[test]
fn drifting_arguments_under_a_key_have_no_closed_form() {
    let keyed = "[[policy]]\nname = \"keyed\"\nmax_attempts = 3\npayload_drift = 0.5\n\
                 idempotency_key = \"per_intent\"\n";
    let plain = "[[policy]]\nname = \"plain\"\nmax_attempts = 3\npayload_drift = 0.5\n";
    assert_eq!(theory_of(LOSSES, &format!("{keyed}{plain}")), [false, true]);
}

/// A lost reply reads as a reset: a policy that retries only 5xx stops at it, which no closed
/// form counts — even with no request lost at all.
#[test]
fn a_loss_the_policy_does_not_retry_has_no_closed_form() {
    let only_5xx = "[[policy]]\nname = \"only-5xx\"\nmax_attempts = 3\nretry_on = [\"5xx\"]\n";
    for tool in [
        "request_loss = 0.0\nreply_loss = 0.2",
        "request_loss = 0.2\nreply_loss = 0.0",
    ] {
        assert_eq!(
            theory_of(tool, &format!("{RETRIES}{only_5xx}")),
            [true, false],
            "{tool}"
        );
    }
    // Without any loss there is no reset to stop at.
    let none = "request_loss = 0.0\nreply_loss = 0.0\nserver_error = 0.1";
    assert_eq!(
        theory_of(none, &format!("{RETRIES}{only_5xx}")),
        [true, true]
    );
}

#[test]
fn a_tool_unlike_the_model_has_no_closed_form() {
    assert_eq!(theory_of(LOSSES, RETRIES), [true]);
    for unlike in [
        "workers = 2",
        "key_retention = \"1s\"",
        "kind = \"read_only\"",
        "outages = [{ from = \"1s\", until = \"2s\" }]",
        "rate_limit = { per_second = 1000 }",
        "slowdown = \"1ms\"",
        "drop_expired = true",
    ] {
        assert_eq!(
            theory_of(&format!("{LOSSES}\n{unlike}"), RETRIES),
            [false],
            "{unlike}"
        );
    }
    let scripted = "script = [{ outcome = \"5xx\", after = 1 }]";
    assert_eq!(theory_of(scripted, RETRIES), [false]);
}

/// A timeout shorter than every round trip: each attempt times out, no reset or 5xx is ever
/// seen, so a policy retrying timeouts alone is still described (b = 1 − a: nothing succeeds).
/// A 5xx the policy does not retry is not.
#[test]
fn only_failures_that_can_occur_must_be_retried() {
    let slow = "request_loss = 0.1\nservice_time = { dist = \"constant\", value = \"10ms\" }";
    let timeouts_only = "[[policy]]\nname = \"t\"\nmax_attempts = 3\ntimeout = \"5ms\"\n\
                         retry_on = [\"timeout\"]\n";
    assert_eq!(theory_of(slow, timeouts_only), [true]);
    // Nor is a 5xx, 403 or 4xx that always comes after the timeout.
    let refusals = "server_error = 0.1\nforbidden = 0.1\ninvalid = 0.1";
    assert_eq!(
        theory_of(&format!("{slow}\n{refusals}"), timeouts_only),
        [true]
    );
    // A 403 or a 4xx is permanent and not retried by default: the intent stops, off the forms.
    assert_eq!(theory_of("forbidden = 0.1", RETRIES), [false]);
    assert_eq!(theory_of("invalid = 0.1", RETRIES), [false]);
    let five_xx = "server_error = 0.1";
    let no_5xx =
        "[[policy]]\nname = \"n\"\nmax_attempts = 3\nretry_on = [\"reset\", \"timeout\"]\n";
    assert_eq!(
        theory_of(five_xx, &format!("{RETRIES}{no_5xx}")),
        [true, false]
    );
}
