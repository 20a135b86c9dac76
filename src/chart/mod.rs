//! Charts drawn with plotters from an output folder's CSV files and manifest alone, so
//! `retrysim plot` redraws exactly what `retrysim run` drew. Text is measured with the embedded
//! DejaVu Sans, never a system font, so the files are the same bytes on every machine.

mod bars;
mod callgraph;
mod curve;
mod data;
mod frame;
mod goodput;
mod grid;
pub mod lanes;
mod legend;
pub mod pareto;
mod raster;
mod style;

pub use crate::error::ChartError;
use std::fs;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::error::Error;
use crate::experiment::{ChartFormat, ChartKind};
use crate::output::manifest::Written;
use crate::story::Story;
use data::{Data, Outline};
use style::FONT;

/// Draws every chart the manifest in `dir` names, in its formats unless `formats` says
/// otherwise, into `dir/charts/`; returns the files written. Each chart reads what it draws on
/// its own, so no more than one chart's data is held at a time.
pub fn draw_all(dir: &Path, formats: Option<&[ChartFormat]>) -> Result<Vec<PathBuf>, Error> {
    style::register_fonts();
    let written = Written::read(dir)?;
    // A tuner's folder has one chart of its own, drawn from its candidates.
    if written.table.get("command").and_then(toml::Value::as_str) == Some("tune") {
        let (exp, _, _) = written.outline()?;
        let formats = formats.unwrap_or(&exp.output.chart_formats);
        return pareto::draw_folder(dir, &written, &exp.name, formats);
    }
    let outline = Outline::read(&written)?;
    drop(written);
    let formats = formats.unwrap_or(&outline.exp.output.chart_formats);
    // Every file is checked before anything is drawn, so a broken folder gets no chart at all,
    // not the charts that come before the broken file's: summary.csv once, with the first
    // chart, and the files only some charts read with those charts.
    let checked = (outline.exp.output.charts.iter().enumerate())
        .filter(|&(i, kind)| i == 0 || kind.reads_more_than_the_summary());
    for (_, &kind) in checked {
        Data::read(dir, &outline, kind)?;
    }
    let charts = dir.join("charts");
    fs::create_dir_all(&charts)
        .map_err(Error::io(format!("cannot create {}", charts.display())))?;
    let mut written = Vec::new();
    for &kind in &outline.exp.output.charts {
        let data = Data::read(dir, &outline, kind)?;
        let size = match kind {
            ChartKind::Timeline => {
                lanes::size(&data.blocks().map_err(|why| Error::Chart(None, why))?)
            }
            ChartKind::Comparison => bars::size(&data, &bars::COMPARISON),
            ChartKind::Latency => bars::size(&data, &bars::LATENCY),
            ChartKind::Tasks => bars::size(&data, &bars::TASKS),
            _ => style::SIZE,
        };
        for &format in formats {
            let path = charts.join(format!("{}.{}", kind.name(), format.name()));
            write(&path, format, size, &Chart(&data, kind))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// The `summary.csv` columns chart `kind` reads, which its data keeps of every row.
fn columns(kind: ChartKind) -> Vec<&'static str> {
    let recovery = ["recovered", "recovered_share", "time_to_recover_s"];
    match kind {
        ChartKind::DuplicateCurve => curve::Measure::Duplicates.reads(),
        ChartKind::AttemptsCurve => curve::Measure::Attempts.reads(),
        ChartKind::SuccessCurve => curve::Measure::Success.reads(),
        ChartKind::WorkCurve => curve::Measure::Work.reads(),
        ChartKind::MakespanCurve => curve::Measure::Makespan.reads(),
        ChartKind::Comparison => bars::reads(&bars::COMPARISON),
        ChartKind::Latency => bars::reads(&bars::LATENCY),
        ChartKind::Tasks => bars::reads(&bars::TASKS),
        ChartKind::Grid => grid::MEASURES.iter().map(|m| m.1).collect(),
        ChartKind::RecoveryMap => (grid::RECOVERY.iter().map(|m| m.1))
            .chain(recovery)
            .collect(),
        ChartKind::Goodput => recovery.to_vec(),
        ChartKind::Timeline | ChartKind::CallGraph => Vec::new(),
    }
}

/// One story as swimlanes, the bytes of an SVG or PNG file.
pub fn draw_story(story: &Story, format: ChartFormat) -> Result<Vec<u8>, Error> {
    style::register_fonts();
    let whose = match story.task {
        Some(t) => format!("task {t}"),
        None => format!("intent {}", story.intents.first().map_or(0, |i| i.intent)),
    };
    let lanes = Lanes {
        title: format!("{} — {whose}", story.experiment),
        note: crate::story::text::heading(story),
        blocks: vec![lanes::Block::of(story, story.marks.policy.clone())],
    };
    render(format, lanes::size(&lanes.blocks), &lanes).map_err(|why| Error::Chart(None, why))
}

/// Something that can be drawn on any backend.
trait Picture {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError>;
}

/// A chart of an output folder.
struct Chart<'a>(&'a Data, ChartKind);

impl Picture for Chart<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        draw(root, self.0, self.1)
    }
}

/// Stories as swimlanes under a heading.
struct Lanes {
    title: String,
    note: String,
    blocks: Vec<lanes::Block>,
}

impl Picture for Lanes {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        root.fill(&WHITE)?;
        lanes::draw(root, &self.title, &self.note, &self.blocks)
    }
}

/// Draws `picture` beside `path` and renames it there, so a chart file is whole or absent.
fn write(
    path: &Path,
    format: ChartFormat,
    size: (u32, u32),
    picture: &impl Picture,
) -> Result<(), Error> {
    render(format, size, picture)
        .and_then(|bytes| {
            crate::output::user_path::replace(path, &bytes)
                .map_err(|e| ChartError::Write(e.to_string()))
        })
        .map_err(|why| Error::Chart(Some(path.to_path_buf()), why))
}

/// The bytes of `picture` as an SVG or PNG file.
fn render(
    format: ChartFormat,
    size: (u32, u32),
    picture: &impl Picture,
) -> Result<Vec<u8>, ChartError> {
    let mut svg = String::new();
    let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
    let drawn = picture
        .draw(&root)
        .and_then(|()| root.present().map_err(ChartError::from));
    drop(root);
    drawn?;
    match format {
        ChartFormat::Svg => Ok(svg.into_bytes()),
        ChartFormat::Png => raster::png(&svg),
    }
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
    kind: ChartKind,
) -> Result<(), ChartError> {
    root.fill(&WHITE)?;
    match kind {
        ChartKind::DuplicateCurve => curve::draw(root, data, curve::Measure::Duplicates),
        ChartKind::AttemptsCurve => curve::draw(root, data, curve::Measure::Attempts),
        ChartKind::SuccessCurve => curve::draw(root, data, curve::Measure::Success),
        ChartKind::WorkCurve => curve::draw(root, data, curve::Measure::Work),
        ChartKind::MakespanCurve => curve::draw(root, data, curve::Measure::Makespan),
        ChartKind::Comparison => {
            bars::draw(root, data, "Configurations compared", &bars::COMPARISON)
        }
        ChartKind::Latency => {
            bars::draw(root, data, "Completion times and attempts", &bars::LATENCY)
        }
        ChartKind::Tasks => bars::draw(root, data, "Tasks", &bars::TASKS),
        ChartKind::Goodput => goodput::draw(root, data),
        ChartKind::Timeline => {
            let blocks = data.blocks()?;
            lanes::draw(
                root,
                &format!("Timelines — {}", data.name),
                &data.description,
                &blocks,
            )
        }
        ChartKind::Grid => grid::draw(root, data, &grid::MEASURES),
        ChartKind::RecoveryMap => grid::draw(root, data, &grid::RECOVERY),
        ChartKind::CallGraph => callgraph::draw(root, data),
    }
}

/// Writes the title and the experiment's description across the top; returns the area below.
fn heading<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    description: &str,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let (top, body) = root.split_vertically(96);
    let centered = |text: &str, size: u32, bold: bool| -> Result<TextStyle, ChartError> {
        let font = |size: u32| {
            let font = match bold {
                true => (FONT, size, FontStyle::Bold).into_font(),
                false => (FONT, size).into_font(),
            };
            font.into_text_style(&top)
                .pos(Pos::new(HPos::Center, VPos::Top))
        };
        // A long name (a sweep named for its flags) is set smaller until it fits across.
        let room = style::SIZE.0 - 40;
        let (width, _) = (top.estimate_text_size(text, &font(size)))?;
        Ok(match width > room {
            true => font((size * room / width).max(12)),
            false => font(size),
        })
    };
    let middle = style::SIZE.0 as i32 / 2;
    top.draw(&Text::new(
        title,
        (middle, 14),
        centered(title, style::TITLE, true)?,
    ))?;
    top.draw(&Text::new(
        description,
        (middle, 60),
        centered(description, style::NOTE, false)?,
    ))?;
    Ok(body)
}

/// A vertical 95 % interval from `lo` to `hi` at `x`, with caps a fixed number of pixels wide.
fn error_bar<DB: DrawingBackend>(
    chart: &mut ChartContext<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    x: f64,
    lo: f64,
    hi: f64,
    color: RGBColor,
) -> Result<(), ChartError> {
    let line = ShapeStyle::from(color).stroke_width(2);
    let cap = |y: f64| EmptyElement::at((x, y)) + PathElement::new(vec![(-8, 0), (8, 0)], line);
    let area = chart.plotting_area();
    area.draw(&PathElement::new(vec![(x, lo), (x, hi)], line))
        .and_then(|_| area.draw(&cap(lo)))
        .and_then(|_| area.draw(&cap(hi)))
        .map_err(ChartError::from)
}

/// A cell's number: seconds as few decimals as they need, other values to three.
fn tick_fixed(x: f64) -> String {
    format!("{x:.3}")
}

/// An axis number, short: as few decimals as it needs, up to four.
fn tick(x: f64) -> String {
    let s = format!("{x:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".into() } else { s.into() }
}
