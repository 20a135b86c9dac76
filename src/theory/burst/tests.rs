use super::*;
use crate::theory::closed_forms;

/// P(t) = e^(Qt) for the two-state generator, by its Taylor series after halving t until the
/// series is short, then squaring back: an exact computation that does not use the forms'
/// P_bb(t) = π_b + (1 − π_b)·e^(−λt).
fn transitions(alpha: f64, beta: f64, t: f64) -> Matrix {
    let q = [[-alpha, alpha], [beta, -beta]];
    let mut halvings = 0;
    let mut scale = t;
    while scale * (alpha + beta) > 0.01 {
        scale /= 2.0;
        halvings += 1;
    }
    let mut out = [[1.0, 0.0], [0.0, 1.0]];
    let mut term = [[1.0, 0.0], [0.0, 1.0]];
    for k in 1..30 {
        term = product(&term, &q);
        term = term.map(|r| r.map(|x| x * scale / f64::from(k)));
        out = std::array::from_fn(|i| std::array::from_fn(|j| out[i][j] + term[i][j]));
    }
    for _ in 0..halvings {
        out = product(&out, &out);
    }
    out
}

/// Every figure by summing over every path of states and outcomes of `n` attempts, each gap
/// before attempt k a mix of the `gaps(k)` (length, weight): the definition, not the chain.
fn by_paths(
    (alpha, beta): (f64, f64),
    good: (f64, f64),
    bad: (f64, f64),
    n: u32,
    gaps: &dyn Fn(u32) -> Vec<(f64, f64)>,
) -> [f64; 5] {
    let pi = [alpha / (alpha + beta), 0.0];
    let pi = [1.0 - pi[0], pi[0]];
    let loss = [good, bad];
    let moves: Vec<Matrix> = (1..n)
        .map(|k| {
            let mut m = [[0.0; 2]; 2];
            for (t, weight) in gaps(k) {
                let p = transitions(alpha, beta, t);
                m = std::array::from_fn(|i| std::array::from_fn(|j| m[i][j] + weight * p[i][j]));
            }
            m
        })
        .collect();
    // (attempts, effects, duplicates, success, ghost), summed over paths.
    let mut out = [0.0; 5];
    // A path so far: its probability, its state, attempts made, commits made.
    let mut paths = vec![(pi[0], 0usize, 0u32), (pi[1], 1usize, 0u32)];
    for k in 0..n {
        let mut next = Vec::new();
        for (p, s, commits) in paths {
            out[0] += p;
            let (a, b) = loss[s];
            // Success ends the path with a commit; the two failures go on (or end at n).
            let done = commits + 1;
            out[1] += p * (1.0 - a - b) * f64::from(done);
            out[2] += p * (1.0 - a - b) * f64::from(done - 1);
            out[3] += p * (1.0 - a - b);
            for (q, commits) in [(a, commits), (b, commits + 1)] {
                if k + 1 == n {
                    out[1] += p * q * f64::from(commits);
                    out[2] += p * q * f64::from(commits.saturating_sub(1));
                    out[4] += p * q * f64::from(u8::from(commits > 0));
                } else {
                    for (t, m) in moves[k as usize][s].iter().enumerate() {
                        next.push((p * q * m, t, commits));
                    }
                }
            }
        }
        paths = next;
    }
    out
}

fn figures(f: &ClosedForms) -> [f64; 5] {
    [f.attempts, f.effects, f.duplicates, f.success, f.ghost]
}

fn spells((alpha, beta): (f64, f64), good: (f64, f64), bad: (f64, f64)) -> Spells {
    Spells {
        good,
        bad,
        bad_share: alpha / (alpha + beta),
    }
}

/// The forms for `n` attempts, no key, at these rates, losses and gaps, against the sum over
/// every path with the gaps mixed as `mixes` says, to 1e-12 in every figure.
fn assert_the_paths_sum(
    (rates, good, bad): ((f64, f64), (f64, f64), (f64, f64)),
    gaps: &Gaps,
    n: u32,
    mixes: &dyn Fn(u32) -> Vec<(f64, f64)>,
) {
    let want = by_paths(rates, good, bad, n, mixes);
    let got = forms(
        &spells(rates, good, bad),
        gaps,
        Attempts::AtMost(n),
        KeyScope::None,
    );
    for (g, w) in figures(&got.unwrap()).iter().zip(want) {
        assert!((g - w).abs() < 1e-12, "{rates:?} n = {n}: {g} vs {w}");
    }
}

/// A constant gap, at several rates and losses: the chain is the sum over every path.
#[test]
fn with_a_constant_gap_the_forms_are_the_sum_over_every_path() {
    for (rates, good, bad, gap) in [
        ((0.1, 0.9), (0.0, 0.0), (0.9, 0.0), 0.5),
        ((0.2, 1.0), (0.05, 0.1), (0.5, 0.3), 2.0),
        ((1.0, 1.0), (0.1, 0.2), (0.3, 0.6), 0.1),
        ((0.01, 0.5), (0.02, 0.0), (0.7, 0.2), 10.0),
    ] {
        let lambda = rates.0 + rates.1;
        let decay = |_: u32| libm::exp(-lambda * gap);
        let gaps = Gaps {
            decay: &decay,
            steady: 1,
        };
        for n in [1, 2, 3, 6] {
            let paths = |_: u32| vec![(gap, 1.0)];
            assert_the_paths_sum((rates, good, bad), &gaps, n, &paths);
        }
    }
}

/// A jittered gap that grows: full jitter on an exponential backoff (each gap a whole tick
/// uniform in 0 … 2^(k−1)·8, plus a 5-tick round trip), with rates per tick that make the gaps
/// matter. The forms take E[e^(−λD)] from `Backoff::decay` and `Latency::decay`; the paths
/// average the transition matrix over every gap one by one.
#[test]
fn with_jittered_gaps_the_forms_are_the_sum_over_every_path() {
    use crate::model::Latency;
    use crate::policy::{Backoff, Growth, Jitter};
    use crate::time::Tick;
    let backoff = Backoff {
        growth: Growth::Exponential,
        initial_delay: Tick(8),
        multiplier: 2.0,
        max_delay: Some(Tick(40)),
        jitter: Jitter::Full,
        ..Backoff::IMMEDIATE
    };
    let round_trip = Latency::Uniform {
        min: Tick(3),
        max: Tick(7),
    };
    for (rates, good, bad) in [
        ((0.02, 0.1), (0.05, 0.05), (0.8, 0.1)),
        ((0.05, 0.05), (0.1, 0.2), (0.4, 0.4)),
    ] {
        let lambda = rates.0 + rates.1;
        let decay = |k: u32| backoff.decay(k, lambda).unwrap() * round_trip.decay(lambda).unwrap();
        let gaps = Gaps {
            decay: &decay,
            steady: 4,
        };
        let mixes = |k: u32| {
            let top = backoff.capped(k).0;
            let mut mix = Vec::new();
            for j in 0..=top {
                for r in 3..=7u64 {
                    mix.push(((j + r) as f64, 1.0 / ((top + 1) * 5) as f64));
                }
            }
            mix
        };
        for n in [2, 4, 6] {
            assert_the_paths_sum((rates, good, bad), &gaps, n, &mixes);
        }
    }
}

/// Where the bad state fails as the good one does, the state met changes nothing: the forms
/// are the independent ones, to 1e-12, capped or not, with a key or without.
#[test]
fn equal_states_are_the_independent_forms() {
    for (a, b) in [(0.1, 0.2), (0.0, 0.3), (0.25, 0.0), (0.05, 0.6)] {
        for rates in [(0.1, 0.9), (1.0, 0.01)] {
            for l in [0.0, 0.3, 1.0] {
                let decay = |_: u32| l;
                let gaps = Gaps {
                    decay: &decay,
                    steady: 1,
                };
                for n in [
                    Attempts::AtMost(1),
                    Attempts::AtMost(3),
                    Attempts::AtMost(10_000),
                    Attempts::Unlimited,
                ] {
                    for key in [KeyScope::None, KeyScope::PerIntent] {
                        let s = spells(rates, (a, b), (a, b));
                        let got = forms(&s, &gaps, n, key).unwrap();
                        let want = closed_forms(a, b, n, key);
                        for (g, w) in figures(&got).iter().zip(figures(&want)) {
                            assert!((g - w).abs() < 1e-12, "{a} {b} {n:?} {key:?}: {g} vs {w}");
                        }
                        assert!((got.a - a).abs() < 1e-15 && (got.b - b).abs() < 1e-15);
                    }
                }
            }
        }
    }
}

/// Unlimited attempts are the limit of capped ones; a state that fails every attempt with no
/// gap to leave it has no form.
#[test]
fn unlimited_attempts_are_the_limit_and_a_trap_has_no_form() {
    let rates = (0.2, 0.8);
    let s = spells(rates, (0.1, 0.1), (0.6, 0.3));
    let decay = |k: u32| 0.9_f64.powi(k.min(5) as i32);
    let gaps = Gaps {
        decay: &decay,
        steady: 5,
    };
    let unlimited = forms(&s, &gaps, Attempts::Unlimited, KeyScope::None).unwrap();
    let capped = forms(&s, &gaps, Attempts::AtMost(100_000), KeyScope::None).unwrap();
    for (g, w) in figures(&unlimited).iter().zip(figures(&capped)) {
        assert!((g - w).abs() < 1e-9, "{g} vs {w}");
    }
    let trapped = spells(rates, (0.1, 0.1), (1.0, 0.0));
    let stuck = |_: u32| 1.0;
    let never = Gaps {
        decay: &stuck,
        steady: 1,
    };
    assert!(forms(&trapped, &never, Attempts::Unlimited, KeyScope::None).is_none());
}
