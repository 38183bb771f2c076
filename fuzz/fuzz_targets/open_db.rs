#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shamba::lab::fuzz::open_db(data));
