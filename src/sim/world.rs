//! The model the engine runs: clients working through tasks, attempts crossing the network to
//! the server and back, and the policy deciding what follows a failure.
//!
//! An attempt's path, one event per step:
//! `Dispatch` → (request leg) → `ServerArrive` → (service) → `ServerDone`: commit or error →
//! (reply leg) → `Reply` at the client. A lost request or a lost reply still produces a `Reply`,
//! a reset, at the moment the reply would have arrived.

use rand_chacha::ChaCha8Rng;

use super::intent::{Intent, Slab};
use crate::engine::rng::{Source, Streams, word};
use crate::engine::{Ending, Model, Scheduler};
use crate::experiment::Experiment;
use crate::metrics::{BusinessState, IntentRecord, Status, StopReason, Totals};
use crate::model::server::Processed;
use crate::model::{Arrival, Fate, Tool, Workload};
use crate::policy::{FailureClass, Policy, RetryDecision};
use crate::time::Tick;

/// What reaches the client at the end of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok,
    Failed(FailureClass),
}

/// The events of the model. Each names the intent's slot, so an event is 8 bytes.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// The next task of a Poisson stream arrives.
    Arrival,
    /// The intent sends its next attempt.
    Dispatch { slot: u32 },
    /// The attempt's request reaches the server.
    ServerArrive { slot: u32 },
    /// The server has done the attempt's work and commits or fails it.
    ServerDone { slot: u32 },
    /// The attempt's outcome reaches the client.
    Reply { slot: u32, reply: Reply },
}

pub struct World<'a, S> {
    tools: &'a [Tool],
    workload: &'a Workload,
    policy: &'a Policy,
    streams: Streams,
    arrivals: ChaCha8Rng,
    /// Tasks arrived so far; tasks `started..arrived` wait for a client.
    arrived: u64,
    started: u64,
    idle_clients: u32,
    intents: Slab,
    totals: Totals,
    sink: S,
}

impl<'a, S: FnMut(&IntentRecord)> World<'a, S> {
    pub fn new(exp: &'a Experiment, policy: &'a Policy, streams: Streams, sink: S) -> Self {
        World {
            tools: &exp.tools,
            workload: &exp.workload,
            policy,
            streams,
            arrivals: streams.stream(Source::Arrivals, 0),
            arrived: 0,
            started: 0,
            idle_clients: exp.workload.clients,
            intents: Slab::default(),
            totals: Totals::default(),
            sink,
        }
    }

    /// Starts the arrivals: a batch is all there at tick 0, a stream schedules its first task.
    pub fn begin(&mut self, sched: &mut Scheduler<Event>) {
        match self.workload.arrival {
            Arrival::Batch => {
                self.arrived = self.workload.tasks;
                self.start_waiting_tasks(sched);
            }
            Arrival::Poisson { .. } => self.schedule_arrival(sched),
        }
    }

    /// Ends the run; when the horizon stopped it, intents still live are `hung` at the horizon.
    pub fn finish(mut self, ending: Ending, horizon: Tick) -> Totals {
        debug_assert!(ending == Ending::Horizon || self.intents.is_empty());
        let live: Vec<Intent> = self.intents.drain().collect();
        for intent in live {
            let business = business_state(&intent, Status::Stopped(StopReason::Hung));
            self.record(intent, Status::Stopped(StopReason::Hung), business, horizon);
        }
        self.totals.tasks = self.arrived;
        self.totals
    }

    fn schedule_arrival(&mut self, sched: &mut Scheduler<Event>) {
        let gap = self.workload.arrival.gap(word(&mut self.arrivals));
        sched.schedule_in(gap, Event::Arrival);
    }

    fn on_arrival(&mut self, sched: &mut Scheduler<Event>) {
        self.arrived += 1;
        if self.arrived < self.workload.tasks {
            self.schedule_arrival(sched);
        }
        self.start_waiting_tasks(sched);
    }

    fn start_waiting_tasks(&mut self, sched: &mut Scheduler<Event>) {
        while self.idle_clients > 0 && self.started < self.arrived {
            self.idle_clients -= 1;
            self.started += 1;
            self.start_intent(self.started - 1, 0, sched);
        }
    }

    fn start_intent(&mut self, task: u64, call: usize, sched: &mut Scheduler<Event>) {
        let calls = &self.workload.calls;
        let id = task * calls.len() as u64 + call as u64;
        let intent = Intent::new(&self.streams, id, calls[call], sched.now());
        let slot = self.intents.insert(intent);
        self.dispatch(slot, sched);
    }

    fn dispatch(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(slot);
        let draw = intent.draw_attempt(&self.tools[intent.tool]);
        match draw.fate {
            Fate::LostRequest => sched.schedule_in(
                draw.round_trip(),
                Event::Reply {
                    slot,
                    reply: Reply::Failed(FailureClass::Reset),
                },
            ),
            _ => sched.schedule_in(draw.request, Event::ServerArrive { slot }),
        }
    }

    fn on_server_done(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(slot);
        let draw = intent.current();
        let reply = match draw.fate {
            Fate::ServerError => Reply::Failed(FailureClass::ServerError),
            Fate::LostRequest => unreachable!("a lost request never reaches the server"),
            Fate::LostReply | Fate::Delivered => {
                let key = self.policy.key.key(intent.id, intent.attempts - 1);
                if intent.keys.process(key) == Processed::Committed {
                    intent.effects += 1;
                }
                if draw.fate == Fate::LostReply {
                    Reply::Failed(FailureClass::Reset)
                } else {
                    Reply::Ok
                }
            }
        };
        sched.schedule_in(draw.reply, Event::Reply { slot, reply });
    }

    fn on_reply(&mut self, slot: u32, reply: Reply, sched: &mut Scheduler<Event>) {
        let class = match reply {
            Reply::Ok => return self.end_intent(slot, Status::Succeeded, sched),
            Reply::Failed(class) => class,
        };
        let intent = self.intents.get(slot);
        intent.in_flight = false;
        intent.ambiguous |= class == FailureClass::Reset;
        match self.policy.retry.decide(intent.attempts, class) {
            RetryDecision::Retry { retry } => {
                let backoff = &self.policy.backoff;
                // Retry n reads word n − 1 of the intent's jitter stream.
                let word = if backoff.is_random() {
                    self.streams
                        .word_at(Source::Jitter, intent.id, u64::from(retry) - 1)
                } else {
                    0
                };
                intent.last_delay = backoff.delay(retry, intent.last_delay, word);
                sched.schedule_in(intent.last_delay, Event::Dispatch { slot });
            }
            RetryDecision::NotRetryable => {
                self.end_intent(slot, Status::Stopped(StopReason::NotRetryable), sched)
            }
            RetryDecision::AttemptLimit => {
                self.end_intent(slot, Status::Stopped(StopReason::AttemptLimit), sched)
            }
        }
    }

    /// Records the intent, then moves its task on: the next call after a success, or the
    /// client to the next waiting task.
    fn end_intent(&mut self, slot: u32, status: Status, sched: &mut Scheduler<Event>) {
        let intent = self.intents.remove(slot);
        let calls = self.workload.calls.len() as u64;
        let (task, next_call) = (intent.id / calls, (intent.id % calls + 1) as usize);
        let business = business_state(&intent, status);
        self.record(intent, status, business, sched.now());
        if status == Status::Succeeded && next_call < self.workload.calls.len() {
            return self.start_intent(task, next_call, sched);
        }
        if status == Status::Succeeded {
            self.totals.tasks_succeeded += 1;
        }
        self.idle_clients += 1;
        self.start_waiting_tasks(sched);
    }

    fn record(&mut self, intent: Intent, status: Status, business: BusinessState, end: Tick) {
        let record = IntentRecord {
            intent: intent.id,
            tool: intent.tool,
            attempts: intent.attempts,
            effects: intent.effects,
            status,
            business_state: business,
            start: intent.start,
            end,
        };
        self.totals.add(&record);
        (self.sink)(&record);
    }
}

/// What the client can say: a receipt confirms; an attempt unanswered (or still on its way at
/// the horizon) leaves it unknown; refusals before any commit point mean nothing happened.
fn business_state(intent: &Intent, status: Status) -> BusinessState {
    match status {
        Status::Succeeded => BusinessState::Confirmed,
        Status::Stopped(_) if intent.ambiguous || intent.in_flight => BusinessState::Unknown,
        Status::Stopped(_) => BusinessState::NotAttempted,
    }
}

impl<S: FnMut(&IntentRecord)> Model for World<'_, S> {
    type Event = Event;

    fn handle(&mut self, event: Event, sched: &mut Scheduler<Event>) {
        match event {
            Event::Arrival => self.on_arrival(sched),
            Event::Dispatch { slot } => self.dispatch(slot, sched),
            Event::ServerArrive { slot } => {
                let service = self.intents.get(slot).current().service;
                sched.schedule_in(service, Event::ServerDone { slot });
            }
            Event::ServerDone { slot } => self.on_server_done(slot, sched),
            Event::Reply { slot, reply } => self.on_reply(slot, reply, sched),
        }
    }
}
