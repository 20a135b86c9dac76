//! A tool's health as a trace recorded it: for each stretch of time, the faults its calls met
//! and how slow it was. A replayed incident runs its tools on their recorded health rather than
//! on one rate, so an attempt sent at 14:02:10 meets the outage the trace shows at 14:02:10,
//! whatever policy sends it — and another policy's retries meet the stretches they fall in.
//!
//! The health is of the dependency, not of a policy: what share of the calls that reached it
//! in a stretch failed, and how, with their latencies' median against the whole trace's. A
//! stretch holds from its `from` until the next one's (the last for ever); an attempt meets the
//! stretch it is sent in, its fate drawn from that stretch's faults, its service time scaled by
//! that stretch's latency.

use std::sync::Arc;

use super::Faults;
use crate::time::Tick;

/// One stretch of a recorded health.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stretch {
    /// When it starts, since the run's start.
    pub from: Tick,
    pub faults: Faults,
    /// Its service times against the tool's: 2 where its calls took twice as long.
    pub latency: f64,
}

/// A tool's recorded health, and the file it came from.
#[derive(Clone, Debug, PartialEq)]
pub struct Health {
    pub file: String,
    /// Never empty in a config that runs (a manifest read back names the file alone), sorted
    /// by `from`, the first from 0.
    pub stretches: Arc<[Stretch]>,
}

impl Health {
    /// The stretch `now` falls in: the last that starts at or before it.
    pub fn at(&self, now: Tick) -> &Stretch {
        let after = self.stretches.partition_point(|s| s.from <= now);
        &self.stretches[after.saturating_sub(1)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_falls_in_the_stretch_that_starts_before_it() {
        let at = |s: u64, server_error: f64| Stretch {
            from: Tick::from_secs(s),
            faults: Faults {
                server_error,
                ..Faults::default()
            },
            latency: 1.0,
        };
        let h = Health {
            file: "h.csv".into(),
            stretches: vec![at(0, 0.0), at(10, 1.0), at(20, 0.5)].into(),
        };
        let rate = |s: u64| h.at(Tick::from_secs(s)).faults.server_error;
        assert_eq!(
            [rate(0), rate(9), rate(10), rate(19), rate(20), rate(99)],
            [0.0, 0.0, 1.0, 1.0, 0.5, 0.5]
        );
    }
}
