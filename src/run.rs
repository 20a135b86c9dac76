//! Running an experiment: every (configuration, replication) job on its own, in parallel, then
//! gathered in job order and aggregated serially, so the thread count never shows in a result.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;

use rayon::prelude::*;

use crate::experiment::Experiment;
use crate::metrics::{Estimate, IntentRecord, Measure, Moments, Sample, StopReason};
use crate::output::intents::{IntentWriter, part_path};
use crate::sim::{self, Job, RunResult};
use crate::theory::{self, ClosedForms};

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

/// Everything an experiment produced, in the config's order of configurations.
#[derive(Clone, Debug)]
pub struct Results {
    pub experiment: Experiment,
    pub policies: Vec<PolicyResult>,
}

impl Results {
    /// Events processed by all runs.
    pub fn events(&self) -> u64 {
        self.policies
            .iter()
            .flat_map(|p| &p.runs)
            .map(|r| r.events)
            .sum()
    }
}

/// Runs every job of `exp`. With `intents_dir`, each job also writes its intents to
/// `intents-<job>.part` there (see [`crate::output::intents`]).
pub fn run(exp: Experiment, intents_dir: Option<&Path>) -> io::Result<Results> {
    let jobs: Vec<Job> = (0..exp.policies.len())
        .flat_map(|policy| {
            (0..exp.replications).map(move |replication| Job {
                policy,
                replication,
            })
        })
        .collect();
    let runs = jobs
        .par_iter()
        .enumerate()
        .map(|(index, &job)| match intents_dir {
            None => Ok(sim::run(&exp, job, |_: &IntentRecord| {})),
            Some(dir) => run_with_intents(&exp, job, &part_path(dir, index)),
        })
        .collect::<io::Result<Vec<RunResult>>>()?;
    let mut runs = runs.into_iter();
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
                theory::for_policy(&exp, policy)
            };
            PolicyResult { runs, theory }
        })
        .collect();
    Ok(Results {
        experiment: exp,
        policies,
    })
}

fn run_with_intents(exp: &Experiment, job: Job, path: &Path) -> io::Result<RunResult> {
    let file = BufWriter::new(File::create(path)?);
    let mut writer = IntentWriter::new(file, exp, job);
    let mut failure = None;
    let result = sim::run(exp, job, |r| {
        if let Err(e) = writer.write(r) {
            failure.get_or_insert(e);
        }
    });
    match failure {
        Some(e) => Err(e),
        None => writer.finish().map(|()| result),
    }
}
