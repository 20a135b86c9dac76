//! The event queue: a radix heap on (tick, scheduling sequence) keys.
//!
//! A discrete-event queue is monotone: nothing is scheduled before the event being handled. A
//! radix heap uses that. Every waiting key sits in the bucket named by the highest bit in which
//! it differs from `last`, the smallest key taken out; a push is O(1), and a pop empties only the
//! lowest occupied bucket, moving each of its keys to a lower bucket. A key moves at most once
//! per bit of its distance from `last`, so the cost per event depends on how far ahead events are
//! scheduled, not on how many wait: 10⁵ calls in flight cost about what 10² do, where a binary
//! heap's pop grows with log n and, past the cache, with every level it touches.

use crate::time::Tick;

/// Buckets: one for keys equal to `last`, and one for each bit a key can differ in.
const BUCKETS: usize = 129;

/// The clock and the events waiting to run.
///
/// Each event's key is tick · 2⁶⁴ + sequence number, so one integer orders by tick and breaks
/// ties in scheduling order; the sequence counter is 64 bits, so it cannot wrap within any run.
pub struct Scheduler<E> {
    /// Bucket b holds the keys whose highest bit differing from `last` is bit b − 1; bucket 0,
    /// the key equal to `last` (at most one: keys are unique).
    buckets: Vec<Vec<(u128, E)>>,
    /// Bit b set when bucket b is not empty, so the lowest is found in one instruction.
    occupied: [u64; 3],
    /// No waiting key is smaller.
    last: u128,
    len: usize,
    now: Tick,
    next_seq: u64,
    processed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bucket of `key` against `last`.
fn bucket(key: u128, last: u128) -> usize {
    (128 - (key ^ last).leading_zeros()) as usize
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [0; 3],
            last: 0,
            len: 0,
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
        if key < self.last {
            // Only after a run stopped at its horizon, having looked at an event beyond it.
            self.rebase(key);
        }
        self.insert(key, event);
        self.len += 1;
    }

    /// Schedules `event` a span of `delay` ticks from now.
    pub fn schedule_in(&mut self, delay: Tick, event: E) {
        self.schedule_at(self.now.after(delay), event);
    }

    /// The tick of the next event, if any.
    pub(super) fn peek_tick(&mut self) -> Option<Tick> {
        self.front().map(|key| Tick((key >> 64) as u64))
    }

    /// Takes the next event and moves the clock to its tick. Call only after `peek_tick` said
    /// there is one.
    pub(super) fn pop(&mut self) -> E {
        self.front().expect("pop follows a successful peek");
        let (key, event) = self.buckets[0].pop().expect("the front is in bucket 0");
        self.occupied[0] &= !1;
        self.len -= 1;
        self.now = Tick((key >> 64) as u64);
        self.processed += 1;
        event
    }

    fn insert(&mut self, key: u128, event: E) {
        let b = bucket(key, self.last);
        self.buckets[b].push((key, event));
        self.occupied[b / 64] |= 1 << (b % 64);
    }

    /// The smallest key, moved into bucket 0 and made `last`.
    fn front(&mut self) -> Option<u128> {
        if self.occupied[0] & 1 != 0 {
            return Some(self.last);
        }
        let b = (self.occupied.iter().enumerate())
            .find(|(_, word)| **word != 0)
            .map(|(i, word)| i * 64 + word.trailing_zeros() as usize)?;
        let mut keys = std::mem::take(&mut self.buckets[b]);
        self.occupied[b / 64] &= !(1 << (b % 64));
        self.last = keys.iter().map(|&(k, _)| k).min().expect("occupied");
        for (key, event) in keys.drain(..) {
            self.insert(key, event);
        }
        // The emptied bucket keeps its room for the next keys that land in it.
        self.buckets[b] = keys;
        Some(self.last)
    }

    /// Makes `key`, smaller than every waiting key, the new `last`, and files every key again.
    fn rebase(&mut self, key: u128) {
        let waiting: Vec<(u128, E)> = self.buckets.iter_mut().flat_map(|b| b.drain(..)).collect();
        self.occupied = [0; 3];
        self.last = key;
        for (k, event) in waiting {
            self.insert(k, event);
        }
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

    /// A run stopped at its horizon has looked at the next event; an event scheduled before
    /// that one still runs first.
    #[test]
    fn an_event_scheduled_after_a_horizon_stop_runs_in_its_place() {
        let mut sched = Scheduler::new();
        sched.schedule_at(Tick(1), 1);
        sched.schedule_at(Tick(1_000_000), 2);
        let mut model = Recorder(Vec::new());
        assert_eq!(run(&mut model, &mut sched, Tick(10)), Ending::Horizon);
        sched.schedule_at(Tick(20), 3);
        sched.schedule_at(Tick(1_000_000), 4);
        assert_eq!(run(&mut model, &mut sched, Tick::MAX), Ending::Drained);
        assert_eq!(
            model.0,
            vec![(1, 1), (20, 3), (1_000_000, 2), (1_000_000, 4)]
        );
    }

    /// Random delays, many ties: the queue gives (tick, sequence) order, as a sort does.
    #[test]
    fn events_come_out_in_tick_then_scheduling_order() {
        let mut sched = Scheduler::new();
        let mut expected = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |bound: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % bound
        };
        let mut seq = 0;
        for _ in 0..2_000 {
            let at = Tick(next(50));
            sched.schedule_at(at, seq);
            expected.push((at.0, seq));
            seq += 1;
        }
        let mut got = Vec::new();
        while sched.peek_tick().is_some() {
            let e = sched.pop();
            got.push((sched.now().0, e));
            // Handlers schedule at and after the current tick, sometimes far ahead.
            if got.len() < 20_000 {
                for _ in 0..next(3) {
                    let (scale, bits) = (next(4), next(40) + 1);
                    let at = sched.now().after(Tick(scale * next(1 << bits)));
                    sched.schedule_at(at, seq);
                    expected.push((at.0, seq));
                    seq += 1;
                }
            }
        }
        expected.sort_unstable();
        assert_eq!(got, expected);
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
