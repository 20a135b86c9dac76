//! Where an intent stands in the call graph: its edge, its primary and fallback tier, and what
//! it carries from its caller.

use crate::model::Key;
use crate::policy::Limits;
use crate::time::Tick;

/// Where an intent stands in the call graph: the edge it goes over, and, for a call a service
/// makes, the work of the service's attempt it is part of and whether that attempt may pass
/// its failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hop {
    pub edge: u16,
    pub work: Option<u32>,
    pub optional: bool,
    /// The caller's deadline it carries, as a tick, where its edge propagates deadlines.
    pub deadline: Option<Tick>,
    /// The task's call it serves (task × calls per task + the call's place): its own number
    /// for a task's call, which its fallbacks share.
    pub origin: u64,
    /// Its call site: the same for every intent a caller's retries make of one call, so a
    /// callee's effects can be told apart by site (see `crate::sim::tree`).
    pub site: u64,
    /// The tree of the task's call it belongs to, where the graph is measured.
    pub tree: u32,
    /// The key of the request it serves, where its edge forwards keys.
    pub key: Option<Key>,
    /// The edge of the call it falls back from, and its place in the fallback chain: 0 for
    /// the primary itself, whose edge it then is.
    pub primary: u16,
    pub tier: u8,
    /// A fallback was started once it failed.
    pub fell_back: bool,
}

impl Hop {
    /// Where a task's own call `id` over `edge` stands: the hop of every intent of a
    /// configuration with no call graph, stages or fallbacks.
    pub fn plain(edge: u16, id: u64) -> Hop {
        Hop {
            edge,
            primary: edge,
            origin: id,
            site: id,
            ..Hop::default()
        }
    }

    /// The bounds of an intent whose policy's are `own` and whose scope starts at `start`:
    /// its own deadline, or the one it carries where that comes first.
    pub fn limits(&self, own: Limits, start: Tick) -> Limits {
        let Some(carried) = self.deadline else {
            return own;
        };
        let left = carried.since(start);
        Limits {
            deadline: Some(own.deadline.map_or(left, |d| d.min(left))),
            ..own
        }
    }
}
