//! The one gate every dispatch passes — a first try, a retry, a reconciliation resend, a hedge
//! — and the one feedback every answered or abandoned attempt gives. The policies that keep
//! state per tool (circuit breakers, retry budgets) live here, behind these two functions, so
//! the simulation asks and reports in one place each.
//!
//! The gates, in order; each says which moments it applies at:
//!
//! | gate | first try or retry, as it goes out | retry, decided before its backoff | hedge |
//! | --- | --- | --- | --- |
//! | deadline | `deadline_exceeded` | — (a backoff runs into it, then stops here) | no hedge |
//! | dispatch cap | — (taken when the retry was decided) | `dispatch_budget_exhausted` | no hedge |
//! | admission | `budget_too_small` (no wait left) | `budget_too_small` (with the wait) | — |
//! | concurrency limit (looks) | waits in line, or `concurrency_limited` | — | no hedge |
//! | breaker | `breaker_open`, short-circuited (a retry-only breaker lets first tries by) | — | short-circuited, the intent goes on |
//! | retry budget | counts a first try | `retry_budget_exhausted` | no hedge |
//! | concurrency limit (takes) | the call holds a slot until it ends | — | the hedge holds one |
//!
//! The gates that only look come first; the ones that keep state — a breaker counts its
//! half-open probes, a retry budget takes a token, a concurrency limit a slot — come last, so
//! that a refusal by another gate never costs them anything. A call that waits for a slot has
//! passed nothing stateful yet; when a slot frees it asks again, and goes out at once.
//!
//! Every attempt that went out reports how it ended to [`Gates::feedback`] (a reply or a
//! timeout) or [`Gates::abandoned`] (the client stopped waiting for it): breakers, budgets and
//! limits all hear of it there.

use super::concurrency::{Concurrency, Full};
use super::{Breaker, Limits, Policy, Refuses, RetryBudget};
use crate::metrics::StopReason;
use crate::model::FailureClass;
use crate::time::Tick;

/// Which dispatch asks, and when.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Moment {
    /// An attempt about to go out: the first, or a retry whose backoff is over.
    Send { first: bool },
    /// A retry after a failure of `class`, decided before its backoff of `delay`.
    Retry { class: FailureClass, delay: Tick },
    /// A hedge beside an attempt still unanswered.
    Hedge,
}

/// What the gates need to know of the intent that asks.
#[derive(Clone, Copy, Debug)]
pub struct Ask {
    pub tool: usize,
    pub now: Tick,
    /// Where the deadline and the dispatch cap count from.
    pub scope_start: Tick,
    /// Dispatches already made in that scope.
    pub dispatches: u32,
    /// The retry begins an outer layer's attempt that resets the scope (so the cap is fresh).
    pub fresh_scope: bool,
    pub moment: Moment,
    /// How the intent is known in a concurrency limit's line.
    pub ticket: u64,
}

/// The gate that refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Deadline,
    DispatchCap,
    Admission,
    Breaker,
    RetryBudget,
    /// No slot under the concurrency limit.
    Concurrency,
}

/// A refused dispatch: which gate, and the stop reason it gives an intent it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub gate: Gate,
    pub reason: StopReason,
    /// The call waits in the concurrency limit's line rather than stopping.
    pub waits: bool,
}

/// What a dispatch the gates let through owes: the retry budget's cost, for a retry or hedge
/// it paid for.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pass {
    pub retry_cost: Option<f64>,
}

/// The gates of one configuration in one run, with the state of each tool's breaker and budget.
pub struct Gates {
    limits: Limits,
    breakers: Vec<Option<Breaker>>,
    budgets: Vec<Option<RetryBudget>>,
    concurrency: Vec<Option<Concurrency>>,
}

impl Gates {
    /// Fresh gates for `tools` tools, each with its own breaker and budget where the policy has
    /// them.
    pub fn new(policy: &Policy, tools: usize) -> Gates {
        Gates {
            limits: policy.limits,
            breakers: (0..tools)
                .map(|_| policy.breaker.map(Breaker::new))
                .collect(),
            budgets: (0..tools)
                .map(|_| policy.retry_budget.map(RetryBudget::new))
                .collect(),
            concurrency: (0..tools)
                .map(|_| policy.concurrency.map(Concurrency::new))
                .collect(),
        }
    }

    /// Whether the dispatch `ask` describes may go, in the order of the table above.
    pub fn admit(&mut self, ask: &Ask) -> Result<Pass, Refusal> {
        let refuse = |gate, reason| {
            Err(Refusal {
                gate,
                reason,
                waits: false,
            })
        };
        let limits = &self.limits;
        let (sending, retrying, hedging) = match ask.moment {
            Moment::Send { .. } => (true, false, false),
            Moment::Retry { .. } => (false, true, false),
            Moment::Hedge => (false, false, true),
        };
        if (sending || hedging) && limits.past_deadline(ask.scope_start, ask.now) {
            return refuse(Gate::Deadline, StopReason::DeadlineExceeded);
        }
        let capped = (retrying && !ask.fresh_scope) || hedging;
        if capped && limits.cap_spent(ask.dispatches) {
            return refuse(Gate::DispatchCap, StopReason::DispatchBudgetExhausted);
        }
        let wait = match ask.moment {
            Moment::Send { .. } => Some(Tick::ZERO),
            Moment::Retry { delay, .. } => Some(delay),
            Moment::Hedge => None,
        };
        if let Some(wait) = wait
            && !limits.admits(ask.scope_start, ask.now, wait)
        {
            return refuse(Gate::Admission, StopReason::BudgetTooSmall);
        }
        let limited = (sending || hedging) && self.concurrency[ask.tool].is_some();
        if limited
            && let Some(limit) = &mut self.concurrency[ask.tool]
            && !limit.has_room()
        {
            // A first try or a retry may wait for a slot; a hedge never does.
            let waits = sending && limit.wait(ask.ticket) == Full::Waits;
            return Err(Refusal {
                gate: Gate::Concurrency,
                reason: StopReason::ConcurrencyLimited,
                waits,
            });
        }
        // A retry-only breaker never stands in a first try's way.
        let first = ask.moment == Moment::Send { first: true };
        if (sending || hedging)
            && let Some(breaker) = &mut self.breakers[ask.tool]
            && !(first && breaker.rule().refuses == Refuses::Retries)
            && !breaker.admit(ask.now)
        {
            return refuse(Gate::Breaker, StopReason::BreakerOpen);
        }
        let pass = match (&mut self.budgets[ask.tool], ask.moment) {
            (None, _) => Pass::default(),
            (Some(budget), Moment::Send { first }) => {
                if first {
                    budget.first_attempt(ask.now);
                }
                Pass::default()
            }
            (Some(budget), moment) => {
                // A hedge is paid for like a retry after a timeout.
                let class = match moment {
                    Moment::Retry { class, .. } => class,
                    _ => FailureClass::Timeout,
                };
                match budget.withdraw(ask.now, class) {
                    Some(cost) => Pass {
                        retry_cost: Some(cost),
                    },
                    None => return refuse(Gate::RetryBudget, StopReason::RetryBudgetExhausted),
                }
            }
        };
        if limited && let Some(limit) = &mut self.concurrency[ask.tool] {
            limit.take();
        }
        Ok(pass)
    }

    /// How an attempt on `tool` ended at `now` (`failure` none for a reply that answered),
    /// for the breaker and the budget; `cost` is what the budget took for it, if it was a
    /// retry.
    pub fn feedback(
        &mut self,
        tool: usize,
        now: Tick,
        failure: Option<FailureClass>,
        cost: Option<f64>,
    ) {
        if let Some(breaker) = &mut self.breakers[tool] {
            breaker.record(now, failure);
        }
        if let Some(budget) = &mut self.budgets[tool] {
            budget.outcome(failure, cost);
        }
        if let Some(limit) = &mut self.concurrency[tool] {
            limit.end(Some(failure));
        }
    }

    /// Until when `tool`'s breaker is open, if it is.
    pub fn open_until(&self, tool: usize) -> Option<Tick> {
        self.breakers[tool].as_ref().and_then(Breaker::open_until)
    }

    /// The tokens in `tool`'s retry budget, if it is a bucket.
    pub fn tokens(&self, tool: usize) -> Option<f64> {
        self.budgets[tool].as_ref().and_then(RetryBudget::tokens)
    }

    /// The client stopped waiting for an attempt on `tool` (a hedge's loser, or one in flight
    /// when its operation ended): it no longer holds a concurrency slot.
    pub fn abandoned(&mut self, tool: usize) {
        if let Some(limit) = &mut self.concurrency[tool] {
            limit.end(None);
        }
    }

    /// The first call waiting for a concurrency slot on `tool`, out of the line, if a slot is
    /// free; it must ask again, and will be let through.
    pub fn next_waiting(&mut self, tool: usize) -> Option<u64> {
        self.concurrency[tool].as_mut()?.next_waiting()
    }

    /// Takes the call `ticket` out of `tool`'s line; whether it was waiting there.
    pub fn leave_line(&mut self, tool: usize, ticket: u64) -> bool {
        self.concurrency[tool]
            .as_mut()
            .is_some_and(|limit| limit.leave(ticket))
    }
}
