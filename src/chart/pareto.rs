//! The tuner's chart: every candidate's objective against the figure of its tightest
//! constraint, the front of candidates no other beats on both, the constraint's bound, the
//! choice and the policy as written. The legend stands in a column of its own.

use super::ChartError;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, FONT};
use super::{Picture, frame, render};
use crate::error::Error;
use crate::experiment::ChartFormat;
use crate::metrics::Figure;
use crate::output::manifest::Written;

/// What the chart shows, in the tuner's terms.
pub struct Pareto {
    pub title: String,
    pub note: String,
    pub x_title: String,
    pub y_title: String,
    pub x_better_higher: bool,
    pub y_better_higher: bool,
    /// The tightest constraint's bound on x, and its text.
    pub bound: Option<(f64, String)>,
    /// Each candidate's (x, y) and whether it reached the last round.
    pub points: Vec<((f64, f64), bool)>,
    pub chosen: Option<(f64, f64)>,
    pub as_written: Option<(f64, f64)>,
}

/// An axis title for a figure: its column in words, with its unit.
pub fn title(f: Figure) -> String {
    let unit = match f {
        Figure::MeanCompletion | Figure::CompletionP99 | Figure::Makespan => " (s)",
        Figure::Cost | Figure::CostPerSuccess | Figure::RetryCost | Figure::WastedCost => " ($)",
        Figure::Success | Figure::TaskSuccess | Figure::Ghost => " (share)",
        _ => "",
    };
    format!("{}{unit}", f.column().replace('_', " "))
}

/// The candidates no other is at least as good as on both axes and better on one.
fn front(p: &Pareto) -> Vec<(f64, f64)> {
    let better = |a: f64, b: f64, higher: bool| if higher { a > b } else { a < b };
    let no_worse = |a: f64, b: f64, higher: bool| a == b || better(a, b, higher);
    let mut out: Vec<(f64, f64)> = (p.points.iter().map(|(xy, _)| *xy))
        .filter(|&(x, y)| {
            !p.points.iter().any(|&((ox, oy), _)| {
                no_worse(ox, x, p.x_better_higher)
                    && no_worse(oy, y, p.y_better_higher)
                    && (better(ox, x, p.x_better_higher) || better(oy, y, p.y_better_higher))
            })
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out.dedup();
    out
}

impl Picture for Pareto {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        root.fill(&WHITE)?;
        let body = super::heading(root, &self.title, &self.note)?;
        let (plot, column) = body.split_horizontally(style::SIZE.0 - 360);
        let all: Vec<(f64, f64)> = (self.points.iter().map(|(xy, _)| *xy))
            .chain(self.chosen)
            .chain(self.as_written)
            .chain(self.bound.as_ref().map(|(b, _)| (*b, f64::NAN)))
            .collect();
        let span = |v: Vec<f64>| {
            let (lo, hi) = v
                .iter()
                .filter(|x| x.is_finite())
                .fold((f64::MAX, f64::MIN), |(l, h), &x| (l.min(x), h.max(x)));
            let pad = ((hi - lo) * 0.08).max(hi.abs().max(1e-9) * 0.01);
            (lo - pad, hi + pad)
        };
        let (x0, x1) = span(all.iter().map(|p| p.0).collect());
        let (y0, y1) = span(all.iter().map(|p| p.1).collect());
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(20)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(70)
            .y_label_area_size(110)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(&self.x_title)
            .y_desc(&self.y_title)
            .x_label_formatter(&|x| super::tick(*x))
            .y_label_formatter(&|y| super::tick(*y));
        frame::styled(&mut mesh, style::TICK, style::LABEL).draw()?;
        if let Some((b, _)) = &self.bound {
            let dashes = (0..40).map(|i| {
                let (a, z) = (
                    y0 + (y1 - y0) * i as f64 / 40.0,
                    y0 + (y1 - y0) * (i as f64 + 0.5) / 40.0,
                );
                PathElement::new(vec![(*b, a), (*b, z)], BLACK.stroke_width(2))
            });
            chart.draw_series(dashes)?;
        }
        let grey = style::PALETTE[8];
        let (early, late): (Vec<_>, Vec<_>) = self.points.iter().partition(|(_, last)| !last);
        chart.draw_series(
            early
                .iter()
                .map(|(xy, _)| Circle::new(*xy, 5, grey.filled())),
        )?;
        chart.draw_series(
            late.iter()
                .map(|(xy, _)| Circle::new(*xy, 7, style::color(0).filled())),
        )?;
        chart.draw_series(LineSeries::new(
            front(self),
            style::color(0).stroke_width(3),
        ))?;
        if let Some(xy) = self.as_written {
            chart.draw_series([Cross::new(xy, 12, BLACK.stroke_width(4))])?;
        }
        if let Some(xy) = self.chosen {
            chart.draw_series([TriangleMarker::new(xy, 16, style::color(1).filled())])?;
        }
        legend(&column, self)
    }
}

/// A legend entry's mark, as the plot draws it.
#[derive(Clone, Copy)]
enum Mark {
    Dropped,
    Last,
    Front,
    Chosen,
    AsWritten,
    Bound,
}

impl Mark {
    fn draw<DB: DrawingBackend>(
        self,
        area: &DrawingArea<DB, Shift>,
        (x, y): (i32, i32),
    ) -> Result<(), ChartError> {
        let at = (x, y);
        let drawn = match self {
            Mark::Dropped => area.draw(&Circle::new(at, 5, style::PALETTE[8].filled())),
            Mark::Last => area.draw(&Circle::new(at, 7, style::color(0).filled())),
            Mark::Front => area.draw(&PathElement::new(
                vec![(x - 14, y), (x + 14, y)],
                style::color(0).stroke_width(3),
            )),
            Mark::Chosen => area.draw(&TriangleMarker::new(at, 16, style::color(1).filled())),
            Mark::AsWritten => area.draw(&Cross::new(at, 12, BLACK.stroke_width(4))),
            Mark::Bound => area
                .draw(&PathElement::new(
                    vec![(x, y - 14), (x, y - 4)],
                    BLACK.stroke_width(2),
                ))
                .and_then(|()| {
                    area.draw(&PathElement::new(
                        vec![(x, y + 4), (x, y + 14)],
                        BLACK.stroke_width(2),
                    ))
                }),
        };
        drawn.map_err(ChartError::from)
    }
}

/// The legend's column: a mark and its words per line.
fn legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Pareto) -> Result<(), ChartError> {
    let text = (FONT, style::NOTE)
        .into_font()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let mut entries = vec![
        (Mark::Dropped, "dropped in a round".to_string()),
        (Mark::Last, "reached the last round".into()),
        (Mark::Front, "Pareto front".into()),
        (Mark::Chosen, "chosen (validated)".into()),
        (Mark::AsWritten, "as written (validated)".into()),
    ];
    if let Some((_, words)) = &p.bound {
        entries.push((Mark::Bound, words.clone()));
    }
    for (i, (mark, words)) in entries.into_iter().enumerate() {
        let y = 60 + 40 * i as i32;
        mark.draw(area, (24, y))?;
        area.draw(&Text::new(words, (48, y), text.clone()))?;
    }
    Ok(())
}

/// Draws the Pareto chart of the tuner's folder `dir` in `formats` into `dir/charts/`, from
/// its `candidates.csv` and the `[tune]` table of its manifest alone, as `plot` redraws any
/// chart; returns the files written.
pub fn draw_folder(
    dir: &Path,
    written: &Written,
    experiment: &str,
    formats: &[ChartFormat],
) -> Result<Vec<PathBuf>, Error> {
    let picture = read(dir, written, experiment)?;
    let charts = dir.join("charts");
    fs::create_dir_all(&charts)
        .map_err(Error::io(format!("cannot create {}", charts.display())))?;
    let mut out = Vec::new();
    for &format in formats {
        let path = charts.join(format!("pareto.{}", format.name()));
        super::write(&path, format, style::SIZE, &picture)?;
        out.push(path);
    }
    Ok(out)
}

/// What the chart shows, read from the folder: the objective and constraints from the
/// manifest, each candidate's figures from `candidates.csv`.
/// A constraint as the manifest records it: its figure, whether it is `>=`, its bound, and
/// its text.
type Bound = (Figure, bool, f64, String);

/// The `[tune]` table of a tuner's manifest: whether the objective is maximised, its figure,
/// and the constraints.
fn goals(written: &Written) -> Result<(bool, Figure, Vec<Bound>), Error> {
    let tune = (written.table.get("tune").and_then(toml::Value::as_table))
        .ok_or_else(|| written.bad("no [tune] table"))?;
    let text = |key: &str| tune.get(key).and_then(toml::Value::as_str);
    let (goal, objective) = text("objective")
        .and_then(|o| o.split_once(' '))
        .and_then(|(verb, f)| Some((verb == "maximise", Figure::named(f)?)))
        .ok_or_else(|| {
            written.bad("[tune] objective is not \"minimise FIGURE\" or \"maximise FIGURE\"")
        })?;
    let constraints: Vec<Bound> = (tune.get("constraints").and_then(toml::Value::as_array))
        .into_iter()
        .flatten()
        .filter_map(toml::Value::as_str)
        .map(|c| {
            let (name, at_least, bound) = match (c.split_once(">="), c.split_once("<=")) {
                (Some((n, b)), _) => (n, true, b),
                (_, Some((n, b))) => (n, false, b),
                _ => return None,
            };
            Some((
                Figure::named(name.trim())?,
                at_least,
                bound.trim().parse().ok()?,
                c.to_string(),
            ))
        })
        .collect::<Option<_>>()
        .ok_or_else(|| {
            written.bad("[tune] constraints are not \"FIGURE >= NUMBER\" or \"FIGURE <= NUMBER\"")
        })?;
    Ok((goal, objective, constraints))
}

fn read(dir: &Path, written: &Written, experiment: &str) -> Result<Pareto, Error> {
    let (goal, objective, constraints) = goals(written)?;
    let path = dir.join("candidates.csv");
    let bad = |why: String| Error::BadOutput(format!("{}: {why}", path.display()));
    let mut reader = csv::Reader::from_path(&path).map_err(|e| bad(e.to_string()))?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(e.to_string()))?
        .iter()
        .map(String::from)
        .collect();
    let rows: Vec<csv::StringRecord> = reader
        .records()
        .collect::<Result<_, _>>()
        .map_err(|e| bad(e.to_string()))?;
    let column = |name: String| {
        header
            .iter()
            .position(|h| *h == name)
            .ok_or_else(|| bad(format!("no column `{name}`")))
    };
    let number =
        |row: &csv::StringRecord, at: usize| row.get(at).and_then(|c| c.parse::<f64>().ok());
    let (last, candidates) = rows.split_last().ok_or_else(|| bad("no rows".into()))?;
    // The constraint most candidates miss by their search means is the one the chart is drawn
    // against; with none, the objective against itself.
    let misses = |&(f, at_least, bound, _): &Bound| -> Result<usize, Error> {
        let at = column(f.column().to_string())?;
        Ok(candidates
            .iter()
            .filter_map(|r| number(r, at))
            .filter(|&v| if at_least { v < bound } else { v > bound })
            .count())
    };
    let mut tightest = None;
    for (i, c) in constraints.iter().enumerate() {
        let n = misses(c)?;
        if tightest.is_none_or(|(_, most)| n > most) {
            tightest = Some((i, n));
        }
    }
    let tightest = tightest.map(|(i, _)| &constraints[i]);
    let x_figure = tightest.map_or(objective, |c| c.0);
    let (x, y) = (
        column(x_figure.column().into())?,
        column(objective.column().into())?,
    );
    let (vx, vy) = (
        column(format!("validation_{}", x_figure.column()))?,
        column(format!("validation_{}", objective.column()))?,
    );
    let (dropped, chosen) = (
        column("dropped_after_round".into())?,
        column("chosen".into())?,
    );
    let point = |r: &csv::StringRecord, a: usize, b: usize| Some((number(r, a)?, number(r, b)?));
    Ok(Pareto {
        title: format!("Candidates searched — {experiment}"),
        note: format!(
            "{} candidates, each at its search estimate; the chosen one and the policy as written at their validation",
            candidates.len()
        ),
        x_title: title(x_figure),
        y_title: title(objective),
        x_better_higher: x_figure.better() == crate::metrics::Better::Higher,
        y_better_higher: goal,
        bound: tightest.map(|c| (c.2, c.3.clone())),
        points: candidates
            .iter()
            .filter_map(|r| Some((point(r, x, y)?, r.get(dropped) == Some(""))))
            .collect(),
        chosen: candidates
            .iter()
            .find(|r| r.get(chosen) == Some("yes"))
            .and_then(|r| point(r, vx, vy)),
        as_written: point(last, vx, vy),
    })
}

/// The chart's bytes.
pub fn draw(p: &Pareto, format: ChartFormat) -> Result<Vec<u8>, Error> {
    style::register_fonts();
    render(format, style::SIZE, p).map_err(|why| Error::Chart(None, why))
}
