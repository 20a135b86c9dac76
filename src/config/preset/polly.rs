//! Polly v8's `RetryStrategyOptions`, with its property names and defaults.
//!
//! `MaxRetryAttempts` counts retries (3: four calls). `Delay` is 2 s; a `Delay` of zero waits
//! nothing, jitter or not. `BackoffType`:
//! - `Constant`: `Delay`; with `UseJitter`, ±25 %;
//! - `Linear`: `n · Delay` before retry n; with `UseJitter`, ±25 %;
//! - `Exponential`: `Delay · 2^(n−1)`; with `UseJitter`, the decorrelated jitter V2 formula.
//!
//! `MaxDelay` caps the delay after jitter. `ShouldHandle` handles every exception at its
//! default, so every failure is retried; the core strategy reads no Retry-After. Durations are
//! retrysim's ("2s") or .NET `TimeSpan` text ("00:00:02").

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Curve, Rules, attempts_after};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, Growth, Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct RetryStrategyOptions {
    MaxRetryAttempts: Option<Spanned<u32>>,
    Delay: Option<Spanned<String>>,
    BackoffType: Option<Spanned<String>>,
    UseJitter: Option<Spanned<bool>>,
    MaxDelay: Option<Spanned<String>>,
}

/// `int.MaxValue` retries: Polly's "forever".
const FOREVER: u32 = i32::MAX as u32;

pub(super) fn expand(
    check: &Check,
    settings: &Spanned<RetryStrategyOptions>,
    path: &str,
) -> Result<Rules> {
    let o = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let retries = o.MaxRetryAttempts.as_ref().map_or(3, |n| *n.get_ref());
    let delay = match &o.Delay {
        None => Tick(2 * TICKS_PER_SECOND),
        Some(d) => timespan(check, d, &at("Delay"))?,
    };
    let growth = match &o.BackoffType {
        None => Growth::Constant,
        Some(t) => match t.get_ref().as_str() {
            "Constant" => Growth::Constant,
            "Linear" => Growth::Linear,
            "Exponential" => Growth::Exponential,
            other => {
                return check.error_allowing(
                    t.span(),
                    &at("BackoffType"),
                    format!("\"{other}\" is not a DelayBackoffType"),
                    "\"Constant\", \"Linear\" or \"Exponential\"",
                );
            }
        },
    };
    let jitter = o.UseJitter.as_ref().is_some_and(|j| *j.get_ref());
    let max = match &o.MaxDelay {
        None => None,
        Some(m) => Some(timespan(check, m, &at("MaxDelay"))?),
    };
    if let Some(m) = o.MaxDelay.as_ref().filter(|_| max < Some(delay)) {
        return check.error_allowing(
            m.span(),
            &at("MaxDelay"),
            "a MaxDelay below Delay caps every wait, which retrysim's curves cannot start from"
                .into(),
            "MaxDelay ≥ Delay",
        );
    }
    let backoff = match (delay, growth, jitter) {
        (Tick::ZERO, _, _) => Curve::constant(Tick::ZERO),
        (_, Growth::Exponential, true) => Curve {
            jitter: Jitter::DecorrelatedV2,
            max,
            ..Curve::exponential(delay, 2.0)
        },
        (_, growth, jitter) => Curve {
            growth,
            max,
            cap: Cap::AfterJitter,
            jitter: if jitter {
                Jitter::Proportional
            } else {
                Jitter::None
            },
            jitter_factor: jitter.then_some(0.25),
            ..Curve::exponential(
                delay,
                if growth == Growth::Exponential {
                    2.0
                } else {
                    1.0
                },
            )
        },
    };
    Ok(Rules {
        max_attempts: Some(match retries {
            FOREVER => Attempts::Unlimited,
            _ => Attempts::AtMost(attempts_after(
                check,
                o.MaxRetryAttempts.as_ref(),
                4,
                &at("MaxRetryAttempts"),
            )?),
        }),
        retry_on: Some(FailureClass::ALL.to_vec()),
        backoff: Some(backoff),
        retry_after: Some(RetryAfter::Ignore),
        ..Rules::default()
    })
}

/// A duration as retrysim writes one, or as a .NET `TimeSpan`: `[d.]hh:mm:ss[.fffffff]`.
fn timespan(check: &Check, text: &Spanned<String>, path: &str) -> Result<Tick> {
    let t = text.get_ref();
    let parsed = (|| -> Option<Tick> {
        if !t.contains(':') {
            return crate::time::parse_duration(t).ok();
        }
        let (days, clock) = match t.split_once('.') {
            Some((d, rest)) if rest.contains(':') && !d.contains(':') => {
                (d.parse::<u64>().ok()?, rest)
            }
            _ => (0, t.as_str()),
        };
        let mut parts = clock.split(':');
        let (h, m, s) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() {
            return None;
        }
        let (h, m): (u64, u64) = (h.parse().ok()?, m.parse().ok()?);
        if h > 23 || m > 59 {
            return None;
        }
        let seconds = crate::time::parse_duration(&format!("{s}s")).ok()?;
        if seconds.0 >= 60 * TICKS_PER_SECOND {
            return None;
        }
        let whole = ((days * 24 + h) * 60 + m) * 60 * TICKS_PER_SECOND;
        Some(Tick(whole + seconds.0))
    })();
    match parsed {
        Some(t) => Ok(t),
        None => check.error_allowing(
            text.span(),
            path,
            format!("\"{t}\" is neither a duration nor a TimeSpan"),
            "a duration (\"2s\") or a TimeSpan (\"00:00:02\", \"1.00:00:00\")",
        ),
    }
}
