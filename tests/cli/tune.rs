//! `retrysim tune`: it finds a known answer, its choice is reproducible byte for byte, its
//! recommendation meets the constraints on a seed it never saw, and a bad `[tune]` table or a
//! `run` of a tune config is refused with a located error.

use crate::binary;

use std::fs;

use binary::{configs, files, retrysim, text};

/// Orders with a = 0.2, b = 0.1 and a per-intent key: an intent succeeds within N attempts with
/// 1 − 0.3ᴺ, so the smallest N with success ≥ 0.99 is 4 (0.9919; 3 gives 0.973), and fewer
/// attempts always cost fewer attempts per intent.
const KNOWN: &str = r#"
name = "known"
seed = 5

[workload]
tasks = 2000

[[tool]]
name = "order"
request_loss = 0.2
reply_loss = 0.1

[[policy]]
name = "keyed"
idempotency_key = "per_intent"

[tune]
objective = "minimise attempts_per_intent"
constraints = ["success_rate >= 0.99"]
budget = 40
validation = 20

[tune.search]
max_attempts = { from = 1, to = 8, points = 8 }
"#;

#[test]
fn the_tuner_finds_the_closed_form_answer_and_says_it_again_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("known.toml"), KNOWN).unwrap();
    let o = retrysim(
        &["tune", "known.toml", "--out", "a", "--threads", "1"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let recommended = fs::read_to_string(tmp.path().join("a/known/recommended.toml")).unwrap();
    assert!(recommended.contains("max_attempts = 4\n"), "{recommended}");
    // The validation's success, recomputed from candidates.csv, is inside the closed form's
    // reach: 1 − 0.3⁴ = 0.9919 within its interval.
    let csv = fs::read_to_string(tmp.path().join("a/known/candidates.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let chosen: Vec<&str> = csv
        .lines()
        .find(|l| l.ends_with(",yes"))
        .unwrap()
        .split(',')
        .collect();
    let mean: f64 = chosen[at("validation_success_rate")].parse().unwrap();
    let half: f64 = chosen[at("validation_success_rate_ci95")].parse().unwrap();
    assert!(
        (mean - (1.0 - 0.3f64.powi(4))).abs() <= half,
        "{mean} ± {half}"
    );
    assert!(
        mean - half >= 0.99,
        "the constraint holds at the lower bound"
    );
    // Every file again, byte for byte, on another number of threads.
    let o = retrysim(
        &[
            "tune",
            "known.toml",
            "--out",
            "b",
            "--threads",
            "2",
            "--quiet",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(files(&tmp.path().join("a")), files(&tmp.path().join("b")));
}

/// The shipped tuning's recommendation, run on a seed the tuner never used, meets both
/// constraints, and its settings are printed in urllib3's and gRPC's words.
#[test]
fn the_shipped_recommendation_meets_its_constraints_on_a_fresh_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let config = configs().join("tune-retry.toml");
    let o = retrysim(
        &["tune", config.to_str().unwrap(), "--out", "."],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("in urllib3's words:\nurllib3.util.Retry(total="),
        "{out}"
    );
    assert!(
        out.contains("in grpc's words:") && out.contains("\"retryPolicy\""),
        "{out}"
    );
    let dir = tmp.path().join("tune-retry");
    for file in [
        "candidates.csv",
        "charts/pareto.svg",
        "recommended.toml",
        "in-words.md",
        "manifest.toml",
    ] {
        assert!(dir.join(file).is_file(), "{file}");
    }
    let o = retrysim(
        &[
            "run",
            "tune-retry/recommended.toml",
            "--seed",
            "777",
            "--quiet",
            "--out",
            "fresh",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let summary = fs::read_to_string(
        tmp.path()
            .join("fresh/tune-retry-recommended+seed=777/summary.csv"),
    )
    .unwrap();
    let mut lines = summary.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let row: Vec<&str> = lines.next().unwrap().split(',').collect();
    let value = |name: &str| -> f64 {
        row[header.iter().position(|h| *h == name).unwrap()]
            .parse()
            .unwrap()
    };
    assert!(
        value("task_success_rate") >= 0.99,
        "{}",
        value("task_success_rate")
    );
    assert!(
        value("completion_p99_s") <= 3.0,
        "{}",
        value("completion_p99_s")
    );
}

#[test]
fn a_tune_config_is_not_run_and_a_bad_tune_table_is_located() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("known.toml"), KNOWN).unwrap();
    let o = retrysim(&["run", "known.toml"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("is for `retrysim tune`"),
        "{}",
        text(&o.stderr)
    );
    assert!(!tmp.path().join("out").exists(), "nothing written");
    for (good, bad, says) in [
        (
            "minimise attempts_per_intent",
            "minimise atempts_per_intent",
            "did you mean",
        ),
        (
            "success_rate >= 0.99",
            "success_rate => 0.99",
            "is not a constraint",
        ),
        ("from = 1, to = 8, points = 8", "from = 1, to = 8", "points"),
    ] {
        fs::write(tmp.path().join("bad.toml"), KNOWN.replace(good, bad)).unwrap();
        let o = retrysim(&["tune", "bad.toml"], tmp.path());
        assert_eq!(o.status.code(), Some(2), "{bad}");
        let err = text(&o.stderr);
        assert!(
            err.contains("bad.toml") && err.contains("tune.") && err.contains(says),
            "{err}"
        );
    }
    let o = retrysim(
        &["tune", configs().join("lost-reply.toml").to_str().unwrap()],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("has no [tune] table"));
}
