//! `timeseries.csv` (opt-in, `[output] timeseries`): one row per sweep point × configuration ×
//! tool it calls × bin of time — what happened over time, averaged over the replications with
//! a 95 % interval across them. Counts are per second; levels are averages over the bin. Every
//! configuration of a point gets the same bins, from tick 0 to the last one anything happened
//! in at that point. One table: each column with its type and how a row gives its value.
//! `replica-timeseries.csv` is the same table per replica of a tool with several: what reached
//! each server (the tool's counts of intents, breakers and budgets are the client's, and stay
//! in the tool's rows). Columns are documented in `out/README.md`.

use super::column::{Column, Kind::*, col, seconds};
use super::{Export, fixed};
use crate::metrics::{Count, Estimate, Level, Moments, Sample, SeriesStats};
use crate::run::PointResult;
use crate::sweep::{Point, Sweep};
use crate::time::Tick;

/// One configuration's bin at one tool or replica, as its row reads it.
pub struct Row<'a> {
    experiment: &'a str,
    policy: &'a str,
    tool: &'a str,
    /// The replica and its zone, in a replica's row.
    replica: Option<(usize, &'a str)>,
    from: Tick,
    width: Tick,
    stats: &'a SeriesStats,
    /// The series' track the row reads (see [`crate::metrics::Tracks`]).
    track: usize,
    bin: usize,
}

/// What a value column reads from a bin.
#[derive(Clone, Copy)]
enum Value {
    PerSecond(Count),
    Mean(Level),
}

impl Row<'_> {
    fn moments(&self, v: Value) -> (Moments, f64) {
        match v {
            Value::PerSecond(c) => (
                self.stats.count(self.track, self.bin, c),
                self.width.seconds(),
            ),
            Value::Mean(l) => (self.stats.level(self.track, self.bin, l), 1.0),
        }
    }

    fn mean(&self, v: Value) -> String {
        let (m, scale) = self.moments(v);
        fixed(m.mean() / scale)
    }

    /// Half the 95 % interval across replications; empty with one.
    fn ci95(&self, v: Value) -> String {
        let (m, scale) = self.moments(v);
        if m.count() < 2 {
            return String::new();
        }
        fixed(Estimate::from_sample(&m).half_width / scale)
    }
}

/// A column and how a row gives its value.
pub struct Field(pub Column, pub for<'a> fn(&Row<'a>) -> String);

macro_rules! value_fields {
    ($(($name:literal, $ci:literal, $value:expr)),* $(,)?) => {
        [$(
            Field(col($name, Number), |r| r.mean($value)),
            Field(col($ci, NumberOrEmpty), |r| r.ci95($value)),
        )*]
    };
}

/// The columns naming the row; a replica's row has [`REPLICA_KEYS`] after `tool`.
const KEYS: [Field; 7] = [
    Field(col("experiment", Text), |r| r.experiment.to_string()),
    Field(col("policy", Text), |r| r.policy.to_string()),
    Field(col("tool", Text), |r| r.tool.to_string()),
    Field(col("from_tick", Count), |r| r.from.0.to_string()),
    Field(col("to_tick", Count), |r| {
        r.from.after(r.width).0.to_string()
    }),
    Field(col("from_s", Number), |r| seconds(r.from.0)),
    Field(col("to_s", Number), |r| seconds(r.from.after(r.width).0)),
];

/// Each value with its interval, in the order `out/README.md` lists them.
const VALUES: [Field; 26] = value_fields![
    (
        "offered_per_s",
        "offered_per_s_ci95",
        Value::PerSecond(Count::Offered)
    ),
    (
        "first_tries_per_s",
        "first_tries_per_s_ci95",
        Value::PerSecond(Count::FirstTry)
    ),
    (
        "retries_per_s",
        "retries_per_s_ci95",
        Value::PerSecond(Count::Retry)
    ),
    (
        "goodput_per_s",
        "goodput_per_s_ci95",
        Value::PerSecond(Count::Goodput)
    ),
    (
        "timeouts_per_s",
        "timeouts_per_s_ci95",
        Value::PerSecond(Count::Timeout)
    ),
    (
        "rejected_per_s",
        "rejected_per_s_ci95",
        Value::PerSecond(Count::Rejected)
    ),
    (
        "calls_while_down_per_s",
        "calls_while_down_per_s_ci95",
        Value::PerSecond(Count::CallWhileDown)
    ),
    (
        "short_circuited_per_s",
        "short_circuited_per_s_ci95",
        Value::PerSecond(Count::ShortCircuited)
    ),
    ("in_flight", "in_flight_ci95", Value::Mean(Level::InFlight)),
    (
        "queue_length",
        "queue_length_ci95",
        Value::Mean(Level::QueueLength)
    ),
    (
        "busy_workers",
        "busy_workers_ci95",
        Value::Mean(Level::BusyWorkers)
    ),
    (
        "breaker_open",
        "breaker_open_ci95",
        Value::Mean(Level::BreakerOpen)
    ),
    (
        "budget_tokens",
        "budget_tokens_ci95",
        Value::Mean(Level::BudgetTokens)
    ),
];

/// The replica and its zone, in a replica's row.
const REPLICA_KEYS: [Field; 2] = [
    Field(col("replica", Count), |r| {
        r.replica.map_or(String::new(), |(i, _)| i.to_string())
    }),
    Field(col("zone", Label), |r| {
        r.replica.map_or(String::new(), |(_, z)| z.to_string())
    }),
];

/// What a replica's row has of [`VALUES`]: what reached that server, and its levels.
const REPLICA_VALUES: [&str; 8] = [
    "first_tries_per_s",
    "retries_per_s",
    "timeouts_per_s",
    "rejected_per_s",
    "calls_while_down_per_s",
    "in_flight",
    "queue_length",
    "busy_workers",
];

/// The fields of a tool's row, or of a replica's.
fn fields(replica: bool) -> Vec<&'static Field> {
    if !replica {
        return KEYS.iter().chain(&VALUES).collect();
    }
    let kept = |f: &&Field| {
        let name = f.0.name.trim_end_matches("_ci95");
        REPLICA_VALUES.contains(&name)
    };
    let keys = KEYS[..3].iter().chain(&REPLICA_KEYS).chain(&KEYS[3..]);
    keys.chain(VALUES.iter().filter(kept)).collect()
}

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    fields(false).iter().map(|f| f.0).collect()
}

/// The columns of `replica-timeseries.csv` after the parameter columns.
pub fn replica_columns() -> Vec<Column> {
    fields(true).iter().map(|f| f.0).collect()
}

/// The rows of one point, configurations and their tools in config order; with `replicas`,
/// a row per replica of each tool with several instead, in order.
pub fn rows(point: &Point, result: &PointResult, replicas: bool) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    let tracks = exp.tracks();
    // Every replica's event is its tool's too, so the tools' bins cover the replicas'.
    let bins = (result.policies.iter())
        .filter_map(|p| p.series.as_ref())
        .flat_map(|s| (0..exp.tools.len()).map(|tool| s.len(tool)))
        .max()
        .unwrap_or(0);
    let fields = fields(replicas);
    let mut rows = Vec::new();
    for (policy, result) in exp.policies.iter().zip(&result.policies) {
        let Some(stats) = &result.series else {
            continue;
        };
        for (t, tool) in exp.tools.iter().enumerate() {
            if !exp.calls_of(policy).contains(&t) {
                continue;
            }
            let places: Vec<(usize, Option<(usize, &str)>)> = if replicas {
                (0..tool.replicas.len())
                    .filter_map(|r| {
                        let zone = tool.zone_of(r).map_or("", |z| tool.zones[z].as_str());
                        Some((tracks.replica(t, r)?, Some((r, zone))))
                    })
                    .collect()
            } else {
                vec![(t, None)]
            };
            for (track, replica) in places {
                for bin in 0..bins {
                    let row = Row {
                        experiment: &exp.name,
                        policy: &policy.name,
                        tool: &tool.name,
                        replica,
                        from: Tick(bin as u64 * stats.width().0),
                        width: stats.width(),
                        stats,
                        track,
                        bin,
                    };
                    let params = point.params.iter().map(ToString::to_string);
                    let cells = fields.iter().map(|f| (f.1)(&row));
                    rows.push(params.chain(cells).collect());
                }
            }
        }
    }
    rows
}

/// `timeseries.csv` as the output folder writes it.
pub struct Timeseries;

impl Export for Timeseries {
    fn file(&self) -> &'static str {
        "timeseries.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result, false)
    }
}

/// `replica-timeseries.csv`, written beside `timeseries.csv` when some tool has replicas.
pub struct ReplicaTimeseries;

impl ReplicaTimeseries {
    pub fn wanted(sweep: &Sweep) -> bool {
        sweep.base.output.timeseries.is_some() && super::replicas::wanted(sweep)
    }
}

impl Export for ReplicaTimeseries {
    fn file(&self) -> &'static str {
        "replica-timeseries.csv"
    }
    fn columns(&self) -> Vec<Column> {
        replica_columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result, true)
    }
}
