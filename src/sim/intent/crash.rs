//! What an intent keeps of the crashes of the workers that held it: where each replacement's
//! attempts begin, and which of its effects a takeover caused.

use smallvec::SmallVec;

use super::Intent;

/// The crashes of an intent's workers and the takeovers that followed, in its far part.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Takeovers {
    crashes: u32,
    /// The number of each replacement's first attempt, in order: attempt k was sent by the
    /// worker that took over as many times as there are starts at or below k.
    starts: SmallVec<[u32; 2]>,
    /// The workers whose attempts have committed, as a bit set by their number (0 the first
    /// worker; the 64th and later share the last bit).
    committed: u64,
    /// Each worker's first commit where another worker's attempt had committed before: the
    /// effects a takeover caused. A worker's later commits are its own lost replies'.
    duplicates: u32,
}

impl Intent {
    /// Its worker crashed. Commits made before its far part was (a first crash makes it) were
    /// the first worker's.
    pub fn crashed(&mut self) {
        let committed = self.server.effects > 0;
        let t = &mut self.far().takeovers;
        t.crashes += 1;
        if committed && t.starts.is_empty() {
            t.committed |= 1;
        }
    }

    /// A replacement takes the call over: its attempts from the next one on are its own.
    pub fn taken_over(&mut self) {
        let next = self.attempts();
        self.far().takeovers.starts.push(next);
    }

    /// Times its worker crashed, and times a replacement took over.
    pub fn crashes(&self) -> (u32, u32) {
        self.far.as_ref().map_or((0, 0), |f| {
            (f.takeovers.crashes, f.takeovers.starts.len() as u32)
        })
    }

    /// The worker that sent attempt `attempt`, by its number (0 the first).
    pub fn worker_of(&self, attempt: u32) -> u32 {
        self.far.as_ref().map_or(0, |f| {
            f.takeovers.starts.iter().filter(|&&s| s <= attempt).count() as u32
        })
    }

    /// Attempts sent by replacements: the work a takeover redid.
    pub fn redone(&self) -> u32 {
        let first = self.far.as_ref().and_then(|f| f.takeovers.starts.first());
        first.map_or(0, |&s| self.attempts() - s)
    }

    /// Commits a takeover caused.
    pub fn takeover_duplicates(&self) -> u32 {
        self.far.as_ref().map_or(0, |f| f.takeovers.duplicates)
    }

    /// Attempt `attempt` committed: the first commit of its worker is a takeover's where
    /// another worker's attempt committed before.
    pub(super) fn count_takeover_commit(&mut self, attempt: u32) {
        let bit = 1u64 << self.worker_of(attempt).min(63);
        let Some(far) = &mut self.far else {
            return;
        };
        let t = &mut far.takeovers;
        if t.committed & bit == 0 && t.committed != 0 {
            t.duplicates += 1;
        }
        t.committed |= bit;
    }
}
