//! Reconciliation: after a failure that leaves a write's outcome unknown (a reset, a timeout),
//! ask the server about the operation's key before sending it again (`lookup_before_retry`).
//! Found, the operation is confirmed without a resend; not found, it is sent again under the
//! same key only if the receiver honours keys — "not found" is not "never happened", since a
//! lookup can lag behind the commit — and otherwise it stops for an operator
//! (`needs_reconciliation`), as it does when the lookup itself fails.

use super::{Policy, safety};
use crate::model::FailureClass;
use crate::model::Tool;

/// Whether a failure of `class` on `tool` is looked up before anything else.
pub fn looks_up(policy: &Policy, tool: &Tool, class: FailureClass) -> bool {
    policy.rule.lookup_before_retry && safety::is_ambiguous(class) && tool.server.writes()
}

/// What a lookup's answer means for the operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The commit was found: the operation succeeded.
    Confirmed,
    /// Nothing was found, and a resend under the same key is safe: the retry rule decides.
    Resend,
    /// The lookup failed, or nothing was found and a resend is not safe.
    Unknown,
}

/// The answer of a lookup that `failed` or `found` the key, on `tool` under `policy`.
pub fn answer(policy: &Policy, tool: &Tool, failed: bool, found: bool) -> Answer {
    if failed {
        Answer::Unknown
    } else if found {
        Answer::Confirmed
    } else if safety::replay_is_safe(tool, policy.rule.key) {
        Answer::Resend
    } else {
        Answer::Unknown
    }
}
