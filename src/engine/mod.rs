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
}

/// Why a run loop returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// No event was left: everything that was started has finished.
    Drained,
    /// The next event lay beyond the horizon; it and all later ones were not run.
    Horizon,
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
        model.handle(event, sched);
    }
    Ending::Drained
}
