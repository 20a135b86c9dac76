//! Bars: the configurations side by side, a panel per measure, each bar with its 95 % interval
//! where the measure has one; one group of bars per sweep point. The comparison shows success,
//! attempts, the calls a breaker refused, duplicates and the time to an answer: a fix that
//! trades success for time (a timeout) or calls for refusals (a breaker) shows both sides. The
//! latency view shows completion times beside the load.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use plotters::coord::types::RangedCoordf64;

use super::data::{Data, Row};
use super::style::{self, FONT};
use super::{frame, legend};
use crate::metrics::estimate::wilson;

/// One panel: its title, the `summary.csv` columns of the value, of its interval and of its
/// closed form where there is one, the scale applied and the most decimals shown.
pub struct Panel {
    title: &'static str,
    mean: &'static str,
    ci: Interval,
    theory: Option<&'static str>,
    /// A `summary.csv` column the value is divided by (a count per intent), if any.
    per: Option<&'static str>,
    /// Drawn in a sweep's chart too, where the panels are stacked and have less room each.
    in_sweeps: bool,
    /// The most the value can be (a share is at most 1): its interval is cut there.
    at_most: Option<f64>,
    scale: f64,
    decimals: usize,
    /// Panels with the same name here show one quantity (a median and a tail, both ms) and
    /// share one scale, so their bars compare.
    share: Option<&'static str>,
}

/// The figures per intent that count one call of a task's, not the calls it causes below.
const PER_CALL: [&str; 2] = ["attempts_per_intent", "duplicates_per_intent"];

/// The most points a chart of bars shows, evenly spaced: a group of bars each, with its label
/// under it, fits about this many across.
pub const POINTS: usize = 12;

/// The `summary.csv` columns `panels` read.
pub fn reads(panels: &[Panel]) -> Vec<&'static str> {
    let mut columns = Vec::new();
    for p in panels {
        columns.extend([Some(p.mean), p.theory, p.per].into_iter().flatten());
        match p.ci {
            Interval::None => {}
            Interval::HalfWidth(c) => columns.push(c),
            Interval::Binomial { successes, trials } => columns.extend([successes, trials]),
        }
    }
    columns.sort_unstable();
    columns.dedup();
    columns
}

/// Where a bar's 95 % interval comes from.
#[derive(Clone, Copy)]
enum Interval {
    /// None: a quantile, a count.
    None,
    /// A `summary.csv` column holding the half-width.
    HalfWidth(&'static str),
    /// A binomial proportion: the Wilson interval of successes out of trials.
    Binomial {
        successes: &'static str,
        trials: &'static str,
    },
}

const CALLS: Panel = Panel {
    title: "attempts per intent",
    mean: "attempts_per_intent",
    ci: Interval::HalfWidth("attempts_ci95"),
    theory: Some("theory_attempts_per_intent"),
    per: None,
    in_sweeps: true,
    at_most: None,
    scale: 1.0,
    decimals: 3,
    share: None,
};

/// Success, load, refusals, duplicates, ghosts, time and money: what each configuration buys and what
/// it costs. A panel zero in every row (no breaker refused anything) is left out, and named;
/// one with no value in any row (no tool has a price) is left out silently; a sweep's stacked
/// panels leave the time and the money out, for room (`summary.csv` has them).
pub const COMPARISON: [Panel; 7] = [
    Panel {
        title: "success rate (%)",
        mean: "success_rate",
        ci: Interval::HalfWidth("success_ci95"),
        theory: Some("theory_success_rate"),
        per: None,
        in_sweeps: true,
        at_most: Some(1.0),
        scale: 100.0,
        decimals: 1,
        share: None,
    },
    CALLS,
    Panel {
        title: "breaker refusals/intent",
        mean: "short_circuited",
        ci: Interval::None,
        theory: None,
        per: Some("intents"),
        in_sweeps: true,
        at_most: None,
        scale: 1.0,
        decimals: 3,
        share: None,
    },
    Panel {
        title: "duplicates per intent",
        mean: "duplicates_per_intent",
        ci: Interval::HalfWidth("duplicates_ci95"),
        theory: Some("theory_duplicates_per_intent"),
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1.0,
        decimals: 3,
        share: None,
    },
    // A ghost is a commit the client never heard of: a timeout does not cancel the work.
    Panel {
        title: "ghost commits (%)",
        mean: "ghost_rate",
        ci: Interval::HalfWidth("ghost_ci95"),
        theory: Some("theory_ghost_rate"),
        per: None,
        in_sweeps: false,
        at_most: Some(1.0),
        scale: 100.0,
        decimals: 1,
        share: None,
    },
    Panel {
        title: "mean time to answer (s)",
        mean: "mean_completion_s",
        ci: Interval::HalfWidth("mean_completion_s_ci95"),
        theory: Some("theory_mean_completion_s"),
        per: None,
        in_sweeps: false,
        at_most: None,
        scale: 1.0,
        decimals: 3,
        share: None,
    },
    // Drawn only where a tool has a price: the column is empty otherwise.
    Panel {
        title: "$ per 1000 tasks",
        mean: "cost_per_task",
        ci: Interval::HalfWidth("cost_per_task_ci95"),
        theory: Some("theory_cost_per_task"),
        per: None,
        in_sweeps: false,
        at_most: None,
        scale: 1000.0,
        decimals: 2,
        share: None,
    },
];

/// The task view, for workloads whose tasks make several calls: tasks done, their load, the load
/// on tools that were down, and duplicate effects.
pub const TASKS: [Panel; 4] = [
    Panel {
        title: "tasks succeeded (%)",
        mean: "task_success_rate",
        ci: Interval::Binomial {
            successes: "tasks_succeeded",
            trials: "tasks",
        },
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: Some(1.0),
        scale: 100.0,
        decimals: 1,
        share: None,
    },
    Panel {
        title: "calls per task",
        mean: "calls_per_task",
        ci: Interval::None,
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1.0,
        decimals: 2,
        share: None,
    },
    Panel {
        title: "calls to a tool while down (all tasks)",
        mean: "calls_while_down",
        ci: Interval::None,
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1.0,
        decimals: 0,
        share: None,
    },
    Panel {
        title: "duplicate effects per task",
        mean: "duplicates_per_task",
        ci: Interval::None,
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1.0,
        decimals: 3,
        share: None,
    },
];

/// The median and the tail of completion times (ticks are microseconds), beside the load.
pub const LATENCY: [Panel; 3] = [
    Panel {
        title: "median completion (ms)",
        mean: "completion_p50_ticks",
        ci: Interval::None,
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1e-3,
        decimals: 1,
        share: Some("completion"),
    },
    Panel {
        title: "99th percentile completion (ms)",
        mean: "completion_p99_ticks",
        ci: Interval::None,
        theory: None,
        per: None,
        in_sweeps: true,
        at_most: None,
        scale: 1e-3,
        decimals: 1,
        share: Some("completion"),
    },
    CALLS,
];

/// A bar as drawn: where it stands (its group, its slot in the group), its colour, its value,
/// its interval's ends and its closed form, all scaled.
#[derive(Clone, Copy)]
struct Bar {
    group: usize,
    slot: usize,
    colour: usize,
    value: f64,
    lo: f64,
    hi: f64,
    theory: Option<f64>,
}

/// Where the bars go. Without a sweep each configuration is a group of one bar, named under
/// it; with one, each point is a group of one bar per configuration, named in a legend.
struct Layout {
    swept: bool,
    groups: Vec<Vec<String>>,
    per_group: usize,
    /// The longest configuration name, in characters.
    longest: usize,
    /// Names under the bars turned upright, where they do not fit level.
    upright: bool,
    /// Panels drawn.
    panels: usize,
}

impl Layout {
    fn of(data: &Data, panels: usize) -> Layout {
        let swept = !data.axes.is_empty();
        let mut groups: Vec<Vec<String>> = Vec::new();
        if swept {
            for row in &data.rows {
                let params: Vec<String> = data.params(row).map(String::from).collect();
                if !groups.contains(&params) {
                    groups.push(params);
                }
            }
        } else {
            groups = data.policies.iter().map(|p| vec![p.clone()]).collect();
        }
        // Names fit level where they fit a panel's width (about 11 pixels a character, less
        // its axis).
        let longest = (data.policies.iter())
            .map(|p| p.chars().count())
            .max()
            .unwrap_or(0);
        let panel_width = style::SIZE.0 as usize / panels.max(1) - 86;
        let fits = longest * 11 * data.policies.len() < panel_width;
        Layout {
            swept,
            per_group: if swept { data.policies.len() } else { 1 },
            groups,
            longest,
            upright: !swept && !fits,
            panels,
        }
    }

    /// A row's group, slot and colour.
    fn place(&self, data: &Data, row: &Row) -> Option<(usize, usize, usize)> {
        let s = data.policies.iter().position(|p| p == data.policy(row))?;
        if self.swept {
            let group = (self.groups.iter())
                .position(|g| g.iter().map(String::as_str).eq(data.params(row)));
            Some((group?, s, s))
        } else {
            Some((s, 0, s))
        }
    }

    fn width(&self) -> f64 {
        0.8 / self.per_group as f64
    }

    /// The middle of a bar on the x axis.
    fn middle(&self, bar: &Bar) -> f64 {
        bar.group as f64 - 0.4 + (bar.slot as f64 + 0.5) * self.width()
    }
}

/// A panel's bars, one per row that has its value.
fn bars_of(data: &Data, layout: &Layout, panel: &Panel) -> Vec<Bar> {
    let bar = |row: &Row| {
        let (group, slot, colour) = layout.place(data, row)?;
        let per = match panel.per {
            Some(column) => data.number(row, column).filter(|&n| n > 0.0)?,
            None => 1.0,
        };
        let v = data.number(row, panel.mean)? / per;
        // Every measure is a count, a rate or a share: never below 0.
        let (lo, hi) = interval(data, row, panel.ci, v);
        let (lo, hi) = (lo.max(0.0), panel.at_most.map_or(hi, |m| hi.min(m)));
        let theory = panel.theory.and_then(|t| data.number(row, t));
        let scaled = |x: f64| x * panel.scale;
        Some(Bar {
            group,
            slot,
            colour,
            value: scaled(v),
            lo: scaled(lo),
            hi: scaled(hi),
            theory: theory.map(scaled),
        })
    };
    data.rows.iter().filter_map(bar).collect()
}

/// The panels drawn, each with its bars, and the titles of those left out: a panel that is zero
/// everywhere is named in a note instead, and a sweep draws only the panels made for one.
fn chosen<'a>(data: &Data, panels: &'a [Panel]) -> (Vec<(&'a Panel, Vec<Bar>)>, Vec<&'a str>) {
    let swept = !data.axes.is_empty();
    let all = Layout::of(data, 0);
    let mut drawn = Vec::new();
    let mut left_out = Vec::new();
    for panel in panels.iter().filter(|p| p.in_sweeps || !swept) {
        let bars = bars_of(data, &all, panel);
        if bars.is_empty() {
            continue;
        }
        if bars.iter().all(|b| b.value == 0.0 && b.hi == 0.0) {
            left_out.push(panel.title);
        } else {
            drawn.push((panel, bars));
        }
    }
    (drawn, left_out)
}

/// The canvas: a slide without a sweep, where the panels stand side by side; with one, where
/// they are stacked, as tall as gives each panel's plot at least 190 pixels (340 a panel with
/// its caption, margins and point labels, under about 230 of title and legend).
pub fn size(data: &Data, panels: &[Panel]) -> (u32, u32) {
    if data.axes.is_empty() {
        return style::SIZE;
    }
    let stacked = chosen(data, panels).0.len() as u32;
    (style::SIZE.0, style::SIZE.1.max(230 + 340 * stacked))
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
    title: &str,
    panels: &[Panel],
) -> Result<(), ChartError> {
    let body = super::heading(root, &format!("{title} — {}", data.name), &data.description)?;
    let swept = !data.axes.is_empty();
    let (drawn, left_out) = chosen(data, panels);
    let layout = Layout::of(data, drawn.len());
    // Configurations are named under their bars without a sweep; with one, in a legend above
    // the panels, each with the shape marked at the foot of its bars.
    let mut area = if swept {
        legend::marked(&body, data)?
    } else {
        body
    };
    if !left_out.is_empty() {
        let text = format!("not drawn, 0 in every row: {}", left_out.join(", "));
        area = frame::note(&area, &text)?;
    }
    // Side by side without a sweep; stacked with one, so every point's label has room.
    let areas = if swept {
        area.split_evenly((drawn.len().max(1), 1))
    } else {
        area.split_evenly((1, drawn.len().max(1)))
    };
    let tops: Vec<f64> = drawn.iter().map(|(_, bars)| top_of(bars)).collect();
    for (i, (area, (panel, bars))) in areas.iter().zip(&drawn).enumerate() {
        // Stacked panels share one axis title, under the last.
        let last = !swept || i + 1 == drawn.len();
        // Panels of one quantity share the highest of their tops.
        let top = (drawn.iter().zip(&tops))
            .filter(|((p, _), _)| p.share.is_some() && p.share == panel.share)
            .fold(tops[i], |top, (_, t)| top.max(*t));
        draw_panel(root, area, data, &layout, (panel, bars, top), last)?;
    }
    Ok(())
}

/// The caption of a panel, and its size: four or five panels side by side leave room for
/// shorter captions only.
fn caption_of(panel: &Panel, bars: &[Bar], layout: &Layout, data: &Data) -> (String, u32) {
    // Where tools call tools, a figure per intent is the task's own call's: the calls below
    // are on the call graph's chart.
    let own = data.services && PER_CALL.contains(&panel.mean);
    // Where a task makes several calls, its success is apart from its calls' (the tasks chart).
    let call = data.many_calls && panel.mean == "success_rate";
    let title = match (own, call) {
        (true, _) => format!("{}, top hop", panel.title),
        (_, true) => format!("{}, per call", panel.title),
        _ => panel.title.to_string(),
    };
    let text = if bars.iter().any(|b| b.theory.is_some()) {
        format!("{title} (◇ theory)")
    } else {
        title
    };
    let size = match layout.panels {
        5.. => style::NOTE - 2,
        _ if layout.swept || layout.panels > 3 => style::TICK,
        _ => style::LABEL,
    };
    (text, size)
}

/// The highest a panel's bars reach: a bar, its interval or its closed form.
fn top_of(bars: &[Bar]) -> f64 {
    (bars.iter())
        .map(|b| b.hi.max(b.theory.unwrap_or(0.0)))
        .fold(0.0, f64::max)
}

fn draw_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    data: &Data,
    layout: &Layout,
    (panel, bars, top): (&Panel, &[Bar], f64),
    last: bool,
) -> Result<(), ChartError> {
    let top = if top > 0.0 { top * 1.15 } else { 1.0 };
    let (caption, size) = caption_of(panel, bars, layout, data);
    let area = frame::caption(area, &caption, size)?;
    let groups = &layout.groups;
    let mut chart = ChartBuilder::on(&area)
        .margin(14)
        .x_label_area_size(match (layout.swept, last) {
            (false, _) if layout.upright => NAME_GAP as u32 + 6 + 11 * layout.longest as u32,
            (false, _) => 40,
            (true, false) => 50,
            (true, true) => 82,
        })
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5..(groups.len() as f64 - 0.5), 0.0..top)?;
    // Upright names, and a sweep's point labels (under the configurations' shapes), are
    // drawn here rather than by the mesh.
    let names: Vec<String> = if layout.upright || layout.swept {
        Vec::new()
    } else {
        groups.iter().map(|g| g.join(" / ")).collect()
    };
    let (x_label, y_label) = (
        |x: &f64| frame::category(&names, *x),
        |y: &f64| super::tick(*y),
    );
    // Room for a tick label about every 24 pixels of the plot. Plotters takes this as the most
    // labels and picks round steps under it (0 to 1.4 is 0, 0.5, 1 where 7 are allowed, and
    // 0 to 1.4 by 0.2 only where 8 are), so a stacked panel asks for eight or more.
    let y_ticks = (chart.plotting_area().dim_in_pixel().1 as usize / 24).clamp(6, 14);
    let mut mesh = chart.configure_mesh();
    mesh.disable_x_mesh()
        .x_labels(groups.len() * 2 + 1)
        .y_labels(y_ticks)
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label);
    frame::styled(&mut mesh, style::TICK, style::NOTE);
    if layout.swept && last {
        let titles: Vec<String> = (data.axes.iter())
            .map(|a| style::axis_title(&a.path))
            .collect();
        mesh.x_desc(titles.join(" / "));
    }
    mesh.draw()?;
    if layout.upright {
        // Turned a quarter clockwise, each name reads down from under its bar, clear of a
        // closed form's diamond on the axis.
        let style = (FONT, style::TICK)
            .into_font()
            .transform(FontTransform::Rotate90)
            .into_text_style(root)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for (g, name) in groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(g as f64, 0.0));
            root.draw(&Text::new(
                name.join(" / "),
                (x, y + NAME_GAP),
                style.clone(),
            ))?;
        }
    }
    let width = layout.width();
    chart.draw_series(bars.iter().map(|b| {
        let x = layout.middle(b);
        Rectangle::new(
            [(x - 0.42 * width, 0.0), (x + 0.42 * width, b.value)],
            style::color(b.colour).filled(),
        )
    }))?;
    if layout.swept {
        // Each configuration's shape under its bar, as in the legend, so that the bars are
        // told apart without their colour; the point's label under the shapes. Under the axis,
        // not inside the bar, a shape cannot be read as a value.
        for b in bars {
            let (px, py) = chart.backend_coord(&(layout.middle(b), 0.0));
            legend::shape(root, b.colour, (px, py + 17))?;
        }
        let style = (FONT, style::TICK)
            .into_font()
            .into_text_style(root)
            .pos(Pos::new(HPos::Center, VPos::Top));
        for (g, name) in groups.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(g as f64, 0.0));
            root.draw(&Text::new(name.join(" / "), (x, y + 28), style.clone()))?;
        }
    }
    if !matches!(panel.ci, Interval::None) {
        for b in bars {
            super::error_bar(&mut chart, layout.middle(b), b.lo, b.hi, BLACK)?;
        }
    }
    // The closed form: a hollow diamond on the bar, unlike the interval's caps.
    for b in bars {
        if let Some(y) = b.theory {
            theory_mark(root, chart.backend_coord(&(layout.middle(b), y)))?;
        }
    }
    if !layout.swept {
        value_labels(root, &chart, layout, panel, bars)?;
    }
    Ok(())
}

/// Without a sweep each value is written above its bar, with as few decimals as the values
/// allow, unless a label would be wider than its bar's slot.
fn value_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &ChartContext<DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    layout: &Layout,
    panel: &Panel,
    bars: &[Bar],
) -> Result<(), ChartError> {
    let decimals = fewest_decimals(bars.iter().map(|b| b.value), panel.decimals);
    let slot_pixels =
        chart.plotting_area().dim_in_pixel().0 as usize / (layout.groups.len() * layout.per_group);
    let written = |v: f64| match v {
        // A bar of nothing has no height to see: its label says so.
        0.0 => "0".to_string(),
        v => format!("{v:.decimals$}"),
    };
    // The note's size where a label fits its slot, a smaller one where only that fits (about
    // 0.6 and 0.45 of the size per character), none where neither does.
    let size_for = |text: &str| {
        let chars = text.chars().count();
        [style::NOTE, style::NOTE - 5]
            .into_iter()
            .find(|&size| chars * (size as usize * 3 / 5) < slot_pixels)
    };
    for b in bars {
        let text = written(b.value);
        let Some(size) = size_for(&text) else {
            continue;
        };
        let style = (FONT, size)
            .into_font()
            .into_text_style(root)
            .pos(Pos::new(HPos::Center, VPos::Bottom));
        // Above the bar, its interval and its theory's diamond, whichever is highest.
        let above = b.hi.max(b.theory.unwrap_or(0.0));
        let (x, y) = chart.backend_coord(&(layout.middle(b), above));
        let clear = if b.theory.is_some() { 12 } else { 4 };
        root.draw(&Text::new(text, (x, y - clear), style))?;
    }
    Ok(())
}

/// Half the height of a closed form's diamond, stroke included.
const DIAMOND: i32 = 10;
/// How far under the axis an upright name starts: clear of a diamond drawn at 0.
const NAME_GAP: i32 = DIAMOND + 4;

/// A closed form's mark at `at`: a hollow diamond.
fn theory_mark<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    at: (i32, i32),
) -> Result<(), ChartError> {
    let r = DIAMOND - 1;
    let corners = [(0, -r), (r, 0), (0, r), (-r, 0), (0, -r)];
    let mark = EmptyElement::at(at)
        + Polygon::new(corners.to_vec(), WHITE.filled())
        + PathElement::new(corners.to_vec(), BLACK.stroke_width(2));
    root.draw(&mark).map_err(ChartError::from)
}

/// A bar's interval as (low, high), unscaled: none is the value itself.
fn interval(data: &Data, row: &Row, ci: Interval, v: f64) -> (f64, f64) {
    match ci {
        Interval::None => (v, v),
        Interval::HalfWidth(column) => {
            let c = data.number(row, column).unwrap_or(0.0);
            (v - c, v + c)
        }
        Interval::Binomial { successes, trials } => {
            match (data.number(row, successes), data.number(row, trials)) {
                (Some(k), Some(n)) => wilson(k, n),
                _ => (v, v),
            }
        }
    }
}

/// The fewest decimals, at most `most`, that write every value as it reads at `most`: three
/// bars of 1.000 are labelled 1, and 0.978 keeps its three.
fn fewest_decimals(values: impl Iterator<Item = f64> + Clone, most: usize) -> usize {
    (0..most)
        .find(|&d| {
            values.clone().all(|v| {
                let full: f64 = format!("{v:.most$}").parse().unwrap_or(v);
                let short: f64 = format!("{v:.d$}").parse().unwrap_or(v);
                full == short
            })
        })
        .unwrap_or(most)
}
