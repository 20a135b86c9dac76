//! A validated experiment: everything a run needs, checked, with durations in ticks.

mod charts;

use crate::model::{Tool, Workload};
use crate::policy::Policy;
use crate::time::Tick;
pub use charts::{ChartFormat, ChartKind, files as chart_files};

/// One experiment: a workload and its tools, run under each policy in turn.
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
    pub output: OutputOptions,
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
    /// The width of the stretches `timeline.csv` counts in; none writes no timeline.
    pub timeline: Option<Tick>,
}

impl Experiment {
    /// The tools a configuration's tasks call, in order: its own list or the workload's.
    pub fn calls_of<'a>(&'a self, policy: &'a Policy) -> &'a [usize] {
        policy.calls.as_deref().unwrap_or(&self.workload.calls)
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
}
