//! The experiments a server offers: every shipped config, compiled in and laid out with the
//! latency files it names in the server's own scratch folder, so each reads them as it would in
//! the repository, from whatever folder the server was started in; and the reader's own config,
//! if one was named, read where it lies.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use retrysim::Error;
use retrysim::config::shipped::{SHIPPED, SHIPPED_DATA};
use retrysim::config::{Origin, Source};
use toml::Table;

use super::controls::{Control, controls};

/// One experiment's page.
pub struct Experiment {
    /// Its address: `/x/<id>`, the config file's stem.
    pub id: String,
    /// The config as a reader would name it: `configs/duplicate-curve.toml`.
    pub source: Source,
    /// Where its text lies on disk, for a run of its own: the reader's file, or a shipped
    /// config's copy in the scratch folder.
    pub path: PathBuf,
    /// The most calls the config as written makes (see [`retrysim::Sweep::most_calls`]),
    /// counted at its first run.
    most_calls: OnceLock<u64>,
    /// The config's `name`, `description` and the comment it opens with.
    pub name: String,
    pub description: String,
    pub about: String,
    /// What the page lets the reader change.
    pub controls: Vec<Control>,
    /// The keys its sweep moves, which the page shows but does not offer.
    pub swept: Vec<String>,
    /// The charts its `[output]` lists, in the order it lists them.
    pub charts: Vec<String>,
    /// Whether it is the config named on the command line.
    pub own: bool,
}

/// Every experiment a server offers, the reader's own first.
pub struct Catalog {
    pub experiments: Vec<Experiment>,
}

impl Catalog {
    /// The shipped experiments, laid out under `scratch`, and `own` (read from disk; a config the
    /// reader cannot run is refused here, before the server starts). A shipped config with
    /// `[tune]` is left out: it names a search, which `retrysim tune` runs, not an experiment.
    pub fn new(own: Option<&Path>, scratch: &Path) -> Result<Catalog, Error> {
        for (path, text) in SHIPPED_DATA {
            let target = scratch.join(path);
            let writing = || Error::io(format!("cannot write {}", target.display()));
            std::fs::create_dir_all(target.parent().unwrap_or(scratch)).map_err(writing())?;
            std::fs::write(&target, text).map_err(writing())?;
        }
        let mut experiments = Vec::new();
        if let Some(path) = own {
            let source = Source::read(path)?;
            // The same checks `retrysim run` makes, so a bad config is refused at the start.
            source.sweep()?;
            if source.tune()?.is_some() {
                return Err(Error::Config(retrysim::config::ConfigError::unreadable(
                    &source.name,
                    "its [tune] table names a search, which `retrysim tune` runs; serve a config \
                     without one, such as its recommended.toml",
                )));
            }
            let at = std::path::absolute(path)
                .map_err(Error::io(format!("cannot find {}", path.display())))?;
            experiments.push(Experiment::new(stem(path), source, at, true));
        }
        for (path, text) in SHIPPED {
            let id = stem(Path::new(path));
            if experiments.iter().any(|e| e.id == id) {
                continue;
            }
            let folder = scratch.join(Path::new(path).parent().unwrap_or(Path::new("")));
            let at = scratch.join(path);
            std::fs::create_dir_all(&folder)
                .and_then(|()| std::fs::write(&at, text))
                .map_err(Error::io(format!("cannot write {}", at.display())))?;
            let source = Source {
                name: (*path).to_string(),
                text: (*text).to_string(),
                origin: Origin::Folder(folder),
            };
            if source.tune().ok().flatten().is_none() {
                experiments.push(Experiment::new(id, source, at, false));
            }
        }
        Ok(Catalog { experiments })
    }

    pub fn find(&self, id: &str) -> Option<&Experiment> {
        self.experiments.iter().find(|e| e.id == id)
    }
}

impl Experiment {
    /// The most calls the config as written makes: what a page's run of it may make.
    pub fn most_calls(&self) -> u64 {
        *self
            .most_calls
            .get_or_init(|| self.source.sweep().map_or(0, |s| s.most_calls()))
    }
}

impl Experiment {
    fn new(id: String, source: Source, path: PathBuf, own: bool) -> Experiment {
        let table: Table = source.text.parse().unwrap_or_default();
        let word = |key: &str| {
            table
                .get(key)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let controls = controls(&table);
        let swept = super::controls::swept_paths(&table);
        let charts = table
            .get("output")
            .and_then(|o| o.get("charts"))
            .and_then(|c| c.as_array())
            .map(|c| {
                c.iter()
                    .filter_map(|n| n.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        Experiment {
            id,
            name: word("name"),
            description: word("description"),
            about: opening_comment(&source.text),
            source,
            path,
            most_calls: OnceLock::new(),
            controls,
            swept,
            charts,
            own,
        }
    }
}

/// A config's file stem, its page's address.
fn stem(path: &Path) -> String {
    path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The comment a config opens with, its `# ` marks taken off: what the experiment shows.
fn opening_comment(text: &str) -> String {
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').strip_prefix(' ').unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offers_every_shipped_run_config_and_lays_out_their_files() {
        let scratch = tempfile::tempdir().unwrap();
        let catalog = Catalog::new(None, scratch.path()).unwrap();
        let tuned = SHIPPED
            .iter()
            .filter(|(_, t)| t.contains("\n[tune]"))
            .count();
        assert!(tuned >= 1);
        assert_eq!(catalog.experiments.len(), SHIPPED.len() - tuned);
        let timeout = catalog.find("timeout-percentile").unwrap();
        // The latency file it names reads from the scratch copy.
        assert!(timeout.source.sweep().is_ok());
        let curve = catalog.find("duplicate-curve").unwrap();
        assert!(curve.about.starts_with("The duplicate curve"));
        assert_eq!(curve.swept, ["tool.charge.reply_loss"]);
    }

    #[test]
    fn a_readers_config_comes_first_and_stands_in_for_a_shipped_one_of_its_name() {
        let scratch = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lost-reply.toml");
        std::fs::write(
            &path,
            "name = \"mine\"\n[workload]\ntasks = 10\n[[tool]]\nname = \"t\"\n[[policy]]\nname = \"p\"\n",
        )
        .unwrap();
        let catalog = Catalog::new(Some(&path), scratch.path()).unwrap();
        assert!(catalog.experiments[0].own);
        assert_eq!(catalog.experiments[0].name, "mine");
        assert_eq!(
            catalog
                .experiments
                .iter()
                .filter(|e| e.id == "lost-reply")
                .count(),
            1
        );
    }
}
