//! A policy's hedges: how long a call goes unanswered before another attempt joins it
//! (`hedge_delay`), and how hedges follow one another (`hedging`).

use super::timeout;
use crate::config::check::{Check, Result, key};
use crate::config::raw;
use crate::config::resolve::when;
use crate::policy::{Attempts, Hedges, Hedging, Policy, Timing, Wait, hedge};
use crate::time::Tick;

/// Staggered hedging needs `max_attempts` to bound the attempts out at once.
pub(super) fn read(
    check: &Check,
    raw: &raw::Policy,
    max_attempts: Attempts,
    path: &str,
) -> Result<Hedges> {
    let delay = key!(path, raw.hedge_delay);
    let delay = match delay.value {
        None => Wait::None,
        // A hedge at once: the attempts go out together.
        Some(v) if v.get_ref().as_str() == Some("0s") => Wait::Fixed(Tick::ZERO),
        Some(v) => timeout(check, v, &delay.path)?,
    };
    let mode = key!(path, raw.hedging);
    let hedging = check.named(
        mode.value.as_ref(),
        &mode.path,
        &Hedging::ALL,
        Hedging::name,
        Hedging::Single,
    )?;
    if let Some(h) = mode
        .value
        .as_ref()
        .filter(|_| hedging == Hedging::Staggered)
        && max_attempts.cap().is_none_or(|n| n > hedge::MOST_OUT)
    {
        return check.error_allowing(
            h.span(),
            &mode.path,
            "staggered hedging may keep every attempt out at once".into(),
            &format!("max_attempts of at most {}", hedge::MOST_OUT),
        );
    }
    if let (Some(h), Wait::None) = (mode.value, delay) {
        return check.error_allowing(
            h.span(),
            &mode.path,
            "hedging says how hedges follow one another, and this policy sends none".into(),
            "a `hedge_delay` beside `hedging`",
        );
    }
    Ok(Hedges {
        delay,
        mode: hedging,
    })
}

pub(super) fn write(hedges: &Hedges, out: &mut raw::Policy) {
    let Hedges { delay, mode } = *hedges;
    let base = Policy::new("").hedges;
    out.hedge_delay = when(delay != base.delay, delay.to_string().into());
    out.hedging = when(mode != base.mode, mode.name().into());
}

/// The timeout with the hedges, as one clause: both say how long a call waits on an attempt.
pub(super) fn with_timeout(time: &Timing, hedges: &Hedges) -> String {
    let timeout = match (time.timeout, hedges.delay) {
        (Wait::None, Wait::None) => "no timeout".to_string(),
        (rule, Wait::None) => format!("timeout {rule}"),
        (Wait::None, hedge) => format!("no timeout, hedged after {hedge}"),
        (rule, hedge) => format!("timeout {rule}, hedged after {hedge}"),
    };
    match hedges.mode {
        Hedging::Staggered => format!("{timeout}, staggered"),
        Hedging::Single => timeout,
    }
}
