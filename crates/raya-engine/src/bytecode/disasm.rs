//! Human-readable listing of bytecode (`raya disasm`).
//!
//! Every function, the entry first and then its nested functions depth
//! first (as `luac -l` does), with a header (name, where it was written,
//! parameters, registers, constants, upvalues), its constants, and one line
//! per instruction:
//!
//! ```text
//!     12  [3:9]   CallMethod    r4, k2 ("log"), 1        ; console.log(i * 2);
//! ```
//!
//! index, source `line:col`, mnemonic, operands (registers `rN`, constants
//! `kN` with their value, globals `gN` with their name, jump targets as
//! absolute instruction indices), and — whenever the source line changes —
//! the text of that line.

use super::{Capture, Constant, FuncProto, Instr, MethodKind, SelectCaseDesc};
use crate::compiler::Program;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Arc;

/// The listing of every function of `program`. The prelude's functions
/// come last, after the program's own.
pub fn disassemble(program: &Program) -> String {
    disassemble_with(program, true)
}

/// [`disassemble`]; with `all` false, the functions of the engine's own
/// Raya code (the prelude, `std:` sources) are left out (their numbers
/// stay as in the full listing, so references read the same).
pub fn disassemble_with(program: &Program, all: bool) -> String {
    // Printing order (and function numbers): the entry, then depth first,
    // with the prelude module body moved after the other modules.
    let mut order: Vec<(&FuncProto, Kind)> = Vec::new();
    collect(&program.entry, Kind::Entry, program, &mut order);
    let ids: HashMap<*const FuncProto, usize> =
        order.iter().enumerate().map(|(i, (f, _))| (*f as *const FuncProto, i)).collect();
    let mut d = Disasm { program, out: String::new(), ids };
    for (i, (f, kind)) in order.iter().enumerate() {
        let builtin =
            f.file < program.sources.len() && crate::vm::runtime::is_builtin_source(&program.sources.get(f.file).name);
        if all || !builtin {
            d.function(i, f, *kind);
        }
    }
    d.out
}

fn collect<'p>(f: &'p FuncProto, kind: Kind, program: &Program, out: &mut Vec<(&'p FuncProto, Kind)>) {
    out.push((f, kind));
    let is_prelude = |p: &FuncProto| {
        p.file < program.sources.len() && program.sources.get(p.file).name == "<prelude>" && p.name.is_empty()
    };
    let mut children: Vec<&Arc<FuncProto>> = f.protos.iter().collect();
    if kind == Kind::Entry {
        children.sort_by_key(|p| is_prelude(p));
    }
    for p in children {
        let k = if kind == Kind::Entry && p.file != f.file && p.name.is_empty() { Kind::Module } else { Kind::Nested };
        collect(p, k, program, out);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Entry,
    /// A module body the entry calls (a direct child in another file).
    Module,
    Nested,
}

struct Disasm<'p> {
    program: &'p Program,
    out: String,
    ids: HashMap<*const FuncProto, usize>,
}

fn fmt_const(c: &Constant) -> String {
    match c {
        Constant::Number(n) => crate::builtins::numconv::number_to_string(*n),
        Constant::String(s) => format!("{s:?}"),
        Constant::Private(s) => s.split('\0').next().unwrap_or(s).to_string(),
        Constant::Template { raw, .. } => format!("template {raw:?}"),
    }
}

impl<'p> Disasm<'p> {
    fn function(&mut self, id: usize, f: &FuncProto, kind: Kind) {
        let sources = &self.program.sources;
        let file_ok = f.file < sources.len();
        let file_name = if file_ok { sources.get(f.file).name.as_str() } else { "?" };
        let (line, col) = if file_ok { sources.line_col(f.file, f.span_start) } else { (0, 0) };
        let name = if !f.name.is_empty() {
            f.name.clone()
        } else if kind == Kind::Entry {
            "<main>".to_string()
        } else if kind == Kind::Module {
            "<module>".to_string()
        } else {
            "<anonymous>".to_string()
        };
        let mut flags = Vec::new();
        if f.is_async {
            flags.push("async");
        }
        if f.is_arrow {
            flags.push("arrow");
        }
        if f.is_constructor {
            flags.push("constructor");
        }
        if f.is_derived {
            flags.push("derived");
        }
        if f.has_rest {
            flags.push("rest");
        }
        let _ = writeln!(
            self.out,
            "function {id} {name} ({file_name}:{line}:{col}){}",
            if flags.is_empty() { String::new() } else { format!(" [{}]", flags.join(", ")) }
        );
        let _ = writeln!(
            self.out,
            "  {} params, {} registers, {} constants, {} upvalues, {} functions, {} instructions",
            f.arity,
            f.num_regs,
            f.consts.len(),
            f.captures.len(),
            f.protos.len(),
            f.code.len()
        );
        if !f.consts.is_empty() {
            let list: Vec<String> =
                f.consts.iter().enumerate().map(|(i, c)| format!("k{i}={}", fmt_const(c))).collect();
            let _ = writeln!(self.out, "  constants: {}", list.join(" "));
        }
        if !f.captures.is_empty() {
            let list: Vec<String> = f
                .captures
                .iter()
                .enumerate()
                .map(|(i, c)| match c {
                    Capture::Local(r) => format!("u{i}=r{r}"),
                    Capture::Upval(u) => format!("u{i}=u{u}"),
                })
                .collect();
            let _ = writeln!(self.out, "  upvalues: {}", list.join(" "));
        }
        let mut last_line = 0;
        for (pc, ins) in f.code.iter().enumerate() {
            let pos = f.spans.get(pc).copied().unwrap_or(0);
            let (l, c) = if file_ok { sources.line_col(f.file, pos) } else { (0, 0) };
            let ops = self.operands(f, pc, ins);
            let mut line = format!("  {pc:>5}  [{l}:{c}]");
            pad(&mut line, 17);
            line.push_str(mnemonic(ins));
            if !ops.is_empty() {
                pad(&mut line, 35);
                line.push_str(&ops);
            }
            if l != last_line && file_ok {
                last_line = l;
                if let Some(text) = source_line(&sources.get(f.file).text, l) {
                    pad(&mut line, 70);
                    line.push_str("; ");
                    line.push_str(text.trim());
                }
            }
            self.out.push_str(line.trim_end());
            self.out.push('\n');
        }
        for (i, sd) in f.selects.iter().enumerate() {
            let at = pc_of_select(f, i);
            let cases: Vec<String> = sd
                .cases
                .iter()
                .map(|c| match *c {
                    SelectCaseDesc::Receive { operand, target } => {
                        format!("receive(r{}) -> {}", sel_reg(f, at, operand), target_of(at, target))
                    }
                    SelectCaseDesc::Send { operand, target } => format!(
                        "send(r{}, r{}) -> {}",
                        sel_reg(f, at, operand),
                        sel_reg(f, at, operand + 1),
                        target_of(at, target)
                    ),
                    SelectCaseDesc::Timeout { operand, target } => {
                        format!("timeout(r{}) -> {}", sel_reg(f, at, operand), target_of(at, target))
                    }
                    SelectCaseDesc::Default { target } => format!("default -> {}", target_of(at, target)),
                })
                .collect();
            let _ = writeln!(self.out, "  select {i}: value r{}; {}", sd.value_reg, cases.join(", "));
        }
        self.out.push('\n');
    }

    fn k(&self, f: &FuncProto, k: u32) -> String {
        match f.consts.get(k as usize) {
            Some(c) => format!("k{k} ({})", fmt_const(c)),
            None => format!("k{k} (?)"),
        }
    }

    fn g(&self, idx: u32) -> String {
        match self.program.global_names.get(idx as usize) {
            Some(n) => format!("g{idx} ({n})"),
            None => format!("g{idx}"),
        }
    }

    fn operands(&self, f: &FuncProto, pc: usize, ins: &Instr) -> String {
        let j = |off: i32| format!("-> {}", pc as i64 + 1 + off as i64);
        let r = |x: u16| format!("r{x}");
        use Instr::*;
        match *ins {
            Move { dst, src } => format!("{}, {}", r(dst), r(src)),
            Move2 { dst, src, dst2, src2 } => format!("{}, {}; {}, {}", r(dst), r(src), r(dst2), r(src2)),
            LoadK { dst, k } => format!("{}, {}", r(dst), self.k(f, k)),
            LoadInt { dst, v } => format!("{}, {v}", r(dst)),
            LoadUndef { dst }
            | LoadHole { dst }
            | LoadNull { dst }
            | LoadTrue { dst }
            | LoadFalse { dst }
            | NewCell { dst }
            | NewObject { dst } => r(dst),
            GetGlobal { dst, idx } => format!("{}, {}", r(dst), self.g(idx)),
            CheckInit { src, name } => format!("{}, {}", r(src), self.k(f, name)),
            SetGlobal { idx, src } => format!("{}, {}", self.g(idx), r(src)),
            CellGet { dst, cell } => format!("{}, {}", r(dst), r(cell)),
            CellSet { cell, src } => format!("{}, {}", r(cell), r(src)),
            GetUpval { dst, idx } | GetCapture { dst, idx } => format!("{}, u{idx}", r(dst)),
            SetUpval { idx, src } => format!("u{idx}, {}", r(src)),
            Closure { dst, proto } => {
                let child = f.protos.get(proto as usize);
                let name = child.map(|p| p.name.as_str()).unwrap_or("?");
                let id = child.and_then(|p| self.ids.get(&Arc::as_ptr(p))).copied().unwrap_or(0);
                let name = if name.is_empty() { "<anonymous>" } else { name };
                format!("{}, function {id} ({name})", r(dst))
            }
            Add { dst, a, b }
            | Sub { dst, a, b }
            | Mul { dst, a, b }
            | Div { dst, a, b }
            | Mod { dst, a, b }
            | Pow { dst, a, b }
            | BitAnd { dst, a, b }
            | BitOr { dst, a, b }
            | BitXor { dst, a, b }
            | Shl { dst, a, b }
            | Shr { dst, a, b }
            | UShr { dst, a, b }
            | StrictEq { dst, a, b }
            | StrictNe { dst, a, b }
            | LooseEq { dst, a, b }
            | LooseNe { dst, a, b }
            | Lt { dst, a, b }
            | Le { dst, a, b }
            | Gt { dst, a, b }
            | Ge { dst, a, b }
            | In { dst, a, b }
            | InstanceOf { dst, a, b } => format!("{}, {}, {}", r(dst), r(a), r(b)),
            AddI { dst, src, imm, plus } => format!("{}, {}, {imm}{}", r(dst), r(src), if plus { " (+)" } else { "" }),
            MulI { dst, src, imm } | ModI { dst, src, imm } => format!("{}, {}, {imm}", r(dst), r(src)),
            StrictEqI { dst, src, imm, ne } => {
                format!("{}, {}, {imm}{}", r(dst), r(src), if ne { " (!==)" } else { "" })
            }
            Neg { dst, src }
            | ToNumber { dst, src }
            | BitNot { dst, src }
            | Not { dst, src }
            | TypeOf { dst, src }
            | ToString { dst, src }
            | GetIter { dst, src }
            | ForInKeys { dst, src }
            | Await { dst, src } => format!("{}, {}", r(dst), r(src)),
            Concat { dst, start, count } => format!("{}, {}..{}", r(dst), r(start), r(start.saturating_add(count))),
            Jmp { off } | Loop { off } => j(off),
            JmpIfTrue { cond, off } | JmpIfFalse { cond, off } => format!("{}, {}", r(cond), j(off)),
            JmpIfNullish { src, off } | JmpIfNotNullish { src, off } => format!("{}, {}", r(src), j(off)),
            JmpIfNil { src, off, undef, eq } => {
                let op = if eq { "===" } else { "!==" };
                format!("{} {op} {}, {}", r(src), if undef { "undefined" } else { "null" }, j(off))
            }
            JmpIfNotLt { a, b, off, .. }
            | JmpIfNotLe { a, b, off, .. }
            | JmpIfLt { a, b, off, .. }
            | JmpIfLe { a, b, off, .. } => {
                format!("{}, {}, {}", r(a), r(b), j(off))
            }
            JmpIfNotLtI { a, imm, off }
            | JmpIfNotLeI { a, imm, off }
            | JmpIfNotGtI { a, imm, off }
            | JmpIfNotGeI { a, imm, off } => format!("{}, {imm}, {}", r(a), j(off)),
            StepJmpIfLt { r: x, b, imm, off }
            | StepJmpIfLe { r: x, b, imm, off }
            | StepJmpIfGt { r: x, b, imm, off }
            | StepJmpIfGe { r: x, b, imm, off } => format!("{}, {imm}, {}, {}", r(x), r(b), j(off)),
            GetProp { dst, obj, name } => format!("{}, {}, {}", r(dst), r(obj), self.k(f, name)),
            AddPropI { obj, imm, name } => format!("{}, {}, {imm}", r(obj), self.k(f, name)),
            SetProp { obj, name, src } | DefineProp { obj, name, src } => {
                format!("{}, {}, {}", r(obj), self.k(f, name), r(src))
            }
            GetIndex { dst, obj, key } => format!("{}, {}, {}", r(dst), r(obj), r(key)),
            SetIndex { obj, key, src } | DefineIndex { obj, key, src } => format!("{}, {}, {}", r(obj), r(key), r(src)),
            GetSuper { dst, name } => format!("{}, {}", r(dst), self.k(f, name)),
            GetSuperIndex { dst, key } => format!("{}, {}", r(dst), r(key)),
            HasPrivate { dst, obj, name } => format!("{}, {}, {}", r(dst), r(obj), self.k(f, name)),
            Call { f: fr, argc, callee, this } => {
                let mut s = format!("{}, {argc}", r(fr));
                if callee != fr {
                    s += &format!(", fn {}", r(callee));
                }
                if this == super::NO_THIS {
                    s += ", this undefined";
                } else if this != fr + 1 {
                    s += &format!(", this {}", r(this));
                }
                s
            }
            New { f: fr, argc } | SuperCall { f: fr, argc } | Spawn { f: fr, argc } => format!("{}, {argc}", r(fr)),
            CallMethod { f: fr, name, argc, recv } if recv == fr + 1 => {
                format!("{}, {}, {argc}", r(fr), self.k(f, name))
            }
            CallMethod { f: fr, name, argc, recv } => {
                format!("{}, {}, {argc}, this {}", r(fr), self.k(f, name), r(recv))
            }
            CallSpread { f: fr } | NewSpread { f: fr } | SuperCallSpread { f: fr } | SpawnSpread { f: fr } => r(fr),
            Return { src } | Throw { src } | IterClose { iter: src } => r(src),
            ReturnUndef | InitFields | TryEnd | GenStart | AsyncGenStart => String::new(),
            ForAwait { dst, src, what } => format!("{}, {}, {}", r(dst), r(src), r(what)),
            Yield { dst, src } | IterSend { iter: dst, src } => format!("{}, {}", r(dst), r(src)),
            IterThrow { iter, exc, dst, off } => format!("{}, {}, {}, {}", r(iter), r(exc), r(dst), j(off)),
            NewArray { dst, cap } => format!("{}, {cap}", r(dst)),
            NewRegExp { dst, k } => format!("{}, {}", r(dst), self.k(f, k)),
            ArrayPush { arr, src } | ArraySpread { arr, src } => format!("{}, {}", r(arr), r(src)),
            ArrayHole { arr } => r(arr),
            ObjectSpread { obj, src } => format!("{}, {}", r(obj), r(src)),
            DefineAccessor { obj, name, func, kind } => {
                format!("{}, {}, {}, {}", r(obj), self.k(f, name), r(func), kind_name(kind))
            }
            SetHome { func, class } => format!("{}, {}", r(func), r(class)),
            DefineAccessorComputed { obj, key, func, kind } => {
                format!("{}, {}, {}, {}", r(obj), r(key), r(func), kind_name(kind))
            }
            ObjectRest { dst, src, excluded } => format!("{}, {}, {}", r(dst), r(src), r(excluded)),
            ArrayRest { dst, src, start, take } => format!("{}, {}, {start}, {take}", r(dst), r(src)),
            NewClass { dst, name, parent, ctor } => {
                let p = if parent == u16::MAX { "-".to_string() } else { r(parent) };
                format!("{}, {}, {p}, {}", r(dst), self.k(f, name), r(ctor))
            }
            DefineMethod { class, name, func, kind, is_static } => format!(
                "{}, {}, {}, {}{}",
                r(class),
                self.k(f, name),
                r(func),
                kind_name(kind),
                if is_static { ", static" } else { "" }
            ),
            DefineMethodComputed { class, key, func, kind, is_static } => format!(
                "{}, {}, {}, {}{}",
                r(class),
                r(key),
                r(func),
                kind_name(kind),
                if is_static { ", static" } else { "" }
            ),
            SetFieldInit { class, func } => format!("{}, {}", r(class), r(func)),
            IterNext { dst, iter, off } => format!("{}, {}, {}", r(dst), r(iter), j(off)),
            TryBegin { exc, off } => format!("{}, {}", r(exc), j(off)),
            Select { base, desc } => format!("{}, select {desc}", r(base)),
        }
    }
}

fn kind_name(k: MethodKind) -> &'static str {
    match k {
        MethodKind::Method => "method",
        MethodKind::Getter => "getter",
        MethodKind::Setter => "setter",
    }
}

/// The variant name of an instruction.
fn mnemonic(i: &Instr) -> &'static str {
    use Instr::*;
    match i {
        Move { .. } => "Move",
        Move2 { .. } => "Move2",
        LoadK { .. } => "LoadK",
        LoadInt { .. } => "LoadInt",
        LoadUndef { .. } => "LoadUndef",
        LoadHole { .. } => "LoadHole",
        CheckInit { .. } => "CheckInit",
        LoadNull { .. } => "LoadNull",
        LoadTrue { .. } => "LoadTrue",
        LoadFalse { .. } => "LoadFalse",
        GetGlobal { .. } => "GetGlobal",
        SetGlobal { .. } => "SetGlobal",
        NewCell { .. } => "NewCell",
        CellGet { .. } => "CellGet",
        CellSet { .. } => "CellSet",
        GetUpval { .. } => "GetUpval",
        GetCapture { .. } => "GetCapture",
        SetUpval { .. } => "SetUpval",
        Closure { .. } => "Closure",
        Add { .. } => "Add",
        Sub { .. } => "Sub",
        Mul { .. } => "Mul",
        Div { .. } => "Div",
        Mod { .. } => "Mod",
        Pow { .. } => "Pow",
        AddI { .. } => "AddI",
        MulI { .. } => "MulI",
        ModI { .. } => "ModI",
        StrictEqI { .. } => "StrictEqI",
        BitAnd { .. } => "BitAnd",
        BitOr { .. } => "BitOr",
        BitXor { .. } => "BitXor",
        Shl { .. } => "Shl",
        Shr { .. } => "Shr",
        UShr { .. } => "UShr",
        Neg { .. } => "Neg",
        ToNumber { .. } => "ToNumber",
        BitNot { .. } => "BitNot",
        Not { .. } => "Not",
        TypeOf { .. } => "TypeOf",
        ToString { .. } => "ToString",
        Concat { .. } => "Concat",
        StrictEq { .. } => "StrictEq",
        StrictNe { .. } => "StrictNe",
        LooseEq { .. } => "LooseEq",
        LooseNe { .. } => "LooseNe",
        Lt { .. } => "Lt",
        Le { .. } => "Le",
        Gt { .. } => "Gt",
        Ge { .. } => "Ge",
        In { .. } => "In",
        InstanceOf { .. } => "InstanceOf",
        Jmp { .. } => "Jmp",
        Loop { .. } => "Loop",
        JmpIfTrue { .. } => "JmpIfTrue",
        JmpIfFalse { .. } => "JmpIfFalse",
        JmpIfNullish { .. } => "JmpIfNullish",
        JmpIfNotNullish { .. } => "JmpIfNotNullish",
        JmpIfNil { .. } => "JmpIfNil",
        JmpIfNotLt { .. } => "JmpIfNotLt",
        JmpIfNotLe { .. } => "JmpIfNotLe",
        JmpIfNotLtI { .. } => "JmpIfNotLtI",
        JmpIfNotLeI { .. } => "JmpIfNotLeI",
        JmpIfNotGtI { .. } => "JmpIfNotGtI",
        JmpIfNotGeI { .. } => "JmpIfNotGeI",
        JmpIfLt { .. } => "JmpIfLt",
        StepJmpIfLt { .. } => "StepJmpIfLt",
        StepJmpIfLe { .. } => "StepJmpIfLe",
        StepJmpIfGt { .. } => "StepJmpIfGt",
        StepJmpIfGe { .. } => "StepJmpIfGe",
        JmpIfLe { .. } => "JmpIfLe",
        GetProp { .. } => "GetProp",
        SetProp { .. } => "SetProp",
        AddPropI { .. } => "AddPropI",
        GetIndex { .. } => "GetIndex",
        SetIndex { .. } => "SetIndex",
        GetSuper { .. } => "GetSuper",
        GetSuperIndex { .. } => "GetSuperIndex",
        SetHome { .. } => "SetHome",
        HasPrivate { .. } => "HasPrivate",
        DefineAccessorComputed { .. } => "DefineAccessorComputed",
        Call { .. } => "Call",
        CallMethod { .. } => "CallMethod",
        CallSpread { .. } => "CallSpread",
        New { .. } => "New",
        NewSpread { .. } => "NewSpread",
        SuperCall { .. } => "SuperCall",
        SuperCallSpread { .. } => "SuperCallSpread",
        Return { .. } => "Return",
        ReturnUndef => "ReturnUndef",
        NewArray { .. } => "NewArray",
        NewRegExp { .. } => "NewRegExp",
        ArrayPush { .. } => "ArrayPush",
        ArraySpread { .. } => "ArraySpread",
        ArrayHole { .. } => "ArrayHole",
        NewObject { .. } => "NewObject",
        DefineProp { .. } => "DefineProp",
        DefineIndex { .. } => "DefineIndex",
        ObjectSpread { .. } => "ObjectSpread",
        DefineAccessor { .. } => "DefineAccessor",
        ObjectRest { .. } => "ObjectRest",
        ArrayRest { .. } => "ArrayRest",
        NewClass { .. } => "NewClass",
        DefineMethod { .. } => "DefineMethod",
        DefineMethodComputed { .. } => "DefineMethodComputed",
        InitFields => "InitFields",
        SetFieldInit { .. } => "SetFieldInit",
        GetIter { .. } => "GetIter",
        IterNext { .. } => "IterNext",
        IterClose { .. } => "IterClose",
        IterSend { .. } => "IterSend",
        IterThrow { .. } => "IterThrow",
        GenStart => "GenStart",
        AsyncGenStart => "AsyncGenStart",
        ForAwait { .. } => "ForAwait",
        Yield { .. } => "Yield",
        ForInKeys { .. } => "ForInKeys",
        TryBegin { .. } => "TryBegin",
        TryEnd => "TryEnd",
        Throw { .. } => "Throw",
        Await { .. } => "Await",
        Spawn { .. } => "Spawn",
        SpawnSpread { .. } => "SpawnSpread",
        Select { .. } => "Select",
    }
}

fn pad(s: &mut String, width: usize) {
    let n = s.chars().count();
    if n < width {
        s.extend(std::iter::repeat_n(' ', width - n));
    } else {
        s.push(' ');
    }
}

fn source_line(text: &str, line: u32) -> Option<&str> {
    text.lines().nth(line.checked_sub(1)? as usize)
}

fn pc_of_select(f: &FuncProto, desc: usize) -> usize {
    f.code.iter().position(|i| matches!(i, Instr::Select { desc: d, .. } if *d as usize == desc)).unwrap_or(0)
}

fn target_of(select_pc: usize, target: i32) -> i64 {
    select_pc as i64 + 1 + target as i64
}

/// Register of select operand `operand` (relative to the `Select` base).
fn sel_reg(f: &FuncProto, select_pc: usize, operand: u16) -> u32 {
    match f.code.get(select_pc) {
        Some(Instr::Select { base, .. }) => *base as u32 + operand as u32,
        _ => operand as u32,
    }
}
