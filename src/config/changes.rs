//! "What if" from the command line: `--seed N`, `--set PATH=VALUE` (any key, repeatable) and
//! `--scan PATH=FROM:TO:STEP` or `PATH=A,B,C` (a one-axis sweep of any config). The changes are
//! made to the config's TOML with the paths a sweep uses, and the result is validated like a
//! file; an error a change causes is placed on the flag, its value underlined. A changed run is
//! named for its changes (`lost-reply+reply_loss=0.3`), so it never writes over the output of
//! the config as written, and its manifest lists them so `check` can rerun it.

use std::fmt;

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use super::{ConfigError, Origin, Source, integers, path};
use crate::experiment::ChartKind;
use crate::sweep::Sweep;

/// One change the command line makes to a config. A shard folder records its changes as
/// `{ seed = N }`, `{ set = "…" }` or `{ scan = "…" }`, so a merge repeats them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// `--seed N`
    Seed(u64),
    /// `--set PATH=VALUE`, as typed.
    Set(String),
    /// `--scan PATH=FROM:TO:STEP` or `--scan PATH=A,B,C`, as typed.
    Scan(String),
}

impl fmt::Display for Change {
    /// The change as a flag, as the manifest records it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::Seed(s) => write!(f, "--seed {s}"),
            Change::Set(t) => write!(f, "--set {t}"),
            Change::Scan(t) => write!(f, "--scan {t}"),
        }
    }
}

impl Change {
    /// The changes the classroom page (`retrysim serve`) posts, `{"sets": ["PATH=VALUE", …]}`:
    /// each a `--set` flag, so a value is checked, and refused, as the command line's would be.
    pub fn posted(body: &[u8]) -> Result<Vec<Change>, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Posted {
            sets: Vec<String>,
        }
        serde_json::from_slice::<Posted>(body)
            .map(|p| p.sets.into_iter().map(Change::Set).collect())
            .map_err(|e| format!("the request is not {{\"sets\": [\"PATH=VALUE\", …]}}: {e}"))
    }
}

/// A `--set` or `--scan` flag read: the flag as a source errors can point into, its path, and
/// the byte range of its value.
struct Flag {
    source: Source,
    path: String,
    value: std::ops::Range<usize>,
}

impl Flag {
    /// Reads the text of flag `flag` (`--set` or `--scan`).
    fn read(flag: &str, text: &str) -> Result<Flag, ConfigError> {
        let source = Source {
            name: format!("the command line ({flag})"),
            text: text.to_string(),
            origin: Origin::Text,
        };
        let Some(eq) = text.find('=') else {
            let e = ConfigError::at(&source, 0..text.len(), "", "no `=` between key and value");
            return Err(e.allowed(format!(
                "{flag} PATH=VALUE, such as {flag} tool.charge.reply_loss=0.3"
            )));
        };
        let path = text[..eq].trim().to_string();
        if path.is_empty() || path.split('.').any(str::is_empty) {
            let e = ConfigError::at(
                &source,
                0..eq.max(1),
                "",
                format!("\"{path}\" is not a key path"),
            );
            return Err(e.allowed(
                "keys joined by dots, such as \"tool.charge.reply_loss\" or \"workload.tasks\"",
            ));
        }
        if path == "sweep" || path.starts_with("sweep.") || path == "name" {
            let what = if path == "name" {
                "the name is made from the changes"
            } else {
                "a sweep is changed in its file; --scan makes a one-axis sweep"
            };
            return Err(ConfigError::at(
                &source,
                0..eq,
                &path,
                format!("`{path}` cannot be changed here: {what}"),
            ));
        }
        let name = flag;
        let flag = Flag {
            source,
            path,
            value: eq + 1..text.len(),
        };
        // An integer TOML cannot hold would otherwise be read as a string: a --set value is
        // one TOML value, a --scan's its pieces.
        let big = match name {
            "--scan" => (flag.value_text().split([':', ',']))
                .find_map(|p| integers::first_outside(p.trim())),
            _ => integers::first_outside(flag.value_text()),
        };
        if let Some(big) = big {
            return Err(flag
                .error(&flag.path, integers::outside(&big))
                .allowed(integers::ALLOWED));
        }
        Ok(flag)
    }

    fn value_text(&self) -> &str {
        &self.source.text[self.value.clone()]
    }

    /// An error at the flag's value.
    fn error(&self, path: &str, message: String) -> ConfigError {
        ConfigError::at(&self.source, self.value.clone(), path, message)
    }

    /// An error at the flag's path.
    fn path_error(&self, message: String) -> ConfigError {
        ConfigError::at(&self.source, 0..self.value.start - 1, &self.path, message)
    }
}

/// A value as TOML reads it (`0.3`, `5`, `true`, `"2s"`, `["a"]`), or else as a string, so
/// `--set policy.reliable.timeout=2s` needs no quotes.
fn value(text: &str) -> Value {
    toml::from_str::<Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| Value::String(text.trim().to_string()))
}

/// The sweep of `source` with `changes` made, named for them.
pub fn apply(source: &Source, changes: &[Change]) -> Result<Sweep, ConfigError> {
    // The file's own mistakes first, placed in the file.
    let mut sweep = source.sweep()?;
    if changes.is_empty() {
        return Ok(sweep);
    }
    let mut doc: Table = toml::from_str(&source.text).expect("the text parsed as a config above");
    let mut flags = Vec::new();
    let mut names = Vec::new();
    let mut seed = None;
    for change in changes {
        if let Change::Seed(s) = change {
            if *s > integers::LARGEST {
                let text = s.to_string();
                let flag = Source {
                    name: "the command line (--seed)".into(),
                    text: text.clone(),
                    origin: Origin::Text,
                };
                return Err(ConfigError::at(
                    &flag,
                    0..text.len(),
                    "seed",
                    integers::outside(&text),
                )
                .allowed(integers::ALLOWED));
            }
            seed = Some(*s);
            names.push(format!("seed={s}"));
            continue;
        }
        let flag = match change {
            Change::Seed(_) => unreachable!("seeds are taken above"),
            Change::Set(text) => Flag::read("--set", text)?,
            Change::Scan(text) => Flag::read("--scan", text)?,
        };
        let leaf = flag.path.rsplit('.').next().unwrap_or_default().to_string();
        let scan = matches!(change, Change::Scan(_));
        if let Some((other, _)) = flags.iter().find(|(c, f): &&(Change, Flag)| {
            matches!(c, Change::Scan(_)) != scan && same_key(&f.path, &flag.path)
        }) {
            return Err(flag
                .path_error(format!(
                    "`{other}` changes this key too: a key is set or scanned, not both"
                ))
                .allowed("--set to pin the key at one value, or --scan to sweep it"));
        }
        match change {
            Change::Scan(_) => {
                if doc.contains_key("sweep")
                    || flags.iter().any(|(c, _)| matches!(c, Change::Scan(_)))
                {
                    return Err(flag.error(&flag.path, "the config already sweeps: --scan makes a one-axis sweep of a config without one".into())
                        .allowed("--set on each swept key pins it (and takes its axis away), or an axis added to the file's [sweep]"));
                }
                doc.insert("sweep".into(), Value::Table(scan_axis(&flag)?));
                names.push(format!("{leaf}={}", flag.value_text()));
            }
            _ => {
                path::set(&mut doc, &flag.path, &value(flag.value_text()))
                    .map_err(|why| flag.path_error(why))?;
                pin(&mut doc, &flag.path);
                names.push(format!("{leaf}={}", flag.value_text()));
            }
        }
        flags.push((change.clone(), flag));
    }
    if !flags.is_empty() {
        keep_fitting_charts(&mut doc);
        let changed = Source {
            name: source.name.clone(),
            text: toml::to_string(&doc).expect("a TOML table serializes"),
            origin: source.origin.clone(),
        };
        sweep = changed.sweep().map_err(|e| blame(&flags, &e))?;
    }
    if let Some(s) = seed {
        sweep.set_seed(s);
    }
    // The config's own description speaks of the config as written ("a = 0.1"): a changed
    // run's charts and exports say what it is, made from the changes.
    sweep.base.description = described(&sweep.base.name, changes);
    let name = folder_name(&sweep.base.name, &names);
    sweep.base.name.clone_from(&name);
    sweep.changes = changes.iter().map(ToString::to_string).collect();
    Ok(sweep)
}

/// A changed run's description: the config's name and each change in words, as
/// `lost-reply with tool.order.reply_loss = 0.3, seed 7`.
fn described(name: &str, changes: &[Change]) -> String {
    let said: Vec<String> = (changes.iter())
        .map(|c| match c {
            Change::Seed(s) => format!("seed {s}"),
            Change::Set(t) | Change::Scan(t) => {
                let (path, value) = t.split_once('=').unwrap_or((t, ""));
                let between = if matches!(c, Change::Scan(_)) {
                    "over"
                } else {
                    "="
                };
                format!("{} {between} {}", path.trim(), value.trim())
            }
        })
        .collect();
    format!("{name} with {}", said.join(", "))
}

/// Whether two flags' paths name the same key: the same path, or a key on every tool (or
/// policy) and the same key on one of them (`tool.reply_loss`, `tool.charge.reply_loss`).
fn same_key(a: &str, b: &str) -> bool {
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match (short.len(), long.len()) {
        (x, y) if x == y => a == b,
        (2, 3) => short[0] == long[0] && short[1] == long[2],
        _ => false,
    }
}

/// A key set by `--set` is pinned: the sweep's axis over it, if any, goes, and the sweep with
/// it when it was the last.
fn pin(doc: &mut Table, path: &str) {
    let Some(Value::Table(sweep)) = doc.get_mut("sweep") else {
        return;
    };
    if let Some(Value::Array(axes)) = sweep.get_mut("axis") {
        axes.retain(|a| a.get("path").and_then(Value::as_str) != Some(path));
        if axes.is_empty() {
            doc.remove("sweep");
        }
    }
}

/// The charts the config names that still fit its sweep once keys are pinned or scanned (a
/// pinned duplicate curve has no axis to draw against); none left means the defaults.
fn keep_fitting_charts(doc: &mut Table) {
    let axes = doc
        .get("sweep")
        .and_then(|s| s.get("axis"))
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let Some(Value::Table(output)) = doc.get_mut("output") else {
        return;
    };
    if let Some(Value::Array(charts)) = output.get_mut("charts") {
        let asked = charts.len();
        charts.retain(|c| {
            let kind = ChartKind::ALL
                .into_iter()
                .find(|k| Some(k.name()) == c.as_str());
            kind.is_none_or(|k| k.fits(axes))
        });
        // A list the changes emptied gives way to the defaults; one empty as written (`charts
        // = []`, or `--set output.charts=[]`) still asks for no chart.
        if charts.is_empty() && asked > 0 {
            output.remove("charts");
        }
    }
}

/// The `[sweep]` table a `--scan` flag makes: one axis, a range or a list.
fn scan_axis(flag: &Flag) -> Result<Table, ConfigError> {
    let text = flag.value_text();
    let mut axis = Table::new();
    axis.insert("path".into(), flag.path.clone().into());
    let parts: Vec<&str> = text.split(':').collect();
    match parts[..] {
        [from, to, step] => {
            axis.insert("start".into(), value(from));
            axis.insert("stop".into(), value(to));
            axis.insert("step".into(), value(step));
        }
        [list] if !list.trim().is_empty() => {
            let values = list.split(',').map(value).collect();
            axis.insert("values".into(), Value::Array(values));
        }
        _ => {
            return Err(flag
                .error(
                    &flag.path,
                    format!("`{text}` is neither a range nor a list"),
                )
                .allowed("FROM:TO:STEP (0:0.5:0.1, 1s:5s:1s) or a list A,B,C"));
        }
    }
    let mut sweep = Table::new();
    sweep.insert("axis".into(), Value::Array(vec![Value::Table(axis)]));
    Ok(sweep)
}

/// Places an error found in the changed config on the flag that caused it: the one whose key
/// the error names (a sweep's own error is the scan's), else the last.
fn blame(flags: &[(Change, Flag)], e: &ConfigError) -> ConfigError {
    let leaf = |f: &Flag| f.path.rsplit('.').next().unwrap_or_default().to_string();
    let (_, flag) = flags
        .iter()
        .rev()
        .find(|(c, f)| {
            e.path.ends_with(&leaf(f))
                || (matches!(c, Change::Scan(_)) && e.path.starts_with("sweep"))
        })
        .unwrap_or(&flags[flags.len() - 1]);
    let error = if e.message.starts_with("unknown field") {
        flag.path_error(format!("{}: {}", e.path, e.message))
    } else {
        flag.error(&e.path, e.message.clone())
    };
    let error = error.suggesting(e.suggestion.clone());
    match &e.allowed {
        Some(allowed) => error.allowed(allowed.clone()),
        None => error,
    }
}

/// The experiment's name with its changes: `lost-reply+reply_loss=0.3`. Characters a folder
/// name should not hold become `_`; the name is cut at 200 characters.
fn folder_name(base: &str, changes: &[String]) -> String {
    let mut name = base.to_string();
    for c in changes {
        name.push('+');
        name.extend(c.chars().map(|ch| {
            if ch.is_ascii_alphanumeric() || "._=,-".contains(ch) {
                ch
            } else {
                '_'
            }
        }));
    }
    name.truncate(200);
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_on_every_tool_is_the_same_key_as_on_one() {
        assert!(same_key("tool.charge.reply_loss", "tool.charge.reply_loss"));
        assert!(same_key("tool.reply_loss", "tool.charge.reply_loss"));
        assert!(same_key("policy.retry.timeout", "policy.timeout"));
        assert!(!same_key(
            "tool.charge.reply_loss",
            "tool.search.reply_loss"
        ));
        assert!(!same_key("tool.reply_loss", "tool.request_loss"));
        assert!(!same_key("workload.tasks", "tool.workload.tasks"));
    }
}
