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
//! (Gilbert–Elliott with exponential spells, [`crate::model::Burst`]): a tool good or bad in
//! turn, leaving the good state at rate α and the bad one at rate β, whose calls fail with
//! chance p_good in a good spell and p_bad in a bad one. The state is hidden: seen at the
//! calls' start times it is a two-state Markov chain in continuous time, which from a state b
//! (1 bad, 0 good) is bad a gap Δ later with chance π_b + (b − π_b)·e^(−λΔ), where λ = α + β
//! and π_b = α/λ; the likelihood of the outcomes comes from the forward recursion over the
//! calls. The four are the maximum of that likelihood (by a simplex search), which stays valid
//! when calls come faster in bad spells, as retries do: it conditions on when the calls came. Their
//! 95 % intervals come from the observed information, on the scale the search moves on (a
//! rate's logarithm, a chance's angle), so a chance the data put at 0 has an interval from 0.

use super::maximum;

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

/// A fitted burst process: the rates of leaving each state, per second, and the share of
/// calls that fail in each, with their 95 % intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// α, leaving the good state: 1/α is the mean good spell.
    pub alpha: Estimated,
    /// β, leaving the bad state: 1/β is the mean bad spell.
    pub beta: Estimated,
    /// The chance that a call fails in a good spell, and in a bad one (the larger: the bad
    /// state is the one that fails more).
    pub fail_good: Estimated,
    pub fail_bad: Estimated,
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

/// The two-sided 95 % point of the standard normal.
const Z95: f64 = 1.959_963_984_540_054;

/// The process at `x`, a point of the search: α and β are exp(x₀) and exp(x₁), the chances of
/// failing sin²(x₂) and sin²(x₃), so every point is a process and a chance of exactly 0 or 1
/// lies inside the search (where the likelihood is flat in its angle, and the information
/// still says how far from it the data allow).
fn process(x: &[f64; 4]) -> [f64; 4] {
    [
        x[0].exp(),
        x[1].exp(),
        x[2].sin().powi(2),
        x[3].sin().powi(2),
    ]
}

/// The log-likelihood of `calls` (start in seconds, failed), in time order, under the process
/// `[α, β, p_good, p_bad]`, by the forward recursion: the chance of the bad state is carried
/// from call to call, moved by the chain over each gap and by Bayes' rule at each outcome.
fn log_likelihood(calls: &[(f64, bool)], [alpha, beta, p_good, p_bad]: [f64; 4]) -> f64 {
    let lambda = alpha + beta;
    let pi_b = alpha / lambda;
    let (mut bad, mut last) = (pi_b, calls.first().map_or(0.0, |c| c.0));
    let mut sum = 0.0;
    for &(at, failed) in calls {
        bad = pi_b + (bad - pi_b) * (-lambda * (at - last).max(0.0)).exp();
        last = at;
        let (good_says, bad_says) = match failed {
            true => (p_good, p_bad),
            false => (1.0 - p_good, 1.0 - p_bad),
        };
        let seen = ((1.0 - bad) * good_says + bad * bad_says).max(f64::MIN_POSITIVE);
        sum += seen.ln();
        bad = bad * bad_says / seen;
    }
    sum
}

/// The process that maximises the likelihood of `calls` (start in seconds, failed; in time
/// order), with its intervals; `None` where the calls hold no transition either way (nothing
/// to fit), the likelihood is flat at its peak, or the fit does not tell the states apart
/// (their chances' intervals overlap, or a spell's length is unbounded).
pub fn fit(calls: &[(f64, bool)]) -> Option<Fit> {
    let into_bad = calls.windows(2).filter(|w| !w[0].1 && w[1].1).count();
    let into_good = calls.windows(2).filter(|w| w[0].1 && !w[1].1).count();
    if into_bad == 0 || into_good == 0 {
        return None;
    }
    // Start from the failure runs as spells (their mean lengths in time), failing rarely in
    // good ones and mostly in bad ones.
    let span = (calls.last()?.0 - calls.first()?.0).max(f64::MIN_POSITIVE);
    let failed = calls.iter().filter(|c| c.1).count() as f64 / calls.len() as f64;
    let angle = |p: f64| p.sqrt().asin();
    let start = [
        (into_bad as f64 / (span * (1.0 - failed))).ln(),
        (into_good as f64 / (span * failed)).ln(),
        angle(0.01),
        angle(0.9),
    ];
    let l = |x: &[f64; 4]| log_likelihood(calls, process(x));
    let best = maximum::nelder_mead(|x| -l(x), start);
    // Each angle to [0, π/2], where sin² is one to one; the bad state the one failing more.
    let folded = |a: f64| {
        let a = a.rem_euclid(std::f64::consts::PI);
        a.min(std::f64::consts::PI - a)
    };
    let (good, bad) = (folded(best[2]), folded(best[3]));
    let x = match good <= bad {
        true => [best[0], best[1], good, bad],
        false => [best[1], best[0], bad, good],
    };
    let covariance = maximum::covariance(l, x)?;
    let half = |i: usize| Z95 * covariance[i][i].sqrt();
    let rate = |i: usize| Estimated {
        value: x[i].exp(),
        low: (x[i] - half(i)).exp(),
        high: (x[i] + half(i)).exp(),
    };
    let chance = |i: usize| {
        let quarter = std::f64::consts::FRAC_PI_2;
        let p = |a: f64| a.clamp(0.0, quarter).sin().powi(2);
        Estimated {
            value: p(x[i]),
            low: p(x[i] - half(i)),
            high: p(x[i] + half(i)),
        }
    };
    let fit = Fit {
        alpha: rate(0),
        beta: rate(1),
        fail_good: chance(2),
        fail_bad: chance(3),
    };
    // Two states are a fit only where the data tell them apart: their chances of failing
    // apart at 95 %, and every spell's length bounded.
    let apart = fit.fail_good.high < fit.fail_bad.low;
    let bounded = [fit.alpha, fit.beta]
        .iter()
        .all(|e| e.low > 0.0 && e.high.is_finite());
    (apart && bounded).then_some(fit)
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
    /// mean 1/α and bad ones of mean 1/β, failing with chance `good` in a good spell and
    /// `bad` in a bad one.
    fn bursty(
        seed: u64,
        rate: f64,
        seconds: f64,
        [alpha, beta, good, bad]: [f64; 4],
    ) -> Vec<(f64, bool)> {
        let mut s = streams(seed).stream(Source::Bursts, 0);
        let mut draw = || unit_open_low(rng::word(&mut s));
        let mut in_bad = draw() < alpha / (alpha + beta);
        let mut until = -draw().ln() / if in_bad { beta } else { alpha };
        let mut t = 0.0;
        let mut out = Vec::new();
        loop {
            t -= draw().ln() / rate;
            if t > seconds {
                return out;
            }
            while t >= until {
                in_bad = !in_bad;
                until -= draw().ln() / if in_bad { beta } else { alpha };
            }
            out.push((t, draw() <= if in_bad { bad } else { good }));
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

    /// How many of `traces` traces of `process` (α, β, p_good, p_bad) are called bursty, and
    /// how many of each of the four fitted intervals hold the true value, and the fits.
    fn fitted(
        process: [f64; 4],
        rate: f64,
        seconds: f64,
        traces: u64,
    ) -> (usize, [usize; 4], Vec<Fit>) {
        let (mut found, mut inside, mut fits) = (0, [0; 4], Vec::new());
        for seed in 0..traces {
            let calls = bursty(seed, rate, seconds, process);
            found += usize::from(Runs::of(calls.iter().map(|c| c.1)).bursty() == Some(true));
            let fit = fit(&calls).expect("transitions both ways");
            let estimates = [fit.alpha, fit.beta, fit.fail_good, fit.fail_bad];
            for ((n, e), truth) in inside.iter_mut().zip(estimates).zip(process) {
                *n += usize::from(e.contains(truth));
            }
            fits.push(fit);
        }
        (found, inside, fits)
    }

    /// Bursts of mean 1 s every 19 s on average (π_b = 0.05, the rate of the independent
    /// traces above) that fail every call, seen by 20 calls a second: every one of 50 traces
    /// is called bursty, and α = 1/19, β = 1, p_good = 0 and p_bad = 1 fall inside their 95 %
    /// intervals in at least 44 of the 50 each — a count of misses that is at most
    /// Binomial(50, 0.05) > 6 with chance under 1.2 %. The chances sit at the ends of their
    /// range, which their intervals reach, and so does every estimate of them, within 0.5 %.
    #[test]
    fn bursts_that_fail_every_call_are_found_and_fitted() {
        let (found, inside, fits) = fitted([1.0 / 19.0, 1.0, 0.0, 1.0], 20.0, 2_000.0, 50);
        assert_eq!(found, 50);
        assert!(inside.iter().all(|&n| n >= 44), "{inside:?} of 50");
        // Intervals at the ends of the range reach them whatever the estimate: the estimates
        // themselves must lie there too.
        for fit in &fits {
            assert!(
                fit.fail_good.value < 0.005 && fit.fail_bad.value > 0.995,
                "{fit:?}"
            );
        }
    }

    /// A tool that also fails between its bursts: good spells of 30 s failing 2 % of calls,
    /// bad ones of 3 s failing 60 %, seen by 10 calls a second for 40 minutes. All 50 traces
    /// are called bursty and each of the four true values lies in its interval in at least 44
    /// of the 50 (the bound above). A fit that read every failure as a bad spell would put
    /// the bad spells far shorter than 3 s.
    #[test]
    fn bursts_among_scattered_failures_are_fitted_with_both_chances() {
        let (found, inside, _) = fitted([1.0 / 30.0, 1.0 / 3.0, 0.02, 0.6], 10.0, 2_400.0, 50);
        assert_eq!(found, 50);
        assert!(inside.iter().all(|&n| n >= 44), "{inside:?} of 50");
    }

    /// Independent failures hold no two states to tell apart: fitted anyway (the runs test
    /// would not ask), at most 3 of 20 traces of 2 000 calls failing 5 % give a fit. A fit
    /// needs the good state's 95 % interval to end below the bad one's start, and so at least
    /// one of them to miss the one true chance: under 5 % a trace, so more than 3 of 20 has a
    /// chance under 1.6 % (Binomial(20, 0.05)).
    #[test]
    fn independent_failures_give_no_fit() {
        let fitted = (0..20)
            .filter(|&seed| fit(&independent(seed, 20.0, 100.0, 0.05)).is_some())
            .count();
        assert!(fitted <= 3, "{fitted} of 20 fitted");
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
