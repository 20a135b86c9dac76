//! What each task calls, in order or in stages.

use crate::experiment::Experiment;
use crate::policy::Policy;

/// What each task calls: the tools in order (the policy's own list or the workload's), and,
/// where the workload's tasks make calls together or let some fail (and the configuration has
/// no list of its own), its stages: each stage's first place in `calls`, and whether each call
/// is optional.
pub(super) struct Plan<'a> {
    pub(super) calls: &'a [usize],
    pub(super) stages: Option<&'a [Vec<(usize, bool)>]>,
    pub(super) firsts: Vec<usize>,
    pub(super) optional: Vec<bool>,
}

impl<'a> Plan<'a> {
    pub(super) fn new(exp: &'a Experiment, policy: &'a Policy) -> Self {
        Plan {
            calls: policy.agent.calls.as_deref().unwrap_or(&exp.workload.calls),
            stages: (exp.workload.stages.as_deref()).filter(|_| policy.agent.calls.is_none()),
            firsts: (exp.workload.stages.iter().flatten())
                .scan(0, |first, stage| {
                    let at = *first;
                    *first += stage.len();
                    Some(at)
                })
                .collect(),
            optional: (exp.workload.stages.iter().flatten().flatten())
                .map(|c| c.1)
                .collect(),
        }
    }
}
