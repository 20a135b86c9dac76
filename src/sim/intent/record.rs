//! What an intent's attempts read of a versioned record: the version each read, and a write
//! refused for a version that moved.

use super::Intent;
use crate::model::Fate;
use crate::time::Tick;

impl Intent {
    /// Attempt `attempt`'s read of a versioned record returned `version`.
    pub fn read(&mut self, attempt: u32, version: u64) {
        let i = self.held(attempt);
        let far = self.far();
        if far.versions.len() <= i {
            far.versions.resize(i + 1, 0);
        }
        far.versions[i] = version;
        far.reads += 1;
    }

    /// The version attempt `attempt` read.
    pub fn read_version(&self, attempt: u32) -> u64 {
        let far = self.far.as_ref().expect("a read came first");
        far.versions[self.held(attempt)]
    }

    /// Attempt `attempt`'s conditional write found the version moved on: no effect.
    pub fn version_conflict(&mut self, attempt: u32) {
        let i = self.held(attempt);
        let draw = &mut self.attempts.draws[i];
        draw.fate = Fate::VersionConflict;
        draw.service = Tick::ZERO;
    }
}
