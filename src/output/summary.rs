//! `summary.csv`: one row per sweep point × configuration, the point's parameters first.
//! Columns are documented in `out/README.md`.

use super::column::{Column, Kind::*, col, mean_seconds, seconds};
use super::fixed;
use crate::metrics::{Measure, StopReason};
use crate::run::PointResult;
use crate::sweep::Point;
use crate::theory::ClosedForms;

/// What `agrees` says: both theory values inside their intervals, not, or no closed form.
const AGREES: [&str; 3] = ["yes", "no", "none"];
const KEYS: [&str; 3] = ["none", "per_intent", "per_attempt"];

/// The columns after the parameter columns.
pub const COLUMNS: [Column; 56] = [
    col("experiment", Text),
    col("policy", Text),
    col("seed", Count),
    col("replications", Count),
    col("tasks", Count),
    col("intents", Count),
    col("attempts_per_intent", Number),
    col("attempts_ci95", Number),
    col("effects_per_intent", Number),
    col("duplicates_per_intent", Number),
    col("duplicates_ci95", Number),
    col("success_rate", Number),
    col("ghost_rate", Number),
    col("theory_attempts_per_intent", NumberOrEmpty),
    col("theory_duplicates_per_intent", NumberOrEmpty),
    col("agrees", Word(&AGREES)),
    col("attempts_z", NumberOrEmpty),
    col("duplicates_z", NumberOrEmpty),
    col("effects_ci95", Number),
    col("theory_effects_per_intent", NumberOrEmpty),
    col("success_ci95", Number),
    col("theory_success_rate", NumberOrEmpty),
    col("ghost_ci95", Number),
    col("theory_ghost_rate", NumberOrEmpty),
    col("mean_completion_ticks", Number),
    col("tasks_succeeded", Count),
    col("max_attempts", CountOrEmpty),
    col("idempotency_key", Word(&KEYS)),
    col("stopped_attempt_limit", Count),
    col("stopped_not_retryable", Count),
    col("hung", Count),
    col("theory_a", NumberOrEmpty),
    col("theory_b", NumberOrEmpty),
    col("timeouts", Count),
    col("stopped_deadline_exceeded", Count),
    col("stopped_dispatch_budget_exhausted", Count),
    col("stopped_cancelled", Count),
    col("stopped_needs_reconciliation", Count),
    col("stopped_breaker_open", Count),
    col("short_circuited", Count),
    col("stopped_retry_budget_exhausted", Count),
    col("stopped_permanent_failure", Count),
    col("stopped_budget_too_small", Count),
    col("lookups", Count),
    col("hedges", Count),
    col("completion_p50_ticks", Count),
    col("completion_p99_ticks", Count),
    col("stopped_idempotency_conflict", Count),
    col("task_success_rate", Number),
    col("calls_per_task", Number),
    col("duplicates_per_task", Number),
    col("calls_while_down", Count),
    col("mean_completion_s", Number),
    col("completion_p50_s", Number),
    col("completion_p99_s", Number),
    col("stopped_concurrency_limited", Count),
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
                AGREES[match result.agrees() {
                    Some(true) => 0,
                    Some(false) => 1,
                    None => 2,
                }]
                .to_string(),
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
                    .map_or(String::new(), |n| n.to_string()),
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
                mean_seconds(est(Measure::Completion).mean),
                seconds(result.completion_p50.0),
                seconds(result.completion_p99.0),
                stopped(StopReason::ConcurrencyLimited),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::KeyScope;

    #[test]
    fn the_key_words_are_the_scopes_names() {
        assert_eq!(KEYS, KeyScope::ALL.map(KeyScope::name));
    }
}
