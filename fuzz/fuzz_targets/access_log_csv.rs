//! A CSV access log, as `retrysim calibrate` reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::access_log_csv(data));
