//! A tool written back as a config table: its faults, latencies, server and outages.

use toml::Value;
use toml::value::Table;

use super::{duration, float_ticks, table};
use crate::model::{Latency, Replica, Tool, ToolKind};
use crate::time::Tick;

/// Replica `index`'s entry: what it does otherwise than its tool, if anything.
fn replica(t: &Tool, index: usize, r: &Replica) -> Option<Table> {
    let mut entry = table([("index", (index as i64).into())]);
    let (mine, base) = (&r.faults, &t.faults);
    for (key, p, q) in [
        ("request_loss", mine.request_loss, base.request_loss),
        ("server_error", mine.server_error, base.server_error),
        ("reply_loss", mine.reply_loss, base.reply_loss),
        ("throttled", mine.throttled, base.throttled),
        (
            "error_after_commit",
            mine.error_after_commit,
            base.error_after_commit,
        ),
    ] {
        if p != q {
            entry.insert(key.into(), p.into());
        }
    }
    if r.service_time != t.service_time {
        entry.insert("service_time".into(), latency(&r.service_time));
    }
    (entry.len() > 1).then_some(entry)
}

fn latency(l: &Latency) -> Value {
    Value::Table(match l {
        Latency::Constant(t) => table([("dist", "constant".into()), ("value", duration(*t))]),
        Latency::Uniform { min, max } => table([
            ("dist", "uniform".into()),
            ("min", duration(*min)),
            ("max", duration(*max)),
        ]),
        Latency::Exponential { mean } => {
            table([("dist", "exponential".into()), ("mean", float_ticks(*mean))])
        }
        Latency::LogNormal { median, sigma } => table([
            ("dist", "lognormal".into()),
            ("median", float_ticks(*median)),
            ("sigma", (*sigma).into()),
        ]),
        Latency::Gamma(g) => table([
            ("dist", "gamma".into()),
            ("shape", g.shape.into()),
            ("mean", float_ticks(g.shape * g.scale)),
        ]),
        Latency::FoldedNormal { mean, sd } => table([
            ("dist", "folded_normal".into()),
            ("mean", float_ticks(*mean)),
            ("sd", float_ticks(*sd)),
        ]),
        Latency::Weibull { shape, scale } => table([
            ("dist", "weibull".into()),
            ("shape", (*shape).into()),
            ("scale", float_ticks(*scale)),
        ]),
        Latency::Empirical(e) => table([
            ("dist", "empirical".into()),
            ("file", e.file.clone().into()),
        ]),
    })
}

#[expect(
    clippy::too_many_lines,
    reason = "129 lines: to be split by what it does"
)]
pub(super) fn tool(t: &Tool) -> Value {
    let mut v = Value::Table(table([
        ("name", t.name.clone().into()),
        ("kind", t.server.kind.name().into()),
        ("idempotent", t.server.idempotent.into()),
        ("request_loss", t.faults.request_loss.into()),
        ("server_error", t.faults.server_error.into()),
        ("reply_loss", t.faults.reply_loss.into()),
        ("throttled", t.faults.throttled.into()),
        ("forbidden", t.faults.forbidden.into()),
        ("invalid", t.faults.invalid.into()),
        ("loss_seen_as", t.loss_seen_as.name().into()),
        ("request_latency", latency(&t.request_latency)),
        ("service_time", latency(&t.service_time)),
        ("reply_latency", latency(&t.reply_latency)),
        ("lookup_time", duration(t.lookup.time)),
        ("lookup_failure", t.lookup.failure.into()),
        ("commit_lag", duration(t.lookup.lag)),
        ("cooperative", t.cooperative.into()),
    ]));
    if let Value::Table(table) = &mut v {
        let workers = t
            .server
            .workers
            .map_or("unlimited".into(), |w| Value::Integer(w.into()));
        table.insert("workers".into(), workers);
        // The line exists only in front of limited workers.
        if t.server.workers.is_some() {
            let limit = t
                .server
                .line
                .limit
                .map_or("unlimited".into(), |l| Value::Integer(l.into()));
            table.insert("line_limit".into(), limit);
            table.insert("line_order".into(), t.server.line.order.name().into());
        }
        if !t.server.outages.is_empty() {
            let outages = t
                .server
                .outages
                .iter()
                .map(|o| {
                    let mut outage = self::table([
                        ("from", duration(o.from)),
                        ("until", duration(o.until)),
                        ("mode", o.mode.name().into()),
                    ]);
                    if let Some(z) = o.zone {
                        outage.insert("zone".into(), t.zones[z].clone().into());
                    }
                    Value::Table(outage)
                })
                .collect();
            table.insert("outages".into(), Value::Array(outages));
        }
        if !t.server.capacity.is_empty() {
            let windows = (t.server.capacity.iter())
                .map(|w| {
                    let mut window = self::table([
                        ("from", duration(w.from)),
                        ("until", duration(w.until)),
                        ("fraction", w.fraction.into()),
                    ]);
                    if let Some(z) = w.zone {
                        window.insert("zone".into(), t.zones[z].clone().into());
                    }
                    Value::Table(window)
                })
                .collect();
            table.insert("capacity".into(), Value::Array(windows));
        }
        if let Some(retention) = t.server.key_retention {
            table.insert("key_retention".into(), duration(retention));
        }
        if t.server.drop_expired {
            table.insert("drop_expired".into(), true.into());
        }
        if t.server.kind == ToolKind::Record {
            table.insert("version_check".into(), t.server.version_check.name().into());
        }
        if let Some(limit) = &t.server.rate_limit {
            let bucket = self::table([
                ("per_second", limit.rate().into()),
                ("burst", i64::from(limit.burst).into()),
                ("scope", limit.scope.name().into()),
                ("retry_after_unit", duration(limit.unit)),
            ]);
            table.insert("rate_limit".into(), Value::Table(bucket));
        }
        if t.server.slowdown > Tick::ZERO {
            table.insert("slowdown".into(), duration(t.server.slowdown));
        }
        // Written only where set, so configs from before the key read back unchanged.
        if t.faults.connect_failure > 0.0 {
            table.insert("connect_failure".into(), t.faults.connect_failure.into());
        }
        if t.faults.error_after_commit > 0.0 {
            let p = t.faults.error_after_commit;
            table.insert("error_after_commit".into(), p.into());
        }
        if t.server.should_retry_header {
            table.insert("should_retry_header".into(), true.into());
        }
        if !t.zones.is_empty() {
            let zones = t.zones.iter().map(|z| Value::from(z.clone())).collect();
            table.insert("zones".into(), Value::Array(zones));
        }
        if !t.replicas.is_empty() {
            table.insert("replicas".into(), (t.replicas.len() as i64).into());
            let entries: Vec<Value> = (t.replicas.iter().enumerate())
                .filter_map(|(i, r)| replica(t, i, r).map(Value::Table))
                .collect();
            if !entries.is_empty() {
                table.insert("replica".into(), Value::Array(entries));
            }
        }
        if let Some(wait) = t.faults.retry_after {
            table.insert("retry_after".into(), duration(wait));
        }
        if let Some(script) = &t.script {
            // A scripted tool's faults and latencies are not used: its script stands for them.
            for key in [
                "request_loss",
                "server_error",
                "reply_loss",
                "throttled",
                "forbidden",
                "invalid",
                "connect_failure",
                "error_after_commit",
                "request_latency",
                "service_time",
                "reply_latency",
            ] {
                table.remove(key);
            }
            let steps = script
                .steps
                .iter()
                .map(|s| {
                    let mut step = self::table([
                        ("outcome", s.fate.name().into()),
                        ("after", duration(s.after)),
                    ]);
                    if let Some(wait) = s.retry_after {
                        step.insert("retry_after".into(), duration(wait));
                    }
                    Value::Table(step)
                })
                .collect();
            table.insert("script".into(), Value::Array(steps));
        }
    }
    v
}
