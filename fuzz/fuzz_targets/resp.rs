#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| shamba_server::fuzz::fuzz_request(data));
