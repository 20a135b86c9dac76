//! The library's one error type. Each variant says what failed; the command line maps each to
//! its exit code in one place (`src/bin/retrysim/main.rs`).

use std::fmt;
use std::io;
use std::path::PathBuf;

use plotters::drawing::DrawingAreaErrorKind;

use crate::config::ConfigError;

#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A config that cannot be used: located in its file.
    Config(ConfigError),
    /// An output folder whose files are not what retrysim writes: the file, line and column.
    BadOutput(String),
    /// Where an output would go, something retrysim did not write is: not ours to replace.
    OutputInTheWay(PathBuf, InTheWay),
    /// A trace that cannot be read: the file, the line and, in JSON, the path.
    BadTrace(String),
    /// A chart that could not be drawn or written: the file, where one was being written.
    Chart(Option<PathBuf>, ChartError),
    /// What was asked of an output folder is not in it (a configuration, an intent, a trace):
    /// what is there instead.
    NotInOutput(String),
    /// A file or folder that could not be read or written, while `doing` what.
    Io { doing: String, source: io::Error },
}

/// What is in an output's way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InTheWay {
    /// Something other than a folder (a file, a link, a FIFO).
    NotAFolder,
    /// A folder without the named file that every folder of its kind retrysim writes holds.
    NotWritten(&'static str),
    /// Something other than a regular file (a folder, a FIFO, a device).
    NotAFile,
    /// A file retrysim did not write: it lacks the first line retrysim writes there.
    NotOurFile,
}

impl Error {
    /// Wraps an I/O error with what was being done when it happened.
    pub fn io(doing: impl fmt::Display) -> impl FnOnce(io::Error) -> Error {
        move |source| Error::Io {
            doing: doing.to_string(),
            source,
        }
    }
}

impl From<ConfigError> for Error {
    fn from(e: ConfigError) -> Self {
        Error::Config(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Config(e) => write!(f, "{e}"),
            Error::BadOutput(why) | Error::BadTrace(why) | Error::NotInOutput(why) => {
                f.write_str(why)
            }
            Error::Chart(Some(path), why) => write!(f, "{}: {why}", path.display()),
            Error::Chart(None, why) => write!(f, "{why}"),
            Error::OutputInTheWay(path, why) => {
                let what = match why {
                    InTheWay::NotAFolder => "exists and is not a folder".to_string(),
                    InTheWay::NotWritten(mark) => {
                        format!("is a folder retrysim did not write (it has no {mark})")
                    }
                    InTheWay::NotAFile => "exists and is not a regular file".to_string(),
                    InTheWay::NotOurFile => "is a file retrysim did not write".to_string(),
                };
                write!(
                    f,
                    "{} {what}; retrysim never replaces what it did not write: move it away \
                     or choose another --out",
                    path.display()
                )
            }
            Error::Io { doing, source } => write!(f, "{doing}: {source}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Config(e) => Some(e),
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Why a chart could not be drawn: one type the command and a library user can match on,
/// rather than a message string.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChartError {
    /// The drawing backend refused a shape or a text: its message.
    Draw(String),
    /// The output folder keeps nothing this chart draws: what is missing.
    Missing(&'static str),
    /// The traces a timeline draws could not be read into stories: why.
    Trace(String),
    /// The SVG could not be turned into a PNG: resvg's or the encoder's message.
    Raster(String),
    /// The chart file could not be put in place: why.
    Write(String),
}

impl<E: std::error::Error + Send + Sync> From<DrawingAreaErrorKind<E>> for ChartError {
    fn from(e: DrawingAreaErrorKind<E>) -> Self {
        ChartError::Draw(e.to_string())
    }
}

impl fmt::Display for ChartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChartError::Draw(why)
            | ChartError::Trace(why)
            | ChartError::Raster(why)
            | ChartError::Write(why) => f.write_str(why),
            ChartError::Missing(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for ChartError {}
