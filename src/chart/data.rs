//! What charts are drawn from: an output folder's `summary.csv`, `manifest.toml` and, where the
//! run kept one, `timeline.csv`, and nothing else, so `retrysim plot` redraws exactly what
//! `retrysim run` drew.

use std::fs;
use std::path::Path;

use toml::{Table, Value};

use crate::error::Error;
use crate::experiment::{ChartFormat, ChartKind};
use crate::output::column::{Column, Kind};
use crate::output::{summary, timeline};
use crate::time::{Tick, parse_duration};

/// One swept key and its values, in the config's order.
#[derive(Clone, Debug)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

/// One row of `summary.csv`: a configuration at a point.
#[derive(Clone, Debug)]
pub struct Row {
    /// The value of each axis at this point, as written in the CSV.
    pub params: Vec<String>,
    pub policy: String,
    cells: Vec<String>,
}

/// An output folder as the charts see it.
#[derive(Clone, Debug)]
pub struct Data {
    pub name: String,
    pub description: String,
    pub axes: Vec<Axis>,
    /// The configurations in the config's order.
    pub policies: Vec<String>,
    pub charts: Vec<ChartKind>,
    pub formats: Vec<ChartFormat>,
    pub rows: Vec<Row>,
    columns: Vec<String>,
    /// `timeline.csv` and the width of its stretches, where the run kept one.
    pub timeline: Option<(Tick, Vec<Stretch>)>,
    /// Each tool's outage windows, by tool name.
    pub outages: Vec<(String, Tick, Tick)>,
}

/// One row of `timeline.csv`: a configuration's calls to a tool in one stretch of time.
#[derive(Clone, Debug)]
pub struct Stretch {
    pub policy: String,
    pub tool: String,
    pub from: Tick,
    pub calls: u64,
}

impl Data {
    /// Reads `summary.csv` and `manifest.toml` from `dir`.
    pub fn read(dir: &Path) -> Result<Data, Error> {
        let manifest_path = dir.join("manifest.toml");
        let bad_manifest =
            |why: &str| Error::BadOutput(format!("{}: {why}", manifest_path.display()));
        let text = fs::read_to_string(&manifest_path)
            .map_err(|e| bad_manifest(&format!("cannot read: {e}")))?;
        let manifest: Table = toml::from_str(&text).map_err(|e| bad_manifest(e.message()))?;
        let resolved = manifest
            .get("resolved")
            .and_then(Value::as_table)
            .ok_or_else(|| bad_manifest("no [resolved] table"))?;
        let string = |t: &Table, key: &str| {
            t.get(key)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| bad_manifest(&format!("no `{key}`")))
        };
        let list = |t: Option<&Value>| -> Vec<Value> {
            t.and_then(Value::as_array).cloned().unwrap_or_default()
        };
        let axes = list(resolved.get("sweep").and_then(|s| s.get("axis")))
            .iter()
            .map(|a| {
                let path = a.get("path").and_then(Value::as_str);
                let values = list(a.get("values"));
                path.map(|p| Axis {
                    path: p.to_string(),
                    values: values.iter().map(cell).collect(),
                })
                .ok_or_else(|| bad_manifest("a sweep axis has no path"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let policies: Vec<String> = list(resolved.get("policy"))
            .iter()
            .filter_map(|p| p.get("name").and_then(Value::as_str).map(String::from))
            .collect();
        let output = resolved.get("output");
        let named = |key: &str| -> Vec<String> {
            list(output.and_then(|o| o.get(key)))
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        };
        // Names back to what they name, as the config layer reads them.
        let lookup = |key: &str, what: &str| -> Result<Vec<usize>, Error> {
            let names: &[&str] = match key {
                "charts" => &ChartKind::ALL.map(ChartKind::name),
                _ => &ChartFormat::ALL.map(ChartFormat::name),
            };
            named(key)
                .iter()
                .map(|n| {
                    names
                        .iter()
                        .position(|k| k == n)
                        .ok_or_else(|| bad_manifest(&format!("unknown {what} \"{n}\"")))
                })
                .collect()
        };
        let charts: Vec<ChartKind> = lookup("charts", "chart")?
            .into_iter()
            .map(|i| ChartKind::ALL[i])
            .collect();
        let formats = lookup("chart_formats", "chart format")?
            .into_iter()
            .map(|i| ChartFormat::ALL[i])
            .collect();

        let summary_path = dir.join("summary.csv");
        let bad_summary =
            |why: String| Error::BadOutput(format!("{}: {why}", summary_path.display()));
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .from_path(&summary_path)
            .map_err(|e| bad_summary(format!("cannot read: {e}")))?;
        let columns: Vec<String> = reader
            .headers()
            .map_err(|e| bad_summary(e.to_string()))?
            .iter()
            .map(String::from)
            .collect();
        let kinds = expect_columns(&columns, &axes, &summary::columns()).map_err(bad_summary)?;
        let policy_column = axes.len() + 1;
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(|e| bad_summary(e.to_string()))?;
            let line = record.position().map_or(0, |p| p.line());
            let cells: Vec<String> = record.iter().map(String::from).collect();
            check_cells(&cells, &columns, &kinds, line).map_err(bad_summary)?;
            rows.push(Row {
                params: cells[..axes.len()].to_vec(),
                policy: cells[policy_column].clone(),
                cells,
            });
        }
        let finished = manifest
            .get("points_finished")
            .and_then(Value::as_integer)
            .ok_or_else(|| bad_manifest("no `points_finished`"))?;
        let expected = finished as usize * policies.len();
        if rows.len() != expected {
            return Err(bad_summary(format!(
                "{} rows, but the manifest's {finished} finished points × {} configurations make \
                 {expected}",
                rows.len(),
                policies.len()
            )));
        }
        if let Some(kind) = charts.iter().find(|k: &&ChartKind| !k.fits(axes.len())) {
            return Err(bad_manifest(&format!(
                "the {} chart does not fit a sweep of {} axes",
                kind.name(),
                axes.len()
            )));
        }
        let duration = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .and_then(|s| parse_duration(s).ok())
        };
        let mut outages = Vec::new();
        for tool in list(resolved.get("tool")) {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
            for o in list(tool.get("outages")) {
                let (from, until) = (duration(o.get("from")), duration(o.get("until")));
                let (Some(from), Some(until)) = (from, until) else {
                    return Err(bad_manifest(&format!(
                        "an outage of \"{name}\" without its times"
                    )));
                };
                outages.push((name.to_string(), from, until));
            }
        }
        let timeline = match duration(output.and_then(|o| o.get("timeline"))) {
            None => None,
            Some(width) => Some((width, stretches(&dir.join("timeline.csv"), &axes)?)),
        };
        Ok(Data {
            name: string(resolved, "name")?,
            description: string(resolved, "description").unwrap_or_default(),
            axes,
            policies,
            charts,
            formats,
            rows,
            columns,
            timeline,
            outages,
        })
    }

    /// The value of `column` in `row` as a number; `None` for an empty cell, or one that is not
    /// a finite number (an interval from a single sample is `nan`).
    pub fn number(&self, row: &Row, column: &str) -> Option<f64> {
        let i = self.columns.iter().position(|c| c == column)?;
        row.cells
            .get(i)?
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
    }

    /// The text of `column` in `row`.
    pub fn text<'a>(&self, row: &'a Row, column: &str) -> Option<&'a str> {
        let i = self.columns.iter().position(|c| c == column)?;
        row.cells.get(i).map(String::as_str)
    }

    /// The rows of one configuration, in point order.
    pub fn rows_of<'a>(&'a self, policy: &'a str) -> impl Iterator<Item = &'a Row> {
        self.rows.iter().filter(move |r| r.policy == policy)
    }
}

/// The rows of `timeline.csv`, checked like `summary.csv`.
fn stretches(path: &Path, axes: &[Axis]) -> Result<Vec<Stretch>, Error> {
    let bad = |why: String| Error::BadOutput(format!("{}: {why}", path.display()));
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    let columns: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    let expected = timeline::columns();
    let kinds = expect_columns(&columns, axes, &expected).map_err(bad)?;
    let at = |name: &str| {
        axes.len()
            + expected
                .iter()
                .position(|c| c.name == name)
                .expect("a timeline column")
    };
    let (policy, tool, from, calls) = (at("policy"), at("tool"), at("from_tick"), at("calls"));
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| bad(e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let cells: Vec<String> = record.iter().map(String::from).collect();
        check_cells(&cells, &columns, &kinds, line).map_err(bad)?;
        let count = |i: usize| {
            cells[i]
                .parse::<u64>()
                .map_err(|_| bad(format!("line {line}: `{}` is too large a count", cells[i])))
        };
        out.push(Stretch {
            policy: cells[policy].clone(),
            tool: cells[tool].clone(),
            from: Tick(count(from)?),
            calls: count(calls)?,
        });
    }
    Ok(out)
}

/// The type of each column, if `columns` is a header retrysim writes: one per axis, named by
/// its path, then `expected`; else why not.
fn expect_columns(
    columns: &[String],
    axes: &[Axis],
    expected: &[Column],
) -> Result<Vec<Kind>, String> {
    let names = axes
        .iter()
        .map(|a| a.path.as_str())
        .chain(expected.iter().map(|c| c.name));
    let kinds = axes
        .iter()
        .map(|_| Kind::Label)
        .chain(expected.iter().map(|c| c.kind));
    if columns.len() != axes.len() + expected.len() {
        return Err(format!(
            "{} columns, but retrysim writes {} here ({} parameter columns and {})",
            columns.len(),
            axes.len() + expected.len(),
            axes.len(),
            expected.len()
        ));
    }
    for (i, (found, want)) in columns.iter().zip(names).enumerate() {
        if found != want {
            return Err(format!("column {} is `{found}`, expected `{want}`", i + 1));
        }
    }
    Ok(kinds.collect())
}

/// Whether every cell of the row on file line `line` has its column's type.
fn check_cells(
    cells: &[String],
    columns: &[String],
    kinds: &[Kind],
    line: u64,
) -> Result<(), String> {
    if cells.len() != columns.len() {
        return Err(format!(
            "line {line}: {} cells, expected {}",
            cells.len(),
            columns.len()
        ));
    }
    for ((cell, column), kind) in cells.iter().zip(columns).zip(kinds) {
        if !kind.accepts(cell) {
            return Err(format!(
                "line {line}, column `{column}`: `{cell}` is not a {} value",
                kind.name()
            ));
        }
    }
    Ok(())
}

/// A swept value as its CSV cell shows it.
fn cell(v: &Value) -> String {
    crate::sweep::Param(v.clone()).to_string()
}
