//! `retrysim trace` on every shipped output that keeps its traces, in every form, and its
//! refusals; the stories it tells of the scenarios, checked against the scenario tables.

use crate::binary;

use std::fs;
use std::path::{Path, PathBuf};

use binary::{retrysim, text};
use retrysim::story::{BarKind, MomentKind, Stories};
use retrysim::time::Tick;

fn out() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("out")
}

/// The shipped output folders that keep both traces.
fn traced() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = crate::shipped::outputs()
        .into_iter()
        .filter(|d| d.join("attempts.csv").exists() && d.join("intents.csv").exists())
        .collect();
    dirs.sort();
    dirs
}

/// Checks `diagram` against the part of Mermaid's sequence-diagram grammar retrysim writes:
/// a header, participants declared before use, messages with one of four arrows, notes over a
/// participant, and no character Mermaid reads as syntax inside a text.
fn valid_mermaid(diagram: &str) -> Result<(), String> {
    let mut lines = diagram.lines();
    if lines.next() != Some("sequenceDiagram") {
        return Err("no `sequenceDiagram` header".into());
    }
    let plain = |t: &str| !t.trim().is_empty() && !t.contains([';', '#', ':', '\n']);
    let mut ids: Vec<String> = Vec::new();
    for line in lines {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("participant ") {
            let (id, label) = rest.split_once(" as ").ok_or(format!("`{l}`: no alias"))?;
            if !id.chars().all(|c| c.is_ascii_alphanumeric()) || !plain(label) {
                return Err(format!("`{l}`: a bad participant"));
            }
            ids.push(id.to_string());
            continue;
        }
        let (head, words) = l.split_once(": ").ok_or(format!("`{l}`: no text"))?;
        if !plain(words) {
            return Err(format!("`{l}`: the text holds syntax"));
        }
        if let Some(id) = head.strip_prefix("Note over ") {
            if !ids.iter().any(|i| i == id) {
                return Err(format!("`{l}`: `{id}` undeclared"));
            }
            continue;
        }
        let arrow = ["-->>", "->>", "--x", "-x"]
            .into_iter()
            .find(|a| head.contains(a))
            .ok_or(format!("`{l}`: no arrow"))?;
        let (from, to) = head.split_once(arrow).unwrap();
        for id in [from, to] {
            if !ids.iter().any(|i| i == id) {
                return Err(format!("`{l}`: `{id}` undeclared"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_traced_output_tells_every_story_in_every_form() {
    let tmp = tempfile::tempdir().unwrap();
    let dirs = traced();
    assert!(dirs.len() >= 6, "{dirs:?}");
    let mut told = 0;
    for dir in dirs {
        let stories = Stories::read(&dir).unwrap();
        let d = dir.to_str().unwrap();
        for marks in &stories.marks {
            let p = marks.policy.as_str();
            let t = retrysim(&["trace", d, "--policy", p], tmp.path());
            assert!(t.status.success(), "{d} {p}: {}", text(&t.stderr));
            let heading = format!("{} · {p} · intent 0:", stories.experiment);
            assert!(text(&t.stdout).starts_with(&heading), "{}", text(&t.stdout));
            let m = retrysim(
                &["trace", d, "--policy", p, "--format", "mermaid"],
                tmp.path(),
            );
            assert!(m.status.success(), "{d} {p}: {}", text(&m.stderr));
            valid_mermaid(&text(&m.stdout)).unwrap_or_else(|e| panic!("{d} {p}: {e}"));
            for format in ["svg", "png"] {
                let file = tmp.path().join(format!("{told}.{format}"));
                let f = file.to_str().unwrap();
                let args = ["trace", d, "--policy", p, "--format", format, "--output", f];
                let drawn = retrysim(&args, tmp.path());
                assert!(drawn.status.success(), "{d} {p}: {}", text(&drawn.stderr));
                let bytes = fs::read(&file).unwrap();
                let magic: &[u8] = if format == "svg" { b"<svg" } else { b"\x89PNG" };
                assert!(bytes.starts_with(magic), "{}", file.display());
            }
            told += 1;
        }
    }
    assert!(told >= 30, "{told} stories");
}

#[test]
fn a_config_is_traced_afresh_as_its_output_tells_it() {
    let tmp = tempfile::tempdir().unwrap();
    let config = binary::configs().join("scenarios/reconciliation.toml");
    for format in ["text", "mermaid"] {
        let policy = ["--policy", "lagging-lookup", "--format", format];
        let fresh = retrysim(
            &[&["trace", config.to_str().unwrap()][..], &policy].concat(),
            tmp.path(),
        );
        let dir = out().join("reconciliation");
        let kept = retrysim(
            &[&["trace", dir.to_str().unwrap()][..], &policy].concat(),
            tmp.path(),
        );
        assert!(fresh.status.success(), "{}", text(&fresh.stderr));
        assert_eq!(text(&fresh.stdout), text(&kept.stdout));
    }
    // Nothing is left behind where it ran.
    assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[test]
fn trace_refuses_what_the_folder_does_not_hold() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = |name: &str| out().join(name).to_str().unwrap().to_string();
    let (scenario, untraced, sweep) = (
        dir("one-deadline-one-budget"),
        dir("closed-forms"),
        dir("duplicate-curve"),
    );
    let cases: [(Vec<&str>, &[&str]); 5] = [
        (
            vec!["trace", &scenario, "--policy", "nope"],
            &["no configuration `nope`", "reset-per-layer, shared-cap-4"],
        ),
        (
            vec!["trace", &scenario, "--intent", "7"],
            &["no intent 7", "it has intents 0 to 0"],
        ),
        (
            vec!["trace", &scenario, "--task", "2"],
            &["no task 2", "tasks 0 to 0"],
        ),
        (
            vec!["trace", &untraced],
            &["has no intents.csv", "--intents --attempts"],
        ),
        (vec!["trace", &sweep], &["is a sweep", "--set"]),
    ];
    for (args, says) in cases {
        let o = retrysim(&args, tmp.path());
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = text(&o.stderr);
        for s in says {
            assert!(err.contains(s), "{args:?}: `{s}` not in {err}");
        }
        assert!(o.stdout.is_empty());
    }
    let both = retrysim(
        &["trace", &scenario, "--intent", "0", "--task", "0"],
        tmp.path(),
    );
    assert_eq!(both.status.code(), Some(2));
}

/// The scenario table of `configs/scenarios/one-deadline-one-budget.toml`, as the stories tell
/// it: 27 dispatches in 162 ticks against 4 in 24, the deadline at 20 cutting the fourth attempt.
#[test]
fn the_scenario_stories_match_the_scenario_table() {
    let stories = Stories::read(&out().join("one-deadline-one-budget")).unwrap();
    let story = |p: &str| stories.story(p, 0, Some(0), None).unwrap();
    let bars = |p: &str| -> Vec<usize> { story(p).lanes().iter().map(|l| l.bars.len()).collect() };

    let reset = story("reset-per-layer");
    assert_eq!(
        (reset.dispatches(), reset.span()),
        (27, (Tick(0), Tick(162)))
    );
    assert_eq!(bars("reset-per-layer"), [3, 9, 27]);
    assert!(
        reset.moments().is_empty(),
        "a deadline reset per layer is drawn nowhere"
    );

    let cap = story("shared-cap-4");
    assert_eq!(
        (cap.dispatches(), cap.span().1, cap.ending().as_str()),
        (4, Tick(24), "dispatch_budget_exhausted")
    );
    assert_eq!(bars("shared-cap-4"), [1, 2, 4]);

    let deadline = story("shared-deadline-20");
    let lanes = deadline.lanes();
    let last = lanes[2].bars.last().unwrap();
    assert_eq!((last.from, last.to), (Tick(18), Tick(20)));
    assert!(matches!(&last.kind, BarKind::Attempt { outcome, .. } if outcome == "timeout"));
    let moments = deadline.moments();
    assert_eq!(moments.len(), 1);
    assert_eq!(
        (moments[0].at, &moments[0].what),
        (Tick(20), &MomentKind::Deadline)
    );

    let backoff = story("shared-deadline-14-backoff");
    let sdk: Vec<(Tick, Tick)> = backoff.lanes()[2]
        .bars
        .iter()
        .map(|b| (b.from, b.to))
        .collect();
    assert_eq!(
        sdk,
        [(Tick(0), Tick(3)), (Tick(7), Tick(10))],
        "calls at 0 and 7, 4 ticks of backoff"
    );

    let cancel = story("cancel-at-4");
    assert_eq!(cancel.moments()[0].what, MomentKind::Cancelled);
    assert_eq!(cancel.span().1, Tick(4));

    let key = story("unknown-idempotent-key");
    let committed: Vec<bool> = key.intents[0]
        .attempts
        .iter()
        .map(|a| a.committed)
        .collect();
    assert_eq!(
        committed,
        [true, false],
        "the retry replays the first call's receipt"
    );
}

/// A lookup is drawn after the attempt it followed, for the tool's lookup time, with its answer.
#[test]
fn lookups_sit_after_the_attempt_they_followed() {
    let stories = Stories::read(&out().join("reconciliation")).unwrap();
    let story = stories.story("lost-request", 0, Some(0), None).unwrap();
    let kinds: Vec<String> = story.lanes()[0]
        .bars
        .iter()
        .map(|b| match &b.kind {
            BarKind::Attempt { outcome, .. } => format!("{outcome} {}-{}", b.from.0, b.to.0),
            BarKind::Lookup { answer } => format!("lookup {answer} {}-{}", b.from.0, b.to.0),
            BarKind::Span => "span".into(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "lost_request 0-10000",
            "lookup not_found 10000-15000",
            "ok 15000-25000"
        ]
    );
}

/// A story across hops: the task's call and every call its services made, each from its
/// caller — the api asks the service, the service the db, and the db's retry goes from the
/// service, not the client — and a fallback's lane beside its primary's.
#[test]
fn a_story_crosses_the_call_graph_from_each_caller() {
    let tmp = tempfile::tempdir().unwrap();
    let config = binary::configs().join("layered-retries.toml");
    let args = [
        "trace",
        config.to_str().unwrap(),
        "--set",
        "tool.db.server_error=0.5",
        "--policy",
        "retry-every-layer",
        "--intent",
        "1",
        "--format",
        "mermaid",
    ];
    let run = retrysim(&args, tmp.path());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let diagram = text(&run.stdout);
    valid_mermaid(&diagram).unwrap();
    for line in [
        "participant S0 as api",
        "participant S1 as service",
        "participant S2 as db",
        "C->>S0: attempt 0",
        "S0->>S1: attempt 0",
        "S1->>S2: attempt 0",
        "S2-->>S1: 5xx",
        "S1->>S2: attempt 1",
        "S0-->>C: ok",
    ] {
        assert!(diagram.contains(line), "{line}:\n{diagram}");
    }
    assert!(!diagram.contains("C->>S2"), "{diagram}");
    let config = binary::configs().join("fallback-chain.toml");
    let args = [
        "trace",
        config.to_str().unwrap(),
        "--policy",
        "fallback",
        "--intent",
        "900",
    ];
    let run = retrysim(&args, tmp.path());
    assert!(run.status.success(), "{}", text(&run.stderr));
    let story = text(&run.stdout);
    assert!(
        story.contains("intent 900 (primary): stopped: attempt_limit"),
        "{story}"
    );
    assert!(
        story.contains("intent 900 (secondary): succeeded"),
        "{story}"
    );
}
