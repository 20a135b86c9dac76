//! The client's stateful gates in front of a tool: `scope`, `breaker`, `retry_budget`,
//! `concurrency`, `send_rate` and `send_tokens`, each rule read and written in its own file.

mod concurrency;
mod guards;
mod send_rate;

use crate::config::check::{Check, Result, key};
use crate::config::raw;
use crate::config::resolve::{at, when};
use crate::policy::{
    BreakerRule, GateScope, Gates, LimitRule, Policy, Refuses, RetryOn, RetryRule, Trip,
};

/// `rule` is the policy's retry rule: a gRPC-style retry budget counts the failures it retries.
pub(super) fn read(
    check: &Check,
    raw: &raw::Policy,
    rule: &RetryRule,
    path: &str,
) -> Result<Gates> {
    let scope = key!(path, raw.scope);
    let breaker = key!(path, raw.breaker);
    let budget = key!(path, raw.retry_budget);
    let rate = key!(path, raw.send_rate);
    let tokens = key!(path, raw.send_tokens);
    let limit = key!(path, raw.concurrency);
    Ok(Gates {
        scope: check.named(
            scope.value.as_ref(),
            &scope.path,
            &GateScope::ALL,
            GateScope::name,
            Policy::new("").gates.scope,
        )?,
        breaker: match breaker.value {
            None => None,
            Some(b) => Some(guards::breaker(check, b, &breaker.path)?),
        },
        retry_budget: match budget.value {
            None => None,
            Some(b) => {
                // What the policy retries in any layer: the failures a gRPC bucket counts.
                let retried = (rule.layers.iter())
                    .flat_map(|l| l.outer.iter().map(|o| o.retry.retry_on))
                    .fold(rule.retry.retry_on, RetryOn::union);
                Some(guards::retry_budget(check, b, &budget.path, retried)?)
            }
        },
        concurrency: match limit.value {
            None => None,
            Some(c) => Some(concurrency::concurrency(check, c, &limit.path)?),
        },
        send_rate: match rate.value {
            None => None,
            Some(r) => Some(send_rate::send_rate(check, r, &rate.path)?),
        },
        send_tokens: match tokens.value {
            None => None,
            Some(t) => Some(send_rate::send_tokens(check, raw, t, &tokens.path)?),
        },
    })
}

pub(super) fn write(gates: &Gates, out: &mut raw::Policy) {
    let Gates {
        scope,
        breaker,
        retry_budget,
        concurrency,
        send_rate,
        send_tokens,
    } = gates;
    out.scope = when(*scope != Policy::new("").gates.scope, scope.name().into());
    out.breaker = breaker.as_ref().map(|b| at(guards::write_breaker(b)));
    out.retry_budget = (retry_budget.as_ref()).map(|b| at(guards::write_retry_budget(b)));
    out.concurrency = concurrency.as_ref().map(|c| at(concurrency::write(c)));
    out.send_rate = send_rate
        .as_ref()
        .map(|r| at(send_rate::write_send_rate(r)));
    out.send_tokens = send_tokens.map(|t| at(send_rate::write_send_tokens(t)));
}

/// Each gate set, in words; a scope per shard said after them, where a gate is.
pub(super) fn describe(gates: &Gates, out: &mut Vec<String>) {
    let before = out.len();
    let Gates {
        scope,
        breaker,
        retry_budget,
        concurrency,
        send_rate,
        send_tokens,
    } = gates;
    if let Some(b) = breaker {
        out.push(breaker_words(b));
    }
    if let Some(b) = retry_budget {
        out.push(format!("retry budget {}", b.name()));
    }
    if send_rate.is_some() {
        out.push("an adaptive send rate".into());
    }
    if let Some(t) = send_tokens {
        out.push(format!(
            "a client-side bucket of {} tokens a minute",
            t.per_minute
        ));
    }
    if let Some(c) = concurrency {
        let limit = match c.limit {
            LimitRule::Fixed(n) => format!("{n}"),
            LimitRule::Aimd {
                initial, min, max, ..
            } => format!("AIMD from {initial} within {min}..{max}"),
        };
        let line = match c.queue {
            0 => "no line".to_string(),
            n => format!("a line of {n}"),
        };
        out.push(format!("at most {limit} in flight, {line}"));
    }
    if *scope == GateScope::Shard && out.len() > before {
        out.push("each shard its own gates".into());
    }
}

fn breaker_words(b: &BreakerRule) -> String {
    let trip = match b.trip {
        Trip::Consecutive(n) => format!("{n} failures in a row"),
        Trip::Rate { rate, .. } => format!("a failure rate of {rate}"),
    };
    let refuses = match b.refuses {
        Refuses::All => "",
        Refuses::Retries => " (retries only)",
    };
    format!("breaker{refuses} on {trip}, open {}", b.open_duration)
}
