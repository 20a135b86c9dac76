//! The model the engine runs: clients working through tasks, attempts crossing the network to
//! the server and back, and the policy deciding what follows a failure.
//!
//! An attempt's path, one event per step:
//! `Dispatch` → (request leg) → `ServerArrive` → (waiting for a worker, then service) →
//! `ServerDone`: commit or error → (reply leg) → `Reply` at the client. A lost request or reply
//! reaches the client as a reset when the reply would have arrived, or not at all (silence). A
//! `Timeout` set at dispatch abandons the attempt if no reply came first; the attempt itself goes
//! on, and may still commit.

use rand_chacha::ChaCha8Rng;

use super::intent::{Handle, Intent, Scope, Slab};
use crate::engine::rng::{Source, Streams, unit, word};
use crate::engine::{Model, Scheduler};
use crate::experiment::Experiment;
use crate::metrics::{
    AttemptRecord, BusinessState, IntentRecord, Outcome, Status, StopReason, Totals,
};
use crate::model::outage::{self, OutageMode};
use crate::model::server::Processed;
use crate::model::station::Station;
use crate::model::{Arrival, Fate, LossSignal, Tool, ToolKind, Workload};
use crate::policy::{
    Breaker, FailureClass, Policy, RetryAfter, RetryBudget, RetryDecision, safety,
};
use crate::time::Tick;

/// What reaches the client at the end of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok,
    Failed(FailureClass),
}

/// One attempt of an intent, as events name it.
#[derive(Clone, Copy, Debug)]
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
    /// The attempt's request reaches the server.
    ServerArrive(AttemptRef),
    /// The server has done the attempt's work and commits or fails it.
    ServerDone(AttemptRef),
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
}

pub struct World<'a, S> {
    tools: &'a [Tool],
    workload: &'a Workload,
    /// The tools each task calls, in order: the policy's own list or the workload's.
    calls: &'a [usize],
    policy: &'a Policy,
    /// The wait the policy grants an attempt on each tool.
    timeouts: Vec<Option<Tick>>,
    /// How long an attempt on each tool goes unanswered before a hedge is sent, if ever.
    hedge_delays: Vec<Option<Tick>>,
    /// Each tool's circuit breaker, if the policy has one.
    breakers: Vec<Option<Breaker>>,
    /// Each tool's retry budget, if the policy has one.
    budgets: Vec<Option<RetryBudget>>,
    stations: Vec<Station<AttemptRef>>,
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

impl<'a, S: FnMut(&IntentRecord, &[AttemptRecord])> World<'a, S> {
    pub fn new(exp: &'a Experiment, policy: &'a Policy, streams: Streams, sink: S) -> Self {
        World {
            tools: &exp.tools,
            workload: &exp.workload,
            calls: policy.calls.as_deref().unwrap_or(&exp.workload.calls),
            policy,
            timeouts: exp
                .tools
                .iter()
                .map(|t| policy.timeout.on(t).expect("validated against every tool"))
                .collect(),
            hedge_delays: exp
                .tools
                .iter()
                .map(|t| policy.hedge.on(t).expect("validated against every tool"))
                .collect(),
            stations: exp.tools.iter().map(|t| Station::new(t.workers)).collect(),
            breakers: exp
                .tools
                .iter()
                .map(|_| policy.breaker.map(Breaker::new))
                .collect(),
            budgets: exp
                .tools
                .iter()
                .map(|_| policy.retry_budget.map(RetryBudget::new))
                .collect(),
            streams,
            arrivals: streams.stream(Source::Arrivals, 0),
            arrived: 0,
            started: 0,
            idle_clients: exp.workload.clients,
            intents: Slab::new(streams),
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

    /// Ends the run. Intents still waiting are `hung` at the horizon — caught there, or waiting
    /// in silence with nothing left to happen; intents the client had finished keep their
    /// ending, with what their abandoned attempts did so far.
    pub fn finish(mut self, horizon: Tick) -> Totals {
        for slot in self.intents.live() {
            let intent = self.intents.get(slot);
            if intent.ended.is_none() {
                intent.ended = Some((Status::Stopped(StopReason::Hung), horizon));
                // Still awaited: the client never learned how they ended.
                for attempt in intent.awaiting.attempts() {
                    intent.log[attempt as usize].end = horizon;
                }
            }
            self.close(slot);
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
        let id = task * self.calls.len() as u64 + call as u64;
        let handle = self.intents.start(id, self.calls[call], sched.now());
        self.intents
            .get(handle.slot)
            .tries
            .start(self.policy.depth());
        // Set before anything else of the intent, so it wins a tie with the deadline.
        if let Some(after) = self.policy.limits.cancel_after {
            sched.schedule_in(after, Event::Cancel(handle));
        }
        self.dispatch(handle.slot, sched);
    }

    /// Sends the intent's next attempt, unless its deadline has come: a backoff that ran into
    /// the deadline ends here.
    fn dispatch(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let intent = self.intents.get(slot);
        let limits = &self.policy.limits;
        // The broken control: an outer layer's new attempt enters the layers below, and each
        // replaces the deadline and the cap.
        if self.policy.resets_each_layer() && intent.next_layer + 1 < self.policy.depth() {
            intent.scope = Scope {
                start: now,
                first: intent.attempts(),
            };
        }
        let start = intent.scope.start;
        if limits.past_deadline(start, now) {
            return self.end_intent(slot, Status::Stopped(StopReason::DeadlineExceeded), sched);
        }
        // Checked again just before the call: a first attempt, or time lost while waiting.
        if !limits.admits(start, now, Tick::ZERO) {
            return self.end_intent(slot, Status::Stopped(StopReason::BudgetTooSmall), sched);
        }
        if let Some(breaker) = &mut self.breakers[intent.tool]
            && !breaker.admit(now)
        {
            intent.short_circuited += 1;
            return self.end_intent(slot, Status::Stopped(StopReason::BreakerOpen), sched);
        }
        if intent.attempts() == 0
            && let Some(budget) = &mut self.budgets[intent.tool]
        {
            budget.first_attempt(now);
        }
        self.send(slot, true, sched);
    }

    /// Sends an attempt that every gate has let through: a primary, which may be hedged, or a
    /// hedge.
    fn send(&mut self, slot: u32, primary: bool, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let handle = self.intents.handle(slot);
        let intent = self.intents.get(slot);
        let limits = &self.policy.limits;
        let start = intent.scope.start;
        let tool = &self.tools[intent.tool];
        // A non-cooperative call cannot be abandoned: no timer is set for it.
        let wait = limits
            .grant(self.timeouts[intent.tool], start, now)
            .filter(|_| tool.cooperative);
        let (attempt, draw) = intent.draw_attempt(tool, now, wait);
        let at = AttemptRef {
            intent: handle,
            attempt,
        };
        // Set first, so a reply due at the same tick comes after it: completing exactly at the
        // timeout is late.
        if let Some(wait) = wait {
            sched.schedule_in(wait, Event::Timeout(at));
        }
        if let Some(delay) = self.hedge_delays[intent.tool].filter(|_| primary) {
            sched.schedule_in(delay, Event::Hedge(at));
        }
        match (draw.fate, tool.loss_seen_as) {
            (Fate::LostRequest, LossSignal::Reset) => sched.schedule_in(
                draw.round_trip(),
                Event::Reply {
                    at,
                    reply: Reply::Failed(FailureClass::Reset),
                },
            ),
            (Fate::LostRequest, LossSignal::Silence) => {}
            _ => {
                intent.at_server += 1;
                sched.schedule_in(draw.request, Event::ServerArrive(at));
            }
        }
    }

    fn serve(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let service = self.intents.get(at.intent.slot).draw(at.attempt).service;
        sched.schedule_in(service, Event::ServerDone(at));
    }

    fn on_server_arrive(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        let tool = intent.tool;
        let down = outage::down_at(&self.tools[tool].outages, sched.now());
        intent.calls_while_down += u32::from(down.is_some());
        match down {
            // Refused at the door: no worker, no line.
            Some(OutageMode::FailFast) => {
                intent.fail_fast(at.attempt);
                self.answer(at, sched);
            }
            Some(OutageMode::Hang) => {
                intent.at_server -= 1;
                if intent.is_over() {
                    self.close(at.intent.slot);
                }
            }
            None => {
                if let Some(at) = self.stations[tool].arrive(at) {
                    self.serve(at, sched);
                }
            }
        }
    }

    /// A worker has finished an attempt: it answers, and takes up the next in line.
    fn on_server_done(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let tool = self.intents.get(at.intent.slot).tool;
        self.answer(at, sched);
        if let Some(next) = self.stations[tool].finish() {
            self.serve(next, sched);
        }
    }

    /// The server commits or fails the attempt and sends its reply, if anyone listens.
    fn answer(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let slot = at.intent.slot;
        let intent = self.intents.get(slot);
        let tool = intent.tool;
        let draw = intent.draw(at.attempt);
        intent.at_server -= 1;
        let reply = match draw.fate {
            Fate::ServerError => Reply::Failed(FailureClass::ServerError),
            Fate::Throttled => Reply::Failed(FailureClass::Throttled),
            Fate::Forbidden => Reply::Failed(FailureClass::Forbidden),
            Fate::Invalid => Reply::Failed(FailureClass::Invalid),
            Fate::LostRequest => unreachable!("a lost request never reaches the server"),
            Fate::LostReply | Fate::Delivered => {
                let tool = &self.tools[tool];
                // A receiver that does not honour keys commits whatever key comes.
                let key = if tool.idempotent {
                    self.policy.key.key(intent.id, at.attempt)
                } else {
                    None
                };
                let payload = intent.payload_of(at.attempt);
                // A read-only call commits nothing.
                let processed = (tool.kind == ToolKind::Write)
                    .then(|| intent.keys.process(key, payload, sched.now()));
                if processed == Some(Processed::Committed) {
                    intent.effects += 1;
                    intent.log[at.attempt as usize].committed = true;
                }
                match (draw.fate, processed) {
                    (Fate::LostReply, _) => Reply::Failed(FailureClass::Reset),
                    (_, Some(Processed::Conflict)) => Reply::Failed(FailureClass::Conflict),
                    _ => Reply::Ok,
                }
            }
        };
        // Nobody listens for the reply of an abandoned attempt, and silence sends none.
        let heard = intent.awaiting.contains(at.attempt)
            && !(draw.fate == Fate::LostReply
                && self.tools[tool].loss_seen_as == LossSignal::Silence);
        if heard {
            sched.schedule_in(draw.reply, Event::Reply { at, reply });
        }
        if intent.is_over() {
            self.close(slot);
        }
    }

    /// The intent `at` names, if the client is still waiting on that attempt; late replies
    /// and timers of settled attempts find none.
    fn waiting_on(&mut self, at: AttemptRef) -> Option<&mut Intent> {
        self.intents
            .find(at.intent)
            .filter(|intent| intent.awaiting.contains(at.attempt))
    }

    fn on_reply(&mut self, at: AttemptRef, reply: Reply, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let limits = self.policy.limits;
        let Some(intent) = self.waiting_on(at) else {
            return;
        };
        let draw = intent.draw(at.attempt);
        let outcome = match (reply, draw.fate) {
            (Reply::Ok, _) => Outcome::Ok,
            (Reply::Failed(FailureClass::ServerError), _) => Outcome::ServerError,
            (Reply::Failed(FailureClass::Reset), Fate::LostRequest) => Outcome::LostRequest,
            (Reply::Failed(FailureClass::Reset), _) => Outcome::LostReply,
            (Reply::Failed(class), _) => Outcome::Refused(class),
        };
        intent.settle(at.attempt, outcome, now);
        let failure = match reply {
            Reply::Ok => None,
            Reply::Failed(class) => Some(class),
        };
        intent.ambiguous |= failure == Some(FailureClass::Reset);
        // Only a call that could not be abandoned answers after the deadline: the overrun is
        // found on return, its evidence kept, and nothing is retried.
        let late = limits.past_deadline(intent.scope.start, now);
        intent.late_receipt = late && failure.is_none();
        // A failure while a hedge (or its primary) is still out: wait for that one.
        let racing = failure.is_some() && !intent.awaiting.is_empty();
        let (tool, cost) = (intent.tool, intent.retry_cost);
        self.observe(tool, now, failure, cost);
        if late {
            let stop = Status::Stopped(StopReason::DeadlineExceeded);
            return self.end_intent(at.intent.slot, stop, sched);
        }
        if racing {
            return;
        }
        match failure {
            None => self.end_intent(at.intent.slot, Status::Succeeded, sched),
            Some(class) => self.after_failure(at.intent.slot, class, draw.retry_after, sched),
        }
    }

    fn on_timeout(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(intent) = self.waiting_on(at) else {
            return;
        };
        intent.settle(at.attempt, Outcome::Timeout, now);
        intent.timeouts += 1;
        intent.ambiguous = true;
        let racing = !intent.awaiting.is_empty();
        let (tool, start, cost) = (intent.tool, intent.scope.start, intent.retry_cost);
        self.observe(tool, now, Some(FailureClass::Timeout), cost);
        if self.policy.limits.past_deadline(start, now) {
            let stop = Status::Stopped(StopReason::DeadlineExceeded);
            return self.end_intent(at.intent.slot, stop, sched);
        }
        if racing {
            return;
        }
        self.after_failure(at.intent.slot, FailureClass::Timeout, None, sched);
    }

    /// Tells the tool's circuit breaker and retry budget, if any, how a call ended; `cost` is
    /// what the budget took for it, if it was a retry.
    fn observe(
        &mut self,
        tool: usize,
        now: Tick,
        failure: Option<FailureClass>,
        cost: Option<f64>,
    ) {
        if let Some(breaker) = &mut self.breakers[tool] {
            breaker.record(now, failure);
        }
        if let Some(budget) = &mut self.budgets[tool] {
            budget.outcome(failure, cost);
        }
    }

    fn on_cancel(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        if self.intents.find(handle).is_some_and(|i| i.ended.is_none()) {
            self.end_intent(handle.slot, Status::Stopped(StopReason::Cancelled), sched);
        }
    }

    /// The attempt is still unanswered after the hedge delay: another goes out, if it is
    /// another attempt the innermost layer may make and every bound on a retry lets it through.
    /// The budget pays for it as for a retry after a timeout; a breaker that refuses it
    /// short-circuits the hedge alone.
    fn on_hedge(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let policy = self.policy;
        let Some(intent) =
            (self.intents.find(at.intent)).filter(|intent| intent.awaiting.contains(at.attempt))
        else {
            return;
        };
        let room = (policy.retry.max_attempts.cap()).is_none_or(|n| intent.tries.innermost() < n);
        let capped =
            (policy.limits.dispatch_cap).is_some_and(|cap| intent.dispatches_in_scope() >= cap);
        if !room || capped || policy.limits.past_deadline(intent.scope.start, now) {
            return;
        }
        if let Some(breaker) = &mut self.breakers[intent.tool]
            && !breaker.admit(now)
        {
            intent.short_circuited += 1;
            return;
        }
        if let Some(budget) = &mut self.budgets[intent.tool] {
            match budget.withdraw(now, FailureClass::Timeout) {
                Some(cost) => intent.retry_cost = Some(cost),
                None => return,
            }
        }
        let innermost = policy.depth() - 1;
        intent.tries.begin(innermost);
        intent.next_layer = innermost;
        intent.hedges += 1;
        self.send(at.intent.slot, false, sched);
    }

    /// After a failed attempt: a lookup first if the outcome of a write is unknown and the
    /// policy reconciles; else the next attempt, after its backoff, or the end of the intent.
    fn after_failure(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        sched: &mut Scheduler<Event>,
    ) {
        let intent = self.intents.get(slot);
        let tool = &self.tools[intent.tool];
        if self.policy.lookup_before_retry
            && safety::is_ambiguous(class)
            && tool.kind == ToolKind::Write
        {
            intent.lookups += 1;
            let handle = self.intents.handle(slot);
            sched.schedule_in(
                tool.lookup.time,
                Event::Lookup {
                    intent: handle,
                    class,
                },
            );
            return;
        }
        self.retry_or_stop(slot, class, retry_after, sched);
    }

    /// The answer to a lookup: found, the operation is confirmed without a resend; not found, it
    /// is sent again under the same key only if the receiver is idempotent; a failed lookup
    /// leaves it unknown.
    fn on_lookup(&mut self, handle: Handle, class: FailureClass, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(intent) = self.intents.find(handle).filter(|i| i.ended.is_none()) else {
            return;
        };
        let tool = &self.tools[intent.tool];
        let failed = tool.lookup.failure > 0.0
            && unit(self.streams.word_at(
                Source::Lookups,
                intent.id,
                u64::from(intent.lookups) - 1,
            )) < tool.lookup.failure;
        let key = self.policy.key.key(intent.id, 0);
        let outcome = if failed {
            Err(StopReason::NeedsReconciliation)
        } else if intent.keys.shows(key, now, tool.lookup.lag) {
            Ok(true)
        } else if safety::replay_is_safe(tool, self.policy.key) {
            Ok(false)
        } else {
            Err(StopReason::NeedsReconciliation)
        };
        match outcome {
            Ok(true) => self.end_intent(handle.slot, Status::Succeeded, sched),
            Ok(false) => self.retry_or_stop(handle.slot, class, None, sched),
            Err(reason) => self.end_intent(handle.slot, Status::Stopped(reason), sched),
        }
    }

    /// The next attempt, after its backoff, or the end of the intent.
    fn retry_or_stop(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        sched: &mut Scheduler<Event>,
    ) {
        let now = sched.now();
        match self.next_attempt(slot, class, retry_after, now) {
            Ok(until) => {
                let intent = self.intents.get(slot);
                intent.backoff = intent.backoff.after(until.since(now));
                let handle = self.intents.handle(slot);
                sched.schedule_at(until, Event::Dispatch(handle));
            }
            Err(reason) => self.end_intent(slot, Status::Stopped(reason), sched),
        }
    }

    /// When the next attempt goes out, or why none does. The gates run in order: the safety
    /// gate, the retry rule of each layer from the innermost out, the dispatch cap, Retry-After,
    /// cooperative admission, the retry budget (which takes its token last, so a refusal
    /// elsewhere costs none).
    fn next_attempt(
        &mut self,
        slot: u32,
        class: FailureClass,
        retry_after: Option<Tick>,
        now: Tick,
    ) -> Result<Tick, StopReason> {
        let policy = self.policy;
        let intent = self.intents.get(slot);
        let retried = (0..policy.depth()).any(|l| policy.layer(l).0.retry_on.contains(class));
        if policy.safety_gate
            && retried
            && !safety::replay_is_safe(&self.tools[intent.tool], policy.key)
        {
            return Err(if safety::is_ambiguous(class) {
                StopReason::NeedsReconciliation
            } else {
                StopReason::NotRetryable
            });
        }
        let (layer, retry) = match intent.tries.decide(|l| *policy.layer(l).0, class) {
            Ok(next) => next,
            Err(RetryDecision::NotRetryable) if class == FailureClass::Conflict => {
                return Err(StopReason::IdempotencyConflict);
            }
            Err(RetryDecision::NotRetryable) if class.is_permanent() => {
                return Err(StopReason::PermanentFailure);
            }
            Err(RetryDecision::AttemptLimit) => return Err(StopReason::AttemptLimit),
            Err(_) => return Err(StopReason::NotRetryable),
        };
        // A new attempt of an outer layer starts a fresh cap where each layer resets it.
        let fresh_scope = policy.resets_each_layer() && layer + 1 < policy.depth();
        if !fresh_scope
            && policy
                .limits
                .dispatch_cap
                .is_some_and(|cap| intent.dispatches_in_scope() >= cap)
        {
            return Err(StopReason::DispatchBudgetExhausted);
        }
        if retry_after.is_some() && policy.retry.retry_after == RetryAfter::Stop {
            return Err(StopReason::NotRetryable);
        }
        let backoff = policy.layer(layer).1;
        let word = if backoff.is_random() {
            self.streams
                .word_at(Source::Jitter, intent.id, u64::from(intent.retries))
        } else {
            0
        };
        intent.retries += 1;
        intent.last_delay = backoff.delay(retry, intent.last_delay, word);
        let delay = intent.last_delay.max(retry_after.unwrap_or(Tick::ZERO));
        let start = intent.scope.start;
        if !policy.limits.admits(start, now, delay) {
            return Err(StopReason::BudgetTooSmall);
        }
        if let Some(budget) = &mut self.budgets[intent.tool] {
            match budget.withdraw(now, class) {
                Some(cost) => intent.retry_cost = Some(cost),
                None => return Err(StopReason::RetryBudgetExhausted),
            }
        }
        // An agent that re-plans its call may send other arguments with the retry.
        if policy.payload_drift > 0.0
            && unit(self.streams.word_at(
                Source::Payloads,
                intent.id,
                u64::from(intent.retries) - 1,
            )) < policy.payload_drift
        {
            intent.payload += 1;
        }
        intent.tries.begin(layer);
        intent.next_layer = layer;
        // Backoff spends the time left like work does: up to the deadline at most.
        let until = now.after(delay);
        Ok(match policy.limits.deadline {
            Some(deadline) => until.min(start.after(deadline)),
            None => until,
        })
    }

    /// The client is done with the intent: it is recorded once the server holds none of its
    /// attempts, and the client moves on at once — to the next call after a success, or to the
    /// next waiting task.
    fn end_intent(&mut self, slot: u32, status: Status, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let intent = self.intents.get(slot);
        // The client stops waiting on any attempt still out: a hedge's loser, or an attempt
        // in flight at a cancellation. The server still does its work.
        for attempt in intent.awaiting.attempts() {
            intent.settle(attempt, Outcome::Cancelled, now);
            intent.ambiguous |= status != Status::Succeeded;
        }
        intent.ended = Some((status, now));
        let calls = self.calls.len() as u64;
        let (task, next_call) = (intent.id / calls, (intent.id % calls + 1) as usize);
        if intent.is_over() {
            self.close(slot);
        }
        if status == Status::Succeeded && next_call < self.calls.len() {
            return self.start_intent(task, next_call, sched);
        }
        if status == Status::Succeeded {
            self.totals.tasks_succeeded += 1;
        }
        self.idle_clients += 1;
        self.start_waiting_tasks(sched);
    }

    /// Records an intent that is over and frees its slot.
    fn close(&mut self, slot: u32) {
        let intent = self.intents.get(slot);
        let record = record_of(intent, &self.tools[intent.tool]);
        self.totals.add(&record, &intent.log);
        (self.sink)(&record, &intent.log);
        self.intents.remove(slot);
    }
}

/// The record of an intent the client is done with.
fn record_of(intent: &Intent, tool: &Tool) -> IntentRecord {
    let (status, end) = intent.ended.expect("recorded once the client is done");
    IntentRecord {
        intent: intent.id,
        tool: intent.tool,
        attempts: intent.attempts(),
        effects: intent.effects,
        timeouts: intent.timeouts,
        backoff: intent.backoff,
        short_circuited: intent.short_circuited,
        lookups: intent.lookups,
        hedges: intent.hedges,
        calls_while_down: intent.calls_while_down,
        status,
        business_state: business_state(intent, status, tool),
        start: intent.start,
        end,
    }
}

/// What the client can say: a receipt confirms; an attempt unanswered (or still on its way at
/// the horizon) leaves it unknown; refusals before any commit point mean nothing happened.
fn business_state(intent: &Intent, status: Status, tool: &Tool) -> BusinessState {
    if tool.kind == ToolKind::ReadOnly {
        return BusinessState::ReadOnly;
    }
    match status {
        _ if intent.late_receipt => BusinessState::Confirmed,
        // The server holds this intent's key: an earlier attempt committed.
        Status::Stopped(StopReason::IdempotencyConflict) => BusinessState::Confirmed,
        Status::Succeeded => BusinessState::Confirmed,
        Status::Stopped(_) if intent.ambiguous || !intent.awaiting.is_empty() => {
            BusinessState::Unknown
        }
        Status::Stopped(_) => BusinessState::NotAttempted,
    }
}

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> Model for World<'_, S> {
    type Event = Event;

    fn handle(&mut self, event: Event, sched: &mut Scheduler<Event>) {
        match event {
            Event::Arrival => self.on_arrival(sched),
            Event::Dispatch(handle) => {
                // A cancellation during the backoff has ended the intent already.
                if self.intents.find(handle).is_some_and(|i| i.ended.is_none()) {
                    self.dispatch(handle.slot, sched);
                }
            }
            Event::ServerArrive(at) => self.on_server_arrive(at, sched),
            Event::ServerDone(at) => self.on_server_done(at, sched),
            Event::Reply { at, reply } => self.on_reply(at, reply, sched),
            Event::Timeout(at) => self.on_timeout(at, sched),
            Event::Cancel(handle) => self.on_cancel(handle, sched),
            Event::Lookup { intent, class } => self.on_lookup(intent, class, sched),
            Event::Hedge(at) => self.on_hedge(at, sched),
        }
    }
}
