//! The `retrysim` command line: parse arguments, call the library, map errors to exit codes
//! (0 done, 1 the run failed, `check` found a difference or `compare --fail-if` a worse figure, 2 bad usage or a bad config,
//! 130 interrupted by Ctrl-C). The progress display lives here too, with the crates only a
//! terminal needs (clap, indicatif): the library knows none of them.

mod args;
mod calibrate;
mod compare;
mod endpoint;
mod explore;
mod progress;
mod serve;
mod terminal;
mod trace;
mod tune;

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use clap::{CommandFactory, Parser};

use retrysim::chart;
use retrysim::config::{ConfigError, Source};
use retrysim::experiment::ChartFormat;
use retrysim::policy::{Attempts, KeyScope};
use retrysim::{Error, output, produce, report, reproduce, run, shard, suggest, theory};

use args::{CheckArgs, Cli, Command, Format, MergeArgs, Pace, PlotArgs, RunArgs, TheoryArgs};
use progress::Progress;
pub use terminal::out as print;
use terminal::say;

/// Set by Ctrl-C: no new run starts, finished points are kept.
pub static CANCEL: AtomicBool = AtomicBool::new(false);

/// How a command ended other than done.
pub enum Failure {
    /// What the library says failed.
    Error(Error),
    /// Arguments the library never sees were wrong (the theory command's).
    Usage(String),
    /// `check` found differences, already reported.
    Mismatch,
    /// `compare --fail-if` found a figure worse, or `tune` no candidate that meets its
    /// constraints; already reported.
    Worse,
    /// Ctrl-C stopped the run, already reported.
    Interrupted,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::Error(Error::Config(e))
    }
}

impl Failure {
    /// The exit code, decided here alone: 2 for input that cannot be used (a config, an
    /// output folder plot cannot read, a path in the way, bad arguments); 1 for a run that
    /// could not finish or a check that found a difference; 130 for Ctrl-C.
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Error(
                Error::Config(_)
                | Error::BadOutput(_)
                | Error::BadTrace(_)
                | Error::OutputInTheWay(..)
                | Error::NotInOutput(_),
            ) => 2,
            Failure::Usage(_) => 2,
            // A chart or a file that could not be written, or any kind of error the library
            // adds later (`Error` is non-exhaustive): a run that could not finish.
            Failure::Error(_) | Failure::Mismatch | Failure::Worse => 1,
            Failure::Interrupted => 130,
        }
    }
}

fn main() -> ExitCode {
    let outcome = arguments().and_then(|args| command(Cli::parse_from(args)));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            match &failure {
                Failure::Error(Error::Config(e)) => terminal::config_error(e),
                Failure::Error(e) => terminal::error(&e.to_string()),
                Failure::Usage(msg) => terminal::error(msg),
                Failure::Mismatch | Failure::Worse | Failure::Interrupted => {}
            }
            ExitCode::from(failure.exit_code())
        }
    }
}

/// The command line as clap is to read it. The flags the commands share (`-q`/`--quiet`,
/// `-j`/`--threads N`, `--progress MODE`) may come before the command's name, as cargo's and
/// ripgrep's may: they are moved after it. A first word that is neither a flag, a command nor a
/// file, with more words after it, and close to a command's name, is taken for that command
/// misspelt (`retrysim chek x.toml`).
fn arguments() -> Result<Vec<std::ffi::OsString>, Failure> {
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let names: Vec<String> = (Cli::command().get_subcommands())
        .map(|c| c.get_name().to_string())
        .collect();
    let word = |args: &[std::ffi::OsString], i: usize| {
        args.get(i).map(|a| a.to_string_lossy().into_owned())
    };
    let mut i = 1;
    while let Some(a) = word(&args, i) {
        let takes_value = matches!(a.as_str(), "-j" | "--threads" | "--progress");
        let shared = takes_value
            || matches!(a.as_str(), "-q" | "--quiet")
            || a.starts_with("--threads=")
            || a.starts_with("--progress=")
            || (a.starts_with("-j") && a[2..].bytes().all(|b| b.is_ascii_digit()));
        if !shared {
            break;
        }
        i += 1 + usize::from(takes_value);
    }
    if i > 1 && word(&args, i).is_some_and(|w| names.contains(&w)) {
        let command = args.remove(i);
        args.insert(1, command);
    }
    if let Some(first) = word(&args, 1).filter(|_| args.len() > 2) {
        let unknown = !first.starts_with('-') && !names.contains(&first);
        let guess = suggest::closest(&first, names.iter().map(String::as_str));
        if let (true, false, Some(command)) = (unknown, Path::new(&first).exists(), guess) {
            return Err(Failure::Usage(format!(
                "`{first}` is neither a command nor a config file; did you mean `retrysim \
                 {command}`?"
            )));
        }
    }
    Ok(args)
}

/// Runs the command the command line names.
fn command(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        None => run_command(cli.run),
        Some(Command::Run(args)) => run_command(args),
        Some(Command::Merge(args)) => merge_command(&args),
        Some(Command::Plot(args)) => plot_command(&args),
        Some(Command::Check(args)) => check_command(&args),
        Some(Command::Compare(args)) => compare::command(&args),
        Some(Command::Tune(args)) => tune::command(&args),
        Some(Command::Explore(args)) => explore::command(&args),
        Some(Command::Endpoint(args)) => endpoint::command(&args),
        Some(Command::Serve(args)) => serve::command(&args),
        Some(Command::Theory(args)) => theory_command(&args),
        Some(Command::Trace(args)) => trace::command(&args),
        Some(Command::Calibrate(args)) => calibrate::command(&args),
        Some(Command::Completions(args)) => completions(args.shell),
        Some(Command::Man) => manual(),
    }
}

/// Ctrl-C and SIGTERM ask the server to stop, however often they come: it stops within a
/// second, killing a run under way and removing its scratch folder, which ending the process
/// at once would leave behind.
pub fn catch_ctrl_c_to_stop() {
    let _ = ctrlc::set_handler(|| CANCEL.store(true, Ordering::SeqCst));
}

/// The first Ctrl-C stops new runs and keeps the finished points; a second one ends at once.
pub fn catch_ctrl_c() {
    let _ = ctrlc::set_handler(|| {
        if CANCEL.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
}

/// Runs `source` into a staging folder under `root`, with progress as `pace` asks.
pub fn produce(
    source: &Source,
    sweep: retrysim::sweep::Sweep,
    root: &Path,
    pace: &Pace,
) -> Result<(run::Results, output::Staging, f64), Failure> {
    catch_ctrl_c();
    let jobs = run::Jobs::new(&sweep).total();
    let mode = if pace.quiet {
        progress::Mode::None
    } else {
        pace.progress
    };
    let paths = sweep.paths().map(String::from).collect();
    let mut progress = Progress::new(mode, jobs, sweep.len(), paths);
    let options = run::Options {
        threads: pace.threads.map(usize::from),
        traces: None,
        cancel: Some(&CANCEL),
    };
    let started = Instant::now();
    let produced = produce::into_staging(source, sweep, root, &options, &mut progress);
    progress.finish();
    let (results, staging) = produced?;
    Ok((results, staging, started.elapsed().as_secs_f64()))
}

/// Refuses, before any work, an export to `path` that could not be written or would write over
/// one of `inputs`, the files the command reads.
pub fn check_export(
    path: Option<&PathBuf>,
    inputs: &[PathBuf],
    made: Option<&Path>,
) -> Result<(), Failure> {
    match path.map(|p| (p, output::user_path::check(p, inputs, made))) {
        Some((p, Err(e))) => Err(Failure::Usage(format!("cannot write {}: {e}", p.display()))),
        _ => Ok(()),
    }
}

/// Reads the config a run names; a missing one spelt like a command (`retrysim rn`) was
/// probably that command.
fn read_config(path: &Path) -> Result<Source, Failure> {
    let typed = path.to_string_lossy();
    if !path.exists() {
        let commands: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect();
        if let Some(command) = suggest::closest(&typed, commands.iter().map(String::as_str)) {
            return Err(Failure::Usage(format!(
                "`{typed}` is neither a config file nor a command; did you mean `retrysim \
                 {command}`?"
            )));
        }
    }
    Ok(Source::read(path)?)
}

fn run_command(args: RunArgs) -> Result<(), Failure> {
    let source = match &args.config {
        Some(path) => read_config(path)?,
        None => Source::builtin(),
    };
    if source.tune()?.is_some() {
        return Err(Failure::Usage(format!(
            "{} is for `retrysim tune`: its [tune] table searches its policy rather than running \
             it; tune it with `retrysim tune {}`, or run its recommended.toml",
            source.name, source.name
        )));
    }
    let changes = args.changes.list();
    let mut sweep = source.changed(&changes)?;
    sweep.trace(args.intents, args.attempts);
    if let Some(share) = args.shard {
        let request = shard::Request {
            source: &source,
            changes: &changes,
            intents: args.intents,
            attempts: args.attempts,
        };
        return shard_command(&request, &sweep, share, &args);
    }
    output::Staging::check_target(&args.out, &sweep.base.name, output::Mark::Output)?;
    // The run's own folder may hold the export: it is there once the run is.
    let made = args.out.join(&sweep.base.name);
    let config: Vec<PathBuf> = args.config.iter().cloned().collect();
    check_export(args.export_json.as_ref(), &config, Some(&made))?;
    let (results, staging, secs) = produce(&source, sweep, &args.out, &args.pace)?;
    if !results.complete() {
        let kept = staging.keep_interrupted()?;
        say!(
            "interrupted: {} of {} points finished; their rows are in {}; {} is unchanged",
            results.finished,
            results.sweep.len(),
            kept.display(),
            args.out.join(&results.sweep.base.name).display()
        );
        return Err(Failure::Interrupted);
    }
    let dir = staging.commit()?;
    if let Some(path) = &args.export_json {
        let text = output::json::summary(&dir)?;
        output::user_path::write(path, text.as_bytes())
            .map_err(Error::io(format!("cannot write {}", path.display())))?;
    }
    if args.stats {
        let events = results.events;
        say!(
            "events {events} · wall time {secs:.3} s · {:.2} M events/s{}",
            events as f64 / secs / 1e6,
            peak_memory().map_or(String::new(), |mb| format!(" · peak memory {mb:.1} MB"))
        );
    }
    if !args.pace.quiet {
        print(&report::table(&results))?;
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    Ok(())
}

/// The most memory the process has held (its peak resident set), in MB, where the system tells
/// (Linux's `/proc/self/status`).
fn peak_memory() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

/// Runs one shard of a sweep into its own folder, whole or not at all.
fn shard_command(
    request: &shard::Request,
    sweep: &retrysim::sweep::Sweep,
    share: run::Share,
    args: &RunArgs,
) -> Result<(), Failure> {
    catch_ctrl_c();
    let name = shard::folder_name(&sweep.base.name, share);
    output::Staging::check_target(&args.out, &name, output::Mark::Shard)?;
    let mode = if args.pace.quiet {
        progress::Mode::None
    } else {
        args.pace.progress
    };
    let total = share.len(run::Jobs::new(sweep).total());
    let mut progress = Progress::new(mode, total, 0, Vec::new());
    let options = run::Options {
        threads: args.pace.threads.map(usize::from),
        traces: None,
        cancel: Some(&CANCEL),
    };
    let started = Instant::now();
    let produced =
        produce::shard_into_staging(request, sweep, share, &args.out, &options, &mut progress);
    progress.finish();
    let shard = produced?;
    if shard.ran < shard.runs {
        say!(
            "interrupted: {} of {} runs of shard {}/{} finished; nothing was written",
            shard.ran,
            shard.runs,
            share.index,
            share.count
        );
        return Err(Failure::Interrupted);
    }
    let dir = shard.staging.commit()?;
    if args.stats {
        say!(
            "wall time {:.3} s{}",
            started.elapsed().as_secs_f64(),
            peak_memory().map_or(String::new(), |mb| format!(" · peak memory {mb:.1} MB"))
        );
    }
    if !args.pace.quiet {
        print(&format!(
            "wrote {} ({} of the sweep's runs)\n",
            dir.display(),
            shard.runs
        ))?;
    }
    Ok(())
}

fn merge_command(args: &MergeArgs) -> Result<(), Failure> {
    let (results, staging) = produce::merge_into_staging(&args.shards, &args.out, &mut ())?;
    let dir = staging.commit()?;
    if !args.quiet {
        print(&report::table(&results))?;
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    Ok(())
}

fn plot_command(args: &PlotArgs) -> Result<(), Failure> {
    let formats: Vec<ChartFormat> = args
        .format
        .iter()
        .map(|f| match f {
            Format::Svg => ChartFormat::Svg,
            Format::Png => ChartFormat::Png,
        })
        .collect();
    let formats = (!formats.is_empty()).then_some(formats.as_slice());
    let written = chart::draw_all(&args.out_dir, formats)?;
    let names: Vec<String> = written.iter().map(|p| p.display().to_string()).collect();
    print(&format!("{}\n", names.join("\n")))
}

fn check_command(args: &CheckArgs) -> Result<(), Failure> {
    let source = match &args.config {
        Some(path) => Source::read(path)?,
        None => Source::builtin(),
    };
    let tuning = source.tune()?;
    let sweep = source.changed(&args.changes.list())?;
    let reference = args
        .against
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&sweep.base.name));
    if !reference.is_dir() {
        say!("error: {}: no such output folder", reference.display());
        return Err(Failure::Mismatch);
    }
    // The fresh run is staged in a scratch folder of its own, so a read-only reference can be
    // checked, and dropped afterwards.
    let scratch = Scratch::new().map_err(Error::io("cannot make a scratch folder"))?;
    let staging = match tuning {
        Some(spec) => tune::produce(&source, spec, scratch.path(), &args.pace)?.1,
        None => {
            let (results, staging, _) = produce(&source, sweep, scratch.path(), &args.pace)?;
            if !results.complete() {
                say!("interrupted: nothing was compared");
                return Err(Failure::Interrupted);
            }
            staging
        }
    };
    let mut differences = reproduce::folders(&reference, staging.path())
        .map_err(Error::io("cannot compare the output"))?;
    // A committed exploration beside the run's folder is reproduced too.
    let explored =
        reference.with_file_name(retrysim::explore::folder_name(&source.sweep()?.base.name));
    if args.against.is_none() && explored.is_dir() {
        let quiet = Pace {
            threads: args.pace.threads,
            progress: progress::Mode::None,
            quiet: true,
        };
        let (_, fresh) =
            explore::produce(&source, &args.changes.list(), None, scratch.path(), &quiet)?;
        differences.extend(
            reproduce::folders(&explored, fresh.path())
                .map_err(Error::io("cannot compare the exploration"))?,
        );
    }
    if differences.is_empty() {
        if !args.pace.quiet {
            print(&format!(
                "{}: the same bytes as a fresh run of {}\n",
                reference.display(),
                source.name
            ))?;
        }
        return Ok(());
    }
    for d in &differences {
        say!("differs: {d}");
    }
    say!(
        "{} file(s) of {} differ from a fresh run of {}",
        differences.len(),
        reference.display(),
        source.name
    );
    Err(Failure::Mismatch)
}

/// A fresh folder of its own under the system's temporary folder, removed when dropped.
pub struct Scratch(tempfile::TempDir);

impl Scratch {
    pub fn new() -> io::Result<Scratch> {
        tempfile::Builder::new()
            .prefix("retrysim-scratch-")
            .tempdir()
            .map(Scratch)
    }

    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

/// The completion script for `shell`, generated from the command line's own definition.
fn completions(shell: clap_complete::Shell) -> Result<(), Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "retrysim", &mut script);
    print(&String::from_utf8_lossy(&script))
}

/// The manual page, generated from the command line's own definition: the command, then a
/// section per subcommand with its synopsis and every flag.
fn manual() -> Result<(), Failure> {
    let rendering = || Error::io("cannot render the manual page");
    let mut page = Vec::new();
    let cli = Cli::command();
    // The examples and exit codes close the page as sections of their own, not as clap's
    // after-help text.
    clap_mangen::Man::new(cli.clone().after_help(None::<&str>))
        .render(&mut page)
        .map_err(rendering())?;
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        page.extend(format!(".SH \"RETRYSIM {}\"\n", name.to_uppercase()).bytes());
        let about = sub.get_about().map(ToString::to_string).unwrap_or_default();
        page.extend(format!("{about}\n").bytes());
        let sub = sub.clone().bin_name(format!("retrysim {name}"));
        let man = clap_mangen::Man::new(sub);
        man.render_synopsis_section(&mut page)
            .map_err(rendering())?;
        man.render_options_section(&mut page).map_err(rendering())?;
    }
    for (title, text) in [
        ("EXAMPLES", args::EXAMPLES),
        ("EXIT STATUS", args::EXIT_STATUS),
    ] {
        page.extend(format!(".SH \"{title}\"\n.nf\n").bytes());
        // roff reads a backslash as an escape, and a line that starts with a dot as a request.
        page.extend(text.replace('\\', "\\e").bytes());
        page.extend(b"\n.fi\n");
    }
    print(&String::from_utf8_lossy(&page))
}

fn theory_command(args: &TheoryArgs) -> Result<(), Failure> {
    let (a, b) = (args.request_loss, args.reply_loss);
    let n = args.max_attempts;
    if n == Attempts::Unlimited && a + b >= 1.0 {
        return Err(Failure::Usage(format!(
            "with a + b = {} ≥ 1 no attempt succeeds, so unlimited attempts never end; give --max-attempts",
            a + b
        )));
    }
    if a + b > 1.0 {
        return Err(Failure::Usage(format!("a + b = {} is more than 1", a + b)));
    }
    let plain = theory::closed_forms(a, b, n, KeyScope::None);
    let keyed = theory::closed_forms(a, b, n, KeyScope::PerIntent);
    let text = format!(
        "a = {a} (request lost before the commit), b = {b} (commit, then reply lost), {n}\n\
         attempts per intent        {:.6}\n\
         success rate               {:.6}\n\
         effects per intent         {:.6}  (per-intent key: {:.6})\n\
         duplicates per intent      {:.6}  (per-intent key: 0)\n\
         ghost rate                 {:.6}  (client saw failure, an effect happened)\n",
        plain.attempts, plain.success, plain.effects, keyed.effects, plain.duplicates, plain.ghost,
    );
    print(&text)
}
