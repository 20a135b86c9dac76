//! An intent that is over: recorded, its record handed to the sink, its slot freed.

use super::World;
use crate::metrics::{
    AttemptRecord, BusinessState, IntentRecord, Outcome, Status, StopReason, reservation,
};
use crate::model::{FailureClass, Tool};
use crate::sim::intent::Intent;
use crate::sim::tree::Outcomes;

impl<S: FnMut(&IntentRecord, &[AttemptRecord])> World<'_, S> {
    /// Records an intent that is over and frees its slot. A task's call that fell back is
    /// counted once, when its tree is done, as the chain of its intents made one.
    pub(super) fn close(&mut self, slot: u32) {
        let intent = self.intents.get(slot);
        let outcomes = intent.outcomes();
        let record = record_of(intent, &self.tools[intent.tool], &outcomes);
        let hop = intent.hop();
        let chained = hop.tier > 0 || hop.fell_back;
        if hop.work.is_none() && !chained {
            self.totals.add(&record, &outcomes);
            // Where the money reserved for a task's call went, at a tool that reserves.
            let amount = self.tools[record.tool].reserve;
            if amount > 0 {
                let release = self.hops.policies[record.edge].agent.release;
                let ending = (record.status, record.business_state, record.effects);
                let settled = reservation::settle(amount, ending, release);
                (self.totals.reservations).add(amount, record.effects, settled);
            }
        }
        // The traces tell every intent, a service's calls under the task's call they serve.
        if let Some(sink) = &mut self.sink {
            sink(&record, intent.log());
        }
        self.intents.remove(slot);
        if !self.hops.kept {
            return;
        }
        self.totals
            .add_edge(usize::from(hop.edge), &record, &outcomes);
        if hop.work.is_none() && chained {
            self.hops.trees.chain(hop.tree, hop.tier, record, outcomes);
        }
        if let Some(chain) = self.hops.trees.leave(hop.tree)
            && !chain.is_empty()
        {
            self.totals.add_call(&chain);
        }
    }
}

/// The record of an intent the client is done with.
fn record_of(intent: &Intent, tool: &Tool, outcomes: &Outcomes) -> IntentRecord {
    let (status, end) = intent
        .client
        .ended
        .expect("recorded once the client is done");
    let (reads, writes) = intent.reads_and_writes();
    let (crashes, takeovers) = intent.crashes();
    let (_, zombie_sends, fenced) = intent.zombies();
    let (lapses, held_afresh, dead_lettered) = intent.lapses();
    IntentRecord {
        // Every intent goes by the number of the task's call it serves: the call itself, its
        // fallbacks, and the calls its services made.
        intent: intent.hop().origin,
        tool: intent.tool,
        edge: usize::from(intent.edge),
        attempts: intent.attempts(),
        effects: intent.server.effects,
        timeouts: intent.client.timeouts,
        backoff: intent.client.backoff,
        short_circuited: intent.client.short_circuited,
        lookups: intent.client.lookups,
        hedges: intent.client.hedges,
        calls_while_down: intent.server.calls_while_down,
        reads,
        writes,
        conflicts: outcomes[Outcome::Refused(FailureClass::VersionConflict).index()],
        status,
        business_state: business_state(intent, status, tool),
        start: intent.start,
        end,
        bill: intent.bill(),
        crashes,
        takeovers,
        takeover_duplicates: intent.takeover_duplicates(),
        redone: intent.redone(),
        zombie_sends,
        fenced,
        lapses,
        held_afresh,
        dead_lettered,
        first_crash: intent.first_crash(),
    }
}

/// What the client can say: a receipt confirms; an attempt unanswered (or still on its way at
/// the horizon) leaves it unknown; refusals before any commit point mean nothing happened.
fn business_state(intent: &Intent, status: Status, tool: &Tool) -> BusinessState {
    if tool.server.reads_only() {
        return BusinessState::ReadOnly;
    }
    match status {
        _ if intent.client.late_receipt => BusinessState::Confirmed,
        // The server holds this intent's key: an earlier attempt committed.
        Status::Stopped(StopReason::IdempotencyConflict) => BusinessState::Confirmed,
        Status::Succeeded => BusinessState::Confirmed,
        Status::Stopped(_) if intent.client.ambiguous || !intent.awaiting().is_empty() => {
            BusinessState::Unknown
        }
        Status::Stopped(_) => BusinessState::NotAttempted,
    }
}
