//! What bounds one operation as a whole, across all its attempts: an absolute deadline fixed at
//! its start, a cap on dispatches, and a cancellation.
//!
//! - The deadline is `start + deadline`. An attempt is granted `min(timeout, deadline − now)`;
//!   a reply exactly at the deadline is late. A backoff that runs into the deadline is spent up
//!   to it, and the intent stops there (`deadline_exceeded`).
//! - The dispatch cap counts every dispatch, the first included: a token is taken just before
//!   each one. When a retry is due and no token is left, the intent stops at once
//!   (`dispatch_budget_exhausted`) rather than spend a backoff that cannot lead to a call.
//! - A cancellation stops the intent `cancel_after` its start (`cancelled`); it wins a tie with
//!   the deadline.

use crate::time::Tick;

/// Whether a call over an edge of the call graph carries its caller's deadline, as gRPC's
/// deadline propagation does: the caller's time left travels with the request, less a margin
/// for the way back, and a call with none left fails at once without being sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Propagation {
    #[default]
    None,
    Propagate {
        margin: Tick,
    },
}

impl Propagation {
    pub const NAMES: [&'static str; 3] = ["none", "propagate", "propagate_minus"];

    pub fn name(self) -> &'static str {
        match self {
            Propagation::None => "none",
            Propagation::Propagate { margin } if margin == Tick::ZERO => "propagate",
            Propagation::Propagate { .. } => "propagate_minus",
        }
    }

    /// The deadline a call carries, where its caller's is `caller`.
    pub fn carried(self, caller: Option<Tick>) -> Option<Tick> {
        match self {
            Propagation::None => None,
            Propagation::Propagate { margin } => caller.map(|t| Tick(t.0.saturating_sub(margin.0))),
        }
    }
}

/// The bounds of one operation; `None` where there is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub deadline: Option<Tick>,
    pub dispatch_cap: Option<u32>,
    pub cancel_after: Option<Tick>,
    /// The cooperative admission rule, which needs the deadline.
    pub admission: Option<Admission>,
}

/// Cooperative admission: an attempt goes out only if the time left is more than the wait before
/// it, a `reserve` kept for what follows, and the `min_attempt` an attempt needs; it is then
/// granted `min(timeout_cap, remaining − reserve)`. A refusal stops the operation at once
/// (`budget_too_small`), before any wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    pub reserve: Tick,
    pub min_attempt: Tick,
    pub timeout_cap: Tick,
}

impl Limits {
    /// Whether any bound is set: closed forms describe unbounded retrying only.
    pub fn any(&self) -> bool {
        *self != Limits::default()
    }

    /// The wait granted to an attempt sent at `now` by an intent that started at `start`: the
    /// timeout, cut to the time left before the deadline.
    pub fn grant(&self, timeout: Option<Tick>, start: Tick, now: Tick) -> Option<Tick> {
        let left = self.left(start, now);
        // Under admission the reserve is kept back, and the cap bounds the wait.
        let left = match (self.admission, left) {
            (Some(a), Some(l)) => Some(a.timeout_cap.min(l.since(a.reserve))),
            (_, l) => l,
        };
        match (timeout, left) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        }
    }

    /// The time left before the deadline of an intent that started at `start`.
    fn left(&self, start: Tick, now: Tick) -> Option<Tick> {
        self.deadline.map(|d| start.after(d).since(now))
    }

    /// Whether cooperative admission lets an attempt go out after a wait of `delay` from `now`
    /// (always, without the rule).
    pub fn admits(&self, start: Tick, now: Tick, delay: Tick) -> bool {
        match (self.admission, self.left(start, now)) {
            (Some(a), Some(left)) => left > delay.after(a.reserve).after(a.min_attempt),
            _ => true,
        }
    }

    /// Whether `dispatches` have used up the dispatch cap, so no other may go out.
    pub fn cap_spent(&self, dispatches: u32) -> bool {
        self.dispatch_cap.is_some_and(|cap| dispatches >= cap)
    }

    /// Whether the deadline of an intent that started at `start` has come by `now`.
    pub fn past_deadline(&self, start: Tick, now: Tick) -> bool {
        self.deadline.is_some_and(|d| now >= start.after(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_deadline_cuts_the_wait() {
        let limits = Limits {
            deadline: Some(Tick(20)),
            ..Limits::default()
        };
        assert_eq!(limits.grant(None, Tick(0), Tick(18)), Some(Tick(2)));
        assert_eq!(limits.grant(Some(Tick(5)), Tick(0), Tick(6)), Some(Tick(5)));
        assert_eq!(
            Limits::default().grant(Some(Tick(5)), Tick(0), Tick(6)),
            Some(Tick(5))
        );
        assert_eq!(Limits::default().grant(None, Tick(0), Tick(6)), None);
        assert!(limits.past_deadline(Tick(0), Tick(20)));
        assert!(!limits.past_deadline(Tick(0), Tick(19)));
    }

    /// The worked example: 12 s in all, a 4 s cap, 1 s reserve, 1 s minimum. A 503 after 9.2 s
    /// leaves 2.8 s > 0.5 + 1 + 1, so the retry is admitted; after the 0.5 s backoff it is
    /// granted min(4, 2.3 − 1) = 1.3 s. The boundary is strict.
    #[test]
    fn cooperative_admission_keeps_a_reserve() {
        let s = |x: f64| Tick((x * 1_000_000.0) as u64);
        let limits = Limits {
            deadline: Some(s(12.0)),
            admission: Some(Admission {
                reserve: s(1.0),
                min_attempt: s(1.0),
                timeout_cap: s(4.0),
            }),
            ..Limits::default()
        };
        assert!(limits.admits(Tick(0), s(9.2), s(0.5)));
        assert_eq!(limits.grant(None, Tick(0), s(9.7)), Some(s(1.3)));
        assert_eq!(limits.grant(None, Tick(0), Tick(0)), Some(s(4.0)));
        assert!(
            !limits.admits(Tick(0), s(9.5), s(0.5)),
            "2.5 s is not more than 2.5 s"
        );
    }
}
