//! `retrysim tune CONFIG`: what should I set? A config's `[tune]` table names a policy, the
//! keys of it to search, constraints and an objective; the tuner searches the candidates with a
//! method made for noisy simulation ([`search`]), validates the finalists on fresh seeds, and
//! writes `out/<name>/`: `candidates.csv`, a Pareto chart, and `recommended.toml`, a config
//! `retrysim run` accepts with the chosen policy alone.

pub mod search;
pub mod spec;
mod write;

use toml::{Table, Value};

use crate::config::{ConfigError, Source};
use crate::error::Error;
use crate::metrics::Estimate;
use crate::run::Options;
use crate::variate::splitmix;
use search::{Candidate, Observed, Standing};
pub use spec::Spec;
pub use write::{chosen_policy, into_staging, recommended};

/// One round of the search.
#[derive(Clone, Debug)]
pub struct Round {
    pub seed: u64,
    /// New replications each survivor ran.
    pub replications: u64,
    /// Candidates that ran in it, by index.
    pub ran: Vec<usize>,
}

/// What the tuner found.
pub struct Tuned {
    pub spec: Spec,
    /// The config's own seed, from which every seed of the search is made.
    pub seed: u64,
    pub candidates: Vec<Candidate>,
    /// Each candidate's replications in the search.
    pub observed: Vec<Observed>,
    /// The round after which each candidate was dropped (`None`: it reached the end).
    pub dropped: Vec<Option<usize>>,
    pub rounds: Vec<Round>,
    /// The candidates validated, best first by the search, with their validation runs.
    pub finalists: Vec<(usize, Observed)>,
    /// The config's policy as written, run on the validation seeds beside the finalists.
    pub as_written: Observed,
    pub validation_seed: u64,
    /// The finalist chosen: the best objective among those whose constraints held.
    pub chosen: Option<usize>,
}

/// A seed of the tuner's own, made from the config's: TOML holds up to 2⁶³ − 1.
fn derived(seed: u64, purpose: u64) -> u64 {
    splitmix(seed ^ purpose.wrapping_mul(0x9e37_79b9_7f4a_7c15)) >> 1
}

/// The purpose the validation's seed is made for, after every round's.
const VALIDATION: u64 = u64::MAX;

impl Source {
    /// The config's `[tune]` table, validated, if it has one.
    pub fn tune(&self) -> Result<Option<Spec>, ConfigError> {
        let raw = crate::config::parse_raw(self)?;
        let Some(tune) = &raw.tune else {
            return Ok(None);
        };
        if let Some(sweep) = &raw.sweep {
            return Err(ConfigError::at(
                self,
                sweep.span(),
                "sweep",
                "a config with [tune] searches its own candidates: it has no [sweep]",
            )
            .allowed("one of the two: [sweep] to run a grid, [tune] to search"));
        }
        let names: Vec<String> = (raw.policy.iter())
            .filter_map(|p| p.get_ref().name.as_ref().map(|n| n.get_ref().clone()))
            .collect();
        Spec::read(self, tune.get_ref(), &names).map(Some)
    }
}

/// The base document and the searched policy's table, from the config's text.
fn base(source: &Source, spec: &Spec) -> (Table, Table) {
    let doc: Table = toml::from_str(&source.text).expect("the config parsed above");
    let policy = (doc
        .get("policy")
        .and_then(Value::as_array)
        .into_iter()
        .flatten())
    .filter_map(Value::as_table)
    .find(|p| p.get("name").and_then(Value::as_str) == Some(&spec.policy))
    .cloned()
    .expect("the spec's policy is one of the config's");
    (doc, policy)
}

/// Refuses, before any search, a candidate the config would not take: every candidate is
/// validated, as the first round would, and the first refused is placed at the searched key
/// the error names, with its value, or else at the search table, with the candidate's values.
/// (Keys are checked together, not one value at a time: `initial_delay = ["4s"]` is valid
/// beside a searched `max_delay = ["10s"]` whatever the policy's own cap.)
fn check_candidates(
    source: &Source,
    spec: &Spec,
    doc: &Table,
    tables: &[Table],
    candidates: &[Candidate],
) -> Result<(), Error> {
    let Err(e) = search::check(source, &search::document(doc, tables.to_vec(), 0, 2)) else {
        return Ok(());
    };
    let blamed = (e.path.strip_prefix("policy["))
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(i, rest)| Some((i.parse::<usize>().ok()?, rest.trim_start_matches('.'))));
    let Some((i, rest)) = blamed.filter(|(i, _)| *i < candidates.len()) else {
        return Err(Error::Config(search::blame(source, &spec.search_span, &e)));
    };
    let values = &candidates[i].values;
    let names = |k: &spec::Key| {
        rest == k.path
            || rest.starts_with(&format!("{}.", k.path))
            || rest.starts_with(&format!("{}[", k.path))
    };
    let refused = match spec.keys.iter().zip(values).find(|(k, _)| names(k)) {
        Some((key, value)) => ConfigError::at(
            source,
            key.span.clone(),
            &format!("tune.search.{}", key.path),
            format!(
                "the searched value {} is not one the policy takes: {rest}: {}",
                spec::plain(value),
                e.message
            ),
        ),
        None => {
            let said: Vec<String> = (spec.keys.iter().zip(values))
                .map(|(k, v)| format!("{} = {}", k.path, spec::plain(v)))
                .collect();
            ConfigError::at(
                source,
                spec.search_span.clone(),
                "tune.search",
                format!(
                    "the candidate {} is not a valid policy: {rest}: {}",
                    said.join(", "),
                    e.message
                ),
            )
        }
    };
    Err(Error::Config(match &e.allowed {
        Some(a) => refused.allowed(a.clone()),
        None => refused,
    }))
}

/// Tunes `source` into a staging folder for `<root>/<name>`, to be committed whole: refused
/// before any work if something retrysim did not write is there.
pub fn into_folder(
    source: &Source,
    spec: Spec,
    root: &std::path::Path,
    options: &Options,
) -> Result<(Tuned, crate::output::Staging), Error> {
    let name = source.sweep()?.base.name;
    crate::output::Staging::check_target(root, &name, crate::output::Mark::Output)?;
    let tuned = tune(source, spec, options)?;
    let staging = into_staging(&tuned, source, root, &name)?;
    Ok((tuned, staging))
}

/// Stops the search where Ctrl-C was pressed: a round cut short decides nothing.
fn cancelled(options: &Options) -> Result<(), Error> {
    match options
        .cancel
        .is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst))
    {
        true => Err(Error::Io {
            doing: "tuning".into(),
            source: std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"),
        }),
        false => Ok(()),
    }
}

/// Searches the candidates of `spec` in the config `source`, then validates the finalists.
pub fn tune(source: &Source, spec: Spec, options: &Options) -> Result<Tuned, Error> {
    let (doc, base_policy) = base(source, &spec);
    let seed = doc.get("seed").and_then(Value::as_integer).unwrap_or(0) as u64;
    let candidates = search::candidates(&spec);
    let name = |i: usize| format!("c{i:04}");
    let tables = (candidates.iter().enumerate())
        .map(|(i, c)| search::policy(&spec, &base_policy, c, &name(i)))
        .collect::<Result<Vec<Table>, String>>()
        .map_err(|why| {
            Error::Config(ConfigError::at(
                source,
                spec.search_span.clone(),
                "tune.search",
                why,
            ))
        })?;
    check_candidates(source, &spec, &doc, &tables, &candidates)?;
    let n = candidates.len();
    let finalists = (spec.finalists as usize).min(n);
    let rounds_planned = (n as f64 / finalists as f64).log2().ceil().max(1.0) as u64;
    let mut observed = vec![Observed::default(); n];
    let mut dropped = vec![None; n];
    let mut rounds = Vec::new();
    let mut alive: Vec<usize> = (0..n).collect();
    let standing = |obs: &Observed| Standing::of(&spec, |f| obs.estimate(f));
    for k in 0..rounds_planned {
        let replications = (spec.budget / (alive.len() as u64 * rounds_planned)).max(2);
        let round_seed = derived(seed, k);
        let policies = alive.iter().map(|&i| tables[i].clone()).collect();
        let ran = search::evaluate(
            source,
            &spec.search_span,
            &search::document(&doc, policies, round_seed, replications),
            options,
        )?;
        cancelled(options)?;
        for (&i, obs) in alive.iter().zip(ran) {
            observed[i].absorb(obs);
        }
        rounds.push(Round {
            seed: round_seed,
            replications,
            ran: alive.clone(),
        });
        alive.sort_by(|&x, &y| {
            standing(&observed[x])
                .order(&standing(&observed[y]))
                .then(x.cmp(&y))
        });
        let keep = match k + 1 == rounds_planned {
            true => finalists,
            false => alive.len().div_ceil(2).max(finalists),
        };
        // A hopeless candidate goes whatever its rank; one is kept if all are, for the
        // validation to report.
        let hopeful = alive
            .iter()
            .filter(|&&i| !standing(&observed[i]).hopeless)
            .count();
        let keep = keep.min(hopeful.max(1));
        for &i in &alive[keep..] {
            dropped[i] = Some(k as usize);
        }
        alive.truncate(keep);
    }
    let validation_seed = derived(seed, VALIDATION);
    let mut policies: Vec<Table> = alive.iter().map(|&i| tables[i].clone()).collect();
    policies.push(base_policy.clone());
    let mut ran = search::evaluate(
        source,
        &spec.search_span,
        &search::document(&doc, policies, validation_seed, spec.validation),
        options,
    )?;
    cancelled(options)?;
    let as_written = ran.pop().expect("the config's policy ran");
    let finalists: Vec<(usize, Observed)> = alive.into_iter().zip(ran).collect();
    let chosen = (finalists.iter())
        .filter(|(_, obs)| search::holds(&spec.constraints, |f| obs.estimate(f)))
        .filter(|(_, obs)| standing(obs).cost.is_finite())
        .min_by(|(x, a), (y, b)| standing(a).cost.total_cmp(&standing(b).cost).then(x.cmp(y)))
        .map(|(i, _)| *i);
    Ok(Tuned {
        spec,
        seed,
        candidates,
        observed,
        dropped,
        rounds,
        finalists,
        as_written,
        validation_seed,
        chosen,
    })
}

impl Tuned {
    /// The chosen candidate's validation runs.
    pub fn chosen_runs(&self) -> Option<&Observed> {
        let c = self.chosen?;
        self.finalists.iter().find(|(i, _)| *i == c).map(|(_, o)| o)
    }

    /// The searched keys with a candidate's values, as `key = value` pairs.
    pub fn settings(&self, candidate: usize) -> Vec<(String, String)> {
        (self.spec.keys.iter())
            .zip(&self.candidates[candidate].values)
            .map(|(k, v)| (k.path.clone(), spec::plain(v)))
            .collect()
    }

    /// A figure's estimate as `mean ± half-width`.
    pub fn shown(e: Estimate) -> String {
        match e.half_width.is_finite() {
            true => format!("{:.4} ± {:.4}", e.mean, e.half_width),
            false => format!("{:.4}", e.mean),
        }
    }
}
