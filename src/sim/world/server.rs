//! The server's side of an attempt: an outage at the door, the line for a worker, and the
//! commit or refusal it answers with.

use super::{AttemptRef, Event, Reply, World, off_server};
use crate::engine::Scheduler;
use crate::metrics::{AttemptRecord, Count, IntentRecord};
use crate::model::FailureClass;
use crate::model::capacity;
use crate::model::outage::{self, OutageMode};
use crate::model::server::Processed;
use crate::model::station::Door;
use crate::model::{Fate, LimitScope, LossSignal, Record, ToolKind, VersionCheck};
use crate::sim::intent::Intent;
use crate::time::Tick;

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// A worker takes the attempt up: its drawn service time, slowed by the load it finds. A
    /// server that drops expired work discards, without commit, an attempt whose client
    /// stopped waiting before it got a worker, and takes up the next in line instead.
    pub(super) fn serve(&mut self, mut at: AttemptRef, sched: &mut Scheduler<Event>) {
        loop {
            let now = sched.now();
            let intent = self.intents.get(at.intent.slot);
            let tool = &self.tools[intent.tool];
            // A call that cannot be interrupted is still awaited: it is never dropped.
            let dropped = tool.drop_expired
                && tool.cooperative
                && intent.expires(at.attempt).is_some_and(|t| t <= now);
            if !dropped {
                let others = u64::from(self.stations[intent.tool].in_service() - 1);
                let slowdown = Tick(tool.slowdown.0.saturating_mul(others));
                let service = intent.draw(at.attempt).service.after(slowdown);
                sched.schedule_in(service, Event::ServerDone(at));
                return;
            }
            let t = intent.tool;
            off_server(&mut self.in_flight, intent, at.attempt);
            // A dropped write lets go of the record it held.
            self.records[t].unlock((intent.id, at.attempt));
            if intent.is_over() {
                self.close(at.intent.slot);
            }
            match self.stations[t].finish() {
                Some(next) => at = next,
                None => return,
            }
        }
    }

    /// The request reaches the tool: its rate limiter first (a gateway in front of the server),
    /// then an outage, then the line for a worker.
    pub(super) fn on_server_arrive(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        let tool = intent.tool;
        if let Some(limit) = &self.tools[tool].rate_limit {
            let now = sched.now();
            let windows = &self.tools[tool].capacity;
            let buckets = &mut self.buckets[tool];
            let bucket = match limit.scope {
                LimitScope::Tool => &mut buckets[0],
                LimitScope::Caller => &mut buckets[intent.caller as usize],
            };
            let refused = match capacity::rate_limit(limit, capacity::fraction_at(windows, now)) {
                Some(limit) => bucket.take(&limit, now).err(),
                // No token comes before the window ends: come back then.
                None => {
                    let until = capacity::window_at(windows, now).map_or(now, |w| w.until);
                    Some(limit.retry_after(until.since(now)))
                }
            };
            if let Some(wait) = refused {
                // A 429 at once, no work done, and when to come back.
                intent.throttle(at.attempt, wait);
                return self.answer(at, sched);
            }
        }
        let down = outage::down_at(&self.tools[tool].outages, sched.now());
        if down.is_some() {
            intent.server.calls_while_down += 1;
            self.totals.count(tool, sched.now(), Count::CallWhileDown);
        }
        match down {
            // Refused at the door: no worker, no line.
            Some(OutageMode::FailFast) => {
                intent.fail_fast(at.attempt);
                self.answer(at, sched);
            }
            Some(OutageMode::Hang) => {
                off_server(&mut self.in_flight, intent, at.attempt);
                if intent.is_over() {
                    self.close(at.intent.slot);
                }
            }
            None => {
                if self.tools[tool].kind == ToolKind::Record {
                    let check = self.tools[tool].version_check;
                    if write_arrives(intent, &mut self.records[tool], check, at.attempt) {
                        // Refused at the door: the version moved, or the record is locked.
                        return self.answer(at, sched);
                    }
                }
                match self.stations[tool].arrive(at) {
                    Door::Served(at) => self.serve(at, sched),
                    Door::Waiting => {}
                    // The line is full: a 503 at once, no work done.
                    Door::Refused(at) => {
                        intent.overload(at.attempt);
                        self.answer(at, sched);
                    }
                }
            }
        }
    }

    /// A capacity window of `tool` opens or closes: its workers become the share the window
    /// leaves (all of them outside one), and any the change frees take up the line.
    pub(super) fn on_capacity(&mut self, tool: usize, sched: &mut Scheduler<Event>) {
        let t = &self.tools[tool];
        let Some(all) = t.workers else {
            return;
        };
        let fraction = capacity::fraction_at(&t.capacity, sched.now());
        for at in self.stations[tool].set_workers(capacity::workers(all, fraction)) {
            self.serve(at, sched);
        }
    }

    /// A worker has finished an attempt: it answers, and takes up the next in line.
    pub(super) fn on_server_done(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let tool = self.intents.get(at.intent.slot).tool;
        self.answer(at, sched);
        if let Some(next) = self.stations[tool].finish() {
            self.serve(next, sched);
        }
    }

    /// The server commits or fails the attempt and sends its reply, if anyone listens.
    pub(super) fn answer(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let slot = at.intent.slot;
        let intent = self.intents.get(slot);
        let tool = intent.tool;
        let draw = intent.draw(at.attempt);
        off_server(&mut self.in_flight, intent, at.attempt);
        // Whatever its answer, a write holding a record's lock lets go of it now.
        self.records[tool].unlock((intent.id, at.attempt));
        let reply = match draw.fate {
            Fate::ServerError => Reply::Failed(FailureClass::ServerError),
            Fate::Throttled => Reply::Failed(FailureClass::Throttled),
            Fate::Overloaded => Reply::Failed(FailureClass::Overloaded),
            Fate::VersionConflict => Reply::Failed(FailureClass::VersionConflict),
            Fate::Forbidden => Reply::Failed(FailureClass::Forbidden),
            Fate::Invalid => Reply::Failed(FailureClass::Invalid),
            Fate::LostRequest | Fate::ConnectFailed => {
                unreachable!("a request that never left never reaches the server")
            }
            Fate::LostReply | Fate::Delivered => {
                let tool = &self.tools[tool];
                // A receiver that does not honour keys commits whatever key comes.
                let key = if tool.idempotent {
                    self.policy.key.key(intent.id, at.attempt)
                } else {
                    None
                };
                let payload = intent.payload_of(at.attempt);
                // A read-only call commits nothing; a record's write commits as its version
                // check says, on arrival (already done) or now.
                let processed = match tool.kind {
                    ToolKind::Write => Some(intent.server.keys.process(
                        key,
                        payload,
                        sched.now(),
                        tool.key_retention,
                    )),
                    ToolKind::ReadOnly => None,
                    ToolKind::Record => {
                        let record = &mut self.records[intent.tool];
                        let committed = tool.version_check == VersionCheck::Arrival
                            || record.write(intent.read_version(at.attempt));
                        Some(if committed {
                            Processed::Committed
                        } else {
                            Processed::VersionConflict
                        })
                    }
                };
                if processed == Some(Processed::Committed) {
                    intent.commit(at.attempt);
                }
                match (draw.fate, processed) {
                    (Fate::LostReply, _) => Reply::Failed(FailureClass::Reset),
                    (_, Some(Processed::VersionConflict)) => {
                        Reply::Failed(FailureClass::VersionConflict)
                    }
                    (_, Some(Processed::Conflict)) => Reply::Failed(FailureClass::Conflict),
                    _ => Reply::Ok,
                }
            }
        };
        // Nobody listens for the reply of an abandoned attempt, and silence sends none.
        let heard = intent.awaiting().contains(at.attempt)
            && !(draw.fate == Fate::LostReply
                && self.tools[tool].loss_seen_as == LossSignal::Silence);
        if heard {
            sched.schedule_in(draw.reply, Event::Reply { at, reply });
        }
        if intent.is_over() {
            self.close(slot);
        }
    }
}

/// A write on a versioned record reaches it: counted as work; where the version is checked on
/// arrival, the check and the version's move are one and happen now; under a lock, the lock is
/// taken if free. Whether it was refused at the door.
fn write_arrives(
    intent: &mut Intent,
    record: &mut Record,
    check: VersionCheck,
    attempt: u32,
) -> bool {
    intent.server.writes += 1;
    let refused = match check {
        VersionCheck::Arrival => !record.write(intent.read_version(attempt)),
        VersionCheck::Commit => false,
        VersionCheck::Lock => !record.lock((intent.id, attempt)),
    };
    if refused {
        intent.version_conflict(attempt);
    }
    refused
}
