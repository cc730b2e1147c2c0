//! What start-up shares between VMs of one process — the compiled prelude
//! — and what it must not: each VM's built-ins and globals are its own.

use raya_engine::{HostValue, Vm};

mod common;
use common::load;

/// Two VMs loaded at once run the same compiled prelude; a built-in
/// the prelude defines (`JSON.stringify` wraps the native one there),
/// replaced in one, and a global set there, are not seen by the other.
#[test]
fn vms_sharing_the_prelude_keep_their_built_ins_and_globals_apart() {
    let src = "export let mark = \"start\";\nexport function show(xs: number[]): string { return JSON.stringify(xs.map((x) => x * 2)); }";
    let a_vm = Vm::builder().workers(1).build();
    let b_vm = Vm::builder().workers(1).build();
    let a = load(&a_vm, src);
    let b = load(&b_vm, src);
    a.eval::<HostValue>("(JSON as any).stringify = () => \"patched\";\nundefined").unwrap();
    a.set("mark", "changed").unwrap();
    assert_eq!(a.call::<String>("show", (vec![1.0, 2.0],)), Ok("patched".into()));
    assert_eq!(b.call::<String>("show", (vec![1.0, 2.0],)), Ok("[2,4]".into()));
    assert_eq!(b.eval::<String>("JSON.stringify({ k: [3].map((x) => x + 1) })"), Ok("{\"k\":[4]}".into()));
    assert_eq!(a.get::<String>("mark"), Ok("changed".into()));
    assert_eq!(b.get::<String>("mark"), Ok("start".into()));
    // A VM made after the change starts from the prelude as compiled.
    let c_vm = Vm::builder().workers(1).build();
    assert_eq!(c_vm.eval::<String>("JSON.stringify([1].map((x) => x * 10))"), Ok("[10]".into()));
}

/// Host functions sit after the prelude's own global slots: each VM binds
/// its own, whatever it registered, and the prelude still works in both.
#[test]
fn host_functions_and_the_shared_prelude_do_not_overlap() {
    let a_vm = Vm::builder().workers(1).build();
    a_vm.register_fn("tag", |s: String| Ok::<_, String>(format!("a:{s}")));
    let b_vm = Vm::builder().workers(1).build();
    b_vm.register_fn("first", |n: f64| Ok::<_, String>(n));
    b_vm.register_fn("tag", |s: String| Ok::<_, String>(format!("b:{s}")));
    let src = "export function run(): string { return [\"x\", \"y\"].map((s) => tag(s)).join(\",\"); }";
    let a = load(&a_vm, src);
    let b = load(&b_vm, src);
    assert_eq!(a.call::<String>("run", ()), Ok("a:x,a:y".into()));
    assert_eq!(b.call::<String>("run", ()), Ok("b:x,b:y".into()));
    assert_eq!(b.eval::<String>("tag(\"z\") + first(2)"), Ok("b:z2".into()));
}
