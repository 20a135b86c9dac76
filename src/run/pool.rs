//! The worker pool: runs a share of a sweep's jobs in parallel and hands each run on strictly in
//! job order, so whatever folds or stores them never sees the thread count.

use std::collections::BTreeMap;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};

use super::live::Live;
use super::{Options, Traces};
use crate::sim::{self, Job, RunResult};
use crate::sweep::{Point, Sweep};

/// Every job of a sweep, numbered in (point, configuration, replication) order, without
/// listing them: a job is found from its number.
pub struct Jobs {
    points: u64,
    /// Every point's jobs: the base's configurations × replications.
    per_point: u64,
    replications: u64,
}

impl Jobs {
    pub fn new(sweep: &Sweep) -> Jobs {
        let replications = sweep.base.replications;
        Jobs {
            points: sweep.len() as u64,
            per_point: (sweep.base.policies.len() as u64).saturating_mul(replications),
            replications,
        }
    }

    pub fn total(&self) -> u64 {
        self.points.saturating_mul(self.per_point)
    }

    /// The job number one past point `point`'s last.
    pub fn end_of(&self, point: usize) -> u64 {
        (point as u64 + 1).saturating_mul(self.per_point)
    }

    /// Job number `index`.
    pub fn get(&self, index: u64) -> Option<Job> {
        if index >= self.total() {
            return None;
        }
        let offset = index % self.per_point;
        Some(Job {
            point: (index / self.per_point) as usize,
            policy: (offset / self.replications) as usize,
            replication: offset % self.replications,
        })
    }
}

/// Which of a sweep's jobs a process runs: every `count`-th job from job `index`. A shard of a
/// sweep split over machines is one such share; the whole sweep is share 0 of 1. Taking jobs
/// in turn rather than in blocks gives every shard a like mix of points, so shards of a sweep
/// whose points differ in cost still finish together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Share {
    pub index: u64,
    pub count: u64,
}

impl Share {
    /// The whole sweep.
    pub const ALL: Share = Share { index: 0, count: 1 };

    /// The job number of this share's `k`-th job.
    pub fn nth(self, k: u64) -> u64 {
        self.index + k * self.count
    }

    /// How many of `total` jobs fall to this share.
    pub fn len(self, total: u64) -> u64 {
        total.saturating_sub(self.index).div_ceil(self.count)
    }

    /// Whether no job of `total` falls to it.
    pub fn is_empty(self, total: u64) -> bool {
        self.len(total) == 0
    }
}

/// What receives the runs of a pool, on the calling thread, in job order.
pub trait Sink {
    /// A job finished; `done` of `total` have (the share's count, not the sweep's).
    fn job_done(&mut self, done: u64, total: u64);
    /// Takes job `index`'s run, at `point`; an error stops the pool.
    fn take(&mut self, index: u64, job: Job, point: &Point, run: RunResult) -> io::Result<()>;
}

/// How far ahead of the oldest run not yet taken a worker may start one, in jobs per worker
/// (two batches at least): enough to keep every core busy while a slow job holds the line up,
/// and a bound on the runs waiting.
const AHEAD_PER_WORKER: u64 = 4;

/// The most jobs a worker takes at once: with the window, at most 3 × 16 runs per worker wait
/// to be handed on, whatever the number of jobs.
const MOST_IN_A_BATCH: u64 = 16;

/// Jobs a worker takes at once, out of `total` for `workers`: enough that taking them costs
/// little beside running them when jobs are many and small (a million replications), few
/// enough that every worker has several batches to take, so a sweep of slow points still
/// spreads over every core.
fn batch(total: u64, workers: u64) -> u64 {
    (total / (workers * 16)).clamp(1, MOST_IN_A_BATCH)
}

/// Runs the jobs of `share` on a pool of worker threads, or on the calling thread where there
/// is one worker. Jobs are handed out by number, never listed, in batches of consecutive jobs,
/// and a worker starts a batch only a few batches ahead of the oldest run not yet taken;
/// finished runs go to `sink` strictly in job order and are then dropped. Memory thus stays
/// bounded by the number of workers, whatever the number of jobs, and what `sink` sees is the
/// same on any number of threads. Stops early, without error, when `options.cancel` is set.
pub fn execute(
    sweep: &Sweep,
    share: Share,
    options: &Options,
    sink: &mut impl Sink,
) -> io::Result<()> {
    // One thread asked for: no pool at all.
    if options.threads == Some(1) {
        return execute_inline(sweep, share, options, sink);
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads.unwrap_or(0))
        .build()
        .map_err(io::Error::other)?;
    let workers = pool.current_num_threads() as u64;
    if workers == 1 {
        return execute_inline(sweep, share, options, sink);
    }
    let jobs = Jobs::new(sweep);
    let total = share.len(jobs.total());
    let size = batch(total, workers);
    let ahead = workers * AHEAD_PER_WORKER.max(2 * size);
    let live = Live::new(sweep);
    let stop = AtomicBool::new(false);
    let stopping = || {
        stop.load(Ordering::Relaxed) || options.cancel.is_some_and(|c| c.load(Ordering::Relaxed))
    };
    let next = AtomicU64::new(0);
    // How many of the share's runs were taken so far, which workers wait on.
    let taken = (Mutex::new(0u64), Condvar::new());
    let (tx, rx) = mpsc::channel::<Vec<(u64, io::Result<RunResult>)>>();

    let mut failure = None;
    std::thread::scope(|scope| {
        scope.spawn(|| {
            pool.scope(|s| {
                for _ in 0..workers {
                    let tx = tx.clone();
                    let (jobs, taken, next, live) = (&jobs, &taken, &next, &live);
                    s.spawn(move |_| {
                        let tx = tx;
                        while !stopping() {
                            let first = next.fetch_add(size, Ordering::Relaxed);
                            if first >= total {
                                break;
                            }
                            let end = (first + size).min(total);
                            let mut done = taken.0.lock().expect("no worker panics");
                            while end > *done + ahead && !stopping() {
                                done = taken.1.wait(done).expect("no worker panics");
                            }
                            drop(done);
                            if stopping() {
                                break;
                            }
                            let runs: Vec<_> = (first..end)
                                .map(|k| {
                                    let index = share.nth(k);
                                    let job = jobs.get(index).expect("a share's jobs exist");
                                    let point = live.get(job.point);
                                    (k, run_job(&point, job, options, index))
                                })
                                .collect();
                            if tx.send(runs).is_err() {
                                break;
                            }
                        }
                    });
                }
            });
            drop(tx);
        });
        let mut waiting: BTreeMap<u64, RunResult> = BTreeMap::new();
        let mut received = 0;
        let mut next_taken = 0u64;
        for batch in &rx {
            for (k, result) in batch {
                match result {
                    Ok(r) => {
                        waiting.insert(k, r);
                    }
                    Err(e) => {
                        stop.store(true, Ordering::Relaxed);
                        failure.get_or_insert(e);
                    }
                }
                received += 1;
                sink.job_done(received, total);
            }
            // Hand on every run that is next in line, then tell the workers once.
            let before = next_taken;
            if failure.is_none()
                && let Err(e) = hand_on(&mut waiting, &mut next_taken, (share, &jobs, &live), sink)
            {
                stop.store(true, Ordering::Relaxed);
                failure = Some(e);
            }
            if next_taken > before {
                *taken.0.lock().expect("no worker panics") = next_taken;
                taken.1.notify_all();
            }
            if stopping() {
                taken.1.notify_all();
            }
        }
    });
    failure.map_or(Ok(()), Err)
}

/// Hands `sink` every waiting run that is next in line, from job `next` of `share` on.
fn hand_on(
    waiting: &mut BTreeMap<u64, RunResult>,
    next: &mut u64,
    (share, jobs, live): (Share, &Jobs, &Live),
    sink: &mut impl Sink,
) -> io::Result<()> {
    while let Some(run) = waiting.remove(next) {
        let index = share.nth(*next);
        let job = jobs.get(index).expect("a job that ran exists");
        live.release_before(job.point);
        sink.take(index, job, &live.get(job.point), run)?;
        *next += 1;
    }
    Ok(())
}

/// Runs the jobs of `share` on the calling thread, one after another, each handed to `sink`
/// as it ends: with one worker there is no one to hand work to, so no thread, channel or lock
/// is touched per job (a hand-off per job is two futex calls, a third of the time of a run of
/// a million tiny replications).
fn execute_inline(
    sweep: &Sweep,
    share: Share,
    options: &Options,
    sink: &mut impl Sink,
) -> io::Result<()> {
    let jobs = Jobs::new(sweep);
    let total = share.len(jobs.total());
    let live = Live::new(sweep);
    for k in 0..total {
        if options.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            break;
        }
        let index = share.nth(k);
        let job = jobs.get(index).expect("a share's jobs exist");
        live.release_before(job.point);
        let point = live.get(job.point);
        let run = run_job(&point, job, options, index)?;
        sink.job_done(k + 1, total);
        sink.take(index, job, &point, run)?;
    }
    Ok(())
}

/// Runs job `index` at `point`, with its trace where the run keeps them.
fn run_job(point: &Point, job: Job, options: &Options, index: u64) -> io::Result<RunResult> {
    match options.traces {
        None => Ok(sim::totals(&point.experiment, job)),
        Some(traces) => run_traced(point, job, traces, index),
    }
}

/// Runs job `index`, streaming its intents to its trace, if the point keeps one.
fn run_traced(point: &Point, job: Job, traces: &dyn Traces, index: u64) -> io::Result<RunResult> {
    let Some(mut trace) = traces.open(point, job, index)? else {
        return Ok(sim::totals(&point.experiment, job));
    };
    let mut failure = None;
    let result = sim::simulate(&point.experiment, job, |r, attempts| {
        if let Err(e) = trace.write(r, attempts) {
            failure.get_or_insert(e);
        }
    });
    if let Some(e) = failure {
        return Err(e);
    }
    trace.finish()?;
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run a sink was handed, in the order it was handed them.
    #[derive(Default)]
    struct Taken(Vec<(u64, Job, RunResult)>, u64);

    impl Sink for Taken {
        fn job_done(&mut self, done: u64, total: u64) {
            assert!(done <= total);
            self.1 = done;
        }
        fn take(&mut self, index: u64, job: Job, _: &Point, run: RunResult) -> io::Result<()> {
            self.0.push((index, job, run));
            Ok(())
        }
    }

    /// Inline on one thread, or in batches on two or three, the sink is handed the same runs in
    /// the same order, whole shares included: batching changes who runs a job, never what.
    #[test]
    fn batches_and_one_thread_hand_on_the_same_runs_in_job_order() {
        let text = "name = \"many\"\nreplications = 150\n[workload]\ntasks = 3\n\
                    [[tool]]\nname = \"charge\"\nreply_loss = 0.3\n\
                    [[policy]]\nname = \"a\"\nmax_attempts = 3\n\
                    [[policy]]\nname = \"b\"\n";
        let source = crate::config::Source {
            name: "many.toml".into(),
            text: text.into(),
            origin: crate::config::Origin::Text,
        };
        let sweep = source.sweep().unwrap();
        assert!(batch(300, 2) > 1, "the test must cross batches");
        for share in [Share::ALL, Share { index: 1, count: 3 }] {
            let mut runs = Vec::new();
            for threads in [1, 2, 3] {
                let options = Options {
                    threads: Some(threads),
                    ..Options::default()
                };
                let mut taken = Taken::default();
                execute(&sweep, share, &options, &mut taken).unwrap();
                let total = share.len(300);
                assert_eq!((taken.0.len() as u64, taken.1), (total, total));
                let indices: Vec<u64> = taken.0.iter().map(|t| t.0).collect();
                assert_eq!(
                    indices,
                    (0..total).map(|k| share.nth(k)).collect::<Vec<_>>()
                );
                runs.push(taken.0);
            }
            assert!(runs[0] == runs[1] && runs[1] == runs[2]);
        }
    }

    #[test]
    fn a_batch_is_a_share_of_the_jobs_per_worker_within_bounds() {
        assert_eq!(batch(0, 2), 1);
        assert_eq!(batch(10, 2), 1);
        assert_eq!(batch(320, 2), 10);
        assert_eq!(batch(640, 2), MOST_IN_A_BATCH);
        assert_eq!(batch(1_000_000, 2), MOST_IN_A_BATCH);
    }

    #[test]
    fn shares_split_the_jobs_in_turn_and_cover_them_once() {
        for total in [0, 1, 7, 12] {
            for count in 1..=5 {
                let mut seen = Vec::new();
                for index in 0..count {
                    let share = Share { index, count };
                    seen.extend((0..share.len(total)).map(|k| share.nth(k)));
                }
                seen.sort_unstable();
                assert_eq!(
                    seen,
                    (0..total).collect::<Vec<_>>(),
                    "{total} jobs, {count}"
                );
            }
        }
        assert!(Share { index: 3, count: 5 }.is_empty(2));
    }
}
