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

pub use crate::metrics::reservation::Release;
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
/// attempts, and which idempotency key its requests carry — in groups, so a new knob joins the
/// group it belongs to (with that group's validation, write-back and words in
/// `config::policy`), not a flat list every reader walks.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    pub name: String,
    /// When a failed call is sent again, how long after, and under which key.
    pub rule: RetryRule,
    /// How long an attempt and the whole operation may take.
    pub time: Timing,
    /// Second attempts sent while the first is still unanswered.
    pub hedges: Hedges,
    /// The client's stateful gates in front of a tool.
    pub gates: Gates,
    /// Which replica each attempt goes to.
    pub hosts: Hosts,
    /// What an agent loop's tasks call and do after a call fails for good.
    pub agent: AgentRule,
    /// What a call over an edge of the call graph carries and turns to.
    pub edge: EdgeRules,
    /// What the library a preset follows reads and ignores, said beside the description.
    pub note: Option<String>,
}

/// The retry rule: which failures are sent again, how many times, after which backoff, and
/// what the client reads from the server's answers on the way.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct RetryRule {
    pub retry: Retry,
    pub backoff: Backoff,
    /// Retry layers around the one that calls the tool; `retry` and `backoff` are the
    /// innermost's.
    pub layers: Option<Layers>,
    pub key: KeyScope,
    /// Retries only calls that are safe to send again (see [`safety`]).
    pub safety_gate: bool,
    /// After an ambiguous failure of a write, ask the server about the key before sending again.
    pub lookup_before_retry: bool,
    /// What the policy does with a server's Retry-After.
    pub pushback: Pushback,
    /// What the policy does with a server's should-retry header.
    pub should_retry: ShouldRetry,
    /// The backoff after a 429 in any layer, where it has its own (botocore backs off from 1 s
    /// after a throttle, from 50 ms after other failures).
    pub throttle_backoff: Option<Backoff>,
    /// The chance that a retry regenerates the request's arguments (an agent re-planning its
    /// call): under the same key the server then answers with a conflict.
    pub payload_drift: f64,
    /// A model's broken stream is resumed where it broke: the next attempt sends the tokens
    /// received and generates the rest.
    pub resume: bool,
}

/// How long an attempt and the whole operation may take.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Timing {
    pub timeout: Wait,
    /// Which side of the timeout a reply at exactly its tick falls on.
    pub tie: Tie,
    /// The operation's deadline, dispatch cap, cancellation and admission.
    pub limits: Limits,
    /// The timeout and hedge delay on each tool, by index, resolved at validation for every
    /// tool this configuration calls (and left empty for the others), so that a run never
    /// meets a rule its tool cannot answer.
    pub waits: Vec<Waits>,
}

/// Hedged requests: a second attempt of a call still unanswered after `delay`.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Hedges {
    /// The delay (`None` means never); the first reply wins. Only for calls that are safe to
    /// send twice.
    pub delay: Wait,
    /// How hedges follow one another.
    pub mode: Hedging,
}

/// The client's stateful gates, each per tool (per tool and caller, with
/// [`GateScope::Caller`]; per shard, with [`GateScope::Shard`]).
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Gates {
    /// Whose calls share a breaker, a retry budget and a concurrency limit.
    pub scope: GateScope,
    pub breaker: Option<BreakerRule>,
    pub retry_budget: Option<BudgetRule>,
    pub concurrency: Option<ConcurrencyRule>,
    /// A send-rate limiter that adapts to throttles, holding back even first tries.
    pub send_rate: Option<SendRateRule>,
    /// A client-side bucket of a model's tokens: each send waits for its input and
    /// `max_tokens`.
    pub send_tokens: Option<SendTokens>,
}

/// Which replica of a tool with several each attempt goes to.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Hosts {
    pub balancer: Balancer,
    /// Which replica a retry may go to.
    pub retry_host: RetryHost,
    /// Outlier ejection of replicas that keep failing; `None`, none.
    pub outlier_detection: Option<Ejection>,
}

/// What an agent loop's tasks call and do after a call fails for good.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct AgentRule {
    /// The tools this configuration's tasks call, by index, when not the workload's.
    pub calls: Option<Vec<usize>>,
    /// The task-level retry: re-plans after a call fails for good.
    pub replan: Option<Replan>,
    /// What the agent writes down that outlives a crash of its worker.
    pub durability: Durability,
    /// When the agent releases the money it reserved for a call that did not succeed.
    pub release: Release,
    /// The admission rule: an attempt is sent only where its timeout fits in the time left of
    /// the worker's lease, the item held afresh first where it does not (see
    /// [`crate::model::Crash`]).
    pub within_lease: bool,
}

/// What a replacement worker knows of a call it takes over from one that crashed (see
/// [`crate::model::Crash`]). Finished calls stand under either: their results are the task's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    /// Nothing outlives the worker: the replacement starts the task over from its first call,
    /// under keys it makes anew unless they are derived from the work item. Refused beside
    /// tasks of more than one call (re-running a task's finished calls is not modelled), so
    /// the task is the call in flight, run again as under a checkpoint.
    None,
    /// Finished calls' results are journaled, and nothing of the call in flight: the
    /// replacement runs it again from its first attempt, under a key it makes anew unless the
    /// key is derived from the work item (durable execution's checkpoint).
    Checkpoint,
    /// A SENDING record, with the call's key, is written before each send: the replacement
    /// knows the call may have been sent, and under which key, and looks the key up before it
    /// sends again (the intent log of a recoverable order path).
    IntentLog,
}

impl Durability {
    pub const ALL: [Durability; 3] = [
        Durability::None,
        Durability::Checkpoint,
        Durability::IntentLog,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Checkpoint => "checkpoint",
            Durability::IntentLog => "intent_log",
        }
    }
}

/// What a call over an edge of the call graph carries and turns to.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct EdgeRules {
    /// Whether calls over an edge with this policy carry their caller's deadline.
    pub propagation: Propagation,
    /// The tools a call over an edge with this policy turns to once it has failed.
    pub fallback: Fallback,
    /// The policies of the call graph's edges this configuration names, by edge index, in
    /// order; an edge not named uses this policy.
    pub overrides: Vec<(usize, Policy)>,
}

impl RetryRule {
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

    /// Whether each layer entered starts a fresh deadline and cap.
    pub fn resets_each_layer(&self) -> bool {
        self.layers.as_ref().is_some_and(|l| l.reset_each)
    }
}

/// Whose calls share the client's stateful gates: a breaker, a retry budget, a concurrency
/// limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateScope {
    /// One of each per tool, shared by every caller: a client library shared by a process.
    Tool,
    /// One of each per tool and caller: every agent or service instance keeps its own.
    Caller,
    /// One of each per shard of a tool whose calls go by key (`balancer = "by_key"`): a call
    /// asks the gates of its key's shard, so one bad shard trips only its own breaker.
    Shard,
}

impl GateScope {
    pub const ALL: [GateScope; 3] = [GateScope::Tool, GateScope::Caller, GateScope::Shard];

    pub fn name(self) -> &'static str {
        match self {
            GateScope::Tool => "tool",
            GateScope::Caller => "caller",
            GateScope::Shard => "shard",
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
            rule: RetryRule {
                retry: Retry {
                    max_attempts: Attempts::AtMost(1),
                    retry_on: FailureClass::TRANSIENT.into_iter().collect(),
                },
                backoff: Backoff::IMMEDIATE,
                layers: None,
                key: KeyScope::None,
                safety_gate: false,
                lookup_before_retry: false,
                pushback: Pushback::default(),
                should_retry: ShouldRetry::Ignore,
                throttle_backoff: None,
                payload_drift: 0.0,
                resume: false,
            },
            time: Timing {
                timeout: Wait::None,
                tie: Tie::Late,
                limits: Limits::default(),
                waits: Vec::new(),
            },
            hedges: Hedges {
                delay: Wait::None,
                mode: Hedging::Single,
            },
            gates: Gates {
                scope: GateScope::Tool,
                breaker: None,
                retry_budget: None,
                concurrency: None,
                send_rate: None,
                send_tokens: None,
            },
            hosts: Hosts {
                balancer: Balancer::RoundRobin,
                retry_host: RetryHost::Any,
                outlier_detection: None,
            },
            agent: AgentRule {
                calls: None,
                replan: None,
                durability: Durability::Checkpoint,
                release: Release::OnFailure,
                within_lease: false,
            },
            edge: EdgeRules {
                propagation: Propagation::None,
                fallback: Fallback::default(),
                overrides: Vec::new(),
            },
            note: None,
        }
    }

    /// The key attempt `attempt` of call `intent` carries where the key is the call's own (not
    /// forwarded), sent by worker `worker` (0 the first): a key held in memory is made anew by
    /// a replacement unless an intent log wrote it down.
    pub fn own_key(&self, intent: u64, attempt: u32, worker: u32) -> Option<crate::model::Key> {
        let logged = self.agent.durability == Durability::IntentLog;
        (self.rule.key).after_takeovers(intent, attempt, worker, logged)
    }

    /// The policy on edge `edge` of the call graph: the edge's own, or this one.
    pub fn on_edge(&self, edge: usize) -> &Policy {
        (self.edge.overrides.iter())
            .find(|(e, _)| *e == edge)
            .map_or(self, |(_, p)| p)
    }

    /// Up to `max_attempts` attempts, the first counted, on the failures in `retry_on`.
    pub fn with_retry(mut self, max_attempts: Attempts, retry_on: &[FailureClass]) -> Self {
        let retry_on = retry_on.iter().copied().collect();
        self.rule.retry = Retry {
            max_attempts,
            retry_on,
        };
        self
    }

    /// Waits `backoff` between attempts.
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.rule.backoff = backoff;
        self
    }

    /// Gives up on an attempt after `timeout`.
    pub fn with_timeout(mut self, timeout: Wait) -> Self {
        self.time.timeout = timeout;
        self
    }

    /// Sends every request of an intent under `key`.
    pub fn with_key(mut self, key: KeyScope) -> Self {
        self.rule.key = key;
        self
    }

    /// The timeout and hedge delay on every tool in `called` (by index into `tools`; the
    /// others get none), the tie rule applied. An error names the key, `timeout` or
    /// `hedge_delay`, whose rule a tool's latencies cannot answer, and why.
    pub fn resolve_waits(
        &self,
        tools: &[Tool],
        called: &[usize],
    ) -> Result<Vec<Waits>, (&'static str, crate::model::RoundTripError)> {
        let mut waits = vec![Waits::default(); tools.len()];
        for &t in called {
            let timeout = self
                .time
                .timeout
                .on(&tools[t])
                .map_err(|e| ("timeout", e))?;
            waits[t] = Waits {
                timeout: timeout.map(|w| self.time.tie.timer(w)),
                hedge: self
                    .hedges
                    .delay
                    .on(&tools[t])
                    .map_err(|e| ("hedge_delay", e))?,
            };
        }
        Ok(waits)
    }
}
