//! urllib3's `Retry` (2.x), with its argument names and defaults.
//!
//! `total` counts retries, not attempts. A connection that failed is retried for any method;
//! a read error (a dropped connection after the request went out, a read timeout) and a status
//! in `status_forcelist` only for a method in `allowed_methods`, which leaves POST out; a 413,
//! 429 or 503 carrying Retry-After is retried for an allowed method whatever the status list
//! says, after exactly the wait it names; a `Retry-After: 0` names none, and the backoff decides
//! (`sleep_for_retry` sleeps only on a truthy wait). The backoff waits nothing before the first retry,
//! then `backoff_factor · 2^(n−1)` (plus up to `backoff_jitter`), capped at `backoff_max`.

use serde::Deserialize;
use toml::Spanned;

use super::status::http_classes;
use super::{Attempts, Curve, Rules, attempts_after, seconds};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, FirstRetry, Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

/// `Retry(...)`'s arguments, and `method`: the HTTP method of the calls, which urllib3 learns
/// from each request and a config must say.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Retry {
    total: Option<Spanned<u32>>,
    connect: Option<Spanned<u32>>,
    read: Option<Spanned<u32>>,
    status: Option<Spanned<u32>>,
    backoff_factor: Option<Spanned<f64>>,
    backoff_max: Option<Spanned<f64>>,
    backoff_jitter: Option<Spanned<f64>>,
    status_forcelist: Option<Spanned<Vec<Spanned<u16>>>>,
    allowed_methods: Option<Spanned<Vec<Spanned<String>>>>,
    respect_retry_after_header: Option<Spanned<bool>>,
    method: Option<Spanned<String>>,
}

/// `Retry.DEFAULT_ALLOWED_METHODS`: the idempotent methods.
const DEFAULT_ALLOWED_METHODS: [&str; 6] = ["DELETE", "GET", "HEAD", "OPTIONS", "PUT", "TRACE"];
/// `Retry.total`'s default.
const TOTAL: u32 = 10;
/// `Retry.DEFAULT_BACKOFF_MAX`.
const BACKOFF_MAX: Tick = Tick(120 * TICKS_PER_SECOND);
/// The method of an agent's side-effecting call when the config does not say.
const METHOD: &str = "POST";

pub(super) fn expand(check: &Check, settings: &Spanned<Retry>, path: &str) -> Result<Rules> {
    let r = settings.get_ref();
    let total = r.total.as_ref().map_or(TOTAL, |t| *t.get_ref());
    let retried = retried(check, r, total, path)?;
    let respect = r
        .respect_retry_after_header
        .as_ref()
        .is_none_or(|v| *v.get_ref());
    Ok(Rules {
        max_attempts: Some(Attempts::AtMost(attempts_after(
            check,
            r.total.as_ref(),
            TOTAL + 1,
            &format!("{path}.total"),
        )?)),
        retry_on: Some(retried.classes),
        backoff: Some(curve(check, r, path)?),
        retry_after: Some(if respect {
            RetryAfter::ReplaceUnlessZero
        } else {
            RetryAfter::Ignore
        }),
        retry_after_retries: respect && retried.statuses && total > 0,
        ..Rules::default()
    })
}

/// What a `Retry` retries: the failure classes, and whether a refused status is retried at all
/// (the method allowed, and the status counter not 0).
struct Retried {
    classes: Vec<FailureClass>,
    statuses: bool,
}

fn retried(check: &Check, r: &Retry, total: u32, path: &str) -> Result<Retried> {
    let at = |key: &str| format!("{path}.{key}");
    // A counter of its own binds only below `total`: 0 takes its class out, and anything from
    // `total` up changes nothing. Between the two urllib3 counts apart, and retrysim cannot.
    let counter = |value: &Option<Spanned<u32>>, key: &str| -> Result<bool> {
        match value {
            None => Ok(true),
            Some(v) if *v.get_ref() == 0 => Ok(false),
            Some(v) if *v.get_ref() >= total => Ok(true),
            Some(v) => check.error_allowing(
                v.span(),
                &at(key),
                format!(
                    "urllib3 counts {key} retries apart from `total` ({total}), and retrysim counts one limit for every failure"
                ),
                &format!("{key} = 0 (never), {total} or more (as `total`), or no {key}"),
            ),
        }
    };
    let (connects, reads, statuses) = (
        counter(&r.connect, "connect")?,
        counter(&r.read, "read")?,
        counter(&r.status, "status")?,
    );
    let method = r
        .method
        .as_ref()
        .map_or(METHOD.to_string(), |m| m.get_ref().to_uppercase());
    let allowed = match &r.allowed_methods {
        None => DEFAULT_ALLOWED_METHODS.contains(&method.as_str()),
        Some(list) => list
            .get_ref()
            .iter()
            .any(|m| m.get_ref().eq_ignore_ascii_case(&method)),
    };
    let mut classes = Vec::new();
    if connects {
        classes.push(FailureClass::Connect);
    }
    if allowed && reads {
        classes.extend([FailureClass::Reset, FailureClass::Timeout]);
    }
    if allowed
        && statuses
        && let Some(list) = &r.status_forcelist
    {
        classes.extend(http_classes(
            check,
            list.get_ref(),
            &at("status_forcelist"),
        )?);
    }
    Ok(Retried {
        classes,
        statuses: allowed && statuses,
    })
}

/// urllib3's backoff: `backoff_factor` doubling from the second retry (the first at once),
/// capped at `backoff_max` after `backoff_jitter` is added.
fn curve(check: &Check, r: &Retry, path: &str) -> Result<Curve> {
    let at = |key: &str| format!("{path}.{key}");
    let factor = match &r.backoff_factor {
        None => Tick::ZERO,
        Some(f) => seconds(check, f, &at("backoff_factor"))?,
    };
    let max = match &r.backoff_max {
        None => BACKOFF_MAX,
        Some(m) => seconds(check, m, &at("backoff_max"))?,
    };
    if let Some(m) = r.backoff_max.as_ref().filter(|_| max < factor) {
        return check.error_allowing(
            m.span(),
            &at("backoff_max"),
            "a backoff_max below backoff_factor caps every wait, which retrysim's curves cannot start from".into(),
            "backoff_max ≥ backoff_factor",
        );
    }
    let jitter = match &r.backoff_jitter {
        None => Tick::ZERO,
        Some(j) => seconds(check, j, &at("backoff_jitter"))?,
    };
    Ok(Curve {
        max: Some(max),
        cap: Cap::AfterJitter,
        first_retry: FirstRetry::Immediate,
        ..match jitter {
            Tick::ZERO => Curve::exponential(factor, 2.0),
            j => Curve {
                jitter: Jitter::Additive,
                jitter_max: Some(j),
                ..Curve::exponential(factor, 2.0)
            },
        }
    })
}
