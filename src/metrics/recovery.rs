//! Recovery from a trigger — a spike of load, a capacity cut, an outage: how much of the offered
//! load turned into goodput before it and after it, and whether, and how soon after its end,
//! goodput came back to within 10 % of its level before and stayed there.
//!
//! Goodput here is a fraction: successful intents over intents offered in the same window, so a
//! server that keeps up reads 1 whatever the load. The windows:
//! - **before**: the last [`BEFORE`] before the trigger (or the second half of the time before
//!   it, if that is shorter), which leaves out the run's start from empty;
//! - **after**: the first [`AFTER`] after the trigger's end (cut at the end of arrivals);
//! - **recovered** at the first bin boundary from the trigger's end on from which every
//!   [`SMOOTHING`] window (stepped one bin at a time, up to the end of arrivals) holds at least
//!   90 % of the before level. One bin alone is too noisy to judge by, and so is a 5 s window
//!   at a few dozen tasks a second: it dips 10 % by chance now and then.

use super::{Count, Moments, Sample, SeriesStats};
use crate::time::{TICKS_PER_SECOND, Tick};

/// At most this much time before the trigger measures the level to recover to.
pub const BEFORE: Tick = Tick(30 * TICKS_PER_SECOND);
/// This much time after the trigger's end measures goodput after it.
pub const AFTER: Tick = Tick(30 * TICKS_PER_SECOND);
/// The window goodput is judged over when deciding whether it has recovered.
pub const SMOOTHING: Tick = Tick(10 * TICKS_PER_SECOND);
/// Recovered means back to at least this fraction of the level before.
pub const WITHIN: f64 = 0.9;

/// Where a trigger lies and the windows measured around it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Windows {
    pub trigger: (Tick, Tick),
    pub before: (Tick, Tick),
    pub after: (Tick, Tick),
    /// Where recovery is judged up to: the end of arrivals.
    pub end: Tick,
}

impl Windows {
    /// The windows around a trigger from `from` to `until`, in a run whose arrivals end at
    /// `end`; `None` if there is no time before the trigger, or none after it.
    pub fn around(from: Tick, until: Tick, end: Tick) -> Option<Windows> {
        if from == Tick::ZERO || until >= end {
            return None;
        }
        let before = Tick(BEFORE.0.min(from.0 / 2));
        Some(Windows {
            trigger: (from, until),
            before: (Tick(from.0 - before.0), from),
            after: (until, until.after(AFTER).min(end)),
            end,
        })
    }
}

/// What a configuration's goodput did around the trigger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recovery {
    /// Goodput as a fraction of the offered load, before and after the trigger.
    pub before: f64,
    pub after: f64,
    /// From the trigger's end to recovery; `None` if goodput never came back and stayed.
    pub time_to_recover: Option<Tick>,
}

/// Measures recovery from the series of every tool the configuration calls (`tools`), summed.
pub fn measure(stats: &SeriesStats, tools: &[usize], w: &Windows) -> Recovery {
    let width = stats.width().0;
    let bins = tools.iter().map(|&t| stats.len(t)).max().unwrap_or(0);
    // Each bin's offered and goodput, summed over the tools and the runs.
    let sum = |c: Count, i: usize| -> f64 {
        let total = |m: Moments| m.mean() * m.count() as f64;
        tools.iter().map(|&t| total(stats.count(t, i, c))).sum()
    };
    let offered: Vec<f64> = (0..bins).map(|i| sum(Count::Offered, i)).collect();
    let goodput: Vec<f64> = (0..bins).map(|i| sum(Count::Goodput, i)).collect();
    let bin_of = |t: Tick| (t.0 / width) as usize;
    let fraction = |from: usize, until: usize| {
        let until = until.min(bins);
        let o: f64 = offered.get(from..until).map_or(0.0, |s| s.iter().sum());
        let g: f64 = goodput.get(from..until).map_or(0.0, |s| s.iter().sum());
        if o > 0.0 { g / o } else { f64::NAN }
    };
    let before = fraction(bin_of(w.before.0), bin_of(w.before.1));
    let after = fraction(bin_of(w.after.0), bin_of(w.after.1));
    let span = (SMOOTHING.0.div_ceil(width) as usize).max(1);
    let (first, last) = (bin_of(w.trigger.1), bin_of(w.end).saturating_sub(span));
    let holds = |i: usize| fraction(i, i + span) >= WITHIN * before;
    // The earliest start from which every window holds, scanning back from the end.
    let mut recovered_at = None;
    for i in (first..=last).rev() {
        if !holds(i) {
            break;
        }
        recovered_at = Some(i);
    }
    Recovery {
        before,
        after,
        time_to_recover: recovered_at.map(|i| Tick(i as u64 * width).since(w.trigger.1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Series;

    const S: u64 = TICKS_PER_SECOND;

    /// 10 offered per second throughout; goodput 10 a second except from 40 s to `back`.
    fn run(back: u64) -> SeriesStats {
        let mut series = Series::new(Tick(S), 1);
        for second in 0..100 {
            for k in 0..10 {
                let at = Tick(second * S + k);
                series.count(0, at, Count::Offered);
                if !(40..back).contains(&second) {
                    series.count(0, at, Count::Goodput);
                }
            }
        }
        let mut stats = SeriesStats::new(Tick(S));
        stats.add(&series);
        stats
    }

    #[test]
    fn recovery_is_timed_from_the_trigger_end_to_where_goodput_stays_back() {
        let w = Windows::around(Tick(40 * S), Tick(45 * S), Tick(100 * S)).unwrap();
        assert_eq!(w.before, (Tick(20 * S), Tick(40 * S)));
        assert_eq!(w.after, (Tick(45 * S), Tick(75 * S)));
        let r = measure(&run(52), &[0], &w);
        assert_eq!(r.before, 1.0);
        assert!((r.after - 23.0 / 30.0).abs() < 1e-12);
        assert_eq!(r.time_to_recover, Some(Tick(6 * S)));
        // Never back: goodput stays at zero to the end.
        assert_eq!(measure(&run(100), &[0], &w).time_to_recover, None);
        // Back before the trigger ended: recovered at once.
        assert_eq!(
            measure(&run(44), &[0], &w).time_to_recover,
            Some(Tick::ZERO)
        );
    }

    #[test]
    fn no_windows_without_time_before_or_after() {
        assert_eq!(Windows::around(Tick::ZERO, Tick(5), Tick(100)), None);
        assert_eq!(Windows::around(Tick(5), Tick(100), Tick(100)), None);
    }
}
