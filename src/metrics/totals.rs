//! Running totals of one run (one configuration, one replication), fed one intent at a time.

use super::{
    BusinessState, Count, IntentRecord, Outcome, Quantiles, Sample, Series, Status, StopReason,
    Sums,
};
use crate::model::price::{BillTotals, IntentBill};
use crate::time::Tick;
use serde::{Deserialize, Serialize};

/// The per-intent quantities retrysim estimates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    Attempts,
    Effects,
    Duplicates,
    /// 1 if the intent succeeded, else 0: its mean is the success rate.
    Success,
    /// 1 if the client saw failure but an effect happened, else 0.
    Ghost,
    /// Ticks from the intent's first dispatch to its end.
    Completion,
    /// Conditional writes that reached a versioned record: the work a client put on it.
    Writes,
}

impl Measure {
    pub const ALL: [Measure; 7] = [
        Measure::Attempts,
        Measure::Effects,
        Measure::Duplicates,
        Measure::Success,
        Measure::Ghost,
        Measure::Completion,
        Measure::Writes,
    ];

    /// The measure as tables name it.
    pub fn name(self) -> &'static str {
        match self {
            Measure::Attempts => "attempts",
            Measure::Effects => "effects",
            Measure::Duplicates => "duplicates",
            Measure::Success => "success",
            Measure::Ghost => "ghosts",
            Measure::Completion => "completion",
            Measure::Writes => "writes",
        }
    }

    fn of(self, r: &IntentRecord) -> u64 {
        match self {
            Measure::Attempts => r.attempts.into(),
            Measure::Effects => r.effects.into(),
            Measure::Duplicates => r.duplicates().into(),
            Measure::Success => (r.status == Status::Succeeded).into(),
            Measure::Ghost => r.is_ghost().into(),
            Measure::Completion => r.end.since(r.start).0,
            Measure::Writes => r.writes.into(),
        }
    }
}

/// Everything one run keeps: a few numbers per measure and a fixed-size histogram of completion
/// times, whatever the number of intents.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    measures: [Sums; Measure::ALL.len()],
    stops: [u64; StopReason::ALL.len()],
    pub tasks: u64,
    pub tasks_succeeded: u64,
    /// When the last intent to succeed did: the makespan of a closed population.
    pub last_success: Tick,
    /// Attempts abandoned at their timeout.
    pub timeouts: u64,
    /// Calls the circuit breaker refused.
    pub short_circuited: u64,
    /// Reconciliation lookups made.
    pub lookups: u64,
    /// Hedges sent.
    pub hedges: u64,
    /// Ticks from each intent's start to its end.
    pub completion: Quantiles,
    /// What happened at each tool over time, where the output asks for it. One run's own:
    /// runs are gathered by [`super::SeriesStats`], not merged here.
    pub series: Option<Series>,
    /// What happened at each tool, by tool index.
    pub tools: Vec<ToolTotals>,
    /// What happened at each replica of each tool, by tool and replica index (kept only for
    /// tools a balancer has sent to).
    pub replicas: Vec<Vec<ReplicaTotals>>,
    /// What went over each edge of the call graph, by edge index, kept only where a tool is a
    /// service: the task's calls on the top edges, and every call a service made.
    pub edges: Vec<ToolTotals>,
    /// What the crashes of the workers holding calls did.
    #[serde(default)]
    pub crashes: CrashTotals,
    /// Where the money reserved for calls went.
    #[serde(default)]
    pub reservations: super::reservation::ReservationTotals,
}

/// What the crashes of the workers holding one configuration's calls did, over its calls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CrashTotals {
    /// Crashes of a worker holding a call.
    pub crashes: u64,
    /// Calls a replacement took over.
    pub takeovers: u64,
    /// Commits a takeover caused (see [`IntentRecord::takeover_duplicates`]).
    pub takeover_duplicates: u64,
    /// Attempts the replacements sent.
    pub redone: u64,
    /// Calls that ended with their outcome unknown to the agent: an operator must find out.
    pub uncertain: u64,
    /// Calls that crashed at least once, and of those the ones that succeeded.
    pub crashed_calls: u64,
    pub crashed_succeeded: u64,
    /// Late sends of zombies (workers that woke from a stall past their lease), and writes a
    /// fencing server refused.
    pub zombie_sends: u64,
    pub fenced: u64,
    /// What the replacements' attempts were billed (picodollars) and their tokens, at priced
    /// tools: the redone work's price.
    pub redone_cost: u128,
    pub redone_tokens: u128,
    /// Leases that lapsed under a living worker, and fresh holds the admission rule made.
    pub lapses: u64,
    pub held_afresh: u64,
    /// Calls whose item the work queue gave up, its deliveries spent.
    pub dead_lettered: u64,
    /// Ticks from each crashed call's first crash to its end, summed: the time to resolution.
    pub crash_to_end: u128,
}

impl CrashTotals {
    fn add(&mut self, r: &IntentRecord) {
        self.crashes += u64::from(r.crashes);
        self.takeovers += u64::from(r.takeovers);
        self.takeover_duplicates += u64::from(r.takeover_duplicates);
        self.redone += u64::from(r.redone);
        self.redone_cost = self.redone_cost.saturating_add(r.bill.redone);
        self.redone_tokens = self.redone_tokens.saturating_add(r.bill.redone_tokens);
        self.uncertain += u64::from(r.business_state == BusinessState::Unknown);
        self.zombie_sends += u64::from(r.zombie_sends);
        self.fenced += u64::from(r.fenced);
        self.lapses += u64::from(r.lapses);
        self.held_afresh += u64::from(r.held_afresh);
        self.dead_lettered += u64::from(r.dead_lettered);
        if let Some(crash) = r.first_crash {
            self.crash_to_end += u128::from(r.end.since(crash).0);
        }
        if r.crashes > 0 {
            self.crashed_calls += 1;
            self.crashed_succeeded += u64::from(r.status == Status::Succeeded);
        }
    }

    fn merge(&mut self, other: &CrashTotals) {
        self.crashes += other.crashes;
        self.takeovers += other.takeovers;
        self.takeover_duplicates += other.takeover_duplicates;
        self.redone += other.redone;
        self.redone_cost = self.redone_cost.saturating_add(other.redone_cost);
        self.redone_tokens = self.redone_tokens.saturating_add(other.redone_tokens);
        self.uncertain += other.uncertain;
        self.crashed_calls += other.crashed_calls;
        self.crashed_succeeded += other.crashed_succeeded;
        self.zombie_sends += other.zombie_sends;
        self.fenced += other.fenced;
        self.lapses += other.lapses;
        self.held_afresh += other.held_afresh;
        self.dead_lettered += other.dead_lettered;
        self.crash_to_end += other.crash_to_end;
    }
}

/// What one configuration's calls did at one replica of a tool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplicaTotals {
    /// Attempts the balancer sent it.
    pub calls: u64,
    /// Of those, the ones that reached it while it was down.
    pub calls_while_down: u64,
    /// Times outlier detection ejected it.
    pub ejections: u64,
    /// Calls bound for it that the breaker refused: counted only under a keyed balancer,
    /// the one where a call's replica is known before the gates are asked.
    pub short_circuited: u64,
}

/// What one configuration's calls did at one tool.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolTotals {
    pub intents: u64,
    /// Attempts dispatched.
    pub calls: u64,
    pub short_circuited: u64,
    pub effects: u64,
    pub duplicates: u64,
    /// Intents that succeeded.
    pub successes: u64,
    /// Calls that reached the tool while it was down.
    pub calls_while_down: u64,
    /// On a versioned record: reads and conditional writes that reached it.
    pub reads: u64,
    pub writes: u64,
    /// Attempts whose work at the server ended when no one waited for it any more.
    pub orphaned: u64,
    /// Attempts by how they ended, in the order of [`Outcome::NAMES`].
    pub outcomes: [u64; Outcome::NAMES.len()],
    /// What its intents were billed.
    pub bill: BillTotals,
}

impl ToolTotals {
    /// Counts one intent, with its attempts by how they ended.
    fn count(&mut self, r: &IntentRecord, outcomes: &[u32; Outcome::NAMES.len()]) {
        self.intents += 1;
        self.calls += u64::from(r.attempts);
        self.short_circuited += u64::from(r.short_circuited);
        self.effects += u64::from(r.effects);
        self.duplicates += u64::from(r.duplicates());
        self.successes += u64::from(r.status == Status::Succeeded);
        self.calls_while_down += u64::from(r.calls_while_down);
        self.reads += u64::from(r.reads);
        self.writes += u64::from(r.writes);
        // Most runs price nothing: their bills are all zero.
        if r.bill != IntentBill::default() {
            self.bill.add(&r.bill);
        }
        for (total, &n) in self.outcomes.iter_mut().zip(outcomes) {
            *total += u64::from(n);
        }
    }

    /// Adds another run's totals, for sums over replications.
    pub fn merge(&mut self, other: &ToolTotals) {
        self.intents += other.intents;
        self.calls += other.calls;
        self.short_circuited += other.short_circuited;
        self.effects += other.effects;
        self.duplicates += other.duplicates;
        self.successes += other.successes;
        self.calls_while_down += other.calls_while_down;
        self.reads += other.reads;
        self.writes += other.writes;
        self.orphaned += other.orphaned;
        self.bill.add(&other.bill);
        for (a, b) in self.outcomes.iter_mut().zip(other.outcomes) {
            *a += b;
        }
    }
}

impl Totals {
    pub fn add(&mut self, r: &IntentRecord, outcomes: &[u32; Outcome::NAMES.len()]) {
        self.measure(r);
        self.tool(r.tool).count(r, outcomes);
    }

    /// Counts a task's call that fell back: one intent, the chain of its intents (each with
    /// its place in the chain) made one by [`IntentRecord::then`], each intent counted at its
    /// own tool.
    pub fn add_call(&mut self, chain: &[(u8, IntentRecord, [u32; Outcome::NAMES.len()])]) {
        let mut parts: Vec<_> = chain.iter().collect();
        parts.sort_by_key(|p| p.0);
        let call = (parts.iter().skip(1)).fold(parts[0].1, |call, p| call.then(&p.1));
        self.measure(&call);
        for (_, r, outcomes) in parts {
            self.tool(r.tool).count(r, outcomes);
        }
    }

    fn tool(&mut self, tool: usize) -> &mut ToolTotals {
        if self.tools.len() <= tool {
            self.tools.resize_with(tool + 1, ToolTotals::default);
        }
        &mut self.tools[tool]
    }

    /// The measures of one task's call, over every tool it met.
    fn measure(&mut self, r: &IntentRecord) {
        for m in Measure::ALL {
            self.measures[m as usize].push(m.of(r));
        }
        if let Some(reason) = r.status.stop_reason() {
            self.stops[reason as usize] += 1;
        }
        self.timeouts += u64::from(r.timeouts);
        self.short_circuited += u64::from(r.short_circuited);
        self.lookups += u64::from(r.lookups);
        self.hedges += u64::from(r.hedges);
        self.completion.record(r.end.since(r.start));
        self.crashes.add(r);
        if r.status == Status::Succeeded {
            self.last_success = self.last_success.max(r.end);
        }
    }

    /// Counts an attempt over edge `edge` whose work ended when no one waited for it.
    pub fn orphan(&mut self, edge: usize) {
        if self.edges.len() <= edge {
            self.edges.resize_with(edge + 1, ToolTotals::default);
        }
        self.edges[edge].orphaned += 1;
    }

    /// Counts an effect on edge `edge` at a call site where another intent had committed
    /// before: a duplicate at that layer that no one intent's count shows.
    pub fn edge_duplicate(&mut self, edge: usize) {
        if self.edges.len() <= edge {
            self.edges.resize_with(edge + 1, ToolTotals::default);
        }
        self.edges[edge].duplicates += 1;
    }

    /// Counts an intent on edge `edge` of the call graph.
    pub fn add_edge(
        &mut self,
        edge: usize,
        r: &IntentRecord,
        outcomes: &[u32; Outcome::NAMES.len()],
    ) {
        if self.edges.len() <= edge {
            self.edges.resize_with(edge + 1, ToolTotals::default);
        }
        self.edges[edge].count(r, outcomes);
    }

    /// Adds another run's totals: counts and sums exactly, histograms bucket by bucket, so
    /// totals over replications do not depend on the order they are added in.
    pub fn merge(&mut self, other: &Totals) {
        for (mine, theirs) in self.measures.iter_mut().zip(&other.measures) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.stops.iter_mut().zip(other.stops) {
            *mine += theirs;
        }
        self.tasks += other.tasks;
        self.tasks_succeeded += other.tasks_succeeded;
        self.last_success = self.last_success.max(other.last_success);
        self.timeouts += other.timeouts;
        self.short_circuited += other.short_circuited;
        self.lookups += other.lookups;
        self.hedges += other.hedges;
        self.completion.merge(&other.completion);
        self.crashes.merge(&other.crashes);
        self.reservations.merge(&other.reservations);
        if self.tools.len() < other.tools.len() {
            self.tools
                .resize_with(other.tools.len(), ToolTotals::default);
        }
        for (mine, theirs) in self.tools.iter_mut().zip(&other.tools) {
            mine.merge(theirs);
        }
        if self.edges.len() < other.edges.len() {
            self.edges
                .resize_with(other.edges.len(), ToolTotals::default);
        }
        for (mine, theirs) in self.edges.iter_mut().zip(&other.edges) {
            mine.merge(theirs);
        }
        for (t, theirs) in other.replicas.iter().enumerate() {
            for (r, other) in theirs.iter().enumerate() {
                let mine = self.replica(t, r);
                mine.calls += other.calls;
                mine.calls_while_down += other.calls_while_down;
                mine.ejections += other.ejections;
                mine.short_circuited += other.short_circuited;
            }
        }
    }

    /// Replica `replica` of tool `tool`'s totals, kept from its first call on.
    pub fn replica(&mut self, tool: usize, replica: usize) -> &mut ReplicaTotals {
        if self.replicas.len() <= tool {
            self.replicas.resize_with(tool + 1, Vec::new);
        }
        let replicas = &mut self.replicas[tool];
        if replicas.len() <= replica {
            replicas.resize(replica + 1, ReplicaTotals::default());
        }
        &mut replicas[replica]
    }

    /// Empty totals that keep `series`, if any.
    pub fn keeping(series: Option<Series>) -> Self {
        Totals {
            series,
            ..Totals::default()
        }
    }

    /// Counts an event in the time series, if the run keeps one.
    pub fn count(&mut self, tool: usize, at: Tick, count: Count) {
        if let Some(series) = &mut self.series {
            series.count(tool, at, count);
        }
    }

    /// Counts `count` at `replica` of `tool` too, where the tool has replicas.
    pub fn count_replica(&mut self, (tool, replica): (usize, usize), at: Tick, count: Count) {
        if let Some(series) = &mut self.series {
            series.count(tool, at, count);
            series.replica_count(tool, replica, at, count);
        }
    }

    /// The task's calls recorded, a call that fell back counted once.
    pub fn calls(&self) -> u64 {
        self.measures[0].count()
    }

    pub fn get(&self, m: Measure) -> &Sums {
        &self.measures[m as usize]
    }

    /// Intents recorded so far.
    pub fn intents(&self) -> u64 {
        self.get(Measure::Attempts).count()
    }

    /// How many intents stopped for `reason`.
    pub fn stopped(&self, reason: StopReason) -> u64 {
        self.stops[reason as usize]
    }
}
