//! Helpers shared by the integration tests.

use retrysim::Experiment;
use retrysim::metrics::IntentRecord;
use retrysim::sim::{self, Job};

/// Every intent record of replication 0 of `policy`, in intent order.
pub fn records(exp: &Experiment, policy: usize) -> Vec<IntentRecord> {
    let mut out = Vec::new();
    let job = Job {
        point: 0,
        policy,
        replication: 0,
    };
    sim::run(exp, job, |r| out.push(*r));
    out.sort_by_key(|r| r.intent);
    out
}
