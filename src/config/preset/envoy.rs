//! Envoy's route `retry_policy`, with its proto field names, and the route's `timeout`.
//!
//! - `num_retries` counts retries (1).
//! - `retry_on` is Envoy's comma list; without one, nothing is retried.
//! - The n-th retry waits U[0, min(base · 2^(n−1), max)) (`JitteredExponentialBackOffStrategy`):
//!   `base_interval` 25 ms, `max_interval` ten times the base.
//! - `rate_limited_retry_back_off` waits what a rate-limited reply's header names instead, up
//!   to its `max_interval` (300 s); without it Envoy reads no Retry-After.
//! - `per_try_timeout` times each attempt. The route's `timeout` (15 s, "0s" for none) bounds
//!   every attempt together.

use serde::Deserialize;
use toml::Spanned;

use super::status::http_classes;
use super::{Attempts, Curve, Rules, attempts_after, duration};
use crate::config::check::{Check, Result};
use crate::model::FailureClass::{self, *};
use crate::policy::{Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    retry_on: Option<Spanned<String>>,
    num_retries: Option<Spanned<u32>>,
    per_try_timeout: Option<Spanned<String>>,
    retry_back_off: Option<Spanned<BackOff>>,
    retriable_status_codes: Option<Spanned<Vec<Spanned<u16>>>>,
    rate_limited_retry_back_off: Option<Spanned<RateLimitedBackOff>>,
    /// The route's `timeout`, across every attempt.
    timeout: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct BackOff {
    base_interval: Spanned<String>,
    max_interval: Option<Spanned<String>>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateLimitedBackOff {
    reset_headers: Spanned<Vec<Spanned<ResetHeader>>>,
    max_interval: Option<Spanned<String>>,
}

/// A header that names the wait; whichever it is, retrysim's servers name theirs in one.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ResetHeader {
    name: Spanned<String>,
    format: Option<Spanned<String>>,
}

/// Each `retry_on` condition and the retrysim failures it retries; `retriable-status-codes`
/// adds the listed codes'.
const CONDITIONS: [(&str, &[FailureClass]); 11] = [
    ("5xx", &[ServerError, Overloaded, Reset, Connect, Timeout]),
    ("gateway-error", &[ServerError, Overloaded, Timeout]),
    ("reset", &[Reset, Connect, Timeout]),
    ("connect-failure", &[Connect]),
    ("retriable-4xx", &[VersionConflict, Conflict]),
    ("refused-stream", &[]),
    ("retriable-status-codes", &[]),
    ("unavailable", &[ServerError, Overloaded]),
    ("resource-exhausted", &[Throttled]),
    ("deadline-exceeded", &[Timeout]),
    ("cancelled", &[]),
];

pub(super) fn expand(check: &Check, settings: &Spanned<RetryPolicy>, path: &str) -> Result<Rules> {
    let p = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let mut retry_on = conditions(check, p, path)?;
    let attempts = attempts_after(check, p.num_retries.as_ref(), 2, &at("num_retries"))?;
    let (base, max) = back_off(check, p, path)?;
    let (retry_after, retry_after_max) = rate_limited(check, p, path)?;
    let timeout = match &p.per_try_timeout {
        None => None,
        Some(t) => Some(duration(check, t, &at("per_try_timeout"))?),
    };
    let deadline = match &p.timeout {
        None => Some(Tick(15 * TICKS_PER_SECOND)),
        Some(t) => Some(duration(check, t, &at("timeout"))?).filter(|&t| t > Tick::ZERO),
    };
    // Without a per-try timeout an attempt that times out has spent the route's whole time.
    if timeout.is_none() {
        retry_on.retain(|&c| c != Timeout);
    }
    Ok(Rules {
        max_attempts: Some(Attempts::AtMost(attempts)),
        retry_on: Some(retry_on),
        backoff: Some(Curve {
            max: Some(max),
            jitter: Jitter::Full,
            ..Curve::exponential(base, 2.0)
        }),
        retry_after: Some(retry_after),
        retry_after_max,
        timeout,
        deadline,
        ..Rules::default()
    })
}

/// `retry_on`'s conditions, and `retriable_status_codes` under the condition that reads them.
fn conditions(check: &Check, p: &RetryPolicy, path: &str) -> Result<Vec<FailureClass>> {
    let at = |key: &str| format!("{path}.{key}");
    let mut retry_on: Vec<FailureClass> = Vec::new();
    let mut add = |classes: &[FailureClass]| {
        for &c in classes {
            if !retry_on.contains(&c) {
                retry_on.push(c);
            }
        }
    };
    let mut by_status = false;
    if let Some(list) = &p.retry_on {
        for item in list.get_ref().split(',').map(str::trim) {
            match CONDITIONS.iter().find(|(name, _)| *name == item) {
                Some((name, classes)) => {
                    by_status |= *name == "retriable-status-codes";
                    add(classes);
                }
                None => {
                    let names: Vec<&str> = CONDITIONS.iter().map(|(n, _)| *n).collect();
                    return check.error_allowing(
                        list.span(),
                        &at("retry_on"),
                        format!("\"{item}\" is not a retry condition retrysim can express"),
                        &format!("a comma list of {}", names.join(", ")),
                    );
                }
            }
        }
    }
    match (&p.retriable_status_codes, by_status) {
        (Some(codes), true) => add(&http_classes(
            check,
            codes.get_ref(),
            &at("retriable_status_codes"),
        )?),
        (Some(codes), false) => {
            return check.error_allowing(
                codes.span(),
                &at("retriable_status_codes"),
                "Envoy reads these codes only under the retriable-status-codes condition".into(),
                "retry_on including \"retriable-status-codes\"",
            );
        }
        (None, _) => {}
    }
    Ok(retry_on)
}

/// `retry_back_off`: the base interval (25 ms) and the cap (ten times the base unless set).
fn back_off(check: &Check, p: &RetryPolicy, path: &str) -> Result<(Tick, Tick)> {
    let at = |key: &str| format!("{path}.{key}");
    let ms = |n: u64| Tick(n * TICKS_PER_SECOND / 1000);
    let (base, max) = match &p.retry_back_off {
        None => (ms(25), None),
        Some(b) => {
            let b = b.get_ref();
            let base = duration(check, &b.base_interval, &at("retry_back_off.base_interval"))?;
            let max = match &b.max_interval {
                None => None,
                Some(m) => Some(duration(check, m, &at("retry_back_off.max_interval"))?),
            };
            (base, max)
        }
    };
    if let (Some(m), Some(b)) = (max, &p.retry_back_off)
        && m < base
    {
        let span = b
            .get_ref()
            .max_interval
            .as_ref()
            .map_or(b.span(), Spanned::span);
        return check.error_allowing(
            span,
            &at("retry_back_off.max_interval"),
            format!("{m} is below base_interval ({base}), which Envoy refuses"),
            "max_interval ≥ base_interval",
        );
    }
    let max = max.unwrap_or(Tick(base.0.saturating_mul(10)));
    Ok((base, max))
}

/// `rate_limited_retry_back_off`: the reset headers Envoy waits on, and the longest wait.
fn rate_limited(check: &Check, p: &RetryPolicy, path: &str) -> Result<(RetryAfter, Option<Tick>)> {
    let at = |key: &str| format!("{path}.{key}");
    Ok(match &p.rate_limited_retry_back_off {
        None => (RetryAfter::Ignore, None),
        Some(r) => {
            let r = r.get_ref();
            if r.reset_headers.get_ref().is_empty() {
                return check.error_allowing(
                    r.reset_headers.span(),
                    &at("rate_limited_retry_back_off.reset_headers"),
                    "Envoy needs at least one header to read the wait from".into(),
                    "one or more { name, format } headers",
                );
            }
            for (i, header) in r.reset_headers.get_ref().iter().enumerate() {
                let h = header.get_ref();
                let at = |key: &str| {
                    at(&format!(
                        "rate_limited_retry_back_off.reset_headers[{i}].{key}"
                    ))
                };
                if h.name.get_ref().is_empty() {
                    return check.error(h.name.span(), &at("name"), "a header needs a name".into());
                }
                if let Some(f) = h
                    .format
                    .as_ref()
                    .filter(|f| !["SECONDS", "UNIX_TIMESTAMP"].contains(&f.get_ref().as_str()))
                {
                    return check.error_allowing(
                        f.span(),
                        &at("format"),
                        format!("\"{}\" is not a ResetHeaderFormat", f.get_ref()),
                        "\"SECONDS\" (the default) or \"UNIX_TIMESTAMP\"",
                    );
                }
            }
            let max = match &r.max_interval {
                None => Tick(300 * TICKS_PER_SECOND),
                Some(m) => duration(check, m, &at("rate_limited_retry_back_off.max_interval"))?,
            };
            (RetryAfter::Replace, Some(max))
        }
    })
}
