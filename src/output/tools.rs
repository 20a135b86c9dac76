//! `tools.csv`: one row per sweep point × configuration × tool that it reaches, summed over
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

/// A column and how a row gives its value.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

/// The columns after the parameter columns: the counts, then one per attempt outcome (from
/// [`Outcome::COLUMNS`], so a new outcome has its column), then [`TAIL`].
pub const HEAD: [Field; 10] = [
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
];

/// The columns after the outcomes'.
pub const TAIL: [Field; 2] = [
    Field(col("reads", Count), |r| r.sum.reads.to_string()),
    Field(col("writes", Count), |r| r.sum.writes.to_string()),
];

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    let outcomes = Outcome::COLUMNS.map(|name| col(name, Count));
    (HEAD.iter().map(|f| f.0))
        .chain(outcomes)
        .chain(TAIL.iter().map(|f| f.0))
        .collect()
}

/// The rows of one point: each configuration's tools in the order the config lists them.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        let reached = exp.reached_by(policy);
        for (t, tool) in exp.tools.iter().enumerate() {
            if !reached[t] {
                continue;
            }
            let row = Row {
                experiment: &exp.name,
                policy: &policy.name,
                tool: &tool.name,
                sum: result.tool_totals(t),
            };
            let params = point.params.iter().map(ToString::to_string);
            let outcomes = row.sum.outcomes.iter().map(u64::to_string);
            let values = (HEAD.iter().map(|f| (f.1)(&row)))
                .chain(outcomes)
                .chain(TAIL.iter().map(|f| (f.1)(&row)));
            rows.push(params.chain(values).collect());
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
