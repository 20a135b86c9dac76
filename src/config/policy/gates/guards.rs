//! The guards a policy may put around a tool: a circuit breaker and a retry budget.

use crate::config::check::{Check, Result};
use crate::config::policy::classes;
use crate::config::raw;
use crate::config::resolve::{at, duration, some, text, texts, ticks, when};
use crate::config::validate::default;
use crate::policy::{BreakerRule, BudgetRule, Refuses, RetryOn, Trip, Window};
use toml::{Spanned, Value};

/// A breaker trips on `consecutive_failures`, or on a `failure_rate` over a `window` (a number
/// of calls or a duration) once it holds `minimum_calls`; the two rules exclude each other.
pub(super) fn breaker(
    check: &Check,
    spanned: &Spanned<raw::Breaker>,
    path: &str,
) -> Result<BreakerRule> {
    let raw = spanned.get_ref();
    let rate_keys = [
        raw.failure_rate.as_ref().map(Spanned::span),
        raw.window.as_ref().map(Spanned::span),
        raw.minimum_calls.as_ref().map(Spanned::span),
    ];
    let trip = match &raw.consecutive_failures {
        Some(n) => {
            if let Some(span) = rate_keys.into_iter().flatten().next() {
                return check.error_allowing(
                    span,
                    path,
                    "a breaker trips on consecutive failures or on a failure rate, not both".into(),
                    "consecutive_failures alone, or failure_rate with window and minimum_calls",
                );
            }
            Trip::Consecutive(check.count(
                Some(n),
                &format!("{path}.consecutive_failures"),
                1,
                "0 failures would trip it before any call",
            )?)
        }
        None => {
            let rate = check.number(
                raw.failure_rate.as_ref(),
                &format!("{path}.failure_rate"),
                default::FAILURE_RATE,
                |r| r > 0.0 && r <= 1.0,
                "a failure rate",
                "a share above 0 and at most 1",
            )?;
            let window = match &raw.window {
                None => Window::Calls(default::WINDOW_CALLS),
                Some(w) => match w.get_ref() {
                    Value::Integer(n) if *n >= 1 && *n <= i64::from(u32::MAX) => {
                        Window::Calls(*n as u32)
                    }
                    Value::String(_) => Window::Time(check.duration(w, &format!("{path}.window"))?),
                    other => {
                        return check.error_allowing(
                            w.span(),
                            &format!("{path}.window"),
                            format!("{other} is not a window"),
                            "a number of calls (≥ 1), or a duration such as \"10s\"",
                        );
                    }
                },
            };
            let minimum = match window {
                Window::Calls(n) => n,
                Window::Time(_) => 1,
            };
            Trip::Rate {
                rate,
                window,
                minimum_calls: check.count(
                    raw.minimum_calls.as_ref(),
                    &format!("{path}.minimum_calls"),
                    minimum,
                    "0 calls is no evidence",
                )?,
            }
        }
    };
    let counts = classes(check, raw.counts.as_ref(), &format!("{path}.counts"))?;
    Ok(BreakerRule {
        trip,
        refuses: check.named(
            raw.refuses.as_ref(),
            &format!("{path}.refuses"),
            &Refuses::ALL,
            Refuses::name,
            Refuses::All,
        )?,
        open_duration: check.duration_or(
            &raw.open_duration,
            &format!("{path}.open_duration"),
            default::OPEN_DURATION,
        )?,
        half_open_probes: check.count(
            raw.half_open_probes.as_ref(),
            &format!("{path}.half_open_probes"),
            default::HALF_OPEN_PROBES,
            "0 probes would keep it open for ever",
        )?,
        counts,
    })
}

/// The kinds of retry budget, as a config names them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    TokenBucket,
    AwsStandard,
    Ratio,
    Adaptive,
    FailureRatio,
}

/// A retry budget: its kind, and that kind's settings (the defaults of gRPC's example, the AWS
/// SDKs' standard mode, Finagle, and the published studies' adaptive bucket and retry
/// breaker); a setting of another kind is refused.
pub(super) fn retry_budget(
    check: &Check,
    spanned: &Spanned<raw::RetryBudget>,
    path: &str,
    retried: RetryOn,
) -> Result<BudgetRule> {
    let raw = spanned.get_ref();
    use Kind::*;
    let kinds = [
        ("token_bucket", TokenBucket),
        ("aws_standard", AwsStandard),
        ("ratio", Ratio),
        ("adaptive", Adaptive),
        ("failure_ratio", FailureRatio),
    ];
    let kind = check.choice(&raw.kind, &format!("{path}.kind"), &kinds)?;
    let keys = numbers(raw);
    refuse_other_kinds(check, raw, kind, path)?;
    let number = |key: &str, default: f64| -> Result<f64> {
        let value = keys
            .iter()
            .find(|(n, _, _)| *n == key)
            .and_then(|(_, _, v)| v.as_ref());
        let valid: fn(f64) -> bool = |x| x.is_finite() && x >= 0.0;
        let what = "a setting of a budget";
        check.number(
            value,
            &format!("{path}.{key}"),
            default,
            valid,
            what,
            "a finite number ≥ 0",
        )
    };
    Ok(match kind {
        TokenBucket => BudgetRule::TokenBucket {
            max_tokens: number("max_tokens", default::MAX_TOKENS)?,
            token_ratio: number("token_ratio", default::TOKEN_RATIO)?,
            debits: match &raw.debit_on {
                None => None,
                Some(on) => check.choice(
                    on,
                    &format!("{path}.debit_on"),
                    &[("any_failure", None), ("retryable", Some(retried))],
                )?,
            },
        },
        AwsStandard => BudgetRule::AwsStandard {
            capacity: number("capacity", default::CAPACITY)?,
            retry_cost: number("retry_cost", default::RETRY_COST)?,
            timeout_cost: number("timeout_cost", default::TIMEOUT_COST)?,
            throttle_cost: match raw.throttle_cost {
                None => None,
                Some(_) => Some(number("throttle_cost", 0.0)?),
            },
            success_credit: number("success_credit", default::SUCCESS_CREDIT)?,
        },
        Ratio => BudgetRule::Ratio {
            ttl: check.duration_or(&raw.ttl, &format!("{path}.ttl"), default::TTL)?,
            min_per_second: number("min_per_second", default::MIN_PER_SECOND)?,
            percent: number("percent", default::PERCENT)?,
        },
        Adaptive => BudgetRule::Adaptive {
            size: number("size", default::ADAPTIVE_SIZE)?,
            deposit: number("deposit", default::ADAPTIVE_DEPOSIT)?,
            on_success: match &raw.deposit_on {
                None => false,
                Some(on) => check.choice(
                    on,
                    &format!("{path}.deposit_on"),
                    &[("first_try", false), ("success", true)],
                )?,
            },
        },
        FailureRatio => BudgetRule::FailureRatio {
            ratio: number("ratio", default::FAILURE_RATIO)?,
        },
    })
}

/// A budget's numeric settings, each with the kind it belongs to.
fn numbers(raw: &raw::RetryBudget) -> [(&'static str, Kind, &Option<Spanned<f64>>); 12] {
    use Kind::*;
    [
        ("max_tokens", TokenBucket, &raw.max_tokens),
        ("token_ratio", TokenBucket, &raw.token_ratio),
        ("capacity", AwsStandard, &raw.capacity),
        ("retry_cost", AwsStandard, &raw.retry_cost),
        ("timeout_cost", AwsStandard, &raw.timeout_cost),
        ("throttle_cost", AwsStandard, &raw.throttle_cost),
        ("success_credit", AwsStandard, &raw.success_credit),
        ("min_per_second", Ratio, &raw.min_per_second),
        ("percent", Ratio, &raw.percent),
        ("size", Adaptive, &raw.size),
        ("deposit", Adaptive, &raw.deposit),
        ("ratio", FailureRatio, &raw.ratio),
    ]
}

/// Refuses the first setting, numeric or not, that belongs to another kind than `kind`, and
/// names the settings this kind takes.
fn refuse_other_kinds(check: &Check, raw: &raw::RetryBudget, kind: Kind, path: &str) -> Result<()> {
    use Kind::*;
    let span = |v: Option<&Spanned<String>>| v.map(Spanned::span);
    let others = [
        ("ttl", Ratio, raw.ttl.as_ref().map(Spanned::span)),
        ("deposit_on", Adaptive, span(raw.deposit_on.as_ref())),
        ("debit_on", TokenBucket, span(raw.debit_on.as_ref())),
    ];
    let settings: Vec<(&str, Kind, Option<std::ops::Range<usize>>)> = (numbers(raw).into_iter())
        .map(|(n, k, v)| (n, k, v.as_ref().map(Spanned::span)))
        .chain(others)
        .collect();
    let Some((key, _, Some(span))) = settings.iter().find(|(_, k, s)| *k != kind && s.is_some())
    else {
        return Ok(());
    };
    let takes: Vec<&str> = (settings.iter())
        .filter(|(_, k, _)| *k == kind)
        .map(|(n, _, _)| *n)
        .collect();
    check.error_allowing(
        span.clone(),
        &format!("{path}.{key}"),
        format!(
            "`{key}` does not apply to kind = \"{}\"",
            raw.kind.get_ref()
        ),
        &format!("for this kind: {}", takes.join(", ")),
    )
}

pub(in crate::config) fn write_breaker(b: &BreakerRule) -> raw::Breaker {
    let (consecutive, rate) = match b.trip {
        Trip::Consecutive(n) => (Some(n), None),
        Trip::Rate {
            rate,
            window,
            minimum_calls,
        } => (None, Some((rate, window, minimum_calls))),
    };
    let window = |w: Window| match w {
        Window::Calls(n) => Value::Integer(n.into()),
        Window::Time(span) => duration(span),
    };
    raw::Breaker {
        consecutive_failures: consecutive.map(at),
        failure_rate: rate.map(|(r, _, _)| at(r)),
        window: rate.map(|(_, w, _)| at(window(w))),
        minimum_calls: rate.map(|(_, _, m)| at(m)),
        refuses: when(b.refuses != Refuses::All, b.refuses.name().into()),
        open_duration: ticks(b.open_duration),
        half_open_probes: some(b.half_open_probes),
        counts: texts(b.counts.classes().map(|c| c.name())),
    }
}

pub(in crate::config) fn write_retry_budget(b: &BudgetRule) -> raw::RetryBudget {
    let mut out = raw::RetryBudget::of_kind(at(b.name().to_string()));
    match *b {
        BudgetRule::TokenBucket {
            max_tokens,
            token_ratio,
            debits,
        } => {
            out.max_tokens = some(max_tokens);
            out.token_ratio = some(token_ratio);
            out.debit_on = when(debits.is_some(), "retryable".into());
        }
        BudgetRule::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            throttle_cost,
            success_credit,
        } => {
            out.capacity = some(capacity);
            out.retry_cost = some(retry_cost);
            out.timeout_cost = some(timeout_cost);
            out.success_credit = some(success_credit);
            out.throttle_cost = throttle_cost.map(at);
        }
        BudgetRule::Ratio {
            ttl,
            min_per_second,
            percent,
        } => {
            out.ttl = ticks(ttl);
            out.min_per_second = some(min_per_second);
            out.percent = some(percent);
        }
        BudgetRule::Adaptive {
            size,
            deposit,
            on_success,
        } => {
            out.size = some(size);
            out.deposit = some(deposit);
            out.deposit_on = text(if on_success { "success" } else { "first_try" });
        }
        BudgetRule::FailureRatio { ratio } => out.ratio = some(ratio),
    }
    out
}
