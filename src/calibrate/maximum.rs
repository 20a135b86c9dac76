//! The maximum of a smooth log-likelihood, and its observed information: what a fit's
//! estimates and their intervals are made of.
//!
//! The likelihoods `calibrate` fits have a handful of parameters, each moved to a scale on
//! which it is free (a rate's logarithm, a probability's angle), so the search needs no
//! constraints and no gradient: Nelder and Mead's simplex does. The intervals are Wald's on
//! that scale, from the inverse of the negative Hessian at the maximum.

/// Steps the simplex search takes at most.
const MOST_STEPS: usize = 4_000;
/// The search ends once the simplex is narrower than this on every parameter's scale.
const NARROWEST: f64 = 1e-7;
/// The step of the central differences that make the Hessian, on the parameters' scale.
const STEP: f64 = 1e-3;

/// The minimum of `f` near `start`, by Nelder and Mead's simplex (reflection 1, expansion 2,
/// contraction and shrink ½), the first simplex `start` and a step of ½ along each axis. Each
/// step evaluates `f` once or twice, a shrink N times more: at most (N + 2)·[`MOST_STEPS`] in all.
pub fn nelder_mead<const N: usize>(f: impl Fn(&[f64; N]) -> f64, start: [f64; N]) -> [f64; N] {
    // A point where `f` is not a number (a rate past what a float holds) is no minimum.
    let f = |x: &[f64; N]| match f(x) {
        v if v.is_nan() => f64::INFINITY,
        v => v,
    };
    let mut simplex: Vec<[f64; N]> = (0..=N)
        .map(|i| {
            let mut x = start;
            if i > 0 {
                x[i - 1] += 0.5;
            }
            x
        })
        .collect();
    let mut values: Vec<f64> = simplex.iter().map(&f).collect();
    for _ in 0..MOST_STEPS {
        let mut order: Vec<usize> = (0..=N).collect();
        order.sort_by(|&i, &j| values[i].total_cmp(&values[j]));
        let (best, worst, next) = (order[0], order[N], order[N - 1]);
        let width = (simplex.iter())
            .flat_map(|x| x.iter().zip(&simplex[best]).map(|(a, b)| (a - b).abs()))
            .fold(0.0, f64::max);
        if width < NARROWEST {
            break;
        }
        let mut centre = [0.0; N];
        for &i in &order[..N] {
            for (c, x) in centre.iter_mut().zip(&simplex[i]) {
                *c += x / N as f64;
            }
        }
        let towards = |t: f64| {
            let mut x = centre;
            for (x, w) in x.iter_mut().zip(&simplex[worst]) {
                *x += t * (w - *x);
            }
            x
        };
        let reflected = towards(-1.0);
        let fr = f(&reflected);
        if fr < values[best] {
            let expanded = towards(-2.0);
            let fe = f(&expanded);
            (simplex[worst], values[worst]) = if fe < fr {
                (expanded, fe)
            } else {
                (reflected, fr)
            };
        } else if fr < values[next] {
            (simplex[worst], values[worst]) = (reflected, fr);
        } else {
            let contracted = towards(0.5);
            let fc = f(&contracted);
            if fc < values[worst] {
                (simplex[worst], values[worst]) = (contracted, fc);
            } else {
                let to = simplex[best];
                for &i in &order[1..] {
                    for (x, b) in simplex[i].iter_mut().zip(&to) {
                        *x = (*x + b) / 2.0;
                    }
                    values[i] = f(&simplex[i]);
                }
            }
        }
    }
    let best = (0..=N)
        .min_by(|&i, &j| values[i].total_cmp(&values[j]))
        .expect("a simplex has points");
    simplex[best]
}

/// The covariance of the estimates at the maximum `x` of `l`: the inverse of the negative
/// Hessian (the observed information), by central differences of step [`STEP`]; `None` where
/// the information is not positive definite (the likelihood is flat in some direction).
pub fn covariance<const N: usize>(
    l: impl Fn(&[f64; N]) -> f64,
    x: [f64; N],
) -> Option<[[f64; N]; N]> {
    let at = |moves: &[(usize, f64)]| {
        let mut y = x;
        for &(i, d) in moves {
            y[i] += d;
        }
        l(&y)
    };
    let centre = l(&x);
    let mut information = [[0.0; N]; N];
    for (i, j) in (0..N).flat_map(|i| (0..=i).map(move |j| (i, j))) {
        let value = match i == j {
            true => -(at(&[(i, STEP)]) - 2.0 * centre + at(&[(i, -STEP)])) / (STEP * STEP),
            false => {
                let corners = at(&[(i, STEP), (j, STEP)])
                    - at(&[(i, STEP), (j, -STEP)])
                    - at(&[(i, -STEP), (j, STEP)])
                    + at(&[(i, -STEP), (j, -STEP)]);
                -corners / (4.0 * STEP * STEP)
            }
        };
        information[i][j] = value;
        information[j][i] = value;
    }
    inverse(information)
}

/// The inverse of a symmetric positive definite matrix, through its Cholesky factor; `None`
/// where it is not positive definite.
#[expect(
    clippy::needless_range_loop,
    reason = "a triangular factor is read by its indices"
)]
fn inverse<const N: usize>(m: [[f64; N]; N]) -> Option<[[f64; N]; N]> {
    // m = L·Lᵀ, L lower triangular with a positive diagonal.
    let mut l = [[0.0; N]; N];
    for i in 0..N {
        for j in 0..=i {
            let sum: f64 = (0..j).map(|k| l[i][k] * l[j][k]).sum();
            if i == j {
                let d = m[i][i] - sum;
                if !(d > 0.0 && d.is_finite()) {
                    return None;
                }
                l[i][i] = d.sqrt();
            } else {
                l[i][j] = (m[i][j] - sum) / l[j][j];
            }
        }
    }
    // m⁻¹ = L⁻ᵀ·L⁻¹, solving L·y = eₖ for each column of L⁻¹.
    let mut lower = [[0.0; N]; N];
    for k in 0..N {
        for i in k..N {
            let sum: f64 = (k..i).map(|j| l[i][j] * lower[j][k]).sum();
            lower[i][k] = (f64::from(u8::from(i == k)) - sum) / l[i][i];
        }
    }
    let mut out = [[0.0; N]; N];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, cell) in row.iter_mut().enumerate() {
            *cell = (0..N).map(|k| lower[k][i] * lower[k][j]).sum();
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quadratic bowl's minimum is found, and its covariance is the inverse of its curvature:
    /// −½·xᵀAx with A = [[4, 1], [1, 2]] has covariance A⁻¹ = [[2, −1], [−1, 4]]/7.
    #[test]
    fn a_bowl_is_found_and_its_curvature_inverted() {
        let bowl = |x: &[f64; 2]| {
            let (a, b) = (x[0] - 1.0, x[1] + 2.0);
            2.0 * a * a + a * b + b * b
        };
        let x = nelder_mead(bowl, [0.0, 0.0]);
        assert!(
            (x[0] - 1.0).abs() < 1e-6 && (x[1] + 2.0).abs() < 1e-6,
            "{x:?}"
        );
        let c = covariance(|x| -bowl(x), x).unwrap();
        let want = [[2.0 / 7.0, -1.0 / 7.0], [-1.0 / 7.0, 4.0 / 7.0]];
        for (row, w) in c.iter().zip(want) {
            for (c, w) in row.iter().zip(w) {
                assert!((c - w).abs() < 1e-6, "{c} against {w}");
            }
        }
        assert_eq!(covariance(|x: &[f64; 2]| -x[0] * x[0], [0.0, 0.0]), None);
    }
}
