//! `edges.csv`: one row per sweep point × configuration × edge of the call graph — the calls
//! each edge carried per top-level intent (a call the task made), with its 95 % interval
//! across replications and the closed form where it holds, and the retries, duplicates and
//! orphaned attempts among them, and the calls it served. Written only when some tool is a
//! service or some call falls back. Columns are
//! documented in `out/README.md`.

use super::column::{Column, Kind::*, col};
use super::{Export, fixed};
use crate::metrics::{Estimate, Sample};
use crate::run::{PointResult, PolicyResult, per_top_intent};
use crate::sweep::{Point, Sweep};
use crate::verdict::{self, Verdict};

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
        col("verdict", Word(&super::summary::VERDICTS)),
        col("retries_per_intent", Number),
        col("duplicates_per_intent", Number),
        col("orphaned_per_intent", Number),
        col("served_per_intent", Number),
    ]
}

/// Whether any point of `sweep` has a measured graph: a service, or a fallback.
pub fn wanted(sweep: &Sweep) -> bool {
    sweep.census.graph
}

/// What one configuration's calls did on one edge, per top-level intent.
pub struct Figures {
    /// The calls against their closed form, in a table of so many comparisons (see
    /// [`crate::verdict::of_edge`]); `None` without one.
    pub verdict: Option<Verdict>,
    pub calls: f64,
    /// Half the 95 % interval of `calls` across replications; none with one.
    pub ci: Option<f64>,
    /// The closed form, where it holds.
    pub theory: Option<f64>,
    pub retries: f64,
    pub duplicates: f64,
    pub orphaned: f64,
    /// Calls over the edge that succeeded: of a fallback's edge, the share of the task's calls
    /// it served.
    pub served: f64,
}

impl Figures {
    /// Edge `e`'s figures in `result`, one configuration's, in an edge table of
    /// `comparisons` with theory.
    pub fn of(result: &PolicyResult, e: usize, comparisons: usize) -> Figures {
        let edges = &result.totals.edges;
        let total = edges.get(e).cloned().unwrap_or_default();
        let per = |n: u64| per_top_intent(&result.totals, n);
        Figures {
            verdict: verdict::of_edge(result, e, comparisons),
            calls: per(total.calls),
            ci: (result.edge_calls.get(e))
                .filter(|m| m.count() > 1)
                .map(|m| Estimate::from_sample(m).half_width),
            theory: result.edge_theory.as_ref().and_then(|t| t.get(e).copied()),
            retries: per(total.calls - total.intents),
            duplicates: per(total.duplicates),
            orphaned: per(total.orphaned),
            served: per(total.successes),
        }
    }
}

/// The rows of one point: each configuration's edges, in the graph's order, in an edge table
/// of `comparisons` with theory.
pub fn rows(point: &Point, result: &PointResult, comparisons: usize) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        for (e, edge) in exp.graph.edges.iter().enumerate() {
            let f = Figures::of(result, e, comparisons);
            let cells = [
                exp.name.clone(),
                policy.name.clone(),
                edge.caller_name(&exp.tools).to_string(),
                exp.tools[edge.callee].name.clone(),
                fixed(f.calls),
                f.ci.map_or(String::new(), fixed),
                f.theory.map_or(String::new(), fixed),
                f.verdict.map_or("none", Verdict::name).to_string(),
                fixed(f.retries),
                fixed(f.duplicates),
                fixed(f.orphaned),
                fixed(f.served),
            ];
            let params = point.params.iter().map(ToString::to_string);
            rows.push(params.chain(cells).collect());
        }
    }
    rows
}

/// `edges.csv` as the output folder writes it, for a sweep whose edge table makes
/// `comparisons` with theory.
pub struct Edges {
    pub comparisons: usize,
}

impl Export for Edges {
    fn file(&self) -> &'static str {
        "edges.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result, self.comparisons)
    }
}
