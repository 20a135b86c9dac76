//! The presets in reverse: a policy said in a retry library's own words — urllib3's `Retry(…)`,
//! a tenacity decorator, botocore's config, a gRPC service config, Polly's options,
//! resilience4j's properties, Envoy's route, the model SDKs' clients — with what the library
//! cannot say.
//!
//! Each library writes its nearest settings, as the preset table retrysim reads and as the
//! library's users write them. Whether they say the policy exactly is not taken on trust: the
//! preset table is expanded by the config reader, as any config's is, and every retry rule of
//! the expansion is held against the policy's. Each rule that differs is said, with both sides;
//! what a library has no setting for at all (a breaker beside urllib3, an idempotency key) is
//! said too.

use std::fmt::Write as _;

use serde_json::json;
use toml::{Table, Value};

use crate::config::{ConfigError, Origin, Source};
use crate::model::FailureClass as C;
use crate::policy::{Attempts, Backoff, Growth, Jitter, Policy, RetryAfter, RetryAfterFrom, Wait};
use crate::time::{TICKS_PER_SECOND, Tick};

/// The libraries, by their preset's name.
pub const LIBRARIES: [&str; 11] = [
    "urllib3",
    "tenacity",
    "botocore",
    "grpc",
    "polly",
    "resilience4j",
    "envoy",
    "openai",
    "anthropic",
    "temporal",
    "step_functions",
];

/// A policy in one library's words.
#[derive(Clone, Debug)]
pub struct InWords {
    pub library: &'static str,
    /// The settings as the library's users write them.
    pub code: String,
    /// The same settings as retrysim's preset, the value of `preset.<library>`.
    pub preset: Value,
    /// Where the library's settings do not say the policy: each rule with both sides, then
    /// what the library has no setting for.
    pub differences: Vec<String>,
}

impl InWords {
    pub fn exact(&self) -> bool {
        self.differences.is_empty()
    }
}

/// The policy in library `library`'s words; `None` for a name that is not one.
pub fn say(policy: &Policy, library: &str) -> Option<InWords> {
    let library = LIBRARIES.into_iter().find(|l| *l == library)?;
    let (preset, code) = match library {
        "urllib3" => urllib3(policy),
        "tenacity" => tenacity(policy),
        "botocore" => botocore(policy),
        "grpc" => grpc(policy),
        "polly" => polly(policy),
        "resilience4j" => resilience4j(policy),
        "envoy" => envoy(policy),
        "temporal" => temporal(policy),
        "step_functions" => step_functions(policy),
        _ => stainless(policy),
    };
    let mut differences = match expand(library, &preset) {
        Ok(back) => differences(policy, &back, library),
        Err(why) => vec![format!("retrysim cannot read these settings back: {why}")],
    };
    differences.extend(beside(policy, library));
    Some(InWords {
        library,
        code,
        preset,
        differences,
    })
}

/// The policy a preset table expands to, read as any config's is.
pub fn expand(library: &str, preset: &Value) -> Result<Policy, ConfigError> {
    let mut policy = Table::new();
    policy.insert("name".into(), "p".into());
    let mut p = Table::new();
    p.insert(library.into(), preset.clone());
    policy.insert("preset".into(), Value::Table(p));
    let mut doc: Table =
        toml::from_str("name = \"words\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n")
            .expect("a fixed config parses");
    doc.insert("policy".into(), Value::Array(vec![Value::Table(policy)]));
    let source = Source {
        name: "words".into(),
        text: toml::to_string(&doc).expect("a TOML table serializes"),
        origin: Origin::Text,
    };
    let sweep = source.sweep()?;
    Ok(sweep.base.policies[0].clone())
}

/// Seconds as a number, for the libraries that take them so.
fn secs(t: Tick) -> f64 {
    t.0 as f64 / TICKS_PER_SECOND as f64
}

/// A duration as text, in the `"2s"` form retrysim and several libraries read.
fn text(t: Tick) -> Value {
    Value::String(t.to_string())
}

fn retries(p: &Policy) -> Option<u32> {
    p.rule.retry.max_attempts.cap().map(|n| n.saturating_sub(1))
}

fn has(p: &Policy, c: C) -> bool {
    p.rule.retry.retry_on.contains(c)
}

/// The HTTP statuses of the classes the policy retries, as the libraries list them.
fn statuses(p: &Policy) -> Vec<u16> {
    let mut out = Vec::new();
    for (class, codes) in [
        (C::Forbidden, &[403u16][..]),
        (C::Conflict, &[409]),
        (C::Throttled, &[429]),
        (C::ServerError, &[502, 503, 504]),
        (C::Overloaded, &[503]),
    ] {
        if has(p, class) {
            out.extend_from_slice(codes);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

fn urllib3(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    let mut args = Vec::new();
    if let Some(n) = retries(p) {
        t.insert("total".into(), Value::Integer(n.into()));
        args.push(format!("total={n}"));
    }
    if !has(p, C::Connect) {
        t.insert("connect".into(), Value::Integer(0));
        args.push("connect=0".into());
    }
    let reads = has(p, C::Reset) || has(p, C::Timeout);
    if !reads {
        t.insert("read".into(), Value::Integer(0));
        args.push("read=0".into());
    }
    t.insert("backoff_factor".into(), Value::Float(secs(b.initial_delay)));
    args.push(format!("backoff_factor={}", secs(b.initial_delay)));
    if let Some(max) = b.max_delay {
        t.insert("backoff_max".into(), Value::Float(secs(max)));
        args.push(format!("backoff_max={}", secs(max)));
    }
    if b.jitter == Jitter::Additive {
        t.insert("backoff_jitter".into(), Value::Float(secs(b.jitter_max)));
        args.push(format!("backoff_jitter={}", secs(b.jitter_max)));
    }
    let codes = statuses(p);
    if !codes.is_empty() {
        t.insert(
            "status_forcelist".into(),
            Value::Array(codes.iter().map(|&c| Value::Integer(c.into())).collect()),
        );
        args.push(format!("status_forcelist={codes:?}"));
    }
    // An agent's side-effecting call is a POST, which urllib3 retries after a read error or a
    // listed status only when the method is allowed.
    if reads || !codes.is_empty() {
        t.insert("allowed_methods".into(), Value::Array(vec!["POST".into()]));
        args.push("allowed_methods=frozenset({\"POST\"})".into());
    }
    if p.rule.pushback.mode == RetryAfter::Ignore {
        t.insert("respect_retry_after_header".into(), Value::Boolean(false));
        args.push("respect_retry_after_header=False".into());
    }
    (
        Value::Table(t),
        format!("urllib3.util.Retry({})", args.join(", ")),
    )
}

fn tenacity(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    let mut parts = Vec::new();
    if let Some(n) = p.rule.retry.max_attempts.cap() {
        t.insert("stop_after_attempt".into(), Value::Integer(n.into()));
        parts.push(format!("stop=stop_after_attempt({n})"));
    }
    let max = b.max_delay.map(secs);
    let curve = |keys: &[(&str, f64)]| {
        let mut w = Table::new();
        let mut args = Vec::new();
        for (k, v) in keys {
            w.insert((*k).into(), Value::Float(*v));
            args.push(format!("{k}={v}"));
        }
        if let Some(m) = max {
            w.insert("max".into(), Value::Float(m));
            args.push(format!("max={m}"));
        }
        (Value::Table(w), args.join(", "))
    };
    let (key, value, call) = match (b.growth, b.jitter) {
        (Growth::Constant, _) => (
            "wait_fixed",
            Value::Float(secs(b.initial_delay)),
            format!("wait_fixed({})", secs(b.initial_delay)),
        ),
        (_, Jitter::Full) => {
            let (v, a) = curve(&[
                ("multiplier", secs(b.initial_delay)),
                ("exp_base", b.multiplier),
            ]);
            (
                "wait_random_exponential",
                v,
                format!("wait_random_exponential({a})"),
            )
        }
        (_, Jitter::Additive) => {
            let (v, a) = curve(&[
                ("initial", secs(b.initial_delay)),
                ("exp_base", b.multiplier),
                ("jitter", secs(b.jitter_max)),
            ]);
            (
                "wait_exponential_jitter",
                v,
                format!("wait_exponential_jitter({a})"),
            )
        }
        _ => {
            let (v, a) = curve(&[
                ("multiplier", secs(b.initial_delay)),
                ("exp_base", b.multiplier),
            ]);
            ("wait_exponential", v, format!("wait_exponential({a})"))
        }
    };
    t.insert(key.into(), value);
    parts.push(format!("wait={call}"));
    (
        Value::Table(t),
        format!("@tenacity.retry({})", parts.join(", ")),
    )
}

fn botocore(p: &Policy) -> (Value, String) {
    let mut t = Table::new();
    t.insert("mode".into(), "standard".into());
    let n = p.rule.retry.max_attempts.cap().unwrap_or(3);
    t.insert("total_max_attempts".into(), Value::Integer(n.into()));
    let code = format!(
        "botocore.config.Config(retries={{\"mode\": \"standard\", \"total_max_attempts\": {n}}})"
    );
    (Value::Table(t), code)
}

/// The gRPC status codes of the classes the policy retries.
fn grpc_codes(p: &Policy) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (classes, code) in [
        (
            &[C::Connect, C::Reset, C::ServerError, C::Overloaded][..],
            "UNAVAILABLE",
        ),
        (&[C::Throttled], "RESOURCE_EXHAUSTED"),
        (&[C::Timeout], "DEADLINE_EXCEEDED"),
        (&[C::VersionConflict], "ABORTED"),
        (&[C::Forbidden], "PERMISSION_DENIED"),
        (&[C::Conflict], "ALREADY_EXISTS"),
        (&[C::Invalid], "INVALID_ARGUMENT"),
    ] {
        if classes.iter().any(|&c| has(p, c)) {
            out.push(code);
        }
    }
    out
}

fn grpc(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let duration = |t: Tick| format!("{}s", secs(t));
    let mut retry = json!({
        "maxAttempts": p.rule.retry.max_attempts.cap().unwrap_or(5),
        "initialBackoff": duration(b.initial_delay),
        "maxBackoff": duration(b.max_delay.unwrap_or(b.initial_delay)),
        "backoffMultiplier": b.multiplier,
        "retryableStatusCodes": grpc_codes(p),
    });
    if b.max_delay.is_none() {
        retry
            .as_object_mut()
            .expect("an object")
            .remove("maxBackoff");
    }
    let mut method = json!({ "name": [{}], "retryPolicy": retry });
    if let Some(d) = p.time.limits.deadline {
        method["timeout"] = json!(duration(d));
    }
    let mut config = json!({ "methodConfig": [method] });
    if let Some(crate::policy::BudgetRule::TokenBucket {
        max_tokens,
        token_ratio,
        ..
    }) = &p.gates.retry_budget
    {
        config["retryThrottling"] = json!({ "maxTokens": max_tokens, "tokenRatio": token_ratio });
    }
    let text = serde_json::to_string_pretty(&config).expect("JSON serializes");
    (Value::String(text.clone()), text)
}

fn polly(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    let mut lines = Vec::new();
    let retries = retries(p).unwrap_or(i32::MAX as u32);
    t.insert("MaxRetryAttempts".into(), Value::Integer(retries.into()));
    lines.push(format!("MaxRetryAttempts = {retries}"));
    t.insert("Delay".into(), text(b.initial_delay));
    lines.push(format!(
        "Delay = TimeSpan.FromSeconds({})",
        secs(b.initial_delay)
    ));
    let kind = match b.growth {
        Growth::Constant => "Constant",
        Growth::Linear => "Linear",
        Growth::Exponential => "Exponential",
    };
    t.insert("BackoffType".into(), kind.into());
    lines.push(format!("BackoffType = DelayBackoffType.{kind}"));
    if b.jitter != Jitter::None {
        t.insert("UseJitter".into(), Value::Boolean(true));
        lines.push("UseJitter = true".into());
    }
    if let Some(m) = b.max_delay {
        t.insert("MaxDelay".into(), text(m));
        lines.push(format!("MaxDelay = TimeSpan.FromSeconds({})", secs(m)));
    }
    (
        Value::Table(t),
        format!("new RetryStrategyOptions {{ {} }}", lines.join(", ")),
    )
}

fn resilience4j(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    let n = p.rule.retry.max_attempts.cap().unwrap_or(3);
    t.insert("maxAttempts".into(), Value::Integer(n.into()));
    t.insert("waitDuration".into(), text(b.initial_delay));
    if b.growth == Growth::Exponential {
        t.insert("enableExponentialBackoff".into(), Value::Boolean(true));
        t.insert(
            "exponentialBackoffMultiplier".into(),
            Value::Float(b.multiplier),
        );
        if let Some(m) = b.max_delay {
            t.insert("exponentialMaxWaitDuration".into(), text(m));
        }
    }
    if b.jitter == Jitter::Proportional {
        t.insert("enableRandomizedWait".into(), Value::Boolean(true));
        t.insert("randomizedWaitFactor".into(), Value::Float(b.jitter_factor));
    }
    let mut code = String::new();
    for (k, v) in &t {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let _ = writeln!(code, "resilience4j.retry.instances.tool.{k}={v}");
    }
    (Value::Table(t), code.trim_end().to_string())
}

/// A Temporal activity's `RetryPolicy` (the Python SDK's spelling) and its timeouts.
fn temporal(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    let mut args = Vec::new();
    let delta = |d: Tick| format!("timedelta(seconds={})", secs(d));
    t.insert("initial_interval".into(), text(b.initial_delay));
    args.push(format!("initial_interval={}", delta(b.initial_delay)));
    t.insert("backoff_coefficient".into(), Value::Float(b.multiplier));
    args.push(format!("backoff_coefficient={:?}", b.multiplier));
    let maximum = b
        .max_delay
        .unwrap_or(Tick(b.initial_delay.0.saturating_mul(100)));
    t.insert("maximum_interval".into(), text(maximum));
    args.push(format!("maximum_interval={}", delta(maximum)));
    let attempts = p.rule.retry.max_attempts.cap().unwrap_or(0);
    t.insert("maximum_attempts".into(), Value::Integer(attempts.into()));
    args.push(format!("maximum_attempts={attempts}"));
    let unretried: Vec<&str> = (C::ALL.into_iter())
        .filter(|&c| !has(p, c))
        .map(|c| match c {
            C::Timeout => "TemporalTimeout:StartToClose",
            other => other.name(),
        })
        .collect();
    if !unretried.is_empty() {
        let names: Vec<Value> = unretried.iter().map(|&n| n.into()).collect();
        t.insert("non_retryable_error_types".into(), Value::Array(names));
        args.push(format!("non_retryable_error_types={unretried:?}"));
    }
    let mut call = vec!["retry_policy=RetryPolicy(...)".to_string()];
    if let Wait::Fixed(w) = p.time.timeout {
        t.insert("start_to_close_timeout".into(), text(w));
        call.push(format!("start_to_close_timeout={}", delta(w)));
    }
    if let Some(d) = p.time.limits.deadline {
        t.insert("schedule_to_close_timeout".into(), text(d));
        call.push(format!("schedule_to_close_timeout={}", delta(d)));
    }
    let code = format!(
        "RetryPolicy({})\nworkflow.execute_activity(tool, {})",
        args.join(", "),
        call.join(", ")
    );
    (Value::Table(t), code)
}

/// An AWS Step Functions Task state's retrier, in the States Language's JSON.
fn step_functions(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut t = Table::new();
    // The nearest of its three error names: every failure, every one but the timeout, or the
    // timeout alone; any other set is said as a difference.
    let only = |timeout: bool| {
        C::ALL
            .into_iter()
            .all(|c| has(p, c) == ((c == C::Timeout) == timeout))
    };
    let errors = match (only(false), only(true)) {
        (true, _) => "States.TaskFailed",
        (_, true) => "States.Timeout",
        _ => "States.ALL",
    };
    t.insert("ErrorEquals".into(), Value::Array(vec![errors.into()]));
    let whole_secs = |d: Tick| (d.0.div_ceil(TICKS_PER_SECOND)).max(1);
    t.insert(
        "IntervalSeconds".into(),
        Value::Integer(whole_secs(b.initial_delay) as i64),
    );
    let retries = retries(p).unwrap_or(99_999_999);
    t.insert("MaxAttempts".into(), Value::Integer(retries.into()));
    t.insert("BackoffRate".into(), Value::Float(b.multiplier));
    if let Some(m) = b.max_delay {
        t.insert(
            "MaxDelaySeconds".into(),
            Value::Integer(whole_secs(m) as i64),
        );
    }
    let jitter = if b.jitter == Jitter::None {
        "NONE"
    } else {
        "FULL"
    };
    t.insert("JitterStrategy".into(), jitter.into());
    if let Wait::Fixed(w) = p.time.timeout {
        t.insert(
            "TimeoutSeconds".into(),
            Value::Integer(whole_secs(w) as i64),
        );
    }
    let json = serde_json::to_value(&t).expect("a TOML table is JSON");
    let code = format!(
        "\"Retry\": [{}]",
        serde_json::to_string_pretty(&json).expect("JSON writes")
    );
    (Value::Table(t), code)
}

fn envoy(p: &Policy) -> (Value, String) {
    let b = &p.rule.backoff;
    let mut on = Vec::new();
    if has(p, C::ServerError) {
        on.push("5xx");
    } else {
        if has(p, C::Reset) {
            on.push("reset");
        }
        if has(p, C::Connect) {
            on.push("connect-failure");
        }
    }
    if has(p, C::Conflict) {
        on.push("retriable-4xx");
    }
    if has(p, C::Throttled) {
        on.push("retriable-status-codes");
    }
    let mut t = Table::new();
    t.insert("retry_on".into(), on.join(",").into());
    t.insert(
        "num_retries".into(),
        Value::Integer(retries(p).unwrap_or(1).into()),
    );
    if let Wait::Fixed(w) = p.time.timeout {
        t.insert("per_try_timeout".into(), text(w));
    }
    let mut back = Table::new();
    back.insert("base_interval".into(), text(b.initial_delay));
    if let Some(m) = b.max_delay {
        back.insert("max_interval".into(), text(m));
    }
    t.insert("retry_back_off".into(), Value::Table(back));
    if has(p, C::Throttled) {
        t.insert(
            "retriable_status_codes".into(),
            Value::Array(vec![Value::Integer(429)]),
        );
    }
    t.insert(
        "timeout".into(),
        text(p.time.limits.deadline.unwrap_or(Tick::ZERO)),
    );
    let yaml = toml::to_string(&t).expect("a TOML table serializes");
    (
        Value::Table(t),
        format!("# route.retry_policy (the route's timeout beside it)\n{yaml}")
            .trim_end()
            .to_string(),
    )
}

fn stainless(p: &Policy) -> (Value, String) {
    let n = retries(p).unwrap_or(2);
    let mut t = Table::new();
    t.insert("max_retries".into(), Value::Integer(n.into()));
    if let Wait::Fixed(w) = p.time.timeout {
        t.insert("timeout".into(), Value::Float(secs(w)));
    }
    let timeout = match p.time.timeout {
        Wait::Fixed(w) => format!(", timeout={}", secs(w)),
        _ => String::new(),
    };
    (Value::Table(t), format!("Client(max_retries={n}{timeout})"))
}

/// Every retry rule on which `back`, the library's settings read back, differs from `policy`.
fn differences(policy: &Policy, back: &Policy, library: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut differ = |what: &str, ours: String, theirs: String| {
        if ours != theirs {
            out.push(format!(
                "{what}: the policy's is {ours}; {library}'s nearest is {theirs}"
            ));
        }
    };
    let attempts = |a: Attempts| a.to_string();
    differ(
        "attempts",
        attempts(policy.rule.retry.max_attempts),
        attempts(back.rule.retry.max_attempts),
    );
    let classes = |p: &Policy| {
        let on = C::ALL
            .into_iter()
            .filter(|&c| p.rule.retry.retry_on.contains(c));
        on.map(C::name).collect::<Vec<_>>().join(", ")
    };
    differ("failures retried", classes(policy), classes(back));
    let curve = |b: &Backoff| describe(b);
    differ(
        "backoff",
        curve(&policy.rule.backoff),
        curve(&back.rule.backoff),
    );
    differ("Retry-After", pushback(policy), pushback(back));
    differ(
        "should-retry header",
        policy.rule.should_retry.name().to_string(),
        back.rule.should_retry.name().to_string(),
    );
    differ(
        "retry budget",
        budget(policy.gates.retry_budget.as_ref()),
        budget(back.gates.retry_budget.as_ref()),
    );
    let throttle = |p: &Policy| {
        p.rule
            .throttle_backoff
            .as_ref()
            .map_or("none".into(), describe)
    };
    differ("throttle backoff", throttle(policy), throttle(back));
    differ(
        "timeout",
        wait(policy.time.timeout),
        wait(back.time.timeout),
    );
    let deadline = |p: &Policy| {
        p.time
            .limits
            .deadline
            .map_or("none".into(), |d| d.to_string())
    };
    differ("deadline", deadline(policy), deadline(back));
    differ(
        "hedge delay",
        wait(policy.hedges.delay),
        wait(back.hedges.delay),
    );
    out
}

/// A timeout or hedge delay in words.
fn wait(w: Wait) -> String {
    match w {
        Wait::None => "none".into(),
        Wait::Fixed(t) => t.to_string(),
        other => format!("{other:?}"),
    }
}

/// What a policy does with a Retry-After, in words.
fn pushback(p: &Policy) -> String {
    let b = &p.rule.pushback;
    let mut out = b.mode.name().to_string();
    if let Some(m) = b.max {
        let _ = write!(out, ", at most {m}");
    }
    if let Some(m) = b.over_backoff {
        let _ = write!(out, ", at most {m} over the backoff");
    }
    if b.retries {
        out.push_str(", a 429 or 503 naming a wait retried whatever the list");
    }
    if b.resets {
        out.push_str(", the backoff starting over after it");
    }
    if let Some((m, over)) = b.limit {
        let _ = write!(out, ", a wait over {m}: {}", over.name());
    }
    if b.from != RetryAfterFrom::Header {
        let _ = write!(out, ", read from {}", b.from.name());
    }
    out
}

/// A retry budget in words.
fn budget(b: Option<&crate::policy::BudgetRule>) -> String {
    use crate::policy::BudgetRule;
    match b {
        None => "none".into(),
        Some(BudgetRule::TokenBucket {
            max_tokens,
            token_ratio,
            ..
        }) => format!("a token bucket of {max_tokens} tokens, {token_ratio} back per success"),
        Some(BudgetRule::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            throttle_cost,
            ..
        }) => {
            let throttle =
                throttle_cost.map_or(String::new(), |c| format!(", {c} after a throttle"));
            format!(
                "the AWS quota: {capacity} tokens, {retry_cost} a retry, {timeout_cost} after a \
                 timeout{throttle}"
            )
        }
        Some(other) => format!("a {} budget", other.name()),
    }
}

/// A backoff in words, every rule of it that applies.
fn describe(b: &Backoff) -> String {
    let mut out = format!(
        "{} from {} ×{}",
        b.growth.name(),
        b.initial_delay,
        b.multiplier
    );
    match b.max_delay {
        Some(m) => {
            let _ = write!(out, ", capped at {m} {}", b.cap.name().replace('_', " "));
        }
        None => out.push_str(", uncapped"),
    }
    match b.jitter {
        Jitter::None => out.push_str(", no jitter"),
        j => {
            let _ = write!(out, ", {} jitter", j.name());
        }
    }
    match b.jitter {
        Jitter::Proportional | Jitter::Reduced => {
            let _ = write!(out, " (factor {})", b.jitter_factor);
        }
        Jitter::Additive => {
            let _ = write!(out, " (up to {})", b.jitter_max);
        }
        _ => {}
    }
    if b.min_delay > Tick::ZERO {
        let _ = write!(out, ", at least {}", b.min_delay);
    }
    if b.first_retry == crate::policy::FirstRetry::Immediate {
        out.push_str(", the first retry at once");
    }
    out
}

/// What the policy does that is not a retry setting, which no library's retry settings hold:
/// it stays the caller's code (and retrysim's keys beside the preset).
fn beside(policy: &Policy, library: &str) -> Vec<String> {
    let mut out = Vec::new();
    if policy.rule.key != crate::policy::KeyScope::None {
        out.push(format!(
            "idempotency_key = \"{}\": {library} has no setting for it; send the same key with every attempt of a call yourself",
            policy.rule.key.name()
        ));
    }
    if let Some(b) = &policy.gates.breaker {
        out.push(format!(
            "breaker (open {} after it trips): not in {library}'s retry settings; wrap the call in a circuit breaker",
            b.open_duration
        ));
    }
    if policy.gates.concurrency.is_some() {
        out.push(format!(
            "concurrency: not in {library}'s retry settings; limit calls in flight yourself"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The policy one library's preset table expands to.
    fn policy(library: &str, preset: &str) -> Policy {
        let t: Table = toml::from_str(&format!("v = {preset}")).unwrap();
        expand(library, &t["v"]).unwrap()
    }

    /// Each library's settings, expanded by its preset, then said back in its words: the words
    /// expand to the same rules, so nothing differs — the reverse is the preset's inverse.
    #[test]
    fn every_reverse_expands_back_to_its_policy() {
        let cases = [
            (
                "urllib3",
                "{ total = 4, backoff_factor = 0.5, backoff_max = 10.0, status_forcelist = [429, 502, 503, 504], allowed_methods = [\"POST\"] }",
            ),
            (
                "urllib3",
                "{ total = 2, connect = 0, read = 0, backoff_factor = 1.0, backoff_jitter = 0.25 }",
            ),
            (
                "tenacity",
                "{ stop_after_attempt = 5, wait_random_exponential = { multiplier = 0.5, max = 8.0 } }",
            ),
            (
                "tenacity",
                "{ stop_after_attempt = 3, wait_exponential = { multiplier = 1.0, max = 10.0, exp_base = 3.0 } }",
            ),
            ("tenacity", "{ stop_after_attempt = 4, wait_fixed = 2.0 }"),
            (
                "tenacity",
                "{ stop_after_attempt = 4, wait_exponential_jitter = { initial = 0.5, max = 30.0, jitter = 1.0 } }",
            ),
            (
                "botocore",
                "{ mode = \"standard\", total_max_attempts = 5 }",
            ),
            (
                "grpc",
                "'''{\"methodConfig\": [{\"name\": [{}], \"timeout\": \"10s\", \"retryPolicy\": {\"maxAttempts\": 4, \"initialBackoff\": \"0.2s\", \"maxBackoff\": \"5s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\", \"RESOURCE_EXHAUSTED\"]}}], \"retryThrottling\": {\"maxTokens\": 10, \"tokenRatio\": 0.1}}'''",
            ),
            (
                "polly",
                "{ MaxRetryAttempts = 4, Delay = \"200ms\", BackoffType = \"Exponential\", UseJitter = true, MaxDelay = \"5s\" }",
            ),
            (
                "polly",
                "{ MaxRetryAttempts = 2, Delay = \"1s\", BackoffType = \"Linear\" }",
            ),
            (
                "resilience4j",
                "{ maxAttempts = 4, waitDuration = \"500ms\", enableExponentialBackoff = true, exponentialBackoffMultiplier = 2.0, exponentialMaxWaitDuration = \"8s\", enableRandomizedWait = true, randomizedWaitFactor = 0.5 }",
            ),
            (
                "envoy",
                "{ retry_on = \"5xx\", num_retries = 3, per_try_timeout = \"1s\", retry_back_off = { base_interval = \"100ms\", max_interval = \"2s\" }, timeout = \"15s\" }",
            ),
            ("openai", "{ max_retries = 3, timeout = 30.0 }"),
            ("anthropic", "{ max_retries = 1 }"),
            ("temporal", "{}"),
            (
                "temporal",
                "{ initial_interval = \"500ms\", backoff_coefficient = 1.5, maximum_interval = \"30s\", maximum_attempts = 5, non_retryable_error_types = [\"4xx\", \"403\"], start_to_close_timeout = \"10s\", schedule_to_close_timeout = \"2m\" }",
            ),
            ("step_functions", "{}"),
            (
                "step_functions",
                "{ ErrorEquals = [\"States.TaskFailed\"], IntervalSeconds = 2, MaxAttempts = 5, BackoffRate = 1.5, MaxDelaySeconds = 20, JitterStrategy = \"FULL\", TimeoutSeconds = 30 }",
            ),
        ];
        for (library, preset) in cases {
            let p = policy(library, preset);
            let words = say(&p, library).unwrap();
            assert!(
                words.exact(),
                "{library} {preset}: {:#?}\n{}",
                words.differences,
                words.code
            );
            let back = expand(library, &words.preset).unwrap();
            assert!(differences(&p, &back, library).is_empty());
        }
    }

    /// A rule a library lacks is said, with both sides: urllib3 retries at once before its
    /// curve, and has no full jitter.
    #[test]
    fn what_a_library_cannot_say_is_said() {
        let p = policy(
            "tenacity",
            "{ stop_after_attempt = 5, wait_random_exponential = { multiplier = 0.5, max = 8.0 } }",
        );
        let words = say(&p, "urllib3").unwrap();
        assert!(
            words.differences.iter().any(|d| d.starts_with("backoff:")),
            "{:#?}",
            words.differences
        );
        assert!(
            words.code.starts_with("urllib3.util.Retry(total=4"),
            "{}",
            words.code
        );
    }
}
