//! The whole compiler (parser, resolver, code generator) on any text: a
//! program or compile errors, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let _ = raya_engine::compiler::compile_source("fuzz.raya", src);
    }
});
