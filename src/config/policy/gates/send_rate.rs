//! A policy's `send_rate` table: the client-side send-rate limiter that adapts to throttles
//! (botocore's adaptive mode), with botocore's constants by default; and its `send_tokens`
//! table, the same bucket at a fixed rate of a model's tokens.

use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::config::resolve::{at, some, ticks};
use crate::policy::{SendRateRule, SendTokens};
use crate::time::Tick;

pub(super) fn send_rate(
    check: &Check,
    spanned: &Spanned<raw::SendRate>,
    path: &str,
) -> Result<SendRateRule> {
    let raw = spanned.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let d = SendRateRule::BOTOCORE;
    let share = |v: f64| v > 0.0 && v < 1.0;
    let measure_bin = match &raw.measure_bin {
        None => d.measure_bin,
        Some(v) => match check.duration(v, &at("measure_bin"))? {
            Tick::ZERO => {
                return check.error_allowing(
                    v.span(),
                    &at("measure_bin"),
                    "a bin of 0 measures no rate".into(),
                    "a positive duration (botocore: \"0.5s\")",
                );
            }
            t => t,
        },
    };
    Ok(SendRateRule {
        min_rate: check.number(
            raw.min_rate.as_ref(),
            &at("min_rate"),
            d.min_rate,
            |r| r.is_finite() && r > 0.0,
            "a rate the bucket can fill at",
            "a positive number of sends a second (botocore: 0.5)",
        )?,
        beta: check.number(
            raw.beta.as_ref(),
            &at("beta"),
            d.beta,
            share,
            "a share of the rate to keep",
            "a number between 0 and 1 (botocore: 0.7)",
        )?,
        scale: check.number(
            raw.scale.as_ref(),
            &at("scale"),
            d.scale,
            |s| s.is_finite() && s > 0.0,
            "a scale the rate can grow by",
            "a positive number (botocore: 0.4)",
        )?,
        smoothing: check.number(
            raw.smoothing.as_ref(),
            &at("smoothing"),
            d.smoothing,
            |s| s > 0.0 && s <= 1.0,
            "a weight for the newest bin",
            "a number above 0, at most 1 (botocore: 0.8)",
        )?,
        measure_bin,
    })
}

/// `send_tokens = { per_minute, burst }`: a client-side bucket of a model's tokens, a minute's
/// worth deep by default; one client-side bucket to a policy, so not beside `send_rate`.
pub(super) fn send_tokens(
    check: &Check,
    policy: &raw::Policy,
    spanned: &Spanned<raw::SendTokens>,
    path: &str,
) -> Result<SendTokens> {
    if policy.send_rate.is_some() {
        return check.error_allowing(
            spanned.span(),
            path,
            "a policy has one client-side bucket, and this one has `send_rate` too".into(),
            "`send_rate` (requests, adapting to throttles) or `send_tokens` (a model's tokens, at a fixed rate)",
        );
    }
    let raw = spanned.get_ref();
    let positive = |v: f64| v.is_finite() && v > 0.0;
    let per_minute = check.number(
        Some(&raw.per_minute),
        &format!("{path}.per_minute"),
        0.0,
        positive,
        "a rate the bucket can fill at",
        "tokens a minute, above 0 (the provider's TPM limit, or the share of it this client may use)",
    )?;
    Ok(SendTokens {
        per_minute,
        burst: check.number(
            raw.burst.as_ref(),
            &format!("{path}.burst"),
            per_minute,
            positive,
            "a bucket's size",
            "tokens, above 0 (a minute's worth by default)",
        )?,
    })
}

pub(in crate::config) fn write_send_rate(r: &SendRateRule) -> raw::SendRate {
    raw::SendRate {
        min_rate: some(r.min_rate),
        beta: some(r.beta),
        scale: some(r.scale),
        smoothing: some(r.smoothing),
        measure_bin: ticks(r.measure_bin),
    }
}

pub(in crate::config) fn write_send_tokens(t: SendTokens) -> raw::SendTokens {
    raw::SendTokens {
        per_minute: at(t.per_minute),
        burst: some(t.burst),
    }
}
