//! `retrysim explore CONFIG --faults K`: every fault schedule, not a sample.
//!
//! A schedule is the fate of every attempt a run sends, in the order sent: delivered, or one
//! of the faults its tool can produce (a lost request, a server error, a lost reply after the
//! commit, a refusal, a failed connection, an error after the commit — each that the tool's
//! probabilities make possible). The explorer walks every schedule with at most K faults, depth
//! first, by running the configuration once per schedule with the fates chosen
//! ([`crate::sim::Choices`]): a run with faults at positions p₁ < … < p_m branches at every
//! later attempt it sent, into each fault its tool can produce, so each schedule is met exactly
//! once and memory holds one path (K choices), never the list of schedules.
//!
//! Everything else is fixed, so one schedule is one run: every latency at its median, the
//! config's seed for arrivals and jitter, one replication. Events at one tick keep the
//! engine's own order — a total order with a deterministic tie-break — which is the reduction
//! taken: the model's events at one tick come from one schedule, so another order of them is
//! not another schedule of faults.
//!
//! Each schedule is weighed by the probability of its fates under the tools' distributions;
//! the schedules explored add up to the probability of at most K faults among the attempts
//! sent, and the rest (beyond K) is stated as a bound.

pub mod invariant;
pub mod spec;
mod write;

use rayon::prelude::*;

use crate::config::{Change, Source};
use crate::error::Error;
use crate::experiment::Experiment;
use crate::metrics::IntentRecord;
use crate::model::{Fate, Latency, Tool};
use crate::sim::{self, Choices, Job};
use invariant::{Invariant, Violations};
pub use spec::Spec;
pub use write::{folder_name, replay};

/// Explores every configuration of `source` with `changes` made, as `spec` says, on
/// `threads` workers (the result is the same for any number), and writes the folder into a
/// staging folder under `root`.
pub fn into_folder(
    source: &Source,
    changes: &[Change],
    spec: &Spec,
    root: &std::path::Path,
    threads: Option<usize>,
) -> Result<(Experiment, Vec<Explored>, crate::output::Staging), Error> {
    let sweep = source.changed(changes)?;
    if sweep.len() != 1 || !sweep.axes.is_empty() {
        return Err(Error::Config(crate::config::ConfigError::at(
            source,
            0..0,
            "sweep",
            "a sweep has many points: explore one; pin every swept key with --set",
        )));
    }
    let exp = fixed(&sweep.base);
    crate::output::Staging::check_target(
        root,
        &folder_name(&exp.name),
        crate::output::Mark::Output,
    )?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .map_err(|e| Error::io("cannot start the workers")(std::io::Error::other(e)))?;
    let found: Vec<Explored> = pool.install(|| {
        (0..exp.policies.len())
            .map(|p| explore(&exp, p, spec.faults, &spec.invariants))
            .collect()
    });
    let staging = write::into_staging(&exp, source, spec, &found, root)?;
    Ok((exp, found, staging))
}

/// The fates a tool's attempt can meet, each with its probability: delivered first.
pub fn fates(tool: &Tool) -> Vec<(Fate, f64)> {
    let f = &tool.faults;
    let mut out = vec![(Fate::Delivered, 1.0 - f.total())];
    for (p, fate) in [
        (f.request_loss, Fate::LostRequest),
        (f.server_error, Fate::ServerError),
        (f.reply_loss, Fate::LostReply),
        (f.throttled, Fate::Throttled),
        (f.forbidden, Fate::Forbidden),
        (f.invalid, Fate::Invalid),
        (f.connect_failure, Fate::ConnectFailed),
        (f.error_after_commit, Fate::ErrorAfterCommit),
        (f.overloaded, Fate::Overloaded),
    ] {
        if p > 0.0 {
            out.push((fate, p));
        }
    }
    out
}

/// The experiment as explored: one replication, every latency at its median.
pub fn fixed(exp: &Experiment) -> Experiment {
    let mut exp = exp.clone();
    exp.replications = 1;
    let median = |l: &mut Latency| *l = Latency::Constant(l.quantile(0.5));
    for tool in &mut exp.tools {
        median(&mut tool.request_latency);
        median(&mut tool.service_time);
        median(&mut tool.reply_latency);
        for r in &mut tool.replicas {
            median(&mut r.service_time);
        }
    }
    exp
}

/// What one configuration's exploration found.
#[derive(Clone, Debug, Default)]
pub struct Explored {
    pub schedules: u64,
    /// The probability of the schedules explored: of at most K faults.
    pub explored: f64,
    /// Per invariant, in the order the explorer was given them.
    pub violations: Vec<Violations>,
    /// The expected attempts and duplicates per intent over the schedules explored, each
    /// schedule weighed by its probability (exact where `explored` is 1).
    pub attempts: f64,
    pub duplicates: f64,
}

/// One schedule run: its fates, the attempts it sent, its weight and what it ended as.
pub struct Walked {
    pub choices: Choices,
    pub weight: f64,
    pub records: Vec<IntentRecord>,
}

/// Explores configuration `policy` of `exp` (already [`fixed`]) to at most `faults` faults,
/// checking `invariants`; the same result on any number of threads: the branches of the first
/// fault are walked in parallel, each depth first, and gathered in order.
pub fn explore(
    exp: &Experiment,
    policy: usize,
    faults: usize,
    invariants: &[Invariant],
) -> Explored {
    let root = walk(exp, policy, Vec::new());
    let mut total = Explored {
        violations: vec![Violations::default(); invariants.len()],
        ..Explored::default()
    };
    absorb(&mut total, exp, policy, &root, invariants);
    if faults == 0 {
        return total;
    }
    let branches = children(exp, &root.choices, 0);
    let parts: Vec<Explored> = branches
        .into_par_iter()
        .map(|prefix| {
            let mut part = Explored {
                violations: vec![Violations::default(); invariants.len()],
                ..Explored::default()
            };
            depth_first(exp, policy, prefix, faults - 1, invariants, &mut part);
            part
        })
        .collect();
    for part in parts {
        merge(&mut total, part);
    }
    total
}

/// The schedules that add one fault to `choices` after its last one: at every attempt sent
/// from `from` on, each fault its tool can produce.
fn children(exp: &Experiment, choices: &Choices, from: usize) -> Vec<Vec<Fate>> {
    let mut out = Vec::new();
    for (k, sent) in choices.sent.iter().enumerate().skip(from) {
        let tool = &exp.tools[sent.tool];
        if tool.script.is_some() {
            continue;
        }
        for (fate, _) in fates(tool).into_iter().skip(1) {
            let mut prefix: Vec<Fate> = (0..k).map(|j| choices.fate(j)).collect();
            prefix.push(fate);
            out.push(prefix);
        }
    }
    out
}

fn depth_first(
    exp: &Experiment,
    policy: usize,
    prefix: Vec<Fate>,
    faults: usize,
    invariants: &[Invariant],
    into: &mut Explored,
) {
    let from = prefix.len();
    let walked = walk(exp, policy, prefix);
    absorb(into, exp, policy, &walked, invariants);
    if faults == 0 {
        return;
    }
    for child in children(exp, &walked.choices, from) {
        depth_first(exp, policy, child, faults - 1, invariants, into);
    }
}

/// Runs one schedule.
pub fn walk(exp: &Experiment, policy: usize, schedule: Vec<Fate>) -> Walked {
    let job = Job {
        point: 0,
        policy,
        replication: 0,
    };
    let mut records = Vec::new();
    let (_, choices) = sim::chosen(exp, job, Choices::new(schedule), |r, _| records.push(*r));
    let weight = (choices.sent.iter().enumerate())
        .map(|(k, sent)| {
            let tool = &exp.tools[sent.tool];
            if tool.script.is_some() {
                return 1.0;
            }
            let fate = choices.fate(k);
            fates(tool)
                .into_iter()
                .find(|(f, _)| *f == fate)
                .map_or(0.0, |(_, p)| p)
        })
        .product();
    Walked {
        choices,
        weight,
        records,
    }
}

/// Adds one schedule's weight, figures and verdicts.
fn absorb(
    into: &mut Explored,
    exp: &Experiment,
    policy: usize,
    w: &Walked,
    invariants: &[Invariant],
) {
    into.schedules += 1;
    into.explored += w.weight;
    let n = w.records.len().max(1) as f64;
    let attempts: u32 = w.records.iter().map(|r| r.attempts).sum();
    let duplicates: u32 = w.records.iter().map(|r| r.effects.saturating_sub(1)).sum();
    into.attempts += w.weight * f64::from(attempts) / n;
    into.duplicates += w.weight * f64::from(duplicates) / n;
    let faults = w
        .choices
        .fates
        .iter()
        .filter(|&&f| f != Fate::Delivered)
        .count();
    for (v, inv) in into.violations.iter_mut().zip(invariants) {
        if let Some(intent) = inv.violated(exp, &exp.policies[policy], &w.records) {
            v.add(w, faults, intent);
        }
    }
}

fn merge(into: &mut Explored, part: Explored) {
    into.schedules += part.schedules;
    into.explored += part.explored;
    into.attempts += part.attempts;
    into.duplicates += part.duplicates;
    for (v, p) in into.violations.iter_mut().zip(part.violations) {
        v.merge(p);
    }
}
