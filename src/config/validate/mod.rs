//! Raw config → [`Experiment`]: every rule a config must follow, each failure placed in the file.
//! The experiment, its workload and output are checked here; a tool in [`tool`], a policy in
//! [`crate::config::policy`], group by group.

mod burst;
mod fallback;
mod graph;
pub(crate) mod health;
mod provider;
mod tool;
mod workload;

use super::check::{Check, Result};
use super::policy::{TIMEOUT_HELP, refuse_endless_retries};
use super::{Origin, Source, raw};
use crate::experiment::{ChartFormat, ChartKind, Experiment, OutputOptions};
use crate::model::Choice;
use crate::model::Tool;
use crate::policy::{Durability, KeyScope, Policy, Wait, safety};
use crate::time::Tick;
use tool::tool;
use workload::{calls, workload};

/// The defaults of every optional key, documented in `configs/README.md`.
pub(in crate::config) mod default {
    pub const REPLICATIONS: u64 = 1;
    pub const HORIZON: &str = "24h";
    pub const CLIENTS: u32 = 100;
    pub const INITIAL_DELAY: &str = "100ms";
    pub const MULTIPLIER: f64 = 2.0;
    pub const MAX_DELAY: &str = "20s";
    /// gRPC's ±20 % (gRFC A6).
    pub const JITTER_FACTOR: f64 = 0.2;
    pub const REDUCED_JITTER_FACTOR: f64 = 0.25;
    pub const OPEN_DURATION: &str = "5s";
    pub const HALF_OPEN_PROBES: u32 = 1;
    pub const FAILURE_RATE: f64 = 0.5;
    pub const WINDOW_CALLS: u32 = 100;
    /// HTTP's Retry-After header counts whole seconds.
    pub const RETRY_AFTER_UNIT: &str = "1s";
    /// gRPC's `retryThrottling` example.
    pub const MAX_TOKENS: f64 = 10.0;
    pub const TOKEN_RATIO: f64 = 0.1;
    /// The AWS SDKs' standard retry quota.
    pub const CAPACITY: f64 = 500.0;
    pub const RETRY_COST: f64 = 5.0;
    pub const TIMEOUT_COST: f64 = 10.0;
    pub const SUCCESS_CREDIT: f64 = 1.0;
    /// Finagle's `RetryBudget`.
    pub const TTL: &str = "10s";
    pub const MIN_PER_SECOND: f64 = 10.0;
    pub const PERCENT: f64 = 0.2;
    /// The adaptive retry bucket and the retry breaker of the published studies.
    pub const ADAPTIVE_SIZE: f64 = 5.0;
    pub const ADAPTIVE_DEPOSIT: f64 = 0.1;
    pub const FAILURE_RATIO: f64 = 0.1;
    /// Netflix's `AIMDLimit` bounds and steps (a 0.9 backoff ratio, +1 per success), with the
    /// floor at one call.
    pub const AIMD_MIN: u32 = 1;
    pub const AIMD_MAX: u32 = 1000;
    pub const AIMD_INCREASE: f64 = 1.0;
    pub const AIMD_DECREASE: f64 = 0.9;
}

/// Validates a config whose sweep (if any) has `axes` axes; the sweep itself is read by
/// [`super::sweep`].
pub fn experiment(source: &Source, raw: &raw::Config, axes: usize) -> Result<Experiment> {
    let check = Check { source };
    let name = match check.source.origin {
        // What ran, named for its folder: see `Origin::Manifest`.
        Origin::Manifest => raw.name.get_ref().clone(),
        Origin::Folder(_) | Origin::Point(..) | Origin::Text => check.name(&raw.name, "name")?,
    };
    let replications = check.count(
        raw.replications.as_ref(),
        "replications",
        default::REPLICATIONS,
        "0 replications run nothing",
    )?;
    let horizon = check.duration_or(&raw.horizon, "horizon", default::HORIZON)?;
    if horizon == Tick::ZERO {
        let span = raw.horizon.as_ref().map_or(0..0, |h| h.span());
        return check.error_allowing(
            span,
            "horizon",
            "a horizon of 0 runs nothing".into(),
            "a positive duration",
        );
    }

    let tools = tools(&check, raw)?;
    let fallen = fallback::read(&check, &raw.policy, &tools)?;
    let (stages, below) = graph::stages(&check, &raw.tool, &tools, &fallen)?;
    // Without a list, a task calls the tools no service calls and none falls back to: every
    // tool, without services or fallbacks.
    let mut called = vec![false; tools.len()];
    for c in stages.iter().flatten().flatten() {
        called[c.0] = true;
    }
    for f in &fallen {
        for c in &f.tools {
            called[c.0] = true;
        }
    }
    let roots: Vec<usize> = (0..tools.len()).filter(|t| !called[*t]).collect();
    let workload = workload(&check, &raw.workload, &tools, roots, &below)?;

    let mut policies = policies(&check, raw, &tools, &workload)?;
    let tops: Vec<usize> = (policies.iter())
        .flat_map(|p| p.agent.calls.as_deref().unwrap_or(&workload.calls))
        .chain(&workload.calls)
        .copied()
        .collect();
    let falls: Vec<(Option<usize>, usize)> = (fallen.iter())
        .flat_map(|f| f.tools.iter().map(|t| (f.caller, t.0)))
        .collect();
    let graph = crate::model::Graph {
        staged: workload.stages.is_some(),
        ..crate::model::Graph::build(&tops, &stages, &falls)
    };
    for (i, p) in raw.policy.iter().enumerate() {
        let path = format!("policy[{i}]");
        let edges = edge_policies(&check, (i, p.get_ref()), &path, &tools, &graph, &fallen)?;
        let policy = &mut policies[i];
        policy.edge.overrides = edges;
        graph::forwarding(&check, p.get_ref(), &path, policy, &graph, &tools)?;
        if graph.is_measured() {
            // A configuration's own policy stands on every edge it does not name, so its
            // waits are resolved against every tool a task may reach.
            let called = policy
                .agent
                .calls
                .clone()
                .unwrap_or_else(|| workload.calls.clone());
            let reached = graph.edges.iter().map(|e| e.callee);
            let all: Vec<usize> = called.into_iter().chain(reached).collect();
            policy.time.waits = waits(&check, p.get_ref(), &path, policy, &tools, &all)?;
        }
    }

    let one_task = workload.tasks == Some(1) && replications == 1;
    let output = output(&check, &raw.output, axes, horizon, one_task)?;
    if output.charts.contains(&ChartKind::CallGraph) && !graph.is_measured() {
        let span = raw.output.charts.as_ref().map_or(0..0, |c| c.span());
        return check.error_allowing(
            span,
            "output.charts",
            "the callgraph chart draws edges.csv, written only where some tool is a service or \
             some call falls back, and this config has neither"
                .into(),
            "`calls` on a tool, or `fallback` on an edge, beside the chart",
        );
    }
    let schedule = schedule(&check, raw.schedule.as_ref(), &workload)?;
    Ok(Experiment {
        name,
        description: raw.description.trim().to_string(),
        seed: raw.seed,
        replications,
        horizon,
        tools,
        workload,
        policies,
        graph,
        output,
        schedule,
    })
}

/// The `[[tool]]`s, each named once.
fn tools(check: &Check, raw: &raw::Config) -> Result<Vec<Tool>> {
    if raw.tool.is_empty() {
        return check.error_allowing(
            0..0,
            "tool",
            "the config defines no tool".into(),
            "one or more [[tool]] tables",
        );
    }
    let mut tools = Vec::new();
    for (i, t) in raw.tool.iter().enumerate() {
        let path = format!("tool[{i}]");
        let names: Vec<String> = tools.iter().map(|t: &Tool| t.name.clone()).collect();
        check.unique(&names, &t.get_ref().name, &format!("{path}.name"))?;
        tools.push(tool(check, t, (i, &path))?);
    }
    burst::domains(check, &raw.tool, &mut tools)?;
    Ok(tools)
}

/// The configurations, each named once, with the calls of its own (refused beside an agent
/// loop, whose turn is the workload's) and a re-plan only beside one; their edges are read
/// once the call graph is known.
fn policies(
    check: &Check,
    raw: &raw::Config,
    tools: &[Tool],
    workload: &crate::model::Workload,
) -> Result<Vec<Policy>> {
    if raw.policy.is_empty() {
        return check.error_allowing(
            0..0,
            "policy",
            "the config defines no policy".into(),
            "one or more [[policy]] tables",
        );
    }
    let mut policies: Vec<Policy> = Vec::new();
    for (i, p) in raw.policy.iter().enumerate() {
        let path = format!("policy[{i}]");
        let Some(name) = &p.get_ref().name else {
            return check.error_allowing(
                p.span(),
                &format!("{path}.name"),
                "a configuration without a name".into(),
                "name = \"retry-at-top\": the name its rows go by",
            );
        };
        let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
        check.unique(&names, name, &format!("{path}.name"))?;
        let own_calls = match &p.get_ref().calls {
            Some(list) => Some(calls(check, list, &format!("{path}.calls"), tools)?),
            None => None,
        };
        // An agent loop's turn is the workload's list; a task-level re-plan needs a loop.
        let looped = workload.agent.is_some();
        let spans = [
            (
                "calls",
                p.get_ref()
                    .calls
                    .as_ref()
                    .map(|c| c.span())
                    .filter(|_| looped),
            ),
            (
                "replan",
                p.get_ref()
                    .replan
                    .as_ref()
                    .map(|r| r.span())
                    .filter(|_| !looped),
            ),
        ];
        check.none_set(
            &spans,
            &path,
            |key| match key {
                "calls" => "an agent loop's turn is the workload's `calls`".into(),
                _ => "`replan` re-plans an agent loop, and the workload's tasks are none".into(),
            },
            "`workload.agent` beside `replan`, and the turn's calls in `workload.calls`",
        )?;
        let called = own_calls.clone().unwrap_or_else(|| workload.calls.clone());
        let mut policy = configuration(check, p, &path, tools, &called)?;
        admission(check, p, &path, &policy, (workload, tools, &called))?;
        if let (Durability::None, Some(v), 2..) = (
            policy.agent.durability,
            p.get_ref().durability.as_ref(),
            called.len(),
        ) {
            return check.error_allowing(
                v.span(),
                &format!("{path}.durability"),
                format!(
                    "durability = \"none\" starts a task over from its first call, and these \
                     tasks make {} calls: re-running a task's finished calls is not modelled",
                    called.len()
                ),
                "durability = \"checkpoint\" (finished calls stand; the same as \"none\" for a \
                 task of one call) or \"intent_log\"",
            );
        }
        policy.agent.calls = own_calls;
        policies.push(policy);
    }
    Ok(policies)
}

/// The admission rule weighs an attempt's timeout against the lease left, so it needs a lease
/// held for a term (a renewed one always has the whole lease left) and a timeout that fits in a
/// whole term at every tool the configuration calls (else no send is ever admitted).
fn admission(
    check: &Check,
    p: &toml::Spanned<raw::Policy>,
    path: &str,
    policy: &Policy,
    (workload, tools, called): (&crate::model::Workload, &[Tool], &[usize]),
) -> Result<()> {
    let Some(rule) = p
        .get_ref()
        .admit_within_lease
        .as_ref()
        .filter(|_| policy.agent.within_lease)
    else {
        return Ok(());
    };
    let key = format!("{path}.admit_within_lease");
    let Some(crash) = workload.crash.filter(|c| !c.renewed) else {
        return check.error_allowing(
            rule.span(),
            &key,
            "the admission rule weighs a send's timeout against the lease left, and the \
             workload's leases are renewed while their workers live (or there are none): the \
             whole lease is always left"
                .into(),
            "`[workload] crash = { …, renewed = false }`, each lease a fixed term",
        );
    };
    for &t in called {
        match policy.time.waits[t].timeout {
            Some(timeout) if timeout < crash.lease => {}
            timeout => {
                let why = match timeout {
                    None => {
                        "no timeout: an attempt may wait for ever, which no lease covers".into()
                    }
                    Some(timeout) => format!(
                        "a timeout of {timeout} at \"{}\", not shorter than the lease's term \
                         of {}: no send is ever admitted",
                        tools[t].name, crash.lease
                    ),
                };
                let span = p
                    .get_ref()
                    .timeout
                    .as_ref()
                    .map_or(rule.span(), |v| v.span());
                return check.error_allowing(
                    span,
                    &format!("{path}.timeout"),
                    why,
                    &format!("a timeout shorter than the lease, {}", crash.lease),
                );
            }
        }
    }
    Ok(())
}

/// The `schedule` of choices, each a script's outcome name, `late` or `lookup_failed`.
fn schedule(
    check: &Check,
    raw: Option<&toml::Spanned<Vec<toml::Spanned<String>>>>,
    workload: &crate::model::Workload,
) -> Result<Option<Vec<Choice>>> {
    let Some(list) = raw else {
        return Ok(None);
    };
    let all = Choice::all();
    // A crash's choice is met only at crash points, which workers crashing at a rate make.
    let points = workload.crash.is_some_and(|c| c.mean_uptime.is_some());
    (list.get_ref().iter().enumerate())
        .map(|(i, f)| {
            let path = format!("schedule[{i}]");
            let choice = check.named(Some(f), &path, &all, Choice::name, all[0])?;
            match choice {
                Choice::CrashBeforeSend | Choice::CrashInFlight if !points => check
                    .error_allowing(
                        f.span(),
                        &path,
                        format!(
                            "\"{}\" where no worker crashes at a rate: the run meets no crash point",
                            choice.name()
                        ),
                        "`[workload] crash = { mean_uptime = \"…\", lease = \"…\" }`, or no crash in the schedule",
                    ),
                _ => Ok(choice),
            }
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}
/// A configuration's policy, or an edge's, calling the tools `called`:
/// its preset expanded, its keys read, and the rules that hold across keys checked.
fn configuration(
    check: &Check,
    p: &toml::Spanned<raw::Policy>,
    path: &str,
    tools: &[Tool],
    called: &[usize],
) -> Result<Policy> {
    // A preset's rules are written into the policy first, and read as if written there.
    let expanded = crate::config::preset::expand(check, p.get_ref(), path)?;
    let raw = expanded.as_ref().unwrap_or(p.get_ref());
    let mut policy = super::policy::read(check, raw, path)?;
    policy.time.waits = waits(check, raw, path, &policy, tools, called)?;
    if policy.rule.lookup_before_retry
        && !matches!(policy.rule.key, KeyScope::PerIntent | KeyScope::Derived)
    {
        let span = raw.idempotency_key.as_ref().map_or(p.span(), |k| k.span());
        return check.error_allowing(
            span,
            &format!("{path}.lookup_before_retry"),
            "a lookup asks the server about the operation's key, and there is no stable one".into(),
            "idempotency_key = \"per_intent\" or \"derived\" with lookup_before_retry",
        );
    }
    for &t in called {
        let tool = &tools[t];
        if policy.hedges.delay != Wait::None && !safety::replay_is_safe(tool, policy.rule.key) {
            let span = raw.hedge_delay.as_ref().map_or(0..0, |v| v.span());
            return check.error_allowing(
                span,
                &format!("{path}.hedge_delay"),
                format!(
                    "a hedge sends a call twice, and a call on \"{}\" is not safe to send twice",
                    tool.name
                ),
                "hedging only calls on read_only tools, or on idempotent ones with idempotency_key = \"per_intent\"",
            );
        }
    }
    refuse_endless_retries(check, raw, path, &policy, (called, tools))?;
    Ok(policy)
}

/// The policy's waits (timeout, hedge delay) against each tool it calls.
fn waits(
    check: &Check,
    raw: &raw::Policy,
    path: &str,
    policy: &Policy,
    tools: &[Tool],
    called: &[usize],
) -> Result<Vec<crate::policy::Waits>> {
    policy.resolve_waits(tools, called).or_else(|(key, why)| {
        let value = if key == "timeout" {
            &raw.timeout
        } else {
            &raw.hedge_delay
        };
        let span = value.as_ref().map_or(0..0, |v| v.span());
        check.error_allowing(
            span,
            &format!("{path}.{key}"),
            why.to_string(),
            TIMEOUT_HELP,
        )
    })
}

/// The policies of the edges configuration `index` names (`edge."api->db" = { … }`), each
/// read as a policy of its own, with the fallbacks `fallen` read for it.
fn edge_policies(
    check: &Check,
    (index, raw): (usize, &raw::Policy),
    path: &str,
    tools: &[Tool],
    graph: &crate::model::Graph,
    fallen: &[fallback::Fallen],
) -> Result<Vec<(usize, Policy)>> {
    let Some(entries) = &raw.edge else {
        return Ok(Vec::new());
    };
    if !graph.is_measured() {
        return check.error_allowing(
            entries.span(),
            &format!("{path}.edge"),
            "the config's tools make no calls and no call falls back: its only edges are the \
             task's, whose policy is the configuration's own"
                .into(),
            "`calls` on a tool, which makes it a service, or `fallback` on an edge",
        );
    }
    let names: Vec<String> = graph.edges.iter().map(|e| e.name(tools)).collect();
    let options: Vec<(&str, usize)> = (names.iter().enumerate())
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut out: Vec<(usize, Policy)> = Vec::new();
    for (key, entry) in entries.get_ref() {
        let at = format!("{path}.edge.\"{key}\"");
        let named = toml::Spanned::new(entries.span(), key.clone());
        let e = check.choice(&named, &at, &options)?;
        if let Some(name) = &entry.get_ref().name {
            return check.error_allowing(
                name.span(),
                &format!("{at}.name"),
                "an edge's policy is named by its edge".into(),
                "the edge's keys without a name",
            );
        }
        let callee = graph.edges[e].callee;
        let mut policy = configuration(check, entry, &at, tools, &[callee])?;
        policy.name = raw
            .name
            .as_ref()
            .map_or(String::new(), |n| n.get_ref().clone());
        let own = (fallen.iter()).find(|f| f.policy == index && f.edge == *key);
        let edge = graph.edges[e];
        let chained = (fallen.iter()).find(|f| {
            f.policy == index
                && f.caller == edge.caller
                && f.tools.iter().any(|t| t.0 == edge.callee)
        });
        if let (Some(own), Some(chained)) = (own, chained) {
            let (_, span, at) = &own.tools[0];
            return check.error_allowing(
                span.clone(),
                at,
                format!(
                    "\"{key}\" is a fallback of \"{}\" here, and a failed call follows its \
                     primary's list to its end",
                    chained.edge
                ),
                &format!(
                    "these tools in the list of \"{}\", after {}",
                    chained.edge, tools[edge.callee].name
                ),
            );
        }
        policy.edge.fallback.tools =
            own.map_or(Vec::new(), |f| f.tools.iter().map(|t| t.0).collect());
        let falls_back = !policy.edge.fallback.tools.is_empty();
        policy.edge.fallback.cooldown =
            fallback::cooldown(check, entry.get_ref(), &at, falls_back)?;
        out.push((e, policy));
    }
    out.sort_by_key(|(e, _)| *e);
    Ok(out)
}

/// The most bins a time series may cut the horizon into: a million bins of one tool take
/// about 300 MB across a configuration's replications.
const TIMESERIES_BINS: u64 = 1_000_000;

/// The output options; `one_task` says the run is a single task in a single replication.
fn output(
    check: &Check,
    raw: &raw::Output,
    axes: usize,
    horizon: Tick,
    one_task: bool,
) -> Result<OutputOptions> {
    let charts = charts(check, raw, axes, one_task)?;
    let chart_formats = match &raw.chart_formats {
        None => vec![ChartFormat::Svg],
        Some(list) if list.get_ref().is_empty() => {
            return check.error_allowing(
                list.span(),
                "output.chart_formats",
                "no format to draw charts in".into(),
                "\"svg\", \"png\" or both",
            );
        }
        Some(list) => check.names(
            list,
            "output.chart_formats",
            &ChartFormat::ALL,
            ChartFormat::name,
        )?,
    };
    let timeseries = timeseries(check, raw, horizon)?;
    // A chart drawn from a file the run does not keep is refused where it is named.
    let needs = [
        (
            ChartKind::Goodput,
            timeseries.is_some(),
            "the goodput chart draws timeseries.csv, and no time series is kept",
            "`timeseries = \"1s\"` (the width of its bins) beside the chart",
        ),
        (
            ChartKind::RecoveryMap,
            timeseries.is_some(),
            "the recovery map draws the recovery columns, which need a time series, and none is kept",
            "`timeseries = \"1s\"` (the width of its bins) beside the chart",
        ),
        (
            ChartKind::Timeline,
            raw.intents && raw.attempts,
            "the timeline chart draws each configuration's story from intents.csv and \
             attempts.csv, and this run does not keep both (load over time, drawn from \
             timeseries.csv, is the \"goodput\" chart)",
            "`intents = true` and `attempts = true` beside the chart",
        ),
    ];
    for (kind, kept, why, allowed) in needs {
        if let Some(list) = &raw.charts
            && !kept
            && let Some(item) = list.get_ref().iter().find(|c| c.get_ref() == kind.name())
        {
            return check.error_allowing(item.span(), "output.charts", why.into(), allowed);
        }
    }
    Ok(OutputOptions {
        intents: raw.intents,
        attempts: raw.attempts,
        charts,
        chart_formats,
        timeseries,
    })
}

/// The charts asked for (the defaults for the sweep's axes where none are), each refused where
/// the sweep has the wrong number of axes for it.
fn charts(check: &Check, raw: &raw::Output, axes: usize, one_task: bool) -> Result<Vec<ChartKind>> {
    Ok(match &raw.charts {
        None => ChartKind::defaults(axes, one_task && raw.intents && raw.attempts),
        Some(list) => {
            let kinds = check.names(list, "output.charts", &ChartKind::ALL, ChartKind::name)?;
            for (kind, item) in kinds.iter().zip(list.get_ref()) {
                let (fewest, most) = kind.axes();
                if !kind.fits(axes) {
                    let needs = match (fewest, most) {
                        (1, usize::MAX) => "a sweep".to_string(),
                        (f, m) if f == m => format!("a sweep of {f} axes"),
                        (f, _) => format!("a sweep of {f} or more axes"),
                    };
                    let possible: Vec<&str> = ChartKind::ALL
                        .into_iter()
                        .filter(|k| (k.axes().0..=k.axes().1).contains(&axes))
                        .map(ChartKind::name)
                        .collect();
                    return check.error_allowing(
                        item.span(),
                        "output.charts",
                        format!(
                            "\"{}\" needs {needs}; this config sweeps {axes}",
                            kind.name()
                        ),
                        &format!("with {axes} axes: {}", possible.join(", ")),
                    );
                }
            }
            kinds
        }
    })
}

/// The width of the time series' bins, if one is kept, within [`TIMESERIES_BINS`] bins.
fn timeseries(check: &Check, raw: &raw::Output, horizon: Tick) -> Result<Option<Tick>> {
    Ok(match &raw.timeseries {
        None => None,
        Some(v) => {
            let width = check.duration(v, "output.timeseries")?;
            if width == Tick::ZERO || horizon.0 / width.0 > TIMESERIES_BINS {
                return check.error_allowing(
                    v.span(),
                    "output.timeseries",
                    format!(
                        "{width} cuts the horizon ({horizon}) into more than {TIMESERIES_BINS} bins"
                    ),
                    &format!(
                        "a positive duration of at least {}, or a shorter horizon",
                        Tick(horizon.0.div_ceil(TIMESERIES_BINS))
                    ),
                );
            }
            Some(width)
        }
    })
}
