//! Running mean and variance (Welford), so a million intents cost a few words of memory.

/// Count, mean and sum of squared deviations of the values seen so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    count: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    pub fn push(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// The sample variance (n − 1 in the denominator); zero for fewer than two values.
    pub fn variance(&self) -> f64 {
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

    #[test]
    fn matches_the_two_pass_formulas() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let m: Moments = xs.into_iter().collect();
        assert_eq!(m.count(), 8);
        assert!((m.mean() - 5.0).abs() < 1e-12);
        assert!((m.variance() - 32.0 / 7.0).abs() < 1e-12);
        assert_eq!(Moments::default().variance(), 0.0);
    }
}
