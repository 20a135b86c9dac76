//! A policy's `concurrency` table: a fixed or AIMD limit on calls in flight per tool, and the
//! line a call over it waits in.

use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::config::resolve::{at, some, text};
use crate::config::validate::default;
use crate::policy::{ConcurrencyRule, LimitRule};

pub(super) fn concurrency(
    check: &Check,
    spanned: &Spanned<raw::Concurrency>,
    path: &str,
) -> Result<ConcurrencyRule> {
    let raw = spanned.get_ref();
    let at = |key: &str| format!("{path}.{key}");
    let aimd = match &raw.kind {
        None => false,
        Some(kind) => check.choice(kind, &at("kind"), &[("fixed", false), ("aimd", true)])?,
    };
    let limit = check.count(
        Some(&raw.limit),
        &at("limit"),
        1,
        "a limit of 0 sends nothing",
    )?;
    let aimd_keys = [
        ("min", raw.min.as_ref().map(Spanned::span)),
        ("max", raw.max.as_ref().map(Spanned::span)),
        ("increase", raw.increase.as_ref().map(Spanned::span)),
        ("decrease", raw.decrease.as_ref().map(Spanned::span)),
    ];
    if !aimd && let Some((key, Some(span))) = aimd_keys.iter().find(|(_, s)| s.is_some()) {
        return check.error_allowing(
            span.clone(),
            &at(key),
            format!("`{key}` adapts a limit, and this one is fixed"),
            "kind = \"aimd\" with min, max, increase and decrease",
        );
    }
    let limit = if aimd {
        let min = check.count(
            raw.min.as_ref(),
            &at("min"),
            default::AIMD_MIN,
            "a floor of 0 can stop every call",
        )?;
        let max = check.count(
            raw.max.as_ref(),
            &at("max"),
            default::AIMD_MAX.max(limit),
            "a ceiling of 0 sends nothing",
        )?;
        if !(min <= limit && limit <= max) {
            let span = raw
                .min
                .as_ref()
                .or(raw.max.as_ref())
                .map_or(raw.limit.span(), Spanned::span);
            return check.error_allowing(
                span,
                path,
                format!("the limit {limit} must lie within min {min} and max {max}"),
                "min ≤ limit ≤ max",
            );
        }
        LimitRule::Aimd {
            initial: limit,
            min,
            max,
            increase: check.number(
                raw.increase.as_ref(),
                &at("increase"),
                default::AIMD_INCREASE,
                |x| x.is_finite() && x > 0.0,
                "an increase",
                "a number above 0 (calls added per success)",
            )?,
            decrease: check.number(
                raw.decrease.as_ref(),
                &at("decrease"),
                default::AIMD_DECREASE,
                |x| x > 0.0 && x < 1.0,
                "a decrease",
                "a factor above 0 and below 1",
            )?,
        }
    } else {
        LimitRule::Fixed(limit)
    };
    let queue = raw.queue.as_ref().map_or(0, |q| *q.get_ref());
    Ok(ConcurrencyRule { limit, queue })
}

pub(in crate::config) fn write(c: &ConcurrencyRule) -> raw::Concurrency {
    let (kind, limit, aimd) = match c.limit {
        LimitRule::Fixed(n) => ("fixed", n, None),
        LimitRule::Aimd {
            initial,
            min,
            max,
            increase,
            decrease,
        } => ("aimd", initial, Some((min, max, increase, decrease))),
    };
    raw::Concurrency {
        kind: text(kind),
        limit: at(limit),
        min: aimd.map(|a| at(a.0)),
        max: aimd.map(|a| at(a.1)),
        increase: aimd.map(|a| at(a.2)),
        decrease: aimd.map(|a| at(a.3)),
        queue: some(c.queue),
    }
}
