//! The command line's arguments, as clap reads them.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use retrysim::config::Change;
use retrysim::policy::Attempts;

use crate::progress;

/// What `--help` and the manual page end with: examples, and what each exit code means.
pub const EXAMPLES: &str = "  retrysim                                   run the built-in experiment into out/closed-forms/
  retrysim run configs/duplicate-curve.toml -q
  retrysim run configs/lost-reply.toml --set tool.order.reply_loss=0.3
  retrysim run configs/closed-forms.toml --scan tool.charge.reply_loss=0:0.5:0.1 -j 2 -o runs
  retrysim compare out/compare-demo out/compare-demo-after --fail-if worse:any
  retrysim tune configs/tune-retry.toml
  retrysim explore configs/scenarios/exactly-one-order.toml --faults 2
  retrysim endpoint configs/endpoint-demo.toml --operation-from json:order_id
  retrysim serve";

pub const EXIT_STATUS: &str = "  0    done
  1    a run that could not finish (an unwritable folder), `check` found a difference,
       `compare --fail-if` held, or `tune` found no candidate that meets its constraints
  2    bad arguments, a bad config, something in the way of the output, or an output
       folder or trace that cannot be read: nothing is written
  130  interrupted by Ctrl-C or SIGTERM";

#[derive(Parser)]
#[command(name = "retrysim", version, about, long_about = None)]
#[command(args_conflicts_with_subcommands = true)]
#[command(after_help = format!("Examples:\n{EXAMPLES}\n\nExit status:\n{EXIT_STATUS}"))]
/// Deterministic simulator of retries, backoff and idempotency keys for agent tool calls.
///
/// Without a command, runs an experiment as `retrysim run` does: the built-in default unless
/// a config is given.
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run an experiment or a sweep: print its table and write out/<experiment>/.
    Run(RunArgs),
    /// Join the shard folders of a sweep run with `--shard I/N` into the output folder one
    /// unsharded run writes, byte for byte.
    Merge(MergeArgs),
    /// Redraw every chart of an output folder from its CSV files and manifest.
    Plot(PlotArgs),
    /// Rerun a config and compare every output file with the reference, byte for byte.
    Check(CheckArgs),
    /// Compare two runs figure by figure: B − A with its 95 % interval (paired by replication
    /// where both used the same seeds), and a verdict corrected over the table.
    Compare(CompareArgs),
    /// Search the policy a config's [tune] table names for the best objective under its
    /// constraints; write candidates.csv, a Pareto chart and recommended.toml to out/<name>/.
    Tune(TuneArgs),
    /// Walk every fault schedule with at most K faults, check each invariant, and write the
    /// minimal counterexamples: <out>/<name>.explore/.
    Explore(ExploreArgs),
    /// Serve the config's tools over real HTTP, each acting as configured (lost requests and
    /// replies, errors, 429s, latencies, idempotency keys), and count the commits a real
    /// client causes per operation: <out>/<name>.endpoint/ on stop.
    Endpoint(EndpointArgs),
    /// Serve a classroom page on this machine: every shipped experiment (and CONFIG, if named)
    /// with controls for its main keys, its charts and table redrawn from a fresh run at each
    /// change.
    Serve(ServeArgs),
    /// Print the closed forms for given losses, without simulating.
    Theory(TheoryArgs),
    /// Tell one intent's story (or one task's) from the per-attempt trace: a text timeline,
    /// swimlanes (SVG, PNG) or a Mermaid sequence diagram.
    Trace(TraceArgs),
    /// Write a config whose tools are a trace's operations: their latencies, error rates and
    /// arrival rate, from an OpenTelemetry export (OTLP JSON lines) or a CSV access log.
    Calibrate(CalibrateArgs),
    /// Print a shell's completion script for retrysim, to install where the shell reads them.
    Completions(CompletionsArgs),
    /// Print retrysim's manual page (roff), to install as retrysim.1.
    Man,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args)]
pub struct CalibrateArgs {
    /// The trace: OTLP JSON, one object per line (as the collector's file exporter writes
    /// it), or a CSV access log with timestamp, operation, duration and status columns.
    pub trace: PathBuf,
    /// The folder to write <name>.toml and data/<name>/ into.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// The experiment's name, and the config's.
    #[arg(long, default_value = "calibrated", value_parser = name)]
    pub name: String,
    /// Write the trace as an incident to replay: the busiest operation's first attempts as
    /// recorded arrivals, and every tool's health stretch by stretch, rather than a rate
    /// schedule and rates.
    #[arg(long)]
    pub incident: bool,
    /// With --incident: the policy the trace's client had, a TOML file of one [[policy]] (as
    /// a config writes it, a preset's included). It takes as-observed's place in the config,
    /// and the replay is held to the trace under it.
    #[arg(long, value_name = "POLICY_FILE", requires = "incident")]
    pub claimed: Option<PathBuf>,
}

/// A name retrysim accepts for an experiment.
fn name(text: &str) -> Result<String, String> {
    match retrysim::config::name_problem(text) {
        Some((why, allowed)) => Err(format!("{why}: {allowed}")),
        None => Ok(text.into()),
    }
}

#[derive(Args)]
pub struct RunArgs {
    /// The TOML config to run; without it, the built-in configs/closed-forms.toml.
    pub config: Option<PathBuf>,
    /// The folder to write <experiment>/ into.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub changes: Changes,
    /// Also write intents.csv, one row per intent.
    #[arg(long)]
    pub intents: bool,
    /// Also write attempts.csv, one row per attempt: the trace to draw a timeline from.
    #[arg(long)]
    pub attempts: bool,
    /// Also write summary.csv as one JSON document to FILE (schema in out/README.md).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Print events processed, wall time and events per second to stderr.
    #[arg(long)]
    pub stats: bool,
    /// Run only shard I of N (I from 0) of the sweep's jobs, into <out>/<experiment>.shard-I-of-N/;
    /// `retrysim merge` joins the N shards into the folder one run would write.
    #[arg(long, value_name = "I/N", value_parser = retrysim::shard::parse)]
    pub shard: Option<retrysim::run::Share>,
    #[command(flatten)]
    pub pace: Pace,
}

#[derive(Args)]
pub struct MergeArgs {
    /// The shard folders of one run, each once, in any order (such as
    /// out/duplicate-curve.shard-*-of-4).
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// The folder to write <experiment>/ into.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
    /// Print nothing but errors; the files are still written.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How a run uses the machine and reports progress.
#[derive(Args)]
pub struct Pace {
    /// Worker threads (default: one per core; at most four per core). The output is the same
    /// for any number.
    #[arg(long, short = 'j', value_parser = threads)]
    pub threads: Option<u16>,
    /// Progress on stderr: a bar on a terminal, plain lines otherwise (auto), or none.
    #[arg(long, value_enum, default_value_t = progress::Mode::Auto)]
    pub progress: progress::Mode,
    /// Print nothing but errors; the files are still written.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Args)]
pub struct PlotArgs {
    /// An output folder written by `retrysim run`, such as out/duplicate-curve.
    pub out_dir: PathBuf,
    /// Draw in these formats instead of the ones the config named.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub format: Vec<Format>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    Svg,
    Png,
}

#[derive(Args)]
pub struct CheckArgs {
    /// The config whose output is checked; without it, the built-in configs/closed-forms.toml.
    pub config: Option<PathBuf>,
    /// The reference folder (default: out/<experiment>, named for any changes).
    #[arg(long)]
    pub against: Option<PathBuf>,
    #[command(flatten)]
    pub changes: Changes,
    #[command(flatten)]
    pub pace: Pace,
}

#[derive(Args)]
pub struct CompareArgs {
    /// The baseline: an output folder written by `retrysim run`.
    pub a: PathBuf,
    /// The output folder compared with it (or --fresh CONFIG).
    #[arg(conflicts_with = "fresh")]
    pub b: Option<PathBuf>,
    /// Run this config afresh (in a scratch folder, removed afterwards) as B.
    #[arg(long, value_name = "CONFIG")]
    pub fresh: Option<PathBuf>,
    /// Changes to the fresh run's config.
    #[command(flatten)]
    pub changes: Settings,
    /// Also write the table as Markdown to FILE.
    #[arg(long, value_name = "FILE")]
    pub export_markdown: Option<PathBuf>,
    /// Also write the comparison as JSON to FILE (schema: docs/book/src/reference/commands.md).
    #[arg(long, value_name = "FILE")]
    pub export_json: Option<PathBuf>,
    /// Exit 1 if a figure got worse in any configuration: worse:FIGURE, such as
    /// worse:attempts_per_intent, or worse:any; or if a configuration is in one folder only:
    /// missing (repeatable).
    #[arg(long, value_name = "worse:FIGURE|missing", value_parser = crate::compare::fail_if)]
    pub fail_if: Vec<crate::compare::FailIf>,
    #[command(flatten)]
    pub pace: Pace,
}

#[derive(Args)]
pub struct ServeArgs {
    /// A config of your own to offer first, beside the shipped experiments (which are built in).
    pub config: Option<PathBuf>,
    /// The port to listen on; 0 takes any free one (the address is printed).
    #[arg(long, default_value_t = 8420)]
    pub port: u16,
    /// The address to listen on: this machine only, unless you name another.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Worker threads for each run (default: one per core).
    #[arg(long, short = 'j', value_parser = threads)]
    pub threads: Option<u16>,
}

#[derive(Args)]
pub struct EndpointArgs {
    /// The config whose tools to serve.
    pub config: PathBuf,
    /// The port to listen on; 0 takes any free one. The URL is the first line printed.
    #[arg(long, default_value_t = 8421)]
    pub port: u16,
    /// The address to listen on: this machine only, unless you name another.
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Config seconds per wall second: 10 runs a config's latencies and windows ten times as
    /// fast.
    #[arg(long, default_value_t = 1.0, value_parser = time_scale)]
    pub time_scale: f64,
    /// Stop after this long, wall time ("30s", "5m"); else at --requests or Ctrl-C.
    #[arg(long, value_parser = wall_duration)]
    pub duration: Option<std::time::Duration>,
    /// Stop after this many requests (at most 1 000 000, the most a run serves).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub requests: Option<u64>,
    /// Where a request's business operation is read, so commits are counted per operation:
    /// `key` (the Idempotency-Key header), `header:NAME`, or `json:FIELD` (a dotted path).
    #[arg(long, default_value = "key")]
    pub operation_from: retrysim::endpoint::OperationFrom,
    /// When it stops, simulate the config under this [[policy]] (the one your client has, such
    /// as a preset's) and hold each client's attempts, duplicates and success per operation to
    /// it, with a verdict.
    #[arg(long, value_name = "POLICY")]
    pub predict: Option<String>,
    /// The header that names a request's client, one row of endpoint.csv each.
    #[arg(long, default_value = "x-client", value_parser = header_name)]
    pub client_from: String,
    /// The folder to write <name>.endpoint/ into.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
}

fn time_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(x) if x.is_finite() && (0.001..=1000.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "\"{s}\" is not a time scale: a number from 0.001 to 1000"
        )),
    }
}

fn wall_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = retrysim::time::parse_duration(s).map_err(|e| e.to_string())?;
    Ok(std::time::Duration::from_micros(t.0))
}

fn header_name(s: &str) -> Result<String, String> {
    let name = s.strip_prefix("header:").unwrap_or(s);
    match !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        true => Ok(name.to_ascii_lowercase()),
        false => Err(format!("\"{s}\" is not a header's name, such as x-client")),
    }
}

#[derive(Args)]
pub struct TuneArgs {
    /// A config with a [tune] table.
    pub config: PathBuf,
    /// The folder to write <name>/ into.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub pace: Pace,
}

#[derive(Args)]
pub struct ExploreArgs {
    /// The config to explore. It has no default: exploring needs a workload of a few calls,
    /// and the built-in experiment's 10 000 tasks are far more (`--set workload.tasks=2`).
    pub config: PathBuf,
    /// The most faults a schedule has (default: the config's [explore] faults, else 2).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=8))]
    pub faults: Option<u8>,
    /// The folder to write <name>.explore/ into.
    #[arg(long, short, default_value = "out")]
    pub out: PathBuf,
    #[command(flatten)]
    pub changes: Settings,
    #[command(flatten)]
    pub pace: Pace,
}

#[derive(Args)]
pub struct TheoryArgs {
    /// a: probability that a request is lost before the server commits.
    #[arg(long, value_parser = probability)]
    pub request_loss: f64,
    /// b: probability that the server commits and the reply is lost.
    #[arg(long, value_parser = probability)]
    pub reply_loss: f64,
    /// Attempts allowed, counting the first: a whole number from 1, or `unlimited` (the
    /// default).
    #[arg(long, value_parser = attempts, default_value = "unlimited")]
    pub max_attempts: Attempts,
}

/// More workers than four per core only add switching, and a typo such as 65535 would start
/// that many threads.
pub const THREADS_PER_CORE: usize = 4;

pub fn threads(s: &str) -> Result<u16, String> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let most = cores * THREADS_PER_CORE;
    match s.parse::<usize>() {
        Ok(n) if (1..=most).contains(&n) => Ok(n as u16),
        _ => Err(format!(
            "`{s}` is not a thread count here: write a whole number from 1 to {most} \
             ({THREADS_PER_CORE} per core on this machine's {cores})"
        )),
    }
}

pub fn attempts(s: &str) -> Result<Attempts, String> {
    match s.trim() {
        "unlimited" => Ok(Attempts::Unlimited),
        n => match n.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(Attempts::AtMost(n)),
            _ => Err(format!(
                "`{s}` is not an attempt count: write a whole number from 1 to {}, or unlimited",
                u32::MAX
            )),
        },
    }
}

/// A seed, held to the integers a config holds, in the words a config's seed is.
pub fn seed(s: &str) -> Result<u64, String> {
    use retrysim::config::integers;
    match s.parse::<u64>() {
        Ok(n) if n <= integers::LARGEST => Ok(n),
        _ if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => Err(format!(
            "{}; allowed: {}",
            integers::outside(s),
            integers::ALLOWED
        )),
        _ => Err(format!(
            "`{s}` is not a seed: write a whole number from 0 to {}",
            integers::LARGEST
        )),
    }
}

pub fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!(
            "`{s}` is not a probability: write a number from 0 to 1"
        )),
    }
}

#[derive(Args)]
pub struct TraceArgs {
    /// An output folder that kept both traces, or a config (run afresh with its traces kept,
    /// in a scratch folder that is removed afterwards).
    pub target: PathBuf,
    /// The configuration whose story is told (default: the first).
    #[arg(long)]
    pub policy: Option<String>,
    /// The intent, numbered from 0.
    #[arg(long, default_value_t = 0, conflicts_with = "task")]
    pub intent: u64,
    /// A whole task instead: every call it made, a lane per tool.
    #[arg(long)]
    pub task: Option<u64>,
    /// The replication, numbered from 0.
    #[arg(long, default_value_t = 0)]
    pub replication: u64,
    /// text for the terminal, svg or png swimlanes, or a Mermaid sequence diagram.
    #[arg(long, value_enum, default_value_t = TraceFormat::Text)]
    pub format: TraceFormat,
    /// Changes to a config traced afresh (not to an output folder). A story is one run's, so
    /// there is no `--scan` here.
    #[command(flatten)]
    pub changes: Settings,
    /// Where to write it (default: stdout for text and mermaid; for svg and png,
    /// trace-<experiment>-<policy>-<intent or task>.<format> in the current folder).
    #[arg(long, short)]
    pub output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TraceFormat {
    Text,
    Svg,
    Png,
    Mermaid,
}

/// Changes to the config for this run only. A changed run is named for its changes
/// (out/<name>+reply_loss=0.3/), never over the output of the config as written.
#[derive(Args)]
pub struct Changes {
    #[command(flatten)]
    pub settings: Settings,
    /// Sweep one key: PATH=FROM:TO:STEP or PATH=A,B,C, for a config without a sweep.
    #[arg(long, value_name = "PATH=VALUES")]
    pub scan: Option<String>,
}

impl Changes {
    /// The changes in the order they apply: the seed, each --set, the scan.
    pub fn list(&self) -> Vec<Change> {
        let mut changes = self.settings.list();
        changes.extend(self.scan.clone().map(Change::Scan));
        changes
    }
}

/// The changes that keep a config one point: a seed and keys set.
#[derive(Args)]
pub struct Settings {
    /// Run with this seed instead of the config's.
    #[arg(long, value_parser = seed)]
    pub seed: Option<u64>,
    /// Set any config key: PATH=VALUE, such as tool.charge.reply_loss=0.3 (repeatable).
    #[arg(long, value_name = "PATH=VALUE")]
    pub set: Vec<String>,
}

impl Settings {
    /// The seed, then each --set, in the order they apply.
    pub fn list(&self) -> Vec<Change> {
        let seed = self.seed.map(Change::Seed);
        seed.into_iter()
            .chain(self.set.iter().cloned().map(Change::Set))
            .collect()
    }
}
