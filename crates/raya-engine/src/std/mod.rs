//! The built-in modules a program imports by name: `import { readTextFile }
//! from "std:fs"`.
//!
//! Each module is one entry of [`MODULES`]: its natives (exported under
//! their own names) and, where it needs callbacks into Raya, Raya source
//! whose exports become the module's (that source reaches the natives with
//! `import { .. } from "std:NAME/native"`, a path only built-in sources
//! may import). Adding a module is one file here plus one line in
//! [`MODULES`].
//!
//! # How an import is linked
//!
//! The compiler looks the name up in [`MODULES`] (an unknown name, or a
//! module whose [`Capability`] the host did not grant, is a compile error
//! at the import). The natives get hidden global slots, one per export,
//! recorded in [`crate::Program::std_modules`]; before the main task starts
//! the driver calls [`install`], which puts a native function in each of
//! those slots (and the namespace object of `import * as`). A module that
//! is not imported costs nothing, and one that was not granted is never
//! installed: nothing can reach its natives.

pub mod fs;
pub mod http;
pub mod io;
pub mod net;
pub mod process;
pub mod test;

use crate::vm::atom::Atom;
use crate::vm::object::{Body, Function, Mut, Native, NativeFn, ObjectData, PropMap};
use crate::vm::{Runtime, Value};

/// What a built-in module may touch; the embedder grants each one
/// ([`crate::VmBuilder::allow`]), the `raya` command grants all.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    /// Files and directories: `std:fs`.
    Fs,
    /// TCP sockets and HTTP: `std:net`, `std:http`.
    Net,
    /// Child processes: `std:process`.
    Process,
    /// The process's standard streams: the globals `stdin`, `stdout` and
    /// `stderr` (`console.log` is always there: a host captures or drops
    /// the process's output itself).
    Stdio,
}

/// Globals (not modules) that reach the outside world, and the capability
/// each needs: a program compiled without it cannot name them.
pub const GATED_GLOBALS: &[(&str, Capability)] = &[
    ("stdin", Capability::Stdio),
    ("stdout", Capability::Stdio),
    ("stderr", Capability::Stdio),
    // The working directory is a fact about the file system.
    ("cwd", Capability::Fs),
];

impl Capability {
    /// Every capability.
    pub const ALL: [Capability; 4] = [Capability::Fs, Capability::Net, Capability::Process, Capability::Stdio];

    /// The name used in messages (`fs`, `net`, `process`, `stdio`).
    pub fn name(self) -> &'static str {
        match self {
            Capability::Fs => "fs",
            Capability::Net => "net",
            Capability::Process => "process",
            Capability::Stdio => "stdio",
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// A set of [`Capability`]s.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities(u8);

impl Capabilities {
    /// No capability: only modules that need none may be imported.
    pub const NONE: Capabilities = Capabilities(0);

    /// Every capability (what `raya run` grants).
    pub fn all() -> Capabilities {
        Capability::ALL.iter().fold(Capabilities::NONE, |s, &c| s.with(c))
    }

    /// This set and `c`.
    pub fn with(self, c: Capability) -> Capabilities {
        Capabilities(self.0 | c.bit())
    }

    /// Whether `c` is in the set.
    pub fn has(self, c: Capability) -> bool {
        self.0 & c.bit() != 0
    }

    /// The capabilities in this set and not in `granted`.
    pub fn missing_from(self, granted: Capabilities) -> impl Iterator<Item = Capability> {
        Capability::ALL.into_iter().filter(move |&c| self.has(c) && !granted.has(c))
    }
}

impl std::fmt::Debug for Capabilities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(Capability::ALL.iter().filter(|c| self.has(**c)).map(|c| c.name())).finish()
    }
}

/// One built-in module.
pub struct StdModule {
    /// The name after `std:`.
    pub name: &'static str,
    /// What the host must grant for a program to import it.
    pub capability: Option<Capability>,
    /// Exported natives (with source: what the source may import from
    /// `std:NAME/native`), in global-slot order.
    pub natives: &'static [(&'static str, NativeFn)],
    /// Raya source whose exports are the module's, for modules that call
    /// back into Raya code (kept beside the module's Rust file,
    /// `include_str!`-ed).
    pub source: Option<&'static str>,
    /// Names of the module's host classes, importable for type annotations
    /// only (`import { Conn } from "std:net"` to write `conn: Conn`); a
    /// module with source declares its types there instead.
    pub types: &'static [&'static str],
}

/// Every built-in module.
pub static MODULES: &[&StdModule] = &[
    &fs::MODULE,
    &process::MODULE,
    &net::MODULE,
    &http::MODULE,
    &test::MODULE,
    #[cfg(test)]
    &tests::SELFTEST,
];

/// The module `std:NAME`.
pub fn find(name: &str) -> Option<&'static StdModule> {
    MODULES.iter().copied().find(|m| m.name == name)
}

/// A built-in module linked into a program: its natives live in the global
/// slots `first_slot..first_slot + natives.len()`.
#[derive(Clone, Debug)]
pub struct StdLink {
    pub name: &'static str,
    pub first_slot: u32,
    /// The slot of the natives' namespace object (`import * as fs` of a
    /// module without source), if some module asked for it.
    pub ns_slot: Option<u32>,
}

/// Fills the global slots of the built-in modules `links` names (see the
/// module docs). Runs once, before the main task starts.
pub fn install(rt: &mut Runtime, links: &[StdLink]) {
    for link in links {
        let Some(module) = find(link.name) else { continue };
        let mut ns = PropMap::new();
        let mut sorted: Vec<(&'static str, Value)> = Vec::new();
        for (i, &(name, f)) in module.natives.iter().enumerate() {
            let v = rt.heap.alloc(Body::Function(Function::Native(Native { name, f, data: Value::UNDEFINED })));
            rt.world.globals.set(link.first_slot as usize + i, v);
            sorted.push((name, v));
        }
        if let Some(slot) = link.ns_slot {
            // As the compiler builds the namespaces of Raya modules: names
            // in sorted order.
            sorted.sort_by_key(|&(n, _)| n);
            for (name, v) in sorted {
                ns.set(Atom::intern(name), v);
            }
            let obj =
                rt.heap.alloc(Body::Object(Mut::new(ObjectData { class: Value::UNDEFINED, props: ns, frozen: true })));
            rt.world.globals.set(slot as usize, obj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::{HostError, HostValue, Vm};
    use crate::vm::native::{arg, NativeCtx};
    use std::sync::{Arc, Mutex};

    /// A module with Raya source over a native, as modules that take
    /// callbacks are built.
    pub static SELFTEST: StdModule = StdModule {
        name: "selftest",
        capability: None,
        natives: &[("twice", twice)],
        types: &[],
        source: Some(
            r#"
            import { twice } from "std:selftest/native";
            export function quad(x: number): number { return twice(twice(x)); }
            export function applyTwice(f: (x: number) => number, x: number): number { return f(f(x)); }
            "#,
        ),
    };

    fn twice(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
        Ok(Value::number(arg(args, 0).as_number() * 2.0))
    }

    fn run(src: &str) -> Result<Vec<HostValue>, HostError> {
        let vm = Vm::builder().workers(1).build();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        vm.register_raw_fn("report", move |args: &[HostValue]| {
            s.lock().unwrap().push(args[0].clone());
            Ok(HostValue::Undefined)
        });
        let program = vm.compile_source("selftest.raya", src)?;
        vm.execute(&program)?;
        let out = seen.lock().unwrap().clone();
        Ok(out)
    }

    #[test]
    fn a_module_with_source_exports_what_its_source_exports() {
        let out = run(r#"
            import { quad, applyTwice } from "std:selftest";
            import * as st from "std:selftest";
            report(quad(3));
            report(applyTwice((x: number) => x + 1, 0));
            report(st.quad(1));
            "#)
        .expect("runs");
        assert_eq!(out, vec![HostValue::Number(12.0), HostValue::Number(2.0), HostValue::Number(4.0)]);
    }

    #[test]
    fn the_natives_behind_a_source_are_not_exports() {
        let err = run(r#"import { twice } from "std:selftest"; report(twice(1));"#).expect_err("no such export");
        let HostError::Compile(e) = err else { panic!("a compile error: {err:?}") };
        let text = e.render();
        assert!(text.contains("module `std:selftest` has no export named `twice`"), "{text}");
        let err = run(r#"import { twice } from "std:selftest/native";"#).expect_err("private");
        assert!(err.to_string().contains("unknown built-in module `std:selftest/native`"), "{err}");
    }

    #[test]
    fn fetch_is_a_global_only_where_net_is_granted() {
        let err = run(r#"report(typeof fetch);"#).expect_err("not granted");
        let HostError::Compile(e) = err else { panic!("a compile error: {err:?}") };
        assert!(e.render().contains("cannot find name `fetch`"), "{}", e.render());
        let vm = Vm::builder().workers(1).allow(Capability::Net).build();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        vm.register_raw_fn("report", move |args: &[HostValue]| {
            s.lock().unwrap().push(args[0].clone());
            Ok(HostValue::Undefined)
        });
        let program = vm.compile_source("g.raya", r#"report(typeof fetch);"#).expect("compiles");
        vm.execute(&program).expect("runs");
        assert_eq!(*seen.lock().unwrap(), vec![HostValue::String("function".into())]);
    }

    #[test]
    fn standard_streams_and_cwd_need_their_capabilities() {
        for (src, cap) in [
            ("stdout.write('x');", "stdio"),
            ("report(stdin.readLine());", "stdio"),
            ("stderr.write('x');", "stdio"),
            ("report(cwd());", "fs"),
        ] {
            let err = run(src).expect_err("not granted");
            let HostError::Compile(e) = err else { panic!("a compile error: {err:?}") };
            let text = e.render();
            let name = src.split(['.', '(']).nth(if src.starts_with("report") { 1 } else { 0 }).unwrap();
            let want = format!("`{name}` is not available: the host did not grant the `{cap}` capability");
            assert!(text.contains(&want), "{text}");
        }
        // A local of the same name is just a local.
        let out = run("const stdout = 5; report(stdout);").expect("runs");
        assert_eq!(out, vec![HostValue::Number(5.0)]);
        // Granted: the names exist.
        let vm = Vm::builder().workers(1).allow(Capability::Stdio).allow(Capability::Fs).build();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        vm.register_raw_fn("report", move |args: &[HostValue]| {
            s.lock().unwrap().push(args[0].clone());
            Ok(HostValue::Undefined)
        });
        let program =
            vm.compile_source("g.raya", "report(typeof stdout.write); report(cwd().length > 0);").expect("compiles");
        assert!(program.needs.has(Capability::Stdio) && program.needs.has(Capability::Fs));
        vm.execute(&program).expect("runs");
        assert_eq!(*seen.lock().unwrap(), vec![HostValue::String("function".into()), HostValue::Bool(true)]);
        // A program compiled where stdio was granted is refused by a VM
        // that does not grant it, before anything runs.
        let strict = Vm::builder().workers(1).allow(Capability::Fs).build();
        let err = strict.execute(&program).expect_err("refused");
        assert!(matches!(&err, HostError::Capability(m) if m.contains("`stdio` capability")), "{err:?}");
    }

    #[test]
    fn capabilities_sets() {
        let none = Capabilities::NONE;
        assert!(!none.has(Capability::Fs));
        let fs = none.with(Capability::Fs);
        assert!(fs.has(Capability::Fs) && !fs.has(Capability::Net));
        let all = Capabilities::all();
        assert!(Capability::ALL.iter().all(|&c| all.has(c)));
        assert_eq!(format!("{fs:?}"), r#"{"fs"}"#);
    }
}
