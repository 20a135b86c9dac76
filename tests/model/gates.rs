//! The gates a dispatch passes, through the library: same-tick ties, breakers that refuse
//! everything or only retries, concurrency limits; and replications streamed through a
//! bounded window.

use crate::common::{self, experiment, records};
use retrysim::metrics::{IntentRecord, Status, StopReason};
use retrysim::time::Tick;

/// Jobs are numbered, not listed, and runs are folded in as they finish: a trillion
/// replications start at once (and stop when asked), and the runs finished but not yet folded
/// never exceed a few per worker, so memory does not grow with the replications.
#[test]
fn replications_stream_through_a_bounded_window() {
    use retrysim::run::{Observer, Options, PointResult, jobs};
    use retrysim::sim::{Job, RunResult};
    use retrysim::sweep::{Point, Sweep};
    use std::sync::atomic::{AtomicBool, Ordering};

    struct Watch<'a> {
        cancel: &'a AtomicBool,
        stop_after: u64,
        received: u64,
        folded: u64,
        most_waiting: u64,
        replications: Vec<u64>,
    }
    impl Observer for Watch<'_> {
        fn job_done(&mut self, done: u64, _total: u64) {
            self.received = done;
            self.most_waiting = self.most_waiting.max(self.received - self.folded);
            if done >= self.stop_after {
                self.cancel.store(true, Ordering::Relaxed);
            }
        }
        fn run_done(
            &mut self,
            _: &Point,
            job: Job,
            index: u64,
            _: &RunResult,
        ) -> std::io::Result<()> {
            assert_eq!(index, self.folded, "runs are folded in job order");
            self.folded += 1;
            self.replications.push(job.replication);
            Ok(())
        }
        fn point_done(&mut self, _: usize, _: &Point, r: &PointResult) -> std::io::Result<()> {
            assert_eq!(r.policies[0].replications, 3000);
            Ok(())
        }
    }
    for (replications, stop_after) in [(1_000_000_000_000, 50), (3000, u64::MAX)] {
        let mut exp = experiment(
            "name = \"t\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"charge\"\n\
             request_loss = 0.1\nreply_loss = 0.2\n[[policy]]\nname = \"p\"\nmax_attempts = 3",
        );
        exp.replications = replications;
        let cancel = AtomicBool::new(false);
        let mut watch = Watch {
            cancel: &cancel,
            stop_after,
            received: 0,
            folded: 0,
            most_waiting: 0,
            replications: Vec::new(),
        };
        let options = Options {
            threads: Some(2),
            cancel: Some(&cancel),
            ..Options::default()
        };
        let results = jobs(Sweep::single(exp), &options, &mut watch).unwrap();
        assert_eq!(results.complete(), replications == 3000);
        // Two workers, each a window of two batches of at most 16 ahead and one batch in hand.
        assert!(
            watch.most_waiting <= 2 * 3 * 16,
            "{} runs waited",
            watch.most_waiting
        );
        assert!(
            watch
                .replications
                .iter()
                .enumerate()
                .all(|(i, &r)| r == i as u64)
        );
    }
}

/// Same-tick ties, each decided by the queue's rule that events at one tick run in the order
/// they were scheduled (a queue that ran the latest first would flip every one of them).
mod ties {
    use super::*;

    /// A script of calls that each take `after`, under one policy.
    fn scripted(after: &str, policy: &str) -> IntentRecord {
        let exp = experiment(&format!(
            r#"
            name = "t"
            [workload]
            tasks = 1
            [[tool]]
            name = "order"
            script = [{{ outcome = "ok", after = "{after}" }}]
            [[policy]]
            name = "p"
            {policy}
            "#
        ));
        records(&exp, 0)[0]
    }

    /// The timer is set at dispatch, before the reply is scheduled: a reply at exactly the
    /// timeout comes second and is late.
    #[test]
    fn a_reply_exactly_at_the_timeout_is_late() {
        let r = scripted("10ms", "timeout = \"10ms\"");
        assert_eq!(
            (r.status, r.timeouts, r.end),
            (Status::Stopped(StopReason::AttemptLimit), 1, Tick(10_000))
        );
        let early = scripted("9999us", "timeout = \"10ms\"");
        assert_eq!(early.status, Status::Succeeded);
    }

    /// Cancellation is scheduled when the intent starts, before the wait that the deadline
    /// cuts: at the same tick, cancellation wins.
    #[test]
    fn cancellation_wins_a_tie_with_the_deadline() {
        let r = scripted("30ms", "deadline = \"10ms\"\ncancel_after = \"10ms\"");
        assert_eq!(
            (r.status, r.end),
            (Status::Stopped(StopReason::Cancelled), Tick(10_000))
        );
        let later = scripted("30ms", "deadline = \"10ms\"\ncancel_after = \"11ms\"");
        assert_eq!(later.status, Status::Stopped(StopReason::DeadlineExceeded));
    }

    /// Two intents fail at the same tick and both retry at the same later tick, when the open
    /// breaker has turned half-open with room for one probe: the intent whose retry was
    /// scheduled first (whose failure was handled first) sends the probe, and the other is
    /// short-circuited.
    #[test]
    fn the_first_scheduled_retry_is_the_half_open_probe() {
        let exp = experiment(
            r#"
            name = "t"
            [workload]
            tasks = 2
            clients = 2
            [[tool]]
            name = "order"
            script = [{ outcome = "5xx", after = "10ms" }]
            [[policy]]
            name = "p"
            max_attempts = 2
            retry_on = ["5xx"]
            backoff = { kind = "constant", initial_delay = "10ms", jitter = "none" }
            breaker = { consecutive_failures = 1, open_duration = "5ms", half_open_probes = 1 }
            "#,
        );
        let rs = records(&exp, 0);
        let outcome: Vec<(u64, u32, u32, Status)> = rs
            .iter()
            .map(|r| (r.intent, r.attempts, r.short_circuited, r.status))
            .collect();
        assert_eq!(
            outcome,
            [
                (0, 2, 0, Status::Stopped(StopReason::AttemptLimit)),
                (1, 1, 1, Status::Stopped(StopReason::BreakerOpen)),
            ]
        );
    }
}

/// A retry-only breaker (`refuses = "retries"`) lets every first try through and refuses the
/// retries once it has tripped; the classic breaker refuses everything. Twelve tasks, one at a
/// time, against a tool that always fails, three attempts each, tripping on three failures.
#[test]
fn a_retry_only_breaker_lets_first_tries_through() {
    let exp = experiment(
        r#"
        name = "t"
        [workload]
        tasks = 12
        clients = 1
        [[tool]]
        name = "down"
        script = [{ outcome = "5xx", after = "10ms" }]
        [[policy]]
        name = "all"
        max_attempts = 3
        retry_on = ["5xx"]
        breaker = { consecutive_failures = 3, open_duration = "1h" }
        [[policy]]
        name = "retries"
        max_attempts = 3
        retry_on = ["5xx"]
        breaker = { consecutive_failures = 3, open_duration = "1h", refuses = "retries" }
        "#,
    );
    let sent = |p: usize| {
        records(&exp, p)
            .iter()
            .map(|r| r.attempts)
            .collect::<Vec<_>>()
    };
    let refused = |p: usize| {
        records(&exp, p)
            .iter()
            .map(|r| r.short_circuited)
            .sum::<u32>()
    };
    let mut all = vec![3];
    all.extend([0; 11]);
    assert_eq!((sent(0), refused(0)), (all, 11));
    let mut retries = vec![3];
    retries.extend([1; 11]);
    assert_eq!((sent(1), refused(1)), (retries, 11));
    assert!(
        records(&exp, 1)[1..]
            .iter()
            .all(|r| r.status == Status::Stopped(StopReason::BreakerOpen))
    );
}

/// A concurrency limit of one call in flight, three calls at once on a tool that answers in
/// 10 ms: with no line the two over the limit stop at once; with a line they go out one after
/// the other, first come first served; and a deadline that comes while a call waits stops it
/// there, unsent.
#[test]
fn a_concurrency_limit_refuses_or_lines_calls_up() {
    let run = |concurrency: &str, extra: &str| {
        let exp = experiment(&format!(
            r#"
            name = "t"
            [workload]
            tasks = 3
            clients = 3
            [[tool]]
            name = "order"
            script = [{{ outcome = "ok", after = "10ms" }}]
            [[policy]]
            name = "p"
            concurrency = {concurrency}
            {extra}
            "#
        ));
        common::traced(&exp, 0)
            .into_iter()
            .map(|(r, a)| (r.status, r.end.0, a.iter().map(|a| a.dispatch.0).collect()))
            .collect::<Vec<(Status, u64, Vec<u64>)>>()
    };
    let limited = Status::Stopped(StopReason::ConcurrencyLimited);
    assert_eq!(
        run("{ limit = 1 }", ""),
        [
            (Status::Succeeded, 10_000, vec![0]),
            (limited, 0, vec![]),
            (limited, 0, vec![]),
        ]
    );
    assert_eq!(
        run("{ limit = 1, queue = 2 }", ""),
        [
            (Status::Succeeded, 10_000, vec![0]),
            (Status::Succeeded, 20_000, vec![10_000]),
            (Status::Succeeded, 30_000, vec![20_000]),
        ]
    );
    let late = Status::Stopped(StopReason::DeadlineExceeded);
    assert_eq!(
        run("{ limit = 1, queue = 2 }", "deadline = \"15ms\""),
        [
            (Status::Succeeded, 10_000, vec![0]),
            (late, 15_000, vec![10_000]),
            (late, 15_000, vec![]),
        ]
    );
    // The line holds one: the third call finds it full.
    assert_eq!(run("{ limit = 1, queue = 1 }", "")[2], (limited, 0, vec![]));
}

/// Each retry layer follows its own rule and backoff: an agent allowing 2 attempts with a
/// constant 50-tick backoff around an sdk allowing 3 with none, on an endpoint whose every call
/// fails after 1 tick, makes 2 × 3 calls, the agent's one backoff of 50 ticks between them.
#[test]
fn each_layer_retries_by_its_own_rule_and_backoff() {
    let exp = experiment(
        "name = \"l\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"e\"\n\
         script = [{ outcome = \"5xx\", after = 1 }]\n[[policy]]\nname = \"p\"\n\
         reset_each_layer = true\nlayers = [\n\
         { name = \"agent\", max_attempts = 2, backoff = { kind = \"constant\", initial_delay = 50, jitter = \"none\" } },\n\
         { name = \"sdk\", max_attempts = 3, backoff = { kind = \"constant\", initial_delay = 0, jitter = \"none\" } },\n]\n",
    );
    let (record, attempts) = common::traced(&exp, 0).remove(0);
    let dispatched: Vec<u64> = attempts.iter().map(|a| a.dispatch.0).collect();
    assert_eq!(dispatched, [0, 1, 2, 53, 54, 55]);
    assert_eq!(record.status, Status::Stopped(StopReason::AttemptLimit));
    assert_eq!(record.backoff, Tick(50));
}
