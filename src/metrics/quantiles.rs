//! Completion-time quantiles: the tail a timeout or a hedge is tuned against. Kept in an HDR
//! histogram, so memory stays fixed whatever the number of intents and runs merge exactly;
//! every value is read to 3 significant digits (within 0.1 %), the same bytes everywhere.

use hdrhistogram::Histogram;

use crate::time::Tick;

/// The distribution of one quantity over intents, to 3 significant digits. The histogram is
/// made at the first value, so an empty one costs nothing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Quantiles(Option<Histogram<u64>>);

impl Quantiles {
    pub fn record(&mut self, value: Tick) {
        self.histogram()
            .record(value.0)
            .expect("the histogram grows to fit any value");
    }

    /// Adds another run's values, for quantiles over replications.
    pub fn merge(&mut self, other: &Quantiles) {
        if let Some(theirs) = &other.0 {
            self.histogram()
                .add(theirs)
                .expect("histograms that grow to fit can always be added");
        }
    }

    /// The value at quantile `q` (0.99 for p99), rounded up to its bucket's top; 0 when empty.
    pub fn at(&self, q: f64) -> Tick {
        Tick(self.0.as_ref().map_or(0, |h| h.value_at_quantile(q)))
    }

    fn histogram(&mut self) -> &mut Histogram<u64> {
        self.0
            .get_or_insert_with(|| Histogram::new(3).expect("3 significant digits are supported"))
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
        let mut empty = Quantiles::default();
        empty.merge(&Quantiles::default());
        assert_eq!((empty.at(0.5), Quantiles::default()), (Tick(0), empty));
        for (q, exact) in [(0.5, 50_000.0), (0.99, 99_000.0), (1.0, 100_000.0)] {
            let got = all.at(q).0 as f64;
            assert!(
                (got - exact).abs() <= exact * 1e-3,
                "p{q}: {got} vs {exact}"
            );
        }
    }
}
