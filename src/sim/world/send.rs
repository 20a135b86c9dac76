//! Sending an attempt: the gates a dispatch must pass (deadline, admission, breaker), the
//! attempt's timers, and the hedge that may follow it.

use super::{AttemptRef, Event, MoveOn, Reply, World, to_server};
use crate::engine::Scheduler;
use crate::engine::rng::Source;
use crate::metrics::{AttemptRecord, Count, IntentRecord, Status, StopReason};
use crate::model::{AttemptDraw, Fate, LossSignal};
use crate::model::{Choice, FailureClass};
use crate::policy::gate::{Ask, Gate, Moment, Refusal};
use crate::policy::hedge;
use crate::policy::{Balancer, GateScope, Scope};
use crate::sim::slab::Handle;
use crate::time::Tick;

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Sends the intent's next attempt, unless its deadline has come: a backoff that ran into
    /// the deadline ends here.
    /// A call refused at once ends here, and what the client does next is returned for the
    /// caller to carry out (see `World::move_on`).
    #[must_use]
    pub(super) fn dispatch(&mut self, slot: u32, sched: &mut Scheduler<Event>) -> Option<MoveOn> {
        let now = sched.now();
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        // The broken control: an outer layer's new attempt enters the layers below, and each
        // replaces the deadline and the cap.
        if policy.rule.resets_each_layer() && intent.retry.next_layer + 1 < policy.rule.depth() {
            intent.retry.scope = Scope {
                start: now,
                first: intent.attempts(),
            };
        }
        let first = intent.attempts() == 0;
        // A crash point, in a run through a schedule: the worker may die before the send, or
        // just after it.
        let crash = self.crash_point(slot, now);
        if crash == Some(Choice::CrashBeforeSend) {
            self.crash(self.intents.handle(slot), sched);
            return None;
        }
        let ask = self.ask(slot, now, Moment::Send { first });
        let next = match self.gates.admit(&ask) {
            Ok(pass) if pass.waits_for_token => {
                self.wait_for_a_token(slot, sched);
                None
            }
            Ok(_) => {
                self.send(slot, true, sched);
                None
            }
            Err(refusal) if refusal.waits => {
                self.wait_in_line(slot, sched);
                None
            }
            Err(refusal) => {
                self.short_circuit(slot, refusal, now);
                let stop = Status::Stopped(refusal.reason);
                return Some(self.end_intent_only(slot, stop, sched));
            }
        };
        if crash == Some(Choice::CrashInFlight) {
            self.crash(self.intents.handle(slot), sched);
        }
        next
    }

    /// Sends an attempt that every gate has let through: a primary, which may be hedged, or a
    /// hedge.
    pub(super) fn send(&mut self, slot: u32, primary: bool, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let handle = self.intents.handle(slot);
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        let start = intent.retry.scope.start;
        let limits = &intent.limits(policy.time.limits, start);
        // The trace records what the client granted; a non-cooperative call cannot be
        // abandoned, so no timer is set for it.
        let granted = limits.grant(policy.time.waits[intent.tool].timeout, start, now);
        self.admit_within_lease(slot, granted, now, sched);
        let tool = &self.tools[self.intents.get(slot).tool];
        let wait = tool.timer(granted);
        let replica = self.balance(slot, now);
        let intent = self.intents.get(slot);
        // A call carrying its caller's deadline never starts an attempt after it: the gates
        // refuse one with no time left.
        assert!(
            intent.hop().deadline.is_none_or(|d| now <= d),
            "an attempt sent at {now} past its carried deadline"
        );
        let (attempt, draw) = intent.draw_attempt(
            &self.streams,
            ((intent.tool, tool), replica),
            (now, granted),
            policy.rule.resume,
            &mut self.fates,
        );
        if self.sink.is_none() {
            intent.fold_finished();
        }
        let count = if attempt == 0 {
            Count::FirstTry
        } else {
            Count::Retry
        };
        self.totals
            .count_replica((intent.tool, replica), now, count);
        let t = intent.tool;
        let at = AttemptRef {
            intent: handle,
            attempt,
        };
        let done = self.service_end(at, (draw, replica), now);
        // Whether nothing can fire before the client hears of the attempt: no timer, or a sure
        // reply before it (the timer would then find the attempt answered, and is never set).
        let first = match (self.heard_at(t, draw, (now, done)), wait) {
            (_, None) => true,
            (Some(heard), Some(wait)) => heard.since(now) < wait,
            (None, Some(_)) => false,
        };
        let folds = done.is_some() && first && self.folds(at);
        // Set first, so a reply due at the same tick comes after it: completing exactly at the
        // timeout is late.
        if let Some(wait) = wait.filter(|_| !first) {
            sched.schedule_in(wait, Event::Timeout(at));
        }
        let next = hedge::sets_next(policy, primary);
        if let Some(delay) = policy.time.waits[t].hedge.filter(|_| next) {
            sched.schedule_in(delay, Event::Hedge(at));
        }
        self.deliver(at, (draw, replica), (done, folds), sched);
    }

    /// When the client surely hears of an attempt at tool `t`, drawn as `draw`, sent at `now`
    /// and served by `done` where that is known: a reset or a failed connection as they come
    /// back, a reply at the end of the reply leg; `None` where it may hear nothing, or when is
    /// not known at the send.
    fn heard_at(
        &self,
        t: usize,
        draw: AttemptDraw,
        (now, done): (Tick, Option<Tick>),
    ) -> Option<Tick> {
        match draw.fate {
            _ if self.tools[t].silent(draw.fate) => None,
            Fate::LostRequest => Some(now.after(draw.round_trip())),
            Fate::ConnectFailed => Some(now.after(draw.request)),
            _ => done.map(|d| d.after(draw.reply)),
        }
    }

    /// When attempt `at`, drawn as `draw` and sent to `replica` at `now`, has been served, where
    /// that is known at its send: at a server that serves at once, or whose line foresees it
    /// (the line then counts it in). `None` for one that never reaches the server, reads a
    /// record first, or waits at a door where anything may happen.
    fn service_end(
        &mut self,
        at: AttemptRef,
        (draw, replica): (AttemptDraw, usize),
        now: Tick,
    ) -> Option<Tick> {
        let t = self.intents.peek(at.intent.slot).tool;
        let sent = !matches!(draw.fate, Fate::LostRequest | Fate::ConnectFailed);
        if !sent || self.tools[t].server.versioned() {
            return None;
        }
        let arrives = now.after(draw.request);
        let server = &mut self.hosts.servers[t][replica];
        if server.serves_at_once() {
            return Some(arrives.after(draw.service));
        }
        server
            .foresight()
            .map(|line| line.done(arrives, draw.service))
    }

    /// Whether attempt `at`, whose service's end is known at its send (see
    /// [`World::service_end`]) and whose reply comes before any timer, can be answered when it
    /// is sent, so that its one event is the reply: nothing else can happen to its intent
    /// before the reply — no hedge, no cancellation, no call graph whose other calls share its
    /// state, no worker that may crash (a replacement's or a zombie's attempt may reach the
    /// server first, and the order of commits is what keys and fencing read). The answer is
    /// then what the server would give at the end of the service: the server's state it reads
    /// (the intent's keys) is the intent's alone.
    fn folds(&self, at: AttemptRef) -> bool {
        let intent = self.intents.peek(at.intent.slot);
        let t = intent.tool;
        let policy = self.hops.policies[usize::from(intent.edge)];
        !self.hops.kept
            && self.workload.crash.is_none()
            && !self.is_service(t)
            && policy.time.waits[t].hedge.is_none()
            && policy.time.limits.cancel_after.is_none()
    }

    /// Schedules what becomes of attempt `at`, sent to `replica` with its `draw`: a reset or a
    /// failed connection comes back to the client; a lost request, with no signal, never does;
    /// anything else reaches the server — its read first at a versioned record, served at once
    /// or as its line foresees, or queued on arrival.
    fn deliver(
        &mut self,
        at: AttemptRef,
        (draw, replica): (AttemptDraw, usize),
        (done, folds): (Option<Tick>, bool),
        sched: &mut Scheduler<Event>,
    ) {
        let intent = self.intents.get(at.intent.slot);
        let tool = &self.tools[intent.tool];
        match (draw.fate, tool.loss_seen_as) {
            (Fate::LostRequest, LossSignal::Reset) => sched.schedule_in(
                draw.round_trip(),
                Event::Reply {
                    at,
                    reply: Reply::Failed(FailureClass::Reset),
                },
            ),
            (Fate::LostRequest, LossSignal::Silence) => {}
            (Fate::ConnectFailed, _) => sched.schedule_in(
                draw.request,
                Event::Reply {
                    at,
                    reply: Reply::Failed(FailureClass::Connect),
                },
            ),
            _ => {
                let server = &mut self.hosts.servers[intent.tool][replica];
                to_server(server, intent, at.attempt);
                if tool.server.versioned() {
                    return self.send_read(at, sched);
                }
                match done {
                    Some(done) if folds => self.answer_at_send(at, done, sched),
                    Some(done) => sched.schedule_at(done, Event::Served(at)),
                    None => sched.schedule_in(draw.request, Event::ServerArrive(at)),
                }
            }
        }
    }

    /// The attempt is still unanswered after the hedge delay: another goes out, if the hedge
    /// policy has room for it and the gates let it through. A refusal sends no hedge and ends
    /// nothing; a breaker's refusal is counted as a short-circuit.
    pub(super) fn on_hedge(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let Some(intent) = self.intents.awaiting(at.intent, at.attempt) else {
            return;
        };
        let policy = self.hops.policies[usize::from(intent.edge)];
        if !hedge::has_room(policy, &intent.retry.tries) {
            return;
        }
        let ask = self.ask(at.intent.slot, now, Moment::Hedge);
        let intent = self.intents.get(at.intent.slot);
        match self.gates.admit(&ask) {
            Ok(pass) => intent.retry.cost = pass.retry_cost.or(intent.retry.cost),
            Err(refusal) => return self.short_circuit(at.intent.slot, refusal, now),
        }
        let innermost = policy.rule.depth() - 1;
        intent.retry.tries.begin(innermost);
        intent.retry.next_layer = innermost;
        intent.client.hedges += 1;
        self.send(at.intent.slot, false, sched);
    }

    /// What the gates are asked for the intent in `slot` at `now`.
    /// The replica the intent's next attempt goes to at `now`, as the policy's balancer picks
    /// it from its view of the tool (the tool's, or the caller's own) among those the retry's
    /// host rule and outlier ejection leave; the view counts it as sent.
    fn balance(&mut self, slot: u32, now: Tick) -> usize {
        let intent = self.intents.get(slot);
        let views = &mut self.hosts.views[intent.tool];
        if views.is_empty() {
            return 0;
        }
        let view = match self.policy.gates.scope {
            GateScope::Tool | GateScope::Shard => &mut views[0],
            GateScope::Caller => &mut views[intent.caller as usize],
        };
        let policy = self.hops.policies[usize::from(intent.edge)];
        let balancer = policy.hosts.balancer;
        let words = match balancer {
            Balancer::ByKey => [self.streams.word_at(Source::Keys, intent.id, 0), 0],
            b if b.is_random() => {
                let at = 2 * u64::from(intent.attempts());
                let word = |k| self.streams.word_at(Source::Balancer, intent.id, at + k);
                [word(0), word(1)]
            }
            _ => [0, 0],
        };
        let (host, (tried, first)) = (policy.hosts.retry_host, intent.tried());
        let first = first.map(usize::from);
        let replica = view.pick(balancer, now, |r| host.allows(r, tried, first), words);
        view.sent(replica);
        intent.try_replica(replica);
        self.totals.replica(intent.tool, replica).calls += 1;
        replica
    }

    pub(super) fn ask(&mut self, slot: u32, now: Tick, moment: Moment) -> Ask {
        let holder = self.holder(slot);
        let handle = self.intents.handle(slot);
        let intent = self.intents.get(slot);
        let policy = self.hops.policies[usize::from(intent.edge)];
        // A client-side token bucket counts what a send may use: its input and max_tokens.
        let tokens = match policy.gates.send_tokens {
            Some(_) => {
                intent.tokens_to_send(&self.streams, &self.tools[intent.tool], policy.rule.resume)
            }
            None => 0,
        };
        Ask {
            tool: intent.tool,
            holder,
            now,
            scope_start: intent.retry.scope.start,
            dispatches: intent.dispatches_in_scope(),
            fresh_scope: false,
            moment,
            limits: intent.limits(
                self.hops.policies[usize::from(intent.edge)].time.limits,
                intent.retry.scope.start,
            ),
            ticket: ticket(handle),
            tokens,
        }
    }

    /// The call waits in a gate's line, for a concurrency slot or a send-rate token; its
    /// deadline, if it has one, may come first.
    fn wait_in_line(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        let handle = self.intents.handle(slot);
        let intent = self.intents.get(slot);
        let start = intent.retry.scope.start;
        let policy = self.hops.policies[usize::from(intent.edge)];
        if let Some(deadline) = intent.limits(policy.time.limits, start).deadline {
            sched.schedule_at(start.after(deadline), Event::DeadlineInLine(handle));
        }
    }

    /// The send waits for a send-rate token, which is promised a time.
    fn wait_for_a_token(&mut self, slot: u32, sched: &mut Scheduler<Event>) {
        self.wait_in_line(slot, sched);
        let (tool, holder) = (self.intents.get(slot).tool, self.holder(slot));
        self.promise_token(tool, holder, sched);
    }

    /// Sets a wake-up for the send-rate line's head, if its token comes at a new time.
    pub(super) fn promise_token(&mut self, tool: usize, holder: u32, sched: &mut Scheduler<Event>) {
        if let Some(at) = self.gates.token_due(tool, holder, sched.now()) {
            sched.schedule_at(at, Event::Token { tool, holder });
        }
    }

    /// A promised token is made: the sends it lets go out, and the next promise.
    pub(super) fn on_token(&mut self, tool: usize, holder: u32, sched: &mut Scheduler<Event>) {
        let intents = &mut self.intents;
        let live = |t: u64| intents.under_way(handle_of(t));
        for t in self.gates.release_tokens((tool, holder), sched.now(), live) {
            self.send(handle_of(t).slot, true, sched);
        }
        self.promise_token(tool, holder, sched);
    }

    /// The deadline of a call that may still wait in a line: if it does, it stops there.
    pub(super) fn on_deadline_in_line(&mut self, handle: Handle, sched: &mut Scheduler<Event>) {
        let Some(tool) = (self.intents.find(handle))
            .filter(|i| i.client.ended.is_none())
            .map(|i| i.tool)
        else {
            return;
        };
        let holder = self.holder(handle.slot);
        if self.gates.leave_line(tool, holder, ticket(handle)) {
            let stop = Status::Stopped(StopReason::DeadlineExceeded);
            self.end_intent(handle.slot, stop, sched);
        }
    }

    /// Lets the calls waiting for a slot in `holder`'s set of `tool`'s gates go out, first come
    /// first served, while there are free slots; a call whose operation ended meanwhile is
    /// passed over.
    pub(super) fn wake_waiting(&mut self, tool: usize, holder: u32, sched: &mut Scheduler<Event>) {
        while let Some(t) = self.gates.next_waiting(tool, holder) {
            let handle = handle_of(t);
            if self.intents.under_way(handle) {
                let next = self.dispatch(handle.slot, sched);
                self.move_on(next, sched);
            }
        }
    }

    /// Counts a call the breaker refused; other refusals leave no trace here.
    /// Under a keyed balancer the refused call's shard is known, and counts it too.
    pub(super) fn short_circuit(&mut self, slot: u32, refusal: Refusal, now: Tick) {
        if refusal.gate == Gate::Breaker {
            let intent = self.intents.get(slot);
            intent.client.short_circuited += 1;
            let (id, tool, edge) = (intent.id, intent.tool, usize::from(intent.edge));
            self.totals.count(tool, now, Count::ShortCircuited);
            if self.hops.policies[edge].hosts.balancer == Balancer::ByKey
                && self.tools[tool].replica_count() > 1
            {
                let shard = self.shard(id, tool);
                self.totals.replica(tool, shard).short_circuited += 1;
            }
        }
    }
}

/// How an intent is known in a gate's line: its slot and that slot's generation.
fn ticket(handle: Handle) -> u64 {
    u64::from(handle.generation) << 32 | u64::from(handle.slot)
}

/// The intent a ticket stands for.
fn handle_of(ticket: u64) -> Handle {
    Handle {
        slot: ticket as u32,
        generation: (ticket >> 32) as u32,
    }
}
