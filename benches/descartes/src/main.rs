//! An M/M/c server as one DesCartes component, the leanest way that engine runs it: two events
//! a call (its arrival, the end of its service), the line a `VecDeque`, the workers a count.
//! Arrivals and services draw from ChaCha8 streams of their own, exponentials by inversion, as
//! retrysim draws them. It prints what it measured, to hold against the Erlang C figures that
//! `compare.py` prints.
//!
//!     mm4-descartes [CALLS] [WORKERS] [MEAN_GAP_US] [MEAN_SERVICE_US] [SEED]

use std::collections::VecDeque;

use descartes_core::{Component, Executor, Key, Scheduler, SimTime, Simulation};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// An exponential time of mean `mean_ns`, in whole nanoseconds, from one 53-bit uniform.
fn exponential(rng: &mut ChaCha8Rng, mean_ns: f64) -> u64 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-mean_ns * (1.0 - u).ln()).round() as u64
}

#[derive(Debug)]
enum Event {
    Arrive,
    /// The end of a service, for a call that arrived at this time (ns).
    Done(u64),
}

struct Server {
    arrivals: ChaCha8Rng,
    services: ChaCha8Rng,
    mean_gap_ns: f64,
    mean_service_ns: f64,
    calls: u64,
    workers: u32,
    busy: u32,
    /// Calls waiting, by arrival time (ns).
    line: VecDeque<u64>,
    arrived: u64,
    done: u64,
    sojourn_ns: f64,
}

impl Server {
    fn serve(&mut self, me: Key<Event>, arrived_ns: u64, s: &mut Scheduler) {
        let service = exponential(&mut self.services, self.mean_service_ns);
        s.schedule(SimTime::from_nanos(service), me, Event::Done(arrived_ns));
    }
}

impl Component for Server {
    type Event = Event;

    fn process_event(&mut self, me: Key<Event>, event: &Event, s: &mut Scheduler) {
        let now = s.time().as_duration().as_nanos() as u64;
        match *event {
            Event::Arrive => {
                self.arrived += 1;
                if self.arrived < self.calls {
                    let gap = exponential(&mut self.arrivals, self.mean_gap_ns);
                    s.schedule(SimTime::from_nanos(gap), me, Event::Arrive);
                }
                if self.busy < self.workers {
                    self.busy += 1;
                    self.serve(me, now, s);
                } else {
                    self.line.push_back(now);
                }
            }
            Event::Done(arrived_ns) => {
                self.done += 1;
                self.sojourn_ns += (now - arrived_ns) as f64;
                match self.line.pop_front() {
                    Some(next) => self.serve(me, next, s),
                    None => self.busy -= 1,
                }
            }
        }
    }
}

fn main() {
    let args: Vec<f64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("numbers: CALLS WORKERS MEAN_GAP_US MEAN_SERVICE_US SEED")
        })
        .collect();
    let arg = |i: usize, default: f64| args.get(i).copied().unwrap_or(default);
    let (calls, workers) = (arg(0, 1e6) as u64, arg(1, 4.0) as u32);
    let (mean_gap_ns, mean_service_ns) = (arg(2, 250.0) * 1e3, arg(3, 800.0) * 1e3);
    let seed = arg(4, 1.0) as u64;
    let mut arrivals = ChaCha8Rng::seed_from_u64(2 * seed);
    let first = exponential(&mut arrivals, mean_gap_ns);
    let mut sim = Simulation::default();
    let server = sim.add_component(Server {
        arrivals,
        services: ChaCha8Rng::seed_from_u64(2 * seed + 1),
        mean_gap_ns,
        mean_service_ns,
        calls,
        workers,
        busy: 0,
        line: VecDeque::new(),
        arrived: 0,
        done: 0,
        sojourn_ns: 0.0,
    });
    sim.schedule(SimTime::from_nanos(first), server, Event::Arrive);
    sim.execute(Executor::unbound());
    let s = sim
        .get_component_mut::<Event, Server>(server)
        .expect("the server");
    println!(
        "calls {} · mean time in the system {:.1} µs",
        s.done,
        s.sojourn_ns / s.done as f64 / 1e3
    );
}
