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
//! | send-rate limiter | takes a token, or waits in its line for one | — | — |
//!
//! The gates that only look come first; the ones that keep state — a breaker counts its
//! half-open probes, a retry budget takes a token, a concurrency limit a slot — come last, so
//! that a refusal by another gate never costs them anything. A call that waits for a slot has
//! passed nothing stateful yet; when a slot frees it asks again, and goes out at once.
//!
//! Every attempt that went out reports how it ended to [`Gates::feedback`] (a reply or a
//! timeout) or [`Gates::abandoned`] (the client stopped waiting for it): breakers, budgets and
//! limits all hear of it there.
//!
//! Each tool has one set of stateful gates, or one per holder: per caller when the policy's
//! scope is [`GateScope::Caller`], per shard of a keyed tool when it is [`GateScope::Shard`].
//! Every function takes the tool and the holder (the caller, or the call's shard; any under
//! scope `tool`), and finds its set.

use super::concurrency::{Concurrency, Full};
use super::{Breaker, GateScope, Limits, Policy, Refuses, RetryBudget, SendRate};
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
    /// Whose set of the tool's gates it asks: its task's caller, or its key's shard (see
    /// the module doc).
    pub holder: u32,
    pub now: Tick,
    /// Where the deadline and the dispatch cap count from.
    pub scope_start: Tick,
    /// Dispatches already made in that scope.
    pub dispatches: u32,
    /// The retry begins an outer layer's attempt that resets the scope (so the cap is fresh).
    pub fresh_scope: bool,
    pub moment: Moment,
    /// The deadline and dispatch cap of the intent's policy.
    pub limits: Limits,
    /// How the intent is known in a concurrency limit's line.
    pub ticket: u64,
    /// The model tokens a send may use (its input and `max_tokens`), for a client-side token
    /// bucket; 0 at a tool that is no model.
    pub tokens: u64,
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
/// it paid for; and whether a send waits in the send-rate limiter's line before it goes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pass {
    pub retry_cost: Option<f64>,
    pub waits_for_token: bool,
}

/// The gates of one configuration in one run, with the state of each set of stateful gates: a
/// breaker, a budget and a concurrency limit per tool, or per tool and holder.
pub struct Gates {
    /// Sets per tool: 1, the number of callers, or the most shards a tool has.
    per_tool: usize,
    breakers: Vec<Option<Breaker>>,
    budgets: Vec<Option<RetryBudget>>,
    concurrency: Vec<Option<Concurrency>>,
    send_rates: Vec<Option<SendRate>>,
    /// The sets whose breaker or budget may have changed since [`Gates::touched`] last said,
    /// kept only when someone watches.
    touched: Option<Vec<usize>>,
}

impl Gates {
    /// Fresh gates for each tool's policy in `policies` (by tool: the policy of the edge
    /// into it, in a call graph), each set with its own breaker and budget where the tool's
    /// policy has them; `scope` says whether a set is the tool's, a caller's (of `callers`) or
    /// a shard's (of at most `shards` a tool). `watched` keeps the list of sets touched.
    pub fn new(
        policies: &[&Policy],
        scope: GateScope,
        (callers, shards): (u32, usize),
        watched: bool,
    ) -> Gates {
        let per_tool = match scope {
            GateScope::Tool => 1,
            GateScope::Caller => callers as usize,
            GateScope::Shard => shards,
        };
        let sets = policies.len() * per_tool;
        let of_set = |i: usize| policies[i / per_tool];
        Gates {
            per_tool,
            breakers: (0..sets)
                .map(|i| of_set(i).gates.breaker.map(Breaker::new))
                .collect(),
            budgets: (0..sets)
                .map(|i| of_set(i).gates.retry_budget.map(RetryBudget::new))
                .collect(),
            concurrency: (0..sets)
                .map(|i| of_set(i).gates.concurrency.map(Concurrency::new))
                .collect(),
            send_rates: (0..sets)
                .map(|i| {
                    let p = of_set(i);
                    (p.gates.send_rate.map(SendRate::new))
                        .or(p.gates.send_tokens.map(SendRate::fixed))
                })
                .collect(),
            // Every set starts touched, so a watcher reads each one's starting state.
            touched: watched.then(|| (0..sets).collect()),
        }
    }

    /// The set of `tool`'s gates that `holder` uses.
    fn set(&self, tool: usize, holder: u32) -> usize {
        tool * self.per_tool + (holder as usize % self.per_tool)
    }

    /// Notes that set `i` may have changed, for whoever watches.
    fn touch(&mut self, i: usize) {
        if let Some(touched) = &mut self.touched {
            touched.push(i);
        }
    }

    /// Sets per tool: 1, or one per holder.
    pub fn per_tool(&self) -> usize {
        self.per_tool
    }

    /// The sets touched since the last call, as (tool, index within the tool), each once per
    /// touch; the list is emptied.
    pub fn touched(&mut self) -> Vec<(usize, usize)> {
        let per_tool = self.per_tool;
        (self.touched.as_mut())
            .map(|t| t.drain(..).map(|i| (i / per_tool, i % per_tool)).collect())
            .unwrap_or_default()
    }

    /// Until when breaker `index` of `tool` is open, if it is.
    pub fn open_until(&self, tool: usize, index: usize) -> Option<Tick> {
        let breaker = &self.breakers[tool * self.per_tool + index];
        breaker.as_ref().and_then(Breaker::open_until)
    }

    /// The tokens in budget `index` of `tool`, if it is a bucket.
    pub fn tokens(&self, tool: usize, index: usize) -> Option<f64> {
        let budget = &self.budgets[tool * self.per_tool + index];
        budget.as_ref().and_then(RetryBudget::tokens)
    }

    /// Whether the dispatch `ask` describes may go, in the order of the table above.
    pub fn admit(&mut self, ask: &Ask) -> Result<Pass, Refusal> {
        let set = self.set(ask.tool, ask.holder);
        self.touch(set);
        let refuse = |gate, reason| {
            Err(Refusal {
                gate,
                reason,
                waits: false,
            })
        };
        let limits = &ask.limits;
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
        let limited = (sending || hedging) && self.concurrency[set].is_some();
        if limited
            && let Some(limit) = &mut self.concurrency[set]
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
            && let Some(breaker) = &mut self.breakers[set]
            && !(first && breaker.rule().refuses == Refuses::Retries)
            && !breaker.admit(ask.now)
        {
            return refuse(Gate::Breaker, StopReason::BreakerOpen);
        }
        let pass = match (&mut self.budgets[set], ask.moment) {
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
                        ..Pass::default()
                    },
                    None => return refuse(Gate::RetryBudget, StopReason::RetryBudgetExhausted),
                }
            }
        };
        if limited && let Some(limit) = &mut self.concurrency[set] {
            limit.take();
        }
        let waits_for_token = match &mut self.send_rates[set] {
            Some(rate) if sending => !rate.admit(ask.now, ask.ticket, ask.tokens),
            _ => false,
        };
        Ok(Pass {
            waits_for_token,
            ..pass
        })
    }

    /// How an attempt on `tool` by `holder` ended at `now` (`failure` none for a reply that
    /// answered), for the breaker and the budget; `cost` is what the budget took for it, if it
    /// was a retry.
    pub fn feedback(
        &mut self,
        (tool, holder): (usize, u32),
        now: Tick,
        failure: Option<FailureClass>,
        cost: Option<f64>,
    ) {
        let set = self.set(tool, holder);
        self.touch(set);
        if let Some(breaker) = &mut self.breakers[set] {
            breaker.record(now, failure);
        }
        if let Some(budget) = &mut self.budgets[set] {
            budget.outcome(failure, cost);
        }
        if let Some(limit) = &mut self.concurrency[set] {
            limit.end(Some(failure));
        }
        if let Some(rate) = &mut self.send_rates[set] {
            rate.heard(now, failure == Some(FailureClass::Throttled));
        }
    }

    /// The client stopped waiting for an attempt on `tool` by `holder` (a hedge's loser, or
    /// one in flight when its operation ended): it no longer holds a concurrency slot.
    pub fn abandoned(&mut self, tool: usize, holder: u32) {
        let set = self.set(tool, holder);
        if let Some(limit) = &mut self.concurrency[set] {
            limit.end(None);
        }
    }

    /// The first call waiting for a concurrency slot on `tool` by `holder`, out of the line, if
    /// a slot is free; it must ask again, and will be let through.
    pub fn next_waiting(&mut self, tool: usize, holder: u32) -> Option<u64> {
        let set = self.set(tool, holder);
        self.concurrency[set].as_mut()?.next_waiting()
    }

    /// Takes the call `ticket` out of the line it waits in on `tool` by `holder`, for a
    /// concurrency slot or a send-rate token; whether it was waiting.
    pub fn leave_line(&mut self, tool: usize, holder: u32, ticket: u64) -> bool {
        let set = self.set(tool, holder);
        let for_slot = (self.concurrency[set].as_mut()).is_some_and(|limit| limit.leave(ticket));
        let for_token = (self.send_rates[set].as_mut()).is_some_and(|rate| rate.leave(ticket));
        for_slot || for_token
    }

    /// A send on `tool` by `holder` was answered having used `tokens` fewer model tokens than
    /// its client-side bucket took for it.
    pub fn give_back(&mut self, (tool, holder): (usize, u32), now: Tick, tokens: u64) {
        let set = self.set(tool, holder);
        if let Some(rate) = &mut self.send_rates[set] {
            rate.give_back(now, tokens);
        }
    }

    /// When the send-rate line on `tool` by `holder` next has a token for its head, if that is
    /// a new promise to set a wake-up for.
    pub fn token_due(&mut self, tool: usize, holder: u32, now: Tick) -> Option<Tick> {
        let set = self.set(tool, holder);
        self.send_rates[set].as_mut()?.next_due(now)
    }

    /// At a promised wake-up, the waiting sends on `tool` by `holder` that go out now; `live`
    /// passes over those whose operation ended.
    pub fn release_tokens(
        &mut self,
        (tool, holder): (usize, u32),
        now: Tick,
        live: impl FnMut(u64) -> bool,
    ) -> Vec<u64> {
        let set = self.set(tool, holder);
        match &mut self.send_rates[set] {
            Some(rate) => rate.release(now, live),
            None => Vec::new(),
        }
    }
}
