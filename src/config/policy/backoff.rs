//! A backoff table: the growth of the delay, its cap and where the cap applies, the jitter and
//! its size, a floor, and the first retry's rule.

use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::config::resolve::{duration, some, text, ticks, when};
use crate::config::validate::default;
use crate::policy::{Backoff, Cap, FirstRetry, Growth, Jitter};
use crate::time::Tick;

pub(super) fn backoff_or_none(
    check: &Check,
    value: Option<&Spanned<raw::Backoff>>,
    path: &str,
) -> Result<Backoff> {
    match value {
        None => Ok(Backoff::IMMEDIATE),
        Some(b) => backoff(check, b.get_ref(), &format!("{path}.backoff")),
    }
}

pub(super) fn backoff(check: &Check, raw: &raw::Backoff, path: &str) -> Result<Backoff> {
    let growth = check.named(
        raw.kind.as_ref(),
        &format!("{path}.kind"),
        &Growth::ALL,
        Growth::name,
        Growth::Exponential,
    )?;
    let jitter = check.named(
        raw.jitter.as_ref(),
        &format!("{path}.jitter"),
        &Jitter::ALL,
        Jitter::name,
        Jitter::Full,
    )?;
    let initial_delay = check.duration_or(
        &raw.initial_delay,
        &format!("{path}.initial_delay"),
        default::INITIAL_DELAY,
    )?;
    let max_delay = match &raw.max_delay {
        Some(v) if v.get_ref().as_str() == Some("none") => None,
        other => {
            Some(check.duration_or(other, &format!("{path}.max_delay"), default::MAX_DELAY)?)
        }
    };
    if let Some(max) = max_delay.filter(|&m| m < initial_delay) {
        let span = raw
            .max_delay
            .as_ref()
            .or(raw.initial_delay.as_ref())
            .map_or(0..0, |v| v.span());
        return check.error(
            span,
            &format!("{path}.max_delay"),
            format!("max_delay ({max}) is below initial_delay ({initial_delay})"),
        );
    }
    let multiplier = check.number(
        raw.multiplier.as_ref(),
        &format!("{path}.multiplier"),
        default::MULTIPLIER,
        |m| m.is_finite() && m >= 1.0,
        "a multiplier that grows the delay",
        "a finite number ≥ 1",
    )?;
    let count_from = match &raw.count_from {
        None => 0,
        Some(c) if *c.get_ref() <= 1 => *c.get_ref(),
        Some(c) => {
            return check.error_allowing(
                c.span(),
                &format!("{path}.count_from"),
                format!("{} is not a convention for the first retry", c.get_ref()),
                "0 (the first ceiling is initial_delay) or 1 (initial_delay × multiplier)",
            );
        }
    };
    let cap = check.named(
        raw.cap.as_ref(),
        &format!("{path}.cap"),
        &Cap::ALL,
        Cap::name,
        Cap::BeforeJitter,
    )?;
    let first_retry = check.named(
        raw.first_retry.as_ref(),
        &format!("{path}.first_retry"),
        &FirstRetry::ALL,
        FirstRetry::name,
        FirstRetry::Backoff,
    )?;
    let min_delay = check.duration_or(&raw.min_delay, &format!("{path}.min_delay"), "0s")?;
    if let (Some(m), Some(max)) = (raw.min_delay.as_ref(), max_delay)
        && min_delay > max
    {
        return check.error(
            m.span(),
            &format!("{path}.min_delay"),
            format!("min_delay ({min_delay}) is above max_delay ({max})"),
        );
    }
    Ok(Backoff {
        growth,
        initial_delay,
        multiplier,
        max_delay,
        cap,
        jitter,
        jitter_factor: jitter_factor(check, raw, jitter, path)?,
        jitter_max: jitter_max(check, raw, jitter, path)?,
        min_delay,
        first_retry,
        count_from,
    })
}

/// f of proportional jitter: from 0 (none) to 1 (from nothing to twice the delay); 0.2, as
/// gRPC's, by default. f of reduced jitter: from 0 to 1 (up to the whole delay cut); 0.25, as
/// the OpenAI and Anthropic SDKs', by default. Refused with any other jitter, which would
/// ignore it.
fn jitter_factor(check: &Check, raw: &raw::Backoff, jitter: Jitter, path: &str) -> Result<f64> {
    let key = format!("{path}.jitter_factor");
    match (&raw.jitter_factor, jitter) {
        (Some(f), Jitter::Proportional | Jitter::Reduced) => check.number(
            Some(f),
            &key,
            0.0,
            |f| (0.0..=1.0).contains(&f),
            "a share of the delay to jitter by",
            match jitter {
                Jitter::Reduced => {
                    "a number from 0 to 1 (the OpenAI and Anthropic SDKs 0.25, Stripe 0.5)"
                }
                _ => "a number from 0 to 1 (gRPC 0.2, resilience4j 0.5, Polly 0.25)",
            },
        ),
        (None, Jitter::Proportional) => Ok(default::JITTER_FACTOR),
        (None, Jitter::Reduced) => Ok(default::REDUCED_JITTER_FACTOR),
        (Some(f), other) => check.error_allowing(
            f.span(),
            &key,
            format!(
                "jitter_factor applies to proportional and reduced jitter, not to \"{}\"",
                other.name()
            ),
            "jitter = \"proportional\" or \"reduced\" with it, or no jitter_factor",
        ),
        (None, _) => Ok(0.0),
    }
}

/// The most additive jitter adds: required with it, refused with any other jitter.
fn jitter_max(check: &Check, raw: &raw::Backoff, jitter: Jitter, path: &str) -> Result<Tick> {
    let key = format!("{path}.jitter_max");
    match (&raw.jitter_max, jitter) {
        (Some(d), Jitter::Additive) => check.duration(d, &key),
        (None, Jitter::Additive) => check.error_allowing(
            raw.jitter.as_ref().map_or(0..0, |j| j.span()),
            &key,
            "additive jitter needs jitter_max, the most it adds".into(),
            "a duration, such as jitter_max = \"1s\" (tenacity's default)",
        ),
        (Some(d), other) => check.error_allowing(
            d.span(),
            &key,
            format!(
                "jitter_max applies to additive jitter, not to \"{}\"",
                other.name()
            ),
            "jitter = \"additive\" with it, or no jitter_max",
        ),
        (None, _) => Ok(Tick::ZERO),
    }
}

/// The backoff with every default filled in; the rules added since the first backoff are
/// listed only where they differ from their defaults.
pub(in crate::config) fn write(b: &Backoff) -> raw::Backoff {
    raw::Backoff {
        kind: text(b.growth.name()),
        initial_delay: ticks(b.initial_delay),
        multiplier: some(b.multiplier),
        max_delay: some(b.max_delay.map_or("none".into(), duration)),
        jitter: text(b.jitter.name()),
        count_from: when(b.count_from != 0, b.count_from),
        cap: when(b.cap != Cap::BeforeJitter, b.cap.name().into()),
        jitter_factor: when(
            matches!(b.jitter, Jitter::Proportional | Jitter::Reduced),
            b.jitter_factor,
        ),
        jitter_max: when(b.jitter == Jitter::Additive, duration(b.jitter_max)),
        min_delay: when(b.min_delay > Tick::ZERO, duration(b.min_delay)),
        first_retry: when(
            b.first_retry != FirstRetry::Backoff,
            b.first_retry.name().into(),
        ),
    }
}
