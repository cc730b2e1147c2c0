//! Register bytecode: the contract between the compiler and the interpreter.
// Instruction docs use register notation (`R[dst] = R[src]`), not links.
#![allow(rustdoc::broken_intra_doc_links)]
//!
//! A function compiles to a [`FuncProto`]: a flat `Vec<Instr>`, a constant
//! table, nested function prototypes, and a span table that maps every
//! instruction back to its source position (for stack traces and
//! `raya disasm`).
//!
//! # Frames and registers
//!
//! Operands are *registers*: slots of the current frame, numbered from 0.
//! Register 0 always holds `this` (undefined for plain calls); registers
//! `1..=n` hold the declared parameters; locals and temporaries follow.
//! `FuncProto::num_regs` is the frame size.
//!
//! # Calling convention
//!
//! To call, the caller puts the callee in `R[f]`, the receiver (`this`) in
//! `R[f+1]` and the arguments in `R[f+2 ..= f+1+argc]`, then executes
//! `Call { f, argc, .. }` (which can itself fill `R[f]` and `R[f+1]` from
//! other registers, or `R[f+1]` with `undefined`: see `Instr::Call`). The
//! callee's frame starts at the caller's `R[f+1]`
//! (so its register 0 is `this` and the arguments are already its
//! parameters — no copying). The result is written to `R[f]`. Everything
//! above `R[f]` is clobbered by a call, so `f` is always the highest live
//! register at the call. Missing arguments read as `undefined`; extra ones
//! are ignored unless the callee has a rest parameter, which collects them
//! into an array in the register after the last declared parameter.
//!
//! # Captured variables
//!
//! A local variable captured by a closure lives in a heap *cell* for its
//! whole life: the register holds the cell, not the value (`NewCell`,
//! `CellGet`, `CellSet`). A closure carries its captured cells as upvalues
//! (`GetUpval`, `SetUpval`). A fresh `NewCell` at the top of each loop
//! iteration gives `for (let …)` its per-iteration binding. A captured
//! variable that never changes once a closure is made (the compiler's
//! resolver decides) needs no cell: it stays in its register, and the
//! closure carries a copy of its value (`GetCapture`).
//!
//! # Exceptions
//!
//! `TryBegin` pushes a handler (catch target, register for the caught
//! value) onto the task's handler stack; `TryEnd` pops it. A throw unwinds
//! to the innermost handler, discarding frames above it. `finally` is
//! compiled by the compiler as a copy of its block on every exit path plus
//! a catch-all path that runs it and rethrows; the VM knows nothing of it.
//!
//! # Jumps
//!
//! Offsets are relative to the instruction *after* the jump. Every backward
//! jump is a safepoint (budget check, GC, cancellation), so every loop has
//! one, whatever statement closes it: `Loop` (the unconditional backward
//! jump; the compiler turns a backward `Jmp`, from `continue`, into it)
//! and the conditional jumps, when they jump backward — a `for` or `while`
//! loop tests its condition once before the first iteration and then at
//! the bottom, one jump back per iteration (a `for` loop that counts, with
//! one `StepJmpIf…` that also steps the counter). Every `Call`-family
//! instruction is a safepoint as well, except a `CallMethod` that goes
//! straight to a built-in's native method (a native runs no script code,
//! so loops and closure calls still bound the time between safepoints).

pub mod disasm;

use crate::syntax::diagnostic::FileId;
use std::sync::Arc;

/// A register operand (frame slot).
pub type Reg = u16;

/// `Instr::Call`'s `this` operand for a call whose receiver is
/// `undefined` (no register is this high: a function has at most
/// `u16::MAX` registers, numbered from 0).
pub const NO_THIS: Reg = u16::MAX;
/// Index into [`FuncProto::consts`].
pub type ConstIdx = u32;

/// A compile-time constant.
#[derive(Debug, Clone, PartialEq)]
pub enum Constant {
    Number(f64),
    String(String),
    /// A class private name as a property key: `"#x\0<class id>"`, unique
    /// to the class that declares it (see `vm::atom::Atom::private`).
    Private(String),
    /// The strings of a tagged template's call site: linked to one frozen
    /// array of the cooked strings (undefined for `None`), whose `raw` is
    /// a frozen array of the raw strings — the same array object every
    /// time that site runs, as in JS.
    Template {
        cooked: Vec<Option<String>>,
        raw: Vec<String>,
    },
}

/// How a closure obtains one of its captured cells when it is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// The cell in register `r` of the enclosing frame.
    Local(Reg),
    /// Upvalue `i` of the enclosing closure.
    Upval(u16),
}

/// Kind of method installed by `DefineMethod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MethodKind {
    Method,
    Getter,
    Setter,
}

/// One instruction. Kept at 12 bytes or less (checked by a test).
///
/// Notation: `R[x]` is register x; `K[k]` is constant k (for property
/// names, always a `Constant::String`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Instr {
    // ---- loads and moves -------------------------------------------------
    /// R[dst] = R[src]
    Move {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = R[src], then R[dst2] = R[src2]: two `Move`s in a row (a
    /// call's arguments read from locals), one dispatch. The compiler
    /// merges a `Move` into the one before it unless a jump may land
    /// between them (`Codegen::emit`).
    Move2 {
        dst: Reg,
        src: Reg,
        dst2: Reg,
        src2: Reg,
    },
    /// R[dst] = K[k] (number or string)
    LoadK {
        dst: Reg,
        k: ConstIdx,
    },
    /// R[dst] = v as number
    LoadInt {
        dst: Reg,
        v: i32,
    },
    LoadUndef {
        dst: Reg,
    },
    /// R[dst] = the hole: a `let`/`const` not yet initialised (see
    /// `CheckInit`).
    LoadHole {
        dst: Reg,
    },
    /// ReferenceError "Cannot access 'K[name]' before initialization" if
    /// R[src] is the hole. Emitted only after reads (and before writes) of
    /// a `let`/`const` the compiler cannot prove initialised.
    CheckInit {
        src: Reg,
        name: ConstIdx,
    },
    LoadNull {
        dst: Reg,
    },
    LoadTrue {
        dst: Reg,
    },
    LoadFalse {
        dst: Reg,
    },
    /// R[dst] = global slot `idx` (builtins first, then every module's
    /// top-level bindings; see `compiler::Program::global_names`).
    GetGlobal {
        dst: Reg,
        idx: u32,
    },
    /// global slot `idx` = R[src]
    SetGlobal {
        idx: u32,
        src: Reg,
    },

    // ---- captured variables ------------------------------------------------
    /// R[dst] = a new cell holding undefined.
    NewCell {
        dst: Reg,
    },
    /// R[dst] = content of the cell in R[cell]
    CellGet {
        dst: Reg,
        cell: Reg,
    },
    /// content of the cell in R[cell] = R[src]
    CellSet {
        cell: Reg,
        src: Reg,
    },
    /// R[dst] = content of this closure's upvalue cell `idx`
    GetUpval {
        dst: Reg,
        idx: u16,
    },
    /// content of this closure's upvalue cell `idx` = R[src]
    SetUpval {
        idx: u16,
        src: Reg,
    },
    /// R[dst] = this closure's upvalue `idx` itself: a binding captured by
    /// value (never assigned once a closure is made, so no cell).
    GetCapture {
        dst: Reg,
        idx: u16,
    },
    /// R[dst] = a new closure of nested prototype `proto`, capturing the
    /// cells (or, for bindings captured by value, the values) listed in
    /// that prototype's `captures`.
    Closure {
        dst: Reg,
        proto: u32,
    },

    // ---- arithmetic and logic (numbers only, except Add; see LANGUAGE.md §3)
    /// R[dst] = R[a] + R[b]; concatenates if either is a string.
    Add {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Sub {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Mul {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Div {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Mod {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Pow {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// R[dst] = R[src] + imm: `i++`, `i--`, `i - 1`, `i -= 2` (`plus`
    /// false: numbers only, anything else is the TypeError of the operator
    /// written, `+` or `-` by the sign of `imm`), and `x + 1`, `x += 2`
    /// (`plus` true: numbers added in place, anything else as `Add` with
    /// the number `imm`: strings concatenate, a user `toString` is called).
    /// One instruction instead of `LoadInt` + `Add`, and no register for
    /// the constant.
    AddI {
        dst: Reg,
        src: Reg,
        imm: i16,
        plus: bool,
    },
    /// R[dst] = R[src] * imm (`x * 2`): numbers only, anything else is
    /// `Mul`'s TypeError. One instruction instead of `LoadInt` + `Mul`.
    MulI {
        dst: Reg,
        src: Reg,
        imm: i16,
    },
    /// R[dst] = R[src] % imm (`i % 2`, `x % 3`), as `Mod` with the number
    /// `imm`.
    ModI {
        dst: Reg,
        src: Reg,
        imm: i16,
    },
    /// R[dst] = (R[src] === imm), negated when `ne` (`x === 0`,
    /// `k !== 1`): true only for the number `imm` (so for `-0` when `imm`
    /// is 0), as `StrictEq` with it.
    StrictEqI {
        dst: Reg,
        src: Reg,
        imm: i16,
        ne: bool,
    },
    BitAnd {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    BitOr {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    BitXor {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Shl {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Shr {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    UShr {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// R[dst] = -R[src] (number only)
    Neg {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = +R[src]: TypeError unless a number
    ToNumber {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = ~R[src]
    BitNot {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = !R[src] (JS truthiness)
    Not {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = typeof R[src]
    TypeOf {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = String(R[src]) (calls a user `toString` method if present)
    ToString {
        dst: Reg,
        src: Reg,
    },
    /// R[dst] = concatenation of String(R[start .. start+count])
    /// (template literals).
    Concat {
        dst: Reg,
        start: Reg,
        count: u16,
    },

    // ---- comparisons (result is a boolean) -------------------------------
    StrictEq {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    StrictNe {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `==`: strict equality, except null == undefined.
    LooseEq {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    LooseNe {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// `<` etc.: two numbers or two strings, else TypeError.
    Lt {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Le {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Gt {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    Ge {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// R[dst] = R[a] in R[b]  (property/index/key existence)
    In {
        dst: Reg,
        a: Reg,
        b: Reg,
    },
    /// R[dst] = R[a] instanceof R[b]
    InstanceOf {
        dst: Reg,
        a: Reg,
        b: Reg,
    },

    // ---- control flow ----------------------------------------------------
    Jmp {
        off: i32,
    },
    /// Unconditional backward jump; a safepoint.
    Loop {
        off: i32,
    },
    JmpIfTrue {
        cond: Reg,
        off: i32,
    },
    JmpIfFalse {
        cond: Reg,
        off: i32,
    },
    /// Jump if R[src] is null or undefined.
    JmpIfNullish {
        src: Reg,
        off: i32,
    },
    JmpIfNotNullish {
        src: Reg,
        off: i32,
    },
    /// Fused `if (R[src] === null)`, `=== undefined` and their `!==`
    /// forms: jump when R[src] is (`eq`) or is not (`!eq`) the constant,
    /// `undefined` if `undef`, else `null`. One instruction instead of
    /// the constant's load, `StrictEq` and a conditional jump. May jump
    /// backward (the test at the bottom of a loop).
    JmpIfNil {
        src: Reg,
        off: i32,
        undef: bool,
        eq: bool,
    },
    /// Fused `if (R[a] < R[b])`-not-taken jump: jump when NOT (a < b).
    /// `swapped`: the source said `R[b] > R[a]` (`>=` for the `Le` forms);
    /// only a TypeError reads it, to name the operator and operands as
    /// written.
    JmpIfNotLt {
        a: Reg,
        b: Reg,
        off: i32,
        swapped: bool,
    },
    JmpIfNotLe {
        a: Reg,
        b: Reg,
        off: i32,
        swapped: bool,
    },
    /// `if (R[a] < imm)`-not-taken jump with a small integer constant
    /// (`if (n < 2)`): jump when NOT (R[a] < imm). One instruction instead
    /// of `LoadInt` + `JmpIfNotLt`, and no register for the constant; the
    /// same TypeError as the register form for anything but a number.
    JmpIfNotLtI {
        a: Reg,
        imm: i16,
        off: i32,
    },
    /// Jump when NOT (R[a] <= imm).
    JmpIfNotLeI {
        a: Reg,
        imm: i16,
        off: i32,
    },
    /// Jump when NOT (R[a] > imm) (`if (n > 0)`).
    JmpIfNotGtI {
        a: Reg,
        imm: i16,
        off: i32,
    },
    /// Jump when NOT (R[a] >= imm).
    JmpIfNotGeI {
        a: Reg,
        imm: i16,
        off: i32,
    },
    /// Fused loop test `while (R[a] < R[b])`: jump when a < b.
    JmpIfLt {
        a: Reg,
        b: Reg,
        off: i32,
        swapped: bool,
    },
    JmpIfLe {
        a: Reg,
        b: Reg,
        off: i32,
        swapped: bool,
    },
    /// The step and the test at the bottom of `for (…; i < n; i++)`:
    /// `R[r] += imm`, then jump if `R[r] < R[b]`, when both are numbers.
    /// Otherwise it does nothing, and the next two instructions, the same
    /// step and test written out (`AddI`, then `JmpIfLt`/`JmpIfLe`), run
    /// instead; when it does the work and does not jump, it skips them.
    StepJmpIfLt {
        r: Reg,
        b: Reg,
        imm: i16,
        off: i32,
    },
    /// Likewise, jump if `R[r] <= R[b]`.
    StepJmpIfLe {
        r: Reg,
        b: Reg,
        imm: i16,
        off: i32,
    },
    /// Likewise, jump if `R[r] > R[b]` (`for (…; i > 0; i--)`).
    StepJmpIfGt {
        r: Reg,
        b: Reg,
        imm: i16,
        off: i32,
    },
    /// Likewise, jump if `R[r] >= R[b]`.
    StepJmpIfGe {
        r: Reg,
        b: Reg,
        imm: i16,
        off: i32,
    },

    // ---- properties --------------------------------------------------------
    /// R[dst] = R[obj].K[name]
    GetProp {
        dst: Reg,
        obj: Reg,
        name: ConstIdx,
    },
    /// `R[obj].K[name] += imm` (`o.x++`, `o.x--`, `o.x -= 2` as
    /// statements) when that is a plain data property holding a number of
    /// a plain object or instance: then it is done in place, and the next
    /// three instructions, which are skipped, are the general form
    /// (`GetProp` into a temporary, `AddI`, `SetProp`) that runs in every
    /// other case (accessors, missing or non-number values, built-ins,
    /// errors). One dispatch and one property lookup instead of three and
    /// two, for a statement every counter loop has.
    AddPropI {
        obj: Reg,
        imm: i16,
        name: ConstIdx,
    },
    /// R[obj].K[name] = R[src]
    SetProp {
        obj: Reg,
        name: ConstIdx,
        src: Reg,
    },
    /// R[dst] = R[obj][R[key]]
    GetIndex {
        dst: Reg,
        obj: Reg,
        key: Reg,
    },
    /// R[obj][R[key]] = R[src]
    SetIndex {
        obj: Reg,
        key: Reg,
        src: Reg,
    },
    /// R[dst] = super.K[name], looked up from the parent of the current
    /// method's home class, with `this` = R[0].
    GetSuper {
        dst: Reg,
        name: ConstIdx,
    },
    /// R[dst] = super[R[key]] (as `GetSuper`, with a computed key).
    GetSuperIndex {
        dst: Reg,
        key: Reg,
    },
    /// R[dst] = `#name in R[obj]` for private name K[name]: whether the
    /// object has that private field, method or accessor; a TypeError if
    /// R[obj] is not an object.
    HasPrivate {
        dst: Reg,
        obj: Reg,
        name: ConstIdx,
    },

    // ---- calls -------------------------------------------------------------
    /// See "Calling convention" above. R[f] = R[f](this = R[f+1], R[f+2..]),
    /// after setting R[f] = R[callee] and R[f+1] = R[this] (undefined
    /// when `this` is [`NO_THIS`]). The operands let a call read a local
    /// function and a local receiver where they are and give a plain
    /// call its `undefined` without a `Move` or a `LoadUndef` of their
    /// own; `callee == f` and `this == f + 1` are the window used as it
    /// is ([`Instr::call`]).
    Call {
        f: Reg,
        argc: u16,
        callee: Reg,
        this: Reg,
    },
    /// Method call: copies the receiver R[recv] to R[f+1] (the compiler
    /// reads a local receiver in place instead of moving it there), looks
    /// up K[name] on it, stores the method in R[f], then calls as `Call`.
    /// Errors name the method.
    CallMethod {
        f: Reg,
        name: ConstIdx,
        argc: u16,
        recv: Reg,
    },
    /// R[f] = R[f](this = R[f+1], ...R[f+2]) — R[f+2] is an array.
    CallSpread {
        f: Reg,
    },
    /// R[f] = new R[f](R[f+2..]) (R[f+1] is scratch for the new object).
    New {
        f: Reg,
        argc: u16,
    },
    /// R[f] = new R[f](...R[f+2])
    NewSpread {
        f: Reg,
    },
    /// `super(args)` in a derived constructor: calls the parent
    /// constructor of the current home class on `this` (R[0]) with
    /// R[f+2..]; R[f] receives undefined. Then runs the current class's
    /// field initialisers (see `InitFields`).
    SuperCall {
        f: Reg,
        argc: u16,
    },
    /// `super(...R[f+2])`
    SuperCallSpread {
        f: Reg,
    },
    /// Return R[src] from the current frame.
    Return {
        src: Reg,
    },
    ReturnUndef,

    // ---- object and array construction --------------------------------------
    /// R[dst] = a new RegExp object for the literal whose source text
    /// (`/pattern/flags`) is K[k]. The pattern is compiled once per site
    /// (the instruction's inline cache names the compiled form); each
    /// evaluation makes a new object, with its own `lastIndex`, as in JS.
    NewRegExp {
        dst: Reg,
        k: ConstIdx,
    },
    /// R[dst] = [] with capacity hint `cap`
    NewArray {
        dst: Reg,
        cap: u16,
    },
    /// R[arr].push(R[src])
    ArrayPush {
        arr: Reg,
        src: Reg,
    },
    /// R[arr].push(...R[src]) for any iterable R[src]
    ArraySpread {
        arr: Reg,
        src: Reg,
    },
    /// R[arr].length += 1 (a hole in an array literal: reads as undefined)
    ArrayHole {
        arr: Reg,
    },
    /// R[dst] = {}
    NewObject {
        dst: Reg,
    },
    /// Defines own data property K[name] on R[obj] (object literals;
    /// never calls setters).
    DefineProp {
        obj: Reg,
        name: ConstIdx,
        src: Reg,
    },
    /// Defines own data property R[key] (converted to a property key).
    DefineIndex {
        obj: Reg,
        key: Reg,
        src: Reg,
    },
    /// Copies R[src]'s own enumerable properties onto R[obj] (`...src`).
    ObjectSpread {
        obj: Reg,
        src: Reg,
    },
    /// Defines an accessor half on an object literal: R[obj].K[name]
    /// gets getter/setter R[func] (kind is Getter or Setter).
    DefineAccessor {
        obj: Reg,
        name: ConstIdx,
        func: Reg,
        kind: MethodKind,
    },
    /// `DefineAccessor` with a computed name R[key].
    DefineAccessorComputed {
        obj: Reg,
        key: Reg,
        func: Reg,
        kind: MethodKind,
    },
    /// R[dst] = copy of R[src]'s own enumerable properties except the keys
    /// in the array R[excluded] (object rest pattern).
    ObjectRest {
        dst: Reg,
        src: Reg,
        excluded: Reg,
    },
    /// R[dst] = elements of iterable R[src] from index `start` on, as a new
    /// array (array rest pattern, and destructuring of non-arrays), taking
    /// at most `take` elements from the iterable (`u16::MAX`: all), as a
    /// pattern without a rest element reads no more than it binds.
    ArrayRest {
        dst: Reg,
        src: Reg,
        start: u16,
        take: u16,
    },

    // ---- classes -----------------------------------------------------------
    /// R[dst] = a new class named K[name] whose parent is R[parent]
    /// (`parent == Reg::MAX` for none; a parent that is not a class is a
    /// TypeError). The constructor is R[ctor] (a closure compiled with
    /// `FuncProto::is_constructor`), which also runs the field
    /// initialisers. Static members and methods are added afterwards.
    NewClass {
        dst: Reg,
        name: ConstIdx,
        parent: Reg,
        ctor: Reg,
    },
    /// Adds method R[func] named K[name] to class R[class] (to the class
    /// itself when `is_static`), and sets R[func]'s home class for `super`.
    DefineMethod {
        class: Reg,
        name: ConstIdx,
        func: Reg,
        kind: MethodKind,
        is_static: bool,
    },
    /// Same with a computed name R[key].
    DefineMethodComputed {
        class: Reg,
        key: Reg,
        func: Reg,
        kind: MethodKind,
        is_static: bool,
    },
    /// Sets closure R[func]'s home class (for `super`) to R[class]
    /// (`static {}` blocks, which are called, not installed).
    SetHome {
        func: Reg,
        class: Reg,
    },
    /// Calls the current home class's field initialiser function (if it has
    /// one) on `this`; emitted by the compiler at the start of a base-class
    /// constructor. (Derived constructors get it from `SuperCall`.) `new`
    /// does its work itself when the fields are constants copied from the
    /// class's template, and starts the constructor after it.
    InitFields,
    /// Sets class R[class]'s field-initialiser function to R[func]
    /// (a method-like closure with home class R[class] that assigns the
    /// instance fields on `this`).
    SetFieldInit {
        class: Reg,
        func: Reg,
    },

    // ---- iteration ---------------------------------------------------------
    /// R[dst] = an iterator over R[src] (array, string, Map, Set, channel);
    /// TypeError if not iterable.
    GetIter {
        dst: Reg,
        src: Reg,
    },
    /// Advances iterator R[iter]: R[dst] = next value, or jumps by `off`
    /// when exhausted.
    IterNext {
        dst: Reg,
        iter: Reg,
        off: i32,
    },
    /// Closes iterator R[iter] when a loop over it is left early (`break`,
    /// `return`, a throw): a paused generator runs its `finally` blocks
    /// (as `return()` does), a user iterator's `return()` is called if it
    /// has one. Nothing for built-in iterators or a finished one.
    IterClose {
        iter: Reg,
    },
    /// `yield*`, on a throw at its pause (`throw(e)` on the delegating
    /// generator, e in R[exc]): when the delegate is a paused generator,
    /// pushes again the handler that led here (catch target: this
    /// instruction, `off` from the next one), resumes the delegate with
    /// `throw(e)` delivering what it yields or returns raw into R[dst] as
    /// `IterNext` expects, and continues (with the `Loop` back to the
    /// `IterNext`). Any other delegate: skips that `Loop`, on to closing
    /// it and rethrowing.
    IterThrow {
        iter: Reg,
        exc: Reg,
        dst: Reg,
        off: i32,
    },
    /// `yield*`: the value the delegating generator was resumed with
    /// (R[src]) is passed to the next `next()` of iterator R[iter].
    IterSend {
        iter: Reg,
        src: Reg,
    },
    /// R[dst] = array of R[src]'s enumerable own keys as strings
    /// (`for-in`; empty for null/undefined).
    ForInKeys {
        dst: Reg,
        src: Reg,
    },

    // ---- generators (design/interpreter.md "Generators") ----------------------
    /// First instruction of a generator's body (after its parameters are
    /// bound): moves the current frame into a new generator object, pops
    /// it, and returns the generator to the caller.
    GenStart,
    /// `GenStart` of an `async function*`: the generator made as by
    /// `GenStart` is handed to the prelude's `Array.__asyncGen`, whose
    /// result (the async generator object) is the call's result.
    AsyncGenStart,
    /// `for await (… of R[src])` and `yield*` in an async generator:
    /// R[dst] = the prelude's `Array.__forAwait(R[src], R[what])`, a
    /// generator that drives the async iterator protocol (or awaits the
    /// values of a synchronous iterable) on the running task. R[what] is
    /// the loop's source text for the TypeError of a non-iterable, or
    /// undefined.
    ForAwait {
        dst: Reg,
        src: Reg,
        what: Reg,
    },
    /// Pauses the running generator with R[src] as the value produced.
    /// Resumed by `next(v)`: R[dst] = v, continue at the next instruction
    /// (a `Jmp` over the return path). By `return(v)`: R[dst] = v,
    /// continue one further (the return path: `return R[dst]` through the
    /// enclosing `finally` blocks). By `throw(e)`: throws e here.
    Yield {
        dst: Reg,
        src: Reg,
    },

    // ---- exceptions ----------------------------------------------------------
    /// Push a handler: on a throw, jump by `off` (from the next
    /// instruction) with the thrown value in R[exc].
    TryBegin {
        exc: Reg,
        off: i32,
    },
    /// Pop the innermost handler.
    TryEnd,
    /// throw R[src]
    Throw {
        src: Reg,
    },

    // ---- tasks (see LANGUAGE.md §6) ----------------------------------------
    /// R[dst] = await R[src]: suspends the task until the waitable
    /// finishes; plain values pass through; arrays wait for all.
    Await {
        dst: Reg,
        src: Reg,
    },
    /// Like `Call`, but starts the call as a new task and puts the `Task`
    /// in R[f] (the `async f(x)` prefix).
    Spawn {
        f: Reg,
        argc: u16,
    },
    /// `Spawn` with a spread argument array in R[f+2].
    SpawnSpread {
        f: Reg,
    },
    /// `select`: see the concurrency design; R[base..] holds the evaluated
    /// case operands as described by `FuncProto::selects[desc]`. Jumps to
    /// the chosen case by table; R[dst] receives a received value.
    Select {
        base: Reg,
        desc: u32,
    },
}

/// The most cases a `select` may have (the compiler refuses more): a
/// woken task's pending resume keeps the index of the case that fired in
/// 24 bits (`sync::task::ResumeSlot`).
pub const MAX_SELECT_CASES: usize = 1 << 24;

/// Static description of one `select` statement: cases in source order.
#[derive(Debug, Clone, PartialEq)]
pub struct SelectDesc {
    pub cases: Vec<SelectCaseDesc>,
    /// Register that receives the value of a chosen receive case.
    pub value_reg: Reg,
}

/// A case of a `select`. Every `target` is a jump offset relative to the
/// instruction after the `Select` (as for jumps); the compiler places each
/// case's body there (the receive binding, if any, is initialised from
/// `SelectDesc::value_reg` by the body's first instructions) and ends it
/// with a jump past the whole statement. The instruction right after
/// `Select` is a `Jmp` past the statement and is never reached.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SelectCaseDesc {
    /// Channel in R[base + operand].
    Receive {
        operand: u16,
        target: i32,
    },
    /// Channel in R[base + operand], value in R[base + operand + 1].
    Send {
        operand: u16,
        target: i32,
    },
    /// Milliseconds in R[base + operand].
    Timeout {
        operand: u16,
        target: i32,
    },
    Default {
        target: i32,
    },
}

impl Instr {
    /// `Call` on a window the caller filled: the callee in R[f], `this` in
    /// R[f+1].
    pub fn call(f: Reg, argc: u16) -> Instr {
        Instr::Call { f, argc, callee: f, this: f + 1 }
    }
}

/// A compiled function.
#[derive(Debug, Clone, Default)]
pub struct FuncProto {
    /// Name for stack traces and `[Function: name]` (may be empty).
    pub name: String,
    /// Number of declared parameters (excluding `this` and a rest param).
    pub arity: u16,
    /// `f.length`: the parameters before the first one with a default
    /// value (or the rest parameter), as in JS.
    pub length: u16,
    /// The parameter after the declared ones collects extra arguments.
    pub has_rest: bool,
    pub is_async: bool,
    pub is_arrow: bool,
    /// `function*`: the body starts with `GenStart`.
    pub is_generator: bool,
    /// A class constructor: callable only with `new` / `super(...)`.
    pub is_constructor: bool,
    /// A derived-class constructor (must call `super` before using `this`).
    pub is_derived: bool,
    /// Frame size in registers (including register 0 = `this`).
    pub num_regs: u16,
    pub code: Vec<Instr>,
    /// Source byte offset of each instruction (parallel to `code`).
    pub spans: Vec<u32>,
    pub consts: Vec<Constant>,
    /// Nested function prototypes referenced by `Closure`.
    pub protos: Vec<Arc<FuncProto>>,
    /// What a closure of this prototype captures, in upvalue order.
    pub captures: Vec<Capture>,
    pub selects: Vec<SelectDesc>,
    /// The file the function was written in.
    pub file: FileId,
    /// Source offset of the function itself.
    pub span_start: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_are_small() {
        assert!(std::mem::size_of::<Instr>() <= 12, "Instr is {} bytes", std::mem::size_of::<Instr>());
    }
}
