//! Everything one running program owns.
//!
//! A program's state is split by who may touch it:
//!
//! - [`World`]: shared by every thread of the program — the global slots
//!   (atomic), the task table, sources, script arguments, the output
//!   streams (one buffer, so output keeps the order in which tasks on
//!   different workers wrote it), and the realm as the prelude left it.
//! - [`Runtime`]: one per thread that runs tasks (each worker, and the
//!   thread that starts and ends the program) — its allocation handle on
//!   the shared heap, its copy of the realm, and what the current slice
//!   spawned, woke or waits on. Natives and the interpreter get `&mut
//!   Runtime` and never need a lock for these.

use super::atom::names;
use super::heap::{Heap, Marker, MutatorSlot, SharedHeap};
use super::link::{link, RtProto};
use super::object::{Body, Closure, Function, Mut, ObjectData, PropMap, Upvals};
use super::ops::{self, Fault};
use super::realm::Realm;
use super::task::Task;
use super::value::Value;
use crate::bytecode::FuncProto;
use crate::syntax::diagnostic::SourceMap;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// The global variable slots: read and written by any worker, each access
/// one relaxed atomic operation (LANGUAGE.md §6: single operations on
/// shared values are atomic).
pub struct Globals(Box<[AtomicU64]>);

impl Globals {
    fn new(values: &[Value]) -> Globals {
        Globals(values.iter().map(|v| AtomicU64::new(v.bits())).collect())
    }

    #[inline(always)]
    pub fn get(&self, i: usize) -> Value {
        Value::from_bits(self.0[i].load(Ordering::Relaxed))
    }

    #[inline(always)]
    pub fn set(&self, i: usize, v: Value) {
        self.0[i].store(v.bits(), Ordering::Relaxed);
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn mark(&self, m: &mut Marker) {
        for i in 0..self.len() {
            m.mark(self.get(i));
        }
    }
}

/// Which of a program's output streams a write went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// `console.log`, `console.info`, `console.debug`, `stdout.write`.
    Stdout,
    /// `console.error`, `console.warn`, `stderr.write`, and the engine's
    /// reports when they are asked for.
    Stderr,
}

/// Where an embedder's program writes instead of the process's streams
/// (see `embed::VmBuilder::output`). Called with the program's output lock
/// held, so the writes of tasks on different workers arrive one at a time,
/// in the order they happened; it must not call back into the program.
pub trait OutputSink: Send + Sync {
    /// One write: `text` is what the script wrote (a `console.log` line
    /// with its newline, or the text of one `stdout.write`).
    fn write(&self, stream: Stream, text: &str);
}

impl<F: Fn(Stream, &str) + Send + Sync> OutputSink for F {
    fn write(&self, stream: Stream, text: &str) {
        self(stream, text)
    }
}

/// Standard output and error of a program.
#[derive(Default)]
pub struct Output {
    /// When set, every write goes here, unbuffered, instead of to the
    /// process's streams (an embedder's routing).
    pub sink: Option<std::sync::Arc<dyn OutputSink>>,
    /// The engine's own reports (uncaught errors, unhandled task errors,
    /// deadlocks, never-finished tasks) are not written: an embedder gets
    /// them as values.
    pub quiet_reports: bool,
    /// Buffered standard output (flushed before anything goes to stderr
    /// and at exit).
    pub stdout: Vec<u8>,
    /// When set, stderr output is collected here instead of written.
    pub captured_stderr: Option<Vec<u8>>,
    /// When set, stdout is never written to the process's stdout; the
    /// embedder reads `stdout`.
    pub capture_stdout: bool,
}

/// Shards of the live-task table: spawning and finishing tasks on
/// different workers rarely meet on one lock, and no single map grows (and
/// rehashes under its lock) to a million entries.
const TASK_TABLE_SHARDS: usize = 64;

/// The live-task table: task id → task object, sharded by id.
///
/// A set of task objects looked up by the id in their cell, rather than
/// a map from id to object: one word an entry instead of two, which is a
/// sixth of what a suspended task costs beside its own allocations
/// (design/memory.md, "Memory per task"). Hashing an entry reads its
/// object, which is sound because the table keeps every object in it
/// alive (its entries are GC roots) until it is removed.
pub struct TaskTable(Box<[Mutex<HashSet<TaskEntry>>]>, TaskCount);

/// A task object in the [`TaskTable`], hashed and compared by its id.
#[derive(Clone, Copy)]
struct TaskEntry(Value);

impl TaskEntry {
    fn id(&self) -> &u32 {
        match self.0.as_obj().map(|o| &o.body) {
            Some(Body::Task(cell)) => &cell.id,
            // Only task objects are inserted (`TaskTable::insert` checks).
            _ => &0,
        }
    }
}

impl std::hash::Hash for TaskEntry {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // As the `u32` it borrows as, so that lookups by id find it.
        self.id().hash(h)
    }
}

impl PartialEq for TaskEntry {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for TaskEntry {}

impl std::borrow::Borrow<u32> for TaskEntry {
    fn borrow(&self) -> &u32 {
        self.id()
    }
}

/// How many tasks are alive, counted only once asked for (`--stats`' peak,
/// [`TaskTable::count_peak`]), so a run without it pays one relaxed load
/// per spawn and end, not a shared read-modify-write. (An embedder's task
/// limit is its run's guard's count, `crate::limits`.)
struct TaskCount {
    on: std::sync::atomic::AtomicBool,
    live: AtomicUsize,
    peak: AtomicUsize,
}

impl Default for TaskTable {
    fn default() -> Self {
        let count = TaskCount { on: Default::default(), live: AtomicUsize::new(0), peak: AtomicUsize::new(0) };
        TaskTable((0..TASK_TABLE_SHARDS).map(|_| Mutex::new(HashSet::new())).collect(), count)
    }
}

impl TaskTable {
    fn shard(&self, id: u32) -> &Mutex<HashSet<TaskEntry>> {
        &self.0[id as usize % TASK_TABLE_SHARDS]
    }

    pub fn insert(&self, id: u32, task: Value) {
        let entry = TaskEntry(task);
        debug_assert_eq!(*entry.id(), id, "a task object, with this id");
        let fresh = self.shard(id).lock().replace(entry).is_none();
        let c = &self.1;
        if fresh && c.on.load(Ordering::Relaxed) {
            let n = c.live.fetch_add(1, Ordering::Relaxed) + 1;
            c.peak.fetch_max(n, Ordering::Relaxed);
        }
    }

    pub fn remove(&self, id: u32) {
        let gone = self.shard(id).lock().remove(&id);
        let c = &self.1;
        if gone && c.on.load(Ordering::Relaxed) {
            c.live.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Empties the table, returning every task still in it (the end of a
    /// program: see `driver::release_unfinished`).
    pub fn take_all(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for s in self.0.iter() {
            out.extend(s.lock().drain().map(|e| e.0));
        }
        self.1.live.store(0, Ordering::Relaxed);
        out
    }

    /// Starts counting tasks alive, from those alive now (before any
    /// worker runs).
    pub fn count_peak(&self) {
        let n = self.0.iter().map(|s| s.lock().len()).sum();
        self.1.live.store(n, Ordering::Relaxed);
        self.1.peak.store(n, Ordering::Relaxed);
        self.1.on.store(true, Ordering::Relaxed);
    }

    /// The most tasks alive at once (see [`TaskTable::count_peak`]).
    pub fn peak(&self) -> usize {
        self.1.peak.load(Ordering::Relaxed)
    }

    pub fn contains(&self, id: u32) -> bool {
        self.shard(id).lock().contains(&id)
    }

    /// Every live task, by id.
    pub fn sorted(&self) -> Vec<(u32, Value)> {
        let mut all: Vec<(u32, Value)> =
            self.0.iter().flat_map(|s| s.lock().iter().map(|e| (*e.id(), e.0)).collect::<Vec<_>>()).collect();
        all.sort_by_key(|&(k, _)| k);
        all
    }

    fn mark(&self, m: &mut Marker) {
        for s in self.0.iter() {
            for t in s.lock().iter() {
                m.mark(t.0);
            }
        }
    }
}

/// What every thread of a program shares (see the module docs).
pub struct World {
    pub heap: Arc<SharedHeap>,
    pub globals: Globals,
    /// Every loaded file. Replaced only by an interactive session, which
    /// adds each input (with the files it imports) as it runs it; readers
    /// take the map they find, and a file id stays valid in every later
    /// map (maps only grow).
    pub sources: parking_lot::RwLock<Arc<SourceMap>>,
    /// Constants of every linked prototype (GC roots).
    pub const_roots: Vec<Value>,
    /// The `raw` arrays of the tagged templates' strings arrays (see
    /// `vm::link::Linked`); grows only when code is evaluated into a
    /// loaded program (`embed::Instance::eval`).
    pub template_raw: parking_lot::RwLock<std::collections::HashMap<usize, Value>>,
    /// `args`: the script's arguments after its file name.
    pub script_args: Vec<String>,
    /// The realm new threads start from; replaced when the prelude
    /// installs its methods (before any task but main runs).
    pub realm: Mutex<Arc<Realm>>,
    /// Bumped whenever `realm` is replaced, so threads notice cheaply.
    pub realm_version: AtomicU64,
    pub output: Mutex<Output>,
    /// `output.stdout` holds bytes not yet written to the process's
    /// stdout. Read without the lock at the end of every task run (see
    /// `Runtime::flush_pending`); set and cleared under it.
    pub stdout_pending: AtomicBool,
    /// A write to the process's stdout failed with a broken pipe (the
    /// reader is gone, as in `raya run x.raya | head -1`): the program
    /// ends quietly with exit code 0, as a Go program does.
    pub stdout_closed: AtomicBool,
    /// Every unfinished task's object, by id: GC roots, and the list the
    /// deadlock and never-finished reports walk.
    pub live_tasks: TaskTable,
    /// Failed tasks whose error nobody observed yet, in failure order.
    pub failed_tasks: Mutex<Vec<Value>>,
    /// Promise reactions ready to run (Node's microtask queue): GC roots.
    pub microtasks: crate::sync::prim::Mutex<crate::sync::Microtasks>,
    /// Classes of host objects made so far (`vm::host`): GC roots.
    pub host_classes: super::host::HostClasses,
    /// Constants of code linked after the program started (an embedder's
    /// `Instance::eval`): GC roots.
    pub late_roots: Mutex<Vec<Value>>,
}

impl World {
    /// The frames of `task`, innermost first, one `\n    at ...` each.
    pub fn stack_trace(&self, task: &Task) -> String {
        let mut out = String::new();
        let sources = self.sources.read().clone();
        // At most ten frames, innermost first, as V8 does by default;
        // frames of built-in Raya code (the prelude, `std:` sources) are
        // the engine's business, not the user's, and are left out.
        let frames = task.frames.iter().rev().enumerate().filter(|(_, f)| {
            let file = f.proto().proto.file;
            file >= sources.len() || !is_builtin_source(&sources.get(file).name)
        });
        for (depth, f) in frames.take(10) {
            let p = &f.proto().proto;
            let pc = if depth == 0 { task.top_pc().unwrap_or(f.pc) } else { f.pc };
            let pc = (pc as usize).saturating_sub(1).min(p.spans.len().saturating_sub(1));
            let offset = p.spans.get(pc).copied().unwrap_or(p.span_start);
            let file = p.file;
            let name = frame_name(f.closure, p);
            if file < sources.len() {
                let (line, col) = sources.line_col(file, offset);
                out.push_str(&format!("\n    at {} ({}:{}:{})", name, sources.get(file).name, line, col));
            } else {
                out.push_str(&format!("\n    at {name}"));
            }
        }
        out
    }

    /// `file:line:col` of a site.
    pub fn site_text(&self, site: crate::sync::Site) -> String {
        let sources = self.sources.read();
        let file = site.file as usize;
        if file >= sources.len() {
            return "?".into();
        }
        let (line, col) = sources.line_col(file, site.offset);
        format!("{}:{}:{}", sources.get(file).name, line, col)
    }

    /// Writes to stderr (or its capture) after flushing stdout, so the two
    /// streams interleave as written. Any thread may call it.
    pub fn write_stderr(&self, s: &str) {
        let mut out = self.output.lock();
        if let Some(sink) = &out.sink {
            sink.write(Stream::Stderr, s);
            return;
        }
        if let Some(buf) = &mut out.captured_stderr {
            buf.extend_from_slice(s.as_bytes());
            return;
        }
        flush(&mut out, self);
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes());
        let _ = err.flush();
    }

    /// Marks the roots the program itself holds (not its running tasks).
    pub fn mark_roots(&self, m: &mut Marker) {
        self.globals.mark(m);
        m.mark_all(&self.const_roots);
        self.live_tasks.mark(m);
        m.mark_all(&self.failed_tasks.lock());
        for (job, o) in self.microtasks.lock().queue.iter() {
            job.roots(|v| m.mark(v));
            m.mark(o.value());
        }
        self.realm.lock().mark_roots(m);
        m.mark_all(&self.host_classes.values());
        m.mark_all(&self.late_roots.lock());
    }
}

/// One thread's view of a running program (see the module docs).
pub struct Runtime {
    pub heap: Heap,
    pub realm: Arc<Realm>,
    realm_version: u64,
    pub world: Arc<World>,
    /// This worker's mutator slot (None on the thread that starts and
    /// ends the program, which never runs concurrently with a collection).
    pub slot: Option<Arc<MutatorSlot>>,
    /// Set by `exit(code)`: the program ends as soon as the running task
    /// returns to the interpreter loop.
    pub exit_code: Option<i32>,
    /// Set by a blocking built-in that could not complete: the interpreter
    /// suspends the running task with this reason.
    pub suspend: Option<crate::sync::Wait>,
    /// Set by a generator's `next`/`return`/`throw` built-in: the
    /// interpreter resumes that generator (its frame goes on the calling
    /// task's stack) instead of storing the built-in's result.
    pub resume_gen: Option<super::object::GenResume>,
    /// Tasks created during the current slice (the worker queues them).
    pub spawned: Vec<std::sync::Arc<crate::sync::TaskCell>>,
    /// Tasks claimed and made runnable during the current slice (the worker
    /// hands the first to its next slot).
    pub woken: Vec<std::sync::Arc<crate::sync::TaskCell>>,
    /// This worker's trace events, when a trace is recorded (`crate::trace`).
    pub trace: Option<Box<crate::trace::Recorder>>,
    /// This worker's slot of the stall watchdog, which native calls mark
    /// (`crate::trace::stall`); None off the workers or when it is off.
    pub stall: Option<crate::trace::stall::Probe>,
}

impl World {
    /// `strings.raw` of the strings array `v` of a tagged template. Both
    /// arrays are constants of the program (GC roots while it lives), so
    /// an address in the table never names another object.
    pub fn template_raw(&self, v: Value) -> Option<Value> {
        let table = self.template_raw.read();
        if table.is_empty() {
            return None;
        }
        let o = v.as_obj()?;
        table.get(&(o as *const _ as usize)).copied()
    }
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
        let mut linked = super::link::Linked::default();
        let entry = link(entry, &mut heap, &mut linked);
        let super::link::Linked { roots: const_roots, template_raw } = linked;
        let closure = make_closure(&mut heap, entry, Box::new([]));
        let realm = Arc::new(realm);
        let world = Arc::new(World {
            heap: heap.shared().clone(),
            globals: Globals::new(&globals),
            sources: parking_lot::RwLock::new(Arc::new(sources.clone())),
            const_roots,
            script_args,
            realm: Mutex::new(realm.clone()),
            realm_version: AtomicU64::new(0),
            output: Mutex::new(Output { stdout: Vec::with_capacity(8192), ..Default::default() }),
            stdout_pending: AtomicBool::new(false),
            stdout_closed: AtomicBool::new(false),
            live_tasks: Default::default(),
            failed_tasks: Default::default(),
            microtasks: Default::default(),
            host_classes: Default::default(),
            template_raw: parking_lot::RwLock::new(template_raw),
            late_roots: Default::default(),
        });
        let rt = Runtime {
            heap,
            realm,
            realm_version: 0,
            world,
            slot: None,
            exit_code: None,
            suspend: None,
            resume_gen: None,
            spawned: Vec::new(),
            woken: Vec::new(),
            trace: None,
            stall: None,
        };
        (rt, closure)
    }

    /// A runtime for a worker thread of the program `world`.
    pub fn for_worker(world: &Arc<World>) -> Runtime {
        let heap = Heap::attach_to(&world.heap);
        let slot = Some(heap.new_slot());
        Runtime {
            heap,
            // The version first: the realm read after it is at least as new.
            realm_version: world.realm_version.load(Ordering::Acquire),
            realm: world.realm.lock().clone(),
            world: world.clone(),
            slot,
            exit_code: None,
            suspend: None,
            resume_gen: None,
            spawned: Vec::new(),
            woken: Vec::new(),
            trace: None,
            stall: None,
        }
    }

    /// Changes the realm (the prelude installing its methods) and makes
    /// the change the realm of threads that start later.
    pub fn update_realm(&mut self, f: impl FnOnce(&mut Realm)) {
        let realm = Arc::make_mut(&mut self.realm);
        f(realm);
        realm.methods.index_natives();
        *self.world.realm.lock() = self.realm.clone();
        self.world.realm_version.fetch_add(1, Ordering::Release);
        self.realm_version = self.world.realm_version.load(Ordering::Acquire);
    }

    /// Picks up a realm another thread updated.
    #[inline]
    pub fn refresh_realm(&mut self) {
        let v = self.world.realm_version.load(Ordering::Acquire);
        if v != self.realm_version {
            self.realm = self.world.realm.lock().clone();
            self.realm_version = v;
        }
    }

    /// Appends to the stdout buffer. Output reaches the process's stdout
    /// at the latest when the writing task's run ends (it suspends, is
    /// preempted at the end of its time slice, or finishes: the driver
    /// calls [`Runtime::flush_pending`]), so a server's log appears at
    /// once and a computing task's within one time slice, while a loop
    /// that prints many lines per slice still costs one write per slice.
    /// Once stdout is a closed pipe, writing ends the program (exit 0).
    pub fn write_stdout(&mut self, s: &str) {
        if self.world.stdout_closed.load(Ordering::Relaxed) {
            self.exit_code.get_or_insert(0);
            return;
        }
        let mut out = self.world.output.lock();
        if let Some(sink) = &out.sink {
            sink.write(Stream::Stdout, s);
            return;
        }
        out.stdout.extend_from_slice(s.as_bytes());
        if out.capture_stdout {
            return;
        }
        if out.stdout.len() > 1 << 16 {
            flush(&mut out, &self.world);
            if self.world.stdout_closed.load(Ordering::Relaxed) {
                self.exit_code.get_or_insert(0);
            }
        } else {
            self.world.stdout_pending.store(true, Ordering::Relaxed);
        }
    }

    pub fn flush_stdout(&mut self) {
        flush(&mut self.world.output.lock(), &self.world);
    }

    /// Writes out buffered stdout, if there is any; false once stdout is
    /// a closed pipe (the program should end). Cheap when nothing is
    /// pending: one relaxed load. A write on another worker that this load
    /// misses is flushed when that writer's own run ends.
    #[inline]
    pub fn flush_pending(&mut self) -> bool {
        if self.world.stdout_pending.load(Ordering::Relaxed) {
            self.flush_stdout();
        }
        !self.world.stdout_closed.load(Ordering::Relaxed)
    }

    /// A report of the engine's own about the program (see
    /// [`Output::quiet_reports`]).
    pub fn write_report(&mut self, s: &str) {
        if !self.world.output.lock().quiet_reports {
            self.write_stderr(s);
        }
    }

    pub fn write_stderr(&mut self, s: &str) {
        self.world.write_stderr(s);
    }

    /// Runs a full collection with `task` as the running task: the only
    /// thread of the program, or (on a worker) stopping the others first.
    pub fn collect_garbage(&mut self, task: &Task) {
        self.collect_garbage_with(task, false)
    }

    /// At a safepoint with a collection wanted: begins a marking cycle,
    /// assists one, or ends it (see `vm::heap`); with `full`, a whole
    /// collection at once (a heap at its limit needs the memory now).
    pub fn collect_garbage_with(&mut self, task: &Task, full: bool) {
        if !full && self.slot.is_some() && self.heap.is_marking() && !self.heap.assist() {
            // The common case while marking: a slice traced, more left.
            return;
        }
        let world = self.world.clone();
        match self.slot.clone() {
            Some(slot) => self.heap.safepoint_with(&slot, task, full, |m| world.mark_roots(m)),
            // The only thread: a whole cycle at once, full if asked (the
            // heap limit), else minor or full by the generational rule.
            None => self.heap.collect_cycle(full.then_some(true), |m| {
                world.mark_roots(m);
                for v in task.roots() {
                    m.mark(v);
                }
            }),
        }
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
    /// Where the running task is in the user's code (its innermost frame
    /// outside built-in Raya code), for the creation site of a channel or
    /// mutex. O(frames), no formatting: the line is found when a report
    /// prints it ([`Runtime::site_text`]).
    pub fn user_site(&self, task: &Task) -> Option<crate::sync::Site> {
        let sources = self.world.sources.read();
        for (depth, f) in task.frames.iter().rev().enumerate() {
            let p = &f.proto().proto;
            let file = p.file;
            if file >= sources.len() || is_builtin_source(&sources.get(file).name) {
                continue;
            }
            let pc = if depth == 0 { task.top_pc().unwrap_or(f.pc) } else { f.pc };
            let pc = (pc as usize).saturating_sub(1).min(p.spans.len().saturating_sub(1));
            let offset = p.spans.get(pc).copied().unwrap_or(p.span_start);
            return Some(crate::sync::Site { file: file as u32, offset });
        }
        None
    }

    /// `file:line:col` of a site.
    pub fn site_text(&self, site: crate::sync::Site) -> String {
        self.world.site_text(site)
    }

    pub fn stack_trace(&self, task: &Task) -> String {
        self.world.stack_trace(task)
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
            Fault::Reference(m) => {
                let c = self.realm.classes.reference_error;
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

/// A source file of the engine's own (the prelude, a `std:` module's Raya
/// part) rather than the user's.
pub fn is_builtin_source(name: &str) -> bool {
    name == "<prelude>" || name.starts_with("std:")
}

/// The source line of a stack's innermost frame with a caret under its
/// column, for uncaught errors (as Deno shows them): `stack` is an
/// error's `stack` text; None if it names no frame in a known file.
pub fn code_frame(sources: &SourceMap, stack: &str) -> Option<String> {
    let first = stack.lines().find_map(|l| l.strip_prefix("    at "))?;
    let loc = first.strip_suffix(')').and_then(|l| l.rsplit_once(" (")).map_or(first, |(_, loc)| loc);
    let (rest, col) = loc.rsplit_once(':')?;
    let (file, line) = rest.rsplit_once(':')?;
    let (line, col): (usize, usize) = (line.parse().ok()?, col.parse().ok()?);
    let id = (0..sources.len()).find(|&i| sources.get(i).name == file)?;
    let text = sources.get(id).text.lines().nth(line.checked_sub(1)?)?;
    let trimmed = text.trim_start();
    let indent = text.chars().count() - trimmed.chars().count();
    let caret_at = col.checked_sub(1)?.checked_sub(indent)?;
    if trimmed.is_empty() || caret_at > trimmed.chars().count() {
        return None;
    }
    Some(format!("  {}\n  {}^", trimmed.trim_end(), " ".repeat(caret_at)))
}

pub fn make_closure(heap: &mut Heap, proto: Arc<RtProto>, upvals: Box<[Value]>) -> Value {
    make_closure_with(heap, proto, upvals.into())
}

pub fn make_closure_with(heap: &mut Heap, proto: Arc<RtProto>, upvals: Upvals) -> Value {
    heap.alloc(Body::Function(Function::Closure(Closure { proto, upvals, home: Mut::new(Value::UNDEFINED) })))
}

fn flush(out: &mut Output, world: &World) {
    if out.capture_stdout {
        return;
    }
    world.stdout_pending.store(false, Ordering::Relaxed);
    if out.stdout.is_empty() {
        return;
    }
    let mut w = std::io::stdout().lock();
    // A closed stdout (e.g. `| head`) must not crash the VM: the program
    // ends quietly instead (the driver and `write_stdout` look at the flag).
    let result = w.write_all(&out.stdout).and_then(|()| w.flush());
    if let Err(e) = result {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            world.stdout_closed.store(true, Ordering::Relaxed);
        }
    }
    out.stdout.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table finds, replaces and removes tasks by id though it stores
    /// only their objects, across shards and through the set's growth.
    #[test]
    fn the_task_table_is_keyed_by_the_cells_id() {
        let mut heap = Heap::new();
        let table = TaskTable::default();
        let task = |heap: &mut Heap, id: u32| heap.alloc(Body::Task(Arc::new(crate::sync::TaskCell::without_exec(id))));
        let objs: Vec<(u32, Value)> = (1..=1000).map(|id| (id * 7, task(&mut heap, id * 7))).collect();
        table.count_peak();
        for &(id, v) in &objs {
            table.insert(id, v);
        }
        assert!(table.contains(7) && table.contains(7000) && !table.contains(8));
        // Inserting the same id again replaces the entry, not a second one.
        table.insert(7, objs[0].1);
        assert_eq!(table.peak(), 1000);
        for &(id, _) in objs.iter().filter(|(id, _)| id % 2 == 0) {
            table.remove(id);
        }
        table.remove(8); // not there: nothing happens
        let left = table.sorted();
        assert_eq!(left.len(), 500);
        assert!(left.iter().all(|&(id, v)| id % 2 == 1 && objs.iter().any(|&(i, o)| i == id && o == v)));
        assert!(left.windows(2).all(|w| w[0].0 < w[1].0), "sorted by id");
        assert_eq!(table.take_all().len(), 500);
        assert!(!table.contains(7));
    }

    fn sources() -> SourceMap {
        let mut s = SourceMap::default();
        s.add("<prelude>".into(), "function map() {}\n".into());
        s.add("app.raya".into(), "let a = 1;\n    foo(bar);\n".into());
        s
    }

    #[test]
    fn code_frame_shows_the_innermost_frame_line_with_a_caret() {
        let s = sources();
        let frame = code_frame(&s, "\n    at f (app.raya:2:9)\n    at <main> (app.raya:1:1)").unwrap();
        assert_eq!(frame, "  foo(bar);\n      ^", "indentation trimmed, caret moved with it");
        let frame = code_frame(&s, "\n    at <main> (app.raya:1:1)").unwrap();
        assert_eq!(frame, "  let a = 1;\n  ^");
    }

    #[test]
    fn code_frame_is_none_without_a_usable_location() {
        let s = sources();
        assert_eq!(code_frame(&s, ""), None, "no frame");
        assert_eq!(code_frame(&s, "\n    at f"), None, "no location");
        assert_eq!(code_frame(&s, "\n    at f (other.raya:1:1)"), None, "unknown file");
        assert_eq!(code_frame(&s, "\n    at f (app.raya:9:1)"), None, "line past the end");
        assert_eq!(code_frame(&s, "\n    at f (app.raya:2:40)"), None, "column past the end");
        assert_eq!(code_frame(&s, "\n    at f (app.raya:2:2)"), None, "column inside the indentation");
    }

    #[test]
    fn builtin_sources_are_recognised() {
        assert!(is_builtin_source("<prelude>"));
        assert!(is_builtin_source("std:http"));
        assert!(!is_builtin_source("app.raya"));
    }
}
