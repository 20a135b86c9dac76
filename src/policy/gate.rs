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
//! | breaker | `breaker_open`, short-circuited (a retry-only breaker lets first tries by) | — | short-circuited, the intent goes on |
//! | retry budget | counts a first try | `retry_budget_exhausted` | no hedge |
//!
//! The gates that only look come first; the ones that keep state — a breaker counts its
//! half-open probes, a retry budget takes a token — come last, so that a refusal by another
//! gate never costs them anything.

use super::{Breaker, BreakerRule, BudgetRule, FailureClass, Limits, Refuses, RetryBudget};
use crate::metrics::StopReason;
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
}

/// The gate that refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    Deadline,
    DispatchCap,
    Admission,
    Breaker,
    RetryBudget,
}

/// A refused dispatch: which gate, and the stop reason it gives an intent it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub gate: Gate,
    pub reason: StopReason,
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
}

impl Gates {
    /// Fresh gates for `tools` tools, each with its own breaker and budget where the policy has
    /// them.
    pub fn new(
        limits: Limits,
        breaker: Option<BreakerRule>,
        budget: Option<BudgetRule>,
        tools: usize,
    ) -> Gates {
        Gates {
            limits,
            breakers: (0..tools).map(|_| breaker.map(Breaker::new)).collect(),
            budgets: (0..tools).map(|_| budget.map(RetryBudget::new)).collect(),
        }
    }

    /// Whether the dispatch `ask` describes may go, in the order of the table above.
    pub fn admit(&mut self, ask: &Ask) -> Result<Pass, Refusal> {
        let refuse = |gate, reason| Err(Refusal { gate, reason });
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
        // A retry-only breaker never stands in a first try's way.
        let first = ask.moment == Moment::Send { first: true };
        if (sending || hedging)
            && let Some(breaker) = &mut self.breakers[ask.tool]
            && !(first && breaker.rule().refuses == Refuses::Retries)
            && !breaker.admit(ask.now)
        {
            return refuse(Gate::Breaker, StopReason::BreakerOpen);
        }
        let Some(budget) = &mut self.budgets[ask.tool] else {
            return Ok(Pass::default());
        };
        let paid = match ask.moment {
            Moment::Send { first } => {
                if first {
                    budget.first_attempt(ask.now);
                }
                return Ok(Pass::default());
            }
            Moment::Retry { class, .. } => budget.withdraw(ask.now, class),
            // A hedge is paid for like a retry after a timeout.
            Moment::Hedge => budget.withdraw(ask.now, FailureClass::Timeout),
        };
        match paid {
            Some(cost) => Ok(Pass {
                retry_cost: Some(cost),
            }),
            None => refuse(Gate::RetryBudget, StopReason::RetryBudgetExhausted),
        }
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
    }
}
