//! A `[[policy]]`: its retry rule and layers, backoff, timeout, limits and the rest, and the
//! rule that refuses retries that could never end.

use super::backoff::{backoff, backoff_or_none};
use super::concurrency::concurrency;
use super::guards::{breaker, retry_budget};
use super::hedging::hedges;
use super::send_rate::{send_rate, send_tokens};
use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::model::FailureClass;
use crate::model::{Fate, Tool};
use crate::policy::{
    Admission, Attempts, Balancer, Ejection, GateScope, KeyScope, Layer, Layers, Limits, OverLimit,
    Policy, Propagation, Pushback, Replan, ReplanFrom, Retry, RetryAfter, RetryAfterFrom,
    RetryHost, RetryOn, ShouldRetry, Tie, Wait,
};
use crate::time::{Tick, parse_duration};
use toml::{Spanned, Value};

#[expect(
    clippy::too_many_lines,
    reason = "215 lines: to be split by what it does"
)]
pub(super) fn policy(check: &Check, raw: &raw::Policy, path: &str) -> Result<Policy> {
    // An edge's policy has no name of its own: its configuration's is given it.
    let name = match &raw.name {
        Some(name) => check.name(name, &format!("{path}.name"))?,
        None => String::new(),
    };
    // Every default is the library's: a key left out is what `Policy::new` leaves.
    let base = Policy::new(name.clone());
    let retry_after = check.named(
        raw.retry_after.as_ref(),
        &format!("{path}.retry_after"),
        &RetryAfter::ALL,
        RetryAfter::name,
        base.pushback.mode,
    )?;
    let own = Layer {
        name: String::new(),
        retry: Retry {
            max_attempts: max_attempts(check, raw.max_attempts.as_ref(), path)?,
            retry_on: classes(check, raw.retry_on.as_ref(), &format!("{path}.retry_on"))?,
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
            let (mut outer, innermost) = layers(check, raw, list, path)?;
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
    let (hedge, hedging) = hedges(check, raw, own.retry.max_attempts, path)?;
    let timeout = match &raw.timeout {
        None => base.timeout,
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
        base.key,
    )?;
    let balancer = balancer(check, raw, path, base.balancer)?;
    Ok(Policy {
        name,
        note: raw.note.clone(),
        retry: own.retry,
        timeout,
        hedge,
        hedging,
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
            Some(b) => {
                // What the policy retries in any layer: the failures a gRPC bucket counts.
                let retried = (layers.iter())
                    .flat_map(|l| l.outer.iter().map(|o| o.retry.retry_on))
                    .fold(own.retry.retry_on, RetryOn::union);
                Some(retry_budget(
                    check,
                    b,
                    &format!("{path}.retry_budget"),
                    retried,
                )?)
            }
        },
        send_rate: match &raw.send_rate {
            None => None,
            Some(r) => Some(send_rate(check, r, &format!("{path}.send_rate"))?),
        },
        send_tokens: match &raw.send_tokens {
            None => None,
            Some(t) => Some(send_tokens(check, raw, t, &format!("{path}.send_tokens"))?),
        },
        resume: raw.resume.as_ref().is_some_and(|r| *r.get_ref()),
        replan: match &raw.replan {
            None => None,
            Some(r) => Some(replan(check, r, &format!("{path}.replan"))?),
        },
        concurrency: match &raw.concurrency {
            None => None,
            Some(c) => Some(concurrency(check, c, &format!("{path}.concurrency"))?),
        },
        scope: check.named(
            raw.scope.as_ref(),
            &format!("{path}.scope"),
            &GateScope::ALL,
            GateScope::name,
            base.scope,
        )?,
        pushback: Pushback {
            mode: retry_after,
            from: match &raw.retry_after_from {
                None => base.pushback.from,
                Some(v) => {
                    waits_on_retry_after(check, v.span(), "retry_after_from", retry_after, path)?;
                    check.named(
                        Some(v),
                        &format!("{path}.retry_after_from"),
                        &RetryAfterFrom::ALL,
                        RetryAfterFrom::name,
                        base.pushback.from,
                    )?
                }
            },
            jitter: match &raw.retry_after_jitter {
                None => base.pushback.jitter,
                Some(v) => {
                    waits_on_retry_after(check, v.span(), "retry_after_jitter", retry_after, path)?;
                    check.duration(v, &format!("{path}.retry_after_jitter"))?
                }
            },
            max: match &raw.retry_after_max {
                None => None,
                Some(v) => {
                    waits_on_retry_after(check, v.span(), "retry_after_max", retry_after, path)?;
                    Some(check.duration(v, &format!("{path}.retry_after_max"))?)
                }
            },
            over_backoff: match &raw.retry_after_over_backoff {
                None => None,
                Some(v) => {
                    let key = "retry_after_over_backoff";
                    waits_on_retry_after(check, v.span(), key, retry_after, path)?;
                    Some(check.duration(v, &format!("{path}.{key}"))?)
                }
            },
            retries: match &raw.retry_after_retries {
                None => base.pushback.retries,
                Some(v) => {
                    waits_on_retry_after(
                        check,
                        v.span(),
                        "retry_after_retries",
                        retry_after,
                        path,
                    )?;
                    *v.get_ref()
                }
            },
            resets: match &raw.retry_after_resets {
                None => base.pushback.resets,
                Some(v) => {
                    waits_on_retry_after(check, v.span(), "retry_after_resets", retry_after, path)?;
                    *v.get_ref()
                }
            },
            limit: retry_after_limit(check, raw, retry_after, path)?,
        },
        throttle_backoff: match &raw.throttle_backoff {
            None => None,
            Some(b) => Some(backoff(
                check,
                b.get_ref(),
                &format!("{path}.throttle_backoff"),
            )?),
        },
        lookup_before_retry: raw.lookup_before_retry,
        balancer,
        retry_host: check.named(
            raw.retry_host.as_ref(),
            &format!("{path}.retry_host"),
            &RetryHost::ALL,
            RetryHost::name,
            base.retry_host,
        )?,
        outlier_detection: match &raw.outlier_detection {
            None => None,
            Some(o) => Some(ejection(
                check,
                o.get_ref(),
                &format!("{path}.outlier_detection"),
            )?),
        },
        should_retry: check.named(
            raw.should_retry.as_ref(),
            &format!("{path}.should_retry"),
            &ShouldRetry::ALL,
            ShouldRetry::name,
            base.should_retry,
        )?,
        calls: None,
        payload_drift: check.probability(&raw.payload_drift, &format!("{path}.payload_drift"))?,
        layers,
        timeout_tie: check.named(
            raw.timeout_tie.as_ref(),
            &format!("{path}.timeout_tie"),
            &Tie::ALL,
            Tie::name,
            base.timeout_tie,
        )?,
        waits: Vec::new(),
        edges: Vec::new(),
        propagation: propagation(check, raw, path)?,
        // Read with the edge, whose tools it names (see `super::fallback`).
        fallback: base.fallback,
    })
}

/// `deadline_propagation`, with `deadline_margin` for `propagate_minus` only.
fn propagation(check: &Check, raw: &raw::Policy, path: &str) -> Result<Propagation> {
    let at = format!("{path}.deadline_propagation");
    let options: Vec<(&str, usize)> = (Propagation::NAMES.iter().enumerate())
        .map(|(i, n)| (*n, i))
        .collect();
    let chosen = match &raw.deadline_propagation {
        None => 0,
        Some(v) => check.choice(v, &at, &options)?,
    };
    let margin_at = format!("{path}.deadline_margin");
    match (chosen, &raw.deadline_margin) {
        (0, None) => Ok(Propagation::None),
        (2, Some(m)) => {
            let margin = check.duration(m, &margin_at)?;
            Ok(Propagation::Propagate { margin })
        }
        (2, None) => check.error_allowing(
            raw.deadline_propagation
                .as_ref()
                .map_or(0..0, Spanned::span),
            &margin_at,
            "`propagate_minus` takes a margin off the deadline it carries, and none is given"
                .into(),
            "deadline_margin = \"5ms\" beside it",
        ),
        (_, Some(m)) => check.error_allowing(
            m.span(),
            &margin_at,
            "a margin is taken off a propagated deadline, and this one is not propagated less one"
                .into(),
            "deadline_propagation = \"propagate_minus\" beside it",
        ),
        (_, None) => Ok(Propagation::Propagate { margin: Tick::ZERO }),
    }
}

/// Outlier detection: each key Envoy's, with Envoy's default where absent.
fn ejection(check: &Check, raw: &raw::OutlierDetection, path: &str) -> Result<Ejection> {
    let envoy = Ejection::default();
    let at = |key: &str| format!("{path}.{key}");
    let time = |value: &Option<Spanned<Value>>, key: &str, default: Tick| match value {
        None => Ok(default),
        Some(v) => check.duration(v, &at(key)),
    };
    Ok(Ejection {
        consecutive_5xx: check.count(
            raw.consecutive_5xx.as_ref(),
            &at("consecutive_5xx"),
            envoy.consecutive_5xx,
            "0 failures in a row would eject every replica at once",
        )?,
        base_ejection_time: time(
            &raw.base_ejection_time,
            "base_ejection_time",
            envoy.base_ejection_time,
        )?,
        max_ejection_time: time(
            &raw.max_ejection_time,
            "max_ejection_time",
            envoy.max_ejection_time,
        )?,
        max_ejection_percent: check.number(
            raw.max_ejection_percent.as_ref(),
            &at("max_ejection_percent"),
            envoy.max_ejection_percent,
            |p| (0.0..=100.0).contains(&p),
            "a share of the replicas",
            "a percentage from 0 to 100 (one replica may always be ejected)",
        )?,
    })
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

/// Refuses `key`, a rule for a Retry-After the policy waits on, where the policy does not.
/// `replan = { from, max }`: `from` `"start"` or `"turn"`, `max` re-plans (1 by default).
fn replan(check: &Check, spanned: &Spanned<raw::Replan>, path: &str) -> Result<Replan> {
    let raw = spanned.get_ref();
    Ok(Replan {
        from: check.named(
            Some(&raw.from),
            &format!("{path}.from"),
            &ReplanFrom::ALL,
            ReplanFrom::name,
            ReplanFrom::Start,
        )?,
        max: raw.max.as_ref().map_or(1, |m| *m.get_ref()),
    })
}

/// `retry_after_limit`, the longest Retry-After heeded, and `retry_after_over_limit`, what a
/// longer one does: `"backoff"` (the default) or `"stop"`.
fn retry_after_limit(
    check: &Check,
    raw: &raw::Policy,
    retry_after: RetryAfter,
    path: &str,
) -> Result<Option<(Tick, OverLimit)>> {
    let Some(limit) = &raw.retry_after_limit else {
        if let Some(over) = &raw.retry_after_over_limit {
            return check.error_allowing(
                over.span(),
                &format!("{path}.retry_after_over_limit"),
                "what to do over a limit, and no limit".into(),
                "`retry_after_limit` beside it (\"60s\": the Anthropic SDK's)",
            );
        }
        return Ok(None);
    };
    waits_on_retry_after(check, limit.span(), "retry_after_limit", retry_after, path)?;
    let most = check.duration(limit, &format!("{path}.retry_after_limit"))?;
    let over = check.named(
        raw.retry_after_over_limit.as_ref(),
        &format!("{path}.retry_after_over_limit"),
        &OverLimit::ALL,
        OverLimit::name,
        OverLimit::Backoff,
    )?;
    Ok(Some((most, over)))
}

fn waits_on_retry_after(
    check: &Check,
    span: std::ops::Range<usize>,
    key: &str,
    retry_after: RetryAfter,
    path: &str,
) -> Result<()> {
    if retry_after.waits() {
        return Ok(());
    }
    check.error_allowing(
        span,
        &format!("{path}.{key}"),
        format!(
            "{key} applies to a Retry-After the policy waits on, and this one's is \"{}\"",
            retry_after.name()
        ),
        &format!("retry_after = \"honour\" (the default) or \"replace\" beside {key}"),
    )
}

/// `layers`, outermost first, each with its own retry rule and backoff; the policy's own
/// `max_attempts`, `retry_on` and `backoff` are then set per layer instead. Returns every layer
/// and the innermost's name.
pub(super) fn layers(
    check: &Check,
    raw: &raw::Policy,
    list: &Spanned<Vec<Spanned<raw::Layer>>>,
    path: &str,
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
            },
            backoff: backoff_or_none(check, raw.backoff.as_ref(), &at)?,
        });
    }
    let innermost = names.pop().expect("layers are not empty");
    Ok((out, innermost))
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
    called: &[usize],
    tools: &[Tool],
) -> Result<()> {
    // A deadline or cap that each layer entered resets bounds nothing as a whole.
    let bounded = (policy.limits.deadline.is_some() || policy.limits.dispatch_cap.is_some())
        && !policy.resets_each_layer();
    let layers = || (0..policy.depth()).map(|l| policy.retry_of(l));
    if layers().all(|r| r.max_attempts != Attempts::Unlimited) || bounded {
        return Ok(());
    }
    for &t in called {
        let tool = &tools[t];
        let f = &tool.faults;
        let wait = policy.waits[t].timeout;
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

/// The policy's balancer, with peak EWMA's decay time where it sets one (above 0; refused
/// beside any other balancer, which reads no round trips).
fn balancer(check: &Check, raw: &raw::Policy, path: &str, base: Balancer) -> Result<Balancer> {
    let balancer = check.named(
        raw.balancer.as_ref(),
        &format!("{path}.balancer"),
        &Balancer::ALL,
        Balancer::name,
        base,
    )?;
    let Some(decay) = &raw.peak_ewma_decay else {
        return Ok(balancer);
    };
    let key = format!("{path}.peak_ewma_decay");
    if !matches!(balancer, Balancer::PeakEwma(_)) {
        return check.error_allowing(
            decay.span(),
            &key,
            format!(
                "a decay time beside balancer = \"{}\", which reads no round trips",
                balancer.name()
            ),
            "balancer = \"peak_ewma\" beside it",
        );
    }
    match check.duration(decay, &key)? {
        Tick::ZERO => check.error_allowing(
            decay.span(),
            &key,
            "a decay time of 0 keeps no average".into(),
            "a duration above 0, such as \"10s\" (Finagle's and Linkerd's)",
        ),
        tau => Ok(Balancer::PeakEwma(tau)),
    }
}
