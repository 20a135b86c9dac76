//! `retrysim compare`: its verdicts hold their error rate where nothing changed, find a small
//! real change, and its exports and exit codes are what the README says.

use crate::binary;

use std::fs;
use std::path::Path;

use binary::{retrysim, text};

/// Two configurations of a small order tool; its loss and seed are set per test.
const ORDERS: &str = r#"
name = "orders"
description = "orders under request and reply loss, no key vs a key"
seed = 1
replications = 5

[workload]
tasks = 200
clients = 4

[[tool]]
name = "order"
request_loss = 0.1
reply_loss = 0.2
service_time = { dist = "exponential", mean = "10ms" }

[[policy]]
name = "no-key"
max_attempts = 6

[[policy]]
name = "key"
max_attempts = 6
idempotency_key = "per_intent"
"#;

fn run(dir: &Path, out: &str, extra: &[&str]) {
    let mut args = vec!["run", "orders.toml", "--quiet", "--out", out];
    args.extend_from_slice(extra);
    let o = retrysim(&args, dir);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn setup() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("orders.toml"), ORDERS).unwrap();
    tmp
}

/// The verdicts of one comparison's JSON.
fn verdicts(json: &str) -> Vec<(String, String)> {
    let doc: serde_json::Value = serde_json::from_str(json).unwrap();
    (doc["comparisons"].as_array().unwrap().iter())
        .map(|c| {
            let name = format!(
                "{} {}",
                c["policy"].as_str().unwrap(),
                c["figure"].as_str().unwrap()
            );
            (name, c["verdict"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Forty pairs of runs of one config that differ only in seed. Holm holds the chance that a
/// table calls any difference to 5 %, so the tables that do are at most Binomial(40, 0.05),
/// which exceeds 7 with probability 0.0007; and at least 95 % of all figures find none.
#[test]
fn the_same_config_under_other_seeds_shows_no_difference() {
    let tmp = setup();
    let (mut tables_with_a_difference, mut figures, mut differences) = (0, 0, 0);
    for s in 0..40u64 {
        let (a, b) = (format!("a{s}"), format!("b{s}"));
        run(tmp.path(), &a, &["--seed", &(100 + s).to_string()]);
        run(tmp.path(), &b, &["--seed", &(1000 + s).to_string()]);
        let name = |out: &str, seed: u64| format!("{out}/orders+seed={seed}");
        let json = tmp.path().join(format!("c{s}.json"));
        let o = retrysim(
            &[
                "compare",
                &name(&a, 100 + s),
                &name(&b, 1000 + s),
                "--quiet",
                "--export-json",
                json.to_str().unwrap(),
            ],
            tmp.path(),
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v = verdicts(&fs::read_to_string(json).unwrap());
        let found = v.iter().filter(|(_, v)| v != "no_difference").count();
        assert!(v.iter().any(|(_, v)| v == "no_difference"));
        figures += v.len();
        differences += found;
        tables_with_a_difference += usize::from(found > 0);
    }
    assert!(
        tables_with_a_difference <= 7,
        "{tables_with_a_difference} of 40 tables"
    );
    assert!(figures >= 40 * 10, "{figures} figures compared");
    assert!(
        differences * 20 <= figures,
        "{differences} of {figures} figures"
    );
}

/// Reply loss from 0.2 to 0.22 raises E[attempts] = 1/(1 − a − b) by 2.9 % and duplicates by
/// 14 %: at one seed and 20 replications, paired, both are found worse, and the key's
/// duplicates (none either way) show no difference.
#[test]
fn a_small_real_change_is_found_when_paired() {
    let tmp = setup();
    run(tmp.path(), "a", &["--set", "replications=20"]);
    run(
        tmp.path(),
        "b",
        &[
            "--set",
            "replications=20",
            "--set",
            "tool.order.reply_loss=0.22",
        ],
    );
    let (a, b) = (
        "a/orders+replications=20",
        "b/orders+replications=20+reply_loss=0.22",
    );
    let o = retrysim(
        &[
            "compare",
            a,
            b,
            "--export-json",
            "c.json",
            "--export-markdown",
            "c.md",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = fs::read_to_string(tmp.path().join("c.json")).unwrap();
    let v = verdicts(&json);
    let of = |name: &str| v.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
    assert_eq!(of("no-key attempts_per_intent"), Some("worse"), "{json}");
    assert_eq!(of("key attempts_per_intent"), Some("worse"));
    assert_eq!(of("no-key duplicates_per_intent"), Some("worse"));
    assert_eq!(of("key duplicates_per_intent"), Some("no_difference"));
    assert!(json.contains("\"method\": \"paired\""));
    let table = text(&o.stdout);
    assert!(
        table.contains("attempts_per_intent") && table.contains("worse (paired"),
        "{table}"
    );
    let md = fs::read_to_string(tmp.path().join("c.md")).unwrap();
    assert!(md.contains("| configuration | figure |"), "{md}");
    // --fail-if: a worse figure exits 1, one that is not exits 0.
    let worse = retrysim(
        &[
            "compare",
            a,
            b,
            "--quiet",
            "--fail-if",
            "worse:attempts_per_intent",
        ],
        tmp.path(),
    );
    assert_eq!(worse.status.code(), Some(1));
    assert!(text(&worse.stderr).contains("worse: attempts_per_intent"));
    let fine = retrysim(
        &[
            "compare",
            a,
            b,
            "--quiet",
            "--fail-if",
            "worse:success_rate",
        ],
        tmp.path(),
    );
    assert_eq!(fine.status.code(), Some(0), "{}", text(&fine.stderr));
    // A fresh run against the folder it came from: every figure the same.
    let fresh = retrysim(
        &[
            "compare",
            a,
            "--fresh",
            "orders.toml",
            "--set",
            "replications=20",
            "--export-json",
            "f.json",
            "--quiet",
        ],
        tmp.path(),
    );
    assert!(fresh.status.success(), "{}", text(&fresh.stderr));
    let same = verdicts(&fs::read_to_string(tmp.path().join("f.json")).unwrap());
    assert!(same.iter().all(|(_, v)| v == "no_difference"), "{same:?}");
}

/// One replication is a valid input: Welch from the per-intent intervals, exit 0.
#[test]
fn one_replication_compares_by_welch() {
    let tmp = setup();
    run(tmp.path(), "a", &["--set", "replications=1"]);
    run(tmp.path(), "b", &["--set", "replications=1", "--seed", "9"]);
    let o = retrysim(
        &[
            "compare",
            "a/orders+replications=1",
            "b/orders+seed=9+replications=1",
            "--export-json",
            "c.json",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json = fs::read_to_string(tmp.path().join("c.json")).unwrap();
    assert!(json.contains("\"method\": \"welch\"") && !json.contains("\"method\": \"paired\""));
    assert!(
        text(&o.stdout).contains("not compared"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn bad_conditions_and_unrelated_folders_are_refused() {
    let tmp = setup();
    run(tmp.path(), "a", &[]);
    let o = retrysim(
        &[
            "compare",
            "a/orders",
            "a/orders",
            "--fail-if",
            "worse:atempts_per_intent",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("did you mean `attempts_per_intent`"),
        "{}",
        text(&o.stderr)
    );
    let o = retrysim(&["compare", "a/orders"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    fs::write(
        tmp.path().join("other.toml"),
        ORDERS
            .replace("\"no-key\"", "\"plain\"")
            .replace("\"key\"", "\"keyed\""),
    )
    .unwrap();
    let o = retrysim(&["run", "other.toml", "--quiet", "--out", "b"], tmp.path());
    assert!(o.status.success());
    let o = retrysim(&["compare", "a/orders", "b/orders"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("no configuration at a common point"),
        "{}",
        text(&o.stderr)
    );
    let o = retrysim(&["compare", "a/orders", "nowhere"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
}

/// `run --export-json`: summary.csv as one document, each row its columns with their types.
#[test]
fn run_exports_its_summary_as_json() {
    let tmp = setup();
    let o = retrysim(
        &[
            "run",
            "orders.toml",
            "--quiet",
            "--export-json",
            "s.json",
            "--scan",
            "tool.order.reply_loss=0.1,0.2",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let doc: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(tmp.path().join("s.json")).unwrap()).unwrap();
    let csv =
        fs::read_to_string(tmp.path().join("out/orders+reply_loss=0.1,0.2/summary.csv")).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), csv.lines().count() - 1);
    assert_eq!(doc["parameters"][0], "tool.order.reply_loss");
    assert_eq!(rows[2]["tool.order.reply_loss"], 0.2);
    assert_eq!(rows[0]["policy"], "no-key");
    assert!(rows[0]["attempts_per_intent"].as_f64().unwrap() > 1.0);
    assert_eq!(rows[0]["tasks"], 1000);
    assert!(rows[0]["theory_cost_per_task"].is_null());
}

/// The shipped demo: the impatient client's timeout cut from 2 s to 1.2 s raises attempts by
/// 5.8 % (the closed forms say 1.083 → 1.145), found worse at the shipped sizes, paired; the
/// unchanged patient client shows no difference in anything.
#[test]
fn the_shipped_demo_finds_its_change() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().unwrap();
    let o = retrysim(
        &[
            "compare",
            "out/compare-demo",
            "out/compare-demo-after",
            "--quiet",
            "--export-json",
            tmp.path().join("c.json").to_str().unwrap(),
        ],
        root,
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v = verdicts(&fs::read_to_string(tmp.path().join("c.json")).unwrap());
    assert!(
        v.contains(&("impatient attempts_per_intent".into(), "worse".into())),
        "{v:?}"
    );
    assert!(
        v.iter()
            .filter(|(n, _)| n.starts_with("patient"))
            .all(|(_, v)| v == "no_difference")
    );
}

/// A configuration found in one folder only is named in the table and in the JSON's
/// `not_compared` (`"figure": null`), and `--fail-if missing` fails on it, where `worse:any`
/// alone passes.
#[test]
fn a_configuration_in_one_folder_only_is_said_and_can_fail_the_job() {
    let tmp = setup();
    run(tmp.path(), "a", &[]);
    let one = ORDERS.replace(
        "[[policy]]\nname = \"key\"",
        "[[policy]]\nname = \"renamed\"",
    );
    fs::write(tmp.path().join("orders.toml"), one).unwrap();
    run(tmp.path(), "b", &[]);
    let args = ["compare", "a/orders", "b/orders", "--export-json", "c.json"];
    let o = retrysim(&args, tmp.path());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    assert!(
        table.contains("not compared, in one folder only: key (only in A), renamed (only in B)")
            || table.contains("renamed (only in B), key (only in A)"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(tmp.path().join("c.json")).unwrap()).unwrap();
    let missing: Vec<&serde_json::Value> = (json["not_compared"].as_array().unwrap().iter())
        .filter(|n| n["figure"].is_null())
        .collect();
    assert_eq!(missing.len(), 2, "{json}");
    assert!(
        missing
            .iter()
            .any(|n| n["configuration"] == "key" && n["why"] == "only in A")
    );
    let passes = retrysim(
        &[
            "compare",
            "a/orders",
            "b/orders",
            "--quiet",
            "--fail-if",
            "worse:any",
        ],
        tmp.path(),
    );
    assert_eq!(passes.status.code(), Some(0), "{}", text(&passes.stderr));
    let fails = retrysim(
        &[
            "compare",
            "a/orders",
            "b/orders",
            "--quiet",
            "--fail-if",
            "missing",
        ],
        tmp.path(),
    );
    assert_eq!(fails.status.code(), Some(1));
    assert!(text(&fails.stderr).contains("missing: 2 configuration(s) in one folder only"));
}

/// A summary with a configuration's row twice is refused, naming the row; a folder without
/// runs.csv is refused, naming the file, rather than compared by Welch's test without a word.
#[test]
fn a_row_twice_or_a_missing_runs_file_is_refused_by_name() {
    let tmp = setup();
    run(tmp.path(), "a", &[]);
    run(tmp.path(), "b", &[]);
    let summary = tmp.path().join("b/orders/summary.csv");
    let text_of = fs::read_to_string(&summary).unwrap();
    let second = text_of.lines().nth(1).unwrap().to_string();
    fs::write(&summary, format!("{text_of}{second}\n")).unwrap();
    let o = retrysim(&["compare", "a/orders", "b/orders"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("summary.csv:4: a second row for no-key (the first is on line 2)"),
        "{err}"
    );
    fs::write(&summary, text_of).unwrap();
    fs::remove_file(tmp.path().join("a/orders/runs.csv")).unwrap();
    let o = retrysim(&["compare", "a/orders", "b/orders"], tmp.path());
    assert_ne!(o.status.code(), Some(0));
    let err = text(&o.stderr);
    assert!(
        err.contains("runs.csv") && err.contains("cannot read"),
        "{err}"
    );
}

/// An export may not name what the command reads — the config, a compared summary — and is
/// checked before the run: nothing is run, nothing overwritten.
#[test]
fn an_export_never_writes_over_the_commands_input() {
    let tmp = setup();
    let before = fs::read(tmp.path().join("orders.toml")).unwrap();
    let o = retrysim(
        &[
            "run",
            "orders.toml",
            "--quiet",
            "--out",
            "a",
            "--export-json",
            "orders.toml",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("which this command reads"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(fs::read(tmp.path().join("orders.toml")).unwrap(), before);
    assert!(!tmp.path().join("a").exists(), "nothing ran");
    run(tmp.path(), "a", &[]);
    run(tmp.path(), "b", &[]);
    let summary = fs::read(tmp.path().join("b/orders/summary.csv")).unwrap();
    for flag in ["--export-json", "--export-markdown"] {
        let o = retrysim(
            &[
                "compare",
                "a/orders",
                "b/orders",
                flag,
                "b/orders/summary.csv",
            ],
            tmp.path(),
        );
        assert_eq!(o.status.code(), Some(2), "{flag}: {}", text(&o.stderr));
        assert_eq!(
            fs::read(tmp.path().join("b/orders/summary.csv")).unwrap(),
            summary
        );
    }
    let o = retrysim(
        &[
            "run",
            "orders.toml",
            "--quiet",
            "--out",
            "c",
            "--export-json",
            "no/such/x.json",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!tmp.path().join("c").exists(), "checked before the run");
}
