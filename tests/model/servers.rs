//! Servers that push back, through the library: a bounded line that turns calls away with a
//! 503, a line served newest first, and latency that grows with the load.

use crate::common::{self, experiment, records};
use retrysim::metrics::{Level, Sample, Status, StopReason};
use retrysim::time::Tick;

/// A scripted endpoint answering `ok` after 10 ticks, three calls arriving at once, `extra`
/// set on the tool.
fn three_at_once(extra: &str) -> String {
    format!(
        "name = \"l\"\n[workload]\ntasks = 3\nclients = 3\n[[tool]]\nname = \"e\"\n{extra}\n\
         script = [{{ outcome = \"ok\", after = 10 }}]\n"
    )
}

/// A server with one worker and room for one request in line: of three calls arriving at
/// once, one is served, one waits, one is turned away with a 503 — retried by default, a stop
/// where the policy does not retry it. Last come first served takes the newest request first.
#[test]
fn a_full_line_turns_calls_away_with_a_503() {
    let tool = |line: &str| three_at_once(&format!("workers = 1\n{line}"));
    let policies = "[[policy]]\nname = \"once\"\nmax_attempts = 1\n\
                    [[policy]]\nname = \"no-503\"\nmax_attempts = 3\nretry_on = [\"5xx\"]\n\
                    [[policy]]\nname = \"retry\"\nmax_attempts = 3\n\
                    backoff = { kind = \"constant\", initial_delay = 25, jitter = \"none\" }\n";
    let exp = experiment(&format!("{}{policies}", tool("line_limit = 1")));
    let ends = |p: usize| -> Vec<(u64, Status)> {
        let mut r: Vec<(u64, Status)> = records(&exp, p)
            .iter()
            .map(|r| (r.end.0, r.status))
            .collect();
        r.sort_by_key(|(end, _)| *end);
        r
    };
    let stopped = Status::Stopped;
    assert_eq!(
        ends(0),
        [
            (0, stopped(StopReason::AttemptLimit)),
            (10, Status::Succeeded),
            (20, Status::Succeeded)
        ]
    );
    assert_eq!(ends(1)[0], (0, stopped(StopReason::NotRetryable)));
    // Turned away at 0, backs off 25 ticks, finds the worker free and is served by 35.
    assert_eq!(
        ends(2),
        [
            (10, Status::Succeeded),
            (20, Status::Succeeded),
            (35, Status::Succeeded)
        ]
    );
    let (_, attempts) = common::traced(&exp, 0)
        .into_iter()
        .find(|(r, _)| r.end == Tick(0))
        .unwrap();
    assert_eq!(attempts[0].outcome.name(), "503");

    // Without a limit, last come first served: the third arrival is served second.
    let lifo = experiment(&format!(
        "{}[[policy]]\nname = \"p\"\n",
        tool("line_order = \"lifo\"")
    ));
    let by_intent: Vec<u64> = {
        let mut r = records(&lifo, 0);
        r.sort_by_key(|r| r.intent);
        r.iter().map(|r| r.end.0).collect()
    };
    assert_eq!(by_intent, [10, 30, 20]);
}

/// Each request already in service when a worker takes one up adds `slowdown` to its service:
/// 10, 10 + 4 and 10 + 8 ticks for three calls admitted together.
#[test]
fn latency_grows_with_the_requests_in_service() {
    let exp = experiment(&format!(
        "{}[[policy]]\nname = \"p\"\n",
        three_at_once("slowdown = 4")
    ));
    let mut ends: Vec<u64> = records(&exp, 0).iter().map(|r| r.end.0).collect();
    ends.sort_unstable();
    assert_eq!(ends, [10, 14, 18]);
    // One at a time, nobody else is in service: no slowdown.
    let serial = experiment(&format!(
        "{}[[policy]]\nname = \"p\"\n",
        three_at_once("slowdown = 4").replace("clients = 3", "clients = 1")
    ));
    let ends: Vec<u64> = records(&serial, 0).iter().map(|r| r.end.0).collect();
    assert_eq!(ends, [10, 20, 30]);
}

/// One worker, three calls at once, a 15-tick timeout: the second is taken up at 10, times
/// out at 15 and still commits at 20; the third reaches the worker at 20, after its client
/// gave up. A server that drops expired work discards it uncommitted.
#[test]
fn a_server_may_drop_work_whose_client_gave_up() {
    let effects = |drop: bool| -> (u64, u64) {
        let exp = experiment(&format!(
            "{}[[policy]]\nname = \"p\"\nmax_attempts = 1\ntimeout = 15\n",
            three_at_once(&format!("workers = 1\ndrop_expired = {drop}"))
        ));
        let rs = records(&exp, 0);
        let effects = rs.iter().map(|r| u64::from(r.effects)).sum();
        let succeeded = rs.iter().filter(|r| r.status == Status::Succeeded).count() as u64;
        (effects, succeeded)
    };
    assert_eq!(effects(false), (3, 1));
    assert_eq!(effects(true), (2, 1));
}

/// A capacity window: two workers, one of them gone from tick 5 to 25. Of four calls at once,
/// two are served at once; when they finish at 10 only one worker takes up the line, so the
/// last finishes at 30 rather than 20. Outside the window nothing changes.
#[test]
fn a_capacity_window_cuts_the_workers_for_its_span() {
    let ends = |window: &str| -> Vec<u64> {
        let exp = experiment(&format!(
            "name = \"c\"\n[workload]\ntasks = 4\nclients = 4\n[[tool]]\nname = \"e\"\n\
             workers = 2\n{window}\nscript = [{{ outcome = \"ok\", after = 10 }}]\n\
             [[policy]]\nname = \"p\"\n"
        ));
        let mut ends: Vec<u64> = records(&exp, 0).iter().map(|r| r.end.0).collect();
        ends.sort_unstable();
        ends
    };
    assert_eq!(ends(""), [10, 10, 20, 20]);
    let cut = "capacity = [{ from = 5, until = 25, fraction = 0.5 }]";
    assert_eq!(ends(cut), [10, 10, 20, 30]);
    let later = "capacity = [{ from = 40, until = 50, fraction = 0.5 }]";
    assert_eq!(ends(later), [10, 10, 20, 20]);
}

/// A rate limit cut to nothing turns every call away until the window ends, and says so: the
/// Retry-After reaches to the window's end, and a client that honours it gets through then.
#[test]
fn a_rate_limit_cut_to_nothing_sends_callers_to_the_window_end() {
    let exp = experiment(
        "name = \"c\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"e\"\n\
         request_latency = { dist = \"constant\", value = 1 }\n\
         service_time = { dist = \"constant\", value = 0 }\n\
         reply_latency = { dist = \"constant\", value = 1 }\n\
         rate_limit = { per_second = 1000, retry_after_unit = \"1us\" }\n\
         capacity = [{ from = 0, until = 100, fraction = 0 }]\n\
         [[policy]]\nname = \"p\"\nmax_attempts = 2\n",
    );
    let (record, attempts) = common::traced(&exp, 0).remove(0);
    assert_eq!(record.status, Status::Succeeded);
    assert_eq!(attempts[0].outcome.name(), "429");
    // Refused on arrival at tick 1, told to wait 99: sent again at 101 (after the reply at 2,
    // the wait is counted from the refusal's answer), through at 103.
    assert_eq!((attempts[1].dispatch, record.end), (Tick(101), Tick(103)));
}

/// With a line limit, the line never passes it: 200 calls arrive in bursts at one worker with
/// room for 3 in line, and the series, kept in bins of one tick, sees the line at 3 and never
/// above — while the same calls without a limit make a line far longer.
#[test]
fn a_bounded_line_never_exceeds_its_limit() {
    let longest = |limit: &str| {
        let exp = experiment(&format!(
            "name = \"l\"\nhorizon = \"100ms\"\n[workload]\ntasks = 200\nclients = 200\n\
             arrival = \"poisson\"\nmean_interarrival = 20\n[[tool]]\nname = \"e\"\n\
             kind = \"read_only\"\nworkers = 1\n{limit}\n\
             service_time = {{ dist = \"exponential\", mean = 30 }}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 3\n[output]\ntimeseries = 1\ncharts = []\n"
        ));
        let result = common::run_one(exp);
        let stats = result.policies[0].series.clone().unwrap();
        (0..stats.len(0))
            .map(|i| stats.level(0, i, Level::QueueLength).mean())
            .fold(0.0, f64::max)
    };
    assert_eq!(longest("line_limit = 3"), 3.0);
    assert!(longest("") > 20.0);
}

/// Where nothing can happen between an attempt's arrival and the end of its service that the
/// run does not know at its dispatch — every call taken up at once, or a plain
/// first-come-first-served line reached over a constant leg — the two are one event; and where
/// nothing can happen to the intent before the reply either (no timer that fires first), the
/// server answers at the send and the reply is the attempt's one event. Every intent's story is
/// the same as with the events apart (forced here by a time series, which watches the workers),
/// attempt by attempt, with fewer events.
#[test]
fn arrival_and_service_as_one_event_change_no_intent() {
    let config = |workers: &str, output: &str| {
        format!(
            "name = \"f\"\nseed = 3\n[workload]\ntasks = 3000\nclients = 200\n[[tool]]\n\
             name = \"t\"\nrequest_loss = 0.1\nreply_loss = 0.2\nserver_error = 0.05\n{workers}\n\
             service_time = {{ dist = \"exponential\", mean = \"10ms\" }}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 5\ntimeout = \"30ms\"\n\
             backoff = {{ kind = \"exponential\", initial_delay = \"5ms\", jitter = \"full\" }}\n\
             [output]\n{output}\n"
        )
    };
    let events = |exp| common::run_one(exp).policies[0].events;
    // Every call taken up at once; and a line of 1, 2 or 40 workers.
    for workers in ["", "workers = 1", "workers = 2", "workers = 40"] {
        let folded = experiment(&config(workers, ""));
        let apart = experiment(&config(workers, "timeseries = \"1s\""));
        let server = &folded.tools[0].server;
        assert!(server.serves_at_once() || server.foreseeable(), "{workers}");
        assert!(
            common::traced(&folded, 0) == common::traced(&apart, 0),
            "{workers}: a story changed"
        );
        let (few, many) = (events(folded.clone()), events(apart.clone()));
        assert!(
            few * 10 < many * 8,
            "{workers}: {few} events against {many}"
        );
    }
    // A line whose requests may overtake each other on the way is run event by event: the
    // same stories, without the fifth of the events the foreseen lines save.
    let varied = "workers = 2\nrequest_latency = { dist = \"exponential\", mean = \"1ms\" }";
    let (unforeseen, apart) = (
        experiment(&config(varied, "")),
        experiment(&config(varied, "timeseries = \"1s\"")),
    );
    assert!(common::traced(&unforeseen, 0) == common::traced(&apart, 0));
    let (some, all) = (events(unforeseen), events(apart));
    assert!(some * 10 >= all * 8, "{some} events against {all}");
}
