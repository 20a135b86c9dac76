//! The contract behind `out/`: every shipped config, rerun now, writes the committed output byte
//! for byte — CSV, manifest and charts. `.ci/run` checks the same through the binary.

use std::fs;
use std::path::{Path, PathBuf};

use retrysim::compare;
use retrysim::config::Source;
use retrysim::produce;
use retrysim::run::Options;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every shipped config: the built-in default, then the files (the default's file aside).
fn shipped() -> Vec<Source> {
    let mut paths: Vec<PathBuf> = ["configs", "configs/scenarios"]
        .iter()
        .flat_map(|dir| fs::read_dir(root().join(dir)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| !p.ends_with("configs/reliability-layer.toml"))
        .collect();
    paths.sort();
    let mut sources = vec![Source::builtin()];
    sources.extend(paths.iter().map(|p| Source::read(p).unwrap()));
    sources
}

#[test]
fn every_shipped_config_writes_its_committed_output() {
    let sources = shipped();
    assert!(sources.len() >= 16, "{} configs", sources.len());
    let scratch = tempfile::tempdir().unwrap();
    for source in sources {
        let sweep = source.sweep().unwrap_or_else(|e| panic!("{e}"));
        let reference = root().join("out").join(&sweep.base.name);
        let (results, staging) =
            produce::into_staging(&source, sweep, scratch.path(), &Options::default(), &mut ())
                .unwrap();
        assert!(results.complete());
        let differences = compare::folders(&reference, staging.path()).unwrap();
        assert!(
            differences.is_empty(),
            "{}:\n{}",
            source.name,
            differences
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}
