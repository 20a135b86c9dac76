//! A service's side of an attempt: a worker takes it up, the service makes its calls stage by
//! stage — each call an intent of its own on its edge, with the edge's policy — and, once the
//! last stage has ended, does its own work and answers. A call that failed (unless it was
//! optional) fails the attempt with a 5xx and no work of its own, and no later stage is called.
//! A service that abandons work at the deadline stops there, whatever stage it is in: its
//! worker is free and its answer a 5xx, and the calls it had out end as their own policies
//! say (with the deadline carried down, at the same moment).

use super::{AttemptRef, Event, MoveOn, World, mix, request_key};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, IntentRecord};
use crate::model::Call;
use crate::policy::KeyScope;
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
    /// When the service abandons the attempt, if it does.
    deadline: Option<Tick>,
    /// The deadline came: the attempt is answered, and the work waits only for its calls
    /// still out, to be let go with the last of them.
    abandoned: bool,
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

    /// Work `i`, if it is still that of attempt `at`.
    fn of(&mut self, i: u32, at: super::AttemptRef) -> Option<&mut Work> {
        (self.slots.get_mut(i as usize))
            .and_then(Option::as_mut)
            .filter(|w| w.at == at)
    }

    fn remove(&mut self, i: u32) -> Work {
        self.free.push(i);
        self.slots[i as usize].take().expect("a work under way")
    }
}

/// The call site of a service's call: its caller's site, its edge, its stage and its place
/// in the stage — the same for the call each of the caller's attempts makes there.
fn site_of(caller: u64, edge: usize, stage: usize, place: usize) -> u64 {
    mix(mix(caller ^ (edge as u64) << 40) ^ (stage as u64) << 32 ^ place as u64)
}

/// The number a service's call is known by (and its random streams keyed by): the caller's
/// intent and attempt that made it, and its site — unique along every path of attempts from
/// the task down, so a retry above meets fresh draws below, while configurations meet the same
/// draws at the same call.
fn call_id(parent: u64, attempt: u32, site: u64) -> u64 {
    mix(mix(parent ^ u64::from(attempt)) ^ site)
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Whether a call of work `w` is orphaned: some caller above it, up to the task, no longer
    /// waits for the attempt the work serves.
    pub(super) fn orphaned(&mut self, mut w: u32) -> bool {
        loop {
            let work = self.underway.works.get(w);
            // A service that abandoned the work answers no one for it.
            if work.abandoned {
                return true;
            }
            let at = work.at;
            let Some(parent) = self.intents.awaiting(at.intent, at.attempt) else {
                return true;
            };
            match parent.hop().work {
                Some(up) => w = up,
                None => return false,
            }
        }
    }

    /// Whether `tool` makes calls to serve an attempt.
    pub(super) fn is_service(&self, tool: usize) -> bool {
        !self.hops.graph.stages[tool].is_empty()
    }

    /// A worker takes up attempt `at` at service `tool`, whose own work takes `service` and
    /// which abandons it at `deadline`, if given: it makes its first stage of calls.
    pub(super) fn begin_work(
        &mut self,
        at: AttemptRef,
        tool: usize,
        service: Tick,
        deadline: Option<Tick>,
        sched: &mut Scheduler<Event>,
    ) {
        let w = self.underway.works.add(Work {
            at,
            tool,
            stage: 0,
            pending: 0,
            failed: false,
            service,
            deadline,
            abandoned: false,
        });
        if let Some(d) = deadline {
            let work = Some(w);
            sched.schedule_at(d.max(sched.now()), Event::Abandon { at, work });
            // Taken up at or past its deadline: abandoned before any call is made.
            if d <= sched.now() {
                return;
            }
        }
        self.start_stage(w, sched);
    }

    /// The deadline of work `w` for attempt `at` has come: whether it was still under way, and
    /// is abandoned now. One with calls out waits for them to end before it is let go.
    pub(super) fn abandon_work(&mut self, w: u32, at: AttemptRef) -> bool {
        let Some(work) = self.underway.works.of(w, at).filter(|w| !w.abandoned) else {
            return false;
        };
        if work.pending == 0 {
            self.underway.works.remove(w);
        } else {
            work.abandoned = true;
        }
        true
    }

    fn start_stage(&mut self, w: u32, sched: &mut Scheduler<Event>) {
        let work = self.underway.works.get(w);
        let calls = &self.hops.graph.stages[work.tool][work.stage];
        work.pending = calls.len() as u32;
        for (place, &call) in calls.iter().enumerate() {
            self.start_call(w, place, call, sched);
        }
    }

    fn start_call(&mut self, w: u32, place: usize, call: Call, sched: &mut Scheduler<Event>) {
        let work = self.underway.works.get(w);
        let (parent, stage) = (work.at, work.stage);
        let caller = self.intents.get(parent.intent.slot);
        let site = site_of(caller.hop().site, call.edge, stage, place);
        let id = call_id(caller.id, parent.attempt, site);
        // The request's deadline as its caller set it: when it stops waiting for this attempt
        // (its timeout, cut to its deadline), which gRPC sends with the request.
        let due = caller.expires(parent.attempt);
        let policy = self.hops.policies[call.edge];
        let carried = policy.edge.propagation.carried(due);
        let above = self.hops.policies[usize::from(caller.edge)];
        let key = match policy.rule.key {
            KeyScope::Forward => request_key(above, caller, parent.attempt),
            _ => None,
        };
        let who = caller.caller;
        let hop = Hop {
            edge: call.edge as u16,
            primary: call.edge as u16,
            work: Some(w),
            optional: call.optional,
            deadline: carried,
            origin: caller.hop().origin,
            site,
            tree: caller.hop().tree,
            key,
            ..Hop::default()
        };
        let handle = self.open(id, hop, who, sched.now());
        let next = self.first_attempt(handle, sched);
        assert!(matches!(next, None | Some(MoveOn::Called)));
    }

    /// A call of work `w` has ended, `passed` if it succeeded or may fail: the stage goes on,
    /// the next starts, or the attempt's own work begins (or, a call having failed, it fails).
    pub(super) fn call_ended(&mut self, w: u32, passed: bool, sched: &mut Scheduler<Event>) {
        let work = self.underway.works.get(w);
        work.pending -= 1;
        work.failed |= !passed;
        if work.pending > 0 {
            return;
        }
        if work.abandoned {
            self.underway.works.remove(w);
            return;
        }
        if !work.failed && work.stage + 1 < self.hops.graph.stages[work.tool].len() {
            work.stage += 1;
            return self.start_stage(w, sched);
        }
        let wait = if work.failed {
            // A 5xx, and none of its own work done.
            self.intents
                .get(work.at.intent.slot)
                .fail_fast(work.at.attempt);
            Tick::ZERO
        } else {
            work.service
        };
        // Its own work outlasts its deadline: the abandonment, due then, finds it and ends it.
        if work.deadline.is_some_and(|d| d < sched.now().after(wait)) {
            return;
        }
        let work = self.underway.works.remove(w);
        sched.schedule_in(wait, Event::ServerDone(work.at));
    }
}
