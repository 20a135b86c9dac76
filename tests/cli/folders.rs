//! Output folders as the runs that share them leave them: runs of one name at once, the
//! leftovers of killed runs, and a file in the output's way.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::binary::{retrysim, text};

const TINY: &str = r#"
name = "tiny"
[workload]
tasks = 200
[[tool]]
name = "charge"
reply_loss = 0.2
[[policy]]
name = "retry"
max_attempts = 3
"#;

/// The names in `out/`, hidden ones included.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir.join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs of the same name at once all finish with 0 and leave one whole run, and no hidden
/// folder outlives them.
#[test]
fn runs_of_one_name_at_once_all_finish_and_leave_one_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("tiny.toml"), TINY).unwrap();
    // A commit that renames the output aside and then finds another run's output in its
    // place failed here within the first rounds.
    for _ in 0..20 {
        let children: Vec<_> = (0..8)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_retrysim"))
                    .args([
                        "run",
                        "tiny.toml",
                        "--progress",
                        "none",
                        "--quiet",
                        "--threads",
                        "1",
                    ])
                    .current_dir(tmp.path())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "{}", text(&out.stderr));
        }
        assert_eq!(listing(tmp.path()), ["tiny"]);
        let check = retrysim(&["check", "tiny.toml", "--progress", "none"], tmp.path());
        assert!(check.status.success(), "{}", text(&check.stderr));
    }
}

/// What a killed run left (its staging folder, an output it was moving aside) is removed by the
/// next run of the same name; what a live run holds is not touched.
#[test]
fn a_later_run_removes_what_dead_runs_left() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("tiny.toml"), TINY).unwrap();
    let out = tmp.path().join("out");
    // No process has this id: Linux process ids stay below 2^22.
    let dead = 4_194_304 + 7;
    let live = std::process::id();
    for name in [
        format!(".tiny.partial-{dead}"),
        format!(".tiny.old-{dead}-0"),
        format!(".tiny.partial-{live}"),
        format!(".other.partial-{dead}"),
    ] {
        fs::create_dir_all(out.join(name).join("charts")).unwrap();
    }
    let run = retrysim(
        &["run", "tiny.toml", "--progress", "none", "--quiet"],
        tmp.path(),
    );
    assert!(run.status.success(), "{}", text(&run.stderr));
    assert_eq!(
        listing(tmp.path()),
        [
            format!(".other.partial-{dead}"),
            format!(".tiny.partial-{live}"),
            "tiny".into()
        ]
    );
}

/// A file where the output folder would go is the user's: refused before anything runs, with
/// exit 2, and left as it was.
#[test]
fn a_file_in_the_way_of_the_output_is_refused_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("tiny.toml"), TINY).unwrap();
    fs::create_dir(tmp.path().join("out")).unwrap();
    fs::write(tmp.path().join("out/tiny"), "mine\n").unwrap();
    let run = retrysim(&["run", "tiny.toml", "--progress", "none"], tmp.path());
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains("out/tiny exists and is not a folder"));
    assert!(run.stdout.is_empty(), "nothing ran");
    assert_eq!(
        fs::read_to_string(tmp.path().join("out/tiny")).unwrap(),
        "mine\n"
    );
    assert_eq!(listing(tmp.path()), ["tiny"]);
}

/// A folder retrysim did not write is the user's, whatever its name: `run`, a shard run,
/// `merge` and `calibrate` refuse it with exit 2, naming it, and leave every file in it; a
/// folder that is retrysim's (its manifest, a shard's header, a calibration's marker) or an
/// empty one is replaced as before.
#[test]
fn a_folder_retrysim_did_not_write_is_refused_and_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // A config named `src`, run with `--out .`, beside the user's own src/.
    fs::write(
        dir.join("src.toml"),
        TINY.replace("name = \"tiny\"", "name = \"src\""),
    )
    .unwrap();
    fs::create_dir(dir.join("src")).unwrap();
    fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let refused = |args: &[&str], named: &str| {
        let out = retrysim(args, dir);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let e = text(&out.stderr);
        assert!(
            e.contains(named) && e.contains("retrysim did not write"),
            "{args:?}: {e}"
        );
        assert_eq!(
            fs::read_to_string(dir.join("src/main.rs")).unwrap(),
            "fn main() {}\n"
        );
    };
    let quiet = ["--progress", "none", "--quiet"];
    refused(
        &[&["run", "src.toml", "--out", "."][..], &quiet].concat(),
        "./src is a folder",
    );
    fs::rename(dir.join("src"), dir.join("src.shard-0-of-1")).unwrap();
    fs::create_dir(dir.join("src")).unwrap();
    fs::write(dir.join("src/main.rs"), "fn main() {}\n").unwrap();
    let shard = ["run", "src.toml", "--shard", "0/1", "--out", "."];
    refused(
        &[&shard[..], &quiet].concat(),
        "src.shard-0-of-1 is a folder",
    );
    fs::remove_dir_all(dir.join("src.shard-0-of-1")).unwrap();
    let ran = retrysim(&[&shard[..], &quiet].concat(), dir);
    assert!(ran.status.success(), "{}", text(&ran.stderr));
    refused(
        &["merge", "--quiet", "--out", ".", "src.shard-0-of-1"],
        "./src is a folder",
    );
    // The same commands replace what they wrote, and an empty folder.
    fs::remove_dir_all(dir.join("src")).unwrap();
    fs::create_dir(dir.join("src")).unwrap();
    for args in [
        &[&shard[..], &quiet].concat()[..],
        &["merge", "--quiet", "--out", ".", "src.shard-0-of-1"],
        &["merge", "--quiet", "--out", ".", "src.shard-0-of-1"],
        &[&["run", "src.toml", "--out", "."][..], &quiet].concat(),
    ] {
        let out = retrysim(args, dir);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    assert!(dir.join("src/manifest.toml").is_file());

    // calibrate: its data folder, and the config it writes.
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/data/synthetic-trace.jsonl");
    let trace = trace.to_str().unwrap();
    let calibrate = ["calibrate", trace, "--out", ".", "--name", "mine"];
    fs::create_dir_all(dir.join("data/mine")).unwrap();
    fs::write(dir.join("data/mine/notes.txt"), "mine").unwrap();
    let out = retrysim(&calibrate, dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("data/mine is a folder retrysim did not write"));
    assert_eq!(
        fs::read_to_string(dir.join("data/mine/notes.txt")).unwrap(),
        "mine"
    );
    assert!(!dir.join("mine.toml").exists());
    fs::remove_dir_all(dir.join("data/mine")).unwrap();
    fs::write(dir.join("mine.toml"), "name = \"mine\"\n").unwrap();
    let out = retrysim(&calibrate, dir);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("mine.toml is a file retrysim did not write"));
    assert_eq!(
        fs::read_to_string(dir.join("mine.toml")).unwrap(),
        "name = \"mine\"\n"
    );
    assert!(!dir.join("data/mine").exists(), "nothing written");
    fs::remove_file(dir.join("mine.toml")).unwrap();
    for _ in 0..2 {
        let out = retrysim(&calibrate, dir);
        assert!(
            out.status.success(),
            "calibrate replaces its own: {}",
            text(&out.stderr)
        );
    }
}
