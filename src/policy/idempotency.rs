//! Idempotency keys: what makes a retry of a write safe to replay.

use crate::model::Key;

/// Which key each attempt carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyScope {
    /// No key: every request that reaches the commit point commits.
    None,
    /// One key per intent, reused by every retry: the server commits it once.
    PerIntent,
    /// A fresh key per attempt — the anti-pattern, kept to show duplicates coming back.
    PerAttempt,
}

impl KeyScope {
    pub const ALL: [KeyScope; 3] = [KeyScope::None, KeyScope::PerIntent, KeyScope::PerAttempt];

    /// The key attempt `attempt` (0-based) of intent `intent` carries.
    pub fn key(self, intent: u64, attempt: u32) -> Option<Key> {
        match self {
            KeyScope::None => None,
            KeyScope::PerIntent => Some(Key { intent, nonce: 0 }),
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
        }
    }
}
