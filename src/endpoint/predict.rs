//! A real client held to a prediction: the figures per operation that do not depend on when
//! the client sends — attempts, duplicates and success — recomputed from the requests the
//! endpoint served, against the simulation of the policy the user says the client has.
//! Each figure's difference is over its standard error, the endpoint's from the spread of its
//! operations and the simulation's from its replications; each is held to the two-sided 5 %
//! bound Bonferroni-corrected over every comparison the table makes.

use std::collections::BTreeMap;

use statrs::distribution::{ContinuousCDF, Normal};

use super::ledger::Ledger;
use crate::metrics::estimate::Estimate;
use crate::metrics::moments::{Moments, Sample};

/// The figures compared, by name.
pub const FIGURES: [&str; 3] = ["attempts", "duplicates", "success"];

/// Each client's figures at `tool` ([`FIGURES`]' order), from its operations, each a mean with
/// its standard error: a client with fewer than two operations has no spread, and is left out.
pub fn measured(ledger: &Ledger, tool: usize) -> BTreeMap<String, [Estimate; 3]> {
    // Per client and operation: attempts, commits, whether any answer was a 2xx.
    let mut ops: BTreeMap<(&str, &str), (f64, f64, bool)> = BTreeMap::new();
    for s in ledger.served.iter().filter(|s| s.tool == tool) {
        let Some(op) = &s.operation else { continue };
        let o = ops.entry((&s.client, op)).or_default();
        o.0 += 1.0;
        o.1 += f64::from(u8::from(s.committed));
        o.2 |= s.status.is_some_and(|x| (200..300).contains(&x));
    }
    let mut figures: BTreeMap<&str, [Moments; 3]> = BTreeMap::new();
    for ((client, _), (attempts, commits, ok)) in ops {
        let m = figures.entry(client).or_default();
        m[0].push(attempts);
        m[1].push((commits - 1.0).max(0.0));
        m[2].push(f64::from(u8::from(ok)));
    }
    (figures.into_iter())
        .filter(|(_, m)| m[0].count() >= 2)
        .map(|(client, m)| (client.to_string(), m.map(|m| Estimate::from_sample(&m))))
        .collect()
}

/// Whether what `tool` does to a request depends on when it comes — a rate or tokens-per-minute
/// limit, outages, capacity windows, bursts, workers and their line — so that a prediction must
/// replay the requests' arrivals rather than the config's.
pub fn paced(tool: &crate::model::Tool) -> bool {
    let s = &tool.server;
    s.rate_limit.is_some()
        || s.token_limit.is_some()
        || !s.outages.is_empty()
        || !s.capacity.is_empty()
        || tool.burst.is_some()
        || s.workers.is_some()
}

/// When each of `client`'s operations at `tool` first arrived, in order: the arrivals a
/// prediction replays.
pub fn first_requests(ledger: &Ledger, tool: usize, client: &str) -> Vec<crate::time::Tick> {
    // The ledger holds requests as they were answered: the first of each is its earliest.
    let mut first: BTreeMap<&str, crate::time::Tick> = BTreeMap::new();
    for s in ledger
        .served
        .iter()
        .filter(|s| s.tool == tool && s.client == client)
    {
        if let Some(op) = &s.operation {
            let at = first.entry(op).or_insert(s.at);
            *at = (*at).min(s.at);
        }
    }
    let mut times: Vec<_> = first.into_values().collect();
    times.sort_unstable();
    times
}

/// One comparison: the figure, its z, and whether it is inside the bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    pub figure: &'static str,
    pub measured: Estimate,
    pub predicted: Estimate,
    /// `None` where neither side varies: then they agree only if equal.
    pub z: Option<f64>,
    pub agrees: bool,
}

/// The bound on |z| for `comparisons` comparisons: the two-sided 5 % bound over all of them.
pub fn bound(comparisons: usize) -> f64 {
    let normal = Normal::standard();
    normal.inverse_cdf(1.0 - 0.05 / (2.0 * comparisons.max(1) as f64))
}

/// A client's figures against the predicted ones, each held to `bound`.
pub fn compare(measured: &[Estimate; 3], predicted: &[Estimate; 3], bound: f64) -> [Compared; 3] {
    std::array::from_fn(|i| {
        let (m, p) = (measured[i], predicted[i]);
        let se = m.std_error.hypot(p.std_error);
        let z = (se > 0.0).then(|| (m.mean - p.mean) / se);
        let agrees = match z {
            Some(z) => z.abs() <= bound,
            None => (m.mean - p.mean).abs() < 1e-12,
        };
        Compared {
            figure: FIGURES[i],
            measured: m,
            predicted: p,
            z,
            agrees,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn est(mean: f64, std_error: f64) -> Estimate {
        Estimate {
            mean,
            half_width: 1.96 * std_error,
            std_error,
        }
    }

    #[test]
    fn a_figure_agrees_inside_the_corrected_bound_and_not_past_it() {
        // Three comparisons: 1 − 0.05/6 is the 0.99167 quantile, 2.394.
        assert!((bound(3) - 2.394).abs() < 1e-3);
        let (m, zero) = (est(1.2, 0.03), est(0.0, 0.0));
        let c = compare(
            &[m, zero, zero],
            &[est(1.18, 0.0), est(0.0, 0.0), est(0.1, 0.0)],
            2.394,
        );
        assert!(c[0].agrees && (c[0].z.unwrap() - 0.6667).abs() < 1e-3);
        assert!(c[1].agrees && c[1].z.is_none());
        assert!(!c[2].agrees);
        let far = compare(
            &[m, zero, zero],
            &[est(1.0, 0.01), est(0.0, 0.0), est(0.0, 0.0)],
            2.394,
        );
        assert!(!far[0].agrees);
    }
}
