//! The sweep workflow end to end through the binary: run a sweep on any number of threads, redraw
//! its charts, check it against a fresh run, and stop it half way with Ctrl-C.

use crate::binary;

use std::fs;
use std::path::Path;
use std::process::Command;

use binary::{files, retrysim, text};

/// Two axes, two configurations, three replications, every chart in both formats, intents on.
const SWEEP: &str = r#"
name = "small-sweep"
description = "a test sweep"
seed = 7
replications = 3

[workload]
tasks = 300
clients = 20

[[tool]]
name = "charge"
request_loss = 0.1

[[policy]]
name = "no-key"
max_attempts = 5

[[policy]]
name = "key"
max_attempts = 5
idempotency_key = "per_intent"

[sweep]
[[sweep.axis]]
path = "tool.charge.reply_loss"
values = [0.0, 0.2, 0.4]

[[sweep.axis]]
path = "workload.clients"
values = [1, 50]

[output]
intents = true
attempts = true
charts = ["duplicate-curve", "attempts-curve", "success-curve", "comparison", "latency", "tasks", "grid"]
chart_formats = ["svg", "png"]
"#;

fn write_config(dir: &Path, text: &str) {
    fs::write(dir.join("sweep.toml"), text).unwrap();
}

/// A folder where `SWEEP` was written to sweep.toml and run into out/small-sweep.
fn ran_sweep() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    write_config(tmp.path(), SWEEP);
    let out = retrysim(&["run", "sweep.toml", "--quiet"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    tmp
}

#[test]
fn one_thread_and_two_write_the_same_bytes() {
    let mut outputs = Vec::new();
    for threads in ["1", "2", "2"] {
        let tmp = tempfile::tempdir().unwrap();
        write_config(tmp.path(), SWEEP);
        let out = retrysim(
            &["run", "sweep.toml", "--quiet", "--threads", threads],
            tmp.path(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        outputs.push(files(&tmp.path().join("out/small-sweep")));
    }
    let names: Vec<&str> = outputs[0].iter().map(|(n, _)| n.as_str()).collect();
    let charts = [
        "duplicate-curve",
        "attempts-curve",
        "success-curve",
        "comparison",
        "latency",
        "tasks",
        "grid",
    ];
    let mut want: Vec<String> = charts
        .iter()
        .flat_map(|c| [format!("charts/{c}.png"), format!("charts/{c}.svg")])
        .chain(
            [
                "attempts.csv",
                "intents.csv",
                "manifest.toml",
                "runs.csv",
                "summary.csv",
                "tools.csv",
            ]
            .map(String::from),
        )
        .collect();
    want.sort();
    assert_eq!(names, want);
    assert_eq!(outputs[0], outputs[1], "one thread and two differ");
    assert_eq!(outputs[1], outputs[2], "two runs on two threads differ");
}

#[test]
fn a_sweep_writes_parameter_columns_and_a_row_per_replication() {
    let tmp = tempfile::tempdir().unwrap();
    write_config(tmp.path(), SWEEP);
    let out = retrysim(&["run", "sweep.toml", "--progress", "none"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let table = text(&out.stdout);
    assert!(table.contains("6 points over tool.charge.reply_loss × workload.clients"));
    let dir = tmp.path().join("out/small-sweep");
    let summary = fs::read_to_string(dir.join("summary.csv")).unwrap();
    let lines: Vec<&str> = summary.lines().collect();
    assert!(lines[0].starts_with("tool.charge.reply_loss,workload.clients,experiment,policy,"));
    assert_eq!(lines.len(), 1 + 6 * 2, "a row per point and configuration");
    assert!(
        lines[1].starts_with("0,1,small-sweep,no-key,"),
        "{}",
        lines[1]
    );
    assert!(
        lines[12].starts_with("0.4,50,small-sweep,key,"),
        "{}",
        lines[12]
    );
    let runs = fs::read_to_string(dir.join("runs.csv")).unwrap();
    assert_eq!(runs.lines().count(), 1 + 6 * 2 * 3, "a row per replication");
    // One tool, so a row per point and configuration, summed over replications: its calls are
    // the intents' attempts, and its outcomes add up to them.
    let mut tools = csv::Reader::from_path(dir.join("tools.csv")).unwrap();
    let header = tools.headers().unwrap().clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let tool_rows: Vec<csv::StringRecord> = tools.records().map(Result::unwrap).collect();
    assert_eq!(tool_rows.len(), 6 * 2);
    for row in &tool_rows {
        let calls: u64 = row[col("calls")].parse().unwrap();
        let outcomes: u64 = header
            .iter()
            .enumerate()
            .filter(|(_, h)| h.starts_with("outcome_"))
            .map(|(i, _)| row[i].parse::<u64>().unwrap())
            .sum();
        assert_eq!(calls, outcomes);
        assert_eq!(&row[col("intents")], "900", "3 replications of 300");
    }
    let intents = fs::read_to_string(dir.join("intents.csv")).unwrap();
    assert_eq!(intents.lines().count(), 1 + 6 * 2 * 3 * 300);
    // One row per attempt: as many as the intents' attempts add up to.
    let mut rows = csv::Reader::from_path(dir.join("intents.csv")).unwrap();
    let column = rows
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "attempts")
        .unwrap();
    let total: usize = rows
        .records()
        .map(|r| r.unwrap()[column].parse::<usize>().unwrap())
        .sum();
    let attempts = fs::read_to_string(dir.join("attempts.csv")).unwrap();
    assert_eq!(attempts.lines().count(), 1 + total);
    assert!(attempts.starts_with(
        "tool.charge.reply_loss,workload.clients,experiment,policy,replication,intent,layer,attempt,"
    ));
    let manifest = fs::read_to_string(dir.join("manifest.toml")).unwrap();
    for part in [
        "points = 6",
        "points_finished = 6",
        "complete = true",
        "[resolved.sweep]",
        "path = \"workload.clients\"",
        "values = [1, 50]",
    ] {
        assert!(manifest.contains(part), "{part} not in\n{manifest}");
    }
}

#[test]
fn plot_redraws_identical_charts_from_the_csv_alone() {
    let tmp = ran_sweep();
    let original = files(&tmp.path().join("out/small-sweep"));
    // A copy elsewhere, its charts deleted and the config gone: plot has only the folder.
    let copy = tmp.path().join("copy");
    fs::create_dir(&copy).unwrap();
    for (name, bytes) in &original {
        if !name.starts_with("charts/") {
            fs::write(copy.join(name), bytes).unwrap();
        }
    }
    fs::remove_file(tmp.path().join("sweep.toml")).unwrap();
    let out = retrysim(&["plot", "copy"], tmp.path());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(files(&copy), original);
    let missing = retrysim(&["plot", "nowhere"], tmp.path());
    assert_eq!(missing.status.code(), Some(2));
    assert!(text(&missing.stderr).contains("nowhere/manifest.toml: cannot read"));
}

#[test]
fn check_passes_on_fresh_output_and_names_every_difference() {
    let tmp = ran_sweep();
    let check = || retrysim(&["check", "sweep.toml", "--progress", "none"], tmp.path());
    let out = check();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("the same bytes as a fresh run of sweep.toml"));

    let dir = tmp.path().join("out/small-sweep");
    let summary = dir.join("summary.csv");
    let mut bytes = fs::read(&summary).unwrap();
    let last_digit = bytes.iter().rposition(u8::is_ascii_digit).unwrap();
    bytes[last_digit] = if bytes[last_digit] == b'9' {
        b'8'
    } else {
        b'9'
    };
    fs::write(&summary, &bytes).unwrap();
    fs::remove_file(dir.join("charts/grid.png")).unwrap();
    let out = check();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("out/small-sweep/summary.csv: differs from line 13"),
        "{err}"
    );
    assert!(
        err.contains("out/small-sweep/charts/grid.png: new, not in the reference"),
        "{err}"
    );
    assert!(err.contains("2 file(s)"), "{err}");
    assert!(
        err.contains("  reference: ") && err.contains("  fresh:     "),
        "the lines: {err}"
    );
    // Nothing of the fresh run is left behind.
    let names: Vec<String> = fs::read_dir(tmp.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["small-sweep"]);

    let elsewhere = retrysim(&["check", "sweep.toml", "--against", "nowhere"], tmp.path());
    assert_eq!(elsewhere.status.code(), Some(1));
    assert!(text(&elsewhere.stderr).contains("nowhere: no such output folder"));
}

#[test]
fn ctrl_c_keeps_whole_rows_of_finished_points_and_leaves_the_old_output() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = SWEEP
        .replace("tasks = 300", "tasks = 100000")
        .replace("replications = 3", "replications = 1")
        .replace(
            "values = [0.0, 0.2, 0.4]",
            "values = [0.0, 0.1, 0.2, 0.3, 0.4]",
        )
        .replace(
            "values = [1, 50]",
            "values = [10, 20, 30, 40, 50, 60, 70, 80]",
        )
        .replace("intents = true", "intents = false")
        .replace("attempts = true", "attempts = false");
    write_config(tmp.path(), &slow);
    fs::create_dir_all(tmp.path().join("out/small-sweep")).unwrap();
    fs::write(tmp.path().join("out/small-sweep/summary.csv"), "older\n").unwrap();
    fs::write(
        tmp.path().join("out/small-sweep/manifest.toml"),
        "# older\n",
    )
    .unwrap();

    let (seen, rest, status) = crate::binary::interrupted_at(
        &["run", "sweep.toml", "--progress", "plain", "--threads", "2"],
        tmp.path(),
        "point 1/40 done",
    );
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(rest.contains("interrupted:"), "{rest}");

    assert_eq!(
        fs::read_to_string(tmp.path().join("out/small-sweep/summary.csv")).unwrap(),
        "older\n",
        "the previous output is untouched"
    );
    let kept = tmp.path().join("out/small-sweep.interrupted");
    let manifest = fs::read_to_string(kept.join("manifest.toml")).unwrap();
    assert!(manifest.contains("complete = false"), "{manifest}");
    let finished: usize = manifest
        .lines()
        .find_map(|l| l.strip_prefix("points_finished = "))
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..40).contains(&finished), "{finished} points finished");
    for (file, per_point) in [("summary.csv", 2), ("runs.csv", 2)] {
        let text = fs::read_to_string(kept.join(file)).unwrap();
        assert!(text.ends_with('\n'), "{file} ends mid-row");
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.len(), 1 + finished * per_point, "{file}");
        let fields = rows[0].split(',').count();
        assert!(
            rows.iter().all(|r| r.split(',').count() == fields),
            "{file}"
        );
    }
    assert!(
        !kept.join("charts").exists(),
        "no charts of a partial sweep"
    );
    let hidden: Vec<String> = fs::read_dir(tmp.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "staging left behind: {hidden:?}");
}

/// `check` writes its fresh run in a scratch folder under the system's temporary folder, never
/// beside the reference (which may be read-only), and compares the same however the config's
/// path is spelt: relative, absolute, or from another folder.
#[test]
fn check_needs_no_room_beside_the_reference_and_any_spelling_of_the_path() {
    let tmp = ran_sweep();
    let absolute = tmp.path().join("sweep.toml");
    let reference = tmp.path().join("out/small-sweep");
    let elsewhere = tempfile::tempdir().unwrap();
    for (config, dir) in [
        ("./sweep.toml", tmp.path()),
        (absolute.to_str().unwrap(), tmp.path()),
        (absolute.to_str().unwrap(), elsewhere.path()),
    ] {
        let out = retrysim(
            &[
                "check",
                config,
                "--against",
                reference.to_str().unwrap(),
                "--progress",
                "none",
            ],
            dir,
        );
        assert!(
            out.status.success(),
            "{config} from {}: {}",
            dir.display(),
            text(&out.stderr)
        );
    }
    let check_with_tmpdir = |tmpdir: &Path| {
        Command::new(env!("CARGO_BIN_EXE_retrysim"))
            .args(["check", "sweep.toml", "--progress", "none"])
            .env("TMPDIR", tmpdir)
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    // Where the scratch folder cannot be made, check says so: it does not fall back to the
    // reference's folder.
    let out = check_with_tmpdir(Path::new("/proc/no-such-folder"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot make a scratch folder"),
        "{}",
        text(&out.stderr)
    );
    let scratch = tempfile::tempdir().unwrap();
    assert!(check_with_tmpdir(scratch.path()).status.success());
    assert_eq!(
        fs::read_dir(scratch.path()).unwrap().count(),
        0,
        "the scratch run is removed"
    );
}
