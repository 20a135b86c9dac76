//! What a trace shows of each operation, folded span by span in bounded memory: counts by
//! outcome, latencies in a histogram (three significant digits), and arrivals in time bins
//! that widen, by doubling, as the trace grows long.

use std::collections::{BTreeMap, BTreeSet};

use super::burst::{self, Fit, Runs};
use super::span::{Outcome, Span};
use crate::metrics::Quantiles;
use crate::time::{TICKS_PER_SECOND, Tick};

/// The most operations one trace may have: each keeps a histogram and its arrival bins.
pub const MAX_OPERATIONS: usize = 1000;
/// The longest operation (span) name read, in bytes: it becomes a tool's name and a file's,
/// and real operation names are a few dozen characters.
pub const MAX_NAME: usize = 256;
/// The most arrival bins an operation keeps before they are widened.
const MAX_BINS: usize = 4096;
/// The most server spans kept waiting for their client span, and client calls without a reply
/// waiting for their server span: beyond either, the join is given up, and the calls without
/// a reply are read from the client spans alone.
pub const MAX_JOIN: usize = 1 << 20;

/// The most calls kept one by one, over every operation, for the test of whether failures come
/// together ([`super::burst`]) and for an incident's arrivals and health: 24 bytes each, so
/// 48 MiB at most. Past it the test reads the calls read first, and says so, and no incident
/// is written.
pub const MAX_SEQUENCE: usize = 1 << 21;

/// Every operation seen, by name.
#[derive(Default)]
pub struct Observed {
    pub operations: BTreeMap<String, Operation>,
    /// Calls kept in order so far, and whether some were not, past [`MAX_SEQUENCE`].
    pub sequenced: usize,
    pub sequence_cut: bool,
    /// Spans of other kinds than client and server spans, read past.
    pub skipped: u64,
    /// The server's side of the calls, where the trace holds server spans.
    pub join: Join,
}

/// Client calls joined to the server spans that served them (by trace id and parent span
/// id), to tell a lost request (the server never did the work) from a lost reply (it did, and
/// the client never heard). Server spans come before the client span they served in an
/// export, as they end first, so each is dropped once its client span is read with a reply,
/// and what is kept is the calls without one.
#[derive(Default)]
pub struct Join {
    /// Server spans read.
    pub server_spans: u64,
    /// Calls a server span completed, whose client span has not been read.
    completed: BTreeSet<String>,
    /// Calls a client made that got no reply, by operation.
    unanswered: BTreeMap<String, String>,
    /// The join ran past [`MAX_JOIN`] and was given up.
    pub given_up: bool,
}

/// What the server spans say of one operation's calls that got no reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Unanswered {
    /// The server completed the call: its reply was lost.
    pub replies_lost: u64,
    /// No server span completed it: the request was lost, or failed before the work.
    pub requests_lost: u64,
}

/// One operation's calls.
pub struct Operation {
    /// Attempts by outcome, in the order of [`Outcome`]'s variants.
    counts: [u64; 9],
    /// Round trips of the calls that got a reply.
    pub latency: Quantiles,
    /// How long the client waited on the calls that timed out.
    pub timeouts: Quantiles,
    /// The waits refusals asked for.
    pub retry_after: Quantiles,
    pub arrivals: Arrivals,
    /// Each call, while [`MAX_SEQUENCE`] allows: in the order read while the trace is read,
    /// then in the order they started ([`Observed::sort_calls`]).
    pub(super) calls: Vec<Call>,
    /// Its burst test and fit, made once the trace is read (the config and the report both
    /// read them; the fit climbs a likelihood over every call).
    bursts: std::sync::OnceLock<(Runs, Option<Fit>)>,
}

/// One call kept: when it started (microseconds since the epoch), how it ended, how long it
/// took, and whether it was a first attempt (an arrival).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Call {
    pub start: i64,
    pub outcome: Outcome,
    pub duration: Tick,
    pub first: bool,
}

/// First attempts counted in bins of `width` microseconds, keyed by the bin's index since
/// the epoch. Widening merges aligned pairs, so the bins come out the same in any order of
/// spans.
#[derive(Clone)]
pub struct Arrivals {
    pub width: i64,
    pub bins: BTreeMap<i64, u64>,
}

impl Observed {
    /// Puts each operation's calls in the order they started, once the trace is read: a stable
    /// sort, so calls that started together keep the order read.
    pub fn sort_calls(&mut self) {
        for op in self.operations.values_mut() {
            op.calls.sort_by_key(|c| c.start);
        }
    }

    /// Adds one span; an error when a trace names too many operations to keep, or one by a name
    /// too long to be one.
    pub fn add(&mut self, span: Span) -> Result<(), String> {
        if span.operation.len() > MAX_NAME {
            return Err(format!(
                "an operation name of {} bytes, longer than the {MAX_NAME} retrysim reads",
                span.operation.len()
            ));
        }
        if !self.operations.contains_key(&span.operation) && self.operations.len() == MAX_OPERATIONS
        {
            return Err(format!(
                "more than {MAX_OPERATIONS} operations: calibrate a trace of fewer, or filter it by operation first"
            ));
        }
        let no_reply = matches!(span.outcome, Outcome::Timeout | Outcome::Reset);
        if let Some(call) = &span.call {
            self.join
                .client(call, no_reply.then_some(span.operation.as_str()));
        }
        let op = self
            .operations
            .entry(span.operation)
            .or_insert_with(Operation::new);
        op.counts[span.outcome as usize] += 1;
        if span.outcome != Outcome::Cancelled {
            if self.sequenced < MAX_SEQUENCE {
                op.calls.push(Call {
                    start: span.start,
                    outcome: span.outcome,
                    duration: span.duration,
                    first: !span.resend,
                });
                self.sequenced += 1;
            } else {
                self.sequence_cut = true;
            }
        }
        match span.outcome {
            Outcome::Cancelled => return Ok(()),
            Outcome::Timeout => op.timeouts.record(span.duration),
            Outcome::Connect | Outcome::Reset => {}
            _ => op.latency.record(span.duration),
        }
        if let Some(wait) = span.retry_after {
            op.retry_after.record(wait);
        }
        if !span.resend {
            op.arrivals.add(span.start);
        }
        Ok(())
    }

    /// A server span that served `call`, which `completed` or not.
    pub fn served(&mut self, call: String, completed: bool) {
        self.join.server_spans += 1;
        if completed && !self.join.given_up {
            self.join.completed.insert(call);
            self.join.check();
        }
    }

    /// The calls of `operation` that got no reply, as the server spans tell of them; `None`
    /// when the trace holds no server spans (or too many to join), and the client spans alone
    /// must do.
    pub fn unanswered(&self, operation: &str) -> Option<Unanswered> {
        if self.join.server_spans == 0 || self.join.given_up {
            return None;
        }
        let mut out = Unanswered::default();
        for (call, op) in &self.join.unanswered {
            if op == operation {
                match self.join.completed.contains(call) {
                    true => out.replies_lost += 1,
                    false => out.requests_lost += 1,
                }
            }
        }
        Some(out)
    }

    /// The operation with the most first attempts (the first by name among equals).
    pub fn busiest(&self) -> Option<&str> {
        let mut best: Option<(&str, u64)> = None;
        for (name, op) in &self.operations {
            let n = op.arrivals.total();
            if best.is_none_or(|(_, m)| n > m) {
                best = Some((name, n));
            }
        }
        best.map(|(name, _)| name)
    }
}

impl Join {
    /// A client span of `call`, of an operation if it got no reply.
    fn client(&mut self, call: &str, no_reply: Option<&str>) {
        if self.given_up {
            return;
        }
        match no_reply {
            Some(operation) => {
                self.unanswered
                    .insert(call.to_string(), operation.to_string());
                self.check();
            }
            None => {
                self.completed.remove(call);
            }
        }
    }

    fn check(&mut self) {
        if self.completed.len() > MAX_JOIN || self.unanswered.len() > MAX_JOIN {
            self.given_up = true;
            self.completed.clear();
            self.unanswered.clear();
        }
    }
}

impl Operation {
    fn new() -> Operation {
        Operation {
            counts: [0; 9],
            latency: Quantiles::default(),
            timeouts: Quantiles::default(),
            retry_after: Quantiles::default(),
            arrivals: Arrivals {
                width: TICKS_PER_SECOND as i64,
                bins: BTreeMap::new(),
            },
            calls: Vec::new(),
            bursts: std::sync::OnceLock::new(),
        }
    }

    /// Whether its failures come in bursts, and where they do the bursts fitted: its calls in
    /// the order they started. Made at the first ask, which comes once the trace is read and
    /// its calls sorted, and kept.
    pub fn bursts(&self) -> (Runs, Option<Fit>) {
        *self.bursts.get_or_init(|| self.test_bursts())
    }

    fn test_bursts(&self) -> (Runs, Option<Fit>) {
        let calls = &self.calls;
        let runs = Runs::of(calls.iter().map(|c| c.outcome.is_transient()));
        let fit = match runs.bursty() {
            Some(true) => {
                let first = calls.first().map_or(0, |c| c.start);
                let seconds: Vec<(f64, bool)> = (calls.iter())
                    .map(|c| {
                        let at = (c.start - first) as f64 / TICKS_PER_SECOND as f64;
                        (at, c.outcome.is_transient())
                    })
                    .collect();
                burst::fit(&seconds)
            }
            _ => None,
        };
        (runs, fit)
    }

    /// Attempts that ended as `outcome`.
    pub fn count(&self, outcome: Outcome) -> u64 {
        self.counts[outcome as usize]
    }

    /// Every attempt that tells of the dependency: all but the ones the client cancelled.
    pub fn attempts(&self) -> u64 {
        self.counts.iter().sum::<u64>() - self.count(Outcome::Cancelled)
    }

    /// The share of attempts that ended as `outcome`.
    pub fn rate(&self, outcome: Outcome) -> f64 {
        match self.attempts() {
            0 => 0.0,
            n => self.count(outcome) as f64 / n as f64,
        }
    }
}

impl Arrivals {
    fn add(&mut self, start: i64) {
        *self.bins.entry(start.div_euclid(self.width)).or_default() += 1;
        // Bounded by the span, not by the bins that hold arrivals: the schedule writes every
        // bin from the first to the last, and two spans years apart are a few bins apart.
        while self.span() > MAX_BINS as u64 {
            self.widen();
        }
    }

    /// The bins from the first to the last, empty ones included.
    fn span(&self) -> u64 {
        match (self.bins.first_key_value(), self.bins.last_key_value()) {
            (Some((&first, _)), Some((&last, _))) => last.abs_diff(first) + 1,
            _ => 0,
        }
    }

    /// Doubles the width, merging each aligned pair of bins.
    pub fn widen(&mut self) {
        let mut wider = BTreeMap::new();
        for (&k, &n) in &self.bins {
            *wider.entry(k.div_euclid(2)).or_default() += n;
        }
        self.bins = wider;
        self.width *= 2;
    }

    pub fn total(&self) -> u64 {
        self.bins.values().sum()
    }

    /// The rate in each bin from the first to the last, empty ones included: (offset from
    /// the first bin's start, arrivals per second).
    pub fn schedule(&self) -> Vec<(Tick, f64)> {
        let (Some((&first, _)), Some((&last, _))) =
            (self.bins.first_key_value(), self.bins.last_key_value())
        else {
            return Vec::new();
        };
        let seconds = Tick(self.width as u64).seconds();
        (first..=last)
            .map(|k| {
                let n = self.bins.get(&k).copied().unwrap_or(0);
                (Tick(((k - first) * self.width) as u64), n as f64 / seconds)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widening_in_any_order_gives_the_same_bins() {
        let starts: Vec<i64> = (0..20_000)
            .map(|i| i * 7_919_000 % 40_000_000_000)
            .collect();
        let mut forward = Operation::new().arrivals;
        let mut backward = Operation::new().arrivals;
        for &s in &starts {
            forward.add(s);
        }
        for &s in starts.iter().rev() {
            backward.add(s);
        }
        assert!(forward.width > TICKS_PER_SECOND as i64);
        assert_eq!(forward.width, backward.width);
        assert_eq!(forward.bins, backward.bins);
        assert_eq!(forward.total(), 20_000);
    }
}
