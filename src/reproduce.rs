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
    /// Both have the file, with other bytes; `line` is the first line that differs (1-based),
    /// shown as each has it (cut to a readable width; `None` past the file's end).
    Changed {
        file: PathBuf,
        line: usize,
        reference: Option<String>,
        fresh: Option<String>,
    },
    /// A reference file could not be read.
    Unreadable { file: PathBuf, why: String },
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Difference::Missing(p) => write!(f, "{}: not written by the fresh run", p.display()),
            Difference::Unexpected(p) => write!(f, "{}: new, not in the reference", p.display()),
            Difference::Changed {
                file,
                line,
                reference,
                fresh,
            } => {
                let shown =
                    |l: &Option<String>| l.clone().unwrap_or_else(|| "(no such line)".into());
                write!(
                    f,
                    "{}: differs from line {line}\n  reference: {}\n  fresh:     {}",
                    file.display(),
                    shown(reference),
                    shown(fresh)
                )
            }
            Difference::Unreadable { file, why } => {
                write!(f, "{}: cannot read: {why}", file.display())
            }
        }
    }
}

/// Every difference between the reference folder and a fresh one, in file-name order. Hidden
/// files (a run's own scratch files) are not part of an output and are skipped, and so is a
/// chart in the reference that the fresh run drew in another format only: `retrysim plot
/// --format` redraws an output's charts in more formats, and the chart itself is compared in
/// the format the config names.
pub fn folders(reference: &Path, fresh: &Path) -> io::Result<Vec<Difference>> {
    let expected = files(reference)?;
    let produced = files(fresh)?;
    let mut all: Vec<&PathBuf> = expected.iter().chain(&produced).collect();
    all.sort();
    all.dedup();
    let mut differences = Vec::new();
    for file in all {
        let shown = reference.join(file);
        match (expected.contains(file), produced.contains(file)) {
            (true, false) if redrawn(file, &produced) => {}
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
                let (old, new) = (comparable(file, &old), comparable(file, &new));
                if old != new {
                    let line = first_different_line(&old, &new);
                    differences.push(Difference::Changed {
                        file: shown,
                        line,
                        reference: nth_line(&old, line),
                        fresh: nth_line(&new, line),
                    });
                }
            }
        }
    }
    Ok(differences)
}

/// Whether `file` is a chart the fresh run drew in another format: `charts/<stem>.<ext>` beside
/// a produced `charts/<stem>.<other>`.
fn redrawn(file: &Path, produced: &[PathBuf]) -> bool {
    let chart = |p: &Path| {
        (p.parent() == Some(Path::new("charts"))).then(|| p.file_stem().map(ToOwned::to_owned))?
    };
    chart(file).is_some_and(|stem| produced.iter().any(|p| chart(p).as_ref() == Some(&stem)))
}

/// The bytes of `file` that a check compares: all of them, except the manifest's `config`
/// line, the path the config was named by, which depends on how it was typed and from where
/// (the config's hash and its resolved form, on other lines, are compared).
fn comparable(file: &Path, bytes: &[u8]) -> Vec<u8> {
    if file != Path::new("manifest.toml") {
        return bytes.to_vec();
    }
    bytes
        .split_inclusive(|&b| b == b'\n')
        .filter(|line| !line.starts_with(b"config = "))
        .flatten()
        .copied()
        .collect()
}

/// The longest part of a differing line shown.
const SHOWN: usize = 160;

/// Line `n` (1-based) of `bytes`, cut to [`SHOWN`] characters.
fn nth_line(bytes: &[u8], n: usize) -> Option<String> {
    let line = bytes.split(|&b| b == b'\n').nth(n - 1)?;
    if line.is_empty() && bytes.ends_with(b"\n") && bytes.split(|&b| b == b'\n').count() == n {
        return None;
    }
    let text = String::from_utf8_lossy(line);
    Some(match text.char_indices().nth(SHOWN) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    })
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
        assert_eq!(nth_line(b"a\nb\n", 2).as_deref(), Some("b"));
        assert_eq!(nth_line(b"a\nb\n", 3), None);
    }

    #[test]
    fn the_config_path_is_not_compared_but_its_hash_is() {
        let manifest = Path::new("manifest.toml");
        let typed = |path: &str, hash: &str| {
            comparable(
                manifest,
                format!("a = 1\nconfig = \"{path}\"\nconfig_sha256 = \"{hash}\"\n").as_bytes(),
            )
        };
        assert_eq!(
            typed("configs/x.toml", "ab"),
            typed("/abs/configs/x.toml", "ab")
        );
        assert_ne!(typed("configs/x.toml", "ab"), typed("configs/x.toml", "cd"));
        let csv = Path::new("summary.csv");
        assert_eq!(comparable(csv, b"config = 1\n"), b"config = 1\n");
    }
}
