//! The workload: how many tasks or for how long they arrive, the tools each calls, and when
//! they arrive — all at once, as a Poisson stream of constant rate, or one whose rate follows
//! a schedule of steps and ramps.

use toml::Spanned;

use super::super::check::{Check, Result};
use super::super::raw;
use super::default;
use crate::config::latency::tokens;
use crate::model::{AgentLoop, Arrival, Crash, RatePoint, RateSchedule, Tool, ToolKind, Workload};
use crate::time::{DURATION_HELP, Tick};

/// A task's stages: each its calls, with whether each is optional.
type Stages = Vec<Vec<(usize, bool)>>;

/// The task's calls: a list of tool names called in order, or stages as a service's (a list
/// called together, `{ call, optional, times }`); the calls in order, and the stages where
/// they are more than a list of names.
fn task_calls(
    check: &Check,
    list: &Spanned<Vec<Spanned<toml::Value>>>,
    tools: &[Tool],
    below: &[u64],
) -> Result<(Vec<usize>, Option<Stages>)> {
    let path = "workload.calls";
    let names: Option<Vec<Spanned<String>>> = (list.get_ref().iter())
        .map(|v| {
            v.get_ref()
                .as_str()
                .map(|s| Spanned::new(v.span(), s.to_string()))
        })
        .collect();
    if let Some(names) = names {
        let names = Spanned::new(list.span(), names);
        return Ok((calls(check, &names, path, tools)?, None));
    }
    let mut stages = Vec::new();
    let mut under_task: u64 = 0;
    for (i, step) in list.get_ref().iter().enumerate() {
        let at = format!("{path}[{i}]");
        let mut stage = Vec::new();
        for (value, at, call, times) in super::graph::stage_of(check, step, &at, tools)? {
            let most = super::graph::MOST_CALLS_BELOW;
            under_task =
                under_task.saturating_add((times as u64).saturating_mul(1 + below[call.0]));
            if under_task > most {
                return check.error_allowing(
                    value.span(),
                    &at,
                    format!("a task's calls lead to more than {most} calls: fan-outs down a path multiply"),
                    &format!("at most {most} calls below a task, every level and `times` counted"),
                );
            }
            stage.extend(std::iter::repeat_n(call, times));
        }
        stages.push(stage);
    }
    let calls = stages.iter().flatten().map(|c| c.0).collect();
    Ok((calls, Some(stages)))
}

/// A list of tool names: the tools a task calls, in order.
pub(super) fn calls(
    check: &Check,
    list: &Spanned<Vec<Spanned<String>>>,
    path: &str,
    tools: &[Tool],
) -> Result<Vec<usize>> {
    if list.get_ref().is_empty() {
        return check.error_allowing(
            list.span(),
            path,
            "a task must call at least one tool".into(),
            "a list of tool names",
        );
    }
    let options: Vec<(&str, usize)> = tools
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, name)| check.choice(name, &format!("{path}[{i}]"), &options))
        .collect()
}

/// The most callers a workload may have: a limit or gate scoped to the caller keeps a state
/// for each, made up front.
pub const MOST_CALLERS: u64 = 100_000;

/// The workload; a task without a list of calls calls `roots`.
pub(super) fn workload(
    check: &Check,
    spanned: &Spanned<raw::Workload>,
    tools: &[Tool],
    roots: Vec<usize>,
    below: &[u64],
) -> Result<Workload> {
    let raw = spanned.get_ref();
    let tasks = match &raw.tasks {
        None => None,
        Some(n) => Some(check.count(Some(n), "workload.tasks", 0, "0 tasks run nothing")?),
    };
    let (calls, stages) = match &raw.calls {
        None => (roots, None),
        Some(list) => task_calls(check, list, tools, below)?,
    };
    let clients = check.count(
        raw.clients.as_ref(),
        "workload.clients",
        default::CLIENTS,
        "0 clients serve no task",
    )?;
    let callers = check.count_to(
        raw.callers.as_ref(),
        "workload.callers",
        (1, "0 callers send no task"),
        MOST_CALLERS,
        "the most callers a workload may have (each has its own buckets and gates at every tool)",
    )?;
    let arrival = arrival(check, spanned)?;
    // Recorded arrivals are as many as the file lists, unless `tasks` takes fewer.
    let tasks = match (&arrival, tasks) {
        (Arrival::Recorded(r), None) => Some(r.times.len() as u64),
        (_, tasks) => tasks,
    };
    let duration = match &raw.duration {
        None => None,
        Some(_) if arrival == Arrival::Batch => {
            return check.error_allowing(
                raw.duration.as_ref().map_or(0..0, |d| d.span()),
                "workload.duration",
                "a batch arrives at once: it has no duration".into(),
                "arrival = \"poisson\" beside a duration, or tasks = N",
            );
        }
        Some(d) => {
            let duration = check.duration(d, "workload.duration")?;
            if duration == Tick::ZERO {
                return check.error_allowing(
                    d.span(),
                    "workload.duration",
                    "arrivals for 0s bring no task".into(),
                    "a positive duration",
                );
            }
            Some(duration)
        }
    };
    if tasks.is_none() && duration.is_none() {
        return check.error_allowing(
            spanned.span(),
            "workload.tasks",
            "the workload says neither how many tasks nor for how long they arrive".into(),
            "tasks = N, or (for a Poisson stream) duration = \"60s\"",
        );
    }
    let agent = match &raw.agent {
        None => None,
        Some(a) => Some(agent(check, a, raw, &calls, tools)?),
    };
    let crash = match &raw.crash {
        None => None,
        Some(c) => Some(crash(check, c, &stages, agent.is_some(), below)?),
    };
    let workload = Workload {
        tasks,
        duration,
        calls,
        stages,
        agent,
        arrival,
        clients,
        callers,
        crash,
    };
    in_flight(check, spanned, &workload, below)?;
    Ok(workload)
}

/// Crashing workers: both times above 0. A worker holds one call at a time, so crashes are
/// refused beside stages (calls together), agent loops and calls with calls of their own
/// below them (a service's), whose crash would take more than one call with it.
fn crash(
    check: &Check,
    spanned: &Spanned<raw::Crash>,
    stages: &Option<Stages>,
    agent: bool,
    below: &[u64],
) -> Result<Crash> {
    let path = "workload.crash";
    let beside = |what: &str| {
        check.error_allowing(
            spanned.span(),
            path,
            format!("crashing workers beside {what}: a worker here holds one call at a time"),
            "a workload whose tasks make their calls one after another, to tools that call none",
        )
    };
    if stages.is_some() {
        return beside("calls in stages");
    }
    if agent {
        return beside("an agent loop");
    }
    if below.iter().any(|&b| b > 0) {
        return beside("a call graph");
    }
    let c = spanned.get_ref();
    let time = |value: &Spanned<toml::Value>, key: &str, why: &str| -> Result<Tick> {
        let key = format!("{path}.{key}");
        match check.duration(value, &key)? {
            Tick::ZERO => check.error_allowing(
                value.span(),
                &key,
                why.into(),
                "a duration above 0, such as \"10s\"",
            ),
            t => Ok(t),
        }
    };
    let renewed = c.renewed.as_ref().is_none_or(|r| *r.get_ref());
    // A lease held for a fixed term lapses under a living worker: a table of its own.
    if c.mean_uptime.is_none() && c.at.is_none() && renewed {
        return check.error_allowing(
            spanned.span(),
            path,
            "workers that crash neither at a rate nor at a scripted point, under leases they \
             renew"
                .into(),
            "`mean_uptime = \"60s\"` (a crash every minute a worker holds calls, on average), \
             `at = \"15ms\"` (each call's first worker, that long into it), or \
             `renewed = false` (each lease a fixed term, which may lapse under a living worker)",
        );
    }
    let uptime = "a mean uptime of 0 crashes every worker at once";
    let point = "a crash at 0 comes before the call is sent: nothing was held";
    Ok(Crash {
        mean_uptime: (c.mean_uptime.as_ref())
            .map(|v| time(v, "mean_uptime", uptime))
            .transpose()?,
        at: c.at.as_ref().map(|v| time(v, "at", point)).transpose()?,
        lease: time(
            &c.lease,
            "lease",
            "a lease of 0 hands a call over the moment its worker stops renewing it, a race \
             no lease allows",
        )?,
        renewed,
        max_deliveries: check.count_to(
            c.max_deliveries.as_ref(),
            &format!("{path}.max_deliveries"),
            (
                crate::model::crash::DELIVERIES,
                "0 deliveries hand the call to no worker",
            ),
            u64::from(crate::model::crash::MOST_DELIVERIES),
            "the most deliveries a call's item may have",
        )?,
        stall: match &c.stall {
            None => None,
            Some(v) => {
                let stall = time(v, "stall", "a stall of 0 is no stall")?;
                let lease = check.duration(&c.lease, &format!("{path}.lease"))?;
                if stall <= lease {
                    return check.error_allowing(
                        v.span(),
                        &format!("{path}.stall"),
                        format!("a stall of {stall} within the lease of {lease}: the worker wakes still holding its call, a pause retrysim does not model"),
                        &format!("a stall longer than the lease, such as \"{}\"", lease.after(lease)),
                    );
                }
                Some(stall)
            }
        },
    })
}

/// The most calls a workload may have in flight at once: each holds about a kilobyte, so this
/// is about a gigabyte.
pub const MOST_IN_FLIGHT: u64 = 1_000_000;

/// Refuses a workload that could have more than [`MOST_IN_FLIGHT`] calls in flight at once:
/// its clients (or its tasks, where fewer) each with the calls one task has out together —
/// a call and every call below it, the calls of a stage together.
fn in_flight(
    check: &Check,
    spanned: &Spanned<raw::Workload>,
    w: &Workload,
    below: &[u64],
) -> Result<()> {
    let call = |c: usize| 1u64.saturating_add(below[c]);
    let per_task = match &w.stages {
        None => w.calls.iter().map(|&c| call(c)).max().unwrap_or(1),
        Some(stages) => (stages.iter())
            .map(|s| s.iter().map(|c| call(c.0)).fold(0, u64::saturating_add))
            .max()
            .unwrap_or(1),
    };
    let at_once = u64::from(w.clients).min(w.most_tasks());
    let calls = at_once.saturating_mul(per_task);
    if calls <= MOST_IN_FLIGHT {
        return Ok(());
    }
    let raw = spanned.get_ref();
    let span = (raw.clients.as_ref()).map_or_else(|| spanned.span(), Spanned::span);
    check.error_allowing(
        span,
        "workload.clients",
        format!(
            "{at_once} tasks at once, each with up to {per_task} calls out together, could hold \
             {calls} calls in flight, more than the {MOST_IN_FLIGHT} a run holds (about a \
             kilobyte each)"
        ),
        &format!("clients × a task's calls out together at most {MOST_IN_FLIGHT}: fewer clients or smaller fan-outs"),
    )
}

/// When tasks arrive: `batch` (the default), `poisson` with a mean gap or a rate schedule, or
/// `recorded`, at the times a file lists.
fn arrival(check: &Check, spanned: &Spanned<raw::Workload>) -> Result<Arrival> {
    let raw = spanned.get_ref();
    let recorded = raw
        .arrival
        .as_ref()
        .is_some_and(|a| a.get_ref() == "recorded");
    match (&raw.arrivals, recorded) {
        (Some(file), true) => return recorded_arrivals(check, raw, file),
        (None, true) => {
            let a = raw.arrival.as_ref().expect("recorded");
            return check.error_allowing(
                a.span(),
                "workload.arrivals",
                "arrival = \"recorded\" replays the arrivals a file lists: name it".into(),
                "arrivals = \"data/<name>/arrivals.csv\", a CSV with a column `at`",
            );
        }
        (Some(file), false) => {
            return check.error_allowing(
                file.span(),
                "workload.arrivals",
                "a file of arrivals is replayed only where arrival = \"recorded\"".into(),
                "arrival = \"recorded\" beside it, or no `arrivals`",
            );
        }
        (None, false) => {}
    }
    let batch = raw.arrival.as_ref().map_or(Ok(true), |a| {
        check.choice(
            a,
            "workload.arrival",
            &[("batch", true), ("poisson", false), ("recorded", false)],
        )
    })?;
    let poisson_help = "arrival = \"poisson\" with mean_interarrival or a rate schedule";
    if let (Some(scale), None) = (&raw.rate_scale, &raw.rate) {
        return check.error_allowing(
            scale.span(),
            "workload.rate_scale",
            "there is no rate schedule to scale".into(),
            "a [[workload.rate]] schedule beside rate_scale",
        );
    }
    match (batch, &raw.mean_interarrival, &raw.rate) {
        (_, Some(gap), Some(_)) => check.error_allowing(
            gap.span(),
            "workload.mean_interarrival",
            "a stream has one rate: a mean gap, or a schedule, not both".into(),
            "mean_interarrival, or [[workload.rate]] points",
        ),
        (true, None, None) => Ok(Arrival::Batch),
        (true, Some(gap), None) => check.error_allowing(
            gap.span(),
            "workload.mean_interarrival",
            "batch arrivals have no interarrival time".into(),
            &format!("{poisson_help}, or neither"),
        ),
        (true, None, Some(rate)) => check.error_allowing(
            rate.span(),
            "workload.rate",
            "batch arrivals have no rate".into(),
            &format!("{poisson_help}, or neither"),
        ),
        (false, Some(gap), None) => {
            let mean = check.duration(gap, "workload.mean_interarrival")?;
            if mean == Tick::ZERO {
                return check.error_allowing(
                    gap.span(),
                    "workload.mean_interarrival",
                    "a Poisson stream needs a positive mean gap".into(),
                    "a positive duration",
                );
            }
            Ok(Arrival::Poisson {
                mean_gap: mean.0 as f64,
            })
        }
        (false, None, Some(rate)) => schedule(check, rate, &raw.rate_scale).map(Arrival::Scheduled),
        (false, None, None) => {
            let span = raw.arrival.as_ref().map_or(spanned.span(), |a| a.span());
            check.error_allowing(
                span,
                "workload.mean_interarrival",
                "arrival = \"poisson\" needs mean_interarrival or a rate schedule".into(),
                DURATION_HELP,
            )
        }
    }
}

/// `arrival = "recorded"`: the times `file` lists, alone (a recorded stream has no rate).
fn recorded_arrivals(
    check: &Check,
    raw: &raw::Workload,
    file: &Spanned<String>,
) -> Result<Arrival> {
    let other = [
        (
            raw.mean_interarrival.as_ref().map(Spanned::span),
            "workload.mean_interarrival",
        ),
        (raw.rate.as_ref().map(Spanned::span), "workload.rate"),
        (
            raw.rate_scale.as_ref().map(Spanned::span),
            "workload.rate_scale",
        ),
    ];
    if let Some((Some(span), path)) = other.into_iter().find(|(s, _)| s.is_some()) {
        return check.error_allowing(
            span,
            path,
            "recorded arrivals come when the file says: they have no rate".into(),
            "arrivals alone, or arrival = \"poisson\" with a rate",
        );
    }
    let read = crate::config::latency::arrival_times(check, file, "workload.arrivals")?;
    Ok(Arrival::Recorded(crate::model::workload::Recorded {
        file: read.file,
        times: read.samples,
    }))
}

/// The points of `[[workload.rate]]`: the first at 0s, each later than the one before, rates
/// of zero or more, some of them positive, and no ramp from the last (it has nowhere to go);
/// and the positive scale every rate is multiplied by.
fn schedule(
    check: &Check,
    list: &Spanned<Vec<Spanned<raw::RatePoint>>>,
    scale: &Option<Spanned<f64>>,
) -> Result<RateSchedule> {
    let mut points: Vec<RatePoint> = Vec::new();
    for (i, spanned) in list.get_ref().iter().enumerate() {
        let path = format!("workload.rate[{i}]");
        let raw = spanned.get_ref();
        let at = check.duration(&raw.at, &format!("{path}.at"))?;
        let first = points.is_empty();
        if first && at != Tick::ZERO {
            return check.error_allowing(
                raw.at.span(),
                &format!("{path}.at"),
                format!("the schedule starts at {at}: the rate before it is unknown"),
                "a first point at \"0s\"",
            );
        }
        if let Some(before) = points.last().filter(|p| at <= p.at) {
            return check.error_allowing(
                raw.at.span(),
                &format!("{path}.at"),
                format!("{at} does not come after the point before ({})", before.at),
                "points in time order, each later than the one before",
            );
        }
        let per_second = check.number(
            Some(&raw.per_second),
            &format!("{path}.per_second"),
            0.0,
            |r| r.is_finite() && r >= 0.0,
            "a rate",
            "arrivals per second, zero or more",
        )?;
        let ramp = raw.ramp.as_ref().is_some_and(|r| *r.get_ref());
        points.push(RatePoint {
            at,
            per_second,
            ramp,
        });
    }
    let Some(last) = points.last() else {
        return check.error_allowing(
            list.span(),
            "workload.rate",
            "a schedule needs at least one point".into(),
            "[[workload.rate]] points with at and per_second",
        );
    };
    if last.ramp {
        let span = list.get_ref().last().map_or(0..0, |p| p.span());
        return check.error_allowing(
            span,
            &format!("workload.rate[{}].ramp", points.len() - 1),
            "the last point has no next point to ramp to".into(),
            "ramp = false on the last point, or another point after it",
        );
    }
    if points.iter().all(|p| p.per_second == 0.0) {
        return check.error_allowing(
            list.span(),
            "workload.rate",
            "a rate of zero throughout brings no task".into(),
            "some point with a positive per_second",
        );
    }
    let scale = check.number(
        scale.as_ref(),
        "workload.rate_scale",
        1.0,
        |s| s.is_finite() && s > 0.0,
        "a scale for a rate",
        "a positive number: 0.8 runs the schedule at 80 %",
    )?;
    Ok(RateSchedule::new(points, scale))
}

/// `agent = { turns, result_tokens }`: a loop of turns over the task's calls, which are a list
/// (not stages) whose first is a model.
fn agent(
    check: &Check,
    spanned: &Spanned<raw::Agent>,
    workload: &raw::Workload,
    calls: &[usize],
    tools: &[Tool],
) -> Result<AgentLoop> {
    let path = "workload.agent";
    let first_is_model = (calls.first()).is_some_and(|&t| tools[t].server.kind == ToolKind::Model);
    let staged =
        (workload.calls.iter().flat_map(|c| c.get_ref().iter())).any(|c| !c.get_ref().is_str());
    if workload.calls.is_none() || staged || !first_is_model {
        return check.error_allowing(
            spanned.span(),
            path,
            "an agent loop runs over a list of calls whose first is a model's".into(),
            "calls = [\"llm\", \"search\"] beside it, the first a tool of kind = \"model\"",
        );
    }
    let raw = spanned.get_ref();
    let turns = tokens(check, &raw.turns, &format!("{path}.turns"))?;
    let most = AgentLoop::MOST_TURNS;
    let allowed = format!(
        "a count of turns from 1 to {most}: dist = \"constant\", \"uniform\" or \"empirical\" (a draw of 0 takes 1)"
    );
    let why = match turns.max() {
        Some(Tick::ZERO) => "a task of 0 turns calls nothing".to_string(),
        Some(m) if m.0 > most => format!(
            "a task of {} turns is more than the {most} a task may take",
            m.0
        ),
        Some(_) => String::new(),
        None => format!(
            "a distribution without a largest value can draw more than the {most} turns a task may take"
        ),
    };
    if !why.is_empty() {
        return check.error_allowing(raw.turns.span(), &format!("{path}.turns"), why, &allowed);
    }
    Ok(AgentLoop {
        turns,
        result_tokens: raw.result_tokens.as_ref().map_or(0, |r| *r.get_ref()),
    })
}
