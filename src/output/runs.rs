//! `runs.csv`: one row per sweep point × configuration × replication, the raw material of every
//! interval in `summary.csv`. Columns are documented in `out/README.md`.

use super::fixed;
use crate::metrics::{Measure, Sample, StopReason};
use crate::run::PointResult;
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

/// The rows of one point: every configuration's replications in order, parameters first.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        for (replication, run) in result.runs.iter().enumerate() {
            let t = &run.totals;
            let mean = |m: Measure| fixed(t.get(m).mean());
            let row: [String; COLUMNS.len()] = [
                exp.name.clone(),
                policy.name.clone(),
                replication.to_string(),
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
            rows.push(
                point
                    .params
                    .iter()
                    .map(ToString::to_string)
                    .chain(row)
                    .collect(),
            );
        }
    }
    rows
}
