//! Configs: TOML text → raw types (serde, unknown keys refused) → a validated [`Experiment`],
//! every error placed at its file, line, column and key path.

mod error;
mod raw;
mod resolve;
mod validate;

pub use error::ConfigError;
pub use resolve::resolved;

use std::path::Path;

use crate::experiment::Experiment;

/// The default experiment, compiled into the binary so `retrysim run` needs no file.
pub const DEFAULT_CONFIG: &str = include_str!("../../configs/default.toml");
/// How the default experiment is named in messages.
pub const DEFAULT_CONFIG_NAME: &str = "configs/default.toml (built in)";

/// A config's text and the name it is known by in messages.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

impl Source {
    pub fn read(path: &Path) -> Result<Source, ConfigError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::unreadable(&name, &e.to_string()))?;
        Ok(Source { name, text })
    }

    pub fn builtin() -> Source {
        Source {
            name: DEFAULT_CONFIG_NAME.into(),
            text: DEFAULT_CONFIG.into(),
        }
    }

    /// Parses and validates the config.
    pub fn experiment(&self) -> Result<Experiment, ConfigError> {
        let de = toml::Deserializer::parse(&self.text)
            .map_err(|e| ConfigError::from_toml(self, "", &e))?;
        let raw: raw::Config = serde_path_to_error::deserialize(de)
            .map_err(|e| ConfigError::from_toml(self, &e.path().to_string(), e.inner()))?;
        validate::experiment(self, raw)
    }
}
