//! `retrysim calibrate`: tools whose latencies and error rates are a real trace's.
//!
//! A trace is an OpenTelemetry export as the collector's file exporter writes it (one OTLP
//! JSON object per line; a file whose first character is `{`) or a CSV access log. It is read
//! a line at a time and folded per operation into counts, histograms and arrival bins, so
//! memory stays bounded however long the trace. The result is a config with a `[[tool]]` per
//! operation and the empirical latency files it names, written whole or not at all. Each
//! operation's failures are tested for bursts ([`burst`]); a bursty one's tool is written with
//! the burst process fitted to them instead of flat rates.

mod access_log;
pub mod burst;
pub mod claimed;
pub mod incident;
mod maximum;
pub mod observed;
mod otlp;
pub mod replay;
mod span;
pub(crate) mod write;

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use crate::error::{Error, InTheWay};
use crate::output::{CALIBRATION_MARK, Mark, Staging};
use crate::time::Tick;

pub use observed::{MAX_NAME, MAX_OPERATIONS, Observed};
pub use span::{Outcome, Span};

/// The longest line of an OTLP export read: a batch far larger than any exporter writes.
pub const MAX_LINE: usize = 64 << 20;
/// The longest row of an access log read: one call's fields, a few hundred bytes in practice.
pub const MAX_ROW: usize = 1 << 20;

/// What `calibrate` wrote, and what it read; for an incident, its replay held to the trace and
/// the file that holds every bin compared.
pub struct Calibration {
    pub config: PathBuf,
    pub observed: Observed,
    pub replay: Option<(replay::Held, PathBuf)>,
}

/// The file in an incident's data folder that holds its replay's bins against the trace.
pub const REPLAY_FILE: &str = "replay.csv";

/// What a calibration is asked for: the config's name, and whether the trace is an incident
/// to replay, with the policy its client is claimed to have had if not the one seen.
#[derive(Clone, Copy, Debug)]
pub struct Asked<'a> {
    pub name: &'a str,
    pub incident: bool,
    pub claimed: Option<&'a Path>,
}

/// Reads `trace` and writes `<out>/<name>.toml` with its latency files under
/// `<out>/data/<name>/`; as an `incident`, with the recorded arrivals and every tool's health
/// there too, which the config replays (see [`incident`]) under the claimed policy.
pub fn calibrate(trace: &Path, out: &Path, asked: Asked) -> Result<Calibration, Error> {
    let Asked {
        name,
        incident,
        claimed,
    } = asked;
    let shown = trace.display().to_string();
    // The claim's shape is checked before the trace is read, what it says with the config it
    // goes into, before anything is written.
    let claimed = claimed.map(claimed::read).transpose()?;
    let observed = read(trace, &shown)?;
    let clock = match incident {
        false => None,
        true if observed.sequence_cut => {
            return Err(Error::BadTrace(format!(
                "{shown}: more than {} calls, past what an incident keeps one by one: \
                 calibrate a shorter stretch of the trace",
                observed::MAX_SEQUENCE
            )));
        }
        true => incident::clock(&observed),
    };
    let written = write::config(&observed, &shown, name, (clock, claimed.as_ref()));
    let config = out.join(format!("{name}.toml"));
    refuse_foreign_config(&config)?;
    // The latency files go in whole first, then the config that names them.
    let staging = Staging::new(&out.join("data"), name, Mark::Calibration)?;
    let mark = staging.path().join(CALIBRATION_MARK);
    fs::write(
        &mark,
        "Written by `retrysim calibrate`, which replaces this folder when it runs again.\n",
    )
    .map_err(Error::io(format!("cannot write {}", mark.display())))?;
    for (file, text) in &written.files {
        let inside = file
            .strip_prefix(&format!("data/{name}/"))
            .expect("latency files lie in the config's data folder");
        let path = staging.path().join(inside);
        fs::write(&path, text).map_err(Error::io(format!("cannot write {}", path.display())))?;
    }
    if let Some(claim) = &claimed {
        check_claimed(claim, (&written.config, &config), staging.path())?;
    }
    let partial = partial_of(&config);
    fs::write(&partial, &written.config)
        .map_err(Error::io(format!("cannot write {}", partial.display())))?;
    let moved = staging.commit().and_then(|_| {
        fs::rename(&partial, &config)
            .map_err(Error::io(format!("cannot write {}", config.display())))
    });
    if moved.is_err() {
        let _ = fs::remove_file(&partial);
    }
    moved?;
    let replay = match clock {
        None => None,
        Some(clock) => {
            let policy = claimed.as_ref().map_or(replay::AS_OBSERVED, |c| &c.name);
            let held = replayed((&config, policy), &observed, clock)?;
            // Beside the files it was made from, in the folder calibrate owns: whole or not at all.
            let file = out.join("data").join(name).join(REPLAY_FILE);
            let staged = partial_of(&file);
            fs::write(&staged, held.csv())
                .and_then(|()| fs::rename(&staged, &file))
                .map_err(|e| {
                    let _ = fs::remove_file(&staged);
                    Error::io(format!("cannot write {}", file.display()))(e)
                })?;
            Some((held, file))
        }
    };
    Ok(Calibration {
        config,
        observed,
        replay,
    })
}

/// Where `file` is written before it is renamed into place: hidden beside it, named for this
/// process, so a reader never meets it half-written and a dead run's is told from a live one's.
fn partial_of(file: &Path) -> PathBuf {
    let name = file.file_name().unwrap_or_default().to_string_lossy();
    file.with_file_name(format!(".{name}.partial-{}", std::process::id()))
}

/// The config `text`, to be written at `config`, checked as a user's run will read it: its data
/// files read from the staging folder `staged`, where they wait, and an error in the claim's
/// lines placed in the claim's file.
fn check_claimed(
    claim: &claimed::Claimed,
    (text, config): (&str, &Path),
    staged: &Path,
) -> Result<(), Error> {
    let (Some(folder), Some(staged_name)) = (config.parent(), staged.file_name()) else {
        return Ok(());
    };
    let name = config.file_stem().unwrap_or_default().to_string_lossy();
    let text = text.replace(
        &format!("\"data/{name}/"),
        &format!("\"data/{}/", staged_name.to_string_lossy()),
    );
    let folder = match folder.as_os_str().is_empty() {
        true => Path::new("."),
        false => folder,
    };
    let source = crate::config::Source {
        name: config.display().to_string(),
        text,
        origin: crate::config::Origin::Folder(folder.to_path_buf()),
    };
    match source.sweep() {
        Ok(_) => Ok(()),
        Err(e) => {
            let at = source.text.find(claim.text.trim_end()).unwrap_or(0);
            Err(claim.placed(e, &source.text, at).into())
        }
    }
}

/// The incident config at `config`, read back as a user's run reads it, replayed under the
/// claimed policy and held to the busiest operation of the trace `observed`.
fn replayed(
    (config, claimed): (&Path, &str),
    observed: &Observed,
    clock: (i64, Tick),
) -> Result<replay::Held, Error> {
    let exp = crate::config::Source::read(config)?.sweep()?.base;
    let busiest = observed.busiest().expect("a trace with calls");
    let tool = exp.workload.calls[0];
    replay::hold(
        (&exp, claimed),
        (tool, &observed.operations[busiest]),
        clock,
    )
}

/// The first words of every config `calibrate` writes: a file at the config's path that does
/// not start with them is the user's, and is never replaced.
pub(crate) const CONFIG_MARK: &str = "# Calibrated by `retrysim calibrate ";

/// An error unless `config` is absent or a regular file `calibrate` wrote.
fn refuse_foreign_config(config: &Path) -> Result<(), Error> {
    let in_the_way = |why| Err(Error::OutputInTheWay(config.to_path_buf(), why));
    match fs::symlink_metadata(config) {
        Err(_) => Ok(()),
        Ok(meta) if !meta.is_file() => in_the_way(InTheWay::NotAFile),
        Ok(_) => {
            let mut start = [0; CONFIG_MARK.len()];
            let read = fs::File::open(config).and_then(|mut f| f.read_exact(&mut start));
            if read.is_ok() && start == CONFIG_MARK.as_bytes() {
                Ok(())
            } else {
                in_the_way(InTheWay::NotOurFile)
            }
        }
    }
}

/// Every span of the trace, folded; an error names the file, the line, and in JSON the path.
pub fn read(trace: &Path, shown: &str) -> Result<Observed, Error> {
    let meta = fs::metadata(trace).map_err(Error::io(format!("cannot read {shown}")))?;
    if !meta.is_file() {
        return Err(Error::BadTrace(format!(
            "{shown}: not a regular file (a trace is an OTLP JSON export or a CSV access log)"
        )));
    }
    let file = fs::File::open(trace).map_err(Error::io(format!("cannot read {shown}")))?;
    read_from(BufReader::new(file), shown)
}

/// Every span `reader` holds, folded, the trace named `shown` in errors: an OTLP export if its
/// first character is `{`, else an access log. Apart from [`read`] so the fuzz targets feed it
/// bytes, with no file.
pub(crate) fn read_from(mut reader: impl BufRead, shown: &str) -> Result<Observed, Error> {
    let first = reader
        .fill_buf()
        .map_err(Error::io(format!("cannot read {shown}")))?
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .copied();
    let mut observed = Observed::default();
    match first {
        None => return Err(Error::BadTrace(format!("{shown}: the trace is empty"))),
        Some(b'{') => read_otlp(reader, shown, &mut observed)?,
        Some(_) => read_access_log(reader, shown, &mut observed)?,
    }
    if observed.operations.is_empty() {
        return Err(Error::BadTrace(format!(
            "{shown}: no client calls (read past {} spans of other kinds)",
            observed.skipped
        )));
    }
    if observed
        .operations
        .values()
        .all(|o| o.arrivals.total() == 0)
    {
        return Err(Error::BadTrace(format!(
            "{shown}: every call resends an earlier one, so no arrival rate can be read"
        )));
    }
    observed.sort_calls();
    Ok(observed)
}

fn read_otlp(mut reader: impl BufRead, shown: &str, observed: &mut Observed) -> Result<(), Error> {
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        number += 1;
        let bad = |why: String| Error::BadTrace(format!("{shown}:{number}: {why}"));
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .map_err(Error::io(format!("cannot read {shown}")))?;
        if read == 0 {
            return Ok(());
        }
        if line.len() > MAX_LINE {
            return Err(bad(format!(
                "a line longer than {} MiB; an OTLP export writes one batch per line",
                MAX_LINE >> 20
            )));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let read = otlp::read_line(&line).map_err(bad)?;
        observed.skipped += read.skipped;
        for served in read.served {
            observed.served(served.call, served.completed);
        }
        for span in read.clients {
            observed.add(span).map_err(bad)?;
        }
    }
}

fn read_access_log(reader: impl Read, shown: &str, observed: &mut Observed) -> Result<(), Error> {
    let mut csv = csv::ReaderBuilder::new().from_reader(RowLimit {
        inner: reader,
        row: 0,
    });
    let header = csv
        .headers()
        .map_err(|e| Error::BadTrace(format!("{shown}:1: {e}")))?
        .clone();
    let columns = access_log::Columns::from_header(&header)
        .map_err(|why| Error::BadTrace(format!("{shown}:1: {why}")))?;
    let mut row = csv::StringRecord::new();
    loop {
        let more = match csv.read_record(&mut row) {
            Ok(more) => more,
            Err(e) => {
                let line = csv.position().line();
                return Err(Error::BadTrace(format!("{shown}:{line}: {e}")));
            }
        };
        if !more {
            return Ok(());
        }
        let line = row.position().map_or(0, |p| p.line());
        let bad = |why: String| Error::BadTrace(format!("{shown}:{line}: {why}"));
        let span = columns.span(&row).map_err(bad)?;
        observed.add(span).map_err(bad)?;
    }
}

/// A reader that fails once a row runs past [`MAX_ROW`] bytes without a line break, so the CSV
/// reader's buffers never grow past it, whatever the file holds.
struct RowLimit<R> {
    inner: R,
    /// Bytes since the last line break.
    row: usize,
}

impl<R: Read> Read for RowLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            self.row = if b == b'\n' { 0 } else { self.row + 1 };
            if self.row > MAX_ROW {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "a row longer than {} MiB; an access log has one call a line",
                        MAX_ROW >> 20
                    ),
                ));
            }
        }
        Ok(n)
    }
}
