//! Where an attempt can fail: lost before the server, refused by the server, or lost after the
//! commit.

use crate::engine::rng::unit;
use crate::time::Tick;

/// How many 64-bit words of its intent's fault stream each attempt reads: one for the fate and
/// one for each of the three latencies. Every attempt reads all of them, used or not, so the
/// k-th attempt of an intent always reads words k·W … k·W + W − 1 whatever came before it.
pub const WORDS_PER_ATTEMPT: usize = 4;

/// The probabilities of each way an attempt can end. They are absolute, not conditional:
/// `request_loss + server_error + reply_loss ≤ 1`, and the rest is the chance of a reply.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Faults {
    /// a: the request is lost before the server sees it; nothing happens there.
    pub request_loss: f64,
    /// The server fails the request before committing (a transient 5xx).
    pub server_error: f64,
    /// b: the server commits, then the reply is lost.
    pub reply_loss: f64,
}

/// What becomes of one attempt, decided when it is dispatched.
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
}

impl Faults {
    /// Splits [0, 1) into the four fates, in the order of an attempt's path.
    pub fn fate(&self, word: u64) -> Fate {
        let u = unit(word);
        let lost_request = self.request_loss;
        let server_error = lost_request + self.server_error;
        let lost_reply = server_error + self.reply_loss;
        if u < lost_request {
            Fate::LostRequest
        } else if u < server_error {
            Fate::ServerError
        } else if u < lost_reply {
            Fate::LostReply
        } else {
            Fate::Delivered
        }
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
}

impl AttemptDraw {
    /// The round trip: when the reply would arrive, and when a lost attempt is seen as a reset.
    pub fn round_trip(&self) -> Tick {
        self.request.after(self.service).after(self.reply)
    }
}
