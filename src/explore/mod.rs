//! `retrysim explore CONFIG --faults K`: every fault schedule, not a sample.
//!
//! A schedule is the fate of every attempt a run sends, in the order sent: delivered, or one
//! of the faults its tool can produce (a lost request, a server error, a lost reply after the
//! commit, a refusal, a failed connection, an error after the commit — each that the tool's
//! probabilities make possible); and where workers crash at a rate, whether the worker crashes
//! before each send or with it in flight (see [`crate::sim::Choices`]). The explorer walks every schedule with at most K faults, depth
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

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use crate::config::{Change, Source};
use crate::error::Error;
use crate::experiment::Experiment;
use crate::metrics::IntentRecord;
use crate::model::Choice;
use crate::model::{Fate, Latency, Tool};
use crate::sim::{self, Choices, Job, Point};
use invariant::{Invariant, Violations};
pub use spec::Spec;
pub use write::{folder_name, replay};

/// How an exploration goes: its threads, a flag set from outside (Ctrl-C) that stops it, and a
/// count of the schedules walked, for a progress display.
#[derive(Clone, Copy, Default)]
pub struct Pace<'a> {
    pub threads: Option<usize>,
    pub cancel: Option<&'a AtomicBool>,
    pub walked: Option<&'a AtomicU64>,
}

impl Pace<'_> {
    fn cancelled(&self) -> bool {
        self.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    }

    fn walked_one(&self) {
        if let Some(w) = self.walked {
            w.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// The most calls an exploration may make, over every schedule of every configuration (each
/// schedule is a run): past it, refused before any schedule is run. About a minute's work.
pub const MOST_EXPLORED_CALLS: f64 = 5e7;

/// Explores every configuration of `source` with `changes` made, as `spec` says, on
/// `threads` workers (the result is the same for any number), and writes the folder into a
/// staging folder under `root`.
pub fn into_folder(
    source: &Source,
    changes: &[Change],
    spec: &Spec,
    root: &std::path::Path,
    pace: &Pace,
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
    if let Some(why) = unsupported(&sweep.base) {
        return Err(Error::Config(
            crate::config::ConfigError::at(source, 0..0, "explore", format!("cannot explore: {why}"))
                .allowed("tools without a model, replicas' own faults, bursts or random network legs under a timeout"),
        ));
    }
    let mut base = sweep.base.clone();
    if let Some(tasks) = spec.tasks {
        base.workload.tasks = Some(tasks);
    }
    let e = fixed(&base);
    crate::output::Staging::check_target(
        root,
        &folder_name(&e.exp.name),
        crate::output::Mark::Output,
    )?;
    // A run's size is known before any is made: one too large is refused before the first.
    let per_run = e.exp.most_calls_per_run() as f64;
    let policies = e.exp.policies.len() as f64;
    if per_run * policies > MOST_EXPLORED_CALLS {
        return Err(too_much(source, per_run, policies, spec.faults));
    }
    let mut work = 0.0;
    for p in 0..e.exp.policies.len() {
        let least = schedules_at_least(&e, p, spec.faults);
        work += least * per_run;
        if work > MOST_EXPLORED_CALLS {
            return Err(too_much(source, per_run, work / per_run, spec.faults));
        }
        if least > MOST_SCHEDULES {
            let message = format!(
                "configuration \"{}\" to {} fault(s) has at least {least:.3e} schedules, more \
                 than the {MOST_SCHEDULES:.0e} the explorer walks (each is a run)",
                e.exp.policies[p].name, spec.faults
            );
            return Err(Error::Config(
                crate::config::ConfigError::at(source, 0..0, "explore.faults", message).allowed(
                    "fewer faults (--faults), or a smaller workload (--set workload.tasks=2)",
                ),
            ));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(pace.threads.unwrap_or(0))
        .build()
        .map_err(|e| Error::io("cannot start the workers")(std::io::Error::other(e)))?;
    let found: Vec<Explored> = pool.install(|| {
        (0..e.exp.policies.len())
            .map(|p| explore(&e, p, spec.faults, &spec.invariants, pace))
            .collect()
    });
    if pace.cancelled() {
        return Err(Error::Io {
            doing: "exploring".into(),
            source: std::io::Error::new(std::io::ErrorKind::Interrupted, "interrupted"),
        });
    }
    let staging = write::into_staging(&e.exp, source, spec, &found, root)?;
    Ok((e.exp, found, staging))
}

/// The refusal of an exploration past [`MOST_EXPLORED_CALLS`]: `runs` schedules (at least) of
/// `per_run` calls each.
fn too_much(source: &Source, per_run: f64, runs: f64, faults: usize) -> Error {
    let message = format!(
        "exploring to {faults} fault(s) runs at least {runs:.3e} schedules of {per_run:.0} calls \
         each, {:.3e} calls in all, more than the {MOST_EXPLORED_CALLS:.0e} an exploration makes",
        runs * per_run
    );
    Error::Config(
        crate::config::ConfigError::at(source, 0..0, "explore.faults", message)
            .allowed("fewer faults (--faults), or a smaller workload (--set workload.tasks=2)"),
    )
}

/// The most schedules an exploration walks: past it, refused before any is run.
pub const MOST_SCHEDULES: f64 = 5e6;

/// A lower bound on the schedules of configuration `policy` to `faults` faults, from its
/// fault-free run: choosing j of its n points and one of their non-default choices, each.
/// (Faults make more attempts, so there are more.)
pub fn schedules_at_least(e: &Explorable, policy: usize, faults: usize) -> f64 {
    let root = walk(e, policy, Vec::new());
    // ways[j]: the schedules with faults at j of the run's points, each point offering its
    // own number of faults.
    let mut ways = vec![0.0; faults + 1];
    ways[0] = 1.0;
    for &p in &root.choices.met {
        let m = choices(&e.original, p).len().saturating_sub(1) as f64;
        for j in (1..=faults).rev() {
            ways[j] += ways[j - 1] * m;
        }
    }
    ways.iter().sum()
}

/// Why the explorer cannot walk `exp` exactly, if it cannot: what it would otherwise weigh
/// or fix wrongly.
pub fn unsupported(exp: &Experiment) -> Option<String> {
    for t in &exp.tools {
        if t.provider.is_some() {
            return Some(format!(
                "tool \"{}\" is a model, whose broken streams the explorer does not walk",
                t.name
            ));
        }
        if !t.one_fault_table() {
            return Some(format!(
                "tool \"{}\" draws its faults from more than one table (replicas with faults of their own, bursts, or a recorded health), which the explorer does not weigh",
                t.name
            ));
        }
    }
    let timed = exp
        .policies
        .iter()
        .any(|p| p.time.timeout != crate::policy::Wait::None);
    if let Some(t) = exp
        .tools
        .iter()
        .find(|t| timed && t.times_out(crate::time::Tick(1)).is_none())
    {
        return Some(format!(
            "tool \"{}\" has random network legs, so a timeout's late replies cannot be weighed exactly",
            t.name
        ));
    }
    None
}

/// The faults a tool's attempt can meet, each with its probability.
pub fn faults(tool: &Tool) -> Vec<(Fate, f64)> {
    (tool.faults.stretches().into_iter())
        .filter(|(p, _)| *p > 0.0)
        .map(|(p, fate)| (fate, p))
        .collect()
}

/// Every choice at `point`, each with its probability under the tools as configured
/// (`original`, their latencies as drawn), the default first: at an attempt, delivered on
/// time, each fault, and a late reply where its timer can expire first (P(round trip ≥ wait),
/// read where the tool's network legs are constant); at a lookup, an answer or a failure; at
/// a crash point, the worker living on, or crashing in the stretch before the send or in the
/// attempt's wait, each the chance of a crash at the workers' rate in that time.
pub fn choices(original: &[Tool], point: Point) -> Vec<(Choice, f64)> {
    let tool = &original[point.tool()];
    match point {
        Point::Attempt { wait, .. } => {
            let delivered = 1.0 - tool.faults.total();
            let late = wait.and_then(|w| tool.times_out(w)).unwrap_or(0.0);
            let mut out = vec![(Choice::Default, delivered * (1.0 - late))];
            out.extend(faults(tool).into_iter().map(|(f, p)| (Choice::Fate(f), p)));
            if late > 0.0 {
                out.push((Choice::Late, delivered * late));
            }
            out
        }
        Point::Lookup { .. } => {
            let fails = tool.lookup.failure;
            let mut out = vec![(Choice::Default, 1.0 - fails)];
            if fails > 0.0 {
                out.push((Choice::LookupFails, fails));
            }
            out
        }
        Point::Crash {
            before,
            during,
            mean_uptime,
            ..
        } => {
            let lives = |t: crate::time::Tick| libm::exp(-(t.0 as f64) / mean_uptime.0 as f64);
            let (before, during) = (lives(before), lives(during));
            let mut out = vec![(Choice::Default, before * during)];
            out.extend(
                [
                    (Choice::CrashBeforeSend, 1.0 - before),
                    (Choice::CrashInFlight, before * (1.0 - during)),
                ]
                .into_iter()
                .filter(|(_, p)| *p > 0.0),
            );
            out
        }
    }
}

/// An experiment as explored: one replication, every latency at its median; and its tools as
/// configured, which weigh each choice.
#[derive(Clone, Debug)]
pub struct Explorable {
    pub exp: Experiment,
    pub original: Vec<Tool>,
}

/// `exp` made explorable.
pub fn fixed(exp: &Experiment) -> Explorable {
    let original = exp.tools.clone();
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
    Explorable { exp, original }
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

impl Explored {
    /// The probability of the schedules beyond the bound, to the twelve decimals
    /// `explore.csv` writes: what is left of 1 by rounding is no probability.
    pub fn beyond(&self) -> f64 {
        libm::round((1.0 - self.explored).max(0.0) * 1e12) / 1e12
    }
}

/// One schedule run: its choices, the points it met, its weight and what it ended as.
pub struct Walked {
    pub choices: Choices,
    pub weight: f64,
    pub records: Vec<IntentRecord>,
}

/// Explores configuration `policy` of `e` to at most `faults` faults, checking `invariants`;
/// the same result on any number of threads: the branches of the first fault are walked in
/// parallel, each depth first, and gathered in order.
pub fn explore(
    e: &Explorable,
    policy: usize,
    faults: usize,
    invariants: &[Invariant],
    pace: &Pace,
) -> Explored {
    let empty = || Explored {
        violations: vec![Violations::default(); invariants.len()],
        ..Explored::default()
    };
    let root = walk(e, policy, Vec::new());
    let mut total = empty();
    absorb(&mut total, e, policy, &root, invariants);
    pace.walked_one();
    if faults == 0 {
        return total;
    }
    let parts: Vec<Explored> = children(e, &root.choices, 0)
        .into_par_iter()
        .map(|prefix| {
            let mut part = empty();
            depth_first(e, policy, prefix, faults - 1, invariants, &mut part, pace);
            part
        })
        .collect();
    for part in parts {
        merge(&mut total, part);
    }
    total
}

/// The schedules that add one fault to `choices` after its last one: at every point met from
/// `from` on, each choice but the default.
fn children(e: &Explorable, choices: &Choices, from: usize) -> Vec<Vec<Choice>> {
    let mut out = Vec::new();
    for (k, &point) in choices.met.iter().enumerate().skip(from) {
        for (choice, _) in self::choices(&e.original, point).into_iter().skip(1) {
            let mut prefix: Vec<Choice> = (0..k).map(|j| choices.choice(j)).collect();
            prefix.push(choice);
            out.push(prefix);
        }
    }
    out
}

fn depth_first(
    e: &Explorable,
    policy: usize,
    prefix: Vec<Choice>,
    faults: usize,
    invariants: &[Invariant],
    into: &mut Explored,
    pace: &Pace,
) {
    if pace.cancelled() {
        return;
    }
    let from = prefix.len();
    let walked = walk(e, policy, prefix);
    absorb(into, e, policy, &walked, invariants);
    pace.walked_one();
    if faults == 0 {
        return;
    }
    for child in children(e, &walked.choices, from) {
        depth_first(e, policy, child, faults - 1, invariants, into, pace);
    }
}

/// Runs one schedule.
pub fn walk(e: &Explorable, policy: usize, schedule: Vec<Choice>) -> Walked {
    let job = Job {
        point: 0,
        policy,
        replication: 0,
    };
    let mut records = Vec::new();
    let (_, choices) = sim::chosen(&e.exp, job, Choices::new(schedule), |r, _| records.push(*r));
    let weight = (choices.met.iter().enumerate())
        .map(|(k, &point)| {
            let choice = choices.choice(k);
            let all = self::choices(&e.original, point);
            all.into_iter()
                .find(|(c, _)| *c == choice)
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
    e: &Explorable,
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
    let faults = w.choices.made.iter().filter(|c| c.is_fault()).count();
    for (v, inv) in into.violations.iter_mut().zip(invariants) {
        if let Some(intent) = inv.violated(&e.exp, &e.exp.policies[policy], &w.records) {
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
