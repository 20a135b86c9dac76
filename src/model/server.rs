//! The server side of an attempt: it commits a side effect, or — when the request carries an
//! idempotency key it has already committed — returns the stored receipt instead. The key is
//! bound to the payload it committed: the same key with another payload is a conflict.
//!
//! A key belongs to one intent (`per_intent` keys are reused by every retry of that intent and by
//! no other intent; `per_attempt` keys are never reused at all), so the store's entry for a key
//! is kept beside its intent and dropped when the intent and all its attempts are over. That is
//! exact for a retention longer than any intent, the case the model covers.

use crate::policy::idempotency::Key;
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
}

impl KeyStore {
    /// Commits a request carrying version `payload` of its arguments, or replays the receipt
    /// when its key has already committed that payload, or refuses a different one.
    pub fn process(&mut self, key: Option<Key>, payload: u32, now: Tick) -> Processed {
        if key.is_some() && key == self.committed {
            return if payload == self.payload {
                Processed::Replayed
            } else {
                Processed::Conflict
            };
        }
        if key.is_some() {
            self.committed = key;
            self.payload = payload;
            self.committed_at = now;
        }
        Processed::Committed
    }

    /// Whether a lookup at `now` finds `key` committed, the store showing commits `lag` late.
    pub fn shows(&self, key: Option<Key>, now: Tick, lag: Tick) -> bool {
        key.is_some() && key == self.committed && self.committed_at.after(lag) <= now
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
        assert_eq!(store.process(key, 0, Tick(0)), Processed::Committed);
        assert_eq!(
            store.process(KeyScope::PerIntent.key(9, 1), 0, Tick(1)),
            Processed::Replayed
        );
        assert_eq!(store.process(key, 1, Tick(2)), Processed::Conflict);
        assert_eq!(store.committed, key);
        assert!(store.shows(key, Tick(5), Tick(5)) && !store.shows(key, Tick(4), Tick(5)));
    }

    #[test]
    fn without_a_stable_key_every_request_commits() {
        for scope in [KeyScope::None, KeyScope::PerAttempt] {
            let mut store = KeyStore::default();
            for attempt in 0..3 {
                assert_eq!(
                    store.process(scope.key(9, attempt), attempt, Tick(attempt.into())),
                    Processed::Committed
                );
            }
        }
    }
}
