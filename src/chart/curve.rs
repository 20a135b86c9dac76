//! Curves: a measure per intent against the first swept key, one series per configuration (and
//! per value of any further axis), measured points with their 95 % intervals over the theory.

use super::ChartError;
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::data::{Data, Row};
use super::style;
use super::{frame, legend};
use crate::policy::{Attempts, KeyScope};
use crate::theory::{ClosedForms, closed_forms};

/// Which measure a curve shows.
#[derive(Clone, Copy, Debug)]
pub enum Measure {
    Duplicates,
    Attempts,
    Success,
    /// Conditional writes per client on a contended record; no closed form.
    Work,
    /// The time of the last success; no closed form.
    Makespan,
}

impl Measure {
    fn columns(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Measure::Duplicates => (
                "duplicates_per_intent",
                "duplicates_ci95",
                "theory_duplicates_per_intent",
            ),
            Measure::Attempts => (
                "attempts_per_intent",
                "attempts_ci95",
                "theory_attempts_per_intent",
            ),
            Measure::Success => ("success_rate", "success_ci95", "theory_success_rate"),
            // No closed form: a theory column no file has.
            Measure::Work => ("work_per_client", "work_ci95", ""),
            Measure::Makespan => ("makespan_s", "makespan_ci95", ""),
        }
    }

    /// The `summary.csv` columns its curve reads: the figure, its interval and its closed
    /// form, and what the closed form's note is worked out from.
    pub(super) fn reads(self) -> Vec<&'static str> {
        let (mean, ci, theory) = self.columns();
        [
            mean,
            ci,
            theory,
            "max_attempts",
            "idempotency_key",
            "theory_a",
            "theory_b",
        ]
        .into_iter()
        .filter(|c| !c.is_empty())
        .collect()
    }

    fn of(self, t: &ClosedForms) -> f64 {
        match self {
            Measure::Duplicates => t.duplicates,
            Measure::Attempts => t.attempts,
            Measure::Success => t.success,
            Measure::Work | Measure::Makespan => f64::NAN,
        }
    }

    fn title(self) -> &'static str {
        match self {
            Measure::Duplicates => "Duplicate side effects per intent",
            Measure::Attempts => "Attempts per intent",
            Measure::Success => "Success rate",
            Measure::Work => "Work per client",
            Measure::Makespan => "Time to the last success",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            Measure::Duplicates => "duplicates per intent (effects beyond the first)",
            Measure::Attempts => "attempts per intent (first try included)",
            Measure::Success => "share of intents that succeeded",
            Measure::Work => "writes that reached the record, per client",
            Measure::Makespan => "time of the last success (s)",
        }
    }

    /// The closed form a series follows, in words for its legend.
    pub(super) fn formula(self, t: &Theory) -> String {
        if t.bursts {
            return match (self, t.attempts) {
                (Measure::Work | Measure::Makespan, _) => String::new(),
                (_, Attempts::Unlimited) => "by the burst chain".into(),
                (_, Attempts::AtMost(n)) => format!("by the burst chain, N = {n}"),
            };
        }
        match (self, t.attempts, t.key) {
            (Measure::Duplicates, _, KeyScope::PerIntent) => "0 with a per-intent key".into(),
            (Measure::Duplicates, Attempts::Unlimited, _) => "b/(1−a−b)".into(),
            (Measure::Duplicates, Attempts::AtMost(n), _) => {
                format!("(1−a)(1−qᴺ)/(1−q) − (1−aᴺ), N = {n}")
            }
            (Measure::Attempts, Attempts::Unlimited, _) => "1/(1−a−b)".into(),
            (Measure::Attempts, Attempts::AtMost(n), _) => format!("(1−qᴺ)/(1−q), N = {n}"),
            (Measure::Success, Attempts::Unlimited, _) => "1".into(),
            (Measure::Success, Attempts::AtMost(n), _) => format!("1 − qᴺ, N = {n}"),
            (Measure::Work | Measure::Makespan, _, _) => String::new(),
        }
    }
}

/// One measured point of a series.
pub(super) struct Mark {
    x: f64,
    mean: f64,
    ci: f64,
    pub(super) theory: Option<Theory>,
}

/// The closed form at a point, with what it was computed from, so the line between two points
/// can be drawn exactly rather than as a chord.
#[derive(Clone, Copy)]
pub(super) struct Theory {
    value: f64,
    a: f64,
    b: f64,
    pub(super) attempts: Attempts,
    pub(super) key: KeyScope,
    /// The forms are the burst chain's ([`crate::theory::burst`]), which a and b alone do not
    /// give: the line is drawn through the points only.
    pub(super) bursts: bool,
}

pub(super) struct Series {
    pub(super) label: String,
    pub(super) marks: Vec<Mark>,
}

/// The plot's ranges: the x axis padded, and the y axis linear or, for times and work spread
/// over more than a decade, logarithmic from the power of ten under the smallest mean.
struct Scale {
    x: (f64, f64),
    y: (f64, f64),
    /// The power of ten a log scale starts at; `None` on a linear one.
    floor: Option<f64>,
}

impl Scale {
    fn of(series: &[Series], measure: Measure, numeric: bool) -> Scale {
        let marks = || series.iter().flat_map(|s| &s.marks);
        let xs: Vec<f64> = marks().map(|m| m.x).collect();
        let (x_lo, x_hi) = bounds(&xs);
        let pad = if numeric {
            ((x_hi - x_lo) * 0.04).max(1e-9)
        } else {
            0.5
        };
        // Times and work spanning more than a decade between configurations go on a log
        // scale, so the slow formula does not squeeze the others into the bottom of the chart.
        let smallest = (marks().map(|m| m.mean))
            .filter(|&y| y > 0.0)
            .fold(f64::INFINITY, f64::min);
        let log = matches!(measure, Measure::Work | Measure::Makespan)
            && smallest.is_finite()
            && marks().map(|m| m.mean).fold(0.0, f64::max) > 10.0 * smallest;
        let floor = log.then(|| 10f64.powf(smallest.log10().floor()));
        let scale = Scale {
            x: (x_lo - pad, x_hi + pad),
            y: (0.0, 0.0),
            floor,
        };
        let top = (marks())
            .map(|m| (m.mean + m.ci).max(m.theory.map_or(0.0, |t| t.value)))
            .fold(0.0, f64::max);
        let y_hi = match measure {
            _ if log => scale.at(top) + 0.1,
            Measure::Duplicates | Measure::Work | Measure::Makespan if top > 0.0 => top * 1.12,
            Measure::Duplicates | Measure::Work | Measure::Makespan => 1.0,
            Measure::Attempts => 1.0 + (top - 1.0).max(0.1) * 1.12,
            Measure::Success => 1.05,
        };
        // Attempts never go below 1: their axis starts just under it, so the curve fills the
        // chart.
        let y_lo = match (measure, floor) {
            (_, Some(floor)) => floor.log10(),
            (Measure::Duplicates | Measure::Success | Measure::Work | Measure::Makespan, _) => 0.0,
            (Measure::Attempts, _) => 1.0 - 0.04 * (y_hi - 1.0),
        };
        Scale {
            y: (y_lo, y_hi),
            ..scale
        }
    }

    /// Where a value is drawn: itself, or its logarithm on the log scale (the floor for 0).
    fn at(&self, y: f64) -> f64 {
        match self.floor {
            Some(floor) => y.max(floor).log10(),
            None => y,
        }
    }
}

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
    measure: Measure,
) -> Result<(), ChartError> {
    let axis = &data.axes[0];
    let numeric: Option<Vec<f64>> = axis.values.iter().map(|v| v.parse().ok()).collect();
    // Where the axis's `i`-th value stands: the value itself, or its place among categories.
    let position = |i: usize| -> f64 { numeric.as_ref().map_or(i as f64, |xs| xs[i]) };
    let series = collect(data, measure, &position);
    let categorical = numeric.is_none();
    let scale = Scale::of(&series, measure, !categorical);

    let body = super::heading(
        root,
        &format!("{} — {}", measure.title(), data.name),
        &data.description,
    )?;
    // The legend takes a column of its own, so it never covers a curve.
    let (plot, column) = body.split_horizontally(style::SIZE.0 - 400);
    let mut chart = ChartBuilder::on(&plot)
        .margin_left(20)
        .margin_right(40)
        .margin_bottom(10)
        .x_label_area_size(70)
        .y_label_area_size(100)
        .build_cartesian_2d(scale.x.0..scale.x.1, scale.y.0..scale.y.1)?;
    let log = scale.floor.is_some();
    let x_label = |x: &f64| match categorical {
        true => frame::category(&axis.values, *x),
        false => super::tick(*x),
    };
    let y_label = |y: &f64| match log {
        true => super::tick(significant(10f64.powf(*y))),
        false => super::tick(*y),
    };
    // Where tools call tools, attempts and duplicates per intent are the task's own call's.
    let own = match measure {
        Measure::Attempts | Measure::Duplicates if data.services => {
            ", the task's own call (top hop)"
        }
        _ => "",
    };
    let log_note = if log { " (log scale)" } else { "" };
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(style::axis_title(&axis.path))
        .y_desc(format!("{}{own}{log_note}", measure.axis()))
        .x_labels(if categorical {
            axis.values.len() * 2 + 1
        } else {
            11
        })
        .x_label_formatter(&x_label)
        .y_label_formatter(&y_label);
    frame::styled(&mut mesh, style::TICK, style::LABEL).draw()?;
    // Series that coincide must all stay visible: on a categorical axis each series stands a
    // little to the side of its category.
    let n = series.len();
    let dodge = |i: usize| {
        if categorical && n > 1 {
            (i as f64 - (n - 1) as f64 / 2.0) * (0.5 / n as f64)
        } else {
            0.0
        }
    };
    for (i, s) in series.iter().enumerate() {
        if s.marks.len() > DENSE {
            draw_band(&mut chart, s, &scale, style::color(i))?;
        }
    }
    let lines = if categorical {
        draw_theory_dashes(&mut chart, &series, &dodge)?;
        Vec::new()
    } else {
        let lines = theory_lines(&series, measure);
        draw_theory_lines(&mut chart, &lines)?;
        lines
    };
    draw_marks(&mut chart, &series, &scale, &dodge)?;
    legend::side_legend(&column, &series, measure, &lines)
}

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A closed form's curve, drawn once however many series share it (three client counts under
/// one policy share theirs): one line each keeps the band of coinciding lines legible.
pub(super) struct TheoryLine {
    path: Vec<(f64, f64)>,
    /// What the legend says of it: the form, and the first series it serves where two
    /// distinct curves share the form's words.
    pub(super) label: String,
}

/// The distinct theory curves of `series`, in the order of the first series each serves.
fn theory_lines(series: &[Series], measure: Measure) -> Vec<TheoryLine> {
    let mut lines: Vec<TheoryLine> = Vec::new();
    for s in series {
        let Some(t) = s.marks.iter().find_map(|m| m.theory) else {
            continue;
        };
        let path = theory_path(&s.marks, measure);
        if path.is_empty() || lines.iter().any(|l| l.path == path) {
            continue;
        }
        let mut label = format!("theory {}", measure.formula(&t));
        if lines.iter().any(|l| l.label == label) {
            label = format!("{label} ({})", s.label);
        }
        lines.push(TheoryLine { path, label });
    }
    lines
}

/// Theory's colour: a dark grey apart from every series' colour, so a line reads as theory
/// and a mark as a measurement.
pub(super) const THEORY: RGBColor = RGBColor(60, 60, 60);

/// The `k`-th distinct theory curve's dashes, as (dash, gap) in pixels: solid, dashed,
/// dotted, long-dashed, by turns.
pub(super) fn theory_dashes(k: usize) -> Option<(u32, u32)> {
    [None, Some((14, 8)), Some((3, 6)), Some((28, 8))][k % 4]
}

/// The closed forms, every line before any mark so that no line covers one.
fn draw_theory_lines<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    lines: &[TheoryLine],
) -> Result<(), ChartError> {
    let style = ShapeStyle::from(THEORY.mix(0.85)).stroke_width(3);
    for (k, line) in lines.iter().enumerate() {
        let points = line.path.iter().copied();
        let drawn = match theory_dashes(k) {
            None => chart.draw_series(LineSeries::new(points, style)),
            Some((dash, gap)) => chart.draw_series(DashedLineSeries::new(points, dash, gap, style)),
        };
        drawn?;
    }
    Ok(())
}

/// On a categorical axis there is nothing to join: each series' theory is a dash at each
/// category, beside its own marks, in its colour.
fn draw_theory_dashes<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    series: &[Series],
    dodge: &dyn Fn(usize) -> f64,
) -> Result<(), ChartError> {
    let n = series.len();
    let half = 0.4 / n as f64;
    for (i, s) in series.iter().enumerate() {
        let line = ShapeStyle::from(style::color(i).mix(0.55)).stroke_width(5);
        let shift = dodge(i);
        chart.draw_series(s.marks.iter().filter_map(|m| {
            let t = m.theory?.value;
            let x = m.x + shift;
            Some(PathElement::new(vec![(x - half, t), (x + half, t)], line))
        }))?;
    }
    Ok(())
}

/// The measured points with their intervals, each series with a marker of its own shape.
fn draw_marks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    series: &[Series],
    scale: &Scale,
    dodge: &dyn Fn(usize) -> f64,
) -> Result<(), ChartError> {
    for (i, s) in series.iter().enumerate() {
        let color = style::color(i);
        let shift = dodge(i);
        let size = (9 - 2 * i as i32).max(4);
        let marked: Vec<&Mark> = if s.marks.len() > DENSE {
            // Too many points for a bar each: the intervals are a band beneath the theory
            // (drawn first), and every so often a point is marked at its measured figure. A
            // line through every point would be a scribble over the band at this density.
            let every = s.marks.len().div_ceil(DENSE_MARKERS);
            s.marks.iter().step_by(every).collect()
        } else {
            for m in &s.marks {
                let (lo, hi) = (scale.at(m.mean - m.ci), scale.at(m.mean + m.ci));
                super::error_bar(chart, m.x + shift, lo, hi, color)?;
            }
            s.marks.iter().collect()
        };
        let (fill, line) = paint(i, color);
        let edge = |corners: Vec<(i32, i32)>| {
            let mut closed = corners.clone();
            closed.extend(corners.first().copied());
            PathElement::new(closed, line)
        };
        chart.draw_series(marked.into_iter().map(|m| {
            EmptyElement::at((m.x + shift, scale.at(m.mean)))
                + Polygon::new(marker(i, size), fill)
                + edge(marker(i, size))
        }))?;
    }
    Ok(())
}

/// More points than this in a series are drawn as a band and a line, not a bar each.
pub(super) const DENSE: usize = 150;
/// The markers on a dense series.
const DENSE_MARKERS: usize = 30;

/// A dense series' 95 % intervals as a pale band, beneath every line.
fn draw_band<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    s: &Series,
    scale: &Scale,
    color: RGBColor,
) -> Result<(), ChartError> {
    let lower = (s.marks.iter()).map(|m| (m.x, scale.at(m.mean - m.ci)));
    let upper = (s.marks.iter().rev()).map(|m| (m.x, scale.at(m.mean + m.ci)));
    let band: Vec<(f64, f64)> = lower.chain(upper).collect();
    chart.draw_series(std::iter::once(Polygon::new(
        band,
        color.mix(0.15).filled(),
    )))?;
    Ok(())
}

/// `y` to two significant digits, for a log scale's tick labels: 3.162… reads 3.2.
fn significant(y: f64) -> f64 {
    if y <= 0.0 {
        return y;
    }
    let unit = 10f64.powf(y.log10().floor() - 1.0);
    (y / unit).round() * unit
}

/// How series `i`'s mark is filled and edged: the first eight filled in its colour with a white
/// edge (which keeps a mark apart from the line or the mark beneath it), the next eight hollow,
/// white edged in its colour. With the eight shapes that makes sixteen marks, each drawn once,
/// so sixteen series need no colour to be told apart.
pub(super) fn paint(i: usize, color: RGBColor) -> (ShapeStyle, ShapeStyle) {
    match i % 16 < 8 {
        true => (color.filled(), WHITE.stroke_width(2)),
        false => (WHITE.filled(), color.stroke_width(3)),
    }
}

/// Series `i`'s marker shape, as corners around its centre in pixels: a circle, square,
/// triangle or diamond, by turns, so series stay apart in greyscale and where they coincide.
pub(super) fn marker(i: usize, size: i32) -> Vec<(i32, i32)> {
    let around = |corners: usize, radius: f64, turn: f64| -> Vec<(i32, i32)> {
        (0..corners)
            .map(|k| {
                let angle = turn + k as f64 * std::f64::consts::TAU / corners as f64;
                let (sin, cos) = angle.sin_cos();
                ((radius * cos).round() as i32, (radius * sin).round() as i32)
            })
            .collect()
    };
    let r = f64::from(size);
    // Points alternating between an outer and an inner ring.
    let star = |points: usize, turn: f64| -> Vec<(i32, i32)> {
        let outer = around(points, r * 1.5, turn);
        let inner = around(points, r * 0.6, turn + std::f64::consts::PI / points as f64);
        outer
            .into_iter()
            .zip(inner)
            .flat_map(|(o, i)| [o, i])
            .collect()
    };
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4};
    // Eight shapes, so that eight series need no colour to be told apart.
    match i % 8 {
        0 => around(16, r, 0.0),
        1 => around(4, r * 1.1, FRAC_PI_4),
        2 => around(3, r * 1.4, -FRAC_PI_2),
        3 => around(4, r * 1.4, 0.0),
        4 => around(3, r * 1.4, FRAC_PI_2),
        5 => star(5, -FRAC_PI_2),
        6 => around(6, r * 1.2, 0.0),
        _ => star(4, 0.0),
    }
}

fn bounds(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().cloned().fold(f64::MAX, f64::min);
    let hi = xs.iter().cloned().fold(f64::MIN, f64::max);
    if lo > hi { (0.0, 1.0) } else { (lo, hi) }
}

/// The series of the chart: each configuration, crossed with the values of axes after the
/// first, in the order the CSV lists them — unless the axes are zipped, when the others move
/// with the first and every configuration is one series.
fn collect(data: &Data, measure: Measure, position: &dyn Fn(usize) -> f64) -> Vec<Series> {
    let (mean, ci, theory) = measure.columns();
    let mut series: Vec<(String, Vec<String>, Series)> = Vec::new();
    // A series has a mark per value of the first axis: sized once, a sweep of many points
    // holds its marks once, not twice while they double.
    let per_series = data.axes.first().map_or(1, |a| a.values.len());
    for policy in &data.policies {
        for row in data.rows_of(policy) {
            let rest = if data.zipped {
                Vec::new()
            } else {
                data.params(row).skip(1).map(String::from).collect()
            };
            let slot = match series
                .iter()
                .position(|(p, r, _)| p == policy && *r == rest)
            {
                Some(i) => i,
                None => {
                    let mut label = policy.clone();
                    for (axis, value) in data.axes[1..].iter().zip(&rest) {
                        let leaf = axis.path.rsplit('.').next().unwrap_or(&axis.path);
                        label.push_str(&format!(", {leaf} = {value}"));
                    }
                    series.push((
                        policy.clone(),
                        rest,
                        Series {
                            label,
                            marks: Vec::with_capacity(per_series),
                        },
                    ));
                    series.len() - 1
                }
            };
            let Some(m) = data.number(row, mean) else {
                continue;
            };
            // No interval (a single sample) draws no error bar.
            let c = data.number(row, ci).unwrap_or(0.0);
            series[slot].2.marks.push(Mark {
                x: position(data.value(row, 0)),
                mean: m,
                ci: c,
                theory: theory_at(data, row, theory),
            });
        }
    }
    series.into_iter().map(|(_, _, s)| s).collect()
}

fn theory_at(data: &Data, row: &Row, column: &str) -> Option<Theory> {
    let attempts = match data.text(row, "max_attempts")? {
        "" => Attempts::Unlimited,
        n => Attempts::AtMost(n.parse().ok()?),
    };
    let key_name = data.text(row, "idempotency_key")?;
    let key = KeyScope::ALL.into_iter().find(|k| k.name() == key_name)?;
    Some(Theory {
        value: data.number(row, column)?,
        a: data.number(row, "theory_a")?,
        b: data.number(row, "theory_b")?,
        attempts,
        key,
        bursts: data.bursts,
    })
}

/// The theory line through a series: between two neighbouring points with the same attempts
/// and key, a and b move linearly with x, so the closed form is evaluated along the way and the
/// line is the true curve; anywhere else it is a straight segment.
fn theory_path(marks: &[Mark], measure: Measure) -> Vec<(f64, f64)> {
    let points: Vec<(f64, Theory)> = marks
        .iter()
        .filter_map(|m| m.theory.map(|t| (m.x, t)))
        .collect();
    // Where points are dense, the points alone trace the curve.
    let steps = if points.len() > DENSE { 1 } else { 24 };
    // Sized once: a sweep of ten thousand points draws a path of as many, held once.
    let mut path = Vec::with_capacity(points.len().saturating_sub(1) * steps + 1);
    for pair in points.windows(2) {
        let ((x0, t0), (x1, t1)) = (pair[0], pair[1]);
        path.push((x0, t0.value));
        if t0.attempts == t1.attempts && t0.key == t1.key && !t0.bursts {
            for step in 1..steps {
                let f = step as f64 / steps as f64;
                let (a, b) = (t0.a + f * (t1.a - t0.a), t0.b + f * (t1.b - t0.b));
                let value = measure.of(&closed_forms(a, b, t0.attempts, t0.key));
                path.push((x0 + f * (x1 - x0), value));
            }
        }
    }
    if let Some(&(x, t)) = points.last() {
        path.push((x, t.value));
    }
    path
}
