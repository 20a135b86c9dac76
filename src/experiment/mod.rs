//! A validated experiment: everything a run needs, checked, with durations in ticks.

mod charts;

use crate::metrics::Tracks;
use crate::metrics::recovery::Windows;
use crate::model::{Arrival, Graph, Tool, Workload};
use crate::policy::Policy;
use crate::time::Tick;
pub use charts::{ChartFormat, ChartKind, files as chart_files};

/// One experiment: a workload and its tools, run under each policy in turn.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub struct Experiment {
    /// Names the output folder `out/<name>/`.
    pub name: String,
    pub description: String,
    pub seed: u64,
    pub replications: u64,
    /// No event after this tick runs; intents still waiting there are `hung`.
    pub horizon: Tick,
    pub tools: Vec<Tool>,
    pub workload: Workload,
    /// The configurations compared, in the order the config lists them.
    pub policies: Vec<Policy>,
    /// Who calls whom: the task's calls, and the calls of each tool that is a service.
    pub graph: Graph,
    pub output: OutputOptions,
    /// The fates of each run's attempts in the order sent, where the config lists them (a
    /// counterexample `retrysim explore` wrote): met instead of drawn, every attempt past the
    /// list delivered.
    pub schedule: Option<Vec<crate::model::Choice>>,
}

/// Which optional files a run writes, and which charts it draws.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputOptions {
    /// One row per intent in `intents.csv`.
    pub intents: bool,
    /// One row per attempt in `attempts.csv`.
    pub attempts: bool,
    pub charts: Vec<ChartKind>,
    /// Each chart is written once per format.
    pub chart_formats: Vec<ChartFormat>,
    /// The width of the bins `timeseries.csv` counts in; none writes no time series.
    pub timeseries: Option<Tick>,
}

impl Experiment {
    /// An experiment named `name` whose `tasks` tasks each call every tool of `tools` in order,
    /// run under each of `policies`, with a config's defaults for the rest: seed 0, one
    /// replication, 100 clients taking the tasks as one batch, a 24 h horizon, no optional
    /// files. Each policy's timeout and hedge delay are resolved against the tools here; an
    /// error names the tool's and the rule's problem.
    pub fn new(
        name: impl Into<String>,
        tools: Vec<Tool>,
        mut policies: Vec<Policy>,
        tasks: u64,
    ) -> Result<Experiment, WaitError> {
        let calls: Vec<usize> = (0..tools.len()).collect();
        let graph = Graph::build(&calls, &vec![Vec::new(); tools.len()], &[]);
        for policy in &mut policies {
            policy.time.waits =
                (policy.resolve_waits(&tools, &calls)).map_err(|(key, why)| WaitError {
                    policy: policy.name.clone(),
                    key,
                    why,
                })?;
        }
        Ok(Experiment {
            name: name.into(),
            description: String::new(),
            seed: 0,
            replications: 1,
            horizon: Tick::from_secs(24 * 3600),
            tools,
            graph,
            workload: Workload {
                stages: None,
                agent: None,
                tasks: Some(tasks),
                duration: None,
                calls,
                arrival: Arrival::Batch,
                clients: 100,
                callers: 1,
                crash: None,
            },
            policies,
            output: OutputOptions::default(),
            schedule: None,
        })
    }

    /// The tools a configuration's tasks call, in order: its own list or the workload's.
    pub fn calls_of<'a>(&'a self, policy: &'a Policy) -> &'a [usize] {
        policy
            .agent
            .calls
            .as_deref()
            .unwrap_or(&self.workload.calls)
    }

    /// Whether each tool is one a configuration's tasks can reach, as a run follows calls: a
    /// tool its tasks call, a fallback of such a call under the policy on that call's edge, and
    /// likewise every call a reached service makes. Known from the config alone, so a tool's
    /// row is there whether or not a run happened to call it.
    pub fn reached_by(&self, policy: &Policy) -> Vec<bool> {
        let mut reached = vec![false; self.tools.len()];
        // First-choice edges still to follow: a fallback goes over an edge of its own, but its
        // list is the first choice's.
        let mut edges: Vec<usize> = (self.calls_of(policy).iter())
            .map(|&t| self.graph.top(t))
            .collect();
        while let Some(e) = edges.pop() {
            let fallbacks = policy.on_edge(e).edge.fallback.tools.iter().copied();
            for t in std::iter::once(self.graph.edges[e].callee).chain(fallbacks) {
                if !reached[t] {
                    reached[t] = true;
                    edges.extend(self.graph.stages[t].iter().flatten().map(|c| c.edge));
                }
            }
        }
        reached
    }

    /// The calls one run (a configuration's replication) makes at their first tries: its tasks
    /// (see [`crate::model::Workload::most_tasks`]) times their calls and every call below
    /// them, an agent loop's once a turn, up to its most turns. Retries come on top: this is
    /// what a run makes without a fault. Saturates.
    pub fn most_calls_per_run(&self) -> u64 {
        let w = &self.workload;
        let turns = (w.agent.as_ref()).map_or(1, |a| {
            a.turns
                .max()
                .map_or(crate::model::AgentLoop::MOST_TURNS, |t| t.0.max(1))
        });
        let below = self.graph.calls_below();
        let per_task = (w.calls.iter()).fold(0u64, |n, &c| {
            n.saturating_add(1)
                .saturating_add(below.get(c).copied().unwrap_or(0))
        });
        per_task
            .saturating_mul(turns)
            .saturating_mul(w.most_tasks())
    }

    /// Whether some configuration's task makes more than one call (a list, or an agent's
    /// turns): a figure per intent is then a call's, and a task's are apart from it.
    pub fn many_calls(&self) -> bool {
        self.workload.agent.is_some() || (self.policies.iter()).any(|p| self.calls_of(p).len() > 1)
    }

    /// The tools in `calls`, each once, in order of first call, by index.
    pub fn called<'a>(&'a self, calls: &'a [usize]) -> impl Iterator<Item = usize> + 'a {
        calls
            .iter()
            .enumerate()
            .filter(|(i, t)| !calls[..*i].contains(t))
            .map(|(_, &t)| t)
    }

    /// The tools in `calls`, each once, in order of first call.
    pub fn called_tools<'a>(&'a self, calls: &'a [usize]) -> impl Iterator<Item = &'a Tool> {
        self.called(calls).map(|t| &self.tools[t])
    }

    /// The time series' tracks: one per tool, then one per replica of each tool with several.
    pub fn tracks(&self) -> Tracks {
        let replicas: Vec<usize> = self.tools.iter().map(|t| t.replicas.len()).collect();
        Tracks::new(&replicas)
    }

    /// The windows recovery is measured in, for a workload that arrives for a duration and has
    /// a trigger: from the first outage, capacity window, or rise of the arrival rate above its
    /// starting rate, to the end of the last of them.
    pub fn recovery_windows(&self) -> Option<Windows> {
        let end = self.workload.duration?;
        let mut spans: Vec<(Tick, Tick)> = (self.tools.iter())
            .flat_map(|t| {
                let outages = t.server.outages.iter().map(|o| (o.from, o.until));
                outages.chain(t.server.capacity.iter().map(|c| (c.from, c.until)))
            })
            .collect();
        if let Arrival::Scheduled(schedule) = &self.workload.arrival {
            spans.extend(schedule.above_start());
        }
        let from = spans.iter().map(|s| s.0).min()?;
        let until = spans.iter().map(|s| s.1).max()?;
        Windows::around(from, until, end)
    }
}

/// A policy's wait (`timeout` or `hedge_delay`) that a tool's latencies cannot answer: the
/// policy, the key and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WaitError {
    pub policy: String,
    pub key: &'static str,
    pub why: crate::model::RoundTripError,
}

impl std::fmt::Display for WaitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.policy, self.key, self.why)
    }
}

impl std::error::Error for WaitError {}
