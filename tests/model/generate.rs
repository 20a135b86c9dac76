//! Random small experiments built as structs: tools with every kind of latency, fault and
//! outage, and two configurations that differ only in their key. The generator's seed is fixed
//! and no regression file is written, so every run checks the same cases.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

use retrysim::Experiment;
use retrysim::model::FailureClass;
use retrysim::model::latency::GammaQuantiles;
use retrysim::model::{
    Arrival, Faults, Latency, Line, LineOrder, Lookup, LossSignal, Outage, OutageMode, Tool,
    ToolKind,
};
use retrysim::policy::{
    Attempts, Backoff, BreakerRule, BudgetRule, Cap, ConcurrencyRule, FirstRetry, Growth, Hedging,
    Jitter, KeyScope, Layer, Layers, LimitRule, Limits, Policy, Refuses, Retry, RetryOn,
    SendRateRule, Trip, Wait,
};
use retrysim::time::Tick;

pub fn config() -> Config {
    Config {
        cases: 64,
        rng_seed: RngSeed::Fixed(20261130),
        failure_persistence: None,
        ..Config::default()
    }
}

fn latency() -> impl Strategy<Value = Latency> {
    prop_oneof![
        (0u64..5_000).prop_map(|t| Latency::Constant(Tick(t))),
        (0u64..2_000, 0u64..5_000).prop_map(|(lo, w)| Latency::Uniform {
            min: Tick(lo),
            max: Tick(lo + w)
        }),
        (1.0f64..5_000.0).prop_map(|mean| Latency::Exponential { mean }),
        (1.0f64..5_000.0, 0.0f64..1.5)
            .prop_map(|(median, sigma)| Latency::LogNormal { median, sigma }),
        (0.2f64..5.0, 1.0f64..2_000.0)
            .prop_map(|(shape, scale)| Latency::Gamma(GammaQuantiles::new(shape, scale))),
        (0.5f64..4.0, 1.0f64..5_000.0).prop_map(|(shape, scale)| Latency::Weibull { shape, scale }),
    ]
}

/// Fault probabilities that leave at least 5 % for a reply, so unlimited retries end.
fn tool(index: usize) -> impl Strategy<Value = Tool> {
    let signal = prop_oneof![Just(LossSignal::Reset), Just(LossSignal::Silence)];
    let kind = prop_oneof![4 => Just(ToolKind::Write), 1 => Just(ToolKind::ReadOnly)];
    // Workers with a line that may be bounded and served either way; or no limit at all.
    let workers = prop_oneof![
        Just((None, Line::UNBOUNDED)),
        (1u32..3, prop::option::of(1u32..3), any::<bool>()).prop_map(|(w, limit, lifo)| {
            let order = if lifo {
                LineOrder::Lifo
            } else {
                LineOrder::Fifo
            };
            (Some(w), Line { limit, order })
        }),
    ];
    let mode = prop_oneof![Just(OutageMode::FailFast), Just(OutageMode::Hang)];
    let outages =
        proptest::collection::vec((0u64..50_000, 1u64..50_000, mode), 0..2).prop_map(|windows| {
            windows
                .into_iter()
                .map(|(from, length, mode)| Outage {
                    from: Tick(from),
                    until: Tick(from + length),
                    mode,
                    zone: None,
                })
                .collect::<Vec<_>>()
        });
    // Refusals are rarer: most tools have none.
    let refusal = || prop_oneof![3 => Just(0.0), 1 => 0.0f64..0.5];
    // A failed connection is a refusal's kin: rare, before anything is sent.
    let refusals = (
        refusal(),
        refusal(),
        refusal(),
        proptest::option::of(1u64..5_000),
        refusal(),
    );
    (
        (0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0, 0.0f64..0.95),
        (latency(), latency(), latency()),
        (signal, kind, any::<bool>()),
        (workers, outages, refusals),
    )
        .prop_map(
            move |(
                (a, e, b, total),
                (request, service, reply),
                (signal, kind, idempotent),
                ((workers, line), outages, (t, f, i, retry_after, c)),
            )| {
                let scale = total / (a + e + b + t + f + i + c).max(1e-9);
                let mut faults = Faults::default();
                faults.request_loss = a * scale;
                faults.server_error = e * scale;
                faults.reply_loss = b * scale;
                faults.throttled = t * scale;
                faults.forbidden = f * scale;
                faults.invalid = i * scale;
                faults.connect_failure = c * scale;
                faults.retry_after = retry_after.map(Tick);
                let mut tool = Tool::new(format!("tool{index}"), kind).with_faults(faults);
                tool.loss_seen_as = signal;
                tool.request_latency = request;
                tool.service_time = service;
                tool.reply_latency = reply;
                tool.server.idempotent = idempotent;
                tool.server.workers = workers;
                tool.server.line = line;
                tool.server.outages = outages;
                tool.lookup = Lookup {
                    time: Tick(500),
                    failure: 0.2,
                    lag: Tick(300),
                };
                tool
            },
        )
}

fn backoff() -> impl Strategy<Value = Backoff> {
    let growth = prop_oneof![
        Just(Growth::Constant),
        Just(Growth::Linear),
        Just(Growth::Exponential)
    ];
    let jitter = prop_oneof![
        Just(Jitter::None),
        Just(Jitter::Full),
        Just(Jitter::Equal),
        Just(Jitter::Decorrelated),
        Just(Jitter::Proportional),
        Just(Jitter::Additive),
        Just(Jitter::DecorrelatedV2)
    ];
    // The rules libraries add: where the cap goes, whether there is one, a floor, a first
    // retry at once, and the two jitters' parameters.
    let rules = (
        prop_oneof![Just(Cap::BeforeJitter), Just(Cap::AfterJitter)],
        any::<bool>(),
        0u64..1_000,
        prop_oneof![Just(FirstRetry::Backoff), Just(FirstRetry::Immediate)],
        0.0f64..=1.0,
        0u64..10_000,
    );
    (
        growth,
        jitter,
        0u64..10_000,
        1.0f64..4.0,
        0u64..100_000,
        rules,
    )
        .prop_map(|(growth, jitter, initial, multiplier, extra, rules)| {
            let (cap, capped, floor, first_retry, jitter_factor, jitter_max) = rules;
            Backoff {
                growth,
                initial_delay: Tick(initial),
                multiplier,
                max_delay: capped.then_some(Tick(initial + extra)),
                cap,
                jitter,
                jitter_factor,
                jitter_max: Tick(jitter_max),
                min_delay: Tick(floor.min(initial)),
                first_retry,
                count_from: 0,
            }
        })
}

/// Which of the transient failures the policy retries.
fn retry_on() -> impl Strategy<Value = RetryOn> {
    (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()).prop_map(
        |(reset, errors, late, connect)| {
            let classes = [
                (reset, FailureClass::Reset),
                (connect, FailureClass::Connect),
                (errors, FailureClass::ServerError),
                (late, FailureClass::Timeout),
            ];
            classes
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, c)| c)
                .collect::<RetryOn>()
        },
    )
}

/// Layers around the innermost with the caps `outer`, each with the same classes and backoff.
fn layers(outer: &[u32], retry_on: RetryOn, backoff: Backoff) -> Option<Layers> {
    (!outer.is_empty()).then(|| Layers {
        outer: outer
            .iter()
            .enumerate()
            .map(|(i, &n)| Layer {
                name: format!("layer-{i}"),
                retry: Retry {
                    max_attempts: Attempts::AtMost(n),
                    retry_on,
                },
                backoff,
            })
            .collect(),
        innermost: "sdk".into(),
        reset_each: false,
    })
}

/// A deadline, a dispatch cap and a cancellation, each sometimes.
fn limits() -> impl Strategy<Value = Limits> {
    (
        proptest::option::of(1u64..50_000),
        proptest::option::of(1u32..6),
        proptest::option::of(1u64..50_000),
    )
        .prop_map(|(deadline, dispatch_cap, cancel_after)| Limits {
            deadline: deadline.map(Tick),
            dispatch_cap,
            cancel_after: cancel_after.map(Tick),
            admission: None,
        })
}

/// No retry budget, or one of three kinds.
fn budget() -> impl Strategy<Value = Option<BudgetRule>> {
    prop_oneof![
        Just(None),
        (1.0f64..20.0, 0.0f64..1.0).prop_map(|(max_tokens, token_ratio)| Some(
            BudgetRule::TokenBucket {
                max_tokens,
                token_ratio,
                debits: None
            }
        )),
        Just(Some(BudgetRule::AwsStandard {
            capacity: 20.0,
            retry_cost: 5.0,
            timeout_cost: 10.0,
            throttle_cost: Some(2.0),
            success_credit: 1.0
        })),
        (0.0f64..1.0).prop_map(|percent| Some(BudgetRule::Ratio {
            ttl: Tick(10_000),
            min_per_second: 0.0,
            percent
        })),
    ]
}

/// No breaker, or one on a few failures in a row, refusing everything or only retries.
fn breaker() -> impl Strategy<Value = Option<BreakerRule>> {
    let refuses = prop_oneof![Just(Refuses::All), Just(Refuses::Retries)];
    proptest::option::of((1u32..4, 1u64..50_000, refuses)).prop_map(|b| {
        b.map(|(n, open, refuses)| BreakerRule {
            trip: Trip::Consecutive(n),
            refuses,
            open_duration: Tick(open),
            half_open_probes: 1,
            counts: FailureClass::ALL.into_iter().collect(),
        })
    })
}

/// No concurrency limit, or a fixed or adaptive limit of a few calls, refusing at once or with
/// a short line.
fn concurrency() -> impl Strategy<Value = Option<ConcurrencyRule>> {
    proptest::option::of((1u32..4, any::<bool>(), 0u32..3)).prop_map(|c| {
        c.map(|(limit, aimd, queue)| ConcurrencyRule {
            limit: if aimd {
                LimitRule::Aimd {
                    initial: limit,
                    min: 1,
                    max: 6,
                    increase: 1.0,
                    decrease: 0.5,
                }
            } else {
                LimitRule::Fixed(limit)
            },
            queue,
        })
    })
}

fn policy(key: KeyScope) -> impl Strategy<Value = Policy> {
    let attempts = prop_oneof![
        (1u32..6).prop_map(Attempts::AtMost),
        Just(Attempts::Unlimited)
    ];
    let timeout = prop_oneof![
        Just(Wait::None),
        (1u64..20_000).prop_map(|t| Wait::Fixed(Tick(t)))
    ];
    // Up to two layers around the innermost, each with its own cap and the same classes.
    let outer = proptest::collection::vec(1u32..4, 0..3);
    let hedge = proptest::option::of(1u64..20_000)
        .prop_map(|delay| delay.map_or(Wait::None, |d| Wait::Fixed(Tick(d))));
    let hedging = prop_oneof![Just(Hedging::Single), Just(Hedging::Staggered)];
    (
        attempts,
        retry_on(),
        timeout,
        backoff(),
        limits(),
        hedging,
        (
            any::<bool>(),
            breaker(),
            budget(),
            outer,
            hedge,
            prop_oneof![Just(0.0), 0.0f64..1.0],
            concurrency(),
            // botocore's adaptive limiter, sometimes.
            proptest::option::of(Just(SendRateRule::BOTOCORE)),
        ),
    )
        .prop_map(
            move |(
                max_attempts,
                retry_on,
                timeout,
                backoff,
                limits,
                hedging,
                (
                    safety_gate,
                    breaker,
                    retry_budget,
                    outer,
                    hedge,
                    payload_drift,
                    concurrency,
                    send_rate,
                ),
            )| {
                let layers = layers(&outer, retry_on, backoff);
                // A timeout shorter than the network legs fails every attempt: unlimited
                // attempts would then run to the horizon, one every few ticks.
                let cap = match (timeout, max_attempts) {
                    (Wait::Fixed(_), Attempts::Unlimited) => Attempts::AtMost(8),
                    (_, cap) => cap,
                };
                let mut policy = Policy::new(key.name().replace('_', "-"))
                    .with_timeout(timeout)
                    .with_backoff(backoff)
                    .with_key(key);
                policy.rule.retry = Retry {
                    max_attempts: cap,
                    retry_on,
                };
                policy.hedges.delay = hedge;
                // Staggered hedging may keep every attempt out: validation asks a cap.
                policy.hedges.mode = match max_attempts {
                    Attempts::AtMost(_) => hedging,
                    Attempts::Unlimited => Hedging::Single,
                };
                policy.time.limits = limits;
                policy.rule.safety_gate = safety_gate;
                policy.gates.send_rate = send_rate;
                policy.gates.breaker = breaker;
                policy.gates.retry_budget = retry_budget;
                // Lookups change when a keyed policy resends, which the key property below
                // compares: none here.
                policy.rule.payload_drift = payload_drift;
                policy.rule.layers = layers;
                policy.gates.concurrency = concurrency;
                policy
            },
        )
}

/// One experiment comparing the same retry rule without a key and with a per-intent key.
pub fn experiment() -> impl Strategy<Value = Experiment> {
    let tools = (tool(0), tool(1), tool(2)).prop_map(|(a, b, c)| vec![a, b, c]);
    let calls = proptest::collection::vec(0usize..3, 1..4);
    let arrival = prop_oneof![
        Just(Arrival::Batch),
        (100.0f64..20_000.0).prop_map(|mean_gap| Arrival::Poisson { mean_gap })
    ];
    (
        tools,
        calls,
        arrival,
        1u64..60,
        1u32..8,
        policy(KeyScope::None),
        any::<u64>(),
    )
        .prop_map(|(tools, calls, arrival, tasks, clients, plain, seed)| {
            let mut keyed = plain.clone().with_key(KeyScope::PerIntent);
            keyed.name = "per-intent".into();
            let mut exp = Experiment::new("property", tools, vec![plain, keyed], tasks)
                .expect("drawn tools have constant network legs");
            exp.seed = seed >> 1;
            exp.horizon = Tick(3_600_000_000);
            exp.workload.calls = calls;
            exp.workload.arrival = arrival;
            exp.workload.clients = clients;
            exp
        })
}
