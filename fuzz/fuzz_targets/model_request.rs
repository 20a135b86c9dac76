//! A model request's body, OpenAI's or Anthropic's, as `retrysim endpoint` reads it.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| retrysim::fuzzing::model_request(data));
