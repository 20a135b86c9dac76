//! The record of one intent: what the client did, how it ended, and what the server did.

use crate::model::IntentBill;
use crate::time::Tick;

/// The control outcome: did the client get its answer?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Succeeded,
    Stopped(StopReason),
}

/// Why the client gave up on an intent.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// Every allowed attempt failed.
    AttemptLimit,
    /// The last failure's class is not one the policy retries.
    NotRetryable,
    /// The run's horizon came while the intent was still waiting.
    Hung,
    /// The operation's deadline came.
    DeadlineExceeded,
    /// A retry was due and the dispatch cap had no token left.
    DispatchBudgetExhausted,
    /// The operation was cancelled.
    Cancelled,
    /// An ambiguous failure of a call that is not safe to send again: someone must find out
    /// whether it took effect.
    NeedsReconciliation,
    /// The tool's circuit breaker was open: the call was short-circuited, never sent.
    BreakerOpen,
    /// A retry was due and the retry budget refused it.
    RetryBudgetExhausted,
    /// A refusal that repeating cannot change: a 403 or another 4xx.
    PermanentFailure,
    /// Cooperative admission: the time left cannot hold the wait, the reserve and an attempt.
    BudgetTooSmall,
    /// The server holds the key with another payload: a retry changed the request.
    IdempotencyConflict,
    /// The concurrency limit had no slot, and its line no room (or there is no line).
    ConcurrencyLimited,
}

impl StopReason {
    pub const ALL: [StopReason; 13] = [
        StopReason::AttemptLimit,
        StopReason::NotRetryable,
        StopReason::Hung,
        StopReason::DeadlineExceeded,
        StopReason::DispatchBudgetExhausted,
        StopReason::Cancelled,
        StopReason::NeedsReconciliation,
        StopReason::BreakerOpen,
        StopReason::RetryBudgetExhausted,
        StopReason::PermanentFailure,
        StopReason::BudgetTooSmall,
        StopReason::IdempotencyConflict,
        StopReason::ConcurrencyLimited,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StopReason::AttemptLimit => "attempt_limit",
            StopReason::NotRetryable => "not_retryable",
            StopReason::Hung => "hung",
            StopReason::DeadlineExceeded => "deadline_exceeded",
            StopReason::DispatchBudgetExhausted => "dispatch_budget_exhausted",
            StopReason::Cancelled => "cancelled",
            StopReason::NeedsReconciliation => "needs_reconciliation",
            StopReason::BreakerOpen => "breaker_open",
            StopReason::RetryBudgetExhausted => "retry_budget_exhausted",
            StopReason::PermanentFailure => "permanent_failure",
            StopReason::BudgetTooSmall => "budget_too_small",
            StopReason::IdempotencyConflict => "idempotency_conflict",
            StopReason::ConcurrencyLimited => "concurrency_limited",
        }
    }
}

impl Status {
    pub fn name(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::Stopped(_) => "stopped",
        }
    }

    pub fn stop_reason(self) -> Option<StopReason> {
        match self {
            Status::Succeeded => None,
            Status::Stopped(reason) => Some(reason),
        }
    }
}

/// What the client can honestly say about the world, kept apart from the control outcome: a
/// stopped intent whose attempt may have committed is `unknown`, not failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusinessState {
    /// Every attempt was refused before its commit point, so nothing can have happened.
    NotAttempted,
    /// An attempt went unanswered: it may or may not have taken effect.
    Unknown,
    /// A reply carried the receipt of the effect.
    Confirmed,
    /// A read-only call: there is no effect to be unsure of.
    ReadOnly,
}

impl BusinessState {
    pub fn name(self) -> &'static str {
        match self {
            BusinessState::NotAttempted => "not_attempted",
            BusinessState::Unknown => "unknown",
            BusinessState::Confirmed => "confirmed",
            BusinessState::ReadOnly => "read_only",
        }
    }
}

/// One intent, from its first attempt to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntentRecord {
    pub intent: u64,
    pub tool: usize,
    /// The edge of the call graph it went over, whose policy it followed.
    pub edge: usize,
    pub attempts: u32,
    /// Side effects the server committed for this intent (replayed receipts excluded), also
    /// by attempts the client had abandoned.
    pub effects: u32,
    /// Attempts abandoned at their timeout.
    pub timeouts: u32,
    /// Time spent waiting between attempts.
    pub backoff: Tick,
    /// Calls the circuit breaker refused (never dispatched).
    pub short_circuited: u32,
    /// Reconciliation lookups made.
    pub lookups: u32,
    /// Hedges sent (counted in `attempts` too).
    pub hedges: u32,
    /// Attempts that reached the tool while it was down.
    pub calls_while_down: u32,
    /// On a versioned record: reads that reached it, and conditional writes that reached it
    /// (the work each client puts on a contended record).
    pub reads: u32,
    pub writes: u32,
    /// Of those writes, the ones that found the version moved on.
    pub conflicts: u32,
    pub status: Status,
    pub business_state: BusinessState,
    pub start: Tick,
    pub end: Tick,
    /// What its attempts were billed, at a priced tool.
    pub bill: IntentBill,
    /// Times the worker holding it crashed, and times a replacement took it over.
    pub crashes: u32,
    pub takeovers: u32,
    /// Of `effects`, the commits a takeover caused: by a worker other than the one whose
    /// attempt committed first.
    pub takeover_duplicates: u32,
    /// Attempts the replacements sent: work a takeover redid.
    pub redone: u32,
    /// Late sends of workers that woke from a stall past their lease, and writes a fencing
    /// server refused for a stale lease token.
    pub zombie_sends: u32,
    pub fenced: u32,
    /// Leases held for a term that ran out under a living worker, and fresh holds the
    /// admission rule made before a send that would have outlasted the term.
    pub lapses: u32,
    pub held_afresh: u32,
    /// Whether the work queue gave the call's item up, its deliveries spent.
    pub dead_lettered: bool,
    /// When its worker first crashed, if one did: the time from there to `end` is how long
    /// the crash kept the call from its outcome.
    pub first_crash: Option<Tick>,
}

impl IntentRecord {
    /// This intent and `later`, which a fallback made after it for the same call, as one: the
    /// call's counts summed, from this one's start to `later`'s end, ending as `later` did.
    /// The tool and edge are this one's: the first the call met (its primary, unless a
    /// cooldown sent it straight to a fallback).
    pub fn then(&self, later: &IntentRecord) -> IntentRecord {
        IntentRecord {
            intent: self.intent,
            tool: self.tool,
            edge: self.edge,
            attempts: self.attempts + later.attempts,
            effects: self.effects + later.effects,
            timeouts: self.timeouts + later.timeouts,
            backoff: self.backoff.after(later.backoff),
            short_circuited: self.short_circuited + later.short_circuited,
            lookups: self.lookups + later.lookups,
            hedges: self.hedges + later.hedges,
            calls_while_down: self.calls_while_down + later.calls_while_down,
            reads: self.reads + later.reads,
            writes: self.writes + later.writes,
            conflicts: self.conflicts + later.conflicts,
            status: later.status,
            business_state: later.business_state,
            start: self.start.min(later.start),
            end: later.end,
            bill: self.bill.then(&later.bill),
            crashes: self.crashes + later.crashes,
            takeovers: self.takeovers + later.takeovers,
            takeover_duplicates: self.takeover_duplicates + later.takeover_duplicates,
            redone: self.redone + later.redone,
            zombie_sends: self.zombie_sends + later.zombie_sends,
            fenced: self.fenced + later.fenced,
            lapses: self.lapses + later.lapses,
            held_afresh: self.held_afresh + later.held_afresh,
            dead_lettered: later.dead_lettered,
            first_crash: self.first_crash.or(later.first_crash),
        }
    }

    /// Effects beyond the first.
    pub fn duplicates(&self) -> u32 {
        self.effects.saturating_sub(1)
    }

    /// The client saw failure, yet the server took effect.
    pub fn is_ghost(&self) -> bool {
        self.status != Status::Succeeded && self.effects > 0
    }
}
