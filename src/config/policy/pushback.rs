//! What a policy does with a server's Retry-After: `retry_after` and the `retry_after_*` keys
//! that refine a wait the policy heeds.

use std::ops::Range;

use toml::{Spanned, Value};

use crate::config::check::{Check, Key, Result, key};
use crate::config::raw;
use crate::config::resolve::{duration, text, ticks, when};
use crate::policy::{OverLimit, Pushback, RetryAfter, RetryAfterFrom};

pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<Pushback> {
    let base = Pushback::default();
    let mode = key!(path, raw.retry_after);
    let mode = check.named(
        mode.value.as_ref(),
        &mode.path,
        &RetryAfter::ALL,
        RetryAfter::name,
        base.mode,
    )?;
    // Each refinement is refused where the policy does not wait on the Retry-After at all.
    let from = key!(path, raw.retry_after_from);
    let from = match from.value {
        None => base.from,
        Some(v) => {
            waits_on(check, v.span(), from.name, mode, path)?;
            let all = &RetryAfterFrom::ALL;
            check.named(Some(v), &from.path, all, RetryAfterFrom::name, base.from)?
        }
    };
    let duration = |key: Key<Option<Spanned<Value>>>| match key.value {
        None => Ok(None),
        Some(v) => {
            waits_on(check, v.span(), key.name, mode, path)?;
            check.duration(v, &key.path).map(Some)
        }
    };
    let flag = |key: Key<Option<Spanned<bool>>>, default: bool| match key.value {
        None => Ok(default),
        Some(v) => waits_on(check, v.span(), key.name, mode, path).map(|()| *v.get_ref()),
    };
    Ok(Pushback {
        mode,
        from,
        jitter: duration(key!(path, raw.retry_after_jitter))?.unwrap_or(base.jitter),
        max: duration(key!(path, raw.retry_after_max))?,
        over_backoff: duration(key!(path, raw.retry_after_over_backoff))?,
        retries: flag(key!(path, raw.retry_after_retries), base.retries)?,
        resets: flag(key!(path, raw.retry_after_resets), base.resets)?,
        limit: limit(check, raw, mode, path)?,
    })
}

/// `retry_after_limit`, the longest Retry-After heeded, and `retry_after_over_limit`, what a
/// longer one does: `"backoff"` (the default) or `"stop"`.
fn limit(
    check: &Check,
    raw: &raw::Policy,
    mode: RetryAfter,
    path: &str,
) -> Result<Option<(crate::time::Tick, OverLimit)>> {
    let over = key!(path, raw.retry_after_over_limit);
    let limit = key!(path, raw.retry_after_limit);
    let Some(spanned) = limit.value else {
        if let Some(v) = over.value {
            return check.error_allowing(
                v.span(),
                &over.path,
                "what to do over a limit, and no limit".into(),
                "`retry_after_limit` beside it (\"60s\": the Anthropic SDK's)",
            );
        }
        return Ok(None);
    };
    waits_on(check, spanned.span(), limit.name, mode, path)?;
    let most = check.duration(spanned, &limit.path)?;
    let over = check.named(
        over.value.as_ref(),
        &over.path,
        &OverLimit::ALL,
        OverLimit::name,
        OverLimit::Backoff,
    )?;
    Ok(Some((most, over)))
}

/// Refuses `key`, a rule for a Retry-After the policy waits on, where the policy does not.
fn waits_on(
    check: &Check,
    span: Range<usize>,
    key: &str,
    mode: RetryAfter,
    path: &str,
) -> Result<()> {
    if mode.waits() {
        return Ok(());
    }
    check.error_allowing(
        span,
        &format!("{path}.{key}"),
        format!(
            "{key} applies to a Retry-After the policy waits on, and this one's is \"{}\"",
            mode.name()
        ),
        &format!("retry_after = \"honour\" (the default) or \"replace\" beside {key}"),
    )
}

pub(super) fn write(pushback: &Pushback, out: &mut raw::Policy) {
    let Pushback {
        mode,
        from,
        jitter,
        max,
        over_backoff,
        retries,
        resets,
        limit,
    } = *pushback;
    let base = Pushback::default();
    out.retry_after = text(mode.name());
    out.retry_after_from = when(from != base.from, from.name().into());
    out.retry_after_jitter = when(jitter != base.jitter, duration(jitter));
    out.retry_after_max = max.and_then(ticks);
    out.retry_after_over_backoff = over_backoff.and_then(ticks);
    out.retry_after_retries = when(retries, true);
    out.retry_after_resets = when(resets, true);
    out.retry_after_limit = limit.and_then(|l| ticks(l.0));
    out.retry_after_over_limit = limit.and_then(|l| text(l.1.name()));
}

/// Where the wait is read, and a limit on it, where not the plain header's.
pub(super) fn describe(pushback: &Pushback, out: &mut Vec<String>) {
    match pushback.from {
        RetryAfterFrom::Header => {}
        RetryAfterFrom::HeaderMs => out.push("reads retry-after-ms first".into()),
        RetryAfterFrom::Reset => out.push("waits for a 429's reset".into()),
    }
    if let Some((most, over)) = pushback.limit {
        out.push(format!("a Retry-After over {most}: {}", over.name()));
    }
}
