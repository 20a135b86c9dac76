//! The client's reliability policies, each in its own file, composed into one [`Policy`] per
//! configuration of an experiment.

pub mod backoff;
pub mod breaker;
pub mod budget;
pub mod idempotency;
pub mod layers;
pub mod limits;
pub mod retry;
pub mod safety;
pub mod timeout;

pub use backoff::{Backoff, Growth, Jitter};
pub use breaker::{Breaker, BreakerRule, Trip, Window};
pub use budget::{BudgetRule, RetryBudget};
pub use idempotency::{Key, KeyScope};
pub use layers::{Layer, Layers, Tries};
pub use limits::{Admission, Limits};
pub use retry::{Attempts, FailureClass, Retry, RetryAfter, RetryDecision, RetryOn};
pub use timeout::Timeout;

/// One client configuration: how it retries, how long it waits for a reply and between
/// attempts, and which idempotency key its requests carry.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub name: String,
    pub retry: Retry,
    pub timeout: Timeout,
    pub backoff: Backoff,
    pub key: KeyScope,
    pub limits: Limits,
    /// Retries only calls that are safe to send again (see [`safety`]).
    pub safety_gate: bool,
    /// A circuit breaker per tool, shared by all the tasks of a run.
    pub breaker: Option<BreakerRule>,
    /// A retry budget per tool, shared by all the tasks of a run.
    pub retry_budget: Option<BudgetRule>,
    /// After an ambiguous failure of a write, ask the server about the key before sending again.
    pub lookup_before_retry: bool,
    /// The tools this configuration's tasks call, by index, when not the workload's.
    pub calls: Option<Vec<usize>>,
    /// Sends a second attempt of a call still unanswered after this delay (`None` means
    /// never); the first reply wins. Only for calls that are safe to send twice.
    pub hedge: Timeout,
    /// The chance that a retry regenerates the request's arguments (an agent re-planning its
    /// call): under the same key the server then answers with a conflict.
    pub payload_drift: f64,
    /// Retry layers around the one that calls the tool; `retry` and `backoff` are the
    /// innermost's.
    pub layers: Option<Layers>,
}

impl Policy {
    /// How many retry layers the policy nests: 1 without `layers`.
    pub fn depth(&self) -> usize {
        self.layers.as_ref().map_or(0, |l| l.outer.len()) + 1
    }

    /// The retry rule of layer `layer`, counted from the outermost.
    pub fn retry_of(&self, layer: usize) -> &Retry {
        match self.outer_layer(layer) {
            Some(l) => &l.retry,
            None => &self.retry,
        }
    }

    /// The backoff of layer `layer`, counted from the outermost.
    pub fn backoff_of(&self, layer: usize) -> &Backoff {
        match self.outer_layer(layer) {
            Some(l) => &l.backoff,
            None => &self.backoff,
        }
    }

    /// Layer `layer` if it is one around the innermost.
    fn outer_layer(&self, layer: usize) -> Option<&Layer> {
        self.layers.as_ref().and_then(|l| l.outer.get(layer))
    }

    /// Whether each layer entered starts a fresh deadline and cap.
    pub fn resets_each_layer(&self) -> bool {
        self.layers.as_ref().is_some_and(|l| l.reset_each)
    }
}
