//! `reservations.csv`: one row per sweep point × configuration where some tool has the agent
//! reserve money before each call (`reserve`), summed over replications — what was reserved,
//! spent, released, released wrongly (while an effect had landed), still held at the end, and
//! what the server charged. Written only when a tool reserves. Columns are documented in
//! `out/README.md`.

use super::column::{Column, Kind::*, col};
use super::{Export, dollars};
use crate::metrics::reservation::ReservationTotals;
use crate::model::price::PICO;
use crate::run::PointResult;
use crate::sweep::{Point, Sweep};

/// The columns after the parameter columns.
pub fn columns() -> Vec<Column> {
    vec![
        col("experiment", Text),
        col("policy", Text),
        col("calls", Count),
        col("reserved_usd", Number),
        col("spent_usd", Number),
        col("released_usd", Number),
        col("released_wrongly_usd", Number),
        col("wrong_releases", Count),
        col("held_at_end_usd", Number),
        col("held_calls", Count),
        col("charged_usd", Number),
    ]
}

/// Whether some point of `sweep` has a tool that reserves.
pub fn wanted(sweep: &Sweep) -> bool {
    sweep.census.reservations
}

/// The rows of one point: each configuration's, in the order the config lists them.
pub fn rows(point: &Point, result: &PointResult) -> Vec<Vec<String>> {
    let exp = &point.experiment;
    (exp.policies.iter().zip(&result.policies))
        .map(|(policy, result)| {
            let ReservationTotals {
                calls,
                reserved,
                spent,
                released,
                released_wrongly,
                wrong_releases,
                held,
                held_calls,
                charged,
            } = result.totals.reservations;
            let usd = |pd: u128| dollars(pd as f64 / PICO);
            let cells = [
                exp.name.clone(),
                policy.name.clone(),
                calls.to_string(),
                usd(reserved),
                usd(spent),
                usd(released),
                usd(released_wrongly),
                wrong_releases.to_string(),
                usd(held),
                held_calls.to_string(),
                usd(charged),
            ];
            let params = point.params.iter().map(ToString::to_string);
            params.chain(cells).collect()
        })
        .collect()
}

/// `reservations.csv` as the output folder writes it.
pub struct Reservations;

impl Export for Reservations {
    fn file(&self) -> &'static str {
        "reservations.csv"
    }
    fn columns(&self) -> Vec<Column> {
        columns()
    }
    fn point_rows(&self, point: &Point, result: &PointResult) -> Vec<Vec<String>> {
        rows(point, result)
    }
}
