//! A data file a config names: latencies, token counts or recorded arrivals.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::samples_csv(data));
