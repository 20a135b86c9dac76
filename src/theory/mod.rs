//! Closed forms that measurements are checked against.
//!
//! Each attempt independently loses its request (or is refused before the commit) with
//! probability a, commits and loses its reply with probability b, and gets a reply with
//! s = 1 − a − b; q = a + b. The client retries every failure, up to N attempts (or without
//! limit), and without a key every request that reaches the commit point commits:
//!
//! - E\[attempts\] = (1 − q^N)/(1 − q), or 1/(1 − a − b) unlimited;
//! - P(success) = 1 − q^N;
//! - E\[effects\] = (1 − a)·E\[attempts\] (Wald's identity: each attempt commits with 1 − a);
//! - P(any effect) = 1 − a^N, so E\[duplicates\] = (1 − a)(1 − q^N)/(1 − q) − (1 − a^N), or
//!   b/(1 − a − b) unlimited; for N = 2 that is b(1 − a);
//! - ghost rate (client saw failure, an effect happened) = q^N − a^N;
//! - with a per-intent key the server commits at most once: duplicates = 0 exactly and
//!   E\[effects\] = 1 − a^N. A per-attempt key is no key at all as far as duplicates go;
//! - a per-attempt timeout τ abandons an attempt whose round trip takes τ or longer, with
//!   probability p; the server still commits it, so a late reply is a lost one: b → b + s·p.
//!   With no other loss, E\[attempts\] = Σ_{k<N} p^k (1 + p + p² for N = 3).

pub mod burst;
pub mod crash;
pub mod graph;
pub mod stream;

use crate::experiment::Experiment;
use crate::metrics::Measure;
use crate::model::FailureClass;
use crate::model::{Faults, LossSignal, ServerSpec, Tool, ToolKind};
use crate::policy::{
    AgentRule, Attempts, EdgeRules, Gates, Hedges, Hosts, KeyScope, Policy, RetryAfter, RetryRule,
    ShouldRetry, Timing, Wait, safety,
};
use crate::time::Tick;

/// The closed-form value of each measure for one configuration, and the losses it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosedForms {
    /// a: per-attempt loss before the commit (lost requests and server errors).
    pub a: f64,
    /// b: per-attempt loss after the commit (lost replies).
    pub b: f64,
    pub attempts: f64,
    pub effects: f64,
    pub duplicates: f64,
    pub success: f64,
    pub ghost: f64,
    /// The forms hold for each intent alone, its outcome independent of the others' in one
    /// run: false under bursts, where the intents of a run meet the same spells, so an
    /// interval across one run's intents is too narrow and one replication gives no verdict.
    pub intents_independent: bool,
}

/// What a task costs and takes by the closed forms, where they describe it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostForms {
    /// Dollars.
    pub cost_per_task: f64,
    /// Seconds from a task's start to its end, where a form gives it.
    pub completion: Option<f64>,
}

/// The cost forms of `policy` in `exp`: a model's broken streams or classic faults
/// ([`stream`]), or — a task of
/// one call to a tool priced per call, under the closed forms `forms` — E\[attempts\]·(1 − a)
/// billed attempts (Wald's identity: each attempt reaches the work with 1 − a, whatever came
/// before it) at its price.
pub fn cost(exp: &Experiment, policy: &Policy, forms: Option<&ClosedForms>) -> Option<CostForms> {
    if let Some(streams) = stream::for_policy(exp, policy) {
        return Some(streams);
    }
    let (forms, &[t]) = (forms?, exp.calls_of(policy)) else {
        return None;
    };
    let price = &exp.tools[t].price;
    // Under bursts an attempt's chance to reach the work depends on the attempts before it,
    // and Wald's identity, which the bill below reads, no longer holds.
    if exp.tools[t].burst.is_some() || price.call == 0 || price.input > 0 || price.output > 0 {
        return None;
    }
    Some(CostForms {
        cost_per_task: forms.attempts * (1.0 - forms.a) * price.dollars(0.0, 0.0),
        completion: None,
    })
}

/// The closed forms for per-attempt loss `a` before the commit, `b` after it, at most `n`
/// attempts (`None` for unlimited), with idempotency key `key`.
pub fn closed_forms(a: f64, b: f64, n: Attempts, key: KeyScope) -> ClosedForms {
    let q = a + b;
    let (attempts, success, no_effect, ghost, excess) = match n {
        Attempts::Unlimited => {
            let s = 1.0 - q;
            (1.0 / s, 1.0, 0.0, 0.0, b / s)
        }
        Attempts::AtMost(n) => {
            let sums = PowerSums::new(a, b, n);
            (
                sums.attempts,
                1.0 - sums.qn,
                sums.an,
                (b * sums.gap).min(sums.qn),
                (1.0 - a) * b * sums.excess,
            )
        }
    };
    let (effects, duplicates) = match key {
        KeyScope::PerIntent | KeyScope::Forward | KeyScope::Derived => (1.0 - no_effect, 0.0),
        KeyScope::None | KeyScope::PerAttempt => ((1.0 - a) * attempts, excess),
    };
    ClosedForms {
        a,
        b,
        attempts,
        effects,
        duplicates,
        success,
        ghost,
        intents_independent: true,
    }
}

/// The sums behind the capped forms, built term by term from non-negative parts so that no
/// value comes from subtracting near-equal numbers: with b = 0 the duplicates and the ghost rate
/// are exactly 0, and never a rounding error below it.
///
/// With h_k = (q^(k+1) − a^(k+1))/(q − a) = Σ_{j≤k} q^j a^(k−j) (so q^k − a^k = b·h_(k−1)):
/// - E\[duplicates\] = (1 − a)·Σ_{k<N} (q^k − a^k) = (1 − a)·b·Σ_{k<N−1} h_k;
/// - ghost rate = q^N − a^N = b·h_(N−1), which is at most q^N.
struct PowerSums {
    /// Σ_{k<N} q^k.
    attempts: f64,
    qn: f64,
    an: f64,
    /// h_(N−1).
    gap: f64,
    /// Σ_{k<N−1} h_k.
    excess: f64,
}

impl PowerSums {
    /// Terms added one by one; a longer tail is added in closed form, where the terms left are
    /// so far apart that subtracting them loses nothing that shows.
    const TERMS: u32 = 1 << 10;

    fn new(a: f64, b: f64, n: u32) -> PowerSums {
        let q = a + b;
        let (mut attempts, mut qk, mut ak, mut h, mut excess) = (0.0, 1.0, 1.0, 0.0, 0.0);
        for k in 0..n.min(Self::TERMS) {
            attempts += qk;
            // h_k = q·h_(k−1) + a^k.
            h = q * h + ak;
            if k + 1 < n {
                excess += h;
            }
            qk *= q;
            ak *= a;
        }
        if n > Self::TERMS {
            // From k = T on: Σ q^k = q^T·G(q, N − T), and, as h_k = (q^(k+1) − a^(k+1))/b,
            // Σ_{T≤k<N−1} h_k = (q^(T+1)·G(q, m) − a^(T+1)·G(a, m))/b with m = N − 1 − T.
            let t = Self::TERMS;
            let m = n - 1 - t;
            attempts += qk * geometric(q, n - t);
            qk = q.powf(f64::from(n));
            ak = a.powf(f64::from(n));
            (h, excess) = if b > 0.0 {
                let tail = (q * q.powf(f64::from(t)) * geometric(q, m)
                    - a * a.powf(f64::from(t)) * geometric(a, m))
                    / b;
                ((qk - ak).max(0.0) / b, excess + tail.max(0.0))
            } else {
                // Multiplied by b = 0: nothing to add.
                (0.0, excess)
            };
        }
        PowerSums {
            attempts,
            qn: qk,
            an: ak,
            gap: h,
            excess,
        }
    }
}

/// G(x, m) = 1 + x + … + x^(m−1), which is m when x = 1.
fn geometric(x: f64, m: u32) -> f64 {
    if x < 1.0 {
        (1.0 - x.powf(f64::from(m))) / (1.0 - x)
    } else {
        f64::from(m)
    }
}

/// The closed forms for a configuration of an experiment, where they apply: every tool the
/// workload calls fails in the same way, its server takes every request at once (a line would
/// make attempts wait on each other), and every failure that can occur is retried (or only one
/// attempt is allowed, so nothing is).
///
/// A timeout τ turns a late reply into a lost one that still commits: with p = P(round trip ≥ τ),
/// b becomes b + (1 − a − b)·p, while a lost request or a 5xx fails either way. p is exact only
/// when the network legs are constant, so a timeout on other tools has no closed form here.
pub fn for_policy(exp: &Experiment, policy: &Policy) -> Option<ClosedForms> {
    // A service's attempt fails with its calls: the call graph's forms are in [`graph`].
    if exp
        .called(exp.calls_of(policy))
        .any(|t| !exp.graph.stages[t].is_empty())
    {
        return None;
    }
    if !modelled(exp, policy) {
        return None;
    }
    // A recorded health changes the faults with time, as the trace did: no form follows it.
    if exp
        .called_tools(exp.calls_of(policy))
        .any(|t| t.health.is_some())
    {
        return None;
    }
    // Crashed workers' calls are taken over: only the crash forms count that.
    if let Some(crash) = &exp.workload.crash {
        return crash::for_policy(exp, policy, crash);
    }
    // Faults in bursts make an intent's attempts meet states that depend on each other.
    if exp
        .called_tools(exp.calls_of(policy))
        .any(|t| t.burst.is_some())
    {
        return burst::for_policy(exp, policy);
    }
    let mut losses = exp
        .called(exp.calls_of(policy))
        .map(|t| losses(&exp.tools[t], policy.time.waits[t].timeout, policy))
        .collect::<Option<Vec<(f64, f64)>>>()?
        .into_iter();
    let (a, b) = losses.next()?;
    if losses.any(|other| other != (a, b)) {
        return None;
    }
    // A receiver that ignores keys commits every request, as if none were sent.
    let honours_keys = exp
        .called_tools(exp.calls_of(policy))
        .all(|t| t.server.idempotent);
    let key = if honours_keys {
        policy.rule.key
    } else {
        KeyScope::None
    };
    if policy.rule.lookup_before_retry {
        return exp
            .called_tools(exp.calls_of(policy))
            .all(|t| reconciles_exactly(t, policy))
            .then(|| reconciled(a, b, policy.rule.retry.max_attempts));
    }
    Some(closed_forms(a, b, policy.rule.retry.max_attempts, key))
}

/// The closed forms when every ambiguous failure is looked up before a resend, the lookup always
/// answers and sees every commit at once, and the receiver honours the key: a lost reply is then
/// found committed and ends the intent with a success, and only a lost request (a lookup that
/// finds nothing) is sent again. That is the no-key process with b = 0: attempts
/// (1 − a^N)/(1 − a), success and effects 1 − a^N, no duplicates and no ghosts. The losses
/// reported stay the tool's own a and b.
pub fn reconciled(a: f64, b: f64, n: Attempts) -> ClosedForms {
    ClosedForms {
        b,
        ..closed_forms(a, 0.0, n, KeyScope::PerIntent)
    }
}

/// Whether the forms model `policy`'s knobs. Every field of every group is named, so that a knob
/// added to a policy must be placed here — in the model the forms describe, or out of it —
/// rather than be silently claimed by a closed form.
fn modelled(exp: &Experiment, policy: &Policy) -> bool {
    let Policy {
        name: _,
        rule,
        time,
        hedges,
        gates,
        hosts,
        agent,
        edge,
        note: _,
    } = policy;
    let RetryRule {
        retry: _,
        // Backoffs space attempts out in time; the counts do not depend on when they go.
        backoff: _,
        throttle_backoff: _,
        // Nested layers multiply their caps.
        layers,
        key: _,
        // Both read per tool in `losses` and `reconciles_exactly`.
        safety_gate: _,
        lookup_before_retry: _,
        payload_drift: _,
        // A wait the server asks for delays a retry; one it says to skip is a fault in `losses`.
        pushback: _,
        should_retry,
        // Resumed streams are the stream forms' (`stream`).
        resume: _,
    } = rule;
    let Timing {
        // Read per tool in `losses`, with the tie already in the waits.
        timeout: _,
        tie: _,
        waits: _,
        limits,
    } = time;
    let Gates {
        scope: _,
        breaker,
        retry_budget,
        concurrency,
        // Client-side buckets delay sends; they refuse none.
        send_rate: _,
        send_tokens: _,
    } = gates;
    // Replicas alike in faults and work are one server to the forms (`losses` checks), so
    // which one an attempt goes to changes no count.
    let Hosts {
        balancer: _,
        retry_host: _,
        outlier_detection: _,
    } = hosts;
    // The task's calls are the tools read; a re-plan is a task-level retry the call-level forms
    // leave to the task's counts; what outlives a crash matters only where workers crash,
    // which `for_policy` sends to the crash forms.
    let AgentRule {
        calls: _,
        replan: _,
        durability: _,
        // Where reserved money goes changes no count; the admission rule acts only where
        // leases are held for a term, which the crash forms stand aside for.
        release: _,
        within_lease: _,
    } = agent;
    // An edge's rules act in a call graph, whose forms are in [`graph`].
    let EdgeRules {
        propagation: _,
        fallback: _,
        overrides: _,
    } = edge;
    let Hedges { delay, mode: _ } = hedges;
    // A server's advice, obeyed, stops some retries and adds others.
    let advised = exp
        .called_tools(exp.calls_of(policy))
        .any(|t| t.server.should_retry_header);
    // A deadline, a dispatch cap, a cancellation, a breaker or a retry budget cuts retrying
    // short of any closed form; a hedge adds attempts no form here counts.
    !(limits.any()
        || breaker.is_some()
        || retry_budget.is_some()
        || *delay != Wait::None
        || layers.is_some()
        || concurrency.is_some()
        || (advised && *should_retry == ShouldRetry::Obey))
}

/// Whether a lookup at `tool` under `policy` behaves as [`reconciled`] assumes: it never fails,
/// never lags, comes after a reply that can no longer be on its way (no timeout abandons an
/// attempt whose commit is still to come), and a resend under the key is safe.
fn reconciles_exactly(tool: &Tool, policy: &Policy) -> bool {
    // A 5xx after the commit is not ambiguous: it is never looked up, and resent as a 5xx.
    tool.lookup.failure == 0.0
        && tool.faults.error_after_commit == 0.0
        && tool.lookup.lag == Tick::ZERO
        && tool.server.idempotent
        && policy.time.timeout == Wait::None
}

/// (a, b) for one tool under one policy that sets the timer `wait` on it, if the closed forms
/// can describe it.
fn losses(tool: &Tool, wait: Option<Tick>, policy: &Policy) -> Option<(f64, f64)> {
    // A line at the server, a rate limit, a receiver that forgets keys, a script, an outage, a
    // lookup that commits nothing, or a gate that may stop a retry: none of these is the model
    // the closed forms describe.
    let gated = policy.rule.safety_gate && !safety::replay_is_safe(tool, policy.rule.key);
    // Under a key the server honours, a retry with other arguments ends in a conflict.
    let drifting = policy.rule.payload_drift > 0.0 && safety::replay_is_safe(tool, policy.rule.key);
    // Every part of the server named, so that a part added to it must be placed here: in the
    // model the closed forms describe, or out of it.
    let ServerSpec {
        kind,
        idempotent: _,
        key_retention,
        workers,
        line: _,
        outages,
        capacity,
        rate_limit,
        token_limit,
        slowdown,
        drop_expired,
        abandon_at_deadline,
        version_check: _,
        // Advice changes nothing until a policy obeys it (see `for_policy`).
        should_retry_header: _,
        // A header of a rate limit's, which the forms leave out.
        retry_after_ms: _,
        // Only a worker that stalls past its lease sends with a stale token.
        fencing: _,
    } = &tool.server;
    let unlike = workers.is_some()
        || key_retention.is_some()
        || tool.script.is_some()
        || *slowdown > Tick::ZERO
        || *drop_expired
        || *abandon_at_deadline
        || rate_limit.is_some()
        || token_limit.is_some()
        || !capacity.is_empty()
        || !outages.is_empty()
        || *kind != ToolKind::Write;
    // Replicas alike in their faults and work are one server to the forms; unlike, they are not.
    let alike = tool.one_fault_table()
        && (tool.replicas.iter()).all(|r| r.service_time == tool.service_time);
    if unlike || gated || drifting || !alike {
        return None;
    }
    // Every fault named, for the same reason.
    let Faults {
        request_loss,
        server_error,
        reply_loss,
        throttled,
        forbidden,
        invalid,
        connect_failure,
        error_after_commit,
        overloaded,
        retry_after,
    } = tool.faults;
    // An overload the forms do not split from the other refusals.
    if overloaded > 0.0 {
        return None;
    }
    let late = match wait {
        None => 0.0,
        Some(w) => tool.times_out(w)?,
    };
    let retried = |c: FailureClass| policy.rule.retry.retry_on.contains(c);
    let lost = request_loss + reply_loss > 0.0;
    // A 429 that names a wait ends the intent where the policy stops on Retry-After, and is
    // retried for naming it where the policy says so.
    let told = policy.rule.pushback.retries && retry_after.is_some();
    let throttle_retried = (retried(FailureClass::Throttled) || told)
        && !(retry_after.is_some() && policy.rule.pushback.mode == RetryAfter::Stop);
    let occurring = [
        (
            FailureClass::Reset,
            lost && tool.loss_seen_as == LossSignal::Reset && late < 1.0,
        ),
        (FailureClass::ServerError, server_error > 0.0 && late < 1.0),
        (FailureClass::Forbidden, forbidden > 0.0 && late < 1.0),
        (FailureClass::Invalid, invalid > 0.0 && late < 1.0),
        (FailureClass::Connect, connect_failure > 0.0),
        (
            FailureClass::Timeout,
            wait.is_some() && (late > 0.0 || lost && tool.loss_seen_as == LossSignal::Silence),
        ),
    ];
    let single = policy.rule.retry.max_attempts == Attempts::AtMost(1);
    let throttles = throttled > 0.0 && late < 1.0;
    if !single
        && (occurring.iter().any(|&(c, occurs)| occurs && !retried(c))
            || throttles && !throttle_retried)
    {
        return None;
    }
    // A failed connection is seen after the request's leg, not the round trip the timer is
    // measured against: the forms hold it only where no timer fires.
    if connect_failure > 0.0 && late > 0.0 {
        return None;
    }
    // A refusal before the commit, or a failed connection, acts like a lost request: no
    // effect, and tried again.
    let a = request_loss + server_error + throttled + forbidden + invalid + connect_failure;
    // A 5xx after the commit acts like a lost reply: an effect, and tried again.
    let committed = reply_loss + error_after_commit;
    let delivered = 1.0 - a - committed;
    Some((a, committed + delivered * late))
}

/// The measures each row compares with theory, with their closed forms.
pub const COMPARED: [Measure; 5] = [
    Measure::Attempts,
    Measure::Effects,
    Measure::Duplicates,
    Measure::Success,
    Measure::Ghost,
];

/// The comparisons the summary table makes at one point, `exp`: one per compared figure for
/// every configuration that has closed forms. A sweep's table makes the sum over its points
/// ([`crate::sweep::Census`]), counted before the run; a row whose run leaves theory behind (an
/// intent cut at the horizon) only makes the bound stricter than it needs to be.
pub fn comparisons(exp: &Experiment) -> usize {
    let rows = (exp.policies.iter())
        .filter(|policy| for_policy(exp, policy).is_some())
        .count();
    rows * COMPARED.len()
}

/// The comparisons the edge table makes at one point, `exp`: one per edge of every
/// configuration whose calls have a closed form. Summed over a sweep as [`comparisons`] is.
pub fn edge_comparisons(exp: &Experiment) -> usize {
    (exp.policies.iter())
        .filter_map(|policy| graph::edge_calls(exp, policy))
        .map(|forms| forms.len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(x: f64, y: f64) -> bool {
        (x - y).abs() < 1e-12
    }

    #[test]
    fn the_duplicate_curve_of_the_design() {
        let curve: Vec<f64> = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
            .into_iter()
            .map(|b| closed_forms(0.1, b, Attempts::Unlimited, KeyScope::None).duplicates)
            .collect();
        for (got, want) in curve.iter().zip([0.0, 0.125, 0.2857, 0.5, 0.8, 1.25]) {
            assert!((got - want).abs() < 5e-5, "{got} vs {want}");
        }
    }

    #[test]
    fn capped_forms_reduce_to_the_small_cases() {
        let (a, b) = (0.1, 0.2);
        let one = closed_forms(a, b, Attempts::AtMost(1), KeyScope::None);
        assert!(
            close(one.attempts, 1.0) && close(one.duplicates, 0.0) && close(one.effects, 1.0 - a)
        );
        assert!(close(one.ghost, b));
        let two = closed_forms(a, b, Attempts::AtMost(2), KeyScope::None);
        assert!(close(two.attempts, 1.0 + a + b));
        assert!(close(two.duplicates, b * (1.0 - a)));
        // Many attempts approach the unlimited forms.
        let many = closed_forms(a, b, Attempts::AtMost(200), KeyScope::None);
        let unlimited = closed_forms(a, b, Attempts::Unlimited, KeyScope::None);
        assert!(
            close(many.attempts, unlimited.attempts)
                && close(many.duplicates, unlimited.duplicates)
        );
        assert!(close(unlimited.attempts, 1.0 / 0.7) && close(unlimited.duplicates, 0.2 / 0.7));
    }

    #[test]
    fn a_per_intent_key_leaves_attempts_and_removes_duplicates() {
        for n in [Attempts::AtMost(3), Attempts::Unlimited] {
            let no_key = closed_forms(0.1, 0.2, n, KeyScope::None);
            let keyed = closed_forms(0.1, 0.2, n, KeyScope::PerIntent);
            assert_eq!(no_key.attempts, keyed.attempts);
            assert_eq!(keyed.duplicates, 0.0);
            assert_eq!(closed_forms(0.1, 0.2, n, KeyScope::PerAttempt), no_key);
        }
    }

    #[test]
    fn no_loss_after_the_commit_means_exactly_no_duplicates() {
        // The difference form (1 − a)·attempts − (1 − a^N) left −1e−16 here.
        let two = closed_forms(0.1, 0.0, Attempts::AtMost(2), KeyScope::None);
        assert_eq!((two.duplicates, two.ghost), (0.0, 0.0));
        for a in (0..=100).map(|i| f64::from(i) / 100.0) {
            for n in [1, 2, 3, 7, 50, 5000, u32::MAX] {
                let t = closed_forms(a, 0.0, Attempts::AtMost(n), KeyScope::None);
                assert_eq!((t.duplicates, t.ghost), (0.0, 0.0), "a = {a}, N = {n}");
            }
        }
    }

    #[test]
    fn the_forms_are_finite_and_never_negative_over_a_fine_grid() {
        let counts = [1, 2, 3, 4, 5, 10, 100, 1024, 1025, 1_000_000, u32::MAX];
        let grid = (0..=100).map(|i| f64::from(i) / 100.0);
        for a in grid.clone() {
            for b in grid.clone().filter(|b| a + b <= 1.0) {
                let caps = counts.iter().map(|&n| Attempts::AtMost(n));
                let all = caps.chain((a + b < 1.0).then_some(Attempts::Unlimited));
                for n in all {
                    for key in [KeyScope::None, KeyScope::PerIntent] {
                        let t = closed_forms(a, b, n, key);
                        for (name, v) in [
                            ("attempts", t.attempts),
                            ("effects", t.effects),
                            ("duplicates", t.duplicates),
                            ("success", t.success),
                            ("ghost", t.ghost),
                        ] {
                            assert!(
                                v.is_finite() && v >= 0.0,
                                "{name} = {v} at a = {a}, b = {b}, {n:?}, {key:?}"
                            );
                        }
                        assert!(
                            t.success <= 1.0 && t.ghost <= 1.0 && t.attempts >= 1.0,
                            "{t:?} at {n:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn the_sums_match_the_textbook_forms_where_those_do_not_cancel() {
        for (a, b) in [(0.1, 0.2), (0.3, 0.3), (0.0, 0.5), (0.45, 0.5), (0.2, 0.8)] {
            let q: f64 = a + b;
            for n in [1, 2, 3, 10, 100, 1024, 1025, 5000, 100_000] {
                let t = closed_forms(a, b, Attempts::AtMost(n), KeyScope::None);
                let (qn, an) = (q.powf(f64::from(n)), a.powf(f64::from(n)));
                let attempts = if q < 1.0 {
                    (1.0 - qn) / (1.0 - q)
                } else {
                    f64::from(n)
                };
                let duplicates = (1.0 - a) * attempts - (1.0 - an);
                let rel = |x: f64, y: f64| (x - y).abs() <= 1e-9 * y.abs().max(1.0);
                assert!(
                    rel(t.attempts, attempts),
                    "{a} {b} {n}: {} vs {attempts}",
                    t.attempts
                );
                assert!(
                    rel(t.duplicates, duplicates),
                    "{a} {b} {n}: {} vs {duplicates}",
                    t.duplicates
                );
                assert!(
                    rel(t.ghost, qn - an),
                    "{a} {b} {n}: {} vs {}",
                    t.ghost,
                    qn - an
                );
            }
        }
    }
}
