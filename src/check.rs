//! `retrysim check`: an output folder compared with a fresh run of its config, file by file and
//! byte for byte, so committed reference output can be trusted to be what the code produces.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One way two output folders differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Difference {
    /// The reference has a file the fresh run did not write.
    Missing(PathBuf),
    /// The fresh run wrote a file the reference lacks.
    Unexpected(PathBuf),
    /// Both have the file, with other bytes; `line` is the first line that differs (1-based).
    Changed { file: PathBuf, line: usize },
    /// A reference file could not be read.
    Unreadable { file: PathBuf, why: String },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Missing(p) => write!(f, "{}: not written by the fresh run", p.display()),
            Difference::Unexpected(p) => write!(f, "{}: new, not in the reference", p.display()),
            Difference::Changed { file, line } => {
                write!(f, "{}: differs from line {line}", file.display())
            }
            Difference::Unreadable { file, why } => {
                write!(f, "{}: cannot read: {why}", file.display())
            }
        }
    }
}

/// Every difference between the reference folder and a fresh one, in file-name order. Hidden
/// files (a run's own scratch files) are not part of an output and are skipped.
pub fn compare(reference: &Path, fresh: &Path) -> io::Result<Vec<Difference>> {
    let expected = files(reference)?;
    let produced = files(fresh)?;
    let mut all: Vec<&PathBuf> = expected.iter().chain(&produced).collect();
    all.sort();
    all.dedup();
    let mut differences = Vec::new();
    for file in all {
        let shown = reference.join(file);
        match (expected.contains(file), produced.contains(file)) {
            (true, false) => differences.push(Difference::Missing(shown)),
            (false, true) => differences.push(Difference::Unexpected(shown)),
            _ => {
                let old = match fs::read(&shown) {
                    Ok(bytes) => bytes,
                    Err(e) => {
                        differences.push(Difference::Unreadable {
                            file: shown,
                            why: e.to_string(),
                        });
                        continue;
                    }
                };
                let new = fs::read(fresh.join(file))?;
                if old != new {
                    let line = first_different_line(&old, &new);
                    differences.push(Difference::Changed { file: shown, line });
                }
            }
        }
    }
    Ok(differences)
}

fn first_different_line(a: &[u8], b: &[u8]) -> usize {
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a[..same].iter().filter(|&&c| c == b'\n').count() + 1
}

/// The files under `root`, relative to it, sorted; hidden names skipped.
fn files(root: &Path) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut folders = vec![PathBuf::new()];
    while let Some(folder) = folders.pop() {
        for entry in fs::read_dir(root.join(&folder))? {
            let entry = entry?;
            let name = entry.file_name();
            if name.to_string_lossy().starts_with('.') {
                continue;
            }
            let relative = folder.join(&name);
            if entry.file_type()?.is_dir() {
                folders.push(relative);
            } else {
                out.push(relative);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_line_is_named() {
        assert_eq!(first_different_line(b"a\nb\nc\n", b"a\nb\nx\n"), 3);
        assert_eq!(first_different_line(b"a\n", b"b\n"), 1);
        assert_eq!(first_different_line(b"a\nb\n", b"a\nb\nc\n"), 3);
    }
}
