//! Linking: turning compiled prototypes into runnable ones.
//!
//! The compiler's [`FuncProto`] is plain data (constants as Rust values).
//! Before a program runs, each prototype is paired with its run-time
//! constants — strings allocated on the heap, property names interned as
//! atoms — and per-instruction inline caches.

use super::atom::Atom;
use super::heap::Heap;
use super::ops;
use super::shape::MethodEntry;
use super::value::Value;
use crate::bytecode::Instr;
use crate::bytecode::{Constant, FuncProto};
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::sync::Arc;

pub struct RtProto {
    pub proto: Arc<FuncProto>,
    /// `proto.code`'s first instruction. Entering a frame starts from it,
    /// one load from the prototype instead of two (through the `Arc`).
    code: CodeStart,
    /// What a call needs to know of the function, beside `code` for the
    /// same reason.
    pub call: CallShape,
    /// `consts[i]` is constant i as a value.
    pub consts: Box<[Value]>,
    /// `atoms[i]` is constant i as a property name (numbers in their
    /// canonical string form).
    pub atoms: Box<[Atom]>,
    pub children: Box<[Arc<RtProto>]>,
    /// Inline cache per instruction, one word each: for property
    /// instructions, the shape and slot where the last lookup at that
    /// instruction found its key (see `PropMap::cached`); other
    /// instructions use the low half as they please (see [`Self::ic_at`]).
    /// Found by the instruction's byte offset; dividing by the constant
    /// instruction size compiles to a multiply.
    ic: Box<[AtomicU64]>,
    /// One method cache per `CallMethod` instruction, in code order; the
    /// high half of such an instruction's `ic` word is its index plus one
    /// (set here, never changed; the low half is `Methods::native_method`'s).
    methods: Box<[MethodEntry]>,
}

/// The facts about a function that every call of it reads (copied from
/// its `FuncProto`).
#[derive(Clone, Copy, Debug)]
pub struct CallShape {
    /// Frame size in registers (`FuncProto::num_regs`).
    pub num_regs: u16,
    /// Declared parameters (`FuncProto::arity`).
    pub arity: u16,
    pub has_rest: bool,
    /// Neither a class constructor nor async: a call pushes its frame and
    /// runs it on the caller's task.
    pub plain: bool,
    /// A base-class constructor: its first instruction is `InitFields`
    /// (which `new` may do itself and skip, see `construct`).
    pub inits_fields: bool,
}

/// The address of a prototype's first instruction.
struct CodeStart(*const Instr);

// SAFETY: it points into the `Vec` of the `Arc<FuncProto>` beside it in
// `RtProto`, which no one changes once it is shared, and which lives as
// long as the `RtProto`.
unsafe impl Send for CodeStart {}
unsafe impl Sync for CodeStart {}

impl RtProto {
    /// The address of the first instruction.
    #[inline(always)]
    pub fn code_start(&self) -> *const Instr {
        self.code.0
    }

    /// The inline-cache word of the instruction at `byte_offset` bytes
    /// into the code.
    ///
    /// # Safety
    /// `byte_offset` is the offset of an instruction of this prototype.
    #[inline(always)]
    pub unsafe fn ic64_at(&self, byte_offset: usize) -> &AtomicU64 {
        let i = byte_offset / std::mem::size_of::<Instr>();
        debug_assert!(byte_offset.is_multiple_of(std::mem::size_of::<Instr>()) && i < self.ic.len());
        unsafe { self.ic.get_unchecked(i) }
    }

    /// The method cache of the `CallMethod` instruction whose `ic` word is
    /// `site`.
    #[inline(always)]
    pub fn method_entry(&self, site: &AtomicU64) -> Option<&MethodEntry> {
        let i = (site.load(std::sync::atomic::Ordering::Relaxed) >> 32) as usize;
        self.methods.get(i.wrapping_sub(1))
    }

    /// The low half of [`Self::ic64_at`]'s word, for caches that need 32
    /// bits. An instruction always uses its word at one width (a site is
    /// one kind of instruction), so the two views never race.
    ///
    /// # Safety
    /// As for `ic64_at`.
    #[inline(always)]
    pub unsafe fn ic_at(&self, byte_offset: usize) -> &AtomicU32 {
        let w = unsafe { self.ic64_at(byte_offset) };
        // SAFETY: an AtomicU64 is 8-aligned, so its low-address half is an
        // aligned u32; the low half of the value on this little- or
        // big-endian target does not matter, only that it is one fixed
        // half.
        unsafe { &*(w as *const AtomicU64 as *const AtomicU32) }
    }
}

/// What linking made besides the prototypes: every constant allocated, which
/// the VM keeps as GC roots for the life of the program, and the `raw`
/// array of each tagged template's strings array (by the strings array's
/// address; see `World::template_raw`).
#[derive(Default)]
pub struct Linked {
    pub roots: Vec<Value>,
    pub template_raw: std::collections::HashMap<usize, Value>,
}

fn frozen_array(heap: &mut Heap, linked: &mut Linked, items: Vec<Value>) -> Value {
    let a = heap.alloc_array(items);
    if let Some(o) = a.as_obj() {
        o.header.frozen.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    linked.roots.push(a);
    a
}

/// Links `proto` and its nested prototypes.
pub fn link(proto: &Arc<FuncProto>, heap: &mut Heap, linked: &mut Linked) -> Arc<RtProto> {
    let mut consts = Vec::with_capacity(proto.consts.len());
    let mut atoms = Vec::with_capacity(proto.consts.len());
    for c in &proto.consts {
        match c {
            Constant::Number(n) => {
                consts.push(Value::number(*n));
                atoms.push(Atom::intern(&crate::builtins::numconv::number_to_string(*n)));
            }
            Constant::String(s) if crate::wtf8::is_marked(s) => {
                // A literal with a lone surrogate (or a real U+10FFFF):
                // the compiler's text is marked (see `crate::wtf8`). As a
                // property key it is the key `ops::to_key` makes of the
                // string (halves that folding joined are one character).
                let v = heap.alloc_wtf8(crate::wtf8::unmark(s));
                linked.roots.push(v);
                consts.push(v);
                atoms.push(ops::js_str(v).map_or(Atom::intern(""), ops::key_of));
            }
            Constant::String(s) => {
                let v = heap.alloc_str(s.as_str());
                linked.roots.push(v);
                consts.push(v);
                atoms.push(Atom::intern(s));
            }
            Constant::Private(key) => {
                consts.push(Value::UNDEFINED);
                atoms.push(Atom::private(key));
            }
            Constant::Template { cooked, raw } => {
                let cooked: Vec<Value> = cooked
                    .iter()
                    .map(|c| {
                        c.as_ref().map_or(Value::UNDEFINED, |s| {
                            let v = if crate::wtf8::is_marked(s) {
                                heap.alloc_wtf8(crate::wtf8::unmark(s))
                            } else {
                                heap.alloc_str(s.as_str())
                            };
                            linked.roots.push(v);
                            v
                        })
                    })
                    .collect();
                let raw: Vec<Value> = raw
                    .iter()
                    .map(|s| {
                        let v = heap.alloc_str(s.as_str());
                        linked.roots.push(v);
                        v
                    })
                    .collect();
                let strings = frozen_array(heap, linked, cooked);
                let raw = frozen_array(heap, linked, raw);
                if let Some(o) = strings.as_obj() {
                    linked.template_raw.insert(o as *const _ as usize, raw);
                }
                consts.push(strings);
                atoms.push(Atom::intern(""));
            }
        }
    }
    let children = proto.protos.iter().map(|p| link(p, heap, linked)).collect();
    Arc::new(RtProto {
        proto: proto.clone(),
        code: CodeStart(proto.code.as_ptr()),
        call: CallShape {
            num_regs: proto.num_regs,
            arity: proto.arity,
            has_rest: proto.has_rest,
            plain: !proto.is_constructor && !proto.is_async,
            inits_fields: matches!(proto.code.first(), Some(Instr::InitFields)),
        },
        consts: consts.into_boxed_slice(),
        atoms: atoms.into_boxed_slice(),
        children,
        ic: proto
            .code
            .iter()
            .scan(0u64, |sites, i| {
                Some(AtomicU64::new(if matches!(i, Instr::CallMethod { .. }) {
                    *sites += 1;
                    *sites << 32
                } else {
                    0
                }))
            })
            .collect(),
        methods: proto
            .code
            .iter()
            .filter(|i| matches!(i, Instr::CallMethod { .. }))
            .map(|_| MethodEntry::default())
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// A small program, linked: property reads, method calls, a tagged
    /// template (two frozen string arrays) and a nested function.
    ///
    /// Under Miri the compiler would take most of an hour, so the same
    /// kinds of constants and instructions are written by hand there.
    fn linked() -> (Arc<RtProto>, Heap, Linked) {
        let entry = if cfg!(miri) { by_hand() } else { compiled() };
        let mut heap = Heap::new();
        let mut linked = Linked::default();
        let rt = link(&entry, &mut heap, &mut linked);
        (rt, heap, linked)
    }

    fn by_hand() -> Arc<FuncProto> {
        let call = |f| Instr::CallMethod { f, name: 1, argc: 1, recv: 0 };
        let child = FuncProto {
            num_regs: 4,
            code: vec![call(1), Instr::Move { dst: 0, src: 1 }, call(2), Instr::Return { src: 0 }],
            consts: vec![Constant::Number(1.0), Constant::String("push".into())],
            ..Default::default()
        };
        Arc::new(FuncProto {
            num_regs: 4,
            code: vec![
                Instr::Move { dst: 1, src: 0 },
                call(1),
                Instr::Move { dst: 2, src: 1 },
                Instr::Return { src: 2 },
            ],
            consts: vec![
                Constant::Number(2.5),
                Constant::String("indexOf".into()),
                Constant::Template { cooked: vec![Some("a\n".into()), None], raw: vec!["a\\n".into(), "\\u".into()] },
            ],
            protos: vec![Arc::new(child)],
            ..Default::default()
        })
    }

    fn compiled() -> Arc<FuncProto> {
        let src = "const o = { a: 1, b: \"two\" };\n\
                   function f(x: number[]): number { x.push(o.a); return x.length + o.a; }\n\
                   const t = (s: TemplateStringsArray, v: number) => s.raw[0] + v;\n\
                   console.log(f([1]), [2].indexOf(2), t`a\\n${o.a}`);";
        crate::compiler::compile_source("link.raya", src).expect("compiles").entry
    }

    fn all(p: &Arc<RtProto>, out: &mut Vec<Arc<RtProto>>) {
        out.push(p.clone());
        for c in p.children.iter() {
            all(c, out);
        }
    }

    /// The call facts and the code start an `RtProto` keeps are its
    /// `FuncProto`'s, for every kind of function a call tells apart.
    #[test]
    fn call_facts_are_the_prototypes() {
        let kinds = [
            FuncProto { num_regs: 7, arity: 2, ..Default::default() },
            FuncProto { num_regs: 5, arity: 1, has_rest: true, ..Default::default() },
            FuncProto { num_regs: 3, is_async: true, ..Default::default() },
            FuncProto { num_regs: 3, is_constructor: true, ..Default::default() },
        ];
        let mut heap = Heap::new();
        let mut linked = Linked::default();
        for mut p in kinds {
            p.code = vec![Instr::LoadUndef { dst: 0 }, Instr::ReturnUndef];
            let p = Arc::new(p);
            let rt = link(&p, &mut heap, &mut linked);
            assert_eq!(rt.code_start(), p.code.as_ptr());
            let c = rt.call;
            assert_eq!((c.num_regs, c.arity, c.has_rest), (p.num_regs, p.arity, p.has_rest));
            assert_eq!(c.plain, !p.is_async && !p.is_constructor);
        }
    }

    /// Every instruction has a cache word of its own, found by its byte
    /// offset; a method call's word names its method cache in the high
    /// half, which the 32-bit view (the low half) never touches.
    #[test]
    fn each_instruction_has_its_own_cache_word() {
        let (root, _heap, linked) = linked();
        assert!(!linked.roots.is_empty() && linked.template_raw.len() == 1, "constants and the template linked");
        let mut protos = Vec::new();
        all(&root, &mut protos);
        let mut methods = 0;
        for p in &protos {
            let size = std::mem::size_of::<Instr>();
            assert_eq!(p.consts.len(), p.proto.consts.len());
            assert_eq!(p.atoms.len(), p.proto.consts.len());
            let mut seen = std::collections::HashSet::new();
            for (i, instr) in p.proto.code.iter().enumerate() {
                // SAFETY: `i * size` is the offset of instruction i.
                let (w, half) = unsafe { (p.ic64_at(i * size), p.ic_at(i * size)) };
                assert!(seen.insert(w as *const AtomicU64 as usize), "one word per instruction");
                assert_eq!(half as *const AtomicU32 as usize, w as *const AtomicU64 as usize);
                let is_method = matches!(instr, Instr::CallMethod { .. });
                assert_eq!(p.method_entry(w).is_some(), is_method, "instruction {i}: {instr:?}");
                half.store(0xDEAD_0000 | i as u32, Ordering::Relaxed);
                assert_eq!(w.load(Ordering::Relaxed) as u32, 0xDEAD_0000 | i as u32, "the low half is the 32-bit view");
                if is_method {
                    methods += 1;
                    assert!(p.method_entry(w).is_some(), "the method cache survives the low half's use");
                }
            }
        }
        assert!(methods >= 2, "the program calls methods ({methods} sites)");
    }

    /// Threads use the cache words of one prototype at once, each through
    /// the width its instruction uses (as workers running one function
    /// do): no word is torn and no site sees another's.
    #[test]
    fn cache_words_are_shared_between_threads() {
        let (root, _heap, _linked) = linked();
        let size = std::mem::size_of::<Instr>();
        let n = root.proto.code.len();
        let rounds = if cfg!(miri) { 20 } else { 2_000 };
        std::thread::scope(|s| {
            for t in 0..2u32 {
                let p = root.clone();
                s.spawn(move || {
                    for r in 0..rounds {
                        // Thread 0 writes the even sites (32-bit), thread 1
                        // the odd ones (64-bit, keeping the high half).
                        for i in (t as usize..n).step_by(2) {
                            // SAFETY: `i * size` is the offset of instruction i.
                            let w = unsafe { p.ic64_at(i * size) };
                            if t == 0 {
                                unsafe { p.ic_at(i * size) }.store(r, Ordering::Relaxed);
                            } else {
                                let high = w.load(Ordering::Relaxed) & !0xFFFF_FFFF;
                                w.store(high | u64::from(r), Ordering::Relaxed);
                            }
                            let _ = p.method_entry(w);
                        }
                    }
                });
            }
        });
        for i in 0..n {
            // SAFETY: as above.
            let w = unsafe { root.ic64_at(i * size) };
            assert_eq!(w.load(Ordering::Relaxed) as u32, rounds - 1, "site {i} holds its own last write");
        }
    }
}
