//! `retrysim tune CONFIG`: search the policy a config's `[tune]` table names, validate the
//! finalists on fresh seeds, write out/<name>/ and say the choice in the libraries' words.

use std::fmt::Write;

use retrysim::config::Source;
use retrysim::metrics::Figure;
use retrysim::run;
use retrysim::tune::{self, Tuned};

use crate::args::TuneArgs;
use crate::terminal::say;
use crate::{CANCEL, Failure, print};

/// Runs the tuner for `source` into a staging folder under `root`; Ctrl-C ends it with
/// nothing written.
pub fn produce(
    source: &Source,
    spec: tune::Spec,
    root: &std::path::Path,
    pace: &crate::args::Pace,
) -> Result<(Tuned, retrysim::output::Staging), Failure> {
    if !pace.quiet {
        let candidates: usize = spec.keys.iter().map(|k| k.values.len()).product();
        say!(
            "searching {candidates} candidates of policy \"{}\"…",
            spec.policy
        );
    }
    let options = run::Options {
        threads: pace.threads.map(usize::from),
        traces: None,
        cancel: Some(&CANCEL),
    };
    crate::catch_ctrl_c();
    match tune::into_folder(source, spec, root, &options) {
        Err(_) if CANCEL.load(std::sync::atomic::Ordering::SeqCst) => {
            say!("interrupted: nothing was written");
            Err(Failure::Interrupted)
        }
        other => Ok(other?),
    }
}

pub fn command(args: &TuneArgs) -> Result<(), Failure> {
    let source = Source::read(&args.config)?;
    let Some(spec) = source.tune()? else {
        return Err(Failure::Usage(format!(
            "{} has no [tune] table: `retrysim tune` searches the policy a [tune] table names (see \"Choosing a policy\" in docs/book/src/reference/commands.md); run it with `retrysim run {}`",
            source.name, source.name
        )));
    };
    let (tuned, staging) = produce(&source, spec, &args.out, &args.pace)?;
    let dir = staging.commit()?;
    if !args.pace.quiet {
        print(&report(&tuned))?;
        if let Some(policy) = tune::chosen_policy(&tuned, &source) {
            print(&words(&policy))?;
        }
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    if tuned.chosen.is_none() {
        say!(
            "no finalist met every constraint at its 95 % bound on the validation's seeds: no recommended.toml (see candidates.csv)"
        );
        return Err(Failure::Worse);
    }
    Ok(())
}

/// The chosen policy as urllib3's `Retry` and a gRPC service config, and what each cannot say
/// (every library's form is in in-words.md).
fn words(policy: &retrysim::policy::Policy) -> String {
    let mut out = String::new();
    for library in ["urllib3", "grpc"] {
        let w = retrysim::words::say(policy, library).expect("a library retrysim knows");
        let _ = writeln!(out, "\nin {library}'s words:\n{}", w.code);
        for d in &w.differences {
            let _ = writeln!(out, "  no equivalent — {d}");
        }
    }
    out
}

/// The finalists' validation, the choice, and its settings in the libraries' words.
fn report(t: &Tuned) -> String {
    let mut out = String::new();
    let figures = t.spec.figures();
    let replications: usize = t.observed.iter().map(|o| o.runs.len()).sum();
    let _ = writeln!(
        out,
        "{} candidates, {} rounds of successive halving ({replications} replications under common random numbers); finalists validated on {} fresh replications (seed {}):\n",
        t.candidates.len(),
        t.rounds.len(),
        t.spec.validation,
        t.validation_seed
    );
    let mut rows = vec![{
        let mut h = vec!["candidate".to_string(), "settings".to_string()];
        h.extend(figures.iter().map(|f| f.column().to_string()));
        h.push("constraints".into());
        h
    }];
    let row = |name: String, settings: String, obs: &tune::search::Observed| {
        let mut r = vec![name, settings];
        r.extend(figures.iter().map(|&f| Tuned::shown(obs.estimate(f))));
        let holds = tune::search::holds(&t.spec.constraints, |f: Figure| obs.estimate(f));
        r.push(if holds { "hold" } else { "missed" }.into());
        r
    };
    for (i, obs) in &t.finalists {
        let settings: Vec<String> = t
            .settings(*i)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mark = if t.chosen == Some(*i) {
            " ← chosen"
        } else {
            ""
        };
        rows.push(row(format!("c{i:04}{mark}"), settings.join(" "), obs));
    }
    rows.push(row(
        format!("{} as written", t.spec.policy),
        String::new(),
        &t.as_written,
    ));
    out.push_str(&retrysim::report::aligned(&rows));
    out
}
