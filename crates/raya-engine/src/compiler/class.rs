//! Classes: constructor, methods, accessors, fields and static members.
//!
//! ```text
//! R[parent] = <extends expr>          (or none)
//! R[ctor]   = Closure <constructor>   (synthesised when missing)
//! NewClass  dst, "Name", parent, ctor
//! <bind the class name>
//! Closure + DefineMethod[Computed] for every method / getter / setter
//! Closure <field initialiser>; SetFieldInit   (instance fields, if any)
//! SetProp dst.<static field> = <init>       (in order, with each
//!   `static {}` block: Closure; SetHome; Call with this = dst)
//! ```
//!
//! Private names (`#x`) are constants of their own (`Constant::Private`),
//! one key per class declaration; see `declare_privates`.

use super::codegen::{Codegen, FnKind, Loc};
use super::decls::key_name;
use super::resolve::BindKind;
use crate::bytecode::*;
use crate::syntax::ast::*;

impl<'a> Codegen<'a> {
    /// Compiles class `c` into `dst`. `name` is its display name; `decl` is
    /// the declared name to initialise as soon as the class exists (for
    /// declarations whose binding is a global or a cell).
    pub(crate) fn class(&mut self, c: &'a Class, dst: Reg, name: &str, decl: Option<&'a Ident>) {
        let pos = c.span.start;
        let m = self.mark();
        let derived = c.extends.is_some();
        let parent = match &c.extends {
            Some(e) => {
                let r = self.alloc();
                self.expr(e, r);
                r
            }
            None => Reg::MAX,
        };
        self.declare_privates(c);
        // The class's own name inside a class expression.
        let inner =
            c.name.as_ref().and_then(|n| self.decl_id(n)).filter(|&id| self.bind_kind(id) == BindKind::ClassInner);
        let mut inner_cell = None;
        if let Some(id) = inner {
            if self.binding(id).captured {
                let cell = self.alloc();
                self.emit(Instr::NewCell { dst: cell }, pos);
                self.set_loc(id, Loc::Cell(cell));
                inner_cell = Some(cell);
            } else {
                self.set_loc(id, Loc::Reg(dst));
            }
        }
        // Constructor.
        let ctor_fn = c.members.iter().find_map(|m| match &m.kind {
            ClassMemberKind::Constructor(f) => Some(f),
            _ => None,
        });
        let rctor = self.alloc();
        let idx = match ctor_fn {
            Some(f) => self.function(f, name, FnKind::Ctor { derived }),
            None => self.synth_ctor(c, name, derived),
        };
        self.emit(Instr::Closure { dst: rctor, proto: idx }, ctor_fn.map_or(pos, |f| f.span.start));
        let kname = self.k_str(name);
        self.emit(Instr::NewClass { dst, name: kname, parent, ctor: rctor }, pos);
        if let Some(cell) = inner_cell {
            self.emit(Instr::CellSet { cell, src: dst }, pos);
        }
        if let Some(ident) = decl {
            self.init_decl(ident, dst);
        }
        // Methods and accessors.
        for mem in &c.members {
            let (key, func, kind) = match &mem.kind {
                ClassMemberKind::Method { key, func } => (key, func, MethodKind::Method),
                ClassMemberKind::Getter { key, func } => (key, func, MethodKind::Getter),
                ClassMemberKind::Setter { key, func } => (key, func, MethodKind::Setter),
                _ => continue,
            };
            let m2 = self.mark();
            let mname = key_name(key).unwrap_or_default();
            let t = self.alloc();
            let idx = self.function(func, &mname, FnKind::Method);
            self.emit(Instr::Closure { dst: t, proto: idx }, func.span.start);
            let is_static = mem.is_static;
            match key {
                PropKey::Computed(ke) => {
                    let rk = self.alloc();
                    self.expr(ke, rk);
                    self.emit(
                        Instr::DefineMethodComputed { class: dst, key: rk, func: t, kind, is_static },
                        mem.span.start,
                    );
                }
                _ => {
                    let k = self.key_const(key).unwrap_or(0);
                    self.emit(Instr::DefineMethod { class: dst, name: k, func: t, kind, is_static }, mem.span.start);
                }
            }
            self.free_to(m2);
        }
        // Instance fields.
        if c.members.iter().any(|m| !m.is_static && matches!(m.kind, ClassMemberKind::Field { .. })) {
            let m2 = self.mark();
            let idx = self.field_initializer(c, name);
            let t = self.alloc();
            self.emit(Instr::Closure { dst: t, proto: idx }, pos);
            self.emit(Instr::SetFieldInit { class: dst, func: t }, pos);
            self.free_to(m2);
        }
        // Static fields and `static {}` blocks, in order, once the class
        // exists.
        for mem in &c.members {
            match (mem.is_static, &mem.kind) {
                (true, ClassMemberKind::Field { key, init, .. }) => self.field(mem, key, init.as_ref(), dst, false),
                (true, ClassMemberKind::StaticBlock(f)) => self.static_block(f, dst),
                _ => {}
            }
        }
        self.privates.pop();
        self.free_to(m);
    }

    /// Opens the scope of the class's private names, each with a key unique
    /// to this class declaration (from a process-wide counter, so another
    /// class's `#x`, even one compiled from the same source for another
    /// program in this process, is a different name).
    fn declare_privates(&mut self, c: &'a Class) {
        static NEXT_CLASS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let id = match &mut self.prelude_classes {
            Some(n) => {
                *n += 1;
                format!("p{}", *n - 1)
            }
            None => NEXT_CLASS.fetch_add(1, std::sync::atomic::Ordering::Relaxed).to_string(),
        };
        let mut names: Vec<(String, String)> = Vec::new();
        // (name, is_static, kind) of each declaration, for duplicates.
        let mut seen: Vec<(&str, bool, u8)> = Vec::new();
        for mem in &c.members {
            let (key, kind) = match &mem.kind {
                ClassMemberKind::Field { key, .. } => (key, 0),
                ClassMemberKind::Method { key, .. } => (key, 0),
                ClassMemberKind::Getter { key, .. } => (key, 1),
                ClassMemberKind::Setter { key, .. } => (key, 2),
                _ => continue,
            };
            let PropKey::Private(n, span) = key else { continue };
            if n == "#constructor" {
                self.error(*span, "a class member cannot be named `#constructor`", "reserved name");
                continue;
            }
            // A getter and a setter of the same name (and staticness) pair up.
            let clash =
                seen.iter().any(|&(m, st, k)| m == n && (kind == 0 || k == 0 || k == kind || st != mem.is_static));
            if clash {
                self.error(*span, format!("private name `{n}` is declared twice in this class"), "declared twice");
                continue;
            }
            seen.push((n, mem.is_static, kind));
            if !names.iter().any(|(m, _)| m == n) {
                names.push((n.clone(), format!("{n}\0{id}")));
            }
        }
        self.privates.push(names);
    }

    /// `static { ... }`: a method-like function called at once with `this`
    /// = the class.
    fn static_block(&mut self, f: &'a Function, class: Reg) {
        let pos = f.span.start;
        let m = self.mark();
        let fr = self.alloc();
        let this_r = self.alloc();
        // V8's name for it in stack traces.
        let idx = self.function(f, "<static_initializer>", FnKind::Method);
        self.emit(Instr::Closure { dst: fr, proto: idx }, pos);
        // Its `super` is the class's parent, as in a static method.
        self.emit(Instr::SetHome { func: fr, class }, pos);
        self.emit(Instr::Move { dst: this_r, src: class }, pos);
        self.emit(Instr::call(fr, 0), pos);
        self.free_to(m);
    }

    /// One field: evaluates its initialiser (or undefined) and stores it on
    /// `obj` — defined as an own property for instance fields (`define`),
    /// assigned for static fields on the class.
    fn field(&mut self, mem: &'a ClassMember, key: &'a PropKey, init: Option<&'a Expr>, obj: Reg, define: bool) {
        let m = self.mark();
        let v = self.alloc();
        let fname = key_name(key);
        match init {
            Some(e) => self.expr_named(e, v, fname.as_deref()),
            None => {
                self.emit(Instr::LoadUndef { dst: v }, mem.span.start);
            }
        }
        let at = mem.span.start;
        match key {
            PropKey::Computed(ke) => {
                let rk = self.alloc();
                self.expr(ke, rk);
                let i = if define {
                    Instr::DefineIndex { obj, key: rk, src: v }
                } else {
                    Instr::SetIndex { obj, key: rk, src: v }
                };
                self.emit(i, at);
            }
            _ => {
                let k = self.key_const(key).unwrap_or(0);
                // A static private field is defined on the class too.
                let i = if define || matches!(key, PropKey::Private(..)) {
                    Instr::DefineProp { obj, name: k, src: v }
                } else {
                    Instr::SetProp { obj, name: k, src: v }
                };
                self.emit(i, at);
            }
        }
        self.free_to(m);
    }

    /// `constructor() {}` (base: runs the field initialisers) or
    /// `constructor(...args) { super(...args) }` (derived).
    fn synth_ctor(&mut self, c: &'a Class, name: &str, derived: bool) -> u32 {
        self.push_fn(name, c.span, derived as u32);
        {
            let st = self.f();
            st.proto.is_constructor = true;
            st.proto.is_derived = derived;
            st.proto.has_rest = derived;
        }
        let pos = c.span.start;
        if derived {
            let f = self.alloc();
            self.alloc();
            let args = self.alloc();
            self.emit(Instr::Move { dst: args, src: 1 }, pos);
            self.emit(Instr::SuperCallSpread { f }, pos);
        } else {
            self.emit(Instr::InitFields, pos);
        }
        self.emit(Instr::ReturnUndef, pos);
        let p = self.pop_fn();
        self.add_proto(p)
    }

    /// The method-like function that defines the instance fields on `this`
    /// in declaration order (fields without an initialiser get undefined).
    fn field_initializer(&mut self, c: &'a Class, name: &str) -> u32 {
        self.push_fn(name, c.span, 0);
        let pos = c.span.start;
        let this_id = self.res.field_this_of.get(&c.span.start).copied();
        self.setup_this(this_id, pos);
        for mem in &c.members {
            let (false, ClassMemberKind::Field { key, init, .. }) = (mem.is_static, &mem.kind) else { continue };
            // `this` is register 0 of the initialiser.
            self.field(mem, key, init.as_ref(), 0, true);
        }
        self.emit(Instr::ReturnUndef, pos);
        let p = self.pop_fn();
        self.add_proto(p)
    }
}
