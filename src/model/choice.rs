//! What an attempt, a lookup or a worker meets when a run is walked through a chosen schedule
//! rather than its draws: the explorer's alphabet, and a config's `schedule` (see
//! `sim::choices`).

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
    /// The worker crashes before it sends the attempt due (after any durable write before the
    /// send: an intent log's SENDING record).
    CrashBeforeSend,
    /// The worker crashes with the attempt just sent in flight.
    CrashInFlight,
}

impl Choice {
    /// Its name in a config's `schedule`: a script's outcome name, `late` or `lookup_failed`.
    pub fn name(self) -> &'static str {
        match self {
            Choice::Default => "ok",
            Choice::Fate(f) => f.name(),
            Choice::Late => "late",
            Choice::LookupFails => "lookup_failed",
            Choice::CrashBeforeSend => "crash_before_send",
            Choice::CrashInFlight => "crash_in_flight",
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
            .chain([
                Choice::Late,
                Choice::LookupFails,
                Choice::CrashBeforeSend,
                Choice::CrashInFlight,
            ])
            .collect()
    }

    /// Whether it is a fault: anything but the default.
    pub fn is_fault(self) -> bool {
        self != Choice::Default
    }
}
