//! retrysim: a deterministic discrete-event simulator of the reliability layer an agent's tool
//! calls need — retries with backoff and jitter, and idempotency keys — measuring attempts,
//! duplicate side effects and success against their closed forms.
//!
//! Data flows one way, and so do the dependencies: a TOML config ([`config`]) is validated into
//! an [`Experiment`]; each (point, configuration, replication) is a job ([`sim`]) that drives
//! the workload ([`model`]) through a client [`policy`] on the [`engine`]; per-intent records
//! stream into running totals ([`metrics`]), folded in job order ([`run`]), set beside the
//! [`theory`] and written out ([`output`]); [`produce`] ties a run to its output folder and
//! draws the [`chart`]s from the files; [`report`] prints the tables. Errors are one type,
//! [`Error`].
//!
//! # Determinism
//!
//! Time is an integer tick ([`time::Tick`], one microsecond). Events at the same tick run first
//! in, first out (see [`engine`]). Random numbers come from ChaCha8 streams keyed by (seed,
//! replication, source, entity) ([`engine::rng`]), so every configuration of an experiment meets
//! the same faults for the same attempt. Jobs run in parallel but are folded in job order,
//! serially: the same config gives the same bytes whatever the thread count.
//!
//! # Two ways in
//!
//! From a config, as the command line does:
//!
//! ```
//! use retrysim::{Options, Source, jobs};
//!
//! let sweep = Source::builtin().sweep().unwrap();
//! let results = jobs(sweep, &Options::default(), &mut ()).unwrap();
//! assert_eq!(results.point(0).unwrap().policies.len(), 3);
//! ```
//!
//! To an output folder, as `retrysim run` writes one (the CSV files, the manifest and the
//! charts, staged and moved into place whole), from a config given as text; each
//! configuration's result is found by its name:
//!
//! ```
//! use retrysim::{Options, Source, into_staging};
//!
//! let config = r#"
//! name = "mine"
//! [workload]
//! tasks = 2000
//! [[tool]]
//! name = "charge"
//! reply_loss = 0.2
//! [[policy]]
//! name = "retry"
//! max_attempts = "unlimited"
//! "#;
//! let source = Source::from_text("mine.toml", config);
//! let out = tempfile::tempdir()?;
//! let (results, staging) = into_staging(&source, source.sweep()?, out.path(), &Options::default(), &mut ())?;
//! let folder = staging.commit()?;
//! assert!(folder.ends_with("mine") && folder.join("summary.csv").is_file());
//! let retry = results.point(0).unwrap().policy("retry").unwrap();
//! assert_eq!(retry.name, "retry");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Or in code: a tool and two policies built with their constructors, run, and a figure read
//! back — here the duplicate charges of retrying lost replies without a key, against the
//! closed form b/(1 − a − b) = 0.2/0.8, inside the run's 95 % interval at seed 0.
//!
//! ```
//! use retrysim::model::{FailureClass, Faults, Tool, ToolKind};
//! use retrysim::policy::{Attempts, KeyScope, Policy};
//! use retrysim::{Experiment, Measure, Options, Sweep, jobs};
//!
//! let mut faults = Faults::default();
//! faults.reply_loss = 0.2;
//! let charge = Tool::new("charge", ToolKind::Write).with_faults(faults);
//! let retry = Policy::new("retry").with_retry(Attempts::Unlimited, &FailureClass::TRANSIENT);
//! let keyed = retry.clone().with_key(KeyScope::PerIntent);
//! let exp = Experiment::new("lost-replies", vec![charge], vec![retry, keyed], 20_000)?;
//! let results = jobs(Sweep::single(exp), &Options::default(), &mut ())?;
//! let [retry, keyed] = &results.point(0).unwrap().policies[..] else { unreachable!() };
//! let dup = retry.estimate(Measure::Duplicates);
//! assert!((dup.mean - 0.25).abs() < dup.half_width, "{dup:?}");
//! assert_eq!(keyed.estimate(Measure::Duplicates).mean, 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// The library: what a user builds experiments from, runs, and reads.
pub mod config;
pub mod error;
pub mod experiment;
pub mod metrics;
pub mod model;
pub mod policy;
pub mod produce;
pub mod report;
pub mod run;
pub mod sweep;
pub mod theory;
pub mod time;
pub mod verdict;

// The engine's rooms: public only for the command and the tests, which are outside the crate;
// not API, so hidden from the docs and free to change.
#[doc(hidden)]
pub mod calibrate;
#[doc(hidden)]
pub mod chart;
#[doc(hidden)]
pub mod compare;
#[doc(hidden)]
pub mod endpoint;
#[doc(hidden)]
pub mod engine;
#[doc(hidden)]
pub mod explore;
#[doc(hidden)]
pub mod fuzzing;
#[doc(hidden)]
pub mod grpc;
#[doc(hidden)]
pub mod output;
#[doc(hidden)]
pub mod reproduce;
#[doc(hidden)]
pub mod request_head;
#[doc(hidden)]
pub mod shard;
#[doc(hidden)]
pub mod sim;
#[doc(hidden)]
pub mod story;
#[doc(hidden)]
pub mod suggest;
#[doc(hidden)]
pub mod tune;
#[doc(hidden)]
pub mod variate;

#[cfg(test)]
mod layering;

pub use config::preset::words;
pub use config::{ConfigError, Source};
pub use error::Error;
pub use experiment::Experiment;
pub use metrics::Measure;
pub use produce::into_staging;
pub use run::{Options, Results, jobs};
pub use sweep::Sweep;
