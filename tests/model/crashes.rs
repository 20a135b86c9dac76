//! Workers that crash holding a call (`[workload] crash`): runs against the crash forms
//! (`retrysim::theory::crash`), each scripted crash point's documented outcome, and a worker
//! that never crashes in time running exactly as the client does without crashes.

use retrysim::metrics::{BusinessState, Measure, Sample, Status, StopReason};

use crate::common::{assert_agrees, experiment, records, run_one};

/// Orders of three constant legs (10 + 200 + 10 ms) and no faults; `crash` is the workload's
/// crash table and `policies` the configurations.
fn orders(tasks: u64, crash: &str, policies: &str) -> String {
    format!(
        "name = \"crashes\"\nseed = 12\n\
         [workload]\ntasks = {tasks}\nclients = {tasks}\ncrash = {crash}\n\
         [[tool]]\nname = \"order\"\n\
         request_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
         service_time = {{ dist = \"constant\", value = \"200ms\" }}\n\
         reply_latency = {{ dist = \"constant\", value = \"10ms\" }}\n\
         lookup_time = \"5ms\"\n{policies}"
    )
}

const POLICIES: &str = "[[policy]]\nname = \"memory\"\nidempotency_key = \"per_intent\"\n\
    [[policy]]\nname = \"derived\"\nidempotency_key = \"derived\"\n\
    [[policy]]\nname = \"log\"\nidempotency_key = \"per_intent\"\ndurability = \"intent_log\"\n\
    [[policy]]\nname = \"log-without-a-key\"\ndurability = \"intent_log\"\n";

/// Workers that crash every 0.5 s on average hold each 220 ms call with q = e^(−0.44) of
/// living through it: 1/q = 1.553 workers a call. Every measure of the three configurations
/// with forms lies in its 99.9 % interval across 20 000 independent calls; the fourth, whose
/// replacement has no key to look up, has none.
#[test]
fn runs_agree_with_the_crash_forms() {
    let exp = experiment(&orders(
        20_000,
        "{ mean_uptime = \"500ms\", lease = \"1s\" }",
        POLICIES,
    ));
    let result = run_one(exp);
    let q = (-0.44f64).exp();
    for p in &result.policies[..3] {
        let theory = p
            .theory
            .unwrap_or_else(|| panic!("{}: no crash forms", p.name));
        assert_agrees(p, &theory, &p.name);
    }
    let memory = result.policies[0].theory.unwrap();
    assert!((memory.duplicates - (1.0 / q - 1.0)).abs() < 1e-12);
    assert!(result.policies[3].theory.is_none());
    // Every duplicate of the key held in memory is a takeover's.
    let t = &result.policies[0].totals;
    let duplicates = t.get(Measure::Duplicates);
    let total = (duplicates.mean() * duplicates.count() as f64).round() as u64;
    assert_eq!(t.crashes.takeover_duplicates, total);
}

/// One order, its first worker crashing at a scripted point: before the request arrives
/// (5 ms), during the service (100 ms), between the commit and the reply (215 ms), and after
/// the reply (300 ms: the call is over, no crash). Documented outcomes: the request already
/// sent commits whenever the worker dies; a replacement under a key held in memory commits a
/// second time; under a derived key the server replays its receipt; with an intent log it
/// finds the commit and sends nothing; with an intent log but no key it cannot look anything
/// up and leaves the order uncertain for an operator.
#[test]
fn each_scripted_crash_point_gives_its_documented_outcome() {
    for (at, crashed) in [
        ("5ms", true),
        ("100ms", true),
        ("215ms", true),
        ("300ms", false),
    ] {
        let exp = experiment(&orders(
            1,
            &format!("{{ at = \"{at}\", lease = \"1s\" }}"),
            POLICIES,
        ));
        let got: Vec<(u32, u32, Status, BusinessState, u32)> = (0..4)
            .map(|p| {
                let r = records(&exp, p)[0];
                (r.attempts, r.effects, r.status, r.business_state, r.crashes)
            })
            .collect();
        let ok = Status::Succeeded;
        let confirmed = BusinessState::Confirmed;
        let expected = if crashed {
            let operator = Status::Stopped(StopReason::NeedsReconciliation);
            vec![
                (2, 2, ok, confirmed, 1),
                (2, 1, ok, confirmed, 1),
                (1, 1, ok, confirmed, 1),
                (1, 1, operator, BusinessState::Unknown, 1),
            ]
        } else {
            vec![(1, 1, ok, confirmed, 0); 4]
        };
        assert_eq!(got, expected, "crash at {at}");
        // With the log, the call ends when the replacement's lookup answers: the lease and
        // the lookup's 5 ms after the crash.
        let log = records(&exp, 2)[0];
        let resolved = log.first_crash.map(|c| log.end.since(c));
        let expected = crashed.then_some(retrysim::time::Tick::from_millis(1_005));
        assert_eq!(
            resolved, expected,
            "crash at {at}: from the crash to the end"
        );
    }
}

/// A worker that would crash only long after its call is over runs the call exactly as a
/// client without crashes: the same records, field for field but the (zero) crash counts.
#[test]
fn a_worker_that_never_crashes_in_time_is_the_plain_client() {
    let with = |crash: &str| {
        let text = orders(200, crash, POLICIES).replace(
            "[[tool]]\nname = \"order\"\n",
            "[[tool]]\nname = \"order\"\nrequest_loss = 0.1\nreply_loss = 0.2\n",
        );
        experiment(&text)
    };
    let crashing = with("{ at = \"1h\", lease = \"1s\" }");
    let mut plain = crashing.clone();
    plain.workload.crash = None;
    for p in 0..4 {
        assert_eq!(records(&crashing, p), records(&plain, p), "policy {p}");
    }
}

/// One order whose first worker stalls at 100 ms for 3 s, past its 1 s lease: the replacement
/// writes an intent log, looks the order up and finds it, and the zombie wakes and sends once
/// more. Under model ids its late send orders again, unless the supplier fences it off; under
/// the order's derived key the supplier replays its receipt.
#[test]
fn a_zombies_late_send_orders_again_unless_fenced_or_keyed() {
    let policies = "[[policy]]\nname = \"model-ids\"\nidempotency_key = \"per_attempt\"\n\
        durability = \"intent_log\"\n\
        [[policy]]\nname = \"derived\"\nidempotency_key = \"derived\"\ndurability = \"intent_log\"\n";
    let crash = "{ at = \"100ms\", lease = \"1s\", stall = \"3s\" }";
    for fencing in [false, true] {
        let text = orders(1, crash, policies).replace(
            "[[tool]]\nname = \"order\"\n",
            &format!("[[tool]]\nname = \"order\"\nfencing = {fencing}\n"),
        );
        let exp = experiment(&text);
        let got: Vec<(u32, u32, u32, u32, u32)> = (0..2)
            .map(|p| {
                let r = records(&exp, p)[0];
                (
                    r.attempts,
                    r.effects,
                    r.zombie_sends,
                    r.fenced,
                    r.takeover_duplicates,
                )
            })
            .collect();
        let model_ids = match fencing {
            false => (2, 2, 1, 0, 1),
            true => (2, 1, 1, 1, 0),
        };
        let derived = (2, 1, 1, u32::from(fencing), 0);
        assert_eq!(got, vec![model_ids, derived], "fencing {fencing}");
    }
}

/// Reservations: the agent-crash orders (2 000 of them, one replication), each reserving $15.
/// Recounted from every order's record — a success or a known effect spends, a failure with
/// nothing attempted releases rightly, an unknown outcome is released (wrongly where the
/// order landed) or held — the run's totals agree; under `release = "when_conclusive"` nothing
/// is ever released wrongly, the invariant, while releasing on failure breaks it.
#[test]
fn reservations_go_where_the_records_say() {
    let mut exp = crate::common::shipped("agent-crash.toml");
    exp.replications = 1;
    exp.workload.tasks = Some(2_000);
    let result = run_one(exp.clone());
    let amount = u128::from(exp.tools[0].reserve);
    assert_eq!(amount, 15_000_000_000_000, "$15 in picodollars");
    let mut broken = 0;
    for (p, policy) in exp.policies.iter().enumerate() {
        let holds = policy.agent.release == retrysim::policy::Release::WhenConclusive;
        let (mut wrongly, mut held) = (0u64, 0u64);
        for r in records(&exp, p) {
            let unknown =
                r.status != Status::Succeeded && r.business_state == BusinessState::Unknown;
            match (unknown, holds) {
                (true, true) => held += 1,
                (true, false) if r.effects > 0 => wrongly += 1,
                _ => {}
            }
        }
        let t = &result.policies[p].totals.reservations;
        assert_eq!(
            (t.wrong_releases, t.held_calls),
            (wrongly, held),
            "{}",
            policy.name
        );
        assert_eq!(t.released_wrongly, u128::from(wrongly) * amount);
        assert_eq!(t.spent + t.released + t.held, t.reserved);
        if holds {
            assert_eq!(t.released_wrongly, 0, "{}: the invariant", policy.name);
        }
        broken += wrongly;
    }
    assert!(
        broken > 0,
        "releasing on failure releases some landed order's money"
    );
}

/// One order of 220 ms round trips under a 100 ms timeout (every attempt times out, and
/// commits), up to 4 attempts with no backoff, its worker holding it for a 250 ms term it does
/// not renew, and the item delivered at most 3 times. Unchecked, each worker sends at 0, 100
/// and 200 ms into its term, the term lapses with the third in flight, and a replacement with
/// a key of its own starts over: three workers, nine attempts, three orders, and the queue
/// gives the item up at the third lapse (750 ms). Under the admission rule the third send
/// (200 + 100 ≥ 250) holds the item afresh first; the fourth ends the call at 400 ms: one
/// worker, one order, no lapse.
#[test]
fn a_lease_held_for_a_term_lapses_mid_wait_unless_the_send_is_admitted() {
    let policy = |name: &str, admit: bool| {
        format!(
            "[[policy]]\nname = \"{name}\"\nidempotency_key = \"per_intent\"\nmax_attempts = 4\n\
             timeout = \"100ms\"\nbackoff = {{ kind = \"constant\", initial_delay = \"0s\" }}\n\
             admit_within_lease = {admit}\n"
        )
    };
    let policies = policy("unchecked", false) + &policy("admitted", true);
    let crash = "{ lease = \"250ms\", renewed = false, max_deliveries = 3 }";
    let exp = experiment(&orders(1, crash, &policies));
    let got: Vec<_> = (0..2)
        .map(|p| {
            let r = records(&exp, p)[0];
            (
                (r.attempts, r.effects, r.takeovers, r.takeover_duplicates),
                (r.lapses, r.held_afresh, r.dead_lettered),
                (r.status, r.end.0 / 1_000),
            )
        })
        .collect();
    let given_up = Status::Stopped(StopReason::AttemptLimit);
    assert_eq!(
        got,
        vec![
            ((9, 3, 2, 2), (3, 0, true), (given_up, 750)),
            ((4, 1, 0, 0), (0, 1, false), (given_up, 400)),
        ]
    );
}

/// A config's `schedule` crashes workers that crash at a rate at its crash points only: one
/// order (two attempts a worker) whose first attempt loses its reply (it committed), and whose
/// worker then crashes before the retry (`crash_before_send`, at the second send's crash point). A key held in
/// memory dies with it and the replacement orders again; with an intent log it looks the key
/// up, finds the order and sends nothing; a derived key has the supplier replay its receipt.
#[test]
fn a_schedule_crashes_a_worker_before_its_retry() {
    let policies = POLICIES.replace("[[policy]]\n", "[[policy]]\nmax_attempts = 2\n");
    let text = orders(1, "{ mean_uptime = \"1h\", lease = \"1s\" }", &policies).replace(
        "seed = 12\n",
        "seed = 12\nschedule = [\"ok\", \"lost_reply\", \"crash_before_send\"]\n",
    );
    let exp = experiment(&text);
    let got: Vec<(u32, u32, u32, u32)> = (0..3)
        .map(|p| {
            let r = records(&exp, p)[0];
            (r.attempts, r.effects, r.crashes, r.takeover_duplicates)
        })
        .collect();
    assert_eq!(got, vec![(2, 2, 1, 1), (2, 1, 1, 0), (1, 1, 1, 0)]);
}

/// Redone work has a price: one call to a model of 1 000 tokens in and 200 out ($3 and $15 a
/// million: $0.006 an attempt), its first worker crashing 150 ms in, while the answer is
/// generated. The first attempt is still generated and billed (its answer unused); the
/// replacement's, 1 s later, is billed again — the redone work: $0.006 and 1 200 tokens of
/// the call's $0.012.
#[test]
fn redone_work_at_a_model_is_billed_in_tokens_and_dollars() {
    let text = "name = \"redo\"\n[workload]\ntasks = 1\n\
        crash = { at = \"150ms\", lease = \"1s\" }\n\
        [[tool]]\nname = \"llm\"\nkind = \"model\"\n\
        request_latency = { dist = \"constant\", value = \"10ms\" }\n\
        reply_latency = { dist = \"constant\", value = \"10ms\" }\n\
        model = { input_tokens = { dist = \"constant\", value = 1000 }, \
        output_tokens = { dist = \"constant\", value = 200 }, max_tokens = 1024, \
        first_token = { dist = \"constant\", value = \"100ms\" }, tokens_per_second = 1000 }\n\
        price = { input_per_million = 3, output_per_million = 15 }\n\
        [[policy]]\nname = \"p\"\n";
    let exp = experiment(text);
    let r = records(&exp, 0)[0];
    assert_eq!((r.attempts, r.crashes, r.redone), (2, 1, 1));
    let bill = r.bill;
    assert_eq!(
        (bill.cost, bill.redone, bill.redone_tokens),
        (12_000_000_000, 6_000_000_000, 1_200)
    );
}
