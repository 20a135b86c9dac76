//! Where one intent's retry policy stands: the attempts of each layer, the backoff's curve,
//! the payload's version and the scope its deadline counts from. The decision reads it
//! ([`decide`](super::decide::decide)); taking a retry the gates admitted is the one thing
//! that changes it.

use super::Tries;
use super::decide::Next;
use crate::time::Tick;

/// Where an intent's retry policy stands.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryState {
    /// What the retry budget took for the latest retry; none before the first retry.
    pub cost: Option<f64>,
    /// The delay before the last retry (decorrelated jitter grows from it).
    pub last_delay: Tick,
    /// The retry after which the backoff's curve starts again (a Retry-After that resets it);
    /// 0 while it never has.
    pub backoff_from: u32,
    /// Retries so far, in every layer: retry n reads word n − 1 of the jitter stream.
    pub retries: u32,
    /// Where the intent stands in each retry layer.
    pub tries: Tries,
    /// The layer whose attempt the next dispatch begins.
    pub next_layer: usize,
    /// The version of the request's arguments the next attempt carries.
    pub payload: u32,
    /// The scope the deadline and dispatch cap count from: the intent's start and its first
    /// dispatch, unless each layer entered resets them.
    pub scope: Scope,
}

impl RetryState {
    /// Where a new intent starting at `now` stands: nothing tried, nothing spent.
    pub fn new(now: Tick) -> Self {
        RetryState {
            cost: None,
            last_delay: Tick::ZERO,
            backoff_from: 0,
            retries: 0,
            tries: Tries::default(),
            next_layer: 0,
            payload: 0,
            scope: Scope {
                start: now,
                first: 0,
            },
        }
    }

    /// Makes this what [`RetryState::new`] gives, in place: the layers' list keeps its room,
    /// so a reused slot allocates nothing for its next intent.
    pub fn reset(&mut self, now: Tick) {
        let mut tries = std::mem::take(&mut self.tries);
        tries.clear();
        *self = RetryState {
            tries,
            ..RetryState::new(now)
        };
    }
}

impl RetryState {
    /// Takes retry `next`, which the gates admitted at a budget `cost` (none where no budget
    /// charged it).
    pub fn take(&mut self, next: &Next, cost: Option<f64>) {
        self.cost = cost.or(self.cost);
        self.retries += 1;
        self.last_delay = next.backoff_delay;
        if next.restart_curve {
            self.backoff_from = next.retry;
            self.last_delay = Tick::ZERO;
        }
        if next.new_payload {
            self.payload += 1;
        }
        self.tries.begin(next.layer);
        self.next_layer = next.layer;
    }
}

/// Where an operation's deadline and dispatch cap count from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    pub start: Tick,
    /// The first dispatch of the scope.
    pub first: u32,
}
