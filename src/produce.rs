//! A run from config to output folder: the sweep's jobs, their rows written as they finish,
//! the manifest, and the charts drawn from the files — into a staging folder the caller commits.
//! A sweep split over machines takes the same road: each shard keeps its runs in a folder of its
//! own, and the merge folds them into the output folder one process would have written.

use std::io;
use std::path::{Path, PathBuf};

use crate::chart;
use crate::config::Source;
use crate::endpoint::recorded::Recorded;
use crate::error::Error;
use crate::experiment::Experiment;
use crate::output::trace::{PartFiles, Trace, TraceWriter};
use crate::output::{Mark, Parts, Staging, Writer};
use crate::run::{self, Fold, PointResult, Results, Share, Sink};
use crate::shard::{self, Request, RunsReader, RunsWriter, Shard};
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
    let staging = Staging::new(root, &sweep.base.name, Mark::Output)?;
    let writer = Writer::create(staging.path(), &sweep).map_err(writing())?;
    let parts = PartFiles {
        dir: staging.path(),
    };
    let options = run::Options {
        traces: traced(&sweep).then_some(&parts as &dyn run::Traces),
        ..*options
    };
    let mut recorder = Recorder { writer, watcher };
    let results = run::jobs(sweep, &options, &mut recorder).map_err(writing())?;
    finish(recorder.writer, &results, source, &staging, root)?;
    Ok((results, staging))
}

/// Whether any point of `sweep` keeps a trace.
fn traced(sweep: &Sweep) -> bool {
    Trace::ALL.iter().any(|t| t.enabled(&sweep.base.output))
}

/// The manifest and, for a complete run, the charts.
fn finish(
    writer: Writer,
    results: &Results,
    source: &Source,
    staging: &Staging,
    root: &Path,
) -> Result<(), Error> {
    let writing = || Error::io(format!("cannot write under {}", root.display()));
    writer.finish(results, source).map_err(writing())?;
    if results.complete() {
        chart::draw_all(staging.path(), None)?;
    }
    Ok(())
}

/// A shard's runs, as it wrote them: how many it ran of how many it holds, and its folder.
pub struct ShardRun {
    pub ran: u64,
    pub runs: u64,
    pub staging: Staging,
}

/// Runs shard `share` of the sweep `request` asks for into a staging folder under `root`:
/// `runs.bin`, the trace parts, the config's text and `shard.toml`, which is written last, so a
/// shard folder without it never merges. The caller commits it if every run ran.
pub fn shard_into_staging(
    request: &Request,
    sweep: &Sweep,
    share: Share,
    root: &Path,
    options: &run::Options,
    watcher: &mut impl run::Observer,
) -> Result<ShardRun, Error> {
    let writing = || Error::io(format!("cannot write under {}", root.display()));
    let staging = Staging::new(
        root,
        &shard::folder_name(&sweep.base.name, share),
        Mark::Shard,
    )?;
    let dir = staging.path();
    std::fs::write(dir.join(shard::CONFIG), &request.source.text).map_err(writing())?;
    let parts = PartFiles { dir };
    let options = run::Options {
        traces: traced(sweep).then_some(&parts as &dyn run::Traces),
        ..*options
    };
    let mut sink = ShardSink {
        runs: RunsWriter::create(dir).map_err(writing())?,
        ran: 0,
        watcher,
    };
    run::execute(sweep, share, &options, &mut sink).map_err(writing())?;
    let ran = sink.ran;
    sink.runs.finish().map_err(writing())?;
    let runs = share.len(run::Jobs::new(sweep).total());
    let files = shard::digests(dir).map_err(writing())?;
    let header = request.header(&sweep.base.name, share, runs, files);
    let text = toml::to_string(&header).map_err(|e| writing()(io::Error::other(e)))?;
    std::fs::write(
        dir.join(shard::HEADER),
        format!("# Written by retrysim run --shard; `retrysim merge` reads it.\n{text}"),
    )
    .map_err(writing())?;
    Ok(ShardRun { ran, runs, staging })
}

/// Stores a shard's runs as they come, in job order.
struct ShardSink<'a, W> {
    runs: RunsWriter,
    ran: u64,
    watcher: &'a mut W,
}

impl<W: run::Observer> Sink for ShardSink<'_, W> {
    fn job_done(&mut self, done: u64, total: u64) {
        self.watcher.job_done(done, total);
    }

    fn take(&mut self, index: u64, _job: Job, _: &Point, run: RunResult) -> io::Result<()> {
        self.ran += 1;
        self.runs.write(index, &run)
    }
}

/// Merges the shard folders `dirs` into a staging folder under `root`, after checking that they
/// are the whole set of one run: the runs are folded in job order, each read from its shard, and
/// the files written as the unsharded run writes them.
pub fn merge_into_staging(
    dirs: &[PathBuf],
    root: &Path,
    watcher: &mut impl run::Observer,
) -> Result<(Results, Staging), Error> {
    let opened = dirs
        .iter()
        .map(|d| Shard::open(d))
        .collect::<Result<_, _>>()?;
    let shards = shard::whole_set(opened)?;
    let header = &shards[0].header;
    let source = shards[0].source()?;
    let request = Request {
        source: &source,
        changes: &header.changes,
        intents: header.intents,
        attempts: header.attempts,
    };
    let share = |index| Share {
        index,
        count: header.shards,
    };
    for s in &shards {
        let request = Request {
            source: &s.source()?,
            ..request
        };
        if request.fingerprint(header.shards) != header.fingerprint {
            return Err(Error::BadOutput(format!(
                "{}: the config's text differs from the one the shards ran",
                s.dir.join(shard::CONFIG).display()
            )));
        }
    }
    let mut sweep = source.changed(&header.changes)?;
    sweep.trace(header.intents, header.attempts);
    let total = run::Jobs::new(&sweep).total();
    let mut readers = Vec::new();
    for s in &shards {
        if s.header.runs != share(s.header.shard).len(total) {
            return Err(Error::BadOutput(format!(
                "{}: holds {} runs where shard {} of this sweep has {}",
                s.dir.display(),
                s.header.runs,
                s.header.shard,
                share(s.header.shard).len(total)
            )));
        }
        readers.push(RunsReader::open(&s.dir)?);
    }
    let writing = || Error::io(format!("cannot write under {}", root.display()));
    let staging = Staging::new(root, &sweep.base.name, Mark::Output)?;
    let mut writer = Writer::create(staging.path(), &sweep).map_err(writing())?;
    writer.parts_in(Parts::Shards(
        shards.iter().map(|s| s.dir.clone()).collect(),
    ));
    let mut recorder = Recorder { writer, watcher };
    let mut fold = Fold::new(&sweep, &mut recorder);
    let live = run::live::Live::new(&sweep);
    for index in 0..total {
        let run = readers[(index % header.shards) as usize].next(index)?;
        let job = fold.job(index).expect("a job of the sweep");
        live.release_before(job.point);
        fold.add(index, job, &live.get(job.point), &run)
            .map_err(writing())?;
        fold.job_done(index + 1, total);
    }
    readers.into_iter().try_for_each(RunsReader::end)?;
    let folded = fold.into_folded();
    let results = Results::new(sweep, folded);
    finish(recorder.writer, &results, &source, &staging, root)?;
    Ok((results, staging))
}

/// Writes a real run, as `retrysim endpoint` recorded it, into a staging folder under `root` in
/// the files a simulated run writes (see [`crate::endpoint::recorded`]): each client's run
/// folded as a configuration's, its traces written from its intents, and the endpoint's `own`
/// files (name and text) beside them, listed in the manifest. No closed form is drawn: what
/// each client does is not known, so `agrees` says `none` (`retrysim endpoint --predict` and
/// `retrysim compare` hold it to a policy).
pub fn recorded_into_staging(
    source: &Source,
    real: Experiment,
    runs: &[Recorded],
    root: &Path,
    own: &[(&str, String)],
) -> Result<Staging, Error> {
    let writing = || Error::io(format!("cannot write under {}", root.display()));
    let sweep = Sweep::single(real);
    let staging = Staging::new(root, &sweep.base.name, Mark::Output)?;
    let dir = staging.path();
    for (file, text) in own {
        std::fs::write(dir.join(file), text).map_err(writing())?;
    }
    let writer = Writer::create(dir, &sweep).map_err(writing())?;
    let mut recorder = Unclaimed { writer };
    let mut fold = Fold::new(&sweep, &mut recorder);
    let point = run::live::Live::new(&sweep).get(0);
    for (index, recorded) in runs.iter().enumerate() {
        let job = fold.job(index as u64).expect("a job per client");
        for trace in Trace::ALL
            .into_iter()
            .filter(|t| t.enabled(&sweep.base.output))
        {
            let mut w =
                TraceWriter::create(trace, dir, index as u64, &point, job).map_err(writing())?;
            for (record, attempts) in &recorded.intents {
                w.write(record, attempts).map_err(writing())?;
            }
            w.finish().map_err(writing())?;
        }
        fold.add(index as u64, job, &point, &recorded.run)
            .map_err(writing())?;
    }
    let folded = fold.into_folded();
    let mut results = Results::new(sweep, folded);
    for (_, result) in &mut results.kept {
        unclaim(result);
    }
    let own: Vec<&str> = own.iter().map(|(f, _)| *f).collect();
    (recorder.writer)
        .finish_as(&results, source, ("endpoint", &own))
        .map_err(writing())?;
    Ok(staging)
}

/// Writes a recorded run's rows without the closed forms its configurations' names would draw.
struct Unclaimed {
    writer: Writer,
}

impl run::Observer for Unclaimed {
    fn run_done(&mut self, point: &Point, job: Job, index: u64, run: &RunResult) -> io::Result<()> {
        self.writer.run(point, job, index, run)
    }

    fn point_done(&mut self, _: usize, point: &Point, result: &PointResult) -> io::Result<()> {
        let mut result = result.clone();
        unclaim(&mut result);
        self.writer.point(point, &result)
    }
}

/// Drops a point's closed forms: a recorded client's policy is unknown.
fn unclaim(result: &mut PointResult) {
    for p in &mut result.policies {
        p.theory = None;
        p.cost_theory = None;
        p.edge_theory = None;
        p.fan_out_p99 = None;
    }
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
