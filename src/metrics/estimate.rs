//! A measured mean with its 95 % confidence interval.
//!
//! With one replication the interval is across intents (n = intents, Student's t with n − 1
//! degrees of freedom, which is the normal interval for any realistic n). With several
//! replications it is across the replications' means (n = replications, t with n − 1 degrees of
//! freedom), which also covers correlation between intents of one run.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::Sample;

/// The confidence level of every interval retrysim prints.
pub const LEVEL: f64 = 0.95;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    /// Half the width of the interval: the truth lies in mean ± half_width at the stated level.
    pub half_width: f64,
    /// Standard error of the mean.
    pub std_error: f64,
}

impl Estimate {
    /// The estimate at confidence `level` from `n` independent observations.
    pub fn at_level(m: &impl Sample, level: f64) -> Estimate {
        let n = m.count();
        if n < 2 {
            return Estimate {
                mean: m.mean(),
                half_width: f64::INFINITY,
                std_error: f64::INFINITY,
            };
        }
        let std_error = (m.variance() / n as f64).sqrt();
        Estimate {
            mean: m.mean(),
            half_width: t_quantile(level, n - 1) * std_error,
            std_error,
        }
    }

    /// The 95 % estimate.
    pub fn from_sample(m: &impl Sample) -> Estimate {
        Estimate::at_level(m, LEVEL)
    }

    /// Whether `value` lies inside the interval (its ends included).
    pub fn contains(&self, value: f64) -> bool {
        (self.mean - value).abs() <= self.half_width
    }
}

/// Degrees of freedom up to which statrs' t quantile is used: it is within 10⁻¹² of the exact
/// value there, but drifts above (0.3 % low at 10⁷, so a one-replication run of ten million
/// intents got an interval too narrow) and does not return at 10⁸.
const EXACT_T_UP_TO: u64 = 1000;

/// The two-sided Student's t critical value for confidence `level` and `df` degrees of freedom.
/// Beyond `EXACT_T_UP_TO`, the Cornish–Fisher expansion of t in 1/ν around the normal
/// quantile (Abramowitz & Stegun 26.7.5), whose first omitted term is below 10⁻¹³ there.
pub fn t_quantile(level: f64, df: u64) -> f64 {
    let p = 0.5 + level / 2.0;
    if df <= EXACT_T_UP_TO {
        // statrs inverts the t distribution by search, a few microseconds; a table asks for
        // the same level and df row after row, so the last answer is kept.
        thread_local! {
            static LAST: std::cell::Cell<(u64, u64, f64)> = const { std::cell::Cell::new((0, 0, 0.0)) };
        }
        let key = (level.to_bits(), df);
        let (bits, last_df, t) = LAST.get();
        if (bits, last_df) == key {
            return t;
        }
        let dist = StudentsT::new(0.0, 1.0, df as f64).expect("df ≥ 1 is a valid t distribution");
        let t = dist.inverse_cdf(p);
        LAST.set((key.0, key.1, t));
        return t;
    }
    let x = statrs::distribution::Normal::standard().inverse_cdf(p);
    let x2 = x * x;
    let g1 = x * (x2 + 1.0) / 4.0;
    let g2 = x * ((5.0 * x2 + 16.0) * x2 + 3.0) / 96.0;
    let g3 = x * (((3.0 * x2 + 19.0) * x2 + 17.0) * x2 - 15.0) / 384.0;
    let g4 = x * ((((79.0 * x2 + 776.0) * x2 + 1482.0) * x2 - 1920.0) * x2 - 945.0) / 92160.0;
    let nu = df as f64;
    x + (g1 + (g2 + (g3 + g4 / nu) / nu) / nu) / nu
}

/// The two-sided p-value of Student's t statistic `t` with `df` degrees of freedom (a fraction
/// for Welch's): the chance of a |t| at least this large where the truth is zero. Past ten
/// million degrees of freedom t is the normal to every digit shown.
pub fn two_sided_p(t: f64, df: f64) -> f64 {
    if t.is_nan() {
        return 1.0;
    }
    let tail = if df > 1e7 {
        statrs::distribution::Normal::standard().sf(t.abs())
    } else {
        StudentsT::new(0.0, 1.0, df.max(1.0))
            .expect("df ≥ 1 is a valid t distribution")
            .sf(t.abs())
    };
    (2.0 * tail).min(1.0)
}

/// The Wilson score interval at [`LEVEL`] for `successes` out of `trials`, as (low, high): it
/// stays inside [0, 1] and keeps its width at 0 % and 100 %, where the normal interval
/// collapses to a point.
pub fn wilson(successes: f64, trials: f64) -> (f64, f64) {
    if trials <= 0.0 {
        return (0.0, 1.0);
    }
    let z = statrs::distribution::Normal::standard().inverse_cdf(0.5 + LEVEL / 2.0);
    let p = successes / trials;
    let z2n = z * z / trials;
    let centre = (p + z2n / 2.0) / (1.0 + z2n);
    let half = z / (1.0 + z2n) * (p * (1.0 - p) / trials + z2n / (4.0 * trials)).sqrt();
    // At 0 % and 100 % the interval's end is the proportion itself, exactly (rounding in the
    // sum above leaves it a hair inside).
    let low = if successes <= 0.0 {
        0.0
    } else {
        (centre - half).max(0.0)
    };
    let high = if successes >= trials {
        1.0
    } else {
        (centre + half).min(1.0)
    };
    (low, high)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Moments;

    #[test]
    fn interval_uses_the_t_quantile() {
        // Three values 1, 2, 3: mean 2, s = 1, se = 1/√3, t(0.975, 2) = 4.3027.
        let e = Estimate::from_sample(&[1.0, 2.0, 3.0].into_iter().collect::<Moments>());
        assert!((e.mean - 2.0).abs() < 1e-12);
        assert!((e.half_width - 4.302_652_73 / 3f64.sqrt()).abs() < 1e-6);
        assert!(e.contains(4.4) && !e.contains(4.5));
    }

    /// Against the exact 97.5 % points (40-digit incomplete-beta inversion): the interval of a
    /// run of any size, up to 10¹² intents, uses the right t, and never hangs.
    #[test]
    fn t_quantiles_are_exact_at_every_size() {
        for (df, exact) in [
            (2, 4.302_652_729_749_464),
            (1000, 1.962_339_080_826_408_5),
            (1001, 1.962_336_705_280_88),
            (10_000, 1.960_201_239_890_626_3),
            (1_000_000, 1.959_966_356_814_107),
            (100_000_000, 1.959_964_008_262_766_8),
            (1_000_000_000_000, 1.959_963_984_542_426_5),
        ] {
            let t = t_quantile(0.95, df);
            assert!((t - exact).abs() < 1e-11, "df {df}: {t} against {exact}");
        }
    }

    /// Against R's `2 * pt(-t, df)`.
    #[test]
    fn p_values_are_student_t_tails() {
        assert!((two_sided_p(2.0, 10.0) - 0.073_388_034_770_740_6).abs() < 1e-9);
        assert!((two_sided_p(-2.0, 10.0) - 0.073_388_034_770_740_6).abs() < 1e-9);
        assert!((two_sided_p(1.959_963_984_540_054, 1e9) - 0.05).abs() < 1e-9);
        assert_eq!(two_sided_p(0.0, 5.0), 1.0);
        assert_eq!(two_sided_p(f64::INFINITY, 5.0), 0.0);
    }

    #[test]
    fn an_exact_zero_agrees_only_with_zero() {
        let e = Estimate::from_sample(&[0.0; 10].into_iter().collect::<Moments>());
        assert_eq!(e.half_width, 0.0);
        assert!(e.contains(0.0) && !e.contains(1e-9));
    }

    /// Wilson's interval for 0 of 10 and 8 of 10, against the published values
    /// (Newcombe 1998, table I: 0/10 → 0–0.2775; 8/10 → 0.4902–0.9433).
    #[test]
    fn the_wilson_interval_matches_published_values() {
        let (lo, hi) = wilson(0.0, 10.0);
        assert!(lo == 0.0 && (hi - 0.2775).abs() < 5e-5, "{lo} {hi}");
        let (lo, hi) = wilson(8.0, 10.0);
        assert!(
            (lo - 0.4902).abs() < 5e-5 && (hi - 0.9433).abs() < 5e-5,
            "{lo} {hi}"
        );
    }
}
