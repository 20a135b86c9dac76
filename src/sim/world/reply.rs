//! What comes back to the client: a reply or a timeout settles an attempt, and the breaker and
//! retry budget hear how it went.

use super::{AttemptRef, Event, Reply, World};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, Count, IntentRecord, Outcome, Status, StopReason};
use crate::model::FailureClass;
use crate::policy::{Ejection, Failure, hedge};

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    pub(super) fn on_reply(&mut self, at: AttemptRef, reply: Reply, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(intent) = self.intents.awaiting(at.intent, at.attempt) else {
            return;
        };
        let policy = self.hops.policies[usize::from(intent.edge)];
        let limits = intent.limits(policy.time.limits, intent.retry.scope.start);
        let draw = intent.draw(at.attempt);
        let failure = match reply {
            Reply::Ok => None,
            Reply::Failed(class) => Some(class),
        };
        let outcome = Outcome::of(failure, draw.fate);
        self.settle(
            at.intent.slot,
            at.attempt,
            outcome,
            Some(Ejection::counts(failure)),
            now,
        );
        // Only a kept time series counts it: nothing else reads it.
        if failure.is_none() && self.totals.series.is_some() {
            let intent = self.intents.get(at.intent.slot);
            let (tool, sent) = (intent.tool, intent.dispatched(at.attempt));
            let replica = usize::from(draw.replica);
            self.totals
                .count_replica((tool, replica), sent, Count::AnsweredBySend);
        }
        let intent = self.intents.get(at.intent.slot);
        intent.client.ambiguous |= matches!(
            failure,
            Some(FailureClass::Reset | FailureClass::StreamBroken)
        );
        if let Some(FailureClass::Throttled | FailureClass::Overloaded) = failure {
            let replica = usize::from(intent.draw(at.attempt).replica);
            self.totals
                .count_replica((intent.tool, replica), now, Count::Rejected);
        }
        // Only a call that could not be abandoned answers after the deadline: the overrun is
        // found on return, its evidence kept, and nothing is retried.
        let late = limits.past_deadline(intent.retry.scope.start, now);
        intent.client.late_receipt = late && failure.is_none();
        // A failure while a hedge (or its primary) is still out: wait for that one, unless the
        // hedging sends the next at once or ends the call.
        let racing = match failure {
            Some(class) if !intent.awaiting().is_empty() => {
                hedge::waits_for_the_others(policy, &intent.retry.tries, class)
            }
            _ => false,
        };
        let (t, cost) = (intent.tool, intent.retry.cost);
        if policy.gates.send_tokens.is_some() {
            // The answer reports the usage: a client-side bucket settles as the provider's does.
            let unused = intent.tokens_unused(&self.tools[t], (at.attempt, draw), failure);
            let holder = self.holder(at.intent.slot);
            self.gates.give_back((t, holder), now, unused);
        }
        let tool = (t, self.holder(at.intent.slot));
        self.observe(tool, failure, cost, sched);
        if late {
            let stop = Status::Stopped(StopReason::DeadlineExceeded);
            return self.end_intent(at.intent.slot, stop, sched);
        }
        if racing {
            return;
        }
        match failure {
            None => self.end_intent(at.intent.slot, Status::Succeeded, sched),
            Some(class) => {
                let failure = Failure {
                    should_retry: self.tools[tool.0].server.advice(class, draw.fate),
                    ..Failure::new(class, draw.retry_after)
                };
                self.after_failure(at.intent.slot, failure, sched)
            }
        }
    }

    pub(super) fn on_timeout(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        if self.intents.awaiting(at.intent, at.attempt).is_none() {
            return;
        }
        let timeout = Some(Ejection::counts(Some(FailureClass::Timeout)));
        self.settle(at.intent.slot, at.attempt, Outcome::Timeout, timeout, now);
        let intent = self.intents.get(at.intent.slot);
        intent.client.timeouts += 1;
        intent.client.ambiguous = true;
        let replica = usize::from(intent.draw(at.attempt).replica);
        self.totals
            .count_replica((intent.tool, replica), now, Count::Timeout);
        let racing = !intent.awaiting().is_empty();
        let tool = (intent.tool, self.holder(at.intent.slot));
        let intent = self.intents.get(at.intent.slot);
        let (start, cost) = (intent.retry.scope.start, intent.retry.cost);
        let policy = self.hops.policies[usize::from(intent.edge)];
        let limits = intent.limits(policy.time.limits, start);
        self.observe(tool, Some(FailureClass::Timeout), cost, sched);
        if limits.past_deadline(start, now) {
            let stop = Status::Stopped(StopReason::DeadlineExceeded);
            return self.end_intent(at.intent.slot, stop, sched);
        }
        if racing {
            return;
        }
        self.after_failure(
            at.intent.slot,
            Failure::new(FailureClass::Timeout, None),
            sched,
        );
    }

    /// Tells the gates (the breaker, budget and concurrency limit of the tool and holder) how a
    /// call ended, and lets a call waiting for a slot go out; `cost` is what the budget took for
    /// it, if it was a retry.
    pub(super) fn observe(
        &mut self,
        tool: (usize, u32),
        failure: Option<FailureClass>,
        cost: Option<f64>,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        self.gates.feedback(tool, now, failure, cost);
        self.wake_waiting(tool.0, tool.1, sched);
        // The send rate may have changed, and with it when the next token comes.
        let at = self.hops.at_tool[tool.0];
        if at.gates.send_rate.is_some() || at.gates.send_tokens.is_some() {
            self.promise_token(tool.0, tool.1, sched);
        }
    }
}
