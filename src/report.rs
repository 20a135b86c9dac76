//! The table `retrysim run` prints: one row per configuration, each measurement beside its
//! closed form.

use std::fmt::Write;

use crate::metrics::{Estimate, Measure, StopReason};
use crate::policy::{Backoff, Policy};
use crate::run::Results;

fn with_ci(e: Estimate) -> String {
    format!("{:.4} ± {:.4}", e.mean, e.half_width)
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn describe(p: &Policy) -> String {
    let retry_on: Vec<&str> = p.retry.retry_on.classes().map(|c| c.name()).collect();
    let backoff = if p.backoff == Backoff::IMMEDIATE {
        "no backoff".to_string()
    } else {
        let b = &p.backoff;
        format!(
            "backoff {:?} {}×{} ≤ {}, {:?} jitter",
            b.growth, b.initial_delay, b.multiplier, b.max_delay, b.jitter
        )
        .to_lowercase()
    };
    format!(
        "{}, retry on {}, {}, key {}",
        p.retry.max_attempts,
        retry_on.join("/"),
        backoff,
        p.key.name()
    )
}

/// Renders the comparison table.
pub fn table(results: &Results) -> String {
    let exp = &results.experiment;
    let mut out = String::new();
    let reps = exp.replications;
    let across = if reps == 1 {
        "across intents"
    } else {
        "across replications"
    };
    let _ = writeln!(out, "{}", exp.name);
    if !exp.description.is_empty() {
        let _ = writeln!(out, "{}", exp.description);
    }
    let tools: Vec<String> = exp
        .called_tools()
        .map(|t| {
            let f = &t.faults;
            format!(
                "{}: a = {}, b = {}, 5xx = {}",
                t.name, f.request_loss, f.reply_loss, f.server_error
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "seed {} · {} replication{} · {} tasks each · {}\n95% intervals {across}\n",
        exp.seed,
        reps,
        if reps == 1 { "" } else { "s" },
        exp.workload.tasks,
        tools.join("; "),
    );

    let header = [
        "configuration",
        "attempts/intent",
        "theory",
        "duplicates/intent",
        "theory",
        "success",
        "ghosts",
        "agrees",
    ];
    let mut rows = vec![header.map(String::from).to_vec()];
    for (policy, r) in exp.policies.iter().zip(&results.policies) {
        let est = |m: Measure| r.estimate(m);
        let (attempts, duplicates) = (est(Measure::Attempts), est(Measure::Duplicates));
        let theory = |f: fn(&crate::theory::ClosedForms) -> f64| {
            r.theory
                .as_ref()
                .map_or("—".to_string(), |t| format!("{:.4}", f(t)))
        };
        let agrees = match r.agrees() {
            None => "—".to_string(),
            Some(a) => {
                let t = r.theory.expect("agreement implies theory");
                format!(
                    "{} (z {:+.2}, {:+.2})",
                    if a { "yes" } else { "NO" },
                    attempts.z(t.attempts),
                    duplicates.z(t.duplicates)
                )
            }
        };
        rows.push(vec![
            policy.name.clone(),
            with_ci(attempts),
            theory(|t| t.attempts),
            with_ci(duplicates),
            theory(|t| t.duplicates),
            percent(est(Measure::Success).mean),
            percent(est(Measure::Ghost).mean),
            agrees,
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .map(|row| row[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let line: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell}{}", " ".repeat(w - cell.chars().count())))
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    let _ = writeln!(out);
    for policy in &exp.policies {
        let _ = writeln!(out, "{}: {}", policy.name, describe(policy));
    }
    for (policy, r) in exp.policies.iter().zip(&results.policies) {
        let hung = r.total(|run| run.totals.stopped(StopReason::Hung));
        if hung > 0 {
            let _ = writeln!(
                out,
                "note: the horizon ({}) stopped {hung} intents of {} before they ended (status hung); \
                 no closed form applies",
                exp.horizon, policy.name
            );
        }
    }
    out
}
