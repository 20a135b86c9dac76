//! A trace as an incident to replay (`retrysim calibrate --incident`): the first attempts'
//! times, which `arrival = "recorded"` starts tasks at, and each operation's health over time,
//! stretch by stretch, which a tool's `health` follows — the dependency as the trace saw it,
//! not the policy that was calling it, so the same incident runs again under any policy.
//!
//! Times are from the trace's first call, of any operation, so the arrivals and every tool's
//! stretches share one clock. A stretch is as wide as keeps the trace to at most
//! [`MOST_STRETCHES`] of them, a whole number of seconds and at least one: fine enough to show
//! an outage of a few seconds in a trace of ten minutes. A stretch with no call carries the one
//! before it (its `calls` says 0).

use std::fmt::Write;

use super::observed::{Call, Observed, Operation};
use super::span::Outcome;
use crate::metrics::Quantiles;
use crate::time::{TICKS_PER_SECOND, Tick};

/// The most stretches an operation's health gets.
pub const MOST_STRETCHES: u64 = 600;
/// The fewest answered calls a stretch needs for its latency to be its own: the median of
/// fewer is mostly noise, which would widen the replayed latencies, so such a stretch keeps
/// the tool's (`latency` 1).
pub const FEWEST_FOR_LATENCY: u64 = 20;

/// The trace's clock: its first call's start, and the width of a stretch. `None` where no call
/// was kept.
pub fn clock(observed: &Observed) -> Option<(i64, Tick)> {
    // Each operation's calls are in the order they started: its first and last are its ends.
    let ends = (observed.operations.values())
        .filter_map(|o| Some((o.calls.first()?.start, o.calls.last()?.start)));
    let first = ends.clone().map(|e| e.0).min()?;
    let last = ends.map(|e| e.1).max()?;
    let span = (last - first) as u64;
    let second = TICKS_PER_SECOND;
    let width = span.div_ceil(MOST_STRETCHES).div_ceil(second).max(1) * second;
    Some((first, Tick(width)))
}

/// `arrivals.csv`: the first attempts of `op`, as durations since `origin`.
pub fn arrivals(op: &Operation, origin: i64) -> String {
    let mut text = String::from("at\n");
    for c in op.calls.iter().filter(|c| c.first) {
        let _ = writeln!(text, "{}s", seconds(c.start - origin));
    }
    text
}

/// A duration in microseconds as seconds, to the microsecond, trailing zeros dropped.
fn seconds(micros: i64) -> String {
    let text = format!("{:.6}", micros as f64 / TICKS_PER_SECOND as f64);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// `<tool>-health.csv`: `op`'s stretches of `width` from `origin`, each with its calls, their
/// outcomes' rates and their latencies' median against the whole trace's. Calls without a
/// reply are split between a lost request and a lost reply as `replied` says the server
/// completed them (the share of those calls whose reply was lost), or all lost requests.
pub fn health(op: &Operation, (origin, width): (i64, Tick), replied: f64) -> String {
    let calls = &op.calls;
    let whole = median(calls.iter());
    let stretch_of = |c: &Call| ((c.start - origin) as u64) / width.0;
    let count = calls.last().map_or(0, |c| stretch_of(c) + 1);
    let mut text = String::from(
        "from,calls,request_loss,server_error,reply_loss,throttled,forbidden,invalid,connect_failure,latency\n",
    );
    let mut at = 0;
    let mut carried = String::from("0,0,0,0,0,0,0,1");
    for k in 0..count {
        let start = at;
        while at < calls.len() && stretch_of(&calls[at]) == k {
            at += 1;
        }
        let these = &calls[start..at];
        let from = seconds((k * width.0) as i64);
        if these.iter().all(|c| c.outcome == Outcome::Cancelled) {
            let _ = writeln!(text, "{from}s,0,{carried}");
            continue;
        }
        let n = these
            .iter()
            .filter(|c| c.outcome != Outcome::Cancelled)
            .count() as f64;
        let rate =
            |o: &[Outcome]| these.iter().filter(|c| o.contains(&c.outcome)).count() as f64 / n;
        let silent = rate(&[Outcome::Timeout, Outcome::Reset]);
        let latency = match (median(these.iter()), whole) {
            (Some((here, n)), Some((all, _))) if all > 0.0 && n >= FEWEST_FOR_LATENCY => here / all,
            _ => 1.0,
        };
        carried = [
            silent * (1.0 - replied),
            rate(&[Outcome::ServerError]),
            silent * replied,
            rate(&[Outcome::Throttled]),
            rate(&[Outcome::Forbidden]),
            rate(&[Outcome::Invalid]),
            rate(&[Outcome::Connect]),
        ]
        .map(super::write::share_down)
        .join(",")
            + &format!(",{}", super::write::share(three_digits(latency)));
        let _ = writeln!(text, "{from}s,{},{carried}", n as u64);
    }
    text
}

/// `x` to three significant digits: the precision the latency histogram keeps.
fn three_digits(x: f64) -> f64 {
    let scale = 10f64.powi(2 - x.log10().floor() as i32);
    (x * scale).round() / scale
}

/// The median round trip of the calls that got a reply, in ticks, and how many they are;
/// `None` without one.
fn median<'a>(calls: impl Iterator<Item = &'a Call>) -> Option<(f64, u64)> {
    let mut q = Quantiles::default();
    let answered = calls.filter(|c| {
        !matches!(
            c.outcome,
            Outcome::Timeout | Outcome::Reset | Outcome::Connect | Outcome::Cancelled
        )
    });
    for c in answered {
        q.record(c.duration);
    }
    (!q.is_empty()).then(|| (q.near(0.5).0 as f64, q.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calibrate::Span;

    fn span(start_ms: i64, outcome: Outcome, resend: bool) -> Span {
        Span {
            operation: "op".into(),
            start: start_ms * 1_000,
            duration: Tick::from_millis(if outcome == Outcome::ServerError {
                300
            } else {
                100
            }),
            outcome,
            retry_after: None,
            resend,
            call: None,
        }
    }

    /// Calls at 0, 0.5, 1.2 (a resend), 1.4 and 3.1 s: arrivals at the first attempts only;
    /// stretches of a second, the second all 5xx, the third empty and carrying the second, the
    /// fourth healthy; too few calls in each for a latency of its own.
    #[test]
    fn an_incident_is_its_arrivals_and_its_stretches() {
        let mut observed = Observed::default();
        for (ms, outcome, resend) in [
            (0, Outcome::Ok, false),
            (500, Outcome::Ok, false),
            (1_200, Outcome::ServerError, true),
            (1_400, Outcome::ServerError, false),
            (3_100, Outcome::Ok, false),
        ] {
            observed.add(span(ms, outcome, resend)).unwrap();
        }
        let (origin, width) = clock(&observed).unwrap();
        assert_eq!((origin, width), (0, Tick::from_secs(1)));
        let op = &observed.operations["op"];
        assert_eq!(arrivals(op, origin), "at\n0s\n0.5s\n1.4s\n3.1s\n");
        let lines: Vec<String> = health(op, (origin, width), 0.0)
            .lines()
            .skip(1)
            .map(String::from)
            .collect();
        assert_eq!(
            lines,
            [
                "0s,2,0,0,0,0,0,0,0,1",
                "1s,2,0,1,0,0,0,0,0,1",
                "2s,0,0,1,0,0,0,0,0,1",
                "3s,1,0,0,0,0,0,0,0,1",
            ]
        );
    }

    /// Sixty calls of 100 ms in the first second and twenty of 300 ms (5xx) in the next: the
    /// second stretch is three times as slow as the trace's median.
    #[test]
    fn a_stretch_with_calls_enough_has_a_latency_of_its_own() {
        let mut observed = Observed::default();
        for k in 0..80 {
            let outcome = if k < 60 {
                Outcome::Ok
            } else {
                Outcome::ServerError
            };
            let ms = if k < 60 {
                k * 15
            } else {
                1_000 + (k - 60) * 40
            };
            observed.add(span(ms, outcome, false)).unwrap();
        }
        let (origin, width) = clock(&observed).unwrap();
        let text = health(&observed.operations["op"], (origin, width), 0.0);
        assert!(text.ends_with("\n1s,20,0,1,0,0,0,0,0,3\n"), "{text}");
    }
}
