//! The Raya engine: TypeScript syntax on a bytecode VM of its own, with
//! green threads on every core, embeddable in a Rust program.
//!
//! This page is the embedding guide. The engine's internals (compiler,
//! interpreter, scheduler) are public modules too; `design/ARCHITECTURE.md`
//! in the repository is their codemap, `design/embedding.md` explains
//! what follows in more depth.
//!
//! # A program, a value back
//!
//! A [`Vm`] holds host functions and options; it compiles and runs any
//! number of programs. [`Vm::execute`] runs one to its end and returns its
//! *completion value* (that of its last top-level expression statement);
//! [`Vm::eval`] compiles and runs a source string in one step.
//!
//! ```
//! use raya_engine::{HostValue, Vm};
//!
//! let vm = Vm::builder().workers(2).build();
//! let program = vm.compile_source("main.raya", "const xs = [1, 2, 3];\nxs.map((x) => x * 2);").unwrap();
//! assert_eq!(vm.execute(&program), Ok(HostValue::from(vec![2.into(), 4.into(), 6.into()])));
//! assert_eq!(vm.eval::<f64>("1 + 41"), Ok(42.0));
//! ```
//!
//! # State that lives, functions you call
//!
//! [`Vm::load`] runs a program's top level once and keeps it: its globals
//! and exports stay alive, and the host calls its exported functions
//! ([`Instance::call`], or [`Instance::call_async`], whose [`Call`] is a
//! `Future`), reads and writes its exports ([`Instance::get`],
//! [`Instance::set`]) and evaluates code inside it ([`Instance::eval`]).
//! An `Instance` is `Send + Sync` and cheap to clone. Every call is a
//! task: [`Instance::call`] runs it on the calling thread (no hand-off to
//! another thread; if it suspends, the VM's workers take it over), and
//! [`Instance::call_async`] on the workers; calls from many threads run in
//! parallel, so state they share is guarded as in any concurrent script.
//!
//! ```
//! use raya_engine::Vm;
//!
//! let vm = Vm::builder().build();
//! let program = vm.compile_source("counter.raya", r#"
//!     const lock = new Mutex();
//!     export let count = 0;
//!     export async function add(n: number): Task<number> {
//!       await lock.lock();
//!       try { count += n; return count; } finally { lock.unlock(); }
//!     }
//! "#).unwrap();
//! let counter = vm.load(&program).unwrap();
//! let threads: Vec<_> = (0..4).map(|_| {
//!     let counter = counter.clone();
//!     std::thread::spawn(move || counter.call::<f64>("add", (1,)).unwrap())
//! }).collect();
//! for t in threads { t.join().unwrap(); }
//! assert_eq!(counter.get::<f64>("count"), Ok(4.0));
//! counter.set("count", 10).unwrap();
//! assert_eq!(counter.eval::<f64>("(await add(5)) * 2"), Ok(30.0));
//! ```
//!
//! A function called often is resolved once: [`Instance::function`] gives
//! a [`Function`] handle (as `mlua::Function` is kept), `Send + Sync`,
//! whose calls skip the export's look-up. Typed arguments go straight
//! into the script function's registers and a typed result is read
//! straight from its value, with no [`HostValue`] in between.
//!
//! ```
//! use raya_engine::{HostError, Vm};
//!
//! let vm = Vm::builder().build();
//! let program = vm.compile_source("m.raya", r#"
//!     export function scale(x: number, unit: string): string { return `${x * 2} ${unit}`; }
//! "#).unwrap();
//! let scale = vm.load(&program).unwrap().function("scale").unwrap();
//! for i in 0..3 {
//!     assert_eq!(scale.call::<String>((i, "km")), Ok(format!("{} km", i * 2)));
//! }
//! // A result that does not fit the type asked for is an error, not a panic.
//! assert!(matches!(scale.call::<f64>((1, "km")), Err(HostError::Conversion(_))));
//! ```
//!
//! # Typed values across the boundary
//!
//! Values cross as owned [`HostValue`]s; [`FromValue`] and [`IntoValue`]
//! convert them to and from numbers, `bool`, strings, `Option`, `Vec`,
//! `HashMap`/`BTreeMap`, tuples and (feature `serde`) any
//! `Serialize`/`Deserialize` type through `embed::Serde`.
//! [`Vm::register_fn`] takes a typed closure; a wrong argument is a
//! `TypeError` in the script naming the function and the parameter.
//!
//! ```
//! use raya_engine::Vm;
//!
//! let vm = Vm::builder().build();
//! vm.register_fn("repeat", |s: String, n: Option<u32>| {
//!     if s.is_empty() { return Err("nothing to repeat"); }
//!     Ok(s.repeat(n.unwrap_or(2) as usize))
//! });
//! assert_eq!(vm.eval::<String>(r#"repeat("ab") + repeat("c", 3)"#), Ok("ababccc".into()));
//! let caught = vm.eval::<String>(r#"
//!     let m = "";
//!     try { repeat(42 as any); } catch (e) { m = (e as Error).name + ": " + (e as Error).message; }
//!     m;
//! "#);
//! assert_eq!(caught, Ok("TypeError: repeat: parameter 1 expected a string, got a number".into()));
//! ```
//!
//! # Host objects
//!
//! A [`UserData`] type is a Rust value scripts use as an object: methods,
//! read-only getters, passed back to the host by reference
//! (`Arc<T>` is [`FromValue`]). The script's object keeps the value alive;
//! once neither the script nor the host holds it, the collector frees it
//! and its `Drop` runs.
//!
//! ```
//! use raya_engine::{HostValue, UserData, UserMethods, Vm};
//! use std::sync::Mutex;
//!
//! struct Cart(Mutex<Vec<String>>);
//!
//! impl UserData for Cart {
//!     const NAME: &'static str = "Cart";
//!     fn register(m: &mut UserMethods<Self>) {
//!         m.method("add", |c: &Cart, item: String| {
//!             c.0.lock().unwrap().push(item);
//!             Ok::<_, String>(())
//!         });
//!         m.getter("size", |c: &Cart| c.0.lock().unwrap().len() as f64);
//!     }
//! }
//!
//! let vm = Vm::builder().build();
//! vm.register_fn("newCart", || Ok::<_, String>(HostValue::user_data(Cart(Mutex::new(Vec::new())))));
//! assert_eq!(vm.eval::<f64>(r#"const c = newCart(); c.add("tea"); c.add("milk"); c.size"#), Ok(2.0));
//! ```
//!
//! # Async host functions
//!
//! [`Vm::register_async`] takes a closure returning a future; the future
//! runs on the host's executor (a [`Spawner`] given to the builder: any
//! `Fn(BoxFuture)`, or with feature `tokio` `VmBuilder::tokio`), so the
//! host's reactor, timers and clients work inside it. The script awaits an
//! ordinary promise; cancelling the script's task drops the future.
//! ([`Vm::register_async_fn`] and [`ExternalPromise`] remain for hosts
//! that settle promises from their own threads.)
//!
//! ```
//! use raya_engine::{BoxFuture, Vm};
//!
//! let rt = tokio::runtime::Runtime::new().unwrap();
//! let handle = rt.handle().clone();
//! let vm = Vm::builder().spawner(move |f: BoxFuture| { handle.spawn(f); }).build();
//! vm.register_async("fetchUser", |id: u32| async move {
//!     tokio::time::sleep(std::time::Duration::from_millis(5)).await;
//!     Ok::<_, String>(format!("user {id}"))
//! });
//! assert_eq!(vm.eval::<Vec<String>>("await [fetchUser(1), fetchUser(2)]"), Ok(vec!["user 1".into(), "user 2".into()]));
//! ```
//!
//! # Control of a running script
//!
//! A call can be cancelled ([`Call::cancel`]): the script sees a
//! `TaskCancelledError` at its next suspension, or where it is next
//! preempted (within one time slice), so even `while (true) {}` stops. An
//! interrupt callback ([`VmBuilder::interrupt`]) is polled there too, and
//! [`Limits`] (time, instruction budget, tasks alive) apply to `execute`
//! and to each call, together with the tasks they spawn; the heap's limit
//! is [`VmBuilder::max_heap`].
//!
//! ```
//! use raya_engine::{HostError, Limits, Vm};
//! use std::time::Duration;
//!
//! let vm = Vm::builder().build();
//! let program = vm.compile_source("spin.raya", "export function spin(): void { while (true) {} }").unwrap();
//! let app = vm.load(&program).unwrap();
//! let call = app.call_async("spin", ());
//! std::thread::sleep(Duration::from_millis(20));
//! call.cancel();
//! assert_eq!(call.wait(), Err(HostError::Cancelled("cancelled by the host".into())));
//! let limited = app.call_with("spin", (), Limits::none().time(Duration::from_millis(20)));
//! assert_eq!(limited.wait(), Err(HostError::Cancelled("time limit of 20ms reached".into())));
//! ```
//!
//! # Errors as data
//!
//! An uncaught throw reaches the host as [`HostError::Uncaught`] with a
//! [`ScriptError`]: name, message, stack frames (function, file, line,
//! column) and the thrown value. The engine prints nothing on the
//! process's stderr unless asked to ([`VmBuilder::report_errors`]; the
//! `raya` command does).
//!
//! ```
//! use raya_engine::{HostError, Vm};
//!
//! let vm = Vm::builder().build();
//! let p = vm.compile_source("app.raya", "function check(n: number): void {\n  if (n < 0) throw new RangeError(\"negative\");\n}\ncheck(-1);").unwrap();
//! let Err(HostError::Uncaught(e)) = vm.execute(&p) else { panic!() };
//! assert_eq!((e.name.as_str(), e.message.as_str()), ("RangeError", "negative"));
//! assert_eq!((e.frames[0].function.as_str(), e.frames[0].line, e.frames[0].column), ("check", 2, 20));
//! ```
//!
//! # Output the host routes
//!
//! `console.log`/`console.error` and `stdout.write`/`stderr.write` go to
//! a sink given per VM ([`VmBuilder::output`]) or per instance
//! ([`LoadOptions::output`]), so a server can tag each script's lines; by
//! default they go to the process's streams.
//!
//! ```
//! use raya_engine::{LoadOptions, Stream, Vm};
//! use std::sync::{Arc, Mutex};
//!
//! let vm = Vm::builder().build();
//! let lines = Arc::new(Mutex::new(Vec::new()));
//! let sink = lines.clone();
//! let p = vm.compile_source("log.raya", "export function hi(who: string): void { console.log(\"hi\", who); }").unwrap();
//! let app = vm.load_with(&p, LoadOptions::default().output(move |s: Stream, text: &str| {
//!     sink.lock().unwrap().push(format!("[app {s:?}] {text}"));
//! })).unwrap();
//! app.call::<()>("hi", ("ann",)).unwrap();
//! assert_eq!(*lines.lock().unwrap(), vec!["[app Stdout] hi ann\n".to_string()]);
//! ```
//!
//! # Capabilities
//!
//! Built-in modules that reach the outside world (`std:fs`,
//! `std:process`, `std:net`, `std:http`) are importable only with the
//! capability the host grants ([`VmBuilder::allow`]); none by default.
//!
//! ```
//! use raya_engine::{Capability, Vm};
//!
//! let src = r#"import { exists } from "std:fs"; exists(".");"#;
//! let sandboxed = Vm::builder().build();
//! assert!(sandboxed.compile_source("a.raya", src).is_err());
//! let trusted = Vm::builder().allow(Capability::Fs).build();
//! assert_eq!(trusted.eval::<bool>(src), Ok(true));
//! ```
//!
//! Examples: `examples/embed.rs` (host functions, external promises,
//! capabilities) and `examples/tokio_jobs.rs` (a module called from 1,000
//! concurrent Tokio tasks with a per-call time-out).

// The engine's internals are documented for its developers, who read
// them with `--document-private-items`: links to private items are fine.
#![allow(rustdoc::private_intra_doc_links)]

pub mod builtins;
pub mod bytecode;
pub mod compiler;
pub mod driver;
pub mod embed;
pub mod io;
pub mod limits;
pub mod repl;
pub mod scheduler;
pub mod std;
pub mod sync;
pub mod syntax;
pub mod trace;
pub mod vm;
pub mod wtf8;

pub use compiler::{CompileError, Program};
pub use embed::{
    AsyncHostFunction, BoxFuture, Call, Canceller, Capabilities, Capability, ExecHandle, ExternalPromise, FromValue,
    Function, HostError, HostFunction, HostValue, Instance, IntoArgs, IntoValue, Limits, LoadOptions, OutputSink,
    ScriptError, Spawner, StackFrame, Stream, UserData, UserMethods, Vm, VmBuilder,
};

/// Unit tests run under an allocator that counts, per thread, the bytes
/// allocated and not yet freed: the real figure the heap's accounting is
/// checked against (see `vm::heap`'s tests).
#[cfg(test)]
pub(crate) mod test_alloc {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    struct Counting;

    thread_local! {
        static NET: Cell<isize> = const { Cell::new(0) };
    }

    fn add(n: isize) {
        // `try_with`: nothing is counted while the thread is torn down.
        let _ = NET.try_with(|c| c.set(c.get() + n));
    }

    // SAFETY: every call is forwarded to `System` unchanged.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, l: Layout) -> *mut u8 {
            let p = unsafe { System.alloc(l) };
            if !p.is_null() {
                add(l.size() as isize);
            }
            p
        }
        unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
            unsafe { System.dealloc(p, l) };
            add(-(l.size() as isize));
        }
        unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
            let p = unsafe { System.alloc_zeroed(l) };
            if !p.is_null() {
                add(l.size() as isize);
            }
            p
        }
        unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
            let q = unsafe { System.realloc(p, l, new) };
            if !q.is_null() {
                add(new as isize - l.size() as isize);
            }
            q
        }
    }

    #[global_allocator]
    static COUNTING: Counting = Counting;

    /// Bytes this thread allocated and has not freed, since it started.
    pub fn net_bytes() -> isize {
        NET.with(|c| c.get())
    }
}
