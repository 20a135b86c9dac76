//! An AWS Step Functions Task state's `Retry` field (one retrier) and its timeout, in the
//! Amazon States Language's names, as the Step Functions developer guide documents them on
//! 2026-12-05 (the bounds as LocalStack's emulator enforces them).
//!
//! `MaxAttempts` counts **retries** (3 by default: up to four executions; 0 never retries),
//! the other way from Temporal. The wait before retry k is `IntervalSeconds · BackoffRate^(k−1)`
//! (1 s, 2.0), capped at `MaxDelaySeconds` if set; `JitterStrategy = "FULL"` then draws the
//! wait from U(0, that) — the cap comes before the jitter — and `"NONE"` (the default) keeps
//! it. `ErrorEquals` names the errors retried: `States.ALL` every one, `States.Timeout` the
//! task's timeout, `States.TaskFailed` every failure but the timeout. `TimeoutSeconds` bounds
//! one execution of the task. Step Functions reads no Retry-After.

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Curve, Rules, attempts_after, multiplier};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
pub struct Retrier {
    ErrorEquals: Option<Spanned<Vec<Spanned<String>>>>,
    IntervalSeconds: Option<Spanned<u32>>,
    MaxAttempts: Option<Spanned<u32>>,
    BackoffRate: Option<Spanned<f64>>,
    MaxDelaySeconds: Option<Spanned<u32>>,
    JitterStrategy: Option<Spanned<String>>,
    TimeoutSeconds: Option<Spanned<u32>>,
}

/// The largest `IntervalSeconds` and `MaxAttempts` Step Functions takes.
const MOST: u32 = 99_999_999;

pub(super) fn expand(check: &Check, settings: &Spanned<Retrier>, path: &str) -> Result<Rules> {
    let r = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let whole = |value: &Option<Spanned<u32>>, key: &str, default: u32, low: u32| {
        let Some(v) = value else {
            return Ok(default);
        };
        let n = *v.get_ref();
        if (low..=MOST).contains(&n) {
            return Ok(n);
        }
        check.error_allowing(
            v.span(),
            &at(key),
            format!("{n} is outside what Step Functions takes"),
            &format!("a whole number from {low} to {MOST}"),
        )
    };
    let interval = whole(&r.IntervalSeconds, "IntervalSeconds", 1, 1)?;
    whole(&r.MaxAttempts, "MaxAttempts", 3, 0)?;
    let attempts = attempts_after(check, r.MaxAttempts.as_ref(), 4, &at("MaxAttempts"))?;
    let rate = multiplier(check, r.BackoffRate.as_ref(), &at("BackoffRate"), 2.0)?;
    let secs = |s: u32| Tick(u64::from(s) * TICKS_PER_SECOND);
    let max = match &r.MaxDelaySeconds {
        None => None,
        Some(m) if *m.get_ref() < interval => {
            return check.error_allowing(
                m.span(),
                &at("MaxDelaySeconds"),
                "a MaxDelaySeconds below IntervalSeconds caps every wait, which retrysim's \
                 curves cannot start from"
                    .into(),
                "MaxDelaySeconds ≥ IntervalSeconds",
            );
        }
        Some(m) => Some(secs(*m.get_ref())),
    };
    let jitter = match r.JitterStrategy.as_ref().map(|j| (j, j.get_ref().as_str())) {
        None | Some((_, "NONE")) => Jitter::None,
        Some((_, "FULL")) => Jitter::Full,
        Some((j, other)) => {
            return check.error_allowing(
                j.span(),
                &at("JitterStrategy"),
                format!("\"{other}\" is not a JitterStrategy"),
                "\"FULL\" or \"NONE\"",
            );
        }
    };
    let retry_on = match &r.ErrorEquals {
        None => FailureClass::ALL.to_vec(),
        Some(names) => errors(check, names, &at("ErrorEquals"))?,
    };
    Ok(Rules {
        max_attempts: Some(Attempts::AtMost(attempts)),
        retry_on: Some(retry_on),
        backoff: Some(Curve {
            max,
            cap: Cap::BeforeJitter,
            jitter,
            ..Curve::exponential(secs(interval), rate)
        }),
        retry_after: Some(RetryAfter::Ignore),
        timeout: r.TimeoutSeconds.as_ref().map(|t| secs(*t.get_ref())),
        ..Rules::default()
    })
}

/// The failures an `ErrorEquals` list retries.
fn errors(
    check: &Check,
    names: &Spanned<Vec<Spanned<String>>>,
    path: &str,
) -> Result<Vec<FailureClass>> {
    let mut on: Vec<FailureClass> = Vec::new();
    for (i, name) in names.get_ref().iter().enumerate() {
        let classes: Vec<FailureClass> = match name.get_ref().as_str() {
            "States.ALL" => FailureClass::ALL.to_vec(),
            "States.Timeout" => vec![FailureClass::Timeout],
            "States.TaskFailed" => (FailureClass::ALL.into_iter())
                .filter(|&c| c != FailureClass::Timeout)
                .collect(),
            other => {
                return check.error_allowing(
                    name.span(),
                    &format!("{path}[{i}]"),
                    format!("\"{other}\" is not an error retrysim draws"),
                    "\"States.ALL\", \"States.Timeout\" or \"States.TaskFailed\"",
                );
            }
        };
        for c in classes {
            if !on.contains(&c) {
                on.push(c);
            }
        }
    }
    if on.is_empty() {
        return check.error_allowing(
            names.span(),
            path,
            "a retrier that matches no error".into(),
            "[\"States.ALL\"], or the errors to retry",
        );
    }
    Ok(on)
}
