//! AST to bytecode.
//!
//! `compile_file` / `compile_source` load the entry module and, recursively,
//! everything it imports (`module loading` below), resolve every module in
//! dependency order ([`resolve`]), and generate code ([`codegen`], with
//! [`expr`], [`pattern`] and [`class`]). The result is a [`Program`] whose
//! entry function first runs the prelude (`stdlib/prelude.raya`) and every
//! imported module body once, imports first, and then the entry module's
//! own body.
//!
//! Each module's top-level bindings are global slots (after the built-in
//! globals of [`crate::builtins::GLOBAL_NAMES`]); an import is just another
//! name for the exporting module's slot, so imports are live bindings.
//! `import * as ns` reads a hidden global slot holding an object built from
//! the module's exports right after its body has run.
//!
//! Nothing is generated when any module has an error: every diagnostic of
//! every file is returned at once in a [`CompileError`].

mod class;
mod codegen;
mod decls;
mod expr;
mod image;
mod pattern;
// Generated (see `image`): left as written, so that the test comparing it
// with a fresh compilation sees exactly what it wrote.
#[cfg(prelude_image)]
#[rustfmt::skip]
mod prelude_image;
mod resolve;

#[cfg(test)]
mod tests;

use crate::builtins::GLOBAL_NAMES;
use crate::bytecode::{FuncProto, Instr};
use crate::std::{Capabilities, StdLink};
use crate::syntax::ast;
use crate::syntax::diagnostic::{edit_distance, Diagnostic, FileId, SourceMap};
use crate::syntax::span::Span;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The prelude: array methods written in Raya (see `stdlib/prelude.raya`).
pub const PRELUDE: &str = include_str!("../../../../stdlib/prelude.raya");

/// A compiled program.
#[derive(Debug, Clone)]
pub struct Program {
    /// The main task's function: runs the prelude, then every module body
    /// once, in dependency order (imports first).
    pub entry: Arc<FuncProto>,
    /// Every file loaded (for diagnostics and stack traces).
    pub sources: SourceMap,
    /// Global slot -> name: `builtins::GLOBAL_NAMES` first, then every
    /// module's top-level bindings. For code added to a live program
    /// ([`compile_live`]), only the slots it added, from `global_base` on.
    pub global_names: Vec<String>,
    /// The slot of `global_names[0]`: 0, or for code added to a live
    /// program the slots used before it.
    pub global_base: usize,
    /// Number of host globals (see [`compile_source_with`]): they
    /// occupy the slots from `host_base` on.
    pub host_globals: usize,
    /// The slot of the first host global: after `builtins::GLOBAL_NAMES`
    /// and the prelude's own top-level bindings.
    pub host_base: usize,
    /// The built-in modules (`std:fs`, ...) the program imports, and where
    /// their natives go (see `crate::std`).
    pub std_modules: Vec<StdLink>,
    /// Every capability the program needs: its built-in modules' and its
    /// gated globals' (`crate::std::GATED_GLOBALS`). A VM refuses to run a
    /// program that needs more than it grants.
    pub needs: Capabilities,
    /// The entry module's exports, by name: their global slots (the
    /// embedding API reads, writes and calls them).
    pub exports: Vec<(String, u32)>,
    /// The global slot holding the entry module's completion value (that
    /// of the last top-level expression statement run); 0 for code whose
    /// function returns it ([`LiveInput::returns_completion`]).
    pub completion_slot: u32,
    /// The entry module's own top-level bindings: (name, global slot,
    /// declared `const`). Used by [`compile_live`].
    pub declared: Vec<(String, u32, bool)>,
}

/// What a compilation may use besides the language itself.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// Extra global names (host functions of the embedding API): every
    /// module sees them as read-only globals, in the slots right after the
    /// built-in globals, in this order (a module that declares a top-level
    /// binding of the same name shadows it).
    pub host_globals: Vec<String>,
    /// The built-in modules that may be imported: importing one whose
    /// capability is missing is a compile error naming it.
    pub capabilities: Capabilities,
}

impl Default for CompileOptions {
    /// No host globals; every capability (as `raya run`).
    fn default() -> Self {
        CompileOptions { host_globals: Vec::new(), capabilities: Capabilities::all() }
    }
}

/// What has been compiled into a live program so far (a loaded
/// program's instance, or an interactive session, see
/// [`compile_live`]): its global slots, the names later code sees, and
/// its files.
#[derive(Clone, Debug, Default)]
pub struct LiveScope {
    /// How many global slots the live program has used; 0 before
    /// anything was compiled (then the code is the program's first and
    /// brings the prelude). Only the count: later code's slots come after
    /// these, and copying a program's slot names for every `eval` would
    /// cost more than compiling it.
    pub slots: usize,
    /// The names later code sees: name -> (global slot, read-only). The
    /// REPL's earlier inputs' top-level bindings (read-only: `const`); an
    /// instance's exports and host functions (read-only, as imports are)
    /// and the declarations of earlier `eval`s. A later declaration of
    /// the same name replaces its entry (and gets a new slot).
    pub bindings: HashMap<String, (u32, bool)>,
    /// Every file the live program has loaded (the prelude, its modules,
    /// earlier code): stack traces of earlier code's functions keep
    /// pointing into them.
    pub sources: SourceMap,
}

/// How code is added to a live program ([`compile_live`]).
#[derive(Clone, Copy, Debug)]
pub struct LiveInput {
    /// Built-in modules the code may import (see [`CompileOptions`]).
    pub capabilities: Capabilities,
    /// The code may import modules (the REPL); if not, an `import` is a
    /// compile error (an instance's `eval`).
    pub imports: bool,
    /// The code's function returns its completion value, a task or
    /// promise being awaited (an instance's `eval`); if not, the value
    /// goes to [`Program::completion_slot`] as an entry module's does.
    pub returns_completion: bool,
}

/// Compiles `src` (named `name` in stack traces) as code added to the
/// live program whose state is `scope`: an entry module that sees
/// `scope`'s bindings as an outer scope (their global slots) and whose own
/// top-level declarations get slots after every slot `scope` used, so the
/// live program only ever grows. The prelude is compiled into the first
/// code only (its methods are installed in the program once). Returns the
/// program (whose `global_names` and `sources` extend `scope`'s) and the
/// scope after it. Used by the REPL for each input and by
/// `Instance::eval`.
pub fn compile_live(
    name: &str,
    src: &str,
    scope: &LiveScope,
    input: LiveInput,
) -> Result<(Program, LiveScope), CompileError> {
    let opts = CompileOptions { host_globals: Vec::new(), capabilities: input.capabilities };
    let program = compile_here(PathBuf::from(name), name.to_string(), src.to_string(), &opts, Some((scope, input)))?;
    let mut next = LiveScope {
        slots: program.global_base + program.global_names.len(),
        bindings: scope.bindings.clone(),
        sources: program.sources.clone(),
    };
    for (name, slot, is_const) in &program.declared {
        next.bindings.insert(name.clone(), (*slot, *is_const));
    }
    Ok((program, next))
}

/// Compilation failed: every error of every file.
#[derive(Debug, Clone)]
pub struct CompileError {
    pub sources: SourceMap,
    /// Diagnostics whose `file` is not in `sources` (e.g. the entry file
    /// could not be read) render as a single `error: message` line.
    pub diagnostics: Vec<Diagnostic>,
}

impl CompileError {
    /// rustc-style rendering of every diagnostic, with a summary line.
    pub fn render(&self) -> String {
        let (plain, located): (Vec<Diagnostic>, Vec<Diagnostic>) =
            self.diagnostics.iter().cloned().partition(|d| d.file >= self.sources.len());
        let mut s = String::new();
        for d in &plain {
            s.push_str(&format!("error: {}\n", d.message));
        }
        if !located.is_empty() {
            s.push_str(&self.sources.render(&located));
        }
        s
    }

    fn plain(sources: SourceMap, message: String) -> CompileError {
        CompileError { sources, diagnostics: vec![Diagnostic::new(usize::MAX, Span::default(), message)] }
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.render().trim_end())
    }
}

impl std::error::Error for CompileError {}

/// Compiles the program whose entry module is the file at `path` (every
/// built-in module may be imported).
pub fn compile_file(path: &Path) -> Result<Program, CompileError> {
    compile_file_with(path, &CompileOptions::default())
}

/// [`compile_file`] with host globals and capabilities.
pub fn compile_file_with(path: &Path, opts: &CompileOptions) -> Result<Program, CompileError> {
    let display = path.to_string_lossy().into_owned();
    let path = with_suffix_fallback(path);
    match read_source(&path) {
        Ok(text) => compile_main(normalize(&path), display_name(&path, &display), text, opts),
        Err(msg) => Err(CompileError::plain(SourceMap::default(), format!("cannot read '{display}': {msg}"))),
    }
}

/// Compiles `src` as the entry module named `name`; its imports are
/// resolved relative to the current directory.
pub fn compile_source(name: &str, src: &str) -> Result<Program, CompileError> {
    compile_source_with(name, src, &CompileOptions::default())
}

/// [`compile_source`] with host globals and capabilities.
pub fn compile_source_with(name: &str, src: &str, opts: &CompileOptions) -> Result<Program, CompileError> {
    compile_main(PathBuf::from(name), name.to_string(), src.to_string(), opts)
}

// ---- linking state shared by the modules -------------------------------------

pub(crate) struct ModInfo {
    /// Display name (the path as the user would write it).
    pub name: String,
    pub exports: HashMap<String, u32>,
    /// Exported type names (`export type`, `export interface`): importable,
    /// erased.
    pub type_exports: std::collections::HashSet<String>,
    pub ns_slot: Option<u32>,
    /// Had syntax errors: no "no such export" errors against it.
    pub broken: bool,
}

pub(crate) struct Linker {
    pub globals: Vec<String>,
    /// The slot of `globals[0]` (see [`Program::global_base`]).
    pub global_base: usize,
    /// Global slots holding a `const` with a literal value.
    pub global_consts: HashMap<u32, resolve::ConstVal>,
    pub modules: Vec<ModInfo>,
    pub sources: SourceMap,
    /// What the host granted (see `crate::std::GATED_GLOBALS`).
    pub capabilities: Capabilities,
    /// The capabilities of the gated globals the program names.
    pub used: Capabilities,
    /// In an interactive session: the entry module's index and the
    /// earlier inputs' top-level bindings (name -> slot, `const`), which
    /// that module sees as an outer scope.
    pub outer: Option<(usize, OuterBindings)>,
}

/// Name -> (global slot, declared `const`): see [`LiveScope::bindings`].
pub(crate) type OuterBindings = HashMap<String, (u32, bool)>;

impl Linker {
    pub(crate) fn add_global(&mut self, name: &str) -> u32 {
        self.globals.push(name.to_string());
        (self.global_base + self.globals.len() - 1) as u32
    }

    /// The hidden slot holding module `m`'s namespace object.
    pub(crate) fn namespace_slot(&mut self, m: usize) -> u32 {
        if let Some(s) = self.modules[m].ns_slot {
            return s;
        }
        let s = self.add_global(&format!("<namespace {}>", self.modules[m].name));
        self.modules[m].ns_slot = Some(s);
        s
    }

    pub(crate) fn line_col(&self, file: FileId, offset: u32) -> (u32, u32) {
        self.sources.line_col(file, offset)
    }
}

// ---- module loading ------------------------------------------------------------

struct Module {
    file: FileId,
    ast: ast::Program,
    /// Directory imports are resolved against.
    dir: PathBuf,
    /// Import (by start offset of its source string) -> module index.
    imports: HashMap<u32, Option<usize>>,
}

#[derive(Clone, Copy, PartialEq)]
enum Visit {
    New,
    InProgress,
    Done,
}

struct Loader {
    linker: Linker,
    modules: Vec<Module>,
    by_path: HashMap<PathBuf, usize>,
    state: Vec<Visit>,
    order: Vec<usize>,
    stack: Vec<usize>,
    diags: Vec<Diagnostic>,
    capabilities: Capabilities,
    /// Built-in modules loaded so far: name -> (natives module, source
    /// module if it has one).
    std_loaded: HashMap<&'static str, (usize, Option<usize>)>,
    /// Modules compiled from a built-in module's source: they may import
    /// `std:NAME/native`.
    std_sources: std::collections::HashSet<usize>,
}

impl Loader {
    fn add_module(&mut self, name: String, text: String, dir: PathBuf) -> usize {
        let file = self.linker.sources.add(name.clone(), text);
        let (ast, diags) = crate::syntax::parse(&self.linker.sources.get(file).text, file);
        let broken = !diags.is_empty();
        self.diags.extend(diags);
        self.modules.push(Module { file, ast, dir, imports: HashMap::new() });
        self.linker.modules.push(ModInfo {
            name,
            exports: HashMap::new(),
            type_exports: Default::default(),
            ns_slot: None,
            broken,
        });
        self.state.push(Visit::New);
        self.modules.len() - 1
    }

    /// Depth-first over imports; `order` receives modules imports-first.
    fn visit(&mut self, m: usize) {
        self.state[m] = Visit::InProgress;
        self.stack.push(m);
        let file = self.modules[m].file;
        self.add_std_global_imports(m);
        let imports: Vec<(String, Span)> = self.modules[m]
            .ast
            .body
            .iter()
            .filter_map(|s| match &s.kind {
                ast::StmtKind::Import(i) => Some((i.source.clone(), i.source_span)),
                _ => None,
            })
            .collect();
        for (source, span) in imports {
            let target = self.load_import(m, &source, span, file);
            let mut edge = target;
            if let Some(t) = target {
                match self.state[t] {
                    Visit::New => self.visit(t),
                    Visit::InProgress => {
                        let at = self.stack.iter().position(|&x| x == t).unwrap_or(0);
                        let mut names: Vec<&str> =
                            self.stack[at..].iter().map(|&x| self.linker.modules[x].name.as_str()).collect();
                        names.push(&self.linker.modules[t].name);
                        let msg = format!("import cycle: {}", names.join(" -> "));
                        self.diags.push(
                            Diagnostic::new(file, span, msg)
                                .with_label("this import closes the cycle")
                                .with_hint("modules may not import each other in a cycle; move the shared code into a module both import"),
                        );
                        edge = None;
                    }
                    Visit::Done => {}
                }
            }
            self.modules[m].imports.insert(span.start, edge);
        }
        self.stack.pop();
        self.state[m] = Visit::Done;
        self.order.push(m);
    }

    /// Globals that live in a built-in module (`fetch` is `std:http`'s):
    /// a module that uses one without declaring it gets a synthetic
    /// `import { fetch } from "std:http"`, if the host granted that
    /// module's capability (else the name is undeclared, as any other).
    /// Its spans lie past the end of the module's text (and past those of
    /// `add_host_imports`), so they collide with no real token.
    fn add_std_global_imports(&mut self, m: usize) {
        if self.std_sources.contains(&m) {
            return;
        }
        let text = &self.linker.sources.get(self.modules[m].file).text;
        let base = text.len() as u32 + 1 + (1 << 20);
        let wanted: Vec<&(&str, &str)> = STD_GLOBALS
            .iter()
            .filter(|(name, module)| {
                contains_word(text, name)
                    && crate::std::find(module).is_some_and(|md| md.capability.is_none_or(|c| self.capabilities.has(c)))
            })
            .collect();
        if wanted.is_empty() {
            return;
        }
        let declared = declared_names(&self.modules[m].ast);
        for (i, &&(name, module)) in wanted.iter().enumerate() {
            if declared.contains(name) {
                continue;
            }
            let at = base + 2 * i as u32;
            let span = Span { start: at, end: at };
            let id_span = Span { start: at + 1, end: at + 1 };
            let ident = ast::Ident { name: name.to_string(), span: id_span };
            let imp = ast::ImportDecl {
                source: format!("std:{module}"),
                source_span: span,
                kind: ast::ImportKind::Named(vec![(ident.clone(), ident)]),
            };
            self.modules[m].ast.body.insert(0, ast::Stmt { kind: ast::StmtKind::Import(imp), span });
        }
    }

    /// Loads (once) the module an import names; reports failures at the
    /// import.
    fn load_import(&mut self, from: usize, source: &str, span: Span, file: FileId) -> Option<usize> {
        if let Some(name) = source.strip_prefix("std:") {
            return self.load_std(from, name, span, file);
        }
        let joined = self.modules[from].dir.join(source);
        let path = with_suffix_fallback(&joined);
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| normalize(&path));
        if let Some(&m) = self.by_path.get(&key) {
            return Some(m);
        }
        let name = normalize(&path).to_string_lossy().into_owned();
        match read_source(&path) {
            Ok(text) => {
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let m = self.add_module(name, text, dir);
                self.by_path.insert(key, m);
                Some(m)
            }
            Err(msg) => {
                let d = if !path.exists() {
                    Diagnostic::new(file, span, format!("cannot find module `{source}`"))
                        .with_label(format!(
                            "no such file: {}",
                            if source.ends_with(".raya") { name } else { format!("{name}.raya") }
                        ))
                        .with_hint("import paths are relative to the importing file")
                } else {
                    Diagnostic::new(file, span, format!("cannot read '{name}': {msg}")).with_label("imported here")
                };
                self.diags.push(d);
                None
            }
        }
    }
}

impl Loader {
    /// `std:NAME` (see `crate::std`): its natives become a module of
    /// hidden global slots, its source (if any) an ordinary module.
    fn load_std(&mut self, from: usize, name: &str, span: Span, file: FileId) -> Option<usize> {
        let (base, natives_only) = match name.strip_suffix("/native") {
            Some(base) if self.std_sources.contains(&from) => (base, true),
            _ => (name, false),
        };
        let Some(module) = crate::std::find(base) else {
            let mut d = Diagnostic::new(file, span, format!("unknown built-in module `std:{name}`"))
                .with_label("no such module");
            let near = crate::std::MODULES.iter().map(|m| (edit_distance(m.name, name), m.name)).min();
            if let Some((_, near)) = near.filter(|&(dist, _)| dist <= 3) {
                d = d.with_hint(format!("did you mean `std:{near}`?"));
            }
            self.diags.push(d);
            return None;
        };
        if let Some(cap) = module.capability.filter(|&c| !self.capabilities.has(c)) {
            self.diags.push(
                Diagnostic::new(
                    file,
                    span,
                    format!(
                        "module `std:{}` is not available: the host did not grant the `{}` capability",
                        module.name,
                        cap.name()
                    ),
                )
                .with_label("not granted"),
            );
            return None;
        }
        let (natives, source) = match self.std_loaded.get(module.name) {
            Some(&loaded) => loaded,
            None => {
                let natives_name = if module.source.is_some() {
                    format!("std:{}/native", module.name)
                } else {
                    format!("std:{}", module.name)
                };
                let exports = module
                    .natives
                    .iter()
                    .map(|&(n, _)| (n.to_string(), self.linker.add_global(&format!("{natives_name}.{n}"))))
                    .collect();
                // A placeholder in `modules`, so both lists stay indexed
                // alike; it has no code and is never visited.
                let natives = self.add_module(natives_name, String::new(), PathBuf::from("."));
                self.linker.modules[natives].exports = exports;
                self.linker.modules[natives].type_exports = module.types.iter().map(|t| t.to_string()).collect();
                self.state[natives] = Visit::Done;
                let source = module.source.map(|text| {
                    let m = self.add_module(format!("std:{}", module.name), text.to_string(), PathBuf::from("."));
                    self.std_sources.insert(m);
                    m
                });
                self.std_loaded.insert(module.name, (natives, source));
                (natives, source)
            }
        };
        if natives_only {
            Some(natives)
        } else {
            Some(source.unwrap_or(natives))
        }
    }
}

/// `path`, or `path.raya` when `path` does not exist and has no `.raya`
/// suffix.
fn with_suffix_fallback(path: &Path) -> PathBuf {
    if !path.exists() && path.extension().is_none_or(|e| e != "raya") {
        let mut s = path.as_os_str().to_owned();
        s.push(".raya");
        let p = PathBuf::from(s);
        if p.exists() {
            return p;
        }
    }
    path.to_path_buf()
}

/// Lexically normalised path (`./a/../b.raya` -> `b.raya`).
fn normalize(p: &Path) -> PathBuf {
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if matches!(out.last(), Some(Component::Normal(_))) {
                    out.pop();
                } else {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

fn display_name(path: &Path, as_written: &str) -> String {
    if Path::new(as_written) == path {
        as_written.to_string()
    } else {
        path.to_string_lossy().into_owned()
    }
}

/// Reads a UTF-8 source file; the error is a short reason.
fn read_source(path: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(path).map_err(io_reason)?;
    if meta.is_dir() {
        return Err("Is a directory".into());
    }
    let bytes = std::fs::read(path).map_err(io_reason)?;
    String::from_utf8(bytes).map_err(|_| "file is not valid UTF-8".to_string())
}

/// `io::Error` text without the " (os error N)" suffix.
fn io_reason(e: std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// The full source lines a span touches.
fn lines_of(text: &str, span: Span) -> Vec<&str> {
    let start = (span.start as usize).min(text.len());
    let end = (span.end as usize).clamp(start, text.len());
    let from = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let to = text[end..].find('\n').map_or(text.len(), |i| end + i);
    text.get(from..to).map(|s| s.lines().collect()).unwrap_or_default()
}

/// Whether `name` occurs in `line` as a whole identifier.
fn contains_word(line: &str, name: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    line.match_indices(name).any(|(i, _)| {
        let before = line[..i].chars().next_back();
        let after = line[i + name.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

/// The resolver and code generator recurse over the AST. Its depth is
/// bounded by the parser's nesting limit, which counts every link of a
/// chain (`a + b + …`, `a.b.c…`) as a level, so an ordinary 8 MB stack is
/// enough even unoptimised (`tests/deep_nesting.rs` compiles programs just
/// under the limit). They run on a helper thread of that size so that the
/// caller's own stack size does not matter.
fn compile_main(path: PathBuf, name: String, text: String, opts: &CompileOptions) -> Result<Program, CompileError> {
    const STACK_SIZE: usize = 8 << 20;
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("raya-compiler".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || compile_here(path.clone(), name.clone(), text.clone(), opts, None))
            .map(|h| h.join())
    });
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(panic)) => std::panic::resume_unwind(panic),
        Err(_) => compile_here(path, name, text, opts, None),
    }
}

/// Globals defined by a built-in module: (name, module after `std:`).
/// See `Loader::add_std_global_imports`.
const STD_GLOBALS: &[(&str, &str)] =
    &[("fetch", "http"), ("Request", "http"), ("Response", "http"), ("Headers", "http")];

/// The names a module binds at its top level: its declarations and what
/// it imports (re-exports bind nothing locally).
fn declared_names(ast: &ast::Program) -> std::collections::HashSet<String> {
    let mut items = Vec::new();
    decls::block_decls(&ast.body, &mut items);
    let mut declared: std::collections::HashSet<String> = items.iter().map(|d| d.ident().name.clone()).collect();
    for s in &ast.body {
        if let ast::StmtKind::Import(imp) = &s.kind {
            match &imp.kind {
                ast::ImportKind::Named(list) => declared.extend(list.iter().map(|(_, l)| l.name.clone())),
                ast::ImportKind::Namespace(l) => {
                    declared.insert(l.name.clone());
                }
                ast::ImportKind::ReExport(_) | ast::ImportKind::ReExportAll => {}
            }
        }
    }
    declared
}

/// The prelude, compiled: the same in every program, so compiled once per
/// process and shared (its prototypes by `Arc`).
struct CompiledPrelude {
    file: Arc<crate::syntax::diagnostic::SourceFile>,
    /// The module body, which installs the built-in methods written in
    /// Raya; every first program's entry calls it before anything else.
    body: Arc<FuncProto>,
    /// The names of its global slots, which follow the built-in globals.
    globals: Vec<String>,
    /// The gated globals it names.
    used: Capabilities,
}

fn compiled_prelude() -> &'static CompiledPrelude {
    static PRELUDE_COMPILED: std::sync::OnceLock<CompiledPrelude> = std::sync::OnceLock::new();
    // From the image compiled with the engine when it is current
    // (`image`), which spares every process the compiler's work.
    PRELUDE_COMPILED.get_or_init(|| image::load().unwrap_or_else(compile_prelude))
}

/// Compiles the prelude from its source.
fn compile_prelude() -> CompiledPrelude {
    let mut linker = Linker {
        globals: GLOBAL_NAMES.iter().map(|s| s.to_string()).collect(),
        global_base: 0,
        global_consts: HashMap::new(),
        modules: vec![ModInfo {
            name: "<prelude>".into(),
            exports: HashMap::new(),
            type_exports: Default::default(),
            ns_slot: None,
            broken: false,
        }],
        sources: SourceMap::default(),
        capabilities: Capabilities::all(),
        used: Capabilities::NONE,
        outer: None,
    };
    let file = linker.sources.add("<prelude>".into(), PRELUDE.to_string());
    let (ast, mut diags) = crate::syntax::parse(PRELUDE, file);
    let (res, more) = resolve::resolve_module(file, 0, &ast, &mut linker, &HashMap::new());
    diags.extend(more);
    let mut cg = codegen::Codegen::new(file, PRELUDE, &res);
    cg.prelude_classes = Some(0);
    let body = cg.module(&ast, codegen::Completion::None, |_| {});
    diags.extend(cg.diags);
    if !diags.is_empty() {
        // The prelude is the engine's own code, checked by its tests:
        // an error in it is a bug of this build, not of the program.
        panic!("the prelude does not compile:\n{}", linker.sources.render(&diags));
    }
    CompiledPrelude {
        file: linker.sources.shared(file),
        body: Arc::new(body),
        globals: linker.globals.split_off(GLOBAL_NAMES.len()),
        used: linker.used,
    }
}

/// Makes the extra globals visible to every loaded module:
/// a hidden module `<host>` exports them (their slots come right after the
/// built-ins), and each module gets a synthetic `import { .. } from
/// "<host>"` of the names it does not declare itself. The synthetic
/// spans lie past the end of the module's text, so they collide with no
/// real token.
fn add_host_imports(ld: &mut Loader, extra: &[String], first_slot: usize) {
    let host = ld.linker.modules.len();
    let exports = extra.iter().enumerate().map(|(i, n)| (n.clone(), (first_slot + i) as u32)).collect();
    ld.linker.modules.push(ModInfo {
        name: "<host>".into(),
        exports,
        type_exports: Default::default(),
        ns_slot: None,
        broken: false,
    });
    for m in ld.modules.iter_mut() {
        let declared = declared_names(&m.ast);
        let base = ld.linker.sources.get(m.file).text.len() as u32 + 1;
        let list: Vec<(ast::Ident, ast::Ident)> = extra
            .iter()
            .filter(|n| !declared.contains(*n))
            .enumerate()
            .map(|(i, n)| {
                let span = Span { start: base + 1 + i as u32, end: base + 1 + i as u32 };
                (ast::Ident { name: n.clone(), span }, ast::Ident { name: n.clone(), span })
            })
            .collect();
        if list.is_empty() {
            continue;
        }
        let span = Span { start: base, end: base };
        m.imports.insert(base, Some(host));
        let imp = ast::ImportDecl { source: "<host>".into(), source_span: span, kind: ast::ImportKind::Named(list) };
        m.ast.body.insert(0, ast::Stmt { kind: ast::StmtKind::Import(imp), span });
    }
}

fn compile_here(
    path: PathBuf,
    name: String,
    text: String,
    opts: &CompileOptions,
    live: Option<(&LiveScope, LiveInput)>,
) -> Result<Program, CompileError> {
    let extra = &opts.host_globals[..];
    let repl = live.map(|(scope, _)| scope);
    let continued = repl.filter(|r| r.slots > 0);
    let mut ld = Loader {
        linker: Linker {
            globals: match continued {
                Some(_) => Vec::new(),
                None => GLOBAL_NAMES.iter().map(|s| s.to_string()).collect(),
            },
            global_base: continued.map_or(0, |r| r.slots),
            global_consts: HashMap::new(),
            modules: Vec::new(),
            sources: continued.map(|r| r.sources.clone()).unwrap_or_default(),
            capabilities: opts.capabilities,
            used: Capabilities::NONE,
            outer: None,
        },
        modules: Vec::new(),
        by_path: HashMap::new(),
        state: Vec::new(),
        order: Vec::new(),
        stack: Vec::new(),
        diags: Vec::new(),
        capabilities: opts.capabilities,
        std_loaded: HashMap::new(),
        std_sources: Default::default(),
    };
    // A first program starts with the prelude, compiled once per process:
    // its file, its body and its global slots (right after the built-in
    // globals, before the host's) are the same in every program.
    let prelude = match continued {
        Some(_) => None,
        None => {
            let p = compiled_prelude();
            let file = ld.linker.sources.add_shared(p.file.clone());
            debug_assert_eq!(file, 0, "the prelude is every first program's file 0");
            ld.linker.globals.extend(p.globals.iter().cloned());
            ld.linker.globals.extend(extra.iter().cloned());
            ld.linker.used = p.used;
            Some(p)
        }
    };
    let host_base = GLOBAL_NAMES.len() + prelude.map_or(0, |p| p.globals.len());
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let main = ld.add_module(name, text, dir);
    if let Some(r) = repl {
        ld.linker.outer = Some((main, r.bindings.clone()));
    }
    if let Some((_, LiveInput { imports: false, .. })) = live {
        if let Some(s) = ld.modules[main].ast.body.iter().find(|s| matches!(s.kind, ast::StmtKind::Import(_))) {
            let file = ld.modules[main].file;
            ld.diags.push(
                Diagnostic::new(file, s.span, "code evaluated in a loaded program cannot import modules")
                    .with_label("import in the program instead"),
            );
            return Err(CompileError { sources: ld.linker.sources, diagnostics: ld.diags });
        }
    }
    // The entry's path is known so that an import of it closes a cycle.
    // Code that cannot import (an `eval`) skips the file system lookup,
    // which cost it more than compiling `1 + 1`.
    if live.is_none_or(|(_, input)| input.imports) {
        let key = std::fs::canonicalize(&path).unwrap_or_else(|_| normalize(&path));
        ld.by_path.insert(key, main);
    }
    ld.visit(main);
    if !extra.is_empty() {
        add_host_imports(&mut ld, extra, host_base);
    }

    // Resolve every module, imports first.
    let mut resolutions: Vec<Option<resolve::Resolution>> = (0..ld.modules.len()).map(|_| None).collect();
    for &m in &ld.order.clone() {
        let module = &ld.modules[m];
        let (res, diags) = resolve::resolve_module(module.file, m, &module.ast, &mut ld.linker, &module.imports);
        if ld.linker.modules[m].broken {
            // A statement the parser skipped may have declared a name: an
            // undeclared-name error about a name written on a line with a
            // syntax error is an echo of that error, not reported.
            let file = module.file;
            let text = &ld.linker.sources.get(file).text;
            let broken_lines: Vec<&str> =
                ld.diags.iter().filter(|d| d.file == file).flat_map(|d| lines_of(text, d.span)).collect();
            for d in diags {
                let echo = d
                    .message
                    .strip_prefix("cannot find name `")
                    .and_then(|r| r.strip_suffix('`'))
                    .is_some_and(|name| broken_lines.iter().any(|l| contains_word(l, name)));
                if !echo {
                    ld.diags.push(d);
                }
            }
        } else {
            ld.diags.extend(diags);
        }
        resolutions[m] = Some(res);
    }
    if !ld.diags.is_empty() {
        ld.diags.sort_by_key(|d| (d.file, d.span.start));
        return Err(CompileError { sources: ld.linker.sources, diagnostics: ld.diags });
    }

    // Generate code: every module body but the entry's becomes a function
    // the entry calls first.
    let mut diags = Vec::new();
    let mut bodies: Vec<(usize, FuncProto)> = Vec::new();
    for &m in &ld.order {
        if m == main {
            continue;
        }
        let res = resolutions[m].as_ref().expect("resolved");
        let file = ld.modules[m].file;
        let mut cg = codegen::Codegen::new(file, &ld.linker.sources.get(file).text, res);
        let proto = cg.module(&ld.modules[m].ast, codegen::Completion::None, |_| {});
        diags.extend(cg.diags);
        bodies.push((m, proto));
    }
    let res = resolutions[main].as_ref().expect("resolved");
    let main_file = ld.modules[main].file;
    let (completion_slot, completion) = match live {
        // Returned: no slot (an instance's evals would use one each).
        Some((_, LiveInput { returns_completion: true, .. })) => (0, codegen::Completion::Return),
        _ => {
            let slot = ld.linker.add_global("<completion>");
            (slot, codegen::Completion::Slot(slot))
        }
    };
    let mut cg = codegen::Codegen::new(main_file, &ld.linker.sources.get(main_file).text, res);
    let linker = &ld.linker;
    let entry = cg.module(&ld.modules[main].ast, completion, |cg| {
        if let Some(p) = prelude {
            let idx = cg.add_shared_proto(p.body.clone());
            let f = cg.alloc();
            cg.emit(Instr::Closure { dst: f, proto: idx }, 0);
            let this = cg.alloc();
            cg.emit(Instr::LoadUndef { dst: this }, 0);
            cg.emit(Instr::call(f, 0), 0);
            cg.free_to(f as u32);
        }
        for (m, proto) in bodies {
            let idx = cg.add_proto(proto);
            let f = cg.alloc();
            cg.emit(Instr::Closure { dst: f, proto: idx }, 0);
            let this = cg.alloc();
            cg.emit(Instr::LoadUndef { dst: this }, 0);
            cg.emit(Instr::call(f, 0), 0);
            if let Some(slot) = linker.modules[m].ns_slot {
                let o = f;
                cg.emit(Instr::NewObject { dst: o }, 0);
                let mut names: Vec<(&String, &u32)> = linker.modules[m].exports.iter().collect();
                names.sort();
                for (name, &g) in names {
                    let k = cg.k_str(name);
                    cg.emit(Instr::GetGlobal { dst: this, idx: g }, 0);
                    cg.emit(Instr::DefineProp { obj: o, name: k, src: this }, 0);
                }
                cg.emit(Instr::SetGlobal { idx: slot, src: o }, 0);
            }
            cg.free_to(f as u32);
        }
    });
    diags.extend(cg.diags);
    if !diags.is_empty() {
        return Err(CompileError { sources: ld.linker.sources, diagnostics: diags });
    }
    let mut std_modules: Vec<StdLink> = ld
        .std_loaded
        .iter()
        .map(|(&name, &(natives, _))| {
            let first = crate::std::find(name).and_then(|m| m.natives.first()).map(|(n, _)| n.to_string());
            StdLink {
                name,
                first_slot: first.and_then(|n| ld.linker.modules[natives].exports.get(&n).copied()).unwrap_or(0),
                ns_slot: ld.linker.modules[natives].ns_slot,
            }
        })
        .collect();
    std_modules.sort_by_key(|l| l.name);
    let needs = std_modules
        .iter()
        .filter_map(|l| crate::std::find(l.name).and_then(|m| m.capability))
        .fold(ld.linker.used, Capabilities::with);
    let mut exports: Vec<(String, u32)> =
        ld.linker.modules[main].exports.iter().map(|(n, &g)| (n.clone(), g)).collect();
    exports.sort();
    let declared = res
        .bindings
        .iter()
        .filter_map(|b| match (b.global, b.kind) {
            (Some(g), resolve::BindKind::Let | resolve::BindKind::Function | resolve::BindKind::Class) => {
                Some((b.name.clone(), g, false))
            }
            (Some(g), resolve::BindKind::Const | resolve::BindKind::Import) => Some((b.name.clone(), g, true)),
            _ => None,
        })
        .collect();
    Ok(Program {
        exports,
        declared,
        completion_slot,
        entry: Arc::new(entry),
        sources: ld.linker.sources,
        global_names: ld.linker.globals,
        global_base: ld.linker.global_base,
        host_globals: extra.len(),
        host_base,
        std_modules,
        needs,
    })
}
