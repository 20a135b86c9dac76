//! The library's one error type. Each variant says what failed; the command line maps each to
//! its exit code in one place (`src/bin/retrysim/main.rs`).

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::config::ConfigError;

#[derive(Debug)]
pub enum Error {
    /// A config that cannot be used: located in its file.
    Config(ConfigError),
    /// An output folder whose files are not what retrysim writes: the file, line and column.
    BadOutput(String),
    /// Where an output folder would go, something else is: it is not retrysim's to replace.
    OutputInTheWay(PathBuf),
    /// A trace that cannot be read: the file, the line and, in JSON, the path.
    BadTrace(String),
    /// A chart that could not be drawn or written.
    Chart(String),
    /// What was asked of an output folder is not in it (a configuration, an intent, a trace):
    /// what is there instead.
    NotInOutput(String),
    /// A file or folder that could not be read or written, while `doing` what.
    Io { doing: String, source: io::Error },
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
            Error::BadOutput(why)
            | Error::BadTrace(why)
            | Error::Chart(why)
            | Error::NotInOutput(why) => f.write_str(why),
            Error::OutputInTheWay(path) => write!(
                f,
                "{} exists and is not an output folder; move it away or choose another --out",
                path.display()
            ),
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
