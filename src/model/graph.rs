//! Call graphs. A tool may be a service: to serve an attempt it makes calls of its own, in
//! stages — the calls of a stage go out together, and the next stage starts when the last of
//! them has ended — and its reply waits for them. Each call goes over an edge of the graph, a
//! caller and a callee, and each edge has its client policy. The task's own calls are the top
//! edges, whose caller is the task. A tool with no calls is a plain tool, as before.

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
}

impl Graph {
    /// Whether some tool is a service: only then are edges measured and written.
    pub fn has_services(&self) -> bool {
        self.stages.iter().any(|s| !s.is_empty())
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
    /// call `tops`: the top edges in order, then every service's edges breadth first.
    pub fn build(tops: &[usize], stages: &[Vec<Vec<(usize, bool)>>]) -> Graph {
        let mut edges: Vec<Edge> = Vec::new();
        for &t in tops {
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
            for &(callee, _) in stages[caller].iter().flatten() {
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
            for &(callee, _) in list.iter().flatten() {
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
        Graph { edges, stages }
    }
}
