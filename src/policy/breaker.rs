//! The circuit breaker: after enough failures of a tool the client stops calling it for a while
//! and fails those calls at once (short-circuits them), then lets a few probe calls through to
//! see whether it has recovered.
//!
//! CLOSED counts outcomes and trips to OPEN on `consecutive` failures in a row, or on a failure
//! rate of at least `failure_rate` over a window of the last calls or the last stretch of time
//! (once the window holds `minimum_calls`). OPEN rejects every call for `open_duration`, then
//! turns HALF_OPEN: it admits `half_open_probes` calls and rejects the rest until they are
//! answered. A probe success closes it; a probe failure opens it again. Only the outcome
//! classes in `counts` are failures; every other outcome is a success.
//!
//! A breaker refuses every call (`refuses = "all"`, the classic breaker), or only retries
//! (`"retries"`: a retry circuit breaker, which lets every first try through and stops the
//! retries that would multiply the load on a tool that is failing for everyone). Either way it
//! hears how every call ended.

use std::collections::VecDeque;

use super::RetryOn;
use crate::model::FailureClass;
use crate::time::Tick;

/// When a closed breaker trips.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trip {
    /// This many failures in a row.
    Consecutive(u32),
    /// At least `rate` of the calls in the window failed, the window holding `minimum_calls`.
    Rate {
        rate: f64,
        window: Window,
        minimum_calls: u32,
    },
}

/// The calls a failure rate is taken over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// The last this many calls.
    Calls(u32),
    /// The calls answered in the last stretch of this length.
    Time(Tick),
}

/// Which calls an open breaker refuses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refuses {
    /// Every call: first tries, retries and hedges.
    #[default]
    All,
    /// Retries and hedges only; first tries always go out.
    Retries,
}

impl Refuses {
    pub const ALL: [Refuses; 2] = [Refuses::All, Refuses::Retries];

    pub fn name(self) -> &'static str {
        match self {
            Refuses::All => "all",
            Refuses::Retries => "retries",
        }
    }
}

/// A breaker's settings, as a policy configures it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerRule {
    pub trip: Trip,
    pub refuses: Refuses,
    pub open_duration: Tick,
    pub half_open_probes: u32,
    /// The outcome classes that count as failures.
    pub counts: RetryOn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Closed,
    Open { until: Tick },
    HalfOpen { admitted: u32 },
}

/// One breaker in a run: the client's view of one tool.
#[derive(Clone, Debug)]
pub struct Breaker {
    rule: BreakerRule,
    state: State,
    consecutive: u32,
    /// Recent outcomes (when, failed), for a failure rate.
    window: VecDeque<(Tick, bool)>,
}

impl Breaker {
    pub fn new(rule: BreakerRule) -> Self {
        Breaker {
            rule,
            state: State::Closed,
            consecutive: 0,
            window: VecDeque::new(),
        }
    }

    /// The settings it was made with.
    pub fn rule(&self) -> &BreakerRule {
        &self.rule
    }

    /// Until when the breaker refuses every call, if it was last seen open. It turns half-open
    /// only when a call comes after that time.
    pub fn open_until(&self) -> Option<Tick> {
        match self.state {
            State::Open { until } => Some(until),
            _ => None,
        }
    }

    /// Whether a call may be dispatched at `now`; an open breaker whose time is up turns
    /// half-open here, and the call is one of its probes.
    pub fn admit(&mut self, now: Tick) -> bool {
        if let State::Open { until } = self.state {
            if now < until {
                return false;
            }
            self.state = State::HalfOpen { admitted: 0 };
        }
        match &mut self.state {
            State::HalfOpen { admitted } if *admitted >= self.rule.half_open_probes => false,
            State::HalfOpen { admitted } => {
                *admitted += 1;
                true
            }
            _ => true,
        }
    }

    /// Takes in the outcome of an admitted call, answered at `now`.
    pub fn record(&mut self, now: Tick, class: Option<FailureClass>) {
        let failed = class.is_some_and(|c| self.rule.counts.contains(c));
        match self.state {
            State::HalfOpen { .. } if failed => self.open(now),
            State::HalfOpen { .. } => self.close(),
            // An answer that comes back while open (a call admitted before it tripped) changes
            // nothing: the breaker already acted.
            State::Open { .. } => {}
            State::Closed => {
                self.consecutive = if failed { self.consecutive + 1 } else { 0 };
                self.window.push_back((now, failed));
                if self.should_trip(now) {
                    self.open(now);
                }
            }
        }
    }

    fn should_trip(&mut self, now: Tick) -> bool {
        match self.rule.trip {
            Trip::Consecutive(n) => self.consecutive >= n,
            Trip::Rate {
                rate,
                window,
                minimum_calls,
            } => {
                match window {
                    Window::Calls(n) => {
                        while self.window.len() > n as usize {
                            self.window.pop_front();
                        }
                    }
                    Window::Time(span) => {
                        while self
                            .window
                            .front()
                            .is_some_and(|&(t, _)| now.since(t) >= span)
                        {
                            self.window.pop_front();
                        }
                    }
                }
                let calls = self.window.len() as u32;
                let failures = self.window.iter().filter(|(_, f)| *f).count() as f64;
                calls >= minimum_calls && calls > 0 && failures / f64::from(calls) >= rate
            }
        }
    }

    fn open(&mut self, now: Tick) {
        self.state = State::Open {
            until: now.after(self.rule.open_duration),
        };
        self.consecutive = 0;
        self.window.clear();
    }

    fn close(&mut self) {
        self.state = State::Closed;
        self.consecutive = 0;
        self.window.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(trip: Trip) -> BreakerRule {
        BreakerRule {
            trip,
            refuses: Refuses::All,
            open_duration: Tick(100),
            half_open_probes: 1,
            counts: FailureClass::ALL.into_iter().collect(),
        }
    }

    const FAIL: Option<FailureClass> = Some(FailureClass::ServerError);

    #[test]
    fn three_failures_in_a_row_open_it_and_a_probe_closes_it() {
        let mut b = Breaker::new(rule(Trip::Consecutive(3)));
        for t in 0..3 {
            assert!(b.admit(Tick(t)));
            b.record(Tick(t), FAIL);
        }
        assert!(!b.admit(Tick(50)), "open: short-circuited");
        assert!(!b.admit(Tick(101)), "still open until 2 + 100");
        assert!(b.admit(Tick(102)), "half-open: one probe");
        assert!(!b.admit(Tick(103)), "the rest wait for the probe");
        b.record(Tick(110), None);
        assert!(b.admit(Tick(111)) && b.admit(Tick(112)), "closed again");
    }

    #[test]
    fn a_failed_probe_opens_it_again() {
        let mut b = Breaker::new(rule(Trip::Consecutive(1)));
        assert!(b.admit(Tick(0)));
        b.record(Tick(0), FAIL);
        assert!(b.admit(Tick(100)));
        b.record(Tick(105), FAIL);
        assert!(!b.admit(Tick(150)));
        assert!(b.admit(Tick(205)));
    }

    #[test]
    fn a_rate_needs_its_minimum_and_forgets_old_calls() {
        let mut b = Breaker::new(rule(Trip::Rate {
            rate: 0.5,
            window: Window::Calls(4),
            minimum_calls: 4,
        }));
        for (t, outcome) in [(0, FAIL), (1, FAIL), (2, None)] {
            assert!(b.admit(Tick(t)));
            b.record(Tick(t), outcome);
        }
        assert!(b.admit(Tick(3)), "3 calls are below the minimum of 4");
        b.record(Tick(3), None);
        assert_eq!(
            b.state,
            State::Open { until: Tick(103) },
            "2 of 4 failed: the rate"
        );
        assert!(!b.admit(Tick(4)));

        let mut timed = Breaker::new(rule(Trip::Rate {
            rate: 0.6,
            window: Window::Time(Tick(10)),
            minimum_calls: 2,
        }));
        timed.record(Tick(0), FAIL);
        timed.record(Tick(20), None);
        timed.record(Tick(21), FAIL);
        assert_eq!(
            timed.state,
            State::Closed,
            "the failure at 0 has left the window: 1 of 2"
        );
        timed.record(Tick(22), FAIL);
        assert!(
            matches!(timed.state, State::Open { .. }),
            "2 of 3 in the window"
        );
    }

    #[test]
    fn classes_outside_counts_are_successes() {
        let mut r = rule(Trip::Consecutive(1));
        r.counts = [FailureClass::ServerError].into_iter().collect();
        let mut b = Breaker::new(r);
        b.record(Tick(0), Some(FailureClass::Timeout));
        assert!(b.admit(Tick(1)));
        b.record(Tick(1), FAIL);
        assert!(!b.admit(Tick(2)));
    }
}
