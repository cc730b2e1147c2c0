//! The resolver: scopes, hoisting, and the static checks of LANGUAGE.md §4.
//!
//! It walks one module's AST once and produces a [`Resolution`]:
//!
//! - every binding (variable, parameter, function, class, import, and the
//!   pseudo-binding `this` of each non-arrow function), with whether some
//!   closure captures it (captured locals live in cells);
//! - for every identifier *use*, keyed by the byte offset where it starts,
//!   what it refers to (a local binding, a global slot, or a constant);
//! - for every identifier *declaration*, keyed the same way, its binding.
//!
//! Module top-level bindings get global slots here; everything else is left
//! to the code generator, which allocates registers and cells.
//!
//! It also finds the reads and writes of `let`/`const` bindings that might
//! happen before the declaration has run (the temporal dead zone) — see
//! [`Resolution::tdz_checks`] — so that only those pay for a check.
//!
//! Errors (undeclared names, assignments to constants, duplicate
//! declarations, misplaced `break`/`continue`/`return`, bad imports) are
//! reported as diagnostics; the walk always goes on, so one run reports all
//! of them.

use super::decls::{block_decls, is_loop, pattern_idents, DeclItem};
use super::Linker;
use crate::builtins::GLOBAL_NAMES;
use crate::syntax::ast::*;
use crate::syntax::diagnostic::{edit_distance, Diagnostic, FileId};
use crate::syntax::span::Span;
use std::collections::{HashMap, HashSet};

pub(crate) type BindingId = u32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BindKind {
    Let,
    Const,
    Function,
    Class,
    Param,
    Import,
    /// `this` of a non-arrow function (register 0).
    This,
    /// The name of a class expression inside its own body.
    ClassInner,
    /// The name of a named function expression inside its own body.
    FnName,
    CatchParam,
}

#[derive(Debug, Clone)]
pub(crate) struct Binding {
    pub name: String,
    pub kind: BindKind,
    /// Some closure refers to it from another function and it lives in a
    /// cell (false for one captured by value: see `by_value`).
    pub captured: bool,
    /// Some closure refers to it, but it never changes once any closure
    /// that does is made: it stays in its register, and each closure
    /// copies the value when it is made (`Resolver::finish_captures`).
    pub by_value: bool,
    /// Module top-level bindings (and imports) are global slots.
    pub global: Option<u32>,
    pub span: Span,
}

/// The value of a `const` initialised with a literal: its uses compile to
/// the literal itself.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ConstVal {
    Num(f64),
    Str(String),
    Bool(bool),
    Null,
}

impl ConstVal {
    pub(crate) fn of(e: &Expr) -> Option<ConstVal> {
        if let Some(n) = super::decls::number_literal(e) {
            return Some(ConstVal::Num(n));
        }
        match &super::decls::unwrap_erased(e).kind {
            ExprKind::String(s) => Some(ConstVal::Str(s.clone())),
            ExprKind::Bool(b) => Some(ConstVal::Bool(*b)),
            ExprKind::Null => Some(ConstVal::Null),
            _ => None,
        }
    }
}

/// What an identifier use refers to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Ref {
    Local(BindingId),
    Global(u32),
    Undefined,
    NaN,
    Infinity,
}

#[derive(Debug, Default)]
pub(crate) struct Resolution {
    pub bindings: Vec<Binding>,
    /// Identifier (and `this`) uses by start offset.
    pub refs: HashMap<u32, Ref>,
    /// Declaring identifiers by start offset.
    pub decls: HashMap<u32, BindingId>,
    /// The `this` binding of each non-arrow function, by the function's
    /// start offset.
    pub this_of: HashMap<u32, BindingId>,
    /// The `this` binding of each class's instance-field initialiser, by
    /// the class's start offset.
    pub field_this_of: HashMap<u32, BindingId>,
    /// Namespace imports: the hidden slot of `import * as ns` -> the
    /// module's exports, so that `ns.x` reads `x`'s slot directly (a live
    /// binding, no property lookup).
    pub namespaces: HashMap<u32, HashMap<String, u32>>,
    /// Local `const`s with a literal value.
    pub const_values: HashMap<BindingId, ConstVal>,
    /// Global slots (of this and earlier modules) holding a `const` with a
    /// literal value.
    pub global_consts: HashMap<u32, ConstVal>,
    /// Uses (by start offset) of a `let`/`const` that might run before its
    /// declaration has: each is checked against the hole at run time (a
    /// ReferenceError), and never constant-folded.
    pub tdz_checks: HashSet<u32>,
    /// The bindings with such uses: they hold the hole until declared.
    pub tdz_bindings: HashSet<BindingId>,
}

impl Resolution {
    pub(crate) fn binding_of_decl(&self, ident: &Ident) -> Option<BindingId> {
        self.decls.get(&ident.span.start).copied()
    }
}

struct Scope {
    names: HashMap<String, BindingId>,
    func: usize,
    /// When the scope's function declarations are made (its hoisting):
    /// see `Captures`.
    entry: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum JumpKind {
    Loop,
    Switch,
    Select,
    Block,
}

struct JumpCtx {
    labels: Vec<String>,
    kind: JumpKind,
}

struct FuncCtx {
    is_module: bool,
    /// A generator body: `yield` is allowed.
    is_generator: bool,
    jumps: Vec<JumpCtx>,
    /// Index into `Tdz::births`.
    uid: usize,
}

/// A use of a `let`/`const`, judged once the whole module is walked.
struct TdzUse {
    offset: u32,
    binding: BindingId,
    /// The function, child of the binding's own function, that contains
    /// the use (None: the use is in the binding's own function).
    via: Option<usize>,
    tick: u32,
    clause: u32,
}

/// A use of a function declaration's name: from then on it may be called.
struct FnUse {
    target: BindingId,
    via: Option<usize>,
    tick: u32,
}

/// What the temporal-dead-zone analysis collects during the walk.
///
/// Walk order is execution order within one function: a use is safe if
/// the binding's declaration completed earlier in the walk (a later
/// `switch` clause is the exception: its bindings are safe only within
/// their own clause). A use inside a nested function is safe if the
/// declaration completed before that function could first run: a function
/// expression, method or arrow runs no earlier than where it is created;
/// a function declaration (hoisted) no earlier than the first use of its
/// name, directly or through a function that could run by then (computed
/// to a fixpoint once the module is walked). Other modules cannot call a
/// module's functions before its body has run: bodies run in dependency
/// order, and import cycles are compile errors.
#[derive(Default)]
struct Tdz {
    tick: u32,
    /// Per function: where it is created; None for a declaration.
    births: Vec<Option<u32>>,
    /// Per function: where its closure object is made (a declaration: when
    /// its scope's declarations are hoisted; a deferred initialiser: where
    /// the expression is, before its binding is initialised).
    created: Vec<u32>,
    /// Set just before walking a function declaration: its scope's entry.
    next_created: Option<u32>,
    /// Function declaration binding -> its function; class declaration
    /// binding -> its methods (they run no earlier than the first use of
    /// the class's name either).
    declared_fn: HashMap<BindingId, Vec<usize>>,
    /// Set just before walking a function declaration or a member of a
    /// class declaration.
    next_decl: Option<BindingId>,
    /// `let`/`const` binding -> when its declaration completed.
    init: HashMap<BindingId, u32>,
    uses: Vec<TdzUse>,
    fn_uses: Vec<FnUse>,
    /// The `switch` clause being walked (0: none), and its counter.
    clause: u32,
    clauses: u32,
    /// Bindings declared by a `switch` clause -> that clause.
    switch_clause: HashMap<BindingId, u32>,
    /// Set while walking a declaration whose initialiser is a function
    /// expression or arrow: that function cannot run before the binding
    /// is initialised (`const f = (n) => … f(n - 1) …`), so its birth is
    /// the end of the declaration; `deferred` is the function.
    defer_next: bool,
    deferred: Option<usize>,
}

/// What deciding captures by value collects during the walk.
///
/// A captured `let`/`const`/parameter/catch parameter stays in its
/// register, and each closure gets a copy of its value, when the copy can
/// never differ from the binding: no closure that uses it is made before
/// it is initialised (by walk order, as for the dead zone, with function
/// declarations made when their scope's declarations are hoisted), and
/// nothing assigns it afterwards — nothing at all, but for a `for (let …)`
/// binding assigned in the loop's own header (`i++` changes the next
/// iteration's copy, before the body that makes the closures runs; a
/// closure made in the header itself keeps the cell).
#[derive(Default)]
struct Captures {
    /// (binding, the child function of its own that uses it).
    by: Vec<(BindingId, usize)>,
    /// Bindings assigned where a copy could go stale, or captured in their
    /// loop's header.
    changed: HashSet<BindingId>,
    /// The bindings of the `for` loop whose header is being walked.
    header: HashSet<BindingId>,
}

pub(crate) struct Resolver<'l> {
    file: FileId,
    module: usize,
    linker: &'l mut Linker,
    /// Import statement (by the start of its source string) -> module index
    /// (`None`: the module could not be loaded; already reported).
    imports: &'l HashMap<u32, Option<usize>>,
    diags: Vec<Diagnostic>,
    scopes: Vec<Scope>,
    funcs: Vec<FuncCtx>,
    pending_labels: Vec<String>,
    tdz: Tdz,
    captures: Captures,
    /// Exports made by `export { a } from` / `export * from` (the latter
    /// flagged: a local export of the same name wins over it).
    reexports: Vec<(String, u32, Span, bool)>,
    out: Resolution,
}

pub(crate) fn resolve_module(
    file: FileId,
    module: usize,
    prog: &Program,
    linker: &mut Linker,
    imports: &HashMap<u32, Option<usize>>,
) -> (Resolution, Vec<Diagnostic>) {
    let mut r = Resolver {
        file,
        module,
        linker,
        imports,
        diags: Vec::new(),
        scopes: Vec::new(),
        funcs: Vec::new(),
        pending_labels: Vec::new(),
        tdz: Tdz::default(),
        captures: Captures::default(),
        reexports: Vec::new(),
        out: Resolution::default(),
    };
    r.module_body(&prog.body);
    r.finish_tdz();
    r.finish_captures();
    // Hoisting reports some errors before the walk reaches them: report in
    // source order.
    r.diags.sort_by_key(|d| d.span.start);
    r.out.global_consts = r.linker.global_consts.clone();
    (r.out, r.diags)
}

/// What to write instead of a Node or browser global that Raya does not
/// have (the hint of `cannot find name`).
fn node_habit_hint(name: &str) -> Option<&'static str> {
    Some(match name {
        "setImmediate" => "use `setTimeout(fn, 0)`, or `queueMicrotask(fn)`",
        "clearImmediate" => "use `setTimeout(fn, 0)` and `clearTimeout(timer)`",
        "require" => "use `import { name } from \"./module\"` (or `import x from \"./module\"` for a default export)",
        "module" | "exports" => "export with `export function f() {}`, `export { a, b }` or `export default value`",
        "process" => {
            "the process's arguments, environment and exit are the globals `args`, `env(name)` and `exit(code)`"
        }
        "globalThis" | "window" | "global" => "declare a module-level `let` or `const` and export it",
        "arguments" => "use a rest parameter: `function f(...args) {}`",
        "__dirname" | "__filename" => "paths in imports are relative to the importing file",
        _ => return None,
    })
}

impl<'l> Resolver<'l> {
    // ---- diagnostics -------------------------------------------------------

    fn error(&mut self, span: Span, msg: impl Into<String>, label: impl Into<String>, hint: Option<String>) {
        let mut d = Diagnostic::new(self.file, span, msg).with_label(label);
        if let Some(h) = hint {
            d = d.with_hint(h);
        }
        self.diags.push(d);
    }

    // ---- scopes --------------------------------------------------------------

    fn cur_func(&self) -> usize {
        self.funcs.len() - 1
    }

    fn push_scope(&mut self) {
        let func = self.cur_func();
        let entry = self.next_tick();
        self.scopes.push(Scope { names: HashMap::new(), func, entry });
    }

    /// The innermost scope's declarations are hoisted from here on.
    fn renew_entry(&mut self) {
        let t = self.next_tick();
        if let Some(sc) = self.scopes.last_mut() {
            sc.entry = t;
        }
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    fn is_module_scope(&self) -> bool {
        self.scopes.len() == 1
    }

    fn new_binding(&mut self, name: &str, kind: BindKind, span: Span, global: Option<u32>) -> BindingId {
        let id = self.out.bindings.len() as BindingId;
        self.out.bindings.push(Binding {
            name: name.to_string(),
            kind,
            captured: false,
            by_value: false,
            global,
            span,
        });
        id
    }

    /// Declares `ident` in the innermost scope (module scope: a new global
    /// slot), reporting a duplicate.
    fn declare(&mut self, ident: &Ident, kind: BindKind) -> BindingId {
        if let Some(&prev) = self.scopes.last().and_then(|s| s.names.get(&ident.name)) {
            if ident.name == "default" {
                // A second `export default`: reported as a duplicate export.
                self.out.decls.insert(ident.span.start, prev);
                return prev;
            }
            let p = &self.out.bindings[prev as usize];
            let what = match p.kind {
                BindKind::Param => "a parameter",
                BindKind::Import => "an import",
                BindKind::Function => "a function",
                BindKind::Class => "a class",
                _ => "a variable",
            };
            let prev_span = p.span;
            let (line, _) = self.line_of(prev_span.start);
            self.error(
                ident.span,
                format!("the name `{}` is defined multiple times", ident.name),
                format!("`{}` redeclared here", ident.name),
                Some(format!("`{}` is already declared as {} on line {}; rename one of them", ident.name, what, line)),
            );
            // Keep the first binding; later uses resolve to it.
            self.out.decls.insert(ident.span.start, prev);
            return prev;
        }
        let global = if self.is_module_scope() && kind != BindKind::Import {
            Some(self.linker.add_global(&ident.name))
        } else {
            None
        };
        let id = self.new_binding(&ident.name, kind, ident.span, global);
        self.scopes.last_mut().expect("scope").names.insert(ident.name.clone(), id);
        self.out.decls.insert(ident.span.start, id);
        id
    }

    fn line_of(&self, offset: u32) -> (u32, u32) {
        self.linker.line_col(self.file, offset)
    }

    fn lookup(&mut self, name: &str) -> Option<BindingId> {
        self.lookup_in(name).map(|(id, _)| id)
    }

    /// The binding of `name` and the function (index in `funcs`) whose
    /// scope declares it.
    fn lookup_in(&mut self, name: &str) -> Option<(BindingId, usize)> {
        let cur = self.cur_func();
        for s in self.scopes.iter().rev() {
            if let Some(&id) = s.names.get(name) {
                let b = &mut self.out.bindings[id as usize];
                if b.global.is_none() && s.func != cur {
                    b.captured = true;
                    let via = self.funcs[s.func + 1].uid;
                    self.captures.by.push((id, via));
                    if self.captures.header.contains(&id) {
                        self.captures.changed.insert(id);
                    }
                }
                return Some((id, s.func));
            }
        }
        None
    }

    // ---- the temporal dead zone (see `Tdz`) -------------------------------------

    fn next_tick(&mut self) -> u32 {
        self.tdz.tick += 1;
        self.tdz.tick
    }

    /// A new function context's entry in `Tdz::births`.
    fn new_func(&mut self, is_module: bool) -> FuncCtx {
        let uid = self.tdz.births.len();
        let birth = match self.tdz.next_decl.take() {
            Some(b) => {
                self.tdz.declared_fn.entry(b).or_default().push(uid);
                None
            }
            None if std::mem::take(&mut self.tdz.defer_next) => {
                self.tdz.deferred = Some(uid);
                None
            }
            None => Some(self.next_tick()),
        };
        self.tdz.births.push(birth);
        let now = self.next_tick();
        let created = self.tdz.next_created.take().unwrap_or(now);
        self.tdz.created.push(created);
        FuncCtx { is_module, is_generator: false, jumps: Vec::new(), uid }
    }

    /// Records a use of binding `id`, declared in function `owner`.
    fn note_use(&mut self, id: BindingId, owner: usize, offset: u32) {
        let kind = self.out.bindings[id as usize].kind;
        if !matches!(kind, BindKind::Let | BindKind::Const | BindKind::Function | BindKind::Class) {
            return;
        }
        let via = (owner < self.cur_func()).then(|| self.funcs[owner + 1].uid);
        let tick = self.next_tick();
        if matches!(kind, BindKind::Function | BindKind::Class) {
            self.tdz.fn_uses.push(FnUse { target: id, via, tick });
        } else {
            let clause = self.tdz.clause;
            self.tdz.uses.push(TdzUse { offset, binding: id, via, tick, clause });
        }
    }

    /// The declaration of the names of `p` has completed.
    fn note_init(&mut self, p: &Pattern) {
        let mut ids = Vec::new();
        pattern_idents(p, &mut ids);
        for i in ids {
            if let Some(b) = self.out.binding_of_decl(i) {
                let t = self.next_tick();
                self.tdz.init.entry(b).or_insert(t);
            }
        }
    }

    /// Decides which uses need a run-time check (`Resolution::tdz_checks`).
    fn finish_tdz(&mut self) {
        let tdz = &self.tdz;
        let mut birth: Vec<u32> = tdz.births.iter().map(|b| b.unwrap_or(u32::MAX)).collect();
        loop {
            let mut changed = false;
            for u in &tdz.fn_uses {
                let Some(fs) = tdz.declared_fn.get(&u.target) else { continue };
                let at = match u.via {
                    None => u.tick,
                    Some(v) => birth[v],
                };
                for &f in fs {
                    if at < birth[f] {
                        birth[f] = at;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        for u in &tdz.uses {
            let clause = tdz.switch_clause.get(&u.binding);
            let safe = tdz.init.get(&u.binding).is_some_and(|&t| match u.via {
                None => t < u.tick && clause.is_none_or(|&c| c == u.clause),
                Some(v) => t < birth[v] && clause.is_none(),
            });
            if !safe {
                self.out.tdz_checks.insert(u.offset);
                self.out.tdz_bindings.insert(u.binding);
            }
        }
        // A clause's binding used from another clause may be read before
        // its declaration ran though the code for it was generated: it gets
        // a cell, which holds the hole from the `switch`'s start.
        for &b in tdz.switch_clause.keys() {
            if self.out.tdz_bindings.contains(&b) {
                self.out.bindings[b as usize].captured = true;
            }
        }
    }

    /// Decides which captured bindings are captured by value (`Captures`).
    fn finish_captures(&mut self) {
        let mut by_value: HashMap<BindingId, bool> = HashMap::new();
        for &(b, via) in &self.captures.by {
            let ok = by_value.entry(b).or_insert(true);
            if !*ok {
                continue;
            }
            let binding = &self.out.bindings[b as usize];
            *ok = binding.captured
                && binding.global.is_none()
                && matches!(binding.kind, BindKind::Let | BindKind::Const | BindKind::Param | BindKind::CatchParam)
                && !self.out.tdz_bindings.contains(&b)
                && !self.captures.changed.contains(&b)
                && self.tdz.init.get(&b).is_some_and(|&init| init < self.tdz.created[via]);
        }
        for (b, ok) in by_value {
            if ok {
                let binding = &mut self.out.bindings[b as usize];
                binding.captured = false;
                binding.by_value = true;
            }
        }
    }

    /// Resolves a use of `ident`, recording it; reports undeclared names.
    fn use_ident(&mut self, ident: &Ident) -> Option<BindingId> {
        if let Some((id, owner)) = self.lookup_in(&ident.name) {
            self.note_use(id, owner, ident.span.start);
            let b = &self.out.bindings[id as usize];
            let r = match b.global {
                Some(g) => Ref::Global(g),
                None => Ref::Local(id),
            };
            self.out.refs.insert(ident.span.start, r);
            return Some(id);
        }
        // What a live program's earlier code declared (see
        // `compiler::compile_live`): an outer scope of the
        // entry module only.
        if let Some(&(slot, _)) = self.outer_binding(&ident.name) {
            self.out.refs.insert(ident.span.start, Ref::Global(slot));
            return None;
        }
        let r = match ident.name.as_str() {
            "undefined" => Ref::Undefined,
            "NaN" => Ref::NaN,
            "Infinity" => Ref::Infinity,
            n => match GLOBAL_NAMES.iter().position(|g| *g == n) {
                Some(i) => {
                    if let Some(&(_, cap)) = crate::std::GATED_GLOBALS.iter().find(|(g, _)| *g == n) {
                        if !self.linker.capabilities.has(cap) {
                            self.error(
                                ident.span,
                                format!(
                                    "`{n}` is not available: the host did not grant the `{}` capability",
                                    cap.name()
                                ),
                                "not granted",
                                None,
                            );
                            return None;
                        }
                        self.linker.used = self.linker.used.with(cap);
                    }
                    Ref::Global(i as u32)
                }
                None => {
                    let hint = if n == "var" {
                        None
                    } else if let Some(h) = node_habit_hint(n) {
                        Some(h.to_string())
                    } else {
                        self.similar_name(n).map(|s| format!("a name with a similar spelling exists: `{s}`"))
                    };
                    self.error(
                        ident.span,
                        format!("cannot find name `{}`", ident.name),
                        "not found in this scope",
                        hint,
                    );
                    return None;
                }
            },
        };
        self.out.refs.insert(ident.span.start, r);
        None
    }

    /// The binding of `name` made by earlier code of a live program (see
    /// `compiler::compile_live`), if this is the code being added.
    fn outer_binding(&self, name: &str) -> Option<&(u32, bool)> {
        match &self.linker.outer {
            Some((m, names)) if *m == self.module => names.get(name),
            _ => None,
        }
    }

    /// A visible name close to `n` (edit distance 1–2), for hints.
    fn similar_name(&self, n: &str) -> Option<String> {
        let mut best: Option<(usize, String)> = None;
        let mut consider = |cand: &str| {
            if cand == "this" {
                return;
            }
            // Names whose lengths differ by more than the limit are never
            // close: skip the distance for most candidates.
            if n.len().abs_diff(cand.len()) > 2 {
                return;
            }
            let d = edit_distance(n, cand);
            let limit = if n.len() <= 3 { 1 } else { 2 };
            if d <= limit && best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                best = Some((d, cand.to_string()));
            }
        };
        for s in &self.scopes {
            for k in s.names.keys() {
                consider(k);
            }
        }
        if let Some((m, names)) = &self.linker.outer {
            if *m == self.module {
                names.keys().for_each(|k| consider(k));
            }
        }
        for g in GLOBAL_NAMES {
            if !g.starts_with("__") {
                consider(g);
            }
        }
        best.map(|(_, s)| s)
    }

    /// Resolves an assignment to `ident`, checking that it is assignable.
    fn assign_ident(&mut self, ident: &Ident) {
        match self.use_ident(ident) {
            Some(id) => {
                if !self.captures.header.contains(&id) {
                    self.captures.changed.insert(id);
                }
                let b = &self.out.bindings[id as usize];
                let (kind, decl_span) = (b.kind, b.span);
                let msg = format!("cannot assign to `{}` because it is a constant", ident.name);
                match kind {
                    BindKind::Const => {
                        let (line, _) = self.line_of(decl_span.start);
                        self.error(
                            ident.span,
                            msg,
                            "assignment to a constant",
                            Some(format!(
                                "`{}` is declared with `const` on line {}; declare it with `let` to make it mutable",
                                ident.name, line
                            )),
                        )
                    }
                    BindKind::Import => self.error(
                        ident.span,
                        format!("cannot assign to `{}` because it is an import", ident.name),
                        "assignment to an import",
                        Some("imported bindings are read-only; the exporting module can change them".into()),
                    ),
                    BindKind::ClassInner | BindKind::FnName => {
                        self.error(ident.span, msg, "assignment to a constant", None)
                    }
                    _ => {}
                }
            }
            None => {
                if self.outer_binding(&ident.name).is_some_and(|&(_, is_const)| is_const) {
                    let msg = format!("cannot assign to `{}` because it is a constant", ident.name);
                    self.error(
                        ident.span,
                        msg,
                        "assignment to a constant",
                        Some(format!(
                            "`{}` was declared with `const` (or imported) by earlier code; declare it again to replace it",
                            ident.name
                        )),
                    );
                } else if matches!(
                    self.out.refs.get(&ident.span.start),
                    Some(Ref::Undefined | Ref::NaN | Ref::Infinity)
                ) {
                    self.error(ident.span, format!("cannot assign to `{}`", ident.name), "not assignable", None);
                }
            }
        }
    }

    // ---- module --------------------------------------------------------------

    fn module_body(&mut self, body: &[Stmt]) {
        let ctx = self.new_func(true);
        self.funcs.push(ctx);
        self.push_scope();
        // Imports first: they are visible in the whole module.
        for s in body {
            if let StmtKind::Import(imp) = &s.kind {
                self.import(imp);
            }
        }
        self.hoist(body);
        self.stmts(body);
        // Exports.
        let mut exports: Vec<(String, u32, Span)> = Vec::new();
        let type_names: std::collections::HashSet<&str> = body
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Export(inner) => type_decl_name(inner),
                _ => type_decl_name(s),
            })
            .collect();
        for s in body {
            match &s.kind {
                StmtKind::Export(inner) if type_decl_name(inner).is_some() => {
                    let name = type_decl_name(inner).unwrap_or_default().to_string();
                    self.linker.modules[self.module].type_exports.insert(name);
                }
                StmtKind::Export(inner) => {
                    let mut items = Vec::new();
                    block_decls(std::slice::from_ref(&**inner), &mut items);
                    for it in items {
                        let id = it.ident();
                        if let Some(g) = self.out.binding_of_decl(id).and_then(|b| self.out.bindings[b as usize].global)
                        {
                            exports.push((id.name.clone(), g, id.span));
                        }
                    }
                }
                StmtKind::ExportList(specs) => {
                    for sp in specs {
                        let found = self.scopes[0].names.get(&sp.local.name).copied();
                        match found.and_then(|b| self.out.bindings[b as usize].global) {
                            Some(g) => exports.push((sp.exported.name.clone(), g, sp.exported.span)),
                            None if type_names.contains(sp.local.name.as_str()) => {
                                self.linker.modules[self.module].type_exports.insert(sp.exported.name.clone());
                            }
                            None => self.error(
                                sp.local.span,
                                format!("cannot export `{}`: no such top-level binding", sp.local.name),
                                "not declared at the top level of this module",
                                None,
                            ),
                        }
                    }
                }
                _ => {}
            }
        }
        let mut star = Vec::new();
        for (name, slot, span, is_star) in std::mem::take(&mut self.reexports) {
            if is_star {
                star.push((name, slot));
            } else {
                exports.push((name, slot, span));
            }
        }
        for (name, slot) in star {
            // `export *` never clashes: a name exported otherwise wins (as
            // in JS).
            if !exports.iter().any(|(n, _, _)| *n == name) {
                self.linker.modules[self.module].exports.entry(name).or_insert(slot);
            }
        }
        for (name, slot, span) in exports {
            let m = &mut self.linker.modules[self.module];
            match m.exports.entry(name) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let msg = format!("duplicate export `{}`", e.key());
                    let hint = (e.key() == "default")
                        .then(|| "a module has one default export; export the others by name".to_string());
                    self.error(span, msg, "exported twice", hint);
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(slot);
                }
            }
        }
        self.pop_scope();
        self.funcs.pop();
    }

    fn import(&mut self, imp: &ImportDecl) {
        let target = self.imports.get(&imp.source_span.start).copied().flatten();
        match &imp.kind {
            ImportKind::ReExportAll => {
                if let Some(m) = target {
                    let mut names: Vec<(String, u32)> = self.linker.modules[m]
                        .exports
                        .iter()
                        .filter(|(n, _)| n.as_str() != "default")
                        .map(|(n, &g)| (n.clone(), g))
                        .collect();
                    names.sort();
                    for (n, g) in names {
                        self.reexports.push((n, g, imp.source_span, true));
                    }
                    let types: Vec<String> = self.linker.modules[m].type_exports.iter().cloned().collect();
                    self.linker.modules[self.module].type_exports.extend(types);
                }
            }
            ImportKind::ReExport(list) => {
                for (imported, exported) in list {
                    let Some(m) = target else { continue };
                    if let Some(&g) = self.linker.modules[m].exports.get(&imported.name) {
                        self.reexports.push((exported.name.clone(), g, exported.span, false));
                    } else if self.linker.modules[m].type_exports.contains(&imported.name) {
                        self.linker.modules[self.module].type_exports.insert(exported.name.clone());
                    } else if !self.linker.modules[m].broken {
                        self.missing_export(imp, m, imported);
                    }
                }
            }
            ImportKind::Named(list) => {
                for (imported, local) in list {
                    let slot = match target {
                        Some(m) => match self.linker.modules[m].exports.get(&imported.name) {
                            Some(&g) => Some(g),
                            // A type: erased, binds nothing.
                            None if self.linker.modules[m].type_exports.contains(&imported.name) => continue,
                            None => {
                                if !self.linker.modules[m].broken {
                                    self.missing_export(imp, m, imported);
                                }
                                None
                            }
                        },
                        None => None,
                    };
                    self.declare_import(local, slot);
                }
            }
            ImportKind::Namespace(local) => {
                let slot = target.map(|m| self.linker.namespace_slot(m));
                if let (Some(m), Some(s)) = (target, slot) {
                    self.out.namespaces.insert(s, self.linker.modules[m].exports.clone());
                }
                self.declare_import(local, slot);
            }
        }
    }

    /// `import { x } from "m"` (or `import x from "m"`, `export { x } from
    /// "m"`) where `m` has no such export.
    fn missing_export(&mut self, imp: &ImportDecl, m: usize, imported: &Ident) {
        let mname = self.linker.modules[m].name.clone();
        let mut names: Vec<&String> = self.linker.modules[m].exports.keys().filter(|n| *n != "default").collect();
        names.sort();
        let list = names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
        let (msg, label, hint) = if imported.name == "default" {
            let hint = match names.first() {
                Some(n) => format!(
                    "`{mname}` exports only names ({list}): import by name, e.g. `import {{ {n} }} from \"{}\"`",
                    imp.source
                ),
                None => format!("`{mname}` exports nothing; add `export default ...` to it"),
            };
            (format!("module `{}` has no default export", imp.source), "no `export default` in that module", hint)
        } else {
            let hint = if names.is_empty() {
                format!("`{mname}` exports nothing")
            } else {
                format!("`{mname}` exports: {list}")
            };
            (format!("module `{}` has no export named `{}`", imp.source, imported.name), "not exported", hint)
        };
        self.error(imported.span, msg, label, Some(hint));
    }

    fn declare_import(&mut self, local: &Ident, slot: Option<u32>) {
        let id = self.declare(local, BindKind::Import);
        let b = &mut self.out.bindings[id as usize];
        if b.kind == BindKind::Import && b.global.is_none() {
            // Unresolvable imports still get a (never written) slot so that
            // uses resolve without cascading errors.
            b.global = Some(match slot {
                Some(s) => s,
                None => self.linker.add_global(&local.name),
            });
        }
    }

    // ---- statements ------------------------------------------------------------

    fn hoist(&mut self, stmts: &[Stmt]) {
        let mut items = Vec::new();
        block_decls(stmts, &mut items);
        for it in items {
            let kind = match it {
                DeclItem::Var(VarKind::Let, _) => BindKind::Let,
                DeclItem::Var(VarKind::Const, _) => BindKind::Const,
                DeclItem::Function(..) => BindKind::Function,
                DeclItem::Class(..) => BindKind::Class,
            };
            self.declare(it.ident(), kind);
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.push_scope();
        self.hoist(stmts);
        self.stmts(stmts);
        self.pop_scope();
    }

    fn jumps(&mut self) -> &mut Vec<JumpCtx> {
        &mut self.funcs.last_mut().expect("function").jumps
    }

    fn with_jump(&mut self, kind: JumpKind, labels: Vec<String>, f: impl FnOnce(&mut Self)) {
        self.jumps().push(JumpCtx { labels, kind });
        f(self);
        self.jumps().pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        // Labels written before a loop belong to that loop.
        let labels = if is_loop(s) { std::mem::take(&mut self.pending_labels) } else { Vec::new() };
        if !matches!(s.kind, StmtKind::Labeled { .. }) {
            self.pending_labels.clear();
        }
        match &s.kind {
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::Var(d) => self.var_decl(d),
            StmtKind::Function(f) => {
                self.tdz.next_decl = f.name.as_ref().and_then(|n| self.out.binding_of_decl(n));
                self.tdz.next_created = self.scopes.last().map(|sc| sc.entry);
                self.function(f)
            }
            StmtKind::Class(c) => self.class(c, true),
            StmtKind::Enum(e) => self.enum_decl(e),
            StmtKind::TypeAlias { .. } | StmtKind::Interface { .. } | StmtKind::Empty | StmtKind::Import(_) => {}
            StmtKind::Block(b) => self.block(b),
            StmtKind::If { cond, then, otherwise } => {
                self.expr(cond);
                self.sub_stmt(then);
                if let Some(o) = otherwise {
                    self.sub_stmt(o);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.with_jump(JumpKind::Loop, labels, |r| r.sub_stmt(body));
            }
            StmtKind::DoWhile { body, cond } => {
                self.with_jump(JumpKind::Loop, labels, |r| r.sub_stmt(body));
                self.expr(cond);
            }
            StmtKind::For { init, cond, update, body } => {
                self.push_scope();
                // The loop's own bindings may change in its header (`i++`):
                // each iteration's copy changes before the body runs.
                let mut header = HashSet::new();
                match init {
                    Some(ForInit::Var(d)) => {
                        for decl in &d.decls {
                            let mut ids = Vec::new();
                            pattern_idents(&decl.target, &mut ids);
                            for i in ids {
                                header.insert(self.declare(
                                    i,
                                    if d.kind == VarKind::Const { BindKind::Const } else { BindKind::Let },
                                ));
                            }
                        }
                        let outer = std::mem::replace(&mut self.captures.header, header);
                        self.var_decl(d);
                        header = std::mem::replace(&mut self.captures.header, outer);
                    }
                    Some(ForInit::Expr(e)) => self.expr(e),
                    None => {}
                }
                let outer = std::mem::replace(&mut self.captures.header, header);
                if let Some(c) = cond {
                    self.expr(c);
                }
                if let Some(u) = update {
                    self.expr(u);
                }
                self.captures.header = HashSet::new();
                self.with_jump(JumpKind::Loop, labels, |r| r.sub_stmt(body));
                self.captures.header = outer;
                self.pop_scope();
            }
            StmtKind::ForOf { decl, target, iterable: object, body, .. }
            | StmtKind::ForIn { decl, target, object, body } => {
                self.expr(object);
                self.push_scope();
                match decl {
                    Some(kind) => {
                        let mut ids = Vec::new();
                        pattern_idents(target, &mut ids);
                        for i in ids {
                            self.declare(i, if *kind == VarKind::Const { BindKind::Const } else { BindKind::Let });
                        }
                        self.pattern_inner(target);
                        self.note_init(target);
                    }
                    None => self.assign_pattern(target),
                }
                self.with_jump(JumpKind::Loop, labels, |r| r.sub_stmt(body));
                self.pop_scope();
            }
            StmtKind::Break(label) => self.break_stmt(s.span, label.as_ref()),
            StmtKind::Continue(label) => self.continue_stmt(s.span, label.as_ref()),
            StmtKind::Return(e) => {
                if self.funcs.last().is_some_and(|f| f.is_module) {
                    self.error(
                        span_of_keyword(s.span, "return"),
                        "`return` outside of a function",
                        "cannot return from top-level code",
                        Some("to end the program early, call `exit(code)`".into()),
                    );
                }
                if let Some(e) = e {
                    self.expr(e);
                }
            }
            StmtKind::Throw(e) => self.expr(e),
            StmtKind::Try { block, handler, finalizer } => {
                self.block(block);
                if let Some(h) = handler {
                    self.push_scope();
                    if let Some(p) = &h.param {
                        let mut ids = Vec::new();
                        pattern_idents(p, &mut ids);
                        for i in ids {
                            self.declare(i, BindKind::CatchParam);
                        }
                        self.pattern_inner(p);
                        self.note_init(p);
                    }
                    self.renew_entry();
                    self.hoist(&h.body);
                    self.stmts(&h.body);
                    self.pop_scope();
                }
                if let Some(f) = finalizer {
                    self.block(f);
                }
            }
            StmtKind::Switch { discriminant, cases } => {
                self.expr(discriminant);
                self.push_scope();
                let outer_clause = self.tdz.clause;
                for c in cases {
                    self.hoist(&c.body);
                    // Each clause's own `let`/`const`s.
                    self.tdz.clauses += 1;
                    let mut items = Vec::new();
                    block_decls(&c.body, &mut items);
                    for it in items {
                        if let (DeclItem::Var(..), Some(b)) = (&it, self.out.binding_of_decl(it.ident())) {
                            self.tdz.switch_clause.insert(b, self.tdz.clauses);
                        }
                    }
                }
                let first_clause = self.tdz.clauses - cases.len() as u32 + 1;
                self.with_jump(JumpKind::Switch, labels, |r| {
                    for c in cases {
                        if let Some(t) = &c.test {
                            r.expr(t);
                        }
                    }
                    for (k, c) in cases.iter().enumerate() {
                        r.tdz.clause = first_clause + k as u32;
                        r.stmts(&c.body);
                    }
                });
                self.tdz.clause = outer_clause;
                self.pop_scope();
            }
            StmtKind::Labeled { label, body } => {
                let mut labels = std::mem::take(&mut self.pending_labels);
                if labels.contains(&label.name) || self.jumps().iter().any(|j| j.labels.contains(&label.name)) {
                    self.error(
                        label.span,
                        format!("label `{}` is already in use", label.name),
                        "duplicate label",
                        None,
                    );
                }
                labels.push(label.name.clone());
                if matches!(body.kind, StmtKind::Labeled { .. }) || is_loop(body) {
                    self.pending_labels = labels;
                    self.stmt(body);
                } else {
                    self.jumps().push(JumpCtx { labels, kind: JumpKind::Block });
                    self.stmt(body);
                    self.jumps().pop();
                }
            }
            StmtKind::Select(cases) => {
                for c in cases {
                    match &c.kind {
                        SelectCaseKind::Receive { channel, .. } => self.expr(channel),
                        SelectCaseKind::Send { channel, value } => {
                            self.expr(channel);
                            self.expr(value);
                        }
                        SelectCaseKind::Timeout(ms) => self.expr(ms),
                        SelectCaseKind::Default => {}
                    }
                }
                let defaults: Vec<&SelectCase> =
                    cases.iter().filter(|c| matches!(c.kind, SelectCaseKind::Default)).collect();
                if defaults.len() > 1 {
                    self.error(
                        defaults[1].span,
                        "a `select` has more than one `default` case",
                        "second `default`",
                        None,
                    );
                }
                if let Some(c) = cases.get(crate::bytecode::MAX_SELECT_CASES) {
                    self.error(
                        c.span,
                        format!("a `select` has more than {} cases", crate::bytecode::MAX_SELECT_CASES),
                        "one case too many",
                        None,
                    );
                }
                self.with_jump(JumpKind::Select, labels, |r| {
                    for c in cases {
                        r.push_scope();
                        if let SelectCaseKind::Receive { binding: Some((kind, p)), .. } = &c.kind {
                            let mut ids = Vec::new();
                            pattern_idents(p, &mut ids);
                            for i in ids {
                                r.declare(i, if *kind == VarKind::Const { BindKind::Const } else { BindKind::Let });
                            }
                            r.pattern_inner(p);
                            r.note_init(p);
                        }
                        r.hoist(&c.body);
                        r.stmts(&c.body);
                        r.pop_scope();
                    }
                });
            }
            StmtKind::Export(inner) => {
                if !self.is_module_scope() {
                    self.error(
                        s.span,
                        "`export` is only allowed at the top level of a module",
                        "not at top level",
                        None,
                    );
                }
                self.stmt(inner)
            }
            StmtKind::ExportList(_) => {
                if !self.is_module_scope() {
                    self.error(
                        s.span,
                        "`export` is only allowed at the top level of a module",
                        "not at top level",
                        None,
                    );
                }
            }
        }
    }

    /// A statement in a position where it is not a block (`if (c) let x`):
    /// declarations still get their own scope.
    fn sub_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Var(_) | StmtKind::Function(_) | StmtKind::Class(_) => self.block(std::slice::from_ref(s)),
            _ => self.stmt(s),
        }
    }

    fn break_stmt(&mut self, span: Span, label: Option<&Ident>) {
        let jumps = &self.funcs.last().expect("function").jumps;
        match label {
            None => {
                if !jumps.iter().any(|j| j.kind != JumpKind::Block) {
                    self.error(
                        span_of_keyword(span, "break"),
                        "`break` outside of a loop or switch",
                        "cannot `break` here",
                        Some("`break` is only valid inside a loop, a `switch` or a `select`".into()),
                    );
                }
            }
            Some(l) => {
                if !jumps.iter().any(|j| j.labels.contains(&l.name)) {
                    self.error(l.span, format!("use of undeclared label `{}`", l.name), "undeclared label", None);
                }
            }
        }
    }

    fn continue_stmt(&mut self, span: Span, label: Option<&Ident>) {
        let jumps = &self.funcs.last().expect("function").jumps;
        match label {
            None => {
                if !jumps.iter().any(|j| j.kind == JumpKind::Loop) {
                    self.error(
                        span_of_keyword(span, "continue"),
                        "`continue` outside of a loop",
                        "cannot `continue` here",
                        Some("`continue` is only valid inside a loop".into()),
                    );
                }
            }
            Some(l) => match jumps.iter().rev().find(|j| j.labels.contains(&l.name)) {
                None => {
                    self.error(l.span, format!("use of undeclared label `{}`", l.name), "undeclared label", None)
                }
                Some(j) if j.kind != JumpKind::Loop => self.error(
                    l.span,
                    format!("`continue` target `{}` is not a loop", l.name),
                    "not a loop label",
                    Some("`continue` can only name the label of an enclosing loop; use `break` to leave a labelled block".into()),
                ),
                Some(_) => {}
            },
        }
    }

    fn var_decl(&mut self, d: &VarDecl) {
        for decl in &d.decls {
            let mut deferred = None;
            if let Some(init) = &decl.init {
                let saved = self.tdz.deferred.take();
                self.tdz.defer_next = matches!(
                    (&decl.target.kind, &super::decls::unwrap_erased(init).kind),
                    (PatternKind::Ident(_), ExprKind::Function(_))
                );
                self.expr(init);
                self.tdz.defer_next = false;
                deferred = std::mem::replace(&mut self.tdz.deferred, saved);
                if let (VarKind::Const, PatternKind::Ident(i), Some(v)) =
                    (d.kind, &decl.target.kind, ConstVal::of(init))
                {
                    if let Some(id) = self.out.binding_of_decl(i) {
                        match self.out.bindings[id as usize].global {
                            Some(g) => {
                                self.linker.global_consts.insert(g, v);
                            }
                            None => {
                                self.out.const_values.insert(id, v);
                            }
                        }
                    }
                }
            }
            self.pattern_inner(&decl.target);
            // Names not hoisted (e.g. a declaration in an unusual position)
            // are declared here.
            let mut ids = Vec::new();
            pattern_idents(&decl.target, &mut ids);
            for i in ids {
                if !self.out.decls.contains_key(&i.span.start) {
                    self.declare(i, if d.kind == VarKind::Const { BindKind::Const } else { BindKind::Let });
                }
            }
            self.note_init(&decl.target);
            if let Some(f) = deferred {
                self.tdz.births[f] = Some(self.next_tick());
            }
        }
    }

    /// Walks the expressions inside a declaration pattern (defaults,
    /// computed keys); its names are declared by the caller. Each element
    /// is bound before the next one's default runs (`[a, b = a]`).
    fn pattern_inner(&mut self, p: &Pattern) {
        match &p.kind {
            PatternKind::Ident(_) => {}
            PatternKind::Array { elems, rest } => {
                for e in elems.iter().flatten() {
                    self.pattern_inner(&e.pattern);
                    if let Some(d) = &e.default {
                        self.expr(d);
                    }
                    self.note_init(&e.pattern);
                }
                if let Some(r) = rest {
                    self.pattern_inner(r);
                }
            }
            PatternKind::Object { props, rest } => {
                for pr in props {
                    if let PropKey::Computed(k) = &pr.key {
                        self.expr(k);
                    }
                    self.pattern_inner(&pr.value);
                    if let Some(d) = &pr.default {
                        self.expr(d);
                    }
                    self.note_init(&pr.value);
                }
                if let Some(r) = rest {
                    self.pattern_inner(r);
                }
            }
            PatternKind::Expr(e) => self.expr(e),
        }
    }

    /// An assignment target (`x = `, `[a, b] = `, `for (x of …)`).
    fn assign_pattern(&mut self, p: &Pattern) {
        match &p.kind {
            PatternKind::Ident(i) => self.assign_ident(i),
            PatternKind::Array { elems, rest } => {
                for e in elems.iter().flatten() {
                    self.assign_pattern(&e.pattern);
                    if let Some(d) = &e.default {
                        self.expr(d);
                    }
                }
                if let Some(r) = rest {
                    self.assign_pattern(r);
                }
            }
            PatternKind::Object { props, rest } => {
                for pr in props {
                    if let PropKey::Computed(k) = &pr.key {
                        self.expr(k);
                    }
                    self.assign_pattern(&pr.value);
                    if let Some(d) = &pr.default {
                        self.expr(d);
                    }
                }
                if let Some(r) = rest {
                    self.assign_pattern(r);
                }
            }
            PatternKind::Expr(e) => self.assign_target_expr(e),
        }
    }

    fn assign_target_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Ident(i) => self.assign_ident(i),
            ExprKind::Member { .. } | ExprKind::Index { .. } => self.expr(e),
            ExprKind::As(inner, _) | ExprKind::NonNull(inner) => self.assign_target_expr(inner),
            ExprKind::Error => {}
            _ => {
                self.expr(e);
                self.error(e.span, "invalid assignment target", "cannot be assigned to", None);
            }
        }
    }

    // ---- functions and classes ---------------------------------------------------

    /// A function, arrow, method, getter, setter or constructor.
    fn function(&mut self, f: &Function) {
        let mut ctx = self.new_func(false);
        ctx.is_generator = f.is_generator;
        self.funcs.push(ctx);
        self.push_scope();
        if !f.is_arrow {
            let id = self.new_binding("this", BindKind::This, f.span, None);
            self.scopes.last_mut().expect("scope").names.insert("this".into(), id);
            self.out.this_of.insert(f.span.start, id);
        }
        for p in &f.params {
            let mut ids = Vec::new();
            pattern_idents(&p.pattern, &mut ids);
            for i in ids {
                self.declare(i, BindKind::Param);
            }
        }
        for p in &f.params {
            self.pattern_inner(&p.pattern);
            if let Some(d) = &p.default {
                self.expr(d);
            }
            self.note_init(&p.pattern);
        }
        // The body's function declarations are made once the parameters
        // are bound.
        self.renew_entry();
        match &f.body {
            FunctionBody::Block(stmts) => {
                self.hoist(stmts);
                self.stmts(stmts);
            }
            FunctionBody::Expr(e) => self.expr(e),
        }
        self.pop_scope();
        self.funcs.pop();
    }

    fn function_expr(&mut self, f: &Function) {
        match &f.name {
            Some(n) if !f.is_arrow => {
                self.push_scope();
                self.declare(n, BindKind::FnName);
                self.function(f);
                self.pop_scope();
            }
            _ => self.function(f),
        }
    }

    fn class(&mut self, c: &Class, is_decl: bool) {
        if let Some(ext) = &c.extends {
            self.expr(ext);
        }
        let inner = !is_decl && c.name.is_some();
        // The members of a declared class run no earlier than the first use
        // of its name, unless a static initialiser can run them at once
        // (`static x = new this()`).
        let runs_at_definition = c
            .members
            .iter()
            .any(|m| m.is_static && matches!(m.kind, ClassMemberKind::Field { .. } | ClassMemberKind::StaticBlock(_)));
        let decl = if is_decl && !runs_at_definition {
            c.name.as_ref().and_then(|n| self.out.binding_of_decl(n))
        } else {
            None
        };
        if inner {
            self.push_scope();
            self.declare(c.name.as_ref().expect("name"), BindKind::ClassInner);
        }
        let mut ctors = 0;
        for m in &c.members {
            match &m.kind {
                ClassMemberKind::Constructor(f) => {
                    ctors += 1;
                    if ctors > 1 {
                        self.error(m.span, "a class may only have one constructor", "second constructor", None);
                    }
                    self.tdz.next_decl = decl;
                    self.function(f);
                }
                ClassMemberKind::Method { key, func }
                | ClassMemberKind::Getter { key, func }
                | ClassMemberKind::Setter { key, func } => {
                    self.prop_key(key);
                    self.tdz.next_decl = decl;
                    self.function(func);
                }
                ClassMemberKind::StaticBlock(f) => {
                    self.tdz.next_decl = decl;
                    self.function(f);
                }
                ClassMemberKind::Field { key, init, .. } => {
                    self.prop_key(key);
                    if m.is_static {
                        if let Some(i) = init {
                            self.expr(i);
                        }
                    }
                }
            }
        }
        // Instance field initialisers run as one method-like function.
        let has_fields = c.members.iter().any(|m| !m.is_static && matches!(m.kind, ClassMemberKind::Field { .. }));
        if has_fields {
            self.tdz.next_decl = decl;
            let ctx = self.new_func(false);
            self.funcs.push(ctx);
            self.push_scope();
            let id = self.new_binding("this", BindKind::This, c.span, None);
            self.scopes.last_mut().expect("scope").names.insert("this".into(), id);
            self.out.field_this_of.insert(c.span.start, id);
            for m in &c.members {
                if let (false, ClassMemberKind::Field { init: Some(i), .. }) = (m.is_static, &m.kind) {
                    self.expr(i);
                }
            }
            self.pop_scope();
            self.funcs.pop();
        }
        if inner {
            self.pop_scope();
        }
    }

    fn prop_key(&mut self, k: &PropKey) {
        if let PropKey::Computed(e) = k {
            self.expr(e);
        }
    }

    // ---- expressions ---------------------------------------------------------------

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Number(_)
            | ExprKind::String(_)
            | ExprKind::Regex { .. }
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::Undefined
            | ExprKind::Error => {}
            // `super.m()` calls `m` with the lexical `this` (also inside an
            // arrow function): recorded like a use of `this`.
            ExprKind::Super => {
                let r = match self.lookup("this") {
                    Some(id) => Ref::Local(id),
                    None => Ref::Undefined,
                };
                self.out.refs.insert(e.span.start, r);
            }
            ExprKind::Template(parts) => {
                for p in parts {
                    if let TemplatePart::Expr(x) = p {
                        self.expr(x);
                    }
                }
            }
            ExprKind::Ident(i) => {
                self.use_ident(i);
            }
            ExprKind::This => {
                let r = match self.lookup("this") {
                    Some(id) => Ref::Local(id),
                    None => Ref::Undefined,
                };
                self.out.refs.insert(e.span.start, r);
            }
            ExprKind::Array(elems) => {
                for el in elems {
                    match el {
                        ArrayElem::Expr(x) | ArrayElem::Spread(x) => self.expr(x),
                        ArrayElem::Hole => {}
                    }
                }
            }
            ExprKind::Object(props) => {
                for p in props {
                    match p {
                        ObjectProp::KeyValue(k, v) => {
                            self.prop_key(k);
                            self.expr(v);
                        }
                        ObjectProp::Spread(x) => self.expr(x),
                        ObjectProp::Method(k, f) | ObjectProp::Getter(k, f) | ObjectProp::Setter(k, f) => {
                            self.prop_key(k);
                            self.function(f);
                        }
                    }
                }
            }
            ExprKind::Function(f) => self.function_expr(f),
            ExprKind::Class(c) => self.class(c, false),
            ExprKind::Unary(_, a) | ExprKind::Await(a) | ExprKind::As(a, _) | ExprKind::NonNull(a) => self.expr(a),
            ExprKind::Yield { arg, .. } => {
                if !self.funcs.last().is_some_and(|f| f.is_generator) {
                    self.error(
                        span_of_keyword(e.span, "yield"),
                        "`yield` outside of a generator function",
                        "not inside a `function*`",
                        Some("declare the enclosing function with `function*` (or a method with `*name()`)".into()),
                    );
                }
                if let Some(a) = arg {
                    self.expr(a);
                }
            }
            ExprKind::Spawn(a) => {
                if !matches!(super::decls::unwrap_erased(a).kind, ExprKind::Call { .. } | ExprKind::Error) {
                    self.error(
                        a.span,
                        "`async` before an expression must be followed by a call",
                        "not a call",
                        Some("write `async f(x)` to run `f(x)` as a new task".into()),
                    );
                }
                self.expr(a)
            }
            ExprKind::Update { target, .. } => match &super::decls::unwrap_erased(target).kind {
                ExprKind::Ident(i) => self.assign_ident(i),
                ExprKind::Member { .. } | ExprKind::Index { .. } => self.expr(target),
                ExprKind::Error => {}
                _ => {
                    self.expr(target);
                    self.error(target.span, "invalid increment/decrement operand", "cannot be assigned to", None);
                }
            },
            ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Assign { op, target, value } => {
                if *op != AssignOp::Assign && !matches!(&target.kind, PatternKind::Ident(_) | PatternKind::Expr(_)) {
                    self.error(
                        target.span,
                        "invalid left-hand side in compound assignment",
                        "cannot be destructured",
                        None,
                    );
                }
                self.assign_pattern(target);
                self.expr(value);
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            ExprKind::Call { callee, args, .. } | ExprKind::New { callee, args } => {
                self.expr(callee);
                for a in args {
                    match a {
                        Argument::Expr(x) | Argument::Spread(x) => self.expr(x),
                    }
                }
            }
            ExprKind::Member { object, .. } | ExprKind::PrivateIn { object, .. } => self.expr(object),
            ExprKind::Index { object, index, .. } => {
                self.expr(object);
                self.expr(index);
            }
            ExprKind::Sequence(es) => {
                for x in es {
                    self.expr(x);
                }
            }
            ExprKind::TaggedTemplate { tag, exprs, .. } => {
                self.expr(tag);
                for x in exprs {
                    self.expr(x);
                }
            }
        }
    }

    /// `enum E { ... }`: each member's initialiser sees the members before
    /// it as local constants (TypeScript's scoping of enum members), and
    /// `E` itself, initialised first (the object being filled).
    fn enum_decl(&mut self, e: &EnumDecl) {
        if !self.out.decls.contains_key(&e.name.span.start) {
            self.declare(&e.name, BindKind::Const);
        }
        if let Some(b) = self.out.binding_of_decl(&e.name) {
            let t = self.next_tick();
            self.tdz.init.entry(b).or_insert(t);
        }
        self.push_scope();
        for m in &e.members {
            if let Some(init) = &m.init {
                self.expr(init);
            }
            if self.scopes.last().is_some_and(|s| s.names.contains_key(&m.name.name)) {
                self.error(m.name.span, format!("duplicate enum member `{}`", m.name.name), "declared twice", None);
                continue;
            }
            let id = self.declare(&m.name, BindKind::Const);
            let t = self.next_tick();
            self.tdz.init.entry(id).or_insert(t);
        }
        self.pop_scope();
    }
}

/// The name declared by a `type` alias or `interface` statement.
fn type_decl_name(s: &Stmt) -> Option<&str> {
    match &s.kind {
        StmtKind::TypeAlias { name, .. } | StmtKind::Interface { name, .. } => Some(&name.name),
        _ => None,
    }
}

/// The span of a statement's leading keyword (for `break;` errors the
/// caret goes under the keyword, not the whole statement).
fn span_of_keyword(stmt: Span, kw: &str) -> Span {
    let end = (stmt.start + kw.len() as u32).min(stmt.end.max(stmt.start));
    Span { start: stmt.start, end }
}
