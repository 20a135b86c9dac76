//! `runs.csv`: one row per sweep point × configuration × replication, the raw material of every
//! interval in `summary.csv`, written as each run is folded in. Columns are documented in `out/README.md`.

use super::column::{Column, Kind::*, col};
use super::fixed;
use crate::metrics::{Measure, Sample, StopReason};
use crate::sim::{Job, RunResult};
use crate::sweep::Point;

/// The columns after the parameter columns.
pub const COLUMNS: [Column; 17] = [
    col("experiment", Text),
    col("policy", Text),
    col("replication", Count),
    col("tasks", Count),
    col("intents", Count),
    col("attempts_per_intent", Number),
    col("effects_per_intent", Number),
    col("duplicates_per_intent", Number),
    col("success_rate", Number),
    col("ghost_rate", Number),
    col("mean_completion_ticks", Number),
    col("tasks_succeeded", Count),
    col("stopped_attempt_limit", Count),
    col("stopped_not_retryable", Count),
    col("hung", Count),
    col("events", Count),
    col("timeouts", Count),
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
