//! A `[[policy]]` in the groups of [`Policy`]: each group's module reads its keys (validation),
//! writes them back (the manifest) and says them in English (the table's description), side by
//! side, so a new knob is added in one file. Each group's writer and describer destructure the
//! group whole: a new field is a compile error there, not a key silently left out.

mod agent;
mod backoff;
mod edge;
mod gates;
mod hedges;
mod hosts;
mod pushback;
mod rule;
mod timing;

use toml::{Spanned, Value};

use super::check::{Check, Result};
use super::raw;
use crate::model::{FailureClass, Fate, Tool};
use crate::policy::{Attempts, Policy, RetryOn, Wait};
use crate::time::{Tick, parse_duration};

pub use edge::fallbacks;

/// Reads a policy at `path`; an edge's policy (no name of its own) is named by its
/// configuration later. Its calls, waits, edges and fallbacks are filled in by the caller,
/// which knows the tools and the graph.
pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<Policy> {
    let name = match &raw.name {
        Some(name) => check.name(name, &format!("{path}.name"))?,
        None => String::new(),
    };
    let mut policy = Policy::new(name);
    policy.rule = rule::read(check, raw, path)?;
    policy.time = timing::read(check, raw, path)?;
    policy.hedges = hedges::read(check, raw, policy.rule.retry.max_attempts, path)?;
    policy.gates = gates::read(check, raw, &policy.rule, path)?;
    policy.hosts = hosts::read(check, raw, policy.gates.scope, path)?;
    policy.agent = agent::read(check, raw, path)?;
    policy.edge = edge::read(check, raw, path)?;
    policy.note.clone_from(&raw.note);
    Ok(policy)
}

/// The policy as a config table, every group's keys written; `tools` names the tools it calls
/// and falls back to. The edges it names are the caller's to add.
pub(super) fn write(p: &Policy, tools: &[Tool]) -> raw::Policy {
    let Policy {
        name,
        rule,
        time,
        hedges,
        gates,
        hosts,
        agent,
        edge,
        note: _,
    } = p;
    let mut out = raw::Policy {
        name: Some(Spanned::new(0..0, name.clone())),
        ..raw::Policy::default()
    };
    rule::write(rule, &mut out);
    timing::write(time, &mut out);
    hedges::write(hedges, &mut out);
    gates::write(gates, &mut out);
    hosts::write(hosts, &mut out);
    agent::write(agent, tools, &mut out);
    edge::write(edge, tools, &mut out);
    out
}

/// The policy in English, group by group, each clause only where its knob is set so a plain
/// policy reads short; a preset's note ends it.
pub fn describe(p: &Policy) -> String {
    let Policy {
        name: _,
        rule,
        time,
        hedges,
        gates,
        hosts,
        agent,
        edge,
        note,
    } = p;
    let mut clauses = vec![rule::attempts(rule)];
    rule::describe(rule, time, hedges, &mut clauses);
    timing::describe(time, &mut clauses);
    gates::describe(gates, &mut clauses);
    hosts::describe(hosts, &mut clauses);
    agent::describe(agent, &mut clauses);
    edge::describe(edge, &mut clauses);
    let mut text = clauses.join(", ");
    if let Some(note) = note {
        text.push_str(&format!(" ({note})"));
    }
    text
}

/// `max_attempts`, counting the first: one attempt when absent.
pub(super) fn max_attempts(
    check: &Check,
    value: Option<&Spanned<Value>>,
    path: &str,
) -> Result<Attempts> {
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

/// A list of failure classes (`retry_on`, a breaker's `counts`); the transient ones when absent.
pub(super) fn classes(
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
pub(super) const TIMEOUT_HELP: &str = "a duration (\"250ms\"), a percentile of the tool's round trip \
(\"p50\", \"p99.9\"), a multiple of its longest (\"2x max\"), or \"none\"";

pub(super) fn timeout(check: &Check, value: &Spanned<Value>, path: &str) -> Result<Wait> {
    let rule = match value.get_ref() {
        Value::Integer(t) if *t > 0 => Some(Wait::Fixed(Tick(*t as u64))),
        Value::String(s) => Wait::parse(s, |d| parse_duration(d).ok()),
        _ => None,
    };
    match rule {
        Some(Wait::Fixed(Tick::ZERO)) | None => check.error_allowing(
            value.span(),
            path,
            format!("{} is not a timeout", value.get_ref()),
            TIMEOUT_HELP,
        ),
        Some(rule) => Ok(rule),
    }
}

/// Unlimited attempts on a tool where every attempt fails in a retried way would spin until the
/// horizon: refuse the config instead.
pub(super) fn refuse_endless_retries(
    check: &Check,
    raw: &raw::Policy,
    path: &str,
    policy: &Policy,
    (called, tools): (&[usize], &[Tool]),
) -> Result<()> {
    // A deadline or cap that each layer entered resets bounds nothing as a whole.
    let limits = &policy.time.limits;
    let bounded = (limits.deadline.is_some() || limits.dispatch_cap.is_some())
        && !policy.rule.resets_each_layer();
    let layers = || (0..policy.rule.depth()).map(|l| policy.rule.retry_of(l));
    if layers().all(|r| r.max_attempts != Attempts::Unlimited) || bounded {
        return Ok(());
    }
    for &t in called {
        let tool = &tools[t];
        let f = &tool.faults;
        let wait = policy.time.waits[t].timeout;
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
