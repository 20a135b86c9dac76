//! The folder `retrysim endpoint` writes when it stops, whole or not at all: the real run in the
//! simulator's files (`summary.csv`, `runs.csv`, `tools.csv`, `intents.csv`, `attempts.csv`,
//! the manifest), and the endpoint's own: `endpoint.csv`, `requests.csv` and `access-log.csv`
//! (for `retrysim calibrate`).

use retrysim::config::Source;
use retrysim::endpoint::{Ledger, recorded};
use retrysim::error::Error;
use retrysim::experiment::Experiment;
use retrysim::output::Staging;

/// A CSV file's rows, its header first.
type Rows = Vec<Vec<String>>;

/// The folder `<name>.endpoint/`, staged under `root`: the real run in the simulator's files
/// (each client a configuration; see [`retrysim::endpoint::recorded`]), and the endpoint's own.
pub(super) fn folder(
    exp: &Experiment,
    source: &Source,
    ledger: &Ledger,
    root: &std::path::Path,
) -> Result<Staging, Error> {
    let header = ["timestamp", "operation", "duration_s", "status", "resend"].map(String::from);
    let log = std::iter::once(header.to_vec())
        .chain(
            ledger
                .access_log(&exp.tools)
                .into_iter()
                .map(|r| r.to_vec()),
        )
        .collect();
    let own = [
        ("endpoint.csv", csv(figures(exp, ledger))?),
        ("requests.csv", csv(requests(exp, ledger))?),
        ("access-log.csv", csv(log)?),
    ];
    let (real, runs) = recorded::runs(exp, ledger);
    retrysim::produce::recorded_into_staging(source, real, &runs, root, &own)
}

/// Rows as CSV text, each cell quoted where it must be.
fn csv(rows: Rows) -> Result<String, Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    for row in rows {
        w.write_record(&row)
            .map_err(|e| Error::io("cannot write a row")(e.into()))?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::io("cannot write a row")(e.into_error()))?;
    Ok(String::from_utf8(bytes).expect("rows of text"))
}

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// `endpoint.csv`: a row per client and tool.
fn figures(exp: &Experiment, ledger: &Ledger) -> Rows {
    let per = |n: u64, of: u64| match of {
        0 => String::new(),
        of => format!("{:.6}", n as f64 / of as f64),
    };
    let mut rows = vec![header(&[
        "client",
        "tool",
        "operations",
        "attempts",
        "attempts_per_operation",
        "commits",
        "duplicates",
        "duplicates_per_operation",
        "succeeded",
        "success_rate",
        "unanswered",
        "without_operation",
    ])];
    for ((client, tool), f) in ledger.figures() {
        rows.push(vec![
            client,
            exp.tools[tool].name.clone(),
            f.operations.to_string(),
            f.attempts.to_string(),
            per(f.attempts - f.without_operation, f.operations),
            f.commits.to_string(),
            f.duplicates.to_string(),
            per(f.duplicates, f.operations),
            f.succeeded.to_string(),
            per(f.succeeded, f.operations),
            f.unanswered.to_string(),
            f.without_operation.to_string(),
        ]);
    }
    rows
}

/// `requests.csv`: a row per request, in the order served.
fn requests(exp: &Experiment, ledger: &Ledger) -> Rows {
    let mut rows = vec![header(&[
        "at_s",
        "client",
        "tool",
        "operation",
        "outcome",
        "status",
        "committed",
        "output_tokens",
    ])];
    for s in &ledger.served {
        rows.push(vec![
            format!("{:.6}", s.at.seconds()),
            s.client.clone(),
            exp.tools[s.tool].name.clone(),
            s.operation.clone().unwrap_or_default(),
            s.outcome.name().to_string(),
            s.status.map(|x| x.to_string()).unwrap_or_default(),
            s.committed.to_string(),
            s.generated.to_string(),
        ]);
    }
    rows
}
