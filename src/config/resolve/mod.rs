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
use crate::policy::Policy;
use crate::sweep::Sweep;
use crate::time::Tick;

/// The sweep as a config: its base experiment, and its axes if it has any.
pub fn resolved(sweep: &Sweep) -> Table {
    let mut config = experiment(&sweep.base);
    if !sweep.axes.is_empty() {
        // A range is written back as a range: it makes the same values when read again.
        let axes = sweep.axes.iter().map(|a| {
            let [start, stop, step] = match &a.range {
                Some(range) => range.clone().map(|p| some(p.0)),
                None => [None, None, None],
            };
            let values = a.values.iter().map(|p| at(p.0.clone()));
            at(raw::Axis {
                path: at(a.path.clone()),
                values: (a.range.is_none()).then(|| at(values.collect())),
                start,
                stop,
                step,
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
pub(in crate::config) fn at<T>(value: T) -> Spanned<T> {
    Spanned::new(0..0, value)
}

pub(in crate::config) fn some<T>(value: T) -> Option<Spanned<T>> {
    Some(at(value))
}

/// `value` where `written`: for keys listed only away from their defaults, so manifests from
/// before the key read the same.
pub(in crate::config) fn when<T>(written: bool, value: T) -> Option<Spanned<T>> {
    written.then(|| at(value))
}

pub(in crate::config) fn text(s: &str) -> Option<Spanned<String>> {
    some(s.to_string())
}

pub(in crate::config) fn texts<'a>(
    names: impl IntoIterator<Item = &'a str>,
) -> Option<Spanned<Vec<Spanned<String>>>> {
    some(names.into_iter().map(|n| at(n.to_string())).collect())
}

pub(in crate::config) fn duration(t: Tick) -> Value {
    Value::String(t.to_string())
}

pub(in crate::config) fn ticks(t: Tick) -> Option<Spanned<Value>> {
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
        crash: w.crash.map(|c| {
            at(raw::Crash {
                mean_uptime: c.mean_uptime.and_then(ticks),
                at: c.at.and_then(ticks),
                lease: at(duration(c.lease)),
                renewed: when(!c.renewed, false),
                max_deliveries: when(
                    c.max_deliveries != crate::model::crash::DELIVERIES,
                    c.max_deliveries,
                ),
                stall: c.stall.and_then(ticks),
            })
        }),
        tasks: w.tasks.map(at),
        duration: w.duration.and_then(ticks),
        calls: some(task_calls(w, tools)),
        clients: some(w.clients),
        callers: when(w.callers > 1, w.callers),
        arrival: text(match w.arrival {
            Arrival::Batch => "batch",
            Arrival::Recorded(_) => "recorded",
            Arrival::Poisson { .. } | Arrival::Scheduled(_) => "poisson",
        }),
        mean_interarrival: match w.arrival {
            Arrival::Poisson { mean_gap } => float_ticks(mean_gap),
            _ => None,
        },
        rate: match &w.arrival {
            Arrival::Scheduled(s) => some(s.points().iter().map(point).collect()),
            _ => None,
        },
        arrivals: match &w.arrival {
            Arrival::Recorded(r) => some(r.file.clone()),
            _ => None,
        },
        rate_scale: None,
    }
}

/// A configuration: its policy, named, with the policies of the edges it names.
fn configuration(p: &Policy, exp: &Experiment) -> raw::Policy {
    let edges = (p.edge.overrides.iter()).map(|(e, policy)| {
        let mut written = crate::config::policy::write(policy, &exp.tools);
        written.name = None;
        (exp.graph.edges[*e].name(&exp.tools), at(written))
    });
    raw::Policy {
        edge: (!p.edge.overrides.is_empty()).then(|| at(edges.collect())),
        ..crate::config::policy::write(p, &exp.tools)
    }
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
