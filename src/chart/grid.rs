//! The grid view of a two-axis sweep: for each configuration a heat map of attempts and one of
//! duplicates per intent, cells labelled with their value, one colour scale per measure so the
//! configurations can be compared at a glance.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::Data;
use super::style::{self, FONT};

/// The rows of panels: title, column, and the colour of the scale's top.
const MEASURES: [(&str, &str, RGBColor); 2] = [
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

pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, data: &Data) -> Result<(), String> {
    let (xs, ys) = (&data.axes[0], &data.axes[1]);
    let body = super::heading(
        root,
        &format!(
            "Grid of {} × {} — {}",
            leaf(&xs.path),
            leaf(&ys.path),
            data.name
        ),
        &data.description,
    )?;
    let panels = body.split_evenly((MEASURES.len(), data.policies.len()));
    // Room for the longest value label of the vertical axis, and its title.
    let longest = ys
        .values
        .iter()
        .map(|v| v.chars().count())
        .max()
        .unwrap_or(1);
    let label_width = 44 + 12 * longest as u32;
    for (m, (title, column, top)) in MEASURES.into_iter().enumerate() {
        let values: Vec<f64> = data
            .rows
            .iter()
            .filter_map(|r| data.number(r, column))
            .collect();
        let lo = values.iter().cloned().fold(f64::MAX, f64::min);
        let hi = values.iter().cloned().fold(f64::MIN, f64::max);
        for (p, policy) in data.policies.iter().enumerate() {
            let area = &panels[m * data.policies.len() + p];
            // A panel of zeros says so in its caption, so it is not read as missing data.
            let zero = data
                .rows_of(policy)
                .all(|r| data.number(r, column) == Some(0.0));
            let caption = if zero {
                format!("{policy}: {title} — 0 in every cell")
            } else {
                format!("{policy}: {title}")
            };
            let mut chart = ChartBuilder::on(area)
                .caption(caption, (FONT, style::TICK))
                .margin(8)
                .x_label_area_size(44)
                .y_label_area_size(label_width)
                .build_cartesian_2d(
                    -0.5..(xs.values.len() as f64 - 0.5),
                    -0.5..(ys.values.len() as f64 - 0.5),
                )
                .map_err(|e| e.to_string())?;
            let name = |values: &[String], v: f64| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < values.len() {
                    values[i as usize].clone()
                } else {
                    String::new()
                }
            };
            chart
                .configure_mesh()
                .disable_mesh()
                .x_labels(xs.values.len() * 2 + 1)
                .y_labels(ys.values.len() * 2 + 1)
                .x_label_formatter(&|v| name(&xs.values, *v))
                .y_label_formatter(&|v| name(&ys.values, *v))
                .x_desc(leaf(&xs.path))
                .y_desc(leaf(&ys.path))
                .label_style((FONT, style::NOTE))
                .axis_desc_style((FONT, style::NOTE))
                .draw()
                .map_err(|e| e.to_string())?;
            let cells: Vec<(f64, f64, f64)> = data
                .rows_of(policy)
                .filter_map(|r| {
                    let x = xs.values.iter().position(|v| *v == r.params[0])? as f64;
                    let y = ys.values.iter().position(|v| *v == r.params[1])? as f64;
                    Some((x, y, data.number(r, column)?))
                })
                .collect();
            chart
                .draw_series(cells.iter().map(|&(x, y, v)| {
                    let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                    Rectangle::new(
                        [(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)],
                        shade(top, f).filled(),
                    )
                }))
                .map_err(|e| e.to_string())?;
            chart
                .draw_series(cells.iter().map(|&(x, y, v)| {
                    let f = if hi > lo { (v - lo) / (hi - lo) } else { 0.0 };
                    let ink = if f > 0.55 { WHITE } else { BLACK };
                    Text::new(
                        format!("{v:.3}"),
                        (x, y),
                        (FONT, style::NOTE)
                            .into_font()
                            .color(&ink)
                            .pos(Pos::new(HPos::Center, VPos::Center)),
                    )
                }))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// White at 0, `top` at 1.
fn shade(top: RGBColor, f: f64) -> RGBColor {
    let mix = |c: u8| (255.0 - f * (255.0 - c as f64)).round() as u8;
    RGBColor(mix(top.0), mix(top.1), mix(top.2))
}

fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}
