//! The opt-in traces: `intents.csv`, one row per intent, and `attempts.csv`, one row per
//! attempt — the timeline a teacher draws. Each job streams its rows to a part file of its own
//! while it runs; each part is appended in job order as its run is folded in, so a trace is the
//! same whatever order the jobs finished in. Columns are documented in `out/README.md`.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::column::{Column, Kind::*, col, seconds};
use crate::experiment::{Experiment, OutputOptions};
use crate::metrics::{AttemptRecord, IntentRecord, Outcome};
use crate::policy::layers;
use crate::sim::Job;
use crate::sweep::Point;

/// One of the per-row files the jobs write themselves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trace {
    Intents,
    Attempts,
}

/// `status`, `stop_reason` (`none` for an intent that succeeded), `business_state` and an
/// attempt's `outcome`: the names the metrics give them (a test holds the lists in step).
const STATUSES: [&str; 2] = ["succeeded", "stopped"];
const STOP_REASONS: [&str; 14] = [
    "none",
    "attempt_limit",
    "not_retryable",
    "hung",
    "deadline_exceeded",
    "dispatch_budget_exhausted",
    "cancelled",
    "needs_reconciliation",
    "breaker_open",
    "retry_budget_exhausted",
    "permanent_failure",
    "budget_too_small",
    "idempotency_conflict",
    "concurrency_limited",
];
const BUSINESS_STATES: [&str; 4] = ["not_attempted", "unknown", "confirmed", "read_only"];

const INTENT_COLUMNS: [Column; 20] = [
    col("experiment", Text),
    col("policy", Text),
    col("replication", Count),
    col("intent", Count),
    col("tool", Text),
    col("attempts", Count),
    col("effects", Count),
    col("status", Word(&STATUSES)),
    col("stop_reason", Word(&STOP_REASONS)),
    col("business_state", Word(&BUSINESS_STATES)),
    col("start_tick", Count),
    col("end_tick", Count),
    col("timeouts", Count),
    col("backoff_ticks", Count),
    col("short_circuited", Count),
    col("lookups", Count),
    col("hedges", Count),
    col("start_s", Number),
    col("end_s", Number),
    col("backoff_s", Number),
];

const ATTEMPT_COLUMNS: [Column; 15] = [
    col("experiment", Text),
    col("policy", Text),
    col("replication", Count),
    col("intent", Count),
    col("layer", Label),
    col("attempt", Count),
    col("dispatch_tick", Count),
    col("end_tick", Count),
    col("granted_timeout_ticks", CountOrEmpty),
    col("outcome", Word(&Outcome::NAMES)),
    col("committed", Flag),
    col("key", Label),
    col("dispatch_s", Number),
    col("end_s", Number),
    col("granted_timeout_s", NumberOrEmpty),
];

impl Trace {
    pub const ALL: [Trace; 2] = [Trace::Intents, Trace::Attempts];

    pub fn file(self) -> &'static str {
        match self {
            Trace::Intents => "intents.csv",
            Trace::Attempts => "attempts.csv",
        }
    }

    /// The columns after the parameter columns.
    pub fn columns(self) -> &'static [Column] {
        match self {
            Trace::Intents => &INTENT_COLUMNS,
            Trace::Attempts => &ATTEMPT_COLUMNS,
        }
    }

    pub fn enabled(self, output: &OutputOptions) -> bool {
        match self {
            Trace::Intents => output.intents,
            Trace::Attempts => output.attempts,
        }
    }

    /// Where job `index` writes its rows while it runs.
    fn part(self, dir: &Path, index: u64) -> PathBuf {
        let stem = self.file().trim_end_matches(".csv");
        dir.join(format!("{stem}-{index:06}.part"))
    }

    /// Appends job `index`'s part file to `out`, removing it.
    pub fn append_part(self, out: &mut impl Write, dir: &Path, index: u64) -> io::Result<()> {
        let part = self.part(dir, index);
        io::copy(&mut File::open(&part)?, out)?;
        fs::remove_file(part)
    }
}

/// One job's rows of one trace, without a header.
pub struct TraceWriter<'a> {
    trace: Trace,
    csv: csv::Writer<BufWriter<File>>,
    params: Vec<String>,
    exp: &'a Experiment,
    job: Job,
}

impl<'a> TraceWriter<'a> {
    /// Opens job `index`'s part file of `trace` in `dir`.
    pub fn create(
        trace: Trace,
        dir: &Path,
        index: u64,
        point: &'a Point,
        job: Job,
    ) -> io::Result<Self> {
        let file = BufWriter::new(File::create(trace.part(dir, index))?);
        Ok(TraceWriter {
            trace,
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(file),
            params: point.params.iter().map(ToString::to_string).collect(),
            exp: &point.experiment,
            job,
        })
    }

    /// Writes an intent's row, or a row for each of its attempts.
    pub fn write(&mut self, r: &IntentRecord, attempts: &[AttemptRecord]) -> io::Result<()> {
        let policy = &self.exp.policies[self.job.policy];
        let which = [
            self.exp.name.clone(),
            policy.name.clone(),
            self.job.replication.to_string(),
            r.intent.to_string(),
        ];
        match self.trace {
            Trace::Intents => {
                let row = [
                    self.exp.tools[r.tool].name.clone(),
                    r.attempts.to_string(),
                    r.effects.to_string(),
                    r.status.name().to_string(),
                    r.status
                        .stop_reason()
                        .map_or("none", |s| s.name())
                        .to_string(),
                    r.business_state.name().to_string(),
                    r.start.0.to_string(),
                    r.end.0.to_string(),
                    r.timeouts.to_string(),
                    r.backoff.0.to_string(),
                    r.short_circuited.to_string(),
                    r.lookups.to_string(),
                    r.hedges.to_string(),
                    seconds(r.start.0),
                    seconds(r.end.0),
                    seconds(r.backoff.0),
                ];
                self.row(which.into_iter().chain(row))
            }
            Trace::Attempts => {
                let paths = layers::paths(policy.depth(), attempts.iter().map(|a| a.layer.into()));
                for ((k, a), path) in attempts.iter().enumerate().zip(paths) {
                    let key = policy
                        .key
                        .key(r.intent, k as u32)
                        .map_or(String::new(), |key| {
                            if key.nonce == 0 {
                                format!("k{}", key.intent)
                            } else {
                                format!("k{}.{}", key.intent, key.nonce)
                            }
                        });
                    let row = [
                        path,
                        k.to_string(),
                        a.dispatch.0.to_string(),
                        a.end.0.to_string(),
                        a.granted.map_or(String::new(), |t| t.0.to_string()),
                        a.outcome.name().to_string(),
                        a.committed.to_string(),
                        key,
                        seconds(a.dispatch.0),
                        seconds(a.end.0),
                        a.granted.map_or(String::new(), |t| seconds(t.0)),
                    ];
                    self.row(which.iter().cloned().chain(row))?;
                }
                Ok(())
            }
        }
    }

    fn row(&mut self, fields: impl Iterator<Item = String>) -> io::Result<()> {
        Ok(self
            .csv
            .write_record(self.params.iter().cloned().chain(fields))?)
    }

    pub fn finish(self) -> io::Result<()> {
        let mut inner = self.csv.into_inner().map_err(|e| e.into_error())?;
        inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{BusinessState, StopReason};

    #[test]
    fn the_word_lists_are_the_names_the_metrics_give() {
        let reasons: Vec<&str> = StopReason::ALL.iter().map(|r| r.name()).collect();
        assert_eq!(STOP_REASONS[1..], reasons[..]);
        let states = [
            BusinessState::NotAttempted,
            BusinessState::Unknown,
            BusinessState::Confirmed,
            BusinessState::ReadOnly,
        ];
        assert_eq!(BUSINESS_STATES, states.map(BusinessState::name));
    }
}
