//! Built-ins: `Number` (statics, `Number(x)`), number and boolean
//! methods, `String(x)` and `Boolean(x)` without `new`, and the globals
//! `parseInt`, `parseFloat`, `isNaN`, `isFinite`.

use super::numconv;
use crate::vm::atom::Atom;
use crate::vm::native::{arg, NativeCtx};
use crate::vm::ops;
use crate::vm::realm::{Builder, Realm};
use crate::vm::value::Value;

pub fn install(b: &mut Builder, realm: &mut Realm) {
    let c = realm.classes;
    let parse_int_fn = b.native("parseInt", parse_int);
    let parse_float_fn = b.native("parseFloat", parse_float);

    // Number statics.
    b.static_native(c.number, "isInteger", is_integer);
    b.static_native(c.number, "isSafeInteger", is_safe_integer);
    b.static_native(c.number, "isFinite", number_is_finite);
    b.static_native(c.number, "isNaN", number_is_nan);
    let mut number_class = Builder::class_data(c.number);
    let statics = &mut number_class.statics;
    statics.set(Atom::intern("parseInt"), parse_int_fn);
    statics.set(Atom::intern("parseFloat"), parse_float_fn);
    for (name, v) in [
        ("MAX_SAFE_INTEGER", 9007199254740991.0),
        ("MIN_SAFE_INTEGER", -9007199254740991.0),
        ("MAX_VALUE", f64::MAX),
        ("MIN_VALUE", 5e-324),
        ("EPSILON", f64::EPSILON),
        ("POSITIVE_INFINITY", f64::INFINITY),
        ("NEGATIVE_INFINITY", f64::NEG_INFINITY),
        ("NaN", f64::NAN),
    ] {
        statics.set(Atom::intern(name), Value::number(v));
    }
    drop(number_class);

    // Calling the classes without `new`.
    Builder::class_data(c.number).call = b.native("Number", number_call);
    Builder::class_data(c.string).call = b.native("String", string_call);
    Builder::class_data(c.boolean).call = b.native("Boolean", boolean_call);

    // Methods of numbers and booleans.
    let mut t = std::mem::take(&mut realm.methods.number);
    b.method(&mut t, "toFixed", to_fixed);
    b.method(&mut t, "toLocaleString", to_locale_string);
    b.method(&mut t, "toString", number_to_string);
    b.method(&mut t, "toPrecision", to_precision);
    b.method(&mut t, "toExponential", to_exponential);
    b.method(&mut t, "valueOf", number_value_of);
    realm.methods.number = t;
    let mut t = std::mem::take(&mut realm.methods.boolean);
    b.method(&mut t, "toString", boolean_to_string);
    b.method(&mut t, "valueOf", boolean_value_of);
    realm.methods.boolean = t;

    // Globals.
    realm.globals[super::global_slot("parseInt")] = parse_int_fn;
    realm.globals[super::global_slot("parseFloat")] = parse_float_fn;
    realm.globals[super::global_slot("isNaN")] = b.native("isNaN", global_is_nan);
    realm.globals[super::global_slot("isFinite")] = b.native("isFinite", global_is_finite);
}

/// `Number(v)` without user code: strings by StringToNumber, booleans 1/0,
/// null 0, undefined NaN, arrays and objects through their default string
/// form (`[]` is 0, `[5]` is 5, `{}` is NaN).
pub fn to_number(v: Value) -> f64 {
    if v.is_number() {
        return v.as_number();
    }
    match v {
        Value::UNDEFINED => f64::NAN,
        Value::NULL | Value::FALSE => 0.0,
        Value::TRUE => 1.0,
        _ => match ops::as_str(v) {
            Some(s) => numconv::string_to_number(s),
            None => numconv::string_to_number(&ops::to_display(v)),
        },
    }
}

/// A string argument (`parseInt`, `parseFloat`): other values convert as
/// `String(v)` does.
fn string_arg(v: Value) -> std::borrow::Cow<'static, str> {
    match ops::as_str(v) {
        Some(s) => s.into(),
        None => ops::to_display(v).into(),
    }
}

fn number_call(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::number(if args.is_empty() { 0.0 } else { to_number(args[0]) }))
}

fn string_call(ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    match args.first() {
        None => Ok(ctx.str("")),
        Some(&v) if ops::is_string(v) => Ok(v),
        Some(&v) => {
            let s = ops::try_to_display(v).map_err(|f| ctx.fault(f))?;
            Ok(ctx.str(s))
        }
    }
}

fn boolean_call(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(arg(args, 0).truthy()))
}

fn parse_int(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let s = string_arg(arg(args, 0));
    let radix = arg(args, 1);
    let radix = if radix.is_undefined() { None } else { Some(to_number(radix)) };
    Ok(Value::number(numconv::parse_int(&s, radix)))
}

fn parse_float(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let s = string_arg(arg(args, 0));
    Ok(Value::number(numconv::parse_float(&s)))
}

fn global_is_nan(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(to_number(arg(args, 0)).is_nan()))
}

fn global_is_finite(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(to_number(arg(args, 0)).is_finite()))
}

fn number_of(v: Value) -> Option<f64> {
    v.is_number().then(|| v.as_number())
}

fn is_integer(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let r = number_of(arg(args, 0)).is_some_and(|n| n.is_finite() && n.trunc() == n);
    Ok(Value::bool(r))
}

fn is_safe_integer(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    let r = number_of(arg(args, 0)).is_some_and(|n| n.is_finite() && n.trunc() == n && n.abs() <= 9007199254740991.0);
    Ok(Value::bool(r))
}

fn number_is_finite(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(number_of(arg(args, 0)).is_some_and(f64::is_finite)))
}

fn number_is_nan(_ctx: &mut NativeCtx, _this: Value, args: &[Value]) -> Result<Value, Value> {
    Ok(Value::bool(number_of(arg(args, 0)).is_some_and(f64::is_nan)))
}

// ---------------------------------------------------------------------------
// Methods

fn this_number(ctx: &mut NativeCtx, this: Value, method: &str) -> Result<f64, Value> {
    match number_of(this) {
        Some(n) => Ok(n),
        None => Err(ctx.type_error(format!("Number.prototype.{method} requires that 'this' be a Number"))),
    }
}

/// `n.toLocaleString()`: the en-US form (`1,234.568`; see
/// `numconv::to_locale_en_us`); another locale or options are refused.
fn to_locale_string(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "toLocaleString")?;
    super::date::check_en_us(ctx, args, "Number.prototype.toLocaleString")?;
    Ok(ctx.str(numconv::to_locale_en_us(x)))
}

/// ToIntegerOrInfinity of an optional numeric argument (None: undefined).
fn int_arg(ctx: &mut NativeCtx, v: Value, method: &str) -> Result<Option<f64>, Value> {
    if v.is_undefined() {
        return Ok(None);
    }
    if !v.is_number() {
        return Err(ctx.type_error(format!("{method}: expected a number argument, got {}", ops::type_of(v))));
    }
    let n = v.as_number();
    Ok(Some(if n.is_nan() { 0.0 } else { n.trunc() + 0.0 }))
}

fn to_fixed(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "toFixed")?;
    let f = int_arg(ctx, arg(args, 0), "toFixed")?.unwrap_or(0.0);
    if !(0.0..=100.0).contains(&f) {
        return Err(ctx.range_error("toFixed() digits argument must be between 0 and 100"));
    }
    Ok(ctx.str(numconv::to_fixed(x, f as u32)))
}

fn number_to_string(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "toString")?;
    let radix = int_arg(ctx, arg(args, 0), "toString")?.unwrap_or(10.0);
    if !(2.0..=36.0).contains(&radix) {
        return Err(ctx.range_error("toString() radix argument must be between 2 and 36"));
    }
    let s = if radix == 10.0 { numconv::number_to_string(x) } else { numconv::number_to_string_radix(x, radix as u32) };
    Ok(ctx.str(s))
}

fn to_precision(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "toPrecision")?;
    let Some(p) = int_arg(ctx, arg(args, 0), "toPrecision")? else {
        return Ok(ctx.str(numconv::number_to_string(x)));
    };
    if !x.is_finite() {
        return Ok(ctx.str(numconv::number_to_string(x)));
    }
    if !(1.0..=100.0).contains(&p) {
        return Err(ctx.range_error("toPrecision() argument must be between 1 and 100"));
    }
    Ok(ctx.str(format_precision(x, p as usize)))
}

fn to_exponential(ctx: &mut NativeCtx, this: Value, args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "toExponential")?;
    let f = int_arg(ctx, arg(args, 0), "toExponential")?;
    if !x.is_finite() {
        return Ok(ctx.str(numconv::number_to_string(x)));
    }
    if let Some(f) = f {
        if !(0.0..=100.0).contains(&f) {
            return Err(ctx.range_error("toExponential() argument must be between 0 and 100"));
        }
    }
    Ok(ctx.str(format_exponential(x, f.map(|f| f as usize))))
}

fn number_value_of(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    let x = this_number(ctx, this, "valueOf")?;
    Ok(Value::number(x))
}

fn boolean_to_string(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    match this {
        Value::TRUE => Ok(ctx.str("true")),
        Value::FALSE => Ok(ctx.str("false")),
        _ => Err(ctx.type_error("Boolean.prototype.toString requires that 'this' be a Boolean")),
    }
}

fn boolean_value_of(ctx: &mut NativeCtx, this: Value, _args: &[Value]) -> Result<Value, Value> {
    if this.is_bool() {
        Ok(this)
    } else {
        Err(ctx.type_error("Boolean.prototype.valueOf requires that 'this' be a Boolean"))
    }
}

// ---------------------------------------------------------------------------
// toPrecision / toExponential on the exact decimal value

/// The exact decimal digits of a finite, nonzero `|x|`: `(d, e)` with
/// `|x| = d0.d1d2... × 10^e`, without trailing zeros.
fn exact_digits(x: f64) -> (Vec<u8>, i32) {
    // A double has at most 767 significant decimal digits, so 1100 digits
    // are exact (Rust pads the rest with zeros).
    let s = format!("{:.1100e}", x.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    let mut d: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    while d.len() > 1 && d.last() == Some(&0) {
        d.pop();
    }
    (d, e)
}

/// `d × 10^e` rounded to `n` significant digits, ties away from zero (the
/// spec's "larger n"); pads with zeros.
fn round_digits(mut d: Vec<u8>, mut e: i32, n: usize) -> (Vec<u8>, i32) {
    if d.len() <= n {
        d.resize(n, 0);
        return (d, e);
    }
    let up = d[n] >= 5;
    d.truncate(n);
    if up {
        let mut i = n;
        loop {
            if i == 0 {
                d.insert(0, 1);
                d.pop();
                e += 1;
                break;
            }
            i -= 1;
            if d[i] == 9 {
                d[i] = 0;
            } else {
                d[i] += 1;
                break;
            }
        }
    }
    (d, e)
}

fn digits_str(d: &[u8]) -> String {
    d.iter().map(|&c| (b'0' + c) as char).collect()
}

/// `x.toPrecision(p)` for finite `x`.
pub fn format_precision(x: f64, p: usize) -> String {
    let sign = if x < 0.0 { "-" } else { "" };
    let (d, e) = if x == 0.0 {
        (vec![0; p], 0)
    } else {
        let (d, e) = exact_digits(x);
        round_digits(d, e, p)
    };
    let m = digits_str(&d);
    let body = if e < -6 || e >= p as i32 {
        let mut s = m[..1].to_owned();
        if p > 1 {
            s.push('.');
            s.push_str(&m[1..]);
        }
        format!("{s}e{}{}", if e >= 0 { "+" } else { "-" }, e.abs())
    } else if e == p as i32 - 1 {
        m
    } else if e >= 0 {
        let k = e as usize + 1;
        format!("{}.{}", &m[..k], &m[k..])
    } else {
        format!("0.{}{m}", "0".repeat((-(e + 1)) as usize))
    };
    format!("{sign}{body}")
}

/// The shortest round-trip digits of a finite, nonzero `|x|` (those of
/// `String(x)`), as `(d, e)` like [`exact_digits`].
fn shortest_digits(x: f64) -> (Vec<u8>, i32) {
    let s = numconv::number_to_string(x.abs());
    let (mant, exp) = match s.split_once('e') {
        Some((m, e)) => (m.to_owned(), e.parse::<i32>().unwrap_or(0)),
        None => (s.clone(), 0),
    };
    let (int_part, frac) = mant.split_once('.').unwrap_or((&mant, ""));
    let all: Vec<u8> = int_part.bytes().chain(frac.bytes()).map(|b| b - b'0').collect();
    let lead = all.iter().take_while(|&&c| c == 0).count();
    let mut d = all[lead..].to_vec();
    while d.len() > 1 && d.last() == Some(&0) {
        d.pop();
    }
    let e = int_part.len() as i32 - 1 - lead as i32 + exp;
    (d, e)
}

/// `x.toExponential(f)` for finite `x` (`None`: as many digits as needed).
pub fn format_exponential(x: f64, f: Option<usize>) -> String {
    let sign = if x < 0.0 { "-" } else { "" };
    let (d, e) = if x == 0.0 {
        (vec![0; f.unwrap_or(0) + 1], 0)
    } else {
        match f {
            Some(f) => {
                let (d, e) = exact_digits(x);
                round_digits(d, e, f + 1)
            }
            None => shortest_digits(x),
        }
    };
    let m = digits_str(&d);
    let mut s = format!("{sign}{}", &m[..1]);
    if m.len() > 1 {
        s.push('.');
        s.push_str(&m[1..]);
    }
    format!("{s}e{}{}", if e >= 0 { "+" } else { "-" }, e.abs())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::testing::{n, rt};

    use crate::vm::object::NativeFn;

    use crate::vm::task::Task;

    enum A {
        N(f64),
        S(&'static str),
        V(Value),
    }

    /// Calls `f(this, ...args)`; `Ok(String(result))` or `Err("Name: message")`.
    fn call(f: NativeFn, this: A, args: &[A]) -> Result<String, String> {
        let mut rt = rt();
        let task = Task::new(0);
        let mut ctx = NativeCtx { rt: &mut rt, task: &task };
        let mut conv = |a: &A| match a {
            A::N(x) => n(*x),
            A::S(s) => ctx.str(*s),
            A::V(v) => *v,
        };
        let this = conv(&this);
        let args: Vec<Value> = args.iter().map(conv).collect();
        match f(&mut ctx, this, &args) {
            Ok(v) if v.is_number() && v.as_number() == 0.0 && v.as_number().is_sign_negative() => Ok("-0".into()),
            Ok(v) => Ok(ops::to_display(v)),
            Err(e) => Err(ops::to_display(e)),
        }
    }

    fn m(f: NativeFn, x: f64, args: &[A]) -> String {
        call(f, A::N(x), args).unwrap()
    }

    #[test]
    fn range_errors_match_v8() {
        let e = |f: NativeFn, x: f64, d: f64| call(f, A::N(x), &[A::N(d)]).unwrap_err();
        assert_eq!(e(to_fixed, 1.005, 101.0), "RangeError: toFixed() digits argument must be between 0 and 100");
        assert_eq!(e(to_fixed, 1.005, -1.0), "RangeError: toFixed() digits argument must be between 0 and 100");
        assert_eq!(e(number_to_string, 255.0, 1.0), "RangeError: toString() radix argument must be between 2 and 36");
        assert_eq!(e(number_to_string, 255.0, 37.0), "RangeError: toString() radix argument must be between 2 and 36");
        assert_eq!(e(to_precision, 1.0, 0.0), "RangeError: toPrecision() argument must be between 1 and 100");
        assert_eq!(e(to_precision, 1.0, 101.0), "RangeError: toPrecision() argument must be between 1 and 100");
        assert_eq!(e(to_exponential, 1.0, 101.0), "RangeError: toExponential() argument must be between 0 and 100");
        assert!(call(to_fixed, A::N(1.0), &[A::S("2")]).unwrap_err().starts_with("TypeError"));
        assert!(call(to_fixed, A::S("x"), &[]).unwrap_err().starts_with("TypeError"));
    }

    #[test]
    fn to_precision_like_v8() {
        let cases = [
            (123.456, 4.0, "123.5"),
            (0.000001234, 2.0, "0.0000012"),
            (1e21, 3.0, "1.00e+21"),
            (123456.0, 2.0, "1.2e+5"),
            (2.5, 1.0, "3"),
            (-0.0, 3.0, "0.00"),
            (0.0, 1.0, "0"),
            (1.45, 2.0, "1.4"),
            (99.99, 3.0, "100"),
            (-1.5, 1.0, "-2"),
            (1e-7, 1.0, "1e-7"),
            (0.00001, 1.0, "0.00001"),
            (1234.5, 4.0, "1235"),
        ];
        for (x, p, want) in cases {
            assert_eq!(m(to_precision, x, &[A::N(p)]), want, "{x}.toPrecision({p})");
        }
        assert_eq!(m(to_precision, f64::NAN, &[A::N(2.0)]), "NaN");
        assert_eq!(m(to_precision, 123.0, &[]), "123");
    }

    #[test]
    fn to_exponential_like_v8() {
        let cases: [(f64, Option<f64>, &str); 10] = [
            (123.456, Some(2.0), "1.23e+2"),
            (0.0, None, "0e+0"),
            (0.0, Some(2.0), "0.00e+0"),
            (1.5, Some(0.0), "2e+0"),
            (2.5, Some(0.0), "3e+0"),
            (123456.0, None, "1.23456e+5"),
            (-1e-7, Some(3.0), "-1.000e-7"),
            (1e21, None, "1e+21"),
            (f64::INFINITY, Some(2.0), "Infinity"),
            (0.1, Some(20.0), "1.00000000000000005551e-1"),
        ];
        for (x, f, want) in cases {
            let args: Vec<A> = f.map(A::N).into_iter().collect();
            assert_eq!(m(to_exponential, x, &args), want, "{x}.toExponential({f:?})");
        }
        assert_eq!(m(to_exponential, 1.5e-300, &[]), "1.5e-300");
        assert_eq!(m(to_exponential, 0.000123, &[]), "1.23e-4");
    }

    #[test]
    fn to_fixed_and_to_string() {
        assert_eq!(m(number_to_string, 255.0, &[A::N(16.0)]), "ff");
        assert_eq!(m(number_to_string, 0.5, &[A::N(2.0)]), "0.1");
        assert_eq!(m(number_to_string, -255.0, &[A::N(36.0)]), "-73");
        assert_eq!(m(number_to_string, -0.0, &[]), "0");
        assert_eq!(m(number_to_string, 1e21, &[A::N(10.0)]), "1e+21");
        assert_eq!(m(to_fixed, 1.5, &[]), "2");
        assert_eq!(m(to_fixed, 2.5, &[A::N(0.0)]), "3");
        assert_eq!(m(to_fixed, -1.5, &[A::N(0.0)]), "-2");
        assert_eq!(m(to_fixed, 1e21, &[A::N(2.0)]), "1e+21");
        assert_eq!(m(to_fixed, -0.0, &[A::N(2.0)]), "0.00");
        assert_eq!(m(to_fixed, 0.000001, &[A::N(7.0)]), "0.0000010");
        assert_eq!(m(to_fixed, 0.1, &[A::N(20.0)]), "0.10000000000000000555");
        assert_eq!(m(number_value_of, 5.0, &[]), "5");
        assert_eq!(call(boolean_to_string, A::V(Value::TRUE), &[]).unwrap(), "true");
        assert_eq!(call(boolean_value_of, A::V(Value::FALSE), &[]).unwrap(), "false");
    }

    #[test]
    fn conversions() {
        let u = A::V(Value::UNDEFINED);
        let num = |args: &[A]| call(number_call, A::V(Value::UNDEFINED), args).unwrap();
        assert_eq!(num(&[A::S("  12  ")]), "12");
        assert_eq!(num(&[A::S("")]), "0");
        assert_eq!(num(&[A::S("0x1f")]), "31");
        assert_eq!(num(&[A::S("1e3")]), "1000");
        assert_eq!(num(&[A::S("abc")]), "NaN");
        assert_eq!(num(&[A::V(Value::NULL)]), "0");
        assert_eq!(num(&[A::V(Value::UNDEFINED)]), "NaN");
        assert_eq!(num(&[A::V(Value::TRUE)]), "1");
        assert_eq!(num(&[]), "0");
        let s = |args: &[A]| call(string_call, A::V(Value::UNDEFINED), args).unwrap();
        assert_eq!(s(&[A::N(-0.0)]), "0");
        assert_eq!(s(&[A::V(Value::NULL)]), "null");
        assert_eq!(s(&[]), "");
        assert_eq!(s(&[A::N(1e21)]), "1e+21");
        let b = |args: &[A]| call(boolean_call, A::V(Value::UNDEFINED), args).unwrap();
        assert_eq!(b(&[A::S("")]), "false");
        assert_eq!(b(&[A::S("0")]), "true");
        assert_eq!(b(&[A::N(f64::NAN)]), "false");
        assert_eq!(b(&[]), "false");
        let g = |f: NativeFn, args: &[A]| call(f, A::V(Value::UNDEFINED), args).unwrap();
        assert_eq!(g(parse_int, &[A::S("  42px")]), "42");
        assert_eq!(g(parse_int, &[A::S("0x1F")]), "31");
        assert_eq!(g(parse_int, &[A::S("101"), A::N(2.0)]), "5");
        assert_eq!(g(parse_int, &[A::S("")]), "NaN");
        assert_eq!(g(parse_int, &[A::N(0.0000005)]), "5");
        assert_eq!(g(parse_int, &[A::V(Value::NULL)]), "NaN");
        assert_eq!(g(parse_float, &[A::S("3.14abc")]), "3.14");
        assert_eq!(g(parse_float, &[A::S(".5")]), "0.5");
        assert_eq!(g(parse_float, &[A::S("-Infinityx")]), "-Infinity");
        assert_eq!(g(global_is_nan, &[A::S("abc")]), "true");
        assert_eq!(g(global_is_nan, &[A::S("12")]), "false");
        assert_eq!(g(global_is_finite, &[A::S("12")]), "true");
        assert_eq!(g(global_is_finite, &[A::V(Value::NULL)]), "true");
        assert_eq!(g(global_is_nan, &[u]), "true");
        assert_eq!(g(is_integer, &[A::N(5.0)]), "true");
        assert_eq!(g(is_integer, &[A::S("5")]), "false");
        assert_eq!(g(number_is_finite, &[A::S("5")]), "false");
        assert_eq!(g(number_is_nan, &[A::S("x")]), "false");
        assert_eq!(g(number_is_nan, &[A::N(f64::NAN)]), "true");
        assert_eq!(g(is_safe_integer, &[A::N(9007199254740992.0)]), "false");
        assert_eq!(g(is_safe_integer, &[A::N(9007199254740991.0)]), "true");
    }

    #[test]
    fn installed_where_scripts_find_them() {
        let rt = rt();
        let c = rt.realm.classes;
        for (class, name) in [(c.number, "isInteger"), (c.number, "MAX_SAFE_INTEGER"), (c.number, "EPSILON")] {
            assert!(Builder::class_data(class).statics.get(Atom::intern(name)).is_some(), "{name}");
        }
        for class in [c.number, c.string, c.boolean] {
            assert!(ops::is_callable(Builder::class_data(class).call));
        }
        assert!(rt.realm.methods.number.get(Atom::intern("toFixed")).is_some());
        assert!(rt.realm.methods.boolean.get(Atom::intern("toString")).is_some());
        let g = |name: &str| rt.realm.globals[crate::builtins::global_slot(name)];
        assert!(ops::is_callable(g("parseInt")) && ops::is_callable(g("isFinite")));
        assert_eq!(Builder::class_data(c.number).statics.get(Atom::intern("parseInt")), Some(g("parseInt")));
    }
}
