//! Swimlanes: stories drawn on one time axis in ticks, a block of lanes per story (one lane per
//! retry layer, or per tool for a task), each attempt a bar from dispatch to end coloured by its
//! outcome, commits marked, backoffs left as gaps, and the deadline, cancellation and breaker
//! refusals as marks. Laid out in pixels, so every label's box is known and none is drawn over
//! another.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, FONT};
use crate::story::{Bar, BarKind, Lane, Moment, MomentKind, Story, span_words, time_words};
use crate::time::Tick;

/// Pixels per lane, and between two stories.
const LANE: i32 = 30;
const GAP: i32 = 26;
/// Room for the heading, the legend, and the axis.
const TOP: i32 = 96 + 64;
const BOTTOM: i32 = 80;

/// One story as the chart draws it.
pub struct Block {
    pub title: String,
    /// Dispatches, span and ending, under the title.
    pub summary: String,
    pub lanes: Vec<Lane>,
    pub moments: Vec<Moment>,
}

impl Block {
    /// The story's block, its times counted from the story's start.
    pub fn of(story: &Story, title: String) -> Block {
        let (start, end) = story.span();
        let mut lanes = story.lanes();
        for bar in lanes.iter_mut().flat_map(|l| &mut l.bars) {
            (bar.from, bar.to) = (bar.from.since(start), bar.to.since(start));
        }
        let mut moments = story.moments();
        for m in &mut moments {
            m.at = m.at.since(start);
        }
        Block {
            title,
            summary: format!(
                "{} dispatch{} · {} · {}{}",
                story.dispatches(),
                if story.dispatches() == 1 { "" } else { "es" },
                span_words(end.since(start)),
                story.ending(),
                // A call that succeeded twice over says so: the colours show only attempts.
                match story.duplicates() {
                    0 => String::new(),
                    1 => " · 1 duplicate effect".into(),
                    n => format!(" · {n} duplicate effects"),
                }
            ),
            lanes,
            moments,
        }
    }

    /// Its height in pixels: its lanes, and at least room for its two lines of labels.
    fn height(&self) -> i32 {
        (self.lanes.len() as i32 * LANE).max(2 * LANE)
    }
}

/// The canvas the blocks need: the usual width, and as tall as their lanes ask, no taller.
pub fn size(blocks: &[Block]) -> (u32, u32) {
    let lanes: i32 = blocks.iter().map(|b| b.height() + GAP).sum();
    (style::SIZE.0, (TOP + lanes + BOTTOM) as u32)
}

/// Outcome colours: each outcome one colour of the palette, always the same one; an attempt
/// wide enough also names its outcome, so the colour is never the only key.
fn outcome_colour(outcome: &str) -> RGBColor {
    match outcome {
        "ok" => style::PALETTE[3],
        "5xx" => style::PALETTE[6],
        "429" => style::PALETTE[1],
        "403" | "4xx" | "conflict" => style::PALETTE[7],
        "503" => style::PALETTE[2],
        "lost_request" => style::PALETTE[4],
        "lost_reply" => style::PALETTE[0],
        "timeout" => style::PALETTE[8],
        "cancelled" => BLACK,
        _ => style::PALETTE[10],
    }
}

/// The boxes of labels drawn so far, so a label that would cover another is left out.
struct Placed(Vec<(i32, i32, i32, i32)>);

impl Placed {
    fn free(&self, r: (i32, i32, i32, i32)) -> bool {
        self.0
            .iter()
            .all(|p| r.2 <= p.0 || p.2 <= r.0 || r.3 <= p.1 || p.3 <= r.1)
    }
}

/// Draws `text` with its left edge at `x`, centred on `y`, unless it would cover a label drawn
/// before; returns whether it was drawn.
fn label<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    placed: &mut Placed,
    text: &str,
    (x, y): (i32, i32),
    font: TextStyle,
) -> Result<bool, ChartError> {
    let (w, h) = area.estimate_text_size(text, &font)?;
    let (w, h) = (w as i32, h as i32);
    let rect = (x, y - h / 2, x + w, y + h / 2);
    if !placed.free(rect) {
        return Ok(false);
    }
    placed.0.push(rect);
    let font = font.pos(Pos::new(HPos::Left, VPos::Center));
    area.draw(&Text::new(text, (x, y), font))?;
    Ok(true)
}

/// Black text of `size` points, bold or not.
fn ink(size: u32, bold: bool) -> TextStyle<'static> {
    if bold {
        (FONT, size, FontStyle::Bold).into_font().color(&BLACK)
    } else {
        (FONT, size).into_font().color(&BLACK)
    }
}

/// The pixel column of tick `t` on a plot from column `plot.0` to `plot.1` showing `span`.
fn column(plot: (i32, i32), (t0, t1): (Tick, Tick), t: Tick) -> i32 {
    let share = t.since(t0).0 as f64 / t1.since(t0).0.max(1) as f64;
    plot.0 + (share * (plot.1 - plot.0) as f64).round() as i32
}

/// Where the lanes are drawn: the body under the heading, the labels placed so far (so none
/// overlaps another), the plot's pixel columns and the time span they show.
struct Canvas<'a, DB: DrawingBackend> {
    body: &'a DrawingArea<DB, Shift>,
    placed: Placed,
    plot: (i32, i32),
    span: (Tick, Tick),
    width: i32,
}

impl<DB: DrawingBackend> Canvas<'_, DB> {
    fn x_of(&self, t: Tick) -> i32 {
        column(self.plot, self.span, t)
    }

    fn label(&mut self, text: &str, at: (i32, i32), font: TextStyle) -> Result<bool, ChartError> {
        label(self.body, &mut self.placed, text, at, font)
    }

    fn text_width(&self, text: &str, font: &TextStyle) -> Result<i32, ChartError> {
        let (w, _) = (self.body).estimate_text_size(text, font)?;
        Ok(w as i32)
    }

    /// A block's lanes, from pixel row `top`.
    fn lanes(&mut self, block: &Block, top: i32) -> Result<(), ChartError> {
        let lane_top = |k: usize| top + k as i32 * LANE;
        for (k, lane) in block.lanes.iter().enumerate() {
            let mid = lane_top(k) + LANE / 2;
            if block.lanes.len() > 1 || !lane.name.is_empty() {
                let w = self.text_width(&lane.name, &ink(15, false))?;
                let grey = BLACK.mix(0.7);
                self.label(
                    &lane.name,
                    (self.plot.0 - 8 - w, mid),
                    ink(15, false).color(&grey),
                )?;
            }
            let rule = PathElement::new(
                vec![(self.plot.0, mid), (self.plot.1, mid)],
                BLACK.mix(0.12),
            );
            self.body.draw(&rule)?;
            for bar in &lane.bars {
                self.bar(bar, (lane_top(k) + 5, lane_top(k) + LANE - 5))?;
            }
        }
        Ok(())
    }

    /// A bar between pixel rows `y0` and `y1`: its fill by kind, a diamond where an attempt
    /// committed, and its number and outcome inside where they fit.
    fn bar(&mut self, bar: &Bar, (y0, y1): (i32, i32)) -> Result<(), ChartError> {
        let body = self.body;
        let mid = (y0 + y1) / 2;
        let (x0, x1) = (
            self.x_of(bar.from),
            self.x_of(bar.to).max(self.x_of(bar.from) + 2),
        );
        let (fill, outline) = match &bar.kind {
            BarKind::Attempt { outcome, .. } => (outcome_colour(outcome), BLACK.mix(0.6)),
            BarKind::Span => (RGBColor(235, 235, 235), BLACK.mix(0.6)),
            BarKind::Lookup { .. } => (style::PALETTE[5], BLACK.mix(0.6)),
        };
        body.draw(&Rectangle::new([(x0, y0), (x1, y1)], fill.filled()))
            .and_then(|_| body.draw(&Rectangle::new([(x0, y0), (x1, y1)], outline)))?;
        if let BarKind::Attempt {
            committed: true,
            outcome,
        } = &bar.kind
        {
            // A commit: a black diamond on the bar's end, within which it happened; hollow
            // where the client stopped waiting first, as the commit may come after the bar.
            let corners = vec![(x1, y0 - 4), (x1 + 6, mid), (x1, y1 + 4), (x1 - 6, mid)];
            let mark = if gave_up(outcome) {
                let edge: Vec<(i32, i32)> =
                    corners.iter().chain(corners.first()).copied().collect();
                EmptyElement::at((0, 0))
                    + Polygon::new(corners, WHITE.filled())
                    + PathElement::new(edge, BLACK.stroke_width(2))
            } else {
                EmptyElement::at((0, 0))
                    + Polygon::new(corners.clone(), BLACK.filled())
                    + PathElement::new(corners, BLACK.stroke_width(1))
            };
            body.draw(&mark)?;
        }
        let ink_colour = if matches!(bar.kind, BarKind::Span | BarKind::Lookup { .. }) {
            BLACK
        } else {
            WHITE
        };
        let inside = ink(14, false).color(&ink_colour);
        // The attempt's number and outcome where both fit, its number where only it does.
        // A lookup says what it found, so a failed one reads apart from one that found nothing.
        let (named, short) = match &bar.kind {
            BarKind::Attempt { outcome, .. } if !bar.label.is_empty() => (
                format!("{} {}", bar.label, outcome.replace('_', " ")),
                bar.label.clone(),
            ),
            BarKind::Lookup { answer } => {
                let answer = answer.replace('_', " ");
                (format!("lookup: {answer}"), answer)
            }
            _ => (bar.label.clone(), bar.label.clone()),
        };
        for text in [named, short] {
            let w = self.text_width(&text, &inside)?;
            if !text.is_empty() && w + 6 <= x1 - x0 {
                self.label(&text, ((x0 + x1 - w) / 2, mid), inside.clone())?;
                break;
            }
        }
        Ok(())
    }

    /// A block's moments, as lines from `top` to `bottom` named under the block.
    fn moments(&mut self, block: &Block, (top, bottom): (i32, i32)) -> Result<(), ChartError> {
        for m in &block.moments {
            let x = self.x_of(m.at.min(self.span.1));
            let (colour, name) = match m.what {
                // Dark grey: no outcome's colour, so a deadline never reads as a failure.
                MomentKind::Deadline => (RGBColor(80, 80, 80), "deadline"),
                MomentKind::Cancelled => (BLACK, "cancelled"),
                MomentKind::BreakerRefused => (style::PALETTE[7], "breaker refused"),
            };
            let line = ShapeStyle::from(colour).stroke_width(3);
            (self.body).draw(&PathElement::new(vec![(x, top - 4), (x, bottom)], line))?;
            let text = format!("{name} at {}", time_words(m.at));
            let style = ink(14, false).color(&colour);
            let w = self.text_width(&text, &style)?;
            // Right of the mark, or left of it where the right edge is too near.
            let at = if x + 5 + w > self.width - 4 {
                x - 5 - w
            } else {
                x + 5
            };
            self.label(&text, (at, bottom + 8), style)?;
        }
        Ok(())
    }
}

/// Draws `blocks` under a heading.
pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    description: &str,
    blocks: &[Block],
) -> Result<(), ChartError> {
    let body = super::heading(root, title, description)?;
    let (width, _) = root.dim_in_pixel();
    let width = width as i32;
    let widest = |texts: &mut dyn Iterator<Item = (&str, TextStyle)>| -> Result<i32, ChartError> {
        let mut most = 0;
        for (text, style) in texts {
            let (w, _) = body.estimate_text_size(text, &style)?;
            most = most.max(w as i32);
        }
        Ok(most)
    };
    // Two columns of labels: each story's title and summary, then its lanes' names.
    let titles = widest(&mut blocks.iter().flat_map(|b| {
        [
            (b.title.as_str(), ink(style::NOTE, true)),
            (b.summary.as_str(), ink(16, false)),
        ]
    }))?;
    let names = widest(
        &mut (blocks.iter())
            .flat_map(|b| &b.lanes)
            .map(|l| (l.name.as_str(), ink(15, false))),
    )?;
    let mut canvas = Canvas {
        body: &body,
        placed: Placed(Vec::new()),
        plot: ((16 + titles + 24 + names + 10).min(width / 2), width - 40),
        span: (Tick::ZERO, end_of(blocks)),
        width,
    };
    legend(&body, &mut canvas.placed, blocks, width)?;
    let mut y = 64;
    for block in blocks {
        let top = y;
        canvas.label(&block.title, (16, top + 12), ink(style::NOTE, true))?;
        canvas.label(&block.summary, (16, top + 36), ink(16, false))?;
        canvas.lanes(block, top)?;
        let bottom = top + block.height();
        canvas.moments(block, (top, bottom))?;
        y = bottom + GAP;
    }
    let Canvas {
        mut placed,
        plot,
        span,
        ..
    } = canvas;
    axis(&body, &mut placed, span, plot, y, |t| column(plot, span, t))
}

/// The latest tick any block reaches.
fn end_of(blocks: &[Block]) -> Tick {
    let bars = blocks
        .iter()
        .flat_map(|b| &b.lanes)
        .flat_map(|l| &l.bars)
        .map(|b| b.to);
    let moments = blocks.iter().flat_map(|b| &b.moments).map(|m| m.at);
    bars.chain(moments).max().unwrap_or(Tick(1)).max(Tick(1))
}

/// The outcomes the blocks show, as coloured keys along the top.
fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    placed: &mut Placed,
    blocks: &[Block],
    width: i32,
) -> Result<(), ChartError> {
    let mut keys: Vec<(String, RGBColor)> = Vec::new();
    let mut add = |name: &str, colour: RGBColor| {
        if !keys.iter().any(|(n, _)| n == name) {
            keys.push((name.to_string(), colour));
        }
    };
    let (mut committed, mut committed_late) = (false, false);
    for bar in blocks.iter().flat_map(|b| &b.lanes).flat_map(|l| &l.bars) {
        match &bar.kind {
            BarKind::Attempt {
                outcome,
                committed: c,
            } => {
                add(&outcome.replace('_', " "), outcome_colour(outcome));
                committed |= *c && !gave_up(outcome);
                committed_late |= *c && gave_up(outcome);
            }
            BarKind::Span => add("outer layer's attempt", RGBColor(235, 235, 235)),
            BarKind::Lookup { .. } => add("lookup", style::PALETTE[5]),
        }
    }
    let font = (FONT, 16).into_font().color(&BLACK);
    let mut x = 40;
    let mut y = 16;
    let mut entries: Vec<(String, Option<RGBColor>)> =
        keys.into_iter().map(|(n, c)| (n, Some(c))).collect();
    if committed {
        entries.push(("◆ committed a side effect".into(), None));
    }
    if committed_late {
        entries.push((
            "◇ committed, the client no longer waiting (maybe after the bar)".into(),
            None,
        ));
    }
    for (name, colour) in entries {
        let (w, _) = area.estimate_text_size(&name, &font)?;
        let swatch = if colour.is_some() { 26 } else { 0 };
        if x + swatch + w as i32 > width - 20 {
            x = 40;
            y += 26;
        }
        if let Some(c) = colour {
            area.draw(&Rectangle::new([(x, y - 9), (x + 20, y + 9)], c.filled()))
                .and_then(|_| {
                    area.draw(&Rectangle::new(
                        [(x, y - 9), (x + 20, y + 9)],
                        BLACK.mix(0.6),
                    ))
                })?;
        }
        label(area, placed, &name, (x + swatch, y), font.clone())?;
        x += swatch + w as i32 + 28;
    }
    Ok(())
}

/// The time axis under the blocks, in ticks, at round steps.
fn axis<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    placed: &mut Placed,
    (t0, t1): (Tick, Tick),
    plot: (i32, i32),
    y: i32,
    x_of: impl Fn(Tick) -> i32,
) -> Result<(), ChartError> {
    // Ticks while the span is short; milliseconds or seconds once ticks run to thousands.
    let (unit, scale) = match t1.since(t0).0 {
        s if s < 10_000 => ("ticks; 1 tick = 1 µs", 1),
        s if s < 10_000_000 => ("ms", 1_000),
        _ => ("s", 1_000_000),
    };
    let span = t1.since(t0).0.div_ceil(scale).max(1);
    let step = round_step(span, 10) * scale;
    area.draw(&PathElement::new(vec![(plot.0, y), (plot.1, y)], BLACK))?;
    let font = (FONT, style::NOTE).into_font().color(&BLACK);
    let mut t = 0;
    while t <= t1.0 {
        let x = x_of(Tick(t));
        area.draw(&PathElement::new(vec![(x, y), (x, y + 6)], BLACK))?;
        let text = (t / scale).to_string();
        let (w, _) = area.estimate_text_size(&text, &font)?;
        label(
            area,
            placed,
            &text,
            (x - w as i32 / 2, y + 20),
            font.clone(),
        )?;
        t += step;
    }
    let title = &format!("time since the story began ({unit})");
    let (w, _) = area.estimate_text_size(title, &font)?;
    label(
        area,
        placed,
        title,
        ((plot.0 + plot.1 - w as i32) / 2, y + 50),
        font,
    )?;
    Ok(())
}

/// A step of 1, 2 or 5 times a power of ten that cuts `span` into at most `most` pieces.
fn round_step(span: u64, most: u64) -> u64 {
    let mut power = 1u64;
    loop {
        for m in [1, 2, 5] {
            let step = m * power;
            if span / step <= most {
                return step;
            }
        }
        power = power.saturating_mul(10);
    }
}

/// Whether an attempt ended because the client stopped waiting, not with the server's word: a
/// commit it made is not placed in time by the trace, and may come after the bar.
fn gave_up(outcome: &str) -> bool {
    matches!(outcome, "timeout" | "cancelled")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_steps_are_round_and_few() {
        assert_eq!(round_step(162, 10), 20);
        assert_eq!(round_step(24, 10), 5);
        assert_eq!(round_step(10, 10), 1);
        assert_eq!(round_step(25_000, 10), 5_000);
    }
}
