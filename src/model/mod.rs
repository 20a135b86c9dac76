//! The world the client talks to: tools with their faults and latencies, the server that commits
//! side effects, and the workload of tasks that call the tools.

pub mod fault;
pub mod latency;
pub mod server;
pub mod workload;

pub use fault::{AttemptDraw, Fate, Faults};
pub use latency::Latency;
pub use workload::{Arrival, Workload};

/// One tool an agent calls: where its calls fail and how long each leg takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    pub faults: Faults,
    /// Client to server.
    pub request_latency: Latency,
    /// Server work before the commit (or the error).
    pub service_time: Latency,
    /// Server back to client.
    pub reply_latency: Latency,
}

impl Tool {
    /// Draws everything random about one attempt from its words of the intent's fault stream.
    pub fn draw(&self, words: &[u64; fault::WORDS_PER_ATTEMPT]) -> AttemptDraw {
        AttemptDraw {
            fate: self.faults.fate(words[0]),
            request: self.request_latency.sample(words[1]),
            service: self.service_time.sample(words[2]),
            reply: self.reply_latency.sample(words[3]),
        }
    }
}
