//! How long to wait before a retry.
//!
//! Before retry n (n ≥ 1) the delay grows as `d(k)` with k = n − 1 + `count_from`:
//! `initial_delay` (constant), `initial_delay · (k + 1)` (linear) or
//! `initial_delay · multiplier^k` (exponential). `count_from` is the retry counter at the first
//! failure: 0 by default (the first ceiling is `initial_delay`), 1 as the AWS architecture
//! blog's simulator counts (the first ceiling is `initial_delay · multiplier`); the two
//! conventions differ in work by about a tenth under contention.
//!
//! `max_delay` caps it (`None`: nothing does). By default the cap comes **before** jitter,
//! v = min(max_delay, d(k)), so with `none`, `full` and `equal` jitter `max_delay` is a hard
//! bound (gRPC, AWS); `cap = "after_jitter"` jitters d(k) and caps the result, as resilience4j,
//! Polly, urllib3 and tenacity do, so delays pile up at the cap. Jitter, in whole ticks:
//! `none` → v; `full` → U{0..v}; `equal` → ⌈v/2⌉ + U{0..⌊v/2⌋};
//! `proportional` → U{v·(1 − f) .. v·(1 + f)} (gRPC's ±20 %, resilience4j's
//! `randomizationFactor`, Polly's constant and linear jitter);
//! `additive` → v + U{0..jitter_max} (urllib3's `backoff_jitter`, tenacity's
//! `wait_exponential_jitter`);
//! `reduced` → v − U{0..v·f}, the delay cut by up to a share f: OpenAI's and Anthropic's
//! Python SDKs multiply theirs by 1 − 0.25·U[0, 1) (f = 0.25), Stripe's by U[0.5, 1] (f = 0.5);
//! `decorrelated` → min(max_delay, U{initial_delay .. 3·previous}) with previous =
//! initial_delay before the first retry: the formula of the AWS architecture blog ("Exponential
//! Backoff And Jitter", 2015), which replaces the growth curve altogether;
//! `decorrelated_v2` → Polly v8's `DecorrelatedJitterBackoffV2`, which replaces it too: with
//! t = n − 1 + U[0, 1) and f(t) = 2^t · tanh(√(4t)), the delay is
//! initial_delay · (f(t) − f(t')) / 1.4, t' the previous retry's t (f = 0 before the first),
//! capped at `max_delay`.
//!
//! Last, `min_delay` is a floor under the result (tenacity's `min`), and `first_retry =
//! "immediate"` makes retry 1 wait nothing while retry n ≥ 2 waits the curve at n (urllib3:
//! 0, 2f, 4f, … for a backoff factor f).

use crate::time::Tick;
use crate::variate::{integer_in, unit};

/// The growth curve of the un-jittered delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    Constant,
    Linear,
    Exponential,
}

/// The randomisation applied to the delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Jitter {
    None,
    Full,
    Equal,
    Decorrelated,
    Proportional,
    Additive,
    DecorrelatedV2,
    Reduced,
}

/// What the retry before this one drew: its delay (decorrelated jitter grows from it) and its
/// random word (Polly's formula carries its t on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Previous {
    pub delay: Tick,
    pub word: u64,
}

/// Where the cap applies: to the curve before jitter, or to the jittered delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cap {
    BeforeJitter,
    AfterJitter,
}

/// What the first retry waits: the curve, or nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstRetry {
    Backoff,
    Immediate,
}

impl Cap {
    pub const ALL: [Cap; 2] = [Cap::BeforeJitter, Cap::AfterJitter];

    pub fn name(self) -> &'static str {
        match self {
            Cap::BeforeJitter => "before_jitter",
            Cap::AfterJitter => "after_jitter",
        }
    }
}

impl FirstRetry {
    pub const ALL: [FirstRetry; 2] = [FirstRetry::Backoff, FirstRetry::Immediate];

    pub fn name(self) -> &'static str {
        match self {
            FirstRetry::Backoff => "backoff",
            FirstRetry::Immediate => "immediate",
        }
    }
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
    pub const ALL: [Jitter; 8] = [
        Jitter::None,
        Jitter::Full,
        Jitter::Equal,
        Jitter::Decorrelated,
        Jitter::Proportional,
        Jitter::Additive,
        Jitter::DecorrelatedV2,
        Jitter::Reduced,
    ];

    /// The name used in configs.
    pub fn name(self) -> &'static str {
        match self {
            Jitter::None => "none",
            Jitter::Full => "full",
            Jitter::Equal => "equal",
            Jitter::Decorrelated => "decorrelated",
            Jitter::Proportional => "proportional",
            Jitter::Additive => "additive",
            Jitter::DecorrelatedV2 => "decorrelated_v2",
            Jitter::Reduced => "reduced",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Backoff {
    pub growth: Growth,
    pub initial_delay: Tick,
    pub multiplier: f64,
    /// The cap; `None`: no cap at all.
    pub max_delay: Option<Tick>,
    pub cap: Cap,
    pub jitter: Jitter,
    /// f of `proportional` and `reduced` jitter.
    pub jitter_factor: f64,
    /// The most `additive` jitter adds.
    pub jitter_max: Tick,
    /// A floor under every delay.
    pub min_delay: Tick,
    pub first_retry: FirstRetry,
    /// The retry counter at the first failure: 0 or 1.
    pub count_from: u32,
}

impl Backoff {
    /// Retry at once: no delay at all.
    pub const IMMEDIATE: Backoff = Backoff {
        growth: Growth::Constant,
        initial_delay: Tick::ZERO,
        multiplier: 1.0,
        max_delay: Some(Tick::ZERO),
        cap: Cap::BeforeJitter,
        jitter: Jitter::None,
        jitter_factor: 0.0,
        jitter_max: Tick::ZERO,
        min_delay: Tick::ZERO,
        first_retry: FirstRetry::Backoff,
        count_from: 0,
    };

    /// Whether a delay needs a random word (the caller then reads one from the jitter stream).
    pub fn is_random(&self) -> bool {
        self.jitter != Jitter::None
    }

    /// The curve before retry `n`, uncapped, in ticks (saturating at the largest tick).
    fn grown(&self, n: u32) -> f64 {
        let initial = self.initial_delay.0 as f64;
        let k = n - 1 + self.count_from;
        match self.growth {
            Growth::Constant => initial,
            Growth::Linear => initial * (k + 1) as f64,
            Growth::Exponential => initial * libm::pow(self.multiplier, k as f64),
        }
    }

    /// The capped delay before retry `n`, before jitter.
    pub fn capped(&self, n: u32) -> Tick {
        let grown = self.grown(n);
        // Comparing in floats first keeps an overflowing curve (inf) at the cap.
        match self.max_delay {
            Some(cap) if grown >= cap.0 as f64 => cap,
            _ => to_tick(grown),
        }
    }

    /// The delay before retry `n`, given what the previous retry drew (used by the decorrelated
    /// jitters only) and one random word (unused by `none`).
    pub fn delay(&self, n: u32, previous: Previous, word: u64) -> Tick {
        if n == 1 && self.first_retry == FirstRetry::Immediate {
            return Tick::ZERO;
        }
        let cap = self.max_delay.unwrap_or(Tick::MAX);
        let jittered = match self.jitter {
            Jitter::Decorrelated => {
                let lo = self.initial_delay.0;
                let prev = if n == 1 { lo } else { previous.delay.0.max(lo) };
                let hi = prev.saturating_mul(3);
                Tick(integer_in(word, lo, hi).min(cap.0))
            }
            Jitter::DecorrelatedV2 => {
                let f = |retry: u32, word: u64| {
                    let t = f64::from(retry - 1) + unit(word);
                    libm::exp2(t) * libm::tanh(libm::sqrt(4.0 * t))
                };
                let before = if n == 1 { 0.0 } else { f(n - 1, previous.word) };
                let spread = (f(n, word) - before).max(0.0) / 1.4;
                to_tick(spread * self.initial_delay.0 as f64).min(cap)
            }
            _ => {
                let v = match self.cap {
                    Cap::BeforeJitter => self.capped(n),
                    Cap::AfterJitter => to_tick(self.grown(n)),
                };
                let j = self.jitter_of(v, word);
                match self.cap {
                    Cap::BeforeJitter => j,
                    Cap::AfterJitter => j.min(cap),
                }
            }
        };
        jittered.max(self.min_delay)
    }

    /// E\[e^(−rate·delay)\] for the delay before retry `n` as [`Backoff::delay`] draws it, where
    /// the delay is drawn afresh each time (not the decorrelated jitters, which grow from the
    /// previous one): a whole tick uniform in the jitter's range, capped after the jitter where
    /// the cap is, floored at `min_delay`. What a backoff leaves of a state that decays at `rate`
    /// per tick (the burst forms, [`crate::theory::burst`]).
    pub fn decay(&self, n: u32, rate: f64) -> Option<f64> {
        if n == 1 && self.first_retry == FirstRetry::Immediate {
            return Some(1.0);
        }
        let v = match self.cap {
            Cap::BeforeJitter => self.capped(n),
            Cap::AfterJitter => to_tick(self.grown(n)),
        }
        .0;
        let (lo, hi) = match self.jitter {
            Jitter::Decorrelated | Jitter::DecorrelatedV2 => return None,
            Jitter::None => (v, v),
            Jitter::Full => (0, v),
            Jitter::Equal => (v - v / 2, v - v / 2 + v / 2),
            Jitter::Proportional => (
                to_tick(v as f64 * (1.0 - self.jitter_factor)).0,
                to_tick(v as f64 * (1.0 + self.jitter_factor)).0,
            ),
            Jitter::Additive => (v, v.saturating_add(self.jitter_max.0)),
            Jitter::Reduced => (v - to_tick(v as f64 * self.jitter_factor).0.min(v), v),
        };
        let ceiling = match self.cap {
            Cap::AfterJitter => self.max_delay.map_or(u64::MAX, |c| c.0),
            Cap::BeforeJitter => u64::MAX,
        };
        // A drawn j is max(min(j, ceiling), floor): those at or above the ceiling wait it,
        // those at or below the floor wait the floor, the rest wait j.
        let floor = self.min_delay.0;
        let count = |from: u64, to: u64| if from > to { 0 } else { to - from + 1 };
        let all = (hi - lo) as f64 + 1.0;
        let high = count(lo.max(ceiling), hi);
        let low = count(lo, floor.min(hi).min(ceiling.saturating_sub(1)));
        let (mid_lo, mid_hi) = (
            lo.max(floor.saturating_add(1)),
            hi.min(ceiling.saturating_sub(1)),
        );
        let mid = count(mid_lo, mid_hi);
        let at = |t: u64| libm::exp(-rate * t as f64);
        let mut sum = high as f64 * at(ceiling.max(floor)) + low as f64 * at(floor);
        if mid > 0 {
            sum += mid as f64 * crate::model::latency::uniform_decay(mid_lo, mid_hi, rate);
        }
        Some(sum / all)
    }

    /// `v` with the jitter applied (not `decorrelated`, which has its own rule).
    fn jitter_of(&self, v: Tick, word: u64) -> Tick {
        match self.jitter {
            Jitter::None | Jitter::Decorrelated | Jitter::DecorrelatedV2 => v,
            Jitter::Full => Tick(integer_in(word, 0, v.0)),
            Jitter::Equal => Tick(v.0 - v.0 / 2 + integer_in(word, 0, v.0 / 2)),
            Jitter::Proportional => {
                let x = v.0 as f64;
                let (lo, hi) = (
                    to_tick(x * (1.0 - self.jitter_factor)),
                    to_tick(x * (1.0 + self.jitter_factor)),
                );
                Tick(integer_in(word, lo.0, hi.0))
            }
            Jitter::Additive => Tick(v.0.saturating_add(integer_in(word, 0, self.jitter_max.0))),
            // v · (1 − f·U), as the SDKs write it: a larger word cuts more.
            Jitter::Reduced => {
                let cut = to_tick(v.0 as f64 * self.jitter_factor);
                Tick(v.0 - integer_in(word, 0, cut.0.min(v.0)))
            }
        }
    }
}

/// A delay in ticks, rounded to the nearest and held at the largest tick.
fn to_tick(x: f64) -> Tick {
    if x >= u64::MAX as f64 {
        Tick::MAX
    } else {
        Tick(libm::round(x) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams, word};

    /// `decay` is the mean of e^(−r·delay) over the delays `delay` draws from 2¹⁶ evenly spaced
    /// words, for every jitter drawn afresh, with a floor and a cap after the jitter, the first
    /// retry sent at once, and the counter starting at 1.
    #[test]
    fn decay_is_the_mean_over_every_delay_drawn() {
        let rate = 0.013;
        for jitter in [
            Jitter::None,
            Jitter::Full,
            Jitter::Equal,
            Jitter::Proportional,
            Jitter::Additive,
            Jitter::Reduced,
        ] {
            for (cap, floor, first_retry, count_from) in [
                (Cap::BeforeJitter, 0, FirstRetry::Backoff, 0),
                (Cap::AfterJitter, 7, FirstRetry::Backoff, 0),
                (Cap::AfterJitter, 90, FirstRetry::Backoff, 0),
                (Cap::BeforeJitter, 0, FirstRetry::Immediate, 1),
            ] {
                let b = Backoff {
                    growth: Growth::Exponential,
                    initial_delay: Tick(10),
                    multiplier: 2.0,
                    max_delay: Some(Tick(70)),
                    cap,
                    jitter,
                    jitter_factor: 0.4,
                    jitter_max: Tick(25),
                    min_delay: Tick(floor),
                    first_retry,
                    count_from,
                };
                for n in 1..6 {
                    // Every word the jitter's range can draw from, by value.
                    let (lo, hi) = (0..=u16::MAX)
                        .map(|i| b.delay(n, Previous::default(), u64::from(i) << 48))
                        .fold((Tick::MAX, Tick::ZERO), |(l, h), d| (l.min(d), h.max(d)));
                    let span = 1u128 << 16;
                    let mean = (0..span)
                        .map(|i| {
                            let d = b.delay(n, Previous::default(), (i << 48) as u64);
                            libm::exp(-rate * d.0 as f64)
                        })
                        .sum::<f64>()
                        / span as f64;
                    let got = b.decay(n, rate).unwrap();
                    // 2¹⁶ evenly spaced words draw each value of a range of under 200 within
                    // one word of its share: 200/2¹⁶ of the mean at most.
                    assert!(
                        (got - mean).abs() < 4e-3 * mean.max(1e-9),
                        "{jitter:?} {cap:?} floor {floor} {first_retry:?} n {n}: {got} vs {mean} ({lo}–{hi})"
                    );
                }
            }
        }
    }

    fn backoff(growth: Growth, jitter: Jitter) -> Backoff {
        Backoff {
            growth,
            initial_delay: Tick(100),
            multiplier: 2.0,
            max_delay: Some(Tick(1_000)),
            jitter,
            count_from: 0,
            ..Backoff::IMMEDIATE
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
                    let d = b.delay(
                        n,
                        Previous {
                            delay: previous,
                            word: 0,
                        },
                        word(&mut rng),
                    );
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

    /// The OpenAI and Anthropic Python SDKs wait min(0.5 s · 2^k, 8 s) · (1 − 0.25·U[0, 1))
    /// before retry k + 1 (`_calculate_retry_timeout`): 0.375–0.5 s, 0.75–1 s, 1.5–2 s, 3–4 s,
    /// then 6–8 s. `reduced` jitter at its default share, with their curve, gives those ranges
    /// (whole ticks, both ends included), and the delay the SDK computes for a given U.
    #[test]
    fn reduced_jitter_is_the_sdks_delay() {
        let sdk = Backoff {
            growth: Growth::Exponential,
            initial_delay: Tick::from_millis(500),
            multiplier: 2.0,
            max_delay: Some(Tick::from_secs(8)),
            jitter: Jitter::Reduced,
            jitter_factor: 0.25,
            ..Backoff::IMMEDIATE
        };
        let ranges: Vec<(f64, f64)> = (1..=6)
            .map(|n| {
                // U = 0 waits the whole curve; U near 1 cuts a quarter.
                let at = |word| sdk.delay(n, Previous::default(), word).seconds();
                (at(0), at(u64::MAX))
            })
            .collect();
        assert_eq!(
            ranges,
            [
                (0.5, 0.375),
                (1.0, 0.75),
                (2.0, 1.5),
                (4.0, 3.0),
                (8.0, 6.0),
                (8.0, 6.0)
            ]
        );
        for (n, u) in [(1, 0.1), (3, 0.5), (5, 0.9)] {
            let word = (u * 2f64.powi(64)) as u64;
            let sdk_delay = (0.5 * 2f64.powi(n - 1)).min(8.0) * (1.0 - 0.25 * u);
            let ours = sdk.delay(n as u32, Previous::default(), word).seconds();
            assert!(
                (ours - sdk_delay).abs() <= 1e-6,
                "retry {n}: {ours} against {sdk_delay}"
            );
        }
    }

    #[test]
    fn no_jitter_needs_no_random_word() {
        assert!(!backoff(Growth::Exponential, Jitter::None).is_random());
        let previous = Previous {
            delay: Tick(5),
            word: 1,
        };
        assert_eq!(Backoff::IMMEDIATE.delay(7, previous, 12345), Tick::ZERO);
    }
}
