//! Faults in bursts against their closed forms (`retrysim::theory::burst`): runs agree with
//! them, and not with the independent forms of the same average rates; a burst whose bad state
//! fails as the good one does draws exactly what independent faults draw.

use retrysim::metrics::Measure;
use retrysim::policy::{Attempts, KeyScope};
use retrysim::theory::closed_forms;

use crate::common::{assert_agrees_across_replications, experiment, run_one};

/// A tool bad a tenth of the time (spells of 9 s and 1 s), failing 2 % + 5 % of attempts
/// when good and 60 % + 20 % when bad; tasks arrive as a Poisson stream and never wait for a
/// client, so each first attempt meets the long-run state.
fn bursty(policies: &str, in_bad: &str) -> String {
    format!(
        "name = \"bursts\"\nseed = 5\nreplications = 20\n\
         [workload]\ntasks = 5000\nclients = 5000\narrival = \"poisson\"\nmean_interarrival = \"20ms\"\n\
         [[tool]]\nname = \"charge\"\nserver_error = 0.02\nreply_loss = 0.05\n\
         service_time = {{ dist = \"exponential\", mean = \"10ms\" }}\n\
         burst = {{ good = \"9s\", bad = \"1s\", in_bad = {in_bad} }}\n{policies}"
    )
}

const POLICIES: &str = "[[policy]]\nname = \"quick\"\nmax_attempts = 4\n\
    backoff = { kind = \"constant\", initial_delay = \"50ms\", jitter = \"none\" }\n\
    [[policy]]\nname = \"jittered\"\nmax_attempts = 4\n\
    backoff = { kind = \"exponential\", initial_delay = \"200ms\", jitter = \"full\", max_delay = \"2s\" }\n\
    [[policy]]\nname = \"keyed\"\nmax_attempts = \"unlimited\"\nidempotency_key = \"per_intent\"\n\
    backoff = { kind = \"constant\", initial_delay = \"500ms\" }\n";

/// Every figure of every configuration lies in its 99.9 % interval (across the 20
/// replications, which covers the intents of one run meeting one spell together) of the burst
/// forms; the independent forms at the same average a and b lie outside it for the success of
/// the quick retries, which meet the spell their first attempt met.
#[test]
fn runs_agree_with_the_burst_forms_and_not_the_independent_ones() {
    let result = run_one(experiment(&bursty(
        POLICIES,
        "{ server_error = 0.6, reply_loss = 0.2 }",
    )));
    for p in &result.policies {
        let theory = p
            .theory
            .unwrap_or_else(|| panic!("{}: no burst forms", p.name));
        assert_agrees_across_replications(p, &theory);
    }
    let quick = &result.policies[0];
    let theory = quick.theory.unwrap();
    // The long-run average losses: a = 0.9·0.02 + 0.1·0.6, b = 0.9·0.05 + 0.1·0.2.
    assert!((theory.a - 0.078).abs() < 1e-12 && (theory.b - 0.065).abs() < 1e-12);
    let independent = closed_forms(theory.a, theory.b, Attempts::AtMost(4), KeyScope::None);
    let est = quick.estimate_at(Measure::Success, 0.999);
    assert!(
        !est.contains(independent.success),
        "independent success {} inside {} ± {}",
        independent.success,
        est.mean,
        est.half_width
    );
}

/// A bad state that fails as the good one does changes no draw: the same totals as the tool
/// without a burst, and the burst forms are the independent ones to 1e-12.
#[test]
fn a_burst_whose_states_fail_alike_is_independent_faults() {
    let with = run_one(experiment(&bursty(
        POLICIES,
        "{ server_error = 0.02, reply_loss = 0.05 }",
    )));
    let text = bursty(POLICIES, "{}");
    let without = text.replace("burst = { good = \"9s\", bad = \"1s\", in_bad = {} }\n", "");
    assert_ne!(text, without);
    let without = run_one(experiment(&without));
    for (b, i) in with.policies.iter().zip(&without.policies) {
        assert_eq!(b.totals, i.totals, "{}", b.name);
        let (tb, ti) = (b.theory.unwrap(), i.theory.unwrap());
        for (x, y) in [
            (tb.attempts, ti.attempts),
            (tb.effects, ti.effects),
            (tb.duplicates, ti.duplicates),
            (tb.success, ti.success),
            (tb.ghost, ti.ghost),
        ] {
            assert!((x - y).abs() < 1e-12, "{}: {x} vs {y}", b.name);
        }
    }
}

/// Two tools called together, each failing every attempt while bad and none while good: in one
/// failure domain they meet one timeline, so a task's two calls fail together or not at all;
/// each in a domain of its own, some tasks see one fail and the other not.
#[test]
fn tools_of_one_failure_domain_fail_together() {
    let config = |second: &str| {
        format!(
            "name = \"domains\"\nseed = 3\n\
             [workload]\ntasks = 3000\nclients = 3000\narrival = \"poisson\"\n\
             mean_interarrival = \"20ms\"\ncalls = [[\"db-read\", \"db-write\"]]\n\
             [[tool]]\nname = \"db-read\"\nkind = \"read_only\"\n\
             burst = {{ good = \"4s\", bad = \"1s\", in_bad = {{ server_error = 1.0 }}, domain = \"db\" }}\n\
             [[tool]]\nname = \"db-write\"\nkind = \"read_only\"\n\
             burst = {{ good = \"4s\", bad = \"1s\", in_bad = {{ server_error = 1.0 }}, domain = \"{second}\" }}\n\
             [[policy]]\nname = \"once\"\nmax_attempts = 1\n"
        )
    };
    // (tasks with both calls failed, with exactly one failed).
    let split = |second: &str| {
        let exp = experiment(&config(second));
        let records = crate::common::records(&exp, 0);
        let mut by_task = std::collections::BTreeMap::<u64, Vec<bool>>::new();
        for r in &records {
            let failed = r.status != retrysim::metrics::Status::Succeeded;
            // An intent is numbered task × calls per task + its place in the task.
            by_task.entry(r.intent / 2).or_default().push(failed);
        }
        let both = by_task.values().filter(|f| f.iter().all(|&x| x)).count();
        let one = by_task
            .values()
            .filter(|f| f.iter().filter(|&&x| x).count() == 1)
            .count();
        (both, one)
    };
    let (both, one) = split("db");
    assert!(both > 300 && one == 0, "one domain: {both} both, {one} one");
    let (both, one) = split("other");
    assert!(one > 300, "two domains: {both} both, {one} one");
}

/// A store of two shards, each call to its key's shard, failing every attempt while bad and
/// none while good (spells of 1 s each, so π_b = 1/2). With one timeline for the tool, two
/// calls sent to different shards within 5 ms meet one state (they disagree only across a
/// spell's edge); with spells per replica, the shards' states are independent and such a pair
/// agrees half the time. The share agreeing is a time average over the run's T seconds of
/// whether the two chains agree, a ±1 process whose correlation is e^(−2(α+β)t) = e^(−4t): its
/// variance is 2·(1/4)/T on the ±1 scale, 1/(8T) on the share's, plus the pairs' own 1/(4n).
/// The bound is 4.4 standard deviations.
/// Replica 0 draws the tool's own timeline either way, so its calls fare alike in both.
#[test]
fn shards_with_spells_of_their_own_fail_apart() {
    let config = |per_replica: bool| {
        format!(
            "name = \"shards\"\nseed = 8\n\
             [workload]\ntasks = 200000\nclients = 200000\narrival = \"poisson\"\n\
             mean_interarrival = \"5ms\"\n\
             [[tool]]\nname = \"orders\"\nkind = \"read_only\"\nreplicas = 2\n\
             service_time = {{ dist = \"constant\", value = \"1ms\" }}\n\
             burst = {{ good = \"1s\", bad = \"1s\", in_bad = {{ server_error = 1.0 }}, \
             per_replica = {per_replica} }}\n\
             [[policy]]\nname = \"once\"\nbalancer = \"by_key\"\n"
        )
    };
    // Each call's (send, shard, failed), in order of sending.
    let calls = |per_replica: bool| {
        let exp = experiment(&config(per_replica));
        let mut calls: Vec<(u64, u16, bool)> = crate::common::traced(&exp, 0)
            .iter()
            .map(|(r, a)| {
                (
                    a[0].dispatch.0,
                    a[0].replica,
                    r.status != retrysim::metrics::Status::Succeeded,
                )
            })
            .collect();
        calls.sort_unstable();
        calls
    };
    // Of neighbouring calls at different shards within 5 ms, the share that fared alike.
    let agreeing = |calls: &[(u64, u16, bool)]| {
        let pairs: Vec<bool> = (calls.windows(2))
            .filter(|w| w[0].1 != w[1].1 && w[1].0 - w[0].0 <= 5_000)
            .map(|w| w[0].2 == w[1].2)
            .collect();
        let n = pairs.len() as f64;
        (pairs.iter().filter(|&&a| a).count() as f64 / n, n)
    };
    let (shared, apart) = (calls(false), calls(true));
    let (share, n) = agreeing(&shared);
    assert!(n > 1000.0 && share > 0.95, "one timeline: {share} of {n}");
    let (share, n) = agreeing(&apart);
    let seconds = apart.last().map_or(0.0, |c| c.0 as f64 / 1e6);
    let bound = 4.4 * (1.0 / (8.0 * seconds) + 0.25 / n).sqrt();
    assert!(
        (share - 0.5).abs() < bound,
        "per replica: {share} of {n}, ± {bound}"
    );
    let at_zero = |calls: &[(u64, u16, bool)]| -> Vec<(u64, bool)> {
        (calls.iter())
            .filter(|c| c.1 == 0)
            .map(|c| (c.0, c.2))
            .collect()
    };
    assert_eq!(at_zero(&shared), at_zero(&apart));
}

/// The burst forms are claimed only where the chain is the run: not where a task may wait for
/// a client (its first attempt then meets a state its wait depends on), nor where a client-side
/// bucket may hold a retry back for a token (a gap the forms do not know).
#[test]
fn the_burst_forms_stand_aside_where_the_gaps_are_not_theirs() {
    let policy = "[[policy]]\nname = \"quick\"\nmax_attempts = 4\n";
    let text = bursty(policy, "{ server_error = 0.6 }");
    let forms =
        |text: &str| retrysim::theory::for_policy(&experiment(text), &experiment(text).policies[0]);
    assert!(forms(&text).is_some());
    let waiting = text.replace("clients = 5000", "clients = 50");
    assert!(forms(&waiting).is_none());
    let bucket = text.replace("max_attempts = 4\n", "max_attempts = 4\nsend_rate = {}\n");
    assert_ne!(bucket, text);
    assert!(forms(&bucket).is_none());
}

/// With one replication the intents of the run meet the same spells, so an interval across
/// them is too narrow: the burst forms stay in the table, and the verdict is `too_few`; with
/// several, the verdict is read across the replications.
#[test]
fn one_replication_of_bursts_gives_no_verdict() {
    use retrysim::verdict::{self, Verdict};
    let policy = "[[policy]]\nname = \"quick\"\nmax_attempts = 4\n";
    let text = bursty(policy, "{ server_error = 0.6 }");
    let one = run_one(experiment(
        &text.replace("replications = 20", "replications = 1"),
    ));
    let p = &one.policies[0];
    assert!(p.theory.is_some());
    assert_eq!(verdict::of(p, 5), Some(Verdict::TooFew));
    let many = run_one(experiment(&text));
    assert_ne!(verdict::of(&many.policies[0], 5), Some(Verdict::TooFew));
}
