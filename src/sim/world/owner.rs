//! Who answers when a call ends: the one seam every kind of call goes through. A task's plain
//! list moves to its next call or ends the task; a stage of calls made together waits for the
//! rest; an agent loop takes the answer into its context and plans its next turn; a service's
//! work goes on or answers its own caller. Whether the call fell back first, or cooled its
//! primary, is settled before it gets here.

use super::{Event, MoveOn, World, agent};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, Count, IntentRecord};
use crate::sim::intent::Hop;

/// The owner of a call, the one that answers when it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Owner {
    /// A service's work, which made the call on its caller's behalf.
    Work(u32),
    /// A task's stage of calls made together.
    Stage { task: u64 },
    /// An agent loop's turn.
    Loop { task: u64 },
    /// A task's list of calls, in order: `next` is the place of the call after this one.
    List { task: u64, next: usize },
}

/// How a call ended, as its owner needs to know it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ended {
    pub succeeded: bool,
    /// A call the task may lose (a stage's optional call).
    pub optional: bool,
    /// What an agent loop's call adds to its context: the model's answer, or a tool's result.
    pub added: u64,
    pub caller: u32,
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// The owner of the call `hop` is a hop of.
    pub(super) fn owner(&self, hop: Hop) -> Owner {
        if let Some(work) = hop.work {
            return Owner::Work(work);
        }
        let calls = match self.workload.agent {
            Some(_) => agent::STRIDE,
            None => self.plan.calls.len() as u64,
        };
        let task = hop.origin / calls;
        if self.plan.stages.is_some() {
            Owner::Stage { task }
        } else if self.workload.agent.is_some() {
            Owner::Loop { task }
        } else {
            let next = (hop.origin % calls + 1) as usize;
            Owner::List { task, next }
        }
    }

    /// What follows a call that `ended`, as its `owner` says; the call went over the edge
    /// `primary` (its first tier's), where a task's goodput is counted.
    pub(super) fn follows(
        &mut self,
        owner: Owner,
        ended: Ended,
        primary: usize,
        sched: &mut Scheduler<Event>,
    ) -> MoveOn {
        if let Owner::Work(work) = owner {
            self.call_ended(work, ended.succeeded || ended.optional, sched);
            return MoveOn::Called;
        }
        // Goodput is the task's: counted at the tool it called, whichever fallback served it.
        if ended.succeeded {
            let called = self.hops.graph.edges[primary].callee;
            self.totals.count(called, sched.now(), Count::Goodput);
        }
        match owner {
            Owner::Work(_) => unreachable!("answered above"),
            Owner::Stage { task } => {
                let passed = ended.succeeded || ended.optional;
                self.task_call_ended(task, passed, ended.caller, sched)
            }
            Owner::Loop { task } => {
                let added = ended.succeeded.then_some(ended.added);
                self.loop_call_ended(task, added, ended.caller, sched)
            }
            Owner::List { task, next } if ended.succeeded && next < self.plan.calls.len() => {
                MoveOn::NextCall {
                    task,
                    call: next,
                    caller: ended.caller,
                }
            }
            Owner::List { .. } => {
                if ended.succeeded {
                    self.totals.tasks_succeeded += 1;
                }
                MoveOn::NextTask
            }
        }
    }
}
