//! A policy claimed for a trace's client, as `calibrate --claimed` reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::claimed_policy(data));
