//! The opt-in traces: `intents.csv`, one row per intent, and `attempts.csv`, one row per
//! attempt — the timeline a teacher draws. Each job streams its rows to a part file of its own
//! while it runs; each part is appended in job order as its run is folded in, so a trace is the
//! same whatever order the jobs finished in. Each file is one table: each column with its type
//! and how a row gives its value. Columns are documented in `out/README.md`.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::column::{Column, Kind::*, col, seconds};
use crate::experiment::{Experiment, OutputOptions};
use crate::metrics::{AttemptRecord, IntentRecord, Lookup, Outcome};
use crate::policy::layers;
use crate::run::{JobTrace, Traces};
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

/// Which run a trace row belongs to: the first columns of both traces.
pub struct Which<'a> {
    experiment: &'a str,
    policy: &'a str,
    replication: u64,
}

/// One intent, as its row of `intents.csv` reads it.
pub struct IntentRow<'a> {
    which: &'a Which<'a>,
    tool: &'a str,
    r: &'a IntentRecord,
}

/// One attempt, as its row of `attempts.csv` reads it.
pub struct AttemptRow<'a> {
    which: &'a Which<'a>,
    intent: u64,
    /// Its number within the intent, from 0.
    k: usize,
    /// Its path through the retry layers.
    path: String,
    key: String,
    a: &'a AttemptRecord,
}

/// A column of `intents.csv` and how a row gives its value.
pub struct IntentField(pub Column, pub for<'a> fn(&IntentRow<'a>) -> String);
/// A column of `attempts.csv` and how a row gives its value.
pub struct AttemptField(pub Column, pub for<'a> fn(&AttemptRow<'a>) -> String);

const INTENT_FIELDS: [IntentField; 23] = [
    IntentField(col("experiment", Text), |r| r.which.experiment.to_string()),
    IntentField(col("policy", Text), |r| r.which.policy.to_string()),
    IntentField(col("replication", Count), |r| {
        r.which.replication.to_string()
    }),
    IntentField(col("intent", Count), |r| r.r.intent.to_string()),
    IntentField(col("tool", Text), |r| r.tool.to_string()),
    IntentField(col("attempts", Count), |r| r.r.attempts.to_string()),
    IntentField(col("effects", Count), |r| r.r.effects.to_string()),
    IntentField(col("status", Word(&STATUSES)), |r| {
        r.r.status.name().to_string()
    }),
    IntentField(col("stop_reason", Word(&STOP_REASONS)), |r| {
        let reason = r.r.status.stop_reason();
        reason.map_or("none", |s| s.name()).to_string()
    }),
    IntentField(col("business_state", Word(&BUSINESS_STATES)), |r| {
        r.r.business_state.name().to_string()
    }),
    IntentField(col("start_tick", Count), |r| r.r.start.0.to_string()),
    IntentField(col("end_tick", Count), |r| r.r.end.0.to_string()),
    IntentField(col("timeouts", Count), |r| r.r.timeouts.to_string()),
    IntentField(col("backoff_ticks", Count), |r| r.r.backoff.0.to_string()),
    IntentField(col("short_circuited", Count), |r| {
        r.r.short_circuited.to_string()
    }),
    IntentField(col("lookups", Count), |r| r.r.lookups.to_string()),
    IntentField(col("hedges", Count), |r| r.r.hedges.to_string()),
    IntentField(col("start_s", Number), |r| seconds(r.r.start.0)),
    IntentField(col("end_s", Number), |r| seconds(r.r.end.0)),
    IntentField(col("backoff_s", Number), |r| seconds(r.r.backoff.0)),
    IntentField(col("reads", Count), |r| r.r.reads.to_string()),
    IntentField(col("writes", Count), |r| r.r.writes.to_string()),
    IntentField(col("conflicts", Count), |r| r.r.conflicts.to_string()),
];

const ATTEMPT_FIELDS: [AttemptField; 16] = [
    AttemptField(col("experiment", Text), |r| r.which.experiment.to_string()),
    AttemptField(col("policy", Text), |r| r.which.policy.to_string()),
    AttemptField(col("replication", Count), |r| {
        r.which.replication.to_string()
    }),
    AttemptField(col("intent", Count), |r| r.intent.to_string()),
    AttemptField(col("layer", Label), |r| r.path.clone()),
    AttemptField(col("attempt", Count), |r| r.k.to_string()),
    AttemptField(col("dispatch_tick", Count), |r| r.a.dispatch.0.to_string()),
    AttemptField(col("end_tick", Count), |r| r.a.end.0.to_string()),
    AttemptField(col("granted_timeout_ticks", CountOrEmpty), |r| {
        r.a.granted.map_or(String::new(), |t| t.0.to_string())
    }),
    AttemptField(col("outcome", Word(&Outcome::NAMES)), |r| {
        r.a.outcome.name().to_string()
    }),
    AttemptField(col("committed", Flag), |r| r.a.committed.to_string()),
    AttemptField(col("key", Label), |r| r.key.clone()),
    AttemptField(col("lookup", Word(&Lookup::NAMES)), |r| {
        r.a.lookup.map_or("none", Lookup::name).to_string()
    }),
    AttemptField(col("dispatch_s", Number), |r| seconds(r.a.dispatch.0)),
    AttemptField(col("end_s", Number), |r| seconds(r.a.end.0)),
    AttemptField(col("granted_timeout_s", NumberOrEmpty), |r| {
        r.a.granted.map_or(String::new(), |t| seconds(t.0))
    }),
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
    pub fn columns(self) -> Vec<Column> {
        match self {
            Trace::Intents => INTENT_FIELDS.iter().map(|f| f.0).collect(),
            Trace::Attempts => ATTEMPT_FIELDS.iter().map(|f| f.0).collect(),
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

/// The traces of a run in its staging folder: each job writes the ones its point asks for to
/// part files of its own.
pub struct PartFiles<'a> {
    pub dir: &'a Path,
}

impl Traces for PartFiles<'_> {
    fn open<'a>(
        &'a self,
        point: &'a Point,
        job: Job,
        index: u64,
    ) -> io::Result<Option<Box<dyn JobTrace + 'a>>> {
        let writers = Trace::ALL
            .into_iter()
            .filter(|t| t.enabled(&point.experiment.output))
            .map(|t| TraceWriter::create(t, self.dir, index, point, job))
            .collect::<io::Result<Vec<_>>>()?;
        Ok((!writers.is_empty()).then(|| Box::new(JobParts(writers)) as Box<dyn JobTrace>))
    }
}

/// One job's part files, one per trace kept.
struct JobParts<'a>(Vec<TraceWriter<'a>>);

impl JobTrace for JobParts<'_> {
    fn write(&mut self, r: &IntentRecord, attempts: &[AttemptRecord]) -> io::Result<()> {
        self.0.iter_mut().try_for_each(|w| w.write(r, attempts))
    }

    fn finish(self: Box<Self>) -> io::Result<()> {
        self.0.into_iter().try_for_each(TraceWriter::finish)
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
        let which = Which {
            experiment: &self.exp.name,
            policy: &policy.name,
            replication: self.job.replication,
        };
        match self.trace {
            Trace::Intents => {
                let row = IntentRow {
                    which: &which,
                    tool: &self.exp.tools[r.tool].name,
                    r,
                };
                let values = INTENT_FIELDS.iter().map(|f| (f.1)(&row));
                self.row(values)
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
                    let row = AttemptRow {
                        which: &which,
                        intent: r.intent,
                        k,
                        path,
                        key,
                        a,
                    };
                    let values = ATTEMPT_FIELDS.iter().map(|f| (f.1)(&row));
                    self.row(values)?;
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
