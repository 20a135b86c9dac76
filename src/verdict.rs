//! Whether a table's runs agree with their closed forms, in words a reader can take at face
//! value.
//!
//! Each row of a table compares two measures with theory, and a table has many rows: at 95 %
//! per comparison, one correct comparison in twenty falls outside its interval, and rows that
//! share common random numbers fall outside together, so a table of correct rows would often
//! show a "no". The verdict therefore has three states. A row *agrees* when theory lies in both
//! of its 95 % intervals. It *disagrees* only when theory lies outside an interval widened for
//! the whole table: Bonferroni's, at a family-wise error rate of 5 % over every comparison the
//! table makes, which holds whatever the correlation between rows. Between the two it is
//! *borderline*: outside a 95 % interval, as one comparison in twenty is by chance.
//!
//! A row compares every figure a closed form gives: attempts, effects and duplicates per
//! intent, the success rate and the ghost rate. Each comparison is Student's t, the mean's
//! distance from theory in standard errors, on the degrees of freedom its interval has; the
//! verdict is read from those t alone, so a printed t can never seem to contradict it. A figure
//! with a single observation has no interval: its row is `too_few`, never agreement.
//!
//! Every compared figure is a whole number per intent, and a whole-number figure whose mean is
//! theory's μ has a variance of at least f(1 − f), f the fractional part of μ (two neighbouring
//! values are the least spread there is). The standard error a t divides by is never below that
//! floor over the run's intents: a sample that happens to show no spread at all (every one of
//! ten thousand charges committed, where theory expects one in ten thousand not to) is not taken
//! for an exact figure that misses theory by an infinite t.

use crate::metrics::estimate::{LEVEL, t_quantile};
use crate::metrics::{Measure, Sample};
use crate::run::PolicyResult;
use crate::theory::{COMPARED, ClosedForms};

/// The chance that a table of correct rows shows any `disagrees`, at most.
pub const FAMILY_ERROR: f64 = 0.05;

/// The closed form of measure `m`.
pub fn expected(t: &ClosedForms, m: Measure) -> f64 {
    match m {
        Measure::Effects => t.effects,
        Measure::Duplicates => t.duplicates,
        Measure::Success => t.success,
        Measure::Ghost => t.ghost,
        _ => t.attempts,
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agrees,
    Borderline,
    Disagrees,
    /// One observation: no interval, so no judgement.
    TooFew,
}

impl Verdict {
    pub const NAMES: [&'static str; 4] = ["agrees", "borderline", "disagrees", "too_few"];

    pub fn name(self) -> &'static str {
        Verdict::NAMES[self as usize]
    }
}

/// The Student t of one comparison: how many standard errors the mean lies from theory, on
/// `df` degrees of freedom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Statistic {
    pub measure: Measure,
    pub t: f64,
    pub df: u64,
}

impl Statistic {
    /// Whether theory lies inside the interval at confidence `level`: |t| within its quantile.
    fn inside(&self, level: f64) -> bool {
        self.t.abs() <= t_quantile(level, self.df)
    }
}

/// Every comparison of a row, in [`COMPARED`] order; `None` without closed forms.
pub fn statistics(result: &PolicyResult) -> Option<Vec<Statistic>> {
    let theory = result.theory?;
    let df = result.degrees_of_freedom();
    let intents = result.totals.intents() as f64;
    Some(
        COMPARED
            .iter()
            .map(|&m| {
                let (e, mu) = (result.estimate(m), expected(&theory, m));
                let f = mu - mu.floor();
                let floor = (f * (1.0 - f) / intents).sqrt();
                let diff = e.mean - mu;
                let t = if diff == 0.0 {
                    0.0
                } else {
                    diff / e.std_error.max(floor)
                };
                Statistic { measure: m, t, df }
            })
            .collect(),
    )
}

/// The comparison of a row furthest from theory (the first among equals): the one its
/// verdict turns on.
pub fn furthest(result: &PolicyResult) -> Option<Statistic> {
    statistics(result)?
        .into_iter()
        .reduce(|a, b| if b.t.abs() > a.t.abs() { b } else { a })
}

/// The confidence of each comparison's widened interval, for a table of `comparisons`.
pub fn widened_level(comparisons: usize) -> f64 {
    1.0 - FAMILY_ERROR / comparisons.max(COMPARED.len()) as f64
}

/// The verdict on one row of a table of `comparisons`; `None` where no closed form applies.
pub fn of(result: &PolicyResult, comparisons: usize) -> Option<Verdict> {
    let stats = statistics(result)?;
    let inside = |level: f64| stats.iter().all(|s| s.inside(level));
    Some(if stats.iter().any(|s| s.df == 0) || shared_run(result) {
        Verdict::TooFew
    } else if inside(LEVEL) {
        Verdict::Agrees
    } else if inside(widened_level(comparisons)) {
        Verdict::Borderline
    } else {
        Verdict::Disagrees
    })
}

/// One replication of intents that do not fail independently (bursts): its interval, across
/// the intents of one run, is narrower than the truth, so it judges nothing.
pub fn shared_run(result: &PolicyResult) -> bool {
    result.replications < 2 && result.theory.is_some_and(|t| !t.intents_independent)
}

/// The verdict on edge `e`'s calls per top-level intent in `result`, in an edge table of
/// `comparisons`: the mean across replications against the closed form, as a row's figures
/// are (a call count per top-level intent is a whole number, so the standard error has the
/// same floor); `too_few` with one replication, which leaves no spread to read; `None`
/// without a closed form.
pub fn of_edge(result: &PolicyResult, e: usize, comparisons: usize) -> Option<Verdict> {
    let mu = *result.edge_theory.as_ref()?.get(e)?;
    let m = result.edge_calls.get(e)?;
    if m.count() < 2 {
        return Some(Verdict::TooFew);
    }
    let e = crate::metrics::Estimate::from_sample(m);
    let f = mu - mu.floor();
    let floor = (f * (1.0 - f) / result.totals.calls().max(1) as f64).sqrt();
    let diff = e.mean - mu;
    let t = if diff == 0.0 {
        0.0
    } else {
        diff / e.std_error.max(floor)
    };
    let stat = Statistic {
        measure: Measure::Attempts,
        t,
        df: m.count() - 1,
    };
    Some(if stat.inside(LEVEL) {
        Verdict::Agrees
    } else if stat.inside(1.0 - FAMILY_ERROR / comparisons.max(1) as f64) {
        Verdict::Borderline
    } else {
        Verdict::Disagrees
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_follow_the_states() {
        for v in [
            Verdict::Agrees,
            Verdict::Borderline,
            Verdict::Disagrees,
            Verdict::TooFew,
        ] {
            assert_eq!(Verdict::NAMES[v as usize], v.name());
        }
        // One row's five comparisons share the 5 %: each interval at 99 %.
        assert_eq!(widened_level(5), 0.99);
        assert_eq!(widened_level(0), 0.99);
        assert!((widened_level(12) - (1.0 - 0.05 / 12.0)).abs() < 1e-15);
    }
}
