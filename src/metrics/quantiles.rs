//! Completion-time quantiles: the tail a timeout or a hedge is tuned against. Kept in an HDR
//! histogram, so memory stays fixed whatever the number of intents and runs merge exactly;
//! every value is read to 3 significant digits (within 0.1 %), the same bytes everywhere.

use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

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

    /// How many values were recorded.
    pub fn len(&self) -> u64 {
        self.0.as_ref().map_or(0, Histogram::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// The value at quantile `q` taken at the middle of its bucket: within 0.05 % either way,
    /// for values read back as measurements (a calibrated latency, a client's timeout).
    pub fn near(&self, q: f64) -> Tick {
        Tick(
            self.0
                .as_ref()
                .map_or(0, |h| h.median_equivalent(h.value_at_quantile(q))),
        )
    }

    fn histogram(&mut self) -> &mut Histogram<u64> {
        self.0
            .get_or_insert_with(|| Histogram::new(3).expect("3 significant digits are supported"))
    }
}

/// Written as its recorded buckets, each as (a value in it, its count): reading them back
/// records the same counts in the same buckets, which is all a quantile reads, so a shard's
/// histogram merges exactly as if it had never left memory.
impl Serialize for Quantiles {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let buckets: Vec<(u64, u64)> = self.0.as_ref().map_or_else(Vec::new, |h| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
                .collect()
        });
        buckets.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Quantiles {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let buckets = Vec::<(u64, u64)>::deserialize(d)?;
        let mut q = Quantiles::default();
        for (value, count) in buckets {
            q.histogram()
                .record_n(value, count)
                .map_err(|_| serde::de::Error::custom("a histogram value out of range"))?;
        }
        Ok(q)
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
    #[test]
    fn quantiles_read_back_from_their_buckets_give_every_quantile_exactly() {
        let mut q = Quantiles::default();
        for v in (1..=200_000u64).map(|v| v * v % 7_000_003) {
            q.record(Tick(v));
        }
        let bytes = postcard::to_stdvec(&q).unwrap();
        let back: Quantiles = postcard::from_bytes(&bytes).unwrap();
        let (mut merged, mut merged_back) = (Quantiles::default(), Quantiles::default());
        merged.merge(&q);
        merged_back.merge(&back);
        for k in 0..=1000 {
            let p = f64::from(k) / 1000.0;
            assert_eq!(q.at(p), back.at(p), "p{p}");
            assert_eq!(merged.at(p), merged_back.at(p), "p{p} merged");
        }
        let empty: Quantiles =
            postcard::from_bytes(&postcard::to_stdvec(&Quantiles::default()).unwrap()).unwrap();
        assert_eq!(empty, Quantiles::default());
    }
}
