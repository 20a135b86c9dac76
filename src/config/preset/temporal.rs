//! Temporal's activity `RetryPolicy` and timeouts, as of server v1.30.0 (`retry.go` at
//! 0af06d0), with the names its SDKs take (`initial_interval`, …, in the Python SDK's spelling).
//!
//! `maximum_attempts` counts attempts, the first included; 0 (the default) is unlimited. The
//! wait before attempt n + 1 is `initial_interval · backoff_coefficient^(n−1)` (1 s, 2.0), capped
//! at `maximum_interval` (100 × the initial interval by default), with **no jitter**: Temporal's
//! activity retries are deterministic. `non_retryable_error_types` names the failures not
//! retried, here by retrysim's failure classes (`"4xx"`, `"403"`, …), Temporal's
//! `"TemporalTimeout:StartToClose"` naming the timeout; everything else is retried, the
//! start-to-close timeout included. `start_to_close_timeout` bounds one attempt (a worker that
//! crashes is only noticed when it fires) and `schedule_to_close_timeout` every attempt
//! together: a retry whose wait would pass it is not made. Temporal reads no Retry-After.

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Curve, Rules, duration, multiplier};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::RetryAfter;

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RetryPolicy {
    initial_interval: Option<Spanned<String>>,
    backoff_coefficient: Option<Spanned<f64>>,
    maximum_interval: Option<Spanned<String>>,
    maximum_attempts: Option<Spanned<u32>>,
    non_retryable_error_types: Option<Spanned<Vec<Spanned<String>>>>,
    start_to_close_timeout: Option<Spanned<String>>,
    schedule_to_close_timeout: Option<Spanned<String>>,
}

/// Temporal's name for its start-to-close timeout among the error types.
const START_TO_CLOSE: &str = "TemporalTimeout:StartToClose";

pub(super) fn expand(check: &Check, settings: &Spanned<RetryPolicy>, path: &str) -> Result<Rules> {
    let p = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let initial = match &p.initial_interval {
        None => crate::time::Tick::from_secs(1),
        Some(i) => duration(check, i, &at("initial_interval"))?,
    };
    let coefficient = multiplier(
        check,
        p.backoff_coefficient.as_ref(),
        &at("backoff_coefficient"),
        2.0,
    )?;
    let maximum = match &p.maximum_interval {
        None => crate::time::Tick(initial.0.saturating_mul(100)),
        Some(m) => duration(check, m, &at("maximum_interval"))?,
    };
    if let Some(m) = p.maximum_interval.as_ref().filter(|_| maximum < initial) {
        return check.error_allowing(
            m.span(),
            &at("maximum_interval"),
            "a maximum interval below the initial one, which Temporal refuses".into(),
            "maximum_interval ≥ initial_interval",
        );
    }
    let mut retry_on: Vec<FailureClass> = FailureClass::ALL.to_vec();
    if let Some(types) = &p.non_retryable_error_types {
        for (i, t) in types.get_ref().iter().enumerate() {
            let class = match t.get_ref().as_str() {
                START_TO_CLOSE => FailureClass::Timeout,
                name => match FailureClass::ALL.into_iter().find(|c| c.name() == name) {
                    Some(class) => class,
                    None => {
                        let names: Vec<&str> = FailureClass::ALL.map(FailureClass::name).to_vec();
                        return check.error_allowing(
                            t.span(),
                            &format!("{}[{i}]", at("non_retryable_error_types")),
                            format!("\"{name}\" is not a failure retrysim draws"),
                            &format!("\"{START_TO_CLOSE}\" or one of {}", names.join(", ")),
                        );
                    }
                },
            };
            retry_on.retain(|&c| c != class);
        }
    }
    let attempts = match p.maximum_attempts.as_ref().map(|n| *n.get_ref()) {
        None | Some(0) => Attempts::Unlimited,
        Some(n) => Attempts::AtMost(n),
    };
    let curve = Curve {
        max: Some(maximum),
        ..Curve::exponential(initial, coefficient)
    };
    let time = |key: &Option<Spanned<String>>, name: &str| {
        key.as_ref()
            .map(|t| duration(check, t, &at(name)))
            .transpose()
    };
    Ok(Rules {
        max_attempts: Some(attempts),
        retry_on: Some(retry_on),
        backoff: Some(curve),
        retry_after: Some(RetryAfter::Ignore),
        timeout: time(&p.start_to_close_timeout, "start_to_close_timeout")?,
        deadline: time(&p.schedule_to_close_timeout, "schedule_to_close_timeout")?,
        ..Rules::default()
    })
}
