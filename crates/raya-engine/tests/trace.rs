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
    // Task ids are counted per process (other tests run beside this one):
    // runs are found by their function.
    let run_of = |function: &str, stop: &str| {
        events.iter().find(|e| {
            e["ph"] == "X"
                && e["name"].as_str().unwrap().ends_with(&format!(" {function}"))
                && e["args"]["stop"] == stop
        })
    };
    let twice = run_of("twice", "suspended").expect("it sleeps");
    assert_eq!(twice["args"]["reason"], "sleep");
    assert!(run_of("twice", "completed").is_some());
    assert!(run_of("<main>", "completed").is_some());
    let id = &twice["args"]["task"];
    assert!(events.iter().any(|e| e["name"] == "timer fired" && e["args"]["task"] == *id));
}

/// A loaded program is traced too: its main module, the calls the host
/// makes (those run on the caller's thread, on a track of their own, and
/// those that suspend and go on on the workers) and its evals, written
/// when the instance is dropped.
#[test]
fn a_loaded_program_traces_its_calls_and_evals() {
    let path = std::env::temp_dir().join(format!("raya-trace-instance-{}.json", std::process::id()));
    let workers = 2;
    let vm = Vm::builder().workers(workers).trace(&path).build();
    let program = vm
        .compile_source(
            "app.raya",
            "export let counter = 0;\n\
             export function add(n: number): number {\n  counter += n;\n  return counter;\n}\n\
             export async function later(n: number): Task<number> {\n  sleep(1);\n  return n + 1;\n}\n",
        )
        .unwrap();
    let inst = vm.load(&program).unwrap();
    assert_eq!(inst.call::<f64>("add", (5.0,)), Ok(5.0));
    assert_eq!(inst.call::<f64>("later", (1.0,)), Ok(2.0));
    assert_eq!(inst.call_async("add", (2.0,)).wait(), Ok(raya_engine::HostValue::Number(7.0)));
    assert_eq!(inst.eval::<f64>("counter * 2"), Ok(14.0));
    assert!(!path.exists() || std::fs::read_to_string(&path).unwrap().is_empty(), "written at the end");
    drop(inst);
    let text = std::fs::read_to_string(&path).expect("the trace file, written when the instance is dropped");
    let _ = std::fs::remove_file(&path);
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let events = v["traceEvents"].as_array().unwrap();
    let runs = |function: &str| -> Vec<&serde_json::Value> {
        events
            .iter()
            .filter(|e| {
                e["ph"] == "X" && e["cat"] == "task" && e["name"].as_str().unwrap().ends_with(&format!(" {function}"))
            })
            .collect()
    };
    let host_track = (workers + 1) as u64;
    assert!(
        events
            .iter()
            .any(|e| e["name"] == "thread_name" && e["tid"] == host_track && e["args"]["name"] == "host thread 0"),
        "the calling thread has a track"
    );
    assert!(runs("<main>").iter().any(|e| e["args"]["stop"] == "completed"), "the main module's run");
    // `add` ran twice: once here (on this thread's track), once by
    // `call_async` on a worker.
    let add = runs("add");
    assert_eq!(add.len(), 2, "{add:?}");
    assert!(add.iter().all(|e| e["args"]["stop"] == "completed"));
    assert!(add.iter().any(|e| e["tid"] == host_track));
    assert!(add.iter().any(|e| e["tid"].as_u64().unwrap() <= workers as u64));
    // `later` suspended here and ended on a worker after its timer.
    let later = runs("later");
    assert!(later
        .iter()
        .any(|e| e["tid"] == host_track && e["args"]["stop"] == "suspended" && e["args"]["reason"] == "sleep"));
    assert!(later.iter().any(|e| e["tid"].as_u64().unwrap() <= workers as u64 && e["args"]["stop"] == "completed"));
    // Every call's task is a spawn by the host (task 0), named.
    let spawned: Vec<&str> = events
        .iter()
        .filter(|e| e["name"] == "spawn" && e["args"]["task"] == 0)
        .map(|e| e["args"]["function"].as_str().unwrap())
        .collect();
    assert_eq!(spawned.iter().filter(|f| **f == "add").count(), 2, "{spawned:?}");
    assert_eq!(spawned.iter().filter(|f| **f == "later").count(), 1, "{spawned:?}");
    assert_eq!(spawned.len(), 4, "the calls and the eval: {spawned:?}");
    let eval = runs("<eval 1>");
    assert!(eval.iter().any(|e| e["args"]["stop"] == "completed"), "the eval's run, named by its file: {spawned:?}");
}
