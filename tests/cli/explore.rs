//! `retrysim explore` end to end: the shipped exactly-one-order exploration, the same bytes on
//! any number of threads, and counterexamples that `run` and `trace` replay.

use crate::binary;

use std::fs;

use binary::{configs, files, retrysim, text};

#[test]
fn exactly_one_order_is_broken_by_a_lost_reply_without_a_key_only() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("scenarios/exactly-one-order.toml");
    let config = config.to_str().unwrap();
    for (out, threads) in [("a", "1"), ("b", "2")] {
        let o = retrysim(
            &[
                "explore",
                config,
                "--out",
                out,
                "--threads",
                threads,
                "--quiet",
            ],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    assert_eq!(files(&tmp.path().join("a")), files(&tmp.path().join("b")));
    let dir = tmp.path().join("a/exactly-one-order.explore");
    let csv = fs::read_to_string(dir.join("explore.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for line in lines {
        let row: Vec<&str> = line.split(',').collect();
        let (policy, invariant) = (row[at("policy")], row[at("invariant")]);
        let violations: u64 = row[at("violations")].parse().unwrap();
        let unkeyed = policy == "retry-only" || policy == "per-attempt-key";
        if unkeyed && invariant == "one_effect" {
            assert!(violations > 0, "{line}");
            assert_eq!(
                (
                    row[at("counterexample_faults")],
                    row[at("counterexample_attempts")]
                ),
                ("1", "2"),
                "{line}"
            );
        } else {
            assert_eq!(violations, 0, "{line}");
        }
    }
    // The counterexample replays: `run` makes the second order, `trace` tells it.
    let replay = dir.join("counterexamples/retry-only-one-effect.toml");
    let o = retrysim(
        &[
            "run",
            replay.to_str().unwrap(),
            "--quiet",
            "--out",
            "replayed",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let summary = fs::read_to_string(
        tmp.path()
            .join("replayed/exactly-one-order-retry-only-one-effect/summary.csv"),
    )
    .unwrap();
    let mut rows = summary.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let row: Vec<&str> = rows.next().unwrap().split(',').collect();
    let duplicates: f64 = row[header
        .iter()
        .position(|h| *h == "duplicates_per_intent")
        .unwrap()]
    .parse()
    .unwrap();
    assert!(duplicates > 0.0, "{summary}");
    let o = retrysim(&["trace", replay.to_str().unwrap()], tmp.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let story = fs::read_to_string(dir.join("counterexamples/retry-only-one-effect.txt")).unwrap();
    assert!(
        story.contains("committed") || story.contains("commit"),
        "{story}"
    );
    assert!(
        fs::read_to_string(dir.join("counterexamples/retry-only-one-effect.mmd"))
            .unwrap()
            .contains("sequenceDiagram")
    );
}

#[test]
fn a_bad_explore_table_is_located_and_run_ignores_a_good_one() {
    let tmp = tempfile::tempdir().unwrap();
    let good = fs::read_to_string(configs().join("scenarios/exactly-one-order.toml")).unwrap();
    fs::write(tmp.path().join("good.toml"), &good).unwrap();
    let o = retrysim(&["run", "good.toml", "--quiet"], tmp.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    for (line, located) in [
        ("faultz = 1", "explore.faultz"),
        ("tasks = 0", "explore.tasks"),
        (
            "invariants = { no_wrong_releases = true }",
            "no_wrong_release = true or false",
        ),
    ] {
        fs::write(
            tmp.path().join("bad.toml"),
            good.replace("faults = 3", &format!("faults = 3\n{line}")),
        )
        .unwrap();
        let o = retrysim(&["explore", "bad.toml"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{line}");
        assert!(
            text(&o.stderr).contains(located),
            "{line}: {}",
            text(&o.stderr)
        );
    }
}

/// A workload too large to walk is refused before any schedule runs, saying how to shrink it.
#[test]
fn an_exploration_too_large_is_refused_with_a_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("lost-reply.toml");
    let o = retrysim(
        &["explore", config.to_str().unwrap(), "--faults", "4"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("schedules") && err.contains("workload.tasks"),
        "{err}"
    );
    assert!(!tmp.path().join("out").exists());
}

/// A long exploration shows the schedules walked as a run shows its progress, and Ctrl-C ends
/// it at once with nothing written.
#[test]
fn a_long_exploration_shows_its_progress_and_stops_on_ctrl_c() {
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let interrupted = Instant::now();
    let config = crate::binary::configs().join("reliability-layer.toml");
    let args = [
        "explore",
        config.to_str().unwrap(),
        "--faults",
        "4",
        "--set",
        "workload.tasks=12",
        "--progress",
        "plain",
    ];
    let (seen, rest, status) = crate::binary::interrupted_at(&args, tmp.path(), "schedules walked");
    let line = seen.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("retrysim: ") && line.contains("schedules walked"),
        "{seen}"
    );
    assert_eq!(status.code(), Some(130), "{rest}");
    assert!(rest.contains("interrupted: nothing was written"), "{rest}");
    assert!(interrupted.elapsed() < Duration::from_secs(10));
    assert!(!tmp.path().join("out").exists());
}
