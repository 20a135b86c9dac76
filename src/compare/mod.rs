//! `retrysim compare A B`: did it get better or worse, really? Two output folders are matched
//! by configuration name and point (their configs may differ: that is the point), and every
//! figure with an interval ([`Figure`]) is compared: B − A with its 95 % interval, and a verdict
//! corrected over the whole table.
//!
//! - **Paired** where both runs used the same seed and the same number (more than one) of
//!   replications: replication j of A and of B drew the same arrivals and faults (common random
//!   numbers), so the differences d_j are taken replication by replication and the interval is
//!   d̄ ± t(n−1)·s_d/√n. The shared noise cancels, which makes the interval far tighter than
//!   the two runs' own (see the book's reference, `reference/commands.md`, for how much).
//! - **Welch** otherwise, from each run's own mean and interval (one replication is a valid
//!   input: its per-intent interval): se² = se_A² + se_B², degrees of freedom by
//!   Welch–Satterthwaite.
//! - **Holm** over every compared figure of the table: the family-wise chance of calling any
//!   difference where there is none is at most 5 %. A figure whose corrected p-value is at most
//!   0.05 is `better` or `worse` by its direction; the rest `no_difference`.

mod read;
pub mod render;

use std::path::Path;

use crate::error::Error;
use crate::metrics::estimate::{t_quantile, two_sided_p};
use crate::metrics::{Better, Estimate, Figure, Moments, Sample};
pub use read::{Folder, Key};

/// The family-wise error rate of a table's verdicts.
pub const ALPHA: f64 = 0.05;

/// How a difference's interval was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Paired,
    Welch,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Paired => "paired",
            Method::Welch => "welch",
        }
    }
}

/// What the comparison says of one figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    NoDifference,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::NoDifference => "no_difference",
        }
    }
}

/// One figure of one configuration, compared.
#[derive(Clone, Debug)]
pub struct Row {
    pub key: Key,
    pub figure: Figure,
    pub a: f64,
    pub b: f64,
    /// B − A: the mean of the paired differences, or the difference of the means.
    pub difference: f64,
    /// Half the 95 % interval of the difference.
    pub half_width: f64,
    pub method: Method,
    pub df: f64,
    pub p: f64,
    /// Holm's p-value, corrected for every figure of the table.
    pub adjusted_p: f64,
    pub verdict: Verdict,
}

/// Two output folders compared.
pub struct Comparison {
    pub a: String,
    pub b: String,
    pub rows: Vec<Row>,
    /// Figures of matched configurations that were not compared, with why (no interval, not
    /// measured in one of them).
    pub skipped: Vec<(Key, Figure, &'static str)>,
    /// Configurations at points found in one folder only, with which: a configuration that
    /// vanished (or appeared) is said, never dropped without a word.
    pub unmatched: Vec<(Key, &'static str)>,
}

/// Compares folder `b` with folder `a` (the baseline).
pub fn folders(a: &Path, b: &Path) -> Result<Comparison, Error> {
    let (fa, fb) = (Folder::read(a)?, Folder::read(b)?);
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let in_b: std::collections::BTreeMap<&Key, &read::Summary> =
        fb.rows.iter().map(|(k, s)| (k, s)).collect();
    let in_a: std::collections::BTreeSet<&Key> = fa.rows.iter().map(|(k, _)| k).collect();
    let mut unmatched: Vec<(Key, &'static str)> = Vec::new();
    for (key, _) in &fb.rows {
        if !in_a.contains(key) {
            unmatched.push((key.clone(), "only in B"));
        }
    }
    for (key, sa) in &fa.rows {
        let Some(&sb) = in_b.get(key) else {
            unmatched.push((key.clone(), "only in A"));
            continue;
        };
        let paired =
            fa.seed == fb.seed && sa.replications == sb.replications && sa.replications > 1;
        for f in Figure::ALL {
            let i = f as usize;
            let (va, vb) = match (sa.values[i], sb.values[i]) {
                (Some(va), Some(vb)) => (va, vb),
                (None, None) => continue,
                _ => {
                    skipped.push((key.clone(), f, "measured in one run only"));
                    continue;
                }
            };
            let pairs = paired.then(|| differences(&fa, &fb, key, i)).flatten();
            let test = match pairs {
                Some(d) => Some(paired_test(&d)),
                None => welch(sa, sb, f),
            };
            let Some((difference, se, df, method)) = test else {
                skipped.push((key.clone(), f, "no interval (one replication)"));
                continue;
            };
            let p = match se {
                0.0 if difference == 0.0 => 1.0,
                0.0 => 0.0,
                _ => two_sided_p(difference / se, df),
            };
            rows.push(Row {
                key: key.clone(),
                figure: f,
                a: va,
                b: vb,
                difference,
                half_width: t_quantile(crate::metrics::estimate::LEVEL, df.floor().max(1.0) as u64)
                    * se,
                method,
                df,
                p,
                adjusted_p: p,
                verdict: Verdict::NoDifference,
            });
        }
    }
    if rows.is_empty() {
        return Err(Error::NotInOutput(nothing_in_common(&fa, &fb)));
    }
    holm(&mut rows);
    Ok(Comparison {
        a: a.display().to_string(),
        b: b.display().to_string(),
        rows,
        skipped,
        unmatched,
    })
}

/// Replication j of B less replication j of A, for figure `i`, where both measured it in every
/// replication.
fn differences(a: &Folder, b: &Folder, key: &Key, i: usize) -> Option<Moments> {
    let (ra, rb) = (a.runs.get(key)?, b.runs.get(key)?);
    if ra.len() != rb.len() || ra.len() < 2 {
        return None;
    }
    ra.iter()
        .zip(rb)
        .map(|(x, y)| Some(y[i]? - x[i]?))
        .collect::<Option<Vec<f64>>>()
        .map(|d| d.into_iter().collect())
}

/// The mean difference, its standard error, degrees of freedom and method, from paired
/// differences.
fn paired_test(d: &Moments) -> (f64, f64, f64, Method) {
    let e = Estimate::from_sample(d);
    (e.mean, e.std_error, (d.count() - 1) as f64, Method::Paired)
}

/// The difference of the two means with Welch's standard error and degrees of freedom, from
/// each run's own interval; `None` where either has none.
fn welch(a: &read::Summary, b: &read::Summary, f: Figure) -> Option<(f64, f64, f64, Method)> {
    let i = f as usize;
    let side = |s: &read::Summary| -> Option<(f64, f64)> {
        let hw = s.half_widths[i]?;
        let n = match s.replications {
            1 if f == Figure::TaskSuccess => s.tasks,
            1 if f.per_intent() => s.intents,
            1 => return None,
            r => r,
        };
        let df = n.checked_sub(1).filter(|&d| d > 0)?;
        Some((
            hw / t_quantile(crate::metrics::estimate::LEVEL, df),
            df as f64,
        ))
    };
    let ((se_a, df_a), (se_b, df_b)) = (side(a)?, side(b)?);
    let var = se_a * se_a + se_b * se_b;
    let df = match var {
        0.0 => df_a + df_b,
        _ => var * var / (se_a.powi(4) / df_a + se_b.powi(4) / df_b),
    };
    Some((b.values[i]? - a.values[i]?, var.sqrt(), df, Method::Welch))
}

/// Holm's step-down correction over every row: corrected p-values, and each verdict by them.
fn holm(rows: &mut [Row]) {
    let m = rows.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| rows[x].p.total_cmp(&rows[y].p).then(x.cmp(&y)));
    let mut running = 0.0f64;
    for (k, &i) in order.iter().enumerate() {
        running = running.max(((m - k) as f64 * rows[i].p).min(1.0));
        rows[i].adjusted_p = running;
    }
    for row in rows.iter_mut() {
        row.verdict = match (
            row.adjusted_p <= ALPHA,
            row.figure.better(),
            row.difference > 0.0,
        ) {
            (false, ..) => Verdict::NoDifference,
            (true, Better::Higher, true) | (true, Better::Lower, false) => Verdict::Better,
            (true, ..) => Verdict::Worse,
        };
    }
}

/// Why two folders have nothing to compare: the configurations and points each has.
fn nothing_in_common(a: &Folder, b: &Folder) -> String {
    let names = |f: &Folder| {
        let mut v: Vec<String> = f.rows.iter().map(|(k, _)| render::label(k)).collect();
        v.truncate(6);
        v.join(", ")
    };
    format!(
        "{} and {} have no configuration at a common point with a figure to compare; the \
         first has {}, the second {}",
        a.path.display(),
        b.path.display(),
        names(a),
        names(b)
    )
}

impl Comparison {
    /// Whether a configuration at some point is in one folder only.
    pub fn missing(&self) -> bool {
        !self.unmatched.is_empty()
    }

    /// Whether any row of figure `f` (any figure, for `None`) got worse.
    pub fn worse(&self, f: Option<Figure>) -> bool {
        (self.rows.iter()).any(|r| r.verdict == Verdict::Worse && f.is_none_or(|f| r.figure == f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(p: f64, difference: f64) -> Row {
        Row {
            key: (Vec::new(), "x".into()),
            figure: Figure::Attempts,
            a: 1.0,
            b: 1.0 + difference,
            difference,
            half_width: 0.0,
            method: Method::Welch,
            df: 10.0,
            p,
            adjusted_p: p,
            verdict: Verdict::NoDifference,
        }
    }

    /// Holm's adjusted p-values for 0.01, 0.04, 0.03, 0.005 (m = 4): sorted 0.005, 0.01,
    /// 0.03, 0.04 → 0.02, 0.03, 0.06, 0.06 (the running maximum keeps them in order).
    #[test]
    fn holm_steps_down_and_keeps_order() {
        let mut rows = [
            row(0.01, -1.0),
            row(0.04, 1.0),
            row(0.03, -1.0),
            row(0.005, 1.0),
        ];
        holm(&mut rows);
        let adjusted: Vec<f64> = rows.iter().map(|r| r.adjusted_p).collect();
        for (got, want) in adjusted.iter().zip([0.03, 0.06, 0.06, 0.02]) {
            assert!((got - want).abs() < 1e-12, "{adjusted:?}");
        }
        let verdicts: Vec<Verdict> = rows.iter().map(|r| r.verdict).collect();
        // Attempts are better lower: a fall is better, a rise worse.
        assert_eq!(
            verdicts,
            [
                Verdict::Better,
                Verdict::NoDifference,
                Verdict::NoDifference,
                Verdict::Worse
            ]
        );
    }

    /// Welch's interval for means 10 and 12 with standard errors 1 and 2 on 9 and 19 degrees
    /// of freedom: se = √5, df = 25 / (1/9 + 16/19).
    #[test]
    fn welch_takes_each_runs_own_interval() {
        let side = |mean: f64, se: f64, n: u64| {
            let mut values = [None; Figure::ALL.len()];
            let mut half_widths = [None; Figure::ALL.len()];
            values[0] = Some(mean);
            half_widths[0] = Some(se * t_quantile(0.95, n - 1));
            read::Summary {
                replications: n,
                intents: 100,
                tasks: 100,
                values,
                half_widths,
            }
        };
        let (d, se, df, method) =
            welch(&side(10.0, 1.0, 10), &side(12.0, 2.0, 20), Figure::Attempts).unwrap();
        assert_eq!(method, Method::Welch);
        assert!((d - 2.0).abs() < 1e-12 && (se - 5f64.sqrt()).abs() < 1e-9);
        assert!((df - 25.0 / (1.0 / 9.0 + 16.0 / 19.0)).abs() < 1e-9, "{df}");
    }
}
