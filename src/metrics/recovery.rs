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
//!
//! A metastable system is bimodal: some replications collapse and stay down, others come back.
//! Recovery is therefore judged on each replication's own series ([`Recoveries`]), and reported
//! across them as the share that recovered, with its interval, and the median time to recover
//! of those that did; the series averaged over replications is drawn, and gives the goodput
//! before and after.

use std::collections::BTreeMap;

use statrs::distribution::{Binomial, DiscreteCDF};

use super::estimate::{LEVEL, wilson};
use super::{Count, Moments, Sample, Series, SeriesStats};
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
    judge(stats, tools, w, false)
}

/// The window a single replication's recovery is decided over: its goodput in 10 s windows
/// dips 10 % by chance now and then at the few dozen tasks a second of a storm, where the
/// average over replications does not; over 30 s windows it does not either.
pub const SMOOTHING_ONE_RUN: Tick = Tick(30 * TICKS_PER_SECOND);

/// [`measure`]; for `one_run`, whether goodput came back and stayed is decided over
/// [`SMOOTHING_ONE_RUN`] windows, and the time it came back is read in [`SMOOTHING`] windows
/// inside the first long window that holds: the start of the run of short windows that hold up
/// to its end (a long window that holds may start a few seconds before goodput is back).
fn judge(stats: &SeriesStats, tools: &[usize], w: &Windows, one_run: bool) -> Recovery {
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
    let first = bin_of(w.trigger.1);
    let bins_of = |t: Tick| (t.0.div_ceil(width) as usize).max(1);
    // The earliest start from which every window of `span` bins holds, scanning back from the
    // end.
    let stays_back = |span: usize| {
        let holds = move |i: usize| fraction(i, i + span) >= WITHIN * before;
        let last = bin_of(w.end).saturating_sub(span);
        let mut from = None;
        for i in (first..=last).rev() {
            if !holds(i) {
                break;
            }
            from = Some(i);
        }
        from
    };
    let recovered_at = if one_run {
        let (long, short) = (bins_of(SMOOTHING_ONE_RUN), bins_of(SMOOTHING));
        stays_back(long).map(|from| {
            // Inside the first long window that holds: the start of the unbroken run of short
            // windows that holds up to its end.
            let holds = |i: usize| fraction(i, i + short) >= WITHIN * before;
            let end = from + long.saturating_sub(short);
            let mut at = end;
            while at > from && holds(at - 1) {
                at -= 1;
            }
            at
        })
    } else {
        stays_back(bins_of(SMOOTHING))
    };
    Recovery {
        before,
        after,
        time_to_recover: recovered_at.map(|i| Tick(i as u64 * width).since(w.trigger.1)),
    }
}

/// How each replication of one configuration recovered, judged on its own series: how many were
/// judged, and the times to recover of those that did, counted by value. A time is a whole
/// number of bins, so the map holds at most one entry per bin however many replications there
/// are.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recoveries {
    pub replications: u64,
    times: BTreeMap<Tick, u64>,
}

/// The fewest recovered replications whose times give a median a 95 % interval: below six, even
/// the smallest and the largest cover the median with a chance under 95 %.
pub const MEDIAN_INTERVAL_FROM: u64 = 6;

impl Recoveries {
    /// Judges one replication's series, of a run calling `tools`, in `windows`.
    pub fn add(&mut self, run: &Series, tools: &[usize], windows: &Windows) {
        let mut one = SeriesStats::new(run.width());
        one.add(run);
        self.replications += 1;
        if let Some(t) = judge(&one, tools, windows, true).time_to_recover {
            *self.times.entry(t).or_default() += 1;
        }
    }

    /// The replications that recovered.
    pub fn recovered(&self) -> u64 {
        self.times.values().sum()
    }

    /// The share that recovered, with its 95 % Wilson interval.
    pub fn share(&self) -> (f64, (f64, f64)) {
        let (k, n) = (self.recovered() as f64, self.replications as f64);
        (if n > 0.0 { k / n } else { 0.0 }, wilson(k, n))
    }

    /// The median time to recover of the replications that did (of the middle two, their
    /// mean); `None` if none did.
    pub fn median(&self) -> Option<Tick> {
        let k = self.recovered();
        (k > 0).then(|| {
            let (lo, hi) = (self.ranked(k.div_ceil(2)), self.ranked(k / 2 + 1));
            Tick((lo.0 + hi.0) / 2)
        })
    }

    /// The distribution-free 95 % interval of that median: the order statistics of ranks j and
    /// k + 1 − j, j the largest rank with P(Binomial(k, ½) < j) ≤ 2.5 %; `None` below
    /// [`MEDIAN_INTERVAL_FROM`] recovered replications.
    pub fn median_interval(&self) -> Option<(Tick, Tick)> {
        let k = self.recovered();
        if k < MEDIAN_INTERVAL_FROM {
            return None;
        }
        let binomial = Binomial::new(0.5, k).expect("a probability and a count");
        let tail = (1.0 - LEVEL) / 2.0;
        let mut j = 1;
        while j < k.div_ceil(2) && binomial.cdf(j) <= tail {
            j += 1;
        }
        Some((self.ranked(j), self.ranked(k + 1 - j)))
    }

    /// The time of rank `rank` (from 1) among the recovered replications.
    fn ranked(&self, rank: u64) -> Tick {
        let mut seen = 0;
        for (&t, &n) in &self.times {
            seen += n;
            if seen >= rank {
                return t;
            }
        }
        unreachable!("a rank within the recovered replications")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = TICKS_PER_SECOND;

    /// 10 offered per second throughout; goodput 10 a second except from 40 s to `back`.
    fn run(back: u64) -> SeriesStats {
        let mut series = Series::new(Tick(S), crate::metrics::Tracks::tools(1));
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

    /// The median's interval has the coverage it claims: ranks from the binomial, checked
    /// against the published table (Conover, 1999: for 10 values, the 2nd and the 9th), and
    /// none below six.
    #[test]
    fn the_median_of_recovered_runs_has_a_distribution_free_interval() {
        let times = |values: &[u64]| {
            let mut r = Recoveries::default();
            for &v in values {
                r.replications += 1;
                *r.times.entry(Tick(v)).or_default() += 1;
            }
            r.replications += 2; // two that never recovered
            r
        };
        let r = times(&[5, 1, 9, 3, 7, 2, 8, 4, 6, 10]);
        assert_eq!(r.recovered(), 10);
        assert_eq!(
            r.median(),
            Some(Tick(5)),
            "the mean of 5 and 6, in whole ticks"
        );
        assert_eq!(r.median_interval(), Some((Tick(2), Tick(9))));
        let (share, (lo, hi)) = r.share();
        assert_eq!(share, 10.0 / 12.0);
        assert!(lo < share && share < hi && hi < 1.0);
        assert_eq!(times(&[1, 2, 3, 4, 5]).median_interval(), None);
        assert_eq!(times(&[4, 4, 4]).median(), Some(Tick(4)));
        assert_eq!(Recoveries::default().median(), None);
    }
}
