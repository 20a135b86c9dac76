//! The command line's `--set`, `--scan` and `--seed`, a line each.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::set_scan(data));
