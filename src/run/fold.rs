//! Folding runs into results: each run into its configuration's result, strictly in job order,
//! and each point handed on once its last job is in.

use std::io;

use super::pool::{Jobs, Sink};
use super::{Observer, PointResult, PolicyResult};
use crate::sim::{Job, RunResult};
use crate::sweep::{Point, Sweep};

/// What a fold produced, which with its sweep makes the [`super::Results`].
pub struct Folded {
    pub finished: usize,
    pub kept: Vec<(Point, PointResult)>,
    pub events: u64,
}

/// The results of a sweep as its runs come in, in job order: from the worker pool, or from the
/// shards a sweep was split into.
pub struct Fold<'a, O> {
    sweep: &'a Sweep,
    jobs: Jobs,
    current: PointResult,
    /// Points finished, from the first.
    finished: usize,
    /// The finished points kept for the printed table ([`super::kept`]).
    kept: Vec<(Point, PointResult)>,
    events: u64,
    observer: &'a mut O,
}

impl<'a, O: Observer> Fold<'a, O> {
    pub fn new(sweep: &'a Sweep, observer: &'a mut O) -> Self {
        Fold {
            sweep,
            jobs: Jobs::new(sweep),
            current: PointResult::default(),
            finished: 0,
            kept: Vec::new(),
            events: 0,
            observer,
        }
    }

    /// How many jobs the sweep has.
    pub fn total(&self) -> u64 {
        self.jobs.total()
    }

    /// Job number `index`, if the sweep has one.
    pub fn job(&self, index: u64) -> Option<Job> {
        self.jobs.get(index)
    }

    /// What the runs folded in produced, once every run is in (or the run stopped).
    pub fn into_folded(self) -> Folded {
        Folded {
            finished: self.finished,
            kept: self.kept,
            events: self.events,
        }
    }

    /// Folds in the run of job `index` at `point`, the next in job order.
    pub fn add(&mut self, index: u64, job: Job, point: &Point, run: &RunResult) -> io::Result<()> {
        self.observer.run_done(point, job, index, run)?;
        self.events += run.events;
        let exp = &point.experiment;
        let policies = &mut self.current.policies;
        if policies.len() <= job.policy {
            policies.resize_with(job.policy + 1, PolicyResult::default);
        }
        policies[job.policy].add(run, exp, &exp.policies[job.policy]);
        if index + 1 == self.jobs.end_of(job.point) {
            let mut result = std::mem::take(&mut self.current);
            for (p, policy) in result.policies.iter_mut().zip(&exp.policies) {
                p.finish(exp, policy);
            }
            let handed = self.observer.point_done(job.point, point, &result);
            self.finished += 1;
            if super::kept(job.point, self.sweep.len()) {
                result.policies.iter_mut().for_each(PolicyResult::shed);
                self.kept.push((point.clone(), result));
            }
            handed?;
        }
        Ok(())
    }
}

impl<O: Observer> Sink for Fold<'_, O> {
    fn job_done(&mut self, done: u64, total: u64) {
        self.observer.job_done(done, total);
    }

    fn take(&mut self, index: u64, job: Job, point: &Point, run: RunResult) -> io::Result<()> {
        self.add(index, job, point, &run)
    }
}
