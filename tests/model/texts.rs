//! Invariants checked on random config texts, through parsing and validation as a user's config
//! goes: the features the struct-built properties leave out — reconciliation, cooperative
//! admission, layers that reset their limits, keys the receiver forgets, scripted endpoints,
//! hedging — each drawn at random. A text validation refuses is no case; the test asserts that
//! most are accepted, so the generator keeps exercising the simulation.

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

use crate::common::traced;
use retrysim::config::{Origin, Source};
use retrysim::metrics::{Status, StopReason};
use retrysim::time::Tick;

/// One `[[tool]]`: random faults or a script; a key store that may forget; lookups that may
/// fail or lag.
fn tool() -> impl Strategy<Value = String> {
    let faults = (0u32..30, 0u32..30, 0u32..20, 1u64..30).prop_map(|(a, b, e, ms)| {
        format!(
            "request_loss = {}\nreply_loss = {}\nserver_error = {}\n\
             service_time = {{ dist = \"exponential\", mean = \"{ms}ms\" }}",
            f64::from(a) / 100.0,
            f64::from(b) / 100.0,
            f64::from(e) / 100.0
        )
    });
    let step = prop_oneof![
        Just("ok"),
        Just("5xx"),
        Just("lost_request"),
        Just("lost_reply"),
        Just("429")
    ];
    let script = proptest::collection::vec((step, 1u64..20), 1..4).prop_map(|steps| {
        let steps: Vec<String> = steps
            .iter()
            .map(|(o, ms)| format!("{{ outcome = \"{o}\", after = \"{ms}ms\" }}"))
            .collect();
        format!("script = [{}]", steps.join(", "))
    });
    let body = prop_oneof![3 => faults, 1 => script];
    let retention = prop_oneof![
        Just(String::new()),
        (1u64..50).prop_map(|ms| format!("key_retention = \"{ms}ms\""))
    ];
    let lookup = (0u32..3, 0u64..20).prop_map(|(fail, lag)| {
        format!(
            "lookup_failure = {}\ncommit_lag = \"{lag}ms\"",
            f64::from(fail) / 4.0
        )
    });
    (body, retention, lookup, any::<bool>()).prop_map(|(body, retention, lookup, idempotent)| {
        format!(
            "[[tool]]\nname = \"t\"\nidempotent = {idempotent}\n{body}\n{retention}\n{lookup}\n"
        )
    })
}

/// One `[[policy]]`: retries with a key, and any of reconciliation, a deadline with
/// cooperative admission, layers that reset their limits, a hedge.
fn policy() -> impl Strategy<Value = String> {
    let attempts = 1u32..5;
    let lookup = any::<bool>().prop_map(|on| {
        if on {
            "lookup_before_retry = true\n"
        } else {
            ""
        }
    });
    let deadline = prop_oneof![
        Just(String::new()),
        (20u64..200).prop_map(|ms| format!("deadline = \"{ms}ms\"\n")),
        (20u64..200, 0u64..10, 1u64..10).prop_map(|(ms, reserve, min)| format!(
            "deadline = \"{ms}ms\"\nadmission = {{ reserve = \"{reserve}ms\", min_attempt = \"{min}ms\", timeout_cap = \"50ms\" }}\n"
        )),
    ];
    let layers = prop_oneof![
        Just(String::new()),
        (1u32..3, any::<bool>()).prop_map(|(n, reset)| format!(
            "layers = [{{ name = \"outer\", max_attempts = {n} }}, {{ name = \"inner\", max_attempts = 2, retry_on = [\"reset\", \"5xx\", \"timeout\", \"429\"] }}]\nreset_each_layer = {reset}\n"
        )),
    ];
    let hedge = prop_oneof![Just(""), Just("hedge_delay = \"5ms\"\n")];
    let timeout = prop_oneof![Just(""), Just("timeout = \"20ms\"\n")];
    (attempts, lookup, deadline, layers, hedge, timeout).prop_map(
        |(n, lookup, deadline, layers, hedge, timeout)| {
            let backoff = "{ kind = \"constant\", initial_delay = \"2ms\", jitter = \"full\" }";
            let retry = if layers.is_empty() {
                format!(
                    "max_attempts = {n}\nretry_on = [\"reset\", \"5xx\", \"timeout\", \"429\"]\n\
                     backoff = {backoff}\n"
                )
            } else {
                layers.replace(
                    "max_attempts = 2,",
                    &format!("max_attempts = 2, backoff = {backoff},"),
                )
            };
            format!(
                "[[policy]]\nname = \"p\"\nidempotency_key = \"per_intent\"\n\
                 {retry}{lookup}{deadline}{hedge}{timeout}"
            )
        },
    )
}

fn experiment() -> impl Strategy<Value = String> {
    (tool(), policy(), 1u64..40, 1u32..6, any::<u32>()).prop_map(|(tool, policy, tasks, clients, seed)| {
        format!(
            "name = \"text\"\nseed = {seed}\nhorizon = \"10s\"\n[workload]\ntasks = {tasks}\nclients = {clients}\n{tool}{policy}"
        )
    })
}

#[test]
fn random_config_texts_validate_run_and_keep_their_promises() {
    let mut runner = TestRunner::new(Config {
        cases: 256,
        rng_seed: RngSeed::Fixed(20261130),
        failure_persistence: None,
        ..Config::default()
    });
    let accepted = std::cell::Cell::new(0u32);
    runner
        .run(&experiment(), |text| {
            let source = Source {
                name: "text.toml".into(),
                text: text.clone(),
                origin: Origin::Text,
            };
            let Ok(sweep) = source.sweep() else {
                return Ok(());
            };
            accepted.set(accepted.get() + 1);
            let exp = sweep.base;
            let policy = &exp.policies[0];
            let tool = &exp.tools[0];
            let cap: u32 = (0..policy.rule.depth())
                .map(|l| {
                    policy
                        .rule
                        .retry_of(l)
                        .max_attempts
                        .cap()
                        .unwrap_or(u32::MAX)
                })
                .product();
            for (r, attempts) in traced(&exp, 0) {
                prop_assert_eq!(attempts.len() as u32, r.attempts);
                prop_assert!(r.end >= r.start);
                // The product of the layers' caps bounds every intent; a deadline bounds it
                // too, unless each layer entered resets it.
                prop_assert!(r.attempts <= cap, "{}", text);
                if let Some(deadline) = policy.time.limits.deadline
                    && !policy.rule.resets_each_layer()
                {
                    prop_assert!(r.end <= r.start.after(deadline), "{}", text);
                }
                // A key the receiver honours and never forgets commits once.
                if tool.server.idempotent && tool.server.key_retention.is_none() {
                    prop_assert!(r.effects <= 1, "{}", text);
                }
                // A lookup comes only from reconciliation.
                if !policy.rule.lookup_before_retry {
                    prop_assert_eq!(r.lookups, 0);
                }
                if r.status == Status::Stopped(StopReason::BudgetTooSmall) {
                    prop_assert!(policy.time.limits.admission.is_some());
                }
                prop_assert!(r.end <= exp.horizon.after(Tick::ZERO));
            }
            Ok(())
        })
        .unwrap();
    let accepted = accepted.get();
    assert!(accepted >= 128, "only {accepted} of 256 texts validated");
}
