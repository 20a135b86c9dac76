//! Call graphs. A tool may be a service: to serve an attempt it makes calls of its own, in
//! stages — the calls of a stage go out together, and the next stage starts when the last of
//! them has ended — and its reply waits for them. Each call goes over an edge of the graph, a
//! caller and a callee, and each edge has its client policy. The task's own calls are the top
//! edges, whose caller is the task. A tool with no calls is a plain tool, as before. A call may
//! fall back to other tools once it has failed (see [`crate::policy::Fallback`]): each
//! fallback is an edge too, from the same caller.

use super::Tool;

/// One call a service makes in a stage: over which edge, and whether the attempt may pass its
/// failure (an optional call) instead of failing with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call {
    pub edge: usize,
    pub optional: bool,
}

/// The calls a service makes together.
pub type Stage = Vec<Call>;

/// Who calls whom: the task (no caller) or a service, and the tool it calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub caller: Option<usize>,
    pub callee: usize,
}

impl Edge {
    /// `api->db`, or `task->agent` for a top edge: how configs and `edges.csv` name it.
    pub fn name(&self, tools: &[Tool]) -> String {
        format!("{}->{}", self.caller_name(tools), tools[self.callee].name)
    }

    pub fn caller_name<'a>(&self, tools: &'a [Tool]) -> &'a str {
        self.caller.map_or("task", |c| tools[c].name.as_str())
    }
}

/// The graph of an experiment: every edge, the top edges first in the order the tasks first
/// call their tools, then each service's edges as they are reached; and each tool's stages.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub edges: Vec<Edge>,
    /// Per tool, its stages: none for a plain tool.
    pub stages: Vec<Vec<Stage>>,
    /// Some configuration falls back over an edge of the graph.
    pub falls_back: bool,
    /// The task makes its own calls in stages (some together, or optional).
    pub staged: bool,
}

impl Graph {
    /// Per tool, the calls one call of it leads to below it, over every level (0 for a plain
    /// tool). The graph is acyclic and at most 100 deep, as validation holds it. Saturates.
    pub fn calls_below(&self) -> Vec<u64> {
        fn visit(g: &Graph, t: usize, known: &mut [Option<u64>]) -> u64 {
            if let Some(n) = known[t] {
                return n;
            }
            let mut n = 0u64;
            for call in g.stages[t].iter().flatten() {
                let below = visit(g, g.edges[call.edge].callee, known);
                n = n.saturating_add(1).saturating_add(below);
            }
            known[t] = Some(n);
            n
        }
        let mut known = vec![None; self.stages.len()];
        (0..self.stages.len())
            .map(|t| visit(self, t, &mut known))
            .collect()
    }

    /// Whether some tool is a service.
    pub fn has_services(&self) -> bool {
        self.stages.iter().any(|s| !s.is_empty())
    }

    /// Whether the graph is more than the task calling plain tools one after another — some
    /// tool is a service, some call falls back, or the task calls in stages — so that edges
    /// are measured and written.
    pub fn is_measured(&self) -> bool {
        self.falls_back || self.staged || self.has_services()
    }

    /// The top edge to `tool`: the task calling it.
    pub fn top(&self, tool: usize) -> usize {
        (self.edges.iter())
            .position(|e| e.caller.is_none() && e.callee == tool)
            .expect("every tool a task calls has a top edge")
    }

    /// The edge from `caller` to `callee`, if the graph has it.
    pub fn find(&self, caller: Option<usize>, callee: usize) -> Option<usize> {
        (self.edges.iter()).position(|e| e.caller == caller && e.callee == callee)
    }

    /// The graph of tools `stages` (each tool's stages as `(callee, optional)`), whose tasks
    /// call `tops`, with the edges `fallbacks` adds (a caller, `None` for the task, and the
    /// tool it falls back to): the top edges in order, the task's fallbacks, then every
    /// service's edges breadth first, each service's fallbacks after its calls.
    pub fn build(
        tops: &[usize],
        stages: &[Vec<Vec<(usize, bool)>>],
        fallbacks: &[(Option<usize>, usize)],
    ) -> Graph {
        let falls_from = |caller: Option<usize>| {
            (fallbacks.iter())
                .filter(move |f| f.0 == caller)
                .map(|f| f.1)
        };
        let mut edges: Vec<Edge> = Vec::new();
        for t in tops.iter().copied().chain(falls_from(None)) {
            if !edges.iter().any(|e| e.caller.is_none() && e.callee == t) {
                edges.push(Edge {
                    caller: None,
                    callee: t,
                });
            }
        }
        let mut reached: Vec<usize> = edges.iter().map(|e| e.callee).collect();
        let mut next = 0;
        while next < reached.len() {
            let caller = reached[next];
            next += 1;
            let called = stages[caller].iter().flatten().map(|c| c.0);
            for callee in called.chain(falls_from(Some(caller))) {
                let edge = Edge {
                    caller: Some(caller),
                    callee,
                };
                if !edges.contains(&edge) {
                    edges.push(edge);
                }
                if !reached.contains(&callee) {
                    reached.push(callee);
                }
            }
        }
        // A service no task reaches still has its edges, after the reached ones.
        for (caller, list) in stages.iter().enumerate() {
            let called = list.iter().flatten().map(|c| c.0);
            for callee in called.chain(falls_from(Some(caller))) {
                let edge = Edge {
                    caller: Some(caller),
                    callee,
                };
                if !edges.contains(&edge) {
                    edges.push(edge);
                }
            }
        }
        let find = |caller: usize, callee: usize| {
            (edges.iter())
                .position(|e| e.caller == Some(caller) && e.callee == callee)
                .expect("added above")
        };
        let stages = (stages.iter().enumerate())
            .map(|(caller, list)| {
                (list.iter())
                    .map(|stage| {
                        (stage.iter())
                            .map(|&(callee, optional)| Call {
                                edge: find(caller, callee),
                                optional,
                            })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        Graph {
            edges,
            stages,
            falls_back: !fallbacks.is_empty(),
            staged: false,
        }
    }
}
