//! The call graph: a panel per configuration, the task and its tools in layers top down (a
//! tool one layer below the deepest of its callers), each edge a line from caller to callee
//! with its calls per call of the task beside it, the closed form (◇) where it holds, and the
//! duplicate effects at that layer where a configuration makes any. A
//! fallback's edge is dashed; an edge no call went over is faint. Where the run is a sweep,
//! the graph is drawn at its last point, which the note line names: one picture per point
//! would be a stack nobody reads, and the last is where the sweeps of the shipped experiments
//! end (the db down, the widest fan-out).

use super::ChartError;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::data::{Data, EdgeRow, Graph};
use super::frame;
use super::style::{self, FONT};

const NODE_HEIGHT: i32 = 40;

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<(), ChartError> {
    let graph = data
        .graph
        .as_ref()
        .ok_or(ChartError::Missing("the run wrote no edges.csv"))?;
    let body = super::heading(
        root,
        &format!("Call graph — {}", data.name),
        &data.description,
    )?;
    let last: Vec<String> =
        (data.rows.last()).map_or(Vec::new(), |r| data.params(r).map(String::from).collect());
    let at = (data.axes.iter().zip(&last))
        .map(|(a, v)| format!("{} = {v}", a.path))
        .collect::<Vec<_>>();
    let mut note = String::from("calls per call of the task on each edge");
    if !at.is_empty() {
        note += &format!(", at {}", at.join(", "));
    }
    if graph.edges.iter().any(|e| e.theory.is_some()) {
        note += "; ◇ the closed form for independent layers";
    }
    if graph.edges.iter().any(|e| e.duplicates > 0.0) {
        note += "; dup.: duplicate effects at the callee";
    }
    if graph.falls_back() {
        note += "; dashed: a fallback, called once the call before it failed";
    }
    let body = frame::note(&body, &note)?;
    let panels = body.split_evenly((1, data.policies.len()));
    for (policy, panel) in data.policies.iter().zip(&panels) {
        let rows: Vec<&EdgeRow> = (graph.edges.iter())
            .filter(|e| &e.policy == policy && e.params == last)
            .collect();
        draw_panel(panel, graph, policy, &rows)?;
    }
    Ok(())
}

/// One configuration's graph.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    graph: &Graph,
    policy: &str,
    rows: &[&EdgeRow],
) -> Result<(), ChartError> {
    let area = frame::caption(area, policy, style::LABEL)?;
    let (w, h) = area.dim_in_pixel();
    let (w, h) = (w as i32, h as i32);
    let depth = graph.nodes.iter().map(|n| n.1).max().unwrap_or(0) + 1;
    let row_height = h / depth as i32;
    // Each node's centre: its layer's row, spread evenly across the panel.
    let centre = |i: usize| {
        let d = graph.nodes[i].1;
        let layer: Vec<usize> = (0..graph.nodes.len())
            .filter(|&k| graph.nodes[k].1 == d)
            .collect();
        let k = layer.iter().position(|&k| k == i).unwrap_or(0) as i32;
        let x = w * (2 * k + 1) / (2 * layer.len() as i32);
        (x, row_height * d as i32 + row_height / 2)
    };
    for row in rows {
        let (Some(from), Some(to)) = (graph.node(&row.caller), graph.node(&row.callee)) else {
            continue;
        };
        let ((x0, y0), (x1, y1)) = (centre(from), centre(to));
        let (a, b) = ((x0, y0 + NODE_HEIGHT / 2), (x1, y1 - NODE_HEIGHT / 2));
        let ink = BLACK.mix(if row.calls > 0.0 { 1.0 } else { 0.25 });
        let line = ink.stroke_width(2);
        if graph.is_fallback(policy, &row.caller, &row.callee) {
            area.draw(&DashedPathElement::new([a, b], 8, 6, line))?;
        } else {
            area.draw(&PathElement::new([a, b], line))?;
        }
        arrow_head(&area, a, b, ink)?;
        let mut label = match row.theory {
            Some(t) => format!("{} ◇ {}", figure(row.calls), figure(t)),
            None => figure(row.calls),
        };
        if row.duplicates > 0.0 {
            label += &format!(" · {} dup.", figure(row.duplicates));
        }
        let mid = ((a.0 + b.0) / 2, (a.1 + b.1) / 2);
        boxed(&area, &label, mid, style::NOTE, ink)?;
    }
    for i in 0..graph.nodes.len() {
        let (x, y) = centre(i);
        let name = &graph.nodes[i].0;
        let font = (FONT, style::TICK).into_font().into_text_style(&area);
        let half = text_width(&area, name, &font)? / 2 + 12;
        area.draw(&Rectangle::new(
            [
                (x - half, y - NODE_HEIGHT / 2),
                (x + half, y + NODE_HEIGHT / 2),
            ],
            WHITE.filled(),
        ))?;
        area.draw(&Rectangle::new(
            [
                (x - half, y - NODE_HEIGHT / 2),
                (x + half, y + NODE_HEIGHT / 2),
            ],
            BLACK.stroke_width(2),
        ))?;
        let centred = font.pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new(name.clone(), (x, y), centred))?;
    }
    Ok(())
}

/// A number of calls as the table prints it: three significant figures.
fn figure(x: f64) -> String {
    if x >= 100.0 {
        format!("{x:.0}")
    } else if x >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.2}")
    }
}

/// The width of `text` in `font` on `area`, as the embedded font measures it.
fn text_width<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    font: &TextStyle,
) -> Result<i32, ChartError> {
    let (w, _) = (area.estimate_text_size(text, font))?;
    Ok(w as i32)
}

/// `text` centred at `at` on a white box, so a label stays legible over the lines it crosses.
fn boxed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    at: (i32, i32),
    size: u32,
    ink: RGBAColor,
) -> Result<(), ChartError> {
    let font = (FONT, size).into_font().color(&ink).into_text_style(area);
    let half = (text_width(area, text, &font)? / 2 + 6, size as i32 / 2 + 4);
    area.draw(&Rectangle::new(
        [
            (at.0 - half.0, at.1 - half.1),
            (at.0 + half.0, at.1 + half.1),
        ],
        WHITE.filled(),
    ))?;
    let centred = font.pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new(text.to_string(), at, centred))
        .map_err(ChartError::from)
}

/// An arrow's head at `b`, pointing from `a`.
fn arrow_head<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    a: (i32, i32),
    b: (i32, i32),
    ink: RGBAColor,
) -> Result<(), ChartError> {
    let (dx, dy) = (f64::from(b.0 - a.0), f64::from(b.1 - a.1));
    let length = dx.hypot(dy).max(1.0);
    let (ux, uy) = (dx / length, dy / length);
    let point = |along: f64, across: f64| {
        (
            b.0 - (ux * along - uy * across) as i32,
            b.1 - (uy * along + ux * across) as i32,
        )
    };
    area.draw(&Polygon::new(
        vec![b, point(14.0, 7.0), point(14.0, -7.0)],
        ink.filled(),
    ))
    .map_err(ChartError::from)
}
