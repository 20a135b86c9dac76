//! Random streams keyed by what they are for, so that results never depend on the order in
//! which anything asked for a number.
//!
//! Every stream is ChaCha with 8 rounds. Its 256-bit key is (seed, sweep point, replication,
//! source) and its 64-bit stream id is the entity (an intent, a task). Two configurations of one
//! experiment therefore draw the same numbers for the same purpose — the fault of the k-th
//! attempt of intent i is the same under every policy (common random numbers) — and changing a
//! retry policy cannot reshuffle arrivals or faults.

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
    /// The replica a random balancer picks for each attempt (one stream per intent, two words
    /// an attempt), so balancing leaves every other draw as it was.
    Balancer = 8,
    /// The sizes of a model's call, its prompt and its answer (one stream per intent).
    Sizes = 9,
    /// The turns of each agent loop's task (one stream per task).
    Turns = 10,
    /// The good and bad spells of each tool whose faults come in bursts (one stream per tool).
    Bursts = 11,
    /// The key each call is routed by under a keyed balancer (one word per intent), so a call
    /// meets the same shard in every configuration.
    Keys = 12,
    /// When the worker holding each call crashes (one stream per intent, a word per worker).
    Crashes = 13,
    /// The fate and latencies of each request `retrysim endpoint` serves (one stream per tool,
    /// the requests in the order they arrive).
    Endpoint = 14,
}

/// The key of a run's streams: everything but the source and the entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Streams {
    pub seed: u64,
    pub point: u64,
    pub replication: u64,
}

impl Streams {
    /// The ChaCha key of `source`'s streams: the four words seed, point, replication and
    /// source, little-endian.
    fn key(&self, source: Source) -> [u32; 8] {
        let words = [self.seed, self.point, self.replication, source as u64];
        std::array::from_fn(|i| (words[i / 2] >> (32 * (i % 2))) as u32)
    }

    /// The stream for `source` and `entity`; the same arguments always give the same numbers.
    pub fn stream(&self, source: Source, entity: u64) -> Stream {
        Stream {
            key: self.key(source),
            entity,
            block: 0,
            buffer: [0; WORDS_PER_BLOCK],
            next: WORDS_PER_BLOCK as u8,
        }
    }

    /// Word `index` of the stream for `source` and `entity`, read without keeping the stream:
    /// for draws that are rare and addressed by number, such as the jitter of retry n. It costs
    /// one block, whatever the index.
    pub fn word_at(&self, source: Source, entity: u64, index: u64) -> u64 {
        self.block(source, entity, index / WORDS_PER_BLOCK as u64)
            [(index % WORDS_PER_BLOCK as u64) as usize]
    }

    /// Block `n` of the stream for `source` and `entity`: its words `8n … 8n + 7`, for a
    /// reader that keeps its own place rather than a [`Stream`] (an intent's attempts).
    pub fn block(&self, source: Source, entity: u64, n: u64) -> [u64; WORDS_PER_BLOCK] {
        chacha8_block(&self.key(source), entity, n)
    }
}

/// 64-bit words in a 64-byte ChaCha block.
pub const WORDS_PER_BLOCK: usize = 8;

/// One entity's stream, read a word at a time and made one block at a time. It holds 120 bytes
/// where a buffered ChaCha generator holds four blocks, which matters with 10⁵ intents live,
/// and an intent that reads a handful of words pays for one block, not four.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stream {
    key: [u32; 8],
    entity: u64,
    /// The next block to make.
    block: u64,
    buffer: [u64; WORDS_PER_BLOCK],
    /// The next word of `buffer` to read; `WORDS_PER_BLOCK` when it is used up.
    next: u8,
}

impl Stream {
    fn next_word(&mut self) -> u64 {
        if usize::from(self.next) == WORDS_PER_BLOCK {
            self.buffer = chacha8_block(&self.key, self.entity, self.block);
            self.block += 1;
            self.next = 0;
        }
        let w = self.buffer[usize::from(self.next)];
        self.next += 1;
        w
    }
}

/// Reads the next 64-bit word of a stream.
pub fn word(stream: &mut Stream) -> u64 {
    stream.next_word()
}

/// ChaCha's "expand 32-byte k".
const SIGMA: [u32; 4] = [0x6170_7865, 0x3320_646e, 0x7962_2d32, 0x6b20_6574];

/// Block `counter` of ChaCha8 under `key` with 64-bit stream id (nonce) `stream`, as eight
/// 64-bit words, each two 32-bit words low first: the words rand_chacha's `ChaCha8Rng` gives at
/// that position with that stream set (tested against it).
fn chacha8_block(key: &[u32; 8], stream: u64, counter: u64) -> [u64; WORDS_PER_BLOCK] {
    let mut input = [0u32; 16];
    input[..4].copy_from_slice(&SIGMA);
    input[4..12].copy_from_slice(key);
    input[12] = counter as u32;
    input[13] = (counter >> 32) as u32;
    input[14] = stream as u32;
    input[15] = (stream >> 32) as u32;
    let mut x = input;
    for _ in 0..4 {
        quarter_round(&mut x, 0, 4, 8, 12);
        quarter_round(&mut x, 1, 5, 9, 13);
        quarter_round(&mut x, 2, 6, 10, 14);
        quarter_round(&mut x, 3, 7, 11, 15);
        quarter_round(&mut x, 0, 5, 10, 15);
        quarter_round(&mut x, 1, 6, 11, 12);
        quarter_round(&mut x, 2, 7, 8, 13);
        quarter_round(&mut x, 3, 4, 9, 14);
    }
    std::array::from_fn(|i| {
        let lo = x[2 * i].wrapping_add(input[2 * i]);
        let hi = x[2 * i + 1].wrapping_add(input[2 * i + 1]);
        u64::from(lo) | (u64::from(hi) << 32)
    })
}

#[inline(always)]
fn quarter_round(x: &mut [u32; 16], a: usize, b: usize, c: usize, d: usize) {
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(16);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(12);
    x[a] = x[a].wrapping_add(x[b]);
    x[d] = (x[d] ^ x[a]).rotate_left(8);
    x[c] = x[c].wrapping_add(x[d]);
    x[b] = (x[b] ^ x[c]).rotate_left(7);
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

    /// The words are rand_chacha's ChaCha8Rng's, keyed and placed as retrysim always keyed
    /// them: every stream, and so every committed output, is what it was.
    #[test]
    fn streams_are_rand_chachas_chacha8_word_for_word() {
        use rand_chacha::ChaCha8Rng;
        use rand_chacha::rand_core::{Rng, SeedableRng};
        for (seed, point, replication) in [(0, 0, 0), (7, 3, 2), (u64::MAX, 1 << 40, 99)] {
            let s = Streams {
                seed,
                point,
                replication,
            };
            for source in [Source::Arrivals, Source::Faults, Source::Reads] {
                for entity in [0, 1, 12_345, u64::MAX] {
                    let mut key = [0u8; 32];
                    for (chunk, w) in
                        key.chunks_exact_mut(8)
                            .zip([seed, point, replication, source as u64])
                    {
                        chunk.copy_from_slice(&w.to_le_bytes());
                    }
                    let mut reference = ChaCha8Rng::from_seed(key);
                    reference.set_stream(entity);
                    let mut ours = s.stream(source, entity);
                    for _ in 0..70 {
                        assert_eq!(word(&mut ours), reference.next_u64());
                    }
                    reference.set_word_pos(2 * ((1 << 33) + 5));
                    assert_eq!(
                        s.word_at(source, entity, (1 << 33) + 5),
                        reference.next_u64()
                    );
                }
            }
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
