//! Each tool's server at its door, in real time: the simulator's own [`Server`] — its rate
//! limiter and tokens-per-minute buckets, outages, capacity windows, workers and line — and the
//! tools' burst timelines, asked at the endpoint's clock (the config's time since the start) as
//! requests arrive and as workers free. A request meets what a simulated attempt arriving at
//! that moment would: the same limits, the same windows, and — the timelines drawn from the
//! stream a simulated run's first replication draws them from — the same spells.
//!
//! Requests in line are tickets (the endpoint's request numbers); a worker that frees takes up
//! the next, which the caller wakes. A capacity window that opens or closes changes the
//! workers at the first arrival or departure after it, or when the caller asks ([`Doors::tick`],
//! which the endpoint does as it idles, every 50 ms).

use crate::engine::rng::{Source, Streams};
use crate::experiment::Experiment;
use crate::model::burst::Timeline;
use crate::model::server::{Arrival, Server};
use crate::model::{capacity, outage};
use crate::time::Tick;

/// The clients a caller-scoped limit tells apart: each gets buckets of its own, and a client
/// past them is refused (a 400 that says so) rather than given another's.
pub const MOST_CALLERS: usize = 256;

/// Every tool's door, and the clients seen so far.
pub struct Doors {
    servers: Vec<Server<u64>>,
    /// Each tool's capacity share as last applied to its workers.
    shares: Vec<f64>,
    /// The burst timelines, by the index of the tool whose stream draws them.
    timelines: Vec<Option<Timeline>>,
    streams: Streams,
    /// The clients, in the order they first came: a client's place is its caller number.
    callers: Vec<String>,
}

impl Doors {
    pub fn new(exp: &Experiment) -> Doors {
        let servers = (exp.tools.iter())
            .map(|t| Server::new(&t.server, MOST_CALLERS as u32, true, false))
            .collect();
        Doors {
            servers,
            shares: vec![1.0; exp.tools.len()],
            timelines: vec![None; exp.tools.len()],
            streams: Streams {
                seed: exp.seed,
                point: 0,
                replication: 0,
            },
            callers: Vec::new(),
        }
    }

    /// The caller number of `client`, numbered as clients first come; `None` past
    /// [`MOST_CALLERS`].
    pub fn caller(&mut self, client: &str) -> Option<u32> {
        if let Some(at) = self.callers.iter().position(|c| c == client) {
            return Some(at as u32);
        }
        if self.callers.len() == MOST_CALLERS {
            return None;
        }
        self.callers.push(client.to_string());
        Some(self.callers.len() as u32 - 1)
    }

    /// Whether tool `tool` is in its bad state at `now`, its timeline drawn as a simulated
    /// run's (tools of one failure domain share their first tool's); never without bursts.
    /// The endpoint's clock never goes back, as a timeline asks.
    pub fn bad(&mut self, exp: &Experiment, tool: usize, now: Tick) -> bool {
        let Some(burst) = &exp.tools[tool].burst else {
            return false;
        };
        let streams = self.streams;
        let timeline = self.timelines[burst.timeline].get_or_insert_with(|| {
            Timeline::new(burst, streams.stream(Source::Bursts, burst.timeline as u64))
        });
        timeline.bad_at(burst, now)
    }

    /// Request `ticket` of caller `caller`, reading `input` tokens (a model's prompt; 0
    /// elsewhere), at tool `tool`'s door at `now`; with the tickets a capacity change took up
    /// from the line, which the caller wakes. Every request that arrives leaves
    /// ([`Doors::leave`]).
    pub fn arrive(
        &mut self,
        exp: &Experiment,
        tool: usize,
        now: Tick,
        (caller, input): (u32, u64),
        ticket: u64,
    ) -> (Arrival<u64>, Vec<u64>) {
        let freed = self.tick(exp, tool, now);
        let server = &mut self.servers[tool];
        server.sent();
        let spec = &exp.tools[tool].server;
        (
            server.arrive(spec, now, (caller, input), None, ticket),
            freed,
        )
    }

    /// A request of caller `caller` leaves tool `tool`'s door at `now`: answered, dropped, or
    /// refused. `served` where a worker had taken it up, which frees; `generated` where a
    /// tokens-per-minute limit reserved its `max_tokens`, of which the rest goes back. Returns
    /// the tickets taken up from the line.
    pub fn leave(
        &mut self,
        exp: &Experiment,
        tool: usize,
        now: Tick,
        (caller, generated): (u32, Option<u32>),
        served: bool,
    ) -> Vec<u64> {
        let spec = &exp.tools[tool].server;
        let server = &mut self.servers[tool];
        server.left(spec, caller, generated);
        let mut freed = self.tick(exp, tool, now);
        if served {
            freed.extend(self.servers[tool].finish());
        }
        freed
    }

    /// A ticket taken up from the line whose request is gone (its client closed the
    /// connection while it waited): its worker frees at once. Returns the next taken up.
    pub fn abandoned(&mut self, tool: usize) -> Option<u64> {
        self.servers[tool].finish()
    }

    /// Applies a capacity window that opened or closed by `now` to tool `tool`'s workers;
    /// returns the tickets the change took up from the line.
    pub fn tick(&mut self, exp: &Experiment, tool: usize, now: Tick) -> Vec<u64> {
        let spec = &exp.tools[tool].server;
        let share = capacity::fraction_at(&spec.capacity, None, now);
        if share == self.shares[tool] {
            return Vec::new();
        }
        self.shares[tool] = share;
        self.servers[tool].capacity_changed(spec, now)
    }

    /// The service of a request a worker takes up at `now`, drawn as `drawn`: slowed by the
    /// others in service where the server slows under load.
    pub fn service(&self, exp: &Experiment, tool: usize, now: Tick, drawn: Tick) -> Tick {
        let spec = &exp.tools[tool].server;
        match self.servers[tool].take_up(spec, now, None, drawn) {
            crate::model::server::TakeUp::Work { service, .. } => service,
            crate::model::server::TakeUp::Drop => drawn,
        }
    }
}

/// When the outage tool `tool` is in at `now` ends, if it is in one.
pub fn outage_ends(exp: &Experiment, tool: usize, now: Tick) -> Option<Tick> {
    let outages = &exp.tools[tool].server.outages;
    outage::down_at(outages, None, now)?;
    (outages.iter())
        .filter(|o| o.from <= now && now < o.until)
        .map(|o| o.until)
        .max()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Source as Config;

    fn config(tool: &str) -> Experiment {
        let text = format!(
            "name = \"e\"\nseed = 3\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n{tool}\n\
             [[policy]]\nname = \"p\"\n"
        );
        Config::from_text("e.toml", &text).sweep().unwrap().base
    }

    /// One worker and a line of one: the first is served, the second waits, the third is
    /// turned away; when the first leaves, the second is taken up.
    #[test]
    fn a_worker_serves_one_and_its_line_holds_the_next() {
        let exp = config("workers = 1\nline_limit = 1");
        let mut doors = Doors::new(&exp);
        let now = Tick::ZERO;
        assert!(matches!(
            doors.arrive(&exp, 0, now, (0, 0), 1).0,
            Arrival::Served(1)
        ));
        assert!(matches!(
            doors.arrive(&exp, 0, now, (0, 0), 2).0,
            Arrival::Waiting
        ));
        assert!(matches!(
            doors.arrive(&exp, 0, now, (0, 0), 3).0,
            Arrival::Full(3)
        ));
        assert!(doors.leave(&exp, 0, now, (0, None), false).is_empty());
        assert_eq!(doors.leave(&exp, 0, now, (0, None), true), [2]);
    }

    /// A limit of 2 a second with a burst of 2: two pass at once, the third is told to come
    /// back in the second's rest (500 ms, said as 1 s); after it, one passes again.
    #[test]
    fn a_rate_limit_refuses_past_its_burst_and_says_when() {
        let exp = config("rate_limit = { per_second = 2, burst = 2 }");
        let mut doors = Doors::new(&exp);
        let at = |ms| Tick::from_millis(ms);
        assert!(matches!(
            doors.arrive(&exp, 0, at(0), (0, 0), 0).0,
            Arrival::Served(0)
        ));
        assert!(matches!(
            doors.arrive(&exp, 0, at(0), (0, 0), 1).0,
            Arrival::Served(1)
        ));
        match doors.arrive(&exp, 0, at(0), (0, 0), 2).0 {
            Arrival::Throttled(r) => assert_eq!((r.exact, r.retry_after), (at(500), at(1000))),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            doors.arrive(&exp, 0, at(500), (0, 0), 3).0,
            Arrival::Served(3)
        ));
    }

    /// An outage refuses at its door from its start until (not at) its end, and says when it
    /// ends; a burst timeline is the one a simulated run's first replication meets.
    #[test]
    fn an_outage_is_on_the_wall_clock_and_bursts_are_the_simulators() {
        let exp = config("outages = [{ from = \"1s\", until = \"2s\", mode = \"hang\" }]");
        let mut doors = Doors::new(&exp);
        let s = Tick::from_secs;
        assert!(matches!(
            doors.arrive(&exp, 0, s(1), (0, 0), 0).0,
            Arrival::Down(_)
        ));
        assert_eq!(outage_ends(&exp, 0, s(1)), Some(s(2)));
        assert_eq!(outage_ends(&exp, 0, s(2)), None);
        let bursty =
            config("burst = { good = \"2s\", bad = \"1s\", in_bad = { reply_loss = 0.5 } }");
        let burst = bursty.tools[0].burst.as_ref().unwrap();
        let streams = Streams {
            seed: 3,
            point: 0,
            replication: 0,
        };
        let mut theirs = Timeline::new(burst, streams.stream(Source::Bursts, 0));
        let mut doors = Doors::new(&bursty);
        for ms in (0..20_000).step_by(37) {
            let now = Tick::from_millis(ms);
            assert_eq!(doors.bad(&bursty, 0, now), theirs.bad_at(burst, now));
        }
    }
}
