//! Where an attempt can fail: lost before the server, refused by the server, or lost after the
//! commit.

use crate::time::Tick;
use crate::variate::unit;

/// How many 64-bit words of its intent's fault stream each attempt reads: one for the fate and
/// one for each of the three latencies. Every attempt reads all of them, used or not, so the
/// k-th attempt of an intent always reads words k·W … k·W + W − 1 whatever came before it.
pub const WORDS_PER_ATTEMPT: usize = 4;

/// The probabilities of each way an attempt can end. They are absolute, not conditional: they
/// add up to at most 1, and the rest is the chance of a reply.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// a: the request is lost before the server sees it; nothing happens there.
    pub request_loss: f64,
    /// The server fails the request before committing (a transient 5xx).
    pub server_error: f64,
    /// b: the server commits, then the reply is lost.
    pub reply_loss: f64,
    /// The server refuses the request before committing: throttled (429).
    pub throttled: f64,
    /// Refused: not allowed (403).
    pub forbidden: f64,
    /// Refused: a request that can never succeed (another 4xx).
    pub invalid: f64,
    /// The connection fails before the request leaves, and the client knows it.
    pub connect_failure: f64,
    /// The server commits, then answers with a 5xx: the work was done and the reply says it
    /// failed (a crash or a timeout inside the server between the commit and the response).
    pub error_after_commit: f64,
    /// The server turns the request away before any work, overloaded across all its users
    /// (a 503, or Anthropic's 529): not the caller's limit, so nothing the caller sends less of
    /// would clear it.
    pub overloaded: f64,
    /// The wait a 429 asks for (Retry-After), if it names one.
    pub retry_after: Option<Tick>,
}

/// What becomes of one attempt, decided when it is dispatched.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    LostRequest,
    ServerError,
    LostReply,
    Delivered,
    /// Refused before the commit: throttled (429).
    Throttled,
    /// Refused before the commit: not allowed (403).
    Forbidden,
    /// Refused before the commit: a request that can never succeed (another 4xx).
    Invalid,
    /// Turned away at the door, before any work: the server's line was full, or it is
    /// overloaded across its users (503, 529).
    Overloaded,
    /// A conditional write that found the record's version moved on. Never drawn: the record
    /// decides it.
    VersionConflict,
    /// The connection failed: the request never left the client, and it knows so.
    ConnectFailed,
    /// The server committed, then answered with a 5xx.
    ErrorAfterCommit,
    /// A model's streamed answer broke part-way: the tokens streamed so far were generated
    /// (and billed), and the client saw the connection drop. Never drawn from the faults: the
    /// provider's stream decides it.
    StreamBroken,
}

impl Fate {
    /// Whether an attempt of this fate reached the work: the server did it (and a model
    /// generated), whatever reached the client after.
    pub fn did_work(self) -> bool {
        matches!(
            self,
            Fate::Delivered | Fate::LostReply | Fate::ErrorAfterCommit | Fate::StreamBroken
        )
    }

    /// The fates a script may list; a version conflict is the record's to decide.
    pub const ALL: [Fate; 11] = [
        Fate::Delivered,
        Fate::ServerError,
        Fate::LostRequest,
        Fate::LostReply,
        Fate::Throttled,
        Fate::Forbidden,
        Fate::Invalid,
        Fate::Overloaded,
        Fate::ConnectFailed,
        Fate::ErrorAfterCommit,
        Fate::StreamBroken,
    ];

    /// The name in a script.
    pub fn name(self) -> &'static str {
        match self {
            Fate::Delivered => "ok",
            Fate::ServerError => "5xx",
            Fate::LostRequest => "lost_request",
            Fate::LostReply => "lost_reply",
            Fate::Throttled => "429",
            Fate::Forbidden => "403",
            Fate::Invalid => "4xx",
            Fate::Overloaded => "503",
            Fate::VersionConflict => "conflict_version",
            Fate::ConnectFailed => "connect",
            Fate::ErrorAfterCommit => "5xx_after_commit",
            Fate::StreamBroken => "stream_broken",
        }
    }
}

impl Faults {
    /// The chance that an attempt ends in no reply or a refusal.
    pub fn total(&self) -> f64 {
        self.request_loss
            + self.server_error
            + self.reply_loss
            + self.throttled
            + self.forbidden
            + self.invalid
            + self.connect_failure
            + self.error_after_commit
            + self.overloaded
    }

    /// The refusals before the commit: a 429, a 403 or another 4xx.
    pub fn refused(&self) -> f64 {
        self.throttled + self.forbidden + self.invalid
    }

    /// Splits [0, 1) into the fates: losses and the 5xx first, then the refusals, then failed
    /// connections, and a reply in the rest. (The order of the stretches changes no
    /// probability; each kind added after the first keeps the draws of the tools without it
    /// where they always were.)
    pub fn fate(&self, word: u64) -> Fate {
        let u = unit(word);
        let mut upto = 0.0;
        for (p, fate) in self.stretches() {
            upto += p;
            if u < upto {
                return fate;
            }
        }
        Fate::Delivered
    }

    /// Each fault's probability with its fate, in the order [`Faults::fate`] splits [0, 1)
    /// into them: the explorer weighs its branches by the same table.
    pub fn stretches(&self) -> [(f64, Fate); 9] {
        [
            (self.request_loss, Fate::LostRequest),
            (self.server_error, Fate::ServerError),
            (self.reply_loss, Fate::LostReply),
            (self.throttled, Fate::Throttled),
            (self.forbidden, Fate::Forbidden),
            (self.invalid, Fate::Invalid),
            (self.connect_failure, Fate::ConnectFailed),
            (self.error_after_commit, Fate::ErrorAfterCommit),
            (self.overloaded, Fate::Overloaded),
        ]
    }
}

/// Everything random about one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptDraw {
    pub fate: Fate,
    pub request: Tick,
    pub service: Tick,
    pub reply: Tick,
    /// A wait the server asks for with its refusal (Retry-After).
    pub retry_after: Option<Tick>,
    /// The replica it was sent to (0 for a tool with one server).
    pub replica: u16,
    /// At a model: the output tokens it generates if it reaches the model (0 at any other
    /// tool). It sits in the padding after the fate and the replica, so a draw stays 48 bytes;
    /// what else a model's attempt holds is in its intent's far part.
    pub output: u32,
}

const _: () = assert!(std::mem::size_of::<AttemptDraw>() == 48);

impl AttemptDraw {
    /// An attempt of fate `fate` with these legs, sent to the first replica.
    pub fn new(
        fate: Fate,
        request: Tick,
        service: Tick,
        reply: Tick,
        retry_after: Option<Tick>,
    ) -> Self {
        AttemptDraw {
            fate,
            request,
            service,
            reply,
            retry_after,
            replica: 0,
            output: 0,
        }
    }

    /// The round trip: when the reply would arrive, and when a lost attempt is seen as a reset.
    pub fn round_trip(&self) -> Tick {
        self.request.after(self.service).after(self.reply)
    }
}
