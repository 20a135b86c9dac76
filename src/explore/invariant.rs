//! The properties every schedule is held to, each named, each a pure function of a run's
//! intents.

use super::Walked;
use crate::experiment::Experiment;
use crate::metrics::{BusinessState, IntentRecord, Status, StopReason, reservation};
use crate::model::Choice;
use crate::model::ToolKind;
use crate::policy::Policy;
use crate::sim::Point;

/// A property of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invariant {
    /// At most one effect per call on each write tool: "exactly one order", whatever the tool
    /// is called, keyed or not.
    OneEffect,
    /// Every intent ends — confirmed, failed (a ghost included, as the model reports it), or
    /// flagged `needs_reconciliation` — never still waiting when the run ends.
    EndsKnown,
    /// No call is reported a success while its write is unknown.
    NoFalseSuccess,
    /// No call makes more attempts than its policy allows each worker that held it, or runs
    /// past its deadline.
    WithinLimits,
    /// No money a call reserved is released while an effect of the call may exist (the same
    /// money spendable twice), at a tool that reserves. Off by default.
    NoWrongRelease,
    /// Every call that stops, stops for one of these reasons (the user's list).
    StopsFor(Vec<StopReason>),
}

impl Invariant {
    /// The invariants on by default, in the order `explore.csv` lists them.
    pub const DEFAULT: [&'static str; 4] = [
        "one_effect",
        "ends_known",
        "no_false_success",
        "within_limits",
    ];

    /// Every invariant a config may turn on or off by name, in the order `explore.csv` lists
    /// them.
    pub const NAMED: [&'static str; 5] = [
        "one_effect",
        "ends_known",
        "no_false_success",
        "within_limits",
        "no_wrong_release",
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Invariant::OneEffect => "one_effect",
            Invariant::EndsKnown => "ends_known",
            Invariant::NoFalseSuccess => "no_false_success",
            Invariant::WithinLimits => "within_limits",
            Invariant::NoWrongRelease => "no_wrong_release",
            Invariant::StopsFor(_) => "stops_for",
        }
    }

    /// The invariant named `name` (not `stops_for`, which takes its list).
    pub fn named(name: &str) -> Option<Invariant> {
        Some(match name {
            "one_effect" => Invariant::OneEffect,
            "ends_known" => Invariant::EndsKnown,
            "no_false_success" => Invariant::NoFalseSuccess,
            "within_limits" => Invariant::WithinLimits,
            "no_wrong_release" => Invariant::NoWrongRelease,
            _ => return None,
        })
    }

    /// The first intent of the run that breaks it, if any.
    pub fn violated(
        &self,
        exp: &Experiment,
        policy: &Policy,
        records: &[IntentRecord],
    ) -> Option<u64> {
        let write = |r: &IntentRecord| exp.tools[r.tool].server.kind == ToolKind::Write;
        let broken = |r: &&IntentRecord| match self {
            Invariant::OneEffect => write(r) && r.effects > 1,
            Invariant::EndsKnown => r.status == Status::Stopped(StopReason::Hung),
            Invariant::NoFalseSuccess => {
                write(r)
                    && r.status == Status::Succeeded
                    && r.business_state == BusinessState::Unknown
            }
            Invariant::WithinLimits => {
                // Nested layers multiply their caps; the innermost's alone bounds nothing.
                let rule = policy.on_edge(r.edge);
                let cap = rule
                    .rule
                    .retry
                    .max_attempts
                    .cap()
                    .filter(|_| rule.rule.layers.is_none());
                // Each worker that held the call has its own count (a replacement starts
                // afresh), and a stalled worker's late send is its own.
                let workers = r.takeovers + 1;
                let attempts = r.attempts - r.hedges - r.zombie_sends;
                let cap = cap.map(|n| n.saturating_mul(workers));
                let late = policy
                    .time
                    .limits
                    .deadline
                    .is_some_and(|d| r.end.0 > r.start.0 + d.0);
                cap.is_some_and(|n| attempts > n) || late
            }
            Invariant::NoWrongRelease => {
                let amount = exp.tools[r.tool].reserve;
                let release = policy.on_edge(r.edge).agent.release;
                let ending = (r.status, r.business_state, r.effects);
                amount > 0 && reservation::settle(amount, ending, release).released_wrongly > 0
            }
            Invariant::StopsFor(allowed) => match r.status {
                Status::Stopped(reason) => !allowed.contains(&reason),
                Status::Succeeded => false,
            },
        };
        records.iter().find(broken).map(|r| r.intent)
    }
}

/// The schedules that broke one invariant, and the smallest of them.
#[derive(Clone, Debug, Default)]
pub struct Violations {
    pub schedules: u64,
    /// Their probability, each weighed by its fates'.
    pub probability: f64,
    /// The minimal counterexample: fewest faults, then fewest attempts sent, then the first
    /// schedule in order; with the intent it broke the invariant in.
    pub minimal: Option<Counterexample>,
}

/// A schedule that breaks an invariant: its faults, the attempts the intent that broke it
/// sent, and the fates in the order sent (up to the last fault).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counterexample {
    pub faults: usize,
    pub events: usize,
    pub fates: Vec<Choice>,
    pub intent: u64,
}

impl Counterexample {
    fn key(&self) -> (usize, usize, Vec<&'static str>) {
        (
            self.faults,
            self.events,
            self.fates.iter().map(|f| f.name()).collect(),
        )
    }
}

impl Violations {
    pub fn add(&mut self, w: &Walked, faults: usize, intent: u64) {
        self.schedules += 1;
        self.probability += w.weight;
        // Its events are the attempts and lookups the intent that broke it met (not the crash
        // points before its sends).
        let events = (w.choices.met.iter())
            .filter(|p| p.intent() == intent && !matches!(p, Point::Crash { .. }))
            .count();
        let mut fates: Vec<Choice> = (0..w.choices.met.len())
            .map(|k| w.choices.choice(k))
            .collect();
        while fates.last() == Some(&Choice::Default) {
            fates.pop();
        }
        let found = Counterexample {
            faults,
            events,
            fates,
            intent,
        };
        self.keep_smaller(found);
    }

    fn keep_smaller(&mut self, found: Counterexample) {
        if self.minimal.as_ref().is_none_or(|m| found.key() < m.key()) {
            self.minimal = Some(found);
        }
    }

    pub fn merge(&mut self, other: Violations) {
        self.schedules += other.schedules;
        self.probability += other.probability;
        if let Some(m) = other.minimal {
            self.keep_smaller(m);
        }
    }
}
