//! Presets: a retry library's settings in its own words — its names, its counting, its
//! defaults — expanded into retrysim's rules before the policy is read, so the manifest's
//! `[resolved]` table shows what each library does, key by key.
//!
//! `preset.<library> = { … }` in a `[[policy]]` names one library. Each module holds one
//! library: its settings as the library spells them, and the expansion. A setting whose rule
//! retrysim cannot express exactly is refused where it is written, never approximated.

mod botocore;
mod envoy;
mod grpc;
mod polly;
mod resilience4j;
mod stainless;
mod status;
mod step_functions;
mod temporal;
mod tenacity;
mod urllib3;
pub mod words;

use std::ops::Range;

use serde::Deserialize;
use toml::{Spanned, Value};

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::FailureClass;
use crate::policy::{
    Cap, FirstRetry, Growth, Hedging, Jitter, OverLimit, RetryAfter, RetryAfterFrom, ShouldRetry,
};
use crate::time::{TICKS_PER_SECOND, Tick};

/// `preset = { <library> = { … } }`: exactly one library's settings.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub urllib3: Option<Spanned<urllib3::Retry>>,
    pub tenacity: Option<Spanned<tenacity::Retrying>>,
    pub botocore: Option<Spanned<botocore::Retries>>,
    /// A gRPC service config, pasted as its JSON text, and the implementation reading it.
    pub grpc: Option<Spanned<grpc::Grpc>>,
    pub polly: Option<Spanned<polly::RetryStrategyOptions>>,
    pub resilience4j: Option<Spanned<resilience4j::RetryConfig>>,
    pub envoy: Option<Spanned<envoy::RetryPolicy>>,
    /// The OpenAI Python SDK's own retries, as of v3.3.1+30.
    pub openai: Option<Spanned<stainless::Client>>,
    /// The Anthropic Python SDK's own retries, as of its current release, 2.17.0 (or an older
    /// one named by `version`).
    pub anthropic: Option<Spanned<stainless::Client>>,
    /// A Temporal activity's retry policy and timeouts, as of server v1.30.0.
    pub temporal: Option<Spanned<temporal::RetryPolicy>>,
    /// An AWS Step Functions Task state's retrier, in the States Language.
    pub step_functions: Option<Spanned<step_functions::Retrier>>,
}

/// What a library's settings come to in retrysim's keys; `None` leaves a key to the policy.
#[derive(Default)]
struct Rules {
    max_attempts: Option<Attempts>,
    retry_on: Option<Vec<FailureClass>>,
    backoff: Option<Curve>,
    throttle_backoff: Option<Curve>,
    retry_after: Option<RetryAfter>,
    retry_after_max: Option<Tick>,
    retry_after_over_backoff: Option<Tick>,
    retry_after_retries: bool,
    retry_after_resets: bool,
    /// The longest Retry-After heeded, and what a longer one does.
    retry_after_limit: Option<(Tick, OverLimit)>,
    /// Which of a 429's headers the client reads first.
    retry_after_from: Option<RetryAfterFrom>,
    /// What the client does with the server's should-retry header.
    should_retry: Option<ShouldRetry>,
    retry_budget: Option<Budget>,
    timeout: Option<Tick>,
    deadline: Option<Tick>,
    /// A send-rate limiter with botocore's constants.
    send_rate: bool,
    /// Staggered hedges, this far apart.
    hedge_delay: Option<Tick>,
    /// A setting the library reads and ignores, said beside the policy's description.
    note: Option<String>,
}

/// A cap on attempts, counting the first.
#[derive(Clone, Copy)]
enum Attempts {
    AtMost(u32),
    Unlimited,
}

/// A backoff curve, in retrysim's terms.
#[derive(Clone, Copy)]
struct Curve {
    growth: Growth,
    initial: Tick,
    multiplier: f64,
    max: Option<Tick>,
    cap: Cap,
    jitter: Jitter,
    jitter_factor: Option<f64>,
    jitter_max: Option<Tick>,
    min: Option<Tick>,
    first_retry: FirstRetry,
}

impl Curve {
    /// `initial · multiplier^(n−1)`, uncapped and without jitter: the start every library's
    /// curve is written from.
    fn exponential(initial: Tick, multiplier: f64) -> Curve {
        Curve {
            growth: Growth::Exponential,
            initial,
            multiplier,
            max: None,
            cap: Cap::BeforeJitter,
            jitter: Jitter::None,
            jitter_factor: None,
            jitter_max: None,
            min: None,
            first_retry: FirstRetry::Backoff,
        }
    }

    fn constant(delay: Tick) -> Curve {
        Curve {
            growth: Growth::Constant,
            ..Curve::exponential(delay, 1.0)
        }
    }
}

/// A retry budget, in retrysim's terms.
enum Budget {
    /// gRPC's `retryThrottling`, debiting only the failures the policy retries.
    TokenBucket { max_tokens: f64, token_ratio: f64 },
    /// The AWS SDKs' retry quota.
    AwsStandard {
        retry_cost: f64,
        timeout_cost: f64,
        throttle_cost: Option<f64>,
    },
}

/// The policy as written, with its preset's rules filled in; `None` without a preset. A key
/// the preset sets may not also be written beside it: the preset is the one place it is said.
pub(super) fn expand(check: &Check, raw: &raw::Policy, path: &str) -> Result<Option<raw::Policy>> {
    let Some(preset) = &raw.preset else {
        return Ok(None);
    };
    let at = format!("{path}.preset");
    let named = Library::named(preset.get_ref());
    let library = match named.as_slice() {
        [one] => *one,
        [] => {
            return check.error_allowing(
                preset.span(),
                &at,
                "the preset names no library".into(),
                LIBRARIES,
            );
        }
        [_, second, ..] => {
            return check.error_allowing(
                second.span(),
                &format!("{at}.{}", second.name()),
                "a policy follows one library's settings".into(),
                "one library per [[policy]]: write another policy for the other",
            );
        }
    };
    let (span, name) = (library.span(), library.name());
    let rules = library.expand(check, &format!("{at}.{name}"))?;
    let mut out = raw.clone();
    Fill {
        check,
        span,
        path,
        library: name,
    }
    .fill(&mut out, rules)?;
    Ok(Some(out))
}

/// The library a preset names, with its settings as written.
#[derive(Clone, Copy)]
enum Library<'a> {
    Urllib3(&'a Spanned<urllib3::Retry>),
    Tenacity(&'a Spanned<tenacity::Retrying>),
    Botocore(&'a Spanned<botocore::Retries>),
    Grpc(&'a Spanned<grpc::Grpc>),
    Polly(&'a Spanned<polly::RetryStrategyOptions>),
    Resilience4j(&'a Spanned<resilience4j::RetryConfig>),
    Envoy(&'a Spanned<envoy::RetryPolicy>),
    OpenAi(&'a Spanned<stainless::Client>),
    Anthropic(&'a Spanned<stainless::Client>),
    Temporal(&'a Spanned<temporal::RetryPolicy>),
    StepFunctions(&'a Spanned<step_functions::Retrier>),
}

impl<'a> Library<'a> {
    /// The libraries `preset` names, in the order of its fields.
    fn named(preset: &'a Preset) -> Vec<Library<'a>> {
        let p = preset;
        [
            p.urllib3.as_ref().map(Library::Urllib3),
            p.tenacity.as_ref().map(Library::Tenacity),
            p.botocore.as_ref().map(Library::Botocore),
            p.grpc.as_ref().map(Library::Grpc),
            p.polly.as_ref().map(Library::Polly),
            p.resilience4j.as_ref().map(Library::Resilience4j),
            p.envoy.as_ref().map(Library::Envoy),
            p.openai.as_ref().map(Library::OpenAi),
            p.anthropic.as_ref().map(Library::Anthropic),
            p.temporal.as_ref().map(Library::Temporal),
            p.step_functions.as_ref().map(Library::StepFunctions),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// Its key in `preset = { … }`.
    fn name(self) -> &'static str {
        match self {
            Library::Urllib3(_) => "urllib3",
            Library::Tenacity(_) => "tenacity",
            Library::Botocore(_) => "botocore",
            Library::Grpc(_) => "grpc",
            Library::Polly(_) => "polly",
            Library::Resilience4j(_) => "resilience4j",
            Library::Envoy(_) => "envoy",
            Library::OpenAi(_) => "openai",
            Library::Anthropic(_) => "anthropic",
            Library::Temporal(_) => "temporal",
            Library::StepFunctions(_) => "step_functions",
        }
    }

    /// Where its settings stand in the file.
    fn span(self) -> Range<usize> {
        match self {
            Library::Urllib3(s) => s.span(),
            Library::Tenacity(s) => s.span(),
            Library::Botocore(s) => s.span(),
            Library::Grpc(s) => s.span(),
            Library::Polly(s) => s.span(),
            Library::Resilience4j(s) => s.span(),
            Library::Envoy(s) => s.span(),
            Library::OpenAi(s) | Library::Anthropic(s) => s.span(),
            Library::Temporal(s) => s.span(),
            Library::StepFunctions(s) => s.span(),
        }
    }

    /// Its settings in retrysim's rules, each checked at `at`.
    fn expand(self, check: &Check, at: &str) -> Result<Rules> {
        match self {
            Library::Urllib3(s) => urllib3::expand(check, s, at),
            Library::Tenacity(s) => tenacity::expand(check, s, at),
            Library::Botocore(s) => botocore::expand(check, s, at),
            Library::Grpc(s) => grpc::expand(check, s, at),
            Library::Polly(s) => polly::expand(check, s, at),
            Library::Resilience4j(s) => resilience4j::expand(check, s, at),
            Library::Envoy(s) => envoy::expand(check, s, at),
            Library::OpenAi(s) => stainless::expand(check, s, stainless::Sdk::OpenAi, at),
            Library::Anthropic(s) => stainless::expand(check, s, stainless::Sdk::Anthropic, at),
            Library::Temporal(s) => temporal::expand(check, s, at),
            Library::StepFunctions(s) => step_functions::expand(check, s, at),
        }
    }
}

const LIBRARIES: &str = "one of urllib3, tenacity, botocore, grpc, polly, resilience4j, envoy, \
openai, anthropic, temporal, step_functions: `preset.urllib3 = { total = 3 }`";

/// Writes a preset's rules into a policy, each at the preset's place in the file.
struct Fill<'a> {
    check: &'a Check<'a>,
    span: Range<usize>,
    path: &'a str,
    library: &'a str,
}

impl Fill<'_> {
    fn fill(&self, out: &mut raw::Policy, rules: Rules) -> Result<()> {
        if let Some(layers) = &out.layers {
            return self.taken(layers.span(), "layers");
        }
        let text = |s: &str| Value::String(s.into());
        let ticks = |t: Tick| Value::String(t.to_string());
        if let Some(n) = rules.max_attempts {
            let n = match n {
                Attempts::AtMost(n) => Value::Integer(n.into()),
                Attempts::Unlimited => text("unlimited"),
            };
            self.put(&mut out.max_attempts, "max_attempts", n)?;
        }
        if let Some(classes) = rules.retry_on {
            let names = classes
                .iter()
                .map(|c| self.spanned(c.name().to_string()))
                .collect();
            self.put(&mut out.retry_on, "retry_on", names)?;
        }
        if let Some(curve) = rules.backoff {
            self.put(&mut out.backoff, "backoff", self.curve(curve))?;
        }
        if let Some(curve) = rules.throttle_backoff {
            let curve = self.curve(curve);
            self.put(&mut out.throttle_backoff, "throttle_backoff", curve)?;
        }
        if let Some(rule) = rules.retry_after {
            self.put(&mut out.retry_after, "retry_after", rule.name().into())?;
        }
        out.note = rules.note;
        if let Some(max) = rules.retry_after_max {
            self.put(&mut out.retry_after_max, "retry_after_max", ticks(max))?;
        }
        if let Some(over) = rules.retry_after_over_backoff {
            let key = "retry_after_over_backoff";
            self.put(&mut out.retry_after_over_backoff, key, ticks(over))?;
        }
        if rules.retry_after_retries {
            self.put(&mut out.retry_after_retries, "retry_after_retries", true)?;
        }
        if rules.retry_after_resets {
            self.put(&mut out.retry_after_resets, "retry_after_resets", true)?;
        }
        if let Some((most, over)) = rules.retry_after_limit {
            self.put(&mut out.retry_after_limit, "retry_after_limit", ticks(most))?;
            let key = "retry_after_over_limit";
            self.put(&mut out.retry_after_over_limit, key, over.name().into())?;
        }
        if let Some(from) = rules.retry_after_from {
            self.put(
                &mut out.retry_after_from,
                "retry_after_from",
                from.name().into(),
            )?;
        }
        if let Some(rule) = rules.should_retry {
            self.put(&mut out.should_retry, "should_retry", rule.name().into())?;
        }
        if let Some(budget) = rules.retry_budget {
            self.put(&mut out.retry_budget, "retry_budget", self.budget(budget))?;
        }
        if let Some(t) = rules.timeout {
            self.put(&mut out.timeout, "timeout", ticks(t))?;
        }
        if let Some(t) = rules.deadline {
            self.put(&mut out.deadline, "deadline", ticks(t))?;
        }
        if let Some(t) = rules.hedge_delay {
            self.put(&mut out.hedge_delay, "hedge_delay", ticks(t))?;
            let staggered = Hedging::Staggered.name().to_string();
            self.put(&mut out.hedging, "hedging", staggered)?;
        }
        if rules.send_rate {
            self.put(&mut out.send_rate, "send_rate", raw::SendRate::default())?;
        }
        Ok(())
    }

    fn spanned<T>(&self, value: T) -> Spanned<T> {
        Spanned::new(self.span.clone(), value)
    }

    /// Sets `key` to `value`, unless the policy wrote it already.
    fn put<T>(&self, slot: &mut Option<Spanned<T>>, key: &str, value: T) -> Result<()> {
        match slot {
            Some(written) => self.taken(written.span(), key),
            None => {
                *slot = Some(self.spanned(value));
                Ok(())
            }
        }
    }

    fn taken(&self, span: Range<usize>, key: &str) -> Result<()> {
        self.check.error_allowing(
            span,
            &format!("{}.{key}", self.path),
            format!("`{key}` is the {} preset's to set", self.library),
            &format!(
                "the setting in the library's own words inside `preset.{}`, or no preset",
                self.library
            ),
        )
    }

    fn curve(&self, c: Curve) -> raw::Backoff {
        let s = |v: &str| Some(self.spanned(v.to_string()));
        let t = |v: Tick| Some(self.spanned(Value::String(v.to_string())));
        raw::Backoff {
            kind: s(c.growth.name()),
            initial_delay: t(c.initial),
            multiplier: Some(self.spanned(c.multiplier)),
            max_delay: Some(self.spanned(Value::String(
                c.max.map_or("none".into(), |m| m.to_string()),
            ))),
            cap: s(c.cap.name()),
            jitter: s(c.jitter.name()),
            jitter_factor: c.jitter_factor.map(|f| self.spanned(f)),
            jitter_max: c.jitter_max.and_then(t),
            min_delay: c.min.and_then(t),
            first_retry: s(c.first_retry.name()),
            count_from: None,
        }
    }

    fn budget(&self, b: Budget) -> raw::RetryBudget {
        let f = |v: f64| Some(self.spanned(v));
        let mut out = raw::RetryBudget::of_kind(self.spanned(String::new()));
        match b {
            Budget::TokenBucket {
                max_tokens,
                token_ratio,
            } => {
                out.kind = self.spanned("token_bucket".into());
                out.max_tokens = f(max_tokens);
                out.token_ratio = f(token_ratio);
                out.debit_on = Some(self.spanned("retryable".into()));
            }
            Budget::AwsStandard {
                retry_cost,
                timeout_cost,
                throttle_cost,
            } => {
                out.kind = self.spanned("aws_standard".into());
                out.retry_cost = f(retry_cost);
                out.timeout_cost = f(timeout_cost);
                out.throttle_cost = throttle_cost.and_then(f);
            }
        }
        out
    }
}

/// A number of seconds, as urllib3 and tenacity take them, to the nearest tick.
/// The attempts a library's count of retries makes (the retries and the first), or `default`
/// attempts where it is not written; an error at the count the user wrote where the sum is more
/// than retrysim counts.
fn attempts_after(
    check: &Check,
    retries: Option<&Spanned<u32>>,
    default: u32,
    path: &str,
) -> Result<u32> {
    let Some(retries) = retries else {
        return Ok(default);
    };
    let n = *retries.get_ref();
    match n.checked_add(1) {
        Some(attempts) => Ok(attempts),
        None => check.error_allowing(
            retries.span(),
            path,
            format!(
                "{n} retries and the first attempt are more attempts than retrysim counts ({})",
                u32::MAX
            ),
            &format!("a count of retries from 0 to {}", u32::MAX - 1),
        ),
    }
}

fn seconds(check: &Check, value: &Spanned<f64>, path: &str) -> Result<Tick> {
    let s = *value.get_ref();
    if !(0.0..=1e12).contains(&s) {
        return check.error_allowing(
            value.span(),
            path,
            format!("{s} is not a number of seconds"),
            "a number of seconds from 0 up, like 0.5",
        );
    }
    Ok(Tick(libm::round(s * TICKS_PER_SECOND as f64) as u64))
}

/// A duration as retrysim writes one ("250ms", "2s").
fn duration(check: &Check, value: &Spanned<String>, path: &str) -> Result<Tick> {
    check.duration(
        &Spanned::new(value.span(), Value::String(value.get_ref().clone())),
        path,
    )
}

/// A multiplier of a growing curve: retrysim's curves never shrink.
fn multiplier(
    check: &Check,
    value: Option<&Spanned<f64>>,
    path: &str,
    default: f64,
) -> Result<f64> {
    check.number(
        value,
        path,
        default,
        |m| m.is_finite() && m >= 1.0,
        "a multiplier retrysim's curves can follow",
        "a finite number ≥ 1 (a shrinking backoff has no retrysim rule)",
    )
}
