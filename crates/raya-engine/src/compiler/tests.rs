//! Compiler unit tests: resolver errors, captures and per-iteration
//! bindings (by the shape of the emitted code), module loading, limits and
//! the disassembler.

use super::*;
use crate::bytecode::{Capture, Instr, Reg, NO_THIS};

fn compile(src: &str) -> Program {
    match compile_source("test.raya", src) {
        Ok(p) => p,
        Err(e) => panic!("unexpected compile error:\n{}", e.render()),
    }
}

fn errors(src: &str) -> Vec<String> {
    match compile_source("test.raya", src) {
        Ok(_) => panic!("expected compile errors"),
        Err(e) => e.diagnostics.iter().map(|d| d.message.clone()).collect(),
    }
}

fn find<'p>(f: &'p FuncProto, name: &str) -> Option<&'p FuncProto> {
    if f.name == name {
        return Some(f);
    }
    f.protos.iter().find_map(|p| find(p, name))
}

fn func<'p>(p: &'p Program, name: &str) -> &'p FuncProto {
    find(&p.entry, name).unwrap_or_else(|| panic!("no function `{name}`"))
}

fn count(f: &FuncProto, pred: impl Fn(&Instr) -> bool) -> usize {
    f.code.iter().filter(|i| pred(i)).count()
}

/// The jump offset of a jump instruction.
fn jump_off(i: &Instr) -> Option<i32> {
    match *i {
        Instr::Jmp { off }
        | Instr::Loop { off }
        | Instr::JmpIfTrue { off, .. }
        | Instr::JmpIfFalse { off, .. }
        | Instr::JmpIfNullish { off, .. }
        | Instr::JmpIfNotNullish { off, .. }
        | Instr::JmpIfNil { off, .. }
        | Instr::JmpIfNotLt { off, .. }
        | Instr::JmpIfNotLe { off, .. }
        | Instr::JmpIfLt { off, .. }
        | Instr::JmpIfLe { off, .. }
        | Instr::StepJmpIfLt { off, .. }
        | Instr::StepJmpIfLe { off, .. }
        | Instr::StepJmpIfGt { off, .. }
        | Instr::StepJmpIfGe { off, .. }
        | Instr::IterNext { off, .. }
        | Instr::TryBegin { off, .. } => Some(off),
        _ => None,
    }
}

/// The position of the first backward jump: the bottom of the first loop.
fn back_edge(f: &FuncProto) -> usize {
    f.code.iter().position(|i| jump_off(i).is_some_and(|o| o < 0)).expect("a backward jump")
}

// ---- resolver errors ---------------------------------------------------------

#[test]
fn undeclared_variable() {
    let e = errors("console.log(nope);");
    assert_eq!(e, vec!["cannot find name `nope`"]);
}

#[test]
fn undeclared_hint_similar_name() {
    let r = compile_source("t.raya", "const count = 1; console.log(cuont);").unwrap_err();
    assert_eq!(r.diagnostics[0].hint.as_deref(), Some("a name with a similar spelling exists: `count`"));
}

#[test]
fn builtins_and_constants_resolve() {
    compile("console.log(Math.max(1, 2), undefined, NaN, Infinity, parseInt('1'));");
}

#[test]
fn assignment_to_const_in_every_form() {
    let e = errors(
        "const a = 1;\n a = 2;\n a++;\n --a;\n a += 1;\n a ??= 3;\n [a] = [1];\n ({ a } = { a: 1 });\n for (a of [1]) {}",
    );
    assert_eq!(e.len(), 8, "{e:?}");
    assert!(e.iter().all(|m| m == "cannot assign to `a` because it is a constant"), "{e:?}");
}

#[test]
fn const_loop_variable_is_constant() {
    let e = errors("for (const x of [1]) { x = 2; }");
    assert_eq!(e, vec!["cannot assign to `x` because it is a constant"]);
}

#[test]
fn duplicate_declarations() {
    let e = errors(
        "let a = 1; let a = 2;\nfunction f() {} function f() {}\nclass C {} const C = 1;\nfunction g(p) { let p = 1; }\n{ let ok = 1; } { let ok = 2; }",
    );
    assert_eq!(
        e,
        vec![
            "the name `a` is defined multiple times",
            "the name `f` is defined multiple times",
            "the name `C` is defined multiple times",
            "the name `p` is defined multiple times",
        ]
    );
}

#[test]
fn shadowing_in_inner_scopes_is_fine() {
    compile("let a = 1; { let a = 2; { const a = 3; } } function f(a) { { let a = 4; } }");
}

#[test]
fn break_continue_return_placement() {
    let e = errors(
        "break;\ncontinue;\nfunction f() { break; }\nwhile (true) { const g = () => { continue; }; break; }\nreturn 1;\nl: { continue l; }\nfor (;;) { break nowhere; }",
    );
    assert_eq!(
        e,
        vec![
            "`break` outside of a loop or switch",
            "`continue` outside of a loop",
            "`break` outside of a loop or switch",
            "`continue` outside of a loop",
            "`return` outside of a function",
            "`continue` target `l` is not a loop",
            "use of undeclared label `nowhere`",
        ]
    );
}

#[test]
fn break_is_valid_in_switch_select_and_labelled_blocks() {
    compile(
        "switch (1) { case 1: break; }\nl: { break l; }\nouter: for (;;) { inner: for (;;) { continue outer; } }\nconst ch = new Channel<number>(1);\nselect { case ch.receive(): break; default: break; }",
    );
}

#[test]
fn await_is_valid_everywhere() {
    compile("const x = await 1; function f() { return await x; }");
}

#[test]
fn all_errors_are_reported_in_source_order() {
    let r = compile_source("t.raya", "x1;\nlet d = 1;\nlet d = 2;\nconst c = 0; c = 1;\nbreak;\ny2;").unwrap_err();
    let lines: Vec<u32> = r.diagnostics.iter().map(|d| r.sources.line_col(d.file, d.span.start).0).collect();
    assert_eq!(lines, vec![1, 3, 4, 5, 6]);
    let text = r.render();
    assert!(text.contains("error: could not compile due to 5 previous errors"), "{text}");
    assert!(text.contains("t.raya:4:14"), "{text}");
}

#[test]
fn scope_errors_are_reported_with_syntax_errors() {
    let r = compile_source("t.raya", "var old = 1;\nconsole.log(nope, old);\nbreak;").unwrap_err();
    let msgs: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
    // `old` was declared by the statement the parser rejected: no echo.
    assert_eq!(msgs, vec!["`var` is not supported", "cannot find name `nope`", "`break` outside of a loop or switch"]);
}

// ---- captures and per-iteration bindings --------------------------------------------

#[test]
fn uncaptured_locals_live_in_registers() {
    let p = compile("function f(a) { let b = a + 1; return b * 2; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::NewCell { .. } | Instr::CellGet { .. } | Instr::CellSet { .. })), 0);
    assert!(f.captures.is_empty());
}

#[test]
fn captured_variables_live_in_cells() {
    let p = compile("function f() { let n = 0; const inc = () => { n++; return n; }; inc(); return n; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::NewCell { .. })), 1);
    assert!(count(f, |i| matches!(i, Instr::CellGet { .. })) >= 1);
    let inc = func(&p, "inc");
    assert_eq!(inc.captures.len(), 1);
    assert!(matches!(inc.captures[0], Capture::Local(_)));
    assert!(count(inc, |i| matches!(i, Instr::GetUpval { .. })) >= 1);
    assert!(count(inc, |i| matches!(i, Instr::SetUpval { .. })) >= 1);
}

#[test]
fn captures_through_intermediate_functions_are_upvalues() {
    let p = compile("function a() { let x = 1; function b() { function c() { return x; } return c; } return b; }");
    let b = func(&p, "b");
    let c = func(&p, "c");
    assert!(matches!(b.captures[..], [Capture::Local(_)]));
    assert!(matches!(c.captures[..], [Capture::Upval(0)]));
}

#[test]
fn for_let_copies_captured_binding_per_iteration() {
    // The closure assigns `i`: it lives in a cell.
    let p =
        compile("function f() { const fs = []; for (let i = 0; i < 3; i++) { fs.push(() => i += 10); } return fs; }");
    let f = func(&p, "f");
    // The initial cell, plus a fresh copy before the first test and one
    // before every update.
    assert_eq!(count(f, |i| matches!(i, Instr::NewCell { .. })), 3);
    // The update acts on the new copy: the last CellSet before the test at
    // the bottom is the increment, after the copy's NewCell.
    let lp = back_edge(f) - 1;
    assert!(matches!(f.code[lp], Instr::CellGet { .. }), "{:?}", f.code);
    let last_new = f.code[..lp].iter().rposition(|i| matches!(i, Instr::NewCell { .. })).unwrap();
    let addi = f.code[..lp].iter().rposition(|i| matches!(i, Instr::AddI { .. })).unwrap();
    assert!(addi > last_new, "update must act on the fresh cell");
    assert!(matches!(f.code[lp - 1], Instr::CellSet { .. }));
}

#[test]
fn for_let_without_capture_has_no_cells() {
    let p = compile("function f() { let s = 0; for (let i = 0; i < 3; i++) { s += i; } return s; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::NewCell { .. })), 0);
    // i++ is AddI; the condition is a fused compare-and-jump, once past the
    // loop before it starts (with the constant as its operand) and once
    // back to its top at the bottom.
    assert_eq!(count(f, |i| matches!(i, Instr::AddI { imm: 1, .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNotLtI { imm: 3, .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfLt { .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::Loop { .. })), 0);
    // The first backward jump is the fused step and test, followed by the
    // same two written out (see `counting_loops_step_and_test_in_one_instruction`).
    let bottom = back_edge(f);
    assert!(matches!(f.code[bottom], Instr::StepJmpIfLt { imm: 1, .. }), "{:?}", f.code);
    assert!(matches!(f.code[bottom + 1], Instr::AddI { imm: 1, .. }));
    assert!(matches!(f.code[bottom + 2], Instr::JmpIfLt { .. }));
}

#[test]
fn every_backward_jump_is_a_safepoint() {
    // `continue` in a loop whose test stays at the top (here a `for…of`)
    // jumps backward: it must be a `Loop`, never a plain `Jmp`.
    let p = compile(
        "function f(xs) { let n = 0; for (const x of xs) { if (x) continue; n++; } \
         while (n > 0) { n--; if (n % 2) continue; } do { n++; continue; } while (n < 3); return n; }",
    );
    let f = func(&p, "f");
    for i in &f.code {
        if jump_off(i).is_some_and(|o| o < 0) {
            assert!(
                matches!(
                    i,
                    Instr::Loop { .. }
                        | Instr::JmpIfTrue { .. }
                        | Instr::JmpIfFalse { .. }
                        | Instr::JmpIfNotLt { .. }
                        | Instr::JmpIfNotLe { .. }
                        | Instr::JmpIfLt { .. }
                        | Instr::JmpIfLe { .. }
                        | Instr::StepJmpIfLt { .. }
                        | Instr::StepJmpIfLe { .. }
                        | Instr::StepJmpIfGt { .. }
                        | Instr::StepJmpIfGe { .. }
                ),
                "backward {i:?} in {:?}",
                f.code
            );
        }
    }
    assert!(count(f, |i| matches!(i, Instr::Loop { .. })) >= 1, "{:?}", f.code);
}

#[test]
fn property_update_statements_are_done_in_place() {
    // As statements, `o.n++`, `o.n -= 2` and `--o.n` are `AddPropI`, each
    // followed by the general form it skips: GetProp, AddI, SetProp on the
    // same object and name with the same step.
    let p = compile("function f(o, k) { o.n++; o.n -= 2; --o.n; o[k]++; o.n += 1; return o.n++; }");
    let f = func(&p, "f");
    let steps: Vec<i16> = f
        .code
        .iter()
        .enumerate()
        .filter_map(|(at, i)| {
            let Instr::AddPropI { obj, imm, name } = *i else { return None };
            match f.code[at + 1..at + 4] {
                [Instr::GetProp { dst, obj: o1, name: n1 }, Instr::AddI { dst: d2, src, imm: i2, .. }, Instr::SetProp { obj: o3, name: n3, src: s3 }]
                    if o1 == obj && n1 == name && o3 == obj && n3 == name && d2 == dst && src == dst && s3 == dst && i2 == imm => {}
                ref other => panic!("AddPropI followed by {other:?}"),
            }
            Some(imm)
        })
        .collect();
    // `o.n += 1` too (its written-out `AddI` keeps `+`'s meaning for a
    // string); `o[k]++` (a computed key) and an update whose value is used
    // take the general form only.
    assert_eq!(steps, [1, -2, -1, 1], "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::GetProp { .. })), 5, "{:?}", f.code);
}

#[test]
fn counting_loops_step_and_test_in_one_instruction() {
    // Each loop ends with a StepJmpIf… that jumps to the loop's first body
    // instruction, followed by the written-out AddI and compare-and-jump
    // to the same place.
    let p = compile(
        "function f(n, o) { let s = 0; \
         for (let i = 0; i < n; i++) { s += i; } \
         for (let i = 0; i <= n; i++) { s += i; } \
         for (let i = 0; i <= n; i += 2) { s += i; } \
         for (let i = n; i > 0; i--) { s += i; } \
         for (let i = n; 0 <= i; i -= 3) { if (i == 4) continue; s += i; } \
         for (let i = 1; i < n; i = i * 2) { s += i; } \
         for (let i = 0; i < n; i++, s++) { s += i; } \
         for (let i = 0; i < n; i++) { o.push(() => i++); } \
         for (let i = 0; i < n; i++) { o.push(() => i); } \
         return s; }",
    );
    let f = func(&p, "f");
    let mut fused = Vec::new();
    for (at, i) in f.code.iter().enumerate() {
        let (kind, r, b, imm, off) = match *i {
            Instr::StepJmpIfLt { r, b, imm, off } => ("lt", r, b, imm, off),
            Instr::StepJmpIfLe { r, b, imm, off } => ("le", r, b, imm, off),
            Instr::StepJmpIfGt { r, b, imm, off } => ("gt", r, b, imm, off),
            Instr::StepJmpIfGe { r, b, imm, off } => ("ge", r, b, imm, off),
            _ => continue,
        };
        let target = at as i64 + 1 + off as i64;
        assert!(matches!(f.code[at + 1], Instr::AddI { dst, src, imm: i2, .. } if dst == r && src == r && i2 == imm));
        let (x, y, off2) = match f.code[at + 2] {
            Instr::JmpIfLt { a, b, off, .. } | Instr::JmpIfLe { a, b, off, .. } => (a, b, off),
            ref other => panic!("fused step followed by {other:?}"),
        };
        assert!((x, y) == (r, b) || (x, y) == (b, r), "{:?}", f.code);
        assert_eq!(target, at as i64 + 3 + off2 as i64, "both jump to the same place");
        assert!(target < at as i64);
        fused.push((kind, imm));
    }
    // `i += 2` is fused too (its written-out `AddI` concatenates a
    // string). `i = i * 2` is no counter step, `i++, s++` is two steps, and
    // an `i` a closure assigns lives in a cell: those loops keep their
    // written-out bottom only. One only read by closures is captured by
    // value, in its register: that loop counts like the others.
    assert_eq!(fused, [("lt", 1), ("le", 1), ("le", 2), ("gt", -1), ("ge", -3), ("lt", 1)], "{:?}", f.code);
}

#[test]
fn a_loop_condition_with_a_function_is_compiled_once() {
    let p = compile("function f(xs) { let n = 0; while (xs.some((x) => x > n)) { n++; } return n; }");
    let f = func(&p, "f");
    assert_eq!(f.protos.len(), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::Closure { .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::Loop { .. })), 1);
}

#[test]
fn for_of_let_gets_a_fresh_cell_each_iteration() {
    let p = compile("function f(xs) { const fs = []; for (let x of xs) fs.push(() => x++); return fs; }");
    let f = func(&p, "f");
    let top = f.code.iter().position(|i| matches!(i, Instr::IterNext { .. })).unwrap();
    let lp = f.code.iter().position(|i| matches!(i, Instr::Loop { .. })).unwrap();
    assert_eq!(
        count(&FuncProto { code: f.code[top..lp].to_vec(), ..FuncProto::default() }, |i| matches!(
            i,
            Instr::NewCell { .. }
        )),
        1
    );
}

#[test]
fn block_scoped_let_in_loop_body_gets_new_cell_each_iteration() {
    let p = compile(
        "function f() { const fs = []; let i = 0; while (i < 3) { let v = i; fs.push(() => v); v++; i++; } return fs; }",
    );
    let f = func(&p, "f");
    let top = f.code.iter().position(|i| matches!(i, Instr::JmpIfNotLtI { .. })).unwrap();
    assert!(f.code[top..back_edge(f)].iter().any(|i| matches!(i, Instr::NewCell { .. })));
}

/// Whether `f` keeps binding cells: `NewCell`s in its code.
fn cells(f: &FuncProto) -> usize {
    count(f, |i| matches!(i, Instr::NewCell { .. }))
}

#[test]
fn bindings_never_changed_after_capture_are_captured_by_value() {
    // A `for (let …)` counter changed only by its header, a `const`, a
    // `let` never assigned again, a parameter, a `for…of` binding and a
    // catch parameter: no cell, the closures copy the value.
    let p = compile(
        "function f(n, xs) { const fs = []; \
         for (let i = 0; i < n; i++) { fs.push(() => i); } \
         const k = n * 2; let m = k + 1; fs.push(() => k + m + n); \
         for (const x of xs) { fs.push(() => x); } \
         try { xs.f(); } catch (e) { fs.push(() => e); } \
         return fs; }",
    );
    let f = func(&p, "f");
    assert_eq!(cells(f), 0, "{:?}", f.code);
    for c in &f.protos {
        assert!(c.captures.iter().all(|c| matches!(c, Capture::Local(_))), "{:?}", c.captures);
        assert!(count(c, |i| matches!(i, Instr::GetCapture { .. })) >= 1, "{:?}", c.code);
        assert_eq!(count(c, |i| matches!(i, Instr::GetUpval { .. })), 0, "{:?}", c.code);
    }
}

#[test]
fn a_value_captured_through_an_intermediate_function_is_copied_again() {
    let p = compile("function a(x) { return () => () => x; }");
    let a = func(&p, "a");
    assert_eq!(cells(a), 0);
    let outer = &a.protos[0];
    let inner = &outer.protos[0];
    assert!(matches!(outer.captures[..], [Capture::Local(1)]));
    assert!(matches!(inner.captures[..], [Capture::Upval(0)]));
    assert!(matches!(inner.code[0], Instr::GetCapture { idx: 0, .. }));
}

#[test]
fn bindings_that_can_change_after_capture_stay_in_cells() {
    for (what, src) in [
        (
            "assigned later in the loop body",
            "function f(fs) { for (let i = 0; i < 3; i++) { fs.push(() => i); i++; } }",
        ),
        ("assigned inside the closure", "function f(fs) { let n = 0; fs.push(() => n++); }"),
        ("assigned after capture", "function f(fs) { let n = 0; fs.push(() => n); n = 2; }"),
        ("assigned before capture", "function f(fs) { let n = 0; n = 2; fs.push(() => n); }"),
        ("a parameter assigned", "function f(fs, n) { fs.push(() => n); n = 1; }"),
        ("read by a closure made before its declaration", "function f(fs) { fs.push(() => x); const x = 1; }"),
        (
            "read by a hoisted function of its own block",
            "function f() { const x = 1; function g() { return x; } return g; }",
        ),
        ("read by its own initialiser", "function f() { const r = (n) => (n > 0 ? r(n - 1) : 0); return r; }"),
        ("captured in its loop's header", "function f(fs) { for (let i = 0; i < 3; fs.push(() => i), i++) {} }"),
        ("read by an earlier parameter's default", "function f(g = () => n, n = 1) { return g; }"),
        (
            "a class member before its declaration",
            "function f() { class C { m() { return x; } } const x = 1; return C; }",
        ),
    ] {
        let p = compile(src);
        let f = func(&p, "f");
        assert!(cells(f) >= 1, "{what}: no cell in {:?}", f.code);
    }
}

#[test]
fn a_hoisted_function_copies_what_was_initialised_before_its_block() {
    let p = compile("function f(a) { const b = a + 1; { function g() { return a + b; } return g; } }");
    let f = func(&p, "f");
    assert_eq!(cells(f), 0, "{:?}", f.code);
    assert_eq!(count(func(&p, "g"), |i| matches!(i, Instr::GetCapture { .. })), 2);
}

#[test]
fn arrow_captures_this_of_enclosing_function() {
    let p = compile("class C { x = 1; m() { return () => this.x; } }");
    let m = func(&p, "m");
    assert!(matches!(m.code[..2], [Instr::NewCell { dst: c }, Instr::CellSet { cell, src: 0 }] if c == cell));
    let arrow = m.protos.first().expect("arrow");
    assert!(arrow.is_arrow);
    assert_eq!(arrow.captures.len(), 1);
    assert!(matches!(arrow.code[0], Instr::GetUpval { idx: 0, .. }));
}

#[test]
fn hoisted_function_can_capture_later_let() {
    let p = compile("function outer() { function g() { return later; } let later = 5; return g(); }");
    let outer = func(&p, "outer");
    // The cell exists before the closure that captures it.
    let cell = outer.code.iter().position(|i| matches!(i, Instr::NewCell { .. })).unwrap();
    let clo = outer.code.iter().position(|i| matches!(i, Instr::Closure { .. })).unwrap();
    assert!(cell < clo);
}

#[test]
fn top_level_bindings_are_globals() {
    let p = compile("let counter = 0; function bump() { counter++; } bump();");
    let slot = p.global_names.iter().position(|n| n == "counter").unwrap() as u32;
    assert!(slot as usize >= GLOBAL_NAMES.len());
    let bump = func(&p, "bump");
    assert!(bump.captures.is_empty());
    assert!(bump.code.iter().any(|i| matches!(i, Instr::SetGlobal { idx, .. } if *idx == slot)));
}

/// The prelude is compiled once per process: every first program calls
/// the same body, in file 0, and host globals come after its slots.
#[test]
fn the_prelude_is_compiled_once_and_shared_by_every_program() {
    let a = compile("1;");
    let opts = CompileOptions { host_globals: vec!["hostFn".into()], ..CompileOptions::default() };
    let b = compile_source_with("b.raya", "hostFn();", &opts).unwrap();
    assert!(Arc::ptr_eq(&a.entry.protos[0], &b.entry.protos[0]), "both programs run one prelude body");
    assert_eq!(a.sources.get(0).name, "<prelude>");
    assert!(std::ptr::eq(a.sources.get(0), b.sources.get(0)), "the prelude's source is shared too");
    assert!(b.host_base > GLOBAL_NAMES.len(), "the prelude's slots come first");
    assert_eq!(b.global_names[b.host_base], "hostFn");
    assert_eq!(b.host_globals, 1);
    assert_eq!(a.host_base, b.host_base);
}

#[test]
fn function_names_are_inferred() {
    let p = compile(
        "const f = () => 1; const o = { m() {}, k: function () {} }; let g; g = () => 2; class K { meth() {} }",
    );
    for n in ["f", "m", "k", "g", "meth", "K"] {
        func(&p, n);
    }
}

// ---- code shape ----------------------------------------------------------------------

#[test]
fn method_calls_use_call_method_and_spans_point_at_the_name() {
    let p = compile("function f(o) { return o.method(1); }");
    let f = func(&p, "f");
    let at = f.code.iter().position(|i| matches!(i, Instr::CallMethod { .. })).unwrap();
    let (line, col) = p.sources.line_col(f.file, f.spans[at]);
    assert_eq!((line, col), (1, 26));
}

/// `(argc, callee, this)` of the first `Call` in `f`.
fn first_call(f: &FuncProto) -> Option<(u16, Reg, Reg)> {
    f.code.iter().find_map(|i| match *i {
        Instr::Call { argc, callee, this, .. } => Some((argc, callee, this)),
        _ => None,
    })
}

#[test]
fn call_with_reads_the_function_and_this_arg_in_place() {
    let p = compile("function f(g, t) { return __callWith(g, t, 1, 2); }");
    let f = func(&p, "f");
    // (R0 is `this`.) `Call` reads g (R1) as the callee and t (R2) as
    // `this` where they are, then two arguments: a plain call, no lookup
    // of `__callWith` itself and no `Move` into the window.
    assert_eq!(first_call(f), Some((2, 1, 2)), "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::Move { .. })), 0, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::GetGlobal { .. } | Instr::LoadUndef { .. })), 0, "{:?}", f.code);
}

#[test]
fn call_of_a_local_reads_it_in_place_with_this_undefined() {
    let p = compile("function f(g, x) { return g(x); }");
    let f = func(&p, "f");
    assert_eq!(first_call(f), Some((1, 1, NO_THIS)), "{:?}", f.code);
    // Only the argument is moved; no `LoadUndef` for `this`.
    assert_eq!(count(f, |i| matches!(i, Instr::Move { .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::LoadUndef { .. })), 0, "{:?}", f.code);
}

#[test]
fn call_of_a_local_an_argument_assigns_copies_it_first() {
    // JS evaluates the callee before the arguments: `g` must be the
    // function it was before `g = h` ran.
    for src in ["function f(g, h) { return g(g = h); }", "function f(g, h, t) { return __callWith(g, t, g = h); }"] {
        let p = compile(src);
        let f = func(&p, "f");
        let (base, callee) = f
            .code
            .iter()
            .find_map(|i| match i {
                Instr::Call { f, callee, .. } => Some((*f, *callee)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no Call: {:?}", f.code));
        assert_eq!(callee, base, "{src}: {:?}", f.code);
        let moves_g = |i: &Instr| match *i {
            Instr::Move { dst, src } => dst == base && src == 1,
            Instr::Move2 { dst, src, dst2, src2 } => (dst == base && src == 1) || (dst2 == base && src2 == 1),
            _ => false,
        };
        assert!(f.code.iter().any(moves_g), "{src}: {:?}", f.code);
    }
}

// ---- the temporal dead zone ------------------------------------------------------------

fn checks(f: &FuncProto) -> usize {
    count(f, |i| matches!(i, Instr::CheckInit { .. } | Instr::LoadHole { .. }))
}

fn all_checks(f: &FuncProto) -> usize {
    checks(f) + f.protos.iter().map(|p| all_checks(p)).sum::<usize>()
}

#[test]
fn tdz_proven_initialised_uses_cost_nothing() {
    // Uses after the declaration, closures created after it, hoisted
    // functions and methods first used after it, a recursive arrow, and an
    // earlier element of the same pattern: no check, no hole, and literal
    // constants still fold.
    let p = compile(
        "const N = 5; let total = 0;
         function add(x) { total += x * N; return total; }
         class Acc { get() { return total + N; } }
         const fact = (n) => (n <= 1 ? 1 : n * fact(n - 1));
         const [a, b = a] = [1];
         for (let i = 0; i < 3; i++) { const k = i; add(k); }
         const cb = () => total;
         console.log(add(1), new Acc().get(), fact(3), cb(), b);
         function block() { let y = 1; { const z = y; return () => z + y; } }",
    );
    assert_eq!(all_checks(&p.entry), 0);
    let add = func(&p, "add");
    assert!(add.code.iter().any(|i| matches!(i, Instr::LoadInt { v: 5, .. })), "{:?}", add.code);
}

#[test]
fn tdz_checks_only_the_uses_that_may_run_early() {
    // `f` is called before `x` is declared: its read of `x` is checked (and
    // `x` starts as the hole); `g`, first used after, is not.
    let p = compile("function f() { return x; } function g() { return x; } f(); let x = 1; g();");
    assert_eq!(count(func(&p, "f"), |i| matches!(i, Instr::CheckInit { .. })), 1);
    assert_eq!(checks(func(&p, "g")), 0);
    assert_eq!(count(&p.entry, |i| matches!(i, Instr::LoadHole { .. })), 1);
}

#[test]
fn tdz_use_before_the_declaration_in_one_function_always_throws() {
    let p = compile("function f() { const a = b; const b = 1; return a; }");
    let f = func(&p, "f");
    let at = f.code.iter().position(|i| matches!(i, Instr::LoadHole { .. })).expect("hole");
    assert!(matches!(f.code[at + 1], Instr::CheckInit { .. }), "{:?}", f.code);
}

#[test]
fn tdz_switch_bindings_used_from_another_clause_are_cells_checked_there() {
    let p = compile(
        "function f(n) { switch (n) { case 0: let s = 1; return s; case 1: return s; } }
         function g(n) { switch (n) { case 0: let s = 1; return s; default: return 0; } }",
    );
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::CheckInit { .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::NewCell { .. })), 1, "{:?}", f.code);
    assert_eq!(checks(func(&p, "g")), 0);
}

#[test]
fn constants_are_deduplicated() {
    let p = compile("function f(o) { return [o.a, o.a, 'a', 1.5, 1.5, NaN, NaN]; }");
    let f = func(&p, "f");
    assert_eq!(f.consts.len(), 3, "{:?}", f.consts);
}

#[test]
fn greater_than_conditions_swap_operands() {
    let p = compile("function f(a, b) { if (a > b) return 1; return 2; }");
    let f = func(&p, "f");
    assert!(f.code.iter().any(|i| matches!(i, Instr::JmpIfNotLt { a: 2, b: 1, swapped: true, .. })), "{:?}", f.code);
}

#[test]
fn call_results_land_in_the_variable_register() {
    let p = compile("function g() { return 1; } function f() { const x = g(); return x; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::Move { .. })), 0, "{:?}", f.code);
}

#[test]
fn finally_runs_on_every_exit_path() {
    let p = compile("function f(x) { for (;;) { try { if (x) return 1; if (x === 2) break; } finally { mark(); } } }\nfunction mark() {}");
    let f = func(&p, "f");
    // return path, break path, normal path, catch-all path.
    assert_eq!(count(f, |i| matches!(i, Instr::CallMethod { .. } | Instr::Call { .. })), 4);
    assert_eq!(count(f, |i| matches!(i, Instr::Throw { .. })), 1);
}

#[test]
fn generator_bodies_start_after_the_parameters() {
    let p = compile("function* g(a = 1) { const x = yield a; return x; }");
    let g = func(&p, "g");
    assert!(g.is_generator);
    let start = g.code.iter().position(|i| matches!(i, Instr::GenStart)).expect("GenStart");
    // The default runs at the call, before the generator exists.
    let default_test = g.code.iter().position(|i| matches!(i, Instr::StrictEq { .. })).expect("default");
    assert!(default_test < start, "{:?}", g.code);
    // The `Yield` is followed by the jump over its return path.
    let y = g.code.iter().position(|i| matches!(i, Instr::Yield { .. })).expect("Yield");
    assert!(matches!(g.code[y + 1], Instr::Jmp { .. }), "{:?}", g.code);
}

#[test]
fn leaving_a_for_of_closes_its_iterator() {
    let p = compile("function f(xs) { for (const x of xs) { if (x) break; if (!x) return 1; continue; } }");
    let f = func(&p, "f");
    // break path, return path, and the catch-all that rethrows; `continue`
    // keeps it open.
    assert_eq!(count(f, |i| matches!(i, Instr::IterClose { .. })), 3, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::TryBegin { .. })), 1);
    // for-in needs no closing.
    let p = compile("function h(o) { for (const k in o) { if (k) break; } }");
    assert_eq!(count(func(&p, "h"), |i| matches!(i, Instr::IterClose { .. } | Instr::TryBegin { .. })), 0);
}

#[test]
fn classes_compile_constructors_and_field_initialisers() {
    let p = compile("class A { x = 1; constructor() {} }\nclass B extends A { y = 2; }\nclass C extends A {}");
    let a = func(&p, "A");
    assert!(a.is_constructor && !a.is_derived);
    assert!(matches!(a.code[0], Instr::InitFields));
    let b = find(&p.entry, "B").unwrap();
    assert!(b.is_constructor && b.is_derived && b.has_rest);
    assert!(b.code.iter().any(|i| matches!(i, Instr::SuperCallSpread { .. })));
    let entry = &p.entry;
    assert_eq!(count(entry, |i| matches!(i, Instr::SetFieldInit { .. })), 2);
    assert_eq!(count(entry, |i| matches!(i, Instr::NewClass { .. })), 3);
}

#[test]
fn select_compiles_operands_in_order() {
    let p = compile(
        "function f(a, b) { select { case const v = a.receive(): console.log(v); case b.send(1): break; case sleep(5): {} default: {} } }",
    );
    let f = func(&p, "f");
    assert_eq!(f.selects.len(), 1);
    let sd = &f.selects[0];
    assert_eq!(sd.cases.len(), 4);
    let sel = f.code.iter().position(|i| matches!(i, Instr::Select { .. })).unwrap();
    for c in &sd.cases {
        let t = match *c {
            crate::bytecode::SelectCaseDesc::Receive { target, .. }
            | crate::bytecode::SelectCaseDesc::Send { target, .. }
            | crate::bytecode::SelectCaseDesc::Timeout { target, .. }
            | crate::bytecode::SelectCaseDesc::Default { target } => target,
        };
        assert!(t > 0 && (sel as i64 + 1 + t as i64) < f.code.len() as i64);
    }
}

#[test]
fn spawn_prefix_compiles_to_spawn() {
    let p = compile("async function w(x) { return x; } const t = async w(1); const u = async obj.m(2); const obj = { m(x) { return x; } };");
    assert_eq!(count(&p.entry, |i| matches!(i, Instr::Spawn { .. })), 2);
    assert!(func(&p, "w").is_async);
}

// ---- modules ----------------------------------------------------------------------

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("raya-compiler-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn modules_load_once_in_dependency_order() {
    let d = temp_dir("order");
    std::fs::write(
        d.join("main.raya"),
        "import { a } from './a';\nimport { b } from './b.raya';\nimport * as ns from './a';\nconsole.log(a, b, ns.a);",
    )
    .unwrap();
    std::fs::write(d.join("a.raya"), "import { b } from './b';\nexport const a = b + 1;").unwrap();
    std::fs::write(d.join("b.raya"), "export const b = 1;").unwrap();
    let p = compile_file(&d.join("main.raya")).unwrap();
    // prelude, main, a, b: each loaded once.
    assert_eq!(p.sources.len(), 4);
    // The entry calls the prelude, b, then a.
    let files: Vec<String> =
        p.entry.protos.iter().filter(|f| f.name.is_empty()).map(|f| p.sources.get(f.file).name.clone()).collect();
    assert_eq!(files.len(), 3);
    assert_eq!(files[0], "<prelude>");
    assert!(files[1].ends_with("b.raya") && files[2].ends_with("a.raya"), "{files:?}");
}

#[test]
fn import_cycle_is_an_error_naming_the_cycle() {
    let d = temp_dir("cycle");
    std::fs::write(d.join("a.raya"), "import { b } from './b';\nexport const a = 1;").unwrap();
    std::fs::write(d.join("b.raya"), "import { a } from './a.raya';\nexport const b = 2;").unwrap();
    let e = compile_file(&d.join("a.raya")).unwrap_err();
    assert_eq!(e.diagnostics.len(), 1, "{}", e.render());
    let m = &e.diagnostics[0].message;
    assert!(
        m.starts_with("import cycle: ")
            && m.contains("a.raya -> ")
            && m.contains("b.raya -> ")
            && m.ends_with("a.raya"),
        "{m}"
    );
}

#[test]
fn importing_a_missing_export_or_file_is_an_error() {
    let d = temp_dir("missing");
    std::fs::write(
        d.join("main.raya"),
        "import { x, nope } from './lib';\nimport { y } from './absent';\nconsole.log(x);",
    )
    .unwrap();
    std::fs::write(d.join("lib.raya"), "export const x = 1;").unwrap();
    let e = compile_file(&d.join("main.raya")).unwrap_err();
    let msgs: Vec<&str> = e.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs, vec!["module `./lib` has no export named `nope`", "cannot find module `./absent`"]);
}

#[test]
fn reexports_resolve_to_the_original_slots() {
    let d = temp_dir("reexport");
    std::fs::write(d.join("base.raya"), "export default 1;\nexport const a = 2;\nexport const b = 3;").unwrap();
    // `export *` leaves out `default`, and a name exported otherwise wins
    // over the star's.
    std::fs::write(
        d.join("mid.raya"),
        "export * from './base';\nexport { default as first } from './base';\nexport const b = 30;",
    )
    .unwrap();
    std::fs::write(d.join("main.raya"), "import { a, b, first } from './mid';\nconsole.log(a, b, first);").unwrap();
    compile_file(&d.join("main.raya")).unwrap_or_else(|e| panic!("{}", e.render()));
    std::fs::write(d.join("bad.raya"), "import x from './mid';\nconsole.log(x);").unwrap();
    let e = compile_file(&d.join("bad.raya")).unwrap_err();
    let msgs: Vec<&str> = e.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(msgs, vec!["module `./mid` has no default export"]);
}

#[test]
fn unreadable_entry_files_are_one_line_errors() {
    let d = temp_dir("unreadable");
    let e = compile_file(&d.join("nope.raya")).unwrap_err();
    assert_eq!(
        e.render(),
        format!("error: cannot read '{}': No such file or directory\n", d.join("nope.raya").display())
    );
    let e = compile_file(&d).unwrap_err();
    assert!(e.render().ends_with(": Is a directory\n") && e.render().lines().count() == 1);
    std::fs::write(d.join("bin.raya"), [0xffu8, 0xfe, 0x00]).unwrap();
    let e = compile_file(&d.join("bin.raya")).unwrap_err();
    assert!(e.render().contains("not valid UTF-8") && e.render().lines().count() == 1);
}

#[test]
fn prelude_names_are_private() {
    let e = errors("console.log(__mergeSort);");
    assert_eq!(e, vec!["cannot find name `__mergeSort`"]);
    // A user global may reuse a prelude name.
    compile("function map() { return 1; } map();");
}

// ---- limits ----------------------------------------------------------------------

#[test]
fn too_many_constants_is_an_error() {
    let mut src = String::from("function big() { return [");
    for i in 0..70_000 {
        src.push_str(&format!("'s{i}',"));
    }
    src.push_str("]; }");
    let e = errors(&src);
    assert_eq!(e, vec!["function too large: it has more than 65,535 constants"]);
}

#[test]
fn too_many_registers_is_an_error() {
    let mut src = String::from("function big() {\n");
    for i in 0..66_000 {
        src.push_str(&format!("let v{i} = {i};\n"));
    }
    src.push('}');
    let e = errors(&src);
    assert_eq!(e, vec!["function too large: it needs more than 65,535 registers"]);
}

// ---- disassembler ------------------------------------------------------------------

#[test]
fn disassembly_lists_every_function_with_lines() {
    let p = compile("function add(a, b) {\n  return a + b;\n}\nconsole.log(add(1, 2));\n");
    let text = crate::bytecode::disasm::disassemble(&p);
    assert!(text.starts_with("function 0 <main> (test.raya:1:1)\n"), "{text}");
    // The program's own functions first, then the prelude.
    assert!(text.contains("\nfunction 1 add (test.raya:1:1)\n"), "{text}");
    assert!(text.contains("\nfunction 2 <module> (<prelude>:1:1)\n"), "{text}");
    let add = text.split("\n\n").find(|s| s.contains(" add (test.raya:1:1)")).expect("add listed");
    let lines: Vec<&str> = add.lines().collect();
    assert_eq!(lines[1].trim(), "2 params, 4 registers, 0 constants, 0 upvalues, 0 functions, 3 instructions");
    assert!(
        lines[2].contains("[2:12]")
            && lines[2].contains("Add")
            && lines[2].contains("r3, r1, r2")
            && lines[2].ends_with("; return a + b;"),
        "{}",
        lines[2]
    );
    assert!(lines[3].contains("Return") && lines[3].contains("r3") && !lines[3].contains(';'));
    assert!(lines[4].contains("ReturnUndef") && lines[4].ends_with("; }"));
    let main = text.split("\n\n").next().unwrap();
    assert!(main.contains("GetGlobal") && main.contains("g0 (console)"), "{main}");
    assert!(main.contains("CallMethod") && main.contains("k0 (\"log\")"), "{main}");
}

#[test]
fn disassembly_numbers_closures_consistently() {
    let p = compile("const f = () => 1;\nconst g = () => f();");
    let text = crate::bytecode::disasm::disassemble(&p);
    assert!(text.contains("Closure           r1, function 1 (f)"), "{text}");
    assert!(text.contains("\nfunction 1 f (test.raya:1:11) [arrow]\n"), "{text}");
    assert!(text.contains("Closure           r1, function 2 (g)"), "{text}");
}

#[test]
fn disassembly_shows_jump_targets_as_indices() {
    let p = compile("function f(n) { let i = 0; while (i < n) { i++; } return i; }");
    let text = crate::bytecode::disasm::disassemble(&p);
    let f = text.split("\n\n").find(|s| s.contains(" f (test.raya")).unwrap();
    assert!(f.contains("1  [1:37]  JmpIfNotLt        r2, r1, -> 4"), "{f}");
    assert!(f.contains("3  [1:37]  JmpIfLt           r2, r1, -> 2"), "{f}");
}

// ---- positions and optimisations ----------------------------------------------------

fn pos_of(p: &Program, f: &FuncProto, pred: impl Fn(&Instr) -> bool) -> (u32, u32) {
    let at = f.code.iter().position(pred).expect("instruction");
    p.sources.line_col(f.file, f.spans[at])
}

#[test]
fn error_positions_follow_v8() {
    let p = compile("function f(o, a) {\n  o.p.q = 1;\n  const v = a[0];\n  return (a) * 2;\n}");
    let f = func(&p, "f");
    // Property read at the name, store at `=`, index at `[`, binary at the operator.
    assert_eq!(pos_of(&p, f, |i| matches!(i, Instr::GetProp { .. })), (2, 5));
    assert_eq!(pos_of(&p, f, |i| matches!(i, Instr::SetProp { .. })), (2, 9));
    assert_eq!(pos_of(&p, f, |i| matches!(i, Instr::GetIndex { .. })), (3, 14));
    assert_eq!(pos_of(&p, f, |i| matches!(i, Instr::MulI { .. })), (4, 14));
}

#[test]
fn consecutive_moves_join_as_one_move2() {
    // A call's arguments read from locals: two `Move`s become one `Move2`.
    let p = compile("function f(g, a, b) { return g(a, b); }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::Move2 { src: 2, src2: 3, .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::Move { .. })), 0, "{:?}", f.code);
    // The loop's first `Move` is the back edge's target: it does not join
    // the `Move`s before the loop (the jump would run them again), only the
    // one after it.
    let p =
        compile("function f(a, b, c) { let x = a; let y = b; do { y = x; x = c; c = y; } while (y !== 3); return x; }");
    let f = func(&p, "f");
    let (at, off) = f
        .code
        .iter()
        .enumerate()
        .find_map(|(at, i)| match *i {
            Instr::JmpIfTrue { off, .. } if off < 0 => Some((at, off)),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no back edge: {:?}", f.code));
    let top = (at as i64 + 1 + off as i64) as usize;
    assert!(matches!(f.code[top - 1], Instr::Move2 { dst: 4, src: 1, dst2: 5, src2: 2 }), "{:?}", f.code);
    assert!(matches!(f.code[top], Instr::Move2 { dst: 5, src: 4, dst2: 4, src2: 3 }), "{:?}", f.code);
}

#[test]
fn small_integer_right_operands_are_immediates() {
    let p = compile("function f(x, y) { return [x * 2, x % 3, x === 0, x !== -1, x * -0, x % 40000, y * x]; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::MulI { imm: 2, .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::ModI { imm: 3, .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::StrictEqI { imm: 0, ne: false, .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::StrictEqI { imm: -1, ne: true, .. })), 1, "{:?}", f.code);
    // `-0` (whose product differs from 0's), constants past i16 and two
    // registers keep the general forms.
    assert_eq!(count(f, |i| matches!(i, Instr::Mul { .. })), 2, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::Mod { .. })), 1, "{:?}", f.code);
}

#[test]
fn literal_constants_are_inlined() {
    let p = compile("const N = 10;\nconst S = 'x';\nfunction f() { return N + S.length; }");
    let f = func(&p, "f");
    assert_eq!(count(f, |i| matches!(i, Instr::GetGlobal { .. })), 0, "{:?}", f.code);
    assert!(f.code.iter().any(|i| matches!(i, Instr::LoadInt { v: 10, .. })));
}

#[test]
fn loop_constants_are_loaded_once_before_the_loop() {
    // (Constants past `i16`: smaller ones are immediate operands.)
    let p = compile(
        "function f(n) { let s = 0; for (let i = 0; i < n; i++) { s = (s + i * 40000) % 1000003; } return s; }",
    );
    let f = func(&p, "f");
    let top = f.code.iter().position(|i| matches!(i, Instr::JmpIfNotLt { .. })).unwrap();
    let body = &f.code[top..back_edge(f)];
    assert!(!body.iter().any(|i| matches!(i, Instr::LoadInt { .. } | Instr::LoadK { .. })), "{body:?}");
    assert_eq!(count(f, |i| matches!(i, Instr::LoadInt { v: 40000, .. } | Instr::LoadInt { v: 1000003, .. })), 2);
}

/// A chain nests the tree one level per link: up to the nesting limit it
/// compiles (on the compiler's ordinary stack), past it it is the nesting
/// error, never a stack overflow.
#[test]
fn long_chains_compile_up_to_the_nesting_limit() {
    compile(&format!("const x = {}1;", "1 + ".repeat(990)));
    compile(&format!("const a: any = {{}};\nconst x = a{};", "?.b".repeat(990)));
    for src in [
        format!("const x = {}1;", "1 + ".repeat(50_000)),
        format!("const a: any = {{}};\nconst x = a{};", ".b".repeat(50_000)),
        format!("const f: any = 1;\nconst x = f{};", "()".repeat(50_000)),
    ] {
        let errs = errors(&src);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains("code is nested too deeply"), "{errs:?}");
    }
}

#[test]
fn plus_small_integer_is_addi_with_plus_meaning() {
    let p = compile("function f(x) { let y = x + 1; y += 2; const o = { n: 0 }; o.n += 3; return y - 4 + (x - 5); }");
    let f = func(&p, "f");
    // `x + 1` and `y += 2` (and the written-out form after `AddPropI` for
    // `o.n += 3`) are `AddI` with `+`'s meaning; `- 4` and `- 5` are the
    // numbers-only form. No constant is loaded for any of them.
    let plus: Vec<i16> = f.code.iter().filter(|i| matches!(i, Instr::AddI { plus: true, .. })).map(imm_of).collect();
    let minus: Vec<i16> = f.code.iter().filter(|i| matches!(i, Instr::AddI { plus: false, .. })).map(imm_of).collect();
    assert_eq!(plus, [1, 2, 3], "{:?}", f.code);
    assert_eq!(minus, [-4, -5], "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::AddPropI { imm: 3, .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::LoadInt { v: 1..=5, .. })), 0, "{:?}", f.code);
}

#[test]
fn increments_and_large_constants_keep_their_forms() {
    let p = compile("function f(x) { let i = 0; i++; i--; const o = { n: 0 }; o.n++; return x + 40000; }");
    let f = func(&p, "f");
    // `++`/`--` (also after `AddPropI`) are numbers-only; a constant too
    // large for the immediate is an `Add`.
    assert_eq!(count(f, |i| matches!(i, Instr::AddI { plus: true, .. })), 0, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::AddI { plus: false, .. })), 3, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::Add { .. })), 1, "{:?}", f.code);
}

fn imm_of(i: &Instr) -> i16 {
    match i {
        Instr::AddI { imm, .. } => *imm,
        _ => unreachable!(),
    }
}

#[test]
fn a_condition_against_a_small_integer_takes_it_as_an_operand() {
    let p = compile(
        "function f(n, x) { if (n < 2) return 0; if (n <= -3) return 1; if (n > 0) return 2; \
         if (x >= 32767) return 3; if (x < 32768) return 4; if (x < 0.5) return 5; return 6; }",
    );
    let f = func(&p, "f");
    assert!(matches!(f.code[0], Instr::JmpIfNotLtI { a: 1, imm: 2, .. }), "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNotLeI { imm: -3, .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNotGtI { imm: 0, .. })), 1);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNotGeI { imm: 32767, .. })), 1);
    // Past the 16-bit range, and fractions, the constant is in a register.
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNotLt { .. })), 2, "{:?}", f.code);
    // The compared constants (the returned ones are loaded, 0 to 6).
    assert_eq!(count(f, |i| matches!(i, Instr::LoadInt { v: -3 | 32767, .. })), 0, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::LoadInt { v: 32768, .. })), 1, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::LoadK { .. })), 1, "{:?}", f.code);
}

#[test]
fn a_condition_against_null_or_undefined_is_one_jump() {
    let p = compile(
        "function f(x, y) { if (x === null) return 0; if (undefined !== y) return 1; \
         while (x !== null) x = x.next; return x === null; }",
    );
    let f = func(&p, "f");
    assert!(matches!(f.code[0], Instr::JmpIfNil { src: 1, undef: false, eq: false, .. }), "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNil { src: 2, undef: true, eq: true, .. })), 1, "{:?}", f.code);
    // The loop's test, at its bottom, jumps back while `x` is not null.
    assert_eq!(count(f, |i| matches!(i, Instr::JmpIfNil { eq: false, off, .. } if *off < 0)), 1, "{:?}", f.code);
    // No constant is loaded for a test; the returned value is a comparison.
    assert_eq!(count(f, |i| matches!(i, Instr::LoadUndef { .. })), 0, "{:?}", f.code);
    assert_eq!(count(f, |i| matches!(i, Instr::StrictEq { .. })), 1, "{:?}", f.code);
}
