//! Closed forms under faults that come in bursts (Gilbert–Elliott, [`crate::model::burst`]).
//!
//! The tool is good or bad; it turns bad at rate α = 1/(mean good spell) and good again at
//! β = 1/(mean bad spell), so it is bad a share π_b = α/(α + β) of the time, and from a known
//! state it forgets it at rate λ = α + β: P(bad after t | bad now) = π_b + (1 − π_b)·e^(−λt),
//! P(bad after t | good now) = π_b·(1 − e^(−λt)). An attempt meets the state at its **send**
//! (as the run draws it), and fails before the commit with a_s, after it with b_s, in state s.
//!
//! So the states an intent's attempts meet form a Markov chain over the gaps between its sends.
//! The first attempt meets the long-run state (tasks arrive at times the spells do not know);
//! attempt k + 1 is sent D_k after attempt k: the time the client took to hear of the failure
//! (its round trip) plus the backoff before retry k. Every transition probability is linear in
//! e^(−λD), so for a random gap its expectation is the same form with L_k = E\[e^(−λD_k)\] in
//! place of e^(−λD): exact, as the legs and the jitter are drawn from words of their own,
//! independent of the spells and of each other (so L_k is the product of each part's).
//!
//! With v_k(s) the chance that attempts 0 … k − 1 all failed and attempt k meets state s
//! (v_0 = π), v_(k+1)(s') = Σ_s v_k(s)·q_s·(π_(s') + L_(k+1)·(1{s = s'} − π_(s'))), q = a + b;
//! w_k the same with pre-commit failures only (a in place of q). Then
//! - E\[attempts\] = Σ_(k<N) |v_k|, P(success) = 1 − v_(N−1)·q;
//! - without a key, E\[effects\] = Σ_k v_k·(1 − a), and as the first commit is at k with
//!   w_k·(1 − a), E\[duplicates\] = Σ_k (v_k − w_k)·(1 − a), each term at least 0;
//! - ghost rate = v_(N−1)·q − w_(N−1)·a; with a per-intent key, effects = 1 − w_(N−1)·a.
//!
//! Where a_s and b_s do not depend on s this is the independent forms ([`super::closed_forms`]):
//! v_k = q^k·π. Unlimited attempts sum the chain until its tail, where L no longer changes, is
//! summed whole: Σ_(j≥0) v·M^j = v·(I − M)^(−1).

use super::ClosedForms;
use crate::experiment::Experiment;
use crate::model::{Faults, LossSignal, Tool};
use crate::policy::{Attempts, Cap, Growth, Jitter, KeyScope, Policy};

/// The two states' losses and how often the tool is bad.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spells {
    /// (a, b) while good, and while bad.
    pub good: (f64, f64),
    pub bad: (f64, f64),
    /// π_b, the long-run share of time bad.
    pub bad_share: f64,
}

/// The gaps between an intent's sends, as what each leaves of the state the last one met:
/// `decay(k)` is L_k = E\[e^(−λD_k)\] for the gap before attempt k (k ≥ 1), the same for every
/// k from `steady` on.
pub struct Gaps<'a> {
    pub decay: &'a dyn Fn(u32) -> f64,
    pub steady: u32,
}

/// The most retries whose gap is looked at for the point from which it no longer changes (the
/// backoff's cap, or a gap so long it leaves nothing of the state): a backoff still growing
/// past it has no form.
const GROWING: u32 = 1 << 16;

/// The forms for `policy` in `exp`, whose task calls a tool whose faults come in bursts, where
/// the chain above describes it exactly: each task one call, to one tool, its first attempt at
/// a time the spells do not know (tasks never waiting for a client), no client-side bucket
/// holding a retry back,
/// and every gap between sends known in law — the same round trip for every failure (no
/// failed connection, which comes back after the request's leg alone; no timer that fires; no
/// server-named wait), legs and backoff whose E\[e^(−λD)\] has a closed form
/// ([`crate::model::Latency::decay`], [`crate::policy::Backoff::decay`]). Outside that, `None`.
pub fn for_policy(exp: &Experiment, policy: &Policy) -> Option<ClosedForms> {
    let &[t] = exp.calls_of(policy) else {
        return None;
    };
    let tool = &exp.tools[t];
    let burst = tool.burst.as_ref()?;
    let workload = &exp.workload;
    // Every task its own client: none waits, so each first attempt is sent at a time the
    // spells do not know (its arrival; at tick 0 for a batch, the timeline's long-run start).
    let on_their_own = workload
        .tasks
        .is_some_and(|n| n <= u64::from(workload.clients));
    // A client-side bucket may hold a retry back for a token: a gap the forms do not know.
    let gates = &policy.gates;
    let held = gates.send_rate.is_some() || gates.send_tokens.is_some();
    if !on_their_own || held || !tool.replicas.is_empty() || policy.rule.lookup_before_retry {
        return None;
    }
    let wait = policy.time.waits[t].timeout;
    if wait.is_some_and(|w| tool.times_out(w) != Some(0.0)) {
        return None;
    }
    // Each state's losses, as the independent forms read a tool with that state's faults.
    let state = |faults: Faults| -> Option<(f64, f64)> {
        let heard_after_the_round_trip = faults.connect_failure == 0.0
            && faults.throttled == 0.0
            && faults.retry_after.is_none()
            && (faults.request_loss + faults.reply_loss == 0.0
                || tool.loss_seen_as == LossSignal::Reset);
        let plain = Tool {
            faults,
            burst: None,
            ..tool.clone()
        };
        heard_after_the_round_trip.then(|| super::losses(&plain, wait, policy))?
    };
    let spells = Spells {
        good: state(tool.faults)?,
        bad: state(burst.in_bad)?,
        bad_share: burst.bad_share(),
    };
    // λ per tick; the gap before retry k is the round trip, then the backoff.
    let rate = 1.0 / burst.good.0.max(1) as f64 + 1.0 / burst.bad.0.max(1) as f64;
    let round_trip = [
        &tool.request_latency,
        &tool.service_time,
        &tool.reply_latency,
    ]
    .iter()
    .map(|l| l.decay(rate))
    .product::<Option<f64>>()?;
    let backoff = &policy.rule.backoff;
    let decay = |k: u32| backoff.decay(k, rate).map(|d| d * round_trip);
    // From which retry the gap stays as it is: a constant curve from the second retry (the
    // first may be sent at once); a growing one once it is at its cap — where the jitter comes
    // after the cap, only without a jitter, as a range clipped at the cap still changes — or
    // once its gaps leave nothing of the state.
    let settled = |k: u32| {
        let at_cap = (backoff.max_delay).is_some_and(|c| backoff.capped(k) >= c)
            && (backoff.cap == Cap::BeforeJitter || backoff.jitter == Jitter::None);
        backoff.growth == Growth::Constant || at_cap || decay(k) == Some(0.0)
    };
    let steady = (2..GROWING).find(|&k| settled(k))?;
    decay(steady)?;
    let gaps = Gaps {
        decay: &|k| decay(k).unwrap_or(0.0),
        steady,
    };
    let key = match tool.server.idempotent {
        true => policy.rule.key,
        false => KeyScope::None,
    };
    forms(&spells, &gaps, policy.rule.retry.max_attempts, key)
}

/// A row vector over (good, bad).
type Row = [f64; 2];
/// A 2 × 2 matrix, by rows.
type Matrix = [Row; 2];

/// The most gaps the chain is walked one by one before its tail is summed whole (or, capped,
/// the attempts left are taken by powers of the steady matrix).
const WALKED: u32 = 1 << 12;

/// The forms for `spells` with gaps `gaps`, at most `n` attempts, key `key`; `None` where the
/// chain never ends (unlimited attempts that a state fails for ever with no gap to leave it).
pub fn forms(spells: &Spells, gaps: &Gaps, n: Attempts, key: KeyScope) -> Option<ClosedForms> {
    let pi = [1.0 - spells.bad_share, spells.bad_share];
    let a = [spells.good.0, spells.bad.0];
    let q = [spells.good.0 + spells.good.1, spells.bad.0 + spells.bad.1];
    // The chain's step into attempt k: a state's failures (q, or a alone), then the gap.
    let step = |fail: Row, k: u32| -> Matrix {
        let l = (gaps.decay)(k.min(gaps.steady.max(1)));
        std::array::from_fn(|s| {
            std::array::from_fn(|t| fail[s] * (pi[t] + l * (f64::from(u8::from(s == t)) - pi[t])))
        })
    };
    let commit = [1.0 - a[0], 1.0 - a[1]];
    let (mut v, mut w) = (pi, pi);
    let mut sums = Sums::default();
    let walked = match n {
        Attempts::AtMost(n) => n.min(WALKED.max(gaps.steady)),
        Attempts::Unlimited => WALKED.max(gaps.steady),
    };
    for k in 0..walked {
        if k > 0 {
            v = times(v, &step(q, k));
            w = times(w, &step(a, k));
        }
        sums.add(v, w, commit);
    }
    // What is left, at the steady gap: v·M^j for the j to come.
    let (m, ma) = (step(q, walked.max(1)), step(a, walked.max(1)));
    let (last_v, last_w) = match n {
        Attempts::AtMost(n) if n > walked => {
            let left = n - walked;
            let (nv, nw) = (times(v, &m), times(w, &ma));
            sums.add(geometric(nv, &m, left), geometric(nw, &ma, left), commit);
            (times(v, &power(&m, left)), times(w, &power(&ma, left)))
        }
        Attempts::AtMost(_) => (v, w),
        Attempts::Unlimited => {
            let (nv, nw) = (times(v, &m), times(w, &ma));
            let tail = |x: Row, m: &Matrix| inverse_minus(m).map(|inv| times(x, &inv));
            sums.add(tail(nv, &m)?, tail(nw, &ma)?, commit);
            ([0.0; 2], [0.0; 2])
        }
    };
    let failed = dot(last_v, q);
    let no_effect = dot(last_w, a);
    let (effects, duplicates) = match key {
        KeyScope::PerIntent | KeyScope::Forward | KeyScope::Derived => (1.0 - no_effect, 0.0),
        KeyScope::None | KeyScope::PerAttempt => (sums.effects, sums.excess),
    };
    let mean = |x: (f64, f64)| -> f64 { pi[0] * x.0 + pi[1] * x.1 };
    Some(ClosedForms {
        a: mean((spells.good.0, spells.bad.0)),
        b: mean((spells.good.1, spells.bad.1)),
        attempts: sums.attempts,
        effects,
        duplicates,
        success: 1.0 - failed,
        ghost: (failed - no_effect).max(0.0),
        intents_independent: false,
    })
}

/// The sums over attempts the forms are made of.
#[derive(Default)]
struct Sums {
    attempts: f64,
    effects: f64,
    /// Σ (v_k − w_k)·(1 − a): the commits after the first.
    excess: f64,
}

impl Sums {
    fn add(&mut self, v: Row, w: Row, commit: Row) {
        self.attempts += v[0] + v[1];
        self.effects += dot(v, commit);
        self.excess += (v[0] - w[0]).max(0.0) * commit[0] + (v[1] - w[1]).max(0.0) * commit[1];
    }
}

fn dot(x: Row, y: Row) -> f64 {
    x[0] * y[0] + x[1] * y[1]
}

fn times(x: Row, m: &Matrix) -> Row {
    [
        x[0] * m[0][0] + x[1] * m[1][0],
        x[0] * m[0][1] + x[1] * m[1][1],
    ]
}

fn product(a: &Matrix, b: &Matrix) -> Matrix {
    std::array::from_fn(|i| times(a[i], b))
}

/// m^n, by squaring.
fn power(m: &Matrix, mut n: u32) -> Matrix {
    let (mut out, mut base) = ([[1.0, 0.0], [0.0, 1.0]], *m);
    while n > 0 {
        if n & 1 == 1 {
            out = product(&out, &base);
        }
        base = product(&base, &base);
        n >>= 1;
    }
    out
}

/// x·(I + m + … + m^(n−1)), by doubling: S(2j) = S(j)·(I + m^j).
fn geometric(x: Row, m: &Matrix, n: u32) -> Row {
    // (sum of the first j powers, m^j), built from the top bit of n down.
    let (mut sum, mut pow): (Matrix, Matrix) = ([[0.0; 2]; 2], [[1.0, 0.0], [0.0, 1.0]]);
    for bit in (0..32).rev() {
        // Doubling: S(2j) = S(j) + S(j)·m^j, m^(2j) = m^j·m^j.
        let shifted = product(&sum, &pow);
        sum = std::array::from_fn(|i| std::array::from_fn(|j| sum[i][j] + shifted[i][j]));
        pow = product(&pow, &pow);
        if n >> bit & 1 == 1 {
            // S(j + 1) = S(j) + m^j, m^(j+1) = m^j·m.
            sum = std::array::from_fn(|i| std::array::from_fn(|j| sum[i][j] + pow[i][j]));
            pow = product(&pow, m);
        }
    }
    times(x, &sum)
}

/// (I − m)^(−1), where the chain's mass leaves for good (`None` where it never does).
fn inverse_minus(m: &Matrix) -> Option<Matrix> {
    let (p, q, r, s) = (1.0 - m[0][0], -m[0][1], -m[1][0], 1.0 - m[1][1]);
    let det = p * s - q * r;
    // Every entry is at least 0 and each row sums to at most 1: the determinant is 0 only
    // where some mass never leaves.
    (det > 1e-300).then(|| [[s / det, -q / det], [-r / det, p / det]])
}

#[cfg(test)]
mod tests;
