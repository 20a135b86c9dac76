//! After a failure: the policy's decision ([`crate::policy::decide`]) carried out — a
//! reconciliation lookup, the gates a retry meets (see [`crate::policy::gate`]) and its
//! backoff, a held call, or the end of the intent.

use super::{Event, World, request_key};
use crate::engine::Scheduler;
use crate::engine::rng::{Source, Streams};
use crate::metrics::{AttemptRecord, IntentRecord, Lookup, Status, StopReason};
use crate::model::FailureClass;
use crate::policy::gate::{Ask, Moment};
use crate::policy::reconcile::{self, Answer};
use crate::policy::{Failure, Plan, Word, Words, decide};
use crate::sim::slab::Handle;
use crate::time::Tick;
use crate::variate::happens;

/// The words an intent's decision reads, from its own streams.
struct IntentWords<'a> {
    streams: &'a Streams,
    id: u64,
}

impl Words for IntentWords<'_> {
    fn word(&mut self, word: Word) -> u64 {
        let (source, index) = match word {
            Word::Jitter(n) => (Source::Jitter, u64::from(n)),
            // Past every backoff's word, so adding it leaves the backoff draws as they were.
            Word::PushbackJitter(n) => (Source::Jitter, (1 << 32) | u64::from(n)),
            Word::Payload(n) => (Source::Payloads, u64::from(n)),
        };
        self.streams.word_at(source, self.id, index)
    }
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// After a failed attempt: what the policy decides, carried out.
    pub(super) fn after_failure(
        &mut self,
        slot: u32,
        failure: Failure,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        let intent = self.intents.get(slot);
        let tool = &self.tools[intent.tool];
        let policy = self.hops.policies[usize::from(intent.edge)];
        let limits = intent.limits(policy.time.limits, intent.retry.scope.start);
        let mut words = IntentWords {
            streams: &self.streams,
            id: intent.id,
        };
        match decide(policy, tool, &intent.retry, failure, &mut words) {
            Plan::LookUp => {
                intent.client.lookups += 1;
                let handle = self.intents.handle(slot);
                let event = Event::Lookup {
                    intent: handle,
                    class: failure.class,
                };
                sched.schedule_in(tool.lookup.time, event);
            }
            Plan::Stop(reason) => self.end_intent(slot, Status::Stopped(reason), sched),
            // Held with no deadline: nothing more happens, and the run ends it `hung`.
            Plan::Hold => {
                if let Some(deadline) = limits.deadline {
                    let until = intent.retry.scope.start.after(deadline);
                    self.dispatch_at(slot, until, sched);
                }
            }
            Plan::Retry(next) => {
                let ask = Ask {
                    fresh_scope: next.fresh_scope,
                    ..self.ask(
                        slot,
                        now,
                        Moment::Retry {
                            class: failure.class,
                            delay: next.delay,
                        },
                    )
                };
                match self.gates.admit(&ask) {
                    Err(refusal) => self.end_intent(slot, Status::Stopped(refusal.reason), sched),
                    Ok(pass) => {
                        let intent = self.intents.get(slot);
                        intent.retry.take(&next, pass.retry_cost);
                        // Backoff spends the time left like work does: up to the deadline.
                        let until = now.after(next.delay);
                        let until = match limits.deadline {
                            Some(d) => until.min(intent.retry.scope.start.after(d)),
                            None => until,
                        };
                        self.dispatch_at(slot, until, sched);
                    }
                }
            }
        }
    }

    /// The next dispatch of the intent, at `until`, the wait counted as backoff.
    fn dispatch_at(&mut self, slot: u32, until: Tick, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(slot);
        intent.client.backoff = intent.client.backoff.after(until.since(sched.now()));
        // A dispatch due now, with nothing else due this tick, would be the next event run:
        // it is made at once instead (every caller hands over here, last). Not where a time
        // series watches the levels after each event.
        if until == sched.now() && sched.nothing_else_now() && self.totals.series.is_none() {
            let next = self.dispatch(slot, sched);
            return self.move_on(next, sched);
        }
        let handle = self.intents.handle(slot);
        sched.schedule_at(until, Event::Dispatch(handle));
    }

    /// The answer to a lookup, read by the reconciliation policy.
    pub(super) fn on_lookup(
        &mut self,
        handle: Handle,
        class: FailureClass,
        sched: &mut Scheduler<Event>,
    ) {
        if self.intents.under_way(handle) && self.resend_after_lookup(handle.slot, sched) {
            let failure = Failure {
                looked_up: true,
                ..Failure::new(class, None)
            };
            self.after_failure(handle.slot, failure, sched);
        }
    }

    /// Reads the intent in `slot`'s latest lookup by the reconciliation policy and carries out
    /// an answer that ends it — found, a success; unknown, left to an operator — or says a
    /// resend under the key is what follows (the caller's to make: a retry, or a
    /// replacement's send).
    pub(super) fn resend_after_lookup(&mut self, slot: u32, sched: &mut Scheduler<Event>) -> bool {
        let (failed, found) = self.look_up(slot, sched.now());
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        match reconcile::answer(policy, &self.tools[intent.tool], failed, found) {
            Answer::Resend => return true,
            Answer::Confirmed => self.end_intent(slot, Status::Succeeded, sched),
            Answer::Unknown => {
                let stop = Status::Stopped(StopReason::NeedsReconciliation);
                self.end_intent(slot, stop, sched);
            }
        }
        false
    }

    /// The answer of the intent in `slot`'s latest lookup, at `now`: whether the lookup
    /// failed, and whether it found the key the intent's attempts carry now committed.
    pub(super) fn look_up(&mut self, slot: u32, now: Tick) -> (bool, bool) {
        let intent = self.intents.get(slot);
        let tool = &self.tools[intent.tool];
        let lookup = u64::from(intent.client.lookups) - 1;
        let failed = match &mut self.fates.explorer {
            Some(choices) => {
                let point = crate::sim::Point::Lookup {
                    tool: intent.tool,
                    intent: intent.id,
                };
                choices.next(point) == crate::model::Choice::LookupFails
            }
            None => {
                tool.lookup.failure > 0.0
                    && happens(
                        self.streams.word_at(Source::Lookups, intent.id, lookup),
                        tool.lookup.failure,
                    )
            }
        };
        // The key its latest attempt carried: the one a lookup can ask for.
        let policy = self.hops.policies[usize::from(intent.edge)];
        let key = request_key(policy, intent, intent.attempts().saturating_sub(1));
        let found = !failed
            && intent
                .server
                .keys
                .shows(key, now, tool.lookup.lag, tool.server.key_retention);
        intent.looked_up(match (failed, found) {
            (true, _) => Lookup::Failed,
            (false, true) => Lookup::Found,
            (false, false) => Lookup::NotFound,
        });
        (failed, found)
    }
}
