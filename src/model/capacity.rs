//! Capacity windows: stretches of time in which a tool's server runs short — a share of its
//! workers gone (a failed node, a deploy) or its rate limit cut — before it comes back whole.
//! Beside outages, the other trigger of a metastable failure.

use super::RateLimit;
use crate::time::Tick;

/// One window: from `from` (included) until `until` (excluded), `fraction` of the capacity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CapacityWindow {
    pub from: Tick,
    pub until: Tick,
    /// The share of the workers (rounded down) and of the rate limit's rate left, in [0, 1).
    pub fraction: f64,
    /// The zone whose replicas it cuts together, by index into the tool's zones; `None`:
    /// every server of the tool.
    pub zone: Option<usize>,
}

/// The window `now` falls in at a server in `zone`, if any.
pub fn window_at(
    windows: &[CapacityWindow],
    zone: Option<usize>,
    now: Tick,
) -> Option<&CapacityWindow> {
    (windows.iter())
        .find(|w| w.zone.is_none_or(|z| Some(z) == zone) && w.from <= now && now < w.until)
}

/// The share of capacity at `now` at a server in `zone`: a window's fraction, or 1 outside
/// every window.
pub fn fraction_at(windows: &[CapacityWindow], zone: Option<usize>, now: Tick) -> f64 {
    window_at(windows, zone, now).map_or(1.0, |w| w.fraction)
}

/// The workers left of `workers` at a share `fraction` of capacity.
pub fn workers(workers: u32, fraction: f64) -> u32 {
    (f64::from(workers) * fraction).floor() as u32
}

/// A rate limit at a share `fraction` of its rate: tokens come 1/fraction times as far apart;
/// `None` at a fraction of 0, when no token comes at all.
pub fn rate_limit(limit: &RateLimit, fraction: f64) -> Option<RateLimit> {
    (fraction > 0.0).then(|| RateLimit {
        interval: Tick((limit.interval.0 as f64 / fraction).round() as u64),
        ..*limit
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::LimitScope;

    #[test]
    fn a_window_cuts_workers_and_rate_within_its_span() {
        let windows = [CapacityWindow {
            from: Tick(10),
            until: Tick(20),
            fraction: 0.5,
            zone: Some(1),
        }];
        assert_eq!(fraction_at(&windows, Some(1), Tick(9)), 1.0);
        assert_eq!(fraction_at(&windows, Some(1), Tick(10)), 0.5);
        assert_eq!(fraction_at(&windows, Some(1), Tick(20)), 1.0);
        // A zone's window leaves the other zones whole.
        assert_eq!(fraction_at(&windows, Some(0), Tick(10)), 1.0);
        assert_eq!(
            (workers(8, 0.5), workers(7, 0.5), workers(8, 0.0)),
            (4, 3, 0)
        );
        let limit = RateLimit::per_second(10.0, 5, LimitScope::Tool, Tick(1));
        assert_eq!(rate_limit(&limit, 0.5).unwrap().interval, Tick(200_000));
        assert_eq!(rate_limit(&limit, 0.0), None);
    }
}
