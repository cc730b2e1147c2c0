//! The program generator: random, valid, deterministic, sequential Raya
//! programs whose behaviour LANGUAGE.md and JavaScript agree on.
//!
//! A program is a list of *chunks*, each a block `{ … }` that declares its
//! own names (unique across the program), so any chunk can be dropped and
//! the rest still runs: that is what the minimiser relies on. Inside a
//! chunk every expression is generated for a type (number, integer,
//! string, boolean, number array), so operators only ever see operands
//! LANGUAGE.md §3 allows (`<` on two numbers or two strings, arithmetic on
//! numbers, `+` with a string) and no run-time error is raised except the
//! ones the program throws and catches itself.
//!
//! What is avoided on purpose (deliberate deviations or output Node formats
//! differently): printing arrays and objects with `console.log` (Node
//! groups long arrays in columns, Raya prints one line: JSON.stringify is
//! used instead), `==` between different types, mixed-type comparisons,
//! uncaught errors (the formats of the report differ), comparators that
//! may return NaN (the order is then implementation-defined).

use std::fmt::Write;

/// xorshift64*: small, fast, and the same sequence everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 so that seeds 1, 2, 3 start far apart.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 33) % n as u64) as usize
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: usize, den: usize) -> bool {
        self.below(den) < num
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as usize) as i64
    }
}

/// One generated program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub chunks: Vec<Chunk>,
}

/// A block of statements; its top-level statements are kept apart so the
/// minimiser can drop them one by one.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub stmts: Vec<String>,
}

impl Program {
    pub fn render(&self) -> String {
        let mut out = String::new();
        for c in &self.chunks {
            out.push_str("{\n");
            for s in &c.stmts {
                for line in s.lines() {
                    let _ = writeln!(out, "  {line}");
                }
            }
            out.push_str("}\n");
        }
        out
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Num,
    /// A number known to be a small integer (safe as an array element, a
    /// `repeat` count, a sort key).
    Int,
    Str,
    Bool,
    Arr,
}

/// Generates one program from `seed`.
pub fn program(seed: u64) -> Program {
    let mut g = Gen { rng: Rng::new(seed), vars: Vec::new(), next: 0, funcs: Vec::new() };
    let n = 3 + g.rng.below(6);
    let chunks = (0..n).map(|_| g.chunk()).collect();
    Program { chunks }
}

struct Gen {
    rng: Rng,
    /// Variables in scope: name, type, whether it is a `let`.
    vars: Vec<(String, Ty, bool)>,
    next: usize,
    /// Functions in scope: name and arity (number → number).
    funcs: Vec<(String, usize)>,
}

const WORDS: &[&str] = &["a", "hello", "x,y,z", " pad ", "ÄΩ€", "", "abc123", "Raya", "a-b-a", "42", "3.5", "ünï"];
const FLOATS: &[&str] = &["0.5", "1.25", "0.1", "0.2", "3.75", "1e21", "2.5e-7", "123.456", "1e-7", "-0", "0.3"];

impl Gen {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn var_of(&mut self, ty: Ty) -> Option<String> {
        let ok: Vec<&String> = self
            .vars
            .iter()
            .filter(|(_, t, _)| *t == ty || (ty == Ty::Num && *t == Ty::Int))
            .map(|(n, _, _)| n)
            .collect();
        if ok.is_empty() {
            None
        } else {
            Some(ok[self.rng.below(ok.len())].clone())
        }
    }

    fn chunk(&mut self) -> Chunk {
        let saved_vars = self.vars.len();
        let saved_funcs = self.funcs.len();
        let mut stmts = Vec::new();
        let n = 3 + self.rng.below(8);
        for _ in 0..n {
            stmts.push(self.stmt(0));
        }
        self.vars.truncate(saved_vars);
        self.funcs.truncate(saved_funcs);
        Chunk { stmts }
    }

    fn stmt(&mut self, depth: usize) -> String {
        let k = if depth >= 2 { self.rng.below(4) } else { self.rng.below(22) };
        match k {
            0 | 1 => self.decl(),
            2 => self.print(),
            3 => self.assign(),
            4 => self.if_stmt(depth),
            5 => self.loop_stmt(depth),
            6 => self.function(),
            7 => self.closure(),
            8 => self.class(),
            9 => self.map_stmt(),
            10 => self.try_stmt(depth),
            11 => self.json_stmt(),
            12 => self.switch_stmt(),
            13 => self.array_stmt(),
            14 => self.string_stmt(),
            15 => self.generator_stmt(),
            16 => self.regex_stmt(),
            17 => self.labelled_stmt(),
            18 => self.accessor_stmt(),
            19 => self.date_stmt(),
            20 => self.destructure_stmt(),
            _ => self.print(),
        }
    }

    fn decl(&mut self) -> String {
        let ty = *self.rng.pick(&[Ty::Num, Ty::Int, Ty::Str, Ty::Bool, Ty::Arr]);
        let e = self.expr(ty, 2);
        let name = self.fresh("v");
        let is_let = self.rng.chance(2, 3);
        let ann = match ty {
            Ty::Num | Ty::Int => ": number",
            Ty::Str => ": string",
            Ty::Bool => ": boolean",
            Ty::Arr => ": number[]",
        };
        let ann = if self.rng.chance(1, 2) { ann } else { "" };
        self.vars.push((name.clone(), ty, is_let));
        format!("{} {name}{ann} = {e};", if is_let { "let" } else { "const" })
    }

    fn print(&mut self) -> String {
        let ty = *self.rng.pick(&[Ty::Num, Ty::Str, Ty::Bool, Ty::Arr, Ty::Int]);
        let e = self.expr(ty, 3);
        match ty {
            Ty::Arr => format!("console.log(JSON.stringify({e}));"),
            _ if self.rng.chance(1, 4) => {
                let e2 = self.expr(Ty::Num, 2);
                format!("console.log({e}, {e2});")
            }
            _ => format!("console.log({e});"),
        }
    }

    fn assign(&mut self) -> String {
        let lets: Vec<(String, Ty)> =
            self.vars.iter().filter(|(_, _, l)| *l).map(|(n, t, _)| (n.clone(), *t)).collect();
        if lets.is_empty() {
            return self.print();
        }
        let (name, ty) = lets[self.rng.below(lets.len())].clone();
        let e = self.expr(ty, 2);
        match ty {
            Ty::Num if self.rng.chance(1, 3) => format!("{name} += {e};"),
            Ty::Int if self.rng.chance(1, 3) => format!("{name}++;"),
            Ty::Str if self.rng.chance(1, 3) => format!("{name} += {e};"),
            Ty::Arr if self.rng.chance(1, 2) => {
                let x = self.expr(Ty::Int, 1);
                format!("{name}.push({x});")
            }
            _ => format!("{name} = {e};"),
        }
    }

    fn block(&mut self, depth: usize, n: usize) -> String {
        let saved = self.vars.len();
        // Functions declared in a block are scoped to it.
        let saved_funcs = self.funcs.len();
        let mut out = String::new();
        for _ in 0..n {
            for line in self.stmt(depth + 1).lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
        self.vars.truncate(saved);
        self.funcs.truncate(saved_funcs);
        out
    }

    fn if_stmt(&mut self, depth: usize) -> String {
        let c = self.expr(Ty::Bool, 2);
        let then = {
            let n = 1 + self.rng.below(2);
            self.block(depth, n)
        };
        if self.rng.chance(1, 2) {
            let els = {
                let n = 1 + self.rng.below(2);
                self.block(depth, n)
            };
            format!("if ({c}) {{\n{then}}} else {{\n{els}}}")
        } else {
            format!("if ({c}) {{\n{then}}}")
        }
    }

    fn loop_stmt(&mut self, depth: usize) -> String {
        let i = self.fresh("i");
        let acc = self.fresh("acc");
        let n = self.rng.int(0, 6);
        self.vars.push((i.clone(), Ty::Int, false));
        let body_e = self.expr(Ty::Num, 2);
        let body = {
            let n = self.rng.below(2);
            self.block(depth, n)
        };
        self.vars.retain(|(v, _, _)| *v != i);
        let kind = self.rng.below(3);
        let lp = match kind {
            0 => format!("let {acc} = 0;\nfor (let {i} = 0; {i} < {n}; {i}++) {{\n  {acc} = {acc} + {body_e};\n{body}}}"),
            1 => format!(
                "let {acc} = 0;\nlet {i} = {n};\nwhile ({i} > 0) {{\n  {i}--;\n  if ({i} === 2) continue;\n  {acc} = {acc} + {body_e};\n{body}}}"
            ),
            _ => {
                let arr = self.expr(Ty::Arr, 2);
                format!("let {acc} = 0;\nfor (const {i} of {arr}) {{\n  if ({i} > 50) break;\n  {acc} = {acc} + {body_e};\n{body}}}")
            }
        };
        self.vars.push((acc.clone(), Ty::Num, true));
        format!("{lp}\nconsole.log(\"{acc}\", {acc});")
    }

    fn function(&mut self) -> String {
        let name = self.fresh("f");
        let arity = 1 + self.rng.below(3);
        let params: Vec<String> = (0..arity).map(|k| format!("p{k}")).collect();
        let saved = std::mem::take(&mut self.vars);
        for p in &params {
            self.vars.push((p.clone(), Ty::Num, false));
        }
        let body = self.expr(Ty::Num, 3);
        let recursive = self.rng.chance(1, 4);
        self.vars = saved;
        let sig = params.iter().map(|p| format!("{p}: number")).collect::<Vec<_>>().join(", ");
        let text = if recursive {
            // A bounded recursion: the first parameter counts down.
            format!(
                "function {name}({sig}): number {{\n  if (p0 <= 0 || p0 > 20) return {body};\n  return {name}({}) + 1;\n}}",
                std::iter::once("p0 - 1".to_string()).chain(params[1..].iter().cloned()).collect::<Vec<_>>().join(", ")
            )
        } else {
            format!("function {name}({sig}): number {{\n  return {body};\n}}")
        };
        self.funcs.push((name.clone(), arity));
        let args: Vec<String> = (0..arity).map(|_| self.expr(Ty::Int, 1)).collect();
        format!("{text}\nconsole.log({name}({}));", args.join(", "))
    }

    fn closure(&mut self) -> String {
        let name = self.fresh("c");
        let k = self.rng.int(-3, 5);
        let init = self.rng.int(0, 10);
        let x1 = self.expr(Ty::Int, 1);
        let x2 = self.expr(Ty::Int, 1);
        let step = self.rng.pick(&["c + x * k", "c * 2 + x", "c - x + k", "(c + x) % 7"]).to_string();
        format!(
            "const {name} = ((k: number) => {{\n  let c = {init};\n  return (x: number): number => {{\n    c = {step};\n    return c;\n  }};\n}})({k});\nconsole.log({name}({x1}), {name}({x2}), {name}(1));"
        )
    }

    fn class(&mut self) -> String {
        let base = self.fresh("K");
        let e1 = self.expr(Ty::Int, 1);
        let e2 = self.expr(Ty::Int, 1);
        let s = self.expr(Ty::Str, 1);
        let mut out = format!(
            "class {base} {{\n  f: number;\n  tag: string = \"t\";\n  constructor(x: number) {{\n    this.f = x;\n  }}\n  get double(): number {{\n    return this.f * 2;\n  }}\n  add(y: number): number {{\n    this.f += y;\n    return this.f;\n  }}\n  toString(): string {{\n    return `{base}(${{this.f}})`;\n  }}\n  static make(n: number): {base} {{\n    return new {base}(n * 10);\n  }}\n}}\n"
        );
        let o = self.fresh("o");
        if self.rng.chance(1, 2) {
            let sub = self.fresh("S");
            let _ = write!(
                out,
                "class {sub} extends {base} {{\n  add(y: number): number {{\n    return super.add(y) * 2;\n  }}\n}}\nconst {o} = new {sub}({e1});\nconsole.log({o}.add({e2}), {o}.double, {o} instanceof {base}, `${{{o}}}`);\n"
            );
        } else {
            let _ = write!(
                out,
                "const {o} = {base}.make({e1});\nconsole.log({o}.add({e2}), {o}.double, String({o}), {o}.tag + {s});\nconsole.log({o});\n"
            );
        }
        out.trim_end().to_string()
    }

    fn map_stmt(&mut self) -> String {
        let m = self.fresh("m");
        let mut out = format!("const {m} = new Map<string, number>();\n");
        for _ in 0..1 + self.rng.below(4) {
            let k = self.rng.pick(&["\"a\"", "\"b\"", "\"zz\"", "\"10\"", "\"1\""]).to_string();
            let v = self.expr(Ty::Int, 1);
            let _ = writeln!(out, "{m}.set({k}, {v});");
        }
        if self.rng.chance(1, 2) {
            let _ = writeln!(out, "{m}.delete(\"a\");");
        }
        let _ = write!(
            out,
            "for (const [k, v] of {m}) {{\n  console.log(k, v);\n}}\nconsole.log({m}.size, {m}.get(\"b\"), {m}.has(\"zz\"), JSON.stringify([...{m}.keys()]));"
        );
        out
    }

    fn try_stmt(&mut self, depth: usize) -> String {
        let c = self.expr(Ty::Bool, 2);
        let n = self.expr(Ty::Int, 1);
        let body = {
            let n = self.rng.below(2);
            self.block(depth, n)
        };
        let custom = self.rng.chance(1, 2);
        let (decl, ctor, check) = if custom {
            let e = self.fresh("E");
            (
                format!("class {e} extends Error {{\n  code: number;\n  constructor(m: string, code: number) {{\n    super(m);\n    this.code = code;\n  }}\n}}\n"),
                format!("new {e}(\"custom \" + {n}, {n})"),
                format!("console.log(\"caught\", e instanceof {e}, e instanceof Error, e.message, e.code);"),
            )
        } else {
            (String::new(), format!("new Error(\"E\" + {n})"), "console.log(\"caught\", e.message);".to_string())
        };
        let fin = if self.rng.chance(1, 2) { " finally {\n  console.log(\"finally\");\n}" } else { "" };
        format!(
            "{decl}try {{\n{body}  if ({c}) throw {ctor};\n  console.log(\"no throw\");\n}} catch (e: any) {{\n  {check}\n}}{fin}"
        )
    }

    fn json_stmt(&mut self) -> String {
        let n = self.expr(Ty::Num, 2);
        let s = self.expr(Ty::Str, 1);
        let b = self.expr(Ty::Bool, 1);
        let a = self.expr(Ty::Arr, 1);
        let o = self.fresh("j");
        let indent = self.rng.pick(&["", ", null, 2", ", null, \"--\""]).to_string();
        // Text indented with "--" is not JSON: it is not parsed back (a
        // SyntaxError there would end the program, and with it what the
        // rest of the program tests).
        let check = if indent.contains("--") {
            format!("{o}s.split(\"\\n\").length")
        } else {
            format!("JSON.stringify(JSON.parse({o}s)) === JSON.stringify({o})")
        };
        format!(
            "const {o} = {{ num: {n}, str: {s}, flag: {b}, list: {a}, nested: {{ deep: [1, \"two\", null, true] }} }};\nconst {o}s = JSON.stringify({o}{indent});\nconsole.log({o}s);\nconsole.log({check}, Object.keys({o}).join());"
        )
    }

    fn switch_stmt(&mut self) -> String {
        let e = self.expr(Ty::Int, 1);
        let mut out = format!("switch ({e} % 4) {{\n");
        for k in 0..3 {
            let p = self.expr(Ty::Str, 1);
            let brk = if self.rng.chance(2, 3) { "\n    break;" } else { "" };
            let _ = write!(out, "  case {k}:\n    console.log(\"case {k}\", {p});{brk}\n");
        }
        out.push_str("  default:\n    console.log(\"default\");\n}");
        out
    }

    fn array_stmt(&mut self) -> String {
        let a = self.fresh("arr");
        let init = self.expr(Ty::Arr, 2);
        let x = self.expr(Ty::Int, 1);
        self.vars.push((a.clone(), Ty::Arr, true));
        let op = self.rng.pick(&[
            "{a}.splice(1, 1)",
            "{a}.reverse()",
            "{a}.sort((p, q) => q - p)",
            "{a}.fill(7, 1)",
            "{a}.unshift(X)",
            "{a}.pop()",
            "{a}.shift()",
            "{a}.flatMap((v) => [v, v + 1])",
            "{a}.findIndex((v) => v > X)",
            "{a}.every((v) => v < 100)",
            "{a}.lastIndexOf(X)",
        ]);
        let op = op.replace("{a}", &a).replace('X', &x);
        format!("let {a}: number[] = {init};\nconsole.log(JSON.stringify({op}), JSON.stringify({a}), {a}.length);")
    }

    fn string_stmt(&mut self) -> String {
        let s = self.expr(Ty::Str, 2);
        let v = self.fresh("s");
        let op = self.rng.pick(&[
            "{v}.split(\"\").reverse().join(\"\")",
            "{v}.split(\",\").map((w) => w.trim()).join(\"|\")",
            "[...{v}].length",
            "{v}.at(-1)",
            "{v}.lastIndexOf(\"a\")",
            "{v}.codePointAt(0)",
            "{v}.padEnd(12, \"-=\")",
            "{v}.trimStart() + \"|\"",
            "{v}.concat(\"!\", \"?\")",
            "{v}.endsWith(\"a\")",
        ]);
        let op = op.replace("{v}", &v);
        format!("const {v}: string = {s};\nconsole.log({op}, {v}.length);")
    }

    fn generator_stmt(&mut self) -> String {
        let g = self.fresh("g");
        let skip = self.rng.int(0, 4);
        let m = self.rng.int(-2, 5);
        let n1 = self.rng.int(0, 7);
        let n2 = self.rng.int(0, 5);
        let early = self.rng.int(1, 4);
        format!(
            "function* {g}(n: number) {{\n  for (let i = 0; i < n; i++) {{\n    if (i === {skip}) continue;\n    const back = yield i * {m};\n    if (back === \"stop\") return -1;\n  }}\n  return n;\n}}\nconsole.log(JSON.stringify([...{g}({n1})]));\nconst {g}it = {g}({n2});\nconst {g}a = {g}it.next();\nconst {g}b = {g}it.next(\"stop\");\nconsole.log({g}a.value, {g}a.done, {g}b.value, {g}b.done, {g}it.next().done);\nlet {g}sum = 0;\nfor (const v of {g}({n1})) {{\n  if (v > {early} * 4) break;\n  {g}sum += v;\n}}\nconsole.log(\"{g}sum\", {g}sum);"
        )
    }

    fn regex_stmt(&mut self) -> String {
        let s = self.expr(Ty::Str, 2);
        let v = self.fresh("r");
        let op = self.rng.pick(&[
            "JSON.stringify({v}.match(/[a-z]+/g))",
            "{v}.replace(/([a-z])([0-9])/g, \"$2$1\")",
            "{v}.replace(/[aeiou]/gi, (m) => m.toUpperCase() + \".\")",
            "/^[a-z]+$/.test({v})",
            "{v}.search(/[0-9,]/)",
            "JSON.stringify({v}.split(/[,-]/))",
            "JSON.stringify(/(?<w>[a-z]+)(?<n>[0-9]*)/.exec({v})?.groups ?? null)",
            "JSON.stringify([...{v}.matchAll(/[a-z]/g)].map((m) => m.index))",
            "{v}.replaceAll(/a|b/g, \"<$&>\")",
            "JSON.stringify({v}.match(/(\\w)(\\w)?/))",
        ]);
        let op = op.replace("{v}", &v);
        format!("const {v}: string = {s};\nconsole.log({op});")
    }

    fn labelled_stmt(&mut self) -> String {
        let l = self.fresh("outer");
        let c = self.fresh("cnt");
        let (a, b) = (self.rng.int(0, 6), self.rng.int(0, 6));
        let (p, q, r) = (self.rng.int(1, 5), self.rng.int(0, 4), self.rng.int(2, 9));
        format!(
            "let {c} = 0;\n{l}: for (let a = 0; a < {a}; a++) {{\n  for (let b = 0; b < {b}; b++) {{\n    if ((a * {b} + b) % {p} === {q}) continue {l};\n    if (a + b > {r}) break {l};\n    {c} += a * b + 1;\n  }}\n}}\nconsole.log(\"{c}\", {c});"
        )
    }

    fn accessor_stmt(&mut self) -> String {
        let o = self.fresh("acc");
        let base = self.expr(Ty::Int, 1);
        let set = self.expr(Ty::Int, 1);
        let label = self.expr(Ty::Str, 1);
        format!(
            "const {o} = {{\n  base: {base},\n  get twice(): number {{\n    return this.base * 2;\n  }},\n  set twice(v: number) {{\n    this.base = v / 2;\n  }},\n  label: {label},\n}};\nconsole.log({o}.twice, JSON.stringify({o}));\n{o}.twice = {set};\nconst {{ label: {o}l, ...{o}rest }} = {o};\nconsole.log({o}.base, {o}l, JSON.stringify({o}rest), JSON.stringify({{ ...{o}, extra: 1 }}));\nconsole.log(JSON.stringify(Object.entries({o})), JSON.stringify(Object.assign({{ twice: 0 }}, {o})), Object.values({o}).length);"
        )
    }

    fn date_stmt(&mut self) -> String {
        let d = self.fresh("d");
        let (y, mo, day, h, mi) = (
            self.rng.int(1970, 2100),
            self.rng.int(0, 13),
            self.rng.int(0, 32),
            self.rng.int(0, 25),
            self.rng.int(0, 61),
        );
        let add = self.rng.int(-100, 100);
        format!(
            "const {d} = new Date(Date.UTC({y}, {mo}, {day}, {h}, {mi}));\nconsole.log({d}.toISOString(), {d}.getUTCDay(), {d}.getUTCMonth(), JSON.stringify({{ at: {d} }}));\n{d}.setUTCDate({d}.getUTCDate() + {add});\nconsole.log({d}.getTime(), {d}.toISOString().slice(0, 10), Date.UTC({y}, {mo}) - {d}.getTime() > 0);"
        )
    }

    fn destructure_stmt(&mut self) -> String {
        let v = self.fresh("ds");
        let arr = self.expr(Ty::Arr, 2);
        let dflt = self.expr(Ty::Int, 1);
        let s = self.expr(Ty::Str, 1);
        format!(
            "const [{v}a, {v}b = {dflt}, ...{v}r] = {arr};\nconsole.log({v}a, {v}b, JSON.stringify({v}r));\nconst {{ p: {v}p = \"none\", q: {{ deep: {v}d }} = {{ deep: 0 }} }}: any = {{ p: {s}.length > 3 ? {s} : undefined }};\nconsole.log({v}p, {v}d);\nlet [{v}x, {v}y] = [1, 2];\n[{v}x, {v}y] = [{v}y, {v}x];\nconsole.log({v}x, {v}y);"
        )
    }

    fn expr(&mut self, ty: Ty, depth: usize) -> String {
        if depth == 0 || self.rng.chance(1, 4) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::Int => self.int_expr(d),
            Ty::Num => self.num_expr(d),
            Ty::Str => self.str_expr(d),
            Ty::Bool => self.bool_expr(d),
            Ty::Arr => self.arr_expr(d),
        }
    }

    fn leaf(&mut self, ty: Ty) -> String {
        let s = self.leaf_text(ty);
        // `-5 ** 2` and `--0` do not parse: negative literals go in parentheses.
        if s.starts_with('-') {
            format!("({s})")
        } else {
            s
        }
    }

    fn leaf_text(&mut self, ty: Ty) -> String {
        if self.rng.chance(1, 2) {
            if let Some(v) = self.var_of(ty) {
                return v;
            }
        }
        match ty {
            Ty::Int => self.rng.int(-20, 100).to_string(),
            Ty::Num => {
                if self.rng.chance(1, 2) {
                    self.rng.pick(FLOATS).to_string()
                } else {
                    self.rng.int(-5, 1000).to_string()
                }
            }
            Ty::Str => format!("{:?}", self.rng.pick(WORDS)),
            Ty::Bool => self.rng.pick(&["true", "false"]).to_string(),
            Ty::Arr => {
                let n = self.rng.below(6);
                let xs: Vec<String> = (0..n).map(|_| self.rng.int(-9, 60).to_string()).collect();
                format!("[{}]", xs.join(", "))
            }
        }
    }

    fn int_expr(&mut self, d: usize) -> String {
        let a = self.expr(Ty::Int, d);
        let b = self.expr(Ty::Int, d);
        match self.rng.below(12) {
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            2 => format!("({a} * {})", self.rng.int(-3, 7)),
            3 => format!("({a} % {})", self.rng.int(1, 9)),
            4 => format!("Math.floor({a} / {})", self.rng.int(1, 5)),
            5 => format!("({a} & {b})"),
            6 => format!("({a} | {})", self.rng.int(0, 15)),
            7 => format!("({a} >> {})", self.rng.int(0, 3)),
            8 => {
                let s = self.expr(Ty::Str, d);
                format!("{s}.length")
            }
            9 => {
                let arr = self.expr(Ty::Arr, d);
                format!("{arr}.length")
            }
            10 => format!("Math.max({a}, {b})"),
            _ => format!("Math.abs({a})"),
        }
    }

    fn num_expr(&mut self, d: usize) -> String {
        let a = self.expr(Ty::Num, d);
        let b = self.expr(Ty::Num, d);
        match self.rng.below(26) {
            0 | 1 => format!("({a} + {b})"),
            2 => format!("({a} - {b})"),
            3 => format!("({a} * {b})"),
            4 => format!("({a} / {b})"),
            5 => format!("({a} % {b})"),
            6 => format!("({a} ** {})", self.rng.int(0, 4)),
            7 => format!("(-{a})"),
            8 => format!("Math.floor({a})"),
            9 => format!("Math.round({a})"),
            10 => format!("Math.sqrt(Math.abs({a}))"),
            11 => format!("Math.min({a}, {b})"),
            12 => format!("Math.trunc({a})"),
            13 => format!("({a} ^ {b})"),
            14 => format!("({a} >>> 0)"),
            15 => {
                let s = self.expr(Ty::Str, d);
                let t = self.expr(Ty::Str, d);
                format!("{s}.indexOf({t})")
            }
            16 => {
                let s = self.expr(Ty::Str, d);
                format!("{s}.charCodeAt({})", self.rng.int(0, 4))
            }
            17 => {
                let c = self.expr(Ty::Bool, d);
                format!("({c} ? {a} : {b})")
            }
            18 => {
                let arr = self.expr(Ty::Arr, d);
                format!("{arr}.reduce((s, x) => s + x * {a}, 0)")
            }
            19 if !self.funcs.is_empty() => {
                let (f, n) = self.funcs[self.rng.below(self.funcs.len())].clone();
                let args: Vec<String> = (0..n).map(|_| self.expr(Ty::Int, d)).collect();
                format!("{f}({})", args.join(", "))
            }
            21 => {
                let f = self.rng.pick(&["sin", "cos", "exp", "log", "cbrt", "atan", "log2", "log10", "tanh", "expm1"]);
                format!("Math.{f}({a})")
            }
            22 => format!("Math.hypot({a}, {b})"),
            23 => format!("Math.atan2({a}, {b})"),
            20 => {
                let s = self.rng.pick(&["\"12\"", "\"3.25\"", "\" 7 \"", "\"0x1f\"", "\"1e3\"", "\"-0\""]);
                format!("{}({s})", self.rng.pick(&["Number", "parseFloat", "parseInt"]))
            }
            _ => self.expr(Ty::Int, d),
        }
    }

    fn str_expr(&mut self, d: usize) -> String {
        let a = self.expr(Ty::Str, d);
        match self.rng.below(26) {
            0 | 1 => {
                let b = self.expr(Ty::Str, d);
                format!("({a} + {b})")
            }
            2 => {
                let n = self.expr(Ty::Num, d);
                format!("({a} + {n})")
            }
            3 => {
                let n = self.expr(Ty::Num, d);
                let b = self.expr(Ty::Bool, d);
                format!("`<${{{a}}}|${{{n}}}|${{{b}}}>`")
            }
            4 => {
                let i = self.expr(Ty::Num, d);
                format!("{a}.slice({i})")
            }
            5 => format!("{a}.slice({}, {})", self.rng.int(-3, 3), self.rng.int(-2, 6)),
            6 => format!("{a}.substring({}, {})", self.rng.int(-1, 4), self.rng.int(0, 6)),
            7 => format!("{a}.toUpperCase()"),
            8 => format!("{a}.trim()"),
            9 => format!("{a}.padStart({}, \"*\")", self.rng.int(0, 12)),
            10 => format!("{a}.repeat({})", self.rng.int(0, 3)),
            11 => format!("{a}.replace(\"a\", \"[$&]\")"),
            12 => format!("{a}.replaceAll(\"a\", \"_\")"),
            13 => format!("{a}.charAt({})", self.rng.int(0, 5)),
            14 => {
                let n = self.expr(Ty::Num, d);
                format!("String({n})")
            }
            15 => {
                let n = self.expr(Ty::Num, d);
                format!("({n}).toFixed({})", self.rng.int(0, 4))
            }
            16 => {
                let arr = self.expr(Ty::Arr, d);
                format!("{arr}.join({:?})", self.rng.pick(&[",", ":", "", " - "]))
            }
            17 => {
                let arr = self.expr(Ty::Arr, d);
                format!("JSON.stringify({arr})")
            }
            18 => {
                let n = self.expr(Ty::Int, d);
                format!("({n}).toString({})", self.rng.pick(&["2", "16", "36", "10"]))
            }
            19 => {
                let n = self.expr(Ty::Num, d);
                format!("({n}).toString({})", self.rng.pick(&["2", "3", "16", "36"]))
            }
            20 => {
                let n = self.expr(Ty::Num, d);
                format!("({n}).toPrecision({})", self.rng.int(1, 12))
            }
            21 => {
                let n = self.expr(Ty::Num, d);
                format!("({n}).toExponential({})", self.rng.int(0, 8))
            }
            22 => {
                let arr = self.expr(Ty::Arr, d);
                format!("JSON.stringify([...{arr}].sort())")
            }
            23 => {
                let n = self.expr(Ty::Num, d);
                let s = self.expr(Ty::Str, d);
                format!("JSON.stringify({{ n: {n}, s: {s} + \"\\u0001\\\"\\n\", u: undefined, arr: [undefined, {n} / 0, -0] }})")
            }
            24 => {
                let b = self.expr(Ty::Str, d);
                let n = self.expr(Ty::Num, d);
                let k = self.rng.below(3);
                match k {
                    0 => format!("(({{ x, y = 5, ...rest }}: any) => `${{x}}/${{y}}/${{JSON.stringify(rest)}}`)({{ x: {a}, z: {n}, w: {b} }})"),
                    1 => format!("((null as any)?.foo?.bar ?? {a})"),
                    _ => format!("JSON.stringify({{ ...{{ p: {n}, q: {b} }}, q: {a}, [{b} + \"k\"]: 1 }})"),
                }
            }
            _ => format!("{a}.toLowerCase()"),
        }
    }

    fn bool_expr(&mut self, d: usize) -> String {
        match self.rng.below(12) {
            0 => {
                let (a, b) = (self.expr(Ty::Num, d), self.expr(Ty::Num, d));
                format!("({a} < {b})")
            }
            1 => {
                let (a, b) = (self.expr(Ty::Num, d), self.expr(Ty::Num, d));
                format!("({a} >= {b})")
            }
            2 => {
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                format!("({a} < {b})")
            }
            3 => {
                let (a, b) = (self.expr(Ty::Int, d), self.expr(Ty::Int, d));
                format!("({a} === {b})")
            }
            4 => {
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                format!("({a} !== {b})")
            }
            5 => {
                let a = self.expr(Ty::Bool, d);
                format!("!{a}")
            }
            6 => {
                let (a, b) = (self.expr(Ty::Bool, d), self.expr(Ty::Bool, d));
                format!("({a} && {b})")
            }
            7 => {
                let (a, b) = (self.expr(Ty::Bool, d), self.expr(Ty::Bool, d));
                format!("({a} || {b})")
            }
            8 => {
                let (a, b) = (self.expr(Ty::Str, d), self.expr(Ty::Str, d));
                format!("{a}.includes({b})")
            }
            9 => {
                let (arr, x) = (self.expr(Ty::Arr, d), self.expr(Ty::Int, d));
                format!("{arr}.includes({x})")
            }
            10 => {
                let n = self.expr(Ty::Num, d);
                format!("Number.isInteger({n})")
            }
            _ => {
                let (arr, x) = (self.expr(Ty::Arr, d), self.expr(Ty::Int, d));
                format!("{arr}.some((v) => v > {x})")
            }
        }
    }

    fn arr_expr(&mut self, d: usize) -> String {
        let a = self.expr(Ty::Arr, d);
        match self.rng.below(10) {
            0 => {
                let k = self.rng.int(-2, 3);
                format!("{a}.map((x) => x * {k} + 1)")
            }
            1 => format!("{a}.filter((x) => x % 2 === 0)"),
            2 => format!("{a}.slice({})", self.rng.int(-2, 2)),
            3 => {
                let b = self.expr(Ty::Arr, d);
                format!("{a}.concat({b})")
            }
            4 => format!("[...{a}].sort((p, q) => p - q)"),
            5 => format!("[...{a}].reverse()"),
            6 => {
                let x = self.expr(Ty::Int, d);
                format!("[{x}, ...{a}]")
            }
            7 => {
                let s = self.expr(Ty::Str, d);
                format!("{s}.split(\"\").map((c) => c.charCodeAt(0) % 50)")
            }
            8 => format!("JSON.parse(JSON.stringify({a}))"),
            _ => format!("Array.from({a}, (x) => x - 1)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_program_and_seeds_differ() {
        assert_eq!(program(5), program(5));
        let texts: std::collections::HashSet<String> = (0..50).map(|s| program(s).render()).collect();
        assert_eq!(texts.len(), 50);
    }

    #[test]
    fn programs_compile_and_use_every_kind_of_statement() {
        let mut all = String::new();
        for seed in 0..80 {
            let text = program(seed).render();
            if let Err(e) = raya_engine::compiler::compile_source("gen.raya", &text) {
                panic!("seed {seed} does not compile:\n{}\n{text}", e.render());
            }
            all.push_str(&text);
        }
        for needle in [
            "class ",
            "extends",
            "new Map",
            "try {",
            "JSON.stringify",
            "=> {",
            "for (",
            "switch (",
            ".padStart(",
            "function*",
            "continue outer",
            "get twice",
            "Date.UTC",
            "...ds",
        ] {
            assert!(all.contains(needle), "no program uses {needle}");
        }
    }
}
