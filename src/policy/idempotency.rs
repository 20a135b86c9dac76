//! Idempotency keys: what makes a retry of a write safe to replay.

use crate::model::Key;

/// Which key each attempt carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyScope {
    /// No key: every request that reaches the commit point commits.
    None,
    /// One key per intent, reused by every retry: the server commits it once. It is held in
    /// the worker's memory: a replacement that takes the call over after a crash makes a new
    /// one, unless an intent log wrote it down.
    PerIntent,
    /// A fresh key per attempt — the anti-pattern, kept to show duplicates coming back.
    PerAttempt,
    /// The key of the caller's request, passed down a call graph's edge: every call a
    /// service makes for one request of its caller carries that request's key, whichever of
    /// the service's attempts made it, so the callee commits once per key however many
    /// layers above retried. The world fills it in (see `World::request_key`); validation
    /// allows it only where every request into the caller carries a stable key.
    Forward,
    /// One key per intent derived from the durable work item (an order's id): every retry
    /// carries it, and so does a replacement that takes the call over after a crash.
    Derived,
}

impl KeyScope {
    pub const ALL: [KeyScope; 5] = [
        KeyScope::None,
        KeyScope::PerIntent,
        KeyScope::PerAttempt,
        KeyScope::Forward,
        KeyScope::Derived,
    ];

    /// The key attempt `attempt` (0-based) of intent `intent` carries; a forwarded key is
    /// its caller's, which the intent alone does not know.
    pub fn key(self, intent: u64, attempt: u32) -> Option<Key> {
        match self {
            KeyScope::None | KeyScope::Forward => None,
            KeyScope::PerIntent | KeyScope::Derived => Some(Key { intent, nonce: 0 }),
            KeyScope::PerAttempt => Some(Key {
                intent,
                nonce: attempt + 1,
            }),
        }
    }

    /// The name used in configs and output.
    pub fn name(self) -> &'static str {
        match self {
            KeyScope::None => "none",
            KeyScope::PerIntent => "per_intent",
            KeyScope::PerAttempt => "per_attempt",
            KeyScope::Forward => "forward",
            KeyScope::Derived => "derived",
        }
    }

    /// Whether every retry of an intent carries the same key: its own, or its caller's.
    pub fn is_stable(self) -> bool {
        matches!(
            self,
            KeyScope::PerIntent | KeyScope::Forward | KeyScope::Derived
        )
    }

    /// The key of a call taken over `takeovers` times whose attempt `attempt` it is: a key
    /// held in memory is made anew by each replacement that does not find it written down
    /// (`kept`: an intent log holds it), the rest as [`KeyScope::key`] makes them.
    pub fn after_takeovers(
        self,
        intent: u64,
        attempt: u32,
        takeovers: u32,
        kept: bool,
    ) -> Option<Key> {
        match self {
            KeyScope::PerIntent if takeovers > 0 && !kept => {
                Some(Key::taken_over(intent, takeovers))
            }
            scope => scope.key(intent, attempt),
        }
    }
}
