//! The lexer and the parser on any text: they report errors, never panic
//! or overflow the stack.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        let _ = raya_engine::syntax::lexer::tokenize(src, 0);
        let _ = raya_engine::syntax::parser::parse(src, 0);
    }
});
