//! The contract behind `out/`: every shipped config, rerun now, writes the committed output byte
//! for byte — CSV, manifest and charts. `.ci/run` checks the same through the binary.

#[path = "shipped/mod.rs"]
mod shipped;

use retrysim::compare;
use retrysim::produce;
use retrysim::run::Options;

use shipped::root;

#[test]
fn every_shipped_config_writes_its_committed_output() {
    let sources = shipped::configs();
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
