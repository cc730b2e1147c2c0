//! Criterion benchmarks of the engine: front-end throughput (MB/s of
//! source lexed, parsed and compiled) and the interpreter's dispatch loop.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use raya_engine::compiler::compile_source;
use raya_engine::driver::run_program;

/// A realistic chunk of Raya source, repeated to make a large file.
const UNIT: &str = r#"
interface Point { x: number; y: number }
class Vec2 implements Point {
    x: number = 0;
    y: number = 0;
    constructor(x: number, y: number) { this.x = x; this.y = y; }
    add(o: Vec2): Vec2 { return new Vec2(this.x + o.x, this.y + o.y); }
    get length(): number { return Math.sqrt(this.x * this.x + this.y * this.y); }
}
function sumTo(n: number): number {
    let total = 0;
    for (let i = 0; i < n; i++) {
        if (i % 3 === 0 || i % 5 === 0) { total += i; }
    }
    return total;
}
const words: string[] = ["alpha", "beta", "gamma"].map((w) => w.toUpperCase());
const counts = new Map<string, number>();
for (const w of words) { counts.set(w, (counts.get(w) ?? 0) + 1); }
const { x, y: why = 2 } = { x: 1, y: undefined };
const label = `sum=${sumTo(10)} words=${words.join(",")} ${x + why}`;
"#;

fn front_end(c: &mut Criterion) {
    let src: String = (0..200)
        .map(|i| {
            UNIT.replace("Vec2", &format!("Vec2_{i}"))
                .replace("sumTo", &format!("sumTo{i}"))
                .replace("words", &format!("words{i}"))
                .replace("counts", &format!("counts{i}"))
                .replace("label", &format!("label{i}"))
                .replace("{ x, y: why", &format!("{{ x: x{i}, y: why{i}"))
                .replace("x + why", &format!("x{i} + why{i}"))
        })
        .collect();
    let mut g = c.benchmark_group("front_end");
    g.throughput(Throughput::Bytes(src.len() as u64));
    g.bench_function("compile", |b| {
        b.iter(|| compile_source("bench.raya", &src).map(|_| ()).map_err(|e| e.render()).unwrap())
    });
    g.finish();
}

fn dispatch(c: &mut Criterion) {
    let loop_src = "let s = 0; for (let i = 0; i < 1000000; i++) { s = (s + i * 3) % 1000003; }";
    let program = compile_source("loop.raya", loop_src).map_err(|e| e.render()).unwrap();
    c.bench_function("dispatch/loop_1m", |b| b.iter(|| run_program(&program, vec![])));
    let call_src = "function f(a: number, b: number): number { return a + b; } let s = 0; for (let i = 0; i < 300000; i++) { s = f(s, i); }";
    let program = compile_source("calls.raya", call_src).map_err(|e| e.render()).unwrap();
    c.bench_function("dispatch/calls_300k", |b| b.iter(|| run_program(&program, vec![])));
}

/// Task runtime: spawn + await, a context switch (two tasks yielding to each
/// other), an uncontended channel send/receive pair and lock/unlock.
fn tasks(c: &mut Criterion) {
    let cases = [
        ("tasks/spawn_await_10k", "async function f(i: number) { return i; } let s = 0; for (let i = 0; i < 10000; i++) s += await f(i);"),
        ("tasks/context_switch_10k", "async function y() { for (let i = 0; i < 5000; i++) Task.yield(); } await [y(), y()];"),
        ("sync/channel_pair_10k", "const ch = new Channel<number>(1); let s = 0; for (let i = 0; i < 10000; i++) { ch.send(i); s += ch.receive()!; }"),
        ("sync/lock_unlock_10k", "const m = new Mutex(); for (let i = 0; i < 10000; i++) { m.lock(); m.unlock(); }"),
    ];
    for (name, src) in cases {
        let program = compile_source("bench.raya", src).map_err(|e| e.render()).unwrap();
        c.bench_function(name, |b| b.iter(|| run_program(&program, vec![])));
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = front_end, dispatch, tasks
}
criterion_main!(benches);
