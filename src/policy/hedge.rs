//! Hedging: after `hedge_delay` without a reply, a second attempt goes out beside the first,
//! and the first reply wins; the loser is abandoned, though the server still does its work. A
//! hedge is an attempt of the innermost layer: it needs room under that layer's
//! `max_attempts`, and the gates treat it as their own moment (see [`super::gate`]): no hedge
//! past the deadline or the dispatch cap, a breaker's refusal short-circuits the hedge alone,
//! and a retry budget pays for it as for a retry after a timeout. Only calls safe to send twice
//! are hedged, which validation enforces.

use super::{Policy, Tries};
use crate::model::FailureClass;

/// The most attempts one operation may have out at once (a client's record of them is a word
/// of bits).
pub const MOST_OUT: u32 = 64;

/// How hedges follow one another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hedging {
    /// One hedge per attempt, after `hedge_delay`; a failure waits for the attempt still out.
    Single,
    /// gRPC's `hedgingPolicy`: another attempt each `hedge_delay` until `max_attempts` are out;
    /// a retryable failure sends the next at once, and any other ends the call, the attempts
    /// still out abandoned.
    Staggered,
}

impl Hedging {
    pub const ALL: [Hedging; 2] = [Hedging::Single, Hedging::Staggered];

    pub fn name(self) -> &'static str {
        match self {
            Hedging::Single => "single",
            Hedging::Staggered => "staggered",
        }
    }
}

/// Whether an attempt just sent sets the timer for the next hedge: a primary always, and under
/// staggered hedging every hedge too.
pub fn sets_next(policy: &Policy, primary: bool) -> bool {
    primary || policy.hedges.mode == Hedging::Staggered
}

/// Whether a failure of `class` while other attempts are still out waits for them: always
/// under single hedging; under staggered, only a retryable failure with no attempt left to
/// send in its place.
pub fn waits_for_the_others(policy: &Policy, tries: &Tries, class: FailureClass) -> bool {
    match policy.hedges.mode {
        Hedging::Single => true,
        Hedging::Staggered => policy.rule.retries(class) && !has_room(policy, tries),
    }
}

/// Whether the innermost layer has an attempt left for a hedge.
pub fn has_room(policy: &Policy, tries: &Tries) -> bool {
    policy
        .rule
        .retry
        .max_attempts
        .cap()
        .is_none_or(|n| tries.innermost() < n)
}
