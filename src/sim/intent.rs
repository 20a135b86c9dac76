//! The client's state for one live intent, kept in a slab of slots reused as intents end.

use rand_chacha::ChaCha8Rng;

use crate::engine::rng::{Source, Streams, word};
use crate::model::fault::WORDS_PER_ATTEMPT;
use crate::model::server::KeyStore;
use crate::model::{AttemptDraw, Tool};
use crate::time::Tick;

/// One intent in progress.
pub struct Intent {
    /// task × calls per task + the call's position in the task.
    pub id: u64,
    pub tool: usize,
    pub start: Tick,
    pub attempts: u32,
    pub effects: u32,
    /// Some attempt went unanswered, so it may have committed.
    pub ambiguous: bool,
    /// An attempt is on its way and its outcome is not known yet.
    pub in_flight: bool,
    /// The delay before the last retry (decorrelated jitter grows from it).
    pub last_delay: Tick,
    /// The draws of the latest attempt; none before the first dispatch.
    draw: Option<AttemptDraw>,
    /// The server's idempotency record for this intent's key.
    pub keys: KeyStore,
    faults: ChaCha8Rng,
}

impl Intent {
    pub fn new(streams: &Streams, id: u64, tool: usize, now: Tick) -> Self {
        Intent {
            id,
            tool,
            start: now,
            attempts: 0,
            effects: 0,
            ambiguous: false,
            in_flight: false,
            last_delay: Tick::ZERO,
            draw: None,
            keys: KeyStore::default(),
            faults: streams.stream(Source::Faults, id),
        }
    }

    /// Draws the next attempt's fate and latencies: attempt k always reads the k-th block of
    /// the intent's fault stream.
    pub fn draw_attempt(&mut self, tool: &Tool) -> AttemptDraw {
        let mut words = [0; WORDS_PER_ATTEMPT];
        for w in &mut words {
            *w = word(&mut self.faults);
        }
        self.attempts += 1;
        self.in_flight = true;
        let draw = tool.draw(&words);
        self.draw = Some(draw);
        draw
    }

    /// The draws of the attempt the server or the network is handling now.
    pub fn current(&self) -> AttemptDraw {
        self.draw
            .expect("server and reply events follow a dispatch")
    }
}

/// Live intents by slot. A slot is reused once its intent has ended, so the slab never holds
/// more intents than there are clients.
#[derive(Default)]
pub struct Slab {
    slots: Vec<Option<Intent>>,
    free: Vec<u32>,
}

impl Slab {
    pub fn insert(&mut self, intent: Intent) -> u32 {
        match self.free.pop() {
            Some(slot) => {
                self.slots[slot as usize] = Some(intent);
                slot
            }
            None => {
                self.slots.push(Some(intent));
                (self.slots.len() - 1) as u32
            }
        }
    }

    pub fn get(&mut self, slot: u32) -> &mut Intent {
        self.slots[slot as usize]
            .as_mut()
            .expect("events refer to live intents only")
    }

    pub fn remove(&mut self, slot: u32) -> Intent {
        let intent = self.slots[slot as usize]
            .take()
            .expect("an intent ends once");
        self.free.push(slot);
        intent
    }

    pub fn is_empty(&self) -> bool {
        self.slots.len() == self.free.len()
    }

    /// The intents still live, in slot order, emptying the slab.
    pub fn drain(&mut self) -> impl Iterator<Item = Intent> + '_ {
        self.free.clear();
        self.slots.drain(..).flatten()
    }
}
