//! Output files: written into a staging folder beside the target, then moved into place whole,
//! so a reader never sees a half-written experiment and a failed run leaves nothing behind.

pub mod column;
pub mod crashes;
pub mod edges;
pub mod json;
pub mod manifest;
pub mod replicas;
pub mod reservations;
pub mod runs;
pub mod schema;
mod staging;
pub mod summary;
pub mod table;
pub mod timeseries;
pub mod tools;
pub mod trace;
pub mod user_path;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::config::Source;
use crate::experiment::chart_files;
use crate::run::{PointResult, Results};
use crate::sim::{Job, RunResult};
use crate::sweep::{Point, Sweep};
use column::Column;
pub use staging::{CALIBRATION_MARK, Mark, Staging};
use trace::Trace;

/// A float at the fixed precision of every output file.
pub fn fixed(x: f64) -> String {
    if x.is_finite() {
        let text = format!("{x:.6}");
        // A value that rounds to zero is written 0, never −0.
        match text.strip_prefix('-') {
            Some(zero) if zero == "0.000000" => zero.to_string(),
            _ => text,
        }
    } else if x.is_nan() {
        "nan".into()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// Dollars to nine decimals (a task may cost a few millionths of a dollar); empty where not
/// finite.
pub fn dollars(x: f64) -> String {
    match x.is_finite() {
        true => format!("{x:.9}"),
        false => String::new(),
    }
}

/// A float at the fixed precision of every output file, or an empty cell where it has no
/// finite value (an interval from one replication): every number a file holds is finite.
pub fn finite(x: f64) -> String {
    if x.is_finite() {
        fixed(x)
    } else {
        String::new()
    }
}

/// One CSV file of a run, in the manner of hyperfine's exporters: its columns, and its rows as
/// each run is folded in and as each point finishes.
pub trait Export {
    fn file(&self) -> &'static str;
    /// The columns after the parameter columns.
    fn columns(&self) -> Vec<Column>;
    /// The rows of a run just folded in.
    fn run_rows(&self, _point: &Point, _job: Job, _run: &RunResult) -> Vec<Vec<String>> {
        Vec::new()
    }
    /// The rows of a point just finished.
    fn point_rows(&self, _point: &Point, _result: &PointResult) -> Vec<Vec<String>> {
        Vec::new()
    }
}

/// The CSV files of a run, filled as runs and points finish: every exporter the output asks
/// for, then the traces. An interrupted run is cut back to the end of its last finished point,
/// so it keeps whole rows of every finished point and no partial ones.
pub struct Writer {
    dir: PathBuf,
    exports: Vec<(Box<dyn Export>, csv::Writer<File>)>,
    /// The traces the run writes, each with its file.
    traces: Vec<(Trace, BufWriter<File>)>,
    /// The length of every file at the end of the last finished point.
    whole: Vec<u64>,
    /// Where each job's trace parts are.
    parts: Parts,
}

/// Where the trace parts of a run's jobs are.
pub enum Parts {
    /// In the staging folder, each removed once appended.
    Staged,
    /// In the folders of the shards a sweep was split into, job k's in the (k mod N)-th, kept
    /// as they are.
    Shards(Vec<PathBuf>),
}

impl Writer {
    /// Creates the files in `dir` with their headers.
    pub fn create(dir: &Path, sweep: &Sweep) -> io::Result<Writer> {
        let header = |columns: &[Column]| -> Vec<String> {
            sweep
                .paths()
                .chain(columns.iter().map(|c| c.name))
                .map(String::from)
                .collect()
        };
        let mut chosen: Vec<Box<dyn Export>> = vec![
            Box::new(summary::Summary {
                comparisons: sweep.census.comparisons,
            }),
            Box::new(runs::Runs),
            Box::new(tools::Tools),
        ];
        if sweep.base.output.timeseries.is_some() {
            chosen.push(Box::new(timeseries::Timeseries));
        }
        if replicas::wanted(sweep) {
            chosen.push(Box::new(replicas::Replicas));
        }
        if crashes::wanted(sweep) {
            chosen.push(Box::new(crashes::Crashes));
        }
        if reservations::wanted(sweep) {
            chosen.push(Box::new(reservations::Reservations));
        }
        if edges::wanted(sweep) {
            chosen.push(Box::new(edges::Edges {
                comparisons: sweep.census.edge_comparisons,
            }));
        }
        if timeseries::ReplicaTimeseries::wanted(sweep) {
            chosen.push(Box::new(timeseries::ReplicaTimeseries));
        }
        let mut exports = Vec::new();
        for export in chosen {
            let mut w = csv::Writer::from_path(dir.join(export.file()))?;
            w.write_record(header(&export.columns()))?;
            exports.push((export, w));
        }
        let mut traces = Vec::new();
        for trace in Trace::ALL {
            if trace.enabled(&sweep.base.output) {
                let file = BufWriter::new(File::create(dir.join(trace.file()))?);
                let mut w = csv::Writer::from_writer(file);
                w.write_record(header(&trace.columns()))?;
                traces.push((trace, w.into_inner().map_err(|e| e.into_error())?));
            }
        }
        let mut writer = Writer {
            dir: dir.to_path_buf(),
            exports,
            traces,
            whole: Vec::new(),
            parts: Parts::Staged,
        };
        writer.whole = writer.lengths()?;
        Ok(writer)
    }

    /// Reads the jobs' trace parts from `parts` rather than the staging folder.
    pub fn parts_in(&mut self, parts: Parts) {
        self.parts = parts;
    }

    /// Appends a folded run's rows, and its part of every trace.
    pub fn run(&mut self, point: &Point, job: Job, index: u64, run: &RunResult) -> io::Result<()> {
        for (export, w) in &mut self.exports {
            for row in export.run_rows(point, job, run) {
                w.write_record(row)?;
            }
        }
        let (dir, keep) = match &self.parts {
            Parts::Staged => (&self.dir, false),
            Parts::Shards(dirs) => (&dirs[(index % dirs.len() as u64) as usize], true),
        };
        for (trace, out) in &mut self.traces {
            trace.append_part(out, dir, index, keep)?;
        }
        Ok(())
    }

    /// Appends a finished point's rows and flushes every file.
    pub fn point(&mut self, point: &Point, result: &PointResult) -> io::Result<()> {
        for (export, w) in &mut self.exports {
            for row in export.point_rows(point, result) {
                w.write_record(row)?;
            }
        }
        self.whole = self.lengths()?;
        Ok(())
    }

    /// Flushes every file and returns their lengths.
    fn lengths(&mut self) -> io::Result<Vec<u64>> {
        let mut lengths = Vec::new();
        for (_, w) in &mut self.exports {
            w.flush()?;
            lengths.push(w.get_ref().metadata()?.len());
        }
        for (_, out) in &mut self.traces {
            out.flush()?;
            lengths.push(out.get_ref().metadata()?.len());
        }
        Ok(lengths)
    }

    /// Cuts every file back to the end of the last finished point.
    fn cut_to_whole_points(&mut self) -> io::Result<()> {
        self.lengths()?;
        let files = (self.exports.iter().map(|(_, w)| w.get_ref()))
            .chain(self.traces.iter().map(|(_, o)| o.get_ref()));
        for (file, &len) in files.zip(&self.whole) {
            file.set_len(len)?;
        }
        Ok(())
    }

    /// Flushes the CSV files (or cuts them back to whole points) and writes the manifest, which
    /// lists every file the run writes, the charts a complete run will draw included; returns
    /// that list.
    pub fn finish(self, results: &Results, source: &Source) -> io::Result<Vec<String>> {
        self.finish_as(results, source, ("run", &[]))
    }

    /// As [`Writer::finish`], for a run `command` wrote with files of its own beside these,
    /// `own`, which the manifest lists too.
    pub fn finish_as(
        mut self,
        results: &Results,
        source: &Source,
        (command, own): (&str, &[&str]),
    ) -> io::Result<Vec<String>> {
        if results.complete() {
            self.lengths()?;
        } else {
            self.cut_to_whole_points()?;
        }
        let exp = &results.sweep.base;
        let mut files: Vec<String> = (self.exports.iter().map(|(e, _)| e.file()))
            .chain(self.traces.iter().map(|(t, _)| t.file()))
            .map(String::from)
            .collect();
        if results.complete() {
            files.extend(chart_files(&exp.output.charts, &exp.output.chart_formats));
        }
        files.extend(own.iter().map(|f| f.to_string()));
        let path = self.dir.join("manifest.toml");
        manifest::write(results, source, &files, (&path, command))?;
        Ok(files)
    }
}
