//! The discrete-event engine: a clock, an event queue and a run loop. It knows nothing of
//! retries, servers or policies; a [`Model`] gives events their meaning.
//!
//! # Ordering contract
//!
//! Events run in order of their tick. Events scheduled for the same tick run in the order they
//! were scheduled (first in, first out), whatever tick they were scheduled from. A handler may
//! schedule an event for the current tick; it runs after every event already waiting for that
//! tick. No event can be scheduled in the past. Together with keyed random streams
//! ([`rng::Streams`]) this makes a run a pure function of its model and seed.

mod queue;
pub mod rng;

pub use queue::Scheduler;

use crate::time::Tick;

/// What a simulation is made of: a state that reacts to its own events.
///
/// The engine is generic over the model, so each event is handled by a direct, inlinable call:
/// there is no dynamic dispatch on the hot path.
pub trait Model {
    type Event;

    /// Handles one event at `sched.now()`, scheduling whatever follows from it.
    fn handle(&mut self, event: Self::Event, sched: &mut Scheduler<Self::Event>);

    /// Asks for the memory the events likely to run next will read to be fetched into the
    /// cache, changing nothing: called before each event is handled, so that a model whose
    /// state is larger than the cache waits less on it. `upcoming` is lazy: a model whose
    /// state fits the cache need not look at it.
    fn prefetch<'e>(&self, _upcoming: impl Iterator<Item = &'e Self::Event>)
    where
        Self::Event: 'e,
    {
    }
}

/// Why a run loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// No event was left: everything that was started has finished.
    Drained,
    /// The next event lay beyond the horizon; it and all later ones were not run.
    Horizon,
}

/// Asks the processor to fetch the cache lines of `value` for reading soon; changes nothing.
/// A no-op where the processor has no such instruction here.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    for line in (0..size_of::<T>()).step_by(64) {
        let at = std::ptr::from_ref(value).cast::<i8>().wrapping_add(line);
        // SAFETY: a prefetch is a hint: it reads no memory the program sees and never faults;
        // the address is within `value` anyway.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Runs events in order until none is left or the next one lies beyond `horizon`.
///
/// An event exactly at the horizon still runs.
pub fn run<M: Model>(model: &mut M, sched: &mut Scheduler<M::Event>, horizon: Tick) -> Ending {
    while let Some(at) = sched.peek_tick() {
        if at > horizon {
            return Ending::Horizon;
        }
        let event = sched.pop();
        model.prefetch(sched.upcoming());
        model.handle(event, sched);
    }
    Ending::Drained
}
