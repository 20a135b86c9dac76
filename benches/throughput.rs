//! Events per second on the shipped workloads, and the ratios that matter: what each feature
//! costs per event against the plain lost-reply workload, and what a second thread buys.
//!
//! `cargo bench` runs it (release profile). Each workload runs a few times on one thread and on
//! every core; the best time of each is reported, so a busy machine shows as noise in one
//! direction only. Nothing here is asserted: tests stay fast, and speed is read, not checked.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::{Rng, SeedableRng};

use retrysim::config::{Origin, Source};
use retrysim::produce;
use retrysim::run::{Options, jobs};
use retrysim::sweep::Sweep;

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

/// Calls in flight for the scaling rows: tasks at 10 000 a second, each call held
/// `in_flight / 10 000` seconds at the server, so about that many are in flight at once; ten
/// times as many tasks as calls in flight (at least 200 000), so the ramp up to that level, when
/// the live intents' slots are first made, is a tenth of the run at most.
const IN_FLIGHT: [u64; 4] = [100, 1_000, 10_000, 100_000];

/// A config whose calls keep about `in_flight` in flight.
fn in_flight(in_flight: u64) -> Sweep {
    let text = format!(
        "name = \"in-flight\"\nreplications = 1\n[workload]\ntasks = {}\nclients = 1000000\n\
         arrival = \"poisson\"\nmean_interarrival = \"100us\"\n[[tool]]\nname = \"t\"\n\
         kind = \"read_only\"\nservice_time = {{ dist = \"constant\", value = \"{}us\" }}\n\
         [[policy]]\nname = \"p\"\n[output]\ncharts = []\n",
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

const TRIES: usize = 3;

fn sweep(config: &str) -> Sweep {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs")
        .join(config);
    Source::read(&path)
        .and_then(|s| s.sweep())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The best wall time of `TRIES` runs on `threads` threads, and the events of one run.
fn measure(sweep: &Sweep, threads: Option<usize>) -> (Duration, u64) {
    let (best, events, _) = measure_intents(sweep, threads);
    (best, events)
}

/// As [`measure`], with the intents of one run too.
fn measure_intents(sweep: &Sweep, threads: Option<usize>) -> (Duration, u64, u64) {
    let options = Options {
        threads,
        ..Options::default()
    };
    let mut best = Duration::MAX;
    let (mut events, mut intents) = (0, 0);
    for _ in 0..TRIES {
        let start = Instant::now();
        let results = jobs(sweep.clone(), &options, &mut ()).expect("runs to the end");
        best = best.min(start.elapsed());
        events = results.events;
        intents = (results.kept.iter())
            .flat_map(|(_, p)| &p.policies)
            .map(|p| p.totals.intents())
            .sum();
    }
    (best, events, intents)
}

fn main() {
    // `cargo bench -- <filter>` passes arguments; `cargo test --benches` passes `--bench`.
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{:<24} {:>11} {:>9} {:>9} {:>11} {:>9}  workload",
        "config", "events", "1 thread", "M ev/s", "cost/event", "×cores"
    );
    let mut baseline = None;
    let mut per_intent = None;
    for (config, what) in WORKLOADS {
        if !filter.is_empty() && !filter.iter().any(|f| config.contains(f.as_str())) {
            continue;
        }
        let sweep = sweep(config);
        let (one, events, intents) = measure_intents(&sweep, Some(1));
        per_intent.get_or_insert((config, events, intents, one));
        let (all, _) = measure(&sweep, None);
        let per_event = one.as_secs_f64() / events as f64;
        let base = *baseline.get_or_insert(per_event);
        println!(
            "{config:<24} {events:>11} {:>8.3}s {:>9.2} {:>10.2}× {:>8.2}×  {what}",
            one.as_secs_f64(),
            events as f64 / one.as_secs_f64() / 1e6,
            per_event / base,
            one.as_secs_f64() / all.as_secs_f64(),
        );
    }
    println!(
        "\ncost/event: seconds per event against the first row; ×cores: one thread's time over \
         {cores} threads'."
    );
    if let Some((config, events, intents, time)) = per_intent {
        println!(
            "{config}: {:.2} events per intent, {:.2} M intents/s on one thread",
            events as f64 / intents as f64,
            intents as f64 / time.as_secs_f64() / 1e6
        );
    }
    let wanted = |name: &str| filter.is_empty() || filter.iter().any(|f| name.contains(f.as_str()));
    if wanted("hold") {
        hold_rows();
    }
    if wanted("in-flight") {
        in_flight_rows();
    }
    if wanted("traces") {
        traces();
    }
}

/// The cost per event as calls in flight grow, against 100 in flight.
fn in_flight_rows() {
    println!(
        "\n{:<12} {:>11} {:>9} {:>11}",
        "in flight", "events", "M ev/s", "cost/event"
    );
    let mut first = None;
    for n in IN_FLIGHT {
        let (one, events) = measure(&in_flight(n), Some(1));
        let per_event = one.as_secs_f64() / events as f64;
        let base = *first.get_or_insert(per_event);
        println!(
            "{n:<12} {events:>11} {:>9.2} {:>10.2}×",
            events as f64 / one.as_secs_f64() / 1e6,
            per_event / base
        );
    }
    println!("\ncost/event: seconds per event against 100 in flight.");
}

/// Trace rows written per second: the 1M-order workload with both traces kept, less the same
/// run without them, best of `TRIES` each, on one thread.
fn traces() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/lost-reply-1m.toml");
    let source = Source::read(&path).unwrap_or_else(|e| panic!("{e}"));
    let plain = source.sweep().unwrap_or_else(|e| panic!("{e}"));
    let mut traced = plain.clone();
    traced.trace(true, true);
    let options = Options {
        threads: Some(1),
        ..Options::default()
    };
    let best = |sweep: &Sweep| {
        (0..TRIES)
            .map(|_| {
                let scratch = tempfile::tempdir().expect("a scratch folder");
                let start = Instant::now();
                let (_, staging) = produce::into_staging(
                    &source,
                    sweep.clone(),
                    scratch.path(),
                    &options,
                    &mut (),
                )
                .expect("runs to the end");
                let elapsed = start.elapsed();
                let rows = ["intents.csv", "attempts.csv"]
                    .iter()
                    .filter_map(|f| std::fs::read(staging.path().join(f)).ok())
                    .map(|bytes| bytes.iter().filter(|&&b| b == b'\n').count() as u64 - 1)
                    .sum::<u64>();
                (elapsed, rows)
            })
            .min()
            .expect("tries")
    };
    let (without, _) = best(&plain);
    let (with, rows) = best(&traced);
    let cost = with.saturating_sub(without).as_secs_f64();
    println!(
        "\ntraces: {rows} rows of intents.csv and attempts.csv in {cost:.2} s beyond the run: {:.2} M rows/s",
        rows as f64 / cost / 1e6
    );
}

/// The bare hold loop: `pending` events in a binary heap keyed as the engine keys them (tick ·
/// 2⁶⁴ + sequence), each popped and replaced by one a random delay later, one ChaCha8 word per
/// event. No model at all: the most a discrete-event engine on a heap could do on this machine.
/// Best of `TRIES`, in events per second.
fn hold_loop(pending: u64, events: u64) -> f64 {
    let mut best = 0.0f64;
    for _ in 0..TRIES {
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
        best = best.max(events as f64 / start.elapsed().as_secs_f64());
    }
    best
}

/// The engine against the bare hold loop at the same number of pending events: the baseline
/// workload (10³ orders in flight) and the in-flight workload at 10³ and 10⁵ calls.
fn hold_rows() {
    println!(
        "\n{:<28} {:>9} {:>11} {:>9}",
        "against a bare hold loop", "pending", "M ev/s", "share"
    );
    let bare = hold_loop(1_000, 10_000_000);
    println!(
        "{:<28} {:>9} {:>11.2} {:>8.0}%",
        "bare heap + ChaCha8",
        1_000,
        bare / 1e6,
        100.0
    );
    for (name, sweep) in [
        ("lost-reply-1m.toml", sweep("lost-reply-1m.toml")),
        ("in-flight 10³", in_flight(1_000)),
    ] {
        let (one, events) = measure(&sweep, Some(1));
        let rate = events as f64 / one.as_secs_f64();
        println!(
            "{name:<28} {:>9} {:>11.2} {:>8.0}%",
            1_000,
            rate / 1e6,
            100.0 * rate / bare
        );
    }
    let bare = hold_loop(100_000, 10_000_000);
    println!(
        "{:<28} {:>9} {:>11.2}",
        "bare heap + ChaCha8",
        100_000,
        bare / 1e6
    );
    println!("\nshare: events per second against the bare loop at the same pending events.");
}
