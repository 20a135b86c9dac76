//! Completion-time quantiles: the tail a timeout or a hedge is tuned against. Kept in an HDR
//! histogram, so memory stays fixed whatever the number of intents and runs merge exactly;
//! every value is read to 3 significant digits (within 0.1 %), the same bytes everywhere.

use hdrhistogram::Histogram;

use crate::time::Tick;

/// The distribution of one quantity over intents, to 3 significant digits.
#[derive(Clone, Debug, PartialEq)]
pub struct Quantiles(Histogram<u64>);

impl Default for Quantiles {
    fn default() -> Self {
        Quantiles(Histogram::new(3).expect("3 significant digits are supported"))
    }
}

impl Quantiles {
    pub fn record(&mut self, value: Tick) {
        self.0
            .record(value.0)
            .expect("the histogram grows to fit any value");
    }

    /// Adds another run's values, for quantiles over replications.
    pub fn merge(&mut self, other: &Quantiles) {
        self.0
            .add(&other.0)
            .expect("histograms that grow to fit can always be added");
    }

    /// The value at quantile `q` (0.99 for p99), rounded up to its bucket's top; 0 when empty.
    pub fn at(&self, q: f64) -> Tick {
        Tick(self.0.value_at_quantile(q))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_within_a_thousandth_and_merge_exactly() {
        let (mut low, mut high, mut all) = (
            Quantiles::default(),
            Quantiles::default(),
            Quantiles::default(),
        );
        for v in 1..=100_000u64 {
            let half: &mut Quantiles = if v <= 50_000 { &mut low } else { &mut high };
            half.record(Tick(v));
            all.record(Tick(v));
        }
        low.merge(&high);
        assert_eq!(low, all);
        for (q, exact) in [(0.5, 50_000.0), (0.99, 99_000.0), (1.0, 100_000.0)] {
            let got = all.at(q).0 as f64;
            assert!(
                (got - exact).abs() <= exact * 1e-3,
                "p{q}: {got} vs {exact}"
            );
        }
    }
}
