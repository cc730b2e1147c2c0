//! The code generator: function state, registers, constants, jumps,
//! variable locations, functions and statements. Expressions are in
//! `expr.rs`, patterns in `pattern.rs`, classes in `class.rs`.
//!
//! # Registers
//!
//! Register 0 is `this`, then the parameters. Above them the registers are
//! a stack: *locals* (variables, and values a statement keeps for its whole
//! duration such as a `for-of` iterator) sit below `local_top`, and
//! *temporaries* above it. Every expression compiler frees the temporaries
//! it allocated before returning, so at a statement boundary
//! `next_reg == local_top`. An uncaptured `let`/`const` gets its register
//! when its declaration runs (so `let x = f()` calls `f` directly in `x`'s
//! register); captured ones get a cell at the start of their block, before
//! any hoisted function that might capture them is created.
//!
//! # Variables
//!
//! The resolver has decided what each identifier refers to and which
//! bindings are captured. Here each binding gets a [`Loc`] in the function
//! that declares it; a use from a nested function goes through that
//! function's upvalues (`captures`), built on demand as in clox.

use super::decls::{block_decls, dup_safe, pattern_idents, DeclItem};
use super::resolve::{BindKind, BindingId, ConstVal, Ref, Resolution};
use crate::bytecode::*;
use crate::syntax::ast::*;
use crate::syntax::diagnostic::{Diagnostic, FileId};
use crate::syntax::span::Span;
use std::collections::HashMap;
use std::sync::Arc;

/// Where a binding lives in its declaring function's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Loc {
    Reg(Reg),
    Cell(Reg),
}

/// How the current function reaches a variable.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Access<'a> {
    /// A `const` with a literal value.
    Lit(&'a ConstVal),
    Reg(Reg),
    Cell(Reg),
    Upval(u16),
    /// An upvalue holding the value of a binding captured by value.
    Captured(u16),
    Global(u32),
    Undef,
    Num(f64),
    /// A `let`/`const` use the resolver could not prove initialised
    /// (`Resolution::tdz_checks`): where it lives, and its name for the
    /// ReferenceError of `CheckInit`.
    Checked(CheckedLoc, ConstIdx),
}

/// Where a checked binding lives; `Before`: in this function, before its
/// declaration (no location yet), so any access is the error.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum CheckedLoc {
    Reg(Reg),
    Cell(Reg),
    Upval(u16),
    Global(u32),
    Before,
}

/// Which loop `for_of` compiles: `for (… of …)`, `for await (… of …)`,
/// `for (… in …)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum LoopKind {
    Of,
    AwaitOf,
    In,
}

#[derive(Hash, PartialEq, Eq, Clone, Copy)]
enum NumKey {
    Bits(u64),
}

#[derive(Hash, PartialEq, Eq)]
enum ConstKey {
    Num(u64),
    Str(String),
    Private(String),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum JumpKind {
    Loop,
    Switch,
    Select,
    Block,
}

pub(crate) enum Control<'a> {
    Jump {
        labels: Vec<String>,
        kind: JumpKind,
        breaks: Vec<usize>,
        continues: Vec<usize>,
    },
    /// An enclosing `try` (or `catch` of a try with `finally`): leaving it
    /// by a jump pops its handler and runs its `finally` block.
    Try {
        handler_active: bool,
        finalizer: Option<&'a [Stmt]>,
    },
    /// The iterator of an enclosing `for-of` (in register `iter`; its
    /// handler is active): leaving the loop by a jump pops the handler and
    /// closes the iterator (`IterClose`). Pushed just below the loop's
    /// `Jump`, so a `continue` to the loop leaves it open.
    Iter {
        iter: Reg,
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FnKind {
    Normal,
    Method,
    Ctor { derived: bool },
}

/// Maximum registers / constants in one function.
pub(crate) const MAX_REGS: u32 = 65_535;
pub(crate) const MAX_CONSTS: usize = 65_535;

pub(crate) struct FnState<'a> {
    pub proto: FuncProto,
    /// The last position `here` gave (a possible jump target).
    target: Option<usize>,
    const_map: HashMap<ConstKey, u32>,
    /// Binding captured by each upvalue, parallel to `proto.captures`.
    upvals: Vec<BindingId>,
    pub next_reg: u32,
    pub local_top: u32,
    max_reg: u32,
    pub control: Vec<Control<'a>>,
    span: Span,
    /// Numbers used as operands inside the loop being compiled, loaded
    /// once into registers before the outermost loop.
    const_regs: HashMap<NumKey, Reg>,
    /// An `async function*`: `yield e` and `return e` await `e`, and
    /// `yield*` delegates through the async iterator protocol.
    pub async_gen: bool,
}

pub(crate) struct Codegen<'a> {
    pub file: FileId,
    /// The module's source text (to place positions on operators).
    pub src: &'a str,
    pub res: &'a Resolution,
    pub funcs: Vec<FnState<'a>>,
    pub locs: HashMap<BindingId, (usize, Loc)>,
    pub diags: Vec<Diagnostic>,
    /// The private names in scope: one list per enclosing class body
    /// (innermost last), each name (`#x`) with its class-unique key.
    pub privates: Vec<Vec<(String, String)>>,
    /// Compiling the prelude: its classes' private-name keys are numbered
    /// from this count (`p0`, `p1`, …) rather than by the process-wide
    /// counter, so that the prelude compiles to the same bytecode in any
    /// process (its image, `image.rs`) and no user class's key (a plain
    /// number) can equal one of them.
    pub prelude_classes: Option<u32>,
}

pub(crate) type Mark = u32;

impl<'a> Codegen<'a> {
    pub(crate) fn new(file: FileId, src: &'a str, res: &'a Resolution) -> Codegen<'a> {
        Codegen {
            file,
            src,
            res,
            funcs: Vec::new(),
            locs: HashMap::new(),
            diags: Vec::new(),
            privates: Vec::new(),
            prelude_classes: None,
        }
    }

    /// The offset of the first non-blank character at or after `offset`
    /// (the operator after an operand: `=` of an assignment, `[` of an
    /// index), as stack traces place errors there.
    pub(crate) fn op_pos(&self, offset: u32) -> u32 {
        let bytes = self.src.as_bytes();
        let mut i = offset as usize;
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        if i < bytes.len() {
            i as u32
        } else {
            offset
        }
    }

    /// Where an error in evaluating `e` is reported: a member access at its
    /// property name, an index at its `[`, anything else at its start.
    pub(crate) fn node_pos(&self, e: &Expr) -> u32 {
        match &super::decls::unwrap_erased(e).kind {
            ExprKind::Member { property, .. } => property.span.start,
            ExprKind::Index { object, .. } => self.op_pos(object.span.end),
            _ => e.span.start,
        }
    }

    // ---- function state ------------------------------------------------------

    pub(crate) fn f(&mut self) -> &mut FnState<'a> {
        self.funcs.last_mut().expect("no function being compiled")
    }

    fn depth(&self) -> usize {
        self.funcs.len() - 1
    }

    pub(crate) fn push_fn(&mut self, name: &str, span: Span, params_regs: u32) {
        let proto =
            FuncProto { name: name.to_string(), file: self.file, span_start: span.start, ..FuncProto::default() };
        let n = 1 + params_regs;
        self.funcs.push(FnState {
            proto,
            const_map: HashMap::new(),
            upvals: Vec::new(),
            next_reg: n,
            local_top: n,
            max_reg: n,
            control: Vec::new(),
            span,
            const_regs: HashMap::new(),
            async_gen: false,
            target: None,
        });
    }

    pub(crate) fn pop_fn(&mut self) -> FuncProto {
        let st = self.funcs.pop().expect("function");
        let mut p = st.proto;
        if st.max_reg > MAX_REGS {
            self.diags.push(
                Diagnostic::new(
                    self.file,
                    head_span(st.span),
                    "function too large: it needs more than 65,535 registers",
                )
                .with_label("in this function")
                .with_hint("split it into smaller functions"),
            );
        }
        if p.consts.len() > MAX_CONSTS {
            self.diags.push(
                Diagnostic::new(self.file, head_span(st.span), "function too large: it has more than 65,535 constants")
                    .with_label("in this function")
                    .with_hint("split it into smaller functions"),
            );
        }
        p.num_regs = st.max_reg.min(MAX_REGS) as u16;
        p
    }

    /// Adds a finished nested prototype to the current function.
    pub(crate) fn add_proto(&mut self, p: FuncProto) -> u32 {
        self.add_shared_proto(Arc::new(p))
    }

    /// A prototype compiled elsewhere (the prelude's, shared by every
    /// program).
    pub(crate) fn add_shared_proto(&mut self, p: Arc<FuncProto>) -> u32 {
        let f = self.f();
        f.proto.protos.push(p);
        (f.proto.protos.len() - 1) as u32
    }

    // ---- emission -----------------------------------------------------------------

    pub(crate) fn emit(&mut self, i: Instr, pos: u32) -> usize {
        let f = self.f();
        let at = f.proto.code.len();
        // A `Move` right after a `Move` joins it as one `Move2`, unless
        // its position was asked for (`here`): only a jump target is, so
        // no jump can land between the two. (Every target comes from
        // `here`; a `Move` can neither fault nor suspend, so the pair
        // keeps the first one's span.)
        if let (Instr::Move { dst: dst2, src: src2 }, Some(&Instr::Move { dst, src })) = (i, f.proto.code.last()) {
            if f.target != Some(at) {
                f.proto.code[at - 1] = Instr::Move2 { dst, src, dst2, src2 };
                return at - 1;
            }
        }
        f.proto.code.push(i);
        f.proto.spans.push(pos);
        at
    }

    /// The position of the next instruction, which may become a jump
    /// target: it is not merged into the one before it (see `emit`).
    pub(crate) fn here(&mut self) -> usize {
        let f = self.f();
        let at = f.proto.code.len();
        f.target = Some(at);
        at
    }

    pub(crate) fn emit_jmp(&mut self, pos: u32) -> usize {
        self.emit(Instr::Jmp { off: 0 }, pos)
    }

    /// Points the jump at `at` to `target`. A backward jump must be a
    /// safepoint (see `bytecode`): a backward `Jmp` becomes a `Loop`.
    pub(crate) fn patch_to(&mut self, at: usize, target: usize) {
        let off = (target as i64 - (at as i64 + 1)) as i32;
        let f = self.f();
        let code = &mut f.proto.code[at];
        if off < 0 {
            if let Instr::Jmp { .. } = code {
                *code = Instr::Loop { off };
            }
        }
        match code {
            Instr::Loop { off: o }
            | Instr::JmpIfTrue { off: o, .. }
            | Instr::JmpIfFalse { off: o, .. }
            | Instr::JmpIfNotLt { off: o, .. }
            | Instr::JmpIfNotLe { off: o, .. }
            | Instr::JmpIfNotLtI { off: o, .. }
            | Instr::JmpIfNotLeI { off: o, .. }
            | Instr::JmpIfNotGtI { off: o, .. }
            | Instr::JmpIfNotGeI { off: o, .. }
            | Instr::JmpIfNil { off: o, .. }
            | Instr::JmpIfLt { off: o, .. }
            | Instr::JmpIfLe { off: o, .. }
            | Instr::StepJmpIfLt { off: o, .. }
            | Instr::StepJmpIfLe { off: o, .. }
            | Instr::StepJmpIfGt { off: o, .. }
            | Instr::StepJmpIfGe { off: o, .. } => *o = off,
            Instr::Jmp { off: o }
            | Instr::JmpIfNullish { off: o, .. }
            | Instr::JmpIfNotNullish { off: o, .. }
            | Instr::IterNext { off: o, .. }
            | Instr::TryBegin { off: o, .. }
                if off >= 0 =>
            {
                *o = off
            }
            other => panic!("patching {other:?} to jump by {off}"),
        }
    }

    pub(crate) fn patch_here(&mut self, at: usize) {
        let t = self.here();
        self.patch_to(at, t);
    }

    pub(crate) fn patch_all_here(&mut self, list: Vec<usize>) {
        for j in list {
            self.patch_here(j);
        }
    }

    /// A backward jump to `target` (a safepoint).
    pub(crate) fn emit_loop(&mut self, target: usize, pos: u32) {
        let at = self.here();
        let off = (target as i64 - (at as i64 + 1)) as i32;
        self.emit(Instr::Loop { off }, pos);
    }

    // ---- constants --------------------------------------------------------------------

    fn constant(&mut self, key: ConstKey, c: Constant) -> ConstIdx {
        let f = self.f();
        if let Some(&i) = f.const_map.get(&key) {
            return i;
        }
        let i = f.proto.consts.len() as u32;
        f.proto.consts.push(c);
        f.const_map.insert(key, i);
        i
    }

    pub(crate) fn k_str(&mut self, s: &str) -> ConstIdx {
        self.constant(ConstKey::Str(s.to_string()), Constant::String(s.to_string()))
    }

    /// The constant of private name `name` (`#x`) of the innermost
    /// enclosing class that declares it.
    pub(crate) fn k_private(&mut self, name: &str, span: Span) -> ConstIdx {
        let key = self.privates.iter().rev().find_map(|scope| scope.iter().find(|(n, _)| n == name).map(|(_, k)| k));
        match key.cloned() {
            Some(k) => self.constant(ConstKey::Private(k.clone()), Constant::Private(k)),
            None => {
                self.error(
                    span,
                    format!("private field `{name}` must be declared in an enclosing class"),
                    "undeclared private name",
                );
                self.k_str(name)
            }
        }
    }

    /// A tagged template's strings: a constant of its own (each call site
    /// has its own strings array, never shared with another site).
    pub(crate) fn k_template(&mut self, cooked: &[Option<String>], raw: &[String]) -> ConstIdx {
        let f = self.f();
        let i = f.proto.consts.len() as u32;
        f.proto.consts.push(Constant::Template { cooked: cooked.to_vec(), raw: raw.to_vec() });
        i
    }

    /// The constant naming the property of `obj.p` or `obj.#p`.
    pub(crate) fn k_member(&mut self, p: &Ident) -> ConstIdx {
        if p.name.starts_with('#') {
            self.k_private(&p.name, p.span)
        } else {
            self.k_str(&p.name)
        }
    }

    pub(crate) fn k_num(&mut self, n: f64) -> ConstIdx {
        self.constant(ConstKey::Num(n.to_bits()), Constant::Number(n))
    }

    pub(crate) fn load_number(&mut self, dst: Reg, n: f64, pos: u32) {
        if n.fract() == 0.0 && n >= i32::MIN as f64 && n <= i32::MAX as f64 && !(n == 0.0 && n.is_sign_negative()) {
            self.emit(Instr::LoadInt { dst, v: n as i32 }, pos);
        } else {
            let k = self.k_num(n);
            self.emit(Instr::LoadK { dst, k }, pos);
        }
    }

    pub(crate) fn load_const(&mut self, v: &ConstVal, dst: Reg, pos: u32) {
        match v {
            ConstVal::Num(n) => self.load_number(dst, *n, pos),
            ConstVal::Str(s) => self.load_string(dst, s, pos),
            ConstVal::Bool(true) => {
                self.emit(Instr::LoadTrue { dst }, pos);
            }
            ConstVal::Bool(false) => {
                self.emit(Instr::LoadFalse { dst }, pos);
            }
            ConstVal::Null => {
                self.emit(Instr::LoadNull { dst }, pos);
            }
        }
    }

    pub(crate) fn load_string(&mut self, dst: Reg, s: &str, pos: u32) {
        let k = self.k_str(s);
        self.emit(Instr::LoadK { dst, k }, pos);
    }

    // ---- registers ---------------------------------------------------------------------

    pub(crate) fn mark(&mut self) -> Mark {
        self.f().next_reg
    }

    pub(crate) fn free_to(&mut self, m: Mark) {
        let f = self.f();
        debug_assert!(m >= f.local_top, "freeing locals");
        f.next_reg = m.max(f.local_top);
    }

    /// A new temporary register at the top of the stack.
    pub(crate) fn alloc(&mut self) -> Reg {
        let f = self.f();
        let r = f.next_reg;
        f.next_reg += 1;
        f.max_reg = f.max_reg.max(f.next_reg);
        clamp_reg(r)
    }

    /// A new register that stays reserved until the end of the scope.
    pub(crate) fn alloc_local(&mut self) -> Reg {
        let r = self.alloc();
        self.f().local_top = self.f().next_reg;
        r
    }

    /// Makes every register allocated so far a local.
    pub(crate) fn keep_locals(&mut self) {
        let f = self.f();
        f.local_top = f.next_reg;
    }

    pub(crate) fn is_temp(&mut self, r: Reg) -> bool {
        (r as u32) >= self.f().local_top
    }

    pub(crate) fn enter_scope(&mut self) -> (u32, u32) {
        let f = self.f();
        (f.next_reg, f.local_top)
    }

    pub(crate) fn leave_scope(&mut self, m: (u32, u32)) {
        let f = self.f();
        f.next_reg = m.0;
        f.local_top = m.1;
    }

    // ---- variables ------------------------------------------------------------------------

    pub(crate) fn binding(&self, id: BindingId) -> &'a super::resolve::Binding {
        &self.res.bindings[id as usize]
    }

    pub(crate) fn decl_id(&self, ident: &Ident) -> Option<BindingId> {
        self.res.binding_of_decl(ident)
    }

    pub(crate) fn set_loc(&mut self, id: BindingId, loc: Loc) {
        let d = self.depth();
        self.locs.insert(id, (d, loc));
    }

    /// How the current function reaches binding `id`.
    pub(crate) fn access(&mut self, id: BindingId) -> Access<'a> {
        let res = self.res;
        if let Some(v) = res.const_values.get(&id) {
            return Access::Lit(v);
        }
        if let Some(v) = res.bindings[id as usize].global.and_then(|g| res.global_consts.get(&g)) {
            return Access::Lit(v);
        }
        self.access_raw(id)
    }

    /// `access` without constant folding (for initialising the binding).
    fn access_raw(&mut self, id: BindingId) -> Access<'a> {
        let b = self.binding(id);
        if let Some(g) = b.global {
            return Access::Global(g);
        }
        let Some(&(owner, loc)) = self.locs.get(&id) else {
            // Used before its declaration ran (the temporal dead zone).
            return Access::Undef;
        };
        let cur = self.depth();
        if owner == cur {
            return match loc {
                Loc::Reg(r) => Access::Reg(r),
                Loc::Cell(r) => Access::Cell(r),
            };
        }
        if owner > cur {
            return Access::Undef;
        }
        match loc {
            Loc::Cell(r) => Access::Upval(self.upval(cur, id, owner, r)),
            Loc::Reg(r) if b.by_value => Access::Captured(self.upval(cur, id, owner, r)),
            Loc::Reg(_) => {
                let name = b.name.clone();
                let span = b.span;
                self.diags.push(
                    Diagnostic::new(
                        self.file,
                        span,
                        format!("internal compiler error: `{name}` is captured but not in a cell"),
                    )
                    .with_label("this variable"),
                );
                Access::Undef
            }
        }
    }

    fn upval(&mut self, fi: usize, id: BindingId, owner: usize, reg: Reg) -> u16 {
        if let Some(i) = self.funcs[fi].upvals.iter().position(|&b| b == id) {
            return i as u16;
        }
        let cap =
            if fi - 1 == owner { Capture::Local(reg) } else { Capture::Upval(self.upval(fi - 1, id, owner, reg)) };
        let f = &mut self.funcs[fi];
        f.upvals.push(id);
        f.proto.captures.push(cap);
        (f.upvals.len() - 1) as u16
    }

    pub(crate) fn ref_access(&mut self, r: Option<Ref>) -> Access<'a> {
        let res = self.res;
        match r {
            Some(Ref::Local(id)) => self.access(id),
            Some(Ref::Global(g)) => match res.global_consts.get(&g) {
                Some(v) => Access::Lit(v),
                None => Access::Global(g),
            },
            Some(Ref::NaN) => Access::Num(f64::NAN),
            Some(Ref::Infinity) => Access::Num(f64::INFINITY),
            Some(Ref::Undefined) | None => Access::Undef,
        }
    }

    /// Access for a use of `ident` (as recorded by the resolver).
    pub(crate) fn ident_access(&mut self, ident: &Ident) -> Access<'a> {
        let r = self.res.refs.get(&ident.span.start).copied();
        if self.res.tdz_checks.contains(&ident.span.start) {
            let loc = match r {
                Some(Ref::Global(g)) => Some(CheckedLoc::Global(g)),
                Some(Ref::Local(id)) => Some(match self.access_raw(id) {
                    Access::Reg(r) => CheckedLoc::Reg(r),
                    Access::Cell(c) => CheckedLoc::Cell(c),
                    Access::Upval(u) => CheckedLoc::Upval(u),
                    Access::Global(g) => CheckedLoc::Global(g),
                    _ => CheckedLoc::Before,
                }),
                _ => None,
            };
            if let Some(loc) = loc {
                let name = self.k_str(&ident.name);
                return Access::Checked(loc, name);
            }
        }
        self.ref_access(r)
    }

    /// Loads a checked binding into `dst` and checks it.
    fn load_checked(&mut self, loc: CheckedLoc, name: ConstIdx, dst: Reg, pos: u32) {
        match loc {
            CheckedLoc::Reg(r) => {
                if r != dst {
                    self.emit(Instr::Move { dst, src: r }, pos);
                }
            }
            CheckedLoc::Cell(c) => {
                self.emit(Instr::CellGet { dst, cell: c }, pos);
            }
            CheckedLoc::Upval(idx) => {
                self.emit(Instr::GetUpval { dst, idx }, pos);
            }
            CheckedLoc::Global(idx) => {
                self.emit(Instr::GetGlobal { dst, idx }, pos);
            }
            CheckedLoc::Before => {
                self.emit(Instr::LoadHole { dst }, pos);
            }
        }
        self.emit(Instr::CheckInit { src: dst, name }, pos);
    }

    pub(crate) fn load_access(&mut self, a: Access<'a>, dst: Reg, pos: u32) {
        match a {
            Access::Lit(v) => self.load_const(v, dst, pos),
            Access::Reg(r) => {
                if r != dst {
                    self.emit(Instr::Move { dst, src: r }, pos);
                }
            }
            Access::Cell(c) => {
                self.emit(Instr::CellGet { dst, cell: c }, pos);
            }
            Access::Upval(idx) => {
                self.emit(Instr::GetUpval { dst, idx }, pos);
            }
            Access::Captured(idx) => {
                self.emit(Instr::GetCapture { dst, idx }, pos);
            }
            Access::Global(idx) => {
                self.emit(Instr::GetGlobal { dst, idx }, pos);
            }
            Access::Undef => {
                self.emit(Instr::LoadUndef { dst }, pos);
            }
            Access::Num(n) => self.load_number(dst, n, pos),
            Access::Checked(loc, name) => self.load_checked(loc, name, dst, pos),
        }
    }

    pub(crate) fn store_access(&mut self, a: Access<'a>, src: Reg, pos: u32) {
        match a {
            Access::Lit(_) => {}
            Access::Reg(r) => {
                if r != src {
                    self.emit(Instr::Move { dst: r, src }, pos);
                }
            }
            Access::Cell(c) => {
                self.emit(Instr::CellSet { cell: c, src }, pos);
            }
            Access::Upval(idx) => {
                self.emit(Instr::SetUpval { idx, src }, pos);
            }
            Access::Captured(_) => {
                // The resolver captures by value only what no closure assigns.
                let d = Diagnostic::new(
                    self.file,
                    Span::new(pos as usize, pos as usize),
                    "internal compiler error: assignment to a variable captured by value",
                );
                self.diags.push(d.with_label("here"));
            }
            Access::Global(idx) => {
                self.emit(Instr::SetGlobal { idx, src }, pos);
            }
            Access::Undef | Access::Num(_) => {}
            Access::Checked(loc, name) => {
                // A write in the dead zone is an error too: check first.
                let m = self.mark();
                let t = match loc {
                    CheckedLoc::Reg(r) => r,
                    _ => self.alloc(),
                };
                self.load_checked(loc, name, t, pos);
                self.free_to(m);
                let a = match loc {
                    CheckedLoc::Reg(r) => Access::Reg(r),
                    CheckedLoc::Cell(c) => Access::Cell(c),
                    CheckedLoc::Upval(u) => Access::Upval(u),
                    CheckedLoc::Global(g) => Access::Global(g),
                    CheckedLoc::Before => return,
                };
                self.store_access(a, src, pos);
            }
        }
    }

    /// Initialises the binding declared by `ident` with R[src] (its
    /// location must have been set up: a cell, a register, or a global).
    pub(crate) fn init_decl(&mut self, ident: &Ident, src: Reg) {
        let Some(id) = self.decl_id(ident) else { return };
        let a = self.access_raw(id);
        self.store_access(a, src, ident.span.start);
    }

    /// Gives each identifier of a declaration pattern a location, if it has
    /// none yet in this scope: a register for uncaptured ones (allocated as
    /// locals now), a cell register for captured ones (with `NewCell` when
    /// `new_cells`). Globals need nothing.
    pub(crate) fn alloc_pattern(&mut self, p: &'a Pattern, new_cells: bool) {
        let mut ids = Vec::new();
        pattern_idents(p, &mut ids);
        for i in ids {
            self.alloc_binding(i, new_cells);
        }
    }

    pub(crate) fn alloc_binding(&mut self, ident: &Ident, new_cells: bool) {
        let Some(id) = self.decl_id(ident) else { return };
        let b = self.binding(id);
        if b.global.is_some() {
            return;
        }
        let r = self.alloc_local();
        if b.captured {
            if new_cells {
                self.emit(Instr::NewCell { dst: r }, ident.span.start);
                self.hole_cell(id, r, ident.span.start);
            }
            self.set_loc(id, Loc::Cell(r));
        } else {
            if self.res.tdz_bindings.contains(&id) {
                self.emit(Instr::LoadHole { dst: r }, ident.span.start);
            }
            self.set_loc(id, Loc::Reg(r));
        }
    }

    /// A checked binding's fresh cell holds the hole until its declaration.
    fn hole_cell(&mut self, id: BindingId, cell: Reg, pos: u32) {
        if self.res.tdz_bindings.contains(&id) {
            let m = self.mark();
            let t = self.alloc();
            self.emit(Instr::LoadHole { dst: t }, pos);
            self.emit(Instr::CellSet { cell, src: t }, pos);
            self.free_to(m);
        }
    }

    /// `NewCell` again for every captured identifier of `p` (fresh
    /// per-iteration bindings).
    pub(crate) fn fresh_cells(&mut self, p: &'a Pattern) {
        let mut ids = Vec::new();
        pattern_idents(p, &mut ids);
        for i in ids {
            if let Some(id) = self.decl_id(i) {
                if let Some(&(_, Loc::Cell(c))) = self.locs.get(&id) {
                    self.emit(Instr::NewCell { dst: c }, i.span.start);
                    self.hole_cell(id, c, i.span.start);
                }
            }
        }
    }

    /// Start of a block: every captured `let`/`const`/`class` gets its cell
    /// and every function declaration a location. (Uncaptured variables
    /// get registers when their declaration runs.)
    pub(crate) fn hoist_cells(&mut self, stmts: &'a [Stmt]) {
        let mut items = Vec::new();
        block_decls(stmts, &mut items);
        for it in items {
            let ident = it.ident();
            let Some(id) = self.decl_id(ident) else { continue };
            let b = self.binding(id);
            if b.global.is_some() {
                continue;
            }
            match it {
                DeclItem::Function(..) => self.alloc_binding(ident, true),
                _ => {
                    if b.captured {
                        self.alloc_binding(ident, true);
                    } else {
                        self.locs.remove(&id);
                    }
                }
            }
        }
    }

    /// Creates the closures of the block's function declarations (hoisted:
    /// callable before their declaration).
    pub(crate) fn hoist_functions(&mut self, stmts: &'a [Stmt]) {
        let mut items = Vec::new();
        block_decls(stmts, &mut items);
        for it in items {
            if let DeclItem::Function(f, ident) = it {
                let m = self.mark();
                let t = self.alloc();
                let idx = self.function(f, &ident.name, FnKind::Normal);
                self.emit(Instr::Closure { dst: t, proto: idx }, f.span.start);
                self.init_decl(ident, t);
                self.free_to(m);
            }
        }
    }

    pub(crate) fn hoist_block(&mut self, stmts: &'a [Stmt]) {
        self.hoist_cells(stmts);
        self.hoist_functions(stmts);
    }

    // ---- functions ----------------------------------------------------------------------

    /// Compiles a function into a nested prototype of the current function
    /// and returns its index (for `Closure`).
    pub(crate) fn function(&mut self, f: &'a Function, name: &str, kind: FnKind) -> u32 {
        let arity = f.params.iter().filter(|p| !p.rest).count() as u32;
        let has_rest = f.params.iter().any(|p| p.rest);
        let js_length = f.params.iter().take_while(|p| !p.rest && p.default.is_none()).count();
        self.push_fn(name, f.span, arity + has_rest as u32);
        {
            let st = self.f();
            st.proto.arity = arity.min(u16::MAX as u32) as u16;
            st.proto.length = js_length.min(u16::MAX as usize) as u16;
            st.proto.has_rest = has_rest;
            // Calling an async generator function makes its generator at
            // once, on the caller's task: only its `next()` requests are
            // asynchronous.
            st.proto.is_async = f.is_async && !f.is_generator;
            st.async_gen = f.is_async && f.is_generator;
            st.proto.is_arrow = f.is_arrow;
            st.proto.is_generator = f.is_generator;
            if let FnKind::Ctor { derived } = kind {
                st.proto.is_constructor = true;
                st.proto.is_derived = derived;
            }
        }
        let pos = f.span.start;
        if kind == (FnKind::Ctor { derived: false }) {
            self.emit(Instr::InitFields, pos);
        }
        if !f.is_arrow {
            let this_id = self.res.this_of.get(&f.span.start).copied();
            self.setup_this(this_id, pos);
        }
        let body_stmts: &'a [Stmt] = match &f.body {
            FunctionBody::Block(b) => b,
            FunctionBody::Expr(_) => &[],
        };
        // Cells first (closures in defaults or hoisted functions may capture
        // any of them), then parameters in order, then hoisted functions.
        let mut param_regs = Vec::new();
        let mut next_param = 1u32;
        for p in &f.params {
            let reg = if p.rest { 1 + arity } else { next_param };
            if !p.rest {
                next_param += 1;
            }
            let reg = clamp_reg(reg);
            param_regs.push(reg);
            match &p.pattern.kind {
                PatternKind::Ident(i) => {
                    if let Some(id) = self.decl_id(i) {
                        if self.binding(id).captured {
                            let c = self.alloc_local();
                            self.emit(Instr::NewCell { dst: c }, i.span.start);
                            self.set_loc(id, Loc::Cell(c));
                        } else {
                            self.set_loc(id, Loc::Reg(reg));
                        }
                    }
                }
                _ => self.alloc_pattern(&p.pattern, true),
            }
        }
        self.hoist_cells(body_stmts);
        for (p, &reg) in f.params.iter().zip(&param_regs) {
            let hint = match &p.pattern.kind {
                PatternKind::Ident(i) => Some(i.name.as_str()),
                _ => None,
            };
            if let Some(d) = &p.default {
                self.apply_default(reg, d, hint);
            }
            match &p.pattern.kind {
                PatternKind::Ident(i) => {
                    if let Some(id) = self.decl_id(i) {
                        if let Some(&(_, Loc::Cell(c))) = self.locs.get(&id) {
                            self.emit(Instr::CellSet { cell: c, src: reg }, i.span.start);
                        }
                    }
                }
                _ => self.bind_pattern(&p.pattern, reg, true),
            }
        }
        self.hoist_functions(body_stmts);
        if f.is_generator {
            // The arguments are bound (defaults run at the call, as in JS):
            // from here on the frame belongs to the generator object.
            if f.is_async {
                self.emit(Instr::AsyncGenStart, pos);
            } else {
                self.emit(Instr::GenStart, pos);
            }
        }
        match &f.body {
            FunctionBody::Block(stmts) => {
                self.stmts(stmts);
                let end = f.span.end.saturating_sub(1).max(f.span.start);
                self.emit(Instr::ReturnUndef, end);
            }
            FunctionBody::Expr(e) => {
                let m = self.mark();
                let r = self.expr_reg(e);
                self.emit(Instr::Return { src: r }, e.span.start);
                self.free_to(m);
            }
        }
        let proto = self.pop_fn();
        self.add_proto(proto)
    }

    /// Puts `this` in a cell when arrow functions capture it.
    pub(crate) fn setup_this(&mut self, this_id: Option<BindingId>, pos: u32) {
        if let Some(id) = this_id {
            if self.binding(id).captured {
                let c = self.alloc_local();
                self.emit(Instr::NewCell { dst: c }, pos);
                self.emit(Instr::CellSet { cell: c, src: 0 }, pos);
                self.set_loc(id, Loc::Cell(c));
            } else {
                self.set_loc(id, Loc::Reg(0));
            }
        }
    }

    /// `if (R[reg] === undefined) R[reg] = default`.
    pub(crate) fn apply_default(&mut self, reg: Reg, default: &'a Expr, name: Option<&str>) {
        let pos = default.span.start;
        let m = self.mark();
        let t = self.alloc();
        self.emit(Instr::LoadUndef { dst: t }, pos);
        self.emit(Instr::StrictEq { dst: t, a: reg, b: t }, pos);
        let skip = self.emit(Instr::JmpIfFalse { cond: t, off: 0 }, pos);
        self.free_to(m);
        if self.is_temp(reg) || !super::expr::needs_temp(default) {
            self.expr_named(default, reg, name);
        } else {
            let t = self.alloc();
            self.expr_named(default, t, name);
            self.emit(Instr::Move { dst: reg, src: t }, pos);
            self.free_to(m);
        }
        self.patch_here(skip);
    }

    // ---- statements ------------------------------------------------------------------------

    pub(crate) fn stmts(&mut self, stmts: &'a [Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    pub(crate) fn stmt(&mut self, s: &'a Stmt) {
        self.stmt_labeled(s, Vec::new());
        let f = self.f();
        f.next_reg = f.local_top;
    }

    /// A block in its own scope.
    pub(crate) fn block(&mut self, stmts: &'a [Stmt]) {
        let sc = self.enter_scope();
        self.hoist_block(stmts);
        self.stmts(stmts);
        self.leave_scope(sc);
    }

    /// The body of an `if`/loop: a lone declaration gets its own scope.
    fn sub_stmt(&mut self, s: &'a Stmt) {
        match &s.kind {
            StmtKind::Var(_) | StmtKind::Function(_) | StmtKind::Class(_) => self.block(std::slice::from_ref(s)),
            _ => self.stmt(s),
        }
    }

    fn stmt_labeled(&mut self, s: &'a Stmt, labels: Vec<String>) {
        if super::decls::is_loop(s) && self.f().const_regs.is_empty() {
            self.loop_with_hoisted_consts(s, labels);
            return;
        }
        self.stmt_inner(s, labels);
    }

    /// The outermost loop of a nest: the numbers its arithmetic and
    /// comparisons use as operands are loaded into registers once, before
    /// the loop, instead of on every iteration.
    fn loop_with_hoisted_consts(&mut self, s: &'a Stmt, labels: Vec<String>) {
        const MAX_HOISTED: usize = 32;
        let mut nums: Vec<f64> = Vec::new();
        {
            let mut add = |n: f64| {
                if nums.len() < MAX_HOISTED && !nums.iter().any(|m| m.to_bits() == n.to_bits()) {
                    nums.push(n);
                }
            };
            let res = self.res;
            let num_of = |e: &Expr| -> Option<f64> { const_number(res, e) };
            super::decls::visit_stmt_exprs(s, &mut |e: &'a Expr| match &e.kind {
                ExprKind::Binary(op, a, b) => {
                    if let Some(n) = num_of(a) {
                        add(n);
                    }
                    if super::expr::imm_operand(*op, b).is_none() {
                        if let Some(n) = num_of(b) {
                            add(n);
                        }
                    }
                }
                ExprKind::Index { index, .. } => {
                    if let Some(n) = num_of(index) {
                        add(n);
                    }
                }
                ExprKind::Assign { op: AssignOp::Compound(bop), value, .. }
                    if super::expr::addi_imm(*bop, value).is_none() =>
                {
                    if let Some(n) = num_of(value) {
                        add(n);
                    }
                }
                _ => {}
            });
        }
        let sc = self.enter_scope();
        for n in nums {
            let r = self.alloc_local();
            self.load_number(r, n, s.span.start);
            self.f().const_regs.insert(NumKey::Bits(n.to_bits()), r);
        }
        self.stmt_inner(s, labels);
        self.f().const_regs.clear();
        self.leave_scope(sc);
    }

    /// The register holding number `e` before the current loop, if any.
    pub(crate) fn hoisted_const(&mut self, e: &Expr) -> Option<Reg> {
        if self.f().const_regs.is_empty() {
            return None;
        }
        let n = const_number(self.res, e)?;
        self.f().const_regs.get(&NumKey::Bits(n.to_bits())).copied()
    }

    fn stmt_inner(&mut self, s: &'a Stmt, labels: Vec<String>) {
        let pos = s.span.start;
        match &s.kind {
            StmtKind::Expr(e) => self.expr_effect(e),
            StmtKind::Var(d) => self.var_decl(d),
            StmtKind::Function(_) => {} // hoisted
            StmtKind::Class(c) => self.class_decl(c),
            StmtKind::Enum(e) => self.enum_decl(e, pos),
            StmtKind::TypeAlias { .. }
            | StmtKind::Interface { .. }
            | StmtKind::Empty
            | StmtKind::Import(_)
            | StmtKind::ExportList(_) => {}
            StmtKind::Export(inner) => self.stmt_inner(inner, labels),
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { cond, then, otherwise } => {
                let to_else = self.cond_jump(cond, false);
                self.sub_stmt(then);
                match otherwise {
                    Some(o) => {
                        let to_end = self.emit_jmp(pos);
                        self.patch_all_here(to_else);
                        self.sub_stmt(o);
                        self.patch_here(to_end);
                    }
                    None => self.patch_all_here(to_else),
                }
            }
            StmtKind::While { cond, body } => {
                if dup_safe(cond) {
                    let exits = self.cond_jump(cond, false);
                    let top = self.here();
                    let (breaks, continues) = self.loop_body(body, labels);
                    self.patch_all_here(continues);
                    self.loop_test(cond, top);
                    self.patch_all_here(exits);
                    self.patch_all_here(breaks);
                } else {
                    let top = self.here();
                    let exits = self.cond_jump(cond, false);
                    let (breaks, continues) = self.loop_body(body, labels);
                    for c in continues {
                        self.patch_to(c, top);
                    }
                    self.emit_loop(top, pos);
                    self.patch_all_here(exits);
                    self.patch_all_here(breaks);
                }
            }
            StmtKind::DoWhile { body, cond } => {
                let top = self.here();
                let (breaks, continues) = self.loop_body(body, labels);
                self.patch_all_here(continues);
                self.loop_test(cond, top);
                self.patch_all_here(breaks);
            }
            StmtKind::For { init, cond, update, body } => self.for_stmt(init, cond, update, body, labels, pos),
            StmtKind::ForOf { decl, target, iterable, body, is_await } => {
                let kind = if *is_await { LoopKind::AwaitOf } else { LoopKind::Of };
                self.for_of(*decl, target, iterable, body, labels, kind, pos)
            }
            StmtKind::ForIn { decl, target, object, body } => {
                self.for_of(*decl, target, object, body, labels, LoopKind::In, pos)
            }
            StmtKind::Break(label) => self.jump_stmt(label.as_ref(), false, pos),
            StmtKind::Continue(label) => self.jump_stmt(label.as_ref(), true, pos),
            StmtKind::Return(e) => self.return_stmt(e.as_ref(), pos),
            StmtKind::Throw(e) => {
                let m = self.mark();
                let r = self.expr_reg(e);
                self.emit(Instr::Throw { src: r }, e.span.start);
                self.free_to(m);
            }
            StmtKind::Try { block, handler, finalizer } => {
                self.try_stmt(block, handler.as_ref(), finalizer.as_deref(), pos)
            }
            StmtKind::Switch { discriminant, cases } => self.switch_stmt(discriminant, cases, labels, pos),
            StmtKind::Labeled { label, body } => {
                let mut labels = labels;
                labels.push(label.name.clone());
                if matches!(body.kind, StmtKind::Labeled { .. }) || super::decls::is_loop(body) {
                    self.stmt_labeled(body, labels);
                } else {
                    self.f().control.push(Control::Jump {
                        labels,
                        kind: JumpKind::Block,
                        breaks: Vec::new(),
                        continues: Vec::new(),
                    });
                    self.sub_stmt(body);
                    if let Some(Control::Jump { breaks, .. }) = self.f().control.pop() {
                        self.patch_all_here(breaks);
                    }
                }
            }
            StmtKind::Select(cases) => self.select_stmt(cases, labels, pos),
        }
    }

    /// Compiles a loop body inside its break/continue context; returns the
    /// pending (breaks, continues).
    fn loop_body(&mut self, body: &'a Stmt, labels: Vec<String>) -> (Vec<usize>, Vec<usize>) {
        self.f().control.push(Control::Jump {
            labels,
            kind: JumpKind::Loop,
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        self.sub_stmt(body);
        match self.f().control.pop() {
            Some(Control::Jump { breaks, continues, .. }) => (breaks, continues),
            _ => (Vec::new(), Vec::new()),
        }
    }

    pub(crate) fn var_decl(&mut self, d: &'a VarDecl) {
        for decl in &d.decls {
            match &decl.target.kind {
                PatternKind::Ident(ident) => self.declare_ident(ident, decl.init.as_ref()),
                _ => {
                    self.alloc_pattern_uncaptured(&decl.target);
                    let m = self.mark();
                    let t = self.alloc();
                    match &decl.init {
                        Some(init) => self.expr(init, t),
                        None => {
                            self.emit(Instr::LoadUndef { dst: t }, decl.target.span.start);
                        }
                    }
                    self.bind_pattern(&decl.target, t, true);
                    self.free_to(m);
                }
            }
        }
    }

    /// Registers for the uncaptured names of a declaration pattern that
    /// have no location yet (captured ones got cells at block entry).
    fn alloc_pattern_uncaptured(&mut self, p: &'a Pattern) {
        let mut ids = Vec::new();
        pattern_idents(p, &mut ids);
        for i in ids {
            if let Some(id) = self.decl_id(i) {
                let b = self.binding(id);
                if b.global.is_none() && (!b.captured || !self.locs.contains_key(&id)) {
                    self.alloc_binding(i, true);
                }
            }
        }
    }

    /// `let x = init` / `const x = init`.
    fn declare_ident(&mut self, ident: &'a Ident, init: Option<&'a Expr>) {
        let Some(id) = self.decl_id(ident) else { return };
        let b = self.binding(id);
        let pos = ident.span.start;
        let has_cell = matches!(self.locs.get(&id), Some(&(d, Loc::Cell(_))) if d == self.depth());
        if b.global.is_none() && (!b.captured || !has_cell) {
            if b.captured {
                // Not hoisted (unusual position): make its cell now.
                self.alloc_binding(ident, true);
            } else {
                // The variable's register is the next free one: compute the
                // initialiser straight into it.
                let m = self.mark();
                let r = self.alloc();
                match init {
                    Some(e) => self.expr_named(e, r, Some(&ident.name)),
                    None => {
                        self.emit(Instr::LoadUndef { dst: r }, pos);
                    }
                }
                self.free_to(m + 1);
                self.keep_locals();
                self.set_loc(id, Loc::Reg(r));
                return;
            }
        }
        let Some(e) = init else {
            // A cell or global that may hold the hole needs the undefined.
            if b.global.is_some() || self.res.tdz_bindings.contains(&id) {
                let m = self.mark();
                let t = self.alloc();
                self.emit(Instr::LoadUndef { dst: t }, pos);
                self.init_decl(ident, t);
                self.free_to(m);
            }
            return;
        };
        let m = self.mark();
        let t = self.alloc();
        self.expr_named(e, t, Some(&ident.name));
        self.init_decl(ident, t);
        self.free_to(m);
    }

    /// `enum E { ... }`, compiled to the object TypeScript emits: each
    /// member `E.A = value`, and for a value that is not a string the
    /// reverse mapping `E[value] = "A"`. A member without an initialiser is
    /// the previous member plus one (0 for the first). Members are also
    /// local constants for the initialisers after them.
    fn enum_decl(&mut self, e: &'a EnumDecl, pos: u32) {
        if let Some(id) = self.decl_id(&e.name) {
            if self.binding(id).global.is_none() && !self.locs.contains_key(&id) {
                self.alloc_binding(&e.name, true);
            }
        }
        let sc = self.enter_scope();
        for mem in &e.members {
            self.alloc_binding(&mem.name, true);
        }
        let obj = self.alloc_local();
        // The previous member's value, in `prev_reg` unless it was a literal.
        let prev_reg = self.alloc_local();
        enum Prev {
            Num(f64),
            Str,
            /// A constant expression (TypeScript's "constant enum
            /// expression"), computed at run time.
            Reg,
            /// Anything else: the next member needs an initialiser.
            Computed,
        }
        let names: Vec<&str> = e.members.iter().map(|m| m.name.name.as_str()).collect();
        self.emit(Instr::NewObject { dst: obj }, pos);
        // The initialisers may name the enum itself (`B = E.A + 1`): it is
        // the object being filled, as in TypeScript's output.
        self.init_decl(&e.name, obj);
        let mut prev = Prev::Num(-1.0);
        for mem in &e.members {
            let at = mem.name.span.start;
            let m = self.mark();
            let v = self.alloc();
            let known = match &mem.init {
                Some(init) => {
                    self.expr(init, v);
                    match (super::decls::number_literal(init), &super::decls::unwrap_erased(init).kind) {
                        (Some(n), _) => Prev::Num(n),
                        (None, ExprKind::String(_) | ExprKind::Template(_)) => Prev::Str,
                        _ if enum_constant(init, &names, &e.name.name) => Prev::Reg,
                        _ => Prev::Computed,
                    }
                }
                None => match prev {
                    Prev::Num(n) => {
                        self.load_number(v, n + 1.0, at);
                        Prev::Num(n + 1.0)
                    }
                    Prev::Reg => {
                        let one = self.alloc();
                        self.load_number(one, 1.0, at);
                        self.emit(Instr::Add { dst: v, a: prev_reg, b: one }, at);
                        Prev::Reg
                    }
                    Prev::Str | Prev::Computed => {
                        self.error(mem.name.span, "enum member must have an initializer", "no initializer");
                        Prev::Computed
                    }
                },
            };
            self.init_decl(&mem.name, v);
            let k = self.k_str(&mem.name.name);
            self.emit(Instr::DefineProp { obj, name: k, src: v }, at);
            let name = self.alloc();
            self.emit(Instr::LoadK { dst: name, k }, at);
            match known {
                Prev::Num(_) => {
                    self.emit(Instr::DefineIndex { obj, key: v, src: name }, at);
                }
                Prev::Str => {}
                // TypeScript maps a computed value back whatever it is.
                Prev::Computed => {
                    self.emit(Instr::DefineIndex { obj, key: v, src: name }, at);
                }
                Prev::Reg => {
                    // Only a string value has no reverse mapping.
                    let t = self.alloc();
                    self.emit(Instr::TypeOf { dst: t, src: v }, at);
                    let s = self.alloc();
                    self.load_string(s, "string", at);
                    self.emit(Instr::StrictEq { dst: t, a: t, b: s }, at);
                    let skip = self.emit(Instr::JmpIfTrue { cond: t, off: 0 }, at);
                    self.emit(Instr::DefineIndex { obj, key: v, src: name }, at);
                    self.patch_here(skip);
                    self.emit(Instr::Move { dst: prev_reg, src: v }, at);
                }
            }
            prev = known;
            self.free_to(m);
        }
        self.leave_scope(sc);
    }

    fn class_decl(&mut self, c: &'a Class) {
        let Some(ident) = &c.name else { return };
        let Some(id) = self.decl_id(ident) else { return };
        let b = self.binding(id);
        if b.global.is_none() && !b.captured {
            let r = self.alloc_local();
            self.set_loc(id, Loc::Reg(r));
            self.class(c, r, &ident.name, None);
        } else {
            if b.global.is_none() && !self.locs.contains_key(&id) {
                self.alloc_binding(ident, true);
            }
            let m = self.mark();
            let t = self.alloc();
            self.class(c, t, &ident.name, Some(ident));
            self.free_to(m);
        }
    }

    fn for_stmt(
        &mut self,
        init: &'a Option<ForInit>,
        cond: &'a Option<Expr>,
        update: &'a Option<Expr>,
        body: &'a Stmt,
        labels: Vec<String>,
        pos: u32,
    ) {
        let sc = self.enter_scope();
        // Captured loop variables get a fresh cell per iteration.
        let mut per_iter: Vec<Reg> = Vec::new();
        match init {
            Some(ForInit::Var(d)) => {
                for decl in &d.decls {
                    let mut ids = Vec::new();
                    pattern_idents(&decl.target, &mut ids);
                    for i in ids {
                        if let Some(id) = self.decl_id(i) {
                            let b = self.binding(id);
                            if b.captured && b.global.is_none() {
                                self.alloc_binding(i, true);
                                if let Some(&(_, Loc::Cell(c))) = self.locs.get(&id) {
                                    per_iter.push(c);
                                }
                            } else {
                                self.locs.remove(&id);
                            }
                        }
                    }
                }
                self.var_decl(d);
            }
            Some(ForInit::Expr(e)) => self.expr_effect(e),
            None => {}
        }
        self.copy_cells(&per_iter, pos);
        // With a condition that can be compiled twice, the loop is tested
        // once before it starts and then at the bottom of each iteration.
        let bottom_test = cond.as_ref().filter(|c| dup_safe(c));
        let mut exits = Vec::new();
        if let Some(c) = bottom_test {
            exits = self.cond_jump(c, false);
        }
        let top = self.here();
        if let (Some(c), None) = (cond, bottom_test) {
            exits = self.cond_jump(c, false);
        }
        let (breaks, continues) = self.loop_body(body, labels);
        self.patch_all_here(continues);
        self.copy_cells(&per_iter, pos);
        let step_at = self.here();
        if let Some(u) = update {
            self.expr_effect(u);
        }
        let test_at = self.here();
        match bottom_test {
            Some(c) => {
                self.loop_test(c, top);
                self.fuse_step(step_at, test_at, top);
            }
            None => self.emit_loop(top, pos),
        }
        self.patch_all_here(exits);
        self.patch_all_here(breaks);
        self.leave_scope(sc);
    }

    /// The test at the bottom of a loop: jumps back to `top` (a safepoint)
    /// while `cond` holds.
    fn loop_test(&mut self, cond: &'a Expr, top: usize) {
        for j in self.cond_jump(cond, true) {
            self.patch_to(j, top);
        }
    }

    /// When the bottom of a `for` loop is exactly a counter step (`AddI`
    /// at `step_at`) and a compare-and-jump back to `top` on that counter
    /// (at `test_at`, the last instruction), puts a `StepJmpIf…` that does
    /// both in front of them (see `Instr::StepJmpIfLt`). Nothing jumps into
    /// the two but `continue`, which now reaches the fused instruction.
    fn fuse_step(&mut self, step_at: usize, test_at: usize, top: usize) {
        let code = &self.f().proto.code;
        if step_at + 1 != test_at || test_at + 1 != code.len() {
            return;
        }
        let Instr::AddI { dst, src, imm, .. } = code[step_at] else { return };
        if dst != src {
            return;
        }
        let off = (top as i64 - (step_at as i64 + 1)) as i32;
        let fused = match code[test_at] {
            Instr::JmpIfLt { a, b, .. } if a == dst && b != dst => Instr::StepJmpIfLt { r: dst, b, imm, off },
            Instr::JmpIfLe { a, b, .. } if a == dst && b != dst => Instr::StepJmpIfLe { r: dst, b, imm, off },
            Instr::JmpIfLt { a, b, .. } if b == dst && a != dst => Instr::StepJmpIfGt { r: dst, b: a, imm, off },
            Instr::JmpIfLe { a, b, .. } if b == dst && a != dst => Instr::StepJmpIfGe { r: dst, b: a, imm, off },
            _ => return,
        };
        let f = self.f();
        let span = f.proto.spans[step_at];
        f.proto.code.insert(step_at, fused);
        f.proto.spans.insert(step_at, span);
        // The written-out test moved one further from its target.
        self.patch_to(test_at + 1, top);
    }

    /// CreatePerIterationEnvironment: each cell in `cells` is replaced by
    /// a new cell holding the same value.
    fn copy_cells(&mut self, cells: &[Reg], pos: u32) {
        if cells.is_empty() {
            return;
        }
        let m = self.mark();
        let t = self.alloc();
        for &c in cells {
            self.emit(Instr::CellGet { dst: t, cell: c }, pos);
            self.emit(Instr::NewCell { dst: c }, pos);
            self.emit(Instr::CellSet { cell: c, src: t }, pos);
        }
        self.free_to(m);
    }

    #[allow(clippy::too_many_arguments)]
    fn for_of(
        &mut self,
        decl: Option<VarKind>,
        target: &'a Pattern,
        iterable: &'a Expr,
        body: &'a Stmt,
        labels: Vec<String>,
        kind: LoopKind,
        pos: u32,
    ) {
        let is_in = kind == LoopKind::In;
        let sc = self.enter_scope();
        let it = self.alloc_local();
        self.expr(iterable, it);
        if is_in {
            self.emit(Instr::ForInKeys { dst: it, src: it }, iterable.span.start);
        }
        if kind == LoopKind::AwaitOf {
            self.for_await_source(iterable, it);
        }
        self.emit(Instr::GetIter { dst: it, src: it }, iterable.span.start);
        // A throw out of the loop closes the iterator (a generator runs its
        // `finally` blocks) and goes on; so do `break` and `return`
        // (`unwind_to`). Built-in iterators make that a no-op.
        let exc = if is_in { None } else { Some(self.alloc_local()) };
        let begin = exc.map(|exc| self.emit(Instr::TryBegin { exc, off: 0 }, pos));
        if exc.is_some() {
            self.f().control.push(Control::Iter { iter: it });
        }
        // The loop variable(s): one register or cell each, reserved here;
        // captured ones get a new cell every iteration.
        let direct = match (&target.kind, decl) {
            (PatternKind::Ident(i), Some(_)) => self.decl_id(i).and_then(|id| {
                let b = self.binding(id);
                (!b.captured && b.global.is_none()).then_some(id)
            }),
            _ => None,
        };
        if decl.is_some() {
            let mut ids = Vec::new();
            pattern_idents(target, &mut ids);
            for i in ids {
                if let Some(id) = self.decl_id(i) {
                    self.locs.remove(&id);
                }
                self.alloc_binding(i, false);
            }
        }
        let top = self.here();
        let exit;
        if let Some(id) = direct {
            let r = match self.locs.get(&id) {
                Some(&(_, Loc::Reg(r))) => r,
                _ => 0,
            };
            exit = self.emit(Instr::IterNext { dst: r, iter: it, off: 0 }, pos);
        } else {
            let v = self.alloc_local();
            exit = self.emit(Instr::IterNext { dst: v, iter: it, off: 0 }, pos);
            if decl.is_some() {
                self.fresh_cells(target);
            }
            self.bind_pattern(target, v, decl.is_some());
        }
        let (breaks, continues) = self.loop_body(body, labels);
        for c in continues {
            self.patch_to(c, top);
        }
        self.emit_loop(top, pos);
        self.patch_here(exit);
        if let (Some(exc), Some(begin)) = (exc, begin) {
            self.f().control.pop();
            self.emit(Instr::TryEnd, pos);
            let end = self.emit_jmp(pos);
            self.patch_here(begin);
            self.emit(Instr::IterClose { iter: it }, pos);
            self.emit(Instr::Throw { src: exc }, pos);
            self.patch_here(end);
        }
        self.patch_all_here(breaks);
        self.leave_scope(sc);
    }

    fn jump_stmt(&mut self, label: Option<&Ident>, is_continue: bool, pos: u32) {
        let control = &self.f().control;
        let mut target = None;
        for (i, c) in control.iter().enumerate().rev() {
            if let Control::Jump { labels, kind, .. } = c {
                let ok = match (label, is_continue) {
                    (Some(l), _) => labels.contains(&l.name),
                    (None, true) => *kind == JumpKind::Loop,
                    (None, false) => *kind != JumpKind::Block,
                };
                if ok {
                    target = Some(i);
                    break;
                }
            }
        }
        let Some(t) = target else { return }; // reported by the resolver
                                              // A `break` out of a `for-of` also closes its iterator, which sits
                                              // just below the loop's own entry.
        let closes = !is_continue && t > 0 && matches!(self.f().control[t - 1], Control::Iter { .. });
        self.unwind_to(if closes { t - 1 } else { t + 1 }, pos);
        let j = self.emit_jmp(pos);
        if let Some(Control::Jump { breaks, continues, .. }) = self.f().control.get_mut(t) {
            if is_continue {
                continues.push(j);
            } else {
                breaks.push(j);
            }
        }
    }

    /// Leaves every `try` above control-stack depth `depth`: pops its
    /// handler and runs its `finally` block (compiled in the context
    /// outside that `try`).
    fn unwind_to(&mut self, depth: usize, pos: u32) {
        let mut i = self.f().control.len();
        while i > depth {
            i -= 1;
            if let Control::Iter { iter } = self.f().control[i] {
                self.emit(Instr::TryEnd, pos);
                self.emit(Instr::IterClose { iter }, pos);
                continue;
            }
            if let Control::Try { handler_active, finalizer } = self.f().control[i] {
                if handler_active {
                    self.emit(Instr::TryEnd, pos);
                }
                if let Some(fin) = finalizer {
                    let saved = self.f().control.split_off(i);
                    let m = self.mark();
                    let lt = self.f().local_top;
                    self.keep_locals();
                    self.block(fin);
                    self.f().local_top = lt;
                    self.free_to(m);
                    self.f().control.extend(saved);
                }
            }
        }
    }

    /// What follows a `Yield`: a jump over the path that `return(v)`
    /// resumes into, which returns R[val] through the enclosing `finally`
    /// blocks and closes the iterators of enclosing loops.
    pub(crate) fn yield_return_path(&mut self, val: Reg, pos: u32) {
        let over = self.emit_jmp(pos);
        let m = self.mark();
        let t = self.alloc();
        self.emit(Instr::Move { dst: t, src: val }, pos);
        let lt = self.f().local_top;
        self.keep_locals();
        self.unwind_to(0, pos);
        self.f().local_top = lt;
        self.emit(Instr::Return { src: t }, pos);
        self.free_to(m);
        self.patch_here(over);
    }

    /// `yield* e` into `dst`: produces every value of iterable `e`, passing
    /// on what the generator is resumed with; `dst` receives what a
    /// delegate generator returns. A `return()` or a throw at the pause
    /// closes the delegate (it runs its `finally` blocks).
    pub(crate) fn yield_star(&mut self, e: &'a Expr, dst: Reg, pos: u32) {
        let m = self.mark();
        let lt = self.f().local_top;
        let it = self.alloc();
        self.expr(e, it);
        if self.f().async_gen {
            // The prelude's adapter forwards `next(v)`, `throw(e)` and
            // `return()` to the async delegate, awaiting each answer.
            self.for_await_source(e, it);
        }
        self.emit(Instr::GetIter { dst: it, src: it }, pos);
        let exc = self.alloc();
        let v = self.alloc();
        self.keep_locals();
        let begin = self.emit(Instr::TryBegin { exc, off: 0 }, pos);
        self.f().control.push(Control::Iter { iter: it });
        let top = self.here();
        let exit = self.emit(Instr::IterNext { dst: v, iter: it, off: 0 }, pos);
        self.emit(Instr::Yield { dst: v, src: v }, pos);
        self.yield_return_path(v, pos);
        self.emit(Instr::IterSend { iter: it, src: v }, pos);
        self.emit_loop(top, pos);
        self.patch_here(exit);
        self.f().control.pop();
        self.emit(Instr::TryEnd, pos);
        self.emit(Instr::Move { dst, src: v }, pos);
        let end = self.emit_jmp(pos);
        self.patch_here(begin);
        // Forward the throw into a paused generator delegate (which may
        // catch it and go on), with this handler armed again; else close
        // the delegate and rethrow.
        self.emit(Instr::IterThrow { iter: it, exc, dst: v, off: -1 }, pos);
        self.emit_loop(top, pos);
        self.emit(Instr::IterClose { iter: it }, pos);
        self.emit(Instr::Throw { src: exc }, pos);
        self.patch_here(end);
        self.f().local_top = lt;
        self.free_to(m);
    }

    /// Replaces the value in `it` (the source of a `for await` or of an
    /// async `yield*`) by the prelude's generator that iterates it
    /// asynchronously (`ForAwait`).
    fn for_await_source(&mut self, src: &'a Expr, it: Reg) {
        let m = self.mark();
        let what = self.alloc();
        let pos = src.span.start;
        match super::decls::callsite_text(src) {
            Some(text) => self.load_string(what, &text, pos),
            None => {
                self.emit(Instr::LoadUndef { dst: what }, pos);
            }
        }
        self.emit(Instr::ForAwait { dst: it, src: it, what }, pos);
        self.free_to(m);
    }

    /// In an async generator, `R[r] = await R[r]` (`yield` and `return`
    /// await their operand there).
    pub(crate) fn await_in_async_gen(&mut self, r: Reg, pos: u32) {
        if self.f().async_gen {
            self.emit(Instr::Await { dst: r, src: r }, pos);
        }
    }

    fn return_stmt(&mut self, e: Option<&'a Expr>, pos: u32) {
        let has_try = self.f().control.iter().any(|c| !matches!(c, Control::Jump { .. }));
        // An async generator awaits the value it returns (in a temporary:
        // the operand may be a variable's own register).
        let awaits = self.f().async_gen && e.is_some();
        let m = self.mark();
        if !has_try && !awaits {
            match e {
                Some(e) => {
                    let r = self.expr_reg(e);
                    self.emit(Instr::Return { src: r }, pos);
                }
                None => {
                    self.emit(Instr::ReturnUndef, pos);
                }
            }
        } else {
            // Compute the value, run the finally blocks, then return.
            let t = self.alloc();
            match e {
                Some(e) => self.expr(e, t),
                None => {
                    self.emit(Instr::LoadUndef { dst: t }, pos);
                }
            }
            if awaits {
                self.await_in_async_gen(t, pos);
            }
            let lt = self.f().local_top;
            self.keep_locals();
            self.unwind_to(0, pos);
            self.f().local_top = lt;
            self.emit(Instr::Return { src: t }, pos);
        }
        self.free_to(m);
    }

    fn try_stmt(
        &mut self,
        block: &'a [Stmt],
        handler: Option<&'a CatchClause>,
        finalizer: Option<&'a [Stmt]>,
        pos: u32,
    ) {
        let sc = self.enter_scope();
        let exc = self.alloc_local();
        let begin = self.emit(Instr::TryBegin { exc, off: 0 }, pos);
        self.f().control.push(Control::Try { handler_active: true, finalizer });
        self.block(block);
        self.f().control.pop();
        self.emit(Instr::TryEnd, pos);
        if let Some(fin) = finalizer {
            self.block(fin);
        }
        let mut to_end = vec![self.emit_jmp(pos)];
        self.patch_here(begin);
        match handler {
            Some(h) => {
                let inner_begin = finalizer.map(|_| self.emit(Instr::TryBegin { exc, off: 0 }, pos));
                if finalizer.is_some() {
                    self.f().control.push(Control::Try { handler_active: true, finalizer });
                }
                let hsc = self.enter_scope();
                if let Some(p) = &h.param {
                    match &p.kind {
                        PatternKind::Ident(i) => {
                            self.alloc_binding(i, true);
                            self.init_decl(i, exc);
                        }
                        _ => {
                            self.alloc_pattern(p, true);
                            // Copy: the inner handler may overwrite `exc`.
                            let v = self.alloc_local();
                            self.emit(Instr::Move { dst: v, src: exc }, p.span.start);
                            self.bind_pattern(p, v, true);
                        }
                    }
                }
                self.hoist_block(&h.body);
                self.stmts(&h.body);
                self.leave_scope(hsc);
                if let (Some(fin), Some(ib)) = (finalizer, inner_begin) {
                    self.f().control.pop();
                    self.emit(Instr::TryEnd, pos);
                    self.block(fin);
                    to_end.push(self.emit_jmp(pos));
                    // Catch-all: the catch block threw.
                    self.patch_here(ib);
                    self.block(fin);
                    self.emit(Instr::Throw { src: exc }, pos);
                }
            }
            None => {
                if let Some(fin) = finalizer {
                    self.block(fin);
                }
                self.emit(Instr::Throw { src: exc }, pos);
            }
        }
        self.patch_all_here(to_end);
        self.leave_scope(sc);
    }

    fn switch_stmt(&mut self, disc: &'a Expr, cases: &'a [SwitchCase], labels: Vec<String>, pos: u32) {
        let sc = self.enter_scope();
        let d = self.alloc_local();
        self.expr(disc, d);
        // Hoisting over all the case bodies together (one scope).
        for c in cases {
            self.hoist_cells(&c.body);
        }
        for c in cases {
            self.hoist_functions(&c.body);
        }
        let mut case_jumps: Vec<Option<usize>> = Vec::new();
        for c in cases {
            match &c.test {
                Some(t) => {
                    let m = self.mark();
                    let r = self.alloc();
                    self.expr(t, r);
                    self.emit(Instr::StrictEq { dst: r, a: d, b: r }, t.span.start);
                    case_jumps.push(Some(self.emit(Instr::JmpIfTrue { cond: r, off: 0 }, t.span.start)));
                    self.free_to(m);
                }
                None => case_jumps.push(None),
            }
        }
        let to_default = self.emit_jmp(pos);
        self.f().control.push(Control::Jump {
            labels,
            kind: JumpKind::Switch,
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        let mut default_at = None;
        for (c, j) in cases.iter().zip(case_jumps) {
            match j {
                Some(j) => self.patch_here(j),
                None => default_at = Some(self.here()),
            }
            self.stmts(&c.body);
        }
        let breaks = match self.f().control.pop() {
            Some(Control::Jump { breaks, .. }) => breaks,
            _ => Vec::new(),
        };
        match default_at {
            Some(t) => self.patch_to(to_default, t),
            None => self.patch_here(to_default),
        }
        self.patch_all_here(breaks);
        self.leave_scope(sc);
    }

    fn select_stmt(&mut self, cases: &'a [SelectCase], labels: Vec<String>, pos: u32) {
        let sc = self.enter_scope();
        let n: u32 = cases
            .iter()
            .map(|c| match c.kind {
                SelectCaseKind::Receive { .. } | SelectCaseKind::Timeout(_) => 1,
                SelectCaseKind::Send { .. } => 2,
                SelectCaseKind::Default => 0,
            })
            .sum();
        let base = self.mark();
        for _ in 0..n {
            self.alloc_local();
        }
        let base = clamp_reg(base);
        let mut descs = Vec::new();
        let mut k: u16 = 0;
        for c in cases {
            match &c.kind {
                SelectCaseKind::Receive { channel, .. } => {
                    self.expr(channel, base + k);
                    descs.push(SelectCaseDesc::Receive { operand: k, target: 0 });
                    k += 1;
                }
                SelectCaseKind::Send { channel, value } => {
                    self.expr(channel, base + k);
                    self.expr(value, base + k + 1);
                    descs.push(SelectCaseDesc::Send { operand: k, target: 0 });
                    k += 2;
                }
                SelectCaseKind::Timeout(ms) => {
                    self.expr(ms, base + k);
                    descs.push(SelectCaseDesc::Timeout { operand: k, target: 0 });
                    k += 1;
                }
                SelectCaseKind::Default => descs.push(SelectCaseDesc::Default { target: 0 }),
            }
        }
        let value_reg = self.alloc_local();
        let desc = self.f().proto.selects.len() as u32;
        self.f().proto.selects.push(SelectDesc { cases: descs, value_reg });
        let sel = self.emit(Instr::Select { base, desc }, pos);
        let mut to_end = vec![self.emit_jmp(pos)];
        self.f().control.push(Control::Jump {
            labels,
            kind: JumpKind::Select,
            breaks: Vec::new(),
            continues: Vec::new(),
        });
        for (i, c) in cases.iter().enumerate() {
            let target = (self.here() as i64 - (sel as i64 + 1)) as i32;
            match &mut self.f().proto.selects[desc as usize].cases[i] {
                SelectCaseDesc::Receive { target: t, .. }
                | SelectCaseDesc::Send { target: t, .. }
                | SelectCaseDesc::Timeout { target: t, .. }
                | SelectCaseDesc::Default { target: t } => *t = target,
            }
            let csc = self.enter_scope();
            if let SelectCaseKind::Receive { binding: Some((_, p)), .. } = &c.kind {
                match &p.kind {
                    PatternKind::Ident(i) => {
                        self.alloc_binding(i, true);
                        self.init_decl(i, value_reg);
                    }
                    _ => {
                        self.alloc_pattern(p, true);
                        self.bind_pattern(p, value_reg, true);
                    }
                }
            }
            self.hoist_block(&c.body);
            self.stmts(&c.body);
            self.leave_scope(csc);
            to_end.push(self.emit_jmp(c.span.start));
        }
        if let Some(Control::Jump { breaks, .. }) = self.f().control.pop() {
            to_end.extend(breaks);
        }
        self.patch_all_here(to_end);
        self.leave_scope(sc);
    }

    // ---- modules ------------------------------------------------------------------------

    /// Compiles a module body as a function of no parameters. `prologue`
    /// runs first (the entry module calls the other modules there). With
    /// `completion`, each top-level expression statement stores its value
    /// in that global slot: the module's completion value (as `eval`
    /// gives it), which the embedding API hands to the host. A slot, not
    /// the function's return value: a returned promise would be awaited.
    pub(crate) fn module(
        &mut self,
        prog: &'a Program,
        completion: Completion,
        prologue: impl FnOnce(&mut Self),
    ) -> FuncProto {
        self.push_fn("", Span::default(), 0);
        prologue(self);
        // Checked top-level `let`/`const`s hold the hole until declared.
        let mut holes: Vec<u32> = self.res.tdz_bindings.iter().filter_map(|&b| self.binding(b).global).collect();
        holes.sort_unstable();
        if !holes.is_empty() {
            let m = self.mark();
            let t = self.alloc();
            self.emit(Instr::LoadHole { dst: t }, 0);
            for idx in holes {
                self.emit(Instr::SetGlobal { idx, src: t }, 0);
            }
            self.free_to(m);
        }
        self.hoist_block(&prog.body);
        let end = prog.body.last().map_or(0, |s| s.span.end.saturating_sub(1));
        let returned = match completion {
            Completion::Return => {
                let r = self.alloc_local();
                self.emit(Instr::LoadUndef { dst: r }, 0);
                Some(r)
            }
            _ => None,
        };
        for s in &prog.body {
            match (&s.kind, completion, returned) {
                (StmtKind::Expr(e), _, Some(r)) => {
                    self.expr(e, r);
                    let f = self.f();
                    f.next_reg = f.local_top;
                }
                (StmtKind::Expr(e), Completion::Slot(idx), None) => {
                    let value = self.alloc();
                    self.expr(e, value);
                    self.emit(Instr::SetGlobal { idx, src: value }, s.span.start);
                    let f = self.f();
                    f.next_reg = f.local_top;
                }
                _ => self.stmt(s),
            }
        }
        match returned {
            Some(src) => self.emit(Instr::Return { src }, end),
            None => self.emit(Instr::ReturnUndef, end),
        };
        self.pop_fn()
    }

    pub(crate) fn error(&mut self, span: Span, msg: impl Into<String>, label: impl Into<String>) {
        self.diags.push(Diagnostic::new(self.file, span, msg).with_label(label));
    }

    pub(crate) fn bind_kind(&self, id: BindingId) -> BindKind {
        self.binding(id).kind
    }
}

/// Where a module's completion value goes (see [`Codegen::module`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Completion {
    /// Nowhere (an imported module).
    None,
    /// Into this global slot (the entry module).
    Slot(u32),
    /// Returned by the module function (an instance's `eval`; a promise
    /// returned so is awaited).
    Return,
}

/// The number `e` always evaluates to: a numeric literal, or a use of a
/// `const` (or `NaN`/`Infinity`) with a numeric value.
pub(crate) fn const_number(res: &Resolution, e: &Expr) -> Option<f64> {
    if let Some(n) = super::decls::number_literal(e) {
        return Some(n);
    }
    let ExprKind::Ident(i) = &super::decls::unwrap_erased(e).kind else { return None };
    if res.tdz_checks.contains(&i.span.start) {
        return None;
    }
    let v = match res.refs.get(&i.span.start)? {
        Ref::Local(id) => res
            .const_values
            .get(id)
            .or_else(|| res.bindings[*id as usize].global.and_then(|g| res.global_consts.get(&g)))?,
        Ref::Global(g) => res.global_consts.get(g)?,
        Ref::NaN => return Some(f64::NAN),
        Ref::Infinity => return Some(f64::INFINITY),
        Ref::Undefined => return None,
    };
    match v {
        ConstVal::Num(n) => Some(*n),
        _ => None,
    }
}

pub(crate) fn clamp_reg(r: u32) -> Reg {
    r.min(MAX_REGS - 1) as Reg
}

/// A short span at the start of a node (for "function too large").
fn head_span(s: Span) -> Span {
    Span { start: s.start, end: s.end.min(s.start + 1).max(s.start) }
}

/// Whether `e` is what TypeScript calls a constant enum expression:
/// literals, the enum's members (by bare name or as `E.member`), and
/// arithmetic, bitwise and unary operators on those. After any other
/// initialiser the next member cannot be auto-numbered.
fn enum_constant(e: &Expr, members: &[&str], enum_name: &str) -> bool {
    let c = |x: &Expr| enum_constant(x, members, enum_name);
    match &super::decls::unwrap_erased(e).kind {
        ExprKind::Number(_) | ExprKind::String(_) => true,
        ExprKind::Template(parts) => parts.iter().all(|p| matches!(p, TemplatePart::Str(_))),
        ExprKind::Ident(i) => members.contains(&i.name.as_str()),
        ExprKind::Member { object, property, .. } => {
            matches!(&object.kind, ExprKind::Ident(o) if o.name == enum_name)
                && members.contains(&property.name.as_str())
        }
        ExprKind::Unary(UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot, a) => c(a),
        ExprKind::Binary(op, a, b) => {
            use BinaryOp::*;
            matches!(op, Add | Sub | Mul | Div | Rem | Pow | BitAnd | BitOr | BitXor | Shl | Shr | UShr) && c(a) && c(b)
        }
        _ => false,
    }
}
