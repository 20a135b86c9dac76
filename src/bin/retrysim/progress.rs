//! Progress on stderr while a sweep runs: a bar on a terminal, plain lines (at most one a second,
//! and one per finished point) for logs and CI, or nothing. Wall-clock time appears here only,
//! never in an output file.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use retrysim::run::{Observer, PointResult};

use crate::terminal::say;
use retrysim::sweep::Point;

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// A bar when stderr is a terminal, plain lines otherwise.
    Auto,
    Bar,
    Plain,
    /// Nothing.
    None,
}

/// The progress display of one run.
pub enum Progress {
    Bar {
        bar: ProgressBar,
        points: usize,
    },
    Plain {
        started: Instant,
        last: Instant,
        points: usize,
        paths: Vec<String>,
    },
    Silent,
}

impl Progress {
    pub fn new(mode: Mode, jobs: u64, points: usize, paths: Vec<String>) -> Progress {
        let mode = match mode {
            Mode::Auto if std::io::stderr().is_terminal() => Mode::Bar,
            Mode::Auto => Mode::Plain,
            other => other,
        };
        match mode {
            Mode::Bar => {
                let style = ProgressStyle::with_template(
                    "{elapsed_precise} [{bar:40}] {pos}/{len} runs · {msg} · {eta} left",
                )
                .expect("the template is valid")
                .progress_chars("=> ");
                let bar = ProgressBar::with_draw_target(Some(jobs), ProgressDrawTarget::stderr())
                    .with_style(style);
                // A shard folds no points: its runs are all there is to count.
                bar.set_message(if points == 0 {
                    "one shard".to_string()
                } else {
                    format!("0/{points} points")
                });
                Progress::Bar { bar, points }
            }
            Mode::Plain => {
                let now = Instant::now();
                Progress::Plain {
                    started: now,
                    last: now,
                    points,
                    paths,
                }
            }
            Mode::Auto | Mode::None => Progress::Silent,
        }
    }

    /// `done` of `total` runs have finished.
    pub fn job(&mut self, done: u64, total: u64) {
        match self {
            Progress::Bar { bar, .. } => bar.set_position(done),
            Progress::Plain { started, last, .. } => {
                if last.elapsed() >= Duration::from_secs(1) && done < total {
                    *last = Instant::now();
                    say!(
                        "retrysim: {done}/{total} runs · {:.1} s",
                        started.elapsed().as_secs_f64()
                    );
                }
            }
            Progress::Silent => {}
        }
    }

    /// Point `index` finished, and every point before it.
    pub fn point(&mut self, index: usize, point: &Point) {
        match self {
            Progress::Bar { bar, points } => {
                bar.set_message(format!("{}/{points} points", index + 1));
            }
            Progress::Plain {
                started,
                points,
                paths,
                ..
            } => {
                let at: Vec<String> = paths
                    .iter()
                    .zip(&point.params)
                    .map(|(p, v)| format!("{p} = {v}"))
                    .collect();
                let at = if at.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", at.join(", "))
                };
                say!(
                    "retrysim: point {}/{points} done{at} · {:.1} s",
                    index + 1,
                    started.elapsed().as_secs_f64()
                );
            }
            Progress::Silent => {}
        }
    }

    /// The display of an exploration, whose schedules are counted as they are walked: a spinner
    /// with the count on a terminal, plain lines otherwise.
    pub fn schedules(mode: Mode) -> Progress {
        match Progress::new(mode, 0, 0, Vec::new()) {
            Progress::Bar { .. } => {
                let style = ProgressStyle::with_template(
                    "{elapsed_precise} {spinner} {pos} schedules walked",
                )
                .expect("the template is valid");
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                    .with_style(style);
                Progress::Bar { bar, points: 0 }
            }
            other => other,
        }
    }

    /// `walked` schedules have been walked since `started`.
    pub fn schedules_walked(&mut self, walked: u64, started: Instant) {
        match self {
            Progress::Bar { bar, .. } => bar.set_position(walked),
            Progress::Plain { last, .. } => {
                if last.elapsed() >= Duration::from_secs(1) {
                    *last = Instant::now();
                    say!(
                        "retrysim: {walked} schedules walked · {:.1} s",
                        started.elapsed().as_secs_f64()
                    );
                }
            }
            Progress::Silent => {}
        }
    }

    /// Clears the bar, so the table prints on a clean line.
    pub fn finish(&self) {
        if let Progress::Bar { bar, .. } = self {
            bar.finish_and_clear();
        }
    }
}

/// The display hears of jobs and points as the run folds them.
impl Observer for Progress {
    fn job_done(&mut self, done: u64, total: u64) {
        self.job(done, total);
    }

    fn point_done(
        &mut self,
        index: usize,
        point: &Point,
        _result: &PointResult,
    ) -> std::io::Result<()> {
        self.point(index, point);
        Ok(())
    }
}
