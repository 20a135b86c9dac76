//! The client's reliability policies, each in its own file, composed into one [`Policy`] per
//! configuration of an experiment.

pub mod backoff;
pub mod balance;
pub mod breaker;
pub mod budget;
pub mod concurrency;
pub mod decide;
pub mod fallback;
pub mod gate;
pub mod hedge;
pub mod idempotency;
pub mod layers;
pub mod limits;
pub mod reconcile;
pub mod replan;
pub mod retry;
pub mod retry_after;
pub mod safety;
pub mod send_rate;
pub mod state;
pub mod timeout;

pub use backoff::{Backoff, Cap, FirstRetry, Growth, Jitter, Previous};
pub use balance::{Balancer, Ejection, RetryHost};
pub use breaker::{Breaker, BreakerRule, Refuses, Trip, Window};
pub use budget::{BudgetRule, RetryBudget};
pub use concurrency::{ConcurrencyRule, LimitRule};
pub use decide::{Failure, Next, Plan, ShouldRetry, Word, Words, decide};
pub use fallback::{Cooldown, Cooling, Fallback};
pub use hedge::Hedging;
pub use idempotency::KeyScope;
pub use layers::{Layer, Layers, Tries};
pub use limits::{Admission, Limits, Propagation};
pub use replan::{LoopState, Replan, ReplanFrom, Step};
pub use retry::{Attempts, Retry, RetryDecision, RetryOn};
pub use retry_after::{OverLimit, Pushback, RetryAfter, RetryAfterFrom};
pub use send_rate::{SendRate, SendRateRule, SendTokens};
pub use state::{RetryState, Scope};
pub use timeout::{Tie, Wait, Waits};

use crate::model::{FailureClass, Tool};

/// One client configuration: how it retries, how long it waits for a reply and between
/// attempts, and which idempotency key its requests carry.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub name: String,
    pub retry: Retry,
    pub timeout: Wait,
    pub backoff: Backoff,
    pub key: KeyScope,
    pub limits: Limits,
    /// Retries only calls that are safe to send again (see [`safety`]).
    pub safety_gate: bool,
    /// A circuit breaker per tool (per tool and caller, with [`GateScope::Caller`]).
    pub breaker: Option<BreakerRule>,
    /// A retry budget per tool (per tool and caller, with [`GateScope::Caller`]).
    pub retry_budget: Option<BudgetRule>,
    /// Whose calls share a breaker, a retry budget and a concurrency limit.
    pub scope: GateScope,
    /// What the policy does with a server's Retry-After.
    pub pushback: Pushback,
    /// What the policy does with a server's should-retry header.
    pub should_retry: ShouldRetry,
    /// Which replica of a tool with several each attempt goes to.
    pub balancer: Balancer,
    /// Which replica a retry may go to.
    pub retry_host: RetryHost,
    /// Outlier ejection of replicas that keep failing; `None`, none.
    pub outlier_detection: Option<Ejection>,
    /// The backoff after a 429 in any layer, where it has its own (botocore backs off from 1 s
    /// after a throttle, from 50 ms after other failures).
    pub throttle_backoff: Option<Backoff>,
    /// After an ambiguous failure of a write, ask the server about the key before sending again.
    pub lookup_before_retry: bool,
    /// The tools this configuration's tasks call, by index, when not the workload's.
    pub calls: Option<Vec<usize>>,
    /// Sends a second attempt of a call still unanswered after this delay (`None` means
    /// never); the first reply wins. Only for calls that are safe to send twice.
    pub hedge: Wait,
    /// How hedges follow one another.
    pub hedging: Hedging,
    /// The chance that a retry regenerates the request's arguments (an agent re-planning its
    /// call): under the same key the server then answers with a conflict.
    pub payload_drift: f64,
    /// Retry layers around the one that calls the tool; `retry` and `backoff` are the
    /// innermost's.
    pub layers: Option<Layers>,
    /// A concurrency limit per tool (per tool and caller, with [`GateScope::Caller`]).
    pub concurrency: Option<ConcurrencyRule>,
    /// A send-rate limiter per tool (per tool and caller, with [`GateScope::Caller`]) that
    /// adapts to throttles, holding back even first tries.
    pub send_rate: Option<SendRateRule>,
    /// A client-side bucket of a model's tokens per tool (per tool and caller, with
    /// [`GateScope::Caller`]): each send waits for its input and `max_tokens`.
    pub send_tokens: Option<SendTokens>,
    /// A model's broken stream is resumed where it broke: the next attempt sends the tokens
    /// received and generates the rest.
    pub resume: bool,
    /// An agent loop's task-level retry: re-plans after a call fails for good.
    pub replan: Option<Replan>,
    /// Which side of the timeout a reply at exactly its tick falls on.
    pub timeout_tie: Tie,
    /// The timeout and hedge delay on each tool, by index, resolved at validation for every
    /// tool this configuration calls (and left empty for the others), so that a run never
    /// meets a rule its tool cannot answer.
    pub waits: Vec<Waits>,
    /// Whether calls over an edge with this policy carry their caller's deadline.
    pub propagation: Propagation,
    /// The tools a call over an edge with this policy turns to once it has failed.
    pub fallback: Fallback,
    /// The policies of the call graph's edges this configuration names, by edge index, in
    /// order; an edge not named uses this policy.
    pub edges: Vec<(usize, Policy)>,
    /// What the library a preset follows reads and ignores, said beside the description.
    pub note: Option<String>,
}

/// Whose calls share the client's stateful gates: a breaker, a retry budget, a concurrency
/// limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateScope {
    /// One of each per tool, shared by every caller: a client library shared by a process.
    Tool,
    /// One of each per tool and caller: every agent or service instance keeps its own.
    Caller,
}

impl GateScope {
    pub const ALL: [GateScope; 2] = [GateScope::Tool, GateScope::Caller];

    pub fn name(self) -> &'static str {
        match self {
            GateScope::Tool => "tool",
            GateScope::Caller => "caller",
        }
    }
}

impl Policy {
    /// A configuration named `name` with every key at its config default: one attempt, no
    /// timeout, no backoff, no key, no gate; the `with_*` setters and the public fields change
    /// the rest.
    pub fn new(name: impl Into<String>) -> Self {
        Policy {
            name: name.into(),
            retry: Retry {
                max_attempts: Attempts::AtMost(1),
                retry_on: FailureClass::TRANSIENT.into_iter().collect(),
            },
            timeout: Wait::None,
            backoff: Backoff::IMMEDIATE,
            key: KeyScope::None,
            limits: Limits::default(),
            safety_gate: false,
            breaker: None,
            retry_budget: None,
            scope: GateScope::Tool,
            pushback: Pushback::default(),
            should_retry: ShouldRetry::Ignore,
            balancer: Balancer::RoundRobin,
            retry_host: RetryHost::Any,
            outlier_detection: None,
            throttle_backoff: None,
            lookup_before_retry: false,
            calls: None,
            hedge: Wait::None,
            hedging: Hedging::Single,
            payload_drift: 0.0,
            layers: None,
            concurrency: None,
            send_rate: None,
            send_tokens: None,
            resume: false,
            replan: None,
            timeout_tie: Tie::Late,
            waits: Vec::new(),
            edges: Vec::new(),
            propagation: Propagation::None,
            fallback: Fallback::default(),
            note: None,
        }
    }

    /// The policy on edge `edge` of the call graph: the edge's own, or this one.
    pub fn on_edge(&self, edge: usize) -> &Policy {
        (self.edges.iter())
            .find(|(e, _)| *e == edge)
            .map_or(self, |(_, p)| p)
    }

    /// Up to `max_attempts` attempts, the first counted, on the failures in `retry_on`.
    pub fn with_retry(self, max_attempts: Attempts, retry_on: &[FailureClass]) -> Self {
        let retry_on = retry_on.iter().copied().collect();
        Policy {
            retry: Retry {
                max_attempts,
                retry_on,
            },
            ..self
        }
    }

    /// Waits `backoff` between attempts.
    pub fn with_backoff(self, backoff: Backoff) -> Self {
        Policy { backoff, ..self }
    }

    /// Gives up on an attempt after `timeout`.
    pub fn with_timeout(self, timeout: Wait) -> Self {
        Policy { timeout, ..self }
    }

    /// Sends every request of an intent under `key`.
    pub fn with_key(self, key: KeyScope) -> Self {
        Policy { key, ..self }
    }

    /// How many retry layers the policy nests: 1 without `layers`.
    pub fn depth(&self) -> usize {
        self.layers.as_ref().map_or(0, |l| l.outer.len()) + 1
    }

    /// Whether some layer retries a failure of `class`.
    pub fn retries(&self, class: FailureClass) -> bool {
        (0..self.depth()).any(|l| self.retry_of(l).retry_on.contains(class))
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

    /// The timeout and hedge delay on every tool in `called` (by index into `tools`; the
    /// others get none), the tie rule applied. An error names the key, `timeout` or
    /// `hedge_delay`, whose rule a tool's latencies cannot answer, and why.
    pub fn resolve_waits(
        &self,
        tools: &[Tool],
        called: &[usize],
    ) -> Result<Vec<Waits>, (&'static str, String)> {
        let mut waits = vec![Waits::default(); tools.len()];
        for &t in called {
            let timeout = self.timeout.on(&tools[t]).map_err(|e| ("timeout", e))?;
            waits[t] = Waits {
                timeout: timeout.map(|w| self.timeout_tie.timer(w)),
                hedge: self.hedge.on(&tools[t]).map_err(|e| ("hedge_delay", e))?,
            };
        }
        Ok(waits)
    }

    /// Whether each layer entered starts a fresh deadline and cap.
    pub fn resets_each_layer(&self) -> bool {
        self.layers.as_ref().is_some_and(|l| l.reset_each)
    }
}
