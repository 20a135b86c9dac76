//! The opt-in traces: `intents.csv`, one row per intent, and `attempts.csv`, one row per
//! attempt — the timeline a teacher draws. Each job streams its rows to a part file of its own
//! while it runs; each part is appended in job order as its run is folded in, so a trace is the
//! same whatever order the jobs finished in. Each file is one table: each column with its type
//! and how a row writes its value. Columns are documented in `out/README.md`.
//!
//! A trace can run to millions of rows, so a row is written field by field into one line
//! buffer that is reused, and the line goes to the file whole: no string per cell. Names,
//! words, numbers, layer paths and keys never need quoting; the swept values that start each
//! row are quoted once per job, by the CSV writer.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::column::{Column, Kind::*, col, push_seconds};
use crate::experiment::{Experiment, OutputOptions};
use crate::metrics::{AttemptRecord, IntentRecord, Lookup, Outcome};
use crate::model::Key;
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
    key: Option<Key>,
    a: &'a AttemptRecord,
}

/// A column of `intents.csv` and how a row writes its value.
pub struct IntentField(pub Column, pub for<'a> fn(&IntentRow<'a>, &mut String));
/// A column of `attempts.csv` and how a row writes its value.
pub struct AttemptField(pub Column, pub for<'a> fn(&AttemptRow<'a>, &mut String));

/// Writes a whole number.
fn num(out: &mut String, n: impl itoa::Integer) {
    out.push_str(itoa::Buffer::new().format(n));
}

const INTENT_FIELDS: [IntentField; 23] = [
    IntentField(col("experiment", Text), |r, o| {
        o.push_str(r.which.experiment)
    }),
    IntentField(col("policy", Text), |r, o| o.push_str(r.which.policy)),
    IntentField(col("replication", Count), |r, o| {
        num(o, r.which.replication)
    }),
    IntentField(col("intent", Count), |r, o| num(o, r.r.intent)),
    IntentField(col("tool", Text), |r, o| o.push_str(r.tool)),
    IntentField(col("attempts", Count), |r, o| num(o, r.r.attempts)),
    IntentField(col("effects", Count), |r, o| num(o, r.r.effects)),
    IntentField(col("status", Word(&STATUSES)), |r, o| {
        o.push_str(r.r.status.name())
    }),
    IntentField(col("stop_reason", Word(&STOP_REASONS)), |r, o| {
        let reason = r.r.status.stop_reason();
        o.push_str(reason.map_or("none", |s| s.name()));
    }),
    IntentField(col("business_state", Word(&BUSINESS_STATES)), |r, o| {
        o.push_str(r.r.business_state.name())
    }),
    IntentField(col("start_tick", Count), |r, o| num(o, r.r.start.0)),
    IntentField(col("end_tick", Count), |r, o| num(o, r.r.end.0)),
    IntentField(col("timeouts", Count), |r, o| num(o, r.r.timeouts)),
    IntentField(col("backoff_ticks", Count), |r, o| num(o, r.r.backoff.0)),
    IntentField(col("short_circuited", Count), |r, o| {
        num(o, r.r.short_circuited)
    }),
    IntentField(col("lookups", Count), |r, o| num(o, r.r.lookups)),
    IntentField(col("hedges", Count), |r, o| num(o, r.r.hedges)),
    IntentField(col("start_s", Number), |r, o| push_seconds(o, r.r.start.0)),
    IntentField(col("end_s", Number), |r, o| push_seconds(o, r.r.end.0)),
    IntentField(col("backoff_s", Number), |r, o| {
        push_seconds(o, r.r.backoff.0)
    }),
    IntentField(col("reads", Count), |r, o| num(o, r.r.reads)),
    IntentField(col("writes", Count), |r, o| num(o, r.r.writes)),
    IntentField(col("conflicts", Count), |r, o| num(o, r.r.conflicts)),
];

const ATTEMPT_FIELDS: [AttemptField; 17] = [
    AttemptField(col("experiment", Text), |r, o| {
        o.push_str(r.which.experiment)
    }),
    AttemptField(col("policy", Text), |r, o| o.push_str(r.which.policy)),
    AttemptField(col("replication", Count), |r, o| {
        num(o, r.which.replication)
    }),
    AttemptField(col("intent", Count), |r, o| num(o, r.intent)),
    AttemptField(col("layer", Label), |r, o| o.push_str(&r.path)),
    AttemptField(col("attempt", Count), |r, o| num(o, r.k)),
    AttemptField(col("dispatch_tick", Count), |r, o| num(o, r.a.dispatch.0)),
    AttemptField(col("end_tick", Count), |r, o| num(o, r.a.end.0)),
    AttemptField(col("granted_timeout_ticks", CountOrEmpty), |r, o| {
        if let Some(t) = r.a.granted {
            num(o, t.0);
        }
    }),
    AttemptField(col("outcome", Word(&Outcome::NAMES)), |r, o| {
        o.push_str(r.a.outcome.name())
    }),
    AttemptField(col("committed", Flag), |r, o| {
        o.push_str(if r.a.committed { "true" } else { "false" })
    }),
    AttemptField(col("key", Label), |r, o| {
        if let Some(key) = r.key {
            o.push('k');
            num(o, key.intent);
            // A replacement's key after a takeover is `k<intent>.w<worker>`.
            match key.worker() {
                Some(0) => {}
                Some(worker) => {
                    o.push_str(".w");
                    num(o, worker);
                }
                None => {
                    o.push('.');
                    num(o, key.nonce);
                }
            }
        }
    }),
    AttemptField(col("lookup", Word(&Lookup::NAMES)), |r, o| {
        o.push_str(r.a.lookup.map_or("none", Lookup::name))
    }),
    AttemptField(col("dispatch_s", Number), |r, o| {
        push_seconds(o, r.a.dispatch.0)
    }),
    AttemptField(col("end_s", Number), |r, o| push_seconds(o, r.a.end.0)),
    AttemptField(col("granted_timeout_s", NumberOrEmpty), |r, o| {
        if let Some(t) = r.a.granted {
            push_seconds(o, t.0);
        }
    }),
    AttemptField(col("replica", Count), |r, o| num(o, r.a.replica)),
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

    /// Appends job `index`'s part file to `out`, removing it unless told to `keep` it.
    pub fn append_part(
        self,
        out: &mut impl Write,
        dir: &Path,
        index: u64,
        keep: bool,
    ) -> io::Result<()> {
        let part = self.part(dir, index);
        io::copy(&mut File::open(&part)?, out)?;
        if keep { Ok(()) } else { fs::remove_file(part) }
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
    file: BufWriter<File>,
    /// The point's swept values that start every row, encoded as CSV once, comma included.
    prefix: String,
    /// The row being written, reused from row to row.
    line: String,
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
        // The values with a field after them, so each is quoted exactly as within a row.
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        let params = point.params.iter().map(ToString::to_string);
        csv.write_record(params.chain(["x".to_string()]))?;
        let encoded = csv.into_inner().map_err(|e| e.into_error())?;
        let mut prefix = String::from_utf8(encoded).map_err(io::Error::other)?;
        prefix.truncate(prefix.len() - "x\n".len());
        Ok(TraceWriter {
            trace,
            file,
            prefix,
            line: String::new(),
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
                self.write_line(&row, INTENT_FIELDS.iter().map(|f| f.1))
            }
            Trace::Attempts => {
                // The policy it followed: its edge's. Its key is written where the task's call
                // carries it; a service's calls and a fallback's carry keys of their own
                // making, which the task's call number does not name.
                let own = policy.on_edge(r.edge);
                let edges = &self.exp.graph.edges;
                let top = edges.get(r.edge).is_none_or(|e| e.caller.is_none())
                    && self.exp.calls_of(policy).contains(&r.tool);
                let paths =
                    layers::paths(own.rule.depth(), attempts.iter().map(|a| a.layer.into()));
                for ((k, a), path) in attempts.iter().enumerate().zip(paths) {
                    let row = AttemptRow {
                        which: &which,
                        intent: r.intent,
                        k,
                        path,
                        key: own
                            .own_key(r.intent, k as u32, a.worker.into())
                            .filter(|_| top),
                        a,
                    };
                    self.write_line(&row, ATTEMPT_FIELDS.iter().map(|f| f.1))?;
                }
                Ok(())
            }
        }
    }

    /// Writes one row: the swept values, then each field as `fields` writes it.
    fn write_line<R, F: Fn(&R, &mut String)>(
        &mut self,
        row: &R,
        fields: impl Iterator<Item = F>,
    ) -> io::Result<()> {
        self.line.clear();
        self.line.push_str(&self.prefix);
        for (i, field) in fields.enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            field(row, &mut self.line);
        }
        self.line.push('\n');
        self.file.write_all(self.line.as_bytes())
    }

    pub fn finish(mut self) -> io::Result<()> {
        self.file.flush()
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
