//! The bytes of an HTTP request to `retrysim serve`: its head read, or refused, within bounds.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::http_request(data));
