//! What the embedding tests share. Each test crate uses part of it.
#![allow(dead_code)]

use raya_engine::{HostError, HostValue, Instance, Vm};
use std::sync::{Arc, Mutex};

/// Registers `report(v)`, which collects `v` into the returned list.
pub fn register_report(vm: &Vm) -> Arc<Mutex<Vec<HostValue>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    vm.register_raw_fn("report", move |args: &[HostValue]| {
        s.lock().unwrap().push(args.first().cloned().unwrap_or_default());
        Ok(HostValue::Undefined)
    });
    seen
}

/// Compiles `src` and runs it on `vm`.
pub fn run(vm: &Vm, src: &str) -> Result<HostValue, HostError> {
    let program = vm.compile_source("test.raya", src).map_err(HostError::Compile)?;
    vm.execute(&program)
}

/// Compiles `src` as `app.raya` and loads it as an instance on `vm`.
pub fn load(vm: &Vm, src: &str) -> Instance {
    let program = vm.compile_source("app.raya", src).expect("compiles");
    vm.load(&program).expect("loads")
}
