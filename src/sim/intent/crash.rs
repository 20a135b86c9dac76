//! What an intent keeps of the crashes of the workers that held it: where each replacement's
//! attempts begin, which of its effects a takeover caused, and the leases its workers held.

use smallvec::SmallVec;

use super::Intent;
use crate::time::Tick;

/// The crashes of an intent's workers and the takeovers that followed, in its far part.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Takeovers {
    crashes: u32,
    /// When its first worker crashed.
    first_crash: Option<Tick>,
    /// The number of each replacement's first attempt, in order: attempt k was sent by the
    /// worker that took over as many times as there are starts at or below k.
    starts: SmallVec<[u32; 2]>,
    /// The workers whose attempts have committed, as a bit set by their number (0 the first
    /// worker; the 64th and later share the last bit).
    committed: u64,
    /// Each worker's first commit where another worker's attempt had committed before: the
    /// effects a takeover caused. A worker's later commits are its own lost replies'.
    duplicates: u32,
    /// Workers that stalled and have not woken yet: each will send once more, so the intent
    /// stays until they have.
    sleeping: u32,
    /// The attempts stalled workers sent when they woke, each with its worker's number.
    zombie_sends: SmallVec<[(u32, u32); 1]>,
    /// Writes a fencing server refused for a lease token below the current lease's.
    fenced: u32,
    /// Leases held for a term that ran out under a living worker, and times a worker held
    /// its item afresh because an attempt's timeout did not fit in the term left.
    lapses: u32,
    reholds: u32,
    /// Whether the work queue gave the item up, its deliveries spent.
    dead_lettered: bool,
    /// When the current worker last took or held the item afresh, where not at the start.
    held_since: Option<Tick>,
}

impl Intent {
    /// Its worker lets the call go, crashed or its lease lapsed. Commits made before its far
    /// part was (letting go makes it) were the first worker's.
    fn let_go(&mut self) -> &mut Takeovers {
        let committed = self.server.effects > 0;
        let t = &mut self.far().takeovers;
        if committed && t.starts.is_empty() {
            t.committed |= 1;
        }
        t
    }

    /// Its worker crashed at `now`.
    pub fn crashed(&mut self, now: Tick) {
        let t = self.let_go();
        t.crashes += 1;
        t.first_crash.get_or_insert(now);
    }

    /// Its worker's lease, held for a term, ran out while the worker lived.
    pub fn lapsed(&mut self) {
        self.let_go().lapses += 1;
    }

    /// A replacement takes the call over at `now`, under a lease of its own: its attempts from
    /// the next one on are its own.
    pub fn taken_over(&mut self, now: Tick) {
        let next = self.attempts();
        let t = &mut self.far().takeovers;
        t.starts.push(next);
        t.held_since = Some(now);
    }

    /// Its worker holds the item afresh at `now`: a new term, the worker the same.
    pub fn held_afresh(&mut self, now: Tick) {
        let t = &mut self.far().takeovers;
        t.reholds += 1;
        t.held_since = Some(now);
    }

    /// When the current worker's lease, a term of `lease` from when it took or last held the
    /// item, runs out; and the lease's number (each takeover and fresh hold makes a new one),
    /// which a lapse due for an earlier lease does not match.
    pub fn lease_ends(&self, lease: Tick) -> (Tick, u32) {
        self.far.as_ref().map_or((self.start.after(lease), 0), |f| {
            let t = &f.takeovers;
            let since = t.held_since.unwrap_or(self.start);
            (since.after(lease), t.starts.len() as u32 + t.reholds)
        })
    }

    /// Leases that lapsed under a living worker, fresh holds the admission rule made, and
    /// whether the item was given up.
    pub fn lapses(&self) -> (u32, u32, bool) {
        (self.far.as_ref()).map_or((0, 0, false), |f| {
            let t = &f.takeovers;
            (t.lapses, t.reholds, t.dead_lettered)
        })
    }

    /// The work queue gives the item up, its deliveries spent.
    pub fn dead_lettered(&mut self) {
        self.far().takeovers.dead_lettered = true;
    }

    /// Times its worker crashed, and times a replacement took over.
    pub fn crashes(&self) -> (u32, u32) {
        self.far.as_ref().map_or((0, 0), |f| {
            (f.takeovers.crashes, f.takeovers.starts.len() as u32)
        })
    }

    /// The worker that sent attempt `attempt`, by its number (0 the first): a woken zombie's,
    /// or the one holding the call when it was sent.
    pub fn worker_of(&self, attempt: u32) -> u32 {
        self.far.as_ref().map_or(0, |f| {
            let t = &f.takeovers;
            match t.zombie_sends.iter().find(|z| z.0 == attempt) {
                Some(&(_, worker)) => worker,
                None => t.starts.iter().filter(|&&s| s <= attempt).count() as u32,
            }
        })
    }

    /// Its worker stalled rather than died: it will wake and send once more.
    pub fn stalled(&mut self) {
        self.far().takeovers.sleeping += 1;
    }

    /// Worker `worker` wakes from its stall, and sends again (`sends`: its next attempt is the
    /// zombie's send) or finds its lease gone before it does.
    pub fn woke(&mut self, worker: u32, sends: bool) {
        let next = self.attempts();
        let t = &mut self.far().takeovers;
        t.sleeping -= 1;
        if sends {
            t.zombie_sends.push((next, worker));
        }
    }

    /// Stalled workers still to wake, the late sends of those that woke, and the writes the
    /// server fenced off.
    pub fn zombies(&self) -> (u32, u32, u32) {
        (self.far.as_ref()).map_or((0, 0, 0), |f| {
            let t = &f.takeovers;
            (t.sleeping, t.zombie_sends.len() as u32, t.fenced)
        })
    }

    /// Whether a server that fences refuses attempt `attempt`'s write: the lease token it
    /// carries (its worker's number) is below the current lease's (the latest replacement's),
    /// which the server checks with the work queue that grants them.
    pub fn fenced(&mut self, attempt: u32) -> bool {
        let Some(far) = &self.far else {
            return false;
        };
        let current = far.takeovers.starts.len() as u32;
        let stale = self.worker_of(attempt) < current;
        if stale {
            self.far().takeovers.fenced += 1;
        }
        stale
    }

    /// When its first worker crashed, if one did.
    pub fn first_crash(&self) -> Option<Tick> {
        self.far.as_ref().and_then(|f| f.takeovers.first_crash)
    }

    /// Whether attempt `attempt` was sent by a replacement: work a takeover redid (a zombie's
    /// late send is not a replacement's).
    pub fn is_redone(&self, attempt: u32) -> bool {
        self.far.as_ref().is_some_and(|f| {
            let t = &f.takeovers;
            t.starts.first().is_some_and(|&s| attempt >= s)
                && !t.zombie_sends.iter().any(|z| z.0 == attempt)
        })
    }

    /// Attempts sent by replacements: the work a takeover redid (a zombie's late send is not
    /// a replacement's).
    pub fn redone(&self) -> u32 {
        self.far.as_ref().map_or(0, |f| {
            let t = &f.takeovers;
            t.starts.first().map_or(0, |&s| {
                let zombies = t.zombie_sends.iter().filter(|z| z.0 >= s).count() as u32;
                self.attempts() - s - zombies
            })
        })
    }

    /// Commits a takeover caused.
    pub fn takeover_duplicates(&self) -> u32 {
        self.far.as_ref().map_or(0, |f| f.takeovers.duplicates)
    }

    /// Attempt `attempt` committed: the first commit of its worker is a takeover's where
    /// another worker's attempt committed before, and so is a woken zombie's late send that
    /// commits after any other.
    pub(super) fn count_takeover_commit(&mut self, attempt: u32) {
        let bit = 1u64 << self.worker_of(attempt).min(63);
        let Some(far) = &mut self.far else {
            return;
        };
        let t = &mut far.takeovers;
        let zombie = t.zombie_sends.iter().any(|z| z.0 == attempt);
        if t.committed != 0 && (zombie || t.committed & bit == 0) {
            t.duplicates += 1;
        }
        t.committed |= bit;
    }
}
