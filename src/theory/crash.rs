//! Closed forms for calls whose workers crash ([`crate::model::Crash`]), where nothing else
//! fails: the only way a call's attempt is lost is its worker's death.
//!
//! A worker holding a call crashes at rate λ = 1 / `mean_uptime`. It sends one attempt, whose
//! round trip D is its three legs; it lives through it with probability
//! q = E\[e^(−λD)\] = Π over the legs of E\[e^(−λ·leg)\] ([`crate::model::Latency::decay`]).
//! Nothing else fails, so the attempt it sent commits whether or not it lived to hear the reply.
//!
//! - **Checkpoint**: each replacement sends one attempt of its own, and lives through it with q
//!   again, so the workers W are geometric: E\[attempts\] = E\[W\] = 1/q. Under a key that
//!   outlives the worker (`derived`) the server commits once; under one that dies with it (a
//!   key held in memory, a fresh key per attempt, none) every worker's attempt commits:
//!   E\[effects\] = 1/q and E\[duplicates\] = 1/q − 1, all of them the takeovers'.
//! - **Intent log**, under a key that stands: a replacement looks the key up before it sends.
//!   Where the lease and the lookup outlast the request's leg and the service (the commit is
//!   in by then), every lookup finds the first attempt's commit: one attempt, one effect.
//!
//! Every call succeeds. Outside these conditions — a fault, a timer that fires, a line, a
//! lookup that can fail or lag — `None`.

use super::ClosedForms;
use crate::experiment::Experiment;
use crate::model::{Crash, Faults, Latency, Tool};
use crate::policy::{Durability, KeyScope, Policy};
use crate::time::Tick;

/// The crash forms of `policy`'s calls in `exp`, whose workers crash as `crash` says.
pub fn for_policy(exp: &Experiment, policy: &Policy, crash: &Crash) -> Option<ClosedForms> {
    let mut tools = exp.called(exp.calls_of(policy)).map(|t| {
        let tool = &exp.tools[t];
        let alone = tool.faults == Faults::default()
            && tool.burst.is_none()
            && tool.replicas.is_empty()
            && tool.script.is_none()
            && tool.server.serves_at_once()
            && policy.time.waits[t].timeout.is_none();
        alone.then_some(tool)
    });
    let tool = tools.next()??;
    if tools.any(|other| other != Some(tool)) {
        return None;
    }
    // A scripted crash is a point, not a rate; a stalled worker's late send is an attempt
    // the forms do not count; a lease held for a term lapses under living workers too.
    let (None, Some(mean), None, true) = (crash.at, crash.mean_uptime, crash.stall, crash.renewed)
    else {
        return None;
    };
    let rate = 1.0 / mean.0 as f64;
    let legs = [
        &tool.request_latency,
        &tool.service_time,
        &tool.reply_latency,
    ];
    let lives = legs
        .iter()
        .map(|l| l.decay(rate))
        .product::<Option<f64>>()?;
    let stable = tool.server.idempotent && policy.rule.key.is_stable();
    let logged = policy.agent.durability == Durability::IntentLog;
    let keeps_key = stable && (logged || policy.rule.key == KeyScope::Derived);
    let (attempts, effects) = match logged {
        true if keeps_key && committed_before_lookup(tool, crash.lease)? => (1.0, 1.0),
        true => return None,
        false if keeps_key => (1.0 / lives, 1.0),
        false => (1.0 / lives, 1.0 / lives),
    };
    Some(ClosedForms {
        a: 0.0,
        b: 0.0,
        attempts,
        effects,
        duplicates: effects - 1.0,
        success: 1.0,
        ghost: 0.0,
        intents_independent: true,
    })
}

/// Whether a replacement's lookup, answered a lease and a lookup's time after the crash (and
/// the crash after the send), always finds the commit: the longest request leg and service
/// within that time, the lookup never failing or lagging. `None` where a leg has no longest.
fn committed_before_lookup(tool: &Tool, lease: Tick) -> Option<bool> {
    let longest = |l: &Latency| match l {
        Latency::Constant(c) => Some(c.0),
        Latency::Uniform { max, .. } => Some(max.0),
        _ => None,
    };
    let commit = longest(&tool.request_latency)? + longest(&tool.service_time)?;
    Some(
        tool.lookup.failure == 0.0
            && tool.lookup.lag == Tick::ZERO
            && lease.0 + tool.lookup.time.0 >= commit,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Source;

    /// A call of three constant legs (10 + 200 + 10 ms) whose worker crashes every 2 s on
    /// average: it lives through a round trip with q = e^(−0.22/2).
    fn experiment(policy: &str) -> Experiment {
        let text = format!(
            "name = \"c\"\n[workload]\ntasks = 10\n\
             crash = {{ mean_uptime = \"2s\", lease = \"1s\" }}\n\
             [[tool]]\nname = \"order\"\n\
             request_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             service_time = {{ dist = \"constant\", value = \"200ms\" }}\n\
             reply_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             [[policy]]\nname = \"p\"\n{policy}\n"
        );
        Source::from_text("c.toml", text).sweep().unwrap().base
    }

    fn forms(policy: &str) -> Option<ClosedForms> {
        let exp = experiment(policy);
        for_policy(&exp, &exp.policies[0], &exp.workload.crash.unwrap())
    }

    #[test]
    fn a_key_that_dies_with_the_worker_commits_once_per_worker() {
        let q = (-0.11f64).exp();
        for key in ["none", "per_attempt", "per_intent"] {
            let f = forms(&format!("idempotency_key = \"{key}\"")).unwrap();
            assert!((f.attempts - 1.0 / q).abs() < 1e-12, "{key}");
            assert!((f.duplicates - (1.0 / q - 1.0)).abs() < 1e-12, "{key}");
            assert_eq!(f.success, 1.0);
        }
        let derived = forms("idempotency_key = \"derived\"").unwrap();
        assert!((derived.attempts - 1.0 / q).abs() < 1e-12);
        assert_eq!((derived.effects, derived.duplicates), (1.0, 0.0));
    }

    /// An intent log keeps the key and finds the commit: the lease (1 s) outlasts the request
    /// leg and the service (210 ms). Without a key to look up there is no form: the lookup
    /// finds nothing, and the call is left to an operator.
    #[test]
    fn an_intent_log_finds_the_commit() {
        let f = forms("idempotency_key = \"per_intent\"\ndurability = \"intent_log\"").unwrap();
        assert_eq!((f.attempts, f.effects, f.duplicates), (1.0, 1.0, 0.0));
        assert!(forms("durability = \"intent_log\"").is_none());
    }

    /// A fault or a timer puts the call outside the forms.
    #[test]
    fn forms_stand_aside_beside_faults_and_timers() {
        assert!(forms("timeout = \"1s\"").is_none());
        let exp = experiment("idempotency_key = \"derived\"");
        let mut faulty = exp.clone();
        faulty.tools[0].faults.reply_loss = 0.1;
        let crash = exp.workload.crash.unwrap();
        assert!(for_policy(&faulty, &faulty.policies[0], &crash).is_none());
    }
}
