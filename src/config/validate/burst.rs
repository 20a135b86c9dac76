//! A tool's `burst`: its good and bad spells' means and the bad state's faults.

use toml::Spanned;

use super::tool::overridden;
use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::{Burst, Faults};
use crate::time::Tick;

/// The tool's burst process, where it has one: both means above 0; the bad state's faults in
/// [0, 1] and adding up to at most 1, each the tool's own where left out. Refused beside a
/// script (which decides every attempt) and beside replicas with faults of their own (whose
/// bad state it would not say).
pub(super) fn burst(
    check: &Check,
    raw: &raw::Tool,
    faults: &Faults,
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
    Ok(Some(Burst { good, bad, in_bad }))
}
