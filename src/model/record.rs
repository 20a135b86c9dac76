//! A versioned record: one document, ticket or memory entry that many clients update with
//! optimistic concurrency. A read returns the version; a conditional write commits, and moves
//! the version on, only if the version it read is still the current one — checked when the
//! write arrives, or when its work is done. A write that finds the version moved fails with a
//! `conflict_version`, and the client must read again.
//!
//! Where the check happens matters only when a write takes time: checked on arrival (the
//! published contention simulator's model), the first write to arrive wins at once and the
//! version moves then; checked at commit, two writes in service together both pass the door
//! and the second to finish loses, its work spent; under a lock, a write that finds another in
//! service is refused at once, and the one holding the lock commits if its version held.

/// When a conditional write compares its version with the record's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionCheck {
    /// When the write reaches the server: the check and the version's move are one step.
    Arrival,
    /// When the write's work is done, after its service time.
    Commit,
    /// A write takes the record's lock on arrival, or is refused if another holds it; the
    /// version is checked when its work is done, and the lock let go.
    Lock,
}

impl VersionCheck {
    pub const ALL: [VersionCheck; 3] = [
        VersionCheck::Arrival,
        VersionCheck::Commit,
        VersionCheck::Lock,
    ];

    pub fn name(self) -> &'static str {
        match self {
            VersionCheck::Arrival => "arrival",
            VersionCheck::Commit => "commit",
            VersionCheck::Lock => "lock",
        }
    }
}

/// One record in a run: its version counts the writes it has committed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    version: u64,
    /// The write holding the lock (under [`VersionCheck::Lock`]): its intent and attempt.
    holder: Option<(u64, u32)>,
}

impl Record {
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Write `by` (intent, attempt) takes the lock; false if another write holds it.
    pub fn lock(&mut self, by: (u64, u32)) -> bool {
        if self.holder.is_some() {
            return false;
        }
        self.holder = Some(by);
        true
    }

    /// Write `by` is done: the lock is free again if it held it.
    pub fn unlock(&mut self, by: (u64, u32)) {
        if self.holder == Some(by) {
            self.holder = None;
        }
    }

    /// A conditional write that read `read`: whether it commits, moving the version on.
    pub fn write(&mut self, read: u64) -> bool {
        let current = read == self.version;
        if current {
            self.version += 1;
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_commits_only_on_the_version_it_read() {
        let mut r = Record::default();
        let (a, b) = (r.version(), r.version());
        assert!(r.write(a));
        assert!(!r.write(b), "b read the version a moved on");
        assert!(r.write(r.version()));
        assert_eq!(r.version(), 2);
        assert!(r.lock((1, 0)) && !r.lock((2, 0)), "one holder at a time");
        r.unlock((2, 0));
        assert!(!r.lock((2, 1)), "only the holder lets go");
        r.unlock((1, 0));
        assert!(r.lock((2, 1)));
    }
}
