//! `runs.csv`: one row per sweep point × configuration × replication, the raw material of every
//! interval in `summary.csv`, written as each run is folded in. Columns are documented in `out/README.md`.

use super::fixed;
use crate::metrics::{Measure, Sample, StopReason};
use crate::sim::{Job, RunResult};
use crate::sweep::Point;

/// The columns after the parameter columns.
pub const COLUMNS: [&str; 17] = [
    "experiment",
    "policy",
    "replication",
    "tasks",
    "intents",
    "attempts_per_intent",
    "effects_per_intent",
    "duplicates_per_intent",
    "success_rate",
    "ghost_rate",
    "mean_completion_ticks",
    "tasks_succeeded",
    "stopped_attempt_limit",
    "stopped_not_retryable",
    "hung",
    "events",
    "timeouts",
];

/// The row of one run: configuration `job.policy`'s replication `job.replication` at
/// `point`, parameters first.
pub fn row(point: &Point, job: Job, run: &RunResult) -> Vec<String> {
    let exp = &point.experiment;
    let t = &run.totals;
    let mean = |m: Measure| fixed(t.get(m).mean());
    let row: [String; COLUMNS.len()] = [
        exp.name.clone(),
        exp.policies[job.policy].name.clone(),
        job.replication.to_string(),
        t.tasks.to_string(),
        t.intents().to_string(),
        mean(Measure::Attempts),
        mean(Measure::Effects),
        mean(Measure::Duplicates),
        mean(Measure::Success),
        mean(Measure::Ghost),
        mean(Measure::Completion),
        t.tasks_succeeded.to_string(),
        t.stopped(StopReason::AttemptLimit).to_string(),
        t.stopped(StopReason::NotRetryable).to_string(),
        t.stopped(StopReason::Hung).to_string(),
        run.events.to_string(),
        t.timeouts.to_string(),
    ];
    point
        .params
        .iter()
        .map(ToString::to_string)
        .chain(row)
        .collect()
}
