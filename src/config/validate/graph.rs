//! A service's `calls` and the graph they make: each call names a tool, a stage of calls made
//! together is a list, an optional call is a table; a call that leads back to its caller is
//! refused where it is written, a fallback from a service (see [`super::fallback`]) counted as
//! one of its calls.

use toml::{Spanned, Value};

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::Tool;

/// A stage as read: each call's tool and whether it is optional, with where it is written.
pub(super) type Stages = Vec<Vec<(usize, bool)>>;

const CALL_HELP: &str = "a tool's name (\"db\"), a list of names called together \
    ([\"db\", \"cache\"]), or { call = \"db\", optional = true, times = 10 }; for example \
    calls = [\"auth\", [\"db\", \"cache\"]]";

/// Every tool's stages, by tool (a plain tool has none), and the calls one call of each leads
/// to below it.
pub(super) fn stages(
    check: &Check,
    raw: &[Spanned<raw::Tool>],
    tools: &[Tool],
    fallen: &[super::fallback::Fallen],
) -> Result<(Vec<Stages>, Vec<u64>)> {
    let mut all = Vec::new();
    let mut spans = Vec::new();
    let mut counted = Vec::new();
    let mut written_calls: u64 = 0;
    for (t, spanned) in raw.iter().enumerate() {
        let path = format!("tool[{t}].calls");
        let Some(list) = &spanned.get_ref().calls else {
            all.push(Vec::new());
            spans.push(Vec::new());
            counted.push(Vec::new());
            continue;
        };
        if list.get_ref().is_empty() {
            return check.error_allowing(
                list.span(),
                &path,
                "a service with no calls".into(),
                CALL_HELP,
            );
        }
        if tools[t].script.is_some() {
            return check.error_allowing(
                list.span(),
                &path,
                "a scripted tool's outcomes are listed: it makes no calls".into(),
                "calls on a tool without a script",
            );
        }
        let mut stages = Vec::new();
        let mut written = Vec::new();
        let mut own = Vec::new();
        for (i, step) in list.get_ref().iter().enumerate() {
            let mut stage = Vec::new();
            for (value, at, call, times) in stage_of(check, step, &format!("{path}[{i}]"), tools)? {
                if call.0 == t {
                    return check.error_allowing(
                        value.span(),
                        &at,
                        format!("\"{}\" calls itself", tools[t].name),
                        "a call to another tool",
                    );
                }
                written_calls += times as u64;
                if written_calls > MOST_WRITTEN_CALLS {
                    return check.error_allowing(
                        value.span(),
                        &at,
                        format!(
                            "the services' calls come to more than {MOST_WRITTEN_CALLS}, `times` counted"
                        ),
                        "fewer calls, or smaller `times`",
                    );
                }
                stage.extend(std::iter::repeat_n(call, times));
                own.push((call.0, times as u64, value.span(), at.clone()));
                written.push((call.0, value.span(), at));
            }
            stages.push(stage);
        }
        all.push(stages);
        spans.push(written);
        counted.push(own);
    }
    for f in fallen {
        if let Some(caller) = f.caller {
            spans[caller].extend(f.tools.iter().cloned());
        }
    }
    acyclic(check, tools, &spans)?;
    let below = below(check, &counted)?;
    Ok((all, below))
}

/// The most calls written across a config's services, each `times` counted: what their stages
/// hold in memory.
pub const MOST_WRITTEN_CALLS: u64 = 1_000_000;

/// The most calls one call may lead to below it, over every level: two stacked fan-outs
/// multiply, and every call beneath one task's call can be in flight at once.
pub const MOST_CALLS_BELOW: u64 = 100_000;

/// The most services one below another: a deeper chain is no service graph, and each level
/// costs every attempt beneath it a step up the chain.
pub const MOST_DEPTH: usize = 100;

/// A service's calls as written, each with its tool, its `times`, and where it is written.
pub(super) type Counted = Vec<(usize, u64, std::ops::Range<usize>, String)>;

/// The calls one call of each tool leads to below it, over every level; refuses a graph where
/// one leads to more than [`MOST_CALLS_BELOW`], or a chain of services more than
/// [`MOST_DEPTH`] deep, at the call that passes the bound. The graph is acyclic, checked
/// before; the walk remembers each tool's count and depth, so it is linear in the calls, and
/// goes no deeper than the cycle check's walk did (which stops at [`MOST_DEPTH`]).
fn below(check: &Check, counted: &[Counted]) -> Result<Vec<u64>> {
    /// A tool's calls below one call of it, and the services in its longest chain, itself
    /// included.
    type Known = Option<(u64, usize)>;
    enum Past {
        Calls(usize, usize),
        Depth(usize, usize),
    }
    fn visit(
        t: usize,
        counted: &[Counted],
        known: &mut [Known],
    ) -> std::result::Result<(u64, usize), Past> {
        if let Some(k) = known[t] {
            return Ok(k);
        }
        let (mut n, mut depth) = (0u64, 1usize);
        for (k, (callee, times, _, _)) in counted[t].iter().enumerate() {
            let (below, deep) = visit(*callee, counted, known)?;
            n = n.saturating_add(times.saturating_mul(1 + below));
            if n > MOST_CALLS_BELOW {
                return Err(Past::Calls(t, k));
            }
            depth = depth.max(1 + deep);
            if depth > MOST_DEPTH {
                return Err(Past::Depth(t, k));
            }
        }
        known[t] = Some((n, depth));
        Ok((n, depth))
    }
    let mut known = vec![None; counted.len()];
    for t in 0..counted.len() {
        let (caller, k, why, allowed) = match visit(t, counted, &mut known) {
            Ok(_) => continue,
            Err(Past::Calls(caller, k)) => (
                caller,
                k,
                format!(
                    "a call here leads to more than {MOST_CALLS_BELOW} calls below it: fan-outs down a path multiply"
                ),
                format!(
                    "at most {MOST_CALLS_BELOW} calls below any one call, every level and `times` counted"
                ),
            ),
            Err(Past::Depth(caller, k)) => (
                caller,
                k,
                format!("a chain of more than {MOST_DEPTH} services, one calling the next"),
                format!("at most {MOST_DEPTH} services in a chain below a task"),
            ),
        };
        let (_, _, span, at) = &counted[caller][k];
        return check.error_allowing(span.clone(), at, why, &allowed);
    }
    Ok(known.into_iter().map(|k| k.map_or(0, |(n, _)| n)).collect())
}

/// One call of a stage as written: its value, where it is written, the call (its tool and
/// whether it is optional), and how many times it is made.
pub(super) type Written = (Spanned<Value>, String, (usize, bool), usize);

/// One stage's calls as written (`step`, at `at`).
pub(super) fn stage_of(
    check: &Check,
    step: &Spanned<Value>,
    at: &str,
    tools: &[Tool],
) -> Result<Vec<Written>> {
    let calls: Vec<(Spanned<Value>, String)> = match step.get_ref() {
        Value::Array(together) if together.is_empty() => {
            return check.error_allowing(step.span(), at, "an empty stage".into(), CALL_HELP);
        }
        Value::Array(together) => (together.iter().enumerate())
            .map(|(k, v)| (Spanned::new(step.span(), v.clone()), format!("{at}[{k}]")))
            .collect(),
        _ => vec![(step.clone(), at.to_string())],
    };
    (calls.into_iter())
        .map(|(value, at)| {
            let (call, times) = call(check, &value, &at, tools)?;
            Ok((value, at, call, times))
        })
        .collect()
}

/// The most calls one entry makes with `times`: a fan-out far wider than any service makes.
const MAX_TIMES: i64 = 10_000;

/// One call: a name, or a table naming it with `optional` and `times` (that many calls of it,
/// together); the call and how many times it is made.
fn call(
    check: &Check,
    value: &Spanned<Value>,
    at: &str,
    tools: &[Tool],
) -> Result<((usize, bool), usize)> {
    let options: Vec<(&str, usize)> = (tools.iter().enumerate())
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let named = |name: &str| Spanned::new(value.span(), name.to_string());
    match value.get_ref() {
        Value::String(name) => Ok(((check.choice(&named(name), at, &options)?, false), 1)),
        Value::Table(table) => {
            let known = ["call", "optional", "times"];
            if let Some(key) = table.keys().find(|k| !known.contains(&k.as_str())) {
                return check.error_allowing(
                    value.span(),
                    &format!("{at}.{key}"),
                    format!("unknown key `{key}` in a call"),
                    "`call` (a tool's name), `optional` (true or false) and `times` (a count)",
                );
            }
            let times = match table.get("times") {
                None => 1,
                Some(Value::Integer(n)) if (1..=MAX_TIMES).contains(n) => *n as usize,
                Some(_) => {
                    return check.error_allowing(
                        value.span(),
                        &format!("{at}.times"),
                        "`times` is how many calls of the tool go out together".into(),
                        &format!("a whole number from 1 to {MAX_TIMES}"),
                    );
                }
            };
            let Some(Value::String(name)) = table.get("call") else {
                return check.error_allowing(
                    value.span(),
                    &format!("{at}.call"),
                    "a call names its tool".into(),
                    CALL_HELP,
                );
            };
            let optional = match table.get("optional") {
                None => false,
                Some(Value::Boolean(b)) => *b,
                Some(_) => {
                    return check.error_allowing(
                        value.span(),
                        &format!("{at}.optional"),
                        "`optional` is true or false".into(),
                        "optional = true: the attempt passes the call's failure",
                    );
                }
            };
            let tool = check.choice(&named(name), &format!("{at}.call"), &options)?;
            Ok(((tool, optional), times))
        }
        _ => check.error_allowing(value.span(), at, "not a call".into(), CALL_HELP),
    }
}

/// Refuses a cycle: the call that leads back to a tool on the way to it, named with the way.
fn acyclic(
    check: &Check,
    tools: &[Tool],
    spans: &[Vec<(usize, std::ops::Range<usize>, String)>],
) -> Result<()> {
    // 0: not seen, 1: on the way, 2: done.
    let mut state = vec![0u8; tools.len()];
    let mut way: Vec<usize> = Vec::new();
    fn visit(
        t: usize,
        state: &mut [u8],
        way: &mut Vec<usize>,
        spans: &[Vec<(usize, std::ops::Range<usize>, String)>],
    ) -> Option<(usize, usize)> {
        state[t] = 1;
        way.push(t);
        for (k, (callee, _, _)) in spans[t].iter().enumerate() {
            match state[*callee] {
                1 => return Some((t, k)),
                0 if way.len() >= MOST_DEPTH => return Some((t, k)),
                0 => {
                    if let Some(found) = visit(*callee, state, way, spans) {
                        return Some(found);
                    }
                }
                _ => {}
            }
        }
        way.pop();
        state[t] = 2;
        None
    }
    for t in 0..tools.len() {
        if state[t] != 0 {
            continue;
        }
        if let Some((caller, k)) = visit(t, &mut state, &mut way, spans) {
            let (callee, span, at) = &spans[caller][k];
            if way.len() >= MOST_DEPTH && state[*callee] != 1 {
                return check.error_allowing(
                    span.clone(),
                    at,
                    format!("a chain of more than {MOST_DEPTH} services, one calling the next"),
                    &format!("at most {MOST_DEPTH} services in a chain below a task"),
                );
            }
            let start = way.iter().position(|w| w == callee).unwrap_or(0);
            let names: Vec<&str> = (way[start..].iter().chain([callee]))
                .map(|&w| tools[w].name.as_str())
                .collect();
            return check.error_allowing(
                span.clone(),
                at,
                format!("a cycle: {}", names.join(" → ")),
                "calls that lead down, never back to a tool on the way",
            );
        }
    }
    Ok(())
}

/// Refuses a forwarded key with nothing stable to forward: `forward` on a task's edge (the task
/// has no request of its own), or on an edge from a service some request into which carries
/// no key that stays the same across its retries.
pub(super) fn forwarding(
    check: &Check,
    raw: &raw::Policy,
    path: &str,
    policy: &crate::policy::Policy,
    graph: &crate::model::Graph,
    tools: &[Tool],
) -> Result<()> {
    use crate::policy::KeyScope;
    // The configuration's own key stands on the task's calls, named or not.
    if policy.rule.key == KeyScope::Forward {
        let span = raw.idempotency_key.as_ref().map_or(0..0, Spanned::span);
        return check.error_allowing(
            span,
            &format!("{path}.idempotency_key"),
            "a configuration's own key stands on the task's calls, and a task has no request \
             whose key to forward"
                .into(),
            "\"per_intent\" here, \"forward\" on the edges below the task's calls",
        );
    }
    for (e, edge) in graph.edges.iter().enumerate() {
        if policy.on_edge(e).rule.key != KeyScope::Forward {
            continue;
        }
        let name = edge.name(tools);
        let named = policy.edge.overrides.iter().any(|(n, _)| *n == e);
        let written = match (named, &raw.edge) {
            (true, Some(entries)) => entries.get_ref().get(&name).map(|p| p.get_ref()),
            _ => None,
        };
        let (key, at) = match written {
            Some(p) => (
                &p.idempotency_key,
                format!("{path}.edge.\"{name}\".idempotency_key"),
            ),
            None => (&raw.idempotency_key, format!("{path}.idempotency_key")),
        };
        let span = key.as_ref().map_or(0..0, Spanned::span);
        let Some(caller) = edge.caller else {
            return check.error_allowing(
                span,
                &at,
                format!(
                    "\"{name}\" is a task's call, and a task has no request whose key to forward"
                ),
                "\"per_intent\" on the task's calls, \"forward\" on the edges below them",
            );
        };
        let into = (graph.edges.iter().enumerate())
            .find(|(i, into)| into.callee == caller && !policy.on_edge(*i).rule.key.is_stable());
        if let Some((i, into)) = into {
            return check.error_allowing(
                span,
                &at,
                format!(
                    "\"{name}\" forwards the key of the request it serves, and requests over \
                     \"{}\" carry none that stays the same across retries ({})",
                    into.name(tools),
                    policy.on_edge(i).rule.key.name()
                ),
                &format!(
                    "idempotency_key = \"per_intent\" (or \"forward\") on every edge into \"{}\"",
                    tools[caller].name
                ),
            );
        }
    }
    Ok(())
}
