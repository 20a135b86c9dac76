//! Invariants that hold for every experiment, checked on random small ones
//! ([`crate::generate`]).

use crate::common;
use crate::generate::{config, experiment};

use common::{records, traced};
use proptest::prelude::*;

use retrysim::metrics::{BusinessState, Outcome, Status, StopReason};
use retrysim::model::{LossSignal, OutageMode, ToolKind};
use retrysim::policy::{KeyScope, LimitRule, Refuses, Trip, Wait};
use retrysim::time::Tick;

proptest! {
    #![proptest_config(config())]

    /// Every intent respects its policy's cap, ends after it starts, and says what happened
    /// consistently with what the server did.
    #[test]
    fn every_intent_is_consistent_with_its_policy(exp in experiment()) {
        for (p, policy) in exp.policies.iter().enumerate() {
            for r in records(&exp, p) {
                let tool = &exp.tools[r.tool];
                // Only a breaker can stop an intent before its first dispatch, or a concurrency
                // limit (refused, or still waiting for a slot at the deadline or the horizon),
                // or a send-rate limiter (still waiting for a token then).
                prop_assert!(
                    r.attempts >= 1
                        || r.status == Status::Stopped(StopReason::BreakerOpen)
                        || policy.gates.concurrency.is_some()
                        || policy.gates.send_rate.is_some()
                );
                prop_assert!(r.timeouts <= r.attempts);
                // A wait runs out at the timeout, or at the deadline.
                if policy.time.timeout == Wait::None && policy.time.limits.deadline.is_none() {
                    prop_assert_eq!(r.timeouts, 0);
                }
                // Nested layers multiply their caps.
                let cap = (0..policy.rule.depth())
                    .try_fold(1, |all, l| Some(all * policy.rule.retry_of(l).max_attempts.cap()?));
                if let Some(cap) = cap {
                    prop_assert!(r.attempts <= cap);
                }
                if let Some(cap) = policy.time.limits.dispatch_cap {
                    prop_assert!(r.attempts <= cap);
                }
                if let Some(deadline) = policy.time.limits.deadline {
                    prop_assert!(r.end <= r.start.after(deadline), "nothing outlives its deadline");
                }
                if let Some(after) = policy.time.limits.cancel_after {
                    prop_assert!(r.end <= r.start.after(after));
                }
                prop_assert!(r.end >= r.start);
                prop_assert!(r.effects <= r.attempts);
                match r.status {
                    Status::Succeeded if tool.server.kind == ToolKind::Write => {
                        prop_assert!(r.effects >= 1, "a reply follows a commit");
                        prop_assert_eq!(r.business_state, BusinessState::Confirmed);
                    }
                    Status::Succeeded => {}
                    Status::Stopped(StopReason::AttemptLimit) => {
                        prop_assert_eq!(Some(r.attempts), cap);
                    }
                    // Only silence (a lost message, or a server down and hanging) with nothing
                    // to end the wait hangs: latencies here are short.
                    Status::Stopped(StopReason::Hung) => prop_assert!(
                        policy.time.timeout == Wait::None
                            && policy.time.limits.deadline.is_none()
                            && policy.time.limits.cancel_after.is_none()
                            && (tool.loss_seen_as == LossSignal::Silence
                                || tool.server.outages.iter().any(|o| o.mode == OutageMode::Hang)),
                        "a hang without silence"
                    ),
                    Status::Stopped(StopReason::NotRetryable) => {}
                    Status::Stopped(StopReason::ConcurrencyLimited) => {
                        prop_assert!(policy.gates.concurrency.is_some());
                    }
                    // Only a key the receiver honours can be bound to another payload, and its
                    // binding proves an earlier commit.
                    Status::Stopped(StopReason::IdempotencyConflict) => {
                        prop_assert!(policy.rule.payload_drift > 0.0 && policy.rule.key == KeyScope::PerIntent && tool.server.idempotent);
                        prop_assert_eq!(r.business_state, BusinessState::Confirmed);
                        prop_assert!(r.effects == 1);
                    }
                    Status::Stopped(StopReason::DeadlineExceeded) => {
                        let deadline = policy.time.limits.deadline.expect("a deadline to exceed");
                        prop_assert_eq!(r.end, r.start.after(deadline), "stops at the deadline");
                    }
                    Status::Stopped(StopReason::DispatchBudgetExhausted) => {
                        prop_assert_eq!(Some(r.attempts), policy.time.limits.dispatch_cap);
                    }
                    Status::Stopped(StopReason::RetryBudgetExhausted) => {
                        prop_assert!(policy.gates.retry_budget.is_some());
                        prop_assert!(r.attempts >= 1, "first attempts always go out");
                    }
                    Status::Stopped(StopReason::PermanentFailure) => {
                        prop_assert!(tool.faults.forbidden + tool.faults.invalid > 0.0);
                    }
                    // Admission comes from a rule these policies lack.
                    Status::Stopped(StopReason::BudgetTooSmall) => {
                        prop_assert!(false, "no admission here");
                    }
                    Status::Stopped(StopReason::BreakerOpen) => {
                        prop_assert!(policy.gates.breaker.is_some());
                        // A refused hedge is short-circuited too, without ending the intent.
                        if policy.hedges.delay == Wait::None {
                            prop_assert_eq!(r.short_circuited, 1);
                        }
                        prop_assert!(r.short_circuited >= 1);
                    }
                    Status::Stopped(StopReason::NeedsReconciliation) => {
                        prop_assert!(policy.rule.safety_gate || policy.rule.lookup_before_retry);
                        prop_assert_eq!(r.business_state, BusinessState::Unknown);
                    }
                    Status::Stopped(StopReason::Cancelled) => {
                        let after = policy.time.limits.cancel_after.expect("a cancellation");
                        prop_assert_eq!(r.end, r.start.after(after));
                    }
                    // A reason added since: this property must learn what it means.
                    Status::Stopped(other) => {
                        prop_assert!(false, "a stop reason this property does not know: {:?}", other);
                    }
                }
                if r.business_state == BusinessState::NotAttempted {
                    prop_assert_eq!(r.effects, 0, "not_attempted means nothing happened");
                }
                if policy.rule.key == KeyScope::PerIntent && tool.server.idempotent {
                    prop_assert!(r.effects <= 1, "a per-intent key never duplicates");
                }
                if tool.server.kind == ToolKind::ReadOnly {
                    prop_assert_eq!(r.effects, 0, "a lookup commits nothing");
                    prop_assert_eq!(r.business_state, BusinessState::ReadOnly);
                }
                // An abandoned attempt may have committed, unless the server said so since: a
                // reply, or a key bound to another payload (its binding proves the commit).
                let told = matches!(
                    r.status,
                    Status::Succeeded | Status::Stopped(StopReason::IdempotencyConflict)
                );
                if r.timeouts > 0 && !told && tool.server.kind == ToolKind::Write {
                    prop_assert_eq!(r.business_state, BusinessState::Unknown, "an abandoned attempt may have committed");
                }
            }
        }
    }

    /// Each intent's attempts account for it: one per dispatch, in time order, their commits
    /// its effects, their timeouts its timeouts. One attempt is awaited at a time, or two while
    /// a hedge races its primary; only those may still be awaited at the end.
    #[test]
    fn the_attempt_trace_adds_up_to_the_intent(exp in experiment()) {
        for (p, policy) in exp.policies.iter().enumerate() {
            let racing = usize::from(policy.hedges.delay != Wait::None);
            for (r, attempts) in traced(&exp, p) {
                prop_assert_eq!(attempts.len() as u32, r.attempts);
                prop_assert_eq!(attempts.iter().filter(|a| a.committed).count() as u32, r.effects);
                let timeouts = attempts.iter().filter(|a| a.outcome == Outcome::Timeout).count();
                prop_assert_eq!(timeouts as u32, r.timeouts);
                // The first attempt goes out when the call begins, unless it waits for a slot
                // or a token.
                if let Some(first) = attempts.first() {
                    prop_assert!(first.dispatch >= r.start);
                    if policy.gates.concurrency.is_none() && policy.gates.send_rate.is_none() {
                        prop_assert_eq!(first.dispatch, r.start);
                    }
                }
                for w in attempts.windows(2 + racing) {
                    prop_assert!(w[0].end <= w[1 + racing].dispatch, "too many attempts awaited at once");
                    prop_assert!(w[0].outcome != Outcome::Unanswered);
                }
                if racing == 1 && r.hedges == 0 {
                    for pair in attempts.windows(2) {
                        prop_assert!(pair[0].end <= pair[1].dispatch, "no hedge, no race");
                    }
                }
                for a in &attempts {
                    prop_assert!(a.dispatch <= a.end && a.end <= r.end);
                    if a.outcome == Outcome::LostRequest {
                        prop_assert!(!a.committed);
                    }
                }
                if r.status == Status::Succeeded {
                    // The winner is the last attempt, or the one a hedge raced and lost to.
                    let last = &attempts[attempts.len().saturating_sub(1 + racing)..];
                    prop_assert_eq!(last.iter().filter(|a| a.outcome == Outcome::Ok).count(), 1);
                }
            }
        }
    }

    /// Nothing is dispatched while a breaker is open. With an open duration longer than the
    /// run, a breaker that trips stays open: once a tool's answers show `n` failures in a row
    /// (every class counts here), no call to it goes out later — no retry or hedge, for a
    /// breaker that refuses only those. Answers tied on a tick have no
    /// order to replay, so a run with ties before the trip is not judged.
    #[test]
    fn nothing_is_dispatched_while_a_breaker_is_open(exp in experiment()) {
        let mut exp = exp;
        for policy in &mut exp.policies {
            if let Some(b) = &mut policy.gates.breaker {
                b.open_duration = exp.horizon;
            }
        }
        for (p, policy) in exp.policies.iter().enumerate() {
            let Some(rule) = policy.gates.breaker else { continue };
            let Trip::Consecutive(n) = rule.trip else { unreachable!("generated so") };
            let traced = traced(&exp, p);
            for tool in 0..exp.tools.len() {
                let attempts = || {
                    traced.iter().filter(|(r, _)| r.tool == tool).flat_map(|(_, a)| a)
                };
                let mut answers: Vec<(Tick, bool)> = attempts()
                    .filter(|a| !matches!(a.outcome, Outcome::Cancelled | Outcome::Unanswered))
                    .map(|a| (a.end, a.outcome != Outcome::Ok))
                    .collect();
                answers.sort_by_key(|&(t, _)| t);
                let mut run = 0;
                let Some(trip) = answers.iter().find_map(|&(t, failed)| {
                    run = if failed { run + 1 } else { 0 };
                    (run == n).then_some(t)
                }) else {
                    continue;
                };
                let before: Vec<Tick> = answers.iter().map(|&(t, _)| t).filter(|&t| t <= trip).collect();
                if before.windows(2).any(|w| w[0] == w[1]) {
                    continue;
                }
                let refused = |k: usize| k > 0 || rule.refuses == Refuses::All;
                let late = traced
                    .iter()
                    .filter(|(r, _)| r.tool == tool)
                    .flat_map(|(_, a)| a.iter().enumerate())
                    .filter(|&(k, a)| refused(k) && a.dispatch > trip)
                    .count();
                prop_assert_eq!(late, 0, "dispatched after the breaker tripped at {:?}", trip);
            }
        }
    }

    /// A concurrency limit holds: at no tick are more of a tool's calls in flight — dispatched
    /// and not yet answered, timed out or given up on — than the limit allows (its `max`, for
    /// an adaptive one).
    #[test]
    fn calls_in_flight_never_exceed_the_concurrency_limit(exp in experiment()) {
        for (p, policy) in exp.policies.iter().enumerate() {
            let Some(rule) = policy.gates.concurrency else { continue };
            let most = match rule.limit {
                LimitRule::Fixed(n) => n,
                LimitRule::Aimd { max, .. } => max,
            };
            let traced = traced(&exp, p);
            for tool in 0..exp.tools.len() {
                // Ends before starts at one tick: a slot freed is taken at once.
                let mut changes: Vec<(Tick, i32)> = traced
                    .iter()
                    .filter(|(r, _)| r.tool == tool)
                    .flat_map(|(_, a)| a)
                    .flat_map(|a| [(a.dispatch, 1), (a.end, -1)])
                    .collect();
                changes.sort();
                let mut in_flight = 0;
                for (at, change) in changes {
                    in_flight += change;
                    prop_assert!(in_flight <= most as i32, "{} in flight at {:?}", in_flight, at);
                }
            }
        }
    }

    /// The key changes what the server does and nothing else: same attempts, same timing,
    /// same outcome, effects capped at one. And a rerun gives the very same records.
    #[test]
    fn a_key_changes_effects_only_and_reruns_are_identical(exp in experiment()) {
        // With the safety gate on, the key decides whether a write may be retried at all.
        prop_assume!(!exp.policies[0].rule.safety_gate);
        // Under a key, a retry with other arguments meets a conflict instead of a commit.
        prop_assume!(exp.policies[0].rule.payload_drift == 0.0);
        let plain = records(&exp, 0);
        let keyed = records(&exp, 1);
        prop_assert_eq!(plain.len(), keyed.len());
        for (p, k) in plain.iter().zip(&keyed) {
            prop_assert_eq!((p.intent, p.attempts, p.start, p.end), (k.intent, k.attempts, k.start, k.end));
            prop_assert_eq!(p.status, k.status);
            // A receiver that ignores keys commits as often either way.
            let expected = if exp.tools[p.tool].server.idempotent { p.effects.min(1) } else { p.effects };
            prop_assert_eq!(k.effects, expected);
        }
        prop_assert_eq!(records(&exp, 0), plain);
    }
}
