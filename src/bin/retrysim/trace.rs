//! `retrysim trace`: one intent's story, or one task's, told from an output folder's traces —
//! or from a config, run afresh with its traces kept in a scratch folder.

use std::path::{Path, PathBuf};

use retrysim::config::Source;
use retrysim::experiment::ChartFormat;
use retrysim::output::user_path;
use retrysim::story::{self, Stories};
use retrysim::{Error, chart};

use crate::args::{Pace, TraceArgs, TraceFormat};
use crate::{Failure, Scratch, print, produce};

pub fn command(args: &TraceArgs) -> Result<(), Failure> {
    let scratch;
    let changes = args.changes.list();
    // The output is checked before any work: it may not write over what the story is read from.
    let inputs: Vec<PathBuf> = if args.target.is_dir() {
        let files = [
            "manifest.toml",
            "intents.csv",
            "attempts.csv",
            "summary.csv",
        ];
        files.iter().map(|f| args.target.join(f)).collect()
    } else {
        vec![args.target.clone()]
    };
    crate::check_export(args.output.as_ref(), &inputs, None)?;
    let dir = if args.target.is_dir() {
        if let Some(change) = changes.first() {
            return Err(Failure::Usage(format!(
                "{change} changes a config, and {} is an output folder: trace the config",
                args.target.display()
            )));
        }
        args.target.clone()
    } else {
        let source = Source::read(&args.target)?;
        let mut sweep = source.changed(&changes)?;
        if sweep.paths().next().is_some() {
            return Err(Failure::Usage(format!(
                "{} is a sweep: a story is told of one run; pin every swept key with --set",
                args.target.display()
            )));
        }
        sweep.trace(true, true);
        scratch = Scratch::new().map_err(Error::io("cannot make a scratch folder"))?;
        let quiet = Pace {
            threads: None,
            progress: crate::progress::Mode::None,
            quiet: true,
        };
        let (results, staging, _) = produce(&source, sweep, scratch.path(), &quiet)?;
        if !results.complete() {
            return Err(Failure::Interrupted);
        }
        staging.commit()?
    };
    let stories = Stories::read(&dir)?;
    let policy = match &args.policy {
        Some(p) => p.clone(),
        None => stories.marks[0].policy.clone(),
    };
    let story = stories.story(&policy, args.replication, Some(args.intent), args.task)?;
    let text = match args.format {
        TraceFormat::Text => story::text::render(&story),
        TraceFormat::Mermaid => story::mermaid::render(&story),
        TraceFormat::Svg | TraceFormat::Png => {
            let (format, ext) = if args.format == TraceFormat::Svg {
                (ChartFormat::Svg, "svg")
            } else {
                (ChartFormat::Png, "png")
            };
            let whose = match args.task {
                Some(t) => format!("task-{t}"),
                None => format!("intent-{}", args.intent),
            };
            let path = args.output.clone().unwrap_or_else(|| {
                PathBuf::from(format!(
                    "trace-{}-{policy}-{whose}.{ext}",
                    stories.experiment
                ))
            });
            let bytes = chart::draw_story(&story, format)?;
            write(&path, &bytes)?;
            return print(&format!("{}\n", path.display()));
        }
    };
    match &args.output {
        None => print(&text),
        Some(path) => write(path, text.as_bytes()),
    }
}

/// Writes a file the user named, as `output::user_path` does: whole, through a FIFO or device,
/// along a link, never over a folder.
fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    user_path::write(path, bytes)
        .map_err(|e| Error::io(format!("cannot write {}", path.display()))(e).into())
}
