//! Logical time: an integer count of ticks, one tick being one microsecond of simulated time.
//!
//! Time is never a float, so two events can be compared exactly and a run is the same on every
//! machine. Durations in configs carry a unit (`"250us"`, `"250ms"`, `"1.5s"`, `"2m"`, `"1h"`) or
//! are bare integers, which count ticks. Parsing is exact decimal arithmetic: a duration that is
//! not a whole number of ticks (`"0.5us"`) is refused rather than rounded.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Ticks in one second of simulated time.
pub const TICKS_PER_SECOND: u64 = 1_000_000;

/// A point on the logical clock, or a span of it, in ticks (microseconds).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Tick(pub u64);

impl Tick {
    pub const ZERO: Tick = Tick(0);
    pub const MAX: Tick = Tick(u64::MAX);

    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Tick {
        Tick(ms * 1_000)
    }

    /// `s` seconds.
    pub const fn from_secs(s: u64) -> Tick {
        Tick(s * TICKS_PER_SECOND)
    }

    /// Adds a span, saturating at the end of time rather than wrapping.
    pub fn after(self, span: Tick) -> Tick {
        Tick(self.0.saturating_add(span.0))
    }

    /// Rounded up to a whole number of `unit`s, as a header counts a wait: a Retry-After in
    /// seconds, a `retry-after-ms` in milliseconds.
    pub fn rounded_up_to(self, unit: Tick) -> Tick {
        Tick(self.0.div_ceil(unit.0).saturating_mul(unit.0))
    }

    /// The span from `earlier` to `self` (zero if `earlier` is later).
    pub fn since(self, earlier: Tick) -> Tick {
        Tick(self.0.saturating_sub(earlier.0))
    }

    /// In seconds, for rates and for reading.
    pub fn seconds(self) -> f64 {
        self.0 as f64 / TICKS_PER_SECOND as f64
    }
}

/// Units a duration may be written in, with their length in ticks.
const UNITS: [(&str, u64); 6] = [
    ("us", 1),
    ("µs", 1),
    ("ms", 1_000),
    ("s", TICKS_PER_SECOND),
    ("m", 60 * TICKS_PER_SECOND),
    ("h", 3_600 * TICKS_PER_SECOND),
];

/// What a duration may look like, for error messages.
pub const DURATION_HELP: &str = "a duration such as \"250us\", \"250ms\", \"1.5s\", \"2m\" or \"1h\", \
or a whole number of ticks (1 tick = 1 µs)";

/// Why a text is not a duration: the text, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DurationError {
    pub text: String,
    pub why: NotADuration,
}

/// What is wrong with a text read as a duration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotADuration {
    Negative,
    NoUnit,
    NotANumber,
    /// More than the clock (a `u64` of microseconds) counts.
    TooLong,
    /// A fraction of a tick.
    NotWhole,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = &self.text;
        match self.why {
            NotADuration::Negative => write!(f, "`{text}` is negative; durations are zero or more"),
            NotADuration::NoUnit => write!(f, "`{text}` has no known unit; write {DURATION_HELP}"),
            NotADuration::NotANumber => write!(f, "`{text}` is not a number followed by a unit"),
            NotADuration::TooLong => write!(f, "`{text}` is longer than the clock can count"),
            NotADuration::NotWhole => {
                write!(f, "`{text}` is not a whole number of ticks (1 tick = 1 µs)")
            }
        }
    }
}

impl std::error::Error for DurationError {}

/// Parses a duration written with a unit (`"1.5s"`) into ticks, exactly; an error says what is
/// wrong, for the config layer to place in the file.
pub fn parse_duration(text: &str) -> Result<Tick, DurationError> {
    let text = text.trim();
    let fail = |why| DurationError {
        text: text.to_string(),
        why,
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    if text.starts_with('-') {
        return Err(fail(NotADuration::Negative));
    }
    let Some(&(_, scale)) = UNITS.iter().find(|(name, _)| *name == unit.trim()) else {
        return Err(fail(NotADuration::NoUnit));
    };
    let (whole, frac) = match number.split_once('.') {
        Some((w, f)) => (w, f),
        None => (number, ""),
    };
    if whole.is_empty() && frac.is_empty() || frac.contains('.') {
        return Err(fail(NotADuration::NotANumber));
    }
    let too_long = || fail(NotADuration::TooLong);
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_long())?
    };
    let mut ticks = whole.checked_mul(scale).ok_or_else(too_long)?;
    // The fraction contributes frac_digits · scale / 10^len ticks, which must be whole.
    let frac_digits = frac.trim_end_matches('0');
    if !frac_digits.is_empty() {
        let denominator = 10u128
            .checked_pow(frac_digits.len() as u32)
            .ok_or_else(too_long)?;
        let numerator: u128 = frac_digits.parse::<u128>().map_err(|_| too_long())? * scale as u128;
        if !numerator.is_multiple_of(denominator) {
            return Err(fail(NotADuration::NotWhole));
        }
        let extra = u64::try_from(numerator / denominator).map_err(|_| too_long())?;
        ticks = ticks.checked_add(extra).ok_or_else(too_long)?;
    }
    Ok(Tick(ticks))
}

/// Prints a span in a unit that keeps it exact and short: `24h`, `2m`, `1.5s`, `250ms`, `7us`.
impl fmt::Display for Tick {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        if t == 0 {
            return write!(f, "0s");
        }
        for (unit, scale) in [
            ("h", 3_600 * TICKS_PER_SECOND),
            ("m", 60 * TICKS_PER_SECOND),
        ] {
            if t.is_multiple_of(scale) {
                return write!(f, "{}{unit}", t / scale);
            }
        }
        for (unit, scale) in [("s", TICKS_PER_SECOND), ("ms", 1_000)] {
            if t >= scale {
                let whole = t / scale;
                let rest = t % scale;
                if rest == 0 {
                    return write!(f, "{whole}{unit}");
                }
                let digits = scale.ilog10() as usize;
                let frac = format!("{rest:0digits$}");
                return write!(f, "{whole}.{}{unit}", frac.trim_end_matches('0'));
            }
        }
        write!(f, "{t}us")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_convert_exactly() {
        assert_eq!(parse_duration("250us"), Ok(Tick(250)));
        assert_eq!(parse_duration("250ms"), Ok(Tick(250_000)));
        assert_eq!(parse_duration("1.5s"), Ok(Tick(1_500_000)));
        assert_eq!(parse_duration("0.000001s"), Ok(Tick(1)));
        assert_eq!(parse_duration("2m"), Ok(Tick(120_000_000)));
        assert_eq!(parse_duration("1h"), Ok(Tick(3_600_000_000)));
        assert_eq!(parse_duration(".5ms"), Ok(Tick(500)));
        assert_eq!(parse_duration("1.50s"), Ok(Tick(1_500_000)));
    }

    #[test]
    fn bad_durations_say_why() {
        let why = |text: &str| parse_duration(text).map_err(|e| e.why);
        assert_eq!(why("-1s"), Err(NotADuration::Negative));
        assert_eq!(why("0.5us"), Err(NotADuration::NotWhole));
        assert_eq!(why("10 parsecs"), Err(NotADuration::NoUnit));
        assert_eq!(why("1.2.3s"), Err(NotADuration::NotANumber));
        assert_eq!(why("s"), Err(NotADuration::NotANumber));
        assert_eq!(why("99999999999999999999s"), Err(NotADuration::TooLong));
        let said = parse_duration("0.5us").unwrap_err().to_string();
        assert!(said.contains("`0.5us`") && said.contains("whole number of ticks"));
    }

    #[test]
    fn display_round_trips() {
        for t in [
            0,
            1,
            999,
            1_000,
            1_500,
            250_000,
            1_500_000,
            120_000_000,
            3_000_001,
        ] {
            let shown = Tick(t).to_string();
            assert_eq!(parse_duration(&shown), Ok(Tick(t)), "{shown}");
        }
    }
}
