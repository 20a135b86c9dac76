//! A policy's hedges: how long a call goes unanswered before another attempt joins it, and how
//! hedges follow one another.

use super::policy::timeout;
use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::policy::{Attempts, Hedging, Wait, hedge};
use crate::time::Tick;

/// `hedge_delay` and `hedging`; staggered hedging needs `max_attempts` to bound the attempts
/// out at once.
pub(super) fn hedges(
    check: &Check,
    raw: &raw::Policy,
    max_attempts: Attempts,
    path: &str,
) -> Result<(Wait, Hedging)> {
    let hedge = match &raw.hedge_delay {
        None => Wait::None,
        // A hedge at once: the attempts go out together.
        Some(v) if v.get_ref().as_str() == Some("0s") => Wait::Fixed(Tick::ZERO),
        Some(v) => timeout(check, v, &format!("{path}.hedge_delay"))?,
    };
    let hedging = check.named(
        raw.hedging.as_ref(),
        &format!("{path}.hedging"),
        &Hedging::ALL,
        Hedging::name,
        Hedging::Single,
    )?;
    if let Some(h) = raw
        .hedging
        .as_ref()
        .filter(|_| hedging == Hedging::Staggered)
        && max_attempts.cap().is_none_or(|n| n > hedge::MOST_OUT)
    {
        return check.error_allowing(
            h.span(),
            &format!("{path}.hedging"),
            "staggered hedging may keep every attempt out at once".into(),
            &format!("max_attempts of at most {}", hedge::MOST_OUT),
        );
    }
    if let (Some(h), Wait::None) = (&raw.hedging, hedge) {
        return check.error_allowing(
            h.span(),
            &format!("{path}.hedging"),
            "hedging says how hedges follow one another, and this policy sends none".into(),
            "a `hedge_delay` beside `hedging`",
        );
    }
    Ok((hedge, hedging))
}
