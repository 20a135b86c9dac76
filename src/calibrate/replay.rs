//! An incident's replay held to its own trace: the config `calibrate --incident` wrote, run
//! under the policy claimed to have been in effect (its `as-observed` — one attempt, the
//! client's timeout — or the policy `--claimed` names), must reproduce what the trace shows of the busiest operation — its
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

use std::fmt::Write;

use statrs::distribution::{ContinuousCDF, Normal};

use super::observed::Operation;
use super::span::Outcome;
use crate::error::Error;
use crate::experiment::Experiment;
use crate::metrics::{Count, Sample, SeriesStats};
use crate::time::Tick;

/// The configuration a replay is held to unless another is claimed: the one `calibrate`
/// writes for the client as seen.
pub const AS_OBSERVED: &str = "as-observed";
/// Replications the replay runs.
pub const REPLICATIONS: u64 = 20;
/// The trace's attempts a bin holds on average, and the fewest it must hold to be compared.
const PER_BIN: u64 = 30;
const FEWEST: f64 = 10.0;

/// One bin's figure, in the trace and in the replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub from: Tick,
    pub figure: &'static str,
    pub trace: f64,
    /// The replications' mean, and the spread one more of them would have.
    pub replay: f64,
    pub spread: f64,
    pub z: f64,
}

/// The replay held to the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    /// The policy replayed.
    pub claimed: String,
    pub width: Tick,
    /// Every bin's figures compared, in time order, attempts before successes.
    pub bins: Vec<Compared>,
    /// The bound on |z|.
    pub bound: f64,
    /// Calls the trace marks as resends: a client that retried, which one attempt is not.
    pub resends: u64,
}

impl Held {
    /// The figures outside the bound, the attempts first: they say whether the policy is the
    /// claimed one.
    pub fn differs(&self) -> Vec<&Compared> {
        let mut out: Vec<&Compared> = (self.bins.iter())
            .filter(|c| c.z.abs() > self.bound)
            .collect();
        out.sort_by_key(|c| (c.figure != "attempts", c.from));
        out
    }

    /// `yes` where every bin agrees, `no` otherwise.
    pub fn agrees(&self) -> bool {
        self.differs().is_empty()
    }

    /// Every bin compared as CSV: its start in seconds, the figure, the trace's count, the
    /// replay's mean and spread, z, and whether it lies within the bound.
    pub fn csv(&self) -> String {
        let mut out = String::from("from_s,figure,trace,replay_mean,replay_sd,z,within\n");
        for c in &self.bins {
            let z = match c.z {
                z if z.is_finite() => format!("{z:.3}"),
                z if z > 0.0 => "inf".into(),
                _ => "-inf".into(),
            };
            let _ = writeln!(
                out,
                "{},{},{},{:.3},{:.3},{z},{}",
                c.from.seconds(),
                c.figure,
                c.trace,
                c.replay,
                c.spread,
                c.z.abs() <= self.bound
            );
        }
        out
    }

    /// Why the replay likely differs: a policy other than claimed where the attempts do, or
    /// failures that depend on load or on when calls came where only the successes do.
    pub fn reason(&self) -> Option<String> {
        let differs = self.differs();
        let attempts =
            |more: bool| (differs.iter()).any(|d| d.figure == "attempts" && (d.z > 0.0) == more);
        let resends = match self.resends {
            0 => String::new(),
            n => format!(" ({n} calls are resends)"),
        };
        let claimed = &self.claimed;
        match (self.agrees(), attempts(true), attempts(false)) {
            (true, _, _) => None,
            (false, true, _) => Some(format!(
                "a policy other than \"{claimed}\": the trace's client sent attempts the \
                 claimed policy does not{resends}"
            )),
            (false, false, true) => Some(format!(
                "a policy other than \"{claimed}\": the claimed policy sends attempts the \
                 trace's client did not{resends}"
            )),
            (false, false, false) => Some(
                "failures that depend on the load or on when calls came, which a stretch's \
                 shares average away"
                    .into(),
            ),
        }
    }
}

/// Runs `exp` (the incident's config) under its policy `claimed` alone and holds its tool
/// `tool`'s bins to the trace's operation `op`, whose first call started at `origin`;
/// stretches are `stretch` wide.
pub fn hold(
    (exp, claimed): (&Experiment, &str),
    (tool, op): (usize, &Operation),
    (origin, stretch): (i64, Tick),
) -> Result<Held, Error> {
    let calls = &op.calls;
    let span = calls.last().map_or(0, |c| (c.start - origin) as u64) + 1;
    let per_stretch = calls.len() as f64 * stretch.0 as f64 / span as f64;
    // A hair under a whole number of stretches is that number: the span counts its last tick.
    let group = ((PER_BIN as f64 / per_stretch.max(f64::MIN_POSITIVE) - 1e-6).ceil() as u64).max(1);
    let width = Tick(stretch.0.saturating_mul(group));
    let mut one = exp.clone();
    one.policies.retain(|p| p.name == claimed);
    one.replications = REPLICATIONS;
    one.output.timeseries = Some(width);
    one.output.charts.clear();
    let series = simulate(one)?;
    let bins = series.len(tool);
    let mut trace = vec![[0.0f64; 2]; bins];
    let mut resends = 0;
    for c in calls {
        resends += u64::from(!c.first);
        if let Some(b) = trace.get_mut(((c.start - origin) as u64 / width.0) as usize) {
            b[0] += 1.0;
            b[1] += f64::from(u8::from(c.outcome == Outcome::Ok));
        }
    }
    let mut tests = Vec::new();
    for (i, [attempts, successes]) in trace.iter().enumerate() {
        if *attempts < FEWEST {
            continue;
        }
        let sent = series.sent(tool, i);
        let sent = (sent.mean(), sent.variance());
        let done = series.count(tool, i, Count::AnsweredBySend);
        for (figure, x, (m, var)) in [
            ("attempts", *attempts, sent),
            ("successes", *successes, (done.mean(), done.variance())),
        ] {
            let sd = (var * (1.0 + 1.0 / REPLICATIONS as f64)).sqrt();
            let z = match sd {
                0.0 if x == m => 0.0,
                0.0 => f64::INFINITY.copysign(x - m),
                sd => (x - m) / sd,
            };
            tests.push(Compared {
                from: Tick(i as u64 * width.0),
                figure,
                trace: x,
                replay: m,
                spread: sd,
                z,
            });
        }
    }
    let normal = Normal::standard();
    let bound = normal.inverse_cdf(1.0 - 0.05 / (2.0 * tests.len().max(1) as f64));
    Ok(Held {
        claimed: claimed.to_string(),
        width,
        bins: tests,
        bound,
        resends,
    })
}

/// The one configuration of `exp`, run, for its time series.
fn simulate(exp: Experiment) -> Result<SeriesStats, Error> {
    let mut point =
        crate::run::single_point(exp).map_err(Error::io("cannot replay the incident"))?;
    Ok((point.policies.remove(0).series).expect("a run that keeps its time series"))
}
