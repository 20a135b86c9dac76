//! One call as a trace records it, and what its status says became of it.

use crate::time::Tick;

/// One client call read from a trace: an attempt, whatever the client did next.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// The operation, as the trace names it (the span's name, the log's `operation`).
    pub operation: String,
    /// When the call started, in microseconds since the Unix epoch.
    pub start: i64,
    pub duration: Tick,
    pub outcome: Outcome,
    /// The wait a refusal asked for (Retry-After), where the trace recorded it.
    pub retry_after: Option<Tick>,
    /// A resend of an earlier call (`http.request.resend_count` > 0): an attempt, but not an
    /// arrival.
    pub resend: bool,
}

/// How a call ended, in the classes a retrysim tool has a rate for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Ok,
    /// A 5xx, or a gRPC status a server sends when it fails (UNAVAILABLE, INTERNAL, …).
    ServerError,
    /// A 429, or RESOURCE_EXHAUSTED.
    Throttled,
    /// A 403, or PERMISSION_DENIED.
    Forbidden,
    /// Another 4xx, or a gRPC status that says the request is wrong.
    Invalid,
    /// No reply within the client's timeout (DEADLINE_EXCEEDED, or an error named a timeout).
    Timeout,
    /// The connection failed before the request left.
    Connect,
    /// An error without a reply: a reset, a dropped connection.
    Reset,
    /// Cancelled by the client itself: not the dependency's doing, and left out.
    Cancelled,
}

impl Outcome {
    /// The outcome an HTTP status code gives: a 1xx, 2xx or 3xx is a reply.
    pub fn of_http(code: i64) -> Option<Outcome> {
        Some(match code {
            100..=399 => Outcome::Ok,
            429 => Outcome::Throttled,
            403 => Outcome::Forbidden,
            400..=499 => Outcome::Invalid,
            500..=599 => Outcome::ServerError,
            _ => return None,
        })
    }

    /// The outcome a gRPC status code gives.
    pub fn of_grpc(code: i64) -> Option<Outcome> {
        Some(match code {
            0 => Outcome::Ok,
            1 => Outcome::Cancelled,
            4 => Outcome::Timeout,
            7 => Outcome::Forbidden,
            8 => Outcome::Throttled,
            3 | 5 | 6 | 9 | 11 | 12 | 16 => Outcome::Invalid,
            2 | 10 | 13 | 14 | 15 => Outcome::ServerError,
            _ => return None,
        })
    }

    /// The outcome of an error with no status code, from the error's type (`error.type`, an
    /// exception's name): a timeout, a failed connection, or else a reset.
    pub fn of_error(kind: &str) -> Outcome {
        let kind = kind.to_ascii_lowercase();
        if kind.contains("timeout") || kind.contains("timed out") {
            Outcome::Timeout
        } else if kind.contains("connect") || kind.contains("refused") {
            Outcome::Connect
        } else {
            Outcome::Reset
        }
    }
}

/// A Retry-After value: whole seconds (HTTP), or a duration with a unit.
pub fn retry_after(text: &str) -> Option<Tick> {
    let text = text.trim();
    match text.parse::<u64>() {
        Ok(s) => s.checked_mul(crate::time::TICKS_PER_SECOND).map(Tick),
        Err(_) => crate::time::parse_duration(text).ok(),
    }
}
