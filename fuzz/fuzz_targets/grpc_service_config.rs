//! A gRPC service config's JSON, as a policy's `preset.grpc` takes it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::grpc_service_config(data));
