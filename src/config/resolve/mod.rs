//! An experiment written back as a config, every default filled in: what the manifest records,
//! so a reader sees exactly what ran and can run it again. A tool's table is written in [`tool`].

mod tool;

use toml::{Table, Value};

use crate::experiment::Experiment;
use crate::model::{Arrival, RatePoint, Tool, Workload};
use crate::policy::{
    Attempts, Backoff, Balancer, BreakerRule, BudgetRule, Cap, ConcurrencyRule, FirstRetry,
    GateScope, Hedging, Jitter, Layers, LimitRule, Policy, Refuses, Retry, RetryHost, ShouldRetry,
    Tie, Trip, Wait, Window,
};
use crate::sweep::Sweep;
use crate::time::Tick;

pub(super) fn duration(t: Tick) -> Value {
    Value::String(t.to_string())
}

/// Float ticks (distribution parameters) written back as the nearest whole tick, which is
/// what they were parsed from.
pub(super) fn float_ticks(t: f64) -> Value {
    duration(Tick(libm::round(t) as u64))
}

pub(super) fn table<const N: usize>(entries: [(&str, Value); N]) -> Table {
    entries
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
}

/// The backoff with every default filled in; the rules added since the first backoff are
/// listed only where they differ from their defaults, so older manifests read the same.
fn backoff(b: &Backoff) -> Value {
    let mut t = table([
        ("kind", b.growth.name().into()),
        ("initial_delay", duration(b.initial_delay)),
        ("multiplier", b.multiplier.into()),
        ("max_delay", b.max_delay.map_or("none".into(), duration)),
        ("jitter", b.jitter.name().into()),
    ]);
    if b.count_from != 0 {
        t.insert("count_from".into(), i64::from(b.count_from).into());
    }
    if b.cap != Cap::BeforeJitter {
        t.insert("cap".into(), b.cap.name().into());
    }
    if b.jitter == Jitter::Proportional {
        t.insert("jitter_factor".into(), b.jitter_factor.into());
    }
    if b.jitter == Jitter::Additive {
        t.insert("jitter_max".into(), duration(b.jitter_max));
    }
    if b.min_delay > Tick::ZERO {
        t.insert("min_delay".into(), duration(b.min_delay));
    }
    if b.first_retry != FirstRetry::Backoff {
        t.insert("first_retry".into(), b.first_retry.name().into());
    }
    Value::Table(t)
}

fn breaker(b: &BreakerRule) -> Value {
    let mut t = Table::new();
    match b.trip {
        Trip::Consecutive(n) => {
            t.insert("consecutive_failures".into(), Value::Integer(n.into()));
        }
        Trip::Rate {
            rate,
            window,
            minimum_calls,
        } => {
            t.insert("failure_rate".into(), rate.into());
            let window = match window {
                Window::Calls(n) => Value::Integer(n.into()),
                Window::Time(span) => duration(span),
            };
            t.insert("window".into(), window);
            t.insert("minimum_calls".into(), Value::Integer(minimum_calls.into()));
        }
    }
    if b.refuses != Refuses::All {
        t.insert("refuses".into(), b.refuses.name().into());
    }
    t.insert("open_duration".into(), duration(b.open_duration));
    t.insert(
        "half_open_probes".into(),
        Value::Integer(b.half_open_probes.into()),
    );
    let counts = b.counts.classes().map(|c| c.name().into()).collect();
    t.insert("counts".into(), Value::Array(counts));
    Value::Table(t)
}

fn concurrency(c: &ConcurrencyRule) -> Value {
    let int = |n: u32| Value::Integer(n.into());
    let mut t = match c.limit {
        LimitRule::Fixed(n) => table([("kind", "fixed".into()), ("limit", int(n))]),
        LimitRule::Aimd {
            initial,
            min,
            max,
            increase,
            decrease,
        } => table([
            ("kind", "aimd".into()),
            ("limit", int(initial)),
            ("min", int(min)),
            ("max", int(max)),
            ("increase", increase.into()),
            ("decrease", decrease.into()),
        ]),
    };
    t.insert("queue".into(), int(c.queue));
    Value::Table(t)
}

fn retry_budget(b: &BudgetRule) -> Value {
    let mut t = table([("kind", b.name().into())]);
    let settings: Vec<(&str, Value)> = match *b {
        BudgetRule::TokenBucket {
            max_tokens,
            token_ratio,
            debits,
        } => {
            let mut keys = vec![
                ("max_tokens", max_tokens.into()),
                ("token_ratio", token_ratio.into()),
            ];
            if debits.is_some() {
                keys.push(("debit_on", "retryable".into()));
            }
            keys
        }
        BudgetRule::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            throttle_cost,
            success_credit,
        } => {
            let mut keys = vec![
                ("capacity", capacity.into()),
                ("retry_cost", retry_cost.into()),
                ("timeout_cost", timeout_cost.into()),
                ("success_credit", success_credit.into()),
            ];
            // Listed only where set, so older manifests read the same.
            if let Some(cost) = throttle_cost {
                keys.push(("throttle_cost", cost.into()));
            }
            keys
        }
        BudgetRule::Ratio {
            ttl,
            min_per_second,
            percent,
        } => vec![
            ("ttl", duration(ttl)),
            ("min_per_second", min_per_second.into()),
            ("percent", percent.into()),
        ],
        BudgetRule::Adaptive {
            size,
            deposit,
            on_success,
        } => vec![
            ("size", size.into()),
            ("deposit", deposit.into()),
            (
                "deposit_on",
                if on_success { "success" } else { "first_try" }.into(),
            ),
        ],
        BudgetRule::FailureRatio { ratio } => vec![("ratio", ratio.into())],
    };
    t.extend(settings.into_iter().map(|(k, v)| (k.to_string(), v)));
    Value::Table(t)
}

/// A retry rule's `max_attempts` and `retry_on`.
fn retry_rule(retry: &Retry) -> [(&'static str, Value); 2] {
    let max_attempts = match retry.max_attempts {
        Attempts::AtMost(n) => Value::Integer(n.into()),
        Attempts::Unlimited => "unlimited".into(),
    };
    let retry_on: Vec<Value> = retry.retry_on.classes().map(|c| c.name().into()).collect();
    [
        ("max_attempts", max_attempts),
        ("retry_on", Value::Array(retry_on)),
    ]
}

/// A policy's retry layers, outermost first, each with its name, rule and backoff.
fn layers(p: &Policy, layers: &Layers) -> Value {
    let names = layers.outer.iter().map(|l| &l.name);
    let list = names
        .chain([&layers.innermost])
        .enumerate()
        .map(|(i, name)| {
            let mut t = table([("name", name.clone().into())]);
            t.extend(retry_rule(p.retry_of(i)).map(|(k, v)| (k.to_string(), v)));
            if *p.backoff_of(i) != Backoff::IMMEDIATE {
                t.insert("backoff".into(), backoff(p.backoff_of(i)));
            }
            Value::Table(t)
        });
    Value::Array(list.collect())
}

#[expect(
    clippy::too_many_lines,
    reason = "110 lines: to be split by what it does"
)]
fn policy(p: &Policy, tools: &[Tool]) -> Value {
    let mut t = table([("name", p.name.clone().into())]);
    if p.layers.is_none() {
        t.extend(retry_rule(&p.retry).map(|(k, v)| (k.to_string(), v)));
    }
    t.extend(
        [
            ("retry_after", p.pushback.mode.name().into()),
            ("timeout", p.timeout.to_string().into()),
            ("idempotency_key", p.key.name().into()),
            ("safety_gate", p.safety_gate.into()),
            ("lookup_before_retry", p.lookup_before_retry.into()),
        ]
        .map(|(k, v): (&str, Value)| (k.to_string(), v)),
    );
    if p.balancer != Balancer::RoundRobin {
        t.insert("balancer".into(), p.balancer.name().into());
    }
    if p.retry_host != RetryHost::Any {
        t.insert("retry_host".into(), p.retry_host.name().into());
    }
    if let Some(o) = &p.outlier_detection {
        let rule = table([
            ("consecutive_5xx", i64::from(o.consecutive_5xx).into()),
            ("base_ejection_time", duration(o.base_ejection_time)),
            ("max_ejection_time", duration(o.max_ejection_time)),
            ("max_ejection_percent", o.max_ejection_percent.into()),
        ]);
        t.insert("outlier_detection".into(), Value::Table(rule));
    }
    if p.should_retry != ShouldRetry::Ignore {
        t.insert("should_retry".into(), p.should_retry.name().into());
    }
    if p.payload_drift > 0.0 {
        t.insert("payload_drift".into(), p.payload_drift.into());
    }
    if p.hedge != Wait::None {
        t.insert("hedge_delay".into(), p.hedge.to_string().into());
    }
    if p.hedging != Hedging::Single {
        t.insert("hedging".into(), p.hedging.name().into());
    }
    if p.pushback.jitter > Tick::ZERO {
        t.insert("retry_after_jitter".into(), duration(p.pushback.jitter));
    }
    if let Some(max) = p.pushback.max {
        t.insert("retry_after_max".into(), duration(max));
    }
    if p.pushback.resets {
        t.insert("retry_after_resets".into(), true.into());
    }
    if let Some(over) = p.pushback.over_backoff {
        t.insert("retry_after_over_backoff".into(), duration(over));
    }
    if p.pushback.retries {
        t.insert("retry_after_retries".into(), true.into());
    }
    if p.scope != GateScope::Tool {
        t.insert("scope".into(), p.scope.name().into());
    }
    if let Some(b) = &p.throttle_backoff {
        t.insert("throttle_backoff".into(), backoff(b));
    }
    if p.timeout_tie != Tie::Late {
        t.insert("timeout_tie".into(), p.timeout_tie.name().into());
    }
    match &p.layers {
        None if p.backoff != Backoff::IMMEDIATE => {
            t.insert("backoff".into(), backoff(&p.backoff));
        }
        None => {}
        Some(l) => {
            t.insert("layers".into(), layers(p, l));
            t.insert("reset_each_layer".into(), l.reset_each.into());
        }
    }
    let limits = [
        ("deadline", p.limits.deadline.map(duration)),
        (
            "dispatch_cap",
            p.limits.dispatch_cap.map(|c| Value::Integer(c.into())),
        ),
        ("cancel_after", p.limits.cancel_after.map(duration)),
    ];
    for (key, value) in limits {
        if let Some(v) = value {
            t.insert(key.into(), v);
        }
    }
    if let Some(b) = &p.breaker {
        t.insert("breaker".into(), breaker(b));
    }
    if let Some(c) = &p.concurrency {
        t.insert("concurrency".into(), concurrency(c));
    }
    if let Some(r) = &p.send_rate {
        let rate = table([
            ("min_rate", r.min_rate.into()),
            ("beta", r.beta.into()),
            ("scale", r.scale.into()),
            ("smoothing", r.smoothing.into()),
            ("measure_bin", duration(r.measure_bin)),
        ]);
        t.insert("send_rate".into(), Value::Table(rate));
    }
    if let Some(a) = &p.limits.admission {
        t.insert(
            "admission".into(),
            Value::Table(table([
                ("reserve", duration(a.reserve)),
                ("min_attempt", duration(a.min_attempt)),
                ("timeout_cap", duration(a.timeout_cap)),
            ])),
        );
    }
    if let Some(b) = &p.retry_budget {
        t.insert("retry_budget".into(), retry_budget(b));
    }
    if let Some(calls) = &p.calls {
        let names = calls
            .iter()
            .map(|&c| tools[c].name.clone().into())
            .collect();
        t.insert("calls".into(), Value::Array(names));
    }
    Value::Table(t)
}

/// The sweep as a config: its base experiment, and its axes if it has any.
pub fn resolved(sweep: &Sweep) -> Table {
    let mut t = experiment(&sweep.base);
    if !sweep.axes.is_empty() {
        let axes = sweep
            .axes
            .iter()
            .map(|a| {
                Value::Table(table([
                    ("path", a.path.clone().into()),
                    (
                        "values",
                        Value::Array(a.values.iter().map(|p| p.0.clone()).collect()),
                    ),
                ]))
            })
            .collect();
        t.insert(
            "sweep".into(),
            Value::Table(table([
                ("mode", if sweep.zip { "zip" } else { "grid" }.into()),
                ("axis", Value::Array(axes)),
            ])),
        );
    }
    t
}

/// The workload as a config table.
fn workload(w: &Workload, tools: &[Tool]) -> Table {
    let mut t = Table::new();
    if let Some(tasks) = w.tasks {
        t.insert("tasks".into(), Value::Integer(tasks as i64));
    }
    if let Some(d) = w.duration {
        t.insert("duration".into(), duration(d));
    }
    let calls = w.calls.iter().map(|&c| tools[c].name.clone().into());
    t.insert("calls".into(), Value::Array(calls.collect()));
    t.insert("clients".into(), Value::Integer(w.clients.into()));
    if w.callers > 1 {
        t.insert("callers".into(), Value::Integer(w.callers.into()));
    }
    let kind = if w.arrival == Arrival::Batch {
        "batch"
    } else {
        "poisson"
    };
    t.insert("arrival".into(), kind.into());
    match &w.arrival {
        Arrival::Batch => {}
        Arrival::Poisson { mean_gap } => {
            t.insert("mean_interarrival".into(), float_ticks(*mean_gap));
        }
        Arrival::Scheduled(s) => {
            let point = |p: &RatePoint| {
                Value::Table(table([
                    ("at", duration(p.at)),
                    ("per_second", p.per_second.into()),
                    ("ramp", p.ramp.into()),
                ]))
            };
            t.insert(
                "rate".into(),
                Value::Array(s.points().iter().map(point).collect()),
            );
        }
    }
    t
}

/// The experiment as a config table.
fn experiment(exp: &Experiment) -> Table {
    let workload = workload(&exp.workload, &exp.tools);
    let names = |names: Vec<&str>| Value::Array(names.into_iter().map(Value::from).collect());
    let mut output = table([
        ("intents", exp.output.intents.into()),
        ("attempts", exp.output.attempts.into()),
        (
            "charts",
            names(exp.output.charts.iter().map(|c| c.name()).collect()),
        ),
        (
            "chart_formats",
            names(exp.output.chart_formats.iter().map(|f| f.name()).collect()),
        ),
    ]);
    let mut t = table([
        ("name", exp.name.clone().into()),
        ("description", exp.description.clone().into()),
        ("seed", Value::Integer(exp.seed as i64)),
        ("replications", Value::Integer(exp.replications as i64)),
        ("horizon", duration(exp.horizon)),
        ("workload", Value::Table(workload)),
    ]);
    t.insert(
        "tool".into(),
        Value::Array(exp.tools.iter().map(tool::tool).collect()),
    );
    t.insert(
        "policy".into(),
        Value::Array(exp.policies.iter().map(|p| policy(p, &exp.tools)).collect()),
    );
    if let Some(width) = exp.output.timeseries {
        output.insert("timeseries".into(), duration(width));
    }
    t.insert("output".into(), Value::Table(output));
    t
}
