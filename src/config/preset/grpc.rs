//! A gRPC service config (gRFC A6), pasted as its JSON: one `methodConfig` entry's
//! `retryPolicy` and `timeout`, and `retryThrottling`.
//!
//! - `maxAttempts` counts the first attempt; above 5 it is silently 5, as gRPC clients cap it.
//! - The n-th retry waits `min(initialBackoff · backoffMultiplier^(n−1), maxBackoff)` times
//!   U[0.8, 1.2] (A6 as revised in 2024).
//! - Server pushback replaces the backoff and restarts its curve.
//! - `retryableStatusCodes` are read through the status a retrysim failure arrives as:
//!   - UNAVAILABLE: a failed or dropped connection, a 5xx, a full line (503);
//!   - RESOURCE_EXHAUSTED: a throttle (429);
//!   - DEADLINE_EXCEEDED: an attempt's timeout;
//!   - ABORTED: a stale version;
//!   - PERMISSION_DENIED: a 403;
//!   - ALREADY_EXISTS: a key held with another payload;
//!   - INVALID_ARGUMENT: another 4xx.
//!
//!   A code no retrysim failure arrives as changes nothing.
//! - `timeout` is the call's deadline, across every attempt.
//! - `retryThrottling` is a token bucket debited by retryable failures only.
//! - `hedgingPolicy` is `hedging = "staggered"`: the k-th hedge at k · `hedgingDelay`, the next
//!   at once after a status in `nonFatalStatusCodes`, and the call ended by any other.
//!
//! gRPC's implementations differ (A6's header: "Implemented in: Java, .NET, Node, Go except
//! hedging, and C-Core except hedging"), so the preset names one: `preset.grpc` is the service
//! config's text (`"java"`, which does all of A6), or `{ implementation, service_config }`.
//! `"go"` and `"core"` (grpcio and the other wrapped languages) read a `hedgingPolicy` and
//! ignore it without a word: one attempt per call, as measured with grpcio. `"core"` also holds
//! a call whose server pushback is 0 ms until its deadline instead of retrying (measured with
//! grpcio; `retry_after = "replace_zero_hangs"`).

use std::fmt;

use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use serde_json::Value as Json;
use toml::Spanned;

use super::status::grpc_status;
use super::{Attempts, Budget, Curve, Rules};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Jitter, RetryAfter};
use crate::time::{Tick, parse_duration};

/// `preset.grpc`: a service config's JSON text, and the gRPC implementation that reads it.
#[derive(Clone)]
pub struct Grpc {
    implementation: Implementation,
    service_config: String,
}

/// The gRPC implementations A6 names.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Implementation {
    Core,
    Go,
    Java,
    Dotnet,
    Node,
}

impl Implementation {
    const ALL: [Implementation; 5] = [
        Implementation::Core,
        Implementation::Go,
        Implementation::Java,
        Implementation::Dotnet,
        Implementation::Node,
    ];

    fn name(self) -> &'static str {
        match self {
            Implementation::Core => "core",
            Implementation::Go => "go",
            Implementation::Java => "java",
            Implementation::Dotnet => "dotnet",
            Implementation::Node => "node",
        }
    }

    fn hedges(self) -> bool {
        !matches!(self, Implementation::Core | Implementation::Go)
    }
}

impl<'de> Deserialize<'de> for Grpc {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> std::result::Result<Grpc, D::Error> {
        d.deserialize_any(GrpcVisitor)
    }
}

struct GrpcVisitor;

const GRPC_FIELDS: [&str; 2] = ["implementation", "service_config"];

impl<'de> Visitor<'de> for GrpcVisitor {
    type Value = Grpc;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a service config's JSON text, or { implementation, service_config }")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> std::result::Result<Grpc, E> {
        Ok(Grpc {
            implementation: Implementation::Java,
            service_config: text.to_string(),
        })
    }

    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> std::result::Result<Grpc, M::Error> {
        let (mut implementation, mut config) = (None, None);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "implementation" => {
                    let name: String = map.next_value()?;
                    let found = Implementation::ALL.into_iter().find(|i| i.name() == name);
                    if found.is_none() {
                        // serde's own wording, which the did-you-mean reads.
                        let names = Implementation::ALL.map(|i| format!("`{}`", i.name()));
                        return Err(de::Error::custom(format!(
                            "unknown variant `{name}`, expected one of {}",
                            names.join(", ")
                        )));
                    }
                    implementation = found;
                }
                "service_config" => config = Some(map.next_value::<String>()?),
                other => return Err(de::Error::unknown_field(other, &GRPC_FIELDS)),
            }
        }
        Ok(Grpc {
            implementation: implementation.unwrap_or(Implementation::Java),
            service_config: config.ok_or_else(|| de::Error::missing_field("service_config"))?,
        })
    }
}

/// The most attempts a gRPC client makes, whatever the config says.
const MAX_ATTEMPTS: u64 = 5;

/// Service config fields that do not bear on retries: read past, not refused.
const OTHER_TOP: [&str; 3] = [
    "loadBalancingConfig",
    "loadBalancingPolicy",
    "healthCheckConfig",
];
const OTHER_METHOD: [&str; 4] = [
    "name",
    "waitForReady",
    "maxRequestMessageBytes",
    "maxResponseMessageBytes",
];

/// Reads one JSON value after another, each problem an error at the preset, by its JSON path.
struct Reader<'a> {
    check: &'a Check<'a>,
    span: std::ops::Range<usize>,
    path: &'a str,
}

impl Reader<'_> {
    fn fail<T>(&self, at: &str, why: String, allowed: &str) -> Result<T> {
        self.check.error_allowing(
            self.span.clone(),
            self.path,
            format!("{at}: {why}"),
            allowed,
        )
    }

    fn object<'j>(
        &self,
        v: &'j Json,
        at: &str,
        known: &[&str],
    ) -> Result<&'j serde_json::Map<String, Json>> {
        let Some(map) = v.as_object() else {
            return self.fail(
                at,
                format!("expected an object, found {v}"),
                "a JSON object",
            );
        };
        if let Some(key) = map.keys().find(|k| !known.contains(&k.as_str())) {
            return self.fail(
                &format!("{at}.{key}"),
                "not a field gRPC's service config has here".into(),
                &known.join(", "),
            );
        }
        Ok(map)
    }

    /// A protobuf JSON duration: seconds with an `s` ("0.1s").
    fn duration(&self, v: Option<&Json>, at: &str) -> Result<Tick> {
        let text = v.and_then(Json::as_str).unwrap_or_default();
        match text.strip_suffix('s').map(|_| parse_duration(text)) {
            Some(Ok(t)) if t > Tick::ZERO => Ok(t),
            _ => self.fail(
                at,
                format!(
                    "{} is not a positive duration",
                    v.map_or("nothing".into(), Json::to_string)
                ),
                "a string of seconds ending in s, like \"0.1s\"",
            ),
        }
    }

    fn number(&self, v: Option<&Json>, at: &str) -> Result<f64> {
        match v.and_then(Json::as_f64) {
            Some(x) if x.is_finite() && x > 0.0 => Ok(x),
            _ => self.fail(
                at,
                format!(
                    "{} is not a positive number",
                    v.map_or("nothing".into(), Json::to_string)
                ),
                "a number above 0",
            ),
        }
    }
}

pub(super) fn expand(check: &Check, preset: &Spanned<Grpc>, path: &str) -> Result<Rules> {
    let read = Reader {
        check,
        span: preset.span(),
        path,
    };
    let implementation = preset.get_ref().implementation;
    let config: Json = match serde_json::from_str(&preset.get_ref().service_config) {
        Ok(v) => v,
        Err(e) => {
            return read.fail(
                &format!("JSON line {} column {}", e.line(), e.column()),
                e.to_string(),
                "a gRPC service config as JSON text, in a TOML string ('''…''')",
            );
        }
    };
    let mut known = vec!["methodConfig", "retryThrottling"];
    known.extend(OTHER_TOP);
    let top = read.object(&config, "$", &known)?;
    let methods = top.get("methodConfig").and_then(Json::as_array);
    let method = match methods.map(Vec::as_slice) {
        Some([one]) => one,
        _ => {
            return read.fail(
                "$.methodConfig",
                "retrysim applies one method's config to a policy".into(),
                "a methodConfig of one entry: the method simulated",
            );
        }
    };
    let at = "$.methodConfig[0]";
    let mut known = vec!["retryPolicy", "hedgingPolicy", "timeout"];
    known.extend(OTHER_METHOD);
    let entry = read.object(method, at, &known)?;
    let mut rules = match (entry.get("retryPolicy"), entry.get("hedgingPolicy")) {
        (Some(policy), None) => retry_policy(&read, policy, &format!("{at}.retryPolicy"))?,
        (None, Some(policy)) => hedging_policy(&read, policy, &format!("{at}.hedgingPolicy"))?,
        (Some(_), Some(_)) => {
            return read.fail(
                at,
                "gRPC refuses a method config with both a retryPolicy and a hedgingPolicy".into(),
                "one of the two",
            );
        }
        (None, None) => {
            return read.fail(
                at,
                "no retryPolicy nor hedgingPolicy".into(),
                "one of the two",
            );
        }
    };
    let deadline = match entry.get("timeout") {
        None => None,
        Some(t) => Some(read.duration(Some(t), "$.methodConfig[0].timeout")?),
    };
    let throttling = match top.get("retryThrottling") {
        None => None,
        Some(t) => {
            let at = "$.retryThrottling";
            let t = read.object(t, at, &["maxTokens", "tokenRatio"])?;
            Some(Budget::TokenBucket {
                max_tokens: read.number(t.get("maxTokens"), &format!("{at}.maxTokens"))?,
                token_ratio: read.number(t.get("tokenRatio"), &format!("{at}.tokenRatio"))?,
            })
        }
    };
    rules.retry_budget = throttling;
    rules.deadline = deadline;
    if rules.hedge_delay.is_some() && !implementation.hedges() {
        let name = implementation.name();
        rules = Rules {
            max_attempts: Some(Attempts::AtMost(1)),
            retry_on: Some(Vec::new()),
            backoff: None,
            retry_after: None,
            hedge_delay: None,
            note: Some(format!(
                "gRPC {name} ignores the hedgingPolicy: one attempt per call"
            )),
            ..rules
        };
    }
    if implementation == Implementation::Core && rules.retry_after.is_some() {
        rules.retry_after = Some(RetryAfter::ReplaceZeroHangs);
    }
    Ok(rules)
}

/// `maxAttempts`, counting the first: 2 or more, and 5 at most, silently.
fn max_attempts(read: &Reader, p: &serde_json::Map<String, Json>, at: &str) -> Result<Attempts> {
    match p.get("maxAttempts").and_then(Json::as_u64) {
        Some(n) if n >= 2 => Ok(Attempts::AtMost(n.min(MAX_ATTEMPTS) as u32)),
        _ => read.fail(
            &format!("{at}.maxAttempts"),
            "gRPC needs 2 or more".into(),
            "a whole number ≥ 2 counting the first attempt (5 at most are made)",
        ),
    }
}

/// The retrysim failures a list of gRPC status codes names.
fn classes(read: &Reader, codes: &[Json], at: &str) -> Result<Vec<FailureClass>> {
    let mut out = Vec::new();
    for (i, code) in codes.iter().enumerate() {
        let Some(classes) = grpc_status(code) else {
            return read.fail(
                &format!("{at}[{i}]"),
                format!("{code} is not a gRPC status code"),
                "a code's name (\"UNAVAILABLE\") or number (14)",
            );
        };
        for &c in classes {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(out)
}

/// A `retryPolicy`: retries after a backoff.
fn retry_policy(read: &Reader, policy: &Json, at: &str) -> Result<Rules> {
    let fields = [
        "maxAttempts",
        "initialBackoff",
        "maxBackoff",
        "backoffMultiplier",
        "retryableStatusCodes",
    ];
    let p = read.object(policy, at, &fields)?;
    let field = |k: &str| format!("{at}.{k}");
    let attempts = max_attempts(read, p, at)?;
    let initial = read.duration(p.get("initialBackoff"), &field("initialBackoff"))?;
    let max = read.duration(p.get("maxBackoff"), &field("maxBackoff"))?;
    if max < initial {
        return read.fail(
            &field("maxBackoff"),
            format!("{max} caps every wait below initialBackoff ({initial}), which retrysim's curves cannot start from"),
            "maxBackoff ≥ initialBackoff",
        );
    }
    let growth = read.number(p.get("backoffMultiplier"), &field("backoffMultiplier"))?;
    if growth < 1.0 {
        return read.fail(
            &field("backoffMultiplier"),
            format!("{growth} shrinks the backoff, and retrysim's curves never shrink"),
            "a number ≥ 1",
        );
    }
    let codes = match p.get("retryableStatusCodes").and_then(Json::as_array) {
        Some(codes) if !codes.is_empty() => codes,
        _ => {
            return read.fail(
                &field("retryableStatusCodes"),
                "gRPC needs a list of one or more codes".into(),
                "a list of status codes, like [\"UNAVAILABLE\"]",
            );
        }
    };
    Ok(Rules {
        max_attempts: Some(attempts),
        retry_on: Some(classes(read, codes, &field("retryableStatusCodes"))?),
        backoff: Some(Curve {
            max: Some(max),
            jitter: Jitter::Proportional,
            jitter_factor: Some(0.2),
            ..Curve::exponential(initial, growth)
        }),
        retry_after: Some(RetryAfter::Replace),
        retry_after_resets: true,
        ..Rules::default()
    })
}

/// A `hedgingPolicy`: the k-th hedge at k · `hedgingDelay` ("0s", all at once, by default),
/// the next at once after a non-fatal status, and the call ended by any other.
fn hedging_policy(read: &Reader, policy: &Json, at: &str) -> Result<Rules> {
    let fields = ["maxAttempts", "hedgingDelay", "nonFatalStatusCodes"];
    let p = read.object(policy, at, &fields)?;
    let field = |k: &str| format!("{at}.{k}");
    let delay = match p.get("hedgingDelay") {
        None => Tick::ZERO,
        Some(Json::String(zero)) if parse_duration(zero) == Ok(Tick::ZERO) => Tick::ZERO,
        Some(d) => read.duration(Some(d), &field("hedgingDelay"))?,
    };
    let codes = match p.get("nonFatalStatusCodes") {
        None => Vec::new(),
        Some(Json::Array(codes)) => classes(read, codes, &field("nonFatalStatusCodes"))?,
        Some(other) => {
            return read.fail(
                &field("nonFatalStatusCodes"),
                format!("expected a list, found {other}"),
                "a list of status codes, like [\"UNAVAILABLE\"]",
            );
        }
    };
    Ok(Rules {
        max_attempts: Some(max_attempts(read, p, at)?),
        retry_on: Some(codes),
        backoff: Some(Curve::constant(Tick::ZERO)),
        hedge_delay: Some(delay),
        retry_after: Some(RetryAfter::Replace),
        ..Rules::default()
    })
}
