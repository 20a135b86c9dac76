//! Variates from one random word each. Every random quantity of an attempt reads a fixed number
//! of words from its intent's stream, so that the k-th attempt of an intent meets the same
//! faults under every configuration (common random numbers). rand's samplers that read exactly
//! one word — the uniform `[0, 1)`, `(0, 1]` and `(0, 1)` floats — are used as they are, fed
//! the word through a one-word source; the variates rand or `rand_distr` would draw with a
//! variable number of words (rejection sampling: normal, gamma, bounded integers) are written
//! here by inversion or by a fixed transform, one word each.

use std::convert::Infallible;

use rand::TryRng;
use rand::distr::{Distribution, Open01, OpenClosed01, StandardUniform};

/// A random source that holds one word: a sampler that reads one word reads this one.
struct OneWord(u64);

impl TryRng for OneWord {
    type Error = Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.0 as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.0)
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for (d, s) in dst.iter_mut().zip(self.0.to_le_bytes().into_iter().cycle()) {
            *d = s;
        }
        Ok(())
    }
}

/// A uniform number in [0, 1): rand's `StandardUniform`, the word's top 53 bits.
pub fn unit(word: u64) -> f64 {
    StandardUniform.sample(&mut OneWord(word))
}

/// A uniform number in (0, 1], for logarithms that must not see zero: rand's `OpenClosed01`.
pub fn unit_open_low(word: u64) -> f64 {
    OpenClosed01.sample(&mut OneWord(word))
}

/// A uniform number in (0, 1), for a quantile function that has none at either end: rand's
/// `Open01`.
pub fn unit_open(word: u64) -> f64 {
    Open01.sample(&mut OneWord(word))
}

/// A uniform integer in `lo..=hi` by the multiply-shift method, one word whatever the range
/// (rand's bounded integers reject and redraw): exact in value, with a bias below
/// (hi − lo + 1) / 2⁶⁴, far under anything a simulation can measure.
pub fn integer_in(word: u64, lo: u64, hi: u64) -> u64 {
    let span = u128::from(hi - lo) + 1;
    lo + ((u128::from(word) * span) >> 64) as u64
}

/// Whether an event of probability `p` happens: `unit(word) < p`, so that the thresholds of
/// several outcomes cut one word into disjoint ranges.
pub fn happens(word: u64, p: f64) -> bool {
    unit(word) < p
}

/// SplitMix64's finaliser: a well-mixed word from any word, for numbers made from what they
/// stand for and for a second draw from one random word.
pub fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rand's samplers read exactly the one word, and give what the formulas they replace gave:
    /// the same bytes in every committed output.
    #[test]
    fn one_word_samplers_match_their_formulas() {
        let scale = 1.0 / (1u64 << 53) as f64;
        for word in [
            0,
            1,
            2047,
            2048,
            1 << 40,
            u64::MAX - 1,
            u64::MAX,
            0x9E37_79B9_7F4A_7C15,
        ] {
            assert_eq!(unit(word), (word >> 11) as f64 * scale);
            assert_eq!(unit_open_low(word), ((word >> 11) + 1) as f64 * scale);
            let u = unit_open(word);
            assert!(u > 0.0 && u < 1.0);
            assert!((0.0..1.0).contains(&unit(word)));
            assert!(unit_open_low(word) > 0.0 && unit_open_low(word) <= 1.0);
            assert!((3..=9).contains(&integer_in(word, 3, 9)));
        }
        assert_eq!(integer_in(u64::MAX, 0, 5), 5);
        assert_eq!(integer_in(0, 0, 5), 0);
        assert!(happens(0, 1e-9) && !happens(u64::MAX, 0.999));
    }
}
