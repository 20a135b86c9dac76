//! What the classroom page (`retrysim serve`) posts: `{"sets": ["PATH=VALUE", …]}`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::page_request(data));
