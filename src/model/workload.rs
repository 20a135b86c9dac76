//! The workload: how many tasks (or for how long they arrive), which tools each task calls in
//! order, when tasks arrive, and how many clients serve them.

use super::schedule::RateSchedule;
use crate::time::Tick;
use crate::variate::unit_open_low;

/// When tasks arrive.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrival {
    /// Every task is there at tick 0.
    Batch,
    /// A Poisson stream: exponential gaps with this mean, in ticks.
    Poisson { mean_gap: f64 },
    /// A Poisson stream whose rate follows a schedule.
    Scheduled(RateSchedule),
    /// Arrivals that happened, replayed at their times in order: a trace's first attempts as
    /// `retrysim calibrate --incident` wrote them, or a real client's operations as `retrysim
    /// endpoint` recorded them, so a run meets its tools' limits, outages and bursts when the
    /// recorded traffic did.
    Recorded(Recorded),
}

/// Recorded arrival times, sorted, and the file they came from (empty where none did).
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub file: String,
    pub times: std::sync::Arc<[Tick]>,
}

impl Arrival {
    /// When the task after the `arrived` that came (the last at `now`) arrives, from one word
    /// of the arrival stream; `None` if none ever does. A schedule keeps the exact time of the
    /// last arrival in `clock`, so rounding to ticks never accumulates: a constant-rate stream
    /// rounds each gap, as it always has, which keeps its runs the same.
    pub fn next(&self, (now, arrived): (Tick, u64), clock: &mut f64, word: u64) -> Option<Tick> {
        let exp1 = -libm::log(unit_open_low(word));
        match self {
            Arrival::Recorded(r) => {
                let at = usize::try_from(arrived).ok()?;
                r.times.get(at).map(|&t| t.max(now))
            }
            Arrival::Batch => Some(now),
            Arrival::Poisson { mean_gap } => {
                Some(now.after(Tick(libm::round(mean_gap * exp1) as u64)))
            }
            Arrival::Scheduled(schedule) => {
                *clock = schedule.next(*clock, exp1)?;
                Some(Tick(libm::round(*clock) as u64).max(now))
            }
        }
    }
}

/// Tasks, each calling `calls` in order (indices into the experiment's tools), or in `stages`.
/// A task waits for a free client; each client runs one task at a time, tasks taken in order
/// of arrival.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// The most tasks that arrive; `None`: as many as arrive within `duration`.
    pub tasks: Option<u64>,
    /// Tasks stop arriving at this time, and the run drains what is under way; `None`: they
    /// arrive until there are `tasks` of them.
    pub duration: Option<Tick>,
    pub calls: Vec<usize>,
    /// The task's calls in stages, where it makes some together or lets some fail: each
    /// stage's calls, its tool and whether it is optional, `calls` being them all in order.
    /// `None` for a list of calls made one after another, each needed.
    pub stages: Option<Vec<Vec<(usize, bool)>>>,
    /// The loop of turns each task runs over `calls` (the model first), where tasks are agent
    /// loops; `None`: `calls` once.
    pub agent: Option<super::AgentLoop>,
    pub arrival: Arrival,
    pub clients: u32,
    /// The independent callers (agents, service instances) the tasks come from, each task
    /// from one drawn uniformly, so each caller's tasks are a Poisson stream of their own
    /// when the whole is. Breakers, budgets and rate-limit buckets can be kept per caller.
    pub callers: u32,
    /// How the workers that hold calls crash, and how soon a replacement takes over; `None`:
    /// they never do.
    pub crash: Option<super::Crash>,
}

impl Workload {
    /// The tasks it brings: its count, or for one bounded by time alone twice the expected
    /// arrivals and ten (the count is a draw, and a bound must hold for almost every draw).
    pub fn most_tasks(&self) -> u64 {
        let expected = match (self.duration, &self.arrival) {
            (Some(d), Arrival::Poisson { mean_gap }) => d.0 as f64 / mean_gap,
            (Some(d), Arrival::Scheduled(s)) => s.expected(0.0, d.0 as f64),
            (_, Arrival::Recorded(r)) => r.times.len() as f64,
            _ => f64::INFINITY,
        };
        let bound = (2.0 * expected + 10.0).min(u64::MAX as f64) as u64;
        self.tasks.map_or(bound, |n| n.min(bound))
    }
}
