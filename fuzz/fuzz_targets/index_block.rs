#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shamba::lab::fuzz::index_block(data));
