//! The calibrated config's text and its latency files, from what the trace showed.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::burst::{self, Fit, Runs};
use super::claimed::Claimed;
use super::incident;
use super::observed::{Observed, Operation};
use super::span::Outcome;
use crate::time::Tick;

/// The most points an empirical latency file gets: quantiles, evenly spread.
const LATENCY_POINTS: u64 = 1000;
/// The most points the arrival-rate schedule gets.
const RATE_POINTS: usize = 60;

/// A config and the latency files it names, by their paths relative to the config.
pub struct Written {
    pub config: String,
    pub files: BTreeMap<String, String>,
}

/// retrysim's name for an operation: lowercase letters, digits, '-' and '_'.
fn tool_name(operation: &str, taken: &[String]) -> String {
    let mut name = String::new();
    for c in operation.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' | '_' => name.push(c),
            _ if !name.is_empty() && !name.ends_with('-') => name.push('-'),
            _ => {}
        }
    }
    let mut name: String = name.trim_end_matches('-').chars().take(60).collect();
    if name.is_empty() {
        name = "operation".into();
    }
    let base = name.clone();
    let mut k = 2;
    while taken.contains(&name) {
        name = format!("{base}-{k}");
        k += 1;
    }
    name
}

/// A probability as a config writes it: six decimals, trailing zeros dropped.
pub(super) fn share(p: f64) -> String {
    let text = format!("{p:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A TOML basic string's contents.
fn escaped(text: &str) -> String {
    text.chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if c.is_control() => format!("\\u{:04X}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

/// A duration read from a histogram, to its three significant digits: the precision the
/// histogram keeps, so a client's 2 s timeout reads as 2 s.
fn significant(t: Tick) -> Tick {
    let digits = t.0.checked_ilog10().unwrap_or(0);
    let unit = 10u64.pow(digits.saturating_sub(2));
    // A spell fitted from calls years apart can be near the largest tick: no rounding past it.
    Tick(t.0.saturating_add(unit / 2) / unit * unit)
}

/// The config `name` for the operations `observed` holds, read from `trace` (as shown): its
/// header, the workload of the busiest operation, a tool per operation, and two policies. As
/// an `incident` (the trace's clock: its first call and a stretch's width), the workload
/// replays the busiest operation's first attempts and every tool follows its recorded health
/// (see [`super::incident`]), rather than a rate schedule and rates; a `claimed` policy takes
/// the place of the one observed.
pub fn config(
    observed: &Observed,
    trace: &str,
    name: &str,
    (incident, claimed): (Option<(i64, Tick)>, Option<&Claimed>),
) -> Written {
    let mut out = String::new();
    let mut files = BTreeMap::new();
    let mut names: Vec<String> = Vec::new();
    let ops: Vec<(&String, &Operation)> = observed.operations.iter().collect();
    for (operation, _) in &ops {
        let n = tool_name(operation, &names);
        names.push(n);
    }
    let busiest = observed.busiest().expect("a trace with calls");
    let called = ops
        .iter()
        .position(|(o, _)| *o == busiest)
        .expect("an operation");
    header(&mut out, observed, trace, &ops);
    let _ = writeln!(out, "name = \"{name}\"");
    let what = match incident {
        None => "calibrated from",
        Some(_) => "the incident recorded in",
    };
    let how = claimed.map_or("as observed".to_string(), |c| {
        format!("under the claimed {}", escaped(&c.name))
    });
    let also = match claimed.is_some_and(|c| c.name == THREE_ATTEMPTS) {
        true => "",
        false => ", and with 3 attempts",
    };
    let _ = writeln!(
        out,
        "description = \"{what} {}: {} {how}{also}\"",
        escaped(trace),
        names[called]
    );
    out.push_str("seed = 1\nreplications = 5\n\n");
    match incident {
        None => workload(&mut out, &ops, &names, called),
        Some((origin, _)) => {
            let file = format!("data/{name}/arrivals.csv");
            recorded(&mut out, &ops, (&names, called), &file);
            files.insert(file, incident::arrivals(ops[called].1, origin));
        }
    }
    for ((operation, op), tool) in ops.iter().zip(&names) {
        let written = self::tool(&mut out, observed, (operation, op), tool, (name, incident));
        files.extend(written);
    }
    let timeouts: Vec<Tick> = ops
        .iter()
        .filter(|(_, o)| !o.timeouts.is_empty())
        .map(|(_, o)| significant(o.timeouts.near(0.5)))
        .collect();
    policies(&mut out, timeouts.iter().max().copied(), claimed);
    Written { config: out, files }
}

/// The comment that opens the config: where it came from, and what a trace cannot say.
fn header(out: &mut String, observed: &Observed, trace: &str, ops: &[(&String, &Operation)]) {
    let total: u64 = ops.iter().map(|(_, o)| o.attempts()).sum();
    let _ = writeln!(
        out,
        "{}{trace}` from {total} client calls to {} \
         operation{}.",
        super::CONFIG_MARK,
        ops.len(),
        if ops.len() == 1 { "" } else { "s" }
    );
    match observed.join.server_spans {
        _ if observed.join.given_up => out.push_str(
            "#\n\
             # The trace's server spans were too many to join to their client spans; the calls\n\
             # without a reply are read from the client spans alone, as below.\n",
        ),
        0 => {}
        n => {
            let _ = writeln!(
                out,
                "#\n# Joined with {n} server spans (by trace id and parent span id): a call without a\n\
                 # reply that a server span completed lost its reply (`reply_loss`); one that none\n\
                 # completed lost its request (`request_loss`)."
            );
        }
    }
    if observed.join.server_spans == 0 || observed.join.given_up {
        out.push_str(
            "#\n\
             # A client's trace shows what came back, not what the server did: a call that got no\n\
             # reply (a timeout, a reset) may or may not have committed. Those calls are written as\n\
             # lost requests (`request_loss`), which commit nothing. If the server commits some of\n\
             # them, move that share to `reply_loss`: every retry of such a call is a duplicate.\n\
             # Export the server's spans too and calibrate again to tell the two apart.\n",
        );
    }
    out.push_str(
        "# Latencies are the round trips of the calls that got a reply, as `service_time`\n\
         # with no network legs. The tools' kinds and idempotency are not in a trace: say them.\n",
    );
}

/// `[workload]` of an incident: the busiest operation's first attempts, replayed from `file`.
fn recorded(
    out: &mut String,
    ops: &[(&String, &Operation)],
    (names, called): (&[String], usize),
    file: &str,
) {
    out.push_str("[workload]\n");
    let _ = writeln!(
        out,
        "# The busiest operation's {} first attempts, when the trace shows them.",
        ops[called].1.arrivals.total()
    );
    for (i, (op, o)) in ops.iter().enumerate() {
        if i != called {
            let _ = writeln!(
                out,
                "# \"{}\" ({}) had {} first attempts: set `calls` to replay it.",
                escaped(op),
                names[i],
                o.arrivals.total()
            );
        }
    }
    let _ = writeln!(out, "calls = [\"{}\"]", names[called]);
    let _ = writeln!(
        out,
        "arrival = \"recorded\"\narrivals = \"{file}\"\nclients = 1000000"
    );
}

/// `[workload]`: the busiest operation's first attempts, as a rate schedule.
fn workload(out: &mut String, ops: &[(&String, &Operation)], names: &[String], called: usize) {
    let mut arrivals = ops[called].1.arrivals.clone();
    while arrivals.schedule().len() > RATE_POINTS {
        arrivals.widen();
    }
    let schedule = arrivals.schedule();
    let span = Tick(arrivals.width as u64 * schedule.len() as u64);
    out.push_str("[workload]\n");
    let _ = writeln!(
        out,
        "# The busiest operation, at the rate its first attempts arrived in bins of {}.",
        Tick(arrivals.width as u64)
    );
    for (i, (op, o)) in ops.iter().enumerate() {
        if i != called {
            let seconds = span.seconds();
            let _ = writeln!(
                out,
                "# \"{}\" ({}) averaged {:.3} first attempts a second: set `calls` to simulate it.",
                escaped(op),
                names[i],
                o.arrivals.total() as f64 / seconds
            );
        }
    }
    let _ = writeln!(out, "calls = [\"{}\"]", names[called]);
    let _ = writeln!(
        out,
        "arrival = \"poisson\"\nclients = 1000000\nduration = \"{span}\""
    );
    out.push_str("rate = [\n");
    for (at, per_second) in &schedule {
        let _ = writeln!(
            out,
            "    {{ at = \"{at}\", per_second = {} }},",
            share(*per_second)
        );
    }
    out.push_str("]\n");
}

/// One operation's `[[tool]]`, named `tool`, in the config `name` (an incident's, with its
/// clock, where it is one): the files it names, its latencies' where it has them and its health
/// in an incident, with their text.
fn tool(
    out: &mut String,
    observed: &Observed,
    (operation, op): (&String, &Operation),
    tool: &str,
    (name, incident): (&str, Option<(i64, Tick)>),
) -> Vec<(String, String)> {
    let mut files = Vec::new();
    out.push_str("\n[[tool]]\n");
    let _ = writeln!(out, "name = \"{tool}\"");
    let answered = op.latency.len();
    let _ = writeln!(
        out,
        "# \"{}\": {} calls ({} first attempts), {} with a reply; {} cancelled by the client, left out",
        escaped(operation),
        op.attempts(),
        op.arrivals.total(),
        answered,
        op.count(Outcome::Cancelled)
    );
    let (runs, fit) = op.bursts();
    out.push_str(&said_of_bursts(&runs, fit.as_ref(), observed.sequence_cut));
    // Bursty, the transient failures are the fitted spells' (written with the burst); an
    // incident's stretches say every rate.
    let fit = fit.filter(|_| incident.is_none());
    let flat: &[(&str, Outcome)] = match (incident, fit) {
        (Some(_), _) => &[],
        (None, Some(_)) => &FLAT[2..],
        (None, None) => &FLAT,
    };
    for &(key, outcome) in flat {
        if op.count(outcome) > 0 {
            let _ = writeln!(out, "{key} = {}", share(op.rate(outcome)));
        }
    }
    if !op.retry_after.is_empty() {
        let median = significant(op.retry_after.near(0.5));
        let _ = writeln!(
            out,
            "retry_after = \"{median}\"   # the median of {} Retry-After values",
            op.retry_after.len()
        );
    }
    let (timed_out, reset) = (op.count(Outcome::Timeout), op.count(Outcome::Reset));
    if let Some(fit) = &fit {
        burst(out, observed, (operation, op), fit);
    }
    if let Some(clock) = incident {
        let file = format!("data/{name}/{tool}-health.csv");
        let replied = observed.unanswered(operation).map_or(0.0, |u| {
            u.replies_lost as f64 / (u.replies_lost + u.requests_lost).max(1) as f64
        });
        let _ = writeln!(
            out,
            "health = \"{file}\"   # its faults and slowness in stretches of {}",
            clock.1
        );
        files.push((file, incident::health(op, clock, replied)));
    }
    if timed_out + reset > 0 && fit.is_none() && incident.is_none() {
        let of = |n: u64| share(n as f64 / op.attempts() as f64);
        match observed.unanswered(operation) {
            Some(u) => {
                let _ = writeln!(
                    out,
                    "request_loss = {}   # of {timed_out} timeouts and {reset} resets, {} that no server span completed",
                    of(u.requests_lost),
                    u.requests_lost
                );
                let _ = writeln!(
                    out,
                    "reply_loss = {}   # and {} that a server span completed",
                    of(u.replies_lost),
                    u.replies_lost
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "request_loss = {}   # {timed_out} timeouts and {reset} resets",
                    of(timed_out + reset)
                );
            }
        }
    }
    if timed_out + reset > 0 && timed_out >= reset {
        out.push_str("loss_seen_as = \"silence\"\n");
    }
    out.push_str("request_latency = { dist = \"constant\", value = \"0s\" }\n");
    if answered == 0 {
        out.push_str(
            "service_time = { dist = \"constant\", value = \"0s\" }   # no call got a reply\n",
        );
    } else {
        let file = format!("data/{name}/{tool}.csv");
        let _ = writeln!(
            out,
            "service_time = {{ dist = \"empirical\", file = \"{file}\" }}"
        );
        files.push((file, latencies(op)));
    }
    out.push_str("reply_latency = { dist = \"constant\", value = \"0s\" }\n");
    files
}

/// The fault keys a tool gets a flat rate for, the transient ones first: a burst takes those
/// over.
const FLAT: [(&str, Outcome); 5] = [
    ("server_error", Outcome::ServerError),
    ("throttled", Outcome::Throttled),
    ("forbidden", Outcome::Forbidden),
    ("invalid", Outcome::Invalid),
    ("connect_failure", Outcome::Connect),
];

impl Fit {
    /// The fitted spells in a few words: their mean lengths and chances of failing.
    pub fn in_words(&self) -> String {
        format!(
            "good {} failing {}, bad {} failing {}",
            spell(self.alpha.value),
            percent(self.fail_good.value),
            spell(self.beta.value),
            percent(self.fail_bad.value)
        )
    }
}

/// The mean spell of a state left at `rate` a second, to three significant figures.
fn spell(rate: f64) -> Tick {
    significant(Tick((1e6 / rate) as u64))
}

/// A chance as a percentage, to two significant figures or two decimals (near 0 and 100 %,
/// two decimals too, and what lies past them said so: 99.998 % is not 100 %).
fn percent(p: f64) -> String {
    let x = 100.0 * p;
    match x {
        _ if x > 99.99 && x < 100.0 => "> 99.99 %".into(),
        _ if x > 99.0 && x < 100.0 => format!("{x:.2} %"),
        _ if x >= 10.0 => format!("{x:.0} %"),
        _ if x >= 1.0 => format!("{x:.1} %"),
        _ if x > 0.0 && x < 0.01 => "< 0.01 %".into(),
        _ => format!("{x:.2} %"),
    }
}

/// A probability rounded down to six decimals, so shares that add to a whole never pass it.
pub(super) fn share_down(p: f64) -> String {
    share((p * 1e6).floor() / 1e6)
}

/// The comment that says whether an operation's failures come in bursts, and how it was told;
/// `cut` where the trace held more calls than are kept in order.
fn said_of_bursts(runs: &Runs, fit: Option<&Fit>, cut: bool) -> String {
    let said = told_of_bursts(runs, fit);
    match cut {
        false => said,
        true => format!(
            "{said}# (told from the calls among the trace's first {} read, the most kept in \
             order)\n",
            super::observed::MAX_SEQUENCE
        ),
    }
}

/// Whether an operation's failures come in bursts, as a comment.
fn told_of_bursts(runs: &Runs, fit: Option<&Fit>) -> String {
    let n = runs.failures + runs.successes;
    let Some(z) = runs.z else {
        return format!(
            "# too few transient failures ({}) or other calls ({}) to test whether failures come \
             in bursts ({} of each)\n",
            runs.failures,
            runs.successes,
            burst::FEWEST
        );
    };
    let test = format!(
        "{} runs in {n} calls against {:.0} were failures independent (runs test z = {z:.2}; \
         bursty below {:.2}, the 1 % level)",
        runs.runs,
        runs.expected,
        burst::BURSTY_Z
    );
    match (runs.bursty(), fit) {
        (Some(true), Some(fit)) => {
            // A rate's interval, as spells: the highest rate the shortest.
            let spells = |e: &burst::Estimated| {
                format!(
                    "{} (95 %: {} to {})",
                    spell(e.value),
                    spell(e.high),
                    spell(e.low)
                )
            };
            let chance = |e: &burst::Estimated| {
                format!(
                    "{} (95 %: {} to {})",
                    percent(e.value),
                    percent(e.low),
                    percent(e.high)
                )
            };
            format!(
                "# failures come in bursts: {test}. Fitted as good spells of {} failing {} of \
                 calls, and bad spells of {} failing {}\n",
                spells(&fit.alpha),
                chance(&fit.fail_good),
                spells(&fit.beta),
                chance(&fit.fail_bad)
            )
        }
        (Some(true), None) => {
            format!(
                "# failures come in bursts: {test}; no fit (no spell ended, or no two states \
                 told apart: their rates written flat)\n"
            )
        }
        _ => format!("# failures independent: {test}\n"),
    }
}

/// A bursty operation's `burst`: the fitted spells, and in the bad ones its transient failures
/// in the shares the trace shows them, filling what its flat refusals leave.
fn burst(out: &mut String, observed: &Observed, (operation, op): (&str, &Operation), fit: &Fit) {
    let transient: u64 = [
        Outcome::ServerError,
        Outcome::Throttled,
        Outcome::Timeout,
        Outcome::Reset,
    ]
    .map(|o| op.count(o))
    .iter()
    .sum();
    let room = 1.0 - FLAT[2..].iter().map(|&(_, o)| op.rate(o)).sum::<f64>();
    let silent = op.count(Outcome::Timeout) + op.count(Outcome::Reset);
    // A state's transient faults: its chance of failing, split as the trace's transient
    // failures are.
    let faults = |failing: f64| {
        let of = |n: u64| share_down(failing.min(room) * n as f64 / transient.max(1) as f64);
        let mut keys = Vec::new();
        for (key, o) in [
            ("server_error", Outcome::ServerError),
            ("throttled", Outcome::Throttled),
        ] {
            if op.count(o) > 0 {
                keys.push((key, of(op.count(o))));
            }
        }
        match observed.unanswered(operation) {
            Some(u) if silent > 0 => {
                keys.push(("request_loss", of(u.requests_lost)));
                keys.push(("reply_loss", of(u.replies_lost)));
            }
            _ if silent > 0 => keys.push(("request_loss", of(silent))),
            _ => {}
        }
        keys
    };
    for (key, value) in faults(fit.fail_good.value) {
        if value != "0" {
            let _ = writeln!(out, "{key} = {value}");
        }
    }
    let in_bad: Vec<String> = (faults(fit.fail_bad.value).iter())
        .map(|(key, value)| format!("{key} = {value}"))
        .collect();
    let _ = writeln!(
        out,
        "burst = {{ good = \"{}\", bad = \"{}\", in_bad = {{ {} }} }}",
        spell(fit.alpha.value),
        spell(fit.beta.value),
        in_bad.join(", ")
    );
}

/// The policy that retries what the client did not, beside the one it had.
const THREE_ATTEMPTS: &str = "three-attempts";

/// The two policies: as observed (or the one claimed, as its file has it), and with three
/// attempts (unless the claim has that name).
fn policies(out: &mut String, timeout: Option<Tick>, claimed: Option<&Claimed>) {
    let wait = timeout.map_or(String::new(), |t| {
        format!("timeout = \"{t}\"   # the client's, as its timed-out calls waited\n")
    });
    match claimed {
        None => {
            let _ = write!(
                out,
                "\n[[policy]]\nname = \"as-observed\"\nmax_attempts = 1\n{wait}"
            );
        }
        Some(c) => {
            let _ = write!(
                out,
                "\n# The policy claimed to have been in effect, as {} has it.\n{}",
                c.file.escape_debug(),
                c.text.trim_end()
            );
            out.push('\n');
        }
    }
    if claimed.is_none_or(|c| c.name != THREE_ATTEMPTS) {
        let _ = write!(
            out,
            "\n[[policy]]\nname = \"{THREE_ATTEMPTS}\"\nmax_attempts = 3\n{wait}\
             backoff = {{ initial_delay = \"100ms\", max_delay = \"2s\" }}\n"
        );
    }
}

/// An operation's answered round trips as an empirical latency file: its quantiles at
/// (i + ½)/k for k points, each a whole number of ticks.
fn latencies(op: &Operation) -> String {
    let n = op.latency.len();
    let k = n.min(LATENCY_POINTS);
    let mut text = String::from("latency\n");
    for i in 0..k {
        let q = (i as f64 + 0.5) / k as f64;
        let _ = writeln!(text, "{}", op.latency.near(q).0);
    }
    text
}
