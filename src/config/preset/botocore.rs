//! botocore's `Config(retries={...})`, with its keys and the retry modes' defaults.
//!
//! `max_attempts` here counts retries (botocore's `retries` dict), `total_max_attempts` every
//! attempt. Every mode retries failed connections, dropped connections, timeouts, 500/502/503/504
//! and throttles.
//! - `legacy`: 5 attempts, `U[0, 1) · 2^(n−1)` seconds, no cap and no quota.
//! - `standard` before the 2026 behaviour: 3 attempts, `min(U[0, 1) · 2^(n−1) s, 20 s)`; a quota of
//!   500 tokens, a retry costing 5 (10 after a timeout), a first-try success adding 1.
//! - `standard` today (`new_retries_2026`, the current default): 3 attempts;
//!   `U[0, 1) · min(50 ms · 2^(n−1), 20 s)`, from 1 s after a throttle; a retry costing 14, 5
//!   after a throttle; `x-amz-retry-after` honoured within [backoff, backoff + 5 s].
//! - `adaptive`: `standard`, and a client-side send-rate limiter that adapts to throttles
//!   (`send_rate`, botocore's constants), which may hold back first attempts too.
//!
//! `service` names the AWS service (botocore's hyphenated service id) for the per-service
//! entries botocore keeps: today's standard mode gives `dynamodb` and `dynamodb-streams` 4
//! attempts and a 25 ms base (`retries/standard.py`); the legacy mode gives `dynamodb` 10
//! attempts and a fixed `50 ms · 2^(n−1)` (`data/_retry.json`; DynamoDB Streams' endpoint has no
//! entry there). Standard before 2026 had no per-service entries. Other services take the
//! defaults: the entries they have add error codes, which retrysim's failure classes hold
//! already.

use serde::Deserialize;
use toml::Spanned;

use super::{Attempts, Budget, Curve, Rules, attempts_after};
use crate::config::check::{Check, Result};
use crate::model::FailureClass;
use crate::policy::{Cap, Jitter, RetryAfter};
use crate::time::{TICKS_PER_SECOND, Tick};

/// `retries = { mode, max_attempts, total_max_attempts }`, and `new_retries_2026`: whether the
/// SDKs' 2026 retry behaviour is on (`AWS_NEW_RETRIES_2026`), as it is by default now.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct Retries {
    mode: Option<Spanned<String>>,
    max_attempts: Option<Spanned<u32>>,
    total_max_attempts: Option<Spanned<u32>>,
    new_retries_2026: Option<Spanned<bool>>,
    service: Option<Spanned<String>>,
}

/// The services botocore has entries for, in one mode or another.
const SERVICES: [&str; 2] = ["dynamodb", "dynamodb-streams"];

/// What botocore's tables give a service in a mode: attempts, and the base of the backoff
/// after a failure that is not a throttle.
#[derive(Clone, Copy)]
struct Defaults {
    attempts: u32,
    base: Tick,
}

impl Defaults {
    fn of(service: &str, legacy: bool, new: bool) -> Defaults {
        let (attempts, base) = match (legacy, new, service) {
            (true, _, "dynamodb") => (10, SECOND / 20),
            (true, _, _) => (5, SECOND),
            (false, true, "dynamodb" | "dynamodb-streams") => (4, SECOND / 40),
            (false, true, _) => (3, SECOND / 20),
            (false, false, _) => (3, SECOND),
        };
        Defaults {
            attempts,
            base: Tick(base),
        }
    }
}

const SECOND: u64 = TICKS_PER_SECOND;
const MAX_BACKOFF: Tick = Tick(20 * SECOND);

pub(super) fn expand(check: &Check, settings: &Spanned<Retries>, path: &str) -> Result<Rules> {
    let r = settings.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let new = r.new_retries_2026.as_ref().is_none_or(|v| *v.get_ref());
    let mode = r
        .mode
        .as_ref()
        .map_or(if new { "standard" } else { "legacy" }, |m| m.get_ref());
    let (legacy, adaptive) = match mode {
        "legacy" => (true, false),
        "standard" => (false, false),
        "adaptive" => (false, true),
        other => {
            let m = r.mode.as_ref().expect("only a written mode is unknown");
            return check.error_allowing(
                m.span(),
                &at("mode"),
                format!("\"{other}\" is not a botocore retry mode"),
                "\"legacy\", \"standard\" or \"adaptive\"",
            );
        }
    };
    let service = service(check, r, path)?;
    let defaults = Defaults::of(service, legacy, new);
    let attempts = attempts(check, r, defaults, path)?;
    let retry_on = vec![
        FailureClass::Connect,
        FailureClass::Reset,
        FailureClass::Timeout,
        FailureClass::ServerError,
        FailureClass::Overloaded,
        FailureClass::Throttled,
    ];
    let full = |initial: u64, max: Option<Tick>, cap: Cap| Curve {
        max,
        cap,
        jitter: Jitter::Full,
        ..Curve::exponential(Tick(initial), 2.0)
    };
    let mut rules = Rules {
        max_attempts: Some(Attempts::AtMost(attempts)),
        retry_on: Some(retry_on),
        retry_after: Some(RetryAfter::Ignore),
        send_rate: adaptive,
        ..Rules::default()
    };
    if legacy && defaults.base.0 < SECOND {
        // A number as the base of `_retry.json`'s delay: no random factor.
        rules.backoff = Some(Curve {
            jitter: Jitter::None,
            ..full(defaults.base.0, None, Cap::BeforeJitter)
        });
    } else if legacy {
        rules.backoff = Some(full(SECOND, None, Cap::BeforeJitter));
    } else if new {
        rules.backoff = Some(full(defaults.base.0, Some(MAX_BACKOFF), Cap::BeforeJitter));
        rules.throttle_backoff = Some(full(SECOND, Some(MAX_BACKOFF), Cap::BeforeJitter));
        rules.retry_budget = Some(Budget::AwsStandard {
            retry_cost: 14.0,
            timeout_cost: 14.0,
            throttle_cost: Some(5.0),
        });
        rules.retry_after = Some(RetryAfter::Honour);
        rules.retry_after_over_backoff = Some(Tick(5 * SECOND));
    } else {
        rules.backoff = Some(full(defaults.base.0, Some(MAX_BACKOFF), Cap::AfterJitter));
        rules.retry_budget = Some(Budget::AwsStandard {
            retry_cost: 5.0,
            timeout_cost: 10.0,
            throttle_cost: None,
        });
    }
    Ok(rules)
}

/// `service`, a botocore service id (its entries in `_retry.json` change the defaults).
fn service<'a>(check: &Check, r: &'a Retries, path: &str) -> Result<&'a str> {
    let at = |key: &str| format!("{path}.{key}");
    Ok(match &r.service {
        None => "",
        Some(name) => {
            let typed = name.get_ref();
            let id = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if typed.is_empty() || !typed.chars().all(id) {
                return check.error_allowing(
                    name.span(),
                    &at("service"),
                    format!("\"{typed}\" is not a botocore service id"),
                    "lowercase letters, digits and hyphens, as `client.meta.service_model.\
                     service_id.hyphenize()` gives (\"dynamodb\", \"dynamodb-streams\", \"s3\")",
                );
            }
            if let Some(meant) = crate::suggest::closest(typed, SERVICES) {
                return check.error_allowing(
                    name.span(),
                    &at("service"),
                    format!("\"{typed}\" is no service botocore has entries for"),
                    &format!("\"{meant}\" (or any other service id, which takes the defaults)"),
                );
            }
            typed.as_str()
        }
    })
}

/// `max_attempts` (retries) or `total_max_attempts` (attempts), at most one of them.
fn attempts(check: &Check, r: &Retries, defaults: Defaults, path: &str) -> Result<u32> {
    let at = |key: &str| format!("{path}.{key}");
    Ok(match (&r.max_attempts, &r.total_max_attempts) {
        (Some(_), Some(total)) => {
            return check.error_allowing(
                total.span(),
                &at("total_max_attempts"),
                "botocore takes one of max_attempts (retries) and total_max_attempts".into(),
                "one of the two",
            );
        }
        (Some(retries), None) => attempts_after(check, Some(retries), 0, &at("max_attempts"))?,
        (None, Some(total)) if *total.get_ref() == 0 => {
            return check.error_allowing(
                total.span(),
                &at("total_max_attempts"),
                "the first attempt is always made".into(),
                "1 or more, counting the first attempt",
            );
        }
        (None, Some(total)) => *total.get_ref(),
        (None, None) => defaults.attempts,
    })
}
