//! `runs.csv`: one row per sweep point × configuration × replication, the raw material of every
//! interval in `summary.csv`, written as each run is folded in. One table: each column with its
//! type and how a run gives its value. Columns are documented in `out/README.md`.

use super::Export;
use super::column::{Column, Kind::*, col};
use super::{dollars, fixed};
use crate::experiment::Experiment;
use crate::metrics::{Figure, Measure, Sample, StopReason};
use crate::sim::{Job, RunResult};
use crate::sweep::Point;

/// One run, as its row reads it.
pub struct Row<'a> {
    exp: &'a Experiment,
    job: Job,
    run: &'a RunResult,
}

impl Row<'_> {
    fn mean(&self, m: Measure) -> String {
        fixed(self.run.totals.get(m).mean())
    }

    fn stopped(&self, reason: StopReason) -> String {
        self.run.totals.stopped(reason).to_string()
    }

    /// A figure's value in this run, as `summary.csv` writes it; empty where not measured.
    fn figure(&self, f: Figure) -> String {
        match f.of_run(&self.run.totals) {
            Some(x) if f.is_money() => dollars(x),
            Some(x) => fixed(x),
            None => String::new(),
        }
    }
}

/// A column and how a run gives its value.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

/// The columns after the parameter columns, each with its value.
pub const FIELDS: [Field; 26] = [
    Field(col("experiment", Text), |r| r.exp.name.clone()),
    Field(col("policy", Text), |r| {
        r.exp.policies[r.job.policy].name.clone()
    }),
    Field(col("replication", Count), |r| r.job.replication.to_string()),
    Field(col("tasks", Count), |r| r.run.totals.tasks.to_string()),
    Field(col("intents", Count), |r| {
        r.run.totals.intents().to_string()
    }),
    Field(col("attempts_per_intent", Number), |r| {
        r.mean(Measure::Attempts)
    }),
    Field(col("effects_per_intent", Number), |r| {
        r.mean(Measure::Effects)
    }),
    Field(col("duplicates_per_intent", Number), |r| {
        r.mean(Measure::Duplicates)
    }),
    Field(col("success_rate", Number), |r| r.mean(Measure::Success)),
    Field(col("ghost_rate", Number), |r| r.mean(Measure::Ghost)),
    Field(col("mean_completion_ticks", Number), |r| {
        r.mean(Measure::Completion)
    }),
    Field(col("tasks_succeeded", Count), |r| {
        r.run.totals.tasks_succeeded.to_string()
    }),
    Field(col("stopped_attempt_limit", Count), |r| {
        r.stopped(StopReason::AttemptLimit)
    }),
    Field(col("stopped_not_retryable", Count), |r| {
        r.stopped(StopReason::NotRetryable)
    }),
    Field(col("hung", Count), |r| r.stopped(StopReason::Hung)),
    Field(col("events", Count), |r| r.run.events.to_string()),
    Field(col("timeouts", Count), |r| {
        r.run.totals.timeouts.to_string()
    }),
    Field(col("cost_per_task", NumberOrEmpty), |r| {
        r.figure(Figure::Cost)
    }),
    Field(col("task_success_rate", Number), |r| {
        r.figure(Figure::TaskSuccess)
    }),
    Field(col("calls_per_task", Number), |r| r.figure(Figure::Calls)),
    Field(col("mean_completion_s", Number), |r| {
        r.figure(Figure::MeanCompletion)
    }),
    Field(col("completion_p99_s", Number), |r| {
        r.figure(Figure::CompletionP99)
    }),
    Field(col("makespan_s", Number), |r| r.figure(Figure::Makespan)),
    Field(col("cost_per_successful_task", NumberOrEmpty), |r| {
        r.figure(Figure::CostPerSuccess)
    }),
    Field(col("retry_cost_per_task", NumberOrEmpty), |r| {
        r.figure(Figure::RetryCost)
    }),
    Field(col("wasted_cost_per_task", NumberOrEmpty), |r| {
        r.figure(Figure::WastedCost)
    }),
];

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    FIELDS.iter().map(|f| f.0).collect()
}

/// The row of one run: configuration `job.policy`'s replication `job.replication` at
/// `point`, parameters first.
pub fn row(point: &Point, job: Job, run: &RunResult) -> Vec<String> {
    let row = Row {
        exp: &point.experiment,
        job,
        run,
    };
    let params = point.params.iter().map(ToString::to_string);
    params.chain(FIELDS.iter().map(|f| (f.1)(&row))).collect()
}

/// `runs.csv` as the output folder writes it.
pub struct Runs;

impl Export for Runs {
    fn file(&self) -> &'static str {
        "runs.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn run_rows(&self, point: &Point, job: Job, run: &RunResult) -> Vec<Vec<String>> {
        vec![row(point, job, run)]
    }
}
