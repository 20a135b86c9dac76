//! Running the `retrysim` binary from tests. Each test crate uses a subset of these helpers.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn retrysim(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

pub fn configs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("configs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Every file below `dir`, by path relative to it, with its bytes, in name order.
pub fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else {
                let name = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((name, fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// Runs retrysim with `args` in `dir`, waits for a line of its stderr that holds `cue`, then
/// interrupts it as Ctrl-C does: what it said up to the cue, what it said after, and how it
/// ended.
pub fn interrupted_at(
    args: &[&str],
    dir: &Path,
    cue: &str,
) -> (String, String, std::process::ExitStatus) {
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_retrysim"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let (mut seen, mut line) = (String::new(), String::new());
    while stderr.read_line(&mut line).unwrap() > 0 {
        seen.push_str(&line);
        if line.contains(cue) {
            break;
        }
        line.clear();
    }
    let interrupt = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(interrupt.success());
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    (seen, rest, child.wait().unwrap())
}
