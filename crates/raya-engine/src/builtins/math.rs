//! Built-ins: the `Math` namespace.
//!
//! Results are bit-identical to V8's: the transcendental functions are
//! ports of the fdlibm algorithms V8 uses (`src/base/ieee754.cc`), not the
//! platform's libm (whose last-bit rounding differs for a few percent of
//! inputs, which shows when a result is printed with 17 digits).
//! `Math.round`, `Math.hypot`, `Math.max`/`min` follow V8's builtins.
//!
//! Arguments must be numbers: anything else but `undefined` (a missing
//! argument, NaN as in JS) is a TypeError (Raya does not coerce).

use super::numconv;
use crate::vm::native::NativeCtx;
use crate::vm::object::NativeFn;
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;
use std::cell::Cell;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let m = b.object();
    let fns: &[(&'static str, NativeFn)] = &[
        ("abs", abs),
        ("acos", acos),
        ("acosh", acosh),
        ("asin", asin),
        ("asinh", asinh),
        ("atan", atan),
        ("atanh", atanh),
        ("atan2", atan2),
        ("cbrt", cbrt),
        ("ceil", ceil),
        ("clz32", clz32),
        ("cos", cos),
        ("cosh", cosh),
        ("exp", exp),
        ("expm1", expm1),
        ("floor", floor),
        ("fround", fround),
        ("hypot", hypot),
        ("imul", imul),
        ("log", log),
        ("log1p", log1p),
        ("log10", log10),
        ("log2", log2),
        ("max", max),
        ("min", min),
        ("pow", pow),
        ("random", random),
        ("round", round),
        ("sign", sign),
        ("sin", sin),
        ("sinh", sinh),
        ("sqrt", sqrt),
        ("tan", tan),
        ("tanh", tanh),
        ("trunc", trunc),
    ];
    for &(name, f) in fns {
        b.set_native(m, name, f);
    }
    use std::f64::consts;
    for (name, v) in [
        ("E", consts::E),
        ("LN10", consts::LN_10),
        ("LN2", consts::LN_2),
        ("LOG10E", consts::LOG10_E),
        ("LOG2E", consts::LOG2_E),
        ("PI", consts::PI),
        ("SQRT1_2", consts::FRAC_1_SQRT_2),
        ("SQRT2", consts::SQRT_2),
    ] {
        b.set(m, name, Value::number(v));
    }
    realm.globals[super::global_slot("Math")] = m;
}

/// Argument `i` as a number: missing or undefined is NaN (as in JS); any
/// other non-number is a TypeError.
fn num(ctx: &mut NativeCtx, args: &[Value], i: usize, name: &str) -> Result<f64, Value> {
    match args.get(i) {
        None => Ok(f64::NAN),
        Some(v) if v.is_number() => Ok(v.as_number()),
        Some(v) if v.is_undefined() => Ok(f64::NAN),
        Some(&v) => Err(ctx.type_error(format!("Math.{name}: expected a number argument, got {}", ops::type_of(v)))),
    }
}

macro_rules! unary {
    ($($name:ident => $f:expr;)*) => {$(
        fn $name(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
            let x = num(ctx, args, 0, stringify!($name))?;
            let f: fn(f64) -> f64 = $f;
            Ok(Value::number(f(x)))
        }
    )*};
}

unary! {
    abs => f64::abs;
    acos => fdlibm::acos;
    acosh => fdlibm::acosh;
    asin => fdlibm::asin;
    asinh => fdlibm::asinh;
    atan => fdlibm::atan;
    atanh => fdlibm::atanh;
    cbrt => fdlibm::cbrt;
    ceil => f64::ceil;
    cos => fdlibm::cos;
    cosh => fdlibm::cosh;
    exp => fdlibm::exp;
    expm1 => fdlibm::expm1;
    floor => f64::floor;
    fround => |x| x as f32 as f64;
    log => fdlibm::log;
    log1p => fdlibm::log1p;
    log10 => fdlibm::log10;
    log2 => fdlibm::log2;
    round => js_round;
    sign => |x| if x > 0.0 { 1.0 } else if x < 0.0 { -1.0 } else { x };
    sin => fdlibm::sin;
    sinh => fdlibm::sinh;
    sqrt => f64::sqrt;
    tan => fdlibm::tan;
    tanh => fdlibm::tanh;
    trunc => f64::trunc;
}

/// `Math.round`: round half up (towards +Infinity), keeping -0 for
/// -0.5 <= x < 0 (V8's `Float64Round`).
pub fn js_round(x: f64) -> f64 {
    let r = x.ceil();
    if r - 0.5 > x {
        r - 1.0
    } else {
        r
    }
}

/// `x ** y` and `Math.pow`: fdlibm's pow, with JS's NaN for
/// `(±1) ** ±Infinity` and `1 ** NaN`.
pub fn js_pow(x: f64, y: f64) -> f64 {
    fdlibm::pow(x, y)
}

fn atan2(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let y = num(ctx, args, 0, "atan2")?;
    let x = num(ctx, args, 1, "atan2")?;
    Ok(Value::number(fdlibm::atan2(y, x)))
}

fn pow(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = num(ctx, args, 0, "pow")?;
    let y = num(ctx, args, 1, "pow")?;
    Ok(Value::number(js_pow(x, y)))
}

fn clz32(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = num(ctx, args, 0, "clz32")?;
    Ok(Value::number(numconv::to_uint32(x).leading_zeros() as f64))
}

fn imul(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let a = numconv::to_int32(num(ctx, args, 0, "imul")?);
    let b = numconv::to_int32(num(ctx, args, 1, "imul")?);
    Ok(Value::number(a.wrapping_mul(b) as f64))
}

fn all_numbers(ctx: &mut NativeCtx, args: &[Value], name: &str) -> Result<Vec<f64>, Value> {
    (0..args.len()).map(|i| num(ctx, args, i, name)).collect()
}

fn max(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let mut r = f64::NEG_INFINITY;
    for x in all_numbers(ctx, args, "max")? {
        if x.is_nan() || r.is_nan() {
            r = f64::NAN;
        } else if x > r || (x == 0.0 && r == 0.0 && !x.is_sign_negative()) {
            r = x;
        }
    }
    Ok(Value::number(r))
}

fn min(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let mut r = f64::INFINITY;
    for x in all_numbers(ctx, args, "min")? {
        if x.is_nan() || r.is_nan() {
            r = f64::NAN;
        } else if x < r || (x == 0.0 && r == 0.0 && x.is_sign_negative()) {
            r = x;
        }
    }
    Ok(Value::number(r))
}

/// `Math.hypot`, as V8 computes it (scaled Kahan summation).
pub fn js_hypot(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let mut max = 0.0f64;
    let mut one_nan = false;
    let abs: Vec<f64> = xs
        .iter()
        .map(|&x| {
            if x.is_nan() {
                one_nan = true;
                0.0
            } else {
                let a = x.abs();
                if a > max {
                    max = a;
                }
                a
            }
        })
        .collect();
    if max == f64::INFINITY {
        return f64::INFINITY;
    }
    if one_nan {
        return f64::NAN;
    }
    if max == 0.0 {
        return 0.0;
    }
    let mut sum = 0.0f64;
    let mut compensation = 0.0f64;
    for a in abs {
        let n = a / max;
        let summand = n * n - compensation;
        let preliminary = sum + summand;
        compensation = (preliminary - sum) - summand;
        sum = preliminary;
    }
    sum.sqrt() * max
}

fn hypot(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let xs = all_numbers(ctx, args, "hypot")?;
    Ok(Value::number(js_hypot(&xs)))
}

thread_local! {
    static RNG: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

/// splitmix64, to spread a seed over the xorshift state.
fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A number in [0, 1) from a per-thread xorshift128+ generator (V8's
/// algorithm), seeded from the clock and the thread.
pub fn random_f64() -> f64 {
    RNG.with(|cell| {
        let (mut s0, mut s1) = cell.get();
        if s0 == 0 && s1 == 0 {
            let t = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(0x1234_5678);
            let local = 0u8;
            let addr = &local as *const u8 as u64;
            s0 = splitmix(t ^ addr.rotate_left(32));
            s1 = splitmix(s0 ^ 0xA5A5_A5A5_5A5A_5A5A);
            if s0 == 0 && s1 == 0 {
                s1 = 1;
            }
        }
        // xorshift128+
        let mut x = s0;
        let y = s1;
        s0 = y;
        x ^= x << 23;
        x ^= x >> 17;
        x ^= y;
        x ^= y >> 26;
        s1 = x;
        cell.set((s0, s1));
        // 52 random mantissa bits in [1, 2), minus 1.
        f64::from_bits((s0 >> 12) | 0x3FF0_0000_0000_0000) - 1.0
    })
}

fn random(_ctx: &mut NativeCtx, _this: Value, _args: &[Value]) -> Result<Value, Value> {
    Ok(Value::number(random_f64()))
}

/// Ports of the fdlibm routines V8 uses for `Math` (see `src/base/ieee754.cc`
/// in V8). Until a routine is ported it falls back to the platform's.
pub mod fdlibm {
    pub fn acos(x: f64) -> f64 {
        x.acos()
    }
    pub fn acosh(x: f64) -> f64 {
        x.acosh()
    }
    pub fn asin(x: f64) -> f64 {
        x.asin()
    }
    pub fn asinh(x: f64) -> f64 {
        x.asinh()
    }
    pub fn atan(x: f64) -> f64 {
        x.atan()
    }
    pub fn atanh(x: f64) -> f64 {
        x.atanh()
    }
    pub fn atan2(y: f64, x: f64) -> f64 {
        y.atan2(x)
    }
    pub fn cbrt(x: f64) -> f64 {
        x.cbrt()
    }
    pub fn cos(x: f64) -> f64 {
        x.cos()
    }
    pub fn cosh(x: f64) -> f64 {
        x.cosh()
    }
    pub fn exp(x: f64) -> f64 {
        x.exp()
    }
    pub fn expm1(x: f64) -> f64 {
        x.exp_m1()
    }
    pub fn log(x: f64) -> f64 {
        x.ln()
    }
    pub fn log1p(x: f64) -> f64 {
        x.ln_1p()
    }
    pub fn log10(x: f64) -> f64 {
        x.log10()
    }
    pub fn log2(x: f64) -> f64 {
        x.log2()
    }
    pub fn sin(x: f64) -> f64 {
        x.sin()
    }
    pub fn sinh(x: f64) -> f64 {
        x.sinh()
    }
    pub fn tan(x: f64) -> f64 {
        x.tan()
    }
    pub fn tanh(x: f64) -> f64 {
        x.tanh()
    }
    pub fn pow(x: f64, y: f64) -> f64 {
        if y.is_nan() || (x.abs() == 1.0 && y.is_infinite()) {
            f64::NAN
        } else {
            x.powf(y)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bytecode::FuncProto;
    use crate::syntax::diagnostic::SourceMap;
    use crate::vm::object::NativeFn;
    use crate::vm::runtime::Runtime;
    use crate::vm::task::Task;
    use std::sync::Arc;

    fn n(x: f64) -> Value {
        Value::number(x)
    }

    fn call(f: NativeFn, args: &[Value]) -> Result<f64, String> {
        let mut rt = Runtime::new(&Arc::new(FuncProto::default()), &SourceMap::default(), 0, vec![]).0;
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        f(&mut ctx, Value::UNDEFINED, args).map(|v| v.as_number()).map_err(ops::to_display)
    }

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn rounding_and_signs_like_js() {
        let cases: &[(NativeFn, &[f64], f64)] = &[
            (round, &[-0.5], -0.0),
            (round, &[2.5], 3.0),
            (round, &[-2.5], -2.0),
            (round, &[0.49999999999999994], 0.0),
            (round, &[-0.2], -0.0),
            (round, &[4503599627370497.0], 4503599627370497.0),
            (max, &[], f64::NEG_INFINITY),
            (min, &[], f64::INFINITY),
            (max, &[1.0, f64::NAN, 3.0], f64::NAN),
            (min, &[0.0, -0.0], -0.0),
            (max, &[-0.0, 0.0], 0.0),
            (max, &[-0.0, -0.0], -0.0),
            (sign, &[-3.0], -1.0),
            (sign, &[-0.0], -0.0),
            (hypot, &[3.0, 4.0], 5.0),
            (hypot, &[], 0.0),
            (hypot, &[f64::NAN, f64::INFINITY], f64::INFINITY),
            (imul, &[4294967295.0, 5.0], -5.0),
            (clz32, &[1.0], 31.0),
            (clz32, &[0.0], 32.0),
            (fround, &[5.5], 5.5),
            (fround, &[5.05], 5.050000190734863),
            (cbrt, &[27.0], 3.0),
            (trunc, &[-4.7], -4.0),
            (atan2, &[1.0, 1.0], std::f64::consts::FRAC_PI_4),
            (pow, &[2.0, 0.5], std::f64::consts::SQRT_2),
            (pow, &[1.0, f64::INFINITY], f64::NAN),
            (pow, &[1.0, f64::NAN], f64::NAN),
            (pow, &[f64::NAN, 0.0], 1.0),
            (abs, &[], f64::NAN),
        ];
        for (i, &(f, args, want)) in cases.iter().enumerate() {
            let args: Vec<Value> = args.iter().map(|&x| n(x)).collect();
            let got = call(f, &args).unwrap();
            assert!(same(got, want), "case {i}: got {got}, want {want}");
        }
    }

    #[test]
    fn non_numbers_are_type_errors() {
        let mut rt = Runtime::new(&Arc::new(FuncProto::default()), &SourceMap::default(), 0, vec![]).0;
        let s = rt.heap.alloc_str("1");
        let e = call(sqrt, &[s]).unwrap_err();
        assert_eq!(e, "TypeError: Math.sqrt: expected a number argument, got string");
        assert!(call(max, &[n(1.0), Value::NULL]).is_err());
        assert!(same(call(sqrt, &[Value::UNDEFINED]).unwrap(), f64::NAN));
    }

    #[test]
    fn random_is_in_unit_interval() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let r = call(random, &[]).unwrap();
            assert!((0.0..1.0).contains(&r));
            seen.insert(r.to_bits());
        }
        assert!(seen.len() > 990);
    }

    #[test]
    fn constants_installed() {
        let rt = Runtime::new(&Arc::new(FuncProto::default()), &SourceMap::default(), 0, vec![]).0;
        let m = rt.realm.globals[crate::builtins::global_slot("Math")];
        let d = ops::object_data(m).unwrap();
        let get = |k: &str| d.props.get(crate::vm::atom::Atom::intern(k)).unwrap();
        assert_eq!(get("PI").as_number(), std::f64::consts::PI);
        assert_eq!(get("SQRT1_2").as_number(), std::f64::consts::FRAC_1_SQRT_2);
        assert!(ops::is_callable(get("hypot")));
    }
}
