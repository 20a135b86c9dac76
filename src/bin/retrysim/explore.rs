//! `retrysim explore [CONFIG] --faults K`: every fault schedule up to K faults, each invariant
//! checked, into <out>/<name>.explore/.

use retrysim::config::Source;
use retrysim::explore::{self, Spec};
use retrysim::output::Staging;

use crate::args::ExploreArgs;
use crate::{Failure, print};

/// Explores `source` as its `[explore]` table (and `faults`, if given) says, into a staging
/// folder under `root`.
pub fn produce(
    source: &Source,
    changes: &[retrysim::config::Change],
    faults: Option<usize>,
    root: &std::path::Path,
    threads: Option<usize>,
) -> Result<(String, Staging), Failure> {
    let mut spec = Spec::read(source)?;
    if let Some(k) = faults {
        spec.faults = k;
    }
    let (exp, found, staging) = explore::into_folder(source, changes, &spec, root, threads)?;
    let mut rows = vec![
        [
            "configuration",
            "invariant",
            "schedules",
            "violations",
            "probability",
            "minimal counterexample",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for (p, f) in found.iter().enumerate() {
        for (inv, v) in spec.invariants.iter().zip(&f.violations) {
            let minimal = v.minimal.as_ref().map_or("—".to_string(), |c| {
                let fates: Vec<&str> = c.fates.iter().map(|f| f.name()).collect();
                format!("{} fault(s): {}", c.faults, fates.join(" → "))
            });
            rows.push(vec![
                exp.policies[p].name.clone(),
                inv.name().to_string(),
                f.schedules.to_string(),
                v.schedules.to_string(),
                format!("{:.3e}", v.probability),
                minimal,
            ]);
        }
    }
    let beyond = found.iter().map(|f| 1.0 - f.explored).fold(0.0, f64::max);
    let table = format!(
        "{} explored to {} fault(s), every latency at its median; the schedules beyond carry at most {beyond:.3e} of the probability\n\n{}",
        exp.name,
        spec.faults,
        retrysim::report::aligned(&rows)
    );
    Ok((table, staging))
}

pub fn command(args: &ExploreArgs) -> Result<(), Failure> {
    let source = match &args.config {
        Some(path) => Source::read(path)?,
        None => Source::builtin(),
    };
    let threads = args.pace.threads.map(usize::from);
    let faults = args.faults.map(usize::from);
    let (table, staging) = produce(&source, &args.changes.list(), faults, &args.out, threads)?;
    let dir = staging.commit()?;
    if !args.pace.quiet {
        print(&table)?;
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    Ok(())
}
