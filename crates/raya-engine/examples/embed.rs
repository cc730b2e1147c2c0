//! Embedding Raya in a Rust program: a host function, an async host
//! function completed from a Rust thread, a built-in module the host
//! allows (`std:fs`), and a script that uses them.
//!
//! Run it with `cargo run -p raya-engine --example embed`.

use raya_engine::{Capability, ExternalPromise, HostError, HostValue, Vm};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The script: ordinary Raya; the host functions are plain globals.
const SCRIPT: &str = r#"
import { exists } from "std:fs";
const cities = ["Lisbon", "Oslo"];
// Both requests run at the same time, on host threads.
const reports = await [fetchWeather(cities[0]), fetchWeather(cities[1])];
for (const w of reports) {
  hostLog("weather in " + w.city + ": " + w.sky + ", " + w.temp);
}
try {
  await fetchWeather("Atlantis");
} catch (e) {
  hostLog("error: " + e.message);
}
console.log("average:", (reports[0].temp + reports[1].temp) / 2);
hostLog("working directory exists: " + exists("."));
"#;

/// Runs the script; returns the lines the script passed to `hostLog`.
pub fn run() -> Result<Vec<String>, HostError> {
    // Built-in modules that reach the outside world need a capability:
    // this VM lets scripts use files (`std:fs`) and nothing else, so a
    // script importing `std:process` or `std:net` does not compile
    // ("module `std:process` is not available: the host did not grant the
    // `process` capability"); nor does one naming `stdin`, `stdout` or
    // `stderr` (`Capability::Stdio`). `raya run` grants everything.
    let vm = Vm::builder().workers(2).allow(Capability::Fs).build();
    let lines = Arc::new(Mutex::new(Vec::new()));

    // A synchronous host function: runs on the worker, returns at once.
    let sink = lines.clone();
    // Typed: a call with anything but a string is a TypeError in the
    // script ("hostLog: parameter 1 expected a string, got a number").
    vm.register_fn("hostLog", move |line: String| {
        println!("[host] {line}");
        sink.lock().unwrap().push(line);
        Ok::<(), String>(())
    });

    // An async host function: the script gets a Promise at once; a Rust
    // thread settles it later, from outside the VM.
    vm.register_async_fn("fetchWeather", |args: Vec<HostValue>, promise: ExternalPromise| {
        let city = args.first().and_then(HostValue::as_str).unwrap_or("").to_string();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50)); // "network latency"
            let reply = match city.as_str() {
                "Lisbon" => Ok(("sunny", 21.0)),
                "Oslo" => Ok(("snow", -3.0)),
                other => Err(format!("unknown city {other}")),
            };
            let settled = match reply {
                Ok((sky, temp)) => promise.resolve(HostValue::Object(vec![
                    ("city".into(), HostValue::from(city.as_str())),
                    ("sky".into(), HostValue::from(sky)),
                    ("temp".into(), HostValue::Number(temp)),
                ])),
                Err(message) => promise.reject(message),
            };
            settled.expect("settled exactly once");
        });
    });

    let program = vm.compile_source("weather.raya", SCRIPT)?;
    vm.execute(&program)?;
    let lines = lines.lock().unwrap().clone();
    Ok(lines)
}

fn main() {
    match run() {
        Ok(lines) => println!("script finished ({} host log lines)", lines.len()),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
}
