#!/usr/bin/env python3
"""Writes crates/raya-cli/startup.order: the functions `raya` runs to start.

The linker places these functions first and together in the binary
(build.rs passes the file to LLD as `--symbol-ordering-file`). The kernel
maps a program's code in 64 KiB windows around each page it touches
("fault-around"), so the ~1 MiB of functions hello world runs, scattered
over the 4 MiB of code, used to bring in nearly all of it as resident
memory; placed together, they bring in little more than themselves
(design/memory.md, "Idle memory").

Usage (after `cargo build --release -p raya-cli`; needs valgrind and nm):

    python3 crates/raya-cli/startup-order.py [target/release/raya]

Each start-up below (and small programs of everyday work and of tasks) runs under
callgrind; every executed address of the
binary is mapped to its function (nm), and the functions are written in
the order of the first start-up that ran them, then by address. Names
carry a hash that changes with the compiler version or the dependencies'
versions, not with code edits: a name that no longer exists is skipped by
the linker, so a stale file costs memory, never correctness. Regenerate it
after a toolchain update or when hello world's RSS grows
(`cargo build --release -p raya-cli && cargo test -p raya-cli --test
idle_memory -- --ignored`; not `cargo test --release`, which rebuilds
target/release/raya with the test's dependency features, other symbol
hashes and so none of this order).
"""

import bisect
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# A small program of what most programs do next (calls, a class and a
# subclass, arrays, a Map, strings, closures, JSON, a collection, loops
# that break, numbers printed with a fixed precision), so that the code of
# a program that does a little more than print also sits with the rest.
WORK = """\
function fib(n: number): number { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
class P {
  x: number;
  y: number;
  constructor(x: number, y: number) { this.x = x; this.y = y; }
  len(): number { return Math.sqrt(this.x * this.x + this.y * this.y); }
  move(dx: number): void { this.x += dx; this.y -= (dx * 0.5); }
}
class Q extends P {
  constructor(x: number) { super(x, 2 * x); }
  len(): number { return super.len() + 1; }
}
const PI = 3.141592653589793, DAYS = 365.24, SOLAR = 4 * PI * PI;
const q = new Q(SOLAR / DAYS);
let t = 0;
const a: number[] = [];
const m = new Map<string, number>();
for (let i = 0; i < 30000; i++) {
  const p = new P(i, i + 1);
  p.move(0.25);
  t += p.len();
  a.push(i);
  m.set(`k${i % 100}`, i);
  if (i > 20000 && (i & 1023) === 0) continue;
}
let j = 0;
while (true) { j += (j >> 1) + 1; if (j > 1000) break; }
const s = a.slice(0, 100).join(",").split(",").map((x) => parseInt(x)).filter((x) => x % 2 == 0);
const add = (k: number) => (v: number) => v + k;
console.log(fib(18) + Math.floor(t) + s.length + m.size + add(1)(2) + JSON.stringify({ a: [1, 2.5], b: "c" }).length + j + q.len());
console.log(t.toFixed(9), (t / 7).toString());
"""

# Tasks: a sleep, a spawned task, a channel, a promise.
TASKS = """\
async function produce(c: Channel<number>, n: number): Task<void> {
  for (let i = 0; i < n; i++) c.send(i);
  c.close();
}
const c = new Channel<number>(4);
const t = produce(c, 100);
let sum = 0;
for (const v of c) sum += v;
await t;
await sleep(1);
const p = new Promise<number>((resolve) => resolve(sum));
console.log(await p);
"""

# What every start goes through first; then what other common starts add.
RUNS = [
    ["run", "examples/hello.raya"],
    ["run", "--workers", "1", "examples/hello.raya"],
    ["-e", WORK],
    ["-e", TASKS],
    ["-e", "console.log(1 + 1)"],
    ["--version"],
]


def executed_addresses(binary, args):
    """Addresses of `binary`'s own instructions that ran under `args`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}", binary, *args],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
        )
        objects, ob, cur, seen = {}, None, 0, set()
        with open(out) as f:
            for line in f:
                if line.startswith(("ob=", "cob=")):
                    m = re.match(r"c?ob=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                    if m and m.group(2):
                        objects[m.group(1)] = m.group(2)
                    if line.startswith("ob="):
                        ob = objects.get(m.group(1)) if m else line[3:].strip()
                    continue
                if not line or line[0] not in "0123456789+-*":
                    continue
                tok = line.split()[0]
                # Positions are absolute (0x...) or relative to the last.
                if tok == "*":
                    pass
                elif tok[0] in "+-":
                    step = int(tok[1:], 0)
                    cur = cur + step if tok[0] == "+" else cur - step
                else:
                    cur = int(tok, 0)
                if ob and os.path.realpath(ob) == os.path.realpath(binary):
                    seen.add(cur)
        return seen


def functions(binary):
    """(start, size, name) of every function symbol, sorted by start."""
    out = subprocess.run(["nm", "-S", binary], capture_output=True, text=True, check=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[3]))
    syms.sort()
    return syms


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/raya"))
    syms = functions(binary)
    starts = [s[0] for s in syms]
    order, placed = [], set()
    for args in RUNS:
        hit = set()
        for a in executed_addresses(binary, args):
            i = bisect.bisect_right(starts, a) - 1
            if i >= 0 and syms[i][0] <= a < syms[i][0] + syms[i][1]:
                hit.add(i)
        for i in sorted(hit):
            if syms[i][2] not in placed:
                placed.add(syms[i][2])
                order.append(syms[i][2])
        print(f"{' '.join(args)[:40]}: {len(hit)} functions, {sum(syms[i][1] for i in hit) // 1024} KiB", file=sys.stderr)
    with open(os.path.join(HERE, "startup.order"), "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"wrote {len(order)} functions to startup.order", file=sys.stderr)


if __name__ == "__main__":
    main()
