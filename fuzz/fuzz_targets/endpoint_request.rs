//! What `retrysim endpoint` reads of a request beyond the HTTP library's parsing: the place an
//! operation is read from, an idempotency key, a JSON body.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::endpoint_request(data));
