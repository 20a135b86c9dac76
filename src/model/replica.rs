//! A tool's replicas: more than one server behind its name, as a real deployment has. Each
//! replica is a server of its own (its own workers, line, rate limiter and record, all as the
//! tool's spec says) and may be made slower or faultier than the rest.

use super::{Faults, Latency};

/// What one replica does where it differs from its tool: its faults and its service time.
#[derive(Clone, Debug, PartialEq)]
pub struct Replica {
    pub faults: Faults,
    pub service_time: Latency,
}
