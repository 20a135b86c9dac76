//! `summary.csv`: one row per sweep point × configuration, the point's parameters first.
//! Columns are documented in `out/README.md`.

use super::fixed;
use crate::metrics::{Measure, StopReason};
use crate::run::PointResult;
use crate::sweep::Point;
use crate::theory::ClosedForms;

/// The columns after the parameter columns.
pub const COLUMNS: [&str; 52] = [
    "experiment",
    "policy",
    "seed",
    "replications",
    "tasks",
    "intents",
    "attempts_per_intent",
    "attempts_ci95",
    "effects_per_intent",
    "duplicates_per_intent",
    "duplicates_ci95",
    "success_rate",
    "ghost_rate",
    "theory_attempts_per_intent",
    "theory_duplicates_per_intent",
    "agrees",
    "attempts_z",
    "duplicates_z",
    "effects_ci95",
    "theory_effects_per_intent",
    "success_ci95",
    "theory_success_rate",
    "ghost_ci95",
    "theory_ghost_rate",
    "mean_completion_ticks",
    "tasks_succeeded",
    "max_attempts",
    "idempotency_key",
    "stopped_attempt_limit",
    "stopped_not_retryable",
    "hung",
    "theory_a",
    "theory_b",
    "timeouts",
    "stopped_deadline_exceeded",
    "stopped_dispatch_budget_exhausted",
    "stopped_cancelled",
    "stopped_needs_reconciliation",
    "stopped_breaker_open",
    "short_circuited",
    "stopped_retry_budget_exhausted",
    "stopped_permanent_failure",
    "stopped_budget_too_small",
    "lookups",
    "hedges",
    "completion_p50_ticks",
    "completion_p99_ticks",
    "stopped_idempotency_conflict",
    "task_success_rate",
    "calls_per_task",
    "duplicates_per_task",
    "calls_while_down",
];

/// The rows of one point, one per configuration, parameters first.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    exp.policies
        .iter()
        .zip(&result.policies)
        .map(|(policy, result)| {
            let estimates = Measure::ALL.map(|m| result.estimate(m));
            let est = |m: Measure| estimates[m as usize];
            let theory = |f: fn(&ClosedForms) -> f64| {
                result
                    .theory
                    .as_ref()
                    .map_or(String::new(), |t| fixed(f(t)))
            };
            let z = |m, f: fn(&ClosedForms) -> f64| {
                result
                    .theory
                    .as_ref()
                    .map_or(String::new(), |t| fixed(est(m).z(f(t))))
            };
            let stopped = |reason| result.totals.stopped(reason).to_string();
            // The task view: every call of a task together.
            let tools = result.all_tools();
            let tasks = result.totals.tasks;
            let per_task = |count: u64| count as f64 / tasks.max(1) as f64;
            let row: [String; COLUMNS.len()] = [
                exp.name.clone(),
                policy.name.clone(),
                exp.seed.to_string(),
                exp.replications.to_string(),
                result.totals.tasks.to_string(),
                result.totals.intents().to_string(),
                fixed(est(Measure::Attempts).mean),
                fixed(est(Measure::Attempts).half_width),
                fixed(est(Measure::Effects).mean),
                fixed(est(Measure::Duplicates).mean),
                fixed(est(Measure::Duplicates).half_width),
                fixed(est(Measure::Success).mean),
                fixed(est(Measure::Ghost).mean),
                theory(|t| t.attempts),
                theory(|t| t.duplicates),
                result.agrees().map_or(String::new(), |a| a.to_string()),
                z(Measure::Attempts, |t| t.attempts),
                z(Measure::Duplicates, |t| t.duplicates),
                fixed(est(Measure::Effects).half_width),
                theory(|t| t.effects),
                fixed(est(Measure::Success).half_width),
                theory(|t| t.success),
                fixed(est(Measure::Ghost).half_width),
                theory(|t| t.ghost),
                fixed(est(Measure::Completion).mean),
                result.totals.tasks_succeeded.to_string(),
                policy
                    .retry
                    .max_attempts
                    .cap()
                    .map_or("unlimited".into(), |n| n.to_string()),
                policy.key.name().to_string(),
                stopped(StopReason::AttemptLimit),
                stopped(StopReason::NotRetryable),
                stopped(StopReason::Hung),
                theory(|t| t.a),
                theory(|t| t.b),
                result.totals.timeouts.to_string(),
                stopped(StopReason::DeadlineExceeded),
                stopped(StopReason::DispatchBudgetExhausted),
                stopped(StopReason::Cancelled),
                stopped(StopReason::NeedsReconciliation),
                stopped(StopReason::BreakerOpen),
                result.totals.short_circuited.to_string(),
                stopped(StopReason::RetryBudgetExhausted),
                stopped(StopReason::PermanentFailure),
                stopped(StopReason::BudgetTooSmall),
                result.totals.lookups.to_string(),
                result.totals.hedges.to_string(),
                result.completion_p50.0.to_string(),
                result.completion_p99.0.to_string(),
                stopped(StopReason::IdempotencyConflict),
                fixed(per_task(result.totals.tasks_succeeded)),
                fixed(per_task(tools.calls)),
                fixed(per_task(tools.duplicates)),
                tools.calls_while_down.to_string(),
            ];
            point
                .params
                .iter()
                .map(ToString::to_string)
                .chain(row)
                .collect()
        })
        .collect()
}
