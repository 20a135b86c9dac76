//! The retry safety gate: a failure being retryable does not make a call safe to send again.
//! A retry is allowed only if the call is read-only, or its receiver is declared idempotent and
//! every retry carries the intent's one stable key. An ambiguous failure (no reply, or a timeout)
//! of any other call may have taken effect: it stops for reconciliation instead of being resent.

use super::KeyScope;
use crate::model::FailureClass;
use crate::model::Tool;

/// Whether a call on `tool` carrying keys of `scope` may be sent again.
pub fn replay_is_safe(tool: &Tool, scope: KeyScope) -> bool {
    tool.server.reads_only() || tool.server.idempotent && scope.is_stable()
}

/// Whether a failure of `class` on `tool` may be sent again: a connection that failed sent
/// nothing, so any call may be resent after it.
pub fn may_resend(class: FailureClass, tool: &Tool, scope: KeyScope) -> bool {
    class == FailureClass::Connect || replay_is_safe(tool, scope)
}

/// Whether a failure of this class leaves the outcome unknown: the call may have committed (a
/// broken stream did its work, and the client has only part of the answer).
pub fn is_ambiguous(class: FailureClass) -> bool {
    matches!(
        class,
        FailureClass::Reset | FailureClass::Timeout | FailureClass::StreamBroken
    )
}
