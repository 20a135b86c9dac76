//! `summary.csv`: one row per sweep point × configuration, the point's parameters first. The
//! file is one table: each column with its type and how its value is read from a row, so a
//! name can never be paired with another column's value. Columns are documented in
//! `out/README.md` (a test holds the two together).

use super::Export;
use super::column::{Column, Kind::*, col, mean_seconds, seconds};
use super::{dollars, finite, fixed};
use crate::experiment::Experiment;
use crate::metrics::recovery::{Recoveries, Recovery};
use crate::metrics::{Costs, Estimate, Figure, Measure, Moments, Sample, StopReason, ToolTotals};
use crate::policy::Policy;
use crate::run::{PointResult, PolicyResult};
use crate::sweep::Point;
use crate::theory::ClosedForms;
use crate::verdict::{self, Verdict};

/// What `agrees` says: theory inside the 95 % interval of every compared figure, not, too few
/// observations for an interval, or no closed form.
const AGREES: [&str; 4] = ["yes", "no", "too_few", "none"];
/// What `recovered` says: every replication's goodput came back after the trigger, some did,
/// none did, or there is no trigger.
const RECOVERED: [&str; 4] = ["all", "some", "no", "none"];
/// The keys a task's call may carry: every scope but `forward`, which has nothing to forward
/// there.
const KEYS: [&str; 4] = ["none", "per_intent", "per_attempt", "derived"];

/// What `verdict` says (see [`crate::verdict`]), or that no closed form applies.
pub(super) const VERDICTS: [&str; 5] = ["agrees", "borderline", "disagrees", "too_few", "none"];

/// One configuration at one point, as its row reads it.
pub struct Row<'a> {
    /// The comparisons with theory the whole table makes, which its verdicts answer for.
    comparisons: usize,
    exp: &'a Experiment,
    policy: &'a Policy,
    result: &'a PolicyResult,
    estimates: [Estimate; Measure::ALL.len()],
    /// The Student t of each figure against theory, once per row; `None` without theory.
    stats: Option<Vec<verdict::Statistic>>,
    /// Every tool together: the task view.
    tools: ToolTotals,
}

impl Row<'_> {
    fn est(&self, m: Measure) -> Estimate {
        self.estimates[m as usize]
    }

    fn mean(&self, m: Measure) -> String {
        fixed(self.est(m).mean)
    }

    /// A 95 % half-width, or empty where one replication gives no interval.
    fn half_width(&self, m: Measure) -> String {
        finite(self.est(m).half_width)
    }

    /// A closed form, or empty where none applies.
    fn theory(&self, f: fn(&ClosedForms) -> f64) -> String {
        self.result
            .theory
            .as_ref()
            .map_or(String::new(), |t| fixed(f(t)))
    }

    /// The Student t the verdict reads for measure `m`, or empty without closed forms.
    fn z(&self, m: Measure) -> String {
        let t = self.stats.iter().flatten().find(|s| s.measure == m);
        t.map_or(String::new(), |s| finite(s.t))
    }

    fn stopped(&self, reason: StopReason) -> String {
        self.result.totals.stopped(reason).to_string()
    }

    /// Half the 95 % interval of a figure (see [`PolicyResult::figure`]), or empty where it has
    /// none.
    fn figure_ci(&self, f: Figure) -> String {
        finite(self.result.figure(f).half_width)
    }

    /// A measure of recovery from the trigger, or empty where there is none.
    fn recovery(&self, f: fn(&Recovery) -> String) -> String {
        self.result.recovery.as_ref().map_or(String::new(), f)
    }

    /// A measure of the replications' recoveries, or empty where there is no trigger.
    fn recoveries(&self, f: fn(&Recoveries) -> String) -> String {
        self.result.recoveries.as_ref().map_or(String::new(), f)
    }

    fn per_task(&self, count: u64) -> String {
        fixed(count as f64 / self.result.totals.tasks.max(1) as f64)
    }

    /// A cost's mean over the replications, in dollars to the nanodollar; empty where nothing
    /// is priced, or (per successful task) where a replication had no success.
    fn money(&self, of: fn(&Costs) -> &Moments) -> String {
        let costs = &self.result.costs;
        match costs.billed {
            true => dollars(of(costs).mean()),
            false => String::new(),
        }
    }

    /// Half the 95 % interval of a cost across replications; empty with one, or where nothing
    /// is priced.
    fn money_ci(&self, of: fn(&Costs) -> &Moments) -> String {
        let costs = &self.result.costs;
        match costs.billed {
            true => dollars(Estimate::from_sample(of(costs)).half_width),
            false => String::new(),
        }
    }

    /// Tokens a task read or generated, where anything is priced.
    fn tokens(&self, of: fn(&Costs) -> &Moments) -> String {
        let costs = &self.result.costs;
        match costs.billed {
            true => finite(of(costs).mean()),
            false => String::new(),
        }
    }
}

/// A column and how a row gives its value: one entry of the file's table.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

/// The columns after the parameter columns, each with its value.
pub const FIELDS: [Field; 92] = [
    Field(col("experiment", Text), |r| r.exp.name.clone()),
    Field(col("policy", Text), |r| r.policy.name.clone()),
    Field(col("seed", Count), |r| r.exp.seed.to_string()),
    Field(col("replications", Count), |r| {
        r.exp.replications.to_string()
    }),
    Field(col("tasks", Count), |r| r.result.totals.tasks.to_string()),
    Field(col("intents", Count), |r| {
        r.result.totals.intents().to_string()
    }),
    Field(col("attempts_per_intent", Number), |r| {
        r.mean(Measure::Attempts)
    }),
    Field(col("attempts_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Attempts)
    }),
    Field(col("effects_per_intent", Number), |r| {
        r.mean(Measure::Effects)
    }),
    Field(col("duplicates_per_intent", Number), |r| {
        r.mean(Measure::Duplicates)
    }),
    Field(col("duplicates_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Duplicates)
    }),
    Field(col("success_rate", Number), |r| r.mean(Measure::Success)),
    Field(col("ghost_rate", Number), |r| r.mean(Measure::Ghost)),
    Field(col("theory_attempts_per_intent", NumberOrEmpty), |r| {
        r.theory(|t| t.attempts)
    }),
    Field(col("theory_duplicates_per_intent", NumberOrEmpty), |r| {
        r.theory(|t| t.duplicates)
    }),
    Field(col("agrees", Word(&AGREES)), |r| {
        let i = match verdict::of(r.result, r.comparisons) {
            None => 3,
            Some(Verdict::TooFew) => 2,
            Some(Verdict::Agrees) => 0,
            Some(_) => 1,
        };
        AGREES[i].to_string()
    }),
    Field(col("attempts_z", NumberOrEmpty), |r| r.z(Measure::Attempts)),
    Field(col("duplicates_z", NumberOrEmpty), |r| {
        r.z(Measure::Duplicates)
    }),
    Field(col("effects_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Effects)
    }),
    Field(col("theory_effects_per_intent", NumberOrEmpty), |r| {
        r.theory(|t| t.effects)
    }),
    Field(col("success_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Success)
    }),
    Field(col("theory_success_rate", NumberOrEmpty), |r| {
        r.theory(|t| t.success)
    }),
    Field(col("ghost_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Ghost)
    }),
    Field(col("theory_ghost_rate", NumberOrEmpty), |r| {
        r.theory(|t| t.ghost)
    }),
    Field(col("mean_completion_ticks", Number), |r| {
        r.mean(Measure::Completion)
    }),
    Field(col("tasks_succeeded", Count), |r| {
        r.result.totals.tasks_succeeded.to_string()
    }),
    Field(col("max_attempts", CountOrEmpty), |r| {
        let cap = r.policy.rule.retry.max_attempts.cap();
        cap.map_or(String::new(), |n| n.to_string())
    }),
    Field(col("idempotency_key", Word(&KEYS)), |r| {
        r.policy.rule.key.name().to_string()
    }),
    Field(col("stopped_attempt_limit", Count), |r| {
        r.stopped(StopReason::AttemptLimit)
    }),
    Field(col("stopped_not_retryable", Count), |r| {
        r.stopped(StopReason::NotRetryable)
    }),
    Field(col("hung", Count), |r| r.stopped(StopReason::Hung)),
    Field(col("theory_a", NumberOrEmpty), |r| r.theory(|t| t.a)),
    Field(col("theory_b", NumberOrEmpty), |r| r.theory(|t| t.b)),
    Field(col("timeouts", Count), |r| {
        r.result.totals.timeouts.to_string()
    }),
    Field(col("stopped_deadline_exceeded", Count), |r| {
        r.stopped(StopReason::DeadlineExceeded)
    }),
    Field(col("stopped_dispatch_budget_exhausted", Count), |r| {
        r.stopped(StopReason::DispatchBudgetExhausted)
    }),
    Field(col("stopped_cancelled", Count), |r| {
        r.stopped(StopReason::Cancelled)
    }),
    Field(col("stopped_needs_reconciliation", Count), |r| {
        r.stopped(StopReason::NeedsReconciliation)
    }),
    Field(col("stopped_breaker_open", Count), |r| {
        r.stopped(StopReason::BreakerOpen)
    }),
    Field(col("short_circuited", Count), |r| {
        r.result.totals.short_circuited.to_string()
    }),
    Field(col("stopped_retry_budget_exhausted", Count), |r| {
        r.stopped(StopReason::RetryBudgetExhausted)
    }),
    Field(col("stopped_permanent_failure", Count), |r| {
        r.stopped(StopReason::PermanentFailure)
    }),
    Field(col("stopped_budget_too_small", Count), |r| {
        r.stopped(StopReason::BudgetTooSmall)
    }),
    Field(col("lookups", Count), |r| {
        r.result.totals.lookups.to_string()
    }),
    Field(col("hedges", Count), |r| r.result.totals.hedges.to_string()),
    Field(col("completion_p50_ticks", Count), |r| {
        r.result.completion_p50.0.to_string()
    }),
    Field(col("completion_p99_ticks", Count), |r| {
        r.result.completion_p99.0.to_string()
    }),
    Field(col("stopped_idempotency_conflict", Count), |r| {
        r.stopped(StopReason::IdempotencyConflict)
    }),
    Field(col("task_success_rate", Number), |r| {
        r.per_task(r.result.totals.tasks_succeeded)
    }),
    Field(col("calls_per_task", Number), |r| r.per_task(r.tools.calls)),
    Field(col("duplicates_per_task", Number), |r| {
        r.per_task(r.tools.duplicates)
    }),
    Field(col("calls_while_down", Count), |r| {
        r.tools.calls_while_down.to_string()
    }),
    Field(col("mean_completion_s", Number), |r| {
        mean_seconds(r.est(Measure::Completion).mean)
    }),
    Field(col("completion_p50_s", Number), |r| {
        seconds(r.result.completion_p50.0)
    }),
    Field(col("completion_p99_s", Number), |r| {
        seconds(r.result.completion_p99.0)
    }),
    Field(col("stopped_concurrency_limited", Count), |r| {
        r.stopped(StopReason::ConcurrencyLimited)
    }),
    Field(col("goodput_before", NumberOrEmpty), |r| {
        r.recovery(|v| fixed(v.before))
    }),
    Field(col("goodput_after", NumberOrEmpty), |r| {
        r.recovery(|v| fixed(v.after))
    }),
    Field(col("recovered", Word(&RECOVERED)), |r| {
        let word = match &r.result.recoveries {
            None => "none",
            Some(v) if v.recovered() == v.replications => "all",
            Some(v) if v.recovered() > 0 => "some",
            Some(_) => "no",
        };
        word.into()
    }),
    Field(col("time_to_recover_s", NumberOrEmpty), |r| {
        r.recoveries(|v| v.median().map_or(String::new(), |t| seconds(t.0)))
    }),
    Field(col("peak_queue", NumberOrEmpty), |r| {
        r.result.peak_queue.map_or(String::new(), fixed)
    }),
    Field(col("makespan_s", Number), |r| {
        fixed(r.result.makespan.mean())
    }),
    Field(col("makespan_ci95", NumberOrEmpty), |r| {
        finite(Estimate::from_sample(&r.result.makespan).half_width)
    }),
    Field(col("work_per_client", Number), |r| r.mean(Measure::Writes)),
    Field(col("work_ci95", NumberOrEmpty), |r| {
        r.half_width(Measure::Writes)
    }),
    Field(col("recovered_share", NumberOrEmpty), |r| {
        r.recoveries(|v| fixed(v.share().0))
    }),
    Field(col("recovered_share_low", NumberOrEmpty), |r| {
        r.recoveries(|v| fixed(v.share().1.0))
    }),
    Field(col("recovered_share_high", NumberOrEmpty), |r| {
        r.recoveries(|v| fixed(v.share().1.1))
    }),
    Field(col("time_to_recover_s_low", NumberOrEmpty), |r| {
        r.recoveries(|v| {
            v.median_interval()
                .map_or(String::new(), |(lo, _)| seconds(lo.0))
        })
    }),
    Field(col("time_to_recover_s_high", NumberOrEmpty), |r| {
        r.recoveries(|v| {
            v.median_interval()
                .map_or(String::new(), |(_, hi)| seconds(hi.0))
        })
    }),
    Field(col("effects_z", NumberOrEmpty), |r| r.z(Measure::Effects)),
    Field(col("success_z", NumberOrEmpty), |r| r.z(Measure::Success)),
    Field(col("ghost_z", NumberOrEmpty), |r| r.z(Measure::Ghost)),
    Field(col("t_df", CountOrEmpty), |r| {
        r.result
            .theory
            .map_or(String::new(), |_| r.result.degrees_of_freedom().to_string())
    }),
    Field(col("verdict", Word(&VERDICTS)), |r| {
        verdict::of(r.result, r.comparisons)
            .map_or("none", Verdict::name)
            .to_string()
    }),
    Field(col("cost_per_task", NumberOrEmpty), |r| {
        r.money(|c| &c.per_task)
    }),
    Field(col("cost_per_task_ci95", NumberOrEmpty), |r| {
        r.money_ci(|c| &c.per_task)
    }),
    Field(col("cost_per_successful_task", NumberOrEmpty), |r| {
        r.money(|c| &c.per_success)
    }),
    Field(col("cost_per_successful_task_ci95", NumberOrEmpty), |r| {
        r.money_ci(|c| &c.per_success)
    }),
    Field(col("retry_cost_per_task", NumberOrEmpty), |r| {
        r.money(|c| &c.retries)
    }),
    Field(col("retry_cost_per_task_ci95", NumberOrEmpty), |r| {
        r.money_ci(|c| &c.retries)
    }),
    Field(col("wasted_cost_per_task", NumberOrEmpty), |r| {
        r.money(|c| &c.wasted)
    }),
    Field(col("wasted_cost_per_task_ci95", NumberOrEmpty), |r| {
        r.money_ci(|c| &c.wasted)
    }),
    Field(col("input_tokens_per_task", NumberOrEmpty), |r| {
        r.tokens(|c| &c.input_tokens)
    }),
    Field(col("output_tokens_per_task", NumberOrEmpty), |r| {
        r.tokens(|c| &c.output_tokens)
    }),
    Field(col("theory_cost_per_task", NumberOrEmpty), |r| {
        (r.result.cost_theory).map_or(String::new(), |t| dollars(t.cost_per_task))
    }),
    Field(col("theory_mean_completion_s", NumberOrEmpty), |r| {
        (r.result.cost_theory)
            .and_then(|t| t.completion)
            .map_or(String::new(), fixed)
    }),
    Field(col("cost_agrees", Word(&AGREES)), |r| {
        r.result.cost_agrees().to_string()
    }),
    Field(col("task_success_ci95", NumberOrEmpty), |r| {
        r.figure_ci(Figure::TaskSuccess)
    }),
    Field(col("calls_per_task_ci95", NumberOrEmpty), |r| {
        r.figure_ci(Figure::Calls)
    }),
    Field(col("mean_completion_s_ci95", NumberOrEmpty), |r| {
        r.figure_ci(Figure::MeanCompletion)
    }),
    Field(col("completion_p99_s_ci95", NumberOrEmpty), |r| {
        r.figure_ci(Figure::CompletionP99)
    }),
];

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    FIELDS.iter().map(|f| f.0).collect()
}

/// The rows of one point, one per configuration, parameters first, in a table that makes
/// `comparisons` with theory.
pub fn rows(point: &Point, result: &PointResult, comparisons: usize) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    exp.policies
        .iter()
        .zip(&result.policies)
        .map(|(policy, result)| {
            let row = Row {
                comparisons,
                exp,
                policy,
                result,
                estimates: Measure::ALL.map(|m| result.estimate(m)),
                stats: verdict::statistics(result),
                tools: result.all_tools(),
            };
            let params = point.params.iter().map(ToString::to_string);
            params.chain(FIELDS.iter().map(|f| (f.1)(&row))).collect()
        })
        .collect()
}

/// `summary.csv` as the output folder writes it, for a sweep whose table makes `comparisons`
/// with theory.
pub struct Summary {
    pub comparisons: usize,
}

impl Export for Summary {
    fn file(&self) -> &'static str {
        "summary.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result, self.comparisons)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::KeyScope;

    #[test]
    fn the_key_words_are_the_scopes_names() {
        // A forwarded key never stands on a task's call (validation refuses it there), so
        // summary.csv, whose key is the task's, never says "forward".
        let names = KeyScope::ALL.map(KeyScope::name);
        let task_keys: Vec<&str> = names.into_iter().filter(|&n| n != "forward").collect();
        assert_eq!(KEYS[..], task_keys[..]);
        assert!(names.contains(&"forward"));
        assert_eq!(VERDICTS[..4], Verdict::NAMES);
    }
}
