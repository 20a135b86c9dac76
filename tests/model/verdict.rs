//! The verdict means what a reader thinks: over many seeds, tables of correct rows show a
//! `disagrees` at most at the stated family-wise rate, and a deliberately wrong closed form is
//! caught.

use crate::common::{experiment, run_one};
use retrysim::verdict::{self, FAMILY_ERROR, Verdict};

/// Six configurations on one lossy tool (a = 0.1, b = 0.2), each with closed forms: a table of
/// six rows and thirty comparisons (attempts, effects, duplicates, success and ghosts), whose
/// rows share common random numbers. `keyed-three` commits every one of its 400 intents in two
/// tables of three (theory: 1 − 0.1³ per intent), a sample with no spread at all.
const TABLE: &str = r#"
name = "v"
[workload]
tasks = 400
clients = 50
[[tool]]
name = "t"
request_loss = 0.1
reply_loss = 0.2
[[policy]]
name = "two"
max_attempts = 2
[[policy]]
name = "three"
max_attempts = 3
[[policy]]
name = "five"
max_attempts = 5
[[policy]]
name = "unlimited"
max_attempts = "unlimited"
[[policy]]
name = "keyed"
max_attempts = "unlimited"
idempotency_key = "per_intent"
[[policy]]
name = "keyed-three"
max_attempts = 3
idempotency_key = "per_intent"
"#;

const SEEDS: u64 = 300;

#[test]
fn correct_tables_disagree_at_the_stated_rate_and_a_wrong_closed_form_is_caught() {
    let base = experiment(TABLE);
    let comparisons = retrysim::theory::comparisons(&base);
    assert_eq!(comparisons, 30);
    let (mut disagreeing, mut outside_95, mut caught) = (0, 0, 0);
    for seed in 0..SEEDS {
        let mut exp = base.clone();
        exp.seed = seed;
        let point = run_one(exp);
        let verdicts: Vec<Verdict> = (point.policies.iter())
            .map(|p| verdict::of(p, comparisons).expect("closed forms apply"))
            .collect();
        disagreeing += u32::from(verdicts.contains(&Verdict::Disagrees));
        outside_95 += u32::from(verdicts.iter().any(|&v| v != Verdict::Agrees));
        // A closed form off by 15 %, about five standard errors at 400 intents.
        let wrong = point.policies.iter().any(|p| {
            let mut biased = p.clone();
            let theory = biased.theory.as_mut().expect("closed forms apply");
            theory.attempts *= 1.15;
            verdict::of(&biased, comparisons) == Some(Verdict::Disagrees)
        });
        caught += u32::from(wrong);
    }
    // Bonferroni bounds the family-wise rate by 5 % whatever the correlation: of 300 correct
    // tables, more than 28 with a `disagrees` has a chance below 0.1 % (Binomial(300, 0.05)).
    assert!(
        f64::from(disagreeing) <= 28.0,
        "{disagreeing} of {SEEDS} correct tables disagree (bound {FAMILY_ERROR})"
    );
    // Every wrong table but a handful is caught: five standard errors against a 99.6 % interval
    // (2.9 standard errors) misses one row in about 50, and each table has six.
    assert!(
        caught >= 295,
        "only {caught} of {SEEDS} wrong tables caught"
    );
    eprintln!(
        "of {SEEDS} correct tables: {disagreeing} with a `disagrees`, {outside_95} with a row \
         outside a 95 % interval; wrong tables caught: {caught}"
    );
}
