//! Configs: TOML text → raw types (serde, unknown keys refused) → a validated [`Sweep`] of
//! [`Experiment`](crate::Experiment)s, every error placed at its file, line, column and key path.

mod axes;
mod changes;
pub(crate) mod check;
mod error;
pub mod integers;
pub(crate) mod latency;
pub(crate) mod path;
pub(crate) mod policy;
pub(crate) mod preset;
pub(crate) mod raw;
pub(crate) mod resolve;
pub mod shipped;
pub(crate) mod validate;

pub use changes::Change;
pub use check::name_problem;
pub use error::ConfigError;
pub use resolve::resolved;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::sweep::Sweep;
use crate::time::Tick;

/// The default experiment, compiled into the binary so `retrysim run` needs no file.
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/closed-forms.toml");
/// The largest config file read: far more than any experiment needs, and small enough that a
/// wrong path (`/dev/zero`, a data file) is refused at once.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// How the default experiment is named in messages.
pub const DEFAULT_CONFIG_NAME: &str = "configs/closed-forms.toml (built in)";

/// The latency files a sweep's points have read, by the name the config gives them, shared by
/// every point of one sweep (and every thread making them).
#[derive(Clone, Default)]
pub struct Files(Arc<Mutex<BTreeMap<String, Arc<[Tick]>>>>);

impl Files {
    /// The samples of `name`, if a point has read it.
    pub(crate) fn get(&self, name: &str) -> Option<Arc<[Tick]>> {
        self.lock().get(name).cloned()
    }

    /// Keeps the samples read from `name` for the points after.
    pub(crate) fn keep(&self, name: &str, samples: Arc<[Tick]>) {
        self.lock().insert(name.to_string(), samples);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<[Tick]>>> {
        // A map of finished reads: a panic elsewhere leaves nothing half-written in it.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl std::fmt::Debug for Files {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Files({} read)", self.lock().len())
    }
}

/// Two sweeps' files are the same only if they are one cache.
impl PartialEq for Files {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Files {}

/// A config's text and the name it is known by in messages.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
    /// Where the config comes from, which says where the files it names are read.
    pub origin: Origin,
}

/// Where a config comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A file in this folder: the files it names (empirical latencies) are read from, and
    /// confined to, the folder.
    Folder(PathBuf),
    /// A point of a sweep whose config is in this folder: the files it names are read as from
    /// [`Origin::Folder`], once for the whole sweep, and every later point that names one is
    /// given what was read then — the same samples for every point, however many there are and
    /// whatever happens to the file meanwhile.
    Point(PathBuf, Files),
    /// A text that stands in no folder (the built-in config, a flag, a test): it can read no
    /// files.
    Text,
    /// A manifest's `[resolved]` table read back, to learn what ran (names, axes, windows,
    /// limits), never to run it. The files it names are not read (they may have moved since),
    /// so a percentile or maximum of an empirical latency reads 0; and the experiment's name is
    /// its output folder's, which for a changed run (`lost-reply+reply_loss=0.3`) is not a
    /// name a config may take.
    Manifest,
}

impl Origin {
    /// The folder files are read from, if any.
    pub fn folder(&self) -> Option<&Path> {
        match self {
            Origin::Folder(dir) | Origin::Point(dir, _) => Some(dir),
            Origin::Text | Origin::Manifest => None,
        }
    }
}

impl Source {
    /// Reads a config file. Its name is the path as given, tidied (`./configs/../configs/x.toml`
    /// is `configs/x.toml`, and an absolute path under the working folder is made relative), so
    /// the manifest records the same name however the path was typed.
    pub fn read(path: &Path) -> Result<Source, ConfigError> {
        let name = match tidy(path).display().to_string() {
            name if name.is_empty() => ".".to_string(),
            name => name,
        };
        let unreadable = |why: &str| ConfigError::unreadable(&name, why);
        let meta = std::fs::metadata(path).map_err(|e| unreadable(&e.to_string()))?;
        if !meta.is_file() {
            return Err(unreadable(
                "it is not a regular file (a config is a TOML text file)",
            ));
        }
        // Read one byte past the limit, so a file that grows while it is read is caught too.
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_CONFIG_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| unreadable(&e.to_string()))?;
        if bytes.len() as u64 > MAX_CONFIG_BYTES {
            return Err(unreadable(&format!(
                "it is larger than {} KiB, the most a config may be",
                MAX_CONFIG_BYTES / 1024
            )));
        }
        let text = String::from_utf8(bytes).map_err(|e| ConfigError::not_utf8(&name, &e))?;
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Ok(Source {
            name,
            text,
            origin: Origin::Folder(dir),
        })
    }

    /// A manifest's `[resolved]` table as a config, so it is read by the same reader that read
    /// the config: its files named but not read.
    pub fn resolved(name: &str, table: &toml::Table) -> Source {
        Source {
            name: name.to_string(),
            text: toml::to_string(table).expect("a TOML table serializes"),
            origin: Origin::Manifest,
        }
    }

    /// A config given as text rather than read from a file; `name` is what its errors and its
    /// manifest call it (`"mine.toml"`, `"the notebook's config"`).
    pub fn from_text(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
            origin: Origin::Text,
        }
    }

    /// The built-in default experiment, `configs/closed-forms.toml`.
    pub fn builtin() -> Source {
        Source {
            name: DEFAULT_CONFIG_NAME.into(),
            text: DEFAULT_CONFIG.into(),
            origin: Origin::Text,
        }
    }

    /// Parses and validates the config: every point of its sweep, or its one experiment.
    pub fn sweep(&self) -> Result<Sweep, ConfigError> {
        axes::sweep(self, parse(self)?)
    }

    /// The experiment, axes and mode of the config's sweep, its points not made: what a chart
    /// needs of a manifest's config, which ran, so its points were checked then.
    pub fn outline(
        &self,
    ) -> Result<(crate::experiment::Experiment, Vec<crate::sweep::Axis>, bool), ConfigError> {
        axes::outline(self, parse(self)?)
    }

    /// The sweep with the command line's changes made (see [`Change`]), named for them.
    pub fn changed(&self, changes: &[Change]) -> Result<Sweep, ConfigError> {
        changes::apply(self, changes)
    }
}

fn tidy(path: &Path) -> PathBuf {
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf());
    let mut out = PathBuf::new();
    for part in relative.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The config's TOML as raw types, for a reader of a table the sweep passes by (`[tune]`).
pub(crate) fn parse_raw(source: &Source) -> Result<raw::Config, ConfigError> {
    parse(source)
}

/// The config's TOML as raw types; unknown keys and wrong types are errors here.
fn parse(source: &Source) -> Result<raw::Config, ConfigError> {
    let de = toml::Deserializer::parse(&source.text)
        .map_err(|e| ConfigError::from_toml(source, "", &e))?;
    integers::in_range(source)?;
    serde_path_to_error::deserialize(de)
        .map_err(|e| ConfigError::from_toml(source, &e.path().to_string(), e.inner()))
}
