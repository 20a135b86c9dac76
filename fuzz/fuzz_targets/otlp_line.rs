//! An OTLP JSON export, a line per batch, as `retrysim calibrate` reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::otlp_line(data));
