//! `VmBuilder::trace`: an embedder records a trace of each run.

use raya_engine::Vm;

#[test]
fn a_vm_built_with_trace_writes_the_trace_of_its_run() {
    let path = std::env::temp_dir().join(format!("raya-trace-{}.json", std::process::id()));
    let vm = Vm::builder().workers(2).trace(&path).build();
    let program = vm
        .compile_source(
            "traced.raya",
            "async function twice(n: number): Task<number> {\n  sleep(1);\n  return n * 2;\n}\nconst r = await twice(21);\nif (r !== 42) throw new Error(`got ${r}`);\n",
        )
        .unwrap();
    vm.execute(&program).unwrap();
    let text = std::fs::read_to_string(&path).expect("the trace file");
    let _ = std::fs::remove_file(&path);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let events = v["traceEvents"].as_array().unwrap();
    let run_of = |name: &str, stop: &str| {
        events.iter().any(|e| e["ph"] == "X" && e["name"] == name && e["args"]["stop"] == stop)
    };
    assert!(run_of("task 2 twice", "suspended"), "it sleeps");
    assert!(run_of("task 2 twice", "completed"));
    assert!(run_of("task 1 <main>", "completed"));
    assert!(events.iter().any(|e| e["name"] == "timer fired" && e["args"]["task"] == 2));
}
