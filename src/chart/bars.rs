//! Bars: the configurations side by side, a panel per measure, each bar with its 95 % interval
//! where the measure has one; one group of bars per sweep point. The comparison shows success,
//! attempts and duplicates; the latency view shows completion times beside the load.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{Data, Row};
use super::style::{self, FONT};

/// One panel: its title, the `summary.csv` columns of the value and of its interval (none for a
/// quantile), the scale applied and the decimals shown.
pub struct Panel {
    title: &'static str,
    mean: &'static str,
    ci: Option<&'static str>,
    scale: f64,
    decimals: usize,
}

const CALLS: Panel = Panel {
    title: "calls (attempts) per intent",
    mean: "attempts_per_intent",
    ci: Some("attempts_ci95"),
    scale: 1.0,
    decimals: 3,
};

/// Success, load and duplicates: what each configuration buys and what it costs.
pub const COMPARISON: [Panel; 3] = [
    Panel {
        title: "success rate (%)",
        mean: "success_rate",
        ci: Some("success_ci95"),
        scale: 100.0,
        decimals: 1,
    },
    CALLS,
    Panel {
        title: "duplicates per intent",
        mean: "duplicates_per_intent",
        ci: Some("duplicates_ci95"),
        scale: 1.0,
        decimals: 3,
    },
];

/// The task view, for workloads whose tasks make several calls: tasks done, their load, the load
/// on tools that were down, and duplicate effects.
pub const TASKS: [Panel; 4] = [
    Panel {
        title: "tasks succeeded (%)",
        mean: "task_success_rate",
        ci: None,
        scale: 100.0,
        decimals: 1,
    },
    Panel {
        title: "calls per task",
        mean: "calls_per_task",
        ci: None,
        scale: 1.0,
        decimals: 2,
    },
    Panel {
        title: "calls to a tool that was down",
        mean: "calls_while_down",
        ci: None,
        scale: 1.0,
        decimals: 0,
    },
    Panel {
        title: "duplicate effects per task",
        mean: "duplicates_per_task",
        ci: None,
        scale: 1.0,
        decimals: 3,
    },
];

/// The median and the tail of completion times (ticks are microseconds), beside the load.
pub const LATENCY: [Panel; 3] = [
    Panel {
        title: "median completion (ms)",
        mean: "completion_p50_ticks",
        ci: None,
        scale: 1e-3,
        decimals: 1,
    },
    Panel {
        title: "99th percentile completion (ms)",
        mean: "completion_p99_ticks",
        ci: None,
        scale: 1e-3,
        decimals: 1,
    },
    CALLS,
];

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
    title: &str,
    panels: &[Panel],
) -> Result<(), String> {
    let body = super::heading(root, &format!("{title} — {}", data.name), &data.description)?;
    // Without a sweep each configuration is a group of one bar, named on the axis; with one,
    // each point is a group of one bar per configuration, named in a legend.
    let swept = !data.axes.is_empty();
    let mut groups: Vec<Vec<String>> = Vec::new();
    if swept {
        for row in &data.rows {
            if !groups.contains(&row.params) {
                groups.push(row.params.clone());
            }
        }
    } else {
        groups = data.policies.iter().map(|p| vec![p.clone()]).collect();
    }
    let per_group = if swept { data.policies.len() } else { 1 };
    let place = |row: &Row| -> Option<(usize, usize, usize)> {
        let s = data.policies.iter().position(|p| *p == row.policy)?;
        if swept {
            Some((groups.iter().position(|p| *p == row.params)?, s, s))
        } else {
            Some((s, 0, s))
        }
    };
    // Configurations are named under their bars when the names fit a panel's width, less its
    // axis (about 11 pixels a character), else in a legend above the panels.
    let longest = data
        .policies
        .iter()
        .map(|p| p.chars().count())
        .max()
        .unwrap_or(0);
    let panel_width = style::SIZE.0 as usize / panels.len() - 86;
    let named_below = !swept && longest * 11 * data.policies.len() < panel_width;
    let area = if named_below {
        body
    } else {
        legend(&body, data)?
    };
    // Side by side without a sweep; stacked with one, so every point's label has room.
    let areas = if swept {
        area.split_evenly((panels.len(), 1))
    } else {
        area.split_evenly((1, panels.len()))
    };
    for (i, (area, panel)) in areas.iter().zip(panels).enumerate() {
        let (scale, decimals) = (panel.scale, panel.decimals);
        // Stacked panels share one axis title, under the last.
        let last = !swept || i + 1 == panels.len();
        // (group, slot in the group, colour, value, half-width)
        let bars: Vec<(usize, usize, usize, f64, f64)> = data
            .rows
            .iter()
            .filter_map(|row| {
                let (g, slot, color) = place(row)?;
                let v = data.number(row, panel.mean)? * scale;
                // No interval (a single sample, a quantile) draws no error bar.
                let ci = panel.ci.and_then(|ci| data.number(row, ci)).unwrap_or(0.0);
                Some((g, slot, color, v, ci * scale))
            })
            .collect();
        let top = bars.iter().map(|b| b.3 + b.4).fold(0.0, f64::max);
        let top = if top > 0.0 { top * 1.15 } else { 1.0 };
        let mut chart = ChartBuilder::on(area)
            .caption(
                panel.title,
                (FONT, if swept { style::TICK } else { style::LABEL }),
            )
            .margin(14)
            .x_label_area_size(match (swept, last) {
                (false, _) => 40,
                (true, false) => 32,
                (true, true) => 64,
            })
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..(groups.len() as f64 - 0.5), 0.0..top)
            .map_err(|e| e.to_string())?;
        let label = |x: &f64| -> String {
            let i = x.round();
            if (x - i).abs() > 1e-6 || i < 0.0 || i as usize >= groups.len() {
                return String::new();
            }
            if swept || named_below {
                groups[i as usize].join(" / ")
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh.disable_x_mesh()
            .x_labels(groups.len() * 2 + 1)
            .y_labels(if swept { 4 } else { 10 })
            .x_label_formatter(&label)
            .y_label_formatter(&|y| super::tick(*y))
            .label_style((FONT, style::TICK))
            .axis_desc_style((FONT, style::NOTE))
            .light_line_style(WHITE.mix(0.0))
            .bold_line_style(BLACK.mix(0.08));
        if swept && last {
            let paths: Vec<&str> = data.axes.iter().map(|a| a.path.as_str()).collect();
            mesh.x_desc(paths.join(" / "));
        }
        mesh.draw().map_err(|e| e.to_string())?;
        let width = 0.8 / per_group as f64;
        let middle = |g: usize, slot: usize| g as f64 - 0.4 + (slot as f64 + 0.5) * width;
        chart
            .draw_series(bars.iter().map(|&(g, slot, color, v, _)| {
                let x = middle(g, slot);
                Rectangle::new(
                    [(x - 0.42 * width, 0.0), (x + 0.42 * width, v)],
                    style::color(color).filled(),
                )
            }))
            .map_err(|e| e.to_string())?;
        if panel.ci.is_some() {
            for &(g, slot, _, v, c) in &bars {
                super::error_bar(&mut chart, middle(g, slot), v - c, v + c, BLACK)?;
            }
        }
        // Without a sweep there is room to write each value above its bar.
        if !swept {
            chart
                .draw_series(bars.iter().map(|&(g, slot, _, v, c)| {
                    Text::new(
                        format!("{v:.decimals$}"),
                        (middle(g, slot), v + c + top * 0.01),
                        (FONT, style::NOTE)
                            .into_font()
                            .into_text_style(area)
                            .pos(Pos::new(HPos::Center, VPos::Bottom)),
                    )
                }))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// One swatch and name per configuration, in rows across the top; returns the area below.
pub(super) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<DrawingArea<DB, Shift>, String> {
    let font = (FONT, style::LABEL).into_font();
    let text = font
        .clone()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center));
    // Lay the entries out first: a new row when the next would pass the right edge.
    let (mut x, mut row) = (40, 0);
    let mut places = Vec::new();
    for name in &data.policies {
        let width = area
            .estimate_text_size(name, &font.clone().into_text_style(area))
            .map_err(|e| e.to_string())?
            .0 as i32;
        if x + 34 + width > style::SIZE.0 as i32 - 20 && x > 40 {
            (x, row) = (40, row + 1);
        }
        places.push((x, row));
        x += 34 + width + 40;
    }
    let (top, body) = area.split_vertically(18 + 32 * (row as u32 + 1));
    for (s, (name, &(x, row))) in data.policies.iter().zip(&places).enumerate() {
        let y = 14 + 32 * row;
        top.draw(&Rectangle::new(
            [(x, y), (x + 26, y + 24)],
            style::color(s).filled(),
        ))
        .map_err(|e| e.to_string())?;
        top.draw(&Text::new(name.clone(), (x + 34, y + 12), text.clone()))
            .map_err(|e| e.to_string())?;
    }
    Ok(body)
}
