//! What happened at each tool over time, in stretches of a fixed width: the load a client
//! offers, the part of it that meets a tool while it is down, the calls a breaker refuses, and
//! the replies that bring an answer. Counted as the events happen, so a run keeps one row per
//! stretch and tool, whatever the number of intents.

use crate::time::Tick;

/// One stretch of time at one tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Attempts dispatched.
    pub calls: u64,
    /// Attempts that reached the tool during one of its outages.
    pub calls_while_down: u64,
    /// Calls the breaker refused.
    pub short_circuited: u64,
    /// Replies that brought an answer.
    pub successes: u64,
}

/// Which count an event adds to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    Call,
    CallWhileDown,
    ShortCircuited,
    Success,
}

/// Per tool, the stretches of `width` ticks from tick 0, as far as anything happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    width: Tick,
    tools: Vec<Vec<Bucket>>,
}

impl Timeline {
    pub fn new(width: Tick, tools: usize) -> Self {
        assert!(width > Tick::ZERO, "validated: a positive width");
        Timeline {
            width,
            tools: vec![Vec::new(); tools],
        }
    }

    pub fn width(&self) -> Tick {
        self.width
    }

    /// Counts one event of kind `mark` at `tool` at tick `at`.
    pub fn mark(&mut self, tool: usize, at: Tick, mark: Mark) {
        let i = (at.0 / self.width.0) as usize;
        let buckets = &mut self.tools[tool];
        if buckets.len() <= i {
            buckets.resize(i + 1, Bucket::default());
        }
        let b = &mut buckets[i];
        match mark {
            Mark::Call => b.calls += 1,
            Mark::CallWhileDown => b.calls_while_down += 1,
            Mark::ShortCircuited => b.short_circuited += 1,
            Mark::Success => b.successes += 1,
        }
    }

    /// Adds another run's counts, for sums over replications.
    pub fn merge(&mut self, other: &Timeline) {
        for (mine, theirs) in self.tools.iter_mut().zip(&other.tools) {
            if mine.len() < theirs.len() {
                mine.resize(theirs.len(), Bucket::default());
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.calls += b.calls;
                a.calls_while_down += b.calls_while_down;
                a.short_circuited += b.short_circuited;
                a.successes += b.successes;
            }
        }
    }

    /// The stretches of `tool`, from tick 0 to the last one anything happened in.
    pub fn buckets(&self, tool: usize) -> &[Bucket] {
        &self.tools[tool]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_fall_in_their_stretch_and_runs_add_up() {
        let mut one = Timeline::new(Tick(10), 2);
        one.mark(0, Tick(0), Mark::Call);
        one.mark(0, Tick(9), Mark::Call);
        one.mark(0, Tick(10), Mark::Success);
        one.mark(1, Tick(35), Mark::ShortCircuited);
        let mut two = Timeline::new(Tick(10), 2);
        two.mark(0, Tick(41), Mark::CallWhileDown);
        one.merge(&two);
        let calls: Vec<u64> = one.buckets(0).iter().map(|b| b.calls).collect();
        assert_eq!(calls, [2, 0, 0, 0, 0]);
        assert_eq!(one.buckets(0)[1].successes, 1);
        assert_eq!(one.buckets(0)[4].calls_while_down, 1);
        assert_eq!(one.buckets(1).len(), 4);
        assert_eq!(one.buckets(1)[3].short_circuited, 1);
    }
}
