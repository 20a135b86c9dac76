//! What the world fetches into the cache ahead of the events likely next (see
//! [`crate::engine::Model::prefetch`]): each one's intent slot, and for a task's arrival the
//! slot it will take.

use super::{Event, World};
use crate::metrics::{AttemptRecord, IntentRecord};

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    pub(super) fn fetch_ahead<'e>(&self, upcoming: impl Iterator<Item = &'e Event>) {
        if self.intents.cached() {
            return;
        }
        for event in upcoming {
            let slot = match event {
                Event::Dispatch(h) | Event::Cancel(h) | Event::DeadlineInLine(h) => h.slot,
                Event::ServerArrive(at)
                | Event::ServerDone(at)
                | Event::Served(at)
                | Event::Abandon { at, .. }
                | Event::Reply { at, .. }
                | Event::Timeout(at)
                | Event::Hedge(at)
                | Event::ReadArrive(at)
                | Event::ReadBack(at) => at.intent.slot,
                Event::Lookup { intent, .. } | Event::Worker(intent, _) => intent.slot,
                // A task that arrives starts its first call in the slot freed last.
                Event::Arrival => match self.intents.next_free() {
                    Some(slot) => slot,
                    None => continue,
                },
                Event::Token { .. } | Event::Capacity(_) => continue,
            };
            self.intents.prefetch(slot);
        }
    }
}
