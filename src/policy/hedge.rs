//! Hedging: after `hedge_delay` without a reply, a second attempt goes out beside the first,
//! and the first reply wins; the loser is abandoned, though the server still does its work. A
//! hedge is an attempt of the innermost layer: it needs room under that layer's
//! `max_attempts`, and the gates treat it as their own moment (see [`super::gate`]): no hedge
//! past the deadline or the dispatch cap, a breaker's refusal short-circuits the hedge alone,
//! and a retry budget pays for it as for a retry after a timeout. Only calls safe to send twice
//! are hedged, which validation enforces.

use super::{Policy, Tries};

/// Whether the innermost layer has an attempt left for a hedge.
pub fn has_room(policy: &Policy, tries: &Tries) -> bool {
    policy
        .retry
        .max_attempts
        .cap()
        .is_none_or(|n| tries.innermost() < n)
}
