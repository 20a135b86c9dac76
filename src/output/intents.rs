//! `intents.csv` (opt-in): one row per intent, the point's parameters first. Each job streams its
//! rows to a part file while it runs; a finished point's parts are appended in job order, so the
//! file is the same whatever order the jobs finished in.

use std::fs::{self, File};
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use crate::experiment::Experiment;
use crate::metrics::IntentRecord;
use crate::sim::Job;
use crate::sweep::Point;

/// The columns after the parameter columns.
pub const COLUMNS: [&str; 13] = [
    "experiment",
    "policy",
    "replication",
    "intent",
    "tool",
    "attempts",
    "effects",
    "status",
    "stop_reason",
    "business_state",
    "start_tick",
    "end_tick",
    "timeouts",
];

/// Where job `index` writes its rows while it runs.
pub fn part_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("intents-{index:06}.part"))
}

/// Writes one job's rows, without a header.
pub struct IntentWriter<'a, W: Write> {
    csv: csv::Writer<W>,
    params: Vec<String>,
    exp: &'a Experiment,
    policy: &'a str,
    replication: String,
}

impl<'a, W: Write> IntentWriter<'a, W> {
    pub fn new(out: W, point: &'a Point, job: Job) -> Self {
        let exp = &point.experiment;
        IntentWriter {
            csv: csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(out),
            params: point.params.iter().map(ToString::to_string).collect(),
            exp,
            policy: &exp.policies[job.policy].name,
            replication: job.replication.to_string(),
        }
    }

    pub fn write(&mut self, r: &IntentRecord) -> io::Result<()> {
        let fields: [&str; COLUMNS.len()] = [
            &self.exp.name,
            self.policy,
            &self.replication,
            &r.intent.to_string(),
            &self.exp.tools[r.tool].name,
            &r.attempts.to_string(),
            &r.effects.to_string(),
            r.status.name(),
            r.status.stop_reason().map_or("", |s| s.name()),
            r.business_state.name(),
            &r.start.0.to_string(),
            &r.end.0.to_string(),
            &r.timeouts.to_string(),
        ];
        Ok(self
            .csv
            .write_record(self.params.iter().map(String::as_str).chain(fields))?)
    }

    pub fn finish(self) -> io::Result<()> {
        let mut inner = self.csv.into_inner().map_err(|e| e.into_error())?;
        inner.flush()
    }
}

/// Appends the part files of `jobs` to `out` in order, removing them.
pub fn append_parts(out: &mut impl Write, dir: &Path, jobs: Range<usize>) -> io::Result<()> {
    for index in jobs {
        let part = part_path(dir, index);
        io::copy(&mut File::open(&part)?, out)?;
        fs::remove_file(part)?;
    }
    Ok(())
}
