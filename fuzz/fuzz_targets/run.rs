//! Compile and run any text that compiles, under a small heap limit, a
//! step budget and a time limit: the VM ends every program with a value,
//! an error or a limit, never a panic or an abort.
#![no_main]
use libfuzzer_sys::fuzz_target;
use raya_engine::Vm;
use std::sync::OnceLock;
use std::time::Duration;

fn vm() -> &'static Vm {
    static VM: OnceLock<Vm> = OnceLock::new();
    VM.get_or_init(|| {
        Vm::builder()
            .workers(1)
            .max_heap(32 << 20)
            .step_limit(2_000_000)
            .time_limit(Duration::from_secs(2))
            .max_tasks(200)
            .build()
    })
}

fuzz_target!(|data: &[u8]| {
    if let Ok(src) = std::str::from_utf8(data) {
        if let Ok(program) = vm().compile_source("fuzz.raya", src) {
            let _ = vm().execute(&program);
        }
    }
});
