//! Workers that crash. A task runs on a worker (one of the workload's clients); the worker may
//! die while it holds a call — the process killed, the machine gone — and with it everything it
//! held in memory: the attempts it waited on, the retry state, a key it had not written down.
//! The attempts it already sent go on at the server, and may commit. The call's work item is
//! held under a lease the worker renews while it lives; once the lease runs out after the
//! crash, a replacement worker takes the call over, knowing only what the agent's durability
//! setting wrote down (see [`Durability`](crate::policy::Durability)).
//!
//! A worker crashes at a constant rate while it holds a call — a Poisson process of mean time
//! `mean_uptime` between crashes — drawn from a stream of the call's own, so every
//! configuration of an experiment meets the same crashes at the same times into each call;
//! and, where a crash point is scripted (`at`), the first worker of every call crashes that
//! long into it: before its request arrives, between the commit and the reply, as a test or a
//! lesson needs.
//!
//! A lease is renewed while its worker lives (heartbeats), or held for a fixed term from when
//! a worker takes the item (`renewed = false`, the hold of a recoverable order path): then the
//! item passes to a replacement when the term runs out, its worker alive or not — a lapse —
//! and the worker's replies after it are refused, so its attempts still in flight are the
//! server's alone. The admission rule (a policy's `admit_within_lease`) sends only where the
//! attempt's timeout fits in the term left, holding the item afresh first where it does not.

use crate::time::Tick;
use crate::variate::unit_open_low;

/// The deliveries of a work item when the config names none.
pub const DELIVERIES: u32 = 10;

/// The most deliveries a config may allow: each is a worker's run of the call, so this bounds
/// a call's work at a thousand times one worker's.
pub const MOST_DELIVERIES: u32 = 1_000;

/// How workers crash and how soon a replacement takes their call over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crash {
    /// The mean time a worker holding a call lives before it crashes; `None`: only the
    /// scripted crash.
    pub mean_uptime: Option<Tick>,
    /// When the first worker of every call crashes, from the call's start, if it does.
    pub at: Option<Tick>,
    /// How long a work item's lease lasts: once its worker stops renewing it (the time from a
    /// crash to the takeover), or from when a worker takes the item, where it is not renewed.
    pub lease: Tick,
    /// Whether a living worker renews its lease; if not, the lease is a fixed term.
    pub renewed: bool,
    /// How many times the work queue hands a call's item to a worker, the first included,
    /// before it gives the item up (a dead-letter queue's receive count): the call then ends
    /// given up, as an attempt limit ends it. It bounds the takeovers of a call that can never
    /// finish within a lease.
    pub max_deliveries: u32,
    /// Where workers stall rather than die (a pause longer than the lease: a GC pause, a
    /// partition), how long: the worker then wakes believing it still holds the call, and
    /// sends it once more — a zombie's late send — before it learns it lost the lease.
    pub stall: Option<Tick>,
}

impl Crash {
    /// The time from when worker `worker` (0 the call's first) takes the call until it
    /// crashes, if it does: the scripted point for the first, else a draw from the uniform word
    /// `word`, exponential with mean `mean_uptime`, at least a tick.
    pub fn uptime(&self, worker: u32, word: u64) -> Option<Tick> {
        if let (0, Some(at)) = (worker, self.at) {
            return Some(at);
        }
        let mean = self.mean_uptime?;
        let ticks = -(mean.0 as f64) * libm::log(unit_open_low(word));
        Some(Tick((ticks.round() as u64).max(1)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The uptimes' mean is the mean uptime: over 10⁵ draws spread evenly over (0, 1] the
    /// sample mean of an exponential is its mean within a few parts in a thousand.
    #[test]
    fn uptimes_are_exponential_of_the_mean() {
        let crash = Crash {
            mean_uptime: Some(Tick::from_secs(10)),
            at: None,
            lease: Tick::from_secs(1),
            renewed: true,
            max_deliveries: DELIVERIES,
            stall: None,
        };
        let n = 100_000u64;
        let uptime = |k: u64| crash.uptime(1, k * (u64::MAX / n) + 1).unwrap().0;
        let mean = (0..n).map(uptime).sum::<u64>() as f64 / n as f64 / 1e6;
        assert!((mean - 10.0).abs() < 0.05, "{mean}");
    }

    /// A scripted point crashes the first worker there, and only the first.
    #[test]
    fn a_scripted_crash_is_the_first_workers() {
        let crash = Crash {
            mean_uptime: None,
            at: Some(Tick::from_millis(15)),
            lease: Tick::from_secs(1),
            renewed: true,
            max_deliveries: DELIVERIES,
            stall: None,
        };
        assert_eq!(crash.uptime(0, 7), Some(Tick::from_millis(15)));
        assert_eq!(crash.uptime(1, 7), None);
    }
}
