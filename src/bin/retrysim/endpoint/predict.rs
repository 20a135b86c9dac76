//! `--predict POLICY`: once the endpoint stops, the config simulated under the one policy the
//! user says their client has, and each client's figures held to it (see
//! [`retrysim::endpoint::predict`]).

use std::collections::BTreeMap;

use retrysim::endpoint::Ledger;
use retrysim::endpoint::predict::{self, FIGURES};
use retrysim::error::Error;
use retrysim::experiment::Experiment;
use retrysim::metrics::{Estimate, Measure};
use retrysim::model::Arrival;
use retrysim::model::workload::Recorded;
use retrysim::run::PolicyResult;

use crate::Failure;

/// The tool the prediction is about, and the policy's index: refused before anything is
/// served where the policy is not the config's, or its tasks call more than one tool.
pub fn check(exp: &Experiment, name: &str) -> Result<(usize, usize), Failure> {
    let Some(policy) = exp.policies.iter().position(|p| p.name == name) else {
        let names: Vec<&str> = exp.policies.iter().map(|p| p.name.as_str()).collect();
        return Err(Failure::Usage(format!(
            "--predict {name}: the config has no such [[policy]]; it has {}",
            names.join(", ")
        )));
    };
    let calls = exp.calls_of(&exp.policies[policy]);
    match calls {
        [tool] => Ok((*tool, policy)),
        _ => Err(Failure::Usage(format!(
            "--predict {name}: its tasks make {} calls, and a prediction compares one tool's \
             figures per operation: a config whose tasks make one call",
            calls.len()
        ))),
    }
}

/// Simulates `exp` under policy `policy` alone, and prints each client of `ledger` at `tool`
/// against it, with a verdict a line.
pub fn print(
    exp: &Experiment,
    (tool, policy): (usize, usize),
    ledger: &Ledger,
) -> Result<(), Failure> {
    let name = exp.policies[policy].name.clone();
    let clients = predict::measured(ledger, tool);
    let (predictions, simulated) = predictions(exp, (tool, policy), ledger, &clients)?;
    let bound = predict::bound(clients.len() * FIGURES.len());
    let mut out = format!(
        "predicted by \"{name}\": {simulated}; each figure per operation, mean ± standard \
         error, held to |z| <= {bound:.2}\n\n{:<16} {:<11} {:>20} {:>20} {:>7}\n",
        "client", "figure", "endpoint", "predicted", "z",
    );
    let mut verdicts = Vec::new();
    for ((client, measured), predicted) in clients.iter().zip(&predictions) {
        let rows = predict::compare(measured, predicted, bound);
        for r in &rows {
            out += &format!(
                "{:<16} {:<11} {:>11.4} ± {:<6.4} {:>11.4} ± {:<6.4} {:>7}  {}\n",
                if client.is_empty() {
                    "(unnamed)"
                } else {
                    client
                },
                r.figure,
                r.measured.mean,
                r.measured.std_error,
                r.predicted.mean,
                r.predicted.std_error,
                r.z.map_or("—".to_string(), |z| format!("{z:.2}")),
                if r.agrees { "agrees" } else { "differs" },
            );
        }
        let differ: Vec<&str> = rows
            .iter()
            .filter(|r| !r.agrees)
            .map(|r| r.figure)
            .collect();
        verdicts.push(match differ.is_empty() {
            true => format!("client \"{client}\" behaves as \"{name}\" predicts"),
            false => format!(
                "client \"{client}\" differs from \"{name}\" in {}",
                differ.join(", ")
            ),
        });
    }
    if clients.is_empty() {
        verdicts.push("no client sent two operations or more: nothing to compare".into());
    }
    out += &format!("\n{}\n", verdicts.join("\n"));
    crate::print(&out)
}

/// Each client's predicted figures, and what was simulated, in words. Where what the tool does
/// depends on when requests come ([`predict::paced`]), each client's operations are replayed
/// at the times their first requests arrived, so the prediction meets the limits, outages and
/// bursts the client met; elsewhere one simulation of the config's workload serves them all.
fn predictions(
    exp: &Experiment,
    (tool, policy): (usize, usize),
    ledger: &Ledger,
    clients: &BTreeMap<String, [Estimate; 3]>,
) -> Result<(Vec<[Estimate; 3]>, String), Failure> {
    let mut one = exp.clone();
    one.policies = vec![exp.policies[policy].clone()];
    let figures = |sim: &PolicyResult| {
        [Measure::Attempts, Measure::Duplicates, Measure::Success].map(|m| sim.estimate(m))
    };
    let r = exp.replications;
    if !predict::paced(&exp.tools[tool]) {
        let sim = simulate(one)?;
        let operations = sim.totals.intents() / r.max(1);
        let said = format!("{r} replications of {operations} operations");
        return Ok((vec![figures(&sim); clients.len()], said));
    }
    let mut predicted = Vec::new();
    for client in clients.keys() {
        let times = predict::first_requests(ledger, tool, client);
        let mut replay = one.clone();
        let w = &mut replay.workload;
        w.tasks = Some(times.len() as u64);
        w.duration = None;
        // A client for every operation: each starts when it did.
        w.clients = u32::try_from(times.len()).unwrap_or(u32::MAX).max(1);
        w.arrival = Arrival::Recorded(Recorded {
            file: String::new(),
            times: times.into(),
        });
        predicted.push(figures(&simulate(replay)?));
    }
    let said = format!("{r} replications of each client's operations, replayed when they arrived");
    Ok((predicted, said))
}

/// The one configuration of `exp`, simulated.
fn simulate(exp: Experiment) -> Result<PolicyResult, Failure> {
    let mut point =
        retrysim::run::single_point(exp).map_err(Error::io("cannot simulate the prediction"))?;
    Ok(point.policies.remove(0))
}
