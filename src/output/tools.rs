//! `tools.csv`: one row per sweep point × configuration × tool that it calls, summed over
//! replications — where the calls went and what became of them. Columns are documented in
//! `out/README.md`.

use crate::metrics::Outcome;
use crate::run::PointResult;
use crate::sweep::Point;

/// The columns after the parameter columns: the counts, then one per attempt outcome.
pub fn columns() -> Vec<String> {
    [
        "experiment",
        "policy",
        "tool",
        "intents",
        "calls",
        "short_circuited",
        "effects",
        "duplicates",
        "successes",
        "calls_while_down",
    ]
    .into_iter()
    .map(String::from)
    .chain(Outcome::NAMES.iter().map(|n| format!("outcome_{n}")))
    .collect()
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
