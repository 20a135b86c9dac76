//! `retrysim explore [CONFIG] --faults K`: every fault schedule up to K faults, each invariant
//! checked, into <out>/<name>.explore/.

use retrysim::config::Source;
use retrysim::explore::{self, Spec};
use retrysim::output::Staging;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::args::{ExploreArgs, Pace};
use crate::progress::{Mode, Progress};
use crate::terminal::say;
use crate::{CANCEL, Failure, print};

/// Sets its flag when dropped.
struct Done<'a>(&'a AtomicBool);

impl Drop for Done<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Shows the schedules walked until `done`: a count on a bar, or a plain line a second, as a
/// run's progress is shown. How many schedules there are is not known before they are walked.
fn show(walked: &AtomicU64, done: &AtomicBool, pace: &Pace) {
    let mode = if pace.quiet {
        Mode::None
    } else {
        pace.progress
    };
    let mut progress = Progress::schedules(mode);
    let started = Instant::now();
    while !done.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(100));
        progress.schedules_walked(walked.load(Ordering::Relaxed), started);
    }
    progress.finish();
}

/// Explores `source` as its `[explore]` table (and `faults`, if given) says, into a staging
/// folder under `root`, with the schedules walked shown as `pace` asks; Ctrl-C ends it with
/// nothing written.
pub fn produce(
    source: &Source,
    changes: &[retrysim::config::Change],
    faults: Option<usize>,
    root: &std::path::Path,
    pace: &Pace,
) -> Result<(String, Staging), Failure> {
    let mut spec = Spec::read(source)?;
    if let Some(k) = faults {
        spec.faults = k;
    }
    crate::catch_ctrl_c();
    let walked = AtomicU64::new(0);
    let done = AtomicBool::new(false);
    let explored = std::thread::scope(|scope| {
        scope.spawn(|| show(&walked, &done, pace));
        // The display ends however the exploration does, a panic included.
        let _done = Done(&done);
        let how = explore::Pace {
            threads: pace.threads.map(usize::from),
            cancel: Some(&CANCEL),
            walked: Some(&walked),
        };
        explore::into_folder(source, changes, &spec, root, &how)
    });
    let (exp, found, staging) = match explored {
        Err(_) if CANCEL.load(Ordering::SeqCst) => {
            say!("interrupted: nothing was written");
            return Err(Failure::Interrupted);
        }
        other => other?,
    };
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
                // A scripted crash breaks some invariants with no fault at all.
                let story = match (fates.is_empty(), exp.workload.crash.is_some()) {
                    (true, true) => "the scripted crash alone".to_string(),
                    _ => fates.join(" → "),
                };
                format!("{} fault(s): {story}", c.faults)
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
    let beyond = found.iter().map(|f| f.beyond()).fold(0.0, f64::max);
    let table = format!(
        "{} explored to {} fault(s), every latency at its median; the schedules beyond carry at most {beyond:.3e} of the probability\n\n{}",
        exp.name,
        spec.faults,
        retrysim::report::aligned(&rows)
    );
    Ok((table, staging))
}

pub fn command(args: &ExploreArgs) -> Result<(), Failure> {
    let source = Source::read(&args.config)?;
    let faults = args.faults.map(usize::from);
    let (table, staging) = produce(&source, &args.changes.list(), faults, &args.out, &args.pace)?;
    let dir = staging.commit()?;
    if !args.pace.quiet {
        print(&table)?;
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    Ok(())
}
