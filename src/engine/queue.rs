//! The event queue: a radix heap on ticks, sixteen buckets to a hex digit, with the events of
//! the current tick in a line of their own.
//!
//! A discrete-event queue is monotone: nothing is scheduled before the event being handled, and
//! a radix heap uses that. Each waiting event sits in the bucket named by the highest hex digit
//! in which its tick differs from `last`, the tick being run, and by its value there; scheduling
//! is O(1). When the current tick's events are done, the lowest occupied bucket (found from a
//! bitmask in a few instructions) is emptied: its earliest tick becomes `last` and its events
//! are filed again, each into a lower bucket, so an event moves at most once per hex digit of
//! how far ahead it was scheduled. The cost per event thus depends on how far ahead events are
//! scheduled, not on how many wait: 10⁵ calls in flight cost little more than 10² do, where a
//! binary heap's pop grows with log n and, past the cache, with every level it touches.
//!
//! Before each event runs, the queue names the events likely next ([`Scheduler::upcoming`]) for
//! the model to fetch their state into the cache while the event runs ([`super::Model::prefetch`]):
//! with 10⁵ intents live, the first read of an event's intent is otherwise a wait on memory.
//!
//! Ties keep the engine's contract, first scheduled first run: events of one tick enter the
//! current line in scheduling order (those filed from one bucket are put in order by their
//! place, the tick they were scheduled at and their sequence number; those scheduled during
//! the tick come later and go at the back). An event may be placed as if scheduled later, by
//! a step it stands for (see [`Scheduler::place`]).

use std::collections::VecDeque;

use crate::time::Tick;

/// Hex digits in a tick, and so levels of buckets.
const LEVELS: usize = 16;
/// Buckets: one per (level, digit), numbered level · 16 + digit, so that a lower number always
/// holds earlier ticks.
const BUCKETS: usize = LEVELS * 16;

/// The most events of a bucket [`Scheduler::upcoming`] names.
const UPCOMING: usize = 4;

/// One waiting event: its tick, its place in scheduling order, and the event. The place is the
/// tick it was scheduled at and its sequence number then, so that an event placed as if an
/// earlier one had scheduled it later (see [`Scheduler::place`]) takes that one's turn.
struct Entry<E> {
    at: u64,
    placed: Placed,
    event: E,
}

/// Where an event stands among the events of its tick: the tick it was scheduled at, then its
/// sequence number. Events scheduled the ordinary way are placed in sequence order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Placed {
    tick: u64,
    seq: u64,
}

/// The clock and the events waiting to run.
pub struct Scheduler<E> {
    /// The events of tick `last` not yet run, in scheduling order.
    current: VecDeque<Entry<E>>,
    /// Events of later ticks, by the highest hex digit where their tick differs from `last`.
    buckets: Vec<Vec<Entry<E>>>,
    /// Bit b set when bucket b is not empty.
    occupied: [u64; BUCKETS / 64],
    /// The tick whose events are in `current`; no event waits for an earlier one.
    last: u64,
    now: Tick,
    /// Counts events as they are scheduled; 64 bits, so it cannot wrap within any run.
    next_seq: u64,
    processed: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

/// The bucket of tick `at` against `last`, which differs from it.
fn bucket(at: u64, last: u64) -> usize {
    let level = (63 - (at ^ last).leading_zeros() as usize) / 4;
    level * 16 + ((at >> (4 * level)) & 15) as usize
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Scheduler {
            current: VecDeque::new(),
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            occupied: [0; BUCKETS / 64],
            last: 0,
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
        let placed = Placed {
            tick: self.now.0,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        self.schedule_placed(at, placed, event);
    }

    /// A place in scheduling order for an event that an event scheduled now, to run at
    /// `tick`, would have scheduled when it ran: the event that folds a later step into this
    /// one keeps that step's turn among ties.
    pub fn place(&mut self, tick: Tick) -> Placed {
        assert!(tick >= self.now, "placed in the past");
        let placed = Placed {
            tick: tick.0,
            seq: self.next_seq,
        };
        self.next_seq += 1;
        placed
    }

    /// Schedules `event` at tick `at`, taking the turn `placed` among the events of its tick;
    /// `placed` is no later than `at`.
    pub fn schedule_placed(&mut self, at: Tick, placed: Placed, event: E) {
        assert!(at >= self.now, "event scheduled in the past");
        debug_assert!(placed.tick <= at.0, "placed after its tick");
        let entry = Entry {
            at: at.0,
            placed,
            event,
        };
        if at.0 < self.last {
            // Only after a run stopped at its horizon, having looked at an event beyond it.
            self.rebase(at.0);
        }
        self.file(entry);
    }

    /// Schedules `event` a span of `delay` ticks from now.
    pub fn schedule_in(&mut self, delay: Tick, event: E) {
        self.schedule_at(self.now.after(delay), event);
    }

    /// Whether no other event is due at the current tick: one scheduled now would run next.
    pub fn nothing_else_now(&self) -> bool {
        self.current.is_empty()
    }

    /// The tick of the next event, if any.
    pub(super) fn peek_tick(&mut self) -> Option<Tick> {
        if self.current.is_empty() {
            self.advance()?;
        }
        Some(Tick(self.last))
    }

    /// Takes the next event and moves the clock to its tick. Call only after `peek_tick` said
    /// there is one.
    pub(super) fn pop(&mut self) -> E {
        let entry = self
            .current
            .pop_front()
            .expect("pop follows a successful peek");
        self.now = Tick(entry.at);
        self.processed += 1;
        entry.event
    }

    /// Events likely to run next, for the model to fetch their state ahead of them: the next
    /// in the current line, or else the first few of the lowest occupied bucket, which holds
    /// the next event unless the one being handled schedules an earlier one. Lazy: a model
    /// that fetches nothing ahead costs the queue nothing.
    pub(super) fn upcoming(&self) -> impl Iterator<Item = &E> {
        let line = self.current.front();
        let bucket = std::iter::once_with(move || match line {
            Some(_) => None,
            None => (self.occupied.iter().enumerate())
                .find(|(_, word)| **word != 0)
                .map(|(i, word)| &self.buckets[i * 64 + word.trailing_zeros() as usize]),
        });
        (line.into_iter())
            .chain(bucket.flatten().flat_map(|b| b.iter().take(UPCOMING)))
            .map(|e| &e.event)
    }

    /// Puts `entry` in the current line or its bucket.
    fn file(&mut self, entry: Entry<E>) {
        if entry.at == self.last {
            self.current.push_back(entry);
        } else {
            let b = bucket(entry.at, self.last);
            self.buckets[b].push(entry);
            self.occupied[b / 64] |= 1 << (b % 64);
        }
    }

    /// Makes the earliest waiting tick the current one; `None` if nothing waits.
    fn advance(&mut self) -> Option<()> {
        let b = (self.occupied.iter().enumerate())
            .find(|(_, word)| **word != 0)
            .map(|(i, word)| i * 64 + word.trailing_zeros() as usize)?;
        let mut entries = std::mem::take(&mut self.buckets[b]);
        self.occupied[b / 64] &= !(1 << (b % 64));
        if b < 16 {
            // The lowest digit differs and no other: every event here is of one tick.
            self.last = entries[0].at;
            self.current.extend(entries.drain(..));
        } else {
            self.last = entries.iter().map(|e| e.at).min().expect("occupied");
            for entry in entries.drain(..) {
                self.file(entry);
            }
        }
        // The emptied bucket keeps its room for the next events that land in it.
        self.buckets[b] = entries;
        // A bucket's events need not be in scheduling order; the current tick's must be. Most
        // often they are already (filed straight into the bucket, in order): checked first.
        if self.current.len() > 1 {
            let line = self.current.make_contiguous();
            if !line.is_sorted_by_key(|e| e.placed) {
                line.sort_unstable_by_key(|e| e.placed);
            }
        }
        Some(())
    }

    /// Makes `at`, earlier than every waiting tick, the current tick, and files every waiting
    /// event again.
    fn rebase(&mut self, at: u64) {
        let mut waiting: Vec<Entry<E>> = self.current.drain(..).collect();
        waiting.extend(self.buckets.iter_mut().flat_map(|b| b.drain(..)));
        waiting.sort_unstable_by_key(|e| e.placed);
        self.occupied = [0; BUCKETS / 64];
        self.last = at;
        for entry in waiting {
            self.file(entry);
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

    /// Events 5 and 15 each schedule `event + 1` for tick 20, when they run.
    struct Forward(Vec<(u64, u32)>);

    impl Model for Forward {
        type Event = u32;
        fn handle(&mut self, event: u32, sched: &mut Scheduler<u32>) {
            self.0.push((sched.now().0, event));
            if event % 10 == 5 {
                sched.schedule_at(Tick(20), event + 1);
            }
        }
    }

    #[test]
    fn a_placed_event_takes_the_turn_of_the_step_it_stands_for() {
        // Event 11 stands for what a step at tick 10 would have scheduled for tick 20: it runs
        // after what tick 5 scheduled for 20 and before what tick 15 did, though scheduled first.
        let mut sched = Scheduler::new();
        let placed = sched.place(Tick(10));
        sched.schedule_placed(Tick(20), placed, 11);
        sched.schedule_at(Tick(5), 5);
        sched.schedule_at(Tick(15), 15);
        let mut model = Forward(Vec::new());
        assert_eq!(run(&mut model, &mut sched, Tick::MAX), Ending::Drained);
        let at_20: Vec<u32> = (model.0.iter())
            .filter(|e| e.0 == 20)
            .map(|e| e.1)
            .collect();
        assert_eq!(at_20, [6, 11, 16]);
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

    /// What the queue names as upcoming, for the model to fetch ahead, is the next event of
    /// the current tick, or else the earliest bucket's first few, where the next event is.
    #[test]
    fn upcoming_names_the_event_that_runs_next() {
        let mut sched = Scheduler::new();
        for (at, event) in [(5, 1), (5, 2), (100, 3), (3000, 4)] {
            sched.schedule_at(Tick(at), event);
        }
        let mut ran = Vec::new();
        while sched.peek_tick().is_some() {
            ran.push(sched.pop());
            let next: Vec<u32> = sched.upcoming().copied().collect();
            assert!(next.len() <= UPCOMING);
            match ran.len() {
                1 => assert_eq!(next, vec![2]),
                2 => assert_eq!(next, vec![3]),
                3 => assert_eq!(next, vec![4]),
                _ => assert!(next.is_empty()),
            }
        }
        assert_eq!(ran, vec![1, 2, 3, 4]);
    }
}
