//! A worker that dies holding a call, and the replacement that takes the call over (see
//! [`crate::model::Crash`]).
//!
//! A crash takes the client's side of the call: the attempts it waited on are abandoned (the
//! server still works on them, and may commit), and the call gets a new handle, so every timer
//! and reply the dead worker waited for finds nothing. Once the lease runs out a replacement
//! takes the call over, with what the policy's durability wrote down: under `checkpoint`,
//! nothing of the call, so it sends again from a first attempt (under a key it makes anew,
//! unless the key is derived from the work item); under `intent_log`, the SENDING record of
//! each attempt sent and its key, so where one was sent it looks the key up first — found, the
//! call is done; not found, it sends under the same key where the receiver honours keys, and
//! otherwise leaves the call to an operator (`needs_reconciliation`), as reconciliation does.
//!
//! A worker that stalls past its lease (`stall`) is taken over the same way, and then wakes
//! believing it still holds the call: it sends once more under its own key and lease token (a
//! zombie's late send), which a server that fences refuses — unless it keeps the admission
//! rule, which finds its lease gone before the send.
//!
//! A lease held for a term (`renewed = false`) lapses when the term runs out, its worker alive
//! or not: the item passes to a replacement at once, and the worker's replies after it are
//! refused, so the attempts it still awaited are let go as a crash lets them go. The admission
//! rule holds the item afresh before a send whose timeout would outlast the term.

use super::{Event, World};
use crate::engine::Scheduler;
use crate::engine::rng::Source;
use crate::metrics::{AttemptRecord, IntentRecord, Outcome, Status, StopReason};
use crate::model::Choice;
use crate::policy::Durability;
use crate::sim::slab::Handle;
use crate::time::Tick;

/// What happens to the worker holding a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// It crashes.
    Crash,
    /// Its lease has run out: a replacement takes the call over.
    Takeover,
    /// The replacement's lookup of the call's key has its answer.
    Recover,
    /// The worker of this number wakes from a stall, believing it still holds the call.
    Wake(u32),
    /// The lease of this number, held for a term, runs out.
    Lapse(u32),
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Sets when the worker now holding the call in `handle` crashes, if workers crash (a draw
    /// of the call's own stream, one word per worker), and when its lease runs out, if held
    /// for a term.
    pub(super) fn arm_crash(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        let Some(crash) = self.workload.crash else {
            return;
        };
        let intent = self.intents.get(handle.slot);
        let worker = intent.crashes().1;
        let word = self
            .streams
            .word_at(Source::Crashes, intent.id, u64::from(worker));
        // A run through a schedule crashes workers at its crash points, not at drawn times.
        let uptime = match self.fates.explorer {
            Some(_) => crash.at.filter(|_| worker == 0),
            None => crash.uptime(worker, word),
        };
        if let Some(uptime) = uptime {
            sched.schedule_in(uptime, Event::Worker(handle, Step::Crash));
        }
        self.arm_lapse(handle, sched);
    }

    /// The crash point before a send at `now`, in a run through a schedule where workers
    /// crash at a rate (see [`crate::sim::Choices`]): its choice, which the dispatch carries
    /// out; `None` elsewhere.
    pub(super) fn crash_point(&mut self, slot: u32, now: Tick) -> Option<Choice> {
        let mean = self.workload.crash?.mean_uptime?;
        let choices = self.fates.explorer.as_mut()?;
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        let tool = &self.tools[intent.tool];
        let start = intent.retry.scope.start;
        let limits = intent.limits(policy.time.limits, start);
        let granted = limits.grant(policy.time.waits[intent.tool].timeout, start, now);
        let trip = [
            &tool.request_latency,
            &tool.service_time,
            &tool.reply_latency,
        ]
        .iter()
        .fold(Tick::ZERO, |sum, leg| sum.after(leg.quantile(0.5)));
        let during = tool.timer(granted).map_or(trip, |w| w.min(trip));
        Some(choices.crash_point((intent.tool, intent.id, intent.start), now, during, mean))
    }

    /// Sets when the current lease of the call in `handle` runs out, where leases are held
    /// for a term.
    fn arm_lapse(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        let Some(crash) = self.workload.crash.filter(|c| !c.renewed) else {
            return;
        };
        let (ends, lease) = self.intents.get(handle.slot).lease_ends(crash.lease);
        sched.schedule_at(ends, Event::Worker(handle, Step::Lapse(lease)));
    }

    /// The admission rule, before an attempt that would wait `wait` is sent at `now`: where the
    /// wait does not end before the worker's lease does, the worker holds the item afresh.
    /// (Validation makes every timeout shorter than a whole term.)
    pub(super) fn admit_within_lease(
        &mut self,
        slot: u32,
        wait: Option<Tick>,
        now: Tick,
        sched: &mut Scheduler<Event>,
    ) {
        let (Some(crash), Some(wait)) = (self.workload.crash, wait) else {
            return;
        };
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        if policy.agent.within_lease && now.after(wait) >= intent.lease_ends(crash.lease).0 {
            intent.held_afresh(now);
            let handle = self.intents.handle(slot);
            self.arm_lapse(handle, sched);
        }
    }

    pub(super) fn on_worker(&mut self, handle: Handle, step: Step, sched: &mut Scheduler<Event>) {
        match step {
            // A zombie wakes whatever became of the call: the intent waits for it (see
            // `Intent::is_over`), so its slot is its own.
            Step::Wake(worker) => self.wake(handle.slot, worker, sched),
            // A call that ended first was not held when its worker would have crashed.
            _ if !self.intents.under_way(handle) => {}
            Step::Crash => self.crash(handle, sched),
            Step::Lapse(lease) => self.lapse(handle, lease, sched),
            Step::Takeover => self.take_over(handle, sched),
            Step::Recover => self.recover(handle, sched),
        }
    }

    /// The worker dies: what it held is let go, and the replacement is due when the lease runs
    /// out — a renewed lease's length after the crash, or a term's end.
    pub(super) fn crash(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let intent = self.intents.get(handle.slot);
        let worker = intent.crashes().1;
        intent.crashed(now);
        let crash = self.workload.crash.expect("a crash is armed only then");
        let takeover = match crash.renewed {
            true => now.after(crash.lease),
            false => intent.lease_ends(crash.lease).0.max(now),
        };
        if let Some(stall) = crash.stall {
            intent.stalled();
            sched.schedule_in(stall, Event::Worker(handle, Step::Wake(worker)));
        }
        let renewed = self.let_go(handle.slot, sched);
        sched.schedule_at(takeover, Event::Worker(renewed, Step::Takeover));
    }

    /// The lease numbered `lease`, held for a term, runs out under a living worker, unless a
    /// takeover or a fresh hold made another since: what it held is let go, and a replacement
    /// takes the call over at once.
    fn lapse(&mut self, handle: Handle, lease: u32, sched: &mut Scheduler<Event>) {
        let crash = self.workload.crash.expect("a lapse is armed only then");
        let intent = self.intents.get(handle.slot);
        if intent.lease_ends(crash.lease).1 != lease {
            return;
        }
        intent.lapsed();
        let renewed = self.let_go(handle.slot, sched);
        self.take_over(renewed, sched);
    }

    /// The worker lets the call go: the attempts it waited on are abandoned (the server still
    /// works on them), the gates they held freed, and the call given a new handle, so every
    /// timer and reply the worker waited for finds nothing.
    fn let_go(&mut self, slot: u32, sched: &mut Scheduler<Event>) -> Handle {
        let now = sched.now();
        let holder = self.holder(slot);
        let intent = self.intents.get(slot);
        let tool = intent.tool;
        let awaited: Vec<u32> = intent.awaiting().attempts().collect();
        for &attempt in &awaited {
            self.settle(slot, attempt, Outcome::Cancelled, None, now);
        }
        self.intents.get(slot).client.ambiguous |= !awaited.is_empty();
        let renewed = self.intents.renew(slot);
        for _ in &awaited {
            self.gates.abandoned(tool, holder);
        }
        self.wake_waiting(tool, holder, sched);
        renewed
    }

    /// A stalled worker wakes, still believing it holds the call, and sends it once more under
    /// its own key and lease token; it learns it lost the lease before any reply, so nobody
    /// waits for this one. A call already over may leave with it.
    fn wake(&mut self, slot: u32, worker: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let intent = self.intents.get(slot);
        // A worker keeping the admission rule looks at its lease before the send, and finds
        // it gone.
        let sends = !self.hops.policies[usize::from(intent.edge)]
            .agent
            .within_lease;
        intent.woke(worker, sends);
        if sends {
            let attempt = intent.attempts();
            self.send(slot, false, sched);
            self.settle(slot, attempt, Outcome::Cancelled, None, now);
        }
        if self.intents.get(slot).is_over() {
            self.close(slot);
        }
    }

    /// A replacement takes the call over: a fresh count of attempts, its own crash to come,
    /// and the call's cancellation as the operation set it; then a lookup first, or a send.
    /// Where the item's deliveries are spent, the queue gives it up and the call ends.
    fn take_over(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let crash = self
            .workload
            .crash
            .expect("a takeover follows a crash or a lapse");
        let intent = self.intents.get(handle.slot);
        if intent.crashes().1 + 1 >= crash.max_deliveries {
            intent.dead_lettered();
            let stop = Status::Stopped(StopReason::AttemptLimit);
            return self.end_intent(handle.slot, stop, sched);
        }
        let policy = self.hops.policies[usize::from(intent.edge)];
        intent.taken_over(now);
        if let Some(choices) = &mut self.fates.explorer {
            choices.taken_over(intent.id, now);
        }
        intent.retry.tries.start(policy.rule.depth());
        intent.retry.scope.first = intent.attempts();
        let (start, sent) = (intent.start, intent.attempts() > 0);
        if let Some(after) = policy.time.limits.cancel_after {
            sched.schedule_at(start.after(after).max(now), Event::Cancel(handle));
        }
        self.arm_crash(handle, sched);
        if sent && policy.agent.durability == Durability::IntentLog {
            let intent = self.intents.get(handle.slot);
            intent.client.lookups += 1;
            let time = self.tools[intent.tool].lookup.time;
            sched.schedule_in(time, Event::Worker(handle, Step::Recover));
            return;
        }
        let next = self.dispatch(handle.slot, sched);
        self.move_on(next, sched);
    }

    /// The replacement's lookup has its answer: the call is done, sent again, or left to an
    /// operator.
    fn recover(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        if self.resend_after_lookup(handle.slot, sched) {
            let next = self.dispatch(handle.slot, sched);
            self.move_on(next, sched);
        }
    }
}
