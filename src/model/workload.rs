//! The workload: how many tasks, which tools each task calls in order, when tasks arrive, and how
//! many clients serve them.

use crate::time::Tick;
use crate::variate::unit_open_low;

/// When tasks arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrival {
    /// Every task is there at tick 0.
    Batch,
    /// A Poisson stream: exponential gaps with this mean, in ticks.
    Poisson { mean_gap: f64 },
}

impl Arrival {
    /// The gap before the next task, from one word of the arrival stream.
    pub fn gap(&self, word: u64) -> Tick {
        match *self {
            Arrival::Batch => Tick::ZERO,
            Arrival::Poisson { mean_gap } => {
                Tick(libm::round(-mean_gap * libm::log(unit_open_low(word))) as u64)
            }
        }
    }
}

/// Tasks, each calling `calls` in order (indices into the experiment's tools). A task waits for a
/// free client; each client runs one task at a time, tasks taken in order of arrival.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    pub tasks: u64,
    pub calls: Vec<usize>,
    pub arrival: Arrival,
    pub clients: u32,
}
