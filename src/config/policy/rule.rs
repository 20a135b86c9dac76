//! The retry rule: `max_attempts`, `retry_on`, `backoff` or `layers`, `idempotency_key`, the
//! gates on sending again (`safety_gate`, `lookup_before_retry`, `should_retry`), a throttle's
//! own backoff, payload drift and resumed streams. The Retry-After keys are in [`super::pushback`].

use std::fmt::Write as _;

use toml::{Spanned, Value};

use super::backoff::{backoff, backoff_or_none, write as write_backoff};
use super::{classes, max_attempts, pushback};
use crate::config::check::key;
use crate::config::check::{Check, Result};
use crate::config::raw;
use crate::config::resolve::{at, some, text, texts, when};
use crate::policy::{
    Attempts, Backoff, Cap, FirstRetry, Hedges, KeyScope, Layer, Layers, Policy, Retry, RetryRule,
    ShouldRetry, Timing,
};
use crate::time::Tick;

pub(super) fn read(check: &Check, raw: &raw::Policy, path: &str) -> Result<RetryRule> {
    let base = Policy::new("").rule;
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
            let (mut outer, innermost) = read_layers(check, raw, list, path)?;
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
    let key_scope = key!(path, raw.idempotency_key);
    let should_retry = key!(path, raw.should_retry);
    let throttle = key!(path, raw.throttle_backoff);
    let drift = key!(path, raw.payload_drift);
    Ok(RetryRule {
        retry: own.retry,
        backoff: own.backoff,
        layers,
        key: check.named(
            key_scope.value.as_ref(),
            &key_scope.path,
            &KeyScope::ALL,
            KeyScope::name,
            base.key,
        )?,
        safety_gate: raw.safety_gate,
        lookup_before_retry: raw.lookup_before_retry,
        pushback: pushback::read(check, raw, path)?,
        should_retry: check.named(
            should_retry.value.as_ref(),
            &should_retry.path,
            &ShouldRetry::ALL,
            ShouldRetry::name,
            base.should_retry,
        )?,
        throttle_backoff: match throttle.value {
            None => None,
            Some(b) => Some(backoff(check, b.get_ref(), &throttle.path)?),
        },
        payload_drift: check.probability(drift.value, &drift.path)?,
        resume: raw.resume.as_ref().is_some_and(|r| *r.get_ref()),
    })
}

/// `layers`, outermost first, each with its own retry rule and backoff; the policy's own
/// `max_attempts`, `retry_on` and `backoff` are then set per layer instead. Returns every layer
/// and the innermost's name.
fn read_layers(
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

pub(super) fn write(rule: &RetryRule, out: &mut raw::Policy) {
    let RetryRule {
        retry,
        backoff,
        layers: nested,
        key,
        safety_gate,
        lookup_before_retry,
        pushback,
        should_retry,
        throttle_backoff,
        payload_drift,
        resume,
    } = rule;
    let base = Policy::new("").rule;
    if nested.is_none() {
        (out.max_attempts, out.retry_on) = retry_rule(retry);
        out.backoff = when(*backoff != base.backoff, write_backoff(backoff));
    }
    out.layers = nested.as_ref().map(|l| at(layers(rule, l)));
    out.reset_each_layer = nested.as_ref().map(|l| at(l.reset_each));
    out.idempotency_key = text(key.name());
    out.safety_gate = *safety_gate;
    out.lookup_before_retry = *lookup_before_retry;
    pushback::write(pushback, out);
    out.should_retry = when(
        *should_retry != base.should_retry,
        should_retry.name().into(),
    );
    out.throttle_backoff = throttle_backoff.as_ref().map(|b| at(write_backoff(b)));
    out.payload_drift = when(*payload_drift > 0.0, *payload_drift);
    out.resume = when(*resume, true);
}

/// A policy's retry layers, outermost first, each with its name, rule and backoff.
pub(in crate::config) fn layers(rule: &RetryRule, layers: &Layers) -> Vec<Spanned<raw::Layer>> {
    let names = layers.outer.iter().map(|l| &l.name);
    names
        .chain([&layers.innermost])
        .enumerate()
        .map(|(i, name)| {
            let (max_attempts, retry_on) = retry_rule(rule.retry_of(i));
            let curve = rule.backoff_of(i);
            at(raw::Layer {
                name: at(name.clone()),
                max_attempts,
                retry_on,
                backoff: when(*curve != Backoff::IMMEDIATE, write_backoff(curve)),
            })
        })
        .collect()
}

/// How many attempts, or the layers and each one's attempts.
pub(super) fn attempts(rule: &RetryRule) -> String {
    match &rule.layers {
        None => rule.retry.max_attempts.to_string(),
        Some(l) => {
            let names = l.outer.iter().map(|l| l.name.as_str());
            let layers: Vec<String> = names
                .chain([l.innermost.as_str()])
                .enumerate()
                .map(|(i, name)| format!("{name} {}", rule.retry_of(i).max_attempts))
                .collect();
            let reset = if l.reset_each {
                " (each resets the limits)"
            } else {
                ""
            };
            format!("layers {}{reset}", layers.join(" > "))
        }
    }
}

/// The retried failures, the timeout and hedges (said beside them, as one reads a retry rule),
/// the backoff and the key; then the rest of the rule where set.
pub(super) fn describe(rule: &RetryRule, time: &Timing, hedges: &Hedges, out: &mut Vec<String>) {
    let RetryRule {
        retry,
        backoff,
        layers: _,
        key,
        safety_gate: _,
        lookup_before_retry: _,
        pushback,
        should_retry,
        throttle_backoff,
        payload_drift,
        resume,
    } = rule;
    let retry_on: Vec<&str> = retry.retry_on.classes().map(|c| c.name()).collect();
    out.push(format!("retry on {}", retry_on.join("/")));
    out.push(super::hedges::with_timeout(time, hedges));
    out.push(curve(backoff));
    out.push(format!("key {}", key.name()));
    if throttle_backoff.is_some() {
        out.push("a backoff of its own after a 429".into());
    }
    if *resume {
        out.push("resumes a broken stream".into());
    }
    pushback::describe(pushback, out);
    if *payload_drift > 0.0 {
        out.push(format!("payload drift {payload_drift}"));
    }
    if *should_retry == ShouldRetry::Obey {
        out.push("obeys the server's should-retry header".into());
    }
}

/// A backoff in a clause: its curve, cap and jitter, and the rules beside them that apply.
fn curve(b: &Backoff) -> String {
    if *b == Backoff::IMMEDIATE {
        return "no backoff".to_string();
    }
    let cap = b
        .max_delay
        .map_or("uncapped".to_string(), |m| format!("≤ {m}"));
    let mut text = format!(
        "backoff {} {}×{} {cap}, {} jitter",
        b.growth.name(),
        b.initial_delay,
        b.multiplier,
        b.jitter.name()
    );
    if b.cap == Cap::AfterJitter {
        text.push_str(", capped after jitter");
    }
    if b.first_retry == FirstRetry::Immediate {
        text.push_str(", first retry at once");
    }
    if b.min_delay > Tick::ZERO {
        let _ = write!(text, ", at least {}", b.min_delay);
    }
    text
}

/// A retry rule's `max_attempts` and `retry_on`.
type Rule = (
    Option<Spanned<Value>>,
    Option<Spanned<Vec<Spanned<String>>>>,
);

fn retry_rule(retry: &Retry) -> Rule {
    let max_attempts = match retry.max_attempts {
        Attempts::AtMost(n) => Value::Integer(n.into()),
        Attempts::Unlimited => "unlimited".into(),
    };
    let retry_on = texts(retry.retry_on.classes().map(|c| c.name()));
    (some(max_attempts), retry_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_rule_reads_short() {
        let p = Policy::new("plain");
        let mut out = Vec::new();
        describe(&p.rule, &p.time, &p.hedges, &mut out);
        assert_eq!(
            out,
            [
                "retry on reset/5xx/timeout/429/503/conflict_version",
                "no timeout",
                "no backoff",
                "key none"
            ]
        );
        assert_eq!(attempts(&p.rule), "1 attempt = no retry");
    }

    #[test]
    fn what_is_written_is_read_back() {
        let mut rule = Policy::new("").rule;
        rule.resume = true;
        rule.payload_drift = 0.25;
        let mut out = raw::Policy::default();
        write(&rule, &mut out);
        let source = crate::config::Source::from_text("t", "");
        let check = Check { source: &source };
        assert_eq!(read(&check, &out, "policy[0]").expect("reads"), rule);
    }
}
