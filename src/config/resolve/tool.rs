//! A tool written back as a config table: its faults, latencies, server and outages.

use toml::{Spanned, Value};

use super::{at, duration, some, text, texts, ticks, when};
use crate::config::raw;
use crate::experiment::Experiment;
use crate::model::price::PICO;
use crate::model::{Burst, Call, Latency, Replica, Stage, Tool};
use crate::time::Tick;

/// Replica `index`'s entry: what it does otherwise than its tool, if anything.
fn replica(t: &Tool, index: usize, r: &Replica) -> Option<Spanned<raw::Replica>> {
    let (mine, base) = (&r.faults, &t.faults);
    let differs = |p: f64, q: f64| when(p != q, p);
    let entry = raw::Replica {
        index: at(index as u32),
        service_time: when(r.service_time != t.service_time, latency(&r.service_time)),
        request_loss: differs(mine.request_loss, base.request_loss),
        server_error: differs(mine.server_error, base.server_error),
        reply_loss: differs(mine.reply_loss, base.reply_loss),
        throttled: differs(mine.throttled, base.throttled),
        error_after_commit: differs(mine.error_after_commit, base.error_after_commit),
    };
    let overrides = [
        entry.service_time.is_some(),
        entry.request_loss.is_some(),
        entry.server_error.is_some(),
        entry.reply_loss.is_some(),
        entry.throttled.is_some(),
        entry.error_after_commit.is_some(),
    ];
    overrides.contains(&true).then(|| at(entry))
}

/// A burst as resolved: both means and the bad state's faults, the three losses always and the
/// rarer faults where they are drawn, as the tool's own are written.
fn burst(b: &Burst) -> Spanned<raw::Burst> {
    let f = &b.in_bad;
    let drawn = |p: f64| when(p > 0.0, p);
    at(raw::Burst {
        good: at(duration(b.good)),
        bad: at(duration(b.bad)),
        in_bad: Some(at(raw::BadFaults {
            request_loss: some(f.request_loss),
            server_error: some(f.server_error),
            reply_loss: some(f.reply_loss),
            throttled: drawn(f.throttled),
            error_after_commit: drawn(f.error_after_commit),
        })),
        domain: b.domain.as_deref().and_then(text),
        per_replica: when(b.per_replica, true),
    })
}

fn latency(l: &Latency) -> raw::Latency {
    distribution(l, duration)
}

/// A distribution of token counts, its values whole numbers.
pub(super) fn tokens(l: &Latency) -> raw::Latency {
    distribution(l, |t| {
        Value::Integer(i64::try_from(t.0).unwrap_or(i64::MAX))
    })
}

/// A distribution as written, each value by `value`.
fn distribution(l: &Latency, value: fn(Tick) -> Value) -> raw::Latency {
    let ticks = |t: Tick| some(value(t));
    let float_ticks = |t: f64| ticks(Tick(libm::round(t) as u64));
    let mut out = raw::Latency::of_dist(at(String::new()));
    let dist = match l {
        Latency::Constant(t) => {
            out.value = ticks(*t);
            "constant"
        }
        Latency::Uniform { min, max } => {
            (out.min, out.max) = (ticks(*min), ticks(*max));
            "uniform"
        }
        Latency::Exponential { mean } => {
            out.mean = float_ticks(*mean);
            "exponential"
        }
        Latency::LogNormal { median, sigma } => {
            (out.median, out.sigma) = (float_ticks(*median), some(*sigma));
            "lognormal"
        }
        Latency::Gamma(g) => {
            (out.shape, out.mean) = (some(g.shape), float_ticks(g.shape * g.scale));
            "gamma"
        }
        Latency::FoldedNormal { mean, sd } => {
            (out.mean, out.sd) = (float_ticks(*mean), float_ticks(*sd));
            "folded_normal"
        }
        Latency::Weibull { shape, scale } => {
            (out.shape, out.scale) = (some(*shape), float_ticks(*scale));
            "weibull"
        }
        Latency::Empirical(e) => {
            out.file = some(e.file.clone());
            "empirical"
        }
    };
    out.dist = at(dist.to_string());
    out
}

/// A service's stages as written: a call by its tool's name (a table where it is optional or
/// made several times together), a stage of several as a list.
fn calls(stages: &[Stage], exp: &Experiment) -> Vec<Spanned<Value>> {
    let call = |c: &Call, times: usize| {
        let name = Value::String(exp.tools[exp.graph.edges[c.edge].callee].name.clone());
        if !c.optional && times == 1 {
            return name;
        }
        let mut table = toml::Table::new();
        table.insert("call".into(), name);
        if c.optional {
            table.insert("optional".into(), true.into());
        }
        if times > 1 {
            table.insert("times".into(), (times as i64).into());
        }
        Value::Table(table)
    };
    let stage = |s: &Stage| {
        // Runs of one call, each written once with its count.
        let mut runs: Vec<(Call, usize)> = Vec::new();
        for c in s {
            match runs.last_mut() {
                Some((last, n)) if last == c => *n += 1,
                _ => runs.push((*c, 1)),
            }
        }
        match runs.as_slice() {
            [(one, n)] => at(call(one, *n)),
            many => at(Value::Array(
                many.iter().map(|(c, n)| call(c, *n)).collect(),
            )),
        }
    };
    stages.iter().map(stage).collect()
}

/// A tool's outages as written, each naming its zone where it has one.
fn outages(t: &Tool) -> Vec<Spanned<raw::Outage>> {
    (t.server.outages.iter())
        .map(|o| {
            at(raw::Outage {
                from: at(duration(o.from)),
                until: at(duration(o.until)),
                mode: text(o.mode.name()),
                zone: o.zone.map(|z| at(t.zones[z].clone())),
            })
        })
        .collect()
}

pub(super) fn tool(t: &Tool, stages: &[Stage], exp: &Experiment) -> raw::Tool {
    let (model, tokens_per_minute, price) = provider(t);
    let server = &t.server;
    // A scripted tool's faults and latencies are not written: its script stands for them.
    let drawn = t.script.is_none();
    let fault = |p: f64| when(drawn, p);
    let latency_of = |l: &Latency| when(drawn, latency(l));
    // The line exists only in front of limited workers.
    let limited = server.workers.is_some();
    let count_or_unlimited = |n: Option<u32>| n.map_or("unlimited".into(), |n| n.into());
    let zone = |z: Option<usize>| z.map(|z| at(t.zones[z].clone()));
    raw::Tool {
        name: at(t.name.clone()),
        kind: text(server.kind.name()),
        idempotent: some(server.idempotent),
        request_loss: fault(t.faults.request_loss),
        server_error: fault(t.faults.server_error),
        reply_loss: fault(t.faults.reply_loss),
        throttled: fault(t.faults.throttled),
        forbidden: fault(t.faults.forbidden),
        invalid: fault(t.faults.invalid),
        loss_seen_as: text(t.loss_seen_as.name()),
        request_latency: latency_of(&t.request_latency),
        // A model's work is its provider's, never a service time.
        service_time: latency_of(&t.service_time).filter(|_| t.provider.is_none()),
        reply_latency: latency_of(&t.reply_latency),
        lookup_time: ticks(t.lookup.time),
        lookup_failure: some(t.lookup.failure),
        commit_lag: ticks(t.lookup.lag),
        cooperative: some(t.cooperative),
        workers: some(count_or_unlimited(server.workers)),
        line_limit: when(limited, count_or_unlimited(server.line.limit)),
        line_order: when(limited, server.line.order.name().into()),
        outages: outages(t),
        capacity: (server.capacity.iter())
            .map(|w| {
                at(raw::CapacityWindow {
                    from: at(duration(w.from)),
                    until: at(duration(w.until)),
                    fraction: at(w.fraction),
                    zone: zone(w.zone),
                })
            })
            .collect(),
        key_retention: server.key_retention.and_then(ticks),
        drop_expired: when(server.drop_expired, true),
        abandon_at_deadline: when(server.abandon_at_deadline, true),
        version_check: when(server.versioned(), server.version_check.name().into()),
        rate_limit: server.rate_limit.as_ref().map(|limit| {
            at(raw::RateLimit {
                per_second: some(limit.rate()),
                per_minute: None,
                burst: some(limit.burst),
                scope: text(limit.scope.name()),
                retry_after_unit: ticks(limit.unit),
            })
        }),
        slowdown: when(server.slowdown > Tick::ZERO, duration(server.slowdown)),
        // Written only where set, so configs from before the key read back unchanged.
        connect_failure: when(
            drawn && t.faults.connect_failure > 0.0,
            t.faults.connect_failure,
        ),
        error_after_commit: when(
            drawn && t.faults.error_after_commit > 0.0,
            t.faults.error_after_commit,
        ),
        should_retry_header: when(server.should_retry_header, true),
        retry_after_ms: when(server.retry_after_ms, true),
        fencing: when(server.fencing, true),
        zones: (!t.zones.is_empty())
            .then(|| texts(t.zones.iter().map(String::as_str)))
            .flatten(),
        replicas: when(!t.replicas.is_empty(), t.replicas.len() as u32),
        replica: (t.replicas.iter().enumerate())
            .filter_map(|(i, r)| replica(t, i, r))
            .collect(),
        retry_after: t.faults.retry_after.and_then(ticks),
        script: t.script.as_ref().map(|script| {
            let steps = script.steps.iter().map(|s| {
                at(raw::ScriptStep {
                    outcome: at(s.fate.name().into()),
                    after: at(duration(s.after)),
                    retry_after: s.retry_after.and_then(ticks),
                })
            });
            at(steps.collect())
        }),
        burst: t.burst.as_ref().map(burst),
        health: t.health.as_ref().map(|h| at(h.file.clone())),
        calls: (!stages.is_empty()).then(|| at(calls(stages, exp))),
        overloaded: when(drawn && t.faults.overloaded > 0.0, t.faults.overloaded),
        model,
        tokens_per_minute,
        price,
        reserve: (t.reserve > 0).then(|| at(t.reserve as f64 / PICO)),
    }
}

/// A model's keys as written: its provider, token bucket and prices.
#[expect(
    clippy::type_complexity,
    reason = "three keys of one table, written together"
)]
fn provider(
    t: &Tool,
) -> (
    Option<Spanned<raw::Model>>,
    Option<Spanned<raw::TokensPerMinute>>,
    Option<Spanned<raw::Price>>,
) {
    let model = t.provider.as_ref().map(|p| {
        at(raw::Model {
            input_tokens: at(tokens(&p.input_tokens)),
            output_tokens: at(tokens(&p.output_tokens)),
            max_tokens: at(p.max_tokens),
            first_token: at(latency(&p.first_token)),
            prefill_tokens_per_second: p.prefill.map(at),
            tokens_per_second: at(p.tokens_per_second),
            // A break per token is resolved to its rate a second.
            stream_break: when(p.stream_break > 0.0, p.stream_break),
            stream_break_per_token: None,
        })
    });
    let tokens_per_minute = t.server.token_limit.map(|l| {
        at(raw::TokensPerMinute {
            limit: at(l.per_minute),
            burst: some(l.burst),
            scope: text(l.scope.name()),
            retry_after_unit: ticks(l.unit),
        })
    });
    let price = (!t.price.is_free()).then(|| {
        let per = |pd: u64, n: f64| when(pd > 0, pd as f64 * n / PICO);
        at(raw::Price {
            input_per_million: per(t.price.input, 1e6),
            output_per_million: per(t.price.output, 1e6),
            per_call: per(t.price.call, 1.0),
        })
    });
    (model, tokens_per_minute, price)
}
