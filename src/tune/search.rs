//! The search: successive halving under common random numbers, then a validation on fresh
//! seeds.
//!
//! Every round runs all surviving candidates as the configurations of one experiment, so they
//! draw the same arrivals and faults (the streams are keyed by seed, replication and purpose,
//! never by configuration): a difference between two candidates is theirs, not the noise's.
//! Round k gives each survivor ⌊budget / (survivors · rounds)⌋ new replications (at least
//! two) on seed k of the search's own, ranks every survivor on all its replications so far, and
//! keeps the better half, so replications go where the decision is close. A candidate whose
//! constraint misses even at the hopeful end of its 95 % interval is dropped whatever its rank.
//! The finalists are then run again on seeds the search never used, with the config as
//! written beside them; the choice is the best objective among those whose every constraint
//! holds at the cautious end of its interval there.

use toml::{Table, Value};

use super::spec::{Constraint, Spec};
use crate::config::{ConfigError, Source, path};
use crate::error::Error;
use crate::metrics::estimate::wilson;
use crate::metrics::{Better, Estimate, Figure, Moments};
use crate::run::{self, Observer, Options};
use crate::sim::{Job, RunResult};
use crate::sweep::Point;

/// One candidate: its values of the searched keys, in the spec's order.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    pub values: Vec<Value>,
}

/// Every figure's value in each replication a candidate ran, with the run's tasks and intents.
#[derive(Clone, Debug, Default)]
pub struct Observed {
    pub runs: Vec<[Option<f64>; Figure::ALL.len()]>,
    /// Each replication's tasks and intents: the trials behind its shares.
    pub trials: Vec<(u64, u64)>,
}

impl Observed {
    /// A figure across the replications: mean and 95 % interval. A share (of intents that
    /// succeeded or became ghosts, of tasks that succeeded) is given at least the width of the
    /// Wilson interval of every trial together, so replications that all saw 100 % still
    /// leave room for the failures they were too few to see, rather than claiming ± 0.
    pub fn estimate(&self, f: Figure) -> Estimate {
        // A replication that did not measure the figure (a cost per success with no success)
        // leaves it unknown, never better: its mean is NaN, which meets no constraint and
        // ranks last.
        if self.runs.iter().any(|r| r[f as usize].is_none()) {
            return Estimate {
                mean: f64::NAN,
                half_width: f64::INFINITY,
                std_error: f64::INFINITY,
            };
        }
        let m: Moments = self.runs.iter().filter_map(|r| r[f as usize]).collect();
        let e = Estimate::from_sample(&m);
        let trials = |r: &(u64, u64)| match f {
            Figure::TaskSuccess => Some(r.0),
            Figure::Success | Figure::Ghost => Some(r.1),
            _ => None,
        };
        let Some(n) = self.trials.iter().map(trials).sum::<Option<u64>>() else {
            return e;
        };
        let k: f64 = (self.runs.iter().zip(&self.trials))
            .filter_map(|(r, t)| Some(r[f as usize]? * trials(t)? as f64))
            .sum();
        let (low, high) = wilson(k.round(), n as f64);
        Estimate {
            half_width: e.half_width.max(e.mean - low).max(high - e.mean),
            ..e
        }
    }

    /// Adds another round's replications.
    pub fn absorb(&mut self, other: Observed) {
        self.runs.extend(other.runs);
        self.trials.extend(other.trials);
    }
}

/// How a candidate stands against the spec, from its estimates: the sort key of a round.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Standing {
    /// A constraint misses even at the hopeful end of its interval.
    pub hopeless: bool,
    /// Constraints its means miss.
    pub missed: usize,
    /// The objective's mean, signed so that less is better.
    pub cost: f64,
}

impl Standing {
    pub fn of(spec: &Spec, estimate: impl Fn(Figure) -> Estimate) -> Standing {
        let mut hopeless = false;
        let mut missed = 0;
        for c in &spec.constraints {
            let e = estimate(c.figure);
            let half = if e.half_width.is_finite() {
                e.half_width
            } else {
                0.0
            };
            hopeless |= !c.met(c.hopeful(e.mean, half));
            missed += usize::from(!c.met(e.mean));
        }
        let mean = estimate(spec.objective.figure).mean;
        let cost = match (spec.objective.goal, mean.is_nan()) {
            (_, true) => f64::INFINITY,
            (Better::Lower, false) => mean,
            (Better::Higher, false) => -mean,
        };
        Standing {
            hopeless,
            missed,
            cost,
        }
    }

    /// The order of a round's ranking: hopeful before hopeless, fewer constraints missed, then
    /// the better objective.
    pub fn order(&self, other: &Standing) -> std::cmp::Ordering {
        (self.hopeless, self.missed)
            .cmp(&(other.hopeless, other.missed))
            .then(self.cost.total_cmp(&other.cost))
    }
}

/// Whether every constraint holds at the cautious end of its 95 % interval.
pub fn holds(constraints: &[Constraint], estimate: impl Fn(Figure) -> Estimate) -> bool {
    constraints.iter().all(|c| {
        let e = estimate(c.figure);
        e.half_width.is_finite() && c.met(c.cautious(e.mean, e.half_width))
    })
}

/// Every combination of the searched keys' values, the first key slowest.
pub fn candidates(spec: &Spec) -> Vec<Candidate> {
    let mut out = vec![Candidate { values: Vec::new() }];
    for key in &spec.keys {
        out = (out.iter())
            .flat_map(|c| {
                key.values.iter().map(move |v| {
                    let mut values = c.values.clone();
                    values.push(v.clone());
                    Candidate { values }
                })
            })
            .collect();
    }
    out
}

/// The config's document with its `[[policy]]` tables replaced by `policies` and its seed and
/// replications set: what a round runs, and what `recommended.toml` is made from.
pub fn document(base: &Table, policies: Vec<Table>, seed: u64, replications: u64) -> Table {
    let mut doc = base.clone();
    doc.remove("tune");
    doc.insert("seed".into(), Value::Integer(seed as i64));
    doc.insert("replications".into(), Value::Integer(replications as i64));
    doc.insert(
        "policy".into(),
        Value::Array(policies.into_iter().map(Value::Table).collect()),
    );
    doc
}

/// The base policy's table with a candidate's values set and `name` given.
pub fn policy(
    spec: &Spec,
    base: &Table,
    candidate: &Candidate,
    name: &str,
) -> Result<Table, String> {
    let mut t = base.clone();
    for (key, value) in spec.keys.iter().zip(&candidate.values) {
        path::set(&mut t, &key.path, value)?;
    }
    t.insert("name".into(), Value::String(name.into()));
    Ok(t)
}

/// Collects every run's figures by configuration, in replication order.
struct Collect(Vec<Observed>);

impl Observer for Collect {
    fn run_done(&mut self, _: &Point, job: Job, _: u64, run: &RunResult) -> std::io::Result<()> {
        let figures = Figure::ALL.map(|f| f.of_run(&run.totals));
        let observed = &mut self.0[job.policy];
        observed.runs.push(figures);
        observed
            .trials
            .push((run.totals.tasks, run.totals.intents()));
        Ok(())
    }
}

/// Runs `policies` as one experiment of the config `doc` came from: each one's figures in
/// every replication.
pub fn evaluate(
    source: &Source,
    search: &std::ops::Range<usize>,
    doc: &Table,
    options: &Options,
) -> Result<Vec<Observed>, Error> {
    let sweep = check(source, doc).map_err(|e| Error::Config(blame(source, search, &e)))?;
    let n = sweep.base.policies.len();
    let mut collect = Collect(vec![Observed::default(); n]);
    run::jobs(sweep, options, &mut collect).map_err(Error::io("cannot run the search"))?;
    Ok(collect.0)
}

/// The config `doc` made of `source` for a round, validated.
pub fn check(source: &Source, doc: &Table) -> Result<crate::sweep::Sweep, ConfigError> {
    let text = toml::to_string(doc).expect("a TOML table serializes");
    let round = Source {
        name: source.name.clone(),
        text,
        origin: source.origin.clone(),
    };
    round.sweep()
}

/// An error in a candidate's config, told as the `[tune.search]` table's, placed there: the
/// values it was made of are in the message.
pub fn blame(source: &Source, search: &std::ops::Range<usize>, e: &ConfigError) -> ConfigError {
    let message = format!(
        "a candidate the search made is not a valid config: {}: {}",
        e.path, e.message
    );
    let mut out = ConfigError::at(source, search.clone(), "tune.search", message);
    if let Some(a) = &e.allowed {
        out = out.allowed(a.clone());
    }
    out
}
