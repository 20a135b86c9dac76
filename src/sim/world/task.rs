//! A task whose calls come in stages: the calls of a stage go out together, the next stage
//! starts once the last of them has ended, and the task fails at the first stage where a call
//! it needs failed (an optional call's failure passes). A task that makes its calls one after
//! another, each needed, is the plain list [`World::follow`] walks instead.

use std::collections::BTreeMap;

use super::{Event, MoveOn, World};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, IntentRecord};

/// Where a staged task stands: its stage, the calls of it still under way, and whether one it
/// needs has failed.
struct Run {
    stage: usize,
    pending: usize,
    failed: bool,
}

/// The staged tasks under way, by task.
#[derive(Default)]
pub(super) struct Runs(BTreeMap<u64, Run>);

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Starts stage `stage` of task `task` for `caller`: what the client does next where every
    /// call of the stage ended at once (a refusal), and with it the task.
    pub(super) fn start_task_stage(
        &mut self,
        task: u64,
        stage: usize,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> Option<MoveOn> {
        let stages = self.plan.stages.expect("a staged task");
        let (first, n) = (self.plan.firsts[stage], stages[stage].len());
        let run = Run {
            stage,
            pending: n,
            failed: false,
        };
        self.underway.runs.0.insert(task, run);
        let mut next = None;
        for place in first..first + n {
            // A call that ends at once ends its stage when it is the last: the task's next
            // step is then the last one returned.
            if let Some(step) = self.start_intent(task, place, caller, sched) {
                next = Some(step);
            }
        }
        next
    }

    /// A call of staged task `task` ended, `passed` if it succeeded or may fail: the stage
    /// waits for the rest, the next begins, or the task is over.
    pub(super) fn task_call_ended(
        &mut self,
        task: u64,
        passed: bool,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> MoveOn {
        let run = self
            .underway
            .runs
            .0
            .get_mut(&task)
            .expect("a staged task under way");
        run.pending -= 1;
        run.failed |= !passed;
        if run.pending > 0 {
            return MoveOn::Called;
        }
        let stages = self.plan.stages.expect("a staged task");
        if !run.failed && run.stage + 1 < stages.len() {
            let stage = run.stage + 1;
            return (self.start_task_stage(task, stage, caller, sched)).unwrap_or(MoveOn::Called);
        }
        let run = self
            .underway
            .runs
            .0
            .remove(&task)
            .expect("a staged task under way");
        if !run.failed {
            self.totals.tasks_succeeded += 1;
        }
        MoveOn::NextTask
    }
}
