//! The figures a configuration is judged by — the measured columns of `summary.csv` that carry
//! an interval — each with the way it is better and its value in one replication (the column of
//! `runs.csv` behind the interval). `compare` and `tune` read them from here alone, so a figure
//! is defined once.
//!
//! Two measured figures with intervals are left out on purpose: `effects_per_intent` and
//! `work_per_client` have no better direction (more effects is more success, or more
//! duplicates; `success_rate` and `duplicates_per_intent` say which).

use super::{Measure, Sample, Totals, cost};
use crate::model::price::{Bill, BillTotals};
use crate::time::TICKS_PER_SECOND;

/// Which way a figure is better.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Better {
    Higher,
    Lower,
}

impl Better {
    pub fn name(self) -> &'static str {
        match self {
            Better::Higher => "higher",
            Better::Lower => "lower",
        }
    }

    /// The objective's word for going this way.
    pub fn verb(self) -> &'static str {
        match self {
            Better::Higher => "maximise",
            Better::Lower => "minimise",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Figure {
    Attempts,
    Duplicates,
    Success,
    Ghost,
    TaskSuccess,
    Calls,
    MeanCompletion,
    CompletionP99,
    Makespan,
    Cost,
    CostPerSuccess,
    RetryCost,
    WastedCost,
}

impl Figure {
    pub const ALL: [Figure; 13] = [
        Figure::Attempts,
        Figure::Duplicates,
        Figure::Success,
        Figure::Ghost,
        Figure::TaskSuccess,
        Figure::Calls,
        Figure::MeanCompletion,
        Figure::CompletionP99,
        Figure::Makespan,
        Figure::Cost,
        Figure::CostPerSuccess,
        Figure::RetryCost,
        Figure::WastedCost,
    ];

    /// The column of `summary.csv` (and of `runs.csv`) that holds it.
    pub fn column(self) -> &'static str {
        match self {
            Figure::Attempts => "attempts_per_intent",
            Figure::Duplicates => "duplicates_per_intent",
            Figure::Success => "success_rate",
            Figure::Ghost => "ghost_rate",
            Figure::TaskSuccess => "task_success_rate",
            Figure::Calls => "calls_per_task",
            Figure::MeanCompletion => "mean_completion_s",
            Figure::CompletionP99 => "completion_p99_s",
            Figure::Makespan => "makespan_s",
            Figure::Cost => "cost_per_task",
            Figure::CostPerSuccess => "cost_per_successful_task",
            Figure::RetryCost => "retry_cost_per_task",
            Figure::WastedCost => "wasted_cost_per_task",
        }
    }

    /// The column of `summary.csv` that holds half its 95 % interval.
    pub fn interval_column(self) -> &'static str {
        match self {
            Figure::Attempts => "attempts_ci95",
            Figure::Duplicates => "duplicates_ci95",
            Figure::Success => "success_ci95",
            Figure::Ghost => "ghost_ci95",
            Figure::TaskSuccess => "task_success_ci95",
            Figure::Calls => "calls_per_task_ci95",
            Figure::MeanCompletion => "mean_completion_s_ci95",
            Figure::CompletionP99 => "completion_p99_s_ci95",
            Figure::Makespan => "makespan_ci95",
            Figure::Cost => "cost_per_task_ci95",
            Figure::CostPerSuccess => "cost_per_successful_task_ci95",
            Figure::RetryCost => "retry_cost_per_task_ci95",
            Figure::WastedCost => "wasted_cost_per_task_ci95",
        }
    }

    pub fn better(self) -> Better {
        match self {
            Figure::Success | Figure::TaskSuccess => Better::Higher,
            _ => Better::Lower,
        }
    }

    /// The figure named `column`, if it is one.
    pub fn named(column: &str) -> Option<Figure> {
        Figure::ALL.into_iter().find(|f| f.column() == column)
    }

    /// Whether its interval is across intents when there is one replication (the per-intent
    /// means); the others' are across replications only, so one replication gives none.
    pub fn per_intent(self) -> bool {
        matches!(
            self,
            Figure::Attempts
                | Figure::Duplicates
                | Figure::Success
                | Figure::Ghost
                | Figure::TaskSuccess
                | Figure::MeanCompletion
        )
    }

    /// Its value in one replication's totals; `None` where that run does not measure it (a
    /// cost where nothing is priced, a cost per success with no success).
    pub fn of_run(self, totals: &Totals) -> Option<f64> {
        let tasks = totals.tasks.max(1) as f64;
        let seconds = |ticks: f64| ticks / TICKS_PER_SECOND as f64;
        let bill = || Some(cost::bill(totals)).filter(|b| *b != Bill::default());
        let value = match self {
            Figure::Attempts => totals.get(Measure::Attempts).mean(),
            Figure::Duplicates => totals.get(Measure::Duplicates).mean(),
            Figure::Success => totals.get(Measure::Success).mean(),
            Figure::Ghost => totals.get(Measure::Ghost).mean(),
            Figure::TaskSuccess => totals.tasks_succeeded as f64 / tasks,
            Figure::Calls => totals.tools.iter().map(|t| t.calls).sum::<u64>() as f64 / tasks,
            Figure::MeanCompletion => seconds(totals.get(Measure::Completion).mean()),
            Figure::CompletionP99 => seconds(totals.completion.at(0.99).0 as f64),
            Figure::Makespan => seconds(totals.last_success.0 as f64),
            Figure::Cost => BillTotals::dollars(bill()?.cost) / tasks,
            Figure::CostPerSuccess => match totals.tasks_succeeded {
                0 => return None,
                n => BillTotals::dollars(bill()?.cost) / n as f64,
            },
            Figure::RetryCost => BillTotals::dollars(bill()?.retries) / tasks,
            Figure::WastedCost => BillTotals::dollars(bill()?.wasted) / tasks,
        };
        Some(value)
    }

    /// Whether it is money, written to the nanodollar rather than at the fixed precision.
    pub fn is_money(self) -> bool {
        matches!(
            self,
            Figure::Cost | Figure::CostPerSuccess | Figure::RetryCost | Figure::WastedCost
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_has_its_own_columns() {
        let mut names: Vec<&str> = Figure::ALL
            .iter()
            .flat_map(|f| [f.column(), f.interval_column()])
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 2 * Figure::ALL.len());
        assert!(
            Figure::ALL
                .iter()
                .all(|&f| Figure::named(f.column()) == Some(f))
        );
    }
}
