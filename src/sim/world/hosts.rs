//! Each tool's servers, one per replica, and the balancer's views of them.

use super::{AttemptRef, World};
use crate::engine::rng::Source;
use crate::experiment::Experiment;
use crate::metrics::Outcome;
use crate::model::server::Server;
use crate::policy::balance::{View, shard_of};
use crate::policy::{GateScope, Policy};
use crate::time::Tick;

/// Each tool's servers, one per replica, and where it has replicas, the balancer's views of
/// them: one, or one per caller.
pub(super) struct Hosts {
    pub(super) servers: Vec<Vec<Server<AttemptRef>>>,
    pub(super) views: Vec<Vec<View>>,
}

impl Hosts {
    pub(super) fn new(exp: &Experiment, policy: &Policy) -> Self {
        let servers = (exp.tools.iter())
            .enumerate()
            .map(|(i, t)| {
                // A service's attempt waits for its calls: never served at once.
                let watched = exp.output.timeseries.is_some() || !exp.graph.stages[i].is_empty();
                let server = Server::new(
                    &t.server,
                    exp.workload.callers,
                    watched,
                    t.arrives_in_order(),
                );
                (0..t.replica_count())
                    .map(|r| server.clone().in_zone(t.zone_of(r)))
                    .collect()
            })
            .collect();
        let views = (exp.tools.iter())
            .map(|t| match (t.replica_count(), policy.gates.scope) {
                (1, _) => Vec::new(),
                (n, GateScope::Tool | GateScope::Shard) => vec![View::new(n)],
                (n, GateScope::Caller) => vec![View::new(n); exp.workload.callers as usize],
            })
            .collect();
        Hosts { servers, views }
    }
}

impl<S> World<'_, S> {
    /// The client saw attempt `attempt` of the intent in `slot` end as `outcome` at `now`: the
    /// intent records it, and the balancer's view of its tool (the tool's, or the caller's)
    /// counts it in flight no more and, where `failed` says how outlier detection takes it
    /// (none for an attempt the client stopped waiting on), may eject its replica.
    pub(super) fn settle(
        &mut self,
        slot: u32,
        attempt: u32,
        outcome: Outcome,
        failed: Option<bool>,
        now: Tick,
    ) {
        let intent = self.intents.get(slot);
        intent.settle(attempt, outcome, now);
        let (tool, caller) = (intent.tool, intent.caller);
        let r = usize::from(intent.draw(attempt).replica);
        let views = &mut self.hosts.views[tool];
        let view = match self.policy.gates.scope {
            GateScope::Tool | GateScope::Shard => views.first_mut(),
            GateScope::Caller => views.get_mut(caller as usize),
        };
        // A tool with one server has no view.
        let Some(view) = view else {
            return;
        };
        view.settled(r);
        let policy = self.hops.policies[usize::from(self.intents.get(slot).edge)];
        let sent = self.intents.get(slot).dispatched(attempt);
        view.timed(policy.hosts.balancer, r, Tick(now.0 - sent.0), now);
        if let (Some(failed), Some(rule)) = (failed, &policy.hosts.outlier_detection)
            && view.observe(r, now, failed, rule)
        {
            self.totals.replica(tool, r).ejections += 1;
        }
    }

    /// Whose set of its tool's gates the intent in `slot` asks: its task's caller, or under
    /// scope `shard` its key's shard.
    pub(super) fn holder(&mut self, slot: u32) -> u32 {
        let intent = self.intents.get(slot);
        let (id, tool, caller) = (intent.id, intent.tool, intent.caller);
        match self.policy.gates.scope {
            GateScope::Shard => self.shard(id, tool) as u32,
            GateScope::Tool | GateScope::Caller => caller,
        }
    }

    /// The shard of `tool` that the key of the call `id` belongs to (0 at a tool with one
    /// server): the replica a keyed balancer sends its every attempt to.
    pub(super) fn shard(&self, id: u64, tool: usize) -> usize {
        let key = self.streams.word_at(Source::Keys, id, 0);
        shard_of(key, self.tools[tool].replica_count())
    }
}
