//! The vocabulary a call shares between the world and the client's policies: the key it
//! carries, and how a failed attempt looks to the client. Both sides use it, neither owns it.

/// An idempotency key as the server sees it. `nonce` is 0 for the one key of an intent,
/// k + 1 for the fresh key of its k-th attempt, and [`Key::taken_over`]'s for the key a
/// replacement worker made anew after the g-th takeover of the intent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub intent: u64,
    pub nonce: u32,
}

/// The bit that marks a key a replacement made after a takeover, apart from every attempt's.
const TAKEN_OVER: u32 = 1 << 31;

impl Key {
    /// The key of intent `intent` made by the replacement after its `g`-th takeover (g ≥ 1).
    pub fn taken_over(intent: u64, g: u32) -> Key {
        Key {
            intent,
            nonce: TAKEN_OVER | g,
        }
    }

    /// Which worker of its intent made this key, for one of an intent's keys per worker: 0 for
    /// the first (nonce 0), g for the g-th replacement's; `None` for a key per attempt.
    pub fn worker(&self) -> Option<u32> {
        match self.nonce {
            0 => Some(0),
            n if n & TAKEN_OVER != 0 => Some(n & !TAKEN_OVER),
            _ => None,
        }
    }
}

/// A failure as the client sees it. A lost request and a lost reply look the same from the
/// client — nothing came back — so both are a `Reset`.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureClass {
    /// The connection failed or no reply came: the attempt may or may not have committed.
    Reset,
    /// The server answered with a transient error (5xx) before committing.
    ServerError,
    /// No reply within the attempt's timeout: the client abandoned it, and it may yet commit.
    Timeout,
    /// Throttled (429): the server refused the request for now.
    Throttled,
    /// Overloaded (503): the server's line was full and it turned the request away at the
    /// door, before any work.
    Overloaded,
    /// Forbidden (403): repeating cannot supply a permission.
    Forbidden,
    /// Another 4xx: the request itself is wrong and will fail again.
    Invalid,
    /// The key is bound to another payload (409): the server will not apply this request.
    Conflict,
    /// A conditional write found the record's version moved on: read again and retry.
    VersionConflict,
    /// The connection failed before the request left the client: a reset known to be harmless,
    /// safe to send again whatever the call does.
    Connect,
    /// A streamed answer broke part-way, after the server had begun to answer (a model's
    /// stream, cut): the work was done, and the SDKs, whose retry loop has already returned the
    /// stream, do not retry it — the application must.
    StreamBroken,
}

impl FailureClass {
    pub const ALL: [FailureClass; 11] = [
        FailureClass::Reset,
        FailureClass::ServerError,
        FailureClass::Timeout,
        FailureClass::Throttled,
        FailureClass::Overloaded,
        FailureClass::Forbidden,
        FailureClass::Invalid,
        FailureClass::Conflict,
        FailureClass::VersionConflict,
        FailureClass::Connect,
        FailureClass::StreamBroken,
    ];

    /// The classes retried unless a policy says otherwise: the transient ones. A 403 or another
    /// 4xx would only fail again. A broken stream is transient too, but it is left to the
    /// caller unless a policy lists it, as the providers' SDKs leave it: their retry loop has
    /// returned the stream before it breaks.
    pub const TRANSIENT: [FailureClass; 6] = [
        FailureClass::Reset,
        FailureClass::ServerError,
        FailureClass::Timeout,
        FailureClass::Throttled,
        FailureClass::Overloaded,
        FailureClass::VersionConflict,
    ];

    /// Whether the class says the request itself will never succeed.
    pub fn is_permanent(self) -> bool {
        matches!(
            self,
            FailureClass::Forbidden | FailureClass::Invalid | FailureClass::Conflict
        )
    }

    /// The name used in configs (`retry_on`) and output.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::Reset => "reset",
            FailureClass::ServerError => "5xx",
            FailureClass::Timeout => "timeout",
            FailureClass::Throttled => "429",
            FailureClass::Overloaded => "503",
            FailureClass::Forbidden => "403",
            FailureClass::Invalid => "4xx",
            FailureClass::Conflict => "conflict",
            FailureClass::VersionConflict => "conflict_version",
            FailureClass::Connect => "connect",
            FailureClass::StreamBroken => "stream_broken",
        }
    }
}
