//! The server side of an attempt: it commits a side effect, or — when the request carries an
//! idempotency key it has already committed — returns the stored receipt instead.
//!
//! A key belongs to one intent (`per_intent` keys are reused by every retry of that intent and by
//! no other intent; `per_attempt` keys are never reused at all), so the store's entry for a key
//! is kept beside its intent and dropped when the intent and all its attempts are over. That is
//! exact for a retention longer than any intent, the case the model covers.

use crate::policy::idempotency::Key;
use crate::time::Tick;

/// What the server holds for the key of one intent: the key it has committed. Its receipt
/// is the earlier commit itself; a payload to check against it comes with conflicts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyStore {
    committed: Option<Key>,
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
}

impl KeyStore {
    /// Commits a request, or replays the receipt when its key has already committed.
    pub fn process(&mut self, key: Option<Key>, now: Tick) -> Processed {
        if key.is_some() && key == self.committed {
            return Processed::Replayed;
        }
        if key.is_some() {
            self.committed = key;
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
        assert_eq!(store.process(key, Tick(0)), Processed::Committed);
        assert_eq!(
            store.process(KeyScope::PerIntent.key(9, 1), Tick(1)),
            Processed::Replayed
        );
        assert_eq!(store.committed, key);
        assert!(store.shows(key, Tick(5), Tick(5)) && !store.shows(key, Tick(4), Tick(5)));
    }

    #[test]
    fn without_a_stable_key_every_request_commits() {
        for scope in [KeyScope::None, KeyScope::PerAttempt] {
            let mut store = KeyStore::default();
            for attempt in 0..3 {
                assert_eq!(
                    store.process(scope.key(9, attempt), Tick(attempt.into())),
                    Processed::Committed
                );
            }
        }
    }
}
