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
    /// The call's trace and span id, where the trace has them: what a server span that served
    /// it names as its parent.
    pub call: Option<String>,
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
    /// A failure a burst of the dependency's makes: a 5xx, a 429, or no reply. A refusal of the
    /// request itself (403, another 4xx), a failed connection and the client's own cancel are
    /// not the dependency's spells.
    pub fn is_transient(self) -> bool {
        matches!(
            self,
            Outcome::ServerError | Outcome::Throttled | Outcome::Timeout | Outcome::Reset
        )
    }

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

    /// The outcome of an error with no status code, from what the trace says of it (the
    /// error's type, the exception's type and message, the status message): a failed
    /// connection only on evidence that nothing was sent (`NOTHING_SENT`), else a timeout,
    /// else no reply. A generic `ConnectionError` (Python's `requests`) is said for a refused
    /// connection and a dropped one alike: without more it is no reply, which a retry of a
    /// write may duplicate.
    pub fn of_error<'a>(evidence: impl IntoIterator<Item = &'a str>) -> Outcome {
        let texts: Vec<String> = evidence.into_iter().map(str::to_ascii_lowercase).collect();
        let says = |words: &[&str]| texts.iter().any(|t| words.iter().any(|w| t.contains(w)));
        if says(&NOTHING_SENT) {
            Outcome::Connect
        } else if says(&["timeout", "timed out", "deadline"]) {
            Outcome::Timeout
        } else {
            Outcome::Reset
        }
    }
}

/// What instrumentations record (lowercased) when a call failed before its request left: the
/// connection refused, the name not resolved, the connect timed out. From the semantic
/// conventions' `error.type` and the instrumentations of each language; any of them in the
/// error's type or message makes the failure a `connect_failure`.
pub const NOTHING_SENT: [&str; 31] = [
    // Python: urllib3, requests, httpx, aiohttp, the socket module.
    "newconnectionerror",
    "nameresolutionerror",
    "connecttimeout",
    "connectionrefusederror",
    "failed to establish a new connection",
    "gaierror",
    "httpx.connecterror",
    "clientconnectorerror",
    "clientconnectordnserror",
    "name or service not known",
    "nodename nor servname",
    "temporary failure in name resolution",
    // Java: java.net, java.net.http, Apache HttpClient, OkHttp.
    "java.net.connectexception",
    "java.net.unknownhostexception",
    "java.net.noroutetohostexception",
    "httpconnecttimeoutexception",
    "conn.connecttimeoutexception",
    // .NET HttpClient's `error.type` values.
    "name_resolution_error",
    "connection_error",
    // Go net/http.
    "dial tcp",
    "no such host",
    // Node: http, undici.
    "econnrefused",
    "enotfound",
    "eai_again",
    "und_err_connect_timeout",
    "connect etimedout",
    // Any language: the operating system's words.
    "connection refused",
    "no route to host",
    "network is unreachable",
    "ehostunreach",
    "enetunreach",
];

/// A Retry-After value: whole seconds (HTTP), or a duration with a unit.
pub fn retry_after(text: &str) -> Option<Tick> {
    let text = text.trim();
    match text.parse::<u64>() {
        Ok(s) => s.checked_mul(crate::time::TICKS_PER_SECOND).map(Tick),
        Err(_) => crate::time::parse_duration(text).ok(),
    }
}
