//! `timeline.csv` (opt-in, `[output] timeline`): one row per sweep point × configuration × tool
//! it calls × stretch of time, summed over replications — the load on each tool as the run
//! went. Every configuration of a point gets the same stretches, from tick 0 to the last one
//! anything happened in at that point. One table: each column with its type and how a row gives
//! its value. Columns are documented in `out/README.md`.

use super::Export;
use super::column::{Column, Kind::*, col, seconds};
use crate::metrics::timeline::Bucket;
use crate::run::PointResult;
use crate::sweep::Point;
use crate::time::Tick;

/// One configuration's calls to one tool in one stretch, as its row reads them.
pub struct Row<'a> {
    experiment: &'a str,
    policy: &'a str,
    tool: &'a str,
    from: Tick,
    bucket: Bucket,
}

/// A column and how a row gives its value.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

/// The columns after the parameter columns, each with its value.
pub const FIELDS: [Field; 9] = [
    Field(col("experiment", Text), |r| r.experiment.to_string()),
    Field(col("policy", Text), |r| r.policy.to_string()),
    Field(col("tool", Text), |r| r.tool.to_string()),
    Field(col("from_tick", Count), |r| r.from.0.to_string()),
    Field(col("calls", Count), |r| r.bucket.calls.to_string()),
    Field(col("calls_while_down", Count), |r| {
        r.bucket.calls_while_down.to_string()
    }),
    Field(col("short_circuited", Count), |r| {
        r.bucket.short_circuited.to_string()
    }),
    Field(col("successes", Count), |r| r.bucket.successes.to_string()),
    Field(col("from_s", Number), |r| seconds(r.from.0)),
];

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    FIELDS.iter().map(|f| f.0).collect()
}

/// The rows of one point, configurations and their tools in config order.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let timelines: Vec<_> = result.policies.iter().map(|p| p.timeline()).collect();
    let stretches = timelines
        .iter()
        .flatten()
        .flat_map(|t| (0..exp.tools.len()).map(|tool| t.buckets(tool).len()))
        .max()
        .unwrap_or(0);
    let mut rows = Vec::new();
    for (policy, timeline) in exp.policies.iter().zip(&timelines) {
        let Some(timeline) = timeline else { continue };
        for (t, tool) in exp.tools.iter().enumerate() {
            if !exp.calls_of(policy).contains(&t) {
                continue;
            }
            let buckets = timeline.buckets(t);
            for i in 0..stretches {
                let row = Row {
                    experiment: &exp.name,
                    policy: &policy.name,
                    tool: &tool.name,
                    from: Tick(i as u64 * timeline.width().0),
                    bucket: buckets.get(i).copied().unwrap_or_default(),
                };
                let params = point.params.iter().map(ToString::to_string);
                rows.push(params.chain(FIELDS.iter().map(|f| (f.1)(&row))).collect());
            }
        }
    }
    rows
}

/// `timeline.csv` as the output folder writes it.
pub struct Timeline;

impl Export for Timeline {
    fn file(&self) -> &'static str {
        "timeline.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}
