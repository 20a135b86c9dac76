//! What an intent keeps in its far part, made only when a feature needs it: where it stands in
//! the call graph, the replicas it tried, and its reads and writes of a versioned record.

use super::{Hop, Intent};

impl Intent {
    /// Where in the call graph it stands.
    pub fn hop(&self) -> Hop {
        self.far
            .as_ref()
            .map_or(Hop::plain(self.edge, self.id), |f| f.hop)
    }

    /// Sets where in the call graph it stands; only a hop that is not the plain one makes the
    /// intent's far part.
    pub fn set_hop(&mut self, hop: Hop) {
        self.edge = hop.edge;
        if self.far.is_some() || hop != Hop::plain(hop.edge, self.id) {
            self.far().hop = hop;
        }
    }

    /// A fallback was started once it failed.
    pub fn fell_back(&mut self) {
        self.far().hop.fell_back = true;
    }

    /// The replicas it has sent to, as a bit set, and the one its first attempt went to.
    pub fn tried(&self) -> (u128, Option<u16>) {
        self.far
            .as_ref()
            .map_or((0, None), |f| (f.tried, f.first_replica))
    }

    /// It sends an attempt to replica `replica` of a tool with several.
    pub fn try_replica(&mut self, replica: usize) {
        let far = self.far();
        far.tried |= 1 << replica;
        far.first_replica.get_or_insert(replica as u16);
    }

    /// Reads of a versioned record that reached the server, and conditional writes.
    pub fn reads_and_writes(&self) -> (u32, u32) {
        self.far.as_ref().map_or((0, 0), |f| (f.reads, f.writes))
    }

    /// A conditional write reached the record.
    pub fn wrote(&mut self) {
        self.far().writes += 1;
    }
}
