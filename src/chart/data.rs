//! What charts are drawn from: an output folder's `summary.csv`, `manifest.toml` and, where the
//! run kept them, `timeseries.csv` and the traces, and nothing else, so `retrysim plot` redraws
//! exactly what `retrysim run` drew.

use std::path::Path;

use toml::{Table, Value};

use super::lanes::Block;
use crate::error::Error;
use crate::experiment::{ChartFormat, ChartKind};
use crate::output::manifest::{Written, list};
use crate::output::table::CsvTable;
use crate::output::{summary, timeseries};
use crate::story::Stories;
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
    /// The axes move together (`mode = "zip"`) rather than across each other.
    pub zipped: bool,
    /// The configurations in the config's order.
    pub policies: Vec<String>,
    pub charts: Vec<ChartKind>,
    pub formats: Vec<ChartFormat>,
    pub rows: Vec<Row>,
    columns: Vec<String>,
    /// `timeseries.csv`, where the run kept one.
    pub timeseries: Option<Vec<Bin>>,
    /// Each tool's outage windows, by tool name.
    pub outages: Vec<(String, Tick, Tick)>,
    /// The trigger recovery is measured from, as the manifest states it.
    pub trigger: Option<(Tick, Tick)>,
    /// The traces' stories, where a chart draws them.
    stories: Option<Stories>,
}

/// One row of `timeseries.csv`: a configuration's load on a tool in one bin of time, per
/// second.
#[derive(Clone, Debug)]
pub struct Bin {
    pub policy: String,
    pub tool: String,
    pub from_s: f64,
    pub to_s: f64,
    pub offered: f64,
    pub first_tries: f64,
    pub retries: f64,
    pub goodput: f64,
    /// Calls a breaker refused without sending them.
    pub refused: f64,
}

impl Data {
    /// Reads `summary.csv` and `manifest.toml` from `dir`.
    #[expect(
        clippy::too_many_lines,
        reason = "141 lines: to be split by what it does"
    )]
    pub fn read(dir: &Path) -> Result<Data, Error> {
        let written = Written::read(dir)?;
        let bad_manifest = |why: &str| written.bad(why);
        let manifest = &written.table;
        let resolved = written.resolved()?;
        let string = |t: &Table, key: &str| {
            t.get(key)
                .and_then(Value::as_str)
                .map(String::from)
                .ok_or_else(|| bad_manifest(&format!("no `{key}`")))
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
        let zipped = resolved
            .get("sweep")
            .and_then(|s| s.get("mode"))
            .and_then(Value::as_str)
            == Some("zip");
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
        let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
        let table = CsvTable::read(&summary_path, &paths, &summary::columns())?;
        let policy_column = table.at("policy");
        let rows: Vec<Row> = table
            .rows()
            .map(|(_, cells)| Row {
                params: cells[..axes.len()].to_vec(),
                policy: cells[policy_column].clone(),
                cells: cells.to_vec(),
            })
            .collect();
        let columns = table.columns().to_vec();
        let finished = manifest
            .get("points_finished")
            .and_then(Value::as_integer)
            .ok_or_else(|| bad_manifest("no `points_finished`"))?;
        let expected = finished as usize * policies.len();
        if rows.len() != expected {
            return Err(Error::BadOutput(format!(
                "{}: {} rows, but the manifest's {finished} finished points × {} configurations make \
                 {expected}",
                summary_path.display(),
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
        let timeseries = match output.and_then(|o| o.get("timeseries")) {
            None => None,
            Some(_) => Some(bins(&dir.join("timeseries.csv"), &paths)?),
        };
        let trigger = manifest
            .get("recovery")
            .and_then(|r| r.get("trigger"))
            .and_then(Value::as_array)
            .and_then(|span| Some((duration(span.first())?, duration(span.get(1))?)));
        let stories = if charts.contains(&ChartKind::Timeline) {
            Some(Stories::read(dir)?)
        } else {
            None
        };
        Ok(Data {
            stories,
            name: string(resolved, "name")?,
            description: string(resolved, "description").unwrap_or_default(),
            axes,
            zipped,
            policies,
            charts,
            formats,
            rows,
            columns,
            timeseries,
            outages,
            trigger,
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

    /// Each configuration's first task (of replication 0) as a block of swimlanes.
    pub fn blocks(&self) -> Result<Vec<Block>, String> {
        let stories = self.stories.as_ref().ok_or("the run kept no traces")?;
        stories
            .marks
            .iter()
            .map(|m| {
                let task = (m.calls > 1).then_some(0);
                let story = stories
                    .story(&m.policy, 0, Some(0), task)
                    .map_err(|e| e.to_string())?;
                Ok(Block::of(&story, m.policy.clone()))
            })
            .collect()
    }

    /// What the goodput chart says of a configuration's recovery, from `summary.csv`: empty
    /// without a trigger.
    pub fn recovery_note(&self, policy: &str) -> String {
        let Some(row) = self.rows_of(policy).next() else {
            return String::new();
        };
        let share = self.number(row, "recovered_share").unwrap_or(0.0);
        match (
            self.text(row, "recovered"),
            self.number(row, "time_to_recover_s"),
        ) {
            (Some("all"), Some(0.0)) => " — every run back as the trigger ended".into(),
            (Some("all"), Some(t)) => format!(" — every run back in {} s (median)", super::tick(t)),
            (Some("some"), _) => {
                format!(" — {:.0} % of runs back; the rest collapsed", 100.0 * share)
            }
            (Some("no"), _) => " — no run came back".into(),
            _ => String::new(),
        }
    }

    /// When every replication's goodput had recovered, at their median, in seconds from the
    /// run's start; `None` where some did not.
    pub fn recovered_at(&self, policy: &str) -> Option<f64> {
        let row = self.rows_of(policy).next()?;
        let (_, until) = self.trigger?;
        if self.text(row, "recovered") != Some("all") {
            return None;
        }
        Some(until.0 as f64 / 1e6 + self.number(row, "time_to_recover_s")?)
    }

    /// The rows of one configuration, in point order.
    pub fn rows_of<'a>(&'a self, policy: &'a str) -> impl Iterator<Item = &'a Row> {
        self.rows.iter().filter(move |r| r.policy == policy)
    }
}

/// The rows of `timeseries.csv`, checked like `summary.csv`.
fn bins(path: &Path, axes: &[String]) -> Result<Vec<Bin>, Error> {
    let table = CsvTable::read(path, axes, &timeseries::columns())?;
    if table.rows().next().is_none() {
        // A run that keeps a time series writes a bin at least: this file was cut short.
        return Err(Error::BadOutput(format!(
            "{}: a header and no rows, where the run wrote a bin at least",
            path.display()
        )));
    }
    let at = |name: &str| table.at(name);
    let (policy, tool) = (at("policy"), at("tool"));
    let (from, to) = (at("from_s"), at("to_s"));
    let (offered, first, retries, goodput, refused) = (
        at("offered_per_s"),
        at("first_tries_per_s"),
        at("retries_per_s"),
        at("goodput_per_s"),
        at("short_circuited_per_s"),
    );
    Ok(table
        .rows()
        .map(|(_, cells)| {
            // The table has checked every cell is a number.
            let number = |i: usize| cells[i].parse::<f64>().unwrap_or(f64::NAN);
            Bin {
                policy: cells[policy].clone(),
                tool: cells[tool].clone(),
                from_s: number(from),
                to_s: number(to),
                offered: number(offered),
                first_tries: number(first),
                retries: number(retries),
                goodput: number(goodput),
                refused: number(refused),
            }
        })
        .collect())
}

/// A swept value as its CSV cell shows it.
fn cell(v: &Value) -> String {
    crate::sweep::Param(v.clone()).to_string()
}
