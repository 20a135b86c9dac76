//! An experiment written back as a config, every default filled in: what the manifest records,
//! so a reader sees exactly what ran and can run it again.
//!
//! It fills the config's own serde types ([`raw`]) and serializes them, so every key is named
//! once, by its field; the struct literals list every field, so a new key cannot be left out of
//! the manifest without the compiler asking. A tool's table is filled in [`tool`].

mod tool;

use toml::{Spanned, Table, Value};

use super::raw;
use crate::experiment::Experiment;
use crate::model::{Arrival, RatePoint, Tool, Workload};
use crate::policy::{
    Attempts, Backoff, Balancer, BreakerRule, BudgetRule, Cap, ConcurrencyRule, FirstRetry, Jitter,
    Layers, LimitRule, Policy, Propagation, Refuses, Retry, Trip, Window,
};
use crate::sweep::Sweep;
use crate::time::Tick;

/// The sweep as a config: its base experiment, and its axes if it has any.
pub fn resolved(sweep: &Sweep) -> Table {
    let mut config = experiment(&sweep.base);
    if !sweep.axes.is_empty() {
        let axes = sweep.axes.iter().map(|a| {
            at(raw::Axis {
                path: at(a.path.clone()),
                values: some(a.values.iter().map(|p| at(p.0.clone())).collect()),
                start: None,
                stop: None,
                step: None,
            })
        });
        config.sweep = some(raw::Sweep {
            mode: text(if sweep.zip { "zip" } else { "grid" }),
            replications: None,
            axis: at(axes.collect()),
        });
    }
    Table::try_from(config).expect("a config's own types serialize to TOML")
}

/// A value as the config's types hold it; a value written back stands nowhere in a file.
fn at<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

fn some<T>(value: T) -> Option<Spanned<T>> {
    Some(at(value))
}

/// `value` where `written`: for keys listed only away from their defaults, so manifests from
/// before the key read the same.
fn when<T>(written: bool, value: T) -> Option<Spanned<T>> {
    written.then(|| at(value))
}

fn text(s: &str) -> Option<Spanned<String>> {
    some(s.to_string())
}

fn texts<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<Spanned<Vec<Spanned<String>>>> {
    some(names.into_iter().map(|n| at(n.to_string())).collect())
}

fn duration(t: Tick) -> Value {
    Value::String(t.to_string())
}

fn ticks(t: Tick) -> Option<Spanned<Value>> {
    some(duration(t))
}

/// Float ticks (distribution parameters) written back as the nearest whole tick, which is
/// what they were parsed from.
fn float_ticks(t: f64) -> Option<Spanned<Value>> {
    ticks(Tick(libm::round(t) as u64))
}

/// The experiment as a config.
fn experiment(exp: &Experiment) -> raw::Config {
    let out = &exp.output;
    raw::Config {
        name: at(exp.name.clone()),
        description: exp.description.clone(),
        seed: exp.seed,
        replications: some(exp.replications),
        horizon: ticks(exp.horizon),
        workload: at(workload(&exp.workload, &exp.tools)),
        tool: (exp.tools.iter().enumerate())
            .map(|(i, t)| at(tool::tool(t, &exp.graph.stages[i], exp)))
            .collect(),
        policy: (exp.policies.iter())
            .map(|p| at(configuration(p, exp)))
            .collect(),
        output: raw::Output {
            intents: out.intents,
            attempts: out.attempts,
            charts: texts(out.charts.iter().map(|c| c.name())),
            chart_formats: texts(out.chart_formats.iter().map(|f| f.name())),
            timeseries: out.timeseries.and_then(ticks),
        },
        sweep: None,
        schedule: exp
            .schedule
            .as_ref()
            .map(|fates| at(fates.iter().map(|f| at(f.name().to_string())).collect())),
        explore: None,
        tune: None,
    }
}

/// The workload as a config table.
fn workload(w: &Workload, tools: &[Tool]) -> raw::Workload {
    let point = |p: &RatePoint| {
        at(raw::RatePoint {
            at: at(duration(p.at)),
            per_second: at(p.per_second),
            ramp: some(p.ramp),
        })
    };
    raw::Workload {
        agent: w.agent.as_ref().map(|a| {
            at(raw::Agent {
                turns: at(tool::tokens(&a.turns)),
                result_tokens: some(a.result_tokens),
            })
        }),
        tasks: w.tasks.map(at),
        duration: w.duration.and_then(ticks),
        calls: some(task_calls(w, tools)),
        clients: some(w.clients),
        callers: when(w.callers > 1, w.callers),
        arrival: text(if w.arrival == Arrival::Batch {
            "batch"
        } else {
            "poisson"
        }),
        mean_interarrival: match w.arrival {
            Arrival::Poisson { mean_gap } => float_ticks(mean_gap),
            _ => None,
        },
        rate: match &w.arrival {
            Arrival::Scheduled(s) => some(s.points().iter().map(point).collect()),
            _ => None,
        },
        rate_scale: None,
    }
}

/// The backoff with every default filled in; the rules added since the first backoff are
/// listed only where they differ from their defaults.
fn backoff(b: &Backoff) -> raw::Backoff {
    raw::Backoff {
        kind: text(b.growth.name()),
        initial_delay: ticks(b.initial_delay),
        multiplier: some(b.multiplier),
        max_delay: some(b.max_delay.map_or("none".into(), duration)),
        jitter: text(b.jitter.name()),
        count_from: when(b.count_from != 0, b.count_from),
        cap: when(b.cap != Cap::BeforeJitter, b.cap.name().into()),
        jitter_factor: when(
            matches!(b.jitter, Jitter::Proportional | Jitter::Reduced),
            b.jitter_factor,
        ),
        jitter_max: when(b.jitter == Jitter::Additive, duration(b.jitter_max)),
        min_delay: when(b.min_delay > Tick::ZERO, duration(b.min_delay)),
        first_retry: when(
            b.first_retry != FirstRetry::Backoff,
            b.first_retry.name().into(),
        ),
    }
}

fn breaker(b: &BreakerRule) -> raw::Breaker {
    let (consecutive, rate) = match b.trip {
        Trip::Consecutive(n) => (Some(n), None),
        Trip::Rate {
            rate,
            window,
            minimum_calls,
        } => (None, Some((rate, window, minimum_calls))),
    };
    let window = |w: Window| match w {
        Window::Calls(n) => Value::Integer(n.into()),
        Window::Time(span) => duration(span),
    };
    raw::Breaker {
        consecutive_failures: consecutive.map(at),
        failure_rate: rate.map(|(r, _, _)| at(r)),
        window: rate.map(|(_, w, _)| at(window(w))),
        minimum_calls: rate.map(|(_, _, m)| at(m)),
        refuses: when(b.refuses != Refuses::All, b.refuses.name().into()),
        open_duration: ticks(b.open_duration),
        half_open_probes: some(b.half_open_probes),
        counts: texts(b.counts.classes().map(|c| c.name())),
    }
}

fn concurrency(c: &ConcurrencyRule) -> raw::Concurrency {
    let (kind, limit, aimd) = match c.limit {
        LimitRule::Fixed(n) => ("fixed", n, None),
        LimitRule::Aimd {
            initial,
            min,
            max,
            increase,
            decrease,
        } => ("aimd", initial, Some((min, max, increase, decrease))),
    };
    raw::Concurrency {
        kind: text(kind),
        limit: at(limit),
        min: aimd.map(|a| at(a.0)),
        max: aimd.map(|a| at(a.1)),
        increase: aimd.map(|a| at(a.2)),
        decrease: aimd.map(|a| at(a.3)),
        queue: some(c.queue),
    }
}

fn retry_budget(b: &BudgetRule) -> raw::RetryBudget {
    let mut out = raw::RetryBudget::of_kind(at(b.name().to_string()));
    match *b {
        BudgetRule::TokenBucket {
            max_tokens,
            token_ratio,
            debits,
        } => {
            out.max_tokens = some(max_tokens);
            out.token_ratio = some(token_ratio);
            out.debit_on = when(debits.is_some(), "retryable".into());
        }
        BudgetRule::AwsStandard {
            capacity,
            retry_cost,
            timeout_cost,
            throttle_cost,
            success_credit,
        } => {
            out.capacity = some(capacity);
            out.retry_cost = some(retry_cost);
            out.timeout_cost = some(timeout_cost);
            out.success_credit = some(success_credit);
            out.throttle_cost = throttle_cost.map(at);
        }
        BudgetRule::Ratio {
            ttl,
            min_per_second,
            percent,
        } => {
            out.ttl = ticks(ttl);
            out.min_per_second = some(min_per_second);
            out.percent = some(percent);
        }
        BudgetRule::Adaptive {
            size,
            deposit,
            on_success,
        } => {
            out.size = some(size);
            out.deposit = some(deposit);
            out.deposit_on = text(if on_success { "success" } else { "first_try" });
        }
        BudgetRule::FailureRatio { ratio } => out.ratio = some(ratio),
    }
    out
}

/// A retry rule's `max_attempts` and `retry_on`.
type Rule = (
    Option<Spanned<Value>>,
    Option<Spanned<Vec<Spanned<String>>>>,
);

fn retry_rule(retry: &Retry) -> Rule {
    let max_attempts = match retry.max_attempts {
        Attempts::AtMost(n) => Value::Integer(n.into()),
        Attempts::Unlimited => "unlimited".into(),
    };
    let retry_on = texts(retry.retry_on.classes().map(|c| c.name()));
    (some(max_attempts), retry_on)
}

/// A policy's retry layers, outermost first, each with its name, rule and backoff.
fn layers(p: &Policy, layers: &Layers) -> Vec<Spanned<raw::Layer>> {
    let names = layers.outer.iter().map(|l| &l.name);
    let list = names
        .chain([&layers.innermost])
        .enumerate()
        .map(|(i, name)| {
            let (max_attempts, retry_on) = retry_rule(p.retry_of(i));
            let curve = p.backoff_of(i);
            at(raw::Layer {
                name: at(name.clone()),
                max_attempts,
                retry_on,
                backoff: when(*curve != Backoff::IMMEDIATE, backoff(curve)),
            })
        });
    list.collect()
}

/// A configuration: its policy, named, with the policies of the edges it names.
fn configuration(p: &Policy, exp: &Experiment) -> raw::Policy {
    let edges = (p.edges.iter()).map(|(e, policy)| {
        let mut written = self::policy(policy, &exp.tools);
        written.name = None;
        (exp.graph.edges[*e].name(&exp.tools), at(written))
    });
    raw::Policy {
        edge: (!p.edges.is_empty()).then(|| at(edges.collect())),
        ..policy(p, &exp.tools)
    }
}

/// Peak EWMA's decay time, written whenever the balancer is peak EWMA.
fn decay(balancer: Balancer) -> Option<Spanned<Value>> {
    match balancer {
        Balancer::PeakEwma(decay) => some(decay.to_string().into()),
        _ => None,
    }
}

fn policy(p: &Policy, tools: &[Tool]) -> raw::Policy {
    let (max_attempts, retry_on) = match p.layers {
        None => retry_rule(&p.retry),
        Some(_) => (None, None),
    };
    let single = p.layers.is_none();
    // A key is left out where it is what `Policy::new` leaves, as validation reads it.
    let base = Policy::new("");
    let limits = &p.limits;
    let pushback = &p.pushback;
    let (send_rate, send_tokens) = client_buckets(p);
    raw::Policy {
        name: some(p.name.clone()),
        max_attempts,
        retry_on,
        retry_after: text(pushback.mode.name()),
        timeout: some(p.timeout.to_string().into()),
        idempotency_key: text(p.key.name()),
        safety_gate: p.safety_gate,
        lookup_before_retry: p.lookup_before_retry,
        balancer: when(p.balancer != base.balancer, p.balancer.name().into()),
        peak_ewma_decay: decay(p.balancer),
        retry_host: when(p.retry_host != base.retry_host, p.retry_host.name().into()),
        outlier_detection: p.outlier_detection.as_ref().map(|o| {
            at(raw::OutlierDetection {
                consecutive_5xx: some(o.consecutive_5xx),
                base_ejection_time: ticks(o.base_ejection_time),
                max_ejection_time: ticks(o.max_ejection_time),
                max_ejection_percent: some(o.max_ejection_percent),
            })
        }),
        should_retry: when(
            p.should_retry != base.should_retry,
            p.should_retry.name().into(),
        ),
        payload_drift: when(p.payload_drift > 0.0, p.payload_drift),
        hedge_delay: when(p.hedge != base.hedge, p.hedge.to_string().into()),
        hedging: when(p.hedging != base.hedging, p.hedging.name().into()),
        retry_after_jitter: when(
            pushback.jitter != base.pushback.jitter,
            duration(pushback.jitter),
        ),
        retry_after_max: pushback.max.and_then(ticks),
        retry_after_resets: when(pushback.resets, true),
        retry_after_over_backoff: pushback.over_backoff.and_then(ticks),
        retry_after_limit: pushback.limit.and_then(|l| ticks(l.0)),
        retry_after_over_limit: pushback.limit.and_then(|l| text(l.1.name())),
        retry_after_from: when(
            pushback.from != base.pushback.from,
            pushback.from.name().into(),
        ),
        retry_after_retries: when(pushback.retries, true),
        scope: when(p.scope != base.scope, p.scope.name().into()),
        throttle_backoff: p.throttle_backoff.as_ref().map(|b| at(backoff(b))),
        timeout_tie: when(
            p.timeout_tie != base.timeout_tie,
            p.timeout_tie.name().into(),
        ),
        backoff: when(single && p.backoff != base.backoff, backoff(&p.backoff)),
        layers: p.layers.as_ref().map(|l| at(layers(p, l))),
        reset_each_layer: p.layers.as_ref().map(|l| at(l.reset_each)),
        deadline: limits.deadline.and_then(ticks),
        dispatch_cap: limits.dispatch_cap.map(at),
        cancel_after: limits.cancel_after.and_then(ticks),
        breaker: p.breaker.as_ref().map(|b| at(breaker(b))),
        concurrency: p.concurrency.as_ref().map(|c| at(concurrency(c))),
        send_tokens,
        resume: when(p.resume, true),
        replan: p.replan.map(|r| {
            at(raw::Replan {
                from: at(r.from.name().to_string()),
                max: some(r.max),
            })
        }),
        send_rate,
        admission: limits.admission.as_ref().map(|a| {
            at(raw::Admission {
                reserve: at(duration(a.reserve)),
                min_attempt: at(duration(a.min_attempt)),
                timeout_cap: at(duration(a.timeout_cap)),
            })
        }),
        retry_budget: p.retry_budget.as_ref().map(|b| at(retry_budget(b))),
        calls: (p.calls.as_ref())
            .and_then(|calls| texts(calls.iter().map(|&c| tools[c].name.as_str()))),
        edge: None,
        deadline_propagation: when(
            p.propagation != base.propagation,
            p.propagation.name().into(),
        ),
        deadline_margin: match p.propagation {
            Propagation::Propagate { margin } if margin > Tick::ZERO => ticks(margin),
            _ => None,
        },
        fallback: (!p.fallback.tools.is_empty())
            .then(|| texts(p.fallback.tools.iter().map(|&t| tools[t].name.as_str())))
            .flatten(),
        cooldown_after: p.fallback.cooldown.map(|c| at(c.after)),
        cooldown: p.fallback.cooldown.and_then(|c| ticks(c.lasts)),
        preset: None,
        note: None,
    }
}

/// A policy's client-side bucket as written: adaptive (`send_rate`) or of tokens
/// (`send_tokens`).
fn client_buckets(
    p: &Policy,
) -> (
    Option<Spanned<raw::SendRate>>,
    Option<Spanned<raw::SendTokens>>,
) {
    let send_rate = p.send_rate.as_ref().map(|r| {
        at(raw::SendRate {
            min_rate: some(r.min_rate),
            beta: some(r.beta),
            scale: some(r.scale),
            smoothing: some(r.smoothing),
            measure_bin: ticks(r.measure_bin),
        })
    });
    let send_tokens = p.send_tokens.map(|t| {
        at(raw::SendTokens {
            per_minute: at(t.per_minute),
            burst: some(t.burst),
        })
    });
    (send_rate, send_tokens)
}

/// The task's calls as written: names in order, or its stages — a name for a lone call that
/// is needed, a table for an optional one, a list for calls made together (a call made `times`
/// over written that many times, which reads the same).
fn task_calls(w: &Workload, tools: &[Tool]) -> Vec<Spanned<Value>> {
    let name = |t: usize| Value::String(tools[t].name.clone());
    let call = |&(t, optional): &(usize, bool)| match optional {
        false => name(t),
        true => Value::Table(toml::map::Map::from_iter([
            ("call".to_string(), name(t)),
            ("optional".to_string(), Value::Boolean(true)),
        ])),
    };
    match &w.stages {
        None => w.calls.iter().map(|&t| at(name(t))).collect(),
        Some(stages) => (stages.iter())
            .map(|stage| match stage.as_slice() {
                [one] => at(call(one)),
                many => at(Value::Array(many.iter().map(call).collect())),
            })
            .collect(),
    }
}
