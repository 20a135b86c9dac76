//! `edges.csv`: one row per sweep point × configuration × edge of the call graph — the calls
//! each edge carried per top-level intent (a call the task made), with its 95 % interval
//! across replications and the closed form where it holds, and the retries, duplicates and
//! orphaned attempts among them. Written only when some tool is a service. Columns are
//! documented in `out/README.md`.

use super::column::{Column, Kind::*, col};
use super::{Export, fixed};
use crate::metrics::{Estimate, Sample};
use crate::run::{PointResult, per_top_intent};
use crate::sweep::{Point, Sweep};

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    vec![
        col("experiment", Text),
        col("policy", Text),
        col("caller", Text),
        col("callee", Text),
        col("calls_per_intent", Number),
        col("calls_per_intent_ci95", NumberOrEmpty),
        col("theory_calls_per_intent", NumberOrEmpty),
        col("retries_per_intent", Number),
        col("duplicates_per_intent", Number),
        col("orphaned_per_intent", Number),
    ]
}

/// Whether any point of `sweep` has a service.
pub fn wanted(sweep: &Sweep) -> bool {
    (sweep.points.iter()).any(|p| p.experiment.graph.has_services())
}

/// The rows of one point: each configuration's edges, in the graph's order.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        let edges = &result.totals.edges;
        for (e, edge) in exp.graph.edges.iter().enumerate() {
            let total = edges.get(e).cloned().unwrap_or_default();
            let per = |n: u64| fixed(per_top_intent(exp, edges, n));
            let ci = match result.edge_calls.get(e) {
                Some(m) if m.count() > 1 => fixed(Estimate::from_sample(m).half_width),
                _ => String::new(),
            };
            let theory = (result.edge_theory.as_ref())
                .and_then(|t| t.get(e))
                .map_or(String::new(), |&v| fixed(v));
            let cells = [
                exp.name.clone(),
                policy.name.clone(),
                edge.caller_name(&exp.tools).to_string(),
                exp.tools[edge.callee].name.clone(),
                per(total.calls),
                ci,
                theory,
                per(total.calls - total.intents),
                per(total.duplicates),
                per(total.orphaned),
            ];
            let params = point.params.iter().map(ToString::to_string);
            rows.push(params.chain(cells).collect());
        }
    }
    rows
}

/// `edges.csv` as the output folder writes it.
pub struct Edges;

impl Export for Edges {
    fn file(&self) -> &'static str {
        "edges.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}
