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

/// The bounds of one operation; `None` where there is none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub deadline: Option<Tick>,
    pub dispatch_cap: Option<u32>,
    pub cancel_after: Option<Tick>,
}

impl Limits {
    /// Whether any bound is set: closed forms describe unbounded retrying only.
    pub fn any(&self) -> bool {
        *self != Limits::default()
    }

    /// The wait granted to an attempt sent at `now` by an intent that started at `start`: the
    /// timeout, cut to the time left before the deadline.
    pub fn grant(&self, timeout: Option<Tick>, start: Tick, now: Tick) -> Option<Tick> {
        let left = self.deadline.map(|d| start.after(d).since(now));
        match (timeout, left) {
            (Some(t), Some(l)) => Some(t.min(l)),
            (t, l) => t.or(l),
        }
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
}
