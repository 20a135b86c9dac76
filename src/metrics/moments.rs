//! Running counts, means and variances, so a million intents cost a few words of memory.
//!
//! Per-intent measures are whole numbers, so they are summed exactly ([`Sums`]): the mean and
//! variance are then the same whatever order the intents came in. Means of replications are
//! fractions, so they use Welford's running update ([`Moments`]).

use serde::{Deserialize, Serialize};
/// Anything with a count, a mean and a sample variance.
pub trait Sample {
    fn count(&self) -> u64;
    fn mean(&self) -> f64;
    /// The sample variance (n − 1 in the denominator); zero for fewer than two values.
    fn variance(&self) -> f64;
}

/// Exact Σx and Σx² of whole numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sums {
    count: u64,
    sum: u128,
    sum_sq: u128,
}

impl Sums {
    pub fn push(&mut self, x: u64) {
        self.count += 1;
        self.sum += u128::from(x);
        self.sum_sq += u128::from(x) * u128::from(x);
    }

    /// `trials` values of 0 or 1, `successes` of them 1: a proportion as a sample.
    pub fn bernoulli(trials: u64, successes: u64) -> Sums {
        Sums {
            count: trials,
            sum: u128::from(successes),
            sum_sq: u128::from(successes),
        }
    }

    /// Adds another sample's values: exact, so the order of merging never shows.
    pub fn merge(&mut self, other: &Sums) {
        self.count += other.count;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }
}

impl Sample for Sums {
    fn count(&self) -> u64 {
        self.count
    }

    fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    fn variance(&self) -> f64 {
        if self.count < 2 {
            return 0.0;
        }
        // n·Σx² − (Σx)² is exact and never negative; one rounding happens at the division.
        let n = u128::from(self.count);
        let spread = n * self.sum_sq - self.sum * self.sum;
        spread as f64 / (n * (n - 1)) as f64
    }
}

/// Welford's running mean and sum of squared deviations, for fractional values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    count: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    /// `n` values of zero.
    pub fn zeros(n: u64) -> Self {
        Moments {
            count: n,
            ..Moments::default()
        }
    }

    pub fn push(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }
}

impl Sample for Moments {
    fn count(&self) -> u64 {
        self.count
    }

    fn mean(&self) -> f64 {
        self.mean
    }

    fn variance(&self) -> f64 {
        if self.count < 2 {
            0.0
        } else {
            self.m2 / (self.count - 1) as f64
        }
    }
}

impl FromIterator<f64> for Moments {
    fn from_iter<I: IntoIterator<Item = f64>>(iter: I) -> Self {
        let mut m = Moments::default();
        iter.into_iter().for_each(|x| m.push(x));
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const XS: [u64; 8] = [2, 4, 4, 4, 5, 5, 7, 9];

    #[test]
    fn both_match_the_two_pass_formulas() {
        let welford: Moments = XS.iter().map(|&x| x as f64).collect();
        let mut exact = Sums::default();
        XS.iter().for_each(|&x| exact.push(x));
        for s in [&welford as &dyn Sample, &exact] {
            assert_eq!(s.count(), 8);
            assert!((s.mean() - 5.0).abs() < 1e-12);
            assert!((s.variance() - 32.0 / 7.0).abs() < 1e-12);
        }
        assert_eq!(Moments::default().variance(), 0.0);
        assert_eq!(Sums::default().mean(), 0.0);
    }

    #[test]
    fn exact_sums_do_not_depend_on_order() {
        let big = [1u64 << 40, 3, (1 << 40) + 7, 11];
        let (mut a, mut b) = (Sums::default(), Sums::default());
        big.iter().for_each(|&x| a.push(x));
        big.iter().rev().for_each(|&x| b.push(x));
        assert_eq!(a, b);
        assert_eq!(a.variance().to_bits(), b.variance().to_bits());
    }
}
