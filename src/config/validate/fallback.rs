//! Fallbacks, read before the graph is built: each edge a configuration names
//! (`edge."api->db" = { fallback = ["replica-db"], cooldown_after = 3, cooldown = "5s" }`)
//! may list the tools its call turns to once its own policy has given up, and each of those
//! is an edge from the same caller. A fallback belongs to the edge whose call fails, so a
//! configuration's own table, which stands on every edge it does not name, has none.

use toml::Spanned;

use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::Tool;
use crate::policy::Cooldown;

/// The fallbacks one configuration gives one edge, as written.
pub(super) struct Fallen {
    /// Which `[[policy]]` and which of its `edge` entries.
    pub policy: usize,
    pub edge: String,
    pub caller: Option<usize>,
    /// The tools, in order, each with where it is written.
    pub tools: Vec<(usize, std::ops::Range<usize>, String)>,
}

const HELP: &str = "edge.\"task->primary\" = { fallback = [\"secondary\"] }: a list of tools \
    tried in order once the edge's own policy gives up";

/// Every fallback list of every configuration. An entry whose edge names no tools is left to
/// the edge check, which says what the edges are.
pub(super) fn read(
    check: &Check,
    policies: &[Spanned<raw::Policy>],
    tools: &[Tool],
) -> Result<Vec<Fallen>> {
    let options: Vec<(&str, usize)> = (tools.iter().enumerate())
        .map(|(i, t)| (t.name.as_str(), i))
        .collect();
    let by_name = |name: &str| tools.iter().position(|t| t.name == name);
    let mut all = Vec::new();
    for (i, p) in policies.iter().enumerate() {
        let path = format!("policy[{i}]");
        own_table(check, p.get_ref(), &path)?;
        let Some(entries) = &p.get_ref().edge else {
            continue;
        };
        for (key, entry) in entries.get_ref() {
            let at = format!("{path}.edge.\"{key}\"");
            let Some(list) = &entry.get_ref().fallback else {
                continue;
            };
            let Some((caller, primary)) = key.split_once("->") else {
                continue;
            };
            let caller = match caller {
                "task" => None,
                name => match by_name(name) {
                    Some(t) => Some(t),
                    None => continue,
                },
            };
            let Some(primary) = by_name(primary) else {
                continue;
            };
            if list.get_ref().is_empty() {
                return check.error_allowing(
                    list.span(),
                    &format!("{at}.fallback"),
                    "an empty list of fallbacks".into(),
                    HELP,
                );
            }
            let mut chosen: Vec<(usize, std::ops::Range<usize>, String)> = Vec::new();
            for (k, name) in list.get_ref().iter().enumerate() {
                let at = format!("{at}.fallback[{k}]");
                let t = check.choice(name, &at, &options)?;
                let why = if t == primary {
                    Some(format!("\"{}\" is the call's own tool", tools[t].name))
                } else if Some(t) == caller {
                    Some(format!("\"{}\" would call itself", tools[t].name))
                } else if chosen.iter().any(|c| c.0 == t) {
                    Some(format!("\"{}\" is in the list twice", tools[t].name))
                } else {
                    None
                };
                if let Some(why) = why {
                    return check.error_allowing(name.span(), &at, why, "another tool");
                }
                chosen.push((t, name.span(), at));
            }
            all.push(Fallen {
                policy: i,
                edge: key.clone(),
                caller,
                tools: chosen,
            });
        }
    }
    Ok(all)
}

/// A configuration's own table has no fallback: it stands on every edge it does not name.
fn own_table(check: &Check, raw: &raw::Policy, path: &str) -> Result<()> {
    let span = (raw.fallback.as_ref().map(Spanned::span))
        .or(raw.cooldown_after.as_ref().map(Spanned::span))
        .or(raw.cooldown.as_ref().map(Spanned::span));
    match span {
        None => Ok(()),
        Some(span) => check.error_allowing(
            span,
            &format!("{path}.fallback"),
            "a fallback belongs to the edge whose call fails, and a configuration's own \
             policy stands on every edge it does not name"
                .into(),
            HELP,
        ),
    }
}

/// The cooldown of an edge `at` with fallbacks: `cooldown_after` failed calls within
/// `cooldown` rest the primary for `cooldown`, LiteLLM's defaults where left out; none without
/// either key.
pub(super) fn cooldown(
    check: &Check,
    raw: &raw::Policy,
    at: &str,
    falls_back: bool,
) -> Result<Option<Cooldown>> {
    if raw.cooldown_after.is_none() && raw.cooldown.is_none() {
        return Ok(None);
    }
    if !falls_back {
        let span = (raw.cooldown_after.as_ref().map(Spanned::span))
            .or(raw.cooldown.as_ref().map(Spanned::span))
            .unwrap_or(0..0);
        return check.error_allowing(
            span,
            &format!("{at}.cooldown"),
            "a cooldown sends calls to the fallbacks while the primary rests, and this edge \
             has none"
                .into(),
            "fallback = [\"…\"] beside it",
        );
    }
    let litellm = Cooldown::LITELLM;
    let after = check.count(
        raw.cooldown_after.as_ref(),
        &format!("{at}.cooldown_after"),
        litellm.after,
        "0 failures would rest the primary before any call",
    )?;
    let lasts = match &raw.cooldown {
        None => litellm.lasts,
        Some(v) => check.duration(v, &format!("{at}.cooldown"))?,
    };
    Ok(Some(Cooldown { after, lasts }))
}
