//! How long the client waits for one attempt's reply before abandoning it. Abandoning is the
//! client's decision only: the request goes on, the server still does the work and may commit,
//! and the late reply is dropped. The same rule, a [`Wait`], also sets when a hedge follows an
//! unanswered attempt.

use std::fmt;

use crate::model::{RoundTripError, Tool};
use crate::time::Tick;

/// A wait measured from an attempt's dispatch, as the config writes it: a policy's `timeout`
/// and its `hedge_delay` are each one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Wait {
    /// Wait as long as it takes.
    None,
    Fixed(Tick),
    /// The p-quantile of the tool's round trip (`"p50"`, `"p90"`, `"p99.9"`).
    Percentile(f64),
    /// A multiple of the tool's longest round trip (`"2x max"`).
    MaxMultiple(f64),
}

/// Which side of the timeout a reply at exactly its tick falls on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tie {
    /// Late, the default: the timer was set first and fires first, so an attempt is abandoned
    /// with probability P(round trip ≥ τ) — what a client whose timer and socket race sees.
    #[default]
    Late,
    /// In time: the textbook P(round trip > τ). On whole ticks that is a timer one tick later.
    InTime,
}

impl Tie {
    pub const ALL: [Tie; 2] = [Tie::Late, Tie::InTime];

    pub fn name(self) -> &'static str {
        match self {
            Tie::Late => "late",
            Tie::InTime => "in_time",
        }
    }

    /// The timer that puts a reply at exactly `wait` on this side.
    pub fn timer(self, wait: Tick) -> Tick {
        match self {
            Tie::Late => wait,
            Tie::InTime => Tick(wait.0.saturating_add(1)),
        }
    }
}

/// A policy's timeout and hedge delay on one tool, resolved once at validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Waits {
    /// The timer set on each attempt, the tie rule applied; `None` waits as long as it takes.
    pub timeout: Option<Tick>,
    /// When a hedge follows an unanswered attempt; `None` never.
    pub hedge: Option<Tick>,
}

impl Wait {
    /// This wait on `tool`, in ticks (`None`: for ever); an error says why the tool's latencies
    /// cannot answer the rule.
    pub fn on(self, tool: &Tool) -> Result<Option<Tick>, RoundTripError> {
        match self {
            Wait::None => Ok(None),
            Wait::Fixed(t) => Ok(Some(t)),
            Wait::Percentile(p) => tool.round_trip_quantile(p / 100.0).map(Some),
            Wait::MaxMultiple(m) => {
                let max = tool.round_trip_max()?;
                Ok(Some(Tick(libm::ceil(max.0 as f64 * m) as u64)))
            }
        }
    }

    /// Reads `"p90"`, `"2x max"` or a duration; `None` for anything else.
    pub fn parse(text: &str, duration: impl Fn(&str) -> Option<Tick>) -> Option<Wait> {
        let text = text.trim();
        if text == "none" {
            return Some(Wait::None);
        }
        if let Some(p) = text.strip_prefix('p').and_then(|p| p.parse::<f64>().ok()) {
            return (p > 0.0 && p < 100.0).then_some(Wait::Percentile(p));
        }
        if let Some(m) = text.strip_suffix("max") {
            let m = m.trim().strip_suffix('x')?.trim().parse::<f64>().ok()?;
            return (m.is_finite() && m > 0.0).then_some(Wait::MaxMultiple(m));
        }
        duration(text).map(Wait::Fixed)
    }
}

impl fmt::Display for Wait {
    /// The form a config writes, so the manifest's resolved config reads it back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Wait::None => write!(f, "none"),
            Wait::Fixed(t) => write!(f, "{t}"),
            Wait::Percentile(p) => write!(f, "p{p}"),
            Wait::MaxMultiple(m) => write!(f, "{m}x max"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::parse_duration;

    fn parse(text: &str) -> Option<Wait> {
        Wait::parse(text, |t| parse_duration(t).ok())
    }

    #[test]
    fn rules_read_as_written_and_print_back() {
        assert_eq!(parse("p90"), Some(Wait::Percentile(90.0)));
        assert_eq!(parse("p99.9"), Some(Wait::Percentile(99.9)));
        assert_eq!(parse("2x max"), Some(Wait::MaxMultiple(2.0)));
        assert_eq!(parse("1.5x max"), Some(Wait::MaxMultiple(1.5)));
        assert_eq!(parse("250ms"), Some(Wait::Fixed(Tick(250_000))));
        assert_eq!(parse("none"), Some(Wait::None));
        for bad in ["p0", "p100", "p", "max", "0x max", "soon"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
        for rule in ["p90", "p99.9", "2x max", "1.5x max", "250ms", "none"] {
            assert_eq!(parse(rule).unwrap().to_string(), rule);
        }
    }
}
