//! The server's side of an attempt, as events: the world hands each attempt to its tool's
//! [`Server`](crate::model::server::Server) when it arrives, when a worker takes it up and when
//! the work is done, and carries out what the server says.

use super::{AttemptRef, Event, Reply, World};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, Count, IntentRecord, Level};
use crate::model::Fate;
use crate::model::outage::OutageMode;
use crate::model::server::Server;
use crate::model::server::{Arrival, Request, TakeUp, Write};
use crate::model::{Key, Tool};
use crate::policy::{KeyScope, Policy};
use crate::sim::intent::Intent;
use crate::time::Tick;

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// A worker takes the attempt up, and the server says what becomes of it (see
    /// [`Server::take_up`]); a dropped one frees the worker for the next in line.
    pub(super) fn serve(&mut self, mut at: AttemptRef, sched: &mut Scheduler<Event>) {
        loop {
            let now = sched.now();
            let intent = self.intents.get(at.intent.slot);
            let t = intent.tool;
            let tool = &self.tools[t];
            // The request carries its deadline where the client keeps to one; a call that
            // cannot be interrupted carries none, and is never dropped or abandoned.
            let carried = tool
                .cooperative
                .then(|| intent.expires(at.attempt))
                .flatten();
            let draw = intent.draw(at.attempt);
            let r = usize::from(draw.replica);
            let server = &mut self.hosts.servers[t][r];
            if let TakeUp::Work {
                service,
                abandon_at,
            } = server.take_up(&tool.server, now, carried, draw.service)
            {
                if self.is_service(t) {
                    return self.begin_work(at, t, service, abandon_at, sched);
                }
                match abandon_at {
                    Some(d) if d < now.after(service) => {
                        sched.schedule_at(d.max(now), Event::Abandon { at, work: None });
                    }
                    _ => sched.schedule_in(service, Event::ServerDone(at)),
                }
                return;
            }
            off_server(server, tool, intent, (at.attempt, 0));
            // A dropped write lets go of the record it held.
            server.release((intent.id, at.attempt));
            if intent.is_over() {
                self.close(at.intent.slot);
            }
            match self.hosts.servers[t][r].finish() {
                Some(next) => at = next,
                None => return,
            }
        }
    }

    /// The request reaches the tool's door; what the server does with it, carried out.
    pub(super) fn on_server_arrive(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let now = sched.now();
        let intent = self.intents.get(at.intent.slot);
        let t = intent.tool;
        let spec = &self.tools[t].server;
        let write = spec.versioned().then(|| Write {
            holder: (intent.id, at.attempt),
            read: intent.read_version(at.attempt),
        });
        let draw = intent.draw(at.attempt);
        let r = usize::from(draw.replica);
        let input = intent.sent(at.attempt).input;
        let arrival = self.hosts.servers[t][r].arrive(spec, now, (intent.caller, input), write, at);
        if spec.token_limit.is_some() && !matches!(arrival, Arrival::Throttled(_)) {
            intent.reserve(at.attempt);
        }
        if write.is_some() && !matches!(arrival, Arrival::Throttled(_) | Arrival::Down(_)) {
            // A write that passed the limiter and the outage reached the record: work done.
            intent.wrote();
        }
        match arrival {
            Arrival::Throttled(refusal) => {
                // A 429 at once, no work done, and when to come back: the header the client
                // reads, which is all it keeps of the answer.
                let from = self.hops.policies[usize::from(intent.edge)]
                    .rule
                    .pushback
                    .from;
                let wait = from.read(&refusal, spec.retry_after_ms);
                intent.throttle(at.attempt, wait);
                self.answer(at, sched);
            }
            Arrival::Down(mode) => {
                intent.server.calls_while_down += 1;
                self.totals.count_replica((t, r), now, Count::CallWhileDown);
                self.totals.replica(t, r).calls_while_down += 1;
                match mode {
                    // Refused at the door: no worker, no line.
                    OutageMode::FailFast => {
                        intent.fail_fast(at.attempt);
                        self.answer(at, sched);
                    }
                    OutageMode::Hang => {
                        let tool = &self.tools[t];
                        off_server(&mut self.hosts.servers[t][r], tool, intent, (at.attempt, 0));
                        if intent.is_over() {
                            self.close(at.intent.slot);
                        }
                    }
                }
            }
            Arrival::VersionMoved => {
                intent.version_conflict(at.attempt);
                self.answer(at, sched);
            }
            Arrival::Served(at) => self.serve(at, sched),
            Arrival::Waiting => {}
            // The line is full: a 503 at once, no work done.
            Arrival::Full(at) => {
                intent.overload(at.attempt);
                self.answer(at, sched);
            }
        }
    }

    /// A capacity window of `tool` opens or closes: on every replica, any workers the change
    /// frees take up the line.
    pub(super) fn on_capacity(&mut self, tool: usize, sched: &mut Scheduler<Event>) {
        let spec = &self.tools[tool].server;
        let freed: Vec<AttemptRef> = (self.hosts.servers[tool].iter_mut())
            .flat_map(|server| server.capacity_changed(spec, sched.now()))
            .collect();
        for at in freed {
            self.serve(at, sched);
        }
    }

    /// A worker has finished an attempt: it answers, and takes up the next in line.
    pub(super) fn on_server_done(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        self.count_orphaned(at);
        self.free_worker(at, sched);
    }

    /// The deadline of attempt `at` has come at a server that abandons work then: it stops,
    /// commits nothing and answers with a 5xx no one listens for, and its worker takes up the
    /// next in line. A service's work (`work`) that ended before its deadline is gone already.
    pub(super) fn on_abandon(
        &mut self,
        at: AttemptRef,
        work: Option<u32>,
        sched: &mut Scheduler<Event>,
    ) {
        if let Some(w) = work
            && !self.abandon_work(w, at)
        {
            return;
        }
        self.intents.get(at.intent.slot).fail_fast(at.attempt);
        self.free_worker(at, sched);
    }

    /// Attempt `at`'s worker is free: it answers, and takes up the next in line.
    fn free_worker(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        let (tool, r) = (intent.tool, usize::from(intent.draw(at.attempt).replica));
        self.answer(at, sched);
        if let Some(next) = self.hosts.servers[tool][r].finish() {
            self.serve(next, sched);
        }
    }

    /// Counts attempt `at`, whose work is done, as orphaned where no one waits for it any more:
    /// its own client stopped waiting for it, or some caller above no longer waits for the
    /// work it serves. Work cut short at its deadline, or never taken up, is not counted.
    pub(super) fn count_orphaned(&mut self, at: AttemptRef) {
        if !self.hops.kept {
            return;
        }
        let intent = self.intents.get(at.intent.slot);
        let (waited, hop) = (intent.awaiting().contains(at.attempt), intent.hop());
        if !waited || hop.work.is_some_and(|w| self.orphaned(w)) {
            self.totals.orphan(usize::from(hop.edge));
        }
    }

    /// The server commits or fails the attempt and sends its reply, if anyone listens.
    pub(super) fn answer(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        if let Some((delay, reply)) = self.respond(at, sched.now()) {
            sched.schedule_in(delay, Event::Reply { at, reply });
        }
        self.close_if_over(at.intent.slot);
    }

    /// The server's answer to attempt `at`, given when it is sent because nothing can come
    /// between (see [`World::folds`]): as [`World::answer`] gives it at `done`, the end of its
    /// service, its reply taking the turn among ties that that step would have given it.
    pub(super) fn answer_at_send(
        &mut self,
        at: AttemptRef,
        done: Tick,
        sched: &mut Scheduler<Event>,
    ) {
        let placed = sched.place(done);
        if let Some((delay, reply)) = self.respond(at, done) {
            sched.schedule_placed(done.after(delay), placed, Event::Reply { at, reply });
        }
    }

    /// The server commits or fails attempt `at` at `now`, and bills it: the reply and how long
    /// it takes to reach the client, if anyone listens.
    fn respond(&mut self, at: AttemptRef, now: Tick) -> Option<(Tick, Reply)> {
        let slot = at.intent.slot;
        let intent = self.intents.get(slot);
        let t = intent.tool;
        let tool = &self.tools[t];
        let mut draw = intent.draw(at.attempt);
        let server = &mut self.hosts.servers[t][usize::from(draw.replica)];
        // What it generated of its `max_tokens`: the rest goes back to the bucket.
        let generated = if draw.fate.did_work() { draw.output } else { 0 };
        off_server(server, tool, intent, (at.attempt, generated));
        // A write under a stale lease token is refused before it can commit.
        if tool.server.fencing && tool.server.writes() && intent.fenced(at.attempt) {
            intent.fence_off(at.attempt);
            draw = intent.draw(at.attempt);
        }
        let policy = self.hops.policies[usize::from(intent.edge)];
        let request = Request {
            key: request_key(policy, intent, at.attempt),
            payload: intent.payload_of(at.attempt),
            write: tool.server.versioned().then(|| Write {
                holder: (intent.id, at.attempt),
                read: intent.read_version(at.attempt),
            }),
        };
        // A forwarded key's record is shared by every intent that carries it.
        let keys = match (policy.rule.key, request.key) {
            (KeyScope::Forward, Some(key)) => {
                let hop = intent.hop();
                self.hops.trees.store(hop.tree, t, hop.site, key)
            }
            _ => &mut intent.server.keys,
        };
        let answer = server.answer(&tool.server, now, draw.fate, request, keys);
        if answer.committed {
            let first = intent.server.effects == 0;
            intent.commit(at.attempt);
            if self.hops.kept {
                let hop = intent.hop();
                if self.hops.trees.commit(hop.tree, hop.edge, hop.site, first) {
                    self.totals.edge_duplicate(usize::from(hop.edge));
                }
            }
        }
        let reply = match answer.reply {
            Ok(()) => Reply::Ok,
            Err(class) => Reply::Failed(class),
        };
        // Nobody listens for the reply of an abandoned attempt, and silence sends none.
        let heard = intent.awaiting().contains(at.attempt) && !tool.silent(draw.fate);
        if tool.bills() {
            let resumes = draw.fate == Fate::StreamBroken && policy.rule.resume;
            if heard && resumes {
                intent.received(u64::from(draw.output));
            }
            intent.bill_attempt(tool, at.attempt, heard && (reply == Reply::Ok || resumes));
        }
        heard.then_some((draw.reply, reply))
    }

    /// Closes the intent in `slot` if it is over: ended, and no attempt of it at a server.
    fn close_if_over(&mut self, slot: u32) {
        if self.intents.get(slot).is_over() {
            self.close(slot);
        }
    }
}

/// Attempt `attempt` of `intent` is on its way to its tool's server: counted on the intent
/// (which stays live until none is) and in the tool's calls in flight.
pub(super) fn to_server(server: &mut Server<AttemptRef>, intent: &mut Intent, attempt: u32) {
    intent.at_server(attempt, true);
    server.sent();
}

/// Attempt `attempt` of `intent` is done at `tool`'s server, having generated `generated`
/// tokens: answered, dropped, swallowed by an outage, or never sent on after its read. The
/// server settles a reservation it holds (see [`Server::left`]).
pub(super) fn off_server(
    server: &mut Server<AttemptRef>,
    tool: &Tool,
    intent: &mut Intent,
    (attempt, generated): (u32, u32),
) {
    intent.at_server(attempt, false);
    let reserved = intent.sent(attempt).reserved;
    server.left(&tool.server, intent.caller, reserved.then_some(generated));
    if reserved {
        intent.settled(attempt);
    }
}

/// The key attempt `attempt` of `intent`, over an edge with `policy`, carries: its own, as the
/// policy's scope makes it for the worker that sent it, or the one it forwards.
pub(super) fn request_key(policy: &Policy, intent: &Intent, attempt: u32) -> Option<Key> {
    match policy.rule.key {
        KeyScope::Forward => intent.hop().key,
        _ => policy.own_key(intent.id, attempt, intent.worker_of(attempt)),
    }
}

impl<S> World<'_, S> {
    /// Sets the levels in the time series as they stand after an event: every tool's server,
    /// and the breakers and budgets the event touched.
    pub(super) fn watch_levels(&mut self, now: Tick) {
        let Some(series) = &mut self.totals.series else {
            return;
        };
        let levels = |(in_flight, waiting, busy): (u32, usize, u32)| {
            [
                (Level::InFlight, f64::from(in_flight)),
                (Level::QueueLength, waiting as f64),
                (Level::BusyWorkers, f64::from(busy)),
            ]
        };
        for tool in 0..self.tools.len() {
            let replicas = self.hosts.servers[tool].iter().map(Server::levels);
            let summed = (replicas.clone()).fold((0, 0, 0), |(f, w, b), (f1, w1, b1)| {
                (f + f1, w + w1, b + b1)
            });
            for (level, value) in levels(summed) {
                series.level(tool, now, level, value);
            }
            for (r, server) in replicas.enumerate() {
                for (level, value) in levels(server) {
                    series.replica_level((tool, r), now, level, value);
                }
            }
        }
        let shares = self.gates.per_tool();
        for (tool, index) in self.gates.touched() {
            let tokens = self.gates.tokens(tool, index).unwrap_or(0.0);
            series.share(tool, (index, shares), now, tokens);
            series.breaker(
                tool,
                (index, shares),
                now,
                self.gates.open_until(tool, index),
            );
        }
    }
}
