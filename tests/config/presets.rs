//! Each library's preset, expanded and held against the schedule and rules the library
//! documents; and the settings no retrysim rule expresses, refused where they are written.

use retrysim::config::{Origin, Source};
use retrysim::model::FailureClass::{self, *};
use retrysim::policy::{Attempts, BudgetRule, Hedging, Policy, RetryAfter, SendRateRule, Wait};
use retrysim::time::Tick;

use crate::backoffs::{draws, schedule};
use crate::reading::assert_says;

/// A one-tool config whose one policy is `body`.
fn text(body: &str) -> String {
    text_with_tool(body, "")
}

/// The same, the tool's table ending with `tool` (its lines, each ending in a newline).
fn text_with_tool(body: &str, tool: &str) -> String {
    format!(
        "name = \"p\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n{tool}[[policy]]\nname = \"p\"\n{body}\n"
    )
}

fn read(body: &str) -> Result<Policy, String> {
    Source {
        name: "p.toml".into(),
        text: text(body),
        origin: Origin::Text,
    }
    .sweep()
    .map(|s| s.base.policies[0].clone())
    .map_err(|e| e.to_string())
}

/// The policy `body` makes on a read-only tool, which may be hedged.
fn read_only(body: &str) -> Policy {
    Source {
        name: "h.toml".into(),
        text: text_with_tool(body, "kind = \"read_only\"\n"),
        origin: Origin::Text,
    }
    .sweep()
    .map(|s| s.base.policies[0].clone())
    .unwrap_or_else(|e| panic!("{e}"))
}

fn policy(body: &str) -> Policy {
    read(body).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(body: &str) -> String {
    match read(body) {
        Ok(_) => panic!("accepted: {body}"),
        Err(e) => e,
    }
}

fn classes(p: &Policy) -> Vec<FailureClass> {
    p.rule.retry.retry_on.classes().collect()
}

const SECOND: u64 = 1_000_000;

/// Whether every one of `count` draws before retry `n` lies in [lo, hi] (ticks), and the draws
/// reach both ends' tenths: a spread, not a constant.
fn spread_over(p: &Policy, n: u32, lo: u64, hi: u64) -> bool {
    let d = draws(&p.rule.backoff, n, 4_000);
    let tenth = (hi - lo) / 10;
    d.iter().all(|&x| (lo..=hi).contains(&x))
        && d.iter().any(|&x| x < lo + tenth)
        && d.iter().any(|&x| x > hi - tenth)
}

/// urllib3 `Retry(total=5, backoff_factor=0.1)`: "sleep for [0.0s, 0.2s, 0.4s, 0.8s, …]"; six
/// attempts, since `total` counts retries. A POST under the default `allowed_methods` is
/// retried only after a failed connection; a GET also after a read error and the listed
/// statuses, and after a 413/429/503 naming a wait, which it waits exactly.
#[test]
fn urllib3_counts_retries_and_spares_a_post() {
    let post = policy("preset.urllib3 = { total = 5, backoff_factor = 0.1 }");
    assert_eq!(post.rule.retry.max_attempts, Attempts::AtMost(6));
    assert_eq!(schedule(&post.rule.backoff), [0, 200, 400, 800, 1_600]);
    assert_eq!(classes(&post), [Connect]);
    assert!(!post.rule.pushback.retries);
    let get = policy(
        "preset.urllib3 = { total = 3, status_forcelist = [429, 500, 502, 503, 504], method = \"GET\" }",
    );
    assert_eq!(
        classes(&get),
        [Reset, ServerError, Timeout, Throttled, Overloaded, Connect]
    );
    assert_eq!(get.rule.pushback.mode, RetryAfter::ReplaceUnlessZero);
    assert!(get.rule.pushback.retries);
    // The default cap is 120 s, after the jitter that backoff_jitter adds.
    let jittered = policy("preset.urllib3 = { backoff_factor = 1, backoff_jitter = 0.5 }");
    assert_eq!(jittered.rule.backoff.max_delay, Some(Tick(120 * SECOND)));
    assert!(spread_over(
        &jittered,
        3,
        4 * SECOND,
        4 * SECOND + SECOND / 2
    ));
    // A POST allowed by name is retried as a GET is.
    let allowed = policy("preset.urllib3 = { allowed_methods = [\"POST\"] }");
    assert_eq!(classes(&allowed), [Reset, Timeout, Connect]);
    // read = 0 takes read errors out; a counter from `total` up changes nothing.
    let no_read = policy("preset.urllib3 = { read = 0, connect = 10, method = \"GET\" }");
    assert_eq!(classes(&no_read), [Connect]);
}

#[test]
fn urllib3_rules_retrysim_cannot_count_are_refused_where_written() {
    let e = refused("preset.urllib3 = { total = 5, connect = 2 }");
    assert_says(
        &e,
        &[
            "p.toml:8",
            "policy[0].preset.urllib3.connect",
            "apart from `total`",
        ],
    );
    let e = refused("preset.urllib3 = { status_forcelist = [502, 504], method = \"GET\" }");
    assert_says(&e, &["status_forcelist", "503 is not listed"]);
    let e = refused("preset.urllib3 = { status_forcelist = [400], method = \"GET\" }");
    assert_says(&e, &["retrying a 400 alone"]);
    let e = refused("preset.urllib3 = { totl = 3 }");
    assert_says(&e, &["totl", "total"]);
}

/// tenacity: `wait_exponential(multiplier=1, min=4, max=10)` "starting with 4 seconds, then
/// up to 10 seconds"; `wait_random_exponential(multiplier=1, max=60)` "randomly up to 2^x · 1
/// seconds … then randomly up to 60 seconds"; at its defaults, every failure forever, at once.
#[test]
fn tenacity_stops_and_waits_as_named() {
    let p = policy(
        "preset.tenacity = { stop_after_attempt = 3, wait_exponential = { multiplier = 1, min = 4, max = 10 } }",
    );
    assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(3));
    assert_eq!(
        schedule(&p.rule.backoff),
        [4_000, 4_000, 4_000, 8_000, 10_000]
    );
    let random =
        policy("preset.tenacity = { wait_random_exponential = { multiplier = 1, max = 60 } }");
    for (n, top) in [(1, 1), (3, 4), (6, 32), (7, 60), (9, 60)] {
        assert!(spread_over(&random, n, 0, top * SECOND), "retry {n}");
    }
    let jitter = policy(
        "preset.tenacity = { wait_exponential_jitter = { initial = 1, max = 5, jitter = 1 } }",
    );
    assert!(spread_over(&jitter, 2, 2 * SECOND, 3 * SECOND));
    assert_eq!(draws(&jitter.rule.backoff, 4, 100), [5 * SECOND; 100]);
    let bare = policy("preset.tenacity = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::Unlimited);
    assert_eq!(classes(&bare), FailureClass::ALL);
    assert_eq!(schedule(&bare.rule.backoff), [0; 5]);
    assert_eq!(bare.rule.pushback.mode, RetryAfter::Ignore);
    let e = refused("preset.tenacity = { wait_fixed = 1, wait_exponential = {} }");
    assert_says(&e, &["adds waits together"]);
    let e = refused("preset.tenacity = { wait_random_exponential = { min = 1 } }");
    assert_says(&e, &["wait_random_exponential.min", "draws from `min` up"]);
}

/// botocore: today's standard mode backs off `U[0,1) · min(50 ms · 2^(n−1), 20 s)`, from 1 s
/// after a throttle, and pays 14 tokens a retry, 5 after a throttle; legacy makes five attempts
/// at `U[0,1) · 2^(n−1)` seconds, uncapped; `max_attempts` counts retries.
#[test]
fn botocore_modes_as_documented() {
    let standard = policy("preset.botocore = {}");
    assert_eq!(standard.rule.retry.max_attempts, Attempts::AtMost(3));
    for (n, top) in [(1, 50_000), (3, 200_000), (10, 20 * SECOND)] {
        assert!(spread_over(&standard, n, 0, top), "retry {n}");
    }
    let throttle = standard
        .rule
        .throttle_backoff
        .expect("a throttle's own backoff");
    assert_eq!(throttle.initial_delay, Tick(SECOND));
    assert!(matches!(
        standard.gates.retry_budget,
        Some(BudgetRule::AwsStandard {
            capacity: 500.0,
            retry_cost: 14.0,
            timeout_cost: 14.0,
            throttle_cost: Some(5.0),
            success_credit: 1.0
        })
    ));
    assert_eq!(standard.rule.pushback.mode, RetryAfter::Honour);
    assert_eq!(standard.rule.pushback.over_backoff, Some(Tick(5 * SECOND)));
    let before = policy("preset.botocore = { new_retries_2026 = false, mode = \"standard\" }");
    assert!(spread_over(&before, 2, 0, 2 * SECOND));
    // Capped after the draw: from retry 6 on, U[0,1) · 32 s is cut at 20 s often.
    let d = draws(&before.rule.backoff, 6, 4_000);
    let capped = d.iter().filter(|&&x| x == 20 * SECOND).count();
    // P(U · 32 ≥ 20) = 0.375: 99.9 % of runs fall within ±0.024 of it over 4000 draws.
    assert!((1_404..=1_596).contains(&capped), "{capped}");
    assert!(matches!(
        before.gates.retry_budget,
        Some(BudgetRule::AwsStandard {
            retry_cost: 5.0,
            timeout_cost: 10.0,
            throttle_cost: None,
            ..
        })
    ));
    let legacy = policy("preset.botocore = { new_retries_2026 = false }");
    assert_eq!(legacy.rule.retry.max_attempts, Attempts::AtMost(5));
    assert_eq!(legacy.rule.backoff.max_delay, None);
    assert!(spread_over(&legacy, 4, 0, 8 * SECOND));
    assert!(legacy.gates.retry_budget.is_none());
    let retries = policy("preset.botocore = { max_attempts = 2 }");
    assert_eq!(retries.rule.retry.max_attempts, Attempts::AtMost(3));
    let total = policy("preset.botocore = { total_max_attempts = 2 }");
    assert_eq!(total.rule.retry.max_attempts, Attempts::AtMost(2));
    // Adaptive mode is standard mode with botocore's send-rate limiter.
    let adaptive = policy("preset.botocore = { mode = \"adaptive\" }");
    assert_eq!(adaptive.gates.send_rate, Some(SendRateRule::BOTOCORE));
    assert_eq!(adaptive.rule.retry, standard.rule.retry);
    assert_eq!(adaptive.rule.backoff, standard.rule.backoff);
    assert!(standard.gates.send_rate.is_none());
    let e = refused("preset.botocore = { mode = \"smart\" }");
    assert_says(
        &e,
        &[
            "policy[0].preset.botocore.mode",
            "not a botocore retry mode",
        ],
    );
}

/// botocore's per-service entries, as measured against real botocore: today's standard mode
/// gives DynamoDB and DynamoDB Streams 4 attempts and a 25 ms base (`retries/standard.py`), the
/// legacy mode gives DynamoDB 10 attempts at a fixed 50 ms · 2^(n−1) (`data/_retry.json`), and
/// an explicit count still wins.
#[test]
fn botocore_services_have_their_own_defaults() {
    for service in ["dynamodb", "dynamodb-streams"] {
        let p = policy(&format!("preset.botocore = {{ service = \"{service}\" }}"));
        assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(4), "{service}");
        for (n, top) in [(1, 25_000), (3, 100_000)] {
            assert!(spread_over(&p, n, 0, top), "{service}: retry {n}");
        }
        let throttle = p.rule.throttle_backoff.expect("a throttle's own backoff");
        assert_eq!(throttle.initial_delay, Tick(SECOND), "{service}");
    }
    let legacy = policy("preset.botocore = { mode = \"legacy\", service = \"dynamodb\" }");
    assert_eq!(legacy.rule.retry.max_attempts, Attempts::AtMost(10));
    for (n, wait) in [(1, 50_000), (2, 100_000), (4, 400_000)] {
        assert_eq!(
            draws(&legacy.rule.backoff, n, 50),
            vec![wait; 50],
            "retry {n}"
        );
    }
    // DynamoDB Streams' endpoint has no entry in `_retry.json`; nor has S3 an attempt count.
    for other in ["dynamodb-streams", "s3"] {
        let p = policy(&format!(
            "preset.botocore = {{ mode = \"legacy\", service = \"{other}\" }}"
        ));
        assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(5), "{other}");
    }
    let before = policy(
        "preset.botocore = { new_retries_2026 = false, mode = \"standard\", service = \"dynamodb\" }",
    );
    assert_eq!(before.rule.retry.max_attempts, Attempts::AtMost(3));
    let set = policy("preset.botocore = { service = \"dynamodb\", total_max_attempts = 2 }");
    assert_eq!(set.rule.retry.max_attempts, Attempts::AtMost(2));
    let e = refused("preset.botocore = { service = \"dynamdb\" }");
    assert_says(&e, &["preset.botocore.service", "\"dynamodb\""]);
    let e = refused("preset.botocore = { service = \"DynamoDB\" }");
    assert_says(
        &e,
        &["preset.botocore.service", "not a botocore service id"],
    );
}

const GRPC: &str = r#"preset.grpc = '''
{ "methodConfig": [{ "name": [{ "service": "tools.Api" }], "timeout": "2s", "retryPolicy": {
    "maxAttempts": 9, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE", 8] } }],
  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 } }
'''"#;

/// gRPC: `maxAttempts` 9 is made 5; the n-th retry waits `min(0.1 s · 2^(n−1), 1 s)` ± 20 %;
/// pushback replaces the backoff and restarts it; `timeout` is the call's deadline;
/// `retryThrottling` is a token bucket debited by retryable failures.
#[test]
fn grpc_service_config_as_grfc_a6_says() {
    let p = policy(GRPC);
    assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(5));
    for (n, v) in [
        (1, 100_000),
        (2, 200_000),
        (4, 800_000),
        (5, SECOND),
        (8, SECOND),
    ] {
        assert!(spread_over(&p, n, v * 8 / 10, v * 12 / 10), "retry {n}");
    }
    assert_eq!(
        classes(&p),
        [Reset, ServerError, Throttled, Overloaded, Connect]
    );
    assert_eq!(p.rule.pushback.mode, RetryAfter::Replace);
    assert!(p.rule.pushback.resets);
    assert_eq!(p.time.limits.deadline, Some(Tick(2 * SECOND)));
    assert!(matches!(
        p.gates.retry_budget,
        Some(BudgetRule::TokenBucket {
            max_tokens: 10.0,
            token_ratio: 0.1,
            debits: Some(_)
        })
    ));
}

/// A `hedgingPolicy`: staggered hedges `hedgingDelay` apart, the non-fatal codes retried at
/// once, `maxAttempts` capped at 5; without a delay, every attempt at once.
#[test]
fn grpc_hedging_policy_staggers_its_hedges() {
    let hedged = |policy: &str| {
        read_only(&format!(
            "preset.grpc = '{{ \"methodConfig\": [{{ \"hedgingPolicy\": {policy} }}] }}'"
        ))
    };
    let p = hedged(
        "{ \"maxAttempts\": 7, \"hedgingDelay\": \"0.5s\", \"nonFatalStatusCodes\": [\"UNAVAILABLE\"] }",
    );
    assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(5));
    assert_eq!(p.hedges.delay, Wait::Fixed(Tick(SECOND / 2)));
    assert_eq!(p.hedges.mode, Hedging::Staggered);
    assert_eq!(classes(&p), [Reset, ServerError, Overloaded, Connect]);
    assert_eq!(schedule(&p.rule.backoff), [0; 5]);
    let at_once = hedged("{ \"maxAttempts\": 3 }");
    assert_eq!(at_once.hedges.delay, Wait::Fixed(Tick::ZERO));
    assert_eq!(classes(&at_once), []);
    // A write is not safe to send twice: refused, as any hedge of it is.
    let e = refused(
        "preset.grpc = '{ \"methodConfig\": [{ \"hedgingPolicy\": { \"maxAttempts\": 2 } }] }'",
    );
    assert_says(&e, &["hedge_delay", "not safe to send twice"]);
}

/// A6's header: "Implemented in: Java, .NET, Node, Go except hedging, and C-Core except
/// hedging". Go and the C core (grpcio, measured) read a `hedgingPolicy` and make one attempt
/// per call, and the description says so; the core alone holds a 0 ms pushback (see the
/// model's pushback tests). Without a name, the preset is Java's, which does all of A6.
#[test]
fn grpc_implementations_differ_as_a6_says() {
    let service = "{ \"methodConfig\": [{ \"hedgingPolicy\": { \"maxAttempts\": 3, \"hedgingDelay\": \"0.5s\" } }] }";
    let hedged = |implementation: &str| {
        read_only(&format!(
            "preset.grpc = {{ implementation = \"{implementation}\", service_config = '{service}' }}"
        ))
    };
    for full in ["java", "dotnet", "node"] {
        let p = hedged(full);
        assert_eq!(p.hedges.mode, Hedging::Staggered, "{full}");
        assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(3), "{full}");
        assert_eq!(p.note, None);
    }
    for without in ["go", "core"] {
        let p = hedged(without);
        assert_eq!(p.hedges.delay, Wait::None, "{without}");
        assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(1), "{without}");
        let note = p.note.expect("the description says what is ignored");
        assert!(note.contains("ignores the hedgingPolicy"), "{note}");
    }
    let retrying = |implementation: &str| {
        let config = GRPC
            .trim_start_matches("preset.grpc = '''")
            .trim_end_matches("'''");
        policy(&format!(
            "preset.grpc = {{ implementation = \"{implementation}\", service_config = '''{config}''' }}"
        ))
    };
    assert_eq!(
        retrying("core").rule.pushback.mode,
        RetryAfter::ReplaceZeroHangs
    );
    assert_eq!(retrying("go").rule.pushback.mode, RetryAfter::Replace);
    assert_eq!(retrying("java").rule.retry, policy(GRPC).rule.retry);
    let e = refused("preset.grpc = { implementation = \"rust\", service_config = '{}' }");
    assert_says(&e, &["implementation", "`core`, `go`, `java`, `dotnet`"]);
    let e = refused("preset.grpc = { implementation = \"core\" }");
    assert_says(&e, &["service_config"]);
}

#[test]
fn grpc_configs_retrysim_cannot_follow_are_refused_by_json_path() {
    let e = refused(
        "preset.grpc = '{ \"methodConfig\": [{ \"hedgingPolicy\": {}, \"retryPolicy\": {} }] }'",
    );
    assert_says(
        &e,
        &[
            "$.methodConfig[0]",
            "both a retryPolicy and a hedgingPolicy",
        ],
    );
    let e = refused(
        "preset.grpc = '{ \"methodConfig\": [{ \"retryPolicy\": { \"maxAttempts\": 3, } }] }'",
    );
    assert_says(&e, &["p.toml:8", "JSON line 1 column"]);
    let e = refused(&GRPC.replace("\"UNAVAILABLE\"", "\"UNAVAILABEL\""));
    assert_says(&e, &["retryableStatusCodes[0]", "UNAVAILABEL"]);
    let e = refused(&GRPC.replace("retryPolicy", "retryPolcy"));
    assert_says(&e, &["$.methodConfig[0].retryPolcy", "not a field"]);
}

/// Polly v8: `MaxRetryAttempts` counts retries; constant 2 s by default; linear n · Delay;
/// exponential Delay · 2^(n−1); ±25 % jitter for the first two; `MaxDelay` after jitter;
/// `TimeSpan` text read as .NET writes it.
#[test]
fn polly_backoff_types_as_documented() {
    let bare = policy("preset.polly = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::AtMost(4));
    assert_eq!(schedule(&bare.rule.backoff), [2_000; 5]);
    assert_eq!(classes(&bare), FailureClass::ALL);
    let linear = policy("preset.polly = { BackoffType = \"Linear\", Delay = \"00:00:01\" }");
    assert_eq!(
        schedule(&linear.rule.backoff),
        [1_000, 2_000, 3_000, 4_000, 5_000]
    );
    let exp = policy(
        "preset.polly = { BackoffType = \"Exponential\", Delay = \"1s\", MaxDelay = \"00:00:05\" }",
    );
    assert_eq!(
        schedule(&exp.rule.backoff),
        [1_000, 2_000, 4_000, 5_000, 5_000]
    );
    let jittered = policy("preset.polly = { UseJitter = true }");
    assert!(spread_over(&jittered, 3, 1_500_000, 2_500_000));
    let forever = policy("preset.polly = { MaxRetryAttempts = 2147483647 }");
    assert_eq!(forever.rule.retry.max_attempts, Attempts::Unlimited);
    let e = refused("preset.polly = { Delay = \"2 seconds\" }");
    assert_says(&e, &["preset.polly.Delay", "TimeSpan"]);
}

/// resilience4j: three attempts 500 ms apart by default; exponential 500 ms × 1.5;
/// randomized U[x/2, 3x/2]; both, the cap after the draw.
#[test]
fn resilience4j_interval_functions_as_documented() {
    let bare = policy("preset.resilience4j = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::AtMost(3));
    assert_eq!(schedule(&bare.rule.backoff), [500; 5]);
    let exp = policy("preset.resilience4j = { enableExponentialBackoff = true }");
    assert_eq!(schedule(&exp.rule.backoff), [500, 750, 1_125, 1_687, 2_531]);
    let random = policy("preset.resilience4j = { enableRandomizedWait = true }");
    assert!(spread_over(&random, 2, 250_000, 750_000));
    let both = policy(
        "preset.resilience4j = { enableExponentialBackoff = true, enableRandomizedWait = true, exponentialMaxWaitDuration = \"1s\" }",
    );
    assert!(spread_over(&both, 2, 375_000, SECOND));
    let e = refused("preset.resilience4j = { exponentialBackoffMultiplier = 2 }");
    assert_says(&e, &["exponentialBackoffMultiplier", "not enabled"]);
}

/// Envoy: one retry by default, on nothing without `retry_on`; the n-th waits
/// U[0, min(25 ms · 2^(n−1), 250 ms)); the route's 15 s bounds every attempt together; a
/// timeout is retried only with a per-try timeout.
#[test]
fn envoy_retry_policy_as_configured() {
    let bare = policy("preset.envoy = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::AtMost(2));
    assert_eq!(classes(&bare), []);
    assert_eq!(bare.time.limits.deadline, Some(Tick(15 * SECOND)));
    for (n, top) in [(1, 25_000), (3, 100_000), (4, 200_000), (6, 250_000)] {
        assert!(spread_over(&bare, n, 0, top), "retry {n}");
    }
    let p = policy("preset.envoy = { retry_on = \"5xx\", num_retries = 3 }");
    assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(4));
    assert_eq!(classes(&p), [Reset, ServerError, Overloaded, Connect]);
    let per_try = policy(
        "preset.envoy = { retry_on = \"reset,retriable-status-codes\", retriable_status_codes = [429], per_try_timeout = \"0.5s\", rate_limited_retry_back_off = { reset_headers = [{ name = \"Retry-After\" }] } }",
    );
    assert_eq!(classes(&per_try), [Reset, Timeout, Throttled, Connect]);
    assert_eq!(per_try.rule.pushback.mode, RetryAfter::Replace);
    assert_eq!(per_try.rule.pushback.max, Some(Tick(300 * SECOND)));
    let e = refused("preset.envoy = { retry_on = \"5xx,retriable-headers\" }");
    assert_says(&e, &["preset.envoy.retry_on", "retriable-headers"]);
}

#[test]
fn a_preset_owns_its_keys_and_names_one_library() {
    let e = refused("max_attempts = 3\npreset.urllib3 = {}");
    assert_says(
        &e,
        &[
            "p.toml:8",
            "policy[0].max_attempts",
            "urllib3 preset's to set",
        ],
    );
    // A key the preset leaves alone may be written beside it.
    let p = policy("timeout = \"2s\"\nidempotency_key = \"per_intent\"\npreset.urllib3 = {}");
    assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(11));
    let e = refused("preset = {}");
    assert_says(&e, &["policy[0].preset", "names no library"]);
    let e = refused("preset.urllib3 = {}\npreset.polly = {}");
    assert_says(&e, &["policy[0].preset.polly", "one library"]);
    let e = refused("preset.requests = {}");
    assert_says(&e, &["requests", "urllib3"]);
}

/// The Stainless SDKs' `_calculate_retry_timeout`, transcribed: a Retry-After of 0 < v ≤ the
/// limit is the delay; otherwise min(0.5 · 2^k, 8) · (1 − 0.25 · u) seconds for retry k (from
/// 0), u = `random()`. `None` where OpenAI's SDK (since #3555) does not retry at all.
fn stainless_delay(
    limit: f64,
    stops_over: bool,
    k: i32,
    u: f64,
    retry_after: Option<f64>,
) -> Option<f64> {
    if let Some(v) = retry_after {
        if 0.0 < v && v <= limit {
            return Some(v);
        }
        if stops_over && v > limit {
            return None;
        }
    }
    let sleep = (0.5 * 2f64.powi(k)).min(8.0);
    Some(sleep * (1.0 - 0.25 * u))
}

/// `preset.openai = {}` and `preset.anthropic = {}` (and its 0.121.0): three attempts,
/// 408/409/429/5xx, connection errors and timeouts retried, a 600 s timeout, `x-should-retry`
/// obeyed; and every delay — the backoff for retries 1 to 8 over a thousand random words, and
/// the Retry-After around each SDK's limit — held against the SDK's own computation, to the
/// tick its fractional seconds round to. The current Anthropic SDK (2.17.0) has no limit: 90,
/// 120, 121 and 150 s are waited, as measured against it.
#[test]
fn the_openai_and_anthropic_sdks_retry_as_their_code_does() {
    use retrysim::engine::rng::{Source as Stream, Streams, word};
    use retrysim::policy::{OverLimit, Previous, ShouldRetry};
    for (sdk, settings, limit, stops_over) in [
        ("openai", "", 120.0, true),
        ("anthropic", "version = \"0.121.0\"", 60.0, false),
        ("anthropic", "", f64::INFINITY, false),
    ] {
        let p = policy(&format!("preset.{sdk} = {{ {settings} }}"));
        assert_eq!(p.rule.retry.max_attempts, Attempts::AtMost(3), "{sdk}");
        assert_eq!(
            classes(&p),
            [
                Reset,
                ServerError,
                Timeout,
                Throttled,
                Overloaded,
                Conflict,
                VersionConflict,
                Connect
            ],
            "{sdk}"
        );
        assert_eq!(p.time.timeout, Wait::Fixed(Tick(600 * SECOND)));
        assert_eq!(p.rule.should_retry, ShouldRetry::Obey);
        assert_eq!(
            policy(&format!("preset.{sdk} = {{ max_retries = 5 }}"))
                .rule
                .retry
                .max_attempts,
            Attempts::AtMost(6)
        );
        let mut stream = Streams {
            seed: 27,
            point: 0,
            replication: 0,
        }
        .stream(Stream::Jitter, 0);
        for n in 1..=8u32 {
            for _ in 0..1_000 {
                let w = word(&mut stream);
                let ours = p.rule.backoff.delay(n, Previous::default(), w).0 as f64;
                let u = w as f64 / 2f64.powi(64);
                let theirs = stainless_delay(limit, stops_over, n as i32 - 1, u, None).unwrap();
                assert!(
                    (ours - theirs * 1e6).abs() <= 1.0,
                    "{sdk} retry {n}: {ours} vs {theirs}"
                );
            }
        }
        // The backoff stands for the SDK's own first one at u = ½: 0.5 s · 0.875.
        let backoff = Tick(437_500);
        for asked in [0.0, 0.5, 30.0, 60.0, 61.0, 90.0, 120.0, 121.0, 150.0, 600.0] {
            let theirs = stainless_delay(limit, stops_over, 0, 0.5, Some(asked));
            let told = Tick((asked * 1e6) as u64);
            let ours = match p.rule.pushback.over_limit(told) {
                Some(OverLimit::Stop) => None,
                _ => Some(
                    p.rule
                        .pushback
                        .delay(told, backoff, || 0)
                        .unwrap_or(backoff)
                        .0 as f64
                        / 1e6,
                ),
            };
            assert_eq!(ours, theirs, "{sdk} with Retry-After {asked} s");
        }
    }
}

/// The Anthropic preset names the release it follows, the current one by default; an unknown
/// one is refused with the releases it knows, and the OpenAI preset takes none.
#[test]
fn the_anthropic_preset_names_its_release() {
    let e = refused("preset.anthropic = { version = \"2.17\" }");
    assert!(
        e.contains("preset.anthropic.version") && e.contains("\"2.17.0\", \"0.121.0\""),
        "{e}"
    );
    let e = refused("preset.openai = { version = \"3.3.1\" }");
    assert!(e.contains("takes no version"), "{e}");
}

/// Temporal's activity retries: unlimited attempts 1 s, 2 s, 4 s … apart, capped at 100 × the
/// initial interval, no jitter; `maximum_attempts` counts attempts; the non-retryable types
/// leave their failures unretried (the start-to-close timeout by Temporal's own name); the
/// start-to-close timeout is the attempt's, the schedule-to-close the operation's deadline.
#[test]
fn temporal_activity_retries_as_documented() {
    let bare = policy("preset.temporal = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::Unlimited);
    assert_eq!(
        schedule(&bare.rule.backoff),
        [1_000, 2_000, 4_000, 8_000, 16_000]
    );
    assert_eq!(bare.rule.backoff.max_delay, Some(Tick(100 * SECOND)));
    assert_eq!(classes(&bare), FailureClass::ALL);
    let set = policy(
        "preset.temporal = { maximum_attempts = 1, non_retryable_error_types = [\"4xx\", \"TemporalTimeout:StartToClose\"], start_to_close_timeout = \"10s\", schedule_to_close_timeout = \"1m\" }",
    );
    assert_eq!(set.rule.retry.max_attempts, Attempts::AtMost(1));
    assert!(!classes(&set).contains(&Invalid) && !classes(&set).contains(&Timeout));
    assert!(classes(&set).contains(&ServerError));
    assert_eq!(set.time.timeout, Wait::Fixed(Tick(10 * SECOND)));
    assert_eq!(set.time.limits.deadline, Some(Tick(60 * SECOND)));
    let e = refused("preset.temporal = { non_retryable_error_types = [\"ValueError\"] }");
    assert_says(
        &e,
        &[
            "non_retryable_error_types[0]",
            "TemporalTimeout:StartToClose",
        ],
    );
    let e = refused("preset.temporal = { backoff_coefficient = 0.5 }");
    assert_says(&e, &["preset.temporal.backoff_coefficient", "≥ 1"]);
}

/// Step Functions: `MaxAttempts` counts retries (3: four executions; 0: one), 1 s × 2, the cap
/// before a FULL jitter; `States.TaskFailed` retries every failure but the timeout.
#[test]
fn step_functions_retriers_as_documented() {
    let bare = policy("preset.step_functions = {}");
    assert_eq!(bare.rule.retry.max_attempts, Attempts::AtMost(4));
    assert_eq!(
        schedule(&bare.rule.backoff),
        [1_000, 2_000, 4_000, 8_000, 16_000]
    );
    assert_eq!(classes(&bare), FailureClass::ALL);
    let never = policy("preset.step_functions = { MaxAttempts = 0 }");
    assert_eq!(never.rule.retry.max_attempts, Attempts::AtMost(1));
    let capped = policy(
        "preset.step_functions = { ErrorEquals = [\"States.TaskFailed\"], MaxDelaySeconds = 3, JitterStrategy = \"FULL\", TimeoutSeconds = 30 }",
    );
    assert!(!classes(&capped).contains(&Timeout) && classes(&capped).contains(&ServerError));
    // The third retry's wait: 4 s capped at 3 s, then drawn from U(0, 3 s).
    assert!(spread_over(&capped, 3, 0, 3 * SECOND));
    assert_eq!(capped.time.timeout, Wait::Fixed(Tick(30 * SECOND)));
    let e = refused("preset.step_functions = { JitterStrategy = \"EQUAL\" }");
    assert_says(
        &e,
        &[
            "preset.step_functions.JitterStrategy",
            "\"FULL\" or \"NONE\"",
        ],
    );
    let e = refused("preset.step_functions = { ErrorEquals = [\"Lambda.Unknown\"] }");
    assert_says(&e, &["ErrorEquals[0]", "States.ALL"]);
}
