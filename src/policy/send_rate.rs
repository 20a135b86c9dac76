//! A client-side send-rate limiter that adapts to throttles: botocore's adaptive retry mode.
//!
//! Off until the first throttle. From then every attempt the client sends, first tries
//! included, takes a token from a bucket filled at the allowed rate, and waits for one if the
//! bucket is empty. Every answer adjusts the rate: a throttle cuts it to `beta` times the rate
//! the client was sending at (measured over bins of `measure_bin`, smoothed); anything else
//! lets it grow back along a cubic curve (as TCP CUBIC does), reaching the rate of the last
//! throttle `K = ∛(w_max · (1 − beta) / scale)` seconds after it, and never above twice the
//! measured rate.
//!
//! The same bucket at a fixed rate is a client-side tokens-per-minute limiter ([`SendTokens`]):
//! on from the start, never adapting, each send taking the model tokens it may use (its input
//! plus `max_tokens`, the estimate OpenAI's cookbook limiter makes before a request goes out)
//! rather than one, and settling with the usage the answer reports: what was not generated goes
//! back, all of it for a request refused before any work — the provider's own accounting, kept
//! on the client's side.
//!
//! Sends that find the bucket empty wait in a line and go out one token at a time, first come
//! first served. A change of rate moves the time the next token is made, as botocore's
//! sleeping senders wake to re-read the rate.

use std::collections::VecDeque;

use crate::time::{TICKS_PER_SECOND, Tick};

/// The limiter's constants (botocore's: `_MIN_RATE`, `_BETA`, `_SCALE_CONSTANT`,
/// `_DEFAULT_SMOOTHING`, `_TIME_BUCKET_RANGE`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendRateRule {
    /// The lowest fill rate, tokens a second.
    pub min_rate: f64,
    /// The share of the measured rate kept after a throttle.
    pub beta: f64,
    /// The cubic's scale, rate per second cubed.
    pub scale: f64,
    /// The weight of the newest bin in the measured rate.
    pub smoothing: f64,
    /// The bins the sending rate is measured over.
    pub measure_bin: Tick,
}

impl SendRateRule {
    pub const BOTOCORE: SendRateRule = SendRateRule {
        min_rate: 0.5,
        beta: 0.7,
        scale: 0.4,
        smoothing: 0.8,
        measure_bin: Tick(TICKS_PER_SECOND / 2),
    };
}

/// A client-side bucket of a model's tokens, at a fixed rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SendTokens {
    /// Tokens a minute it refills with.
    pub per_minute: f64,
    /// Tokens it holds when full.
    pub burst: f64,
}

/// One limiter's state.
#[derive(Clone, Debug)]
pub struct SendRate {
    rule: SendRateRule,
    /// A fixed-rate bucket of tokens ([`SendTokens`]): no throttle changes it.
    fixed: bool,
    /// Whether a throttle has turned the bucket on.
    enabled: bool,
    fill_rate: f64,
    capacity: f64,
    /// Below 0 once sends have taken tokens not yet made.
    tokens: f64,
    refilled: Option<f64>,
    /// The smoothed sending rate, and the bin it was last updated in.
    measured: f64,
    last_bin: f64,
    in_bin: u64,
    /// The cubic: the rate at the last throttle, the time to regain it, and when it came.
    w_max: f64,
    k: f64,
    last_fail: f64,
    /// The sends waiting for tokens, by ticket with what each needs, in the order they asked.
    line: VecDeque<(u64, f64)>,
    /// When the line's head was promised its token, if a wake-up is set for it.
    due: Option<Tick>,
}

/// A token counts as made a hair early: a wake-up rounded to a whole tick may fall a rounding
/// error short of it.
const MADE: f64 = 1.0 - 1e-9;

impl SendRate {
    /// A limiter made at time 0, as a client is: rate 1, an empty bucket, nothing measured.
    pub fn new(rule: SendRateRule) -> SendRate {
        let mut limiter = SendRate {
            rule,
            fixed: false,
            enabled: false,
            fill_rate: 0.0,
            capacity: 0.0,
            tokens: 0.0,
            refilled: None,
            measured: 0.0,
            last_bin: 0.0,
            in_bin: 0,
            w_max: 0.0,
            k: 0.0,
            last_fail: 0.0,
            line: VecDeque::new(),
            due: None,
        };
        limiter.set_rate(1.0, 0.0);
        limiter
    }

    /// A fixed-rate bucket of `rule`'s tokens, full at time 0.
    pub fn fixed(rule: SendTokens) -> SendRate {
        let mut limiter = SendRate::new(SendRateRule::BOTOCORE);
        limiter.fixed = true;
        limiter.enabled = true;
        limiter.fill_rate = rule.per_minute / 60.0;
        limiter.capacity = rule.burst;
        limiter.tokens = rule.burst;
        limiter
    }

    /// What a send of `tokens` model tokens takes from this bucket: one token of an adaptive
    /// limiter; its tokens from a fixed one, at most the whole bucket (a send larger than the
    /// bucket waits for a full one rather than for ever).
    fn cost(&self, tokens: u64) -> f64 {
        match self.fixed {
            true => (tokens as f64).min(self.capacity),
            false => 1.0,
        }
    }

    /// Whether the send `ticket`, of `tokens` model tokens, may go out at `now`, taking what
    /// it costs; if not, it waits in the line. Nothing waits while the limiter is off.
    pub fn admit(&mut self, now: Tick, ticket: u64, tokens: u64) -> bool {
        if !self.enabled {
            return true;
        }
        self.refill(now.seconds());
        let cost = self.cost(tokens);
        if self.line.is_empty() && self.tokens >= cost * MADE {
            self.tokens -= cost;
            return true;
        }
        self.line.push_back((ticket, cost));
        false
    }

    /// When the line's head gets its token, if someone waits and that is not the time already
    /// promised: the caller sets one wake-up for each new promise, and an older one goes stale.
    pub fn next_due(&mut self, now: Tick) -> Option<Tick> {
        let Some(&(_, cost)) = self.line.front() else {
            self.due = None;
            return None;
        };
        self.refill(now.seconds());
        let short = (cost - self.tokens).max(0.0);
        let at = now.after(Tick(
            libm::ceil(short / self.fill_rate * TICKS_PER_SECOND as f64) as u64,
        ));
        if self.due == Some(at) {
            return None;
        }
        self.due = Some(at);
        Some(at)
    }

    /// At a promised wake-up: the waiting sends that go out now, in line order, each taking a
    /// token; `live` passes over one whose operation ended meanwhile. Nothing at a stale one.
    pub fn release(&mut self, now: Tick, mut live: impl FnMut(u64) -> bool) -> Vec<u64> {
        if self.due != Some(now) {
            return Vec::new();
        }
        self.due = None;
        self.refill(now.seconds());
        let mut out = Vec::new();
        while let Some(&(ticket, cost)) = self.line.front()
            && self.tokens >= cost * MADE
        {
            self.line.pop_front();
            if live(ticket) {
                self.tokens -= cost;
                out.push(ticket);
            }
        }
        out
    }

    /// A fixed bucket's send was answered having used `tokens` fewer than it took (the usage
    /// a model's response reports): they go back, as the provider's bucket gives them back.
    pub fn give_back(&mut self, now: Tick, tokens: u64) {
        if self.fixed {
            self.refill(now.seconds());
            self.tokens = (self.tokens + tokens as f64).min(self.capacity);
        }
    }

    /// Takes `ticket` out of the line; whether it was there.
    pub fn leave(&mut self, ticket: u64) -> bool {
        let at = self.line.iter().position(|&(t, _)| t == ticket);
        at.and_then(|i| self.line.remove(i)).is_some()
    }

    /// An attempt's answer at `now`: a throttle or not.
    pub fn heard(&mut self, now: Tick, throttled: bool) {
        if self.fixed {
            return;
        }
        let t = now.seconds();
        let measured = self.measure(t);
        let rate = if throttled {
            let at = match self.enabled {
                false => measured,
                true => measured.min(self.fill_rate),
            };
            self.w_max = at;
            self.k = libm::cbrt(at * (1.0 - self.rule.beta) / self.rule.scale);
            self.last_fail = t;
            self.enabled = true;
            at * self.rule.beta
        } else {
            self.rule.scale * libm::pow(t - self.last_fail - self.k, 3.0) + self.w_max
        };
        self.set_rate(rate.min(2.0 * measured), t);
    }

    /// The allowed rate, tokens a second.
    pub fn rate(&self) -> f64 {
        self.fill_rate
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    /// The smoothed sending rate, counting one more send at `t`.
    fn measure(&mut self, t: f64) -> f64 {
        let width = self.rule.measure_bin.seconds();
        let bin = libm::floor(t / width) * width;
        self.in_bin += 1;
        if bin > self.last_bin {
            let current = self.in_bin as f64 / (bin - self.last_bin);
            let s = self.rule.smoothing;
            self.measured = current * s + self.measured * (1.0 - s);
            self.in_bin = 0;
            self.last_bin = bin;
        }
        self.measured
    }

    fn refill(&mut self, t: f64) {
        if let Some(last) = self.refilled {
            self.tokens = (self.tokens + (t - last) * self.fill_rate).min(self.capacity);
        }
        self.refilled = Some(t);
    }

    /// A new rate from `t`: the bucket first fills at the old one up to now.
    fn set_rate(&mut self, rate: f64, t: f64) {
        self.refill(t);
        self.fill_rate = rate.max(self.rule.min_rate);
        self.capacity = rate.max(1.0);
        self.tokens = self.tokens.min(self.capacity);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every 100 ms for 3 s, a throttle at 3.05 s, then answers every 100 ms to 6 s:
    /// the allowed rate and the measured rate at checkpoints, and the waits of nine sends asking
    /// together just after the throttle, as botocore's `ClientRateLimiter`, `TokenBucket`,
    /// `CubicCalculator` and `RateClocker` compute them (transcribed into Python and run on
    /// the same answers).
    #[test]
    fn a_throttle_cuts_the_rate_and_the_cubic_brings_it_back_as_botocore_does() {
        let mut answers: Vec<(u64, bool)> = (1..=30).map(|k| (k * 100_000, false)).collect();
        answers.push((3_050_000, true));
        answers.extend((1..=30).map(|k| (3_000_000 + k * 100_000, false)));
        let expected = [
            (2_000_000, false, 3.2, 9.984),
            (3_050_000, true, 6.999_552, 9.999_36),
            (3_500_000, true, 8.629_302_916_825_708, 11.599_872),
            (5_000_000, true, 9.999_359_838_431_52, 10.012_798_976),
            (6_000_000, true, 10.390_554_936_185_93, 10.000_511_959_04),
        ];
        let mut limiter = SendRate::new(SendRateRule::BOTOCORE);
        let mut seen = Vec::new();
        let mut waits = Vec::new();
        for &(t, throttled) in &answers {
            if !limiter.enabled() {
                assert!(limiter.admit(Tick(t), t, 1), "no wait before a throttle");
            }
            limiter.heard(Tick(t), throttled);
            if throttled {
                waits = waits_of_nine(limiter.clone(), Tick(3_050_010));
            }
            if let Some(&(_, on, rate, measured)) = expected.iter().find(|e| e.0 == t) {
                seen.push((t, limiter.enabled(), limiter.rate(), limiter.measured));
                assert_eq!(limiter.enabled(), on, "at {t}");
                assert!(
                    (limiter.rate() - rate).abs() < 1e-9,
                    "rate at {t}: {}",
                    limiter.rate()
                );
                assert!(
                    (limiter.measured - measured).abs() < 1e-9,
                    "measured at {t}"
                );
            }
        }
        assert_eq!(seen.len(), expected.len());
        // 6.4e-5 s, 0.1429 s and 0.2858 s, rounded up to whole ticks.
        assert_eq!(waits, [0, 0, 0, 0, 0, 0, 65, 142_931, 285_797]);
    }

    /// Nine sends asking at `at`: how long each waits, woken at every promised time.
    fn waits_of_nine(mut limiter: SendRate, at: Tick) -> Vec<u64> {
        let mut waits = vec![None; 9];
        for (i, w) in waits.iter_mut().enumerate() {
            if limiter.admit(at, i as u64, 1) {
                *w = Some(0);
            }
        }
        let mut now = at;
        while let Some(due) = limiter.next_due(now) {
            now = due;
            for ticket in limiter.release(now, |_| true) {
                waits[ticket as usize] = Some(now.0 - at.0);
            }
        }
        waits
            .into_iter()
            .map(|w| w.expect("every send goes"))
            .collect()
    }

    /// A fixed bucket of 6 000 tokens a minute (100 a second), 1 000 deep: sends of 600, 600
    /// and 300 tokens at 0 go out, wait 2 s, and wait 3 s (in line, first come first served);
    /// no throttle changes it.
    #[test]
    fn a_fixed_bucket_takes_each_sends_tokens() {
        let mut limiter = SendRate::fixed(SendTokens {
            per_minute: 6_000.0,
            burst: 1_000.0,
        });
        let at = Tick(0);
        assert!(limiter.admit(at, 0, 600));
        assert!(!limiter.admit(at, 1, 600));
        assert!(!limiter.admit(at, 2, 300), "behind the one waiting");
        limiter.heard(at, true);
        let mut now = at;
        let mut waits = Vec::new();
        while let Some(due) = limiter.next_due(now) {
            now = due;
            for ticket in limiter.release(now, |_| true) {
                waits.push((ticket, now.0));
            }
        }
        assert_eq!(waits, [(1, 2_000_000), (2, 5_000_000)]);
        // A send larger than the bucket waits for a full one.
        assert!(!limiter.admit(now, 3, 5_000));
        assert_eq!(limiter.next_due(now), Some(Tick(15_000_000)));
    }

    /// A rate change moves the promise: the older wake-up goes stale and releases nothing.
    #[test]
    fn a_new_rate_moves_the_next_token() {
        let mut limiter = SendRate::new(SendRateRule::BOTOCORE);
        limiter.heard(Tick(600_000), false);
        limiter.heard(Tick(1_100_000), true);
        let now = Tick(1_100_000);
        while limiter.admit(now, 0, 1) {}
        let first = limiter.next_due(now).expect("a send waits");
        assert_eq!(limiter.next_due(now), None, "one promise at a time");
        // A throttle cuts the rate: the token comes later, and the old promise is stale.
        limiter.heard(Tick(1_100_001), true);
        let later = limiter.next_due(Tick(1_100_001)).expect("a new promise");
        assert!(later > first, "{later} vs {first}");
        assert!(limiter.release(first, |_| true).is_empty());
        assert_eq!(limiter.release(later, |_| true), [0]);
    }
}
