//! The keys of load and push-back: rate schedules and durations, rate limits and capacity
//! windows, callers and scopes, Retry-After jitter — each rule's message names the key and says
//! what is allowed.

use crate::reading::{assert_says, error};

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
    let tool = |extra: &str| error("name = \"t\"\n", &format!("name = \"t\"\n{extra}\n"));
    let policy = |extra: &str| error("name = \"p\"\n", &format!("name = \"p\"\n{extra}\n"));
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
