//! How long an attempt and the operation may take: `timeout`, `timeout_tie`, `deadline`,
//! `dispatch_cap`, `cancel_after` and cooperative `admission`.

use toml::{Spanned, Value};

use super::timeout;
use crate::config::check::{Check, Key, Result, key};
use crate::config::raw;
use crate::config::resolve::{at, duration, some, ticks, when};
use crate::policy::{Admission, Limits, Policy, Tie, Timing};
use crate::time::Tick;

pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<Timing> {
    let base = Policy::new("").time;
    let wait = key!(path, raw.timeout);
    let tie = key!(path, raw.timeout_tie);
    Ok(Timing {
        timeout: match wait.value {
            None => base.timeout,
            Some(v) => timeout(check, v, &wait.path)?,
        },
        tie: check.named(
            tie.value.as_ref(),
            &tie.path,
            &Tie::ALL,
            Tie::name,
            base.tie,
        )?,
        limits: limits(check, raw, path)?,
        // Resolved per tool once the tools called are known.
        waits: Vec::new(),
    })
}

fn limits(check: &Check, raw: &raw::Policy, path: &str) -> Result<Limits> {
    let positive = |key: Key<Option<Spanned<Value>>>| -> Result<Option<Tick>> {
        let Some(v) = key.value else { return Ok(None) };
        let t = check.duration(v, &key.path)?;
        if t == Tick::ZERO {
            return check.error_allowing(
                v.span(),
                &key.path,
                format!("a {} of 0 ends the operation before it starts", key.name),
                "a positive duration",
            );
        }
        Ok(Some(t))
    };
    let cap = key!(path, raw.dispatch_cap);
    Ok(Limits {
        deadline: positive(key!(path, raw.deadline))?,
        dispatch_cap: match cap.value {
            None => None,
            Some(c) => Some(check.count(Some(c), &cap.path, 1, "a cap of 0 dispatches nothing")?),
        },
        cancel_after: positive(key!(path, raw.cancel_after))?,
        admission: admission(check, raw, path)?,
    })
}

/// Cooperative admission, which measures the time left before a deadline.
fn admission(check: &Check, raw: &raw::Policy, path: &str) -> Result<Option<Admission>> {
    let key = key!(path, raw.admission);
    match key.value {
        None => Ok(None),
        Some(a) if raw.deadline.is_none() => check.error_allowing(
            a.span(),
            &key.path,
            "cooperative admission measures the time left before a deadline, and there is none"
                .into(),
            "a `deadline` beside `admission`",
        ),
        Some(a) => {
            let a = a.get_ref();
            let at = &key.path;
            let time = |k: Key<Spanned<Value>>| check.duration(k.value, &k.path);
            Ok(Some(Admission {
                reserve: time(key!(at, a.reserve))?,
                min_attempt: time(key!(at, a.min_attempt))?,
                timeout_cap: time(key!(at, a.timeout_cap))?,
            }))
        }
    }
}

pub(super) fn write(time: &Timing, out: &mut raw::Policy) {
    let Timing {
        timeout,
        tie,
        limits,
        waits: _,
    } = time;
    let Limits {
        deadline,
        dispatch_cap,
        cancel_after,
        admission,
    } = limits;
    out.timeout = some(timeout.to_string().into());
    out.timeout_tie = when(*tie != Policy::new("").time.tie, tie.name().into());
    out.deadline = deadline.and_then(ticks);
    out.dispatch_cap = dispatch_cap.map(at);
    out.cancel_after = cancel_after.and_then(ticks);
    out.admission = admission.as_ref().map(|a| {
        at(raw::Admission {
            reserve: at(duration(a.reserve)),
            min_attempt: at(duration(a.min_attempt)),
            timeout_cap: at(duration(a.timeout_cap)),
        })
    });
}

/// The operation's limits where set (the timeout is said beside the retry rule).
pub(super) fn describe(time: &Timing, out: &mut Vec<String>) {
    let limits = &time.limits;
    let said = [
        ("deadline", limits.deadline.map(|t| t.to_string())),
        ("dispatch cap", limits.dispatch_cap.map(|n| n.to_string())),
        (
            "cancelled after",
            limits.cancel_after.map(|t| t.to_string()),
        ),
    ];
    for (name, value) in said {
        if let Some(v) = value {
            out.push(format!("{name} {v}"));
        }
    }
}
