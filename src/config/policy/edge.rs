//! What a call over an edge of the call graph carries (`deadline_propagation`,
//! `deadline_margin`) and turns to once failed (`fallback`, `cooldown_after`, `cooldown`, read
//! with the graph in `validate::fallback`). The edges a configuration names are its caller's.

use toml::Spanned;

use crate::config::check::{Check, Result, key};
use crate::config::raw;
use crate::config::resolve::{at, texts, ticks, when};
use crate::model::Tool;
use crate::policy::{EdgeRules, Policy, Propagation};
use crate::time::Tick;

pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<EdgeRules> {
    Ok(EdgeRules {
        propagation: propagation(check, raw, path)?,
        ..Policy::new("").edge
    })
}

/// `deadline_propagation`, with `deadline_margin` for `propagate_minus` only.
fn propagation(check: &Check, raw: &raw::Policy, path: &str) -> Result<Propagation> {
    let chosen = key!(path, raw.deadline_propagation);
    let options: Vec<(&str, usize)> = (Propagation::NAMES.iter().enumerate())
        .map(|(i, n)| (*n, i))
        .collect();
    let index = match chosen.value {
        None => 0,
        Some(v) => check.choice(v, &chosen.path, &options)?,
    };
    let margin = key!(path, raw.deadline_margin);
    match (index, margin.value) {
        (0, None) => Ok(Propagation::None),
        (2, Some(m)) => Ok(Propagation::Propagate {
            margin: check.duration(m, &margin.path)?,
        }),
        (2, None) => check.error_allowing(
            chosen.value.as_ref().map_or(0..0, Spanned::span),
            &margin.path,
            "`propagate_minus` takes a margin off the deadline it carries, and none is given"
                .into(),
            "deadline_margin = \"5ms\" beside it",
        ),
        (_, Some(m)) => check.error_allowing(
            m.span(),
            &margin.path,
            "a margin is taken off a propagated deadline, and this one is not propagated less one"
                .into(),
            "deadline_propagation = \"propagate_minus\" beside it",
        ),
        (_, None) => Ok(Propagation::Propagate { margin: Tick::ZERO }),
    }
}

pub(super) fn write(edge: &EdgeRules, tools: &[Tool], out: &mut raw::Policy) {
    let EdgeRules {
        propagation,
        fallback,
        overrides: _,
    } = edge;
    out.deadline_propagation = when(*propagation != Propagation::None, propagation.name().into());
    out.deadline_margin = match propagation {
        Propagation::Propagate { margin } if *margin > Tick::ZERO => ticks(*margin),
        _ => None,
    };
    out.fallback = (!fallback.tools.is_empty())
        .then(|| texts(fallback.tools.iter().map(|&t| tools[t].name.as_str())))
        .flatten();
    out.cooldown_after = fallback.cooldown.map(|c| at(c.after));
    out.cooldown = fallback.cooldown.and_then(|c| ticks(c.lasts));
}

/// The deadline carried (the fallbacks are said on a line of their own, by [`fallbacks`]).
pub(super) fn describe(edge: &EdgeRules, out: &mut Vec<String>) {
    match edge.propagation {
        Propagation::None => {}
        Propagation::Propagate { margin } if margin == Tick::ZERO => {
            out.push("carries its caller's deadline".into());
        }
        Propagation::Propagate { margin } => {
            out.push(format!("carries its caller's deadline less {margin}"));
        }
    }
}

/// An edge's fallbacks and cooldown, in words, if it has any.
pub fn fallbacks(edge: &EdgeRules, tools: &[Tool]) -> Option<String> {
    let names: Vec<&str> = (edge.fallback.tools.iter())
        .map(|&t| tools[t].name.as_str())
        .collect();
    if names.is_empty() {
        return None;
    }
    let mut text = format!("then falls back to {}", names.join(", then "));
    if let Some(c) = edge.fallback.cooldown {
        text.push_str(&format!(
            "; past {} failed calls, each within {} of the last, the primary rests {}",
            c.after, c.lasts, c.lasts
        ));
    }
    Some(text)
}
