//! Goodput over time: a panel per configuration (and tool, where a task calls several), the
//! calls sent each second — first tries, and retries as a line of their own — under the load the clients offered
//! and the goodput they got, the calls a breaker refused without sending, the trigger and
//! outages shaded, and the moment goodput recovered marked. A retry storm reads at a glance: calls far above the offered load, goodput on the
//! floor, long after the shaded trigger has passed.
//!
//! Every panel shares one logarithmic scale of calls per second: a storm's retries can be a
//! thousand times the goodput, which on a linear axis of its own would lie flat on the floor,
//! and panels on one scale compare at a glance. A rate of zero is drawn on the floor.

use super::ChartError;
use plotters::coord::Shift;
use plotters::prelude::*;

use super::data::{Bin, Data};
use super::frame;
use super::legend::{self, Key};
use super::style::{self, FONT};
use crate::metrics::recovery;
use crate::time::Tick;

/// Ticks to seconds, the unit of the time axis.
fn seconds(t: Tick) -> f64 {
    t.0 as f64 / 1e6
}

// Light first tries under darker retries, and a goodput line darker than both: the three
// stay apart in greyscale as well.
const FIRST: RGBColor = style::PALETTE[5];
const RETRY: RGBColor = style::PALETTE[6];
const GOODPUT: RGBColor = style::PALETTE[2];
const OFFERED: RGBColor = BLACK;
const REFUSED: RGBColor = style::PALETTE[7];

pub fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    data: &Data,
) -> Result<(), ChartError> {
    let bins = data.timeseries.as_ref().ok_or(ChartError::Missing(
        "the run kept no time series (`[output] timeseries`)",
    ))?;
    let mut panels: Vec<(&str, &str)> = Vec::new();
    for policy in &data.policies {
        for b in bins.iter().filter(|b| &b.policy == policy) {
            if !panels.contains(&(policy.as_str(), b.tool.as_str())) {
                panels.push((policy, &b.tool));
            }
        }
    }
    if panels.is_empty() {
        return Err(ChartError::Missing("timeseries.csv has no rows"));
    }
    let body = super::heading(
        root,
        &format!("Goodput over time — {}", data.name),
        &data.description,
    )?;
    // Calls a breaker refused were never sent: a line of their own, where there are any.
    let refusals = bins.iter().any(|b| b.refused > 0.0);
    let body = keyed(&body, data, refusals)?;
    let panel = Panel {
        data,
        x_hi: bins.iter().map(|b| b.to_s).fold(0.0, f64::max),
        y: scale(bins),
        refusals,
    };
    let columns = if panels.len() >= 4 { 2 } else { 1 };
    let rows = panels.len().div_ceil(columns);
    let areas = body.split_evenly((rows, columns));
    for (i, (area, &(policy, tool))) in areas.iter().zip(&panels).enumerate() {
        let mine: Vec<&Bin> = (bins.iter())
            .filter(|b| b.policy == policy && b.tool == tool)
            .collect();
        // The tool named even where there is one: a task may call others the series leaves out.
        let name = format!("{policy} · {tool}");
        let bottom = i + columns >= panels.len();
        panel.draw(area, &mine, (policy, tool), &name, bottom)?;
    }
    Ok(())
}

/// The legend across the top: what each line and fill is, and the shaded band and the
/// recovery mark where the chart has them. Returns the area below it.
fn keyed<DB: DrawingBackend>(
    body: &DrawingArea<DB, Shift>,
    data: &Data,
    refusals: bool,
) -> Result<DrawingArea<DB, Shift>, ChartError> {
    let mut entries = vec![
        ("first tries", Key::Fill(FIRST)),
        ("retries", Key::Line(RETRY)),
        ("offered", Key::Dashed(OFFERED)),
        ("goodput", Key::Line(GOODPUT)),
    ];
    if refusals {
        entries.push(("breaker refused", Key::Dashed(REFUSED)));
    }
    let shaded = match (data.trigger.is_some(), data.outages.is_empty()) {
        (true, true) => Some("trigger"),
        (true, false) => Some("trigger, outage"),
        (false, false) => Some("outage"),
        (false, true) => None,
    };
    entries.extend(shaded.map(|s| (s, Key::Band)));
    let recovered = format!(
        "recovered: goodput ≥ {:.0} % of before, over {} s",
        100.0 * recovery::WITHIN,
        recovery::SMOOTHING.seconds()
    );
    if data.policies.iter().any(|p| data.recovered_at(p).is_some()) {
        entries.push((&recovered, Key::Mark));
    }
    legend::keyed(body, &entries)
}

/// What every panel shares: the time axis to `x_hi` seconds, one logarithmic scale of calls
/// per second, and whether breaker refusals are drawn.
struct Panel<'a> {
    data: &'a Data,
    x_hi: f64,
    y: (f64, f64),
    refusals: bool,
}

impl Panel<'_> {
    /// One configuration's panel at `tool`, from its bins `mine`.
    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        mine: &[&Bin],
        (policy, tool): (&str, &str),
        name: &str,
        bottom: bool,
    ) -> Result<(), ChartError> {
        let (data, x_hi, (y_lo, y_hi)) = (self.data, self.x_hi, self.y);
        let caption = format!("{name}{}", data.recovery_note(policy));
        let mut chart = ChartBuilder::on(area)
            .caption(caption, (FONT, style::TICK))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(if bottom { 56 } else { 28 })
            .y_label_area_size(90)
            .build_cartesian_2d(
                0.0..x_hi,
                (y_lo..y_hi)
                    .log_scale()
                    .with_key_points(log_ticks(y_lo, y_hi)),
            )?;
        // The floor stands for zero, which a logarithmic axis cannot hold.
        let y_label = |y: &f64| match *y <= y_lo * 1.0001 {
            true => "0".to_string(),
            false => super::tick(*y),
        };
        let x_label = |x: &f64| super::tick(*x);
        let mut mesh = chart.configure_mesh();
        mesh.x_labels(10)
            .y_desc("calls / s (log)")
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label);
        frame::styled(&mut mesh, style::NOTE, style::NOTE);
        if bottom {
            mesh.x_desc("time (s)");
        }
        mesh.draw()?;
        // The trigger and the tool's outages, shaded.
        let shaded = (data.trigger.iter().copied())
            .chain(
                (data.outages.iter())
                    .filter(|(t, _, _)| t == tool)
                    .map(|&(_, from, until)| (from, until)),
            )
            .map(|(from, until)| {
                Rectangle::new(
                    [(seconds(from), y_lo), (seconds(until).min(x_hi), y_hi)],
                    BLACK.mix(0.1).filled(),
                )
            });
        chart.draw_series(shaded)?;
        // A step per bin: level across it, so a bin reads as the rate it holds.
        let floor = |y: f64| y.max(y_lo);
        let steps = |value: fn(&Bin) -> f64| -> Vec<(f64, f64)> {
            mine.iter()
                .flat_map(|b| [(b.from_s, floor(value(b))), (b.to_s, floor(value(b)))])
                .collect()
        };
        // First tries as an area, retries as a line of their own, not stacked on them: on a
        // logarithmic axis the upper part of a stack shows the ratio of the two, not the
        // retries' size.
        chart.draw_series(AreaSeries::new(
            steps(|b| b.first_tries),
            y_lo,
            FIRST.filled(),
        ))?;
        chart.draw_series(LineSeries::new(steps(|b| b.retries), RETRY.stroke_width(3)))?;
        let offered = steps(|b| b.offered);
        chart.draw_series(DashedLineSeries::new(
            offered,
            8,
            6,
            OFFERED.stroke_width(2),
        ))?;
        let goodput = steps(|b| b.goodput);
        chart.draw_series(LineSeries::new(goodput, GOODPUT.stroke_width(3)))?;
        if self.refusals {
            let line = REFUSED.stroke_width(3);
            chart.draw_series(DashedLineSeries::new(steps(|b| b.refused), 4, 4, line))?;
        }
        if let Some(at) = data.recovered_at(policy) {
            let mark = PathElement::new(vec![(at, y_lo), (at, y_hi)], BLACK.stroke_width(2));
            chart.draw_series(std::iter::once(mark))?;
        }
        Ok(())
    }
}

/// The one scale of every panel, in calls per second: from the decade below the smallest rate
/// above zero (a tenth at the least, so a near-empty bin does not stretch it) to above the
/// largest.
fn scale(bins: &[Bin]) -> (f64, f64) {
    let rates = bins
        .iter()
        .flat_map(|b| [b.retries, b.first_tries, b.offered, b.goodput, b.refused]);
    let (lo, hi) = rates.fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
        (if r > 0.0 { lo.min(r) } else { lo }, hi.max(r))
    });
    let lo = if lo.is_finite() {
        // Strictly below: a bin at the smallest rate must stand off the floor, where zero is.
        10f64.powf(lo.log10().floor() - 1.0).max(0.1)
    } else {
        0.1
    };
    (lo, (hi * 1.5).max(lo * 10.0))
}

/// Ticks for a logarithmic axis from `lo` (the floor, which stands for zero) to `hi`: the
/// decades, and 3 of each where the axis spans under two (a panel is short: more marks would
/// overlap), so an axis that spans one decade is read at more than one mark.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let steps: &[f64] = match hi / lo < 100.0 {
        true => &[1.0, 3.0],
        false => &[1.0],
    };
    let mut ticks = vec![lo];
    let mut decade = 10f64.powf(lo.log10().floor());
    while decade <= hi {
        ticks.extend(
            steps
                .iter()
                .map(|s| s * decade)
                .filter(|&t| t > lo * 1.0001 && t <= hi),
        );
        decade *= 10.0;
    }
    ticks
}

#[cfg(test)]
mod tests {
    use super::log_ticks;

    #[test]
    fn a_narrow_axis_gets_its_threes_and_a_wide_one_its_decades() {
        let narrow = log_ticks(0.1, 6.0);
        assert_eq!(narrow.len(), 4);
        assert!((narrow[1] - 0.3).abs() < 1e-12 && narrow[2] == 1.0 && narrow[3] == 3.0);
        assert_eq!(log_ticks(0.1, 1500.0), [0.1, 1.0, 10.0, 100.0, 1000.0]);
        assert_eq!(log_ticks(0.1, 15.0), [0.1, 1.0, 10.0]);
    }
}
