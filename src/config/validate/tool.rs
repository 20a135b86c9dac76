//! A `[[tool]]`: its faults, latencies, server, rate limit, outages and script.

use super::burst;
use super::default;
use super::provider;
use crate::config::check::{Check, Key, Result, key};
use crate::config::raw;
use crate::model::{
    CapacityWindow, Fate, Faults, Latency, LimitScope, Line, LineOrder, Lookup, LossSignal, Outage,
    OutageMode, Price, RateLimit, Replica, Script, ServerSpec, Step, Tool, ToolKind, VersionCheck,
};
use crate::time::{TICKS_PER_SECOND, Tick};
use toml::Spanned;

pub(super) fn tool(
    check: &Check,
    spanned: &Spanned<raw::Tool>,
    (index, path): (usize, &str),
) -> Result<Tool> {
    let raw = spanned.get_ref();
    let name = check.name(&raw.name, &format!("{path}.name"))?;
    // Every default is the library's: a key left out is what `Tool::new` leaves.
    let base = Tool::new(name.clone(), ToolKind::Write);
    let faults = faults(check, spanned, path)?;
    let leg = |value: &Option<Spanned<raw::Latency>>, key: &str| match value {
        Some(l) => crate::config::latency::latency(check, l, &format!("{path}.{key}")),
        None => Ok(base.request_latency.clone()),
    };
    let loss_seen_as = check.named(
        raw.loss_seen_as.as_ref(),
        &format!("{path}.loss_seen_as"),
        &LossSignal::ALL,
        LossSignal::name,
        base.loss_seen_as,
    )?;
    let kind = check.named(
        raw.kind.as_ref(),
        &format!("{path}.kind"),
        &ToolKind::ALL,
        ToolKind::name,
        ToolKind::Write,
    )?;
    let zones = zones(check, raw, path)?;
    let provider = provider::provider(check, spanned, kind, path)?;
    let max_tokens = provider.as_ref().map(|p| p.max_tokens);
    let server = server(check, raw, (kind, max_tokens), &zones, path)?;
    let script = match &raw.script {
        None => None,
        Some(steps) => Some(script(check, raw, steps, path)?),
    };
    let price = match &raw.price {
        None => Price::default(),
        Some(p) => provider::price(check, p, kind, &format!("{path}.price"))?,
    };
    let service_time = leg(&raw.service_time, "service_time")?;
    Ok(Tool {
        name,
        faults,
        loss_seen_as,
        request_latency: leg(&raw.request_latency, "request_latency")?,
        service_time: service_time.clone(),
        reply_latency: leg(&raw.reply_latency, "reply_latency")?,
        script,
        burst: burst::burst(check, raw, (&faults, index), path)?,
        health: super::health::health(check, raw, &faults, path)?,
        lookup: Lookup {
            time: match &raw.lookup_time {
                None => base.lookup.time,
                Some(v) => check.duration(v, &format!("{path}.lookup_time"))?,
            },
            failure: check.probability(&raw.lookup_failure, &format!("{path}.lookup_failure"))?,
            lag: match &raw.commit_lag {
                None => base.lookup.lag,
                Some(v) => check.duration(v, &format!("{path}.commit_lag"))?,
            },
        },
        cooperative: raw
            .cooperative
            .as_ref()
            .map_or(base.cooperative, |c| *c.get_ref()),
        replicas: replicas(check, raw, &faults, &service_time, !zones.is_empty(), path)?,
        zones,
        server,
        provider,
        price,
        reserve: match &raw.reserve {
            None => 0,
            Some(_) => {
                let dollars = check.number(
                    raw.reserve.as_ref(),
                    &format!("{path}.reserve"),
                    0.0,
                    |d| d.is_finite() && (0.0..=provider::MOST_PRICE).contains(&d),
                    "an amount to reserve",
                    "dollars from 0 to 1000000",
                )?;
                libm::round(dollars * crate::model::price::PICO) as u64
            }
        },
    })
}

/// The chances of each way an attempt ends, at most 1 in all, and the Retry-After of a
/// throttle.
fn faults(check: &Check, spanned: &Spanned<raw::Tool>, path: &str) -> Result<Faults> {
    let raw = spanned.get_ref();
    let p = |key: Key<Option<Spanned<f64>>>| check.probability(key.value, &key.path);
    let retry_after = key!(path, raw.retry_after);
    let faults = Faults {
        request_loss: p(key!(path, raw.request_loss))?,
        server_error: p(key!(path, raw.server_error))?,
        reply_loss: p(key!(path, raw.reply_loss))?,
        throttled: p(key!(path, raw.throttled))?,
        forbidden: p(key!(path, raw.forbidden))?,
        invalid: p(key!(path, raw.invalid))?,
        connect_failure: p(key!(path, raw.connect_failure))?,
        error_after_commit: p(key!(path, raw.error_after_commit))?,
        overloaded: p(key!(path, raw.overloaded))?,
        retry_after: match retry_after.value {
            None => None,
            Some(v) => Some(check.duration(v, &retry_after.path)?),
        },
    };
    let total = faults.total();
    if total > 1.0 + 1e-12 {
        return check.error_allowing(
            spanned.span(),
            path,
            format!(
                "request_loss + server_error + reply_loss + throttled + forbidden + invalid + connect_failure + error_after_commit + overloaded = {total}, more than 1"
            ),
            "probabilities of the ways an attempt ends that add up to at most 1",
        );
    }
    Ok(faults)
}

/// The server's side of a tool: its workers and line, outages and capacity windows, what it
/// keeps of keys, and its limits.
/// `max_tokens` is a model's, which its tokens-per-minute limit reserves with each request.
fn server(
    check: &Check,
    raw: &raw::Tool,
    (kind, max_tokens): (ToolKind, Option<u32>),
    zones: &[String],
    path: &str,
) -> Result<ServerSpec> {
    let workers = match &raw.workers {
        None => None,
        Some(w) => check.count_or_unlimited(
            w,
            &format!("{path}.workers"),
            "workers",
            "a whole number ≥ 1, or \"unlimited\"",
        )?,
    };
    let line = line(check, raw, workers, path)?;
    Ok(ServerSpec {
        kind,
        idempotent: raw.idempotent.as_ref().is_none_or(|i| *i.get_ref()),
        workers,
        line,
        outages: raw
            .outages
            .iter()
            .enumerate()
            .map(|(i, o)| {
                let at = format!("{path}.outages[{i}]");
                outage(check, o.get_ref(), zones, &at)
            })
            .collect::<Result<_>>()?,
        capacity: capacity(check, raw, workers, zones, path)?,
        key_retention: match &raw.key_retention {
            None => None,
            Some(v) => Some(check.duration(v, &format!("{path}.key_retention"))?),
        },
        drop_expired: raw.drop_expired.as_ref().is_some_and(|d| *d.get_ref()),
        abandon_at_deadline: (raw.abandon_at_deadline.as_ref()).is_some_and(|d| *d.get_ref()),
        slowdown: match &raw.slowdown {
            None => Tick::ZERO,
            Some(v) => check.duration(v, &format!("{path}.slowdown"))?,
        },
        version_check: match &raw.version_check {
            Some(v) if kind != ToolKind::Record => {
                return check.error_allowing(
                    v.span(),
                    &format!("{path}.version_check"),
                    "only a versioned record checks a version".into(),
                    "kind = \"record\" beside version_check",
                );
            }
            v => check.named(
                v.as_ref(),
                &format!("{path}.version_check"),
                &VersionCheck::ALL,
                VersionCheck::name,
                VersionCheck::Arrival,
            )?,
        },
        should_retry_header: raw
            .should_retry_header
            .as_ref()
            .is_some_and(|h| *h.get_ref()),
        retry_after_ms: match &raw.retry_after_ms {
            Some(v)
                if *v.get_ref() && raw.rate_limit.is_none() && raw.tokens_per_minute.is_none() =>
            {
                return check.error_allowing(
                    v.span(),
                    &format!("{path}.retry_after_ms"),
                    "a header of a rate limit's 429, and this tool has no rate limit".into(),
                    "`rate_limit` or `tokens_per_minute` beside it",
                );
            }
            v => v.as_ref().is_some_and(|v| *v.get_ref()),
        },
        fencing: raw.fencing.as_ref().is_some_and(|f| *f.get_ref()),
        rate_limit: match &raw.rate_limit {
            None => None,
            Some(r) => Some(rate_limit(check, r, &format!("{path}.rate_limit"))?),
        },
        token_limit: match (&raw.tokens_per_minute, max_tokens) {
            (Some(t), Some(max_tokens)) if kind == ToolKind::Model => Some(provider::token_limit(
                check,
                t,
                max_tokens,
                &format!("{path}.tokens_per_minute"),
            )?),
            _ => None,
        },
    })
}

/// The most replicas a tool may have: each is a server with its own state, made up front.
pub const MOST_REPLICAS: u64 = 128;

/// A tool's replicas: `replicas = N` servers, each as the tool says but where its
/// `[[tool.replica]]` entry says otherwise; none for one server without an override.
fn replicas(
    check: &Check,
    raw: &raw::Tool,
    faults: &Faults,
    service_time: &Latency,
    zoned: bool,
    path: &str,
) -> Result<Vec<Replica>> {
    let n = check.count_to(
        raw.replicas.as_ref(),
        &format!("{path}.replicas"),
        (1, "0 replicas serve no call"),
        MOST_REPLICAS,
        "a tool's most replicas",
    )?;
    if let (Some(r), Some(_), true) = (&raw.replicas, &raw.script, n > 1) {
        return check.error_allowing(
            r.span(),
            &format!("{path}.replicas"),
            "a scripted tool is one server: its script stands for every attempt".into(),
            "`replicas` or `script`, not both",
        );
    }
    if n == 1 && raw.replica.is_empty() && !zoned {
        return Ok(Vec::new());
    }
    let mut replicas = vec![
        Replica {
            faults: *faults,
            service_time: service_time.clone(),
        };
        n as usize
    ];
    let mut seen = Vec::new();
    for (i, entry) in raw.replica.iter().enumerate() {
        let at = format!("{path}.replica[{i}]");
        let e = entry.get_ref();
        let index = *e.index.get_ref();
        if index >= n || seen.contains(&index) {
            let why = match index >= n {
                true => format!("replica {index} of {n}, which are numbered from 0"),
                false => format!("a second entry for replica {index}"),
            };
            return check.error_allowing(
                e.index.span(),
                &format!("{at}.index"),
                why,
                &format!("one entry per replica, index 0 to {}", n - 1),
            );
        }
        seen.push(index);
        let replica = &mut replicas[index as usize];
        let keys = [
            &e.request_loss,
            &e.server_error,
            &e.reply_loss,
            &e.throttled,
            &e.error_after_commit,
        ];
        let whose = ("its", entry.span());
        replica.faults = overridden(check, replica.faults, keys, &at, whose)?;
        if let Some(l) = &e.service_time {
            replica.service_time =
                crate::config::latency::latency(check, l, &format!("{at}.service_time"))?;
        }
    }
    Ok(replicas)
}

/// A token bucket: a positive rate (at most one token a tick) a second or a minute, a burst
/// of one or more (one second's worth by default), and the unit its Retry-After is rounded up
/// to.
fn rate_limit(check: &Check, spanned: &Spanned<raw::RateLimit>, path: &str) -> Result<RateLimit> {
    let raw = spanned.get_ref();
    let per_second = match (&raw.per_second, &raw.per_minute) {
        (Some(r), None) => check.number(
            Some(r),
            &format!("{path}.per_second"),
            0.0,
            |r| r > 0.0 && r <= TICKS_PER_SECOND as f64,
            "a rate a bucket can refill at",
            "requests per second, above 0 and at most 1000000 (a token a tick)",
        )?,
        (None, Some(r)) => {
            check.number(
                Some(r),
                &format!("{path}.per_minute"),
                0.0,
                |r| r > 0.0 && r <= 60.0 * TICKS_PER_SECOND as f64,
                "a rate a bucket can refill at",
                "requests per minute, above 0 (a provider's RPM)",
            )? / 60.0
        }
        (Some(_), Some(m)) => {
            return check.error_allowing(
                m.span(),
                &format!("{path}.per_minute"),
                "a rate a second and a rate a minute".into(),
                "one of `per_second` and `per_minute`",
            );
        }
        (None, None) => {
            return check.error_allowing(
                spanned.span(),
                path,
                "a rate limit needs its rate".into(),
                "`per_second = R`, or `per_minute = R` (a provider's RPM)",
            );
        }
    };
    let burst = check.count(
        raw.burst.as_ref(),
        &format!("{path}.burst"),
        (per_second.round() as u32).max(1),
        "a bucket of 0 tokens lets nothing through",
    )?;
    let (scope, unit) = scope_and_unit(check, (&raw.scope, &raw.retry_after_unit), path)?;
    Ok(RateLimit::per_second(per_second, burst, scope, unit))
}

/// A limit's `scope` (one bucket for the tool, or one per caller) and the unit its
/// Retry-After is rounded up to: `rate_limit`'s and `tokens_per_minute`'s alike.
pub(super) fn scope_and_unit(
    check: &Check,
    (scope, unit): (&Option<Spanned<String>>, &Option<Spanned<toml::Value>>),
    path: &str,
) -> Result<(LimitScope, Tick)> {
    let scope = check.named(
        scope.as_ref(),
        &format!("{path}.scope"),
        &LimitScope::ALL,
        LimitScope::name,
        LimitScope::Tool,
    )?;
    let written = unit;
    let unit = check.duration_or(
        written,
        &format!("{path}.retry_after_unit"),
        default::RETRY_AFTER_UNIT,
    )?;
    if unit == Tick::ZERO {
        let span = written.as_ref().map_or(0..0, |u| u.span());
        return check.error_allowing(
            span,
            &format!("{path}.retry_after_unit"),
            "a Retry-After cannot be counted in units of 0".into(),
            "a positive duration: \"1s\" (an HTTP header), \"1ms\" (a retry-after-ms header)",
        );
    }
    Ok((scope, unit))
}

/// Capacity windows: each a span with a share in [0, 1) of the workers and the rate limit, in
/// time order and apart; a tool with neither workers nor a rate limit has nothing to cut.
fn capacity(
    check: &Check,
    raw: &raw::Tool,
    workers: Option<u32>,
    zones: &[String],
    path: &str,
) -> Result<Vec<CapacityWindow>> {
    let mut windows: Vec<CapacityWindow> = Vec::new();
    for (i, spanned) in raw.capacity.iter().enumerate() {
        let at = format!("{path}.capacity[{i}]");
        if workers.is_none() && raw.rate_limit.is_none() {
            return check.error_allowing(
                spanned.span(),
                &at,
                "a capacity window cuts workers or a rate limit, and this tool has neither".into(),
                "`workers = N` or a `rate_limit` beside `capacity`",
            );
        }
        let w = spanned.get_ref();
        let (from, until) = check.window(&w.from, &w.until, &at, "the window")?;
        let zone = zone(check, w.zone.as_ref(), zones, &at)?;
        // Windows that can meet at one server (the same zone, or one of them everywhere).
        let meet = |b: &&CapacityWindow| b.zone.is_none() || zone.is_none() || b.zone == zone;
        if let Some(before) = windows.iter().rfind(meet).filter(|b| from < b.until) {
            return check.error_allowing(
                w.from.span(),
                &format!("{at}.from"),
                format!(
                    "the window starts before the one before it ends ({})",
                    before.until
                ),
                "windows in time order, apart",
            );
        }
        let fraction = check.number(
            Some(&w.fraction),
            &format!("{at}.fraction"),
            1.0,
            |f| (0.0..1.0).contains(&f),
            "a share of capacity to keep",
            "a number from 0 (nothing left) up to but not including 1",
        )?;
        windows.push(CapacityWindow {
            from,
            until,
            fraction,
            zone,
        });
    }
    Ok(windows)
}

/// The zone a window names, by index into the tool's `zones`; `None` where it names none.
fn zone(
    check: &Check,
    name: Option<&Spanned<String>>,
    zones: &[String],
    path: &str,
) -> Result<Option<usize>> {
    let Some(name) = name else {
        return Ok(None);
    };
    match zones.iter().position(|z| z == name.get_ref()) {
        Some(i) => Ok(Some(i)),
        None if zones.is_empty() => check.error_allowing(
            name.span(),
            &format!("{path}.zone"),
            "the tool has no zones".into(),
            "`zones = [\"a\", \"b\"]` on the tool beside a window's `zone`",
        ),
        None => check.error_allowing(
            name.span(),
            &format!("{path}.zone"),
            format!("no zone \"{}\"", name.get_ref()),
            &format!("one of the tool's zones: {}", zones.join(", ")),
        ),
    }
}

/// A tool's zones: distinct names, the replicas spread over them in turn.
fn zones(check: &Check, raw: &raw::Tool, path: &str) -> Result<Vec<String>> {
    let Some(list) = &raw.zones else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = Vec::new();
    for (i, z) in list.get_ref().iter().enumerate() {
        let name = check.name(z, &format!("{path}.zones[{i}]"))?;
        if names.contains(&name) {
            return check.error_allowing(
                z.span(),
                &format!("{path}.zones[{i}]"),
                format!("a second zone named \"{name}\""),
                "a name of its own for each zone",
            );
        }
        names.push(name);
    }
    if names.is_empty() {
        return check.error_allowing(
            list.span(),
            &format!("{path}.zones"),
            "no zones".into(),
            "the zones' names, replica i standing in zone i mod their number",
        );
    }
    Ok(names)
}

pub(super) fn outage(
    check: &Check,
    raw: &raw::Outage,
    zones: &[String],
    path: &str,
) -> Result<Outage> {
    let (from, until) = check.window(&raw.from, &raw.until, path, "the outage")?;
    let mode = check.named(
        raw.mode.as_ref(),
        &format!("{path}.mode"),
        &OutageMode::ALL,
        OutageMode::name,
        OutageMode::FailFast,
    )?;
    let zone = zone(check, raw.zone.as_ref(), zones, path)?;
    Ok(Outage {
        from,
        until,
        mode,
        zone,
    })
}

/// A scripted tool's steps; its outcomes and times come from the script alone, so the keys of
/// faults and latencies are refused beside it.
pub(super) fn script(
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
        (
            "connect_failure",
            raw.connect_failure.as_ref().map(Spanned::span),
        ),
        (
            "error_after_commit",
            raw.error_after_commit.as_ref().map(Spanned::span),
        ),
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

/// The line in front of the workers: `line_limit` and `line_order`, which only a server with
/// workers has.
fn line(check: &Check, raw: &raw::Tool, workers: Option<u32>, path: &str) -> Result<Line> {
    let set = [
        raw.line_limit.as_ref().map(|l| (l.span(), "line_limit")),
        raw.line_order.as_ref().map(|o| (o.span(), "line_order")),
    ];
    if workers.is_none()
        && let Some((span, key)) = set.into_iter().flatten().next()
    {
        return check.error_allowing(
            span,
            &format!("{path}.{key}"),
            "a line forms only in front of a limited number of workers".into(),
            "`workers = N` beside the line's keys",
        );
    }
    let limit = match &raw.line_limit {
        None => None,
        Some(l) => check.count_or_unlimited(
            l,
            &format!("{path}.line_limit"),
            "requests in line",
            "a whole number ≥ 1 (requests that may wait), or \"unlimited\"",
        )?,
    };
    let order = check.named(
        raw.line_order.as_ref(),
        &format!("{path}.line_order"),
        &LineOrder::ALL,
        LineOrder::name,
        LineOrder::Fifo,
    )?;
    Ok(Line { limit, order })
}

/// `base` with the faults an entry overrides — a replica's, a burst's bad state —
/// `request_loss`, `server_error`, `reply_loss`, `throttled` and `error_after_commit` in that
/// order, each checked at `at.<key>` and `base`'s own where left out; together at most 1, or an
/// error at the entry saying `whose` probabilities they are.
pub(super) fn overridden(
    check: &Check,
    base: Faults,
    keys: [&Option<Spanned<f64>>; 5],
    at: &str,
    (whose, span): (&str, std::ops::Range<usize>),
) -> Result<Faults> {
    let p = |value: &Option<Spanned<f64>>, key: &str, own: f64| match value {
        None => Ok(own),
        some => check.probability(some, &format!("{at}.{key}")),
    };
    let [
        request_loss,
        server_error,
        reply_loss,
        throttled,
        error_after_commit,
    ] = keys;
    let f = Faults {
        request_loss: p(request_loss, "request_loss", base.request_loss)?,
        server_error: p(server_error, "server_error", base.server_error)?,
        reply_loss: p(reply_loss, "reply_loss", base.reply_loss)?,
        throttled: p(throttled, "throttled", base.throttled)?,
        error_after_commit: p(
            error_after_commit,
            "error_after_commit",
            base.error_after_commit,
        )?,
        ..base
    };
    if f.total() > 1.0 + 1e-12 {
        return check.error_allowing(
            span,
            at,
            format!(
                "{whose} fault probabilities add up to {}, more than 1",
                f.total()
            ),
            "probabilities of the ways an attempt ends that add up to at most 1",
        );
    }
    Ok(f)
}
