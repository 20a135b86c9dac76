//! The backoff rules real retry libraries use, written as their settings and held against the
//! schedules their documentation gives: urllib3, tenacity, gRPC and resilience4j.

use retrysim::config::{Origin, Source};
use retrysim::engine::rng::{Source as Stream, Streams, word};
use retrysim::policy::{Backoff, Previous};
use retrysim::time::Tick;

use crate::reading::{assert_says, error};

/// The backoff of a one-policy config whose `[policy.backoff]` is `backoff`.
fn backoff(backoff: &str) -> Backoff {
    let text = format!(
        "name = \"b\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"t\"\n[[policy]]\nname = \"p\"\n\
         max_attempts = 9\nbackoff = {{ {backoff} }}\n"
    );
    let source = Source {
        name: "b.toml".into(),
        text,
        origin: Origin::Text,
    };
    let sweep = source.sweep().unwrap_or_else(|e| panic!("{e}"));
    sweep.point(0).experiment.policies[0].rule.backoff
}

/// Delays before retries 1..=5, in milliseconds, of a backoff without jitter.
pub fn schedule(b: &Backoff) -> Vec<u64> {
    (1..=5)
        .map(|n| b.delay(n, Previous::default(), 0).0 / 1000)
        .collect()
}

/// `draws` delays before retry `n`, in ticks, from a jitter stream.
pub fn draws(b: &Backoff, n: u32, count: usize) -> Vec<u64> {
    let mut rng = Streams {
        seed: 5,
        point: 0,
        replication: 0,
    }
    .stream(Stream::Jitter, u64::from(n));
    (0..count)
        .map(|_| b.delay(n, Previous::default(), word(&mut rng)).0)
        .collect()
}

/// urllib3's `Retry(backoff_factor=0.1)`: "Retry.sleep will sleep for [0.0s, 0.2s, 0.4s, 0.8s,
/// …] between retries" (urllib3 2.x docs): the first retry at once, then factor · 2^(n−1).
#[test]
fn urllib3_waits_nothing_first_then_doubles() {
    let b = backoff(
        r#"kind = "exponential", initial_delay = "100ms", multiplier = 2, jitter = "none",
           first_retry = "immediate", cap = "after_jitter", max_delay = "120s""#,
    );
    assert_eq!(schedule(&b), [0, 200, 400, 800, 1600]);
}

/// tenacity's `wait_exponential(multiplier=1, min=4, max=10)`: "Wait 2^x * 1 second between
/// each retry starting with 4 seconds, then up to 10 seconds, then 10 seconds afterwards"
/// (tenacity docs): max(min, min(2^(n−1), max)).
#[test]
fn tenacity_floors_and_caps_its_exponential() {
    let b = backoff(
        r#"initial_delay = "1s", multiplier = 2, max_delay = "10s", min_delay = "4s",
           jitter = "none""#,
    );
    assert_eq!(schedule(&b), [4_000, 4_000, 4_000, 8_000, 10_000]);
}

/// tenacity's `wait_exponential_jitter(initial=1, max=5, jitter=1)`: min(initial · 2^(n−1) +
/// U(0, jitter), max) (tenacity's source): additive jitter, capped after it.
#[test]
fn tenacity_adds_its_jitter_then_caps() {
    let b = backoff(
        r#"initial_delay = "1s", multiplier = 2, max_delay = "5s", jitter = "additive",
           jitter_max = "1s", cap = "after_jitter""#,
    );
    for (n, base) in [(1, 1_000_000), (2, 2_000_000), (3, 4_000_000)] {
        let d = draws(&b, n, 5_000);
        assert!(
            d.iter()
                .all(|&t| t >= base && t <= (base + 1_000_000).min(5_000_000))
        );
        let mean = d.iter().sum::<u64>() as f64 / d.len() as f64;
        if n < 3 {
            // U(0, 1 s) on top: mean half a second above, sd 0.29 s / √5000 = 4 ms; 5 sd.
            assert!(
                (mean - (base as f64 + 500_000.0)).abs() < 20_000.0,
                "{n}: {mean}"
            );
        }
    }
    // 8 s plus jitter is past the cap: always 5 s.
    assert!(draws(&b, 4, 1_000).iter().all(|&t| t == 5_000_000));
    // Without a cap at all, the curve goes on: 2^29 s before retry 30.
    let uncapped = backoff(r#"initial_delay = "1s", max_delay = "none", jitter = "none""#);
    assert_eq!(uncapped.max_delay, None);
    assert_eq!(
        uncapped.delay(30, Previous::default(), 0),
        Tick((1u64 << 29) * 1_000_000)
    );
}

/// gRPC's connection backoff (gRFC A6 as revised; grpc-go's defaults 1 s, 1.6, 120 s, jitter
/// 0.2): min(initial · 1.6^(n−1), max), then × U[0.8, 1.2], so a delay may pass the cap by a
/// fifth.
#[test]
fn grpc_jitters_twenty_percent_around_its_capped_curve() {
    let b = backoff(
        r#"initial_delay = "1s", multiplier = 1.6, max_delay = "120s", jitter = "proportional""#,
    );
    assert_eq!(b.jitter_factor, 0.2);
    for (n, v) in [(1u32, 1.0f64), (2, 1.6), (3, 2.56), (12, 120.0)] {
        let d = draws(&b, n, 5_000);
        let (lo, hi) = (v * 0.8e6, v * 1.2e6);
        assert!(
            d.iter()
                .all(|&t| (lo - 1.0..=hi + 1.0).contains(&(t as f64))),
            "{n}"
        );
        // Both ends of the range are reached within 1 % of its width.
        let (min, max) = (
            *d.iter().min().unwrap() as f64,
            *d.iter().max().unwrap() as f64,
        );
        assert!(
            min < lo + (hi - lo) / 100.0 && max > hi - (hi - lo) / 100.0,
            "{n}"
        );
    }
}

/// resilience4j's `ofExponentialRandomBackoff(500 ms, 1.5, 0.5, 1 s)`: min(randomize(500 ms ·
/// 1.5^(n−1), 0.5), max) — jitter, then cap, so delays pile up at the cap. Before retry 3 the
/// curve is 1125 ms, jittered over [562.5, 1687.5] ms: a share (1687.5 − 1000)/1125 = 0.611 of
/// the draws lands on the cap.
#[test]
fn resilience4j_piles_up_at_its_cap() {
    let b = backoff(
        r#"initial_delay = "500ms", multiplier = 1.5, max_delay = "1s", jitter = "proportional",
           jitter_factor = 0.5, cap = "after_jitter""#,
    );
    let d = draws(&b, 3, 10_000);
    assert!(d.iter().all(|&t| (562_500..=1_000_000).contains(&t)));
    let share = d.iter().filter(|&&t| t == 1_000_000).count() as f64 / d.len() as f64;
    // Binomial sd at 10 000 draws: √(0.611 · 0.389 / 10 000) = 0.0049; 4 sd.
    assert!((share - 0.611).abs() < 0.02, "{share}");
}

/// Polly v8's exponential jitter (`DecorrelatedJitterBackoffV2`, `Delay` 1 s): each try's
/// delay lies in the range Polly documents, (0, Delay·2^(t+1)] for try t = 0 or 1 and
/// (0, Delay·(2^(t+1) − 2^(t−1))] after, and its medians come out near Delay·1, 2, 4, 8 from the
/// third retry on (Polly's docs; the formula's own medians are 2.02, 4.00, 8.01, 16.0 s).
#[test]
fn pollys_v2_jitter_stays_in_its_documented_ranges() {
    let b = backoff(r#"initial_delay = "1s", max_delay = "none", jitter = "decorrelated_v2""#);
    let mut rng = Streams {
        seed: 9,
        point: 0,
        replication: 0,
    }
    .stream(Stream::Jitter, 0);
    let mut delays: Vec<Vec<u64>> = vec![Vec::new(); 6];
    for _ in 0..20_000 {
        let mut previous = Previous::default();
        for (t, out) in delays.iter_mut().enumerate() {
            let w = word(&mut rng);
            let d = b.delay(t as u32 + 1, previous, w).0;
            let bound = if t < 2 {
                2u64 << t
            } else {
                (2u64 << t) - (1 << (t - 1))
            };
            assert!(d <= bound * 1_000_000, "try {t}: {d}");
            out.push(d);
            previous = Previous {
                delay: Tick(d),
                word: w,
            };
        }
    }
    for (t, expected) in [(2, 2.0), (3, 4.0), (4, 8.0), (5, 16.0)] {
        let d = &mut delays[t];
        d.sort_unstable();
        let median = d[d.len() / 2] as f64 / 1e6;
        // Sampling error of a median at 20 000 draws is well under 1 %.
        assert!(
            (median / expected - 1.0).abs() < 0.03,
            "try {t}: median {median}"
        );
    }
}

#[test]
fn each_rule_refuses_what_it_cannot_mean() {
    let policy = |backoff: &str| {
        error(
            "name = \"p\"\n",
            &format!("name = \"p\"\nbackoff = {{ {backoff} }}\n"),
        )
    };
    let cases = [
        (
            r#"jitter = "full", jitter_factor = 0.5"#,
            vec!["policy[0].backoff.jitter_factor", "not to \"full\""],
        ),
        (
            r#"jitter = "proportional", jitter_factor = 1.5"#,
            vec!["1.5 is not a share", "from 0 to 1"],
        ),
        (
            r#"jitter = "additive""#,
            vec!["policy[0].backoff.jitter_max", "needs jitter_max"],
        ),
        (
            r#"jitter = "none", jitter_max = "1s""#,
            vec!["jitter_max applies to additive jitter"],
        ),
        (
            r#"max_delay = "1s", min_delay = "2s""#,
            vec!["policy[0].backoff.min_delay", "is above max_delay"],
        ),
        (
            r#"cap = "before""#,
            vec![
                "policy[0].backoff.cap",
                "\"before_jitter\", \"after_jitter\"",
            ],
        ),
        (
            r#"first_retry = "zero""#,
            vec!["policy[0].backoff.first_retry", "\"immediate\""],
        ),
        (
            r#"max_delay = "never""#,
            vec!["policy[0].backoff.max_delay"],
        ),
    ];
    for (backoff, parts) in cases {
        assert_says(&policy(backoff), &parts);
    }
}

/// The OpenAI and Anthropic Python SDKs' backoff as a config: `reduced` jitter cuts a quarter
/// at most by default, another share where one is given, and its share is refused with a jitter
/// that would ignore it. Every delay lies where the SDKs' min(0.5 s · 2^k, 8 s) · (1 − 0.25·U)
/// puts it.
#[test]
fn reduced_jitter_is_the_stainless_sdks_backoff() {
    let b = backoff(r#"initial_delay = "500ms", max_delay = "8s", jitter = "reduced""#);
    assert_eq!(b.jitter_factor, 0.25);
    for (n, (lo, hi)) in (1..=6).zip([
        (375_000, 500_000),
        (750_000, 1_000_000),
        (1_500_000, 2_000_000),
        (3_000_000, 4_000_000),
        (6_000_000, 8_000_000),
        (6_000_000, 8_000_000),
    ]) {
        let delays = draws(&b, n, 2_000);
        assert!(delays.iter().all(|d| (lo..=hi).contains(d)), "retry {n}");
        let (min, max) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
        assert!(
            min - lo < (hi - lo) / 50 && hi - max < (hi - lo) / 50,
            "retry {n}: {min}..{max}"
        );
    }
    let stripe = backoff(r#"initial_delay = "500ms", jitter = "reduced", jitter_factor = 0.5"#);
    assert_eq!(stripe.jitter_factor, 0.5);
    let e = error(
        "name = \"p\"\n",
        "name = \"p\"\nbackoff = { jitter = \"full\", jitter_factor = 0.25 }\n",
    );
    assert_says(&e, &["jitter_factor", "proportional and reduced"]);
}
