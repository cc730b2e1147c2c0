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

impl RtProto {
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
