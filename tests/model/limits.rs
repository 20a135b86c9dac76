//! A provider's rate limit (`configs/rate-limited-provider.toml`): the bucket's bound holds on
//! every window, honouring the same Retry-After brings clients back in waves that jitter
//! spreads, and per-caller state with one caller is the shared state.

use retrysim::metrics::{Count, Outcome, Sample};
use retrysim::model::{FailureClass, LimitScope};
use retrysim::policy::GateScope;
use retrysim::time::{TICKS_PER_SECOND, Tick};

use crate::common::{self, experiment, shipped, traced};

/// Every request the limiter let through, for each configuration: over every window of length
/// W, fewer than W / T + burst (T the interval between tokens). The network leg is a constant
/// 20 ms, so a request reaches the limiter 20 ms after it was sent.
#[test]
fn no_window_lets_through_more_than_the_rate_and_the_burst() {
    let exp = shipped("rate-limited-provider.toml");
    let limit = exp.tools[0]
        .server
        .rate_limit
        .expect("the provider has a limit");
    let leg = Tick(20_000);
    for policy in 0..exp.policies.len() {
        let mut accepted: Vec<u64> = common::traced(&exp, policy)
            .iter()
            .flat_map(|(_, attempts)| attempts.iter())
            .filter(|a| a.outcome != Outcome::Refused(FailureClass::Throttled))
            .map(|a| a.dispatch.after(leg).0)
            .collect();
        accepted.sort_unstable();
        assert!(accepted.len() > 400, "{}", accepted.len());
        for window in [1, 100_000, 1_000_000, 10_000_000] {
            let bound = window as f64 / limit.interval.0 as f64 + f64::from(limit.burst);
            let mut end = 0;
            for (i, &from) in accepted.iter().enumerate() {
                while end < accepted.len() && accepted[end] < from + window {
                    end += 1;
                }
                assert!(((end - i) as f64) < bound, "{} from {from}", end - i);
            }
        }
    }
}

/// Clients told the same Retry-After come back together: in the backlog after the burst,
/// honouring it sends retries in waves a second apart, and jitter on top spreads them. The
/// peak quarter-second of retries stands further above the mean without jitter; and honouring
/// without jitter meets the most 429s, ignoring the header the fewest.
#[test]
fn the_same_retry_after_brings_waves_that_jitter_spreads() {
    let exp = shipped("rate-limited-provider.toml");
    let result = common::run_one(exp.clone());
    let by = |name: &str| {
        let i = exp.policies.iter().position(|p| p.name == name).unwrap();
        &result.policies[i]
    };
    let peakiness = |name: &str| {
        let stats = by(name).series.as_ref().unwrap();
        let bins = |s: u64| (s * TICKS_PER_SECOND / stats.width().0) as usize;
        let retries: Vec<f64> = (bins(23)..bins(33))
            .map(|i| stats.count(0, i, Count::Retry).mean())
            .collect();
        let mean = retries.iter().sum::<f64>() / retries.len() as f64;
        retries.iter().fold(0.0, |m: f64, &r| m.max(r)) / mean
    };
    let (waves, spread) = (
        peakiness("honour-retry-after"),
        peakiness("honour-retry-after-jitter"),
    );
    assert!(waves > 1.5 * spread, "{waves} vs {spread}");
    let throttled = |name: &str| {
        let i = Outcome::Refused(FailureClass::Throttled).index();
        by(name).tool_totals(0).outcomes[i]
    };
    let names = [
        "ignore-retry-after",
        "honour-retry-after-jitter",
        "honour-retry-after",
    ];
    let counts = names.map(throttled);
    assert!(counts[0] < counts[1] && counts[1] < counts[2], "{counts:?}");
}

/// Per-caller gates and buckets with a single caller are the shared ones: the same run, bin
/// for bin.
#[test]
fn one_caller_with_its_own_gates_is_the_shared_gates() {
    for config in ["retry-storm.toml", "rate-limited-provider.toml"] {
        let mut shared = shipped(config);
        shared.workload.callers = 1;
        let mut own = shared.clone();
        for p in &mut own.policies {
            p.gates.scope = GateScope::Caller;
        }
        for t in &mut own.tools {
            if let Some(limit) = &mut t.server.rate_limit {
                limit.scope = LimitScope::Caller;
            }
        }
        let (a, b) = (common::run_one(shared), common::run_one(own));
        for (x, y) in a.policies.iter().zip(&b.policies) {
            assert_eq!(x.totals, y.totals, "{config}");
            assert_eq!(x.series, y.series, "{config}");
        }
    }
}

/// Goodput never runs ahead of the load: by the end of every bin, the intents that succeeded
/// are at most the intents offered so far.
#[test]
fn goodput_never_exceeds_the_load_offered_so_far() {
    for config in ["retry-storm.toml", "rate-limited-provider.toml"] {
        let exp = shipped(config);
        let result = common::run_one(exp.clone());
        for r in &result.policies {
            let stats = r.series.as_ref().unwrap();
            let (mut offered, mut goodput) = (0.0, 0.0);
            for i in 0..stats.len(0) {
                offered += stats.count(0, i, Count::Offered).mean();
                goodput += stats.count(0, i, Count::Goodput).mean();
                assert!(goodput <= offered + 1e-9, "{config}: bin {i}");
            }
        }
    }
}

/// A 429 says two waits, and `retry_after_from` picks the one a client reads: a batch of four
/// calls at tick 0 meets a bucket that holds three. At a rate limit of 10 a second with a burst
/// of 3, the fourth could pass 100 ms later and the bucket is full 300 ms later; at a model's
/// 60 000 tokens a minute with a burst of 6 000, where each request reserves 1 000 input and
/// 1 000 `max_tokens` and generates all of them (nothing given back), 2 s and 6 s. The refused
/// call's retry goes out exactly then under `retry_after = "replace"`, nothing on the way.
#[test]
fn a_refusal_is_read_by_its_retry_after_or_by_its_reset() {
    let instant = "request_latency = { dist = \"constant\", value = \"0s\" }\n\
                   reply_latency = { dist = \"constant\", value = \"0s\" }";
    let requests = format!(
        "service_time = {{ dist = \"constant\", value = \"10ms\" }}\n{instant}\n\
         rate_limit = {{ per_second = 10, burst = 3, retry_after_unit = \"1ms\" }}"
    );
    let tokens = format!(
        "kind = \"model\"\n{instant}\nmodel = {{ input_tokens = {{ dist = \"constant\", value = 1000 }}, \
         output_tokens = {{ dist = \"constant\", value = 1000 }}, max_tokens = 1000, \
         first_token = {{ dist = \"constant\", value = \"100ms\" }}, tokens_per_second = 1000 }}\n\
         tokens_per_minute = {{ limit = 60000, burst = 6000, retry_after_unit = \"1ms\" }}"
    );
    // The dispatch of every retry, in milliseconds.
    let retries = |tool: &str, from: &str| -> Vec<u64> {
        let exp = experiment(&format!(
            "name = \"r\"\n[workload]\ntasks = 4\n[[tool]]\nname = \"t\"\n{tool}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 2\nretry_after = \"replace\"\n\
             retry_after_from = \"{from}\"\n"
        ));
        let mut at: Vec<u64> = traced(&exp, 0)
            .iter()
            .flat_map(|(_, attempts)| attempts.iter().skip(1))
            .map(|a| a.dispatch.0 / 1_000)
            .collect();
        at.sort_unstable();
        at
    };
    assert_eq!(retries(&requests, "retry-after"), [100]);
    assert_eq!(retries(&requests, "reset"), [300]);
    assert_eq!(retries(&tokens, "retry-after"), [2_000]);
    assert_eq!(retries(&tokens, "reset"), [6_000]);
}

/// A 429 drawn from a tool's `throttled` carries a Retry-After and no reset: a client that reads
/// the reset reads the Retry-After there.
#[test]
fn a_drawn_429_has_no_reset_to_read() {
    let gaps = |from: &str| {
        let exp = experiment(&format!(
            "name = \"r\"\n[workload]\ntasks = 200\n[[tool]]\nname = \"t\"\n\
             throttled = 0.5\nretry_after = \"2s\"\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 2\nretry_after = \"replace\"\n\
             retry_after_from = \"{from}\"\n"
        ));
        traced(&exp, 0)
            .iter()
            .filter(|(_, a)| a.len() == 2)
            .map(|(_, a)| a[1].dispatch.0 - a[0].end.0)
            .collect::<Vec<u64>>()
    };
    let header = gaps("retry-after");
    assert!(header.len() > 50, "{}", header.len());
    assert!(header.iter().all(|&g| g == 2 * TICKS_PER_SECOND));
    assert_eq!(gaps("reset"), header);
}

/// A model's tokens-per-minute bucket, rebuilt from the trace alone and held to every decision
/// the run made. Every call sends 1 000 tokens and may generate `max_tokens` = 1 000, and
/// generates 300: an attempt that reaches the provider (10 ms after its dispatch) is admitted
/// only with 2 000 tokens in the bucket, which it takes; answered (10 ms before its end), it
/// gives back the 700 it did not generate; swallowed by the outage from 60 s to 80 s, it
/// generated nothing and gives back all 1 000 at once. The bucket refills at 60 000 a minute, a
/// token a millisecond, and holds 20 000. Rebuilt on integers (a tick is a thousandth of a
/// token), it must admit every attempt the run admitted and refuse every 429; and over every
/// minute the tokens let through, taken less given back, stay within the limit plus the burst.
#[test]
fn a_models_token_bucket_rebuilt_from_the_trace_makes_every_decision_the_run_made() {
    let exp = experiment(
        "name = \"tpm\"\nseed = 5\nreplications = 1\nhorizon = \"10m\"\n\
         [workload]\narrival = \"poisson\"\nduration = \"3m\"\nclients = 100000\n\
         rate = [{ at = \"0s\", per_second = 1.5 }]\n\
         [[tool]]\nname = \"llm\"\nkind = \"model\"\n\
         request_latency = { dist = \"constant\", value = \"10ms\" }\n\
         reply_latency = { dist = \"constant\", value = \"10ms\" }\n\
         model = { input_tokens = { dist = \"constant\", value = 1000 }, \
         output_tokens = { dist = \"constant\", value = 300 }, max_tokens = 1000, \
         first_token = { dist = \"constant\", value = \"200ms\" }, tokens_per_second = 100 }\n\
         tokens_per_minute = { limit = 60000, burst = 20000, retry_after_unit = \"1ms\" }\n\
         outages = [{ from = \"60s\", until = \"80s\", mode = \"hang\" }]\n\
         [[policy]]\nname = \"p\"\nmax_attempts = 6\ntimeout = \"5s\"\n",
    );
    let leg = 10_000;
    // (tick, order, milli-tokens needed, milli-tokens taken): within a tick, what was given back
    // first, then admissions, then refusals — a refusal takes nothing, so an admission in the
    // same tick came before it. A swallowed attempt takes 2 000 and gives 1 000 back at once.
    let mut events: Vec<(u64, u8, i64, i64)> = Vec::new();
    let (mut admitted, mut refused, mut swallowed) = (0, 0, 0);
    for (_, attempts) in traced(&exp, 0) {
        for a in attempts {
            let arrival = a.dispatch.0 + leg;
            match a.outcome {
                Outcome::Refused(FailureClass::Throttled) => {
                    refused += 1;
                    events.push((arrival, 2, 2_000_000, 0));
                }
                Outcome::Ok => {
                    admitted += 1;
                    events.push((arrival, 1, 2_000_000, 2_000_000));
                    events.push((a.end.0 - leg, 0, 0, -700_000));
                }
                Outcome::Timeout => {
                    swallowed += 1;
                    assert!((60_000_000..80_000_000).contains(&arrival), "{a:?}");
                    events.push((arrival, 1, 2_000_000, 1_000_000));
                }
                other => panic!("{other:?}: only answers, 429s and the outage's silence"),
            }
        }
    }
    assert!(admitted > 100 && refused > 100 && swallowed > 5);
    events.sort_unstable();
    let full = 20_000_000i64;
    let (mut level, mut at) = (full, 0u64);
    for &(tick, order, need, taken) in &events {
        level = (level + (tick - at) as i64).min(full);
        at = tick;
        match order {
            0 => level = (level - taken).min(full),
            1 => {
                assert!(
                    level >= need,
                    "admitted at {tick} with {level} in the bucket"
                );
                level -= taken;
            }
            _ => assert!(level < need, "refused at {tick} with {level}"),
        }
    }
    // Over every minute: taken at admission less given back.
    let moves: Vec<(u64, i64)> = (events.iter())
        .filter(|e| e.3 != 0)
        .map(|e| (e.0, e.3))
        .collect();
    let (mut window, mut start, mut busiest) = (0i64, 0, 0i64);
    for end in 0..moves.len() {
        window += moves[end].1;
        while moves[end].0 - moves[start].0 >= 60 * TICKS_PER_SECOND {
            window -= moves[start].1;
            start += 1;
        }
        busiest = busiest.max(window);
    }
    assert!(busiest <= 80_000_000, "{busiest} milli-tokens in a minute");
    assert!(
        busiest > 60_000_000,
        "{busiest}: the limit was never approached"
    );
}

/// `retry-after-ms` before `Retry-After`, as the OpenAI and Anthropic SDKs read them: three
/// calls at tick 0 reserve 2 500 tokens each from a bucket of 6 000 that refills 1 000 a
/// second; the third is 1 500 short, so it could pass 1.5 s later. The `Retry-After` says 2 s
/// (whole seconds); where the tool sends `retry-after-ms` too, it says 1 500. A client that reads
/// it first comes back at 1.5 s — the SDKs' preset among them — and one that reads the
/// `Retry-After` at 2 s; without the header, every client reads the `Retry-After`.
#[test]
fn retry_after_ms_is_read_before_retry_after_where_the_server_sends_it() {
    let retry = |sends_ms: bool, policy: &str| -> Vec<u64> {
        let exp = experiment(&format!(
            "name = \"r\"\n[workload]\ntasks = 3\n[[tool]]\nname = \"t\"\nkind = \"model\"\n\
             request_latency = {{ dist = \"constant\", value = \"0s\" }}\n\
             reply_latency = {{ dist = \"constant\", value = \"0s\" }}\n\
             model = {{ input_tokens = {{ dist = \"constant\", value = 500 }}, \
             output_tokens = {{ dist = \"constant\", value = 2000 }}, max_tokens = 2000, \
             first_token = {{ dist = \"constant\", value = \"100ms\" }}, tokens_per_second = 1000 }}\n\
             tokens_per_minute = {{ limit = 60000, burst = 6000 }}\nretry_after_ms = {sends_ms}\n\
             [[policy]]\nname = \"p\"\n{policy}\n"
        ));
        (traced(&exp, 0).iter())
            .flat_map(|(_, attempts)| attempts.iter().skip(1))
            .map(|a| a.dispatch.0 / 1_000)
            .collect()
    };
    let reads = |from: &str| {
        format!("max_attempts = 2\nretry_after = \"replace\"\nretry_after_from = \"{from}\"")
    };
    let openai = "preset.openai = { max_retries = 2 }";
    let anthropic = "preset.anthropic = { max_retries = 2 }";
    assert_eq!(retry(true, &reads("retry-after")), [2_000]);
    assert_eq!(retry(true, &reads("retry-after-ms")), [1_500]);
    assert_eq!(retry(true, openai), [1_500]);
    assert_eq!(retry(true, anthropic), [1_500]);
    assert_eq!(retry(false, &reads("retry-after-ms")), [2_000]);
    assert_eq!(retry(false, openai), [2_000]);
}
