//! Latency distributions, sampled by formulas written here so that a sample depends only on its
//! random word: `libm` keeps the floating-point functions identical on every platform, and the
//! result is rounded to the nearest tick. Each distribution also answers the questions a
//! timeout asks of it — the chance a sample exceeds a tick, its quantiles, its maximum — for the
//! rounded samples it actually produces.

use std::sync::Arc;

use statrs::distribution::{ContinuousCDF, Gamma};

use crate::time::Tick;
use crate::variate::{integer_in, unit_open, unit_open_low};

/// How long one leg of an attempt takes.
#[derive(Clone, Debug, PartialEq)]
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
    /// Shape k and scale θ in ticks (mean kθ), sampled by inverting its distribution function
    /// through a table built once (see [`GammaQuantiles`]).
    Gamma(GammaQuantiles),
    /// Shape k and scale λ in ticks: λ(−ln U)^(1/k).
    Weibull {
        shape: f64,
        scale: f64,
    },
    /// Measured latencies, each drawn with equal chance (resampling).
    Empirical(Empirical),
    /// |μ + σZ|, Z standard normal by the Box–Muller transform: the network delay the
    /// published contention studies draw for every message.
    FoldedNormal {
        mean: f64,
        sd: f64,
    },
}

/// Latencies read from a file, sorted.
#[derive(Clone, Debug, PartialEq)]
pub struct Empirical {
    /// The file as the config names it, relative to the config.
    pub file: String,
    /// Never empty in a config that runs: only a manifest read back names a file without its
    /// samples.
    pub samples: Arc<[Tick]>,
}

impl Empirical {
    /// The file named, its samples not read: for a manifest read back, never for a run.
    pub fn named(file: &str) -> Empirical {
        Empirical {
            file: file.to_string(),
            samples: Arc::new([]),
        }
    }
}

impl Latency {
    /// Draws one duration from one random word.
    pub fn sample(&self, word: u64) -> Tick {
        let ticks = match self {
            Latency::Constant(t) => return *t,
            Latency::Uniform { min, max } => return Tick(integer_in(word, min.0, max.0)),
            Latency::Empirical(e) => {
                return e.samples[integer_in(word, 0, e.samples.len() as u64 - 1) as usize];
            }
            Latency::Exponential { mean } => -mean * libm::log(unit_open_low(word)),
            Latency::LogNormal { median, sigma } => {
                let (radius, cosine) = normal(word);
                median * libm::exp(sigma * radius * cosine)
            }
            Latency::FoldedNormal { mean, sd } => {
                let (radius, cosine) = normal(word);
                (mean + sd * radius * cosine).abs()
            }
            Latency::Gamma(g) => {
                // The open unit interval: neither 0 nor 1 has a finite quantile to return.
                g.scale * g.standard_quantile(unit_open(word))
            }
            Latency::Weibull { shape, scale } => {
                scale * libm::pow(-libm::log(unit_open_low(word)), 1.0 / shape)
            }
        };
        // `as` saturates, so an astronomically long sample becomes the end of time, not garbage.
        Tick(libm::round(ticks) as u64)
    }

    /// P(sample > t), for the samples as drawn (rounded to whole ticks).
    pub fn exceeds(&self, t: Tick) -> f64 {
        // A continuous X rounds above t exactly when X ≥ t + ½.
        let x = t.0 as f64 + 0.5;
        match self {
            Latency::Constant(c) => f64::from(u8::from(*c > t)),
            Latency::Uniform { min, max } => {
                let n = max.0 - min.0 + 1;
                let above = if t < *min {
                    n
                } else {
                    max.0.saturating_sub(t.0)
                };
                above as f64 / n as f64
            }
            Latency::Empirical(e) => {
                let above = e.samples.len() - e.samples.partition_point(|&s| s <= t);
                above as f64 / e.samples.len() as f64
            }
            Latency::Exponential { mean } => libm::exp(-x / mean),
            Latency::LogNormal { median, sigma } => {
                0.5 * libm::erfc(libm::log(x / median) / (sigma * std::f64::consts::SQRT_2))
            }
            Latency::Gamma(g) => standard_gamma(g.shape).sf(x / g.scale),
            Latency::Weibull { shape, scale } => libm::exp(-libm::pow(x / scale, *shape)),
            Latency::FoldedNormal { mean, sd } => folded_exceeds(*mean, *sd, x),
        }
    }

    /// E\[e^(−rate·X)\] for the samples X as drawn (whole ticks), where it has a closed form:
    /// what a gap of this latency leaves of a state that decays at `rate` per tick (the burst
    /// forms, [`crate::theory::burst`]). An exponential X rounds to k with probability
    /// e^(−k/m)·(e^(h) − e^(−h)) for k ≥ 1, h = 1/(2m), and to 0 with 1 − e^(−h).
    pub fn decay(&self, rate: f64) -> Option<f64> {
        match self {
            Latency::Constant(c) => Some(libm::exp(-rate * c.0 as f64)),
            Latency::Uniform { min, max } => Some(uniform_decay(min.0, max.0, rate)),
            // A file named but not read (a manifest's) has no samples, and no mean.
            Latency::Empirical(e) if e.samples.is_empty() => None,
            Latency::Empirical(e) => Some(
                (e.samples.iter())
                    .map(|s| libm::exp(-rate * s.0 as f64))
                    .sum::<f64>()
                    / e.samples.len() as f64,
            ),
            Latency::Exponential { mean } if *mean > 0.0 => {
                let h = 0.5 / mean;
                let rho = libm::exp(-(rate + 1.0 / mean));
                Some(-libm::expm1(-h) + (libm::exp(h) - libm::exp(-h)) * rho / (1.0 - rho))
            }
            Latency::Exponential { .. } => Some(1.0),
            _ => None,
        }
    }

    /// The p-quantile of the samples as drawn: the least whole tick t with P(sample ≤ t) ≥ p
    /// (0 for a file named but not read, which no run meets).
    pub fn quantile(&self, p: f64) -> Tick {
        // For a continuous X: the least t with P(X < t + ½) ≥ p, i.e. ⌈q(p) − ½⌉.
        let continuous = |q: f64| Tick(libm::ceil(q - 0.5).max(0.0) as u64);
        match self {
            Latency::Constant(c) => *c,
            Latency::Uniform { min, max } => {
                let n = max.0 - min.0 + 1;
                let rank = libm::ceil(p * n as f64).max(1.0) as u64;
                Tick(min.0 + rank.min(n) - 1)
            }
            Latency::Empirical(e) if e.samples.is_empty() => Tick::ZERO,
            Latency::Empirical(e) => {
                let n = e.samples.len();
                let rank = (libm::ceil(p * n as f64) as usize).clamp(1, n);
                e.samples[rank - 1]
            }
            Latency::Exponential { mean } => continuous(-mean * libm::log(1.0 - p)),
            Latency::LogNormal { median, sigma } => {
                let z = statrs::function::erf::erfc_inv(2.0 * p) * -std::f64::consts::SQRT_2;
                continuous(median * libm::exp(sigma * z))
            }
            Latency::Gamma(g) => continuous(g.scale * standard_gamma(g.shape).inverse_cdf(p)),
            Latency::Weibull { shape, scale } => {
                continuous(scale * libm::pow(-libm::log(1.0 - p), 1.0 / shape))
            }
            Latency::FoldedNormal { mean, sd } => {
                // P(|X| > x) falls as x grows: bisect for the x it crosses 1 − p at.
                let (mut lo, mut hi) = (0.0, mean.abs() + 40.0 * sd);
                for _ in 0..200 {
                    let mid = (lo + hi) / 2.0;
                    if folded_exceeds(*mean, *sd, mid) > 1.0 - p {
                        lo = mid;
                    } else {
                        hi = mid;
                    }
                }
                continuous(hi)
            }
        }
    }

    /// The longest sample, for distributions that have one (0 for a file named but not read).
    pub fn max(&self) -> Option<Tick> {
        match self {
            Latency::Constant(c) => Some(*c),
            Latency::Uniform { max, .. } => Some(*max),
            Latency::Empirical(e) => Some(e.samples.last().copied().unwrap_or(Tick::ZERO)),
            _ => None,
        }
    }
}

/// A standard normal from one word, as its two factors (the product is Z): Box–Muller on the
/// word's two 32-bit halves, exact in distribution up to |Z| ≈ 6.7, where 32-bit uniforms run
/// out, far in the tail of any latency.
fn normal(word: u64) -> (f64, f64) {
    let (high, low) = (word >> 32, word & 0xFFFF_FFFF);
    let u1 = (high + 1) as f64 / (1u64 << 32) as f64;
    let u2 = low as f64 / (1u64 << 32) as f64;
    (
        libm::sqrt(-2.0 * libm::log(u1)),
        libm::cos(std::f64::consts::TAU * u2),
    )
}

/// P(|μ + σZ| > x) for x ≥ 0: the normal's mass above x and below −x.
fn folded_exceeds(mean: f64, sd: f64, x: f64) -> f64 {
    let tail = |z: f64| 0.5 * libm::erfc(z / std::f64::consts::SQRT_2);
    tail((x - mean) / sd) + tail((x + mean) / sd)
}

/// A gamma latency with the quantiles of its standard form tabled once, so a draw costs a
/// lookup and an interpolation instead of a numerical inversion of the distribution function
/// (about 3 µs with statrs), and still reads one word. The table holds the quantiles at
/// `i / CELLS`; within the outer `EXACT` cells at either end, where the quantile function bends
/// too sharply to interpolate, draws are inverted exactly. In between, linear interpolation is
/// within 1e-4 of the exact quantile, relative, or a millionth of the mean (tested): well
/// inside a tick for any latency worth timing.
#[derive(Clone, Debug)]
pub struct GammaQuantiles {
    pub shape: f64,
    pub scale: f64,
    table: Arc<[f64]>,
}

impl GammaQuantiles {
    const CELLS: usize = 4096;
    const EXACT: usize = 64;

    pub fn new(shape: f64, scale: f64) -> Self {
        let gamma = standard_gamma(shape);
        let table = (0..=Self::CELLS)
            .map(|i| {
                // The last interpolated cell reads the quantile at its far end too.
                let inside = (Self::EXACT..=Self::CELLS - Self::EXACT).contains(&i);
                if inside {
                    gamma.inverse_cdf(i as f64 / Self::CELLS as f64)
                } else {
                    0.0
                }
            })
            .collect();
        GammaQuantiles {
            shape,
            scale,
            table,
        }
    }

    /// The quantile of the standard gamma (scale 1) at `u` in (0, 1).
    fn standard_quantile(&self, u: f64) -> f64 {
        let at = u * Self::CELLS as f64;
        let cell = at as usize;
        if !(Self::EXACT..Self::CELLS - Self::EXACT).contains(&cell) {
            return standard_gamma(self.shape).inverse_cdf(u);
        }
        let (low, high) = (self.table[cell], self.table[cell + 1]);
        low + (high - low) * (at - cell as f64)
    }
}

/// Two gamma latencies are the same distribution when their shape and scale are.
impl PartialEq for GammaQuantiles {
    fn eq(&self, other: &Self) -> bool {
        (self.shape, self.scale) == (other.shape, other.scale)
    }
}

fn standard_gamma(shape: f64) -> Gamma {
    Gamma::new(shape, 1.0).expect("validation keeps the shape positive and finite")
}

/// The mean of e^(−rate·j) over every whole j in `lo..=hi`, each equally likely: a geometric
/// sum, e^(−rate·lo)·(1 − e^(−rate·n))/(n·(1 − e^(−rate))) for n values.
pub fn uniform_decay(lo: u64, hi: u64, rate: f64) -> f64 {
    let n = (hi - lo) as f64 + 1.0;
    if rate == 0.0 || n == 1.0 {
        return libm::exp(-rate * lo as f64);
    }
    libm::exp(-rate * lo as f64) * libm::expm1(-rate * n) / (n * libm::expm1(-rate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams, word};

    /// `decay` is Σ_k e^(−r·k)·P(sample = k), with P(sample = k) from `exceeds`, which reads
    /// the distribution as drawn (rounded to whole ticks), summed until the tail is nothing.
    #[test]
    fn decay_is_the_sum_over_every_whole_tick() {
        for latency in [
            Latency::Constant(Tick(40)),
            Latency::Uniform {
                min: Tick(3),
                max: Tick(90),
            },
            Latency::Exponential { mean: 25.0 },
            Latency::Exponential { mean: 0.3 },
        ] {
            for rate in [0.0, 0.001, 0.05, 1.0] {
                let mut sum = 1.0 - latency.exceeds(Tick(0));
                for k in 1..20_000u64 {
                    let p = latency.exceeds(Tick(k - 1)) - latency.exceeds(Tick(k));
                    sum += p * libm::exp(-rate * k as f64);
                }
                let got = latency.decay(rate).unwrap();
                assert!(
                    (got - sum).abs() < 1e-12,
                    "{latency:?} at {rate}: {got} vs {sum}"
                );
            }
        }
        let lognormal = Latency::LogNormal {
            median: 10.0,
            sigma: 1.0,
        };
        assert_eq!(lognormal.decay(0.1), None);
    }

    /// The closed-form mean in ticks (before rounding to whole ticks).
    fn mean(latency: Latency) -> f64 {
        match latency {
            Latency::Constant(t) => t.0 as f64,
            Latency::Uniform { min, max } => (min.0 as f64 + max.0 as f64) / 2.0,
            Latency::Exponential { mean } => mean,
            Latency::LogNormal { median, sigma } => median * libm::exp(sigma * sigma / 2.0),
            Latency::Gamma(g) => g.shape * g.scale,
            Latency::Weibull { shape, scale } => scale * libm::tgamma(1.0 + 1.0 / shape),
            // E|X| = σ·√(2/π)·exp(−μ²/2σ²) + μ·(1 − 2Φ(−μ/σ)).
            Latency::FoldedNormal { mean, sd } => {
                let z = mean / sd;
                sd * libm::sqrt(2.0 / std::f64::consts::PI) * libm::exp(-z * z / 2.0)
                    + mean * (1.0 - libm::erfc(z / std::f64::consts::SQRT_2))
            }
            Latency::Empirical(e) => {
                e.samples.iter().map(|t| t.0 as f64).sum::<f64>() / e.samples.len() as f64
            }
        }
    }

    fn sample_mean(latency: &Latency, n: usize) -> (f64, f64) {
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
        for latency in distributions() {
            let (sample, se) = sample_mean(&latency, 200_000);
            assert!(
                (sample - mean(latency.clone())).abs() < 4.0 * se + 0.5,
                "{latency:?}: {sample} vs {}",
                mean(latency.clone())
            );
        }
        assert_eq!(Latency::Constant(Tick(7)).sample(12), Tick(7));
    }

    /// One of each random distribution.
    fn distributions() -> Vec<Latency> {
        vec![
            Latency::Uniform {
                min: Tick(100),
                max: Tick(300),
            },
            Latency::Exponential { mean: 5_000.0 },
            Latency::LogNormal {
                median: 5_000.0,
                sigma: 0.5,
            },
            Latency::Gamma(GammaQuantiles::new(2.5, 2_000.0)),
            Latency::Weibull {
                shape: 1.5,
                scale: 4_000.0,
            },
            empirical(&[100, 200, 200, 900, 1_000]),
            // Folded where it matters: a mean of one σ puts a sixth of the mass below zero.
            Latency::FoldedNormal {
                mean: 2_000.0,
                sd: 2_000.0,
            },
        ]
    }

    fn empirical(ticks: &[u64]) -> Latency {
        Latency::Empirical(Empirical {
            file: "test.csv".into(),
            samples: ticks.iter().map(|&t| Tick(t)).collect(),
        })
    }

    /// Quantiles and exceedance agree with each other and with the samples drawn: the share of
    /// 200 000 samples above the p-quantile is 1 − p within 4 standard errors (a binomial
    /// proportion), for p = 0.5, 0.9, 0.99.
    #[test]
    fn quantiles_and_exceedance_describe_the_samples() {
        let latencies = distributions();
        let mut rng = Streams {
            seed: 2,
            point: 0,
            replication: 0,
        }
        .stream(Source::Faults, 0);
        let n = 200_000;
        for latency in &latencies {
            let samples: Vec<Tick> = (0..n).map(|_| latency.sample(word(&mut rng))).collect();
            for p in [0.5, 0.9, 0.99] {
                let q = latency.quantile(p);
                // The quantile is the least tick reaching p.
                assert!(1.0 - latency.exceeds(q) >= p - 1e-9, "{latency:?} p {p}");
                assert!(q == Tick::ZERO || 1.0 - latency.exceeds(Tick(q.0 - 1)) < p + 1e-9);
                let above = samples.iter().filter(|&&s| s > q).count() as f64 / n as f64;
                let expected = latency.exceeds(q);
                let se = (expected * (1.0 - expected) / n as f64).sqrt();
                assert!(
                    (above - expected).abs() <= 4.0 * se + 1e-12,
                    "{latency:?} p {p}: {above} above {q:?}, expected {expected}"
                );
            }
        }
        assert_eq!(empirical(&[1, 2, 3, 4]).quantile(0.5), Tick(2));
        assert_eq!(empirical(&[1, 2, 3, 4]).max(), Some(Tick(4)));
        assert_eq!(Latency::Exponential { mean: 1.0 }.max(), None);
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

    /// The tabled quantiles stay within 1e-4 of the exact ones, relative, or a millionth of the
    /// mean, for shapes from very skewed to nearly normal; the outer cells are exact.
    #[test]
    fn tabled_gamma_quantiles_follow_the_exact_ones() {
        for shape in [0.2, 0.5, 1.0, 2.5, 10.0, 50.0] {
            let g = GammaQuantiles::new(shape, 1.0);
            let exact = standard_gamma(shape);
            for i in 1..10_000 {
                let u = f64::from(i) / 10_000.0;
                let (got, want) = (g.standard_quantile(u), exact.inverse_cdf(u));
                assert!(
                    (got - want).abs() <= 1e-4 * want + 1e-6 * shape,
                    "shape {shape}, u {u}: {got} vs {want}"
                );
            }
        }
    }
}
