//! The idempotency keys a tool holds, as the `Idempotency-Key` header's draft and Stripe define
//! them: a new key is processed; a key whose request is still running gets a 409; a key reused
//! with another payload (its fingerprint differs) gets a 422; a key whose request committed has
//! its stored response replayed, with no second commit. A request that failed before its commit
//! point stores nothing, so its retry is processed afresh. The response is stored at the
//! commit, before the client hears anything: a lost reply's retry is answered with it. Keys are
//! forgotten `retention` after their commit, where the tool's `key_retention` says so.

use std::collections::BTreeMap;

use crate::time::Tick;

/// The most bytes of a key the endpoint reads (Stripe allows 255 characters).
pub const MOST_KEY_BYTES: usize = 255;

/// A response stored for replay: its status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub status: u16,
    pub body: Vec<u8>,
}

/// What a request with a key is to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admit {
    /// Process it: the key is new (or forgotten), and is now marked running.
    New,
    /// Answer with the response stored at the key's commit; commit nothing.
    Replay(Stored),
    /// Its first request is still running: 409.
    InFlight,
    /// The key came with another payload: 422.
    Mismatch,
}

#[derive(Clone, Debug)]
enum Entry {
    Running {
        fingerprint: [u8; 32],
    },
    Done {
        fingerprint: [u8; 32],
        stored: Stored,
        at: Tick,
    },
}

/// One tool's keys.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    entries: BTreeMap<String, Entry>,
    retention: Option<Tick>,
}

impl Keys {
    /// A store that forgets a key `retention` after its commit (`None`: never).
    pub fn new(retention: Option<Tick>) -> Keys {
        Keys {
            entries: BTreeMap::new(),
            retention,
        }
    }

    /// A request with `key` and a payload of `fingerprint` arrives at `now`.
    pub fn admit(&mut self, key: &str, fingerprint: [u8; 32], now: Tick) -> Admit {
        let held = match self.entries.get(key) {
            Some(Entry::Done { at, .. }) if self.forgot(*at, now) => None,
            other => other,
        };
        let answer = match held {
            None => Admit::New,
            Some(Entry::Running { fingerprint: f }) | Some(Entry::Done { fingerprint: f, .. })
                if *f != fingerprint =>
            {
                Admit::Mismatch
            }
            Some(Entry::Running { .. }) => Admit::InFlight,
            Some(Entry::Done { stored, .. }) => Admit::Replay(stored.clone()),
        };
        if answer == Admit::New {
            self.entries
                .insert(key.to_string(), Entry::Running { fingerprint });
        }
        answer
    }

    /// The request under `key` committed at `now`, its response `stored`.
    pub fn commit(&mut self, key: &str, stored: Stored, now: Tick) {
        if let Some(entry) = self.entries.get_mut(key) {
            let fingerprint = match entry {
                Entry::Running { fingerprint } | Entry::Done { fingerprint, .. } => *fingerprint,
            };
            *entry = Entry::Done {
                fingerprint,
                stored,
                at: now,
            };
        }
    }

    /// The request under `key` ended without a commit: the key is free again.
    pub fn release(&mut self, key: &str) {
        if let Some(Entry::Running { .. }) = self.entries.get(key) {
            self.entries.remove(key);
        }
    }

    /// The response a lookup of `key` at `now` finds: committed at least `lag` ago and not yet
    /// forgotten.
    pub fn lookup(&self, key: &str, now: Tick, lag: Tick) -> Option<&Stored> {
        match self.entries.get(key) {
            Some(Entry::Done { stored, at, .. })
                if at.after(lag) <= now && !self.forgot(*at, now) =>
            {
                Some(stored)
            }
            _ => None,
        }
    }

    fn forgot(&self, at: Tick, now: Tick) -> bool {
        self.retention.is_some_and(|r| at.after(r) <= now)
    }
}

/// An `Idempotency-Key` header's value past [`MOST_KEY_BYTES`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLong;

/// The key an `Idempotency-Key` header's value carries: the draft's quoted sf-string unquoted,
/// or Stripe's bare token as it is, trimmed; `None` for an empty one.
pub fn from_header(raw: &str) -> Result<Option<String>, TooLong> {
    let key = raw.trim();
    let key = (key.strip_prefix('"').and_then(|k| k.strip_suffix('"'))).unwrap_or(key);
    if key.len() > MOST_KEY_BYTES {
        return Err(TooLong);
    }
    Ok((!key.is_empty()).then(|| key.to_string()))
}

/// A payload's fingerprint: its SHA-256.
pub fn fingerprint(body: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    Sha256::digest(body).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok() -> Stored {
        Stored {
            status: 200,
            body: b"{}".to_vec(),
        }
    }

    /// The draft's four cases, in the order a retrying client meets them.
    #[test]
    fn a_key_is_processed_then_in_flight_then_replayed_and_bound_to_its_payload() {
        let mut keys = Keys::new(None);
        let (a, b) = (fingerprint(b"a"), fingerprint(b"b"));
        assert_eq!(keys.admit("k", a, Tick(0)), Admit::New);
        assert_eq!(keys.admit("k", a, Tick(1)), Admit::InFlight);
        assert_eq!(keys.admit("k", b, Tick(1)), Admit::Mismatch);
        keys.commit("k", ok(), Tick(2));
        assert_eq!(keys.admit("k", a, Tick(3)), Admit::Replay(ok()));
        assert_eq!(keys.admit("k", b, Tick(3)), Admit::Mismatch);
    }

    #[test]
    fn a_header_gives_its_key_quoted_or_bare() {
        assert_eq!(from_header("\"k-1\""), Ok(Some("k-1".into())));
        assert_eq!(from_header(" k-1 "), Ok(Some("k-1".into())));
        assert_eq!(from_header("\"\""), Ok(None));
        assert_eq!(from_header(&"x".repeat(256)), Err(TooLong));
    }

    /// A failure before the commit frees the key; a retained key is forgotten on time, and a
    /// lookup sees a commit only after its lag.
    #[test]
    fn released_and_forgotten_keys_start_afresh() {
        let mut keys = Keys::new(Some(Tick(10)));
        let a = fingerprint(b"a");
        assert_eq!(keys.admit("k", a, Tick(0)), Admit::New);
        keys.release("k");
        assert_eq!(keys.admit("k", a, Tick(1)), Admit::New);
        keys.commit("k", ok(), Tick(2));
        assert_eq!(keys.lookup("k", Tick(3), Tick(5)), None);
        assert_eq!(keys.lookup("k", Tick(7), Tick(5)), Some(&ok()));
        assert_eq!(keys.admit("k", a, Tick(11)), Admit::Replay(ok()));
        assert_eq!(keys.admit("k", a, Tick(12)), Admit::New);
    }
}
