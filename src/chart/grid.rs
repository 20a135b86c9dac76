//! The grid view of a two-axis sweep: for each configuration a heat map of attempts and one of
//! duplicates per intent, cells labelled with their value, one colour scale per measure so the
//! configurations can be compared at a glance. The recovery map is the same view of the share of
//! replications whose goodput came back after the trigger, on one scale from 0 to 100 % for every
//! map, each cell labelled with the share and the median time those took: a metastable cell is
//! a share between the two, not a yes or a no.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::Data;
use super::frame;
use super::style::{self, FONT};

/// A row of panels: title, column, and the colour of the scale's top.
type Measure = (&'static str, &'static str, RGBColor);

/// The grid's rows of panels.
pub const MEASURES: [Measure; 2] = [
    (
        "attempts per intent",
        "attempts_per_intent",
        RGBColor(0, 90, 160),
    ),
    (
        "duplicates per intent",
        "duplicates_per_intent",
        RGBColor(190, 60, 0),
    ),
];

/// The recovery map's one row: the share of replications that recovered.
pub const RECOVERY: [Measure; 1] = [(
    "share of runs recovered, median time",
    "recovered_share",
    RGBColor(0, 110, 80),
)];

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
    measures: &[Measure],
) -> Result<(), ChartError> {
    let recovery = measures == RECOVERY;
    let what = if recovery { "Recovery map" } else { "Grid" };
    let body = super::heading(
        root,
        // The axes are named on the panels: the title stays short enough for one line.
        &format!("{what} — {}", data.name),
        &data.description,
    )?;
    let panels = body.split_evenly((measures.len(), data.policies.len()));
    for (m, measure) in measures.iter().enumerate() {
        let values: Vec<f64> = (data.rows.iter())
            .filter_map(|r| data.number(r, measure.1))
            .collect();
        // Shares are on one scale, 0 to 100 %, on every map.
        let range = if recovery {
            (0.0, 1.0)
        } else {
            (
                values.iter().cloned().fold(f64::MAX, f64::min),
                values.iter().cloned().fold(f64::MIN, f64::max),
            )
        };
        for (p, policy) in data.policies.iter().enumerate() {
            let map = Map {
                data,
                policy,
                measure,
                range,
                recovery,
            };
            map.draw(&panels[m * data.policies.len() + p])?;
        }
    }
    Ok(())
}

/// One configuration's map of one measure, on the measure's colour scale.
struct Map<'a> {
    data: &'a Data,
    policy: &'a str,
    measure: &'a Measure,
    /// The values at the scale's bottom and top.
    range: (f64, f64),
    /// The recovery map: a cell is labelled with the share and the median time to recover.
    recovery: bool,
}

impl Map<'_> {
    /// A cell's value and its label's lines.
    fn cell(&self, r: &super::data::Row) -> Option<(f64, Vec<String>)> {
        let v = self.data.number(r, self.measure.1)?;
        let lines = if self.recovery {
            let time = self.data.number(r, "time_to_recover_s");
            // No run recovered: the cell says so in words, not with a dash a reader may skip.
            let time = match time {
                _ if v == 0.0 => "never".to_string(),
                Some(t) => format!("{} s", super::tick(t)),
                None => "—".to_string(),
            };
            vec![format!("{:.0} %", 100.0 * v), time]
        } else {
            vec![super::tick_fixed(v)]
        };
        Some((v, lines))
    }

    /// A cell's colour and its label's ink.
    fn look(&self, v: f64) -> (RGBColor, RGBColor) {
        let (lo, hi) = self.range;
        let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
        (
            shade(self.measure.2, f),
            if f > 0.55 { WHITE } else { BLACK },
        )
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), ChartError> {
        let (data, policy) = (self.data, self.policy);
        let (xs, ys) = (&data.axes[0], &data.axes[1]);
        let (title, column, _) = *self.measure;
        // Room for the longest value label of the vertical axis, and its title.
        let longest = (ys.values.iter())
            .map(|v| v.chars().count())
            .max()
            .unwrap_or(1);
        // A panel of zeros says so in its caption, so it is not read as missing data.
        let zero = (data.rows_of(policy)).all(|r| data.number(r, column) == Some(0.0));
        let caption = if zero {
            format!("{policy}: {title} — 0 in every cell")
        } else {
            format!("{policy}: {title}")
        };
        let mut chart = ChartBuilder::on(area)
            .caption(caption, (FONT, style::TICK))
            .margin(8)
            .x_label_area_size(44)
            .y_label_area_size(44 + 12 * longest as u32)
            .build_cartesian_2d(
                -0.5..(xs.values.len() as f64 - 0.5),
                -0.5..(ys.values.len() as f64 - 0.5),
            )?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(xs.values.len() * 2 + 1)
            .y_labels(ys.values.len() * 2 + 1)
            .x_label_formatter(&|v| frame::category(&xs.values, *v))
            .y_label_formatter(&|v| frame::category(&ys.values, *v))
            .x_desc(style::axis_title(&xs.path))
            .y_desc(style::meaning(&ys.path).unwrap_or(short(&ys.path)))
            .label_style((FONT, style::NOTE))
            .axis_desc_style((FONT, style::NOTE))
            .draw()?;
        let cells: Vec<(f64, f64, (f64, Vec<String>))> = data
            .rows_of(policy)
            .filter_map(|r| {
                let x = xs.values.iter().position(|v| *v == data.param(r, 0))? as f64;
                let y = ys.values.iter().position(|v| *v == data.param(r, 1))? as f64;
                Some((x, y, self.cell(r)?))
            })
            .collect();
        let square = |x: f64, y: f64| [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)];
        chart.draw_series(
            cells
                .iter()
                .map(|(x, y, (v, _))| Rectangle::new(square(*x, *y), self.look(*v).0.filled())),
        )?;
        // Cell edges, so a pale cell (0 %, the scale's bottom) still reads as a cell.
        chart.draw_series(cells.iter().map(|(x, y, _)| {
            Rectangle::new(square(*x, *y), RGBColor(170, 170, 170).stroke_width(1))
        }))?;
        let texts = cells.iter().flat_map(|(x, y, (v, lines))| {
            let step = 0.22;
            let top = step * (lines.len() as f64 - 1.0) / 2.0;
            lines.iter().enumerate().map(move |(k, line)| {
                Text::new(
                    line.clone(),
                    (*x, y + top - step * k as f64),
                    (FONT, style::NOTE)
                        .into_font()
                        .color(&self.look(*v).1)
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                )
            })
        });
        chart.draw_series(texts)?;
        Ok(())
    }
}

/// White at 0, `top` at 1.
fn shade(top: RGBColor, f: f64) -> RGBColor {
    let mix = |c: u8| (255.0 - f * (255.0 - c as f64)).round() as u8;
    RGBColor(mix(top.0), mix(top.1), mix(top.2))
}

/// A swept path without its table: `rate.2.at` for `workload.rate.2.at`, `reply_loss` for
/// `tool.charge.reply_loss`.
fn short(path: &str) -> &str {
    let segments: Vec<&str> = path.split('.').collect();
    let skip = match segments.first() {
        Some(&"tool" | &"policy") if segments.len() > 2 => 2,
        Some(&"workload") if segments.len() > 1 => 1,
        _ => 0,
    };
    let start: usize = segments[..skip].iter().map(|s| s.len() + 1).sum();
    &path[start..]
}
