//! A versioned record's read: the first half of a read-modify-write attempt. The read takes a
//! network leg each way, drawn from the intent's read stream; at the record it learns the
//! version, and back at the client it sends the write conditional on it. A client that stopped
//! waiting in between (a timeout, a cancellation) sends no write.

use super::{AttemptRef, Event, World, off_server};
use crate::engine::Scheduler;
use crate::engine::rng::Source;
use crate::metrics::{AttemptRecord, IntentRecord};

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Sends attempt `at`'s read: it reaches the record after a request leg.
    pub(super) fn send_read(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        let tool = &self.tools[intent.tool];
        let word = self
            .streams
            .word_at(Source::Reads, intent.id, 2 * u64::from(at.attempt));
        sched.schedule_in(tool.request_latency.sample(word), Event::ReadArrive(at));
    }

    /// The read reaches the record: it learns the version, and its answer goes back.
    pub(super) fn on_read_arrive(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        let tool = intent.tool;
        let r = usize::from(intent.draw(at.attempt).replica);
        intent.read(at.attempt, self.hosts.servers[tool][r].version());
        let word = self
            .streams
            .word_at(Source::Reads, intent.id, 2 * u64::from(at.attempt) + 1);
        let leg = self.tools[tool].reply_latency.sample(word);
        sched.schedule_in(leg, Event::ReadBack(at));
    }

    /// The version reaches the client: the conditional write goes out, if it still waits.
    pub(super) fn on_read_back(&mut self, at: AttemptRef, sched: &mut Scheduler<Event>) {
        let intent = self.intents.get(at.intent.slot);
        if intent.awaiting().contains(at.attempt) {
            let leg = intent.draw(at.attempt).request;
            sched.schedule_in(leg, Event::ServerArrive(at));
            return;
        }
        let (tool, r) = (intent.tool, usize::from(intent.draw(at.attempt).replica));
        let server = &mut self.hosts.servers[tool][r];
        off_server(server, &self.tools[tool], intent, (at.attempt, 0));
        if intent.is_over() {
            self.close(at.intent.slot);
        }
    }
}
