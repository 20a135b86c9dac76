//! Config text through parse, validation, theory and a tiny run.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::config(data));
