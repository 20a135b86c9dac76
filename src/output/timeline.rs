//! `timeline.csv` (opt-in, `[output] timeline`): one row per sweep point × configuration × tool
//! it calls × stretch of time, summed over replications — the load on each tool as the run
//! went. Every configuration of a point gets the same stretches, from tick 0 to the last one
//! anything happened in at that point. Columns are documented in `out/README.md`.

use super::column::{Column, Kind::*, col, seconds};
use crate::run::PointResult;
use crate::sweep::Point;

/// The columns after the parameter columns.
pub const COLUMNS: [Column; 9] = [
    col("experiment", Text),
    col("policy", Text),
    col("tool", Text),
    col("from_tick", Count),
    col("calls", Count),
    col("calls_while_down", Count),
    col("short_circuited", Count),
    col("successes", Count),
    col("from_s", Number),
];

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
                let b = buckets.get(i).copied().unwrap_or_default();
                let counts = [b.calls, b.calls_while_down, b.short_circuited, b.successes];
                let from = i as u64 * timeline.width().0;
                rows.push(
                    point
                        .params
                        .iter()
                        .map(ToString::to_string)
                        .chain([
                            exp.name.clone(),
                            policy.name.clone(),
                            tool.name.clone(),
                            from.to_string(),
                        ])
                        .chain(counts.iter().map(u64::to_string))
                        .chain([seconds(from)])
                        .collect(),
                );
            }
        }
    }
    rows
}
