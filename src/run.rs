//! Running a sweep: every (point, configuration, replication) job on its own, in parallel, then
//! gathered in job order and aggregated serially, so the thread count never shows in a result.

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use crate::experiment::Experiment;
use crate::metrics::{
    Estimate, Measure, Moments, Quantiles, Sample, StopReason, Timeline, ToolTotals,
};
use crate::output::trace::{Trace, TraceWriter};
use crate::sim::{self, Job, RunResult};
use crate::sweep::{Point, Sweep};
use crate::theory::{self, ClosedForms};
use crate::time::Tick;

/// The result of one configuration over all replications.
#[derive(Clone, Debug)]
pub struct PolicyResult {
    /// One run per replication, in replication order.
    pub runs: Vec<RunResult>,
    /// The closed forms, where they apply to this configuration.
    pub theory: Option<ClosedForms>,
}

impl PolicyResult {
    /// The estimate of `m` with its 95 % interval: across intents for one replication, across
    /// replication means for several.
    pub fn estimate(&self, m: Measure) -> Estimate {
        match self.runs.as_slice() {
            [only] => Estimate::from_sample(only.totals.get(m)),
            runs => Estimate::from_sample(
                &runs
                    .iter()
                    .map(|r| r.totals.get(m).mean())
                    .collect::<Moments>(),
            ),
        }
    }

    /// The completion time at quantile `q` over the intents of every replication.
    pub fn completion(&self, q: f64) -> Tick {
        let mut all = Quantiles::default();
        for run in &self.runs {
            all.merge(&run.totals.completion);
        }
        all.at(q)
    }

    /// What this configuration's calls did at tool `tool`, summed over the replications.
    pub fn tool_totals(&self, tool: usize) -> ToolTotals {
        let mut sum = ToolTotals::default();
        for run in &self.runs {
            if let Some(totals) = run.totals.tools.get(tool) {
                sum.merge(totals);
            }
        }
        sum
    }

    /// What this configuration's calls did at every tool together, summed over the
    /// replications.
    pub fn all_tools(&self) -> ToolTotals {
        let mut sum = ToolTotals::default();
        for totals in self.runs.iter().flat_map(|run| &run.totals.tools) {
            sum.merge(totals);
        }
        sum
    }

    /// The timeline summed over the replications, if the run kept one.
    pub fn timeline(&self) -> Option<Timeline> {
        let mut runs = self.runs.iter().filter_map(|r| r.totals.timeline.as_ref());
        let mut sum = runs.next()?.clone();
        for timeline in runs {
            sum.merge(timeline);
        }
        Some(sum)
    }

    /// Sums a count over the replications.
    pub fn total(&self, count: impl Fn(&RunResult) -> u64) -> u64 {
        self.runs.iter().map(count).sum()
    }

    /// Whether theory lies inside the intervals of both headline measures, attempts and
    /// duplicates; `None` where no closed form applies.
    pub fn agrees(&self) -> Option<bool> {
        let t = self.theory?;
        Some(
            self.estimate(Measure::Attempts).contains(t.attempts)
                && self.estimate(Measure::Duplicates).contains(t.duplicates),
        )
    }
}

/// What one point of a sweep produced, in the config's order of configurations.
#[derive(Clone, Debug)]
pub struct PointResult {
    pub policies: Vec<PolicyResult>,
}

/// Everything a sweep produced.
#[derive(Clone, Debug)]
pub struct Results {
    pub sweep: Sweep,
    /// The finished points, in order: all of them unless the run was interrupted.
    pub points: Vec<PointResult>,
}

impl Results {
    /// Whether every point ran.
    pub fn complete(&self) -> bool {
        self.points.len() == self.sweep.points.len()
    }

    /// The finished points beside their results.
    pub fn finished(&self) -> impl Iterator<Item = (&Point, &PointResult)> {
        self.sweep.points.iter().zip(&self.points)
    }

    /// Events processed by all finished runs.
    pub fn events(&self) -> u64 {
        self.points
            .iter()
            .flat_map(|p| &p.policies)
            .flat_map(|p| &p.runs)
            .map(|r| r.events)
            .sum()
    }
}

/// How to run a sweep.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options<'a> {
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// With a folder, each job also writes the traces its point asks for to part files there
    /// (see [`crate::output::trace`]).
    pub trace_dir: Option<&'a Path>,
    /// Set from outside (Ctrl-C) to stop starting jobs; the finished points are kept.
    pub cancel: Option<&'a AtomicBool>,
}

/// Hears of progress, on the calling thread, in order.
pub trait Observer {
    /// A job finished; `done` of `total` have.
    fn job_done(&mut self, _done: usize, _total: usize) {}

    /// Point `index` and every point before it finished.
    fn point_done(
        &mut self,
        _index: usize,
        _point: &Point,
        _result: &PointResult,
    ) -> io::Result<()> {
        Ok(())
    }
}

impl Observer for () {}

/// Runs every (point, configuration, replication) job of a sweep on a pool of worker threads.
/// Workers take jobs in index order, so points finish roughly in order; results are slotted by
/// index and each point is handed to `observer` once it and all points before it are done.
pub fn run(sweep: Sweep, options: &Options, observer: &mut impl Observer) -> io::Result<Results> {
    let jobs: Vec<Job> = sweep
        .points
        .iter()
        .enumerate()
        .flat_map(|(point, p)| {
            let exp = &p.experiment;
            (0..exp.policies.len()).flat_map(move |policy| {
                (0..exp.replications).map(move |replication| Job {
                    point,
                    policy,
                    replication,
                })
            })
        })
        .collect();
    // Where each point's jobs end in `jobs`.
    let ends: Vec<usize> = sweep
        .points
        .iter()
        .scan(0, |end, p| {
            *end += p.experiment.policies.len() * p.experiment.replications as usize;
            Some(*end)
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(io::Error::other)?;
    let stop = AtomicBool::new(false);
    let stopping = || {
        stop.load(Ordering::Relaxed) || options.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    };
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, io::Result<RunResult>)>();

    let mut slots: Vec<Option<RunResult>> = vec![None; jobs.len()];
    let mut points = Vec::new();
    let mut failure = None;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            pool.scope(|s| {
                for _ in 0..pool.current_num_threads() {
                    let tx = tx.clone();
                    s.spawn(|_| {
                        let tx = tx;
                        while !stopping() {
                            let index = next.fetch_add(1, Ordering::Relaxed);
                            let Some(&job) = jobs.get(index) else { break };
                            let point = &sweep.points[job.point];
                            let result = match options.trace_dir {
                                None => Ok(sim::run(&point.experiment, job, |_, _| {})),
                                Some(dir) => run_traced(point, job, dir, index),
                            };
                            if tx.send((index, result)).is_err() {
                                break;
                            }
                        }
                    });
                }
            });
            drop(tx);
        });
        let mut done = 0;
        for (index, result) in &rx {
            match result {
                Ok(r) => slots[index] = Some(r),
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    failure.get_or_insert(e);
                    continue;
                }
            }
            done += 1;
            observer.job_done(done, jobs.len());
            // Hand on every point whose jobs are all in, in order.
            while failure.is_none() && points.len() < ends.len() {
                let i = points.len();
                let start = if i == 0 { 0 } else { ends[i - 1] };
                if !slots[start..ends[i]].iter().all(Option::is_some) {
                    break;
                }
                let runs = slots[start..ends[i]]
                    .iter_mut()
                    .map(|s| s.take().expect("checked"));
                let result = aggregate(&sweep.points[i].experiment, runs);
                if let Err(e) = observer.point_done(i, &sweep.points[i], &result) {
                    stop.store(true, Ordering::Relaxed);
                    failure = Some(e);
                }
                points.push(result);
            }
        }
    });
    match failure {
        Some(e) => Err(e),
        None => Ok(Results { sweep, points }),
    }
}

/// Gathers one point's runs, configuration by configuration, each with its closed forms.
fn aggregate(exp: &Experiment, runs: impl Iterator<Item = RunResult>) -> PointResult {
    let mut runs = runs;
    let policies = exp
        .policies
        .iter()
        .map(|policy| {
            let runs: Vec<RunResult> = runs.by_ref().take(exp.replications as usize).collect();
            // The closed forms describe intents that run to their end: none if the horizon
            // cut any short.
            let cut = runs.iter().any(|r| r.totals.stopped(StopReason::Hung) > 0);
            let theory = if cut {
                None
            } else {
                theory::for_policy(exp, policy)
            };
            PolicyResult { runs, theory }
        })
        .collect();
    PointResult { policies }
}

/// Runs job `index`, writing its rows of every trace its point asks for.
fn run_traced(point: &Point, job: Job, dir: &Path, index: usize) -> io::Result<RunResult> {
    let mut writers = Trace::ALL
        .into_iter()
        .filter(|t| t.enabled(&point.experiment.output))
        .map(|t| TraceWriter::create(t, dir, index, point, job))
        .collect::<io::Result<Vec<_>>>()?;
    let mut failure = None;
    let result = sim::run(&point.experiment, job, |r, attempts| {
        for w in &mut writers {
            if let Err(e) = w.write(r, attempts) {
                failure.get_or_insert(e);
            }
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    for w in writers {
        w.finish()?;
    }
    Ok(result)
}
