//! A concurrency limit per tool: the client's cap on its calls in flight to one tool (Envoy's
//! `max_requests`, Netflix's concurrency-limits). A call is in flight from its dispatch until
//! its reply, its timeout or the client's giving up on it.
//!
//! - `fixed`: at most `limit` calls at once.
//! - `aimd`: the limit adapts as calls end — additive increase, multiplicative decrease, as
//!   Netflix's `AIMDLimit` does: a call answered in time raises it by `increase`, a timeout, 429
//!   or 5xx multiplies it by `decrease`, and other outcomes (a lost packet, a 403) leave it; it
//!   stays within `min` and `max` and starts at `limit`.
//!   The calls allowed at once are its whole part.
//!
//! A call over the limit waits in a client-side line, first come first served, of at most
//! `queue` calls; it goes out when a call ends and frees a slot. A call that finds the line full
//! — or any call over the limit, with `queue = 0` — stops `concurrency_limited`.

use std::collections::VecDeque;

use crate::model::FailureClass;

/// How the limit is set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LimitRule {
    Fixed(u32),
    Aimd {
        initial: u32,
        min: u32,
        max: u32,
        increase: f64,
        decrease: f64,
    },
}

/// A concurrency limit as a policy configures it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConcurrencyRule {
    pub limit: LimitRule,
    /// The most calls that may wait for a slot; 0 refuses a call over the limit at once.
    pub queue: u32,
}

/// Whether a call over the limit waits or stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Full {
    /// It joined the line.
    Waits,
    /// The line is full, or there is none.
    Refused,
}

/// One tool's limit in a run: the calls in flight, the limit now, and the line.
#[derive(Clone, Debug)]
pub struct Concurrency {
    rule: ConcurrencyRule,
    limit: f64,
    in_flight: u32,
    /// Tickets of the calls waiting, in order of arrival.
    line: VecDeque<u64>,
}

impl Concurrency {
    pub fn new(rule: ConcurrencyRule) -> Self {
        let limit = match rule.limit {
            LimitRule::Fixed(n) => n,
            LimitRule::Aimd { initial, .. } => initial,
        };
        Concurrency {
            rule,
            limit: f64::from(limit),
            in_flight: 0,
            line: VecDeque::new(),
        }
    }

    /// The calls allowed in flight now.
    pub fn allowed(&self) -> u32 {
        self.limit as u32
    }

    /// Whether a call could go out now.
    pub fn has_room(&self) -> bool {
        self.in_flight < self.allowed()
    }

    /// A call goes out: it holds a slot until it ends.
    pub fn take(&mut self) {
        self.in_flight += 1;
    }

    /// A call over the limit, known by `ticket`, joins the line if there is room in it.
    pub fn wait(&mut self, ticket: u64) -> Full {
        if self.line.len() < self.rule.queue as usize {
            self.line.push_back(ticket);
            Full::Waits
        } else {
            Full::Refused
        }
    }

    /// A call in flight ended: answered (`Some(failure)`, none for a success) or given up on
    /// (`None`). Frees its slot and adapts an AIMD limit to how it ended.
    pub fn end(&mut self, answered: Option<Option<FailureClass>>) {
        self.in_flight = self.in_flight.saturating_sub(1);
        if let (
            LimitRule::Aimd {
                min,
                max,
                increase,
                decrease,
                ..
            },
            Some(failure),
        ) = (self.rule.limit, answered)
        {
            self.limit = match failure {
                None => (self.limit + increase).min(f64::from(max)),
                Some(
                    FailureClass::Timeout | FailureClass::Throttled | FailureClass::ServerError,
                ) => (self.limit * decrease).max(f64::from(min)),
                // A lost packet or a refusal says nothing of the tool's load.
                Some(_) => self.limit,
            };
        }
    }

    /// The first call in line, taken out of it, if a slot is free for it.
    pub fn next_waiting(&mut self) -> Option<u64> {
        if self.has_room() {
            self.line.pop_front()
        } else {
            None
        }
    }

    /// Takes the call `ticket` out of the line; whether it was in it.
    pub fn leave(&mut self, ticket: u64) -> bool {
        let at = self.line.iter().position(|&t| t == ticket);
        at.map(|i| self.line.remove(i)).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixed_limit_lines_calls_up_and_lets_them_out_in_order() {
        let mut c = Concurrency::new(ConcurrencyRule {
            limit: LimitRule::Fixed(2),
            queue: 1,
        });
        c.take();
        c.take();
        assert!(!c.has_room());
        assert_eq!(c.wait(7), Full::Waits);
        assert_eq!(c.wait(8), Full::Refused);
        assert_eq!(c.next_waiting(), None);
        c.end(Some(None));
        assert_eq!(c.next_waiting(), Some(7));
        c.take();
        assert_eq!(c.wait(9), Full::Waits);
        assert!(c.leave(9) && !c.leave(9));
        c.end(None);
        assert!(c.has_room());
    }

    #[test]
    fn aimd_grows_by_steps_and_shrinks_by_a_factor_within_its_bounds() {
        let mut c = Concurrency::new(ConcurrencyRule {
            limit: LimitRule::Aimd {
                initial: 4,
                min: 2,
                max: 6,
                increase: 1.0,
                decrease: 0.5,
            },
            queue: 0,
        });
        for want in [5, 6, 6] {
            c.take();
            c.end(Some(None));
            assert_eq!(c.allowed(), want);
        }
        for want in [3, 2, 2] {
            c.take();
            c.end(Some(Some(FailureClass::Timeout)));
            assert_eq!(c.allowed(), want);
        }
        // A call given up on, or refused for good (a 403), changes nothing.
        c.take();
        c.end(None);
        c.take();
        c.end(Some(Some(FailureClass::Forbidden)));
        assert_eq!(c.allowed(), 2);
    }
}
