//! The prelude compiled ahead of time.
//!
//! Compiling `stdlib/prelude.raya` at start-up ran most of the compiler
//! (parser on a helper thread, resolver, code generator) for every process:
//! half of hello world's memory was the code and the syntax trees of that
//! one compilation (design/memory.md, "Idle memory"). `prelude_image.rs`
//! holds its result as static data, one [`Proto`] per prototype (read-only
//! pages of the binary, paged in only when read), from which [`load`]
//! builds the prototypes. It is used only when `build.rs` finds it current (its
//! fingerprint is that of the sources being built); otherwise the prelude
//! is compiled as before.
//!
//! The image is written by this module's test `the_prelude_image_is_current`,
//! which fails, and rewrites it, when it is stale: after a change to the
//! prelude or the compiler, `cargo test -p raya-engine --lib prelude_image`
//! twice (the second run checks the image it compiled in) and commit the
//! file.

use super::CompiledPrelude;

/// One prototype of the image: [`FuncProto`]'s fields as static data,
/// nested prototypes by their index in [`prelude_image::PROTOS`].
///
/// [`FuncProto`]: crate::bytecode::FuncProto
/// [`prelude_image::PROTOS`]: super::prelude_image
#[allow(dead_code)] // Read only when an image is compiled in.
pub(super) struct Proto {
    pub name: &'static str,
    pub arity: u16,
    pub length: u16,
    pub has_rest: bool,
    pub is_async: bool,
    pub is_arrow: bool,
    pub is_generator: bool,
    pub is_constructor: bool,
    pub is_derived: bool,
    pub num_regs: u16,
    pub code: &'static [crate::bytecode::Instr],
    pub spans: &'static [u32],
    pub consts: &'static [K],
    pub protos: &'static [u32],
    pub captures: &'static [crate::bytecode::Capture],
    pub selects: &'static [Select],
    pub file: crate::syntax::diagnostic::FileId,
    pub span_start: u32,
}

/// A [`Constant`](crate::bytecode::Constant) as static data.
#[allow(dead_code)]
pub(super) enum K {
    /// A number, by its bits.
    N(u64),
    S(&'static str),
    P(&'static str),
    T(&'static [Option<&'static str>], &'static [&'static str]),
}

/// A [`SelectDesc`](crate::bytecode::SelectDesc) as static data.
#[allow(dead_code)]
pub(super) struct Select {
    pub cases: &'static [crate::bytecode::SelectCaseDesc],
    pub value_reg: crate::bytecode::Reg,
}

/// The prelude from its image, if this build has a current one.
pub(super) fn load() -> Option<CompiledPrelude> {
    #[cfg(prelude_image)]
    {
        use super::prelude_image::{GLOBALS, PROTOS, USED};
        use crate::syntax::diagnostic::SourceFile;
        let text = super::PRELUDE.to_string();
        let lines = crate::syntax::span::LineIndex::new(&text);
        let file = std::sync::Arc::new(SourceFile { name: "<prelude>".into(), text, lines });
        let used = USED.iter().fold(crate::std::Capabilities::NONE, |s, &c| s.with(c));
        Some(CompiledPrelude {
            file,
            body: std::sync::Arc::new(build(&PROTOS, 0)),
            globals: GLOBALS.iter().map(|s| s.to_string()).collect(),
            used,
        })
    }
    #[cfg(not(prelude_image))]
    None
}

/// Prototype `i` of `protos`, with its nested ones.
#[cfg_attr(not(prelude_image), allow(dead_code))]
fn build(protos: &[Proto], i: usize) -> crate::bytecode::FuncProto {
    use crate::bytecode::{Constant, FuncProto, SelectDesc};
    let p = &protos[i];
    FuncProto {
        name: p.name.to_string(),
        arity: p.arity,
        length: p.length,
        has_rest: p.has_rest,
        is_async: p.is_async,
        is_arrow: p.is_arrow,
        is_generator: p.is_generator,
        is_constructor: p.is_constructor,
        is_derived: p.is_derived,
        num_regs: p.num_regs,
        code: p.code.to_vec(),
        spans: p.spans.to_vec(),
        consts: p
            .consts
            .iter()
            .map(|k| match k {
                K::N(bits) => Constant::Number(f64::from_bits(*bits)),
                K::S(s) => Constant::String(s.to_string()),
                K::P(s) => Constant::Private(s.to_string()),
                K::T(cooked, raw) => Constant::Template {
                    cooked: cooked.iter().map(|c| c.map(str::to_string)).collect(),
                    raw: raw.iter().map(|s| s.to_string()).collect(),
                },
            })
            .collect(),
        protos: p.protos.iter().map(|&c| std::sync::Arc::new(build(protos, c as usize))).collect(),
        captures: p.captures.to_vec(),
        selects: p.selects.iter().map(|s| SelectDesc { cases: s.cases.to_vec(), value_reg: s.value_reg }).collect(),
        file: p.file,
        span_start: p.span_start,
    }
}

/// The text of `prelude_image.rs` for `p` compiled by sources of
/// fingerprint `fingerprint`.
#[cfg(test)]
fn render(p: &CompiledPrelude, fingerprint: &str) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "// prelude image {fingerprint}");
    out.push_str(
        "// @generated by `compiler::image::tests::the_prelude_image_is_current` from\n\
         // stdlib/prelude.raya; do not edit (see compiler/image.rs).\n\
         #![allow(unused_imports, clippy::all)]\n\
         use super::image::{Proto, Select, K};\n\
         use crate::bytecode::MethodKind::*;\n\
         use crate::bytecode::{Capture, Instr as I, SelectCaseDesc as S};\n\
         use crate::std::Capability;\n\n",
    );
    out.push_str("pub(super) static GLOBALS: &[&str] = &[\n");
    for g in &p.globals {
        let _ = writeln!(out, "    {g:?},");
    }
    out.push_str("];\n\n");
    out.push_str("pub(super) static USED: &[Capability] = &[");
    for c in crate::std::Capability::ALL.iter().filter(|c| p.used.has(**c)) {
        let _ = write!(out, "Capability::{c:?}, ");
    }
    out.push_str("];\n\n");
    let mut all = Vec::new();
    number(&p.body, &mut all);
    let _ = writeln!(out, "pub(super) static PROTOS: [Proto; {}] = [", all.len());
    let mut next = 1;
    for f in &all {
        proto(&mut out, f, &mut next);
    }
    out.push_str("];\n");
    out
}

/// `p` and its nested prototypes, breadth first: each one's children are
/// numbered in a row after all that came before them.
#[cfg(test)]
fn number<'a>(p: &'a crate::bytecode::FuncProto, all: &mut Vec<&'a crate::bytecode::FuncProto>) {
    all.push(p);
    let mut i = 0;
    while i < all.len() {
        let f = all[i];
        all.extend(f.protos.iter().map(|c| &**c));
        i += 1;
    }
}

/// Writes `p` as a [`Proto`], its children numbered from `*next`.
#[cfg(test)]
fn proto(out: &mut String, p: &crate::bytecode::FuncProto, next: &mut usize) {
    use crate::bytecode::{Capture, Constant, FuncProto, SelectCaseDesc};
    use std::fmt::Write;
    // Every field by name, so that a field added to `FuncProto` fails to
    // compile here rather than being left out of the image.
    let FuncProto {
        name,
        arity,
        length,
        has_rest,
        is_async,
        is_arrow,
        is_generator,
        is_constructor,
        is_derived,
        num_regs,
        code,
        spans,
        consts,
        protos,
        captures,
        selects,
        file,
        span_start,
    } = p;
    let _ = writeln!(out, "    Proto {{\n        name: {name:?},");
    let _ = writeln!(out, "        arity: {arity},\n        length: {length},\n        has_rest: {has_rest},");
    let _ = writeln!(
        out,
        "        is_async: {is_async},\n        is_arrow: {is_arrow},\n        is_generator: {is_generator},"
    );
    let _ = writeln!(out, "        is_constructor: {is_constructor},\n        is_derived: {is_derived},");
    let _ = writeln!(out, "        num_regs: {num_regs},");
    out.push_str("        code: &[\n");
    for i in code {
        let _ = writeln!(out, "            I::{i:?},");
    }
    out.push_str("        ],\n        spans: &[");
    for (k, s) in spans.iter().enumerate() {
        let _ = write!(out, "{}{s},", if k % 16 == 0 { "\n            " } else { " " });
    }
    out.push_str("\n        ],\n        consts: &[\n");
    for c in consts {
        let text = match c {
            // By its bits: exact for every number, NaN and infinities too.
            Constant::Number(x) => format!("K::N({:#x})", x.to_bits()),
            Constant::String(s) => format!("K::S({s:?})"),
            Constant::Private(s) => format!("K::P({s:?})"),
            Constant::Template { cooked, raw } => {
                let cooked: Vec<String> =
                    cooked.iter().map(|c| c.as_ref().map_or("None".into(), |s| format!("Some({s:?})"))).collect();
                let raw: Vec<String> = raw.iter().map(|s| format!("{s:?}")).collect();
                format!("K::T(&[{}], &[{}])", cooked.join(", "), raw.join(", "))
            }
        };
        let _ = writeln!(out, "            {text},");
    }
    out.push_str("        ],\n        protos: &[");
    for _ in protos {
        let _ = write!(out, "{}, ", *next);
        *next += 1;
    }
    out.push_str("],\n        captures: &[");
    for c in captures {
        let _ = match c {
            Capture::Local(r) => write!(out, "Capture::Local({r}), "),
            Capture::Upval(u) => write!(out, "Capture::Upval({u}), "),
        };
    }
    out.push_str("],\n        selects: &[");
    for s in selects {
        let cases: Vec<String> = s
            .cases
            .iter()
            .map(|c| match c {
                SelectCaseDesc::Receive { operand, target } => {
                    format!("S::Receive {{ operand: {operand}, target: {target} }}")
                }
                SelectCaseDesc::Send { operand, target } => {
                    format!("S::Send {{ operand: {operand}, target: {target} }}")
                }
                SelectCaseDesc::Timeout { operand, target } => {
                    format!("S::Timeout {{ operand: {operand}, target: {target} }}")
                }
                SelectCaseDesc::Default { target } => format!("S::Default {{ target: {target} }}"),
            })
            .collect();
        let _ = write!(out, "Select {{ cases: &[{}], value_reg: {} }}, ", cases.join(", "), s.value_reg);
    }
    let _ = writeln!(out, "],\n        file: {file},\n        span_start: {span_start},\n    }},");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image_path() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compiler/prelude_image.rs")
    }

    /// The image on disk is what compiling the prelude with this build's
    /// sources gives. When it is not, the test writes the new image and
    /// fails: rebuilding then compiles it in (`build.rs`).
    #[test]
    fn the_prelude_image_is_current() {
        let fresh = render(&super::super::compile_prelude(), env!("RAYA_PRELUDE_FINGERPRINT"));
        let on_disk = std::fs::read_to_string(image_path()).unwrap_or_default();
        if on_disk != fresh {
            std::fs::write(image_path(), &fresh).expect("cannot write the prelude image");
            panic!(
                "the prelude image was stale (the prelude or the compiler changed) and has been rewritten: \
                 run the tests again and commit src/compiler/prelude_image.rs"
            );
        }
        assert!(load().is_some(), "the image is current, so build.rs must have compiled it in");
    }

    /// Loading the image gives the prototypes the compiler gives, field
    /// for field (their `Debug` forms cover every field).
    #[test]
    fn the_prelude_image_loads_as_the_compiler_compiles() {
        let Some(loaded) = load() else {
            // A stale image is not compiled in: the test above reports it.
            return;
        };
        let compiled = super::super::compile_prelude();
        assert_eq!(format!("{:?}", loaded.body), format!("{:?}", compiled.body));
        assert_eq!(loaded.globals, compiled.globals);
        assert_eq!(loaded.used, compiled.used);
        assert_eq!(loaded.file.text, compiled.file.text);
        assert_eq!(loaded.file.name, compiled.file.name);
    }
}
