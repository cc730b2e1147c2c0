//! Raya, Lua 5.4 (mlua) and QuickJS (rquickjs) embedded side by side:
//! a Rust→script call of a small function (Raya's by name, and through a
//! `Function` handle resolved once, as mlua's and rquickjs's are), a script→Rust call of a typed
//! host function (per call, from a loop of 1,000), `eval("1 + 1")` on a
//! warm engine, and creating an engine and running hello world.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use raya_engine::{Stream, Vm};

const LOOP: u64 = 1000;

fn raya_vm() -> Vm {
    let vm = Vm::builder().workers(1).output(|_: Stream, _: &str| {}).build();
    vm.register_fn("hostAdd", |a: f64, b: f64| Ok::<_, String>(a + b));
    vm
}

fn rust_to_script(c: &mut Criterion) {
    let mut g = c.benchmark_group("rust_to_script_call");
    let vm = raya_vm();
    let p = vm.compile_source("b.raya", "export function add(a: number, b: number): number { return a + b; }").unwrap();
    let inst = vm.load(&p).unwrap();
    g.bench_function("raya", |b| b.iter(|| inst.call::<f64>("add", (1.0, 2.0)).unwrap()));
    // Resolved once and kept, as the mlua and rquickjs rows keep theirs.
    let add = inst.function("add").unwrap();
    g.bench_function("raya_function", |b| b.iter(|| add.call::<f64>((1.0, 2.0)).unwrap()));

    let lua = mlua::Lua::new();
    lua.load("function add(a, b) return a + b end").exec().unwrap();
    let f: mlua::Function = lua.globals().get("add").unwrap();
    g.bench_function("mlua", |b| b.iter(|| f.call::<f64>((1.0, 2.0)).unwrap()));

    let rt = rquickjs::Runtime::new().unwrap();
    let ctx = rquickjs::Context::full(&rt).unwrap();
    ctx.with(|ctx| {
        ctx.eval::<(), _>("function add(a, b) { return a + b; }").unwrap();
        let f: rquickjs::Function = ctx.globals().get("add").unwrap();
        g.bench_function("rquickjs", |b| b.iter(|| f.call::<_, f64>((1.0, 2.0)).unwrap()));
    });
    g.finish();
}

fn script_to_rust(c: &mut Criterion) {
    let mut g = c.benchmark_group("script_to_rust_call");
    g.throughput(Throughput::Elements(LOOP));
    let vm = raya_vm();
    let p = vm
        .compile_source(
            "b.raya",
            "export function run(n: number): number { let s = 0; for (let i = 0; i < n; i++) s = hostAdd(s, i); return s; }",
        )
        .unwrap();
    let inst = vm.load(&p).unwrap();
    g.bench_function("raya", |b| b.iter(|| inst.call::<f64>("run", (LOOP as f64,)).unwrap()));

    let lua = mlua::Lua::new();
    let add = lua.create_function(|_, (a, b): (f64, f64)| Ok(a + b)).unwrap();
    lua.globals().set("hostAdd", add).unwrap();
    lua.load("function run(n) local s = 0 for i = 0, n - 1 do s = hostAdd(s, i) end return s end").exec().unwrap();
    let f: mlua::Function = lua.globals().get("run").unwrap();
    g.bench_function("mlua", |b| b.iter(|| f.call::<f64>(LOOP as f64).unwrap()));

    let rt = rquickjs::Runtime::new().unwrap();
    let ctx = rquickjs::Context::full(&rt).unwrap();
    ctx.with(|ctx| {
        ctx.globals().set("hostAdd", rquickjs::Function::new(ctx.clone(), |a: f64, b: f64| a + b).unwrap()).unwrap();
        ctx.eval::<(), _>("function run(n) { let s = 0; for (let i = 0; i < n; i++) s = hostAdd(s, i); return s; }")
            .unwrap();
        let f: rquickjs::Function = ctx.globals().get("run").unwrap();
        g.bench_function("rquickjs", |b| b.iter(|| f.call::<_, f64>((LOOP as f64,)).unwrap()));
    });
    g.finish();
}

fn warm_eval(c: &mut Criterion) {
    let mut g = c.benchmark_group("eval_1_plus_1");
    let vm = raya_vm();
    let inst = vm.load(&vm.compile_source("b.raya", "export const x = 1;").unwrap()).unwrap();
    g.bench_function("raya", |b| b.iter(|| inst.eval::<f64>("1 + 1").unwrap()));

    let lua = mlua::Lua::new();
    g.bench_function("mlua", |b| b.iter(|| lua.load("return 1 + 1").eval::<f64>().unwrap()));

    let rt = rquickjs::Runtime::new().unwrap();
    let ctx = rquickjs::Context::full(&rt).unwrap();
    ctx.with(|ctx| g.bench_function("rquickjs", |b| b.iter(|| ctx.eval::<f64, _>("1 + 1").unwrap())));
    g.finish();
}

fn create_and_run(c: &mut Criterion) {
    let mut g = c.benchmark_group("create_and_hello");
    g.bench_function(BenchmarkId::new("raya", "execute"), |b| {
        b.iter(|| {
            let vm = Vm::builder().workers(1).output(|_: Stream, _: &str| {}).build();
            let p = vm.compile_source("hello.raya", "console.log(\"hello, world\");").unwrap();
            vm.execute(&p).unwrap()
        })
    });
    g.bench_function("mlua", |b| {
        b.iter(|| {
            let lua = mlua::Lua::new();
            lua.globals().set("print", lua.create_function(|_, _s: String| Ok(())).unwrap()).unwrap();
            lua.load("print('hello, world')").exec().unwrap();
        })
    });
    g.bench_function("rquickjs", |b| {
        b.iter(|| {
            let rt = rquickjs::Runtime::new().unwrap();
            let ctx = rquickjs::Context::full(&rt).unwrap();
            ctx.with(|ctx| {
                ctx.globals().set("print", rquickjs::Function::new(ctx.clone(), |_s: String| {}).unwrap()).unwrap();
                ctx.eval::<(), _>("print('hello, world')").unwrap();
            });
        })
    });
    g.finish();
}

criterion_group!(benches, rust_to_script, script_to_rust, warm_eval, create_and_run);
criterion_main!(benches);
