//! What the repository ships: its configs and the output folders they write. Tests read these
//! alone, never a listing of `out/`, which also holds whatever a user's own runs wrote there
//! (`--set` and `--scan` folders, interrupted runs).
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use retrysim::config::Source;

pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every shipped config: the built-in default, then the files (the default's file aside), in
/// name order.
pub fn configs() -> Vec<Source> {
    let mut paths: Vec<PathBuf> = ["configs", "configs/scenarios"]
        .iter()
        .flat_map(|dir| fs::read_dir(root().join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| !p.ends_with("configs/closed-forms.toml"))
        .collect();
    paths.sort();
    let mut sources = vec![Source::builtin()];
    sources.extend(paths.iter().map(|p| Source::read(p).unwrap()));
    sources
}

/// The committed output folder of every shipped config, in name order.
pub fn outputs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = configs()
        .iter()
        .map(|s| {
            let name = s.sweep().unwrap_or_else(|e| panic!("{e}")).base.name;
            root().join("out").join(name)
        })
        .collect();
    dirs.sort();
    dirs
}
