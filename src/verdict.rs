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

use crate::metrics::Measure;
use crate::run::PolicyResult;
use crate::sweep::Sweep;
use crate::theory;

/// The chance that a table of correct rows shows any `disagrees`, at most.
pub const FAMILY_ERROR: f64 = 0.05;

/// The measures each row compares with theory.
const COMPARED: [Measure; 2] = [Measure::Attempts, Measure::Duplicates];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Agrees,
    Borderline,
    Disagrees,
}

impl Verdict {
    pub const NAMES: [&'static str; 3] = ["agrees", "borderline", "disagrees"];

    pub fn name(self) -> &'static str {
        Verdict::NAMES[self as usize]
    }
}

/// The comparisons the table of `sweep` makes: two for every configuration, at every point,
/// that has closed forms. Counted before the run; a row whose run leaves theory behind (an
/// intent cut at the horizon) only makes the bound stricter than it needs to be.
pub fn comparisons(sweep: &Sweep) -> usize {
    let rows = (sweep.points.iter())
        .flat_map(|p| {
            p.experiment
                .policies
                .iter()
                .map(|policy| (&p.experiment, policy))
        })
        .filter(|(exp, policy)| theory::for_policy(exp, policy).is_some())
        .count();
    rows * COMPARED.len()
}

/// The confidence of each comparison's widened interval, for a table of `comparisons`.
pub fn widened_level(comparisons: usize) -> f64 {
    1.0 - FAMILY_ERROR / comparisons.max(COMPARED.len()) as f64
}

/// The verdict on one row of a table of `comparisons`; `None` where no closed form applies.
pub fn of(result: &PolicyResult, comparisons: usize) -> Option<Verdict> {
    let theory = result.theory?;
    let expected = |m: Measure| match m {
        Measure::Duplicates => theory.duplicates,
        _ => theory.attempts,
    };
    let inside = |level: Option<f64>| {
        COMPARED.iter().all(|&m| {
            let e = match level {
                None => result.estimate(m),
                Some(level) => result.estimate_at(m, level),
            };
            e.contains(expected(m))
        })
    };
    Some(if inside(None) {
        Verdict::Agrees
    } else if inside(Some(widened_level(comparisons))) {
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
        for v in [Verdict::Agrees, Verdict::Borderline, Verdict::Disagrees] {
            assert_eq!(Verdict::NAMES[v as usize], v.name());
        }
        // One row's two comparisons share the 5 %: each interval at 97.5 %.
        assert_eq!(widened_level(2), 0.975);
        assert_eq!(widened_level(0), 0.975);
        assert!((widened_level(12) - (1.0 - 0.05 / 12.0)).abs() < 1e-15);
    }
}
