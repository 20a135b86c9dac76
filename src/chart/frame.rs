//! What the charts of measures share around their data: an axis of named categories, the mesh
//! in the charts' type with a faint grid, a caption in a strip of its own, and a note line.

use super::ChartError;
use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::style::{self, FONT};

/// The label at `x` of an axis whose categories `names` stand at 0, 1, …: a name at a whole
/// position, nothing between them, where plotters puts its other ticks.
pub fn category(names: &[String], x: f64) -> String {
    let i = x.round();
    if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
        names[i as usize].clone()
    } else {
        String::new()
    }
}

/// A mesh in the charts' type: tick labels of `ticks` points, axis titles of `titles`, and
/// only the bold grid lines, faint, so the data stays in front.
pub fn styled<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
    ticks: u32,
    titles: u32,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    DB: DrawingBackend,
{
    mesh.label_style((FONT, ticks))
        .axis_desc_style((FONT, titles))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.08))
}

/// Writes `text` centred in a strip of its own at the top of `area`, in `size` points, and
/// returns the rest: the margin under it keeps the top tick label (which stands half above
/// the plot) clear of the caption.
pub fn caption<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    size: u32,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let (strip, rest) = area.split_vertically(size + 12);
    let middle = strip.dim_in_pixel().0 as i32 / 2;
    let font = (FONT, size).into_font().into_text_style(&strip);
    let style = font.pos(Pos::new(HPos::Center, VPos::Top));
    strip.draw(&Text::new(text.to_string(), (middle, 6), style))?;
    Ok(rest)
}

/// Writes a line of `text` across the top of `area` (what the chart leaves out, and why) and
/// returns the rest.
pub fn note<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let (line, rest) = area.split_vertically(30);
    let font = (FONT, style::NOTE).into_font().into_text_style(&line);
    let style = font.pos(Pos::new(HPos::Left, VPos::Center));
    line.draw(&Text::new(text.to_string(), (40, 15), style))?;
    Ok(rest)
}
