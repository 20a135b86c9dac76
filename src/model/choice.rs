//! What an attempt or a lookup meets when a run is walked through a chosen schedule rather than
//! its draws: the explorer's alphabet, and a config's `schedule` (see `sim::choices`).

use crate::model::Fate;

/// What a run meets at one choice point instead of a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// An attempt delivered within its timeout; a lookup that answers.
    Default,
    /// An attempt meets this fault.
    Fate(Fate),
    /// An attempt delivered, its reply at or after its timeout: a late reply.
    Late,
    /// A reconciliation lookup fails.
    LookupFails,
}

impl Choice {
    /// Its name in a config's `schedule`: a script's outcome name, `late` or `lookup_failed`.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Default => "ok",
            Choice::Fate(f) => f.name(),
            Choice::Late => "late",
            Choice::LookupFails => "lookup_failed",
        }
    }

    /// Every choice a schedule may list.
    pub fn all() -> Vec<Choice> {
        let fates = Fate::ALL
            .into_iter()
            .filter(|f| *f != Fate::Delivered)
            .map(Choice::Fate);
        [Choice::Default]
            .into_iter()
            .chain(fates)
            .chain([Choice::Late, Choice::LookupFails])
            .collect()
    }

    /// Whether it is a fault: anything but the default.
    pub fn is_fault(self) -> bool {
        self != Choice::Default
    }
}
