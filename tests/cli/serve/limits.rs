//! The server's limits: no page can post a run that holds the machine, a run in progress leaves
//! the server answering, a run is stopped when its reader goes away or the server stops, and
//! half-sent requests hold no more than the connections the server takes.

use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use super::{Served, http, post_run};

/// A run of duplicate-curve that takes seconds: within the experiment's own size.
const LONG: &[&str] = &["workload.tasks=4000", "replications=40"];

/// The folders of runs under way in the server's scratch folder below `tmp`.
fn runs_under_way(tmp: &Path) -> usize {
    std::fs::read_dir(tmp)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|scratch| std::fs::read_dir(scratch.path().join("runs")).ok())
        .map(Iterator::count)
        .sum()
}

/// Waits at most a minute for `done`, checking every 20 ms.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends the long run on a connection of its own and leaves the answer unread.
fn send_long(served: &Served) -> TcpStream {
    let host = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let body = serde_json::json!({ "sets": LONG }).to_string();
    let mut stream = TcpStream::connect(host).unwrap();
    write!(
        stream,
        "POST /x/duplicate-curve/run HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream
}

#[test]
fn a_run_past_the_experiments_own_size_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let started = Instant::now();
    let (status, ran) = post_run(
        &served,
        "duplicate-curve",
        &["workload.tasks=1000000000000"],
    );
    assert_eq!(status, 422, "{ran}");
    let error = ran["error"].as_str().unwrap();
    assert!(
        error.contains("more than the 2400000 a run on this page may make"),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it was refused, not run"
    );
    // The page says so too.
    let (_, page) = http::request("GET", &format!("{}x/duplicate-curve", served.url), None);
    assert!(
        page.contains("A run here may make up to 2400000 calls and take up to 120 s"),
        "{page}"
    );
}

#[test]
fn while_a_run_goes_on_pages_are_answered_and_a_second_run_is_told_to_wait() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start_with(dir.path(), &[], &[("TMPDIR", tmp.path())]);
    let long = send_long(&served);
    eventually("the long run to start", || runs_under_way(tmp.path()) == 1);
    let (status, index) = http::request("GET", &served.url, None);
    assert_eq!(status, 200, "{index}");
    let (status, ran) = post_run(&served, "lost-reply", &[]);
    assert_eq!(status, 503, "{ran}");
    assert!(
        ran["error"]
            .as_str()
            .unwrap()
            .contains("another reader's run is under way")
    );
    // The reader goes away: its run is stopped and its folder removed, and the next run runs.
    drop(long);
    eventually("the abandoned run to stop", || {
        runs_under_way(tmp.path()) == 0
    });
    let (status, ran) = post_run(&served, "lost-reply", &[]);
    assert_eq!(status, 200, "{ran}");
}

#[test]
fn stopping_the_server_mid_run_stops_the_run_and_removes_the_scratch_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start_with(dir.path(), &[], &[("TMPDIR", tmp.path())]);
    let _long = send_long(&served);
    eventually("the long run to start", || runs_under_way(tmp.path()) == 1);
    let started = Instant::now();
    let status = served.stop();
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "it stopped at once"
    );
    let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn half_sent_requests_hold_no_more_than_the_connections_the_server_takes() {
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start(dir.path(), &[]);
    let host = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/');
    let held: Vec<TcpStream> = (0..200)
        .map(|_| {
            let mut s = TcpStream::connect(host).unwrap();
            s.write_all(b"POST /x/duplicate-curve/run HTTP/1.1\r\nContent-Le")
                .unwrap();
            s
        })
        .collect();
    // Each further reader is answered at once, if only to be told to come back.
    let started = Instant::now();
    let (status, _) = http::request("GET", &served.url, None);
    assert!(status == 200 || status == 503, "{status}");
    assert!(started.elapsed() < Duration::from_secs(5));
    let threads = std::fs::read_dir(format!("/proc/{}/task", served.child.id()))
        .unwrap()
        .count();
    assert!(
        threads <= 64 + 4,
        "{threads} threads for 200 half-sent requests"
    );
    drop(held);
    eventually("the server to take readers again", || {
        http::request("GET", &served.url, None).0 == 200
    });
}
