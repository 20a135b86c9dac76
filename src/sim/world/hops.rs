//! The call graph as a run follows it: each edge's policy and cooldown, and the trees of calls
//! under way.

use crate::experiment::Experiment;
use crate::model::Graph;
use crate::policy::{Cooling, Policy};
use crate::sim::tree::Trees;

/// The call graph as a run follows it.
pub(super) struct Hops<'a> {
    /// Who calls whom.
    pub(super) graph: &'a Graph,
    /// Whether the graph is measured (some tool is a service, or some call falls back), so
    /// that calls are counted per edge and each task's call keeps a tree: asked once, not at
    /// every intent's close.
    pub(super) kept: bool,
    /// The trees of the task's calls under way, where the graph is measured.
    pub(super) trees: Trees,
    /// Per edge, where its primary stands with its cooldown.
    pub(super) cooling: Vec<Cooling>,
    /// The policy on each edge of the call graph: the edge's own, or the configuration's.
    pub(super) policies: Vec<&'a Policy>,
    /// Per tool, the policy its gates follow: that of the first edge into it.
    pub(super) at_tool: Vec<&'a Policy>,
}

impl<'a> Hops<'a> {
    pub(super) fn new(exp: &'a Experiment, policy: &'a Policy) -> Self {
        let policies: Vec<&Policy> = (0..exp.graph.edges.len())
            .map(|e| policy.on_edge(e))
            .collect();
        let at_tool = (0..exp.tools.len())
            .map(|t| {
                let into = exp.graph.edges.iter().position(|e| e.callee == t);
                into.map_or(policy, |e| policies[e])
            })
            .collect();
        Hops {
            graph: &exp.graph,
            kept: exp.graph.is_measured(),
            trees: Trees::default(),
            cooling: vec![Cooling::default(); exp.graph.edges.len()],
            policies,
            at_tool,
        }
    }
}
