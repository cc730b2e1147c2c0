//! Everything one running program owns: its heap, realm, globals, sources
//! (for stack traces), script arguments and output streams.

use super::atom::names;
use super::heap::Heap;
use super::link::{link, RtProto};
use super::object::{Body, Closure, Function, Mut, ObjectData, PropMap};
use super::ops::{self, Fault};
use super::realm::Realm;
use super::task::Task;
use super::value::Value;
use crate::bytecode::FuncProto;
use crate::syntax::diagnostic::SourceMap;
use std::io::Write;
use std::sync::Arc;

pub struct Runtime {
    pub heap: Heap,
    pub realm: Realm,
    pub globals: Vec<Value>,
    pub sources: Arc<SourceMap>,
    /// Constants of every linked prototype (GC roots).
    pub const_roots: Vec<Value>,
    /// `args`: the script's arguments after its file name.
    pub script_args: Vec<String>,
    /// Set by `exit(code)`: the program ends as soon as the running task
    /// returns to the interpreter loop.
    pub exit_code: Option<i32>,
    /// Buffered standard output (flushed before anything goes to stderr
    /// and at exit).
    pub stdout: Vec<u8>,
    /// When set, stderr output is collected here instead of written.
    pub captured_stderr: Option<Vec<u8>>,
    /// When set, stdout is never written to the process's stdout; the
    /// embedder reads `stdout`.
    pub capture_stdout: bool,
    /// Set by a blocking built-in that could not complete: the interpreter
    /// suspends the running task with this reason.
    pub suspend: Option<crate::sync::Wait>,
    /// Tasks created during the current slice (the worker queues them).
    pub spawned: Vec<std::sync::Arc<crate::sync::TaskCell>>,
    /// Tasks claimed and made runnable during the current slice (the worker
    /// hands the first to its next slot).
    pub woken: Vec<std::sync::Arc<crate::sync::TaskCell>>,
    /// Every unfinished task's object, by id: GC roots, and the list the
    /// deadlock and never-finished reports walk.
    pub live_tasks: std::collections::HashMap<u32, Value>,
    /// Failed tasks whose error nobody observed yet, in failure order.
    pub failed_tasks: Vec<Value>,
}

impl Runtime {
    /// Creates a runtime for a compiled program (its entry function, its
    /// sources and its number of global slots) and links the entry
    /// function; returns the runtime and the entry closure (the main
    /// task's body).
    pub fn new(
        entry: &Arc<FuncProto>,
        sources: &SourceMap,
        num_globals: usize,
        script_args: Vec<String>,
    ) -> (Runtime, Value) {
        let mut heap = Heap::new();
        let realm = crate::builtins::install(&mut heap);
        let mut globals = realm.globals.clone();
        globals.resize(num_globals.max(globals.len()), Value::UNDEFINED);
        let mut const_roots = Vec::new();
        let entry = link(entry, &mut heap, &mut const_roots);
        let closure = make_closure(&mut heap, entry, Box::new([]));
        let rt = Runtime {
            heap,
            realm,
            globals,
            sources: Arc::new(sources.clone()),
            const_roots,
            script_args,
            exit_code: None,
            stdout: Vec::with_capacity(8192),
            captured_stderr: None,
            capture_stdout: false,
            suspend: None,
            spawned: Vec::new(),
            woken: Vec::new(),
            live_tasks: Default::default(),
            failed_tasks: Vec::new(),
        };
        (rt, closure)
    }

    pub fn write_stdout(&mut self, s: &str) {
        self.stdout.extend_from_slice(s.as_bytes());
        if self.stdout.len() > 1 << 16 && !self.capture_stdout {
            self.flush_stdout();
        }
    }

    pub fn flush_stdout(&mut self) {
        if self.capture_stdout {
            return;
        }
        let mut out = std::io::stdout().lock();
        // A closed stdout (e.g. `| head`) must not crash the VM.
        let _ = out.write_all(&self.stdout);
        let _ = out.flush();
        self.stdout.clear();
    }

    pub fn write_stderr(&mut self, s: &str) {
        if let Some(buf) = &mut self.captured_stderr {
            buf.extend_from_slice(s.as_bytes());
            return;
        }
        self.flush_stdout();
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes());
        let _ = err.flush();
    }

    /// Runs a full collection with the given task(s) as roots.
    pub fn collect_garbage<'t>(&mut self, tasks: impl IntoIterator<Item = &'t Task>) {
        let Runtime { heap, realm, globals, const_roots, live_tasks, failed_tasks, .. } = self;
        heap.collect(|m| {
            m.mark_all(globals);
            m.mark_all(const_roots);
            for &t in live_tasks.values() {
                m.mark(t);
            }
            m.mark_all(failed_tasks);
            realm.mark_roots(m);
            for t in tasks {
                for v in t.roots() {
                    m.mark(v);
                }
            }
        });
    }

    /// A new error instance of `class` (an Error class) with a stack trace
    /// of `task`'s current frames.
    pub fn make_error(&mut self, task: &Task, class: Value, message: &str) -> Value {
        let msg = self.heap.alloc_str(message);
        let mut props = PropMap::new();
        props.set(names::MESSAGE, msg);
        let err = self.heap.alloc(Body::Object(Mut::new(ObjectData { class, props, frozen: false })));
        self.attach_stack(task, err);
        err
    }

    /// Sets `err.stack` to `Name: message` followed by `task`'s frames.
    pub fn attach_stack(&mut self, task: &Task, err: Value) {
        let header = ops::to_display(err);
        let mut stack = header;
        stack.push_str(&self.stack_trace(task));
        let s = self.heap.alloc_str(stack);
        if let Some(mut d) = ops::object_data(err) {
            d.props.set(names::STACK, s);
        }
    }

    /// The frames of `task`, innermost first, one `\n    at ...` each.
    pub fn stack_trace(&self, task: &Task) -> String {
        let mut out = String::new();
        // At most ten frames, innermost first, as V8 does by default.
        for f in task.frames.iter().rev().take(10) {
            let p = &f.proto().proto;
            let pc = (f.pc as usize).saturating_sub(1).min(p.spans.len().saturating_sub(1));
            let offset = p.spans.get(pc).copied().unwrap_or(p.span_start);
            let file = p.file;
            let name = frame_name(f.closure, p);
            if file < self.sources.len() {
                let (line, col) = self.sources.line_col(file, offset);
                out.push_str(&format!("\n    at {} ({}:{}:{})", name, self.sources.get(file).name, line, col));
            } else {
                out.push_str(&format!("\n    at {name}"));
            }
        }
        out
    }

    pub fn fault_to_error(&mut self, task: &Task, f: Fault) -> Value {
        match f {
            Fault::Type(m) => {
                let c = self.realm.classes.type_error;
                self.make_error(task, c, &m)
            }
            Fault::Range(m) => {
                let c = self.realm.classes.range_error;
                self.make_error(task, c, &m)
            }
            Fault::Thrown(v) => v,
        }
    }
}

fn frame_name(closure: Value, p: &crate::bytecode::FuncProto) -> String {
    let home = match closure.as_obj().map(|o| &o.body) {
        Some(Body::Function(Function::Closure(c))) => *c.home.lock(),
        _ => Value::UNDEFINED,
    };
    let class = ops::class_data(home).map(|c| c.name.as_str());
    if p.is_constructor {
        return format!("new {}", class.unwrap_or(&p.name));
    }
    match (class, p.name.is_empty()) {
        (Some(c), false) => format!("{c}.{}", p.name),
        (_, false) => p.name.clone(),
        (_, true) if p.is_arrow => "<anonymous>".into(),
        _ => "<main>".into(),
    }
}

pub fn make_closure(heap: &mut Heap, proto: Arc<RtProto>, upvals: Box<[Value]>) -> Value {
    heap.alloc(Body::Function(Function::Closure(Closure { proto, upvals, home: Mut::new(Value::UNDEFINED) })))
}
