//! A server's rate limiter: a token bucket of `burst` tokens refilled at one token every
//! `interval`, as LLM providers and API gateways run them. A request that finds a token goes
//! on; one that finds none is refused at once with a 429 whose Retry-After says when the next
//! token comes, and whose reset says when the bucket is full again.
//!
//! Kept as the generic cell rate algorithm (GCRA) on integer ticks: one number per bucket, the
//! theoretical arrival time `tat` of the next request, so a bucket costs one word and every
//! decision is exact. With T the interval and τ = (burst − 1)·T, a request at `t` is refused
//! when `tat − τ > t`, and told to come back after `tat − τ − t`; accepted, it moves `tat` to
//! `max(tat, t) + T`. Over any window of length W at most W/T + burst requests are accepted.

use crate::time::{TICKS_PER_SECOND, Tick};

/// Whose requests share a bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitScope {
    /// One bucket for the tool: every caller draws from it.
    Tool,
    /// A bucket per caller (an API key per agent).
    Caller,
}

impl LimitScope {
    pub const ALL: [LimitScope; 2] = [LimitScope::Tool, LimitScope::Caller];

    /// The bucket `caller`'s requests draw from: the tool's one, or the caller's own.
    pub fn bucket(self, caller: u32) -> usize {
        match self {
            LimitScope::Tool => 0,
            LimitScope::Caller => caller as usize,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            LimitScope::Tool => "tool",
            LimitScope::Caller => "caller",
        }
    }
}

/// A limiter's refusal as its 429 carries it, each wait rounded up to the limit's unit: the
/// Retry-After, when the request would pass, and the reset, when the bucket is full again (what
/// OpenAI's `x-ratelimit-reset-requests` / `-tokens` and Anthropic's
/// `anthropic-ratelimit-*-reset` say). A bucket refilled continuously lets a request through
/// long before it is full, so a client that waits for the reset waits longer than it must.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub retry_after: Tick,
    pub reset: Tick,
    /// The Retry-After to the tick, before it is rounded to the limit's unit: what a
    /// `retry-after-ms` header says, to the millisecond.
    pub exact: Tick,
}

impl Refusal {
    /// Two limits refused a request: it passes when both would let it, and they are both full
    /// when the later of them is.
    pub fn and(self, other: Refusal) -> Refusal {
        Refusal {
            retry_after: self.retry_after.max(other.retry_after),
            reset: self.reset.max(other.reset),
            exact: self.exact.max(other.exact),
        }
    }
}

/// A rate limit as a tool configures it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Ticks between tokens: the rate, kept as a whole number of microseconds.
    pub interval: Tick,
    /// Tokens the bucket holds when full: the requests that may come at once.
    pub burst: u32,
    pub scope: LimitScope,
    /// The Retry-After is rounded up to a whole number of these: HTTP's header carries whole
    /// seconds, so clients refused within the same second come back together.
    pub unit: Tick,
}

impl RateLimit {
    /// The limit of `per_second` requests a second, its interval rounded to a tick, with
    /// Retry-After in whole `unit`s.
    pub fn per_second(per_second: f64, burst: u32, scope: LimitScope, unit: Tick) -> Self {
        let interval = (TICKS_PER_SECOND as f64 / per_second).round().max(1.0) as u64;
        RateLimit {
            interval: Tick(interval),
            burst,
            scope,
            unit,
        }
    }

    /// The rate in requests a second, as the interval gives it.
    pub fn rate(&self) -> f64 {
        TICKS_PER_SECOND as f64 / self.interval.0 as f64
    }

    /// A wait as its Retry-After says it: rounded up to a whole number of the limit's unit.
    pub fn retry_after(&self, wait: Tick) -> Tick {
        wait.rounded_up_to(self.unit)
    }

    /// The refusal of a limit closed for `wait` (a capacity window that lets nothing through
    /// before it ends): the bucket neither passes a request nor fills before then.
    pub fn closed_for(&self, wait: Tick) -> Refusal {
        let told = self.retry_after(wait);
        Refusal {
            retry_after: told,
            reset: told,
            exact: wait,
        }
    }

    /// τ: how far ahead of time a burst may run.
    fn tolerance(&self) -> u64 {
        u64::from(self.burst - 1) * self.interval.0
    }
}

/// One bucket: when the next request would be on time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    tat: Tick,
}

impl Bucket {
    /// A request at `now`: `Ok` takes a token; `Err` carries the Retry-After, the wait until
    /// one is there, and the reset, the wait until all `burst` are (when `tat` is past).
    pub fn take(&mut self, limit: &RateLimit, now: Tick) -> Result<(), Refusal> {
        let tat = self.tat.max(now);
        let earliest = Tick(tat.0.saturating_sub(limit.tolerance()));
        if earliest > now {
            return Err(Refusal {
                retry_after: limit.retry_after(earliest.since(now)),
                reset: limit.retry_after(tat.since(now)),
                exact: earliest.since(now),
            });
        }
        self.tat = tat.after(limit.interval);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_lets_a_burst_through_then_one_per_interval() {
        let limit = RateLimit::per_second(10.0, 3, LimitScope::Tool, Tick(1));
        assert_eq!(limit.interval, Tick(100_000));
        let mut b = Bucket::default();
        for _ in 0..3 {
            assert_eq!(b.take(&limit, Tick(0)), Ok(()));
        }
        // The fourth must wait for the first token to come back, and the bucket is full when
        // all three have.
        let refused = |retry_after, reset, exact| {
            Err(Refusal {
                retry_after: Tick(retry_after),
                reset: Tick(reset),
                exact: Tick(exact),
            })
        };
        let tick = |n| refused(n, n + 200_000, n);
        assert_eq!(b.take(&limit, Tick(0)), tick(100_000));
        assert_eq!(b.take(&limit, Tick(40_000)), tick(60_000));
        assert_eq!(b.take(&limit, Tick(100_000)), Ok(()));
        assert_eq!(b.take(&limit, Tick(100_000)), tick(100_000));
        // After a long quiet spell the bucket is full again, and no fuller.
        for _ in 0..3 {
            assert_eq!(b.take(&limit, Tick(10_000_000)), Ok(()));
        }
        assert!(b.take(&limit, Tick(10_000_000)).is_err());
        // In whole seconds, as an HTTP header says it; to the tick where `retry-after-ms` does.
        let seconds = RateLimit {
            unit: Tick(TICKS_PER_SECOND),
            ..limit
        };
        assert_eq!(
            b.take(&seconds, Tick(10_000_000)),
            refused(TICKS_PER_SECOND, TICKS_PER_SECOND, 100_000)
        );
    }

    /// Over every window of length W, accepted requests stay under W / T + burst, whatever the
    /// arrivals: the n-th since the window opened needs (n − burst)·T < W.
    #[test]
    fn no_window_takes_more_than_its_share_and_the_burst() {
        let limit = RateLimit::per_second(7.0, 4, LimitScope::Tool, Tick(1));
        let mut b = Bucket::default();
        let mut accepted = Vec::new();
        let mut t = 0u64;
        for i in 0..5_000u64 {
            // Clumps and gaps: a cheap deterministic mix of short and long gaps.
            t += (i * 7919 % 13) * 9_000 + if i % 50 == 0 { 900_000 } else { 0 };
            if b.take(&limit, Tick(t)).is_ok() {
                accepted.push(t);
            }
        }
        for (i, &from) in accepted.iter().enumerate() {
            for window in [1u64, 50_000, 142_857, 1_000_000, 5_000_000] {
                let inside = accepted[i..]
                    .iter()
                    .take_while(|&&a| a < from + window)
                    .count();
                let bound = window as f64 / limit.interval.0 as f64 + f64::from(limit.burst);
                assert!((inside as f64) < bound, "{inside} in {window} from {from}");
            }
        }
    }
}
