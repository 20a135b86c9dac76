//! A task-level retry for an agent loop: when a call fails for good (its own retries spent),
//! the agent re-plans — from the start of the task, its context cleared, or from the turn that
//! failed, its context as that turn began — up to `max` times. [`LoopState::after`] is the
//! decision, a pure function of where the loop stands and how its last call ended.

/// Where a re-plan starts again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplanFrom {
    /// The whole task again: every turn, from an empty context.
    Start,
    /// The turn whose call failed: its model call and tools again, from its context.
    Turn,
}

impl ReplanFrom {
    pub const ALL: [ReplanFrom; 2] = [ReplanFrom::Start, ReplanFrom::Turn];

    pub fn name(self) -> &'static str {
        match self {
            ReplanFrom::Start => "start",
            ReplanFrom::Turn => "turn",
        }
    }
}

/// A policy's re-planning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replan {
    pub from: ReplanFrom,
    /// Re-plans a task may make.
    pub max: u32,
}

/// Where one task's loop stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopState {
    /// Turns this task takes.
    pub turns: u32,
    /// The turn under way, from 0, and the place in it of the call under way (0: the model).
    pub turn: u32,
    pub place: usize,
    /// Tokens of earlier answers and tool results the next model call reads, and their count
    /// as the turn under way began.
    pub context: u64,
    pub turn_context: u64,
    /// Re-plans made.
    pub replans: u32,
    /// Calls started, for their numbers.
    pub made: u32,
    /// How far the task has ever got: the places (turn × calls a turn + place) started.
    pub frontier: u64,
}

/// What the loop does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Calls the call at `place` of the turn's list.
    Call { place: usize },
    /// The task is over.
    Done { succeeded: bool },
}

impl LoopState {
    /// A task of `turns` turns, at its start.
    pub fn new(turns: u32) -> LoopState {
        LoopState {
            turns,
            ..LoopState::default()
        }
    }

    /// The call under way is started: whether it does again what an earlier call of the task
    /// did (a re-plan's), which is what retries added to the bill.
    pub fn start(&mut self, per_turn: usize) -> bool {
        let at = u64::from(self.turn) * per_turn as u64 + self.place as u64;
        self.made += 1;
        let again = at < self.frontier;
        self.frontier = self.frontier.max(at + 1);
        again
    }

    /// The call at `place` of a turn of `per_turn` calls ended: `Some(tokens)` it succeeded,
    /// adding that many tokens to the context; `None` it failed for good. What comes next.
    pub fn after(&mut self, per_turn: usize, added: Option<u64>, replan: Option<Replan>) -> Step {
        let Some(tokens) = added else {
            return match replan {
                Some(r) if self.replans < r.max => {
                    self.replans += 1;
                    self.place = 0;
                    match r.from {
                        ReplanFrom::Start => {
                            (self.turn, self.context, self.turn_context) = (0, 0, 0);
                        }
                        ReplanFrom::Turn => self.context = self.turn_context,
                    }
                    Step::Call { place: 0 }
                }
                _ => Step::Done { succeeded: false },
            };
        };
        self.context = self.context.saturating_add(tokens);
        self.place += 1;
        // The last turn is the model's answer alone.
        let last = self.turn + 1 == self.turns;
        if last {
            return Step::Done { succeeded: true };
        }
        if self.place == per_turn {
            (self.turn, self.place, self.turn_context) = (self.turn + 1, 0, self.context);
        }
        Step::Call { place: self.place }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three turns of [model, tool]: model, tool, model, tool, model — each success growing
    /// the context by what it added.
    #[test]
    fn a_loop_runs_its_turns_and_ends_with_the_models_answer() {
        let mut s = LoopState::new(3);
        let mut calls = vec![0];
        let mut step = Step::Call { place: 0 };
        let mut added = 100;
        while let Step::Call { place } = step {
            step = s.after(2, Some(added), None);
            added += 100;
            if let Step::Call { place: next } = step {
                calls.push(next);
            }
            let _ = place;
        }
        assert_eq!(calls, [0, 1, 0, 1, 0]);
        assert_eq!(step, Step::Done { succeeded: true });
        assert_eq!(s.context, 100 + 200 + 300 + 400 + 500);
        // One turn: the model alone.
        assert_eq!(
            LoopState::new(1).after(2, Some(5), None),
            Step::Done { succeeded: true }
        );
    }

    #[test]
    fn a_failure_replans_from_the_start_or_the_turn_or_ends_the_task() {
        let from = |from| Some(Replan { from, max: 1 });
        // Into turn 1 (context 300 as it began), its tool fails.
        let at_turn_one = || {
            let mut s = LoopState::new(4);
            for added in [100, 200, 50] {
                s.after(2, Some(added), None);
            }
            assert_eq!(
                (s.turn, s.place, s.context, s.turn_context),
                (1, 1, 350, 300)
            );
            s
        };
        let mut s = at_turn_one();
        s.frontier = 4;
        assert_eq!(
            s.after(2, None, from(ReplanFrom::Turn)),
            Step::Call { place: 0 }
        );
        assert_eq!((s.turn, s.context, s.replans), (1, 300, 1));
        // The turn's model call and tool are done again; the next turn's are new.
        assert!(s.start(2));
        s.after(2, Some(10), None);
        assert!(s.start(2));
        s.after(2, Some(10), None);
        assert!(!s.start(2));
        // Its re-plans spent, the next failure ends the task.
        let mut s = at_turn_one();
        s.after(2, None, from(ReplanFrom::Turn));
        assert_eq!(
            s.after(2, None, from(ReplanFrom::Turn)),
            Step::Done { succeeded: false }
        );
        let mut s = at_turn_one();
        assert_eq!(
            s.after(2, None, from(ReplanFrom::Start)),
            Step::Call { place: 0 }
        );
        assert_eq!((s.turn, s.context, s.turn_context), (0, 0, 0));
        assert_eq!(
            at_turn_one().after(2, None, None),
            Step::Done { succeeded: false }
        );
    }
}
