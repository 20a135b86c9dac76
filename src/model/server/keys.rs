//! The server's key store: it commits a side effect, or — when the request carries an
//! idempotency key it has already committed — returns the stored receipt instead. The key is
//! bound to the payload it committed: the same key with another payload is a conflict.
//!
//! A key belongs to one intent (`per_intent` keys are reused by every retry of that intent and by
//! no other intent; `per_attempt` keys are never reused at all), so the store's entry for a key
//! is kept beside its intent and dropped when the intent and all its attempts are over. A
//! receiver may forget a key `retention` after its commit: a retry that comes later is a new
//! request, and commits again.

use crate::model::Key;
use crate::time::Tick;

/// What the server holds for the key of one intent: the key it has committed and the payload
/// it was bound to. Its receipt is the earlier commit itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyStore {
    committed: Option<Key>,
    /// The version of the payload committed under the key.
    payload: u32,
    /// When the committed key was committed.
    committed_at: Tick,
    /// The workers whose key of the intent has committed, as a bit set by worker number
    /// (where a replacement made its own key after a takeover, each worker's is one more key
    /// the store keeps); the payload and time are the latest commit's.
    workers: u32,
}

/// What the server did with a request that reached its commit point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Processed {
    /// A new side effect.
    Committed,
    /// The key was known: the receipt of the earlier commit, and no new effect.
    Replayed,
    /// The key was known with another payload: refused, and no new effect.
    Conflict,
    /// A versioned record had moved past the version the write was conditional on: refused,
    /// and no new effect.
    VersionConflict,
}

impl KeyStore {
    /// Commits a request carrying version `payload` of its arguments, or replays the receipt
    /// when its key has already committed that payload, or refuses a different one — unless
    /// the key's `retention` has run out, when the request is new again.
    pub fn process(
        &mut self,
        key: Option<Key>,
        payload: u32,
        now: Tick,
        retention: Option<Tick>,
    ) -> Processed {
        if self.holds(key, now, retention) {
            return if payload == self.payload {
                Processed::Replayed
            } else {
                Processed::Conflict
            };
        }
        if let Some(k) = key {
            self.committed = key;
            self.payload = payload;
            self.committed_at = now;
            self.workers |= k.worker().map_or(0, |w| 1 << w.min(31));
        }
        Processed::Committed
    }

    /// Whether a lookup at `now` finds `key` committed, the store showing commits `lag` late.
    pub fn shows(&self, key: Option<Key>, now: Tick, lag: Tick, retention: Option<Tick>) -> bool {
        self.holds(key, now, retention) && self.committed_at.after(lag) <= now
    }

    /// Whether the store still holds `key` at `now`.
    fn holds(&self, key: Option<Key>, now: Tick, retention: Option<Tick>) -> bool {
        let Some(k) = key else {
            return false;
        };
        let known = key == self.committed
            || (self.committed.is_some_and(|c| c.intent == k.intent)
                && k.worker()
                    .is_some_and(|w| self.workers & 1 << w.min(31) != 0));
        known && retention.is_none_or(|r| now < self.committed_at.after(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::idempotency::KeyScope;

    #[test]
    fn a_key_commits_once_and_replays_after() {
        let mut store = KeyStore::default();
        let key = KeyScope::PerIntent.key(9, 0);
        assert_eq!(store.process(key, 0, Tick(0), None), Processed::Committed);
        assert_eq!(
            store.process(KeyScope::PerIntent.key(9, 1), 0, Tick(1), None),
            Processed::Replayed
        );
        assert_eq!(store.process(key, 1, Tick(2), None), Processed::Conflict);
        assert_eq!(store.committed, key);
        assert!(store.shows(key, Tick(5), Tick(5), None));
        assert!(!store.shows(key, Tick(4), Tick(5), None));
    }

    /// A key the receiver has forgotten makes the retry a new request: it commits again.
    #[test]
    fn a_forgotten_key_commits_again() {
        let mut store = KeyStore::default();
        let key = KeyScope::PerIntent.key(9, 0);
        let retention = Some(Tick(10));
        assert_eq!(
            store.process(key, 0, Tick(0), retention),
            Processed::Committed
        );
        assert_eq!(
            store.process(key, 0, Tick(9), retention),
            Processed::Replayed
        );
        assert!(store.shows(key, Tick(9), Tick::ZERO, retention));
        assert!(!store.shows(key, Tick(10), Tick::ZERO, retention));
        assert_eq!(
            store.process(key, 0, Tick(10), retention),
            Processed::Committed
        );
        assert_eq!(
            store.process(key, 0, Tick(19), retention),
            Processed::Replayed
        );
    }

    #[test]
    fn without_a_stable_key_every_request_commits() {
        for scope in [KeyScope::None, KeyScope::PerAttempt] {
            let mut store = KeyStore::default();
            for attempt in 0..3 {
                assert_eq!(
                    store.process(scope.key(9, attempt), attempt, Tick(attempt.into()), None),
                    Processed::Committed
                );
            }
        }
    }
}
