//! `tools.csv`: one row per sweep point × configuration × tool that it calls, summed over
//! replications — where the calls went and what became of them. One table: each column with
//! its type and how a row gives its value. Columns are documented in `out/README.md`.

use super::Export;
use super::column::{Column, Kind::*, col};
use crate::metrics::{Outcome, ToolTotals};
use crate::run::PointResult;
use crate::sweep::Point;

/// One configuration's calls to one tool, as its row reads them.
pub struct Row<'a> {
    experiment: &'a str,
    policy: &'a str,
    tool: &'a str,
    sum: ToolTotals,
}

impl Row<'_> {
    /// Attempts that ended as the outcome named `name` (one of [`Outcome::NAMES`]).
    fn outcome(&self, name: &str) -> String {
        let i = Outcome::NAMES.iter().position(|n| *n == name);
        self.sum.outcomes[i.expect("an outcome's name")].to_string()
    }
}

/// A column and how a row gives its value.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

/// The columns after the parameter columns: the counts, then one per attempt outcome.
pub const FIELDS: [Field; 26] = [
    Field(col("experiment", Text), |r| r.experiment.to_string()),
    Field(col("policy", Text), |r| r.policy.to_string()),
    Field(col("tool", Text), |r| r.tool.to_string()),
    Field(col("intents", Count), |r| r.sum.intents.to_string()),
    Field(col("calls", Count), |r| r.sum.calls.to_string()),
    Field(col("short_circuited", Count), |r| {
        r.sum.short_circuited.to_string()
    }),
    Field(col("effects", Count), |r| r.sum.effects.to_string()),
    Field(col("duplicates", Count), |r| r.sum.duplicates.to_string()),
    Field(col("successes", Count), |r| r.sum.successes.to_string()),
    Field(col("calls_while_down", Count), |r| {
        r.sum.calls_while_down.to_string()
    }),
    Field(col("outcome_ok", Count), |r| r.outcome("ok")),
    Field(col("outcome_lost_request", Count), |r| {
        r.outcome("lost_request")
    }),
    Field(col("outcome_lost_reply", Count), |r| {
        r.outcome("lost_reply")
    }),
    Field(col("outcome_5xx", Count), |r| r.outcome("5xx")),
    Field(col("outcome_429", Count), |r| r.outcome("429")),
    Field(col("outcome_403", Count), |r| r.outcome("403")),
    Field(col("outcome_4xx", Count), |r| r.outcome("4xx")),
    Field(col("outcome_conflict", Count), |r| r.outcome("conflict")),
    Field(col("outcome_timeout", Count), |r| r.outcome("timeout")),
    Field(col("outcome_cancelled", Count), |r| r.outcome("cancelled")),
    Field(col("outcome_unanswered", Count), |r| {
        r.outcome("unanswered")
    }),
    Field(col("outcome_503", Count), |r| r.outcome("503")),
    Field(col("outcome_conflict_version", Count), |r| {
        r.outcome("conflict_version")
    }),
    Field(col("outcome_connect", Count), |r| r.outcome("connect")),
    Field(col("reads", Count), |r| r.sum.reads.to_string()),
    Field(col("writes", Count), |r| r.sum.writes.to_string()),
];

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    FIELDS.iter().map(|f| f.0).collect()
}

/// The rows of one point: each configuration's tools in the order the config lists them.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        for (t, tool) in exp.tools.iter().enumerate() {
            if !exp.calls_of(policy).contains(&t) {
                continue;
            }
            let row = Row {
                experiment: &exp.name,
                policy: &policy.name,
                tool: &tool.name,
                sum: result.tool_totals(t),
            };
            let params = point.params.iter().map(ToString::to_string);
            rows.push(params.chain(FIELDS.iter().map(|f| (f.1)(&row))).collect());
        }
    }
    rows
}

/// `tools.csv` as the output folder writes it.
pub struct Tools;

impl Export for Tools {
    fn file(&self) -> &'static str {
        "tools.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outcome_column_per_outcome_in_order() {
        let outcomes: Vec<String> = FIELDS[10..10 + Outcome::NAMES.len()]
            .iter()
            .map(|f| f.0.name.to_string())
            .collect();
        let names: Vec<String> = Outcome::NAMES
            .iter()
            .map(|n| format!("outcome_{n}"))
            .collect();
        assert_eq!(outcomes, names);
    }
}
