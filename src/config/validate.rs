//! Raw config → [`Experiment`]: every rule a config must follow, each failure placed in the file.

use toml::{Spanned, Value};

use super::check::{Check, Result};
use super::{Source, raw};
use crate::chart::{ChartFormat, ChartKind};
use crate::experiment::{Experiment, OutputOptions};
use crate::model::{
    Arrival, Fate, Faults, Latency, Lookup, LossSignal, Outage, OutageMode, Script, Step, Tool,
    ToolKind, Workload,
};
use crate::policy::{
    Admission, Attempts, Backoff, BreakerRule, BudgetRule, FailureClass, Growth, Jitter, KeyScope,
    Layer, Layers, Limits, Policy, Retry, RetryAfter, RetryOn, Timeout, Trip, Window, safety,
};
use crate::time::{DURATION_HELP, Tick, parse_duration};

/// The defaults of every optional key, documented in `configs/README.md`.
mod default {
    pub const REPLICATIONS: u64 = 1;
    pub const HORIZON: &str = "24h";
    pub const CLIENTS: u32 = 100;
    pub const LATENCY: &str = "1ms";
    pub const INITIAL_DELAY: &str = "100ms";
    pub const MULTIPLIER: f64 = 2.0;
    pub const MAX_DELAY: &str = "20s";
    pub const OPEN_DURATION: &str = "5s";
    pub const HALF_OPEN_PROBES: u32 = 1;
    pub const FAILURE_RATE: f64 = 0.5;
    pub const WINDOW_CALLS: u32 = 100;
}

/// Validates a config whose sweep (if any) has `axes` axes; the sweep itself is read by
/// [`super::sweep`].
pub fn experiment(source: &Source, raw: &raw::Config, axes: usize) -> Result<Experiment> {
    let check = Check { source };
    let name = check.name(&raw.name, "name")?;
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
        tools.push(tool(&check, t, &path)?);
    }

    let workload = workload(&check, &raw.workload, &tools)?;

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
        let names: Vec<String> = policies.iter().map(|p| p.name.clone()).collect();
        check.unique(&names, &p.get_ref().name, &format!("{path}.name"))?;
        let mut policy = policy(&check, p.get_ref(), &path)?;
        if policy.lookup_before_retry && policy.key != KeyScope::PerIntent {
            let span = p
                .get_ref()
                .idempotency_key
                .as_ref()
                .map_or(p.span(), |k| k.span());
            return check.error_allowing(
                span,
                &format!("{path}.lookup_before_retry"),
                "a lookup asks the server about the operation's key, and there is no stable one"
                    .into(),
                "idempotency_key = \"per_intent\" with lookup_before_retry",
            );
        }
        if let Some(list) = &p.get_ref().calls {
            policy.calls = Some(calls(&check, list, &format!("{path}.calls"), &tools)?);
        }
        let raw = p.get_ref();
        for &t in policy.calls.as_ref().unwrap_or(&workload.calls) {
            let tool = &tools[t];
            for (key, rule, value) in [
                ("timeout", policy.timeout, &raw.timeout),
                ("hedge_delay", policy.hedge, &raw.hedge_delay),
            ] {
                if let Err(why) = rule.on(tool) {
                    let span = value.as_ref().map_or(0..0, |v| v.span());
                    return check.error_allowing(span, &format!("{path}.{key}"), why, TIMEOUT_HELP);
                }
            }
            if policy.hedge != Timeout::None && !safety::replay_is_safe(tool, policy.key) {
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
        refuse_endless_retries(&check, p.get_ref(), &path, &policy, &workload, &tools)?;
        policies.push(policy);
    }

    Ok(Experiment {
        name,
        description: raw.description.trim().to_string(),
        seed: raw.seed,
        replications,
        horizon,
        tools,
        workload,
        policies,
        output: output(&check, &raw.output, axes, horizon)?,
    })
}

/// The most stretches a timeline may cut the horizon into.
const TIMELINE_BUCKETS: u64 = 10_000_000;

fn output(check: &Check, raw: &raw::Output, axes: usize, horizon: Tick) -> Result<OutputOptions> {
    let charts = match &raw.charts {
        None => ChartKind::defaults(axes),
        Some(list) => {
            let kinds = check.names(list, "output.charts", &ChartKind::ALL, ChartKind::name)?;
            for (kind, item) in kinds.iter().zip(list.get_ref()) {
                let (fewest, most) = kind.axes();
                if !(fewest..=most).contains(&axes) {
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
    };
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
    let timeline = match &raw.timeline {
        None => None,
        Some(v) => {
            let width = check.duration(v, "output.timeline")?;
            if width == Tick::ZERO || horizon.0 / width.0 > TIMELINE_BUCKETS {
                return check.error_allowing(
                    v.span(),
                    "output.timeline",
                    format!("{width} cuts the horizon ({horizon}) into more than {TIMELINE_BUCKETS} stretches"),
                    &format!("a positive duration of at least {}", Tick(horizon.0.div_ceil(TIMELINE_BUCKETS))),
                );
            }
            Some(width)
        }
    };
    if let (None, Some(list)) = (timeline, &raw.charts)
        && let Some(item) = list
            .get_ref()
            .iter()
            .find(|c| c.get_ref() == ChartKind::Timeline.name())
    {
        return check.error_allowing(
            item.span(),
            "output.charts",
            "the timeline chart draws timeline.csv, and no timeline is kept".into(),
            "`timeline = \"1s\"` (the width of its stretches) beside the chart",
        );
    }
    Ok(OutputOptions {
        intents: raw.intents,
        attempts: raw.attempts,
        charts,
        chart_formats,
        timeline,
    })
}

fn tool(check: &Check, spanned: &Spanned<raw::Tool>, path: &str) -> Result<Tool> {
    let raw = spanned.get_ref();
    let name = check.name(&raw.name, &format!("{path}.name"))?;
    let p = |value: &Option<Spanned<f64>>, key: &str| {
        check.probability(value, &format!("{path}.{key}"))
    };
    let faults = Faults {
        request_loss: p(&raw.request_loss, "request_loss")?,
        server_error: p(&raw.server_error, "server_error")?,
        reply_loss: p(&raw.reply_loss, "reply_loss")?,
        throttled: p(&raw.throttled, "throttled")?,
        forbidden: p(&raw.forbidden, "forbidden")?,
        invalid: p(&raw.invalid, "invalid")?,
        retry_after: match &raw.retry_after {
            None => None,
            Some(v) => Some(check.duration(v, &format!("{path}.retry_after"))?),
        },
    };
    let total = faults.total();
    if total > 1.0 + 1e-12 {
        return check.error_allowing(
            spanned.span(),
            path,
            format!(
                "request_loss + server_error + reply_loss + throttled + forbidden + invalid = {total}, more than 1"
            ),
            "probabilities of the ways an attempt ends that add up to at most 1",
        );
    }
    let leg = |value: &Option<Spanned<raw::Latency>>, key: &str| match value {
        Some(l) => super::latency::latency(check, l, &format!("{path}.{key}")),
        None => Ok(Latency::Constant(
            parse_duration(default::LATENCY).expect("valid default"),
        )),
    };
    let loss_seen_as = check.named(
        raw.loss_seen_as.as_ref(),
        &format!("{path}.loss_seen_as"),
        &LossSignal::ALL,
        LossSignal::name,
        LossSignal::Reset,
    )?;
    let workers = match &raw.workers {
        None => None,
        Some(w) => check.count_or_unlimited(
            w,
            &format!("{path}.workers"),
            "workers",
            "a whole number ≥ 1, or \"unlimited\"",
        )?,
    };
    let script = match &raw.script {
        None => None,
        Some(steps) => Some(script(check, raw, steps, path)?),
    };
    let kind = check.named(
        raw.kind.as_ref(),
        &format!("{path}.kind"),
        &ToolKind::ALL,
        ToolKind::name,
        ToolKind::Write,
    )?;
    Ok(Tool {
        name,
        kind,
        idempotent: raw.idempotent.as_ref().is_none_or(|i| *i.get_ref()),
        faults,
        loss_seen_as,
        request_latency: leg(&raw.request_latency, "request_latency")?,
        service_time: leg(&raw.service_time, "service_time")?,
        reply_latency: leg(&raw.reply_latency, "reply_latency")?,
        workers,
        script,
        outages: raw
            .outages
            .iter()
            .enumerate()
            .map(|(i, o)| outage(check, o.get_ref(), &format!("{path}.outages[{i}]")))
            .collect::<Result<_>>()?,
        lookup: Lookup {
            time: check.duration_or(
                &raw.lookup_time,
                &format!("{path}.lookup_time"),
                default::LATENCY,
            )?,
            failure: check.probability(&raw.lookup_failure, &format!("{path}.lookup_failure"))?,
            lag: check.duration_or(&raw.commit_lag, &format!("{path}.commit_lag"), "0s")?,
        },
        cooperative: raw.cooperative.as_ref().is_none_or(|c| *c.get_ref()),
    })
}

fn outage(check: &Check, raw: &raw::Outage, path: &str) -> Result<Outage> {
    let from = check.duration(&raw.from, &format!("{path}.from"))?;
    let until = check.duration(&raw.until, &format!("{path}.until"))?;
    if until <= from {
        return check.error_allowing(
            raw.until.span(),
            &format!("{path}.until"),
            format!("the outage ends ({until}) no later than it starts ({from})"),
            "until > from",
        );
    }
    let mode = check.named(
        raw.mode.as_ref(),
        &format!("{path}.mode"),
        &OutageMode::ALL,
        OutageMode::name,
        OutageMode::FailFast,
    )?;
    Ok(Outage { from, until, mode })
}

/// A scripted tool's steps; its outcomes and times come from the script alone, so the keys of
/// faults and latencies are refused beside it.
fn script(
    check: &Check,
    raw: &raw::Tool,
    steps: &Spanned<Vec<Spanned<raw::ScriptStep>>>,
    path: &str,
) -> Result<Script> {
    let spans = [
        ("request_loss", raw.request_loss.as_ref().map(Spanned::span)),
        ("server_error", raw.server_error.as_ref().map(Spanned::span)),
        ("reply_loss", raw.reply_loss.as_ref().map(Spanned::span)),
        ("throttled", raw.throttled.as_ref().map(Spanned::span)),
        ("forbidden", raw.forbidden.as_ref().map(Spanned::span)),
        ("invalid", raw.invalid.as_ref().map(Spanned::span)),
        ("retry_after", raw.retry_after.as_ref().map(Spanned::span)),
        (
            "request_latency",
            raw.request_latency.as_ref().map(Spanned::span),
        ),
        ("service_time", raw.service_time.as_ref().map(Spanned::span)),
        (
            "reply_latency",
            raw.reply_latency.as_ref().map(Spanned::span),
        ),
    ];
    check.none_set(
        &spans,
        path,
        |key| format!("`{key}` does not apply to a scripted tool"),
        "a scripted tool takes its outcomes and times from `script` alone",
    )?;
    if steps.get_ref().is_empty() {
        return check.error_allowing(
            steps.span(),
            &format!("{path}.script"),
            "an empty script has no outcome for the first attempt".into(),
            "one or more { outcome, after } steps",
        );
    }
    let steps = steps
        .get_ref()
        .iter()
        .enumerate()
        .map(|(i, step)| {
            let at = format!("{path}.script[{i}]");
            let step = step.get_ref();
            let all = &Fate::ALL;
            let retry_after = match &step.retry_after {
                None => None,
                Some(v) => Some(check.duration(v, &format!("{at}.retry_after"))?),
            };
            Ok(Step {
                retry_after,
                fate: check.named(
                    Some(&step.outcome),
                    &format!("{at}.outcome"),
                    all,
                    Fate::name,
                    all[0],
                )?,
                after: check.duration(&step.after, &format!("{at}.after"))?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Script { steps })
}

/// A list of tool names: the tools a task calls, in order.
fn calls(
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

fn workload(check: &Check, spanned: &Spanned<raw::Workload>, tools: &[Tool]) -> Result<Workload> {
    let raw = spanned.get_ref();
    let tasks = check.count(Some(&raw.tasks), "workload.tasks", 0, "0 tasks run nothing")?;
    let calls = match &raw.calls {
        None => (0..tools.len()).collect(),
        Some(list) => calls(check, list, "workload.calls", tools)?,
    };
    let clients = check.count(
        raw.clients.as_ref(),
        "workload.clients",
        default::CLIENTS,
        "0 clients serve no task",
    )?;
    let batch = raw.arrival.as_ref().map_or(Ok(true), |a| {
        check.choice(
            a,
            "workload.arrival",
            &[("batch", true), ("poisson", false)],
        )
    })?;
    let arrival = match (batch, &raw.mean_interarrival) {
        (true, None) => Arrival::Batch,
        (true, Some(gap)) => {
            return check.error_allowing(
                gap.span(),
                "workload.mean_interarrival",
                "batch arrivals have no interarrival time".into(),
                "arrival = \"poisson\" with mean_interarrival, or neither",
            );
        }
        (false, Some(gap)) => {
            let mean = check.duration(gap, "workload.mean_interarrival")?;
            if mean == Tick::ZERO {
                return check.error_allowing(
                    gap.span(),
                    "workload.mean_interarrival",
                    "a Poisson stream needs a positive mean gap".into(),
                    "a positive duration",
                );
            }
            Arrival::Poisson {
                mean_gap: mean.0 as f64,
            }
        }
        (false, None) => {
            let span = raw.arrival.as_ref().map_or(spanned.span(), |a| a.span());
            return check.error_allowing(
                span,
                "workload.mean_interarrival",
                "arrival = \"poisson\" needs mean_interarrival".into(),
                DURATION_HELP,
            );
        }
    };
    Ok(Workload {
        tasks,
        calls,
        arrival,
        clients,
    })
}

fn policy(check: &Check, raw: &raw::Policy, path: &str) -> Result<Policy> {
    let name = check.name(&raw.name, &format!("{path}.name"))?;
    let retry_after = check.named(
        raw.retry_after.as_ref(),
        &format!("{path}.retry_after"),
        &RetryAfter::ALL,
        RetryAfter::name,
        RetryAfter::Honour,
    )?;
    let own = Layer {
        name: String::new(),
        retry: Retry {
            max_attempts: max_attempts(check, raw.max_attempts.as_ref(), path)?,
            retry_on: classes(check, raw.retry_on.as_ref(), &format!("{path}.retry_on"))?,
            retry_after,
        },
        backoff: backoff_or_none(check, raw.backoff.as_ref(), path)?,
    };
    let (own, layers) = match &raw.layers {
        None => {
            if let Some(reset) = &raw.reset_each_layer {
                return check.error_allowing(
                    reset.span(),
                    &format!("{path}.reset_each_layer"),
                    "there are no layers to reset".into(),
                    "`layers` beside `reset_each_layer`",
                );
            }
            (own, None)
        }
        Some(list) => {
            let (mut outer, innermost) = layers(check, raw, list, path, retry_after)?;
            let own = outer.pop().expect("layers are not empty");
            let reset_each = raw.reset_each_layer.as_ref().is_some_and(|r| *r.get_ref());
            let layers = Layers {
                outer,
                innermost,
                reset_each,
            };
            (own, Some(layers))
        }
    };
    let hedge = match &raw.hedge_delay {
        None => Timeout::None,
        Some(v) => timeout(check, v, &format!("{path}.hedge_delay"))?,
    };
    let timeout = match &raw.timeout {
        None => Timeout::None,
        Some(v) => timeout(check, v, &format!("{path}.timeout"))?,
    };
    let positive = |v: &Option<Spanned<Value>>, key: &str| -> Result<Option<Tick>> {
        let Some(v) = v else { return Ok(None) };
        let t = check.duration(v, &format!("{path}.{key}"))?;
        if t == Tick::ZERO {
            return check.error_allowing(
                v.span(),
                &format!("{path}.{key}"),
                format!("a {key} of 0 ends the operation before it starts"),
                "a positive duration",
            );
        }
        Ok(Some(t))
    };
    let limits = Limits {
        deadline: positive(&raw.deadline, "deadline")?,
        dispatch_cap: match &raw.dispatch_cap {
            None => None,
            Some(c) => Some(check.count(
                Some(c),
                &format!("{path}.dispatch_cap"),
                1,
                "a cap of 0 dispatches nothing",
            )?),
        },
        cancel_after: positive(&raw.cancel_after, "cancel_after")?,
        admission: match &raw.admission {
            None => None,
            Some(a) if raw.deadline.is_none() => {
                return check.error_allowing(
                    a.span(),
                    &format!("{path}.admission"),
                    "cooperative admission measures the time left before a deadline, and there is none".into(),
                    "a `deadline` beside `admission`",
                );
            }
            Some(a) => {
                let a = a.get_ref();
                let at = |key: &str| format!("{path}.admission.{key}");
                Some(Admission {
                    reserve: check.duration(&a.reserve, &at("reserve"))?,
                    min_attempt: check.duration(&a.min_attempt, &at("min_attempt"))?,
                    timeout_cap: check.duration(&a.timeout_cap, &at("timeout_cap"))?,
                })
            }
        },
    };
    let key = check.named(
        raw.idempotency_key.as_ref(),
        &format!("{path}.idempotency_key"),
        &KeyScope::ALL,
        KeyScope::name,
        KeyScope::None,
    )?;
    Ok(Policy {
        name,
        retry: own.retry,
        timeout,
        hedge,
        backoff: own.backoff,
        key,
        limits,
        safety_gate: raw.safety_gate,
        breaker: match &raw.breaker {
            None => None,
            Some(b) => Some(breaker(check, b, &format!("{path}.breaker"))?),
        },
        retry_budget: match &raw.retry_budget {
            None => None,
            Some(b) => Some(retry_budget(check, b, &format!("{path}.retry_budget"))?),
        },
        lookup_before_retry: raw.lookup_before_retry,
        calls: None,
        payload_drift: check.probability(&raw.payload_drift, &format!("{path}.payload_drift"))?,
        layers,
    })
}

/// `max_attempts`, counting the first: one attempt when absent.
fn max_attempts(check: &Check, value: Option<&Spanned<Value>>, path: &str) -> Result<Attempts> {
    Ok(match value {
        None => Attempts::AtMost(1),
        Some(v) => check
            .count_or_unlimited(
                v,
                &format!("{path}.max_attempts"),
                "attempts",
                "a whole number ≥ 1 counting the first attempt (3 = 2 retries), or \"unlimited\"",
            )?
            .map_or(Attempts::Unlimited, Attempts::AtMost),
    })
}

fn backoff_or_none(
    check: &Check,
    value: Option<&Spanned<raw::Backoff>>,
    path: &str,
) -> Result<Backoff> {
    match value {
        None => Ok(Backoff::IMMEDIATE),
        Some(b) => backoff(check, b.get_ref(), &format!("{path}.backoff")),
    }
}

/// `layers`, outermost first, each with its own retry rule and backoff; the policy's own
/// `max_attempts`, `retry_on` and `backoff` are then set per layer instead. Returns every layer
/// and the innermost's name.
fn layers(
    check: &Check,
    raw: &raw::Policy,
    list: &Spanned<Vec<Spanned<raw::Layer>>>,
    path: &str,
    retry_after: RetryAfter,
) -> Result<(Vec<Layer>, String)> {
    let own_keys = [
        ("max_attempts", raw.max_attempts.as_ref().map(Spanned::span)),
        ("retry_on", raw.retry_on.as_ref().map(Spanned::span)),
        ("backoff", raw.backoff.as_ref().map(Spanned::span)),
    ];
    check.none_set(
        &own_keys,
        path,
        |key| format!("with `layers`, each layer has its own {key}"),
        "max_attempts, retry_on and backoff inside each element of `layers`",
    )?;
    if list.get_ref().is_empty() {
        return check.error_allowing(
            list.span(),
            &format!("{path}.layers"),
            "no layers".into(),
            "one table per layer, outermost first: { name, max_attempts, retry_on, backoff }",
        );
    }
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for (i, layer) in list.get_ref().iter().enumerate() {
        let at = format!("{path}.layers[{i}]");
        let raw = layer.get_ref();
        let name = check.name(&raw.name, &format!("{at}.name"))?;
        if names.contains(&name) {
            return check.error_allowing(
                raw.name.span(),
                &format!("{at}.name"),
                format!("a second layer named \"{name}\""),
                "a name of its own for each layer",
            );
        }
        names.push(name.clone());
        out.push(Layer {
            name,
            retry: Retry {
                max_attempts: max_attempts(check, raw.max_attempts.as_ref(), &at)?,
                retry_on: classes(check, raw.retry_on.as_ref(), &format!("{at}.retry_on"))?,
                retry_after,
            },
            backoff: backoff_or_none(check, raw.backoff.as_ref(), &at)?,
        });
    }
    let innermost = names.pop().expect("layers are not empty");
    Ok((out, innermost))
}

/// A list of failure classes (`retry_on`, a breaker's `counts`); the transient ones when absent.
fn classes(
    check: &Check,
    list: Option<&Spanned<Vec<Spanned<String>>>>,
    path: &str,
) -> Result<RetryOn> {
    let Some(list) = list else {
        return Ok(FailureClass::TRANSIENT.into_iter().collect());
    };
    let all = &FailureClass::ALL;
    list.get_ref()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            check.named(
                Some(c),
                &format!("{path}[{i}]"),
                all,
                FailureClass::name,
                all[0],
            )
        })
        .collect()
}

/// What a timeout may be; a rule from the latency must also fit every tool called, which the
/// caller checks once the tools are known.
const TIMEOUT_HELP: &str = "a duration (\"250ms\"), a percentile of the tool's round trip \
(\"p50\", \"p99.9\"), a multiple of its longest (\"2x max\"), or \"none\"";

fn timeout(check: &Check, value: &Spanned<Value>, path: &str) -> Result<Timeout> {
    let rule = match value.get_ref() {
        Value::Integer(t) if *t > 0 => Some(Timeout::Fixed(Tick(*t as u64))),
        Value::String(s) => Timeout::parse(s, |d| parse_duration(d).ok()),
        _ => None,
    };
    match rule {
        Some(Timeout::Fixed(Tick::ZERO)) | None => check.error_allowing(
            value.span(),
            path,
            format!("{} is not a timeout", value.get_ref()),
            TIMEOUT_HELP,
        ),
        Some(rule) => Ok(rule),
    }
}

/// A breaker trips on `consecutive_failures`, or on a `failure_rate` over a `window` (a number
/// of calls or a duration) once it holds `minimum_calls`; the two rules exclude each other.
fn breaker(check: &Check, spanned: &Spanned<raw::Breaker>, path: &str) -> Result<BreakerRule> {
    let raw = spanned.get_ref();
    let rate_keys = [
        raw.failure_rate.as_ref().map(Spanned::span),
        raw.window.as_ref().map(Spanned::span),
        raw.minimum_calls.as_ref().map(Spanned::span),
    ];
    let trip = match &raw.consecutive_failures {
        Some(n) => {
            if let Some(span) = rate_keys.into_iter().flatten().next() {
                return check.error_allowing(
                    span,
                    path,
                    "a breaker trips on consecutive failures or on a failure rate, not both".into(),
                    "consecutive_failures alone, or failure_rate with window and minimum_calls",
                );
            }
            Trip::Consecutive(check.count(
                Some(n),
                &format!("{path}.consecutive_failures"),
                1,
                "0 failures would trip it before any call",
            )?)
        }
        None => {
            let rate = check.number(
                raw.failure_rate.as_ref(),
                &format!("{path}.failure_rate"),
                default::FAILURE_RATE,
                |r| r > 0.0 && r <= 1.0,
                "a failure rate",
                "a share above 0 and at most 1",
            )?;
            let window = match &raw.window {
                None => Window::Calls(default::WINDOW_CALLS),
                Some(w) => match w.get_ref() {
                    Value::Integer(n) if *n >= 1 && *n <= i64::from(u32::MAX) => {
                        Window::Calls(*n as u32)
                    }
                    Value::String(_) => Window::Time(check.duration(w, &format!("{path}.window"))?),
                    other => {
                        return check.error_allowing(
                            w.span(),
                            &format!("{path}.window"),
                            format!("{other} is not a window"),
                            "a number of calls (≥ 1), or a duration such as \"10s\"",
                        );
                    }
                },
            };
            let minimum = match window {
                Window::Calls(n) => n,
                Window::Time(_) => 1,
            };
            Trip::Rate {
                rate,
                window,
                minimum_calls: check.count(
                    raw.minimum_calls.as_ref(),
                    &format!("{path}.minimum_calls"),
                    minimum,
                    "0 calls is no evidence",
                )?,
            }
        }
    };
    let counts = classes(check, raw.counts.as_ref(), &format!("{path}.counts"))?;
    Ok(BreakerRule {
        trip,
        open_duration: check.duration_or(
            &raw.open_duration,
            &format!("{path}.open_duration"),
            default::OPEN_DURATION,
        )?,
        half_open_probes: check.count(
            raw.half_open_probes.as_ref(),
            &format!("{path}.half_open_probes"),
            default::HALF_OPEN_PROBES,
            "0 probes would keep it open for ever",
        )?,
        counts,
    })
}

/// A retry budget: its kind, and that kind's settings (the defaults of gRPC's example, the AWS
/// SDKs' standard mode, and Finagle); a setting of another kind is refused.
fn retry_budget(
    check: &Check,
    spanned: &Spanned<raw::RetryBudget>,
    path: &str,
) -> Result<BudgetRule> {
    let raw = spanned.get_ref();
    let kinds = [("token_bucket", 0), ("aws_standard", 1), ("ratio", 2)];
    let kind = check.choice(&raw.kind, &format!("{path}.kind"), &kinds)?;
    let keys = [
        ("max_tokens", 0, &raw.max_tokens),
        ("token_ratio", 0, &raw.token_ratio),
        ("capacity", 1, &raw.capacity),
        ("retry_cost", 1, &raw.retry_cost),
        ("timeout_cost", 1, &raw.timeout_cost),
        ("success_credit", 1, &raw.success_credit),
        ("min_per_second", 2, &raw.min_per_second),
        ("percent", 2, &raw.percent),
    ];
    let ttl_span = raw.ttl.as_ref().filter(|_| kind != 2).map(Spanned::span);
    let stray = keys
        .iter()
        .find(|(_, k, v)| *k != kind && v.is_some())
        .map(|(name, _, v)| (*name, v.as_ref().expect("some").span()))
        .or(ttl_span.map(|s| ("ttl", s)));
    if let Some((key, span)) = stray {
        let takes: Vec<&str> = keys
            .iter()
            .filter(|(_, k, _)| *k == kind)
            .map(|(n, _, _)| *n)
            .chain((kind == 2).then_some("ttl"))
            .collect();
        return check.error_allowing(
            span,
            &format!("{path}.{key}"),
            format!(
                "`{key}` does not apply to kind = \"{}\"",
                raw.kind.get_ref()
            ),
            &format!("for this kind: {}", takes.join(", ")),
        );
    }
    let number = |key: &str, default: f64| -> Result<f64> {
        let value = keys
            .iter()
            .find(|(n, _, _)| *n == key)
            .and_then(|(_, _, v)| v.as_ref());
        let valid: fn(f64) -> bool = |x| x.is_finite() && x >= 0.0;
        let what = "a setting of a budget";
        check.number(
            value,
            &format!("{path}.{key}"),
            default,
            valid,
            what,
            "a finite number ≥ 0",
        )
    };
    Ok(match kind {
        0 => BudgetRule::TokenBucket {
            max_tokens: number("max_tokens", 10.0)?,
            token_ratio: number("token_ratio", 0.1)?,
        },
        1 => BudgetRule::AwsStandard {
            capacity: number("capacity", 500.0)?,
            retry_cost: number("retry_cost", 5.0)?,
            timeout_cost: number("timeout_cost", 10.0)?,
            success_credit: number("success_credit", 1.0)?,
        },
        _ => BudgetRule::Ratio {
            ttl: check.duration_or(&raw.ttl, &format!("{path}.ttl"), "10s")?,
            min_per_second: number("min_per_second", 10.0)?,
            percent: number("percent", 0.2)?,
        },
    })
}

fn backoff(check: &Check, raw: &raw::Backoff, path: &str) -> Result<Backoff> {
    let growth = check.named(
        raw.kind.as_ref(),
        &format!("{path}.kind"),
        &Growth::ALL,
        Growth::name,
        Growth::Exponential,
    )?;
    let jitter = check.named(
        raw.jitter.as_ref(),
        &format!("{path}.jitter"),
        &Jitter::ALL,
        Jitter::name,
        Jitter::Full,
    )?;
    let initial_delay = check.duration_or(
        &raw.initial_delay,
        &format!("{path}.initial_delay"),
        default::INITIAL_DELAY,
    )?;
    let max_delay = check.duration_or(
        &raw.max_delay,
        &format!("{path}.max_delay"),
        default::MAX_DELAY,
    )?;
    if max_delay < initial_delay {
        let span = raw
            .max_delay
            .as_ref()
            .or(raw.initial_delay.as_ref())
            .map_or(0..0, |v| v.span());
        return check.error(
            span,
            &format!("{path}.max_delay"),
            format!("max_delay ({max_delay}) is below initial_delay ({initial_delay})"),
        );
    }
    let multiplier = check.number(
        raw.multiplier.as_ref(),
        &format!("{path}.multiplier"),
        default::MULTIPLIER,
        |m| m.is_finite() && m >= 1.0,
        "a multiplier that grows the delay",
        "a finite number ≥ 1",
    )?;
    Ok(Backoff {
        growth,
        initial_delay,
        multiplier,
        max_delay,
        jitter,
    })
}

/// Unlimited attempts on a tool where every attempt fails in a retried way would spin until the
/// horizon: refuse the config instead.
fn refuse_endless_retries(
    check: &Check,
    raw: &raw::Policy,
    path: &str,
    policy: &Policy,
    workload: &Workload,
    tools: &[Tool],
) -> Result<()> {
    // A deadline or cap that each layer entered resets bounds nothing as a whole.
    let bounded = (policy.limits.deadline.is_some() || policy.limits.dispatch_cap.is_some())
        && !policy.resets_each_layer();
    let layers = || (0..policy.depth()).map(|l| policy.retry_of(l));
    if layers().all(|r| r.max_attempts != Attempts::Unlimited) || bounded {
        return Ok(());
    }
    for &t in policy.calls.as_ref().unwrap_or(&workload.calls) {
        let tool = &tools[t];
        let f = &tool.faults;
        let wait = policy.timeout.on(tool).ok().flatten();
        let late = wait.and_then(|w| tool.times_out(w)).unwrap_or(0.0);
        let delivered = match &tool.script {
            Some(script) => {
                let last = script.steps.last().expect("scripts are not empty");
                f64::from(u8::from(last.fate == Fate::Delivered))
            }
            None => 1.0 - f.total(),
        };
        let succeeds = delivered * (1.0 - late);
        let on = |c: FailureClass| layers().any(|r| r.retry_on.contains(c));
        // The ways an attempt can fail, each retried or not.
        let lost = f.request_loss + f.reply_loss > 0.0;
        let all_retried = (!lost || on(FailureClass::Reset) || wait.is_some())
            && (f.server_error == 0.0 || on(FailureClass::ServerError))
            && (f.throttled == 0.0 || on(FailureClass::Throttled))
            && (f.forbidden == 0.0 || on(FailureClass::Forbidden))
            && (f.invalid == 0.0 || on(FailureClass::Invalid))
            && (wait.is_none() || on(FailureClass::Timeout));
        if succeeds <= 1e-12 && all_retried {
            let span = (raw.max_attempts.as_ref().map(Spanned::span))
                .or(raw.layers.as_ref().map(Spanned::span))
                .unwrap_or(0..0);
            return check.error_allowing(
                span,
                &format!("{path}.max_attempts"),
                format!(
                    "unlimited attempts never end on tool \"{}\": every attempt fails and is retried (request_loss {} + reply_loss {} + server_error {}, timed out {late})",
                    tool.name, f.request_loss, f.reply_loss, f.server_error
                ),
                "a finite max_attempts, or a tool whose attempts can succeed",
            );
        }
    }
    Ok(())
}
