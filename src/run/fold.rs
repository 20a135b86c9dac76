//! Folding runs into results: each run into its configuration's result, strictly in job order,
//! and each point handed on once its last job is in.

use std::io;

use super::pool::{Jobs, Sink};
use super::{Observer, PointResult, PolicyResult};
use crate::sim::{Job, RunResult};
use crate::sweep::Sweep;

/// The results of a sweep as its runs come in, in job order: from the worker pool, or from the
/// shards a sweep was split into.
pub struct Fold<'a, O> {
    sweep: &'a Sweep,
    jobs: Jobs,
    current: PointResult,
    points: Vec<PointResult>,
    observer: &'a mut O,
}

impl<'a, O: Observer> Fold<'a, O> {
    pub fn new(sweep: &'a Sweep, observer: &'a mut O) -> Self {
        Fold {
            sweep,
            jobs: Jobs::new(sweep),
            current: PointResult::default(),
            points: Vec::new(),
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

    /// The finished points, in order.
    pub fn into_points(self) -> Vec<PointResult> {
        self.points
    }

    /// Folds in the run of job `index`, the next in job order.
    pub fn add(&mut self, index: u64, job: Job, run: &RunResult) -> io::Result<()> {
        let point = &self.sweep.points[job.point];
        self.observer.run_done(point, job, index, run)?;
        let exp = &point.experiment;
        let policies = &mut self.current.policies;
        if policies.len() <= job.policy {
            policies.resize_with(job.policy + 1, PolicyResult::default);
        }
        policies[job.policy].add(run, exp, &exp.policies[job.policy]);
        if index + 1 == self.jobs.ends[job.point] {
            let mut result = std::mem::take(&mut self.current);
            for (p, policy) in result.policies.iter_mut().zip(&exp.policies) {
                p.finish(exp, policy);
            }
            let handed = self.observer.point_done(job.point, point, &result);
            result.policies.iter_mut().for_each(PolicyResult::shed);
            self.points.push(result);
            handed?;
        }
        Ok(())
    }
}

impl<O: Observer> Sink for Fold<'_, O> {
    fn job_done(&mut self, done: u64, total: u64) {
        self.observer.job_done(done, total);
    }

    fn take(&mut self, index: u64, job: Job, run: RunResult) -> io::Result<()> {
        self.add(index, job, &run)
    }
}
