//! Random streams keyed by what they are for, so that results never depend on the order in
//! which anything asked for a number.
//!
//! Every stream is a ChaCha8 generator. Its 256-bit key is (seed, sweep point, replication,
//! source) and its 64-bit stream id is the entity (an intent, a task). Two configurations of one
//! experiment therefore draw the same numbers for the same purpose — the fault of the k-th
//! attempt of intent i is the same under every policy (common random numbers) — and changing a
//! retry policy cannot reshuffle arrivals or faults.

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

/// What a stream of random numbers is used for. Each source has its own streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Source {
    /// Task arrival times (one stream for the whole workload).
    Arrivals = 1,
    /// The fate and latencies of each attempt (one stream per intent).
    Faults = 2,
    /// Backoff jitter (one stream per intent).
    Jitter = 3,
    /// Whether each reconciliation lookup fails (one stream per intent).
    Lookups = 4,
    /// Whether each retry regenerates the request's payload (one stream per intent).
    Payloads = 5,
    /// Which caller each task belongs to (one stream for the whole workload).
    Callers = 6,
    /// The two network legs of each attempt's read of a versioned record (one stream per
    /// intent), so a record's reads leave every other draw as it was.
    Reads = 7,
}

/// The key of a run's streams: everything but the source and the entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streams {
    pub seed: u64,
    pub point: u64,
    pub replication: u64,
}

impl Streams {
    /// The stream for `source` and `entity`; the same arguments always give the same numbers.
    pub fn stream(&self, source: Source, entity: u64) -> ChaCha8Rng {
        let mut key = [0u8; 32];
        for (chunk, word) in
            key.chunks_exact_mut(8)
                .zip([self.seed, self.point, self.replication, source as u64])
        {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let mut rng = ChaCha8Rng::from_seed(key);
        rng.set_stream(entity);
        rng
    }
}

impl Streams {
    /// Word `index` of the stream for `source` and `entity`, read without keeping the stream:
    /// for draws that are rare and addressed by number, such as the jitter of retry n.
    pub fn word_at(&self, source: Source, entity: u64, index: u64) -> u64 {
        let mut rng = self.stream(source, entity);
        // Word positions count 32-bit words.
        rng.set_word_pos(u128::from(index) * 2);
        rng.next_u64()
    }
}

/// Reads the next 64-bit word of a stream.
pub fn word(rng: &mut ChaCha8Rng) -> u64 {
    rng.next_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first_words(s: Streams, source: Source, entity: u64) -> [u64; 4] {
        let mut rng = s.stream(source, entity);
        [0; 4].map(|_| word(&mut rng))
    }

    #[test]
    fn each_key_part_selects_a_different_stream() {
        let base = Streams {
            seed: 7,
            point: 0,
            replication: 0,
        };
        let reference = first_words(base, Source::Faults, 3);
        assert_eq!(reference, first_words(base, Source::Faults, 3));
        for other in [
            first_words(Streams { seed: 8, ..base }, Source::Faults, 3),
            first_words(Streams { point: 1, ..base }, Source::Faults, 3),
            first_words(
                Streams {
                    replication: 1,
                    ..base
                },
                Source::Faults,
                3,
            ),
            first_words(base, Source::Jitter, 3),
            first_words(base, Source::Faults, 4),
        ] {
            assert_ne!(reference, other);
        }
    }

    #[test]
    fn addressed_words_are_the_stream_read_in_order() {
        let s = Streams {
            seed: 7,
            point: 0,
            replication: 2,
        };
        let mut rng = s.stream(Source::Jitter, 11);
        for index in 0..40 {
            assert_eq!(word(&mut rng), s.word_at(Source::Jitter, 11, index));
        }
    }
}
