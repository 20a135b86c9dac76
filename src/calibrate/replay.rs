//! An incident's replay held to its own trace: the config `calibrate --incident` wrote, run
//! under the policy claimed to have been in effect (its `as-observed`: one attempt, the
//! client's timeout), must reproduce what the trace shows of the busiest operation — its
//! attempts and its successes, bin by bin — or say where it does not and why that is likely.
//!
//! Each bin's trace count is one draw of what the replay draws many times: it is held to the
//! replay's 20 replications as one more of them would be, z = (x − m)/(s·√(1 + 1/20)), with
//! m and s the replications' mean and standard deviation, each |z| at most the two-sided 5 %
//! bound Bonferroni-corrected over every bin and figure compared. Bins are whole stretches of
//! the incident's health, as many as hold 30 of the trace's attempts on average; a bin with
//! fewer than 10 is left out (too few for the normal reading). Attempts and successes both
//! count in the bin they were sent in, in the trace and in the replay alike, so a latency that
//! carries an answer across a bin's edge moves nothing.

use statrs::distribution::{ContinuousCDF, Normal};

use super::observed::Operation;
use super::span::Outcome;
use crate::error::Error;
use crate::experiment::Experiment;
use crate::metrics::{Count, Sample, SeriesStats};
use crate::time::Tick;

/// The configuration a replay is held to: the one `calibrate` writes for the client as seen.
pub const CLAIMED: &str = "as-observed";
/// Replications the replay runs.
pub const REPLICATIONS: u64 = 20;
/// The trace's attempts a bin holds on average, and the fewest it must hold to be compared.
const PER_BIN: u64 = 30;
const FEWEST: f64 = 10.0;

/// One bin's figure that lay outside the bound.
#[derive(Clone, Debug, PartialEq)]
pub struct Differs {
    pub from: Tick,
    pub figure: &'static str,
    pub trace: f64,
    pub replay: f64,
    pub z: f64,
}

/// The replay held to the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub width: Tick,
    pub compared: usize,
    pub bound: f64,
    pub differs: Vec<Differs>,
    /// Calls the trace marks as resends: a client that retried, which one attempt is not.
    pub resends: u64,
}

impl Held {
    /// `yes` where every bin agrees, `no` otherwise.
    pub fn agrees(&self) -> bool {
        self.differs.is_empty()
    }

    /// Why the replay likely differs: a policy other than claimed where the attempts do, or
    /// failures that depend on load or on when calls came where only the successes do.
    pub fn reason(&self) -> Option<String> {
        let attempts = self.differs.iter().any(|d| d.figure == "attempts");
        match (self.agrees(), attempts) {
            (true, _) => None,
            (false, true) => Some(format!(
                "a policy other than \"{CLAIMED}\": the trace's client sent attempts the claimed \
                 policy does not{}",
                match self.resends {
                    0 => String::new(),
                    n => format!(" ({n} calls are resends)"),
                }
            )),
            (false, false) => Some(
                "failures that depend on the load or on when calls came, which a stretch's \
                 shares average away"
                    .into(),
            ),
        }
    }
}

/// Runs `exp` (the incident's config) under [`CLAIMED`] alone and holds its tool `tool`'s
/// bins to the trace's operation `op`, whose first call started at `origin`; stretches are
/// `stretch` wide.
pub fn hold(
    exp: &Experiment,
    (tool, op): (usize, &Operation),
    (origin, stretch): (i64, Tick),
) -> Result<Held, Error> {
    let calls = op.in_order();
    let span = calls.last().map_or(0, |c| (c.start - origin) as u64) + 1;
    let per_stretch = calls.len() as f64 * stretch.0 as f64 / span as f64;
    // A hair under a whole number of stretches is that number: the span counts its last tick.
    let group = ((PER_BIN as f64 / per_stretch.max(f64::MIN_POSITIVE) - 1e-6).ceil() as u64).max(1);
    let width = Tick(stretch.0.saturating_mul(group));
    let mut one = exp.clone();
    one.policies.retain(|p| p.name == CLAIMED);
    one.replications = REPLICATIONS;
    one.output.timeseries = Some(width);
    one.output.charts.clear();
    let series = simulate(one)?;
    let bins = series.len(tool);
    let mut trace = vec![[0.0f64; 2]; bins];
    let mut resends = 0;
    for c in &calls {
        resends += u64::from(!c.first);
        let at = |t: i64| ((t - origin) as u64 / width.0) as usize;
        if let Some(b) = trace.get_mut(at(c.start)) {
            b[0] += 1.0;
        }
        if c.outcome == Outcome::Ok
            && let Some(b) = trace.get_mut(at(c.start))
        {
            b[1] += 1.0;
        }
    }
    let mut tests = Vec::new();
    for (i, [attempts, successes]) in trace.iter().enumerate() {
        if *attempts < FEWEST {
            continue;
        }
        let first = series.count(tool, i, Count::FirstTry);
        let retries = series.count(tool, i, Count::Retry);
        let sent = (
            first.mean() + retries.mean(),
            first.variance() + retries.variance(),
        );
        let done = series.count(tool, i, Count::AnsweredBySend);
        for (figure, x, (m, var)) in [
            ("attempts", *attempts, sent),
            ("successes", *successes, (done.mean(), done.variance())),
        ] {
            let sd = (var * (1.0 + 1.0 / REPLICATIONS as f64)).sqrt();
            let z = match sd {
                0.0 if x == m => 0.0,
                0.0 => f64::INFINITY,
                sd => (x - m) / sd,
            };
            tests.push((Tick(i as u64 * width.0), figure, x, m, z));
        }
    }
    let normal = Normal::standard();
    let bound = normal.inverse_cdf(1.0 - 0.05 / (2.0 * tests.len().max(1) as f64));
    let differs = (tests.iter())
        .filter(|t| t.4.abs() > bound)
        .map(|&(from, figure, trace, replay, z)| Differs {
            from,
            figure,
            trace,
            replay,
            z,
        })
        .collect();
    Ok(Held {
        width,
        compared: tests.len(),
        bound,
        differs,
        resends,
    })
}

/// The one configuration of `exp`, run, for its time series.
fn simulate(exp: Experiment) -> Result<SeriesStats, Error> {
    let mut point =
        crate::run::single_point(exp).map_err(Error::io("cannot replay the incident"))?;
    Ok((point.policies.remove(0).series).expect("a run that keeps its time series"))
}
