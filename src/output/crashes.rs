//! `crashes.csv`: one row per sweep point × configuration where the workers that hold calls
//! crash (`[workload] crash`), summed over replications — the crashes, the takeovers, the
//! effects a takeover caused, the work the replacements redid, the calls left to an operator
//! and the leases that lapsed. Written only when the workload crashes. Columns are documented in
//! `out/README.md`.

use super::column::{Column, Kind::*, col};
use super::{Export, finite};
use crate::metrics::CrashTotals;
use crate::model::price::BillTotals;
use crate::run::PointResult;
use crate::sweep::{Point, Sweep};
use crate::time::TICKS_PER_SECOND;

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    vec![
        col("experiment", Text),
        col("policy", Text),
        col("calls", Count),
        col("crashes", Count),
        col("crashes_per_call", Number),
        col("takeovers", Count),
        col("takeover_duplicates", Count),
        col("takeover_duplicates_per_call", Number),
        col("redone_attempts", Count),
        col("redone_usd", Number),
        col("redone_tokens", Count),
        col("uncertain", Count),
        col("crashed_calls", Count),
        col("crashed_calls_succeeded", Count),
        col("mean_crash_to_end_s", NumberOrEmpty),
        col("zombie_sends", Count),
        col("fenced_writes", Count),
        col("lease_lapses", Count),
        col("held_afresh", Count),
        col("dead_lettered", Count),
    ]
}

/// Whether some point of `sweep` has workers that crash.
pub fn wanted(sweep: &Sweep) -> bool {
    sweep.census.crashes
}

/// The rows of one point: each configuration's, in the order the config lists them.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    (exp.policies.iter().zip(&result.policies))
        .map(|(policy, result)| {
            let calls = result.totals.intents();
            let CrashTotals {
                crashes,
                takeovers,
                takeover_duplicates,
                redone,
                redone_cost,
                redone_tokens,
                uncertain,
                crashed_calls,
                crashed_succeeded,
                zombie_sends,
                fenced,
                lapses,
                held_afresh,
                dead_lettered,
                crash_to_end,
            } = result.totals.crashes;
            let to_end = crash_to_end as f64 / crashed_calls as f64 / TICKS_PER_SECOND as f64;
            let per_call = |n: u64| finite(n as f64 / calls as f64);
            let cells = [
                exp.name.clone(),
                policy.name.clone(),
                calls.to_string(),
                crashes.to_string(),
                per_call(crashes),
                takeovers.to_string(),
                takeover_duplicates.to_string(),
                per_call(takeover_duplicates),
                redone.to_string(),
                finite(BillTotals::dollars(redone_cost)),
                redone_tokens.to_string(),
                uncertain.to_string(),
                crashed_calls.to_string(),
                crashed_succeeded.to_string(),
                finite(to_end),
                zombie_sends.to_string(),
                fenced.to_string(),
                lapses.to_string(),
                held_afresh.to_string(),
                dead_lettered.to_string(),
            ];
            let params = point.params.iter().map(ToString::to_string);
            params.chain(cells).collect()
        })
        .collect()
}

/// `crashes.csv` as the output folder writes it.
pub struct Crashes;

impl Export for Crashes {
    fn file(&self) -> &'static str {
        "crashes.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}
