//! One run: a configuration of an experiment driven through the workload on the engine.

pub mod choices;
pub(crate) mod fate;
mod intent;
mod slab;
mod tree;
mod world;

use serde::{Deserialize, Serialize};

use crate::engine::rng::Streams;
use crate::engine::{self, Scheduler};
use crate::experiment::Experiment;
use crate::metrics::{AttemptRecord, IntentRecord, Totals};
pub use choices::{Choices, Point};

/// Which run of a sweep: a point, a configuration (policy index) and a replication.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Job {
    /// Keys the random streams, so points are independent samples.
    pub point: usize,
    pub policy: usize,
    pub replication: u64,
}

/// What a run leaves behind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    pub totals: Totals,
    /// Events the engine processed.
    pub events: u64,
}

/// Runs one job, handing each intent, with every one of its attempts, to `sink` once it is over
/// (the client done with it and the server holding none of its attempts).
pub fn simulate(
    exp: &Experiment,
    job: Job,
    sink: impl FnMut(&IntentRecord, &[AttemptRecord]),
) -> RunResult {
    drive(exp, job, Some(sink), None).0
}

/// Runs one job whose attempts meet the fates `choices` lists, in the order they are sent,
/// rather than drawn ones (see [`Choices`]); returns the run and the choices with every
/// attempt sent recorded.
pub fn chosen(
    exp: &Experiment,
    job: Job,
    choices: Choices,
    sink: impl FnMut(&IntentRecord, &[AttemptRecord]),
) -> (RunResult, Choices) {
    let (run, choices) = drive(exp, job, Some(sink), Some(choices));
    (run, choices.expect("the run kept its choices"))
}

/// Runs one job for its totals alone: no intent is handed on, so an attempt that can change no
/// more is folded into counts as the next goes out, and an intent's memory stays bounded
/// however many attempts it makes.
pub fn totals(exp: &Experiment, job: Job) -> RunResult {
    drive(exp, job, None::<fn(&IntentRecord, &[AttemptRecord])>, None).0
}

fn drive(
    exp: &Experiment,
    job: Job,
    sink: Option<impl FnMut(&IntentRecord, &[AttemptRecord])>,
    choices: Option<Choices>,
) -> (RunResult, Option<Choices>) {
    let streams = Streams {
        seed: exp.seed,
        point: job.point as u64,
        replication: job.replication,
    };
    let mut world = world::World::new(exp, &exp.policies[job.policy], streams, sink);
    // A config's own schedule is met as the explorer's choices are.
    world.fates.explorer = choices.or_else(|| exp.schedule.clone().map(Choices::new));
    let mut sched = Scheduler::new();
    world.begin(&mut sched);
    let end = match engine::run(&mut world, &mut sched, exp.horizon) {
        engine::Ending::Drained => sched.now(),
        engine::Ending::Horizon => exp.horizon,
    };
    let choices = world.fates.explorer.take();
    let totals = world.finish(exp.horizon, end);
    let run = RunResult {
        totals,
        events: sched.processed(),
    };
    (run, choices)
}
