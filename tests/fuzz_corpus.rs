//! CI replays the fuzz corpora, and each finding kept as a regression, through every entry
//! point in `retrysim::fuzzing`: no input there may panic. The campaign itself runs under
//! cargo-fuzz (see the README); this test is its stable-Rust floor, and runs in seconds.

use std::fs;
use std::path::{Path, PathBuf};

/// A fuzz target's entry point: any bytes, and no panic.
type Target = fn(&[u8]);

/// Every fuzz target, by its name in `fuzz/Cargo.toml`, and its entry point.
const TARGETS: [(&str, Target); 13] = [
    ("config", retrysim::fuzzing::config),
    (
        "grpc_service_config",
        retrysim::fuzzing::grpc_service_config,
    ),
    ("otlp_line", retrysim::fuzzing::otlp_line),
    ("access_log_csv", retrysim::fuzzing::access_log_csv),
    ("shard", retrysim::fuzzing::shard),
    ("set_scan", retrysim::fuzzing::set_scan),
    ("page_request", retrysim::fuzzing::page_request),
    ("http_request", retrysim::fuzzing::http_request),
    ("endpoint_request", retrysim::fuzzing::endpoint_request),
    ("model_request", retrysim::fuzzing::model_request),
    ("samples_csv", retrysim::fuzzing::samples_csv),
    ("health_csv", retrysim::fuzzing::health_csv),
    ("claimed_policy", retrysim::fuzzing::claimed_policy),
];

/// The files of `dir`, sorted, so a failure names the same input every run; none if it is
/// absent.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_input_and_kept_finding_passes_through_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for (name, target) in TARGETS {
        let corpus = inputs(&fuzz.join("corpus").join(name));
        assert!(
            !corpus.is_empty(),
            "fuzz/corpus/{name}/ holds no input: the target has no seeds"
        );
        let regressions = inputs(&fuzz.join("regressions").join(name));
        for file in corpus.iter().chain(&regressions) {
            let bytes = fs::read(file).unwrap();
            let run = std::panic::catch_unwind(|| target(&bytes));
            assert!(run.is_ok(), "{name}: {} panics", file.display());
        }
    }
}
