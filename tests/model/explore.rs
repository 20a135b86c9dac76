//! Exploration: every schedule counted as by hand, the exact expectations equal to the capped
//! closed forms, counterexamples that replay through `run`, and invariants that hold where
//! the key or the lookup makes them hold.

use retrysim::config::{Origin, Source};
use retrysim::explore::invariant::Invariant;
use retrysim::explore::{self, Explorable, Spec};
use retrysim::model::Choice;
use retrysim::policy::{Attempts, KeyScope};
use retrysim::sim::{self, Job};
use retrysim::theory::{ClosedForms, closed_forms};

fn experiment(text: &str) -> Explorable {
    let source = Source {
        name: "t.toml".into(),
        text: text.into(),
        origin: Origin::Text,
    };
    explore::fixed(&source.sweep().unwrap_or_else(|e| panic!("{e}")).base)
}

fn one_order(a: f64, b: f64, attempts: u32, key: &str) -> Explorable {
    experiment(&format!(
        "name = \"t\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"orders\"\nrequest_loss = {a}\nreply_loss = {b}\n\
         [[policy]]\nname = \"p\"\nmax_attempts = {attempts}\nidempotency_key = \"{key}\"\n"
    ))
}

/// One order, two kinds of fault, two attempts: no fault (1 schedule); a fault on the first
/// attempt (2), the second delivered; a fault on both (2 × 2). With K = 1: 3, with K = 2: 7.
#[test]
fn schedules_are_counted_as_by_hand() {
    let exp = one_order(0.1, 0.2, 2, "none");
    assert_eq!(
        explore::explore(&exp, 0, 0, &[], &explore::Pace::default()).schedules,
        1
    );
    assert_eq!(
        explore::explore(&exp, 0, 1, &[], &explore::Pace::default()).schedules,
        3
    );
    let all = explore::explore(&exp, 0, 2, &[], &explore::Pace::default());
    assert_eq!(all.schedules, 7);
    // Every schedule of two attempts is there: their probabilities add up to 1.
    assert!((all.explored - 1.0).abs() < 1e-12, "{}", all.explored);
}

/// With as many faults as attempts every schedule is walked, and the probability-weighed
/// expectations are the capped closed forms to 1e-12.
#[test]
fn the_exact_expectations_are_the_closed_forms() {
    for (a, b, n) in [(0.1, 0.2, 4), (0.3, 0.1, 3), (0.0, 0.25, 5), (0.2, 0.0, 2)] {
        let exp = one_order(a, b, n, "none");
        let found = explore::explore(&exp, 0, n as usize, &[], &explore::Pace::default());
        let theory = closed_forms(a, b, Attempts::AtMost(n), KeyScope::None);
        exactly(&found, &theory, &format!("a {a} b {b} N {n}"));
    }
}

/// Every schedule walked (their probabilities add up to 1), and the expected attempts and
/// duplicates the closed forms', to 1e-12.
fn exactly(found: &explore::Explored, theory: &ClosedForms, what: &str) {
    assert!(
        (found.explored - 1.0).abs() < 1e-12,
        "{what}: {}",
        found.explored
    );
    assert!(
        (found.attempts - theory.attempts).abs() < 1e-12,
        "{what}: {} vs {}",
        found.attempts,
        theory.attempts
    );
    assert!(
        (found.duplicates - theory.duplicates).abs() < 1e-12,
        "{what}: {} vs {}",
        found.duplicates,
        theory.duplicates
    );
}

/// Without a key a lost reply then a resend is two orders: the minimal counterexample is that
/// one fault, in two attempts; a key per order breaks nothing, to three faults.
#[test]
fn a_lost_reply_and_a_resend_is_the_minimal_double_order() {
    let invariants = Spec::default().invariants;
    let plain = one_order(0.05, 0.1, 3, "none");
    let found = explore::explore(&plain, 0, 3, &invariants, &explore::Pace::default());
    let one = &found.violations[0];
    assert_eq!(invariants[0], Invariant::OneEffect);
    let c = one.minimal.as_ref().expect("a counterexample");
    assert_eq!((c.faults, c.events), (1, 2));
    assert_eq!(
        c.fates.iter().map(|f| f.name()).collect::<Vec<_>>(),
        ["lost_reply"]
    );
    // The probability of two or more effects: a lost reply before a later commit, b·(1 − …).
    assert!(one.probability > 0.0);
    // Its replay through `run`: the config it writes, read as any config, makes two effects.
    let config = explore::replay(&plain.exp, 0, &invariants[0], c);
    let exp = experiment(&config).exp;
    let mut effects = Vec::new();
    sim::simulate(
        &exp,
        Job {
            point: 0,
            policy: 0,
            replication: 0,
        },
        |r, _| effects.push(r.effects),
    );
    assert_eq!(effects, [2], "{config}");
    let keyed = one_order(0.05, 0.1, 3, "per_intent");
    let found = explore::explore(&keyed, 0, 3, &invariants, &explore::Pace::default());
    assert!(
        found.violations.iter().all(|v| v.schedules == 0),
        "{:?}",
        found.violations
    );
}

/// A timeout on a long-tailed tool: each attempt's reply is late with P(round trip ≥ timeout),
/// a branch of its own weighed so; walked to as many faults as attempts, the expectations are
/// the closed forms with the late replies counted as lost ones (b + P(late)·(1 − a − b)).
#[test]
fn late_replies_are_explored_and_weighed_by_the_latency_tail() {
    let text = "name = \"t\"\n[workload]\ntasks = 1\n[[tool]]\nname = \"orders\"\nrequest_loss = 0.1\nreply_loss = 0.1\n\
                service_time = { dist = \"lognormal\", median = \"100ms\", p99 = \"2s\" }\n\
                [[policy]]\nname = \"p\"\nmax_attempts = 3\ntimeout = \"500ms\"\n";
    let source = Source {
        name: "t.toml".into(),
        text: text.into(),
        origin: Origin::Text,
    };
    let exp = source.sweep().unwrap().base;
    let theory =
        retrysim::theory::for_policy(&exp, &exp.policies[0]).expect("closed forms with a timeout");
    let e = explore::fixed(&exp);
    let found = explore::explore(&e, 0, 3, &[], &explore::Pace::default());
    exactly(&found, &theory, "late replies");
}

/// Every counterexample the shipped exploration wrote replays through the config reader and
/// the simulator to the same violation, by the same intent.
#[test]
fn every_shipped_counterexample_replays_to_its_violation() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("out/exactly-one-order.explore/counterexamples");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "toml") {
            continue;
        }
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let invariant = Invariant::DEFAULT
            .into_iter()
            .find(|n| stem.ends_with(&n.replace('_', "-")))
            .and_then(Invariant::named)
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let intent: u64 = text
            .split("intent ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        let exp = Source::read(&path).unwrap().sweep().unwrap().base;
        let mut records = Vec::new();
        sim::simulate(
            &exp,
            Job {
                point: 0,
                policy: 0,
                replication: 0,
            },
            |r, _| records.push(*r),
        );
        assert_eq!(
            invariant.violated(&exp, &exp.policies[0], &records),
            Some(intent),
            "{stem}"
        );
        replayed += 1;
    }
    assert!(replayed >= 2, "{replayed}");
}

/// What is left of 1 by rounding is no probability: the table says what `explore.csv` says.
#[test]
fn the_probability_beyond_the_bound_is_what_the_csv_says() {
    let all = explore::Explored {
        explored: 1.0 - 1.1e-16,
        ..explore::Explored::default()
    };
    assert_eq!(all.beyond(), 0.0);
    let some = explore::Explored {
        explored: 0.75,
        ..explore::Explored::default()
    };
    assert_eq!(some.beyond(), 0.25);
}

/// A scripted crash is explored as the same crash in every schedule. One order (a = b = 0.1,
/// two attempts a worker), its first worker dead at 100 ms, before its reply could come: its
/// attempt commits unless its request was lost (0.9), and the replacement, under a new key held
/// in memory, commits unless both its attempts lose their request (1 − 0.1² = 0.99); two orders
/// with 0.9 · 0.99 = 0.891. To two faults the explorer leaves out the three-fault schedules, of
/// which those with two orders weigh 0.1 · (0.1 · 0.2 + 0.1 · 0.1) = 0.003: it finds 0.888,
/// the crash alone the minimal counterexample (no fault). Under a derived key nothing breaks,
/// and a replacement's fresh count of attempts is within the limits.
#[test]
fn a_scripted_crash_is_explored_as_a_hand_count_says() {
    let text = |key: &str| {
        format!(
            "name = \"e\"\n[workload]\ntasks = 1\n\
             crash = {{ at = \"100ms\", lease = \"1s\" }}\n\
             [[tool]]\nname = \"order\"\nrequest_loss = 0.1\nreply_loss = 0.1\n\
             request_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             service_time = {{ dist = \"constant\", value = \"200ms\" }}\n\
             reply_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 2\nidempotency_key = \"{key}\"\n"
        )
    };
    let invariants = Spec::default().invariants;
    let memory = experiment(&text("per_intent"));
    let found = explore::explore(&memory, 0, 2, &invariants, &explore::Pace::default());
    let one = &found.violations[0];
    assert!(
        (one.probability - 0.888).abs() < 1e-9,
        "{}",
        one.probability
    );
    let c = one.minimal.as_ref().expect("a counterexample");
    assert_eq!(c.faults, 0);
    let within = &found.violations[3];
    assert_eq!(
        (invariants[3].name(), within.schedules),
        ("within_limits", 0)
    );
    let derived = experiment(&text("derived"));
    let found = explore::explore(&derived, 0, 2, &invariants, &explore::Pace::default());
    assert!(
        found.violations.iter().all(|v| v.schedules == 0),
        "{:?}",
        found.violations
    );
}

/// Crashes at a rate are explored at crash points. One order of 220 ms round trips (10, 200
/// and 10 ms, nothing lost), one attempt a worker, workers living 1 s on average, a 1 s lease:
/// each send's crash point offers a crash with the attempt in flight, of probability
/// p = 1 − e^(−0.22) (none before the send, whose stretch is empty: the call just started, or
/// the replacement just took over). To two faults there are three schedules: the first worker
/// lives (e^(−0.22) = q, one order), one crash then a worker that lives (p·q, two orders under
/// a key held in memory) and two crashes (p²·q, three) — so `one_effect` breaks with
/// probability p·q + p²·q, the expected attempts are q + 2pq + 3p²q, and the minimal
/// counterexample is the one crash. Under a derived key nothing breaks.
#[test]
fn crashes_at_a_rate_are_explored_at_crash_points_as_a_hand_count_says() {
    let text = |key: &str| {
        format!(
            "name = \"e\"\n[workload]\ntasks = 1\n\
             crash = {{ mean_uptime = \"1s\", lease = \"1s\" }}\n\
             [[tool]]\nname = \"order\"\n\
             request_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             service_time = {{ dist = \"constant\", value = \"200ms\" }}\n\
             reply_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
             [[policy]]\nname = \"p\"\nmax_attempts = 1\nidempotency_key = \"{key}\"\n"
        )
    };
    let invariants = Spec::default().invariants;
    let memory = experiment(&text("per_intent"));
    let found = explore::explore(&memory, 0, 2, &invariants, &explore::Pace::default());
    let q = (-0.22f64).exp();
    let p = 1.0 - q;
    assert_eq!(found.schedules, 3);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(
        close(found.explored, q + p * q + p * p * q),
        "{}",
        found.explored
    );
    let one = &found.violations[0];
    assert!(
        close(one.probability, p * q + p * p * q),
        "{}",
        one.probability
    );
    assert!(
        close(found.attempts, q + 2.0 * p * q + 3.0 * p * p * q),
        "{}",
        found.attempts
    );
    let c = one.minimal.as_ref().expect("a counterexample");
    assert_eq!(
        (c.faults, c.fates.clone()),
        (1, vec![Choice::CrashInFlight])
    );
    let derived = experiment(&text("derived"));
    let found = explore::explore(&derived, 0, 2, &invariants, &explore::Pace::default());
    assert_eq!(found.schedules, 3);
    assert!(
        found.violations.iter().all(|v| v.schedules == 0),
        "{:?}",
        found.violations
    );
}
