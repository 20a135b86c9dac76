//! `retrysim calibrate`: a config whose tools are a trace's operations, and what was read.

use std::fmt::Write;

use retrysim::calibrate::{self, Outcome};
use retrysim::report;

use crate::args::CalibrateArgs;
use crate::{Failure, print};

/// What the incident's replay under the claimed policy showed against the trace, every bin in
/// `file`.
fn replay_said(held: &calibrate::replay::Held, file: &std::path::Path) -> String {
    let claimed = &held.claimed;
    let head = format!(
        "replay_agrees: {} — \"{claimed}\" replayed {} times, held to the trace's attempts and \
         successes in bins of {} ({} compared, |z| <= {:.2})\n",
        if held.agrees() { "yes" } else { "no" },
        calibrate::replay::REPLICATIONS,
        held.width,
        held.bins.len(),
        held.bound
    );
    let mut out = head;
    let differs = held.differs();
    for d in differs.iter().take(10) {
        let replayed = match d.z.is_finite() {
            true => format!("{:.1} replayed (z {:.1})", d.replay, d.z),
            false => format!("{} in every replay", d.replay),
        };
        let _ = writeln!(
            out,
            "  from {}: {} {} in the trace, {replayed}",
            d.from, d.figure, d.trace
        );
    }
    if differs.len() > 10 {
        let _ = writeln!(out, "  and {} more", differs.len() - 10);
    }
    if let Some(reason) = held.reason() {
        let _ = writeln!(out, "  likely: {reason}");
    }
    let _ = writeln!(out, "  every bin compared: {}", file.display());
    out
}

/// Whether an operation's failures come in bursts, in a few words: the runs test's z, and the
/// fitted spells where they do.
fn in_bursts(op: &calibrate::observed::Operation) -> String {
    let (runs, fit) = op.bursts();
    match (runs.z, runs.bursty(), fit) {
        (None, _, _) => "too few to test".into(),
        (Some(z), Some(true), Some(fit)) => format!("in bursts (z {z:.1}): {}", fit.in_words()),
        (Some(z), Some(true), None) => format!("in bursts (z {z:.1})"),
        (Some(z), _, _) => format!("independent (z {z:.2})"),
    }
}

pub fn command(args: &CalibrateArgs) -> Result<(), Failure> {
    let asked = calibrate::Asked {
        name: &args.name,
        incident: args.incident,
        claimed: args.claimed.as_deref(),
    };
    let done = calibrate::calibrate(&args.trace, &args.out, asked)?;
    let mut out = String::new();
    let observed = &done.observed;
    let calls: u64 = observed.operations.values().map(|o| o.attempts()).sum();
    let _ = writeln!(
        out,
        "read {calls} client calls to {} operations from {}{}",
        observed.operations.len(),
        args.trace.display(),
        match observed.skipped {
            0 => String::new(),
            n => format!(" ({n} spans of other kinds read past)"),
        }
    );
    let percent = |op: &calibrate::observed::Operation, o: &[Outcome]| {
        let p: f64 = o.iter().map(|&o| op.rate(o)).sum();
        format!("{:.2}%", 100.0 * p)
    };
    let mut rows = vec![
        [
            "operation",
            "calls",
            "5xx",
            "429",
            "403",
            "4xx",
            "no reply",
            "p50",
            "p99",
            "failures",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (name, op) in &observed.operations {
        let quantile = |q: f64| match op.latency.len() {
            0 => "—".to_string(),
            _ => op.latency.near(q).to_string(),
        };
        rows.push(vec![
            name.clone(),
            op.attempts().to_string(),
            percent(op, &[Outcome::ServerError]),
            percent(op, &[Outcome::Throttled]),
            percent(op, &[Outcome::Forbidden]),
            percent(op, &[Outcome::Invalid]),
            percent(op, &[Outcome::Timeout, Outcome::Reset, Outcome::Connect]),
            quantile(0.5),
            quantile(0.99),
            in_bursts(op),
        ]);
    }
    out.push_str(&report::aligned(&rows));
    let join = &observed.join;
    let reading = match join.server_spans {
        _ if join.given_up => "the server spans were too many to join: calls without a reply \
             read from the client spans alone, as lost requests"
            .to_string(),
        0 => "no server spans: calls without a reply read from the client spans alone, as lost \
              requests (export the server's spans too to tell a lost reply from a lost request)"
            .to_string(),
        n => format!(
            "joined with {n} server spans: a call without a reply that its server completed is \
             a lost reply, one it did not a lost request"
        ),
    };
    let _ = writeln!(out, "{reading}");
    let _ = writeln!(out, "wrote {}", done.config.display());
    if let Some((held, file)) = &done.replay {
        out.push_str(&replay_said(held, file));
    }
    print(&out)
}
