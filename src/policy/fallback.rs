//! Fallbacks: the tools a call turns to, in order, once its own policy has given up on the
//! tool it was meant for (the primary), and a cooldown that rests a failing primary. While a
//! primary cools down, calls meant for it go straight to its first fallback. LiteLLM's router
//! is the model: its `fallbacks` list, and the per-deployment failure counter of its
//! `allowed_fails` path — an entry whose time to live, `cooldown_time`, starts again with each
//! failure, the deployment cooled down once the count passes `allowed_fails`. Here
//! `cooldown_after` is the failures allowed and `cooldown` both that time to live and how long
//! the rest lasts; a success does not clear the count, as there. Defaults are LiteLLM's: 3
//! failures, 5 s.

use crate::time::Tick;

/// An edge's fallbacks, and when its primary is rested.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Fallback {
    /// The tools tried in order after the primary, each over its own edge from the same
    /// caller, with that edge's policy.
    pub tools: Vec<usize>,
    pub cooldown: Option<Cooldown>,
}

/// The moment a call on an edge may leave its tier for the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Moment {
    /// About to start, its primary resting in a cooldown (or not).
    Starts { resting: bool },
    /// It ended: its own policy gave up (`failed`), or it got its answer.
    Ended { failed: bool },
}

impl Fallback {
    /// The tool a call at tier `tier` (0: the primary) turns to at `moment`, if it turns: after
    /// a failure, the next in the list; about to start at a resting primary, the first; a call
    /// that succeeded, or starts at a primary that is not resting (or on an edge without a
    /// cooldown), stays.
    pub fn next(&self, tier: u8, moment: Moment) -> Option<usize> {
        let turns = match moment {
            Moment::Ended { failed } => failed,
            Moment::Starts { resting } => resting && tier == 0 && self.cooldown.is_some(),
        };
        turns
            .then(|| self.tools.get(usize::from(tier)).copied())
            .flatten()
    }
}

/// Once more than `after` calls to the primary have failed, each within `lasts` of the one
/// before, it rests for `lasts`.
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

/// Where a primary stands on one edge, for every caller of it: the failed calls counted, the
/// last of them, and when its rest ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cooling {
    failures: u32,
    last: Tick,
    until: Tick,
}

impl Cooling {
    /// Whether the primary rests at `now`.
    pub fn rests(&self, now: Tick) -> bool {
        now < self.until
    }

    /// A call to the primary ended at `now`, `failed` or not. A failure is counted — in a new
    /// count where the last one's time is up — and the one past `after` starts a rest and
    /// clears the count, so a primary back from its rest has `after` failures to spend again.
    pub fn ended(&mut self, rule: Cooldown, failed: bool, now: Tick) {
        if !failed {
            return;
        }
        if now >= self.last.after(rule.lasts) {
            self.failures = 0;
        }
        self.failures += 1;
        self.last = now;
        if self.failures > rule.after {
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

    /// Where a call turns, moment by moment, on an edge with two fallbacks (tools 7 and 9).
    #[test]
    fn a_call_turns_to_the_next_fallback_only_when_it_should() {
        let with = |cooldown| Fallback {
            tools: vec![7, 9],
            cooldown,
        };
        let (cooled, plain) = (with(Some(RULE)), with(None));
        let failed = Moment::Ended { failed: true };
        let answered = Moment::Ended { failed: false };
        let resting = Moment::Starts { resting: true };
        let awake = Moment::Starts { resting: false };
        let table = [
            (&plain, 0, failed, Some(7)),
            (&plain, 1, failed, Some(9)),
            (&plain, 2, failed, None),
            (&plain, 0, answered, None),
            (&plain, 0, resting, None),
            (&cooled, 0, resting, Some(7)),
            (&cooled, 1, resting, None),
            (&cooled, 0, awake, None),
            (&cooled, 1, failed, Some(9)),
            (&Fallback::default(), 0, failed, None),
        ];
        for (fallback, tier, moment, next) in table {
            assert_eq!(fallback.next(tier, moment), next, "{tier} {moment:?}");
        }
    }

    #[test]
    fn the_failure_past_those_allowed_rests_the_primary() {
        let mut c = Cooling::default();
        for t in 1..=3 {
            c.ended(RULE, true, Tick(t));
            assert!(!c.rests(Tick(t)), "3 failures are allowed");
        }
        c.ended(RULE, true, Tick(4));
        assert!(c.rests(Tick(4)) && c.rests(Tick(103)));
        assert!(!c.rests(Tick(104)));
    }

    #[test]
    fn a_count_whose_time_is_up_starts_again_and_a_success_does_not_clear_it() {
        let mut c = Cooling::default();
        // One failure each time the last one's count has run out: never more than one.
        for k in 0..10 {
            c.ended(RULE, true, Tick(k * 100));
            c.ended(RULE, false, Tick(k * 100 + 10));
            assert!(!c.rests(Tick(k * 100)));
        }
        // Each within the time of the one before, a success between: the fourth rests it.
        for t in [2000, 2090, 2180] {
            c.ended(RULE, true, Tick(t));
            c.ended(RULE, false, Tick(t + 1));
        }
        assert!(!c.rests(Tick(2181)));
        c.ended(RULE, true, Tick(2270));
        assert!(c.rests(Tick(2270)));
    }

    #[test]
    fn back_from_a_rest_the_count_starts_again() {
        let mut c = Cooling::default();
        for t in 1..=4 {
            c.ended(RULE, true, Tick(t));
        }
        assert_eq!(c.until, Tick(104));
        // A call that started before the rest fails during it: one of four again.
        c.ended(RULE, true, Tick(50));
        assert_eq!((c.failures, c.until), (1, Tick(104)));
    }
}
