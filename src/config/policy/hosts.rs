//! Which replica each attempt goes to: `balancer` (with `peak_ewma_decay`), `retry_host` and
//! Envoy's `outlier_detection`.

use toml::{Spanned, Value};

use crate::config::check::{Check, Key, Result, key};
use crate::config::raw;
use crate::config::resolve::{at, some, ticks, when};
use crate::policy::{Balancer, Ejection, GateScope, Hosts, Policy, RetryHost};
use crate::time::Tick;

/// `scope` is the policy's gate scope: `shard` asks for a keyed balancer.
pub(super) fn read(
    check: &Check,
    raw: &raw::Policy,
    scope: GateScope,
    path: &str,
) -> Result<Hosts> {
    let base = Policy::new("").hosts;
    let retry_host = key!(path, raw.retry_host);
    let ejection = key!(path, raw.outlier_detection);
    let hosts = Hosts {
        balancer: balancer(check, raw, path, base.balancer)?,
        retry_host: check.named(
            retry_host.value.as_ref(),
            &retry_host.path,
            &RetryHost::ALL,
            RetryHost::name,
            base.retry_host,
        )?,
        outlier_detection: match ejection.value {
            None => None,
            Some(o) => Some(read_ejection(check, o.get_ref(), &ejection.path)?),
        },
    };
    keyed(check, raw, &hosts, scope, path)?;
    Ok(hosts)
}

/// A keyed balancer sends a call's every attempt to its key's shard, so a retry on another
/// replica and outlier ejection (which routes around a replica) cannot stand beside it; gates
/// per shard need one, as only it knows a call's shard before the gates are asked.
fn keyed(
    check: &Check,
    raw: &raw::Policy,
    hosts: &Hosts,
    scope: GateScope,
    path: &str,
) -> Result<()> {
    let by_key = hosts.balancer == Balancer::ByKey;
    let host = key!(path, raw.retry_host);
    if let (true, RetryHost::Other, Some(v)) = (by_key, hosts.retry_host, host.value) {
        return check.error_allowing(
            v.span(),
            &host.path,
            "a retry on another replica beside balancer = \"by_key\": a key lives on one \
             shard, and every attempt of its call goes there"
                .into(),
            "retry_host = \"any\" or \"same\" (the same under a keyed balancer)",
        );
    }
    let ejection = key!(path, raw.outlier_detection);
    if let (true, Some(v)) = (by_key, ejection.value) {
        return check.error_allowing(
            v.span(),
            &ejection.path,
            "outlier ejection beside balancer = \"by_key\": a shard's keys have no other \
             replica to go to"
                .into(),
            "no outlier_detection; a breaker per shard (scope = \"shard\") stops calls to a \
             bad shard",
        );
    }
    let named = key!(path, raw.scope);
    match (scope, by_key, named.value) {
        (GateScope::Shard, false, Some(v)) => check.error_allowing(
            v.span(),
            &named.path,
            format!(
                "gates per shard beside balancer = \"{}\", which does not route calls by key",
                hosts.balancer.name()
            ),
            "balancer = \"by_key\" beside it, or scope = \"tool\" or \"caller\"",
        ),
        _ => Ok(()),
    }
}

/// The policy's balancer, with peak EWMA's decay time where it sets one (above 0; refused
/// beside any other balancer, which reads no round trips).
fn balancer(check: &Check, raw: &raw::Policy, path: &str, base: Balancer) -> Result<Balancer> {
    let named = key!(path, raw.balancer);
    let balancer = check.named(
        named.value.as_ref(),
        &named.path,
        &Balancer::ALL,
        Balancer::name,
        base,
    )?;
    let key = key!(path, raw.peak_ewma_decay);
    let Some(decay) = key.value else {
        return Ok(balancer);
    };
    if !matches!(balancer, Balancer::PeakEwma(_)) {
        return check.error_allowing(
            decay.span(),
            &key.path,
            format!(
                "a decay time beside balancer = \"{}\", which reads no round trips",
                balancer.name()
            ),
            "balancer = \"peak_ewma\" beside it",
        );
    }
    match check.duration(decay, &key.path)? {
        Tick::ZERO => check.error_allowing(
            decay.span(),
            &key.path,
            "a decay time of 0 keeps no average".into(),
            "a duration above 0, such as \"10s\" (Finagle's and Linkerd's)",
        ),
        tau => Ok(Balancer::PeakEwma(tau)),
    }
}

/// Outlier detection: each key Envoy's, with Envoy's default where absent.
fn read_ejection(check: &Check, raw: &raw::OutlierDetection, path: &str) -> Result<Ejection> {
    let envoy = Ejection::default();
    let time = |key: Key<Option<Spanned<Value>>>, default: Tick| match key.value {
        None => Ok(default),
        Some(v) => check.duration(v, &key.path),
    };
    let consecutive = key!(path, raw.consecutive_5xx);
    let percent = key!(path, raw.max_ejection_percent);
    Ok(Ejection {
        consecutive_5xx: check.count(
            consecutive.value.as_ref(),
            &consecutive.path,
            envoy.consecutive_5xx,
            "0 failures in a row would eject every replica at once",
        )?,
        base_ejection_time: time(key!(path, raw.base_ejection_time), envoy.base_ejection_time)?,
        max_ejection_time: time(key!(path, raw.max_ejection_time), envoy.max_ejection_time)?,
        max_ejection_percent: check.number(
            percent.value.as_ref(),
            &percent.path,
            envoy.max_ejection_percent,
            |p| (0.0..=100.0).contains(&p),
            "a share of the replicas",
            "a percentage from 0 to 100 (one replica may always be ejected)",
        )?,
    })
}

pub(super) fn write(hosts: &Hosts, out: &mut raw::Policy) {
    let Hosts {
        balancer,
        retry_host,
        outlier_detection,
    } = hosts;
    let base = Policy::new("").hosts;
    out.balancer = when(*balancer != base.balancer, balancer.name().into());
    // Written whenever the balancer is peak EWMA, so a manifest says the decay it ran with.
    out.peak_ewma_decay = match balancer {
        Balancer::PeakEwma(decay) => some(decay.to_string().into()),
        _ => None,
    };
    out.retry_host = when(*retry_host != base.retry_host, retry_host.name().into());
    out.outlier_detection = outlier_detection.as_ref().map(|o| {
        at(raw::OutlierDetection {
            consecutive_5xx: some(o.consecutive_5xx),
            base_ejection_time: ticks(o.base_ejection_time),
            max_ejection_time: ticks(o.max_ejection_time),
            max_ejection_percent: some(o.max_ejection_percent),
        })
    });
}

/// The balancer, the retries' replica and ejection, where not the defaults.
pub(super) fn describe(hosts: &Hosts, out: &mut Vec<String>) {
    let Hosts {
        balancer,
        retry_host,
        outlier_detection,
    } = hosts;
    match balancer {
        Balancer::RoundRobin => {}
        Balancer::PeakEwma(decay) => out.push(format!("peak EWMA balancer decaying over {decay}")),
        Balancer::ByKey => out.push("each call to its key's shard".into()),
        other => out.push(format!("{} balancer", other.name().replace('_', " "))),
    }
    match retry_host {
        RetryHost::Any => {}
        RetryHost::Other => out.push("retries on another replica".into()),
        RetryHost::Same => out.push("retries on the same replica".into()),
    }
    if let Some(o) = outlier_detection {
        out.push(format!(
            "ejects a replica after {} errors in a row",
            o.consecutive_5xx
        ));
    }
}
