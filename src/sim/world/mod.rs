//! The model the engine runs: clients working through tasks, attempts crossing the network to
//! the server and back, and the policy deciding what follows a failure.
//!
//! An attempt's path, one event per step:
//! `Dispatch` → (request leg) → `ServerArrive` → (waiting for a worker, then service) →
//! `ServerDone`: commit or error → (reply leg) → `Reply` at the client. At a tool that serves
//! at once (see [`ServerSpec::serves_at_once`]) and whose time series nobody keeps, nothing can
//! happen between the arrival and the end of the service, so they are one event, `Served`;
//! so too where the line foresees each wait (workers and a plain first-come-first-served
//! line reached in the order of sending: see [`crate::model::foresight`]). A
//! lost request or reply reaches the client as a reset when the reply would have arrived, or not
//! at all (silence). A `Timeout` set at dispatch abandons the attempt if no reply came first;
//! the attempt itself goes on, and may still commit. A `Hedge` set at dispatch may send a second
//! attempt beside it.
//!
//! On a versioned record each attempt is a read-modify-write: `Dispatch` → `ReadArrive` (the
//! record's version) → `ReadBack` → the conditional write's `ServerArrive` and on as above.
//!
//! This file holds the events, the world's parts and an intent's life from its start to its
//! end; the rest lives beside it:
//! - what the world holds: [`plan`] what each task calls, [`hops`] the call graph as the run
//!   follows it, [`hosts`] each tool's servers and the balancer's views (and settling an
//!   attempt there), [`arrivals`] the tasks' arrivals;
//! - an attempt's steps: [`send`] the gates of a dispatch and the hedge, [`server`] the
//!   server's side, [`record`] a versioned record's read, [`reply`] what comes back, [`retry`]
//!   the decision after a failure;
//! - what follows a call: [`owner`] asks its owner — a task's list, a stage ([`task`]), an agent
//!   loop ([`agent`]) or a service's work ([`service`]);
//! - [`close`]: an intent that is over, recorded and freed; [`crash`]: a worker that dies
//!   holding a call, and the replacement that takes it over.

mod agent;
mod ahead;
mod arrivals;
mod close;
mod crash;
mod hops;
mod hosts;
mod owner;
mod plan;
mod record;
mod reply;
mod retry;
mod send;
mod server;
mod service;
mod task;

use arrivals::Arrivals;
use hops::Hops;
use hosts::Hosts;
use owner::Ended;
use plan::Plan;
use server::{off_server, request_key, to_server};

use super::intent::Hop;
use super::slab::{Handle, Slab};
use crate::engine::rng::Streams;
use crate::engine::{Model, Scheduler};
use crate::experiment::Experiment;
use crate::metrics::{
    AttemptRecord, Count, IntentRecord, Outcome, Series, Status, StopReason, Totals,
};
use crate::model::FailureClass;
#[cfg(doc)]
use crate::model::server::ServerSpec;
use crate::model::{Arrival, Tool, Workload};
use crate::policy::Policy;
use crate::policy::fallback::Moment;
use crate::policy::gate::Gates;
use crate::time::Tick;

/// What reaches the client at the end of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok,
    Failed(FailureClass),
}

/// One attempt of an intent, as events name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttemptRef {
    pub intent: Handle,
    pub attempt: u32,
}

/// The events of the model: small, naming intents by slot.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The next task of a Poisson stream arrives.
    Arrival,
    /// The intent sends its next attempt, after its backoff (unless cancelled meanwhile).
    Dispatch(Handle),
    /// A token the send-rate limiter on `tool` (for `caller`) promised its line is made.
    Token { tool: usize, holder: u32 },
    /// The attempt's request reaches the server.
    ServerArrive(AttemptRef),
    /// The server has done the attempt's work and commits or fails it.
    ServerDone(AttemptRef),
    /// The attempt's deadline has come while a server that abandons work at the deadline
    /// still works on it (a service's, with the number of its work).
    Abandon { at: AttemptRef, work: Option<u32> },
    /// The attempt's request reached a tool that serves at once, or whose line foresees its
    /// wait, and its work is done: the arrival and the end of the service as one event.
    Served(AttemptRef),
    /// The attempt's outcome reaches the client.
    Reply { at: AttemptRef, reply: Reply },
    /// The attempt's wait is over.
    Timeout(AttemptRef),
    /// The operation is cancelled.
    Cancel(Handle),
    /// A reconciliation lookup, made after an ambiguous failure of `class`, has its answer.
    Lookup { intent: Handle, class: FailureClass },
    /// The attempt is still unanswered after the hedge delay: time to send another.
    Hedge(AttemptRef),
    /// The operation's deadline, for a call that may still wait for a concurrency slot.
    DeadlineInLine(Handle),
    /// A capacity window of the tool opens or closes.
    Capacity(usize),
    /// The attempt's read reaches the versioned record.
    ReadArrive(AttemptRef),
    /// The read's answer reaches the client, which sends the conditional write.
    ReadBack(AttemptRef),
    /// The worker holding the call crashes, a replacement takes it over, or looks it up.
    Worker(Handle, crash::Step),
}

pub struct World<'a, S> {
    tools: &'a [Tool],
    workload: &'a Workload,
    /// What each task calls, in order or in stages.
    plan: Plan<'a>,
    /// The staged tasks, agent loops and services' work under way.
    underway: Underway,
    policy: &'a Policy,
    /// The call graph: each edge's policy and cooldown, and the trees of calls under way.
    hops: Hops<'a>,
    /// The gates every dispatch asks, with each tool's breaker and budget.
    gates: Gates,
    /// Each tool's servers and the balancer's views of them.
    hosts: Hosts,
    streams: Streams,
    /// The tasks' arrivals, and the clients they wait for.
    arrivals: Arrivals,
    intents: Slab,
    totals: Totals,
    /// Where each intent goes once it is over, with every attempt: all are held until then.
    /// Without one, the attempts that can change no more are folded as the next is sent.
    sink: Option<S>,
    /// The run's sources of fates beyond each tool's own draws (the explorer's chosen schedule,
    /// where it walks the run, and any fault process's state).
    pub(super) fates: crate::sim::fate::Fates,
}

/// The owners of calls under way other than a task's plain list: who answers when one of
/// their calls ends.
#[derive(Default)]
struct Underway {
    runs: task::Runs,
    loops: agent::Loops,
    works: service::Works,
}

impl<'a, S: FnMut(&IntentRecord, &[AttemptRecord])> World<'a, S> {
    pub fn new(exp: &'a Experiment, policy: &'a Policy, streams: Streams, sink: Option<S>) -> Self {
        let hops = Hops::new(exp, policy);
        World {
            tools: &exp.tools,
            workload: &exp.workload,
            plan: Plan::new(exp, policy),
            underway: Underway::default(),
            policy,
            gates: Gates::new(
                &hops.at_tool,
                policy.gates.scope,
                (
                    exp.workload.callers,
                    exp.tools
                        .iter()
                        .map(|t| t.replica_count())
                        .max()
                        .unwrap_or(1),
                ),
                exp.output.timeseries.is_some(),
            ),
            hops,
            hosts: Hosts::new(exp, policy),
            streams,
            arrivals: Arrivals::new(streams, exp.workload.clients),
            intents: Slab::default(),
            totals: Totals::keeping(
                (exp.output.timeseries).map(|width| Series::new(width, exp.tracks())),
            ),
            sink,
            fates: crate::sim::fate::Fates::default(),
        }
    }

    /// Starts the arrivals — a batch is all there at tick 0, a stream schedules its first task —
    /// and sets every capacity window's edges.
    pub fn begin(&mut self, sched: &mut Scheduler<Event>) {
        for (t, tool) in self.tools.iter().enumerate() {
            for w in &tool.server.capacity {
                sched.schedule_at(w.from, Event::Capacity(t));
                sched.schedule_at(w.until, Event::Capacity(t));
            }
        }
        match self.workload.arrival {
            Arrival::Batch => {
                self.arrivals.arrived =
                    self.workload.tasks.expect("validated: a batch has a count");
                self.start_waiting_tasks(sched);
            }
            Arrival::Poisson { .. } | Arrival::Scheduled(_) | Arrival::Recorded(_) => {
                self.schedule_arrival(sched);
            }
        }
    }

    /// Ends the run, whose last event came at `end`. Intents still waiting are `hung` at the
    /// horizon — caught there, or waiting in silence with nothing left to happen; intents the
    /// client had finished keep their ending, with what their abandoned attempts did so far.
    pub fn finish(mut self, horizon: Tick, end: Tick) -> Totals {
        if let Some(series) = &mut self.totals.series {
            series.close(end);
        }
        for slot in self.intents.live() {
            let intent = self.intents.get(slot);
            if intent.client.ended.is_none() {
                intent.hang(horizon);
            }
            self.close(slot);
        }
        self.totals.tasks = self.arrivals.arrived;
        self.totals
    }

    /// What the client does once an intent ends: `end_intent_only` says it, and the caller
    /// carries it out, so a chain of calls ended at once is a loop.
    fn move_on(&mut self, next: Option<MoveOn>, sched: &mut Scheduler<Event>) {
        if self.follow(next, sched) {
            self.arrivals.idle_clients += 1;
            self.start_waiting_tasks(sched);
        }
    }

    /// Starts each next call of a task while the one before ends at once; whether the task
    /// ended, freeing its client.
    fn follow(&mut self, mut next: Option<MoveOn>, sched: &mut Scheduler<Event>) -> bool {
        while let Some(step) = next {
            match step {
                MoveOn::NextCall { task, call, caller } => {
                    next = self.start_intent(task, call, caller, sched);
                }
                MoveOn::NextTask => return true,
                MoveOn::Called => return false,
            }
        }
        false
    }

    /// Starts call `call` of task `task`; what follows at once if it ends before it is sent.
    #[must_use]
    fn start_intent(
        &mut self,
        task: u64,
        call: usize,
        caller: u32,
        sched: &mut Scheduler<Event>,
    ) -> Option<MoveOn> {
        let id = task * self.plan.calls.len() as u64 + call as u64;
        let optional = self.plan.stages.is_some() && self.plan.optional[call];
        let handle = self.open_call(id, self.plan.calls[call], optional, caller, sched.now());
        self.first_attempt(handle, sched)
    }

    /// Opens intent `id`, a task's call to `tool`, for `caller` at `now`: over the edge from the
    /// task, the root of its own tree where the graph is measured.
    fn open_call(
        &mut self,
        id: u64,
        tool: usize,
        optional: bool,
        caller: u32,
        now: Tick,
    ) -> Handle {
        self.totals.count(tool, now, Count::Offered);
        let edge = self.hops.graph.top(tool) as u16;
        let hop = Hop {
            edge,
            primary: edge,
            optional,
            origin: id,
            site: id,
            tree: if self.hops.kept {
                self.hops.trees.plant()
            } else {
                0
            },
            ..Hop::default()
        };
        self.open(id, hop, caller, now)
    }

    /// Starts intent `id` over `hop`'s edge for `caller` at `now` — or, for a primary resting
    /// in its cooldown, its first fallback instead.
    fn open(&mut self, mut id: u64, mut hop: Hop, caller: u32, now: Tick) -> Handle {
        let edge = usize::from(hop.edge);
        let resting = self.hops.cooling[edge].rests(now);
        let fallback = &self.hops.policies[edge].edge.fallback;
        if let Some(tool) = fallback.next(hop.tier, Moment::Starts { resting }) {
            (id, hop) = self.hop_to(id, hop, tool);
        }
        let callee = self.hops.graph.edges[usize::from(hop.edge)].callee;
        let handle = self.intents.start(id, callee, now);
        let intent = self.intents.get(handle.slot);
        intent.caller = caller;
        intent.set_hop(hop);
        if self.hops.kept {
            self.hops.trees.join(hop.tree);
        }
        handle
    }

    /// The intent that carries intent `id`'s call over `hop` on to fallback tool `tool`, the next
    /// tier: its number and where it stands.
    fn hop_to(&self, id: u64, hop: Hop, tool: usize) -> (u64, Hop) {
        let primary = usize::from(hop.primary);
        let caller = self.hops.graph.edges[primary].caller;
        let edge = (self.hops.graph.find(caller, tool)).expect("validated: a fallback is an edge");
        let tier = hop.tier + 1;
        let hop = Hop {
            edge: edge as u16,
            tier,
            fell_back: false,
            ..hop
        };
        (mix(id ^ u64::from(tier) << 40), hop)
    }

    /// Sends the first attempt of the intent just started: its policy's retry state set and
    /// its cancellation timed.
    #[must_use]
    fn first_attempt(&mut self, handle: Handle, sched: &mut Scheduler<Event>) -> Option<MoveOn> {
        let intent = self.intents.get(handle.slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        intent.retry.tries.start(policy.rule.depth());
        // Set before anything else of the intent, so it wins a tie with the deadline.
        if let Some(after) = policy.time.limits.cancel_after {
            sched.schedule_in(after, Event::Cancel(handle));
        }
        self.arm_crash(handle, sched);
        self.dispatch(handle.slot, sched)
    }

    fn on_cancel(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        if self.intents.under_way(handle) {
            self.end_intent(handle.slot, Status::Stopped(StopReason::Cancelled), sched);
        }
    }

    /// The client is done with the intent: it is recorded once the server holds none of its
    /// attempts, and the client moves on at once — to the next call after a success, or to the
    /// next waiting task.
    fn end_intent(&mut self, slot: u32, status: Status, sched: &mut Scheduler<Event>) {
        let next = self.end_intent_only(slot, status, sched);
        self.move_on(Some(next), sched);
    }

    /// Ends the intent as `end_intent` does, and returns what the client does next instead of
    /// doing it.
    #[must_use]
    fn end_intent_only(
        &mut self,
        slot: u32,
        status: Status,
        sched: &mut Scheduler<Event>,
    ) -> MoveOn {
        let now = sched.now();
        let holder = self.holder(slot);
        let intent = self.intents.get(slot);
        // The client stops waiting on any attempt still out: a hedge's loser, or an attempt
        // in flight at a cancellation. The server still does its work.
        let (tool, caller, mut abandoned) = (intent.tool, intent.caller, 0);
        for attempt in intent.awaiting().attempts() {
            self.settle(slot, attempt, Outcome::Cancelled, None, now);
            abandoned += 1;
        }
        let failed = status != Status::Succeeded;
        let intent = self.intents.get(slot);
        intent.client.ambiguous |= abandoned > 0 && failed;
        intent.client.ended = Some((status, now));
        let (id, hop) = (intent.id, intent.hop());
        let primary = usize::from(hop.primary);
        let fallback = (self.hops.policies[primary].edge.fallback)
            .next(hop.tier, Moment::Ended { failed })
            .map(|tool| self.hop_to(id, hop, tool));
        if let (0, Some(rule)) = (hop.tier, self.hops.policies[primary].edge.fallback.cooldown) {
            self.hops.cooling[primary].ended(rule, failed, now);
        }
        if fallback.is_some() {
            self.intents.get(slot).fell_back();
        }
        // The fallback joins the call's tree before this intent can leave it empty.
        let next = fallback.map(|(id, hop)| self.open(id, hop, caller, now));
        let intent = self.intents.get(slot);
        // What a loop's call adds to its context: the model's answer, or a tool's result.
        let added = match &self.workload.agent {
            None => 0,
            Some(agent) => intent
                .sizes_drawn()
                .map_or(u64::from(agent.result_tokens), |s| s.output),
        };
        let over = intent.is_over();
        let owner = self.owner(hop);
        if over {
            self.close(slot);
        }
        // Their concurrency slots are free: the calls waiting for one go first.
        if abandoned > 0 {
            (0..abandoned).for_each(|_| self.gates.abandoned(tool, holder));
            self.wake_waiting(tool, holder, sched);
        }
        // The call is not over: it goes on at its next fallback, still under way for its
        // caller unless that ends at once too.
        if let Some(handle) = next {
            return self.first_attempt(handle, sched).unwrap_or(MoveOn::Called);
        }
        let ended = Ended {
            succeeded: status == Status::Succeeded,
            optional: hop.optional,
            added,
            caller,
        };
        self.follows(owner, ended, primary, sched)
    }
}

/// The numbers of calls and fallbacks, made from what they stand for, with the top bit set so
/// that they never meet a task's call.
fn mix(z: u64) -> u64 {
    crate::variate::splitmix(z) | 1 << 63
}

/// What a client does when an intent ends: its task's next call, after a success, or else the
/// next waiting task.
#[derive(Clone, Copy, Debug)]
enum MoveOn {
    NextCall {
        task: u64,
        call: usize,
        caller: u32,
    },
    NextTask,
    /// A service's call ended: its caller goes on, not a client.
    Called,
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> Model for World<'_, S> {
    type Event = Event;

    fn handle(&mut self, event: Event, sched: &mut Scheduler<Event>) {
        match event {
            Event::Arrival => self.on_arrival(sched),
            Event::Dispatch(handle) => {
                // A cancellation during the backoff has ended the intent already.
                if self.intents.under_way(handle) {
                    let next = self.dispatch(handle.slot, sched);
                    self.move_on(next, sched);
                }
            }
            Event::Token { tool, holder } => self.on_token(tool, holder, sched),
            Event::ServerArrive(at) => self.on_server_arrive(at, sched),
            Event::ServerDone(at) => self.on_server_done(at, sched),
            Event::Served(at) => {
                self.count_orphaned(at);
                self.answer(at, sched);
            }
            Event::Abandon { at, work } => self.on_abandon(at, work, sched),
            Event::Reply { at, reply } => self.on_reply(at, reply, sched),
            Event::Timeout(at) => self.on_timeout(at, sched),
            Event::Cancel(handle) => self.on_cancel(handle, sched),
            Event::Lookup { intent, class } => self.on_lookup(intent, class, sched),
            Event::Hedge(at) => self.on_hedge(at, sched),
            Event::DeadlineInLine(handle) => self.on_deadline_in_line(handle, sched),
            Event::Capacity(tool) => self.on_capacity(tool, sched),
            Event::ReadArrive(at) => self.on_read_arrive(at, sched),
            Event::ReadBack(at) => self.on_read_back(at, sched),
            Event::Worker(handle, step) => self.on_worker(handle, step, sched),
        }
        if self.totals.series.is_some() {
            self.watch_levels(sched.now());
        }
    }

    fn prefetch<'e>(&self, upcoming: impl Iterator<Item = &'e Event>) {
        self.fetch_ahead(upcoming);
    }
}
