//! resilience4j's `RetryConfig`, with the property names its Spring Boot starter reads.
//!
//! `maxAttempts` counts the first attempt (3). `waitDuration` is 500 ms between attempts. With
//! `enableExponentialBackoff` the n-th wait is `waitDuration · exponentialBackoffMultiplier^(n−1)`
//! (1.5 by default), capped at `exponentialMaxWaitDuration` if set; with `enableRandomizedWait`
//! it is drawn from `U[x · (1 − f), x · (1 + f)]`, f being `randomizedWaitFactor` (0.5). With both,
//! the draw comes first and the cap after it (`ofExponentialRandomBackoff`). Every exception is
//! retried at the defaults; resilience4j reads no Retry-After.

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Curve, Rules, duration, multiplier};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, Jitter, RetryAfter};
use crate::time::Tick;

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryConfig {
    max_attempts: Option<Spanned<u32>>,
    wait_duration: Option<Spanned<String>>,
    enable_exponential_backoff: Option<Spanned<bool>>,
    exponential_backoff_multiplier: Option<Spanned<f64>>,
    exponential_max_wait_duration: Option<Spanned<String>>,
    enable_randomized_wait: Option<Spanned<bool>>,
    randomized_wait_factor: Option<Spanned<f64>>,
}

pub(super) fn expand(check: &Check, settings: &Spanned<RetryConfig>, path: &str) -> Result<Rules> {
    let c = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let attempts = match &c.max_attempts {
        None => 3,
        Some(n) if *n.get_ref() == 0 => {
            return check.error_allowing(
                n.span(),
                &at("maxAttempts"),
                "resilience4j needs at least 1".into(),
                "1 or more, counting the first attempt",
            );
        }
        Some(n) => *n.get_ref(),
    };
    let wait = match &c.wait_duration {
        None => Tick(500_000),
        Some(w) => duration(check, w, &at("waitDuration"))?,
    };
    let on = |flag: &Option<Spanned<bool>>| flag.as_ref().is_some_and(|f| *f.get_ref());
    let (exponential, randomized) = (
        on(&c.enable_exponential_backoff),
        on(&c.enable_randomized_wait),
    );
    // A key of a form that is not enabled would be read past by resilience4j's builder
    // without a word; here it is a mistake said aloud.
    for (key, set, needs) in [
        (
            "exponentialBackoffMultiplier",
            c.exponential_backoff_multiplier.as_ref().map(Spanned::span),
            exponential,
        ),
        (
            "exponentialMaxWaitDuration",
            c.exponential_max_wait_duration.as_ref().map(Spanned::span),
            exponential,
        ),
        (
            "randomizedWaitFactor",
            c.randomized_wait_factor.as_ref().map(Spanned::span),
            randomized,
        ),
    ] {
        if let (Some(span), false) = (set, needs) {
            return check.error_allowing(
                span,
                &at(key),
                format!("{key} applies to a form of backoff that is not enabled"),
                "enableExponentialBackoff or enableRandomizedWait = true beside it",
            );
        }
    }
    let mut curve = Curve::constant(wait);
    if exponential {
        let growth = multiplier(
            check,
            c.exponential_backoff_multiplier.as_ref(),
            &at("exponentialBackoffMultiplier"),
            1.5,
        )?;
        curve = Curve::exponential(wait, growth);
        curve.max = match &c.exponential_max_wait_duration {
            None => None,
            Some(m) => Some(duration(check, m, &at("exponentialMaxWaitDuration"))?),
        };
    }
    if randomized {
        let factor = check.number(
            c.randomized_wait_factor.as_ref(),
            &at("randomizedWaitFactor"),
            0.5,
            |f| (0.0..1.0).contains(&f),
            "a randomization factor resilience4j accepts",
            "a number from 0 up to, not including, 1",
        )?;
        curve.jitter = Jitter::Proportional;
        curve.jitter_factor = Some(factor);
        curve.cap = Cap::AfterJitter;
    }
    Ok(Rules {
        max_attempts: Some(Attempts::AtMost(attempts)),
        retry_on: Some(FailureClass::ALL.to_vec()),
        backoff: Some(curve),
        retry_after: Some(RetryAfter::Ignore),
        ..Rules::default()
    })
}
