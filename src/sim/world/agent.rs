//! Tasks that are agent loops: each turn calls the workload's list — the model, then its tools —
//! for the turns drawn for the task, the last the model's alone, each model call reading the
//! context the turns before it built; a call that fails for good re-plans as the policy says
//! (see [`crate::policy::replan`]), or ends the task.

use std::collections::BTreeMap;

use super::{MoveOn, World};
use crate::engine::Scheduler;
use crate::engine::rng::Source;
use crate::metrics::{AttemptRecord, IntentRecord};
use crate::policy::{LoopState, Step};

use super::Event;

/// Intent numbers a task's loop may use: a task's k-th call is task × STRIDE + k.
pub(super) const STRIDE: u64 = 1 << 20;

/// The loops under way, by task.
#[derive(Default)]
pub(super) struct Loops(BTreeMap<u64, LoopState>);

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Starts task `task`'s loop for `caller`: its turns drawn, its first model call made.
    pub(super) fn start_loop(
        &mut self,
        task: u64,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> Option<MoveOn> {
        let agent = self.workload.agent.as_ref().expect("an agent loop");
        let turns = agent.turns(self.streams.word_at(Source::Turns, task, 0));
        self.underway.loops.0.insert(task, LoopState::new(turns));
        self.loop_call(task, 0, caller, sched)
    }

    /// Makes the call at `place` of the turn task `task` is in: the model's reads the context.
    fn loop_call(
        &mut self,
        task: u64,
        place: usize,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> Option<MoveOn> {
        let state = self
            .underway
            .loops
            .0
            .get_mut(&task)
            .expect("a loop under way");
        let (id, context) = (task * STRIDE + u64::from(state.made), state.context);
        let again = state.start(self.plan.calls.len());
        let tool = self.plan.calls[place];
        let handle = self.open_call(id, tool, false, caller, sched.now());
        let intent = self.intents.get(handle.slot);
        if again {
            intent.redo();
        }
        intent.read_context(&self.streams, &self.tools[tool], context);
        self.first_attempt(handle, sched)
    }

    /// A call of task `task`'s loop ended, having added `added` tokens to the context if it
    /// succeeded: the next call, a re-plan, or the task's end.
    pub(super) fn loop_call_ended(
        &mut self,
        task: u64,
        added: Option<u64>,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> MoveOn {
        let state = self
            .underway
            .loops
            .0
            .get_mut(&task)
            .expect("a loop under way");
        let replan = self.policy.agent.replan;
        match state.after(self.plan.calls.len(), added, replan) {
            Step::Call { place } => {
                (self.loop_call(task, place, caller, sched)).unwrap_or(MoveOn::Called)
            }
            Step::Done { succeeded } => {
                self.underway.loops.0.remove(&task);
                if succeeded {
                    self.totals.tasks_succeeded += 1;
                }
                MoveOn::NextTask
            }
        }
    }
}
