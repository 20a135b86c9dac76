//! After a failure: a reconciliation lookup first, where the policy asks for one, then the
//! retry decision, its gates in one documented order, and the backoff.

use super::{Event, World};
use crate::engine::Scheduler;
use crate::engine::rng::Source;
use crate::metrics::{AttemptRecord, IntentRecord, Lookup, Status, StopReason};
use crate::model::FailureClass;
use crate::policy::gate::{Ask, Moment};
use crate::policy::reconcile::{self, Answer};
use crate::policy::{Jitter, Previous, Retry, RetryAfter, RetryDecision, safety};
use crate::sim::slab::Handle;
use crate::time::Tick;
use crate::variate::{happens, integer_in};

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// After a failed attempt: a lookup first if the outcome of a write is unknown and the
    /// policy reconciles; else the next attempt, after its backoff, or the end of the intent.
    pub(super) fn after_failure(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        sched: &mut Scheduler<Event>,
    ) {
        let intent = self.intents.get(slot);
        let tool = &self.tools[intent.tool];
        if reconcile::looks_up(self.policy, tool, class) {
            intent.client.lookups += 1;
            let handle = self.intents.handle(slot);
            sched.schedule_in(
                tool.lookup.time,
                Event::Lookup {
                    intent: handle,
                    class,
                },
            );
            return;
        }
        self.retry_or_stop(slot, class, retry_after, sched);
    }

    /// The answer to a lookup, read by the reconciliation policy.
    pub(super) fn on_lookup(
        &mut self,
        handle: Handle,
        class: FailureClass,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let Some(intent) = self
            .intents
            .find(handle)
            .filter(|i| i.client.ended.is_none())
        else {
            return;
        };
        let tool = &self.tools[intent.tool];
        let lookup = u64::from(intent.client.lookups) - 1;
        let failed = tool.lookup.failure > 0.0
            && happens(
                self.streams.word_at(Source::Lookups, intent.id, lookup),
                tool.lookup.failure,
            );
        let key = self.policy.key.key(intent.id, 0);
        let found = !failed
            && intent
                .server
                .keys
                .shows(key, now, tool.lookup.lag, tool.key_retention);
        intent.looked_up(match (failed, found) {
            (true, _) => Lookup::Failed,
            (false, true) => Lookup::Found,
            (false, false) => Lookup::NotFound,
        });
        match reconcile::answer(self.policy, tool, failed, found) {
            Answer::Confirmed => self.end_intent(handle.slot, Status::Succeeded, sched),
            Answer::Resend => self.retry_or_stop(handle.slot, class, None, sched),
            Answer::Unknown => {
                let stop = Status::Stopped(StopReason::NeedsReconciliation);
                self.end_intent(handle.slot, stop, sched);
            }
        }
    }

    /// The next attempt, after its backoff, or the end of the intent.
    pub(super) fn retry_or_stop(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        match self.next_attempt(slot, class, retry_after, now) {
            // Held with no deadline: nothing more happens, and the run ends it `hung`.
            Ok(Tick::MAX) => {}
            Ok(until) => {
                let intent = self.intents.get(slot);
                intent.client.backoff = intent.client.backoff.after(until.since(now));
                let handle = self.intents.handle(slot);
                sched.schedule_at(until, Event::Dispatch(handle));
            }
            Err(reason) => self.end_intent(slot, Status::Stopped(reason), sched),
        }
    }

    /// When the next attempt goes out, or why none does: the safety gate, the retry rule of
    /// each layer from the innermost out, Retry-After, then the backoff and the gates a retry
    /// meets before it (see [`crate::policy::gate`]).
    pub(super) fn next_attempt(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        now: Tick,
    ) -> Result<Tick, StopReason> {
        let policy = self.policy;
        let intent = self.intents.get(slot);
        // A refusal that names a wait may be retried for saying so, in every layer.
        let told = retry_after.is_some()
            && policy.retry_after_retries
            && matches!(class, FailureClass::Throttled | FailureClass::Overloaded);
        if policy.safety_gate
            && (told || policy.retries(class))
            && !safety::may_resend(class, &self.tools[intent.tool], policy.key)
        {
            return Err(if safety::is_ambiguous(class) {
                StopReason::NeedsReconciliation
            } else {
                StopReason::NotRetryable
            });
        }
        let rule = |l: usize| {
            let rule = *policy.retry_of(l);
            match told {
                true => Retry {
                    retry_on: rule.retry_on.union([class].into_iter().collect()),
                    ..rule
                },
                false => rule,
            }
        };
        let (layer, retry) = match intent.retry.tries.decide(rule, class) {
            Ok(next) => next,
            Err(RetryDecision::NotRetryable) if class == FailureClass::Conflict => {
                return Err(StopReason::IdempotencyConflict);
            }
            Err(RetryDecision::NotRetryable) if class.is_permanent() => {
                return Err(StopReason::PermanentFailure);
            }
            Err(RetryDecision::AttemptLimit) => return Err(StopReason::AttemptLimit),
            Err(_) => return Err(StopReason::NotRetryable),
        };
        if retry_after.is_some() && policy.retry.retry_after == RetryAfter::Stop {
            return Err(StopReason::NotRetryable);
        }
        if retry_after.is_some_and(|w| policy.retry.retry_after.holds(w)) {
            // Held, not retried: the call waits for its deadline, or in silence for ever.
            let start = intent.retry.scope.start;
            return Ok(policy.limits.deadline.map_or(Tick::MAX, |d| start.after(d)));
        }
        let backoff = match (class, &policy.throttle_backoff) {
            (FailureClass::Throttled, Some(throttled)) => throttled,
            _ => policy.backoff_of(layer),
        };
        let word = if backoff.is_random() {
            self.streams
                .word_at(Source::Jitter, intent.id, u64::from(intent.retry.retries))
        } else {
            0
        };
        // Counted from the last restart, if a Retry-After restarted the curve.
        let n = retry.saturating_sub(intent.retry.backoff_from).max(1);
        // Polly's formula carries the previous retry's draw on.
        let previous = Previous {
            delay: intent.retry.last_delay,
            word: match intent.retry.retries {
                r if r > 0 && backoff.jitter == Jitter::DecorrelatedV2 => {
                    self.streams
                        .word_at(Source::Jitter, intent.id, u64::from(r - 1))
                }
                _ => 0,
            },
        };
        let backoff_delay = backoff.delay(n, previous, word);
        let (id, retries) = (intent.id, intent.retry.retries);
        let asked = match retry_after.filter(|&w| policy.retry.retry_after.heeds(w)) {
            None => None,
            Some(wait) => {
                let jittered = wait.after(self.retry_after_jitter(id, retries));
                let over = policy
                    .retry_after_over_backoff
                    .map_or(Tick::MAX, |o| backoff_delay.after(o));
                Some(
                    jittered
                        .min(policy.retry_after_max.unwrap_or(Tick::MAX))
                        .min(over),
                )
            }
        };
        let delay = match (policy.retry.retry_after, asked) {
            (_, None) => backoff_delay,
            (RetryAfter::Replace | RetryAfter::ReplaceUnlessZero, Some(asked)) => asked,
            (_, Some(asked)) => backoff_delay.max(asked),
        };
        let ask = Ask {
            // A new attempt of an outer layer starts a fresh cap where each layer resets it.
            fresh_scope: policy.resets_each_layer() && layer + 1 < policy.depth(),
            ..self.ask(slot, now, Moment::Retry { class, delay })
        };
        let pass = self.gates.admit(&ask).map_err(|r| r.reason)?;
        let intent = self.intents.get(slot);
        intent.retry.cost = pass.retry_cost.or(intent.retry.cost);
        intent.retry.retries += 1;
        intent.retry.last_delay = backoff_delay;
        if asked.is_some() && policy.retry_after_resets {
            intent.retry.backoff_from = retry;
            intent.retry.last_delay = Tick::ZERO;
        }
        let start = intent.retry.scope.start;
        // An agent that re-plans its call may send other arguments with the retry.
        let drawn = u64::from(intent.retry.retries) - 1;
        if policy.payload_drift > 0.0
            && happens(
                self.streams.word_at(Source::Payloads, intent.id, drawn),
                policy.payload_drift,
            )
        {
            intent.retry.payload += 1;
        }
        intent.retry.tries.begin(layer);
        intent.retry.next_layer = layer;
        // Backoff spends the time left like work does: up to the deadline at most.
        let until = now.after(delay);
        Ok(match policy.limits.deadline {
            Some(deadline) => until.min(start.after(deadline)),
            None => until,
        })
    }

    /// The jitter added to a Retry-After before retry `retries` + 1: uniform up to the policy's
    /// `retry_after_jitter`, from the intent's jitter stream at words of its own (past every
    /// backoff's), so adding it leaves the backoff draws as they were.
    fn retry_after_jitter(&self, id: u64, retries: u32) -> Tick {
        let most = self.policy.retry_after_jitter;
        if most == Tick::ZERO {
            return Tick::ZERO;
        }
        let word = self
            .streams
            .word_at(Source::Jitter, id, (1 << 32) | u64::from(retries));
        Tick(integer_in(word, 0, most.0))
    }
}
