//! The `retrysim` binary as a user meets it: output files, determinism, and bad input.

use crate::binary;

use std::fs;
use std::process::Command;

use binary::{configs, retrysim, text};

/// The first table a newcomer sees puts each measurement beside its closed form: with
/// p = a + b = 0.3 and at most four attempts, E[attempts] = 1 + p + p² + p³, recomputed here.
#[test]
fn the_default_run_needs_no_arguments_and_shows_theory() {
    let tmp = tempfile::tempdir().unwrap();
    let out = retrysim(&[], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    for name in [
        "naive",
        "retry-only",
        "reliable",
        "attempts/intent",
        "theory",
        "verdict",
    ] {
        assert!(table.contains(name), "{name} missing from\n{table}");
    }
    let summary = fs::read_to_string(tmp.path().join("out/closed-forms/summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header = rows.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 3, "one row per configuration");
    let p: f64 = 0.1 + 0.2;
    for row in &rows[1..] {
        let theory: f64 = row[column("theory_attempts_per_intent")].parse().unwrap();
        assert!(
            (theory - (1.0 + p + p * p + p * p * p)).abs() < 1e-6,
            "{theory}"
        );
        assert!(table.contains(&format!("{theory:.4}")), "{table}");
    }
    for file in ["manifest.toml", "runs.csv", "charts/comparison.svg"] {
        let path = tmp.path().join("out/closed-forms").join(file);
        assert!(path.exists(), "{}", path.display());
    }
}

#[test]
fn the_lost_reply_experiment_matches_its_theory() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("lost-reply.toml");
    let out = retrysim(&["run", config.to_str().unwrap()], tmp.path());
    assert!(out.status.success());
    let summary = fs::read_to_string(tmp.path().join("out/lost-reply/summary.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(summary.as_bytes());
    let header = rows.headers().unwrap().clone();
    let col = |row: &csv::StringRecord, name: &str| -> String {
        row[header.iter().position(|h| h == name).unwrap()].to_string()
    };
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        assert_eq!(col(row, "agrees"), "yes");
        assert_eq!(col(row, "theory_attempts_per_intent"), "1.428571");
    }
    // The key changes nothing about attempts, and removes every duplicate.
    assert_eq!(
        col(&rows[0], "attempts_per_intent"),
        col(&rows[1], "attempts_per_intent")
    );
    assert_eq!(col(&rows[0], "theory_duplicates_per_intent"), "0.285714");
    assert_eq!(col(&rows[1], "duplicates_per_intent"), "0.000000");
    let intents = fs::read_to_string(tmp.path().join("out/lost-reply/intents.csv")).unwrap();
    assert_eq!(intents.lines().count(), 1 + 2 * 400);
}

#[test]
fn a_missing_config_and_bad_arguments_exit_2_and_help_exits_0() {
    let tmp = tempfile::tempdir().unwrap();
    let out = retrysim(&["run", "nope.toml"], tmp.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nope.toml: cannot read the config"));
    assert_eq!(
        retrysim(&["run", "--bogus"], tmp.path()).status.code(),
        Some(2)
    );
    let help = retrysim(&["--help"], tmp.path());
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("run"));
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn theory_prints_closed_forms_without_simulating() {
    let tmp = tempfile::tempdir().unwrap();
    let out = retrysim(
        &["theory", "--request-loss", "0.1", "--reply-loss", "0.2"],
        tmp.path(),
    );
    assert!(out.status.success());
    let t = text(&out.stdout);
    assert!(t.contains("attempts per intent        1.428571"), "{t}");
    assert!(t.contains("duplicates per intent      0.285714"), "{t}");
    let capped = retrysim(
        &[
            "theory",
            "--request-loss",
            "0.1",
            "--reply-loss",
            "0.2",
            "--max-attempts",
            "2",
        ],
        tmp.path(),
    );
    // N = 2: E[dup] = b(1 − a) = 0.18.
    assert!(text(&capped.stdout).contains("duplicates per intent      0.180000"));
    // No loss after the commit: exactly no duplicates and no ghosts, not a rounding below 0.
    let exact = retrysim(
        &[
            "theory",
            "--request-loss",
            "0.1",
            "--reply-loss",
            "0",
            "--max-attempts",
            "2",
        ],
        tmp.path(),
    );
    let t = text(&exact.stdout);
    assert!(t.contains("duplicates per intent      0.000000"), "{t}");
    assert!(!t.contains("-0.0"), "{t}");
    let endless = retrysim(
        &["theory", "--request-loss", "0.5", "--reply-loss", "0.5"],
        tmp.path(),
    );
    assert_eq!(endless.status.code(), Some(2));
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn an_unwritable_output_folder_exits_1_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a-file"), "").unwrap();
    let out = retrysim(&["--out", "a-file/out"], tmp.path());
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with("error: cannot write under a-file/out"));
    assert!(out.stdout.is_empty());
}

/// `retrysim | head -1` must not fail because head stopped reading.
#[test]
fn a_closed_stdout_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .current_dir(tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(tmp.path().join("out/closed-forms/summary.csv").exists());
}
