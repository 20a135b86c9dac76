//! The call graph's closed form: calls per top-level intent on every edge, for independent
//! layers. An attempt at a tool succeeds when every required call of each stage it reaches
//! succeeds and its own work does not fail (a 5xx with probability s, its `server_error`):
//!
//! - a call over edge e to tool C with N attempts fails with Fₑ = q_C^N, where q_C is the
//!   chance one attempt at C fails, and makes E\[attempts\] = (1 − q_C^N)/(1 − q_C) of them
//!   (N when q_C = 1);
//! - a stage passes when each of its required calls succeeds; an attempt at C reaches stage k
//!   when every stage before it passed, and fails with q_C = 1 − (1 − s_C)·Π_stages P(pass);
//! - calls on an edge per top-level intent are the attempts at its caller per top-level intent
//!   × the calls per attempt (the chance the attempt reaches the call's stage) × E\[attempts\].
//!
//! Three layers of three attempts each at a tool that always fails make 3 × 3 × 3 = 27 calls
//! at the bottom; one layer retrying makes 3. The form holds where each edge's policy is a
//! plain capped retry of 5xx (no budget, breaker, deadline, cap, hedge, layers or gates), each
//! tool fails only with 5xx (`server_error`), and nothing cuts an attempt short (no timeout,
//! outage, capacity window, rate limit or script), and no call falls back.

use crate::experiment::Experiment;
use crate::model::{FailureClass, Faults, Latency, Tool};
use crate::policy::{Attempts, Policy, Wait};
use crate::time::Tick;

/// Calls per top-level intent on each edge of `exp`'s graph under configuration `policy`,
/// where the form holds.
pub fn edge_calls(exp: &Experiment, policy: &Policy) -> Option<Vec<f64>> {
    if !holds(exp, policy) {
        return None;
    }
    let graph = &exp.graph;
    let mut forms = Forms {
        exp,
        policy,
        fails: vec![None; exp.tools.len()],
    };
    // Top-level intents split over the task's calls as its tasks make them: each task calls
    // every tool of its list once, in order (or stage by stage), going on only after a success
    // (of every call the stage needs).
    let mut per_edge = vec![0.0; graph.edges.len()];
    let (mut reached, mut intents) = (1.0, 0.0);
    let one_by_one: Vec<Vec<(usize, bool)>>;
    let stages = match (&exp.workload.stages, &policy.agent.calls) {
        (Some(stages), None) => stages,
        _ => {
            one_by_one = exp
                .calls_of(policy)
                .iter()
                .map(|&t| vec![(t, false)])
                .collect();
            &one_by_one
        }
    };
    for stage in stages {
        let mut passes = 1.0;
        for &(t, optional) in stage {
            let e = graph.top(t);
            per_edge[e] += reached;
            intents += reached;
            if !optional {
                passes *= 1.0 - forms.call_fails(e);
            }
        }
        reached *= passes;
    }
    let mut at_tool = vec![0.0; exp.tools.len()];
    for (e, edge) in graph.edges.iter().enumerate() {
        if edge.caller.is_none() {
            per_edge[e] = per_edge[e] / intents * forms.attempts(e);
            at_tool[edge.callee] += per_edge[e];
        }
    }
    // Then down the graph, each tool once every call into it is known.
    for caller in top_down(exp) {
        // Calls made per attempt at the caller: the chance each call's stage is reached.
        let mut reach = 1.0;
        for stage in &graph.stages[caller] {
            for call in stage {
                per_edge[call.edge] += at_tool[caller] * reach;
            }
            reach *= forms.passes(stage);
        }
        for (e, edge) in graph.edges.iter().enumerate() {
            if edge.caller == Some(caller) {
                // `per_edge[e]` holds the intents over the edge: times their attempts.
                per_edge[e] *= forms.attempts(e);
                at_tool[edge.callee] += per_edge[e];
            }
        }
    }
    Some(per_edge)
}

/// Whether the form holds: every edge's policy a plain capped retry of 5xx, every tool
/// failing only with 5xx, nothing cutting an attempt short.
fn holds(exp: &Experiment, policy: &Policy) -> bool {
    let plain = |p: &Policy, callee: usize| {
        !(p.time.limits.any()
            || p.gates.breaker.is_some()
            || p.gates.retry_budget.is_some()
            || p.hedges.delay != Wait::None
            || p.rule.layers.is_some()
            || p.gates.concurrency.is_some()
            || p.gates.send_rate.is_some()
            || p.time
                .waits
                .get(callee)
                .is_some_and(|w| w.timeout.is_some()))
            && p.rule.retry.retry_on.contains(FailureClass::ServerError)
    };
    let only_5xx = |t: usize| {
        let tool = &exp.tools[t];
        let s = &tool.server;
        let faults = Faults {
            server_error: tool.faults.server_error,
            ..Faults::default()
        };
        tool.faults == faults
            && tool.script.is_none()
            && tool.one_fault_table()
            && s.outages.is_empty()
            && s.capacity.is_empty()
            && s.rate_limit.is_none()
    };
    // A fallback's calls follow the primary's failures, which a cooldown makes depend on time:
    // no form is claimed for a graph that falls back.
    !exp.graph.falls_back
        && (exp.graph.edges.iter().enumerate())
            .all(|(e, edge)| plain(policy.on_edge(e), edge.callee) && only_5xx(edge.callee))
}

/// Each tool's chance that one attempt fails, found from the bottom up as asked for.
struct Forms<'a> {
    exp: &'a Experiment,
    policy: &'a Policy,
    fails: Vec<Option<f64>>,
}

impl Forms<'_> {
    /// The chance one attempt at `t` fails: its own 5xx, or a stage that does not pass (the
    /// graph is acyclic, so the recursion ends).
    fn attempt_fails(&mut self, t: usize) -> f64 {
        if let Some(q) = self.fails[t] {
            return q;
        }
        let exp = self.exp;
        let reach: f64 = (exp.graph.stages[t].iter())
            .map(|stage| self.passes(stage))
            .product();
        let q = 1.0 - (1.0 - exp.tools[t].faults.server_error) * reach;
        self.fails[t] = Some(q);
        q
    }

    /// The chance a stage passes: each of its required calls succeeds.
    fn passes(&mut self, stage: &[crate::model::Call]) -> f64 {
        (stage.iter().filter(|c| !c.optional))
            .map(|c| 1.0 - self.call_fails(c.edge))
            .product()
    }

    /// The chance a call over edge `e` fails after all its attempts: q^N.
    fn call_fails(&mut self, e: usize) -> f64 {
        let q = self.attempt_fails(self.exp.graph.edges[e].callee);
        q.powi(limit(self.policy.on_edge(e)))
    }

    /// The attempts a call over edge `e` makes: (1 − q^N)/(1 − q), or N where q = 1.
    fn attempts(&mut self, e: usize) -> f64 {
        let n = limit(self.policy.on_edge(e));
        let q = self.attempt_fails(self.exp.graph.edges[e].callee);
        if q >= 1.0 {
            f64::from(n)
        } else {
            (1.0 - q.powi(n)) / (1.0 - q)
        }
    }
}

/// The tools in an order where every caller comes before its callees.
fn top_down(exp: &Experiment) -> Vec<usize> {
    fn visit(t: usize, exp: &Experiment, seen: &mut [bool], order: &mut Vec<usize>) {
        if seen[t] {
            return;
        }
        seen[t] = true;
        for call in exp.graph.stages[t].iter().flatten() {
            visit(exp.graph.edges[call.edge].callee, exp, seen, order);
        }
        order.push(t);
    }
    let (mut seen, mut order) = (vec![false; exp.tools.len()], Vec::new());
    for t in 0..exp.tools.len() {
        visit(t, exp, &mut seen, &mut order);
    }
    order.reverse();
    order
}

/// The attempts an edge's policy makes at most.
fn limit(p: &Policy) -> i32 {
    match p.rule.retry.max_attempts {
        Attempts::AtMost(n) => n.min(i32::MAX as u32) as i32,
        // Unlimited attempts with a chance of failure below 1 sum to 1/(1 − q); the cap is
        // large enough that q^N vanishes.
        Attempts::Unlimited => i32::MAX,
    }
}

/// The p-quantile of a top-level call's completion where the task calls one service whose one
/// stage fans out to N calls of one tool, and nothing fails, waits in line or is hedged: the
/// service's constant legs and work, plus the slowest of N independent round trips, whose
/// distribution is P(max ≤ t) = F(t)ᴺ ("the tail at scale"). Its p99 is F's 0.99^(1/N)
/// quantile: at N = 100, the single call's 99.99th percentile.
pub fn fan_out_quantile(exp: &Experiment, policy: &Policy, p: f64) -> Option<Tick> {
    let [api] = exp.calls_of(policy) else {
        return None;
    };
    let [stage] = exp.graph.stages[*api].as_slice() else {
        return None;
    };
    let leaf = exp.graph.edges[stage.first()?.edge].callee;
    if stage.iter().any(|c| exp.graph.edges[c.edge].callee != leaf)
        || !exp.graph.stages[leaf].is_empty()
    {
        return None;
    }
    let quiet = |t: &Tool| {
        let s = &t.server;
        t.faults == Faults::default()
            && t.script.is_none()
            && t.one_fault_table()
            && t.replicas.is_empty()
            && s.workers.is_none()
            && s.rate_limit.is_none()
            && s.outages.is_empty()
            && s.capacity.is_empty()
            && s.slowdown == Tick::ZERO
    };
    let calm = |p: &Policy| {
        p.hedges.delay == Wait::None
            && !p.time.limits.any()
            && p.gates.concurrency.is_none()
            && p.gates.send_rate.is_none()
            && p.time.waits.iter().all(|w| w.timeout.is_none())
    };
    let (service, callee) = (&exp.tools[*api], &exp.tools[leaf]);
    let edges = 0..exp.graph.edges.len();
    if !quiet(service) || !quiet(callee) || !edges.clone().all(|e| calm(policy.on_edge(e))) {
        return None;
    }
    let Latency::Constant(_) = service.service_time else {
        return None;
    };
    // A constant service's round trip at any quantile is its legs and its work.
    let own = service.round_trip_quantile(0.5).ok()?;
    let slowest = callee
        .round_trip_quantile(p.powf(1.0 / stage.len() as f64))
        .ok()?;
    Some(own.after(slowest))
}
