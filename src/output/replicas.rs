//! `replicas.csv`: one row per sweep point × configuration × replica of a tool with several,
//! summed over replications — where the balancer sent the calls, how many met a replica that
//! was down, how often outlier detection ejected it, and (under a keyed balancer) how many calls
//! bound for it the breaker refused. Written only when some tool has replicas. Columns are
//! documented in `out/README.md`.

use super::Export;
use super::column::{Column, Kind::*, col};
use crate::metrics::ReplicaTotals;
use crate::run::PointResult;
use crate::sweep::{Point, Sweep};

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    vec![
        col("experiment", Text),
        col("policy", Text),
        col("tool", Text),
        col("replica", Count),
        col("zone", Label),
        col("calls", Count),
        col("calls_while_down", Count),
        col("ejections", Count),
        col("short_circuited", Count),
    ]
}

/// Whether any point of `sweep` has a tool with replicas.
pub fn wanted(sweep: &Sweep) -> bool {
    sweep.census.replicas
}

/// The rows of one point: each configuration's tools with replicas, in the order the config
/// lists them, each replica in order.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        for (t, tool) in exp.tools.iter().enumerate() {
            if tool.replicas.is_empty() || !exp.calls_of(policy).contains(&t) {
                continue;
            }
            let kept = result.totals.replicas.get(t);
            for r in 0..tool.replicas.len() {
                let sum = kept.and_then(|k| k.get(r)).copied().unwrap_or_default();
                let ReplicaTotals {
                    calls,
                    calls_while_down,
                    ejections,
                    short_circuited,
                } = sum;
                let zone = tool
                    .zone_of(r)
                    .map_or(String::new(), |z| tool.zones[z].clone());
                let cells = [
                    exp.name.clone(),
                    policy.name.clone(),
                    tool.name.clone(),
                    r.to_string(),
                    zone,
                    calls.to_string(),
                    calls_while_down.to_string(),
                    ejections.to_string(),
                    short_circuited.to_string(),
                ];
                let params = point.params.iter().map(ToString::to_string);
                rows.push(params.chain(cells).collect());
            }
        }
    }
    rows
}

/// `replicas.csv` as the output folder writes it.
pub struct Replicas;

impl Export for Replicas {
    fn file(&self) -> &'static str {
        "replicas.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}
