//! How long to wait before a retry.
//!
//! Before retry n (n ≥ 1) the capped delay is
//! `v = min(max_delay, d(k))` with k = n − 1 + `count_from` and `d(k) = initial_delay`
//! (constant), `initial_delay · (k + 1)` (linear) or `initial_delay · multiplier^k`
//! (exponential). `count_from` is the retry counter at the first failure: 0 by default (the
//! first ceiling is `initial_delay`), 1 as the AWS architecture blog's simulator counts (the
//! first ceiling is `initial_delay · multiplier`); the two conventions differ in work by about a
//! tenth under contention. The cap is applied **before** jitter, so `max_delay` is a hard
//! bound. Jitter then gives, in whole ticks:
//! `none` → v; `full` → U{0..v}; `equal` → ⌈v/2⌉ + U{0..⌊v/2⌋};
//! `decorrelated` → min(max_delay, U{initial_delay .. 3·previous}) with previous = initial_delay
//! before the first retry (this rule replaces the growth curve altogether).

use crate::time::Tick;
use crate::variate::integer_in;

/// The growth curve of the un-jittered delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    Constant,
    Linear,
    Exponential,
}

/// The randomisation applied to the capped delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
}

impl Growth {
    pub const ALL: [Growth; 3] = [Growth::Constant, Growth::Linear, Growth::Exponential];

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Growth::Constant => "constant",
            Growth::Linear => "linear",
            Growth::Exponential => "exponential",
        }
    }
}

impl Jitter {
    pub const ALL: [Jitter; 4] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
    ];

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub growth: Growth,
    pub initial_delay: Tick,
    pub multiplier: f64,
    pub max_delay: Tick,
    pub jitter: Jitter,
    /// The retry counter at the first failure: 0 or 1.
    pub count_from: u32,
}

impl Backoff {
    /// Retry at once: no delay at all.
    pub const IMMEDIATE: Backoff = Backoff {
        growth: Growth::Constant,
        initial_delay: Tick::ZERO,
        multiplier: 1.0,
        max_delay: Tick::ZERO,
        jitter: Jitter::None,
        count_from: 0,
    };

    /// Whether a delay needs a random word (the caller then reads one from the jitter stream).
    pub fn is_random(&self) -> bool {
        self.jitter != Jitter::None
    }

    /// The capped delay before retry `n`, before jitter.
    pub fn capped(&self, n: u32) -> Tick {
        let initial = self.initial_delay.0 as f64;
        let k = n - 1 + self.count_from;
        let grown = match self.growth {
            Growth::Constant => initial,
            Growth::Linear => initial * (k + 1) as f64,
            Growth::Exponential => initial * libm::pow(self.multiplier, k as f64),
        };
        // Comparing in floats first keeps an overflowing curve (inf) at the cap.
        if grown >= self.max_delay.0 as f64 {
            self.max_delay
        } else {
            Tick(libm::round(grown) as u64)
        }
    }

    /// The delay before retry `n`, given the delay before the previous retry (unused except by
    /// `decorrelated`) and one random word (unused by `none`).
    pub fn delay(&self, n: u32, previous: Tick, word: u64) -> Tick {
        match self.jitter {
            Jitter::None => self.capped(n),
            Jitter::Full => Tick(integer_in(word, 0, self.capped(n).0)),
            Jitter::Equal => {
                let v = self.capped(n).0;
                Tick(v - v / 2 + integer_in(word, 0, v / 2))
            }
            Jitter::Decorrelated => {
                let lo = self.initial_delay.0;
                let prev = if n == 1 { lo } else { previous.0.max(lo) };
                let hi = prev.saturating_mul(3);
                Tick(integer_in(word, lo, hi).min(self.max_delay.0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams, word};

    fn backoff(growth: Growth, jitter: Jitter) -> Backoff {
        Backoff {
            growth,
            initial_delay: Tick(100),
            multiplier: 2.0,
            max_delay: Tick(1_000),
            jitter,
            count_from: 0,
        }
    }

    #[test]
    fn growth_curves_are_capped() {
        let exp = backoff(Growth::Exponential, Jitter::None);
        let delays: Vec<u64> = (1..=6).map(|n| exp.capped(n).0).collect();
        assert_eq!(delays, [100, 200, 400, 800, 1_000, 1_000]);
        assert_eq!(
            exp.capped(5_000),
            Tick(1_000),
            "an overflowing curve stays at the cap"
        );
        let lin = backoff(Growth::Linear, Jitter::None);
        assert_eq!(
            (1..=4).map(|n| lin.capped(n).0).collect::<Vec<_>>(),
            [100, 200, 300, 400]
        );
        assert_eq!(backoff(Growth::Constant, Jitter::None).capped(9), Tick(100));
        // Counting from 1, every ceiling moves one step on.
        let from_one = Backoff {
            count_from: 1,
            ..exp
        };
        let delays: Vec<u64> = (1..=5).map(|n| from_one.capped(n).0).collect();
        assert_eq!(delays, [200, 400, 800, 1_000, 1_000]);
    }

    /// Every jittered delay stays inside its formula's range, and the ranges are really used:
    /// over 20 000 draws both ends of each range are approached within 1 %.
    #[test]
    fn jitter_stays_in_its_range_and_fills_it() {
        let mut rng = Streams {
            seed: 3,
            point: 0,
            replication: 0,
        }
        .stream(Source::Jitter, 0);
        for n in 1..=6u32 {
            let v = backoff(Growth::Exponential, Jitter::None).capped(n).0;
            let cases = [
                (Jitter::Full, 0, v),
                (Jitter::Equal, v - v / 2, v),
                (Jitter::Decorrelated, 100, if n == 1 { 300 } else { 1_000 }),
            ];
            for (jitter, lo, hi) in cases {
                let b = backoff(Growth::Exponential, jitter);
                let (mut min, mut max) = (u64::MAX, 0);
                let mut previous = Tick(100);
                for _ in 0..20_000 {
                    let d = b.delay(n, previous, word(&mut rng));
                    assert!((lo..=hi).contains(&d.0), "{jitter:?} retry {n}: {d:?}");
                    if jitter == Jitter::Decorrelated {
                        assert!(d.0 <= 3 * previous.0.max(100));
                        previous = d;
                    }
                    min = min.min(d.0);
                    max = max.max(d.0);
                }
                let slack = (hi - lo) / 100;
                assert!(
                    min <= lo + slack && max + slack >= hi,
                    "{jitter:?}: {min}..{max}"
                );
            }
        }
    }

    #[test]
    fn no_jitter_needs_no_random_word() {
        assert!(!backoff(Growth::Exponential, Jitter::None).is_random());
        assert_eq!(Backoff::IMMEDIATE.delay(7, Tick(5), 12345), Tick::ZERO);
    }
}
