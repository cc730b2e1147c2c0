//! The garbage-collected heap: allocation and mark-sweep collection.
//!
//! # Design
//!
//! Objects are individually boxed and never move, so a `Value` (and a
//! `&Obj` held by Rust code) stays valid for as long as the object is
//! reachable. The heap remembers every object it handed out; a collection
//! marks everything reachable from the roots with an explicit worklist (no
//! recursion, so deep structures cannot overflow the Rust stack), then
//! sweeps the unmarked objects. Cycles are collected like anything else.
//!
//! # When collections happen
//!
//! Only at a *safepoint*: the interpreter's budget check at calls and loop
//! back-edges, where every live value of every task is in its registers
//! (precise roots). Natives never trigger a collection, so a native may
//! hold `Value`s in Rust locals for its whole run. Allocation only counts
//! bytes and raises [`Heap::wants_collection`]; the next safepoint collects.
//!
//! # Roots
//!
//! The caller of [`Heap::collect`] supplies them through the [`Marker`]:
//! globals, the realm's built-in objects, the program's constants, and all
//! registers of every task (running, runnable or suspended).
//!
//! # Threads
//!
//! A `Heap` is owned by the one thread that runs tasks. With several
//! workers each gets its own allocation list and the collector stops them
//! all at safepoints before marking (see `design/memory.md`).

use super::object::{Body, Function, Header, IterState, JsStr, Mut, Obj};
use super::value::Value;
use std::sync::atomic::Ordering;

/// Bytes allocated between collections before the first collection.
const MIN_THRESHOLD: usize = 8 << 20;

pub struct Heap {
    objects: Vec<*mut Obj>,
    allocated_since_gc: usize,
    live_bytes: usize,
    threshold: usize,
    pub stats: GcStats,
}

// SAFETY: the heap's raw pointers are only dereferenced by the thread that
// owns the heap, or by the collector while every mutator is stopped.
unsafe impl Send for Heap {}

#[derive(Default, Clone, Debug)]
pub struct GcStats {
    pub collections: u64,
    pub total_pause_ns: u128,
    pub max_pause_ns: u128,
    pub freed: u64,
}

/// Marks reachable objects; given to root providers during a collection.
pub struct Marker {
    stack: Vec<*const Obj>,
}

impl Marker {
    #[inline]
    pub fn mark(&mut self, v: Value) {
        if let Some(o) = v.as_obj() {
            if !o.header.marked.swap(true, Ordering::Relaxed) {
                self.stack.push(o as *const Obj);
            }
        }
    }

    pub fn mark_all(&mut self, vs: &[Value]) {
        for &v in vs {
            self.mark(v);
        }
    }

    fn mark_completion(&mut self, c: &crate::sync::Completion) {
        match c.outcome() {
            Some(
                crate::sync::Outcome::Value(v) | crate::sync::Outcome::Error(v) | crate::sync::Outcome::Cancelled(v),
            ) => self.mark(v),
            None => {}
        }
    }

    fn drain(&mut self) {
        while let Some(p) = self.stack.pop() {
            // SAFETY: only live objects are pushed.
            let o = unsafe { &*p };
            self.trace(o);
        }
    }

    fn trace(&mut self, o: &Obj) {
        // SAFETY: the collector runs with every mutator stopped.
        unsafe { self.trace_stopped(o) }
    }

    unsafe fn trace_stopped(&mut self, o: &Obj) {
        match &o.body {
            Body::Str(_) => {}
            Body::Array(a) => {
                for &v in a.get_stopped().iter() {
                    self.mark(v);
                }
            }
            Body::Object(d) => {
                let d = d.get_stopped();
                self.mark(d.class);
                for &v in &d.props.vals {
                    self.mark(v);
                }
            }
            Body::Function(Function::Closure(c)) => {
                for &v in c.upvals.iter() {
                    self.mark(v);
                }
                self.mark(*c.home.get_stopped());
                for &v in c.proto.consts.iter() {
                    self.mark(v);
                }
            }
            Body::Function(Function::Native(n)) => self.mark(n.data),
            Body::Class(c) => {
                let c = c.get_stopped();
                self.mark(c.parent);
                self.mark(c.ctor);
                self.mark(c.field_init);
                self.mark(c.call);
                for &v in c.proto_props.vals.iter().chain(c.statics.vals.iter()) {
                    self.mark(v);
                }
            }
            Body::Cell(c) => self.mark(*c.get_stopped()),
            Body::Map(m) | Body::Set(m) => {
                for (k, v) in m.get_stopped().iter() {
                    self.mark(k);
                    self.mark(v);
                }
            }
            Body::Accessor(a) => {
                let a = a.get_stopped();
                self.mark(a.get);
                self.mark(a.set);
            }
            Body::Task(cell) => {
                self.mark_completion(&cell.completion);
                if let Some(exec) = cell.exec.lock().as_ref() {
                    for v in exec.roots() {
                        self.mark(v);
                    }
                }
                if let Some(
                    crate::sync::Resume::Value(v)
                    | crate::sync::Resume::Throw(v)
                    | crate::sync::Resume::Case { value: v, .. },
                ) = *cell.resume.lock()
                {
                    self.mark(v);
                }
            }
            Body::Promise(p) => self.mark_completion(&p.completion),
            Body::Channel(ch) => {
                // Buffered values and the values of blocked senders.
                let mut vs = Vec::new();
                ch.trace(|v| vs.push(v));
                self.mark_all(&vs);
            }
            Body::Mutex(_) | Body::WaitGroup(_) | Body::Semaphore(_) => {}
            Body::Iter(it) => match it.get_stopped() {
                IterState::Array { arr, .. } => self.mark(*arr),
                IterState::Channel { ch, .. } => self.mark(*ch),
                IterState::Str { s, .. } => self.mark(*s),
                IterState::Map { map, .. } => self.mark(*map),
            },
        }
    }
}

fn body_size(b: &Body) -> usize {
    std::mem::size_of::<Obj>()
        + match b {
            Body::Str(s) => s.s.len(),
            Body::Array(a) => unsafe { a.get_stopped() }.capacity() * 8,
            Body::Object(o) => unsafe { o.get_stopped() }.props.keys.capacity() * 12,
            Body::Function(Function::Closure(c)) => c.upvals.len() * 8,
            _ => 32,
        }
}

impl Default for Heap {
    fn default() -> Self {
        Heap::new()
    }
}

impl Heap {
    pub fn new() -> Heap {
        Heap {
            objects: Vec::new(),
            allocated_since_gc: 0,
            live_bytes: 0,
            threshold: MIN_THRESHOLD,
            stats: GcStats::default(),
        }
    }

    #[inline]
    pub fn alloc(&mut self, body: Body) -> Value {
        self.allocated_since_gc += body_size(&body);
        let p = Box::into_raw(Box::new(Obj { header: Header { marked: false.into(), frozen: false.into() }, body }));
        self.objects.push(p);
        Value::object(p)
    }

    pub fn alloc_str(&mut self, s: impl Into<Box<str>>) -> Value {
        self.alloc(Body::Str(JsStr::new(s.into())))
    }

    pub fn alloc_array(&mut self, items: Vec<Value>) -> Value {
        self.alloc(Body::Array(Mut::new(items)))
    }

    pub fn alloc_cell(&mut self, v: Value) -> Value {
        self.alloc(Body::Cell(Mut::new(v)))
    }

    /// Number of objects currently on the heap (live or not yet swept).
    pub fn object_count(&self) -> usize {
        self.objects.len()
    }

    /// True when enough has been allocated that the next safepoint should
    /// collect.
    #[inline(always)]
    pub fn wants_collection(&self) -> bool {
        self.allocated_since_gc >= self.threshold
    }

    /// Runs a full collection. `roots` marks every root.
    pub fn collect(&mut self, roots: impl FnOnce(&mut Marker)) {
        let start = std::time::Instant::now();
        let mut m = Marker { stack: Vec::with_capacity(256) };
        roots(&mut m);
        m.drain();
        let mut live = 0usize;
        let before = self.objects.len();
        self.objects.retain(|&p| {
            // SAFETY: every pointer in `objects` is a live allocation of
            // ours; unreachable ones are freed exactly once, here.
            let o = unsafe { &*p };
            if o.header.marked.swap(false, Ordering::Relaxed) {
                live += body_size(&o.body);
                true
            } else {
                drop(unsafe { Box::from_raw(p) });
                false
            }
        });
        self.live_bytes = live;
        self.allocated_since_gc = 0;
        self.threshold = MIN_THRESHOLD.max(live);
        let ns = start.elapsed().as_nanos();
        self.stats.collections += 1;
        self.stats.total_pause_ns += ns;
        self.stats.max_pause_ns = self.stats.max_pause_ns.max(ns);
        self.stats.freed += (before - self.objects.len()) as u64;
    }
}

impl Drop for Heap {
    fn drop(&mut self) {
        for &p in &self.objects {
            // SAFETY: the heap owns every object; nothing runs after drop.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::object::{ObjectData, PropMap};

    fn obj(heap: &mut Heap) -> Value {
        heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: PropMap::new(), frozen: false })))
    }

    fn set(o: Value, key: &str, v: Value) {
        match &o.as_obj().unwrap().body {
            Body::Object(d) => {
                d.lock().props.set(crate::vm::atom::Atom::intern(key), v);
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn unreachable_objects_are_freed_and_reachable_kept() {
        let mut heap = Heap::new();
        let keep = obj(&mut heap);
        let child = heap.alloc_str("child");
        set(keep, "c", child);
        for _ in 0..100 {
            obj(&mut heap);
        }
        assert_eq!(heap.object_count(), 102);
        heap.collect(|m| m.mark(keep));
        assert_eq!(heap.object_count(), 2);
        assert_eq!(heap.stats.freed, 100);
    }

    #[test]
    fn cycles_are_collected() {
        let mut heap = Heap::new();
        let a = obj(&mut heap);
        let b = obj(&mut heap);
        set(a, "b", b);
        set(b, "a", a);
        heap.collect(|m| m.mark(a));
        assert_eq!(heap.object_count(), 2);
        heap.collect(|_| {});
        assert_eq!(heap.object_count(), 0);
    }

    #[test]
    fn deep_chains_do_not_overflow_the_stack() {
        let mut heap = Heap::new();
        let head = heap.alloc_array(vec![]);
        let mut cur = head;
        for _ in 0..200_000 {
            let next = heap.alloc_array(vec![]);
            if let Body::Array(a) = &cur.as_obj().unwrap().body {
                a.lock().push(next);
            }
            cur = next;
        }
        heap.collect(|m| m.mark(head));
        assert_eq!(heap.object_count(), 200_001);
    }

    #[test]
    fn marks_are_cleared_after_collection() {
        let mut heap = Heap::new();
        let a = obj(&mut heap);
        heap.collect(|m| m.mark(a));
        heap.collect(|m| m.mark(a));
        assert_eq!(heap.object_count(), 1);
        assert!(!a.as_obj().unwrap().header.marked.load(Ordering::Relaxed));
    }
}
