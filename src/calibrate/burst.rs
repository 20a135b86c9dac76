//! Whether a trace's failures come together, and the bursts that would make them so.
//!
//! **The test.** An operation's calls, in the order they started, are a sequence of successes
//! and failures. The Wald–Wolfowitz runs test counts its runs R (maximal stretches of one kind):
//! with n₁ failures and n₂ successes in independent order, E(R) = μ = 2n₁n₂/n + 1 and
//! Var(R) = (μ − 1)(μ − 2)/(n − 1), and z = (R − μ)/σ is standard normal for large counts.
//! Failures that come in bursts make too few runs: the verdict is *bursty* where
//! z < −2.326, the one-sided 1 % point — so an operation whose failures are independent is
//! called bursty one time in a hundred. The test conditions on n₁ and n₂: it asks about order,
//! not about the rate.
//!
//! **The fit.** A bursty operation is fitted to the burst process retrysim simulates
//! (Gilbert–Elliott with exponential spells, [`crate::model::Burst`]) in its simplest form: a
//! tool that fails every call in its bad spells and none in its good ones. The tool is then a
//! two-state Markov chain in continuous time, seen at the calls' start times: from a state b
//! (1 bad, 0 good), the chance of being bad a gap Δ later is π_b + (b − π_b)·e^(−λΔ), where α
//! is the rate of leaving the good state, β of leaving the bad one, λ = α + β and π_b = α/λ.
//! α and β are the maximum of that likelihood over the observed gaps (which stays valid when
//! calls come faster in bad spells, as retries do: the likelihood conditions on when the calls
//! came), and their 95 % intervals come from the observed information (the inverse of the
//! log-likelihood's Hessian). A failure in a good spell is read as a bad spell of its own, so a tool with
//! isolated failures between its bursts is fitted with shorter, more frequent bad spells.

/// The one-sided 1 % point of the standard normal: a runs z below it says *bursty*.
pub const BURSTY_Z: f64 = -2.326_347_874_040_841;
/// The fewest failures and successes each for a verdict: below, the normal approximation of
/// the run count is poor, and the answer is *too few*.
pub const FEWEST: u64 = 10;

/// The runs test of one sequence of outcomes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Runs {
    pub failures: u64,
    pub successes: u64,
    pub runs: u64,
    /// The runs expected in independent order.
    pub expected: f64,
    /// (runs − expected) / its standard deviation; `None` with fewer than [`FEWEST`] of either.
    pub z: Option<f64>,
}

impl Runs {
    /// The test of `failed`, the outcomes in order.
    pub fn of(failed: impl IntoIterator<Item = bool>) -> Runs {
        let (mut n1, mut n2, mut runs, mut last) = (0u64, 0u64, 0u64, None);
        for f in failed {
            if f {
                n1 += 1
            } else {
                n2 += 1
            }
            if last != Some(f) {
                runs += 1;
                last = Some(f);
            }
        }
        let n = (n1 + n2) as f64;
        let (a, b) = (n1 as f64, n2 as f64);
        let expected = if n > 0.0 { 2.0 * a * b / n + 1.0 } else { 0.0 };
        let z = (n1 >= FEWEST && n2 >= FEWEST).then(|| {
            let var = (expected - 1.0) * (expected - 2.0) / (n - 1.0);
            (runs as f64 - expected) / var.sqrt()
        });
        Runs {
            failures: n1,
            successes: n2,
            runs,
            expected,
            z,
        }
    }

    /// Whether the failures come in bursts, at the 1 % error rate; `None` with too few.
    pub fn bursty(&self) -> Option<bool> {
        self.z.map(|z| z < BURSTY_Z)
    }
}

/// A fitted burst process: the rates of leaving each state, per second, with their 95 %
/// intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// α, leaving the good state: 1/α is the mean good spell.
    pub alpha: Estimated,
    /// β, leaving the bad state: 1/β is the mean bad spell.
    pub beta: Estimated,
}

/// A fitted value and its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimated {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Estimated {
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// The log-likelihood of `calls` (start in seconds, failed), in time order, under rates
/// `alpha` and `beta`: the first call from the long-run state, each later one from the one
/// before.
fn log_likelihood(calls: &[(f64, bool)], alpha: f64, beta: f64) -> f64 {
    let lambda = alpha + beta;
    let pi_b = alpha / lambda;
    let p = |bad: bool, p_bad: f64| if bad { p_bad } else { 1.0 - p_bad };
    let Some(&(_, first)) = calls.first() else {
        return 0.0;
    };
    let mut sum = p(first, pi_b).max(f64::MIN_POSITIVE).ln();
    for w in calls.windows(2) {
        let (gap, from, to) = ((w[1].0 - w[0].0).max(0.0), w[0].1, w[1].1);
        let stay = (-lambda * gap).exp();
        let was = if from { 1.0 } else { 0.0 };
        let p_bad = pi_b + (was - pi_b) * stay;
        sum += p(to, p_bad).max(f64::MIN_POSITIVE).ln();
    }
    sum
}

/// α and β that maximise the likelihood of `calls` (start in seconds, failed; in time order),
/// with their intervals; `None` where the calls hold no transition either way (nothing to fit).
pub fn fit(calls: &[(f64, bool)]) -> Option<Fit> {
    let into_bad = calls.windows(2).filter(|w| !w[0].1 && w[1].1).count();
    let into_good = calls.windows(2).filter(|w| w[0].1 && !w[1].1).count();
    if into_bad == 0 || into_good == 0 {
        return None;
    }
    // Start from the spells' mean lengths in time, then climb the likelihood in log-rates.
    let span = (calls.last()?.0 - calls.first()?.0).max(f64::MIN_POSITIVE);
    let failed = calls.iter().filter(|c| c.1).count() as f64 / calls.len() as f64;
    let start = [
        (into_bad as f64 / (span * (1.0 - failed))).ln(),
        (into_good as f64 / (span * failed)).ln(),
    ];
    let f = |x: [f64; 2]| -log_likelihood(calls, x[0].exp(), x[1].exp());
    let best = nelder_mead(f, start);
    let (alpha, beta) = (best[0].exp(), best[1].exp());
    let covariance = inverse(hessian(|a, b| log_likelihood(calls, a, b), (alpha, beta)))?;
    let interval = |value: f64, var: f64| {
        let half = 1.959_963_984_540_054 * var.max(0.0).sqrt();
        Estimated {
            value,
            low: (value - half).max(0.0),
            high: value + half,
        }
    };
    Some(Fit {
        alpha: interval(alpha, covariance[0][0]),
        beta: interval(beta, covariance[1][1]),
    })
}

/// The minimum of `f` near `start`, by Nelder and Mead's simplex: two parameters, at most 400
/// steps, ending once the simplex is narrower than 10⁻⁷ in log-rate (the log-likelihood here is
/// smooth and has one peak).
fn nelder_mead(f: impl Fn([f64; 2]) -> f64, start: [f64; 2]) -> [f64; 2] {
    let mut simplex = [
        start,
        [start[0] + 0.5, start[1]],
        [start[0], start[1] + 0.5],
    ];
    let mut values = simplex.map(&f);
    for _ in 0..400 {
        let mut order = [0, 1, 2];
        order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
        let [b, m, w] = order;
        let width = (simplex[w][0] - simplex[b][0])
            .abs()
            .max((simplex[w][1] - simplex[b][1]).abs())
            .max((simplex[m][0] - simplex[b][0]).abs())
            .max((simplex[m][1] - simplex[b][1]).abs());
        if width < 1e-7 {
            break;
        }
        let centre = [
            (simplex[b][0] + simplex[m][0]) / 2.0,
            (simplex[b][1] + simplex[m][1]) / 2.0,
        ];
        let towards = |t: f64| {
            [
                centre[0] + t * (simplex[w][0] - centre[0]),
                centre[1] + t * (simplex[w][1] - centre[1]),
            ]
        };
        let reflected = towards(-1.0);
        let fr = f(reflected);
        if fr < values[b] {
            let expanded = towards(-2.0);
            let fe = f(expanded);
            (simplex[w], values[w]) = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < values[m] {
            (simplex[w], values[w]) = (reflected, fr);
        } else {
            let contracted = towards(0.5);
            let fc = f(contracted);
            if fc < values[w] {
                (simplex[w], values[w]) = (contracted, fc);
            } else {
                for i in [m, w] {
                    simplex[i] = [
                        (simplex[i][0] + simplex[b][0]) / 2.0,
                        (simplex[i][1] + simplex[b][1]) / 2.0,
                    ];
                    values[i] = f(simplex[i]);
                }
            }
        }
    }
    let best = (0..3)
        .min_by(|&i, &j| values[i].total_cmp(&values[j]))
        .expect("three points");
    simplex[best]
}

/// The negative Hessian of `l` at `(a, b)` by central differences: the observed information.
fn hessian(l: impl Fn(f64, f64) -> f64, (a, b): (f64, f64)) -> [[f64; 2]; 2] {
    let (ha, hb) = (a * 1e-3, b * 1e-3);
    let at = |da: f64, db: f64| l(a + da, b + db);
    let aa = (at(ha, 0.0) - 2.0 * at(0.0, 0.0) + at(-ha, 0.0)) / (ha * ha);
    let bb = (at(0.0, hb) - 2.0 * at(0.0, 0.0) + at(0.0, -hb)) / (hb * hb);
    let ab = (at(ha, hb) - at(ha, -hb) - at(-ha, hb) + at(-ha, -hb)) / (4.0 * ha * hb);
    [[-aa, -ab], [-ab, -bb]]
}

/// The inverse of a 2 × 2 matrix; `None` where it is singular or not positive definite (the
/// likelihood is flat in some direction: no interval).
fn inverse(m: [[f64; 2]; 2]) -> Option<[[f64; 2]; 2]> {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    (det > 0.0 && m[0][0] > 0.0).then(|| {
        [
            [m[1][1] / det, -m[0][1] / det],
            [-m[1][0] / det, m[0][0] / det],
        ]
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::rng::{self, Source, Streams};
    use crate::variate::unit_open_low;

    fn streams(seed: u64) -> Streams {
        Streams {
            seed,
            point: 0,
            replication: 0,
        }
    }

    /// Calls at Poisson times (`rate` a second) over `seconds`, failing with chance `p`
    /// independently: the trace of a tool without bursts.
    fn independent(seed: u64, rate: f64, seconds: f64, p: f64) -> Vec<(f64, bool)> {
        let mut s = streams(seed).stream(Source::Arrivals, 0);
        let mut t = 0.0;
        let mut out = Vec::new();
        loop {
            t -= unit_open_low(rng::word(&mut s)).ln() / rate;
            if t > seconds {
                return out;
            }
            out.push((t, unit_open_low(rng::word(&mut s)) <= p));
        }
    }

    /// Calls at Poisson times over `seconds` to a tool whose spells alternate, good ones of
    /// mean 1/α and bad ones of mean 1/β, failing every call in a bad spell.
    fn bursty(seed: u64, rate: f64, seconds: f64, (alpha, beta): (f64, f64)) -> Vec<(f64, bool)> {
        let mut s = streams(seed).stream(Source::Bursts, 0);
        let mut draw = || unit_open_low(rng::word(&mut s));
        let mut bad = draw() < alpha / (alpha + beta);
        let mut until = -draw().ln() / if bad { beta } else { alpha };
        let mut t = 0.0;
        let mut out = Vec::new();
        loop {
            t -= draw().ln() / rate;
            if t > seconds {
                return out;
            }
            while t >= until {
                bad = !bad;
                until -= draw().ln() / if bad { beta } else { alpha };
            }
            out.push((t, bad));
        }
    }

    /// The runs test's error rate: of 400 independent traces (2 000 calls each, 5 % failing),
    /// at most 12 are called bursty. At the 1 % level the count is Binomial(400, 0.01), mean 4,
    /// and P(X > 12) < 10⁻³: more would say the level is wrong.
    #[test]
    fn independent_failures_are_called_bursty_one_time_in_a_hundred() {
        let called = (0..400)
            .filter(|&seed| {
                let calls = independent(seed, 20.0, 100.0, 0.05);
                Runs::of(calls.iter().map(|c| c.1)).bursty() == Some(true)
            })
            .count();
        assert!(called <= 12, "{called} of 400 called bursty");
    }

    /// Bursts of mean 1 s every 19 s on average (π_b = 0.05, the rate of the independent
    /// traces above), seen by 20 calls a second: every one of 50 traces is called bursty, and
    /// α = 1/19 and β = 1 fall inside their 95 % intervals in at least 44 of the 50 — the
    /// count of misses is at most Binomial(50, 0.05) > 6 with chance under 1.2 %.
    #[test]
    fn bursts_are_found_and_their_rates_fitted() {
        let (alpha, beta) = (1.0 / 19.0, 1.0);
        let (mut found, mut alpha_in, mut beta_in) = (0, 0, 0);
        for seed in 0..50 {
            let calls = bursty(seed, 20.0, 2_000.0, (alpha, beta));
            found += usize::from(Runs::of(calls.iter().map(|c| c.1)).bursty() == Some(true));
            let fit = fit(&calls).expect("transitions both ways");
            alpha_in += usize::from(fit.alpha.contains(alpha));
            beta_in += usize::from(fit.beta.contains(beta));
        }
        assert_eq!(found, 50);
        assert!(
            alpha_in >= 44 && beta_in >= 44,
            "{alpha_in} and {beta_in} of 50"
        );
    }

    /// The runs of a short sequence counted by hand: F F S F S S has four runs; with three of
    /// each, μ = 2·3·3/6 + 1 = 4; too few for a z.
    #[test]
    fn runs_are_counted_as_by_hand() {
        let r = Runs::of([true, true, false, true, false, false]);
        assert_eq!((r.failures, r.successes, r.runs), (3, 3, 4));
        assert_eq!((r.expected, r.z), (4.0, None));
    }
}
