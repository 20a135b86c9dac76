//! The `retrysim` command line: parse arguments, call the library, map errors to exit codes
//! (0 done, 1 the run failed, 2 bad usage or a bad config).

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand};

use retrysim::config::{ConfigError, Source};
use retrysim::output::{self, Staging};
use retrysim::policy::{Attempts, KeyScope};
use retrysim::{report, run, theory};

#[derive(Parser)]
#[command(name = "retrysim", version, about, long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
/// Deterministic simulator of retries, backoff and idempotency keys for agent tool calls.
///
/// Without a command, runs an experiment as `retrysim run` does: the built-in default unless
/// a config is given.
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment: print its table and write out/<experiment>/.
    Run(RunArgs),
    /// Print the closed forms for given losses, without simulating.
    Theory(TheoryArgs),
}

#[derive(Args)]
struct RunArgs {
    /// The TOML config to run; without it, the built-in configs/default.toml.
    config: Option<PathBuf>,
    /// The folder to write <experiment>/ into.
    #[arg(long, default_value = "out")]
    out: PathBuf,
    /// Run with this seed instead of the config's.
    #[arg(long, value_parser = clap::value_parser!(u64).range(..=i64::MAX as u64))]
    seed: Option<u64>,
    /// Also write intents.csv, one row per intent.
    #[arg(long)]
    intents: bool,
    /// Print events processed, wall time and events per second to stderr.
    #[arg(long)]
    stats: bool,
    /// Print nothing but errors; the files are still written.
    #[arg(long)]
    quiet: bool,
}

#[derive(Args)]
struct TheoryArgs {
    /// a: probability that a request is lost before the server commits.
    #[arg(long, value_parser = probability)]
    request_loss: f64,
    /// b: probability that the server commits and the reply is lost.
    #[arg(long, value_parser = probability)]
    reply_loss: f64,
    /// Attempts allowed, counting the first; unlimited when absent.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_attempts: Option<u32>,
}

fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "`{s}` is not a probability: write a number from 0 to 1"
        )),
    }
}

/// Why a command failed, which decides the exit code.
enum Failure {
    /// The input was wrong: exit 2.
    Usage(String),
    /// The run could not finish, e.g. an unwritable folder: exit 1.
    Runtime(String),
}

impl From<ConfigError> for Failure {
    fn from(e: ConfigError) -> Self {
        Failure::Usage(e.to_string())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        None => run_command(cli.run),
        Some(Command::Run(args)) => run_command(args),
        Some(Command::Theory(args)) => theory_command(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Usage(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
        Err(Failure::Runtime(msg)) => {
            eprintln!("error: {msg}");
            ExitCode::from(1)
        }
    }
}

/// Prints to stdout; a closed pipe (`retrysim run | head`) is not an error.
fn print(text: &str) -> Result<(), Failure> {
    match io::stdout().lock().write_all(text.as_bytes()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure::Runtime(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

fn run_command(args: RunArgs) -> Result<(), Failure> {
    let source = match &args.config {
        Some(path) => Source::read(path)?,
        None => Source::builtin(),
    };
    let mut exp = source.experiment()?;
    if let Some(seed) = args.seed {
        exp.seed = seed;
    }
    exp.output.intents |= args.intents;

    let io_failure = |what: &str, e: io::Error| Failure::Runtime(format!("{what}: {e}"));
    let staging = Staging::new(&args.out, &exp.name)
        .map_err(|e| io_failure(&format!("cannot write under {}", args.out.display()), e))?;
    let started = Instant::now();
    let intents_dir = exp.output.intents.then(|| staging.path().to_path_buf());
    let results =
        run::run(exp, intents_dir.as_deref()).map_err(|e| io_failure("cannot write intents", e))?;
    let wall = started.elapsed();
    output::write(&results, &source, &staging)
        .map_err(|e| io_failure("cannot write the output", e))?;
    let dir = staging
        .commit()
        .map_err(|e| io_failure("cannot move the output into place", e))?;

    if args.stats {
        let events = results.events();
        let secs = wall.as_secs_f64();
        eprintln!(
            "events {events} · wall time {secs:.3} s · {:.2} M events/s",
            events as f64 / secs / 1e6
        );
    }
    if !args.quiet {
        print(&report::table(&results))?;
        print(&format!("\nwrote {}\n", dir.display()))?;
    }
    Ok(())
}

fn theory_command(args: &TheoryArgs) -> Result<(), Failure> {
    let (a, b) = (args.request_loss, args.reply_loss);
    let n = args
        .max_attempts
        .map_or(Attempts::Unlimited, Attempts::AtMost);
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
