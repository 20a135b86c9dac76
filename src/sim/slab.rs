//! The live intents, by slot, and the handles events name them by.

use super::intent::Intent;
use crate::time::Tick;

/// Live intents by slot. A slot is reused once its intent is over, so the slab holds little
/// more than one intent per client, and an intent is rewritten where it lies rather than built
/// and moved (it is large: it holds its first attempts' data). Each slot counts its occupants, so an
/// event that outlives its intent (a timer, a late reply) can tell it is stale.
#[derive(Default)]
pub struct Slab {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

struct Slot {
    generation: u32,
    live: bool,
    intent: Intent,
}

/// The size below which the slab is taken to stay in cache (see [`Slab::cached`]).
const CACHED_BYTES: usize = 1 << 20;

/// A live intent's slot and the occupant count it was given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Handle {
    pub slot: u32,
    pub generation: u32,
}

impl Slab {
    /// Starts intent `id` on `tool` at `now` in a free slot.
    pub fn start(&mut self, id: u64, tool: usize, now: Tick) -> Handle {
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize].intent.reset(id, tool, now);
                slot
            }
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    live: false,
                    intent: Intent::new(id, tool, now),
                });
                (self.slots.len() - 1) as u32
            }
        };
        let entry = &mut self.slots[slot as usize];
        entry.generation = entry.generation.wrapping_add(1);
        entry.live = true;
        Handle {
            slot,
            generation: entry.generation,
        }
    }

    /// The intent in `slot`, which events of live intents are sure of.
    pub fn get(&mut self, slot: u32) -> &mut Intent {
        let entry = &mut self.slots[slot as usize];
        assert!(entry.live, "events refer to live intents only");
        &mut entry.intent
    }

    /// The intent in `slot`, to read.
    pub fn peek(&self, slot: u32) -> &Intent {
        let entry = &self.slots[slot as usize];
        assert!(entry.live, "events refer to live intents only");
        &entry.intent
    }

    /// The intent `handle` was given to, if it is still there.
    pub fn find(&mut self, handle: Handle) -> Option<&mut Intent> {
        let entry = &mut self.slots[handle.slot as usize];
        (entry.live && entry.generation == handle.generation).then_some(&mut entry.intent)
    }

    /// Whether the intent `handle` was given to is still there and not yet ended by the client.
    pub fn under_way(&mut self, handle: Handle) -> bool {
        self.find(handle).is_some_and(|i| i.client.ended.is_none())
    }

    /// The intent `handle` was given to, if the client is still waiting on its attempt
    /// `attempt`: late replies and timers of settled attempts find none.
    pub fn awaiting(&mut self, handle: Handle, attempt: u32) -> Option<&mut Intent> {
        self.find(handle)
            .filter(|intent| intent.awaiting().contains(attempt))
    }

    /// Gives the intent in `slot` a new handle: the events its old one names (a crashed
    /// worker's timers and the replies it waited on) find nothing, while its attempts at the
    /// server, which name the slot, still land.
    pub fn renew(&mut self, slot: u32) -> Handle {
        let entry = &mut self.slots[slot as usize];
        assert!(entry.live, "only a live intent is handed over");
        entry.generation = entry.generation.wrapping_add(1);
        self.handle(slot)
    }

    pub fn handle(&self, slot: u32) -> Handle {
        Handle {
            slot,
            generation: self.slots[slot as usize].generation,
        }
    }

    /// Whether the slab is small enough to stay in a core's cache (a megabyte or so): then
    /// fetching its slots ahead is work for nothing.
    pub fn cached(&self) -> bool {
        self.slots.len() * size_of::<Slot>() <= CACHED_BYTES
    }

    /// The slot the next intent to start will take, if one is free.
    pub fn next_free(&self) -> Option<u32> {
        self.free.last().copied()
    }

    /// Asks for slot `slot`'s cache lines to be fetched (see [`crate::engine::Model::prefetch`]):
    /// with 10⁵ intents live, most events' intent is in no cache, and its first read would
    /// wait on memory.
    pub fn prefetch(&self, slot: u32) {
        if let Some(entry) = self.slots.get(slot as usize) {
            crate::engine::prefetch(entry);
        }
    }

    /// Frees the slot of an intent that is over.
    pub fn remove(&mut self, slot: u32) {
        let entry = &mut self.slots[slot as usize];
        assert!(entry.live, "an intent ends once");
        entry.live = false;
        self.free.push(slot);
    }

    /// The slots of the intents still live, in slot order.
    pub fn live(&self) -> Vec<u32> {
        (0..self.slots.len() as u32)
            .filter(|&s| self.slots[s as usize].live)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::Streams;
    use crate::metrics::{Outcome, Status};
    use crate::model::Tool;
    use crate::sim::intent::Client;

    /// A reused slot holds exactly what a newly built intent does, and draws what it would.
    #[test]
    fn a_reused_slot_draws_like_a_new_intent() {
        let streams = Streams {
            seed: 5,
            point: 1,
            replication: 2,
        };
        let exponential = || crate::model::Latency::Exponential { mean: 100.0 };
        let tool = Tool {
            request_latency: exponential(),
            service_time: exponential(),
            reply_latency: exponential(),
            ..Tool::new("t", crate::model::ToolKind::Write).with_faults(crate::model::Faults {
                request_loss: 0.3,
                server_error: 0.1,
                reply_loss: 0.3,
                ..Default::default()
            })
        };
        let mut slab = Slab::default();
        let first = slab.start(7, 0, Tick(3));
        // Leave something in every part of the slot.
        let used = slab.get(first.slot);
        let (attempt, _) = used.draw_attempt(
            &streams,
            ((0, &tool), 0),
            (Tick(3), Some(Tick(5))),
            false,
            &mut Default::default(),
        );
        used.draw_attempt(
            &streams,
            ((0, &tool), 0),
            (Tick(4), None),
            false,
            &mut Default::default(),
        );
        used.settle(attempt, Outcome::Timeout, Tick(8));
        used.commit(attempt);
        used.client = Client {
            timeouts: 1,
            backoff: Tick(2),
            short_circuited: 1,
            lookups: 1,
            hedges: 1,
            late_receipt: true,
            ambiguous: true,
            ended: Some((Status::Succeeded, Tick(9))),
        };
        used.try_replica(2);
        used.read(attempt, 4);
        used.wrote();
        used.retry.cost = Some(5.0);
        used.retry.retries = 3;
        used.retry.payload = 2;
        used.retry.next_layer = 1;
        used.server.at_server = 1;
        used.server.calls_while_down = 1;
        slab.remove(first.slot);
        let again = slab.start(42, 0, Tick(9));
        assert_eq!(again.slot, first.slot);
        assert_ne!(again.generation, first.generation);
        assert!(slab.find(first).is_none(), "the old handle is stale");
        let mut fresh = Intent::new(42, 0, Tick(9));
        assert_eq!(
            *slab.get(again.slot),
            fresh,
            "a reused slot equals a fresh one"
        );
        for _ in 0..5 {
            let reused = (slab.get(again.slot)).draw_attempt(
                &streams,
                ((0, &tool), 0),
                (Tick(9), None),
                false,
                &mut Default::default(),
            );
            assert_eq!(
                reused,
                fresh.draw_attempt(
                    &streams,
                    ((0, &tool), 0),
                    (Tick(9), None),
                    false,
                    &mut Default::default()
                )
            );
            for intent in [slab.get(again.slot), &mut fresh] {
                intent.settle(reused.0, Outcome::LostReply, Tick(10));
            }
        }
    }
}
