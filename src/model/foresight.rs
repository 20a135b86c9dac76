//! A line whose every wait is known the moment its request is sent.
//!
//! At a server with `workers` and an unbounded first-come-first-served line, where nothing at
//! the door can turn a request away or change the workers (see
//! [`ServerSpec::foreseeable`](super::server::ServerSpec::foreseeable)) and requests arrive in
//! the order they were sent (a constant request leg), the start of a request's service is fixed
//! by the requests before it alone: it takes the worker that frees first, once it arrives
//! (Lindley's recursion for c servers). The world then needs no event for the arrival or for
//! the start of service: one, at the end of the service, as at a server with no worker limit.
//! A worker freed and a request arriving at the same tick start it at that tick whichever runs
//! first, so the ticks are those the events would give.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::time::Tick;

/// When each busy worker is free again; a worker never busy is not held.
#[derive(Clone, Debug)]
pub struct Foresight {
    workers: u32,
    free_at: BinaryHeap<Reverse<Tick>>,
}

impl Foresight {
    pub fn new(workers: u32) -> Self {
        Foresight {
            workers,
            free_at: BinaryHeap::new(),
        }
    }

    /// A request arriving at `arrival`, after every request already given here, whose work
    /// takes `service`: when its service ends.
    pub fn done(&mut self, arrival: Tick, service: Tick) -> Tick {
        let start = if self.free_at.len() < self.workers as usize {
            arrival
        } else {
            let Reverse(free) = self.free_at.pop().expect("every worker is held");
            arrival.max(free)
        };
        let done = start.after(service);
        self.free_at.push(Reverse(done));
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{Source, Streams, word};
    use crate::model::station::{Door, Line, Station};
    use crate::variate::integer_in;

    /// The ends it foresees are those of the station run event by event: arrivals and ends
    /// of service in tick order, an end before an arrival at the same tick.
    #[test]
    fn it_foresees_what_the_station_does() {
        let mut words = Streams {
            seed: 11,
            point: 0,
            replication: 0,
        }
        .stream(Source::Arrivals, 0);
        let mut next = |bound: u64| integer_in(word(&mut words), 0, bound - 1);
        for workers in [1, 2, 4] {
            let mut foresight = Foresight::new(workers);
            let mut arrival = 0;
            let requests: Vec<(u64, u64)> = (0..500)
                .map(|_| {
                    arrival += next(30);
                    (arrival, next(100))
                })
                .collect();
            let foreseen: Vec<u64> = (requests.iter())
                .map(|&(a, s)| foresight.done(Tick(a), Tick(s)).0)
                .collect();
            // Event by event: (tick, kind, request); an end (0) sorts before an arrival (1).
            let mut station = Station::new(Some(workers), Line::UNBOUNDED);
            let mut events: Vec<(u64, u8, usize)> = (requests.iter().enumerate())
                .map(|(i, &(a, _))| (a, 1, i))
                .collect();
            let mut ends = vec![0; requests.len()];
            while let Some(i) = (0..events.len()).min_by_key(|&i| events[i]) {
                let (now, kind, r) = events.swap_remove(i);
                let taken = match kind {
                    1 => match station.arrive(r) {
                        Door::Served(t) => Some(t),
                        Door::Waiting => None,
                        Door::Refused(_) => unreachable!("the line has no limit"),
                    },
                    _ => {
                        ends[r] = now;
                        station.finish()
                    }
                };
                if let Some(t) = taken {
                    events.push((now + requests[t].1, 0, t));
                }
            }
            assert_eq!(foreseen, ends, "{workers} workers");
        }
    }
}
