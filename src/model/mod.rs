//! The world the client talks to: tools with their faults and latencies, the server that commits
//! side effects, and the workload of tasks that call the tools.

pub mod agent;
pub mod burst;
pub mod call;
pub mod capacity;
pub mod choice;
pub mod crash;
pub mod fault;
pub mod foresight;
pub mod graph;
pub mod health;
pub mod latency;
pub mod limiter;
pub mod outage;
pub mod price;
pub mod provider;
pub mod record;
pub mod replica;
pub mod schedule;
pub mod script;
pub mod server;
pub mod station;
pub mod tokens;
pub mod workload;

use crate::time::Tick;
pub use agent::AgentLoop;
pub use burst::Burst;
pub use call::{FailureClass, Key};
pub use capacity::CapacityWindow;
pub use choice::Choice;
pub use crash::Crash;
pub use fault::{AttemptDraw, Fate, Faults};
pub use graph::{Call, Edge, Graph, Stage};
pub use latency::Latency;
pub use limiter::{LimitScope, RateLimit, Refusal};
pub use outage::{Outage, OutageMode};
pub use price::{Bill, IntentBill, Price};
pub use provider::{Provider, Sizes};
pub use record::{Record, VersionCheck};
pub use replica::Replica;
pub use schedule::{RatePoint, RateSchedule};
pub use script::{Script, Step};
pub use server::{ServerSpec, ToolKind};
pub use station::{Line, LineOrder};
pub use tokens::{TokenBucket, TokenLimit};
pub use workload::{Arrival, Workload};

/// One tool an agent calls: where its calls fail, how the client notices, how long each leg
/// takes, and the server behind it.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub name: String,
    pub faults: Faults,
    pub loss_seen_as: LossSignal,
    /// Client to server.
    pub request_latency: Latency,
    /// Server work before the commit (or the error).
    pub service_time: Latency,
    /// Server back to client.
    pub reply_latency: Latency,
    /// Listed outcomes that replace the faults and latencies.
    pub script: Option<Script>,
    /// Faults that come in bursts: a good state (the faults above) and a bad one, each for an
    /// exponential time. None: every attempt draws from `faults` alike.
    pub burst: Option<Burst>,
    /// Faults and latencies that follow a recorded timeline, stretch by stretch, in place of
    /// `faults` (see [`health`]). None: the tool's own, at every time.
    pub health: Option<health::Health>,
    /// How the server answers a reconciliation lookup.
    pub lookup: Lookup,
    /// The client can stop waiting for a call. A non-cooperative endpoint (a blocking call that
    /// cannot be interrupted) holds the client until it returns: a timeout or deadline is only
    /// noticed then.
    pub cooperative: bool,
    /// What the server is and does: its kind, workers, line and what stands at its door.
    pub server: ServerSpec,
    /// Its replicas, each a server of the spec's kind; none: one server, the tool's own.
    pub replicas: Vec<Replica>,
    /// The zones its replicas stand in, replica i in zone i mod their number; none: no zones.
    pub zones: Vec<String>,
    /// The model provider behind it, for a tool of kind `model`.
    pub provider: Option<Provider>,
    /// What its calls cost.
    pub price: Price,
    /// The money the agent reserves before each call, in picodollars (0: none): an order's
    /// price, spent on success (see [`crate::metrics::reservation`]).
    pub reserve: u64,
}

/// A reconciliation lookup: the client asks the server whether the operation's key committed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookup {
    /// From asking to the answer.
    pub time: Tick,
    /// The chance the lookup itself fails, leaving the outcome unknown.
    pub failure: f64,
    /// How long after a commit a lookup can see it: "not found" is not "never happened".
    pub lag: Tick,
}

/// How a lost request or reply reaches the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossSignal {
    /// A connection reset, when the reply would have arrived.
    Reset,
    /// Nothing: the client learns of it only from its timeout, or never.
    Silence,
}

impl LossSignal {
    pub const ALL: [LossSignal; 2] = [LossSignal::Reset, LossSignal::Silence];

    pub fn name(self) -> &'static str {
        match self {
            LossSignal::Reset => "reset",
            LossSignal::Silence => "silence",
        }
    }
}

impl Tool {
    /// A tool named `name` of `kind` with every key at its config default: no faults, 1 ms
    /// legs, as many workers as arrive, an idempotent, cooperative receiver.
    pub fn new(name: impl Into<String>, kind: ToolKind) -> Self {
        let leg = || Latency::Constant(Tick::from_millis(1));
        Tool {
            name: name.into(),
            faults: Faults::default(),
            loss_seen_as: LossSignal::Reset,
            request_latency: leg(),
            service_time: leg(),
            reply_latency: leg(),
            script: None,
            burst: None,
            health: None,
            lookup: Lookup {
                time: Tick::from_millis(1),
                failure: 0.0,
                lag: Tick::ZERO,
            },
            cooperative: true,
            server: ServerSpec::new(kind),
            replicas: Vec::new(),
            zones: Vec::new(),
            provider: None,
            price: Price::default(),
            reserve: 0,
        }
    }

    /// Fails its calls as `faults` says.
    pub fn with_faults(self, faults: Faults) -> Self {
        Tool { faults, ..self }
    }

    /// The constant time of the two network legs, which round-trip questions need: the round
    /// trip is then the service time shifted, and its distribution is exactly known.
    fn network(&self) -> Result<Tick, RoundTripError> {
        let fail = |why| RoundTripError {
            tool: self.name.clone(),
            why,
        };
        if self.script.is_some() {
            return Err(fail(NoRoundTrip::Scripted));
        }
        match (&self.request_latency, &self.reply_latency) {
            (Latency::Constant(a), Latency::Constant(b)) => Ok(a.after(*b)),
            _ => Err(fail(NoRoundTrip::VariableNetwork)),
        }
    }

    /// The p-quantile of the round trip (request + service + reply).
    pub fn round_trip_quantile(&self, p: f64) -> Result<Tick, RoundTripError> {
        Ok(self.network()?.after(self.service_time.quantile(p)))
    }

    /// The longest round trip.
    pub fn round_trip_max(&self) -> Result<Tick, RoundTripError> {
        let network = self.network()?;
        let service = self.service_time.max().ok_or_else(|| RoundTripError {
            tool: self.name.clone(),
            why: NoRoundTrip::NoMaximum,
        })?;
        Ok(network.after(service))
    }

    /// P(round trip ≥ wait): the chance an attempt given `wait` is abandoned (a reply arriving
    /// at the timeout's own tick is late). `None` unless both network legs are constant.
    pub fn times_out(&self, wait: Tick) -> Option<f64> {
        let network = self.network().ok()?;
        Some(match wait.0.checked_sub(network.0) {
            None | Some(0) => 1.0,
            Some(service_budget) => self.service_time.exceeds(Tick(service_budget - 1)),
        })
    }

    /// Whether its attempts reach the server in the order they were sent: a constant request
    /// leg, not a script's.
    pub fn arrives_in_order(&self) -> bool {
        self.script.is_none() && matches!(self.request_latency, Latency::Constant(_))
    }

    /// The zone replica `replica` stands in, by index into `zones`.
    pub fn zone_of(&self, replica: usize) -> Option<usize> {
        (!self.zones.is_empty()).then(|| replica % self.zones.len())
    }

    /// Whether every attempt's fate is drawn from `faults`, whichever replica it goes to and
    /// whenever it is sent: what the closed forms assume and the explorer weighs its branches
    /// by.
    pub fn one_fault_table(&self) -> bool {
        self.burst.is_none()
            && self.health.is_none()
            && self.replicas.iter().all(|r| r.faults == self.faults)
    }

    /// The timer a client sets on an attempt it granted `granted`: none on a call that cannot
    /// be abandoned (not cooperative), which is awaited however long it takes.
    pub fn timer(&self, granted: Option<Tick>) -> Option<Tick> {
        granted.filter(|_| self.cooperative)
    }

    /// Whether the client hears nothing at all of an attempt of fate `fate`: a lost request or
    /// reply where a loss is silence rather than a reset.
    pub fn silent(&self, fate: Fate) -> bool {
        self.loss_seen_as == LossSignal::Silence
            && matches!(fate, Fate::LostRequest | Fate::LostReply)
    }

    /// Whether its attempts are billed: a price, or a model's tokens.
    pub fn bills(&self) -> bool {
        !self.price.is_free() || self.provider.is_some()
    }

    /// How many servers stand behind the tool's name.
    pub fn replica_count(&self) -> usize {
        self.replicas.len().max(1)
    }

    /// Draws everything random about an attempt sent to replica `replica` at `now` from its
    /// words of the intent's fault stream: the same words whichever replica it went to, read by
    /// that replica's faults and service time, by the burst's bad-state faults where the tool
    /// is `bad`, or by the recorded stretch `now` falls in where the tool has a health. (A
    /// scripted tool's attempts read its script instead: `sim::fate` decides which.)
    pub fn draw(
        &self,
        words: &[u64; fault::WORDS_PER_ATTEMPT],
        replica: usize,
        (bad, now): (bool, Tick),
    ) -> AttemptDraw {
        let (faults, service) = match self.replicas.get(replica) {
            Some(r) => (&r.faults, &r.service_time),
            None => (&self.faults, &self.service_time),
        };
        let stretch = self.health.as_ref().map(|h| h.at(now));
        let faults = match (&self.burst, stretch) {
            (_, Some(s)) => &s.faults,
            (Some(burst), None) if bad => &burst.in_bad,
            _ => faults,
        };
        let fate = faults.fate(words[0]);
        let service = match stretch {
            Some(s) => Tick((service.sample(words[2]).0 as f64 * s.latency).round() as u64),
            None => service.sample(words[2]),
        };
        AttemptDraw {
            replica: replica as u16,
            ..AttemptDraw::new(
                fate,
                self.request_latency.sample(words[1]),
                service,
                self.reply_latency.sample(words[3]),
                faults.retry_after.filter(|_| fate == Fate::Throttled),
            )
        }
    }
}

/// Why a tool's round trip has no quantile or maximum to read: the tool, and what it lacks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundTripError {
    pub tool: String,
    pub why: NoRoundTrip,
}

/// What a tool lacks for a round trip to be read from its latencies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NoRoundTrip {
    /// A script decides every attempt: there is no distribution to read.
    Scripted,
    /// The request and reply legs are not constant, so the round trip is no shifted service time.
    VariableNetwork,
    /// The service time has no maximum (only constant, uniform and empirical have one).
    NoMaximum,
}

impl std::fmt::Display for RoundTripError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tool = &self.tool;
        match self.why {
            NoRoundTrip::Scripted => write!(
                f,
                "tool \"{tool}\" is scripted: a timeout from its latency has no distribution to read"
            ),
            NoRoundTrip::VariableNetwork => write!(
                f,
                "tool \"{tool}\": a timeout from its latency needs constant request and reply latencies"
            ),
            NoRoundTrip::NoMaximum => write!(
                f,
                "tool \"{tool}\": its service time has no maximum (only constant, uniform and empirical do)"
            ),
        }
    }
}

impl std::error::Error for RoundTripError {}
