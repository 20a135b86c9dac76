//! Legends drawn by hand where plotters' own would cover the data: a row of swatches across
//! the top (one per configuration, or per series of a chart), and a column beside a curve
//! chart.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use plotters::element::DashedPathElement;

use super::curve::{Measure, Series, THEORY, TheoryLine, marker, paint, theory_dashes};
use super::data::Data;
use super::style::{self, FONT};

/// One swatch and name per configuration, in rows across the top; returns the area below.
pub(super) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let entries: Vec<(&str, RGBColor)> = (data.policies.iter())
        .enumerate()
        .map(|(s, name)| (name.as_str(), style::color(s)))
        .collect();
    legend_of(area, &entries)
}

/// As [`legend`], each swatch with its configuration's shape, which bars of a sweep carry at
/// their foot.
pub(super) fn marked<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let body = legend(area, data)?;
    for (s, (x, y)) in places(area, data.policies.iter().map(String::as_str))?.enumerate() {
        shape(area, s, (x + 13, y + 12))?;
    }
    Ok(body)
}

/// Series `i`'s shape at `at`, white with a black edge: it reads on any colour and on white.
pub(super) fn shape<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    i: usize,
    at: (i32, i32),
) -> Result<(), ChartError> {
    let corners = marker(i, 6);
    let edge: Vec<(i32, i32)> = corners.iter().chain(corners.first()).copied().collect();
    let mark = EmptyElement::at(at)
        + Polygon::new(corners, WHITE.filled())
        + PathElement::new(edge, BLACK.stroke_width(2));
    area.draw(&mark).map_err(ChartError::from)
}

/// How an entry of a legend is drawn: as what it names is drawn on the chart.
#[derive(Clone, Copy)]
pub(super) enum Key {
    /// A filled area, a bar.
    Fill(RGBColor),
    /// A line.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A light shaded band.
    Band,
    /// A black upright mark.
    Mark,
}

/// One swatch and name per entry, in rows across the top; returns the area below.
pub(super) fn legend_of<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, RGBColor)],
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let keys: Vec<(&str, Key)> = (entries.iter()).map(|&(n, c)| (n, Key::Fill(c))).collect();
    keyed(area, &keys)
}

/// One key and name per entry, in rows across the top; returns the area below.
pub(super) fn keyed<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, Key)],
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let text = (FONT, style::LABEL)
        .into_font()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let places: Vec<(i32, i32)> = places(area, entries.iter().map(|e| e.0))?.collect();
    let rows = places
        .iter()
        .map(|p| p.1)
        .max()
        .map_or(1, |y| (y - 14) / 32 + 1);
    let (top, body) = area.split_vertically(18 + 32 * rows as u32);
    for (&(name, key), &(x, y)) in entries.iter().zip(&places) {
        let middle = vec![(x, y + 12), (x + 26, y + 12)];
        let drawn = match key {
            Key::Fill(color) => {
                top.draw(&Rectangle::new([(x, y), (x + 26, y + 24)], color.filled()))
            }
            Key::Line(color) => top.draw(&PathElement::new(middle, color.stroke_width(3))),
            Key::Dashed(color) => {
                let style = color.stroke_width(2);
                top.draw(&PathElement::new(
                    vec![(x, y + 12), (x + 10, y + 12)],
                    style,
                ))
                .and_then(|_| {
                    top.draw(&PathElement::new(
                        vec![(x + 16, y + 12), (x + 26, y + 12)],
                        style,
                    ))
                })
            }
            Key::Band => top.draw(&Rectangle::new(
                [(x, y), (x + 26, y + 24)],
                BLACK.mix(0.1).filled(),
            )),
            Key::Mark => top.draw(&PathElement::new(
                vec![(x + 13, y), (x + 13, y + 24)],
                BLACK.stroke_width(2),
            )),
        };
        drawn?;
        top.draw(&Text::new(name.to_string(), (x + 34, y + 12), text.clone()))?;
    }
    Ok(body)
}

/// Where each entry's swatch goes, its top left corner: in rows, a new one when the next
/// entry would pass the right edge.
fn places<'a, DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: impl Iterator<Item = &'a str>,
) -> Result<impl Iterator<Item = (i32, i32)>, ChartError> {
    let font = (FONT, style::LABEL).into_font().into_text_style(area);
    let (mut x, mut row) = (40, 0);
    let mut places = Vec::new();
    for name in names {
        let width = area.estimate_text_size(name, &font)?.0 as i32;
        if x + 34 + width > style::SIZE.0 as i32 - 20 && x > 40 {
            (x, row) = (40, row + 1);
        }
        places.push((x, 14 + 32 * row));
        x += 34 + width + 40;
    }
    Ok(places.into_iter())
}

/// The legend as a column: per series, its marker and its name; then each distinct theory
/// curve in its dashes with its form. On a categorical axis, where each series carries its own
/// theory dashes, a series' row shows its dash under the marker and its form beneath the name.
pub(super) fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &[Series],
    measure: Measure,
    lines: &[TheoryLine],
) -> Result<(), ChartError> {
    let text = |size: u32| {
        (FONT, size)
            .into_font()
            .into_text_style(area)
            .pos(Pos::new(HPos::Left, VPos::Center))
    };
    let has_theory = (series.iter()).any(|s| s.marks.iter().any(|m| m.theory.is_some()));
    // The header names only what the chart draws: no theory line, no word of one.
    let dense = series.iter().any(|s| s.marks.len() > super::curve::DENSE);
    let measured = match dense {
        true => "band: 95% CI · mark: a point measured",
        false => "mark: measured, 95% CI",
    };
    let header = match has_theory {
        true => format!("line: theory · {measured}"),
        false => measured.to_string(),
    };
    area.draw(&Text::new(header, (10, 16), text(style::NOTE)))?;
    let own_theory = has_theory && lines.is_empty();
    let row = if own_theory { 44 } else { 30 };
    let draw = |e: &dyn Fn() -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>| {
        e().map_err(ChartError::from)
    };
    let mut y = 52;
    for (i, s) in series.iter().enumerate() {
        let color = style::color(i);
        let theory = s.marks.iter().find_map(|m| m.theory).filter(|_| own_theory);
        if theory.is_some() {
            let line = ShapeStyle::from(color.mix(0.55)).stroke_width(5);
            draw(&|| area.draw(&PathElement::new(vec![(10, y), (44, y)], line)))?;
        }
        let (fill, edge) = paint(i, color);
        let corners = marker(i, 7);
        let closed: Vec<(i32, i32)> = corners.iter().chain(corners.first()).copied().collect();
        draw(&|| {
            area.draw(
                &(EmptyElement::at((27, y))
                    + Polygon::new(corners.clone(), fill)
                    + PathElement::new(closed.clone(), edge)),
            )
        })?;
        draw(&|| area.draw(&Text::new(s.label.clone(), (54, y), text(style::NOTE))))?;
        if let Some(t) = theory {
            let formula = format!("theory {}", measure.formula(&t));
            draw(&|| {
                area.draw(&Text::new(
                    formula.clone(),
                    (54, y + 20),
                    text(style::NOTE - 4),
                ))
            })?;
        }
        y += row;
    }
    y += 10;
    let style = ShapeStyle::from(THEORY.mix(0.85)).stroke_width(3);
    for (k, line) in lines.iter().enumerate() {
        let sample = vec![(8, y), (46, y)];
        draw(&|| match theory_dashes(k) {
            None => area.draw(&PathElement::new(sample.clone(), style)),
            Some((dash, gap)) => {
                area.draw(&DashedPathElement::new(sample.clone(), dash, gap, style))
            }
        })?;
        draw(&|| {
            area.draw(&Text::new(
                line.label.clone(),
                (54, y),
                text(style::NOTE - 2),
            ))
        })?;
        y += 30;
    }
    Ok(())
}
