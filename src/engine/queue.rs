//! The event queue: a binary heap ordered by (tick, scheduling sequence).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::Tick;

/// One waiting event, ordered by `key` = tick · 2⁶⁴ + sequence number: a single integer
/// comparison orders by tick and breaks ties in scheduling order.
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> Entry<E> {
    fn at(&self) -> Tick {
        Tick((self.key >> 64) as u64)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    /// Reversed, so that the max-heap pops the earliest (tick, sequence) first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// The clock and the events waiting to run.
///
/// `schedule_*` is O(log n) and `pop` is O(log n) in the number of waiting events; the sequence
/// counter is 64 bits, so it cannot wrap within any run.
pub struct Scheduler<E> {
    heap: BinaryHeap<Entry<E>>,
    now: Tick,
    next_seq: u64,
    processed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            heap: BinaryHeap::with_capacity(1024),
            now: Tick::ZERO,
            next_seq: 0,
            processed: 0,
        }
    }

    /// The tick of the event being handled (or of the last one handled).
    pub fn now(&self) -> Tick {
        self.now
    }

    /// How many events have been taken from the queue so far.
    pub fn processed(&self) -> u64 {
        self.processed
    }

    /// Schedules `event` at tick `at`, which must not be in the past.
    pub fn schedule_at(&mut self, at: Tick, event: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let key = (u128::from(at.0) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// Schedules `event` a span of `delay` ticks from now.
    pub fn schedule_in(&mut self, delay: Tick, event: E) {
        self.schedule_at(self.now.after(delay), event);
    }

    /// The tick of the next event, if any.
    pub(super) fn peek_tick(&self) -> Option<Tick> {
        self.heap.peek().map(Entry::at)
    }

    /// Takes the next event and moves the clock to its tick. Call only after `peek_tick` said
    /// there is one.
    pub(super) fn pop(&mut self) -> E {
        let entry = self.heap.pop().expect("pop follows a successful peek");
        self.now = entry.at();
        self.processed += 1;
        entry.event
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Ending, Model, run};

    /// Records the order events ran in; event `n` at tick 5 schedules `n + 100` for the same tick.
    struct Recorder(Vec<(u64, u32)>);

    impl Model for Recorder {
        type Event = u32;
        fn handle(&mut self, event: u32, sched: &mut Scheduler<u32>) {
            self.0.push((sched.now().0, event));
            if sched.now() == Tick(5) && event < 100 {
                sched.schedule_in(Tick::ZERO, event + 100);
            }
        }
    }

    #[test]
    fn same_tick_events_run_first_in_first_out() {
        let mut sched = Scheduler::new();
        sched.schedule_at(Tick(5), 1);
        sched.schedule_at(Tick(3), 2);
        sched.schedule_at(Tick(5), 3);
        sched.schedule_at(Tick(5), 4);
        sched.schedule_at(Tick(3), 5);
        let mut model = Recorder(Vec::new());
        assert_eq!(run(&mut model, &mut sched, Tick::MAX), Ending::Drained);
        assert_eq!(
            model.0,
            vec![
                (3, 2),
                (3, 5),
                (5, 1),
                (5, 3),
                (5, 4),
                (5, 101),
                (5, 103),
                (5, 104)
            ]
        );
        assert_eq!(sched.processed(), 8);
    }

    #[test]
    fn horizon_is_inclusive_and_stops_later_events() {
        let mut sched = Scheduler::new();
        sched.schedule_at(Tick(10), 1);
        sched.schedule_at(Tick(11), 2);
        let mut model = Recorder(Vec::new());
        assert_eq!(run(&mut model, &mut sched, Tick(10)), Ending::Horizon);
        assert_eq!(model.0, vec![(10, 1)]);
        // The later event was left waiting, not lost.
        assert_eq!(run(&mut model, &mut sched, Tick::MAX), Ending::Drained);
        assert_eq!(model.0, vec![(10, 1), (11, 2)]);
    }
}
