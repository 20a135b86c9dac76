//! A tool's recorded health, as a config reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::health_csv(data));
