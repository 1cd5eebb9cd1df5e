#![no_main]
//! See `roce_dissect::fuzzing::read_compressed`.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    roce_dissect::fuzzing::read_compressed(data);
});
