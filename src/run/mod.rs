//! Running a sweep: every (point, configuration, replication) job on its own, in parallel, then
//! gathered in job order and aggregated serially, so the thread count never shows in a result.

mod fold;
pub(crate) mod live;
mod pool;

use std::io;
use std::sync::atomic::AtomicBool;

use crate::experiment::Experiment;
use crate::metrics::recovery::{self, Recoveries, Recovery};
use crate::metrics::{
    AttemptRecord, Costs, Estimate, Figure, IntentRecord, Level, Measure, Moments, Quantiles,
    Sample, SeriesStats, StopReason, Sums, ToolTotals, Totals,
};
use crate::policy::Policy;
use crate::sim::{Job, RunResult};

use crate::sweep::{Point, Sweep};
use crate::theory::{self, ClosedForms};
use crate::time::Tick;
pub use fold::{Fold, Folded};
pub use pool::{Jobs, Share, Sink, execute};

/// The result of one configuration over all its replications, folded in replication order as
/// each finished, so it takes the same few words whatever the number of replications.
#[derive(Clone, Debug, Default)]
pub struct PolicyResult {
    /// The configuration's name, as its config writes it.
    pub name: String,
    /// Replications folded in.
    pub replications: u64,
    /// Every replication's totals added up. Once the point is handed on, its completion
    /// histogram is dropped (see [`PolicyResult::shed`]).
    pub totals: Totals,
    /// Every replication's time series, where the run keeps them; dropped with the histogram.
    pub series: Option<SeriesStats>,
    /// Each measure's mean in each replication, for the interval across replications.
    means: [Moments; Measure::ALL.len()],
    /// Events the engine processed, over every replication.
    pub events: u64,
    /// Median and 99th-percentile completion over every intent of every replication.
    pub completion_p50: Tick,
    pub completion_p99: Tick,
    /// The closed forms, where they apply to this configuration.
    pub theory: Option<ClosedForms>,
    /// How goodput recovered from the workload's trigger, in the series averaged over the
    /// replications, where the workload has a trigger and the run keeps a time series.
    pub recovery: Option<Recovery>,
    /// How each replication recovered, judged on its own series, where `recovery` is measured.
    pub recoveries: Option<Recoveries>,
    /// Each replication's makespan, the time of its last success, in seconds.
    pub makespan: Moments,
    /// Each replication's bill per task.
    pub costs: Costs,
    /// Each replication's value of every figure it measures, in [`Figure::ALL`]'s order.
    per_run: [Moments; Figure::ALL.len()],
    /// The longest line at any tool it calls, averaged over a bin of the time series and over
    /// the replications, where the run keeps one.
    pub peak_queue: Option<f64>,
    /// Per edge of the call graph, each replication's calls per top-level intent, where a tool
    /// is a service.
    pub edge_calls: Vec<Moments>,
    /// The call graph's closed form: calls per top-level intent on each edge, where it holds.
    pub edge_theory: Option<Vec<f64>>,
    /// The closed form of a fan-out's 99th-percentile completion, where it holds.
    pub fan_out_p99: Option<Tick>,
    /// The closed forms of a task's cost (and time, for a model's broken streams).
    pub cost_theory: Option<theory::CostForms>,
}

impl PolicyResult {
    /// Folds in the next replication's run of `policy` in `exp`.
    pub fn add(&mut self, run: &RunResult, exp: &Experiment, policy: &Policy) {
        if let (Some(series), Some(windows)) = (&run.totals.series, exp.recovery_windows()) {
            let tools: Vec<usize> = exp.called(exp.calls_of(policy)).collect();
            (self.recoveries.get_or_insert_with(Recoveries::default)).add(series, &tools, &windows);
        }
        self.replications += 1;
        self.totals.merge(&run.totals);
        self.makespan
            .push(run.totals.last_success.0 as f64 / crate::time::TICKS_PER_SECOND as f64);
        self.costs.add(&run.totals);
        if let Some(series) = &run.totals.series {
            (self
                .series
                .get_or_insert_with(|| SeriesStats::new(series.width())))
            .add(series);
        }
        for m in Measure::ALL {
            self.means[m as usize].push(run.totals.get(m).mean());
        }
        for f in Figure::ALL {
            if let Some(x) = f.of_run(&run.totals) {
                self.per_run[f as usize].push(x);
            }
        }
        if exp.graph.is_measured() {
            let edges = &run.totals.edges;
            self.edge_calls
                .resize(exp.graph.edges.len(), Moments::default());
            for (e, moments) in self.edge_calls.iter_mut().enumerate() {
                let calls = edges.get(e).map_or(0, |t| t.calls);
                moments.push(per_top_intent(&run.totals, calls));
            }
        }
        self.events += run.events;
    }

    /// Whether the cost form lies inside the 95 % interval of the cost per task, and the
    /// completion form, where there is one, inside the mean completion's: `yes` or `no`,
    /// `too_few` without an interval, `none` without a form (`summary.csv`'s `cost_agrees`).
    pub fn cost_agrees(&self) -> &'static str {
        let Some(theory) = self.cost_theory else {
            return "none";
        };
        let cost = Estimate::from_sample(&self.costs.per_task);
        let completion = self.estimate(Measure::Completion);
        let timed = theory.completion.is_some();
        if !cost.half_width.is_finite() || timed && !completion.half_width.is_finite() {
            return "too_few";
        }
        let ticks = |s: f64| s * crate::time::TICKS_PER_SECOND as f64;
        let on_time = theory
            .completion
            .is_none_or(|s| completion.contains(ticks(s)));
        match cost.contains(theory.cost_per_task) && on_time {
            true => "yes",
            false => "no",
        }
    }

    /// The estimate of `m` with its 95 % interval: across intents for one replication, across
    /// replication means for several.
    pub fn estimate(&self, m: Measure) -> Estimate {
        self.estimate_at(m, crate::metrics::estimate::LEVEL)
    }

    /// The degrees of freedom of every interval [`PolicyResult::estimate`] gives: replications
    /// − 1 across several, intents − 1 within one.
    pub fn degrees_of_freedom(&self) -> u64 {
        let n = if self.replications == 1 {
            self.totals.get(Measure::Attempts).count()
        } else {
            self.replications
        };
        n.saturating_sub(1)
    }

    /// As [`PolicyResult::estimate`], at confidence `level` rather than 95 %.
    pub fn estimate_at(&self, m: Measure, level: f64) -> Estimate {
        if self.replications == 1 {
            Estimate::at_level(self.totals.get(m), level)
        } else {
            Estimate::at_level(&self.means[m as usize], level)
        }
    }

    /// Figure `f` with its 95 % interval: as [`PolicyResult::estimate`] for the per-intent
    /// figures (the task success rate's, with one replication, across tasks), across the
    /// replications' own values for the others, which one replication gives no interval.
    pub fn figure(&self, f: Figure) -> Estimate {
        let seconds = |e: Estimate| {
            let s = crate::time::TICKS_PER_SECOND as f64;
            Estimate {
                mean: e.mean / s,
                half_width: e.half_width / s,
                std_error: e.std_error / s,
            }
        };
        match f {
            Figure::Attempts => self.estimate(Measure::Attempts),
            Figure::Duplicates => self.estimate(Measure::Duplicates),
            Figure::Success => self.estimate(Measure::Success),
            Figure::Ghost => self.estimate(Measure::Ghost),
            Figure::MeanCompletion => seconds(self.estimate(Measure::Completion)),
            Figure::TaskSuccess if self.replications == 1 => Estimate::from_sample(
                &Sums::bernoulli(self.totals.tasks, self.totals.tasks_succeeded),
            ),
            _ => Estimate::from_sample(&self.per_run[f as usize]),
        }
    }

    /// What this configuration's calls did at tool `tool`, summed over the replications.
    pub fn tool_totals(&self, tool: usize) -> ToolTotals {
        self.totals.tools.get(tool).cloned().unwrap_or_default()
    }

    /// What this configuration's calls did at every tool together, summed over the
    /// replications.
    pub fn all_tools(&self) -> ToolTotals {
        let mut sum = ToolTotals::default();
        for totals in &self.totals.tools {
            sum.merge(totals);
        }
        sum
    }

    /// Every replication is in: reads the completion quantiles and decides the closed forms.
    fn finish(&mut self, exp: &Experiment, policy: &Policy) {
        self.name.clone_from(&policy.name);
        self.completion_p50 = self.totals.completion.at(0.5);
        self.completion_p99 = self.totals.completion.at(0.99);
        // The closed forms describe intents that run to their end: none if the horizon cut
        // any short.
        self.theory = if self.totals.stopped(StopReason::Hung) > 0 {
            None
        } else {
            theory::for_policy(exp, policy)
        };
        if exp.graph.is_measured() && self.totals.stopped(StopReason::Hung) == 0 {
            self.edge_theory = theory::graph::edge_calls(exp, policy);
            self.fan_out_p99 = theory::graph::fan_out_quantile(exp, policy, 0.99);
        }
        if self.totals.stopped(StopReason::Hung) == 0 {
            self.cost_theory = theory::cost(exp, policy, self.theory.as_ref());
        }
        let tools: Vec<usize> = exp.called(exp.calls_of(policy)).collect();
        if let (Some(series), Some(windows)) = (&self.series, exp.recovery_windows()) {
            self.recovery = Some(recovery::measure(series, &tools, &windows));
        }
        self.peak_queue = self.series.as_ref().map(|s| {
            (tools.iter())
                .flat_map(|&t| (0..s.len(t)).map(move |i| s.level(t, i, Level::QueueLength).mean()))
                .fold(0.0, f64::max)
        });
    }

    /// Drops what only the output files need, the completion histogram and the time series, so a
    /// finished point kept for the printed table costs a few hundred bytes per configuration.
    pub fn shed(&mut self) {
        self.totals.completion = Quantiles::default();
        self.series = None;
    }
}

/// `count` per top-level intent: per call the tasks made (a call that fell back is one).
pub fn per_top_intent(totals: &Totals, count: u64) -> f64 {
    match totals.calls() {
        0 => 0.0,
        calls => count as f64 / calls as f64,
    }
}

/// What one point of a sweep produced, in the config's order of configurations.
#[derive(Clone, Debug, Default)]
pub struct PointResult {
    pub policies: Vec<PolicyResult>,
}

impl PointResult {
    /// The result of the configuration named `name`.
    pub fn policy(&self, name: &str) -> Option<&PolicyResult> {
        self.policies.iter().find(|p| p.name == name)
    }
}

/// Everything a sweep produced that outlives its files: what the printed table shows.
#[derive(Clone, Debug)]
pub struct Results {
    pub sweep: Sweep,
    /// How many points finished, from the first: all of them unless the run was interrupted.
    pub finished: usize,
    /// The finished points kept beside their results, in order ([`kept`] says which).
    pub kept: Vec<(Point, PointResult)>,
    /// Events processed by all finished runs.
    pub events: u64,
}

/// Points a run keeps, at most, for the printed table: every point of a sweep that has no more,
/// evenly spaced ones (the first and last among them) of a larger one. The files hold every
/// point; what a run keeps stays the same size whatever the number of points.
pub const KEPT: usize = 50;

/// Whether point `index` of a sweep of `len` points is kept.
pub fn kept(index: usize, len: usize) -> bool {
    spaced(index, len, KEPT)
}

/// Whether point `index` is among `most` evenly spaced points of `len`, the first and last
/// among them; every point is, where there are no more than `most`.
pub fn spaced(index: usize, len: usize, most: usize) -> bool {
    if len <= most {
        return true;
    }
    if most < 2 {
        return index == 0 && most == 1;
    }
    // The points are k (len − 1) / (most − 1), rounded down, for k = 0 … most − 1.
    let (span, step) = ((len - 1) as u128, (most - 1) as u128);
    let k = (index as u128 * step).div_ceil(span);
    k * span / step == index as u128
}

impl Results {
    pub fn new(sweep: Sweep, folded: Folded) -> Results {
        Results {
            sweep,
            finished: folded.finished,
            kept: folded.kept,
            events: folded.events,
        }
    }

    /// Whether every point ran.
    pub fn complete(&self) -> bool {
        self.finished == self.sweep.len()
    }

    /// The kept points beside their results: what the printed table shows.
    pub fn shown(&self) -> impl Iterator<Item = (&Point, &PointResult)> {
        self.kept.iter().map(|(p, r)| (p, r))
    }

    /// The result of point `index`, where the run kept it (every point of a sweep of up to
    /// [`KEPT`]; an observer sees every one as it finishes).
    pub fn point(&self, index: usize) -> Option<&PointResult> {
        let at = self
            .kept
            .binary_search_by_key(&index, |(p, _)| p.index)
            .ok()?;
        Some(&self.kept[at].1)
    }

    /// Whether the kept points are every finished point.
    pub fn keeps_all(&self) -> bool {
        self.kept.len() == self.finished
    }
}

/// Where each job streams its intents as they end, on the worker that runs it: the per-row
/// traces ([`crate::output::trace`] writes them to part files).
pub trait Traces: Sync {
    /// Opens job `index`'s trace of `point`; `None` where the point keeps none.
    fn open<'a>(
        &'a self,
        point: &'a Point,
        job: Job,
        index: u64,
    ) -> io::Result<Option<Box<dyn JobTrace + 'a>>>;
}

/// One job's trace: each intent with its attempts, as it ends.
pub trait JobTrace {
    fn write(&mut self, r: &IntentRecord, attempts: &[AttemptRecord]) -> io::Result<()>;
    /// Everything written, flushed.
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// How to run a sweep.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// Worker threads; `None` for one per core.
    pub threads: Option<usize>,
    /// Where each job streams its intents, if anywhere.
    pub traces: Option<&'a dyn Traces>,
    /// Set from outside (Ctrl-C) to stop starting jobs; the finished points are kept.
    pub cancel: Option<&'a AtomicBool>,
}

/// Hears of progress, on the calling thread, in order.
pub trait Observer {
    /// A job finished; `done` of `total` have.
    fn job_done(&mut self, _done: u64, _total: u64) {}

    /// The run of `job` of point `point` is folded in; runs come in job order.
    fn run_done(
        &mut self,
        _point: &Point,
        _job: Job,
        _index: u64,
        _run: &RunResult,
    ) -> io::Result<()> {
        Ok(())
    }

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

/// Runs `exp`, one point, and returns its result whole — each configuration's time series and
/// completion histogram kept, which a run's [`Results`] drop — as a prediction, a replay or a
/// test reads it.
pub fn single_point(exp: crate::experiment::Experiment) -> io::Result<PointResult> {
    struct Whole(Option<PointResult>);
    impl Observer for Whole {
        fn point_done(&mut self, _: usize, _: &Point, r: &PointResult) -> io::Result<()> {
            self.0 = Some(r.clone());
            Ok(())
        }
    }
    let mut whole = Whole(None);
    jobs(Sweep::single(exp), &Options::default(), &mut whole)?;
    Ok(whole.0.expect("the one point finished"))
}

/// Runs every (point, configuration, replication) job of a sweep on a pool of worker threads
/// ([`pool::execute`]) and folds each run into its configuration's result strictly in job
/// order: the result is the same on any number of threads, and memory stays bounded by the
/// number of workers. Each point is handed to `observer` once all its jobs are folded, and it
/// hears of every job as it ends (a progress display, a writer of rows as they come); pass
/// `&mut ()` to watch nothing and take the [`Results`] at the end.
pub fn jobs(sweep: Sweep, options: &Options, observer: &mut impl Observer) -> io::Result<Results> {
    let mut fold = Fold::new(&sweep, observer);
    pool::execute(&sweep, Share::ALL, options, &mut fold)?;
    let folded = fold.into_folded();
    Ok(Results::new(sweep, folded))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Evenly spaced points: exactly `most` of them, the first and the last among them, and
    /// every point of a sweep that has no more.
    #[test]
    fn spaced_points_are_as_many_as_asked_first_and_last_included() {
        for len in [1, 2, 11, 12, 13, 50, 51, 99, 10_000, 100_000] {
            for most in [1, 2, 12, KEPT] {
                let chosen: Vec<usize> = (0..len).filter(|&i| spaced(i, len, most)).collect();
                assert_eq!(chosen.len(), len.min(most), "{len} points, {most}");
                assert_eq!(chosen[0], 0);
                if most > 1 {
                    assert_eq!(*chosen.last().unwrap(), len - 1, "{len} points, {most}");
                }
            }
        }
        // Gaps differ by one point at most.
        let chosen: Vec<usize> = (0..10_000).filter(|&i| kept(i, 10_000)).collect();
        let gaps: Vec<usize> = chosen.windows(2).map(|w| w[1] - w[0]).collect();
        let (lo, hi) = (gaps.iter().min().unwrap(), gaps.iter().max().unwrap());
        assert!(hi - lo <= 1, "{lo}..{hi}");
    }
}
