//! Output files: written into a staging folder beside the target, then moved into place whole,
//! so a reader never sees a half-written experiment and a failed run leaves nothing behind.

pub mod intents;
pub mod manifest;
pub mod summary;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::config::Source;
use crate::run::Results;

/// A float at the fixed precision of every output file.
pub fn fixed(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.6}")
    } else if x.is_nan() {
        "nan".into()
    } else if x > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// A folder being filled, which becomes `<root>/<name>` on [`Staging::commit`] and is removed if
/// dropped before that.
pub struct Staging {
    path: PathBuf,
    target: PathBuf,
    /// Where the previous output waits while the new one moves in.
    old: PathBuf,
    committed: bool,
}

impl Staging {
    pub fn new(root: &Path, name: &str) -> io::Result<Staging> {
        fs::create_dir_all(root)?;
        let path = root.join(format!(".{name}.partial-{}", std::process::id()));
        if path.exists() {
            fs::remove_dir_all(&path)?;
        }
        fs::create_dir(&path)?;
        Ok(Staging {
            path,
            target: root.join(name),
            old: root.join(format!(".{name}.old-{}", std::process::id())),
            committed: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Replaces `<root>/<name>` with the staged folder.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        let had_old = self.target.exists();
        if had_old {
            fs::rename(&self.target, &self.old)?;
        }
        fs::rename(&self.path, &self.target)?;
        self.committed = true;
        if had_old {
            fs::remove_dir_all(&self.old)?;
        }
        Ok(self.target.clone())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

/// Writes every file of a finished experiment into the staging folder.
pub fn write(results: &Results, source: &Source, staging: &Staging) -> io::Result<()> {
    let dir = staging.path();
    summary::write(results, &dir.join("summary.csv"))?;
    let mut files = vec!["summary.csv"];
    if results.experiment.output.intents {
        intents::join_parts(dir, results.policies.iter().map(|p| p.runs.len()).sum())?;
        files.push("intents.csv");
    }
    manifest::write(results, source, &files, &dir.join("manifest.toml"))
}
