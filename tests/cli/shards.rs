//! A sweep split into shards, each run as a process of its own, and merged in any order, writes
//! the same bytes as the unsharded run; a set of shards that is not one whole run is refused.

use std::fs;
use std::path::Path;
use std::process::{Child, Command};

use crate::binary::{files, retrysim, text};

/// A small sweep that writes every kind of file: runs folded across points, configurations and
/// replications, a time series, both traces (asked for on the command line) and a chart.
const SWEEP: &str = r#"
name = "split"
seed = 7
replications = 3
[workload]
tasks = 300
clients = 40
[[tool]]
name = "charge"
request_loss = 0.1
reply_loss = 0.1
service_time = { dist = "exponential", mean = "20ms" }
[[policy]]
name = "retry"
max_attempts = 4
backoff = { kind = "exponential", initial_delay = "50ms", jitter = "full" }
[[policy]]
name = "keyed"
max_attempts = 4
idempotency_key = "per_intent"
[sweep]
[[sweep.axis]]
path = "tool.charge.reply_loss"
values = [0.0, 0.2, 0.4]
[output]
timeseries = "1s"
charts = ["duplicate-curve"]
"#;

const FLAGS: [&str; 5] = ["--intents", "--attempts", "--seed", "11", "--quiet"];

fn spawn(args: &[&str], dir: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(args)
        .current_dir(dir)
        .spawn()
        .expect("the binary starts")
}

/// Runs the `n` shards at once, each a process, into `shards/`; returns their folders.
fn run_shards(dir: &Path, n: u64) -> Vec<String> {
    let children: Vec<Child> = (0..n)
        .map(|i| {
            let spec = format!("{i}/{n}");
            let mut args = vec!["run", "split.toml", "--shard", &spec, "--out", "shards"];
            args.extend(FLAGS);
            args.extend(["--threads", "1"]);
            spawn(&args, dir)
        })
        .collect();
    for child in children {
        assert!(child.wait_with_output().unwrap().status.success());
    }
    (0..n)
        .map(|i| format!("shards/split+seed=11.shard-{i}-of-{n}"))
        .collect()
}

#[test]
fn shards_merged_in_any_order_are_the_unsharded_run_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("split.toml"), SWEEP).unwrap();
    let mut args = vec!["run", "split.toml", "--out", "whole"];
    args.extend(FLAGS);
    assert!(retrysim(&args, dir).status.success());
    let whole = files(&dir.join("whole/split+seed=11"));
    assert!(whole.iter().any(|(f, _)| f == "attempts.csv"));
    assert!(whole.iter().any(|(f, _)| f == "timeseries.csv"));
    for n in 1..=5u64 {
        let mut shards = run_shards(dir, n);
        // Merged in a different order each time: rotated, then reversed.
        shards.rotate_left((n / 2) as usize);
        shards.reverse();
        let out = format!("merged-{n}");
        let mut args = vec!["merge", "--out", &out, "--quiet"];
        args.extend(shards.iter().map(String::as_str));
        let merged = retrysim(&args, dir);
        assert!(merged.status.success(), "{n}: {}", text(&merged.stderr));
        let files = files(&dir.join(&out).join("split+seed=11"));
        assert_eq!(
            files.iter().map(|f| &f.0).collect::<Vec<_>>(),
            whole.iter().map(|f| &f.0).collect::<Vec<_>>(),
            "{n} shards"
        );
        for ((name, got), (_, want)) in files.iter().zip(&whole) {
            assert!(got == want, "{n} shards: {name} differs");
        }
        // A merge reads its shards and leaves them as they were: it can be repeated.
        assert!(retrysim(&args, dir).status.success());
        fs::remove_dir_all(dir.join("shards")).unwrap();
    }
}

/// The message of a merge that must be refused, after checking it exits 2 and writes nothing.
fn refused(dir: &Path, shards: &[&str]) -> String {
    let mut args = vec!["merge", "--out", "merged"];
    args.extend(shards);
    let out = retrysim(&args, dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        !dir.join("merged").exists(),
        "a refused merge creates nothing, not even its --out folder"
    );
    text(&out.stderr)
}

#[test]
fn a_missing_duplicated_foreign_or_damaged_shard_is_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("split.toml"), SWEEP).unwrap();
    let s = run_shards(dir, 3);
    let e = refused(dir, &[&s[0], &s[2]]);
    assert!(e.contains("shard 1 of 3 is missing"), "{e}");
    let e = refused(dir, &[&s[0], &s[1], &s[1], &s[2]]);
    assert!(e.contains("shard 1 of 3 is given twice"), "{e}");
    let e = refused(dir, &["split.toml"]);
    assert!(e.contains("not a shard folder"), "{e}");

    // A shard of another run: the same config with a different seed.
    let other = retrysim(
        &[
            "run",
            "split.toml",
            "--shard",
            "1/3",
            "--out",
            "other",
            "--quiet",
        ],
        dir,
    );
    assert!(other.status.success());
    let e = refused(dir, &[&s[0], "other/split.shard-1-of-3", &s[2]]);
    assert!(e.contains("shards of different runs"), "{e}");

    // A shard whose runs were cut short in copying, or had one bit flipped on the way: its
    // checksum names the file and the run.
    let runs = dir.join(&s[2]).join("runs.bin");
    let bytes = fs::read(&runs).unwrap();
    fs::write(&runs, &bytes[..bytes.len() - 10]).unwrap();
    let e = refused(dir, &[&s[0], &s[1], &s[2]]);
    assert!(e.contains("runs.bin: its SHA-256"), "{e}");
    assert!(e.contains("shard 2/3 of split+seed=11"), "{e}");
    for bit in [0, 8 * bytes.len() / 2 + 3, 8 * bytes.len() - 1] {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        fs::write(&runs, &flipped).unwrap();
        let e = refused(dir, &[&s[0], &s[1], &s[2]]);
        assert!(e.contains("runs.bin: its SHA-256"), "bit {bit}: {e}");
    }
    fs::write(&runs, &bytes).unwrap();

    // A config edited in a shard folder after the run, or a file added beside its own.
    let config = dir.join(&s[1]).join("config.toml");
    let written = fs::read_to_string(&config).unwrap();
    fs::write(&config, written.replace("tasks = 300", "tasks = 301")).unwrap();
    let e = refused(dir, &[&s[0], &s[1], &s[2]]);
    assert!(e.contains("config.toml: its SHA-256"), "{e}");
    fs::write(&config, written).unwrap();
    fs::write(dir.join(&s[0]).join("notes.txt"), "mine").unwrap();
    let e = refused(dir, &[&s[0], &s[1], &s[2]]);
    assert!(e.contains("notes.txt: not a file"), "{e}");
    fs::remove_file(dir.join(&s[0]).join("notes.txt")).unwrap();
    let out = retrysim(
        &["merge", "--out", "merged", "--quiet", &s[0], &s[1], &s[2]],
        dir,
    );
    assert!(
        out.status.success(),
        "the shards, restored, merge: {}",
        text(&out.stderr)
    );
}
