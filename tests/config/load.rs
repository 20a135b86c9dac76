//! The keys of load and push-back: rate schedules and durations, rate limits and capacity
//! windows, callers and scopes, Retry-After jitter — each rule's message names the key and says
//! what is allowed.

use crate::reading::{assert_says, error};

/// The error of the example config with its first tool's `extra` keys.
fn tool(extra: &str) -> String {
    error("name = \"t\"\n", &format!("name = \"t\"\n{extra}\n"))
}

/// The error of the example config with its first policy's `extra` keys.
fn policy(extra: &str) -> String {
    error("name = \"p\"\n", &format!("name = \"p\"\n{extra}\n"))
}

/// A valid model provider, for the model's tests to spoil one key of.
const MODEL: &str = "model = { input_tokens = { dist = \"constant\", value = 100 }, \
                     output_tokens = { dist = \"constant\", value = 50 }, max_tokens = 64, \
                     first_token = { dist = \"constant\", value = \"100ms\" }, tokens_per_second = 50 }";

/// A rate schedule starts at 0s, moves forward, ramps only towards a next point, and brings
/// some task; a duration needs a stream, and a workload needs a count or a duration.
#[test]
fn a_rate_schedule_and_a_duration_are_checked() {
    let stream = |points: &str| format!("tasks = 10\narrival = \"poisson\"\nrate = [{points}]");
    let cases = [
        (
            stream(r#"{ at = "1s", per_second = 5 }"#),
            vec!["workload.rate[0].at", "starts at 1s", "\"0s\""],
        ),
        (
            stream(r#"{ at = "0s", per_second = 5 }, { at = "0s", per_second = 9 }"#),
            vec!["workload.rate[1].at", "does not come after", "time order"],
        ),
        (
            stream(r#"{ at = "0s", per_second = 5, ramp = true }"#),
            vec!["workload.rate[0].ramp", "no next point"],
        ),
        (
            stream(r#"{ at = "0s", per_second = -1 }"#),
            vec!["workload.rate[0].per_second", "-1 is not a rate"],
        ),
        (
            stream(r#"{ at = "0s", per_second = 0 }"#),
            vec!["workload.rate", "zero throughout"],
        ),
        (
            "tasks = 10\nrate = [{ at = \"0s\", per_second = 5 }]".into(),
            vec!["workload.rate", "batch arrivals have no rate"],
        ),
        (
            "tasks = 10\nduration = \"1m\"".into(),
            vec!["workload.duration", "no duration"],
        ),
        (
            "arrival = \"poisson\"\nmean_interarrival = \"1s\"".into(),
            vec!["workload.tasks", "neither how many tasks nor for how long"],
        ),
        (
            "tasks = 10\narrival = \"poisson\"\nmean_interarrival = \"1s\"\nrate = []".into(),
            vec!["workload.mean_interarrival", "not both"],
        ),
    ];
    for (workload, says) in cases {
        assert_says(&error("tasks = 10", &workload), &says);
    }
}

/// A rate limit needs a rate a bucket can refill at and a bucket that holds something; jitter,
/// a clamp and a restart go with a Retry-After the policy waits on; a budget's settings belong
/// to its kind; scopes and callers are named or counted.
#[test]
fn rate_limits_scopes_and_retry_after_jitter_are_checked() {
    let cases = [
        (
            tool("rate_limit = { per_second = 0 }"),
            vec![
                "tool[0].rate_limit.per_second",
                "0 is not a rate",
                "above 0",
            ],
        ),
        (
            tool("rate_limit = { per_second = 5, burst = 0 }"),
            vec!["tool[0].rate_limit.burst", "lets nothing through"],
        ),
        (
            tool("rate_limit = { per_second = 5, scope = \"agent\" }"),
            vec!["tool[0].rate_limit.scope", "\"tool\"", "\"caller\""],
        ),
        (
            tool("rate_limit = { per_second = 5, retry_after_unit = \"0s\" }"),
            vec!["tool[0].rate_limit.retry_after_unit", "units of 0"],
        ),
        (
            tool("rate_limit = { per_second = 5, refill = 1 }"),
            vec!["rate_limit.refill", "unknown field"],
        ),
        (
            policy("retry_after = \"stop\"\nretry_after_jitter = \"1s\""),
            vec!["policy[0].retry_after_jitter", "\"stop\"", "honour"],
        ),
        (
            policy("retry_after = \"ignore\"\nretry_after_max = \"1s\""),
            vec!["policy[0].retry_after_max", "\"ignore\"", "\"replace\""],
        ),
        (
            policy("retry_after = \"stop\"\nretry_after_resets = true"),
            vec!["policy[0].retry_after_resets", "waits on"],
        ),
        (
            policy("retry_budget = { kind = \"aws_standard\", debit_on = \"retryable\" }"),
            vec![
                "policy[0].retry_budget.debit_on",
                "does not apply to kind = \"aws_standard\"",
            ],
        ),
        (
            policy("retry_budget = { kind = \"token_bucket\", debit_on = \"some\" }"),
            vec!["\"any_failure\"", "\"retryable\""],
        ),
        (
            policy("retry_budget = { kind = \"ratio\", throttle_cost = 5 }"),
            vec!["policy[0].retry_budget.throttle_cost", "does not apply"],
        ),
        (
            policy("scope = \"everyone\""),
            vec!["policy[0].scope", "\"tool\"", "\"caller\""],
        ),
        (
            error("tasks = 10", "tasks = 10\ncallers = 0"),
            vec!["workload.callers", "0 callers"],
        ),
        (
            tool("capacity = [{ from = \"1s\", until = \"2s\", fraction = 0.5 }]"),
            vec!["tool[0].capacity[0]", "has neither", "workers = N"],
        ),
        (
            tool("workers = 2\ncapacity = [{ from = \"1s\", until = \"2s\", fraction = 1 }]"),
            vec!["tool[0].capacity[0].fraction", "up to but not including 1"],
        ),
        (
            tool("workers = 2\ncapacity = [{ from = \"3s\", until = \"2s\", fraction = 0.5 }]"),
            vec!["tool[0].capacity[0].until", "no later than it starts"],
        ),
        (
            tool(
                "workers = 2\ncapacity = [{ from = \"1s\", until = \"5s\", fraction = 0.5 }, \
                 { from = \"4s\", until = \"6s\", fraction = 0.5 }]",
            ),
            vec!["tool[0].capacity[1].from", "before the one before it ends"],
        ),
        (
            error("tasks = 10", "tasks = 10\nrate_scale = 2"),
            vec!["workload.rate_scale", "no rate schedule"],
        ),
    ];
    for (message, says) in cases {
        assert_says(&message, &says);
    }
}

/// A model tool needs its provider and takes no service time; a provider's keys belong to a
/// model; token sizes are whole numbers; a rate is a second's or a minute's; a client-side
/// bucket is one of two.
#[test]
fn model_providers_are_checked() {
    let cases = [
        (
            tool("kind = \"model\""),
            vec!["tool[0].model", "needs its `model` table", "max_tokens"],
        ),
        (
            tool(MODEL),
            vec!["tool[0].model", "belongs to a model provider", "\"write\""],
        ),
        (
            tool("tokens_per_minute = { limit = 1000 }"),
            vec!["tool[0].tokens_per_minute", "kind = \"model\""],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{MODEL}\nservice_time = {{ dist = \"constant\", value = \"1s\" }}"
            )),
            vec!["tool[0].service_time", "first token"],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace("value = 100", "value = \"100ms\"")
            )),
            vec![
                "tool[0].model.input_tokens.value",
                "number of tokens",
                "1200",
            ],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace("max_tokens = 64", "max_tokens = 0")
            )),
            vec!["tool[0].model.max_tokens", "0 output tokens"],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace("tokens_per_second = 50", "tokens_per_second = 0")
            )),
            vec!["tool[0].model.tokens_per_second", "above 0"],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{MODEL}\ntokens_per_minute = {{ limit = 0 }}"
            )),
            vec!["tool[0].tokens_per_minute.limit", "lets nothing through"],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{MODEL}\nreplicas = 2\n\
                 replica = [{{ index = 1, service_time = {{ dist = \"constant\", value = \"1s\" }} }}]"
            )),
            vec!["tool[0].replica[0].service_time", "provider's latency"],
        ),
        (
            tool("price = { input_per_million = 3 }"),
            vec!["tool[0].price.input_per_million", "reads none", "per_call"],
        ),
        (
            tool("price = { per_call = -1 }"),
            vec!["tool[0].price.per_call", "from 0 to 1000000"],
        ),
        (
            tool("rate_limit = { per_second = 5, per_minute = 300 }"),
            vec![
                "tool[0].rate_limit.per_minute",
                "one of `per_second` and `per_minute`",
            ],
        ),
        (
            tool("rate_limit = { burst = 5 }"),
            vec!["tool[0].rate_limit", "needs its rate", "per_minute"],
        ),
        (
            policy("send_rate = {}\nsend_tokens = { per_minute = 1000 }"),
            vec!["policy[0].send_tokens", "one client-side bucket"],
        ),
        (
            policy("send_tokens = { per_minute = 0 }"),
            vec!["policy[0].send_tokens.per_minute", "above 0"],
        ),
    ];
    for (message, says) in cases {
        assert_says(&message, &says);
    }
}

/// A stream's breaks are said a second or a token, not both, and a token's chance is below 1; a
/// policy reads a 429's Retry-After or its reset, and only where it waits on one.
#[test]
fn a_break_per_token_and_a_wait_read_from_the_reset_are_checked() {
    let cases = [
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace(
                    "tokens_per_second = 50",
                    "tokens_per_second = 50, stream_break = 0.01, stream_break_per_token = 0.001"
                )
            )),
            vec!["tool[0].model.stream_break_per_token", "not both"],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace(
                    "tokens_per_second = 50",
                    "tokens_per_second = 50, stream_break_per_token = 1"
                )
            )),
            vec!["tool[0].model.stream_break_per_token", "below 1"],
        ),
        (
            policy("retry_after_from = \"resets\""),
            vec![
                "policy[0].retry_after_from",
                "\"retry-after\"",
                "\"retry-after-ms\"",
                "\"reset\"",
            ],
        ),
        (
            policy("retry_after = \"ignore\"\nretry_after_from = \"reset\""),
            vec!["policy[0].retry_after_from", "\"ignore\""],
        ),
        (
            tool(&format!(
                "kind = \"model\"\n{}",
                MODEL.replace(
                    "tokens_per_second = 50",
                    "tokens_per_second = 50, prefill_tokens_per_second = 0"
                )
            )),
            vec!["tool[0].model.prefill_tokens_per_second", "above 0"],
        ),
        (
            tool("retry_after_ms = true"),
            vec![
                "tool[0].retry_after_ms",
                "no rate limit",
                "tokens_per_minute",
            ],
        ),
    ];
    for (message, says) in cases {
        assert_says(&message, &says);
    }
}

/// An agent loop runs over a list whose first call is a model's, for at least one turn; a
/// re-plan needs a loop and names where it starts.
#[test]
fn agent_loops_are_checked() {
    let cases = [
        (
            policy("replan = { from = \"start\" }"),
            vec!["policy[0].replan", "agent loop", "workload.agent"],
        ),
        (
            error(
                "tasks = 10",
                "tasks = 10\ncalls = [\"t\"]\nagent = { turns = { dist = \"constant\", value = 3 } }",
            ),
            vec!["workload.agent", "first is a model", "kind = \"model\""],
        ),
        (
            error(
                "tasks = 10\n[[tool]]\nname = \"t\"\n",
                &format!(
                    "tasks = 10\ncalls = [\"t\"]\nagent = {{ turns = {{ dist = \"constant\", value = 0 }} }}\n\
                     [[tool]]\nname = \"t\"\nkind = \"model\"\n{MODEL}\n"
                ),
            ),
            vec!["workload.agent.turns", "0 turns"],
        ),
        (
            error(
                "tasks = 10\n[[tool]]\nname = \"t\"\n[[policy]]\nname = \"p\"\n",
                &format!(
                    "tasks = 10\ncalls = [\"t\"]\nagent = {{ turns = {{ dist = \"constant\", value = 2 }} }}\n\
                     [[tool]]\nname = \"t\"\nkind = \"model\"\n{MODEL}\n\
                     [[policy]]\nname = \"p\"\nreplan = {{ from = \"middle\" }}\n"
                ),
            ),
            vec!["policy[0].replan.from", "\"start\"", "\"turn\""],
        ),
    ];
    for (message, says) in cases {
        assert_says(&message, &says);
    }
}
