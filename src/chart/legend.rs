//! Legends drawn by hand where plotters' own would cover the data: a row of swatches across
//! the top (one per configuration, or per series of a chart), and a column beside a curve
//! chart.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::curve::{Measure, Series, marker};
use super::data::Data;
use super::style::{self, FONT};

/// One swatch and name per configuration, in rows across the top; returns the area below.
pub(super) fn legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<DrawingArea<DB, Shift>, String> {
    let entries: Vec<(&str, RGBColor)> = (data.policies.iter())
        .enumerate()
        .map(|(s, name)| (name.as_str(), style::color(s)))
        .collect();
    legend_of(area, &entries)
}

/// One swatch and name per entry, in rows across the top; returns the area below.
pub(super) fn legend_of<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[(&str, RGBColor)],
) -> Result<DrawingArea<DB, Shift>, String> {
    let font = (FONT, style::LABEL).into_font();
    let text = font
        .clone()
        .into_text_style(area)
        .pos(Pos::new(HPos::Left, VPos::Center));
    // Lay the entries out first: a new row when the next would pass the right edge.
    let (mut x, mut row) = (40, 0);
    let mut places = Vec::new();
    for (name, _) in entries {
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
    for (&(name, color), &(x, row)) in entries.iter().zip(&places) {
        let y = 14 + 32 * row;
        top.draw(&Rectangle::new([(x, y), (x + 26, y + 24)], color.filled()))
            .map_err(|e| e.to_string())?;
        top.draw(&Text::new(name.to_string(), (x + 34, y + 12), text.clone()))
            .map_err(|e| e.to_string())?;
    }
    Ok(body)
}

/// The legend as a column: per series, its theory line with its marker on it and its name,
/// the closed form beneath where it has one.
pub(super) fn side_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    series: &[Series],
    measure: Measure,
) -> Result<(), String> {
    let text = |size: u32| {
        (FONT, size)
            .into_font()
            .into_text_style(area)
            .pos(Pos::new(HPos::Left, VPos::Center))
    };
    let header = "line: theory · mark: measured, 95% CI";
    area.draw(&Text::new(header, (10, 16), text(style::NOTE)))
        .map_err(|e| e.to_string())?;
    let theories = series
        .iter()
        .filter(|s| s.marks.iter().any(|m| m.theory.is_some()));
    let row = if theories.count() > 0 { 44 } else { 28 };
    for (i, s) in series.iter().enumerate() {
        let y = 52 + row * i as i32;
        let color = style::color(i);
        let theory = s.marks.iter().find_map(|m| m.theory);
        if theory.is_some() {
            let line = ShapeStyle::from(color.mix(0.55)).stroke_width(5);
            area.draw(&PathElement::new(vec![(10, y), (44, y)], line))
                .map_err(|e| e.to_string())?;
        }
        area.draw(&(EmptyElement::at((27, y)) + Polygon::new(marker(i, 7), color.filled())))
            .map_err(|e| e.to_string())?;
        area.draw(&Text::new(s.label.clone(), (54, y), text(style::NOTE)))
            .map_err(|e| e.to_string())?;
        if let Some(t) = theory {
            let formula = format!("theory {}", measure.formula(t.attempts, t.key));
            area.draw(&Text::new(formula, (54, y + 20), text(style::NOTE - 4)))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}
