//! The workload's arrivals: their random streams, and the tasks that came and wait for a
//! client.

use crate::engine::rng::{Source, Stream, Streams};

/// The workload's arrivals: their streams, and the tasks that came and wait for a client.
pub(super) struct Arrivals {
    pub(super) stream: Stream,
    /// The exact time of the last arrival of a scheduled stream, before rounding to a tick.
    pub(super) clock: f64,
    /// Which caller each task comes from, drawn as tasks start (only with several callers).
    pub(super) callers: Stream,
    /// Tasks arrived so far; tasks `started..arrived` wait for a client.
    pub(super) arrived: u64,
    pub(super) started: u64,
    pub(super) idle_clients: u32,
}

impl Arrivals {
    pub(super) fn new(streams: Streams, clients: u32) -> Self {
        Arrivals {
            stream: streams.stream(Source::Arrivals, 0),
            clock: 0.0,
            callers: streams.stream(Source::Callers, 0),
            arrived: 0,
            started: 0,
            idle_clients: clients,
        }
    }
}
