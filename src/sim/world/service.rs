//! A service's side of an attempt: a worker takes it up, the service makes its calls stage by
//! stage — each call an intent of its own on its edge, with the edge's policy — and, once the
//! last stage has ended, does its own work and answers. A call that failed (unless it was
//! optional) fails the attempt with a 5xx and no work of its own, and no later stage is called.

use super::{AttemptRef, Event, MoveOn, World};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, IntentRecord};
use crate::model::Call;
use crate::sim::intent::Hop;
use crate::time::Tick;

/// An attempt at a service making its calls.
struct Work {
    at: AttemptRef,
    tool: usize,
    stage: usize,
    /// Calls of the stage still under way.
    pending: u32,
    /// A call that may not fail has failed.
    failed: bool,
    /// The service's own time, spent once its calls are done.
    service: Tick,
}

/// The works under way, by number; a finished one's number is used again.
#[derive(Default)]
pub(super) struct Works {
    slots: Vec<Option<Work>>,
    free: Vec<u32>,
}

impl Works {
    fn add(&mut self, work: Work) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(work);
                i
            }
            None => {
                self.slots.push(Some(work));
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn get(&mut self, i: u32) -> &mut Work {
        self.slots[i as usize].as_mut().expect("a work under way")
    }

    fn remove(&mut self, i: u32) -> Work {
        self.free.push(i);
        self.slots[i as usize].take().expect("a work under way")
    }
}

/// The number a service's call is known by (and its random streams keyed by): its caller's
/// intent and attempt, its edge and its place in the stage, mixed, with the top bit set so it
/// never meets a task's call.
fn call_id(parent: u64, attempt: u32, edge: usize, place: usize) -> u64 {
    let mut z = parent ^ (u64::from(attempt) << 32) ^ ((edge as u64) << 48) ^ (place as u64) << 56;
    // SplitMix64's finaliser.
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) | 1 << 63
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Whether a call of work `w` is orphaned: some caller above it, up to the task, no longer
    /// waits for the attempt the work serves.
    pub(super) fn orphaned(&mut self, mut w: u32) -> bool {
        loop {
            let at = self.works.get(w).at;
            let Some(parent) = self.intents.awaiting(at.intent, at.attempt) else {
                return true;
            };
            match parent.hop.work {
                Some(up) => w = up,
                None => return false,
            }
        }
    }

    /// Whether `tool` makes calls to serve an attempt.
    pub(super) fn is_service(&self, tool: usize) -> bool {
        !self.graph.stages[tool].is_empty()
    }

    /// A worker takes up attempt `at` at service `tool`, whose own work takes `service`: it
    /// makes its first stage of calls.
    pub(super) fn begin_work(
        &mut self,
        at: AttemptRef,
        tool: usize,
        service: Tick,
        sched: &mut Scheduler<Event>,
    ) {
        let w = self.works.add(Work {
            at,
            tool,
            stage: 0,
            pending: 0,
            failed: false,
            service,
        });
        self.start_stage(w, sched);
    }

    fn start_stage(&mut self, w: u32, sched: &mut Scheduler<Event>) {
        let work = self.works.get(w);
        let calls = &self.graph.stages[work.tool][work.stage];
        work.pending = calls.len() as u32;
        for (place, &call) in calls.iter().enumerate() {
            self.start_call(w, place, call, sched);
        }
    }

    fn start_call(&mut self, w: u32, place: usize, call: Call, sched: &mut Scheduler<Event>) {
        let parent = self.works.get(w).at;
        let caller = self.intents.get(parent.intent.slot);
        let (id, who) = (
            call_id(caller.id, parent.attempt, call.edge, place),
            caller.caller,
        );
        // The request's deadline as its caller set it: when it stops waiting for this attempt
        // (its timeout, cut to its deadline), which gRPC sends with the request.
        let due = caller.expires(parent.attempt);
        let carried = self.policies[call.edge].propagation.carried(due);
        let callee = self.graph.edges[call.edge].callee;
        let handle = self.intents.start(id, callee, sched.now());
        let intent = self.intents.get(handle.slot);
        intent.caller = who;
        intent.hop = Hop {
            edge: call.edge as u16,
            work: Some(w),
            optional: call.optional,
            deadline: carried,
        };
        let next = self.first_attempt(handle, sched);
        debug_assert!(matches!(next, None | Some(MoveOn::Called)));
    }

    /// A call of work `w` has ended, `passed` if it succeeded or may fail: the stage goes on,
    /// the next starts, or the attempt's own work begins (or, a call having failed, it fails).
    pub(super) fn call_ended(&mut self, w: u32, passed: bool, sched: &mut Scheduler<Event>) {
        let work = self.works.get(w);
        work.pending -= 1;
        work.failed |= !passed;
        if work.pending > 0 {
            return;
        }
        if !work.failed && work.stage + 1 < self.graph.stages[work.tool].len() {
            work.stage += 1;
            return self.start_stage(w, sched);
        }
        let work = self.works.remove(w);
        let wait = if work.failed {
            // A 5xx, and none of its own work done.
            self.intents
                .get(work.at.intent.slot)
                .fail_fast(work.at.attempt);
            Tick::ZERO
        } else {
            work.service
        };
        sched.schedule_in(wait, Event::ServerDone(work.at));
    }
}
