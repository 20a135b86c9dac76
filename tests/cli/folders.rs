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
    assert!(text(&run.stderr).contains("out/tiny exists and is not an output folder"));
    assert!(run.stdout.is_empty(), "nothing ran");
    assert_eq!(
        fs::read_to_string(tmp.path().join("out/tiny")).unwrap(),
        "mine\n"
    );
    assert_eq!(listing(tmp.path()), ["tiny"]);
}
