//! A server's Retry-After, as a client follows it: whether it waits, retries, stops or holds
//! the call (`retry_after`), which of a 429's words it reads as the wait (`retry_after_from`),
//! and how the wait is jittered, clamped and combined with the backoff. The settings are one
//! value, [`Pushback`], so the retry decision reads one rule.

use crate::model::Refusal;
use crate::time::Tick;

/// What `retry-after-ms` counts in.
const MILLISECOND: Tick = Tick::from_millis(1);
use crate::variate::integer_in;

/// How a client treats a server's Retry-After.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// Waits at least that long before the retry.
    Honour,
    /// Stops: the server said not now, and the operation will not wait.
    Stop,
    /// Backs off by its own rule only, as if the server had said nothing.
    Ignore,
    /// Waits exactly that long instead of the backoff, longer or shorter (urllib3's
    /// `respect_retry_after_header`, gRPC's server pushback).
    Replace,
    /// As `Replace`, but a wait of zero is taken for none, and the backoff decides (urllib3:
    /// `sleep_for_retry` sleeps only on a truthy Retry-After).
    ReplaceUnlessZero,
    /// As `Replace`, but a wait of zero holds the call until its deadline, without a retry
    /// (gRPC's C core, measured with grpcio): it ends `deadline_exceeded`, or `hung` without one.
    ReplaceZeroHangs,
}

impl RetryAfter {
    pub const ALL: [RetryAfter; 6] = [
        RetryAfter::Honour,
        RetryAfter::Stop,
        RetryAfter::Ignore,
        RetryAfter::Replace,
        RetryAfter::ReplaceUnlessZero,
        RetryAfter::ReplaceZeroHangs,
    ];

    /// Whether the policy waits as the server says (and so jitter, a clamp or a restart of the
    /// backoff apply to it).
    pub fn waits(self) -> bool {
        matches!(
            self,
            RetryAfter::Honour
                | RetryAfter::Replace
                | RetryAfter::ReplaceUnlessZero
                | RetryAfter::ReplaceZeroHangs
        )
    }

    /// Whether a Retry-After of `wait` takes the place of the backoff: a wait the policy heeds,
    /// which for `ReplaceUnlessZero` is a wait of more than zero.
    pub fn heeds(self, wait: Tick) -> bool {
        // `ReplaceZeroHangs` heeds a zero too: it is what holds the call.
        self.waits() && !(self == RetryAfter::ReplaceUnlessZero && wait == Tick::ZERO)
    }

    /// Whether a Retry-After of `wait` holds the call until its deadline.
    pub fn holds(self, wait: Tick) -> bool {
        self == RetryAfter::ReplaceZeroHangs && wait == Tick::ZERO
    }

    pub fn name(self) -> &'static str {
        match self {
            RetryAfter::Honour => "honour",
            RetryAfter::Stop => "stop",
            RetryAfter::Ignore => "ignore",
            RetryAfter::Replace => "replace",
            RetryAfter::ReplaceUnlessZero => "replace_unless_zero",
            RetryAfter::ReplaceZeroHangs => "replace_zero_hangs",
        }
    }
}

/// What a client does with a Retry-After longer than it will wait (the OpenAI and Anthropic
/// SDKs' `MAX_RETRY_AFTER_DELAY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverLimit {
    /// Backs off by its own rule, as if the server had said nothing (Anthropic's SDK).
    Backoff,
    /// Does not retry at all (OpenAI's Python SDK since openai-python #3555, 2026-07-30).
    Stop,
}

impl OverLimit {
    pub const ALL: [OverLimit; 2] = [OverLimit::Backoff, OverLimit::Stop];

    pub fn name(self) -> &'static str {
        match self {
            OverLimit::Backoff => "backoff",
            OverLimit::Stop => "stop",
        }
    }
}

/// Which of a 429's words a client reads as its wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfterFrom {
    /// The `Retry-After` header: when the request would pass, in the limit's unit.
    Header,
    /// `retry-after-ms` where the server sends it, its wait to the millisecond, and the
    /// `Retry-After` where it does not: the Stainless SDKs' order (OpenAI's and Anthropic's).
    HeaderMs,
    /// The rate limit's reset headers (OpenAI's `x-ratelimit-reset-requests` / `-tokens`,
    /// Anthropic's `anthropic-ratelimit-*-reset`): when the limits that refused it are full
    /// again. A refusal that carries none (a 429 drawn from a tool's `throttled`) is read by its
    /// Retry-After.
    Reset,
}

impl RetryAfterFrom {
    pub const ALL: [RetryAfterFrom; 3] = [
        RetryAfterFrom::Header,
        RetryAfterFrom::HeaderMs,
        RetryAfterFrom::Reset,
    ];

    /// The wait a client reads from `refusal`, whose server sends `retry-after-ms` where
    /// `sends_ms` says so.
    pub fn read(self, refusal: &Refusal, sends_ms: bool) -> Tick {
        match self {
            RetryAfterFrom::HeaderMs if sends_ms => refusal.exact.rounded_up_to(MILLISECOND),
            RetryAfterFrom::Header | RetryAfterFrom::HeaderMs => refusal.retry_after,
            RetryAfterFrom::Reset => refusal.reset,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            RetryAfterFrom::Header => "retry-after",
            RetryAfterFrom::HeaderMs => "retry-after-ms",
            RetryAfterFrom::Reset => "reset",
        }
    }
}

/// Everything a policy does with a server's Retry-After.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pushback {
    /// What the wait means to the client.
    pub mode: RetryAfter,
    /// Where the client reads the wait: the Retry-After, or the limits' reset.
    pub from: RetryAfterFrom,
    /// A wait drawn uniformly up to this long, added to a Retry-After the policy heeds, so
    /// that clients told the same time do not all come back at once.
    pub jitter: Tick,
    /// The longest a heeded Retry-After is followed, jitter included (botocore clamps the
    /// server's word); `None`, as long as it says.
    pub max: Option<Tick>,
    /// The most a heeded Retry-After may add to the backoff's own delay (the AWS SDKs keep the
    /// server's word within [backoff, backoff + 5 s]); `None`, no such bound.
    pub over_backoff: Option<Tick>,
    /// A 429 or 503 that names a wait is retried even where `retry_on` leaves its class out,
    /// as urllib3 retries such a refusal whatever its status list says.
    pub retries: bool,
    /// After waiting on a Retry-After, the backoff starts its curve again from the first
    /// retry's, as gRPC does after server pushback.
    pub resets: bool,
    /// The longest Retry-After the client heeds, and what it does with a longer one; `None`,
    /// any.
    pub limit: Option<(Tick, OverLimit)>,
}

impl Default for Pushback {
    /// Honours the wait as said: no jitter, no clamp, no bound, no extra retries, no restart.
    fn default() -> Self {
        Pushback {
            mode: RetryAfter::Honour,
            from: RetryAfterFrom::Header,
            jitter: Tick::ZERO,
            max: None,
            over_backoff: None,
            retries: false,
            resets: false,
            limit: None,
        }
    }
}

impl Pushback {
    /// The delay before the retry when the server asked for `asked` and the backoff's own is
    /// `backoff`, and whether the server's word set it (`None`: the policy did not heed it).
    /// `word` is a random word for the jitter, read only when the policy jitters.
    pub fn delay(&self, asked: Tick, backoff: Tick, word: impl FnOnce() -> u64) -> Option<Tick> {
        if !self.mode.heeds(asked) || self.over_limit(asked).is_some() {
            return None;
        }
        let jitter = match self.jitter {
            Tick::ZERO => Tick::ZERO,
            most => Tick(integer_in(word(), 0, most.0)),
        };
        let over = self.over_backoff.map_or(Tick::MAX, |o| backoff.after(o));
        let wait = (asked.after(jitter))
            .min(self.max.unwrap_or(Tick::MAX))
            .min(over);
        Some(match self.mode {
            RetryAfter::Honour => backoff.max(wait),
            _ => wait,
        })
    }
}

impl Pushback {
    /// What the client does with a Retry-After of `asked`, if that is longer than it heeds.
    pub fn over_limit(&self, asked: Tick) -> Option<OverLimit> {
        self.limit.filter(|(most, _)| asked > *most).map(|l| l.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 429 1.2345 s short of room, told in whole seconds, its bucket full in 9 s: each
    /// client reads its own header, and `retry-after-ms` only where the server sends one.
    #[test]
    fn each_client_reads_its_own_header() {
        let refusal = Refusal {
            retry_after: Tick::from_secs(2),
            reset: Tick::from_secs(9),
            exact: Tick(1_234_500),
        };
        let read = |from: RetryAfterFrom, sends_ms| from.read(&refusal, sends_ms).0;
        assert_eq!(read(RetryAfterFrom::Header, true), 2_000_000);
        assert_eq!(read(RetryAfterFrom::HeaderMs, true), 1_235_000);
        assert_eq!(read(RetryAfterFrom::HeaderMs, false), 2_000_000);
        assert_eq!(read(RetryAfterFrom::Reset, true), 9_000_000);
    }

    /// The Stainless SDKs' rule: a wait of 0 < v ≤ the limit replaces the backoff; a zero is
    /// none; a longer one is ignored (Anthropic) or ends the retries (OpenAI).
    #[test]
    fn a_wait_over_the_limit_is_ignored_or_stops() {
        for over in OverLimit::ALL {
            let rule = Pushback {
                mode: RetryAfter::ReplaceUnlessZero,
                limit: Some((Tick(60), over)),
                ..Pushback::default()
            };
            let no_word = || unreachable!("no jitter");
            assert_eq!(rule.delay(Tick(60), BACKOFF, no_word), Some(Tick(60)));
            assert_eq!(rule.delay(Tick(0), BACKOFF, no_word), None);
            assert_eq!(rule.delay(Tick(61), BACKOFF, no_word), None);
            assert_eq!(rule.over_limit(Tick(61)), Some(over));
            assert_eq!(rule.over_limit(Tick(60)), None);
        }
    }

    const BACKOFF: Tick = Tick(100);

    fn rule(mode: RetryAfter) -> Pushback {
        Pushback {
            mode,
            ..Pushback::default()
        }
    }

    #[test]
    fn each_mode_combines_the_wait_with_the_backoff_as_documented() {
        let no_word = || unreachable!("no jitter, no word");
        // (mode, asked, delay): honour waits at least the backoff, the replacing modes wait
        // the server's time either way, and only `replace_unless_zero` leaves a zero alone.
        let table = [
            (RetryAfter::Honour, 30, Some(100)),
            (RetryAfter::Honour, 300, Some(300)),
            (RetryAfter::Replace, 30, Some(30)),
            (RetryAfter::Replace, 0, Some(0)),
            (RetryAfter::ReplaceUnlessZero, 30, Some(30)),
            (RetryAfter::ReplaceUnlessZero, 0, None),
            (RetryAfter::ReplaceZeroHangs, 30, Some(30)),
            (RetryAfter::Ignore, 300, None),
            (RetryAfter::Stop, 300, None),
        ];
        for (mode, asked, delay) in table {
            let got = rule(mode).delay(Tick(asked), BACKOFF, no_word);
            assert_eq!(got, delay.map(Tick), "{} with {asked}", mode.name());
        }
    }

    #[test]
    fn jitter_is_added_before_the_clamp_and_the_bound() {
        let jittered = Pushback {
            mode: RetryAfter::Replace,
            jitter: Tick(50),
            ..Pushback::default()
        };
        // The top word draws the most jitter there is, below 50.
        let top = jittered
            .delay(Tick(30), BACKOFF, || u64::MAX)
            .expect("heeded");
        assert!(top > Tick(30) && top <= Tick(80), "{top:?}");
        let clamped = Pushback {
            max: Some(Tick(40)),
            ..jittered
        };
        assert_eq!(
            clamped.delay(Tick(30), BACKOFF, || u64::MAX),
            Some(Tick(40))
        );
        let bounded = Pushback {
            over_backoff: Some(Tick(5)),
            ..rule(RetryAfter::Honour)
        };
        assert_eq!(bounded.delay(Tick(300), BACKOFF, || 0), Some(Tick(105)));
    }

    #[test]
    fn only_a_zero_under_replace_zero_hangs_holds() {
        assert!(RetryAfter::ReplaceZeroHangs.holds(Tick::ZERO));
        assert!(!RetryAfter::ReplaceZeroHangs.holds(Tick(1)));
        assert!(!RetryAfter::Replace.holds(Tick::ZERO));
    }
}
