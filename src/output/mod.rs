//! Output files: written into a staging folder beside the target, then moved into place whole,
//! so a reader never sees a half-written experiment and a failed run leaves nothing behind.

pub mod column;
pub mod manifest;
pub mod runs;
mod staging;
pub mod summary;
pub mod timeline;
pub mod tools;
pub mod trace;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::config::Source;
use crate::experiment::chart_files;
use crate::run::{PointResult, Results};
use crate::sim::{Job, RunResult};
use crate::sweep::{Point, Sweep};
use column::Column;
pub use staging::Staging;
use trace::Trace;

/// A float at the fixed precision of every output file.
pub fn fixed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else if x.is_nan() {
        "nan".into()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// The CSV files of a run, filled as runs and points finish. An interrupted run is cut back to
/// the end of its last finished point, so it keeps whole rows of every finished point and no
/// partial ones.
pub struct Writer {
    dir: PathBuf,
    summary: csv::Writer<File>,
    runs: csv::Writer<File>,
    tools: csv::Writer<File>,
    /// `timeline.csv`, where the output asks for it.
    timeline: Option<csv::Writer<File>>,
    /// The traces the run writes, each with its file.
    traces: Vec<(Trace, BufWriter<File>)>,
    /// The length of `runs.csv` and of each trace at the end of the last finished point.
    whole: Vec<u64>,
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
        let mut summary = csv::Writer::from_path(dir.join("summary.csv"))?;
        summary.write_record(header(&summary::columns()))?;
        summary.flush()?;
        let mut runs = csv::Writer::from_path(dir.join("runs.csv"))?;
        runs.write_record(header(&runs::columns()))?;
        runs.flush()?;
        let mut tools = csv::Writer::from_path(dir.join("tools.csv"))?;
        tools.write_record(header(&tools::columns()))?;
        tools.flush()?;
        let timeline = match sweep.base.output.timeline {
            None => None,
            Some(_) => {
                let mut w = csv::Writer::from_path(dir.join("timeline.csv"))?;
                w.write_record(header(&timeline::columns()))?;
                w.flush()?;
                Some(w)
            }
        };
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
            summary,
            runs,
            tools,
            timeline,
            traces,
            whole: Vec::new(),
        };
        writer.whole = writer.lengths()?;
        Ok(writer)
    }

    /// Appends a folded run's row to `runs.csv` and its part of every trace.
    pub fn run(&mut self, point: &Point, job: Job, index: u64, run: &RunResult) -> io::Result<()> {
        self.runs.write_record(runs::row(point, job, run))?;
        for (trace, out) in &mut self.traces {
            trace.append_part(out, &self.dir, index)?;
        }
        Ok(())
    }

    /// Appends a finished point's rows to every file and flushes them.
    pub fn point(&mut self, point: &Point, result: &PointResult) -> io::Result<()> {
        for row in summary::rows(point, result) {
            self.summary.write_record(row)?;
        }
        self.summary.flush()?;
        for row in tools::rows(point, result) {
            self.tools.write_record(row)?;
        }
        self.tools.flush()?;
        if let Some(w) = &mut self.timeline {
            for row in timeline::rows(point, result) {
                w.write_record(row)?;
            }
            w.flush()?;
        }
        self.whole = self.lengths()?;
        Ok(())
    }

    /// Flushes `runs.csv` and the traces and returns their lengths.
    fn lengths(&mut self) -> io::Result<Vec<u64>> {
        self.runs.flush()?;
        let mut lengths = vec![self.runs.get_ref().metadata()?.len()];
        for (_, out) in &mut self.traces {
            out.flush()?;
            lengths.push(out.get_ref().metadata()?.len());
        }
        Ok(lengths)
    }

    /// Cuts `runs.csv` and the traces back to the end of the last finished point.
    fn cut_to_whole_points(&mut self) -> io::Result<()> {
        self.lengths()?;
        let files = std::iter::once(self.runs.get_ref())
            .chain(self.traces.iter().map(|(_, o)| o.get_ref()));
        for (file, &len) in files.zip(&self.whole) {
            file.set_len(len)?;
        }
        Ok(())
    }

    /// Flushes the CSV files (or cuts them back to whole points) and writes the manifest, which
    /// lists every file the run writes, the charts a complete run will draw included; returns
    /// that list.
    pub fn finish(mut self, results: &Results, source: &Source) -> io::Result<Vec<String>> {
        if results.complete() {
            self.lengths()?;
        } else {
            self.cut_to_whole_points()?;
        }
        let exp = &results.sweep.base;
        let mut files = vec![
            "summary.csv".to_string(),
            "runs.csv".to_string(),
            "tools.csv".to_string(),
        ];
        if self.timeline.is_some() {
            files.push("timeline.csv".to_string());
        }
        files.extend(self.traces.iter().map(|(t, _)| t.file().to_string()));
        if results.complete() {
            files.extend(chart_files(&exp.output.charts, &exp.output.chart_formats));
        }
        manifest::write(results, source, &files, &self.dir.join("manifest.toml"))?;
        Ok(files)
    }
}
