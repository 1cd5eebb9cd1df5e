#![no_main]
//! See `roce_dissect::fuzzing::tls_records`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    roce_dissect::fuzzing::tls_records(data);
});
