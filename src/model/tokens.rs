//! A model provider's tokens-per-minute limit: a bucket of `burst` tokens refilled
//! continuously at `per_minute` tokens a minute, as OpenAI and Anthropic document theirs (a
//! continuously replenished bucket, not a window that resets on the minute).
//!
//! The accounting is the providers': a request is admitted only if the bucket holds its input
//! tokens plus its `max_tokens` (what it may yet generate), which are taken at once; when it
//! completes, the part of `max_tokens` it did not generate is given back. So a long prompt, or a
//! generous `max_tokens`, spends the budget faster, and a refused request takes nothing.
//!
//! Kept as the generic cell rate algorithm with weights, exactly, on integers: one token is
//! `MINUTE` units of "ticks × per_minute", so the theoretical arrival time `tat` of the next
//! token and every comparison are whole numbers, and no rate rounds to a tick. A request of `w`
//! tokens at `t` is refused when `max(tat, t) + w − burst > t` (in tokens' units), and told to
//! come back when the shortfall has refilled; admitted, it moves `tat` to `max(tat, t) + w`. Over
//! any window of length W at most `per_minute · W / 1 min + burst` tokens are admitted.

use super::limiter::{LimitScope, Refusal};
use crate::time::Tick;

/// Ticks in a minute: the period the limit is quoted for.
const MINUTE: u128 = 60_000_000;

/// A tokens-per-minute limit as a tool configures it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenLimit {
    /// Tokens a minute the bucket refills with.
    pub per_minute: u64,
    /// Tokens it holds when full: by default a minute's worth, as the providers' buckets.
    pub burst: u64,
    pub scope: LimitScope,
    /// The Retry-After and the reset are rounded up to a whole number of these (1 s, as HTTP
    /// counts; a tool's `retry_after_ms` sends the wait to the millisecond beside them).
    pub unit: Tick,
    /// The model's `max_tokens`: reserved with each request's input at admission, and given
    /// back, less what was generated, once the request is done.
    pub max_tokens: u32,
}

impl TokenLimit {
    /// A wait as its Retry-After says it: rounded up to a whole number of the limit's unit.
    pub fn retry_after(&self, wait: Tick) -> Tick {
        wait.rounded_up_to(self.unit)
    }

    /// Tick `t` in the bucket's units.
    fn scaled(&self, t: Tick) -> u128 {
        u128::from(t.0) * u128::from(self.per_minute)
    }

    /// `tokens` in the bucket's units.
    fn weight(tokens: u64) -> u128 {
        u128::from(tokens) * MINUTE
    }
}

/// One bucket: when it would next be empty, in the limit's units (see the module's note).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TokenBucket {
    tat: u128,
}

impl TokenBucket {
    /// A request that needs `tokens` at `now`: `Ok` takes them; `Err` carries the Retry-After,
    /// the wait until the bucket holds them, and the reset, the wait until it is full, each
    /// rounded up to the limit's unit. A request larger than the whole bucket can never pass:
    /// it is told to wait for its shortfall as if the bucket could hold it, and refused again
    /// then (the provider's 429 for a request over the limit).
    pub fn take(&mut self, limit: &TokenLimit, now: Tick, tokens: u64) -> Result<(), Refusal> {
        let now_s = limit.scaled(now);
        let from = self.tat.max(now_s);
        let after = from + TokenLimit::weight(tokens);
        let earliest = after.saturating_sub(TokenLimit::weight(limit.burst));
        if earliest > now_s {
            let wait = |until: u128| {
                let short = (until - now_s).div_ceil(u128::from(limit.per_minute));
                Tick(u64::try_from(short).unwrap_or(u64::MAX))
            };
            // A request larger than the bucket is told to wait past a full bucket: its reset
            // is never sooner than its Retry-After.
            return Err(Refusal {
                retry_after: limit.retry_after(wait(earliest)),
                reset: limit.retry_after(wait(from.max(earliest))),
                exact: wait(earliest),
            });
        }
        self.tat = after;
        Ok(())
    }

    /// Gives back `tokens` taken but not used (the part of `max_tokens` a completed request did
    /// not generate). A bucket that has refilled meanwhile stays full: what it would have held
    /// above its size is gone.
    pub fn give_back(&mut self, tokens: u64) {
        self.tat = self.tat.saturating_sub(TokenLimit::weight(tokens));
    }

    /// Tokens the bucket holds at `now`, rounded down.
    pub fn level(&self, limit: &TokenLimit, now: Tick) -> u64 {
        let now_s = limit.scaled(now);
        let used = self.tat.saturating_sub(now_s).div_ceil(MINUTE);
        limit
            .burst
            .saturating_sub(u64::try_from(used).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams};
    use crate::time::TICKS_PER_SECOND;
    use crate::variate::integer_in;

    /// The `i`-th random word of seed `seed`'s stream: the tests' requests, drawn as a run's.
    fn words(seed: u64) -> impl Fn(u64) -> u64 {
        let streams = Streams {
            seed,
            point: 0,
            replication: 0,
        };
        move |i| streams.word_at(Source::Arrivals, 0, i)
    }

    fn limit(per_minute: u64, burst: u64) -> TokenLimit {
        TokenLimit {
            per_minute,
            burst,
            scope: LimitScope::Tool,
            unit: Tick(1),
            max_tokens: 0,
        }
    }

    #[test]
    fn a_request_takes_its_tokens_and_the_bucket_refills_continuously() {
        // 60 000 tokens a minute: 1 000 a second, one a millisecond; a bucket of 10 000.
        let l = limit(60_000, 10_000);
        let mut b = TokenBucket::default();
        assert_eq!(b.level(&l, Tick(0)), 10_000);
        assert_eq!(b.take(&l, Tick(0), 8_000), Ok(()));
        assert_eq!(b.level(&l, Tick(0)), 2_000);
        // 3 000 more need 1 000 to refill: a second; the bucket is full in eight.
        let refused = |retry_after, reset| {
            Err(Refusal {
                retry_after: Tick(retry_after),
                reset: Tick(reset),
                exact: Tick(retry_after),
            })
        };
        assert_eq!(
            b.take(&l, Tick(0), 3_000),
            refused(TICKS_PER_SECOND, 8_000_000)
        );
        assert_eq!(
            b.take(&l, Tick(400_000), 3_000),
            refused(600_000, 7_600_000)
        );
        assert_eq!(b.take(&l, Tick(TICKS_PER_SECOND), 3_000), Ok(()));
        // It generated 500 of a 2 000 reservation: 1 500 come back.
        b.give_back(1_500);
        assert_eq!(b.level(&l, Tick(TICKS_PER_SECOND)), 1_500);
        // Refilled to the brim and no further, whatever was given back.
        b.give_back(1_000_000);
        assert_eq!(b.level(&l, Tick(TICKS_PER_SECOND)), 10_000);
        assert_eq!(b.level(&l, Tick(100 * TICKS_PER_SECOND)), 10_000);
    }

    #[test]
    fn a_request_larger_than_the_bucket_never_passes() {
        let l = limit(60_000, 10_000);
        let mut b = TokenBucket::default();
        for t in [0, 10, 100, 1_000] {
            assert!(b.take(&l, Tick(t * TICKS_PER_SECOND), 10_001).is_err());
        }
        assert_eq!(b.take(&l, Tick(0), 10_000), Ok(()));
    }

    #[test]
    fn the_retry_after_is_rounded_up_to_the_unit() {
        let l = TokenLimit {
            unit: Tick(TICKS_PER_SECOND),
            ..limit(60_000, 1_000)
        };
        let mut b = TokenBucket::default();
        assert_eq!(b.take(&l, Tick(0), 1_000), Ok(()));
        // One token is a millisecond away, a full bucket a second: the headers say a second.
        let second = Tick(TICKS_PER_SECOND);
        let told = Refusal {
            retry_after: second,
            reset: second,
            exact: Tick(1_000),
        };
        assert_eq!(b.take(&l, Tick(0), 1), Err(told));
    }

    /// What a refusal says, held to the bucket itself over random requests: the request passes
    /// after its Retry-After and not a tick before, and the bucket is full after the reset and
    /// not a tick before — so the reset is never sooner than the Retry-After. A request larger
    /// than the bucket never passes, and its reset is no sooner than its Retry-After either.
    #[test]
    fn a_refusal_says_when_the_request_passes_and_when_the_bucket_is_full() {
        let word = words(31);
        let l = limit(7_000, 5_000);
        let mut b = TokenBucket::default();
        let (mut now, mut refusals, mut oversized) = (0, 0, 0);
        for i in 0..5_000 {
            now += integer_in(word(2 * i), 0, 2 * TICKS_PER_SECOND);
            // Now and then more than the bucket holds: refused whatever its level.
            let tokens = integer_in(word(2 * i + 1), 1, 5_500);
            let before = b;
            let Err(told) = b.take(&l, Tick(now), tokens) else {
                continue;
            };
            refusals += 1;
            assert!(told.reset >= told.retry_after);
            // A unit of one tick rounds nothing away.
            assert_eq!(told.exact, told.retry_after);
            let at = |wait: Tick, less: u64| Tick(now + wait.0 - less);
            let passes = |t: Tick| {
                let mut probe = before;
                probe.take(&l, t, tokens).is_ok()
            };
            if tokens > l.burst {
                oversized += 1;
                assert!(!passes(at(told.retry_after, 0)));
                assert_eq!(before.level(&l, at(told.reset, 0)), l.burst);
                continue;
            }
            assert_eq!(before.level(&l, at(told.reset, 0)), l.burst);
            assert!(before.level(&l, at(told.reset, 1)) < l.burst);
            assert!(passes(at(told.retry_after, 0)));
            assert!(!passes(at(told.retry_after, 1)));
        }
        assert!(refusals > 500, "{refusals}: the bucket must refuse often");
        assert!(
            oversized > 20,
            "{oversized}: some requests must be over the bucket"
        );
    }

    /// A rate that is no whole number of ticks a token (7 tokens a minute) is kept exactly:
    /// after an hour the bucket has refilled exactly 420 tokens, not a rounded count.
    #[test]
    fn rates_are_exact_over_long_spans() {
        let l = limit(7, 1_000);
        let mut b = TokenBucket::default();
        assert_eq!(b.take(&l, Tick(0), 1_000), Ok(()));
        let hour = Tick(3_600 * TICKS_PER_SECOND);
        assert_eq!(b.level(&l, hour), 420);
        assert_eq!(b.take(&l, hour, 420), Ok(()));
        assert!(b.take(&l, hour, 1).is_err());
    }

    /// The providers' promise, over random requests reserving their input and `max_tokens` and
    /// settling at completion: the tokens the bucket let through in any window of one minute —
    /// taken at admission, less what was given back — never exceed the limit plus the burst,
    /// and a request the bucket cannot hold is refused, taking nothing.
    #[test]
    fn no_minute_lets_through_more_than_the_limit_plus_the_burst() {
        let word = words(27);
        let (l, max_tokens) = (limit(90_000, 30_000), 2_000);
        let mut b = TokenBucket::default();
        // (time, tokens): + taken at admission, − given back at completion.
        let mut moves: Vec<(u64, i64)> = Vec::new();
        let mut pending: Vec<(u64, u64)> = Vec::new();
        let mut now = 0;
        for i in 0..20_000 {
            now += integer_in(word(4 * i), 0, 4_000_000);
            // Completions due by now settle first: what they did not generate comes back.
            pending.sort_unstable();
            while let Some(&(at, back)) = pending.first().filter(|p| p.0 <= now) {
                b.give_back(back);
                moves.push((at.max(moves.last().map_or(0, |m| m.0)), -(back as i64)));
                pending.remove(0);
            }
            let input = integer_in(word(4 * i + 1), 1, 4_000);
            let before = b;
            match b.take(&l, Tick(now), input + max_tokens) {
                Ok(()) => {
                    moves.push((now, (input + max_tokens) as i64));
                    let used = integer_in(word(4 * i + 2), 0, max_tokens);
                    let lasts = integer_in(word(4 * i + 3), 1, 20 * TICKS_PER_SECOND);
                    pending.push((now + lasts, max_tokens - used));
                }
                Err(_) => assert_eq!(b, before, "a refusal takes nothing"),
            }
        }
        assert!(moves.len() > 2_000, "the test must admit something");
        let (mut window, mut start, mut busiest) = (0i64, 0, 0i64);
        for end in 0..moves.len() {
            window += moves[end].1;
            while moves[end].0 - moves[start].0 >= 60 * TICKS_PER_SECOND {
                window -= moves[start].1;
                start += 1;
            }
            busiest = busiest.max(window);
        }
        assert!(busiest <= 90_000 + 30_000, "{busiest} in a minute");
        // And the bucket was a real constraint: demand was far above it.
        assert!(
            busiest > 90_000,
            "{busiest}: the limit was never approached"
        );
    }
}
