//! The closed forms of a model's broken streams ([`BrokenStream`]) for one configuration: what
//! a task costs and how long it takes, where a task is one call to a model whose sizes, time
//! to the first token and network legs are constant, nothing fails but the stream, and the
//! policy retries a broken stream at once.
//!
//! Started over with at most N attempts, each attempt completes with p = e^(−λD) (D the
//! answer's streaming time, λ the breaks a second), so E\[attempts\] = (1 − q^N)/p, q = 1 − p,
//! and each streams E\[min(C, D)\] = (1 − p)/λ on average, C the exponential time to a cut:
//! by Wald's identity the time streamed is their product. Resumed (without a cap that could
//! bind), the cuts are a Poisson process over the answer: 1 + λD attempts, the answer streamed
//! once, λD/2 answers' worth of received tokens sent back as input. Each attempt also waits
//! for its first token and the network. A cut bills the whole tokens streamed before it; the
//! forms count the fraction of a token too, an overstatement below one token per break.
//!
//! A model whose stream never breaks but whose attempts meet the classic faults (lost requests,
//! 5xx before the work, lost replies) costs the classic forms' attempts, (1 − a) of them billed.

use super::CostForms;
use crate::experiment::Experiment;
use crate::model::provider::BrokenStream;
use crate::model::{FailureClass, Latency, LossSignal, Tool};
use crate::policy::{Attempts, Backoff, KeyScope, Policy, Wait};
use crate::time::Tick;

/// A cap the forms of a resumed stream ignore: one whose chance to bind, P(K ≥ N) for the
/// Poisson count K of cuts, is below this.
const NEGLIGIBLE: f64 = 1e-12;

/// The forms for `policy` in `exp`, where they apply.
pub fn for_policy(exp: &Experiment, policy: &Policy) -> Option<CostForms> {
    let &[t] = exp.calls_of(policy) else {
        return None;
    };
    let tool = &exp.tools[t];
    let provider = tool.provider.as_ref()?;
    // The run follows the policy on the task's edge to the model, which may be its own.
    let policy = policy.on_edge(exp.graph.top(t));
    let constant = |l: &Latency| match l {
        Latency::Constant(t) => Some(*t),
        _ => None,
    };
    let (input, output) = (
        constant(&provider.input_tokens)?,
        constant(&provider.output_tokens)?.min(Tick(u64::from(provider.max_tokens))),
    );
    let network = constant(&tool.request_latency)?.after(constant(&tool.reply_latency)?);
    // A prefill apart from the first token reads each attempt's input: the prompt, started
    // over; more with every resumption, which the forms below do not follow.
    let prefill = provider.prefilling(input.0);
    let per_attempt = (network.after(constant(&provider.first_token)?))
        .after(prefill)
        .seconds();
    let s = &tool.server;
    let plain_tool = tool.script.is_none()
        && exp.graph.stages[t].is_empty()
        && tool.loss_seen_as == LossSignal::Reset
        && tool.replicas.is_empty()
        && s.rate_limit.is_none()
        && s.token_limit.is_none()
        && s.workers.is_none()
        && s.outages.is_empty()
        && s.capacity.is_empty()
        && s.slowdown == Tick::ZERO;
    let plain_policy = !policy.time.limits.any()
        && policy.gates.breaker.is_none()
        && policy.gates.retry_budget.is_none()
        && policy.hedges.delay == Wait::None
        && policy.rule.layers.is_none()
        && policy.gates.concurrency.is_none()
        && policy.gates.send_rate.is_none()
        && policy.gates.send_tokens.is_none()
        && policy.time.waits[t].timeout.is_none()
        && policy.edge.fallback.tools.is_empty()
        && !policy.rule.lookup_before_retry
        && exp.workload.agent.is_none();
    if !plain_tool || !plain_policy {
        return None;
    }
    if tool.faults.total() > 0.0 {
        return classic(tool, policy, (input.0 as f64, output.0 as f64));
    }
    if policy.rule.backoff != Backoff::IMMEDIATE {
        return None;
    }
    let cap = match policy
        .rule
        .retry
        .retry_on
        .contains(FailureClass::StreamBroken)
    {
        true => policy.rule.retry.max_attempts,
        false => Attempts::AtMost(1),
    };
    let (rate, seconds) = (
        provider.stream_break,
        provider.streaming(output.0).seconds(),
    );
    // A resumed stream's later prompts are longer, and with a prefill apart they wait longer:
    // the time has no form then, but the bill, which counts tokens, keeps its own.
    let timed = !(policy.rule.resume && provider.prefill.is_some());
    let forms = match (policy.rule.resume, cap) {
        (true, Attempts::Unlimited) => BrokenStream::resumed(rate, seconds),
        (true, Attempts::AtMost(n)) if poisson_tail(rate * seconds, n) < NEGLIGIBLE => {
            BrokenStream::resumed(rate, seconds)
        }
        (true, Attempts::AtMost(n)) if n > 1 => return None,
        (_, Attempts::AtMost(n)) => BrokenStream::from_scratch(rate, seconds, Some(n)),
        (_, Attempts::Unlimited) => BrokenStream::from_scratch(rate, seconds, None),
    };
    let (input, output) = (input.0 as f64, output.0 as f64);
    let tokens_out = forms.output_share * output;
    let tokens_in = forms.prompts * input + forms.resent * output;
    let price = &tool.price;
    Some(CostForms {
        cost_per_task: price.dollars(tokens_in, tokens_out)
            + (forms.attempts - 1.0) * price.call as f64 / crate::model::price::PICO,
        completion: timed.then_some(forms.attempts * per_attempt + forms.streaming),
    })
}

/// A model whose stream never breaks, under the classic faults alone — a = lost requests and
/// 5xx before the work, b = lost replies — retried on both: the attempts of the classic forms,
/// each reaching the work with 1 − a and billed its prompt and answer then (Wald's identity, as
/// for a tool priced per call). The backoff decides the time, which has no form here.
fn classic(tool: &Tool, policy: &Policy, (input, output): (f64, f64)) -> Option<CostForms> {
    let f = &tool.faults;
    let others = [
        f.throttled,
        f.forbidden,
        f.invalid,
        f.connect_failure,
        f.error_after_commit,
        f.overloaded,
    ];
    if tool.provider.as_ref()?.stream_break > 0.0 || others.iter().any(|&p| p > 0.0) {
        return None;
    }
    let retried = [FailureClass::Reset, FailureClass::ServerError]
        .iter()
        .all(|&c| policy.rule.retry.retry_on.contains(c));
    let cap = match (retried, policy.rule.retry.max_attempts) {
        (true, cap) => cap,
        (false, Attempts::AtMost(1)) => Attempts::AtMost(1),
        (false, _) => return None,
    };
    let a = f.request_loss + f.server_error;
    let forms = super::closed_forms(a, f.reply_loss, cap, KeyScope::None);
    Some(CostForms {
        cost_per_task: forms.attempts * (1.0 - a) * tool.price.dollars(input, output),
        completion: None,
    })
}

/// P(K ≥ n) for K Poisson with mean `mean`.
fn poisson_tail(mean: f64, n: u32) -> f64 {
    let (mut term, mut below) = (libm::exp(-mean), 0.0);
    for k in 0..n {
        below += term;
        term *= mean / f64::from(k + 1);
    }
    (1.0 - below).max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cap_cuts_the_attempts_of_a_stream_started_over() {
        // One attempt: it completes with e^(−λD) and streams E[min(C, D)].
        let one = BrokenStream::from_scratch(0.1, 10.0, Some(1));
        assert!((one.attempts - 1.0).abs() < 1e-12);
        assert!((one.streaming - (1.0 - (-1.0f64).exp()) / 0.1).abs() < 1e-9);
        // Many: the uncapped forms.
        let many = BrokenStream::from_scratch(0.1, 10.0, Some(200));
        let whole = BrokenStream::from_scratch(0.1, 10.0, None);
        assert!((many.attempts - whole.attempts).abs() < 1e-9);
        assert!((many.streaming - whole.streaming).abs() < 1e-9);
    }

    #[test]
    fn the_poisson_tail() {
        // P(K ≥ 1) = 1 − e^(−m); P(K ≥ 0) = 1.
        assert!((poisson_tail(0.5, 1) - (1.0 - (-0.5f64).exp())).abs() < 1e-15);
        assert!((poisson_tail(0.5, 0) - 1.0).abs() < 1e-15);
        assert!(poisson_tail(1.0, 30) < 1e-12);
    }
}
