//! A tool's `burst`: its good and bad spells' means and the bad state's faults.

use toml::Spanned;

use super::tool::overridden;
use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::{Burst, Faults, Tool};
use crate::time::Tick;

/// The tool's burst process, where it has one: both means above 0; the bad state's faults in
/// [0, 1] and adding up to at most 1, each the tool's own where left out. Refused beside a
/// script (which decides every attempt) and beside replicas with faults of their own (whose
/// bad state it would not say).
pub(super) fn burst(
    check: &Check,
    raw: &raw::Tool,
    (faults, index): (&Faults, usize),
    path: &str,
) -> Result<Option<Burst>> {
    let Some(spanned) = &raw.burst else {
        return Ok(None);
    };
    let at = format!("{path}.burst");
    let beside = |what: &str| {
        check.error_allowing(
            spanned.span(),
            &at,
            format!("bursts beside {what}"),
            "a burst on a tool without a script and without replicas' own faults",
        )
    };
    if raw.script.is_some() {
        return beside("a script, which decides every attempt");
    }
    let own = |r: &raw::Replica| {
        [
            &r.request_loss,
            &r.server_error,
            &r.reply_loss,
            &r.throttled,
            &r.error_after_commit,
        ]
        .iter()
        .any(|f| f.is_some())
    };
    if raw.replica.iter().any(|r| own(r.get_ref())) {
        return beside("replicas with faults of their own");
    }
    let b = spanned.get_ref();
    let mean = |value: &Spanned<toml::Value>, key: &str| -> Result<Tick> {
        let key = format!("{at}.{key}");
        match check.duration(value, &key)? {
            Tick::ZERO => check.error_allowing(
                value.span(),
                &key,
                "a spell of 0 never happens".into(),
                "a mean duration above 0, such as \"60s\"",
            ),
            t => Ok(t),
        }
    };
    let (good, bad) = (mean(&b.good, "good")?, mean(&b.bad, "bad")?);
    let in_bad = match &b.in_bad {
        None => *faults,
        Some(written) => {
            let w = written.get_ref();
            let keys = [
                &w.request_loss,
                &w.server_error,
                &w.reply_loss,
                &w.throttled,
                &w.error_after_commit,
            ];
            let whose = ("the bad state's", written.span());
            overridden(check, *faults, keys, &format!("{at}.in_bad"), whose)?
        }
    };
    Ok(Some(Burst {
        good,
        bad,
        in_bad,
        domain: b.domain.as_ref().map(|d| d.get_ref().clone()),
        timeline: index,
        per_replica: match &b.per_replica {
            Some(p) if *p.get_ref() && raw.replicas.as_ref().is_none_or(|n| *n.get_ref() < 2) => {
                return check.error_allowing(
                    p.span(),
                    &format!("{at}.per_replica"),
                    "spells per replica at a tool with one server".into(),
                    "`replicas = N` (N ≥ 2) on the tool beside it",
                );
            }
            p => p.as_ref().is_some_and(|p| *p.get_ref()),
        },
    }))
}

/// Ties each tool that names a failure domain to the domain's first tool, whose stream draws
/// the spells they all meet: one timeline has one pair of means, so every tool of a domain must
/// give the first one's `good` and `bad`.
pub(super) fn domains(check: &Check, raw: &[Spanned<raw::Tool>], tools: &mut [Tool]) -> Result<()> {
    for i in 0..tools.len() {
        let Some(domain) = tools[i].burst.as_ref().and_then(|b| b.domain.clone()) else {
            continue;
        };
        let first = (0..i)
            .find(|&j| {
                (tools[j].burst.as_ref()).is_some_and(|b| b.domain.as_ref() == Some(&domain))
            })
            .unwrap_or(i);
        let (theirs, mine) = (tools[first].burst.clone(), tools[i].burst.as_mut());
        let (Some(theirs), Some(mine)) = (theirs, mine) else {
            continue;
        };
        if theirs.per_replica != mine.per_replica {
            let written = raw[i].get_ref().burst.as_ref().expect("a burst as read");
            return check.error_allowing(
                written.span(),
                &format!("tool[{i}].burst"),
                format!(
                    "the failure domain \"{domain}\" has spells {} in tool `{}`",
                    if theirs.per_replica {
                        "per replica"
                    } else {
                        "for the whole tool"
                    },
                    tools[first].name
                ),
                &format!("per_replica = {} here too", theirs.per_replica),
            );
        }
        if (theirs.good, theirs.bad) != (mine.good, mine.bad) {
            let written = raw[i].get_ref().burst.as_ref().expect("a burst as read");
            return check.error_allowing(
                written.span(),
                &format!("tool[{i}].burst"),
                format!(
                    "the failure domain \"{domain}\" has spells of good = {}, bad = {} in tool `{}`, \
                     and one timeline has one pair of means",
                    theirs.good, theirs.bad, tools[first].name
                ),
                &format!("good = \"{}\", bad = \"{}\" here too", theirs.good, theirs.bad),
            );
        }
        mine.timeline = first;
    }
    Ok(())
}
