//! Calls over time: for each tool, a panel of the calls each configuration sent in each stretch
//! of time, with the tool's outages shaded — the load a retry policy puts on a tool that is down.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::bars;
use super::data::Data;
use super::style::{self, FONT};
use crate::time::Tick;

/// Ticks to seconds, the unit of the time axis.
fn seconds(t: Tick) -> f64 {
    t.0 as f64 / 1e6
}

pub fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, data: &Data) -> Result<(), String> {
    let (width, stretches) = data
        .timeline
        .as_ref()
        .ok_or("the run kept no timeline (`[output] timeline`)")?;
    let mut tools: Vec<&str> = Vec::new();
    for s in stretches {
        if !tools.contains(&s.tool.as_str()) {
            tools.push(&s.tool);
        }
    }
    if tools.is_empty() {
        return Err("timeline.csv has no rows".into());
    }
    let body = super::heading(
        root,
        &format!("Calls over time — {}", data.name),
        &data.description,
    )?;
    let body = bars::legend(&body, data)?;
    let x_hi = stretches
        .iter()
        .map(|s| seconds(s.from.after(*width)))
        .fold(0.0, f64::max);
    let panels = body.split_evenly((tools.len(), 1));
    for (i, (area, tool)) in panels.iter().zip(&tools).enumerate() {
        let last = i + 1 == tools.len();
        let rows = || stretches.iter().filter(move |s| s.tool == *tool);
        let y_hi = rows().map(|s| s.calls).max().unwrap_or(0).max(1) as f64 * 1.15;
        let down: Vec<(Tick, Tick)> = (data.outages.iter())
            .filter(|(t, _, _)| t == tool)
            .map(|&(_, from, until)| (from, until))
            .collect();
        let shaded = if down.is_empty() {
            ""
        } else {
            " (shaded: down)"
        };
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{tool}: calls per {width}{shaded}"),
                (FONT, style::TICK),
            )
            .margin(14)
            .margin_right(40)
            .x_label_area_size(if last { 64 } else { 32 })
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..x_hi, 0.0..y_hi)
            .map_err(|e| e.to_string())?;
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(12)
            .y_labels(4)
            .x_label_formatter(&|x| super::tick(*x))
            .y_label_formatter(&|y| super::tick(*y))
            .label_style((FONT, style::TICK))
            .axis_desc_style((FONT, style::NOTE))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.08));
        if last {
            mesh.x_desc("time since the run began (s)");
        }
        mesh.draw().map_err(|e| e.to_string())?;
        chart
            .draw_series(down.iter().map(|&(from, until)| {
                Rectangle::new(
                    [(seconds(from), 0.0), (seconds(until).min(x_hi), y_hi)],
                    BLACK.mix(0.1).filled(),
                )
            }))
            .map_err(|e| e.to_string())?;
        for (p, policy) in data.policies.iter().enumerate() {
            // A step per stretch: level across it, so a stretch reads as the count it holds.
            let steps: Vec<(f64, f64)> = rows()
                .filter(|s| s.policy == *policy)
                .flat_map(|s| {
                    let y = s.calls as f64;
                    [(seconds(s.from), y), (seconds(s.from.after(*width)), y)]
                })
                .collect();
            chart
                .draw_series(LineSeries::new(steps, style::color(p).stroke_width(3)))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
