//! What a hostile or careless user meets, case by case: valid configs at the limits (a
//! million calls refused in one tick, ten million attempts of one intent), inputs that must be
//! bounded, terminals that go away, files that must keep what they are, and the hints a
//! misspelling gets.

use std::fs;
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::binary::{configs, retrysim, text};
use crate::refusals::{Case, GOOD, refused};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_retrysim"))
}

/// The peak memory `--stats` reports on stderr, in MB.
fn peak_mb(stderr: &str) -> f64 {
    let at = stderr
        .find("peak memory ")
        .expect("--stats reports peak memory")
        + 12;
    stderr[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A million tasks whose calls the breaker refuses in the tick it opens: each refusal ends a
/// task and starts the next inside that tick, which must be a loop, not a deeper call.
#[test]
fn a_million_calls_refused_in_one_tick_run_in_a_flat_stack() {
    let tmp = tempfile::tempdir().unwrap();
    let config = r#"name = "refused"
[workload]
tasks = 1000000
clients = 1
[[tool]]
name = "dead"
server_error = 1.0
[[policy]]
name = "breaker"
max_attempts = 1
breaker = { consecutive_failures = 1, open_duration = "1h" }
"#;
    fs::write(tmp.path().join("c.toml"), config).unwrap();
    let out = retrysim(&["run", "c.toml", "--quiet", "--threads", "1"], tmp.path());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = fs::read_to_string(tmp.path().join("out/refused/summary.csv")).unwrap();
    let (header, row) = summary.split_once('\n').unwrap();
    let at = header
        .split(',')
        .position(|c| c == "short_circuited")
        .unwrap();
    assert_eq!(
        row.split(',').nth(at),
        Some("999999"),
        "all but the first call"
    );
}

/// Ten million attempts of one intent against a dead tool: the attempts that can change no more
/// are folded as they end, so memory stays flat.
#[test]
fn ten_million_attempts_of_one_intent_run_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let config = r#"name = "forever"
[workload]
tasks = 1
[[tool]]
name = "dead"
server_error = 1.0
[[policy]]
name = "forever"
max_attempts = 10000000
"#;
    fs::write(tmp.path().join("c.toml"), config).unwrap();
    let args = ["run", "c.toml", "--quiet", "--stats", "--threads", "1"];
    let out = retrysim(&args, tmp.path());
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(peak_mb(&err) < 64.0, "{err}");
    let summary = fs::read_to_string(tmp.path().join("out/forever/summary.csv")).unwrap();
    assert!(summary.contains(",10000000.000000,"), "{summary}");
}

/// Counts of retries a preset takes are checked where they are written: the largest count is
/// refused at the preset's own key, never wrapped to 0 or blamed on `max_attempts`.
#[test]
fn preset_counts_past_the_largest_are_refused_at_the_key_written() {
    for (preset, key) in [
        ("urllib3 = { total = 4294967295 }", "preset.urllib3.total"),
        (
            "botocore = { max_attempts = 4294967295 }",
            "preset.botocore.max_attempts",
        ),
        (
            "polly = { MaxRetryAttempts = 4294967295 }",
            "preset.polly.MaxRetryAttempts",
        ),
        (
            "envoy = { num_retries = 4294967295 }",
            "preset.envoy.num_retries",
        ),
    ] {
        let config = GOOD.replace("max_attempts = 3\n", &format!("preset.{preset}\n"));
        let tmp = tempfile::tempdir().unwrap();
        let case = Case {
            name: "a preset count past the largest",
            files: vec![("c.toml", config.into_bytes())],
            args: vec!["run".into(), "c.toml".into()],
            code: 2,
            says: vec![
                key,
                "4294967295 retries",
                "allowed: a count of retries from 0",
            ],
        };
        refused(&case, tmp.path());
        // One fewer is a valid count.
        let config = GOOD.replace(
            "max_attempts = 3\n",
            &format!("preset.{}\n", preset.replace("4294967295", "4294967294")),
        );
        fs::write(tmp.path().join("c.toml"), config).unwrap();
        let out = retrysim(&["run", "c.toml", "--quiet"], tmp.path());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{preset}: {}",
            text(&out.stderr)
        );
    }
}

/// `calibrate` reads regular files only (a folder, a FIFO or a device is refused before it is
/// opened), refuses a row or a name past its limit, and stays in bounded memory doing so.
#[test]
fn calibrate_refuses_unbounded_input_in_bounded_memory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::create_dir(dir.join("folder")).unwrap();
    let fifo = dir.join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (trace, says) in [
        ("folder", "folder: not a regular file"),
        ("fifo", "fifo: not a regular file"),
        ("/dev/zero", "/dev/zero: not a regular file"),
    ] {
        let out = retrysim(&["calibrate", trace, "--out", "written"], dir);
        assert_eq!(out.status.code(), Some(2), "{trace}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{}", text(&out.stderr));
    }
    // A 100 MB row of an access log, and a 50 MB span name in an OTLP line, each read under a
    // 256 MB limit on the process's memory.
    let header = "timestamp,operation,duration_ms,status\n";
    let mut csv = header.as_bytes().to_vec();
    csv.extend(b"2026-11-30T12:00:00Z,");
    csv.resize(csv.len() + (100 << 20), b'x');
    csv.extend(b",5,200\n");
    fs::write(dir.join("long.csv"), csv).unwrap();
    let name = "n".repeat(50 << 20);
    let span = format!(
        r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"name":"{name}","kind":3,"startTimeUnixNano":"1000","endTimeUnixNano":"2000"}}]}}]}}]}}"#
    );
    fs::write(dir.join("long.jsonl"), format!("{span}\n")).unwrap();
    drop(name);
    for (trace, says) in [
        ("long.csv", "long.csv:2: "),
        (
            "long.jsonl",
            "long.jsonl:1: an operation name of 52428800 bytes",
        ),
    ] {
        let limited = format!(
            "ulimit -v 262144; exec {} calibrate {trace} --out written",
            env!("CARGO_BIN_EXE_retrysim")
        );
        let out = Command::new("sh")
            .args(["-c", &limited])
            .current_dir(dir)
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{trace}: {err}");
        assert!(err.contains(says), "{trace}: {err}");
        assert!(
            err.len() < 1000,
            "{trace}: the error quotes the input: {} bytes",
            err.len()
        );
    }
    assert!(!dir.join("written").exists(), "nothing written");
}

/// `--set` and `--scan` of one key: the scan would drop the set without a word, so the two
/// are refused together, on the flag that came second.
#[test]
fn a_key_set_and_scanned_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (set, scan) in [
        (
            "tool.charge.reply_loss=0.3",
            "tool.charge.reply_loss=0:0.5:0.1",
        ),
        ("tool.reply_loss=0.3", "tool.charge.reply_loss=0.1,0.2"),
    ] {
        let dir = tmp.path().join(set);
        fs::create_dir(&dir).unwrap();
        let case = Case {
            name: "a key set and scanned",
            files: vec![("c.toml", GOOD.into())],
            args: ["run", "c.toml", "--set", set, "--scan", scan]
                .map(String::from)
                .to_vec(),
            code: 2,
            says: vec!["(--scan)", "changes this key too", "allowed: --set to pin"],
        };
        refused(&case, &dir);
    }
}

/// Waits for `child` at most `limit`, killing it if it is still running then.
fn finishes(mut child: std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("still running after {limit:?}: it hung");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A closed stderr is the end of what retrysim says there: an error still exits 2, a run with
/// plain progress still finishes, writes its output and exits 0, and nothing hangs or panics.
#[test]
fn a_closed_stderr_ends_the_output_not_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("bad.toml"), "name = \"x\"\nbogus = 1\n").unwrap();
    let mut child = bin()
        .args(["run", "bad.toml"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(finishes(child, Duration::from_secs(60)).code(), Some(2));

    let sweep = GOOD.replace("tasks = 10", "tasks = 20000");
    fs::write(dir.join("c.toml"), sweep).unwrap();
    let mut child = bin()
        .args(["run", "c.toml", "--progress", "plain", "--threads", "2"])
        .args(["--scan", "tool.charge.reply_loss=0:0.5:0.05"])
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first line read, then the reader goes away while the run goes on.
    let mut first = [0u8; 8];
    child
        .stderr
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    drop(child.stderr.take());
    let mut stdout = child.stdout.take().unwrap();
    let status = finishes(child, Duration::from_secs(120));
    let mut table = String::new();
    stdout.read_to_string(&mut table).unwrap();
    assert_eq!(status.code(), Some(0), "{table}");
    assert!(table.contains("wrote out/"), "{table}");
    let names: Vec<String> = fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["good+reply_loss=0_0.5_0.05"],
        "no staging folder left"
    );
}

/// `theory` takes `unlimited` as `max_attempts` means it in a config, the same as no flag.
#[test]
fn theory_takes_unlimited_attempts() {
    let tmp = tempfile::tempdir().unwrap();
    let base = ["theory", "--request-loss", "0.1", "--reply-loss", "0.2"];
    let plain = retrysim(&base, tmp.path());
    let unlimited = retrysim(
        &[&base[..], &["--max-attempts", "unlimited"]].concat(),
        tmp.path(),
    );
    assert_eq!(
        unlimited.status.code(),
        Some(0),
        "{}",
        text(&unlimited.stderr)
    );
    assert_eq!(unlimited.stdout, plain.stdout);
    assert!(text(&unlimited.stdout).contains("attempts per intent        1.428571"));
    let zero = retrysim(&[&base[..], &["--max-attempts", "0"]].concat(), tmp.path());
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        text(&zero.stderr).contains("or unlimited"),
        "{}",
        text(&zero.stderr)
    );
}

/// `trace` tells one run's story: `--scan` is no flag of it, and a config that sweeps is
/// refused before anything runs, naming the config, never a scratch folder.
#[test]
fn trace_refuses_a_scan_and_a_sweep_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("c.toml"), GOOD).unwrap();
    let out = retrysim(
        &["trace", "c.toml", "--scan", "tool.charge.reply_loss=0,0.1"],
        dir,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("unexpected argument '--scan'"),
        "{}",
        text(&out.stderr)
    );
    let curve = configs().join("duplicate-curve.toml");
    let out = retrysim(&["trace", curve.to_str().unwrap()], dir);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("duplicate-curve.toml is a sweep"), "{err}");
    // Scratch folders are named retrysim-scratch-…; the config itself may lie anywhere.
    assert!(!err.contains("retrysim-scratch-"), "a scratch path: {err}");
}

/// `trace --output` writes through a FIFO, follows a link, and leaves each what it was.
#[test]
fn trace_output_keeps_a_fifo_a_fifo_and_a_link_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("c.toml"), GOOD).unwrap();
    let fifo = dir.join("story.fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let child = bin()
        .args([
            "trace",
            "c.toml",
            "--format",
            "mermaid",
            "--output",
            "story.fifo",
        ])
        .current_dir(dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut told = String::new();
    fs::File::open(&fifo)
        .unwrap()
        .read_to_string(&mut told)
        .unwrap();
    assert_eq!(finishes(child, Duration::from_secs(60)).code(), Some(0));
    assert!(told.starts_with("sequenceDiagram"), "{told}");
    assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());

    fs::write(dir.join("drawn.svg"), "older").unwrap();
    std::os::unix::fs::symlink("drawn.svg", dir.join("link.svg")).unwrap();
    let out = retrysim(
        &["trace", "c.toml", "--format", "svg", "--output", "link.svg"],
        dir,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let link = fs::symlink_metadata(dir.join("link.svg")).unwrap();
    assert!(link.file_type().is_symlink(), "the link is still a link");
    assert!(
        fs::read_to_string(dir.join("drawn.svg"))
            .unwrap()
            .starts_with("<svg")
    );
    let out = retrysim(&["trace", "c.toml", "--output", "."], dir);
    // A folder named as the file to write is bad input, refused before the run.
    assert_eq!(out.status.code(), Some(2), "a folder is no file to write");
    let names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(names.is_empty(), "temporary files left: {names:?}");
}

/// A misspelt command, key, value or name gets the likely one; a word close to none gets
/// no guess.
#[test]
fn a_misspelling_gets_what_was_probably_meant() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = retrysim(&["rn"], dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("did you mean `retrysim run`?"),
        "{}",
        text(&out.stderr)
    );
    let out = retrysim(&["frobnicate"], dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !text(&out.stderr).contains("did you mean"),
        "{}",
        text(&out.stderr)
    );
    let out = retrysim(&["run", "--sed", "3"], dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a similar argument exists: '--seed'"));
    for (config, says) in [
        (
            GOOD.replace("reply_loss = 0.2", "reply_los = 0.2"),
            "= did you mean `reply_loss`?",
        ),
        (
            GOOD.replace(
                "max_attempts = 3",
                "max_attempts = 3\nbackoff = { kind = \"exponental\" }",
            ),
            "= did you mean \"exponential\"?",
        ),
    ] {
        let sub = tempfile::tempdir().unwrap();
        let case = Case {
            name: "a misspelt key or value",
            files: vec![("c.toml", config.into_bytes())],
            args: vec!["run".into(), "c.toml".into()],
            code: 2,
            says: vec![says],
        };
        refused(&case, sub.path());
    }
    for (set, says) in [
        ("tool.charge.reply_los=0.1", "= did you mean `reply_loss`?"),
        ("tool.chrage.reply_loss=0.1", "did you mean \"charge\"?"),
    ] {
        let sub = tempfile::tempdir().unwrap();
        let case = Case {
            name: "a misspelt --set path",
            files: vec![("c.toml", GOOD.into())],
            args: ["run", "c.toml", "--set", set].map(String::from).to_vec(),
            code: 2,
            says: vec![says],
        };
        refused(&case, sub.path());
    }
}

/// Shell completions and the manual page come from the command line's own definition.
#[test]
fn completions_and_the_manual_come_from_the_command_line() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for shell in ["bash", "zsh", "fish"] {
        let out = retrysim(&["completions", shell], dir);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = text(&out.stdout);
        assert!(
            script.contains("calibrate") && script.contains("max-attempts"),
            "{shell}"
        );
    }
    let out = retrysim(&["man"], dir);
    let page = text(&out.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH retrysim 1"),
        "{page}"
    );
    for section in ["RETRYSIM RUN", "RETRYSIM CALIBRATE", "RETRYSIM TRACE"] {
        assert!(page.contains(section), "{section}");
    }
    assert!(page.contains("\\-\\-progress"), "every flag is documented");
}

/// Redrawing an output's charts in another format (`plot --format png`) leaves `check` passing:
/// it compares the charts in the config's format and every other file.
#[test]
fn a_chart_redrawn_in_another_format_does_not_fail_check() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    fs::write(dir.join("c.toml"), GOOD).unwrap();
    let quiet = ["--progress", "none", "--quiet"];
    assert!(
        retrysim(&[&["run", "c.toml"][..], &quiet].concat(), dir)
            .status
            .success()
    );
    let plot = retrysim(&["plot", "out/good", "--format", "png,svg"], dir);
    assert!(plot.status.success(), "{}", text(&plot.stderr));
    assert!(dir.join("out/good/charts/comparison.png").is_file());
    let check = retrysim(&[&["check", "c.toml"][..], &quiet].concat(), dir);
    assert!(check.status.success(), "{}", text(&check.stderr));
    // Any other file the run does not write is still a difference.
    fs::write(dir.join("out/good/notes.csv"), "x\n").unwrap();
    let check = retrysim(&[&["check", "c.toml"][..], &quiet].concat(), dir);
    assert_eq!(check.status.code(), Some(1), "{}", text(&check.stderr));
    assert!(text(&check.stderr).contains("notes.csv: not written by the fresh run"));
}
