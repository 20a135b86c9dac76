//! The config as written: serde types mirroring the TOML, unknown keys refused everywhere.
//! The same types write a validated experiment back (the manifest's `[resolved]`, see
//! [`super::resolve`]), so each key is spelled once, here, and a field's place is its place in
//! the written table.
//!
//! No `flatten` and no `untagged` (both defeat `deny_unknown_fields` or its messages). Values
//! that are checked after parsing are `Spanned`, so their errors can point at them. Durations
//! and `max_attempts` may be a string or an integer, so they are kept as TOML values and read
//! during validation.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toml::{Spanned, Value};

#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub name: Spanned<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub seed: u64,
    pub replications: Option<Spanned<u64>>,
    pub horizon: Option<Spanned<Value>>,
    pub workload: Spanned<Workload>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool: Vec<Spanned<Tool>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub policy: Vec<Spanned<Policy>>,
    #[serde(default)]
    pub output: Output,
    pub sweep: Option<Spanned<Sweep>>,
    /// The fates of a run's attempts in the order sent, instead of drawn (a counterexample
    /// `retrysim explore` wrote); past the list every attempt is delivered.
    pub schedule: Option<Spanned<Vec<Spanned<String>>>>,
    /// For `retrysim explore`; the sweep reader passes it by.
    #[serde(default, skip_serializing)]
    pub explore: Option<Spanned<Explore>>,
    /// For `retrysim tune`; the sweep reader passes it by.
    #[serde(default, skip_serializing)]
    pub tune: Option<Spanned<Tune>>,
}

#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub tasks: Option<Spanned<u64>>,
    pub duration: Option<Spanned<Value>>,
    /// The task's calls, in stages, as a service's: `"db"`, `["db", "cache"]` (together), or
    /// `{ call = "db", optional = true, times = 10 }`.
    pub calls: Option<Spanned<Vec<Spanned<Value>>>>,
    pub clients: Option<Spanned<u32>>,
    pub callers: Option<Spanned<u32>>,
    pub arrival: Option<Spanned<String>>,
    pub mean_interarrival: Option<Spanned<Value>>,
    pub rate: Option<Spanned<Vec<Spanned<RatePoint>>>>,
    pub rate_scale: Option<Spanned<f64>>,
    /// `arrival = "recorded"`: the file of the arrivals replayed, a column `at`.
    pub arrivals: Option<Spanned<String>>,
    pub agent: Option<Spanned<Agent>>,
    pub crash: Option<Spanned<Crash>>,
}

/// `crash = { mean_uptime = "60s", at = "15ms", lease = "10s" }`: the workers that hold calls
/// crash, at a rate, at a scripted point, or both; `renewed = false` holds each lease for a
/// fixed term rather than renewing it while the worker lives.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Crash {
    pub mean_uptime: Option<Spanned<Value>>,
    pub at: Option<Spanned<Value>>,
    pub lease: Spanned<Value>,
    pub renewed: Option<Spanned<bool>>,
    pub max_deliveries: Option<Spanned<u32>>,
    pub stall: Option<Spanned<Value>>,
}

/// `agent = { turns = {…}, result_tokens = 300 }`: tasks are loops of turns over `calls`.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Agent {
    pub turns: Spanned<Latency>,
    pub result_tokens: Option<Spanned<u32>>,
}

/// `replan = { from = "start", max = 3 }`: an agent loop's task-level retry.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Replan {
    pub from: Spanned<String>,
    pub max: Option<Spanned<u32>>,
}

/// One point of `[[workload.rate]]`.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RatePoint {
    pub at: Spanned<Value>,
    pub per_second: Spanned<f64>,
    pub ramp: Option<Spanned<bool>>,
}

#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Tool {
    pub name: Spanned<String>,
    pub kind: Option<Spanned<String>>,
    pub idempotent: Option<Spanned<bool>>,
    pub request_loss: Option<Spanned<f64>>,
    pub server_error: Option<Spanned<f64>>,
    pub reply_loss: Option<Spanned<f64>>,
    pub throttled: Option<Spanned<f64>>,
    pub forbidden: Option<Spanned<f64>>,
    pub invalid: Option<Spanned<f64>>,
    pub loss_seen_as: Option<Spanned<String>>,
    pub request_latency: Option<Spanned<Latency>>,
    pub service_time: Option<Spanned<Latency>>,
    pub reply_latency: Option<Spanned<Latency>>,
    pub lookup_time: Option<Spanned<Value>>,
    pub lookup_failure: Option<Spanned<f64>>,
    pub commit_lag: Option<Spanned<Value>>,
    pub cooperative: Option<Spanned<bool>>,
    pub workers: Option<Spanned<Value>>,
    pub line_limit: Option<Spanned<Value>>,
    pub line_order: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outages: Vec<Spanned<Outage>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub capacity: Vec<Spanned<CapacityWindow>>,
    pub key_retention: Option<Spanned<Value>>,
    pub drop_expired: Option<Spanned<bool>>,
    pub abandon_at_deadline: Option<Spanned<bool>>,
    pub version_check: Option<Spanned<String>>,
    pub rate_limit: Option<Spanned<RateLimit>>,
    pub slowdown: Option<Spanned<Value>>,
    pub connect_failure: Option<Spanned<f64>>,
    pub error_after_commit: Option<Spanned<f64>>,
    pub should_retry_header: Option<Spanned<bool>>,
    pub retry_after_ms: Option<Spanned<bool>>,
    pub fencing: Option<Spanned<bool>>,
    pub zones: Option<Spanned<Vec<Spanned<String>>>>,
    pub replicas: Option<Spanned<u32>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replica: Vec<Spanned<Replica>>,
    pub retry_after: Option<Spanned<Value>>,
    pub script: Option<Spanned<Vec<Spanned<ScriptStep>>>>,
    pub burst: Option<Spanned<Burst>>,
    /// A recorded health, stretch by stretch: `health = "data/<name>/<tool>-health.csv"`.
    pub health: Option<Spanned<String>>,
    /// A service's calls, in stages: `"db"`, `["db", "cache"]` (together), or
    /// `{ call = "db", optional = true }`; kept as values and read in validation.
    pub calls: Option<Spanned<Vec<Spanned<Value>>>>,
    pub overloaded: Option<Spanned<f64>>,
    pub model: Option<Spanned<Model>>,
    pub tokens_per_minute: Option<Spanned<TokensPerMinute>>,
    pub price: Option<Spanned<Price>>,
    pub reserve: Option<Spanned<f64>>,
}

/// `model = { input_tokens = {…}, output_tokens = {…}, max_tokens = 4096, … }`: the provider
/// behind a tool of kind `model`. Token counts are distributions written as latencies are, in
/// whole tokens.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Model {
    pub input_tokens: Spanned<Latency>,
    pub output_tokens: Spanned<Latency>,
    pub max_tokens: Spanned<u32>,
    pub first_token: Spanned<Latency>,
    pub prefill_tokens_per_second: Option<Spanned<f64>>,
    pub tokens_per_second: Spanned<f64>,
    pub stream_break: Option<Spanned<f64>>,
    pub stream_break_per_token: Option<Spanned<f64>>,
}

/// `tokens_per_minute = { limit = 200000, burst = 200000, scope = "tool" }`.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct TokensPerMinute {
    pub limit: Spanned<u64>,
    pub burst: Option<Spanned<u64>>,
    pub scope: Option<Spanned<String>>,
    pub retry_after_unit: Option<Spanned<Value>>,
}

/// `price = { input_per_million = 2.5, output_per_million = 10, per_call = 0.001 }`, dollars.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Price {
    pub input_per_million: Option<Spanned<f64>>,
    pub output_per_million: Option<Spanned<f64>>,
    pub per_call: Option<Spanned<f64>>,
}

/// `{ per_second = 10, burst = 20, scope = "tool" }`: a token bucket in front of a tool.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateLimit {
    pub per_second: Option<Spanned<f64>>,
    pub per_minute: Option<Spanned<f64>>,
    pub burst: Option<Spanned<u32>>,
    pub scope: Option<Spanned<String>>,
    pub retry_after_unit: Option<Spanned<Value>>,
}

/// `{ from = "30s", until = "40s", fraction = 0.5 }`: a window of reduced capacity.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct CapacityWindow {
    pub from: Spanned<Value>,
    pub until: Spanned<Value>,
    pub fraction: Spanned<f64>,
    pub zone: Option<Spanned<String>>,
}

/// `{ from = "10s", until = "40s", mode = "fail_fast" }`: a window in which a tool is down.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub from: Spanned<Value>,
    pub until: Spanned<Value>,
    pub mode: Option<Spanned<String>>,
    pub zone: Option<Spanned<String>>,
}

/// `outlier_detection = { … }`: Envoy's consecutive-5xx ejection, in its own names.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct OutlierDetection {
    pub consecutive_5xx: Option<Spanned<u32>>,
    pub base_ejection_time: Option<Spanned<Value>>,
    pub max_ejection_time: Option<Spanned<Value>>,
    pub max_ejection_percent: Option<Spanned<f64>>,
}

/// `burst = { good = "60s", bad = "3s", in_bad = { server_error = 0.9 } }`: faults that come in
/// spells.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    pub good: Spanned<Value>,
    pub bad: Spanned<Value>,
    pub in_bad: Option<Spanned<BadFaults>>,
    pub domain: Option<Spanned<String>>,
    pub per_replica: Option<Spanned<bool>>,
}

/// The faults of a burst's bad state, each the tool's own where it is left out.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct BadFaults {
    pub request_loss: Option<Spanned<f64>>,
    pub server_error: Option<Spanned<f64>>,
    pub reply_loss: Option<Spanned<f64>>,
    pub throttled: Option<Spanned<f64>>,
    pub error_after_commit: Option<Spanned<f64>>,
}

/// `[[tool.replica]]`: what one replica does otherwise than its tool.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Replica {
    pub index: Spanned<u32>,
    pub service_time: Option<Spanned<Latency>>,
    pub request_loss: Option<Spanned<f64>>,
    pub server_error: Option<Spanned<f64>>,
    pub reply_loss: Option<Spanned<f64>>,
    pub throttled: Option<Spanned<f64>>,
    pub error_after_commit: Option<Spanned<f64>>,
}

/// `{ outcome = "5xx", after = 6 }`: one listed outcome of a scripted tool.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ScriptStep {
    pub outcome: Spanned<String>,
    pub after: Spanned<Value>,
    pub retry_after: Option<Spanned<Value>>,
}

/// `{ dist = "...", ... }`: which other keys apply depends on `dist`, checked in validation.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    pub dist: Spanned<String>,
    pub value: Option<Spanned<Value>>,
    pub min: Option<Spanned<Value>>,
    pub max: Option<Spanned<Value>>,
    pub shape: Option<Spanned<f64>>,
    pub mean: Option<Spanned<Value>>,
    pub median: Option<Spanned<Value>>,
    pub sigma: Option<Spanned<f64>>,
    pub p99: Option<Spanned<Value>>,
    pub scale: Option<Spanned<Value>>,
    pub sd: Option<Spanned<Value>>,
    pub file: Option<Spanned<String>>,
}

impl Latency {
    /// A distribution `dist` with none of its parameters written yet.
    pub fn of_dist(dist: Spanned<String>) -> Latency {
        Latency {
            dist,
            value: None,
            min: None,
            max: None,
            shape: None,
            mean: None,
            median: None,
            sigma: None,
            p99: None,
            scale: None,
            sd: None,
            file: None,
        }
    }
}

#[derive(Deserialize, Serialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Required of a `[[policy]]`; an edge's policy (`edge."api->db"`) has none.
    pub name: Option<Spanned<String>>,
    pub max_attempts: Option<Spanned<Value>>,
    pub retry_on: Option<Spanned<Vec<Spanned<String>>>>,
    pub retry_after: Option<Spanned<String>>,
    pub timeout: Option<Spanned<Value>>,
    pub idempotency_key: Option<Spanned<String>>,
    #[serde(default)]
    pub safety_gate: bool,
    #[serde(default)]
    pub lookup_before_retry: bool,
    pub balancer: Option<Spanned<String>>,
    pub peak_ewma_decay: Option<Spanned<Value>>,
    pub retry_host: Option<Spanned<String>>,
    pub outlier_detection: Option<Spanned<OutlierDetection>>,
    pub should_retry: Option<Spanned<String>>,
    pub payload_drift: Option<Spanned<f64>>,
    pub hedge_delay: Option<Spanned<Value>>,
    pub hedging: Option<Spanned<String>>,
    pub retry_after_jitter: Option<Spanned<Value>>,
    pub retry_after_max: Option<Spanned<Value>>,
    pub retry_after_resets: Option<Spanned<bool>>,
    pub retry_after_over_backoff: Option<Spanned<Value>>,
    pub retry_after_retries: Option<Spanned<bool>>,
    pub retry_after_limit: Option<Spanned<Value>>,
    pub retry_after_over_limit: Option<Spanned<String>>,
    pub retry_after_from: Option<Spanned<String>>,
    pub scope: Option<Spanned<String>>,
    pub throttle_backoff: Option<Spanned<Backoff>>,
    pub timeout_tie: Option<Spanned<String>>,
    pub backoff: Option<Spanned<Backoff>>,
    pub layers: Option<Spanned<Vec<Spanned<Layer>>>>,
    pub reset_each_layer: Option<Spanned<bool>>,
    pub deadline: Option<Spanned<Value>>,
    pub dispatch_cap: Option<Spanned<u32>>,
    pub cancel_after: Option<Spanned<Value>>,
    pub breaker: Option<Spanned<Breaker>>,
    pub concurrency: Option<Spanned<Concurrency>>,
    pub send_rate: Option<Spanned<SendRate>>,
    pub admission: Option<Spanned<Admission>>,
    pub retry_budget: Option<Spanned<RetryBudget>>,
    pub calls: Option<Spanned<Vec<Spanned<String>>>>,
    /// The policies of the call graph's edges this configuration names, by edge
    /// (`"api->db"`); an edge it does not name uses the configuration's own.
    pub edge: Option<Spanned<BTreeMap<String, Spanned<Policy>>>>,
    pub deadline_propagation: Option<Spanned<String>>,
    pub deadline_margin: Option<Spanned<Value>>,
    /// An edge's fallbacks, in order, and the cooldown that rests its primary.
    pub fallback: Option<Spanned<Vec<Spanned<String>>>>,
    pub cooldown_after: Option<Spanned<u32>>,
    pub cooldown: Option<Spanned<Value>>,
    /// A broken stream is resumed where it broke rather than started over.
    pub resume: Option<Spanned<bool>>,
    pub send_tokens: Option<Spanned<SendTokens>>,
    pub replan: Option<Spanned<Replan>>,
    pub durability: Option<Spanned<String>>,
    pub release: Option<Spanned<String>>,
    pub admit_within_lease: Option<Spanned<bool>>,
    /// Never written back: a resolved policy holds what its preset expanded to.
    #[serde(skip_serializing)]
    pub preset: Option<Spanned<crate::config::preset::Preset>>,
    /// What a preset's library ignores, for the policy's description; never read from a file.
    #[serde(skip)]
    pub note: Option<String>,
}

/// `send_rate = { … }`: the client-side send-rate limiter that adapts to throttles.
#[derive(Deserialize, Serialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct SendRate {
    pub min_rate: Option<Spanned<f64>>,
    pub beta: Option<Spanned<f64>>,
    pub scale: Option<Spanned<f64>>,
    pub smoothing: Option<Spanned<f64>>,
    pub measure_bin: Option<Spanned<Value>>,
}

/// `send_tokens = { per_minute = 90000, burst = 90000 }`: a client-side bucket of a model's
/// tokens.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct SendTokens {
    pub per_minute: Spanned<f64>,
    pub burst: Option<Spanned<f64>>,
}

/// `concurrency = { limit = 4, kind = "aimd", queue = 16, ... }`: a limit on calls in flight.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Concurrency {
    pub kind: Option<Spanned<String>>,
    pub limit: Spanned<u32>,
    pub min: Option<Spanned<u32>>,
    pub max: Option<Spanned<u32>>,
    pub increase: Option<Spanned<f64>>,
    pub decrease: Option<Spanned<f64>>,
    pub queue: Option<Spanned<u32>>,
}

/// One element of `layers`: a retry layer, outermost first.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub name: Spanned<String>,
    pub max_attempts: Option<Spanned<Value>>,
    pub retry_on: Option<Spanned<Vec<Spanned<String>>>>,
    pub backoff: Option<Spanned<Backoff>>,
}

#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Backoff {
    pub kind: Option<Spanned<String>>,
    pub initial_delay: Option<Spanned<Value>>,
    pub multiplier: Option<Spanned<f64>>,
    pub max_delay: Option<Spanned<Value>>,
    pub jitter: Option<Spanned<String>>,
    pub count_from: Option<Spanned<u32>>,
    pub cap: Option<Spanned<String>>,
    pub jitter_factor: Option<Spanned<f64>>,
    pub jitter_max: Option<Spanned<Value>>,
    pub min_delay: Option<Spanned<Value>>,
    pub first_retry: Option<Spanned<String>>,
}

#[derive(Deserialize, Serialize, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct Output {
    #[serde(default)]
    pub intents: bool,
    #[serde(default)]
    pub attempts: bool,
    pub charts: Option<Spanned<Vec<Spanned<String>>>>,
    pub chart_formats: Option<Spanned<Vec<Spanned<String>>>>,
    pub timeseries: Option<Spanned<Value>>,
}

/// `[sweep]`: the axes to vary and how to combine them.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub mode: Option<Spanned<String>>,
    pub replications: Option<Spanned<u64>>,
    pub axis: Spanned<Vec<Spanned<Axis>>>,
}

/// `[[sweep.axis]]`: a key path with a list of `values`, or a `start`, `stop`, `step` range.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Axis {
    pub path: Spanned<String>,
    pub values: Option<Spanned<Vec<Spanned<Value>>>>,
    pub start: Option<Spanned<Value>>,
    pub stop: Option<Spanned<Value>>,
    pub step: Option<Spanned<Value>>,
}

/// `breaker = { ... }`: a circuit breaker per tool; which trip rule applies depends on the keys
/// given, checked in validation.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Breaker {
    pub consecutive_failures: Option<Spanned<u32>>,
    pub failure_rate: Option<Spanned<f64>>,
    pub window: Option<Spanned<Value>>,
    pub minimum_calls: Option<Spanned<u32>>,
    pub refuses: Option<Spanned<String>>,
    pub open_duration: Option<Spanned<Value>>,
    pub half_open_probes: Option<Spanned<u32>>,
    pub counts: Option<Spanned<Vec<Spanned<String>>>>,
}

/// `retry_budget = { kind = "token_bucket", ... }`: which keys apply depends on `kind`.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RetryBudget {
    pub kind: Spanned<String>,
    pub max_tokens: Option<Spanned<f64>>,
    pub token_ratio: Option<Spanned<f64>>,
    pub debit_on: Option<Spanned<String>>,
    pub capacity: Option<Spanned<f64>>,
    pub retry_cost: Option<Spanned<f64>>,
    pub timeout_cost: Option<Spanned<f64>>,
    pub success_credit: Option<Spanned<f64>>,
    pub throttle_cost: Option<Spanned<f64>>,
    pub ttl: Option<Spanned<Value>>,
    pub min_per_second: Option<Spanned<f64>>,
    pub percent: Option<Spanned<f64>>,
    pub size: Option<Spanned<f64>>,
    pub deposit: Option<Spanned<f64>>,
    pub deposit_on: Option<Spanned<String>>,
    pub ratio: Option<Spanned<f64>>,
}

impl RetryBudget {
    /// A budget of `kind` with none of its settings written yet.
    pub fn of_kind(kind: Spanned<String>) -> RetryBudget {
        RetryBudget {
            kind,
            max_tokens: None,
            token_ratio: None,
            debit_on: None,
            capacity: None,
            retry_cost: None,
            timeout_cost: None,
            success_credit: None,
            throttle_cost: None,
            ttl: None,
            min_per_second: None,
            percent: None,
            size: None,
            deposit: None,
            deposit_on: None,
            ratio: None,
        }
    }
}

/// `admission = { reserve, min_attempt, timeout_cap }`: cooperative admission.
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Admission {
    pub reserve: Spanned<Value>,
    pub min_attempt: Spanned<Value>,
    pub timeout_cap: Spanned<Value>,
}

/// The `[tune]` table as written (validated by `tune::spec`).
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Tune {
    pub policy: Option<Spanned<String>>,
    pub search: Spanned<toml::Table>,
    pub objective: Spanned<String>,
    #[serde(default)]
    pub constraints: Vec<Spanned<String>>,
    pub budget: Option<Spanned<u64>>,
    pub validation: Option<Spanned<u64>>,
    pub finalists: Option<Spanned<u64>>,
}

/// The `[explore]` table as written (validated by `explore::spec`).
#[derive(Deserialize, Serialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Explore {
    pub faults: Option<Spanned<i64>>,
    pub tasks: Option<Spanned<i64>>,
    pub invariants: Option<Spanned<toml::Table>>,
    pub stop_reasons: Option<Spanned<Vec<Spanned<String>>>>,
}
