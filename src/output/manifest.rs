//! `manifest.toml`: which retrysim, which config (by name and SHA-256 of its text), which seed,
//! how many points finished, which files, and the sweep as resolved, every default filled in.
//! Nothing in it depends on the machine or the time of the run.

use std::io;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use toml::{Table, Value};

use crate::config::{ConfigError, Source, resolved};
use crate::error::Error;
use crate::experiment::Experiment;
use crate::metrics::recovery::{SMOOTHING, WITHIN, Windows};
use crate::run::Results;
use crate::sweep::{Axis, Sweep};
use crate::time::Tick;

/// Writes the manifest of a run `command` wrote: `run`, or `endpoint` for a real run the
/// endpoint recorded (named in the manifest, since no config reruns it).
pub fn write(
    results: &Results,
    source: &Source,
    files: &[String],
    (path, command): (&Path, &str),
) -> io::Result<()> {
    let exp = &results.sweep.base;
    let digest = Sha256::digest(source.text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    let count = |n: usize| Value::Integer(n as i64);
    let mut m = Table::new();
    m.insert("retrysim".into(), env!("CARGO_PKG_VERSION").into());
    if command != "run" {
        m.insert("command".into(), command.into());
    }
    m.insert("config".into(), source.name.clone().into());
    m.insert("config_sha256".into(), hex.into());
    let changes = &results.sweep.changes;
    if !changes.is_empty() {
        let flags = changes.iter().map(|c| c.as_str().into()).collect();
        m.insert("changes".into(), Value::Array(flags));
    }
    m.insert("seed".into(), Value::Integer(exp.seed as i64));
    m.insert(
        "replications".into(),
        Value::Integer(exp.replications as i64),
    );
    m.insert("points".into(), count(results.sweep.len()));
    m.insert("points_finished".into(), count(results.finished));
    m.insert("complete".into(), results.complete().into());
    m.insert(
        "files".into(),
        Value::Array(files.iter().map(|f| f.as_str().into()).collect()),
    );
    if let Some(w) = exp.recovery_windows() {
        m.insert("recovery".into(), Value::Table(recovery(&w)));
    }
    m.insert("resolved".into(), Value::Table(resolved(&results.sweep)));
    let text = toml::to_string(&m).map_err(io::Error::other)?;
    std::fs::write(
        path,
        format!("# Written by retrysim {command}; see out/README.md.\n{text}"),
    )
}

/// The windows `summary.csv` measures recovery in (at the base point; a sweep that moves the
/// trigger or the duration moves them by the same rule), each as `[from, until]`.
fn recovery(w: &Windows) -> Table {
    let span = |(from, until): (Tick, Tick)| {
        Value::Array(vec![from.to_string().into(), until.to_string().into()])
    };
    let mut t = Table::new();
    t.insert("trigger".into(), span(w.trigger));
    t.insert("before".into(), span(w.before));
    t.insert("after".into(), span(w.after));
    t.insert("judged_until".into(), w.end.to_string().into());
    t.insert("smoothing".into(), SMOOTHING.to_string().into());
    t.insert("within".into(), WITHIN.into());
    t
}

/// A manifest read back, for the charts and the stories: its table, and its path for errors
/// that name the file.
pub struct Written {
    pub path: PathBuf,
    pub table: Table,
}

impl Written {
    /// Reads `dir/manifest.toml`.
    pub fn read(dir: &Path) -> Result<Written, Error> {
        let path = dir.join("manifest.toml");
        let bad = |why: &str| Error::BadOutput(format!("{}: {why}", path.display()));
        let text = std::fs::read_to_string(&path).map_err(|e| bad(&format!("cannot read: {e}")))?;
        let table = toml::from_str(&text).map_err(|e| bad(e.message()))?;
        Ok(Written { path, table })
    }

    /// An error about this manifest.
    pub fn bad(&self, why: &str) -> Error {
        Error::BadOutput(format!("{}: {why}", self.path.display()))
    }

    /// The sweep that ran, read from the `[resolved]` table by the reader that read its config.
    pub fn sweep(&self) -> Result<Sweep, Error> {
        self.resolved()?.sweep().map_err(|e| self.bad_resolved(&e))
    }

    /// The experiment, axes and mode of the sweep that ran, its points not made again: what
    /// the charts need.
    pub fn outline(&self) -> Result<(Experiment, Vec<Axis>, bool), Error> {
        self.resolved()?
            .outline()
            .map_err(|e| self.bad_resolved(&e))
    }

    /// The `[resolved]` table as a config's text: read again as text, so its errors are told by
    /// key, not by line.
    fn resolved(&self) -> Result<Source, Error> {
        let resolved = (self.table.get("resolved"))
            .and_then(Value::as_table)
            .ok_or_else(|| self.bad("no [resolved] table"))?;
        let name = format!("{} [resolved]", self.path.display());
        Ok(Source::resolved(&name, resolved))
    }

    fn bad_resolved(&self, e: &ConfigError) -> Error {
        let allowed = (e.allowed.as_ref()).map_or(String::new(), |a| format!("; allowed: {a}"));
        let key = if e.path.is_empty() { "" } else { " " };
        self.bad(&format!(
            "[resolved]{key}{}: {}{allowed}",
            e.path, e.message
        ))
    }
}
