//! A shard folder's `shard.toml` or `runs.bin`, as `retrysim merge` reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::shard(data));
