//! The retry decision, as a pure function of the policy, the tool's facts, where the intent
//! stands and what the failure said: look the key up first, retry after a delay, hold the call,
//! or stop with a reason. The world draws the random words it asks for and carries the plan
//! out; the gates a retry meets after it are [`super::gate`]'s.
//!
//! The order is the libraries': a lookup where the outcome of a write is unknown and the
//! policy reconciles; the safety gate; the retry rule of each layer from the innermost out,
//! widened by a Retry-After where the policy retries on being told; the server's should-retry
//! header where the policy obeys it (before the safety gate, since the server knows what it
//! did); Retry-After's own stop and hold; then the backoff, with the server's wait in place of
//! or on top of it.

use super::{Jitter, OverLimit, Policy, Previous, Retry, RetryAfter, RetryDecision, RetryState};
use super::{reconcile, safety};
use crate::metrics::StopReason;
use crate::model::{FailureClass, Tool};
use crate::time::Tick;
use crate::variate::happens;

/// What the client learnt from a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Failure {
    pub class: FailureClass,
    /// The wait the server asked for, if it named one.
    pub retry_after: Option<Tick>,
    /// The server's `should-retry` header, if its response carried one.
    pub should_retry: Option<bool>,
    /// The server was just asked about the key and said to send again: no second lookup.
    pub looked_up: bool,
}

impl Failure {
    /// A failure seen as it happened, before any lookup.
    pub fn new(class: FailureClass, retry_after: Option<Tick>) -> Self {
        Failure {
            class,
            retry_after,
            should_retry: None,
            looked_up: false,
        }
    }
}

/// What a client does with the server's `should-retry` header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShouldRetry {
    /// Follows it over its own rule, as Stripe's SDKs and the generated OpenAI and Anthropic
    /// SDKs do: "retry" retries a failure its status list leaves out, and past the safety gate
    /// (the server says nothing was done); "don't" stops (`not_retryable`). The attempt cap,
    /// Retry-After and the gates still apply.
    Obey,
    /// Decides by its own rule alone.
    Ignore,
}

impl ShouldRetry {
    pub const ALL: [ShouldRetry; 2] = [ShouldRetry::Obey, ShouldRetry::Ignore];

    pub fn name(self) -> &'static str {
        match self {
            ShouldRetry::Obey => "obey",
            ShouldRetry::Ignore => "ignore",
        }
    }
}

/// A random word the decision may read, addressed by the retry it is for, so that a word
/// never read leaves every other where it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Word {
    /// The backoff's jitter before retry n + 1 (and, for Polly's formula, the previous one's).
    Jitter(u32),
    /// The jitter added to a Retry-After before retry n + 1.
    PushbackJitter(u32),
    /// Whether retry n + 1 carries regenerated arguments.
    Payload(u32),
}

/// Where the words come from: the intent's streams in a run, a table in a test.
pub trait Words {
    fn word(&mut self, word: Word) -> u64;
}

/// The next attempt, as decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Next {
    /// The retry layer whose attempt it begins, counted from the outermost.
    pub layer: usize,
    /// Its number in that layer's count (1 for the second attempt).
    pub retry: u32,
    /// How long to wait before it, the server's word included.
    pub delay: Tick,
    /// The backoff's own delay, which the next one may grow from.
    pub backoff_delay: Tick,
    /// A Retry-After set the delay and the policy starts its curve again.
    pub restart_curve: bool,
    /// The agent re-planned the call: it carries new arguments.
    pub new_payload: bool,
    /// It begins an outer layer's attempt where each layer starts a fresh deadline and cap.
    pub fresh_scope: bool,
}

/// What to do after a failure.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plan {
    /// Ask the server about the key before anything else.
    LookUp,
    /// Try again after the delay, if the gates admit it.
    Retry(Next),
    /// Hold the call without a retry until its deadline, or for ever without one.
    Hold,
    /// The intent ends here.
    Stop(StopReason),
}

/// What the policy does after `failure` of a call on `tool`, the intent standing at `state`.
pub fn decide(
    policy: &Policy,
    tool: &Tool,
    state: &RetryState,
    failure: Failure,
    words: &mut impl Words,
) -> Plan {
    let Failure {
        class, retry_after, ..
    } = failure;
    if !failure.looked_up && reconcile::looks_up(policy, tool, class) {
        return Plan::LookUp;
    }
    let advised = failure
        .should_retry
        .filter(|_| policy.rule.should_retry == ShouldRetry::Obey);
    if advised == Some(false) {
        return Plan::Stop(StopReason::NotRetryable);
    }
    let pushback = &policy.rule.pushback;
    // A refusal that names a wait may be retried for saying so, in every layer, and so may a
    // failure the server says to retry.
    let named_wait = retry_after.is_some()
        && pushback.retries
        && matches!(class, FailureClass::Throttled | FailureClass::Overloaded);
    let told = named_wait || advised == Some(true);
    if policy.rule.safety_gate
        && advised.is_none()
        && (told || policy.rule.retries(class))
        && !safety::may_resend(class, tool, policy.rule.key)
    {
        return Plan::Stop(match safety::is_ambiguous(class) {
            true => StopReason::NeedsReconciliation,
            false => StopReason::NotRetryable,
        });
    }
    let rule = |l: usize| {
        let rule = *policy.rule.retry_of(l);
        match told {
            true => Retry {
                retry_on: rule.retry_on.union([class].into_iter().collect()),
                ..rule
            },
            false => rule,
        }
    };
    let (layer, retry) = match state.tries.decide(rule, class) {
        Ok(next) => next,
        Err(RetryDecision::NotRetryable) if class == FailureClass::Conflict => {
            return Plan::Stop(StopReason::IdempotencyConflict);
        }
        Err(RetryDecision::NotRetryable) if class.is_permanent() => {
            return Plan::Stop(StopReason::PermanentFailure);
        }
        Err(RetryDecision::AttemptLimit) => return Plan::Stop(StopReason::AttemptLimit),
        Err(_) => return Plan::Stop(StopReason::NotRetryable),
    };
    match retry_after {
        Some(_) if pushback.mode == RetryAfter::Stop => {
            return Plan::Stop(StopReason::NotRetryable);
        }
        Some(wait) if pushback.over_limit(wait) == Some(OverLimit::Stop) => {
            return Plan::Stop(StopReason::NotRetryable);
        }
        // Held, not retried: the call waits for its deadline, or in silence for ever.
        Some(wait) if pushback.mode.holds(wait) => return Plan::Hold,
        _ => {}
    }
    let backoff = match (class, &policy.rule.throttle_backoff) {
        (FailureClass::Throttled, Some(throttled)) => throttled,
        _ => policy.rule.backoff_of(layer),
    };
    let retries = state.retries;
    let word = match backoff.is_random() {
        true => words.word(Word::Jitter(retries)),
        false => 0,
    };
    // Counted from the last restart, if a Retry-After restarted the curve.
    let n = retry.saturating_sub(state.backoff_from).max(1);
    // Polly's formula carries the previous retry's draw on.
    let previous = Previous {
        delay: state.last_delay,
        word: match retries {
            r if r > 0 && backoff.jitter == Jitter::DecorrelatedV2 => {
                words.word(Word::Jitter(r - 1))
            }
            _ => 0,
        },
    };
    let backoff_delay = backoff.delay(n, previous, word);
    let told_delay = retry_after.and_then(|asked| {
        pushback.delay(asked, backoff_delay, || {
            words.word(Word::PushbackJitter(retries))
        })
    });
    // An agent that re-plans its call may send other arguments with the retry.
    let new_payload = policy.rule.payload_drift > 0.0
        && happens(
            words.word(Word::Payload(retries)),
            policy.rule.payload_drift,
        );
    Plan::Retry(Next {
        layer,
        retry,
        delay: told_delay.unwrap_or(backoff_delay),
        backoff_delay,
        restart_curve: told_delay.is_some() && pushback.resets,
        new_payload,
        // A new attempt of an outer layer starts a fresh cap where each layer resets it.
        fresh_scope: policy.rule.resets_each_layer() && layer + 1 < policy.rule.depth(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Faults, ToolKind};
    use crate::policy::{Attempts, Backoff, Growth, KeyScope, Layer, Layers, Pushback};

    const ALL: [FailureClass; 4] = [
        FailureClass::Reset,
        FailureClass::Timeout,
        FailureClass::ServerError,
        FailureClass::Throttled,
    ];

    /// Words from a fixed table, each request noted, so a test sees which words a rule reads.
    #[derive(Default)]
    struct Table {
        asked: Vec<Word>,
    }

    impl Words for Table {
        fn word(&mut self, word: Word) -> u64 {
            self.asked.push(word);
            match word {
                Word::Jitter(_) => u64::MAX / 2,
                Word::PushbackJitter(_) => u64::MAX,
                Word::Payload(_) => 0,
            }
        }
    }

    fn retrying(attempts: u32) -> Policy {
        Policy::new("p").with_retry(Attempts::AtMost(attempts), &ALL)
    }

    fn write() -> Tool {
        Tool::new("t", ToolKind::Write).with_faults(Faults::default())
    }

    /// The decision after `made` attempts failed, the last with `failure`.
    fn after(policy: &Policy, tool: &Tool, made: u32, failure: Failure) -> (Plan, Vec<Word>) {
        let mut state = RetryState::new(Tick::ZERO);
        state.tries.start(policy.rule.depth());
        for retry in 1..made {
            state.tries.begin(policy.rule.depth() - 1);
            state.retries = retry;
        }
        let mut words = Table::default();
        let plan = decide(policy, tool, &state, failure, &mut words);
        (plan, words.asked)
    }

    fn delay_of(plan: Plan) -> Tick {
        match plan {
            Plan::Retry(next) => next.delay,
            other => panic!("no retry: {other:?}"),
        }
    }

    #[test]
    fn every_stop_has_its_reason() {
        let keyless_gated = {
            let mut p = retrying(3);
            p.rule.safety_gate = true;
            p
        };
        let told_to_stop = {
            let mut p = retrying(3);
            p.rule.pushback = Pushback {
                mode: RetryAfter::Stop,
                ..Pushback::default()
            };
            p
        };
        let (reset, conflict, forbidden, server) = (
            FailureClass::Reset,
            FailureClass::Conflict,
            FailureClass::Forbidden,
            FailureClass::ServerError,
        );
        let wait = Some(Tick::from_millis(5));
        let only_5xx = Policy::new("p").with_retry(Attempts::AtMost(3), &[server]);
        // (policy, attempts made, failure, reason)
        let table = [
            (
                &retrying(3),
                3,
                Failure::new(reset, None),
                StopReason::AttemptLimit,
            ),
            (
                &retrying(1),
                1,
                Failure::new(reset, None),
                StopReason::AttemptLimit,
            ),
            (
                &retrying(3),
                1,
                Failure::new(conflict, None),
                StopReason::IdempotencyConflict,
            ),
            (
                &retrying(3),
                1,
                Failure::new(forbidden, None),
                StopReason::PermanentFailure,
            ),
            (
                &only_5xx,
                1,
                Failure::new(FailureClass::Connect, None),
                StopReason::NotRetryable,
            ),
            (
                &keyless_gated,
                1,
                Failure::new(reset, None),
                StopReason::NeedsReconciliation,
            ),
            (
                &keyless_gated,
                1,
                Failure::new(server, None),
                StopReason::NotRetryable,
            ),
            (
                &told_to_stop,
                1,
                Failure::new(FailureClass::Throttled, wait),
                StopReason::NotRetryable,
            ),
        ];
        for (policy, made, failure, reason) in table {
            let (plan, _) = after(policy, &write(), made, failure);
            assert_eq!(plan, Plan::Stop(reason), "{failure:?} after {made}");
        }
    }

    #[test]
    fn the_safety_gate_lets_through_what_is_safe_to_send_again() {
        let gated = {
            let mut p = retrying(3).with_key(KeyScope::PerIntent);
            p.rule.safety_gate = true;
            p
        };
        let reset = Failure::new(FailureClass::Reset, None);
        assert!(matches!(
            after(&gated, &write(), 1, reset).0,
            Plan::Retry(_)
        ));
        let read = Tool::new("r", ToolKind::ReadOnly);
        let keyless = {
            let mut p = retrying(3);
            p.rule.safety_gate = true;
            p
        };
        assert!(matches!(after(&keyless, &read, 1, reset).0, Plan::Retry(_)));
        // A connection that failed sent nothing: any call may be sent again after it.
        let connect = Failure::new(FailureClass::Connect, None);
        let on_connect = keyless
            .clone()
            .with_retry(Attempts::AtMost(3), &[FailureClass::Reset]);
        assert!(matches!(
            after(&on_connect, &write(), 1, connect).0,
            Plan::Retry(_)
        ));
    }

    #[test]
    fn an_unknown_write_is_looked_up_once_where_the_policy_reconciles() {
        let policy = {
            let mut p = retrying(3).with_key(KeyScope::PerIntent);
            p.rule.lookup_before_retry = true;
            p
        };
        let timeout = Failure::new(FailureClass::Timeout, None);
        assert_eq!(after(&policy, &write(), 1, timeout).0, Plan::LookUp);
        let answered = Failure {
            looked_up: true,
            ..timeout
        };
        assert!(matches!(
            after(&policy, &write(), 1, answered).0,
            Plan::Retry(_)
        ));
        let server = Failure::new(FailureClass::ServerError, None);
        assert!(matches!(
            after(&policy, &write(), 1, server).0,
            Plan::Retry(_)
        ));
    }

    #[test]
    fn a_named_wait_widens_retry_on_only_where_the_policy_says_so() {
        let only_resets = Policy::new("p").with_retry(Attempts::AtMost(3), &[FailureClass::Reset]);
        let told = Failure::new(FailureClass::Throttled, Some(Tick::from_millis(5)));
        let (plan, _) = after(&only_resets, &write(), 1, told);
        assert_eq!(plan, Plan::Stop(StopReason::NotRetryable));
        let urllib3 = {
            let mut p = only_resets;
            p.rule.pushback = Pushback {
                retries: true,
                ..Pushback::default()
            };
            p
        };
        assert_eq!(
            delay_of(after(&urllib3, &write(), 1, told).0),
            Tick::from_millis(5)
        );
        // Unnamed, a 429 is still left out.
        let untold = Failure::new(FailureClass::Throttled, None);
        let (plan, _) = after(&urllib3, &write(), 1, untold);
        assert_eq!(plan, Plan::Stop(StopReason::NotRetryable));
    }

    #[test]
    fn a_zero_wait_holds_the_call_under_grpc_core() {
        let core = {
            let mut p = retrying(3);
            p.rule.pushback = Pushback {
                mode: RetryAfter::ReplaceZeroHangs,
                ..Pushback::default()
            };
            p
        };
        let zero = Failure::new(FailureClass::Throttled, Some(Tick::ZERO));
        assert_eq!(after(&core, &write(), 1, zero).0, Plan::Hold);
        let some = Failure::new(FailureClass::Throttled, Some(Tick::from_millis(7)));
        assert_eq!(
            delay_of(after(&core, &write(), 1, some).0),
            Tick::from_millis(7)
        );
    }

    #[test]
    fn the_backoff_and_the_servers_wait_combine_and_read_only_the_words_they_need() {
        let fixed = Backoff {
            growth: Growth::Constant,
            initial_delay: Tick::from_millis(100),
            max_delay: None,
            ..Backoff::IMMEDIATE
        };
        let policy = retrying(3).with_backoff(fixed);
        let reset = Failure::new(FailureClass::Reset, None);
        let (plan, asked) = after(&policy, &write(), 1, reset);
        assert_eq!(delay_of(plan), Tick::from_millis(100));
        assert!(asked.is_empty(), "no jitter, no drift, no word: {asked:?}");
        // Honoured, the server's wait counts where it is the longer.
        let long = Failure::new(FailureClass::Throttled, Some(Tick::from_millis(300)));
        assert_eq!(
            delay_of(after(&policy, &write(), 1, long).0),
            Tick::from_millis(300)
        );
        let short = Failure::new(FailureClass::Throttled, Some(Tick::from_millis(30)));
        assert_eq!(
            delay_of(after(&policy, &write(), 1, short).0),
            Tick::from_millis(100)
        );
        // Jittered, the wait reads the pushback word of this retry, and the curve restarts.
        let jittered = {
            let mut p = policy.clone();
            p.rule.pushback = Pushback {
                mode: RetryAfter::Replace,
                jitter: Tick::from_millis(10),
                resets: true,
                ..Pushback::default()
            };
            p
        };
        let (plan, asked) = after(&jittered, &write(), 2, short);
        assert_eq!(asked, [Word::PushbackJitter(1)]);
        let Plan::Retry(next) = plan else {
            panic!("{plan:?}")
        };
        assert_eq!(next.delay, Tick::from_millis(40));
        assert_eq!(next.backoff_delay, Tick::from_millis(100));
        assert!(next.restart_curve);
        // A 429 backs off by the throttle's own curve where the policy has one.
        let throttled = {
            let mut p = policy;
            p.rule.throttle_backoff = Some(Backoff {
                initial_delay: Tick::from_secs(1),
                ..fixed
            });
            p
        };
        let untold = Failure::new(FailureClass::Throttled, None);
        assert_eq!(
            delay_of(after(&throttled, &write(), 1, untold).0),
            Tick::from_secs(1)
        );
        assert_eq!(
            delay_of(after(&throttled, &write(), 1, reset).0),
            Tick::from_millis(100)
        );
    }

    #[test]
    fn drift_and_an_outer_layer_are_part_of_the_plan() {
        let drifting = {
            let mut p = retrying(3);
            p.rule.payload_drift = 0.5;
            p
        };
        let reset = Failure::new(FailureClass::Reset, None);
        let (plan, asked) = after(&drifting, &write(), 2, reset);
        assert_eq!(asked, [Word::Payload(1)]);
        assert!(matches!(
            plan,
            Plan::Retry(Next {
                new_payload: true,
                ..
            })
        ));
        let layered = {
            let mut p = retrying(2);
            p.rule.layers = Some(Layers {
                outer: vec![Layer {
                    name: "agent".into(),
                    retry: retrying(2).rule.retry,
                    backoff: Backoff::IMMEDIATE,
                }],
                innermost: "sdk".into(),
                reset_each: true,
            });
            p
        };
        // The innermost layer has made its two: the outer layer's retry starts a fresh scope.
        let (plan, _) = after(&layered, &write(), 2, reset);
        let Plan::Retry(next) = plan else {
            panic!("{plan:?}")
        };
        assert_eq!((next.layer, next.retry, next.fresh_scope), (0, 1, true));
    }

    #[test]
    fn an_obeyed_header_overrides_the_status_list_and_the_safety_gate() {
        let only_resets = {
            let mut p = Policy::new("p").with_retry(Attempts::AtMost(3), &[FailureClass::Reset]);
            p.rule.safety_gate = true;
            p
        };
        let obeying = {
            let mut p = only_resets.clone();
            p.rule.should_retry = ShouldRetry::Obey;
            p
        };
        let advised = |class, advice| Failure {
            should_retry: advice,
            ..Failure::new(class, None)
        };
        let server = FailureClass::ServerError;
        // "Retry" on a 5xx the list leaves out, to a keyless write the gate would stop.
        let retry = advised(server, Some(true));
        assert!(matches!(
            after(&obeying, &write(), 1, retry).0,
            Plan::Retry(_)
        ));
        assert_eq!(
            after(&only_resets, &write(), 1, retry).0,
            Plan::Stop(StopReason::NotRetryable)
        );
        // "Don't" stops a failure the list would retry; ignored, the list decides.
        let stop = advised(FailureClass::Reset, Some(false));
        assert_eq!(
            after(&obeying, &write(), 1, stop).0,
            Plan::Stop(StopReason::NotRetryable)
        );
        let keyed = only_resets.with_key(KeyScope::PerIntent);
        assert!(matches!(after(&keyed, &write(), 1, stop).0, Plan::Retry(_)));
        // The attempt cap still holds.
        assert_eq!(
            after(&obeying, &write(), 3, retry).0,
            Plan::Stop(StopReason::AttemptLimit)
        );
    }
}
