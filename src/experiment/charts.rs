//! Which charts there are, and the file formats they are drawn in.

/// A chart an experiment can ask for in `[output] charts`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartKind {
    /// Duplicates per intent against the first swept parameter, with theory and 95 % CIs.
    DuplicateCurve,
    /// Attempts per intent against the first swept parameter, with theory and 95 % CIs.
    AttemptsCurve,
    /// The success rate against the first swept parameter, with theory and 95 % CIs.
    SuccessCurve,
    /// Conditional writes per client on a contended record against the first swept parameter.
    WorkCurve,
    /// The time of the last success against the first swept parameter.
    MakespanCurve,
    /// Configurations side by side on success rate, attempts and duplicates.
    Comparison,
    /// Configurations side by side on median and 99th-percentile completion time, and load.
    Latency,
    /// Configurations side by side on the task view: tasks succeeded, calls per task, calls to a
    /// tool that was down, duplicates per task.
    Tasks,
    /// Load and goodput over time, a panel per configuration and tool: retries stacked on first
    /// tries, the offered load and the goodput as lines, the trigger shaded, recovery marked.
    Goodput,
    /// One story per configuration (its first task) as swimlanes on one time axis in ticks:
    /// each attempt a bar coloured by outcome, the deadline and cancellation marked.
    Timeline,
    /// A heat map per configuration over a two-axis sweep.
    Grid,
    /// Over a two-axis sweep, per configuration, how long goodput took to recover from the
    /// trigger, and where it never did.
    RecoveryMap,
    /// The call graph in layers, a panel per configuration, each edge with its calls per call
    /// of the task and the closed form (at a sweep's last point).
    CallGraph,
}

impl ChartKind {
    pub const ALL: [ChartKind; 13] = [
        ChartKind::DuplicateCurve,
        ChartKind::AttemptsCurve,
        ChartKind::SuccessCurve,
        ChartKind::WorkCurve,
        ChartKind::MakespanCurve,
        ChartKind::Comparison,
        ChartKind::Latency,
        ChartKind::Tasks,
        ChartKind::Goodput,
        ChartKind::Timeline,
        ChartKind::Grid,
        ChartKind::RecoveryMap,
        ChartKind::CallGraph,
    ];

    /// Whether the chart draws bars, a group per point: a sweep of many points shows a few of
    /// them, evenly spaced.
    pub fn is_bars(self) -> bool {
        matches!(
            self,
            ChartKind::Comparison | ChartKind::Latency | ChartKind::Tasks
        )
    }

    /// Whether the chart reads a file beside `summary.csv` and the manifest: the time series,
    /// the traces or the edges.
    pub fn reads_more_than_the_summary(self) -> bool {
        matches!(
            self,
            ChartKind::Goodput | ChartKind::Timeline | ChartKind::CallGraph
        )
    }

    /// The name in configs, and the chart's file stem.
    pub fn name(self) -> &'static str {
        match self {
            ChartKind::DuplicateCurve => "duplicate-curve",
            ChartKind::AttemptsCurve => "attempts-curve",
            ChartKind::SuccessCurve => "success-curve",
            ChartKind::WorkCurve => "work-curve",
            ChartKind::MakespanCurve => "makespan-curve",
            ChartKind::Comparison => "comparison",
            ChartKind::Latency => "latency",
            ChartKind::Tasks => "tasks",
            ChartKind::Goodput => "goodput",
            ChartKind::Timeline => "timeline",
            ChartKind::Grid => "grid",
            ChartKind::RecoveryMap => "recovery-map",
            ChartKind::CallGraph => "callgraph",
        }
    }

    /// How many sweep axes the chart needs, as (fewest, most).
    pub fn axes(self) -> (usize, usize) {
        match self {
            ChartKind::DuplicateCurve
            | ChartKind::AttemptsCurve
            | ChartKind::SuccessCurve
            | ChartKind::WorkCurve
            | ChartKind::MakespanCurve => (1, usize::MAX),
            ChartKind::Comparison
            | ChartKind::Latency
            | ChartKind::Tasks
            | ChartKind::CallGraph => (0, usize::MAX),
            ChartKind::Grid | ChartKind::RecoveryMap => (2, 2),
            // A panel, or a story, per configuration: a sweep would need a chart per point.
            ChartKind::Goodput | ChartKind::Timeline => (0, 0),
        }
    }

    /// The charts drawn when a config names none: what its sweep has room for, and always
    /// something every sweep can draw (a grid only for exactly two axes; with more, curves
    /// against the first axis, one line per point of the others). An unswept run of one task
    /// that keeps both traces is a scenario: its story says more than any bar.
    pub fn defaults(axes: usize, one_traced_task: bool) -> Vec<ChartKind> {
        match axes {
            0 if one_traced_task => vec![ChartKind::Timeline],
            0 => vec![ChartKind::Comparison],
            2 => vec![ChartKind::Grid],
            _ => vec![
                ChartKind::DuplicateCurve,
                ChartKind::AttemptsCurve,
                ChartKind::Comparison,
            ],
        }
    }

    /// Whether the chart can be drawn for a sweep of `axes` axes.
    pub fn fits(self, axes: usize) -> bool {
        let (fewest, most) = self.axes();
        (fewest..=most).contains(&axes)
    }
}

/// A file format charts are written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChartFormat {
    Svg,
    Png,
}

impl ChartFormat {
    pub const ALL: [ChartFormat; 2] = [ChartFormat::Svg, ChartFormat::Png];

    /// The name in configs and the file extension.
    pub fn name(self) -> &'static str {
        match self {
            ChartFormat::Svg => "svg",
            ChartFormat::Png => "png",
        }
    }
}

/// The chart files `kinds` make in `formats`, relative to the output folder.
pub fn files(kinds: &[ChartKind], formats: &[ChartFormat]) -> Vec<String> {
    kinds
        .iter()
        .flat_map(|k| {
            formats
                .iter()
                .map(move |f| format!("charts/{}.{}", k.name(), f.name()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_can_be_drawn() {
        for axes in 0..10 {
            for story in [false, true] {
                let defaults = ChartKind::defaults(axes, story);
                assert!(!defaults.is_empty());
                for kind in defaults {
                    assert!(kind.fits(axes), "{} for {axes} axes", kind.name());
                }
            }
        }
    }
}
