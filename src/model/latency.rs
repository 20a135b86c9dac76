//! Latency distributions, sampled by formulas written here so that a sample depends only on its
//! random words: `libm` keeps the floating-point functions identical on every platform, and the
//! result is rounded to the nearest tick.

use crate::engine::rng::{integer_in, unit_open_low};
use crate::time::Tick;

/// How long one leg of an attempt takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Latency {
    Constant(Tick),
    /// Every whole tick in `min..=max` equally likely.
    Uniform {
        min: Tick,
        max: Tick,
    },
    /// Memoryless, with the given mean in ticks: −mean · ln(U).
    Exponential {
        mean: f64,
    },
    /// exp(μ + σZ) with μ = ln(median): Z standard normal by the Box–Muller transform.
    LogNormal {
        median: f64,
        sigma: f64,
    },
}

impl Latency {
    /// Draws one duration from one random word.
    pub fn sample(&self, word: u64) -> Tick {
        let ticks = match *self {
            Latency::Constant(t) => return t,
            Latency::Uniform { min, max } => return Tick(integer_in(word, min.0, max.0)),
            Latency::Exponential { mean } => -mean * libm::log(unit_open_low(word)),
            Latency::LogNormal { median, sigma } => {
                // Box–Muller on the word's two 32-bit halves: Z is exact in distribution up to
                // |Z| ≈ 6.7, where 32-bit uniforms run out, far in the tail of any latency.
                let (high, low) = (word >> 32, word & 0xFFFF_FFFF);
                let u1 = (high + 1) as f64 / (1u64 << 32) as f64;
                let u2 = low as f64 / (1u64 << 32) as f64;
                let radius = libm::sqrt(-2.0 * libm::log(u1));
                median * libm::exp(sigma * radius * libm::cos(std::f64::consts::TAU * u2))
            }
        };
        // `as` saturates, so an astronomically long sample becomes the end of time, not garbage.
        Tick(libm::round(ticks) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams, word};

    /// The closed-form mean in ticks (before rounding to whole ticks).
    fn mean(latency: Latency) -> f64 {
        match latency {
            Latency::Constant(t) => t.0 as f64,
            Latency::Uniform { min, max } => (min.0 as f64 + max.0 as f64) / 2.0,
            Latency::Exponential { mean } => mean,
            Latency::LogNormal { median, sigma } => median * libm::exp(sigma * sigma / 2.0),
        }
    }

    fn sample_mean(latency: Latency, n: usize) -> (f64, f64) {
        let mut rng = Streams {
            seed: 1,
            point: 0,
            replication: 0,
        }
        .stream(Source::Faults, 0);
        let (mut sum, mut sum_sq) = (0.0, 0.0);
        for _ in 0..n {
            let x = latency.sample(word(&mut rng)).0 as f64;
            sum += x;
            sum_sq += x * x;
        }
        let mean = sum / n as f64;
        let var = (sum_sq / n as f64 - mean * mean) * n as f64 / (n - 1) as f64;
        (mean, (var / n as f64).sqrt())
    }

    /// Each sampler's mean lies within 4 standard errors of its closed form (fixed seed; the
    /// chance of a correct sampler failing this is about 6 in 100 000).
    #[test]
    fn sample_means_match_closed_forms() {
        for latency in [
            Latency::Uniform {
                min: Tick(100),
                max: Tick(300),
            },
            Latency::Exponential { mean: 5_000.0 },
            Latency::LogNormal {
                median: 5_000.0,
                sigma: 0.5,
            },
        ] {
            let (sample, se) = sample_mean(latency, 200_000);
            assert!(
                (sample - mean(latency)).abs() < 4.0 * se + 0.5,
                "{latency:?}: {sample} vs {}",
                mean(latency)
            );
        }
        assert_eq!(Latency::Constant(Tick(7)).sample(12), Tick(7));
    }

    #[test]
    fn uniform_reaches_both_ends() {
        let l = Latency::Uniform {
            min: Tick(3),
            max: Tick(5),
        };
        assert_eq!(l.sample(0), Tick(3));
        assert_eq!(l.sample(u64::MAX), Tick(5));
    }
}
