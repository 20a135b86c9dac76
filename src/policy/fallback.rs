//! Fallbacks: the tools a call turns to, in order, once its own policy has given up on the
//! tool it was meant for (the primary), and a cooldown that rests a failing primary. While a
//! primary cools down, calls meant for it go straight to its first fallback. LiteLLM's router
//! is the model (its `fallbacks` list, and the per-deployment failure counter of its
//! `allowed_fails` path, whose entries live `cooldown_time`): here `cooldown_after` is the
//! calls that may fail within `cooldown` of the first one counted before the primary rests,
//! and `cooldown` how long the rest lasts; a success does not clear the count, as there.
//! Defaults are LiteLLM's: 3 failures, 5 s.

use crate::time::Tick;

/// An edge's fallbacks, and when its primary is rested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fallback {
    /// The tools tried in order after the primary, each over its own edge from the same
    /// caller, with that edge's policy.
    pub tools: Vec<usize>,
    pub cooldown: Option<Cooldown>,
}

/// Once `after` calls to the primary have failed within `lasts` of the first of them, it rests
/// for `lasts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cooldown {
    pub after: u32,
    pub lasts: Tick,
}

impl Cooldown {
    /// LiteLLM's `DEFAULT_ALLOWED_FAILS` and `DEFAULT_COOLDOWN_TIME_SECONDS`.
    pub const LITELLM: Cooldown = Cooldown {
        after: 3,
        lasts: Tick(5_000_000),
    };
}

/// Where a primary stands with its client: the failed calls counted since `counted_from`,
/// and when its rest ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cooling {
    failures: u32,
    counted_from: Tick,
    until: Tick,
}

impl Cooling {
    /// Whether the primary rests at `now`.
    pub fn rests(&self, now: Tick) -> bool {
        now < self.until
    }

    /// A call to the primary ended at `now`, `failed` or not. A failure is counted — in a new
    /// count where the last one's time is up — and the `after`-th starts a rest and clears the
    /// count, so a primary back from its rest has `after` failures to spend again.
    pub fn ended(&mut self, rule: Cooldown, failed: bool, now: Tick) {
        if !failed {
            return;
        }
        if self.failures == 0 || now >= self.counted_from.after(rule.lasts) {
            self.failures = 0;
            self.counted_from = now;
        }
        self.failures += 1;
        if self.failures >= rule.after {
            self.failures = 0;
            self.until = now.after(rule.lasts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: Cooldown = Cooldown {
        after: 3,
        lasts: Tick(100),
    };

    #[test]
    fn the_third_failure_within_the_window_rests_the_primary() {
        let mut c = Cooling::default();
        c.ended(RULE, true, Tick(1));
        c.ended(RULE, true, Tick(2));
        assert!(!c.rests(Tick(2)));
        c.ended(RULE, true, Tick(3));
        assert!(c.rests(Tick(3)) && c.rests(Tick(102)));
        assert!(!c.rests(Tick(103)));
    }

    #[test]
    fn failures_spread_wider_than_the_window_never_rest_it() {
        let mut c = Cooling::default();
        for k in 0..10 {
            // Two failures in each window, a success between: never three.
            c.ended(RULE, true, Tick(k * 100));
            c.ended(RULE, false, Tick(k * 100 + 10));
            c.ended(RULE, true, Tick(k * 100 + 50));
            assert!(!c.rests(Tick(k * 100 + 50)));
        }
        // A success does not clear the count: the third failure within the window rests it.
        c.ended(RULE, true, Tick(1000));
        c.ended(RULE, false, Tick(1001));
        c.ended(RULE, true, Tick(1002));
        c.ended(RULE, true, Tick(1003));
        assert!(c.rests(Tick(1003)));
    }

    #[test]
    fn back_from_a_rest_the_count_starts_again() {
        let mut c = Cooling::default();
        for t in 1..=3 {
            c.ended(RULE, true, Tick(t));
        }
        // A call that started before the rest fails during it: one of three again.
        c.ended(RULE, true, Tick(50));
        assert_eq!(c.until, Tick(103));
        c.ended(RULE, true, Tick(200));
        assert!(!c.rests(Tick(200)));
    }
}
