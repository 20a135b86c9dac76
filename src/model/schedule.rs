//! An arrival rate that changes over time: points of (time, rate), the rate held until the
//! next point (a step) or moving linearly to it (a ramp). A spike is three points: the base
//! rate, the spike's rate, the base rate again.
//!
//! Arrivals follow a non-homogeneous Poisson process with this rate, sampled exactly by
//! inverting the integrated rate Λ: from an arrival at `t`, the next comes at the `t′` where
//! Λ(t′) − Λ(t) equals a fresh Exp(1) draw. Within one segment the rate is r + s·x, so
//! Λ is a quadratic and the root has a closed form; one random word per arrival, as the
//! constant-rate stream uses.

use crate::time::{TICKS_PER_SECOND, Tick};

/// One point of a schedule.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RatePoint {
    pub at: Tick,
    /// Arrivals per second from `at`.
    pub per_second: f64,
    /// Whether the rate moves linearly to the next point's rather than holding.
    pub ramp: bool,
}

/// A rate over time, from tick 0 on; the last point's rate holds for ever. Every rate is
/// multiplied by `scale`, so one number moves the whole schedule, spike and all (a load axis).
#[derive(Clone, Debug, PartialEq)]
pub struct RateSchedule {
    points: Vec<RatePoint>,
    scale: f64,
}

impl RateSchedule {
    /// A schedule from points validated as such: the first at tick 0, each later than the one
    /// before, rates finite and non-negative, no ramp on the last; and a positive scale.
    pub fn new(points: Vec<RatePoint>, scale: f64) -> Self {
        assert!(points.first().is_some_and(|p| p.at == Tick::ZERO));
        assert!(points.windows(2).all(|w| w[0].at < w[1].at));
        assert!(points.last().is_some_and(|p| !p.ramp));
        RateSchedule { points, scale }
    }

    /// The points as written, before the scale.
    pub fn points(&self) -> &[RatePoint] {
        &self.points
    }

    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Segment `i`: where it starts and ends (in ticks; the last never ends), its rate at the
    /// start and its slope, both per tick.
    fn segment(&self, i: usize) -> (f64, f64, f64, f64) {
        let p = self.points[i];
        let start = p.at.0 as f64;
        let per_tick = self.scale / TICKS_PER_SECOND as f64;
        let rate = p.per_second * per_tick;
        match self.points.get(i + 1) {
            None => (start, f64::INFINITY, rate, 0.0),
            Some(next) => {
                let end = next.at.0 as f64;
                let slope = if p.ramp {
                    (next.per_second * per_tick - rate) / (end - start)
                } else {
                    0.0
                };
                (start, end, rate, slope)
            }
        }
    }

    /// The rate at tick `t`, per second.
    pub fn rate_at(&self, t: f64) -> f64 {
        let i = self.index_at(t);
        let (start, _, rate, slope) = self.segment(i);
        (rate + slope * (t - start)) * TICKS_PER_SECOND as f64
    }

    /// The expected arrivals between ticks `from` and `to`.
    pub fn expected(&self, from: f64, to: f64) -> f64 {
        let mut total = 0.0;
        for i in self.index_at(from)..self.points.len() {
            let (start, end, rate, slope) = self.segment(i);
            let (a, b) = (from.max(start), to.min(end));
            if a >= b {
                break;
            }
            let at_a = rate + slope * (a - start);
            total += at_a * (b - a) + slope / 2.0 * (b - a) * (b - a);
        }
        total
    }

    /// The next arrival after one at tick `from` (an exact time, not yet rounded to a tick),
    /// given an Exp(1) draw `e`; `None` if the rate is zero from there on.
    pub fn next(&self, from: f64, mut e: f64) -> Option<f64> {
        for i in self.index_at(from)..self.points.len() {
            let (start, end, rate, slope) = self.segment(i);
            let a = from.max(start);
            let r = rate + slope * (a - start);
            let mass = if end.is_infinite() {
                if r > 0.0 { f64::INFINITY } else { 0.0 }
            } else {
                r * (end - a) + slope / 2.0 * (end - a) * (end - a)
            };
            if e <= mass {
                // The root of (s/2)·x² + r·x = e, written to stay exact when s is 0 or small.
                let x = 2.0 * e / (r + (r * r + 2.0 * slope * e).max(0.0).sqrt());
                return Some((a + x).min(end));
            }
            e -= mass;
        }
        None
    }

    /// Where the rate is above its starting rate: from the first point that rises above it to
    /// the first point after that at or below it (or the end of time, which never comes).
    pub fn above_start(&self) -> Option<(Tick, Tick)> {
        let base = self.points[0].per_second;
        // Segment i rises above the base somewhere (a ramp always has a next point).
        let above = |i: &usize| {
            let p = self.points[*i];
            p.per_second > base || (p.ramp && self.points[i + 1].per_second > base)
        };
        let n = self.points.len();
        let rise = (0..n).find(above)?;
        let fall = (rise + 1..n).find(|i| !above(i));
        Some((
            self.points[rise].at,
            fall.map_or(Tick::MAX, |i| self.points[i].at),
        ))
    }

    /// The segment holding tick `t`.
    fn index_at(&self, t: f64) -> usize {
        self.points
            .partition_point(|p| p.at.0 as f64 <= t)
            .saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(at_s: u64, per_second: f64, ramp: bool) -> RatePoint {
        RatePoint {
            at: Tick(at_s * TICKS_PER_SECOND),
            per_second,
            ramp,
        }
    }

    const S: f64 = TICKS_PER_SECOND as f64;

    #[test]
    fn a_step_holds_and_a_ramp_moves_linearly() {
        let s = RateSchedule::new(
            vec![
                point(0, 10.0, false),
                point(10, 40.0, true),
                point(20, 0.0, false),
            ],
            1.0,
        );
        assert_eq!(s.rate_at(5.0 * S), 10.0);
        assert_eq!(s.rate_at(10.0 * S), 40.0);
        assert!((s.rate_at(15.0 * S) - 20.0).abs() < 1e-9);
        assert_eq!(s.rate_at(25.0 * S), 0.0);
        assert!((s.expected(0.0, 20.0 * S) - (100.0 + 200.0)).abs() < 1e-6);
        // Above the starting 10/s from the ramp's start at 10 s to its end at 20 s.
        assert_eq!(
            s.above_start(),
            Some((Tick(10 * TICKS_PER_SECOND), Tick(20 * TICKS_PER_SECOND)))
        );
        let spike = RateSchedule::new(
            vec![
                point(0, 10.0, false),
                point(30, 20.0, false),
                point(35, 10.0, false),
            ],
            1.0,
        );
        let expected = (Tick(30 * TICKS_PER_SECOND), Tick(35 * TICKS_PER_SECOND));
        assert_eq!(spike.above_start(), Some(expected));
        let flat = RateSchedule::new(vec![point(0, 10.0, false)], 1.0);
        assert_eq!(flat.above_start(), None);
        // The scale moves every rate, and no time.
        let half = RateSchedule::new(spike.points().to_vec(), 0.5);
        assert_eq!(half.rate_at(32.0 * S), 10.0);
        assert_eq!(half.above_start(), Some(expected));
    }

    /// Inverting Λ: the next arrival lands where the expected count since the last one is the
    /// draw, across segment ends and up and down ramps alike.
    #[test]
    fn the_next_arrival_is_where_the_expected_count_reaches_the_draw() {
        let s = RateSchedule::new(
            vec![
                point(0, 2.0, true),
                point(10, 50.0, true),
                point(20, 5.0, false),
                point(30, 0.0, false),
            ],
            1.3,
        );
        for from in [0.0, 3.5 * S, 9.9 * S, 12.0 * S, 19.0 * S, 25.0 * S] {
            for e in [1e-6, 0.3, 1.0, 7.0, 40.0, 200.0] {
                let total = s.expected(from, 30.0 * S);
                match s.next(from, e) {
                    Some(t) => {
                        assert!(t >= from);
                        let got = s.expected(from, t);
                        assert!((got - e).abs() < 1e-6 * e.max(1.0), "{from} {e}: {got}");
                    }
                    None => assert!(e > total - 1e-9, "{from} {e}: {total}"),
                }
            }
        }
    }

    /// A constant rate gives the constant-rate stream's gaps: −ln(U)/λ.
    #[test]
    fn a_constant_rate_gives_exponential_gaps() {
        let s = RateSchedule::new(vec![point(0, 4.0, false)], 1.0);
        let t = s.next(2.0 * S, 1.5).unwrap();
        assert!((t - (2.0 * S + 1.5 / 4.0 * S)).abs() < 1e-6);
    }
}
