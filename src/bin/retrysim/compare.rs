//! `retrysim compare A B`: every figure of two runs, B against A, with a verdict corrected over
//! the table; `--fresh CONFIG` reruns a config in a scratch folder as B.

use retrysim::compare;
use retrysim::config::Source;
use retrysim::metrics::Figure;
use retrysim::{Error, output};

use crate::args::CompareArgs;
use crate::terminal::say;
use crate::{Failure, Scratch, print, produce};

/// A `--fail-if` condition.
#[derive(Clone, Copy)]
pub enum FailIf {
    /// A figure that must not get worse (`None`: any figure).
    Worse(Option<Figure>),
    /// No configuration may be in one folder only.
    Missing,
}

impl FailIf {
    /// Whether `comparison` fails the condition.
    fn fails(self, comparison: &compare::Comparison) -> bool {
        match self {
            FailIf::Worse(f) => comparison.worse(f),
            FailIf::Missing => comparison.missing(),
        }
    }

    /// What failed, in words: the figure that got worse, or the configurations in one folder.
    fn said(self, comparison: &compare::Comparison) -> String {
        match self {
            FailIf::Worse(f) => format!("worse: {} (--fail-if)", f.map_or("any", Figure::column)),
            FailIf::Missing => format!(
                "missing: {} configuration(s) in one folder only (--fail-if missing)",
                comparison.unmatched.len()
            ),
        }
    }
}

/// Reads `worse:FIGURE` (or `worse:any`), or `missing`.
pub fn fail_if(text: &str) -> Result<FailIf, String> {
    let names = || Figure::ALL.map(Figure::column).join(", ");
    if text == "missing" {
        return Ok(FailIf::Missing);
    }
    let Some(name) = text.strip_prefix("worse:") else {
        return Err(format!(
            "`{text}` is not a condition: write worse:FIGURE, such as worse:attempts_per_intent, \
             or missing (a configuration in one folder only)"
        ));
    };
    if name == "any" {
        return Ok(FailIf::Worse(None));
    }
    match Figure::named(name) {
        Some(f) => Ok(FailIf::Worse(Some(f))),
        None => {
            let guess = retrysim::suggest::closest(name, Figure::ALL.map(Figure::column))
                .map_or(String::new(), |g| format!("did you mean `{g}`? "));
            Err(format!(
                "`{name}` is not a figure compare judges; {guess}the figures: any, {}",
                names()
            ))
        }
    }
}

pub fn command(args: &CompareArgs) -> Result<(), Failure> {
    let changes = args.changes.list();
    if args.fresh.is_none() && !changes.is_empty() {
        return Err(Failure::Usage(
            "--seed and --set change the config of a fresh run: give --fresh CONFIG".into(),
        ));
    }
    // The exports are checked before any work: neither may write over what is compared.
    let mut inputs = Vec::new();
    for folder in [Some(&args.a), args.b.as_ref()].into_iter().flatten() {
        for file in ["summary.csv", "runs.csv", "manifest.toml"] {
            inputs.push(folder.join(file));
        }
    }
    inputs.extend(args.fresh.iter().cloned());
    crate::check_export(args.export_markdown.as_ref(), &inputs, None)?;
    crate::check_export(args.export_json.as_ref(), &inputs, None)?;
    // A fresh B is run in a scratch folder of its own and dropped afterwards.
    let (scratch, staged);
    let b = match (&args.b, &args.fresh) {
        (Some(b), _) => b.clone(),
        (None, Some(config)) => {
            let source = Source::read(config)?;
            let sweep = source.changed(&changes)?;
            scratch = Scratch::new().map_err(Error::io("cannot make a scratch folder"))?;
            let (results, staging, _) = produce(&source, sweep, scratch.path(), &args.pace)?;
            if !results.complete() {
                say!("interrupted: nothing was compared");
                return Err(Failure::Interrupted);
            }
            staged = staging;
            staged.path().to_path_buf()
        }
        (None, None) => {
            return Err(Failure::Usage(
                "give a second folder B, or --fresh CONFIG".into(),
            ));
        }
    };
    let mut comparison = compare::folders(&args.a, &b)?;
    if let Some(config) = &args.fresh {
        let changes: Vec<String> = changes.iter().map(ToString::to_string).collect();
        comparison.b = format!(
            "a fresh run of {}",
            [vec![config.display().to_string()], changes]
                .concat()
                .join(" ")
        );
    }
    if let Some(path) = &args.export_markdown {
        output::user_path::write(path, comparison.markdown().as_bytes())
            .map_err(Error::io(format!("cannot write {}", path.display())))?;
    }
    if let Some(path) = &args.export_json {
        output::user_path::write(path, comparison.json().as_bytes())
            .map_err(Error::io(format!("cannot write {}", path.display())))?;
    }
    if !args.pace.quiet {
        print(&comparison.table())?;
    }
    let failed: Vec<String> = (args.fail_if.iter())
        .filter(|c| c.fails(&comparison))
        .map(|c| c.said(&comparison))
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    for line in failed {
        say!("{line}");
    }
    Err(Failure::Worse)
}
