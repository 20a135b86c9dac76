//! tenacity's `Retrying` (the `@retry` decorator), with its stop and wait functions by name.
//!
//! At its defaults tenacity retries every exception, forever, at once: `stop_never`,
//! `wait_none`, `retry_if_exception_type()`. It knows nothing of Retry-After. One wait at most
//! (tenacity can add waits together; retrysim's backoff is one curve):
//! - `wait_fixed = s`: s seconds each time;
//! - `wait_exponential = { multiplier, min, max, exp_base }`: `multiplier · exp_base^(n−1)`,
//!   capped at `max`, floored at `min`;
//! - `wait_random_exponential = { multiplier, max, exp_base }`: uniform from 0 to that;
//! - `wait_exponential_jitter = { initial, max, exp_base, jitter }`: `initial · exp_base^(n−1)`
//!   plus up to `jitter`, then capped at `max`.

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Curve, Rules, multiplier, seconds};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

/// `Retrying(stop=..., wait=...)`, each function named with its arguments.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Retrying {
    stop_after_attempt: Option<Spanned<u32>>,
    wait_fixed: Option<Spanned<f64>>,
    wait_exponential: Option<Spanned<Exponential>>,
    wait_random_exponential: Option<Spanned<Exponential>>,
    wait_exponential_jitter: Option<Spanned<ExponentialJitter>>,
}

/// `wait_exponential(multiplier=1, min=0, max=MAX_WAIT, exp_base=2)`, and
/// `wait_random_exponential`, which takes the same arguments.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Exponential {
    multiplier: Option<Spanned<f64>>,
    min: Option<Spanned<f64>>,
    max: Option<Spanned<f64>>,
    exp_base: Option<Spanned<f64>>,
}

/// `wait_exponential_jitter(initial=1, max=MAX_WAIT, exp_base=2, jitter=1)`.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct ExponentialJitter {
    initial: Option<Spanned<f64>>,
    max: Option<Spanned<f64>>,
    exp_base: Option<Spanned<f64>>,
    jitter: Option<Spanned<f64>>,
}

const ONE_SECOND: Tick = Tick(TICKS_PER_SECOND);

pub(super) fn expand(check: &Check, settings: &Spanned<Retrying>, path: &str) -> Result<Rules> {
    let r = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let secs = |v: &Option<Spanned<f64>>, key: &str, default: Tick| match v {
        None => Ok(default),
        Some(v) => seconds(check, v, key),
    };
    // tenacity's MAX_WAIT is sys.maxsize / 2 seconds: no cap.
    let cap = |v: &Option<Spanned<f64>>, key: &str| match v {
        None => Ok(None),
        Some(v) => seconds(check, v, key).map(Some),
    };
    let waits = [
        r.wait_fixed.as_ref().map(Spanned::span),
        r.wait_exponential.as_ref().map(Spanned::span),
        r.wait_random_exponential.as_ref().map(Spanned::span),
        r.wait_exponential_jitter.as_ref().map(Spanned::span),
    ];
    if let Some(second) = waits.iter().flatten().nth(1) {
        return check.error_allowing(
            second.clone(),
            path,
            "tenacity adds waits together, and retrysim's backoff is one curve".into(),
            "one of wait_fixed, wait_exponential, wait_random_exponential, wait_exponential_jitter",
        );
    }
    let backoff = if let Some(s) = &r.wait_fixed {
        Some(Curve::constant(seconds(check, s, &at("wait_fixed"))?))
    } else if let Some(w) = &r.wait_exponential {
        let (w, at) = (w.get_ref(), |k: &str| {
            format!("{path}.wait_exponential.{k}")
        });
        let min = secs(&w.min, &at("min"), Tick::ZERO)?;
        Some(Curve {
            max: cap(&w.max, &at("max"))?,
            min: (min > Tick::ZERO).then_some(min),
            ..Curve::exponential(
                secs(&w.multiplier, &at("multiplier"), ONE_SECOND)?,
                multiplier(check, w.exp_base.as_ref(), &at("exp_base"), 2.0)?,
            )
        })
    } else if let Some(w) = &r.wait_random_exponential {
        let (w, at) = (w.get_ref(), |k: &str| {
            format!("{path}.wait_random_exponential.{k}")
        });
        if let Some(min) = w.min.as_ref().filter(|m| *m.get_ref() > 0.0) {
            return check.error_allowing(
                min.span(),
                &at("min"),
                "tenacity draws from `min` up, and retrysim's full jitter draws from 0".into(),
                "min = 0, or no min",
            );
        }
        Some(Curve {
            max: cap(&w.max, &at("max"))?,
            jitter: Jitter::Full,
            ..Curve::exponential(
                secs(&w.multiplier, &at("multiplier"), ONE_SECOND)?,
                multiplier(check, w.exp_base.as_ref(), &at("exp_base"), 2.0)?,
            )
        })
    } else if let Some(w) = &r.wait_exponential_jitter {
        let (w, at) = (w.get_ref(), |k: &str| {
            format!("{path}.wait_exponential_jitter.{k}")
        });
        Some(Curve {
            max: cap(&w.max, &at("max"))?,
            cap: Cap::AfterJitter,
            jitter: Jitter::Additive,
            jitter_max: Some(secs(&w.jitter, &at("jitter"), ONE_SECOND)?),
            ..Curve::exponential(
                secs(&w.initial, &at("initial"), ONE_SECOND)?,
                multiplier(check, w.exp_base.as_ref(), &at("exp_base"), 2.0)?,
            )
        })
    } else {
        None
    };
    let max_attempts = match &r.stop_after_attempt {
        None => Attempts::Unlimited,
        Some(n) if *n.get_ref() == 0 => {
            return check.error_allowing(
                n.span(),
                &at("stop_after_attempt"),
                "tenacity makes the first attempt whatever the stop says".into(),
                "1 or more, counting the first attempt",
            );
        }
        Some(n) => Attempts::AtMost(*n.get_ref()),
    };
    Ok(Rules {
        max_attempts: Some(max_attempts),
        retry_on: Some(FailureClass::ALL.to_vec()),
        backoff: backoff.or(Some(Curve::constant(Tick::ZERO))),
        retry_after: Some(RetryAfter::Ignore),
        ..Rules::default()
    })
}
