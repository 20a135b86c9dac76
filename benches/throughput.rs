//! Events per second on the shipped workloads, and the ratios that matter: what each feature
//! costs per event against the plain lost-reply workload, what a second thread buys, how the
//! engine fares against a bare hold loop at the same number of pending events, and what the
//! cost per event does as calls in flight grow from 10² to 10⁵.
//!
//! `cargo bench` runs it (release profile); `cargo bench -- in-flight` runs the rows whose name
//! holds a word. Every figure is a ratio taken within a round, the two things compared run one
//! right after the other (A B A B), over `ROUNDS` rounds: the median is printed with the least
//! and the most. A shared machine drifts between rounds; within one, both sides see the same
//! machine. Nothing here is asserted: tests stay fast, and speed is read, not checked.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::Instant;

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use retrysim::config::{Origin, Source};
use retrysim::produce;
use retrysim::run::{Observer, Options, PointResult, jobs};
use retrysim::sweep::{Point, Sweep};

/// Rounds of every comparison.
const ROUNDS: usize = 5;

/// The workloads, each a shipped config: the baseline first.
const WORKLOADS: [(&str, &str); 6] = [
    (
        "lost-reply-1m.toml",
        "1M orders, retries and a key (baseline)",
    ),
    (
        "duplicate-curve.toml",
        "a sweep: 6 points × 2 × 20 replications",
    ),
    (
        "timeout-percentile.toml",
        "timeouts from a pilot, a FIFO server",
    ),
    ("hedging.toml", "hedged requests on a lognormal tail"),
    ("retry-budgets.toml", "retry budgets over a failure sweep"),
    (
        "retry-storm.toml",
        "a retry storm: a schedule, a slowing server",
    ),
];

/// Events per intent on `lost-reply-1m.toml` when the bare-loop goal was set: the bare loop's
/// share is read as intents per second times this, so that folding two events into one counts
/// as speed and splitting one does not.
#[expect(clippy::approx_constant, reason = "a measured count, not π")]
const EVENTS_PER_INTENT: f64 = 3.14;

/// Calls in flight for the scaling rows.
const IN_FLIGHT: [u64; 4] = [100, 1_000, 10_000, 100_000];

/// The lost-reply model with about `in_flight` calls in flight: orders arrive at 10 000 a
/// second (Poisson), each charge is served in an exponential time of mean `in_flight` × 100 µs
/// at a server with no limit on its workers, a = 0.1 and b = 0.2, and the client retries at
/// once until a reply, with a per-intent key. Ten times as many orders as calls in flight (at
/// least 200 000), so the ramp up to that level is a tenth of the run at most.
fn in_flight(in_flight: u64) -> Sweep {
    let text = format!(
        "name = \"in-flight\"\nreplications = 1\n[workload]\ntasks = {}\nclients = 1000000\n\
         arrival = \"poisson\"\nmean_interarrival = \"100us\"\n[[tool]]\nname = \"charge\"\n\
         request_loss = 0.1\nreply_loss = 0.2\n\
         service_time = {{ dist = \"exponential\", mean = \"{}us\" }}\n\
         [[policy]]\nname = \"reliable\"\nmax_attempts = \"unlimited\"\n\
         idempotency_key = \"per_intent\"\n[output]\ncharts = []\n",
        (in_flight * 10).max(200_000),
        in_flight * 100
    );
    let source = Source {
        name: format!("in-flight {in_flight}"),
        text,
        origin: Origin::Text,
    };
    source.sweep().unwrap_or_else(|e| panic!("{e}"))
}

fn read(path: &Path) -> Sweep {
    Source::read(path)
        .and_then(|s| s.sweep())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn shipped(config: &str) -> Sweep {
    read(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("configs")
            .join(config),
    )
}

/// One run of `sweep` on `threads` threads, in memory: its seconds, events and intents.
fn run(sweep: &Sweep, threads: Option<usize>) -> Timed {
    let options = Options {
        threads,
        ..Options::default()
    };
    let mut intents = Intents(0);
    let start = Instant::now();
    let results = jobs(sweep.clone(), &options, &mut intents).expect("runs to the end");
    let seconds = start.elapsed().as_secs_f64();
    Timed {
        seconds,
        events: results.events,
        intents: intents.0,
    }
}

/// Counts the intents of every point as it finishes (a run keeps only some points).
struct Intents(u64);

impl Observer for Intents {
    fn point_done(&mut self, _: usize, _: &Point, result: &PointResult) -> std::io::Result<()> {
        self.0 += (result.policies.iter())
            .map(|p| p.totals.intents())
            .sum::<u64>();
        Ok(())
    }
}

/// What one run took and did.
#[derive(Clone, Copy)]
struct Timed {
    seconds: f64,
    events: u64,
    intents: u64,
}

impl Timed {
    fn per_event(self) -> f64 {
        self.seconds / self.events as f64
    }

    fn events_per_s(self) -> f64 {
        self.events as f64 / self.seconds
    }
}

/// The median of `xs` with the least and the most, as `median [min–max]`.
fn spread(xs: &mut [f64], scale: f64, decimals: usize) -> String {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    let median = if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    };
    format!(
        "{:.d$} [{:.d$}–{:.d$}]",
        median * scale,
        xs[0] * scale,
        xs[n - 1] * scale,
        d = decimals
    )
}

fn main() {
    // `cargo bench -- <filter>` passes arguments; `cargo test --benches` passes `--bench`.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    println!(
        "{ROUNDS} rounds of each comparison, its two sides run in turn; medians [least–most]\n"
    );
    workloads(&wanted);
    if wanted("hold") || wanted("in-flight") {
        hold_rows();
    }
    if wanted("traces") {
        traces();
    }
}

/// Each shipped workload: events per second on one thread, its cost per event against the
/// baseline's in the same round, and one thread's time over every core's.
fn workloads(wanted: &dyn Fn(&str) -> bool) {
    let chosen: Vec<(&str, &str, Sweep)> = (WORKLOADS.iter())
        .filter(|(config, _)| wanted(config))
        .map(|&(config, what)| (config, what, shipped(config)))
        .collect();
    if chosen.is_empty() {
        return;
    }
    let baseline = shipped(WORKLOADS[0].0);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = chosen.len();
    let (mut rates, mut costs, mut gains) = (vec![vec![]; n], vec![vec![]; n], vec![vec![]; n]);
    let mut per_intent = Vec::new();
    for _ in 0..ROUNDS {
        let base = run(&baseline, Some(1));
        per_intent.push(base.events as f64 / base.intents as f64);
        for (i, (_, _, sweep)) in chosen.iter().enumerate() {
            let one = run(sweep, Some(1));
            let all = run(sweep, None);
            rates[i].push(one.events_per_s());
            costs[i].push(one.per_event() / base.per_event());
            gains[i].push(one.seconds / all.seconds);
        }
    }
    println!(
        "{:<24} {:>20} {:>20} {:>20}  workload",
        "config", "M ev/s, 1 thread", "cost/event", "×cores"
    );
    for (i, (config, what, _)) in chosen.iter().enumerate() {
        println!(
            "{config:<24} {:>20} {:>20} {:>20}  {what}",
            spread(&mut rates[i], 1e-6, 2),
            spread(&mut costs[i], 1.0, 2),
            spread(&mut gains[i], 1.0, 2),
        );
    }
    println!(
        "\ncost/event: seconds per event against {} in the same round; ×cores: one thread's \
         time over {cores} threads'. {}: {} events per intent.",
        WORKLOADS[0].0,
        WORKLOADS[0].0,
        spread(&mut per_intent, 1.0, 2)
    );
}

/// The bare hold loop: `pending` events in a binary heap keyed as the engine keys them (tick ·
/// 2⁶⁴ + sequence), each popped and replaced by one a random delay later, one ChaCha8 word per
/// event. No model at all: the most a discrete-event engine on a heap could do on this machine.
/// Events per second over `events` events.
fn hold_loop(pending: u64, events: u64) -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(pending);
    let mut heap = BinaryHeap::with_capacity(pending as usize + 1);
    let mut seq = 0u64;
    let key = |tick: u64, seq: &mut u64| {
        *seq += 1;
        Reverse((u128::from(tick) << 64) | u128::from(*seq))
    };
    for _ in 0..pending {
        let at = rng.next_u64() >> 44;
        heap.push((key(at, &mut seq), seq));
    }
    let start = Instant::now();
    for _ in 0..events {
        let (Reverse(k), payload) = heap.pop().expect("never empty");
        let now = (k >> 64) as u64;
        let at = now + (rng.next_u64() >> 44);
        heap.push((key(at, &mut seq), payload ^ now));
    }
    std::hint::black_box(&heap);
    events as f64 / start.elapsed().as_secs_f64()
}

/// One row set against the bare loop: a workload, the pending events it keeps, and how its
/// rate is read (engine events, or intents × [`EVENTS_PER_INTENT`]).
struct Held {
    name: String,
    pending: u64,
    sweep: Sweep,
    per_intent: bool,
}

impl Held {
    fn rate(&self, t: Timed) -> f64 {
        match self.per_intent {
            true => t.intents as f64 * EVENTS_PER_INTENT / t.seconds,
            false => t.events_per_s(),
        }
    }
}

/// The engine against the bare hold loop at the same number of pending events, each run right
/// after the other: the in-flight workload from 10² to 10⁵ calls in flight, the baseline (10³
/// orders in flight, read as intents × 3.14), and the SimPy peer's workload (`benches/simpy/`,
/// 100 clients). Then the in-flight workload's cost per event against 10² in the same round.
fn hold_rows() {
    let mut rows: Vec<Held> = (IN_FLIGHT.iter())
        .map(|&n| Held {
            name: format!("in-flight 10^{}", n.ilog10()),
            pending: n,
            sweep: in_flight(n),
            per_intent: false,
        })
        .collect();
    rows.push(Held {
        name: "lost-reply-1m.toml ×3.14".into(),
        pending: 1_000,
        sweep: shipped("lost-reply-1m.toml"),
        per_intent: true,
    });
    rows.push(Held {
        name: "simpy/lost-reply.toml".into(),
        pending: 100,
        sweep: read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/simpy/lost-reply.toml")),
        per_intent: false,
    });
    let n = rows.len();
    let (mut engine, mut bare, mut share) = (vec![vec![]; n], vec![vec![]; n], vec![vec![]; n]);
    let mut cost = vec![vec![]; IN_FLIGHT.len()];
    for _ in 0..ROUNDS {
        let mut first = None;
        for (i, row) in rows.iter().enumerate() {
            let t = run(&row.sweep, Some(1));
            let b = hold_loop(row.pending, 5_000_000);
            engine[i].push(row.rate(t));
            bare[i].push(b);
            share[i].push(row.rate(t) / b);
            if i < IN_FLIGHT.len() {
                let base = *first.get_or_insert(t.per_event());
                cost[i].push(t.per_event() / base);
            }
        }
    }
    println!(
        "\n{:<26} {:>8} {:>20} {:>20} {:>20}",
        "against a bare hold loop", "pending", "M ev/s", "bare M ev/s", "share"
    );
    for (i, row) in rows.iter().enumerate() {
        println!(
            "{:<26} {:>8} {:>20} {:>20} {:>20}",
            row.name,
            row.pending,
            spread(&mut engine[i], 1e-6, 2),
            spread(&mut bare[i], 1e-6, 2),
            spread(&mut share[i], 1.0, 2),
        );
    }
    println!("\n{:<26} {:>20}", "in flight", "cost/event");
    for (i, n) in IN_FLIGHT.iter().enumerate() {
        println!("{n:<26} {:>20}", spread(&mut cost[i], 1.0, 2));
    }
    println!(
        "\nshare: the engine's events per second over the bare loop's at the same pending \
         events, within a round (lost-reply-1m: its intents per second × {EVENTS_PER_INTENT}).\n\
         cost/event: seconds per event against 10² in flight, within a round."
    );
}

/// Trace rows written per second: the 1M-order workload with both traces kept, less the same
/// run without them, each pair run in turn, on one thread.
fn traces() {
    let plain = shipped("lost-reply-1m.toml");
    let mut traced = plain.clone();
    traced.trace(true, true);
    let options = Options {
        threads: Some(1),
        ..Options::default()
    };
    let once = |sweep: &Sweep| {
        let scratch = tempfile::tempdir().expect("a scratch folder");
        let start = Instant::now();
        let (_, staging) = produce::into_staging(
            &Source::builtin(),
            sweep.clone(),
            scratch.path(),
            &options,
            &mut (),
        )
        .expect("runs to the end");
        let elapsed = start.elapsed().as_secs_f64();
        let rows = ["intents.csv", "attempts.csv"]
            .iter()
            .filter_map(|f| std::fs::read(staging.path().join(f)).ok())
            .map(|bytes| bytes.iter().filter(|&&b| b == b'\n').count() as u64 - 1)
            .sum::<u64>();
        (elapsed, rows)
    };
    let mut rates = Vec::new();
    for _ in 0..ROUNDS {
        let (without, _) = once(&plain);
        let (with, rows) = once(&traced);
        rates.push(rows as f64 / (with - without).max(1e-9));
    }
    println!(
        "\ntraces: rows of intents.csv and attempts.csv per second beyond the run: {} M",
        spread(&mut rates, 1e-6, 2)
    );
}
