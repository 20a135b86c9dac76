//! What a run measures: one record per intent, streamed into running aggregates so memory does
//! not grow with the number of intents, and the estimates with confidence intervals built from
//! them.

pub mod attempt;
pub mod cost;
pub mod estimate;
pub mod figure;
pub mod moments;
pub mod quantiles;
pub mod record;
pub mod recovery;
pub mod reservation;
pub mod series;
pub mod totals;

pub use attempt::{AttemptRecord, Lookup, Outcome};
pub use cost::Costs;
pub use estimate::Estimate;
pub use figure::{Better, Figure};
pub use moments::{Moments, Sample, Sums};
pub use quantiles::Quantiles;
pub use record::{BusinessState, IntentRecord, Status, StopReason};
pub use series::{Count, Level, Series, SeriesStats, Tracks};
pub use totals::{CrashTotals, Measure, ReplicaTotals, ToolTotals, Totals};
