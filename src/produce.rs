//! A run from config to output folder: the sweep's jobs, their rows written as they finish,
//! the manifest, and the charts drawn from the files — into a staging folder the caller commits.

use std::io;
use std::path::Path;

use crate::chart;
use crate::config::Source;
use crate::error::Error;
use crate::output::trace::{PartFiles, Trace};
use crate::output::{Staging, Writer};
use crate::run::{self, PointResult, Results};
use crate::sim::{Job, RunResult};
use crate::sweep::{Point, Sweep};

/// Runs a sweep into a staging folder under `root`, writing each point's rows as it finishes
/// and, if every point ran, the manifest and the charts. The caller commits the folder, keeps it
/// as interrupted, or (to check it) compares and drops it. `watcher` hears of each job and
/// point as they finish (a progress display; `()` for none).
pub fn into_staging(
    source: &Source,
    sweep: Sweep,
    root: &Path,
    options: &run::Options,
    watcher: &mut impl run::Observer,
) -> Result<(Results, Staging), Error> {
    let writing = || Error::io(format!("cannot write under {}", root.display()));
    let staging = Staging::new(root, &sweep.base.name)?;
    let writer = Writer::create(staging.path(), &sweep).map_err(writing())?;
    let parts = PartFiles {
        dir: staging.path(),
    };
    let traced = Trace::ALL.iter().any(|t| t.enabled(&sweep.base.output));
    let options = run::Options {
        traces: traced.then_some(&parts as &dyn run::Traces),
        ..*options
    };
    let mut recorder = Recorder { writer, watcher };
    let results = run::jobs(sweep, &options, &mut recorder).map_err(writing())?;
    recorder
        .writer
        .finish(&results, source)
        .map_err(writing())?;
    if results.complete() {
        chart::draw_all(staging.path(), None)?;
    }
    Ok((results, staging))
}

/// Hands each finished run and point to the files, then to the watcher.
struct Recorder<'a, W> {
    writer: Writer,
    watcher: &'a mut W,
}

impl<W: run::Observer> run::Observer for Recorder<'_, W> {
    fn job_done(&mut self, done: u64, total: u64) {
        self.watcher.job_done(done, total);
    }

    fn run_done(&mut self, point: &Point, job: Job, index: u64, run: &RunResult) -> io::Result<()> {
        self.writer.run(point, job, index, run)
    }

    fn point_done(&mut self, index: usize, point: &Point, result: &PointResult) -> io::Result<()> {
        self.writer.point(point, result)?;
        self.watcher.point_done(index, point, result)
    }
}
