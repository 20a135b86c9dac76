//! `tools.csv`: one row per sweep point × configuration × tool that it calls, summed over
//! replications — where the calls went and what became of them. Columns are documented in
//! `out/README.md`.

use super::column::{Column, Kind::*, col};
use crate::run::PointResult;
use crate::sweep::Point;

/// The columns after the parameter columns: the counts, then one per attempt outcome, in the
/// order of [`Outcome::NAMES`](crate::metrics::Outcome::NAMES) (a test holds the two in step).
pub const COLUMNS: [Column; 21] = [
    col("experiment", Text),
    col("policy", Text),
    col("tool", Text),
    col("intents", Count),
    col("calls", Count),
    col("short_circuited", Count),
    col("effects", Count),
    col("duplicates", Count),
    col("successes", Count),
    col("calls_while_down", Count),
    col("outcome_ok", Count),
    col("outcome_lost_request", Count),
    col("outcome_lost_reply", Count),
    col("outcome_5xx", Count),
    col("outcome_429", Count),
    col("outcome_403", Count),
    col("outcome_4xx", Count),
    col("outcome_conflict", Count),
    col("outcome_timeout", Count),
    col("outcome_cancelled", Count),
    col("outcome_unanswered", Count),
];

/// The rows of one point: each configuration's tools in the order the config lists them.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        for (t, tool) in exp.tools.iter().enumerate() {
            if !exp.calls_of(policy).contains(&t) {
                continue;
            }
            let sum = result.tool_totals(t);
            let counts = [
                sum.intents,
                sum.calls,
                sum.short_circuited,
                sum.effects,
                sum.duplicates,
                sum.successes,
                sum.calls_while_down,
            ];
            let row = point
                .params
                .iter()
                .map(ToString::to_string)
                .chain([exp.name.clone(), policy.name.clone(), tool.name.clone()])
                .chain(counts.iter().chain(&sum.outcomes).map(u64::to_string))
                .collect();
            rows.push(row);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Outcome;

    #[test]
    fn one_outcome_column_per_outcome_in_order() {
        let outcomes: Vec<String> = COLUMNS[10..].iter().map(|c| c.name.to_string()).collect();
        let names: Vec<String> = Outcome::NAMES
            .iter()
            .map(|n| format!("outcome_{n}"))
            .collect();
        assert_eq!(outcomes, names);
    }
}
