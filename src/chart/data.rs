//! What charts are drawn from: an output folder's `summary.csv`, `manifest.toml` and, where the
//! run kept them, `timeseries.csv` and the traces, and nothing else, so `retrysim plot` redraws
//! exactly what `retrysim run` drew.

use super::ChartError;
use std::path::Path;

use toml::Value;

use super::lanes::Block;
use crate::error::Error;
use crate::experiment::{ChartKind, Experiment};
use crate::output::manifest::Written;
use crate::output::table::CsvTable;
use crate::output::{edges, summary, timeseries};
use crate::run;
use crate::story::Stories;
use crate::time::Tick;

/// One swept key and its values, in the config's order.
#[derive(Clone, Debug)]
pub struct Axis {
    pub path: String,
    pub values: Vec<String>,
}

/// What every chart of a folder reads of its `manifest.toml`, read once: the experiment as it
/// ran (the `[resolved]` table, read by the config reader), its axes, and how many of its
/// points finished. A sweep of ten thousand points has as many values on its axis, and reading
/// them is the largest allocation charting makes.
#[derive(Clone, Debug)]
pub struct Outline {
    pub exp: Experiment,
    pub axes: Vec<Axis>,
    pub zipped: bool,
    pub finished: usize,
}

impl Outline {
    pub fn read(written: &Written) -> Result<Outline, Error> {
        let (exp, axes, zipped) = written.outline()?;
        let axes: Vec<Axis> = (axes.iter())
            .map(|a| Axis {
                path: a.path.clone(),
                values: a.values.iter().map(ToString::to_string).collect(),
            })
            .collect();
        // A grid's points are its axes' values crossed; zipped axes (of one length, as the
        // config reader checked) move together.
        let points = match zipped {
            true => axes.first().map_or(1, |a| a.values.len()),
            false => axes.iter().map(|a| a.values.len()).product(),
        };
        let finished = (written.table.get("points_finished"))
            .and_then(Value::as_integer)
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n <= points)
            .ok_or_else(|| {
                written.bad(&format!(
                    "`points_finished` is not a count of the sweep's {points} points"
                ))
            })?;
        Ok(Outline {
            exp,
            axes,
            zipped,
            finished,
        })
    }
}

/// One row of `summary.csv`: a configuration at a point, with the cells of the columns its
/// chart reads, kept end to end in [`Data`]'s text. The point and the configuration are kept
/// as their places in the sweep (the file's own cells for them are checked against those): a
/// sweep of ten thousand points is a megabyte or two of rows.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    point: u32,
    policy: u32,
    /// Where the row's cells start and end in the text.
    text: (u32, u32),
}

/// Ends each cell of a row: a control character no cell retrysim writes holds.
const END: char = '\u{1f}';

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
    pub rows: Vec<Row>,
    /// Every row's cells, end to end, each cell ended by [`END`].
    text: String,
    /// The `summary.csv` columns the chart reads, which each row keeps.
    columns: Vec<&'static str>,
    /// `timeseries.csv`, where the run kept one.
    pub timeseries: Option<Vec<Bin>>,
    /// Each tool's outage windows, by tool name.
    pub outages: Vec<(String, Tick, Tick)>,
    /// The trigger recovery is measured from, as the manifest states it.
    pub trigger: Option<(Tick, Tick)>,
    /// The traces' stories, where a chart draws them.
    stories: Option<Stories>,
    /// The call graph and `edges.csv`, where a chart draws them.
    pub graph: Option<Graph>,
    /// Some tool calls others: a figure per intent counts the task's own calls only, and the
    /// calls below are on the call graph's chart.
    pub services: bool,
    /// A task makes more than one call: a success rate per intent is a call's.
    pub many_calls: bool,
    /// Some tool's faults come in bursts: its closed forms are the burst chain's.
    pub bursts: bool,
}

/// The call graph as the callgraph chart draws it.
#[derive(Clone, Debug)]
pub struct Graph {
    /// The task and each tool it reaches, with its layer: the task 0, a tool one below the
    /// deepest of its callers.
    pub nodes: Vec<(String, usize)>,
    /// `edges.csv`.
    pub edges: Vec<EdgeRow>,
    /// Each configuration's fallback edges, as (configuration, caller, callee).
    fallbacks: Vec<(String, String, String)>,
}

impl Graph {
    /// The node named `name`.
    pub fn node(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.0 == name)
    }

    /// Whether some configuration falls back.
    pub fn falls_back(&self) -> bool {
        !self.fallbacks.is_empty()
    }

    /// Whether configuration `policy` falls back over `caller->callee`.
    pub fn is_fallback(&self, policy: &str, caller: &str, callee: &str) -> bool {
        (self.fallbacks.iter()).any(|f| f.0 == policy && f.1 == caller && f.2 == callee)
    }
}

/// One row of `edges.csv`.
#[derive(Clone, Debug)]
pub struct EdgeRow {
    pub params: Vec<String>,
    pub policy: String,
    pub caller: String,
    pub callee: String,
    pub calls: f64,
    pub theory: Option<f64>,
    pub duplicates: f64,
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
    /// Reads what chart `kind` draws from `dir`: of `summary.csv` the columns the chart reads,
    /// every cell checked against the folder's `outline` (its manifest, read once for all its
    /// charts). A chart of bars, which has room for a few points only, keeps that many, evenly
    /// spaced ([`run::spaced`]): a sweep of ten thousand points is drawn from a few megabytes.
    pub fn read(dir: &Path, outline: &Outline, kind: ChartKind) -> Result<Data, Error> {
        let Outline {
            exp,
            axes,
            zipped,
            finished,
        } = outline;
        let (zipped, finished) = (*zipped, *finished);
        let policies: Vec<String> = exp.policies.iter().map(|p| p.name.clone()).collect();
        let paths: Vec<String> = axes.iter().map(|a| a.path.clone()).collect();
        let outages = (exp.tools.iter())
            .flat_map(|t| (t.server.outages.iter()).map(|o| (t.name.clone(), o.from, o.until)))
            .collect();
        let timeseries = match (kind, exp.output.timeseries) {
            (ChartKind::Goodput, Some(_)) => Some(bins(&dir.join("timeseries.csv"), &paths)?),
            _ => None,
        };
        let stories = match kind {
            ChartKind::Timeline => Some(Stories::read(dir)?),
            _ => None,
        };
        let graph = match kind {
            ChartKind::CallGraph => Some(graph(exp, &dir.join("edges.csv"), &paths)?),
            _ => None,
        };
        let mut data = Data {
            stories,
            graph,
            services: exp.graph.has_services(),
            many_calls: exp.many_calls(),
            bursts: (exp.called_tools(&exp.workload.calls)).any(|t| t.burst.is_some()),
            name: exp.name.clone(),
            description: exp.description.clone(),
            axes: axes.clone(),
            zipped,
            policies,
            rows: Vec::new(),
            text: String::new(),
            columns: super::columns(kind),
            timeseries,
            outages,
            trigger: exp.recovery_windows().map(|w| w.trigger),
        };
        let shown = match kind.is_bars() {
            true => super::bars::POINTS,
            false => finished,
        };
        data.read_summary(&dir.join("summary.csv"), finished, shown)?;
        if data.rows.len() < finished * data.policies.len() {
            data.description = format!(
                "{} ({} of the {finished} points, evenly spaced)",
                exp.description,
                data.rows.len() / data.policies.len().max(1)
            );
        }
        Ok(data)
    }

    /// Reads the rows of `summary.csv` at `path`, of `finished` points, keeping `shown` of
    /// them evenly spaced; each row's configuration and point are checked against the
    /// manifest's.
    fn read_summary(&mut self, path: &Path, finished: usize, shown: usize) -> Result<(), Error> {
        let paths: Vec<String> = self.axes.iter().map(|a| a.path.clone()).collect();
        let written_columns = summary::columns();
        // Where each column is in the file, the policy's first: the file's header is checked
        // to be these columns after one per axis.
        let at: Vec<usize> = std::iter::once("policy")
            .chain(self.columns.iter().copied())
            .map(|c| {
                let i = written_columns.iter().position(|k| k.name == c);
                paths.len() + i.expect("a chart reads columns summary.csv has")
            })
            .collect();
        let n = self.policies.len().max(1);
        self.rows.reserve(finished.min(shown) * n);
        let mut read = 0usize;
        let mut failure: Option<String> = None;
        let header_name = |i: usize| match i.checked_sub(paths.len()) {
            None => paths[i].clone(),
            Some(c) => written_columns[c].name.to_string(),
        };
        let (axes, zipped, policies) = (&self.axes, self.zipped, &self.policies);
        let (rows, text) = (&mut self.rows, &mut self.text);
        CsvTable::each(path, &paths, &written_columns, |line, cells| {
            let (point, policy) = (read / n, read % n);
            read += 1;
            // Rows past the finished points are counted, and refused below.
            if failure.is_some() || point >= finished {
                return;
            }
            let expected =
                (axes.iter().enumerate()).map(|(i, a)| &a.values[value_at(axes, zipped, i, point)]);
            let wrong = std::iter::once(&policies[policy])
                .chain(expected)
                .zip(std::iter::once(at[0]).chain(0..paths.len()))
                .find(|(want, i)| **want != cells[*i]);
            if let Some((want, i)) = wrong {
                failure = Some(format!(
                    "{}: line {line}, column `{}`: `{}` where the manifest's sweep has `{want}`",
                    path.display(),
                    header_name(i),
                    &cells[i],
                ));
                return;
            }
            if !run::spaced(point, finished, shown) {
                return;
            }
            let start = text.len();
            for &i in &at[1..] {
                text.push_str(&cells[i]);
                text.push(END);
            }
            let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(text.len())) else {
                failure = Some(format!("{}: too large to draw", path.display()));
                return;
            };
            rows.push(Row {
                point: point as u32,
                policy: policy as u32,
                text: (start, end),
            });
        })?;
        if let Some(why) = failure {
            return Err(Error::BadOutput(why));
        }
        let expected = finished * n;
        if read != expected {
            return Err(Error::BadOutput(format!(
                "{}: {read} rows, but the manifest's {finished} finished points × {} \
                 configurations make {expected}",
                path.display(),
                self.policies.len()
            )));
        }
        Ok(())
    }

    /// The value of axis `axis` at `row`'s point, as written in the CSV.
    pub fn param(&self, row: &Row, axis: usize) -> &str {
        &self.axes[axis].values[self.value(row, axis)]
    }

    /// Which of its values axis `axis` takes at `row`'s point.
    pub fn value(&self, row: &Row, axis: usize) -> usize {
        value_at(&self.axes, self.zipped, axis, row.point as usize)
    }

    /// The value of each axis at `row`'s point.
    pub fn params<'a>(&'a self, row: &Row) -> impl Iterator<Item = &'a str> {
        let point = row.point as usize;
        (0..self.axes.len())
            .map(move |a| self.axes[a].values[value_at(&self.axes, self.zipped, a, point)].as_str())
    }

    /// The name of `row`'s configuration.
    pub fn policy(&self, row: &Row) -> &str {
        &self.policies[row.policy as usize]
    }

    /// The value of `column` in `row` as a number; `None` for an empty cell, or one that is not
    /// a finite number (an interval from a single sample is `nan`).
    pub fn number(&self, row: &Row, column: &str) -> Option<f64> {
        self.text(row, column)?
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
    }

    /// The text of `column` in `row`. A chart reads only the columns it names
    /// ([`super::columns`]); any other is a mistake in the chart, which stops the run.
    pub fn text(&self, row: &Row, column: &str) -> Option<&str> {
        let i = self.columns.iter().position(|c| *c == column);
        assert!(
            i.is_some() || column.is_empty(),
            "a chart reads `{column}`, which its columns leave out"
        );
        let (start, end) = row.text;
        let cells = &self.text[start as usize..end as usize];
        Some(cells.split(END).nth(i?).unwrap_or_default())
    }

    /// Each configuration's first task (of replication 0) as a block of swimlanes.
    pub fn blocks(&self) -> Result<Vec<Block>, ChartError> {
        let stories = self
            .stories
            .as_ref()
            .ok_or(ChartError::Missing("the run kept no traces"))?;
        stories
            .marks
            .iter()
            .map(|m| {
                let task = (m.calls > 1).then_some(0);
                let story = stories
                    .story(&m.policy, 0, Some(0), task)
                    .map_err(|e| ChartError::Trace(e.to_string()))?;
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
        self.rows.iter().filter(move |r| self.policy(r) == policy)
    }
}

/// Which value axis `axis` takes at point `point`: the point's own index where the axes are
/// zipped; in a grid, the last axis varies fastest.
fn value_at(axes: &[Axis], zipped: bool, axis: usize, point: usize) -> usize {
    if zipped {
        return point;
    }
    let stride: usize = axes[axis + 1..].iter().map(|a| a.values.len()).product();
    (point / stride) % axes[axis].values.len()
}

/// The graph of `exp` in layers, with the rows of `edges.csv` at `path`.
fn graph(
    exp: &crate::experiment::Experiment,
    path: &Path,
    axes: &[String],
) -> Result<Graph, Error> {
    let g = &exp.graph;
    // Longest path from the task: relaxed once per tool, which an acyclic graph needs at most.
    let mut depth: Vec<Option<usize>> = vec![None; exp.tools.len()];
    for _ in 0..=exp.tools.len() {
        for e in &g.edges {
            let below = match e.caller {
                None => Some(1),
                Some(c) => depth[c].map(|d| d + 1),
            };
            if below > depth[e.callee] {
                depth[e.callee] = below;
            }
        }
    }
    let nodes = std::iter::once(("task".to_string(), 0))
        .chain((exp.tools.iter().zip(&depth)).filter_map(|(t, d)| Some((t.name.clone(), (*d)?))))
        .collect();
    let fallbacks = (exp.policies.iter())
        .flat_map(|p| {
            (p.edge.overrides.iter()).flat_map(move |(e, edge)| {
                let from = g.edges[*e].caller_name(&exp.tools);
                (edge.edge.fallback.tools.iter())
                    .map(move |&t| (p.name.clone(), from.to_string(), exp.tools[t].name.clone()))
            })
        })
        .collect();
    let table = CsvTable::read(path, axes, &edges::columns())?;
    let at = |name: &str| table.at(name);
    let (policy, caller, callee, calls, theory, duplicates) = (
        at("policy"),
        at("caller"),
        at("callee"),
        at("calls_per_intent"),
        at("theory_calls_per_intent"),
        at("duplicates_per_intent"),
    );
    let edges = (table.rows())
        .map(|(_, cells)| EdgeRow {
            params: cells[..axes.len()].to_vec(),
            policy: cells[policy].clone(),
            caller: cells[caller].clone(),
            callee: cells[callee].clone(),
            calls: cells[calls].parse().unwrap_or(f64::NAN),
            theory: cells[theory].parse().ok(),
            duplicates: cells[duplicates].parse().unwrap_or(f64::NAN),
        })
        .collect();
    Ok(Graph {
        nodes,
        edges,
        fallbacks,
    })
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
