#![no_main]
//! See `roce_dissect::fuzzing::http_messages`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    roce_dissect::fuzzing::http_messages(data);
});
