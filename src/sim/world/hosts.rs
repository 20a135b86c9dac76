//! Each tool's servers, one per replica, and the balancer's views of them.

use super::AttemptRef;
use crate::experiment::Experiment;
use crate::model::server::Server;
use crate::policy::balance::View;
use crate::policy::{GateScope, Policy};

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
            .map(|t| match (t.replica_count(), policy.scope) {
                (1, _) => Vec::new(),
                (n, GateScope::Tool) => vec![View::new(n)],
                (n, GateScope::Caller) => vec![View::new(n); exp.workload.callers as usize],
            })
            .collect();
        Hosts { servers, views }
    }
}
