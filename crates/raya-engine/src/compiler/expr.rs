//! Expressions: values into registers, conditions into jumps, calls,
//! optional chains, assignments and updates.

use super::codegen::{Access, Codegen, FnKind, Loc};
use super::decls::{has_assign, key_name, mentions, number_key, number_literal, unwrap_erased};
use super::resolve::{BindKind, Ref};
use crate::builtins::global_slot;
use crate::bytecode::*;
use crate::syntax::ast::*;

/// Whether compiling `e` straight into a variable's own register could
/// clobber the variable before `e` has finished reading it (`x = [x]`,
/// `x = y || x`, `x = x++`): such values go through a temporary.
pub(crate) fn needs_temp(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Array(_)
        | ExprKind::Object(_)
        | ExprKind::Logical(..)
        | ExprKind::Class(_)
        | ExprKind::Sequence(_)
        | ExprKind::Assign { .. }
        | ExprKind::Update { .. } => true,
        ExprKind::Conditional { then, otherwise, .. } => needs_temp(then) || needs_temp(otherwise),
        ExprKind::As(a, _) | ExprKind::NonNull(a) => needs_temp(a),
        _ => false,
    }
}

fn arg_has_assign(a: &Argument) -> bool {
    match a {
        Argument::Expr(e) | Argument::Spread(e) => has_assign(e),
    }
}

fn is_chain(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Member { .. } | ExprKind::Index { .. } | ExprKind::Call { .. })
}

/// The `imm` of `AddI` for `x + k` / `x - k`, if `k` is a small integer.
/// `x + k` uses `AddI`'s `plus` form (see [`addi`]), whose slow path is
/// `+`'s, so it concatenates strings like `Add`.
pub(crate) fn addi_imm(op: BinaryOp, k: &Expr) -> Option<i16> {
    let n = number_literal(k)?;
    let v = match op {
        BinaryOp::Add => n,
        BinaryOp::Sub => -n,
        _ => return None,
    };
    (v.fract() == 0.0 && v >= i16::MIN as f64 && v <= i16::MAX as f64 && !(v == 0.0 && v.is_sign_negative()))
        .then_some(v as i16)
}

/// For `x === null` or `null === x` (`undefined` likewise): `x`, and
/// whether the constant is `undefined` (the operands of `JmpIfNil`).
fn nil_operand<'e>(a: &'e Expr, b: &'e Expr) -> Option<(&'e Expr, bool)> {
    let nil = |e: &Expr| match unwrap_erased(e).kind {
        ExprKind::Null => Some(false),
        ExprKind::Undefined => Some(true),
        _ => None,
    };
    match (nil(a), nil(b)) {
        (_, Some(undef)) => Some((a, undef)),
        (Some(undef), None) => Some((b, undef)),
        (None, None) => None,
    }
}

/// The constant of the compare-with-constant jumps (`JmpIfNotLtI` and
/// kin) for `x < k`, if `k` is a small integer literal. `-0` compares as
/// `0`, so it qualifies too.
fn cmp_imm(k: &Expr) -> Option<i16> {
    let n = number_literal(k)?;
    (n.fract() == 0.0 && n >= i16::MIN as f64 && n <= i16::MAX as f64).then_some(n as i16)
}

/// The `imm` of an instruction with a small-integer right operand:
/// `AddI` ([`addi_imm`]), `MulI` (`x * 2`), `ModI` (`x % 3`) and
/// `StrictEqI` (`x === 0`, `x !== 1`). Not `-0`, whose product and
/// remainder differ from `0`'s.
pub(crate) fn imm_operand(op: BinaryOp, k: &Expr) -> Option<i16> {
    if let Some(imm) = addi_imm(op, k) {
        return Some(imm);
    }
    if !matches!(op, BinaryOp::Mul | BinaryOp::Rem | BinaryOp::StrictEq | BinaryOp::StrictNotEq) {
        return None;
    }
    let n = number_literal(k)?;
    (n.fract() == 0.0 && n >= i16::MIN as f64 && n <= i16::MAX as f64 && !(n == 0.0 && n.is_sign_negative()))
        .then_some(n as i16)
}

/// The instruction for `x op k` where [`imm_operand`] gave `imm`.
fn imm_op(op: BinaryOp, dst: Reg, src: Reg, imm: i16) -> Instr {
    match op {
        BinaryOp::Mul => Instr::MulI { dst, src, imm },
        BinaryOp::Rem => Instr::ModI { dst, src, imm },
        BinaryOp::StrictEq | BinaryOp::StrictNotEq => {
            Instr::StrictEqI { dst, src, imm, ne: op == BinaryOp::StrictNotEq }
        }
        _ => addi(op, dst, src, imm),
    }
}

/// `AddI` for `x op k` where [`addi_imm`] gave `imm`: with `+`'s meaning
/// for anything but numbers when `op` is `+`.
pub(crate) fn addi(op: BinaryOp, dst: Reg, src: Reg, imm: i16) -> Instr {
    Instr::AddI { dst, src, imm, plus: op == BinaryOp::Add }
}

fn binop(op: BinaryOp, dst: Reg, a: Reg, b: Reg) -> Instr {
    match op {
        BinaryOp::Add => Instr::Add { dst, a, b },
        BinaryOp::Sub => Instr::Sub { dst, a, b },
        BinaryOp::Mul => Instr::Mul { dst, a, b },
        BinaryOp::Div => Instr::Div { dst, a, b },
        BinaryOp::Rem => Instr::Mod { dst, a, b },
        BinaryOp::Pow => Instr::Pow { dst, a, b },
        BinaryOp::Eq => Instr::LooseEq { dst, a, b },
        BinaryOp::NotEq => Instr::LooseNe { dst, a, b },
        BinaryOp::StrictEq => Instr::StrictEq { dst, a, b },
        BinaryOp::StrictNotEq => Instr::StrictNe { dst, a, b },
        BinaryOp::Lt => Instr::Lt { dst, a, b },
        BinaryOp::LtEq => Instr::Le { dst, a, b },
        BinaryOp::Gt => Instr::Gt { dst, a, b },
        BinaryOp::GtEq => Instr::Ge { dst, a, b },
        BinaryOp::BitAnd => Instr::BitAnd { dst, a, b },
        BinaryOp::BitOr => Instr::BitOr { dst, a, b },
        BinaryOp::BitXor => Instr::BitXor { dst, a, b },
        BinaryOp::Shl => Instr::Shl { dst, a, b },
        BinaryOp::Shr => Instr::Shr { dst, a, b },
        BinaryOp::UShr => Instr::UShr { dst, a, b },
        BinaryOp::In => Instr::In { dst, a, b },
        BinaryOp::InstanceOf => Instr::InstanceOf { dst, a, b },
    }
}

/// A constant's truthiness, for conditions on literals.
fn const_truthy(e: &Expr) -> Option<bool> {
    match &e.kind {
        ExprKind::Bool(b) => Some(*b),
        ExprKind::Number(n) => Some(*n != 0.0 && !n.is_nan()),
        ExprKind::String(s) => Some(!s.is_empty()),
        ExprKind::Null | ExprKind::Undefined => Some(false),
        _ => None,
    }
}

/// A string key usable as a named property (`a["x"]` as `a.x`).
fn plain_name(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

impl<'a> Codegen<'a> {
    pub(crate) fn expr(&mut self, e: &'a Expr, dst: Reg) {
        self.expr_named(e, dst, None)
    }

    /// Compiles `e` into `dst`; `name` is the name an anonymous function or
    /// class gets from where it is assigned.
    pub(crate) fn expr_named(&mut self, e: &'a Expr, dst: Reg, name: Option<&str>) {
        let pos = e.span.start;
        match &e.kind {
            ExprKind::Number(n) => self.load_number(dst, *n, pos),
            ExprKind::String(s) => self.load_string(dst, s, pos),
            ExprKind::Template(parts) => self.template(parts, dst, pos),
            ExprKind::Regex { pattern, flags } => {
                let k = self.k_str(&format!("/{pattern}/{flags}"));
                self.emit(Instr::NewRegExp { dst, k }, pos);
            }
            ExprKind::Bool(true) => {
                self.emit(Instr::LoadTrue { dst }, pos);
            }
            ExprKind::Bool(false) => {
                self.emit(Instr::LoadFalse { dst }, pos);
            }
            ExprKind::Null => {
                self.emit(Instr::LoadNull { dst }, pos);
            }
            ExprKind::Undefined | ExprKind::Error => {
                self.emit(Instr::LoadUndef { dst }, pos);
            }
            ExprKind::Ident(i) => {
                let a = self.ident_access(i);
                self.load_access(a, dst, pos);
            }
            ExprKind::This => {
                let r = self.res.refs.get(&pos).copied();
                let a = self.ref_access(r);
                self.load_access(a, dst, pos);
            }
            ExprKind::Super => {
                self.error(e.span, "`super` must be called or used to access a property", "bare `super`");
                self.emit(Instr::LoadUndef { dst }, pos);
            }
            ExprKind::Array(elems) => self.array_lit(elems, dst, pos),
            ExprKind::Object(props) => self.object_lit(props, dst, pos),
            ExprKind::Function(f) => self.closure_expr(f, dst, name),
            ExprKind::Class(c) => {
                let n = c.name.as_ref().map(|n| n.name.as_str()).or(name).unwrap_or("");
                self.class(c, dst, n, None)
            }
            ExprKind::Unary(op, a) => self.unary(*op, a, dst, pos),
            ExprKind::Update { increment, prefix, target } => self.update(target, *increment, *prefix, Some(dst), pos),
            ExprKind::Binary(op, a, b) => self.binary(*op, a, b, dst, pos),
            ExprKind::Logical(op, a, b) => {
                self.expr(a, dst);
                let j = self.short_circuit_jump(*op, dst, pos);
                self.expr(b, dst);
                self.patch_here(j);
            }
            ExprKind::Assign { op, target, value } => self.assign(*op, target, value, Some(dst), pos),
            ExprKind::Conditional { cond, then, otherwise } => {
                let to_else = self.cond_jump(cond, false);
                self.expr_named(then, dst, name);
                let to_end = self.emit_jmp(pos);
                self.patch_all_here(to_else);
                self.expr_named(otherwise, dst, name);
                self.patch_here(to_end);
            }
            ExprKind::Member { .. } | ExprKind::Index { .. } | ExprKind::Call { .. } => {
                let mut sc = Vec::new();
                self.chain(e, dst, &mut sc, false);
                self.land_short_circuit(sc, dst, pos);
            }
            ExprKind::New { callee, args } => self.new_expr(callee, args, dst, pos),
            ExprKind::TaggedTemplate { tag, cooked, raw, exprs } => {
                self.tagged_template(e, tag, cooked, raw, exprs, dst)
            }
            ExprKind::PrivateIn { name, object } => {
                if matches!(object.kind, ExprKind::Error) {
                    self.error(name.span, "a private name can only be used after `.` or before `in`", "private name");
                    self.emit(Instr::LoadUndef { dst }, pos);
                    return;
                }
                let k = self.k_private(&name.name, name.span);
                let m = self.mark();
                let r = self.expr_reg(object);
                self.emit(Instr::HasPrivate { dst, obj: r, name: k }, self.op_pos(name.span.end));
                self.free_to(m);
            }
            ExprKind::Sequence(es) => {
                if let Some((last, init)) = es.split_last() {
                    for x in init {
                        self.expr_effect(x);
                    }
                    self.expr_named(last, dst, name);
                } else {
                    self.emit(Instr::LoadUndef { dst }, pos);
                }
            }
            ExprKind::Await(a) => {
                let m = self.mark();
                let r = self.expr_reg(a);
                self.emit(Instr::Await { dst, src: r }, pos);
                self.free_to(m);
            }
            ExprKind::Yield { arg, delegate: false } => {
                let m = self.mark();
                let r = match arg {
                    Some(a) => self.expr_reg(a),
                    None => {
                        let t = self.alloc();
                        self.emit(Instr::LoadUndef { dst: t }, pos);
                        t
                    }
                };
                let r = if self.f().async_gen {
                    // `yield e` in an async generator is `yield await e`.
                    let t = self.alloc();
                    self.emit(Instr::Await { dst: t, src: r }, pos);
                    t
                } else {
                    r
                };
                self.emit(Instr::Yield { dst, src: r }, pos);
                self.free_to(m);
                self.yield_return_path(dst, pos);
            }
            ExprKind::Yield { arg: Some(a), delegate: true } => self.yield_star(a, dst, pos),
            ExprKind::Yield { arg: None, delegate: true } => {
                self.emit(Instr::LoadUndef { dst }, pos);
            }
            ExprKind::Spawn(a) => {
                let call = unwrap_erased(a);
                if let ExprKind::Call { .. } = call.kind {
                    let mut sc = Vec::new();
                    self.chain(call, dst, &mut sc, true);
                    self.land_short_circuit(sc, dst, pos);
                } else {
                    self.expr(a, dst);
                }
            }
            ExprKind::As(a, _) | ExprKind::NonNull(a) => self.expr_named(a, dst, name),
        }
    }

    /// A register holding the value of `e`: a local's own register when `e`
    /// is a plain local variable, else a new temporary.
    pub(crate) fn expr_reg(&mut self, e: &'a Expr) -> Reg {
        if let Some(r) = self.hoisted_const(e) {
            return r;
        }
        let u = unwrap_erased(e);
        let a = match &u.kind {
            ExprKind::Ident(i) => Some(self.ident_access(i)),
            ExprKind::This => {
                let r = self.res.refs.get(&u.span.start).copied();
                Some(self.ref_access(r))
            }
            _ => None,
        };
        if let Some(Access::Reg(r)) = a {
            return r;
        }
        let t = self.alloc();
        self.expr(e, t);
        t
    }

    pub(crate) fn expr_reg_named(&mut self, e: &'a Expr, name: Option<&str>) -> Reg {
        if name.is_some() && matches!(unwrap_erased(e).kind, ExprKind::Function(_) | ExprKind::Class(_)) {
            let t = self.alloc();
            self.expr_named(e, t, name);
            return t;
        }
        self.expr_reg(e)
    }

    /// Always a new temporary (a copy even of a local).
    pub(crate) fn expr_temp(&mut self, e: &'a Expr) -> Reg {
        let t = self.alloc();
        self.expr(e, t);
        t
    }

    /// Evaluates `e` for its effects only.
    pub(crate) fn expr_effect(&mut self, e: &'a Expr) {
        let pos = e.span.start;
        match &e.kind {
            ExprKind::Number(_)
            | ExprKind::String(_)
            | ExprKind::Bool(_)
            | ExprKind::Null
            | ExprKind::Undefined
            | ExprKind::Ident(_)
            | ExprKind::This
            | ExprKind::Function(_)
            | ExprKind::Error => {}
            ExprKind::Assign { op, target, value } => self.assign(*op, target, value, None, pos),
            ExprKind::Update { increment, prefix, target } => self.update(target, *increment, *prefix, None, pos),
            ExprKind::Sequence(es) => {
                for x in es {
                    self.expr_effect(x);
                }
            }
            ExprKind::As(a, _) | ExprKind::NonNull(a) | ExprKind::Unary(UnaryOp::Void, a) => self.expr_effect(a),
            ExprKind::Logical(LogicalOp::And, a, b) => {
                let j = self.cond_jump(a, false);
                self.expr_effect(b);
                self.patch_all_here(j);
            }
            ExprKind::Logical(LogicalOp::Or, a, b) => {
                let j = self.cond_jump(a, true);
                self.expr_effect(b);
                self.patch_all_here(j);
            }
            ExprKind::Conditional { cond, then, otherwise } => {
                let to_else = self.cond_jump(cond, false);
                self.expr_effect(then);
                let to_end = self.emit_jmp(pos);
                self.patch_all_here(to_else);
                self.expr_effect(otherwise);
                self.patch_here(to_end);
            }
            _ => {
                let m = self.mark();
                let t = self.alloc();
                self.expr(e, t);
                self.free_to(m);
            }
        }
    }

    // ---- conditions ------------------------------------------------------------

    /// Compiles `e` as a condition: returns the jumps taken when its
    /// truthiness equals `jump_if` (falls through otherwise).
    pub(crate) fn cond_jump(&mut self, e: &'a Expr, jump_if: bool) -> Vec<usize> {
        let e = unwrap_erased(e);
        let pos = e.span.start;
        if let Some(t) = const_truthy(e) {
            return if t == jump_if { vec![self.emit_jmp(pos)] } else { Vec::new() };
        }
        match &e.kind {
            ExprKind::Unary(UnaryOp::Not, a) => self.cond_jump(a, !jump_if),
            ExprKind::Logical(LogicalOp::And, a, b) => {
                if jump_if {
                    let fa = self.cond_jump(a, false);
                    let tb = self.cond_jump(b, true);
                    self.patch_all_here(fa);
                    tb
                } else {
                    let mut fa = self.cond_jump(a, false);
                    fa.extend(self.cond_jump(b, false));
                    fa
                }
            }
            ExprKind::Logical(LogicalOp::Or, a, b) => {
                if jump_if {
                    let mut ta = self.cond_jump(a, true);
                    ta.extend(self.cond_jump(b, true));
                    ta
                } else {
                    let ta = self.cond_jump(a, true);
                    let fb = self.cond_jump(b, false);
                    self.patch_all_here(ta);
                    fb
                }
            }
            ExprKind::Binary(op @ (BinaryOp::StrictEq | BinaryOp::StrictNotEq), a, b)
                if nil_operand(a, b).is_some() =>
            {
                // `if (x === null)`: the constant is an operand of the jump
                // (the literal side has no effect to evaluate).
                let (x, undef) = nil_operand(a, b).unwrap_or((a, false));
                let eq = (*op == BinaryOp::StrictEq) == jump_if;
                let m = self.mark();
                let r = self.expr_reg(x);
                let j = self.emit(Instr::JmpIfNil { src: r, off: 0, undef, eq }, pos);
                self.free_to(m);
                vec![j]
            }
            ExprKind::Binary(op @ (BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq), a, b)
                if !jump_if && cmp_imm(b).is_some() =>
            {
                // `if (n < 2)`: the constant is an operand of the jump.
                let imm = cmp_imm(b).unwrap_or_default();
                let m = self.mark();
                let a_r = self.expr_reg(a);
                let i = match op {
                    BinaryOp::Lt => Instr::JmpIfNotLtI { a: a_r, imm, off: 0 },
                    BinaryOp::LtEq => Instr::JmpIfNotLeI { a: a_r, imm, off: 0 },
                    BinaryOp::Gt => Instr::JmpIfNotGtI { a: a_r, imm, off: 0 },
                    _ => Instr::JmpIfNotGeI { a: a_r, imm, off: 0 },
                };
                let j = self.emit(i, self.binop_pos(a));
                self.free_to(m);
                vec![j]
            }
            ExprKind::Binary(op @ (BinaryOp::Lt | BinaryOp::LtEq | BinaryOp::Gt | BinaryOp::GtEq), a, b) => {
                let m = self.mark();
                let (ra, rb) = self.operands(a, b);
                // `a > b` is `b < a`, `a >= b` is `b <= a`; the `Not` forms
                // jump when the comparison is false (NaN included).
                let swapped = matches!(op, BinaryOp::Gt | BinaryOp::GtEq);
                let (x, y) = if swapped { (rb, ra) } else { (ra, rb) };
                let strict = matches!(op, BinaryOp::Lt | BinaryOp::Gt);
                let i = match (strict, jump_if) {
                    (true, false) => Instr::JmpIfNotLt { a: x, b: y, off: 0, swapped },
                    (false, false) => Instr::JmpIfNotLe { a: x, b: y, off: 0, swapped },
                    (true, true) => Instr::JmpIfLt { a: x, b: y, off: 0, swapped },
                    (false, true) => Instr::JmpIfLe { a: x, b: y, off: 0, swapped },
                };
                let j = self.emit(i, self.binop_pos(a));
                self.free_to(m);
                vec![j]
            }
            _ => {
                let m = self.mark();
                let r = self.expr_reg(e);
                let j = if jump_if {
                    self.emit(Instr::JmpIfTrue { cond: r, off: 0 }, pos)
                } else {
                    self.emit(Instr::JmpIfFalse { cond: r, off: 0 }, pos)
                };
                self.free_to(m);
                vec![j]
            }
        }
    }

    /// For `a && b` / `a || b` / `a ?? b` with `a` in `r`: the jump that
    /// skips `b`.
    fn short_circuit_jump(&mut self, op: LogicalOp, r: Reg, pos: u32) -> usize {
        match op {
            LogicalOp::And => self.emit(Instr::JmpIfFalse { cond: r, off: 0 }, pos),
            LogicalOp::Or => self.emit(Instr::JmpIfTrue { cond: r, off: 0 }, pos),
            LogicalOp::Nullish => self.emit(Instr::JmpIfNotNullish { src: r, off: 0 }, pos),
        }
    }

    // ---- operators ---------------------------------------------------------------

    /// Both operands in registers, evaluated left to right. A local
    /// operand is copied first when the right one may assign it.
    pub(crate) fn operands(&mut self, a: &'a Expr, b: &'a Expr) -> (Reg, Reg) {
        let ra = if has_assign(b) { self.expr_temp(a) } else { self.expr_reg(a) };
        let rb = self.expr_reg(b);
        (ra, rb)
    }

    fn binary(&mut self, op: BinaryOp, a: &'a Expr, b: &'a Expr, dst: Reg, _pos: u32) {
        // Errors (`null + 1`) are reported at the operator, as V8 does.
        let pos = self.binop_pos(a);
        if op == BinaryOp::Add && self.string_chain(a, b, dst, pos) {
            return;
        }
        let m = self.mark();
        if let Some(imm) = imm_operand(op, b) {
            let ra = self.expr_reg(a);
            self.emit(imm_op(op, dst, ra, imm), pos);
        } else if self.is_temp(dst) && !self.is_register_operand(a) {
            // The left operand is computed straight into the (temporary)
            // destination: a chain `a + b + c + …` needs no more registers
            // than `a + b`.
            self.expr(a, dst);
            let rb = self.expr_reg(b);
            self.emit(binop(op, dst, dst, rb), pos);
        } else {
            let (ra, rb) = self.operands(a, b);
            self.emit(binop(op, dst, ra, rb), pos);
        }
        self.free_to(m);
    }

    /// `x1 + x2 + … + xn` (n ≥ 3) whose first or second operand is a
    /// string literal: every `+` of it concatenates strings, so it is built
    /// once (`Concat`) instead of through n - 2 intermediate strings. Each
    /// operand is converted (`ToString`, which calls a user `toString`)
    /// right after it is evaluated, where the `+` would have converted it,
    /// so conversions and the operands' side effects keep their order.
    /// Returns false (nothing emitted) for any other `+`.
    fn string_chain(&mut self, a: &'a Expr, b: &'a Expr, dst: Reg, pos: u32) -> bool {
        let mut parts = vec![b];
        let mut left = a;
        while let ExprKind::Binary(BinaryOp::Add, l, r) = &left.kind {
            parts.push(r);
            left = l;
        }
        parts.push(left);
        parts.reverse();
        let is_str = |e: &Expr| matches!(e.kind, ExprKind::String(_) | ExprKind::Template(_));
        if parts.len() < 3 || !(is_str(parts[0]) || is_str(parts[1])) || parts.len() > u16::MAX as usize {
            return false;
        }
        let m = self.mark();
        let base = self.mark();
        for _ in 0..parts.len() {
            self.alloc();
        }
        for (i, e) in parts.iter().enumerate() {
            let r = super::codegen::clamp_reg(base + i as u32);
            self.expr(e, r);
            if !is_str(e) {
                self.emit(Instr::ToString { dst: r, src: r }, pos);
            }
        }
        let count = parts.len() as u16;
        self.emit(Instr::Concat { dst, start: super::codegen::clamp_reg(base), count }, pos);
        self.free_to(m);
        true
    }

    /// The position of the operator after left operand `a`: the first
    /// character after it that is neither blank nor a closing parenthesis.
    fn binop_pos(&self, a: &Expr) -> u32 {
        let bytes = self.src.as_bytes();
        let mut i = a.span.end as usize;
        while i < bytes.len() && (bytes[i].is_ascii_whitespace() || bytes[i] == b')') {
            i += 1;
        }
        if i < bytes.len() {
            i as u32
        } else {
            a.span.end
        }
    }

    /// Whether `e` already sits in a register (a local variable, `this`, a
    /// hoisted loop constant): no code to compute it.
    fn is_register_operand(&mut self, e: &'a Expr) -> bool {
        self.hoisted_const(e).is_some() || self.local_reg(e).is_some()
    }

    /// The register of `e` when it is a local held in a register (or
    /// `this`), to be read in place with no code emitted.
    fn local_reg(&mut self, e: &'a Expr) -> Option<Reg> {
        let u = unwrap_erased(e);
        let a = match &u.kind {
            ExprKind::Ident(i) => self.ident_access(i),
            ExprKind::This => {
                let r = self.res.refs.get(&u.span.start).copied();
                self.ref_access(r)
            }
            _ => return None,
        };
        match a {
            Access::Reg(r) => Some(r),
            _ => None,
        }
    }

    fn unary(&mut self, op: UnaryOp, a: &'a Expr, dst: Reg, pos: u32) {
        if op == UnaryOp::Neg {
            if let Some(n) = number_literal(a) {
                self.load_number(dst, -n, pos);
                return;
            }
        }
        if op == UnaryOp::Void {
            self.expr_effect(a);
            self.emit(Instr::LoadUndef { dst }, pos);
            return;
        }
        let m = self.mark();
        let src = self.expr_reg(a);
        let i = match op {
            UnaryOp::Neg => Instr::Neg { dst, src },
            UnaryOp::Plus => Instr::ToNumber { dst, src },
            UnaryOp::Not => Instr::Not { dst, src },
            UnaryOp::BitNot => Instr::BitNot { dst, src },
            UnaryOp::TypeOf => Instr::TypeOf { dst, src },
            UnaryOp::Void => unreachable!(),
        };
        self.emit(i, pos);
        self.free_to(m);
    }

    /// `` tag`a${x}b` ``: `tag(strings, x)`, where `strings` is the call
    /// site's strings array; a member tag (`` o.f`...` ``) gets `o` as
    /// `this`.
    fn tagged_template(
        &mut self,
        e: &'a Expr,
        tag: &'a Expr,
        cooked: &'a [Option<String>],
        raw: &'a [String],
        exprs: &'a [Expr],
        dst: Reg,
    ) {
        let pos = e.span.start;
        let m = self.mark();
        let f = self.call_base(dst);
        let this_r = self.alloc();
        let mut sc = Vec::new();
        let t = unwrap_erased(tag);
        // A member tag is looked up and called by `CallMethod` (which names
        // it in its error), after the arguments.
        let mut method = None;
        let mut this = this_r;
        match &t.kind {
            ExprKind::Member { object, property, .. } if !matches!(object.kind, ExprKind::Super) => {
                self.chain_into(object, this_r, &mut sc);
                method = Some((self.k_member(property), property.span.start));
            }
            ExprKind::Index { object, index, .. } if !matches!(object.kind, ExprKind::Super) => {
                self.chain_into(object, this_r, &mut sc);
                let m2 = self.mark();
                let rk = self.expr_reg(index);
                self.emit(Instr::GetIndex { dst: f, obj: this_r, key: rk }, self.op_pos(object.span.end));
                self.free_to(m2);
            }
            _ => {
                self.expr(tag, f);
                this = NO_THIS;
            }
        }
        let strings = self.alloc();
        let k = self.k_template(cooked, raw);
        self.emit(Instr::LoadK { dst: strings, k }, pos);
        for x in exprs {
            let r = self.alloc();
            self.expr(x, r);
        }
        let argc = (1 + exprs.len()).min(u16::MAX as usize) as u16;
        match method {
            Some((name, at)) => self.emit(Instr::CallMethod { f, name, argc, recv: this_r }, at),
            None => self.emit(Instr::Call { f, argc, callee: f, this }, pos),
        };
        self.finish_call(f, dst, m);
        self.land_short_circuit(sc, dst, pos);
    }

    fn template(&mut self, parts: &'a [TemplatePart], dst: Reg, pos: u32) {
        let parts: Vec<&TemplatePart> =
            parts.iter().filter(|p| !matches!(p, TemplatePart::Str(s) if s.is_empty())).collect();
        if parts.iter().all(|p| matches!(p, TemplatePart::Str(_))) {
            let s: String = parts
                .iter()
                .map(|p| match p {
                    TemplatePart::Str(s) => s.as_str(),
                    TemplatePart::Expr(_) => "",
                })
                .collect();
            self.load_string(dst, &s, pos);
            return;
        }
        let m = self.mark();
        let base = self.mark();
        for _ in 0..parts.len() {
            self.alloc();
        }
        for (i, p) in parts.iter().enumerate() {
            let r = super::codegen::clamp_reg(base + i as u32);
            match p {
                TemplatePart::Str(s) => self.load_string(r, s, pos),
                TemplatePart::Expr(e) => self.expr(e, r),
            }
        }
        let count = parts.len().min(u16::MAX as usize) as u16;
        self.emit(Instr::Concat { dst, start: super::codegen::clamp_reg(base), count }, pos);
        self.free_to(m);
    }

    fn array_lit(&mut self, elems: &'a [ArrayElem], dst: Reg, pos: u32) {
        let cap = elems.len().min(u16::MAX as usize) as u16;
        self.emit(Instr::NewArray { dst, cap }, pos);
        for el in elems {
            let m = self.mark();
            match el {
                ArrayElem::Expr(e) => {
                    let r = self.expr_reg(e);
                    self.emit(Instr::ArrayPush { arr: dst, src: r }, e.span.start);
                }
                ArrayElem::Spread(e) => {
                    let r = self.expr_reg(e);
                    self.emit(Instr::ArraySpread { arr: dst, src: r }, e.span.start);
                }
                ArrayElem::Hole => {
                    self.emit(Instr::ArrayHole { arr: dst }, pos);
                }
            }
            self.free_to(m);
        }
    }

    fn object_lit(&mut self, props: &'a [ObjectProp], dst: Reg, pos: u32) {
        self.emit(Instr::NewObject { dst }, pos);
        for p in props {
            let m = self.mark();
            match p {
                ObjectProp::KeyValue(key, v) => match key {
                    PropKey::Computed(k) => {
                        let rk = self.expr_temp(k);
                        let rv = self.expr_reg(v);
                        self.emit(Instr::DefineIndex { obj: dst, key: rk, src: rv }, k.span.start);
                    }
                    _ => {
                        let name = key_name(key).unwrap_or_default();
                        let rv = self.expr_reg_named(v, Some(&name));
                        let k = self.k_str(&name);
                        self.emit(Instr::DefineProp { obj: dst, name: k, src: rv }, v.span.start);
                    }
                },
                ObjectProp::Spread(e) => {
                    let r = self.expr_reg(e);
                    self.emit(Instr::ObjectSpread { obj: dst, src: r }, e.span.start);
                }
                ObjectProp::Method(key, f) => {
                    let name = key_name(key).unwrap_or_default();
                    let t = self.alloc();
                    let idx = self.function(f, &name, FnKind::Method);
                    self.emit(Instr::Closure { dst: t, proto: idx }, f.span.start);
                    match key {
                        PropKey::Computed(k) => {
                            let rk = self.expr_temp(k);
                            self.emit(Instr::DefineIndex { obj: dst, key: rk, src: t }, k.span.start);
                        }
                        _ => {
                            let k = self.k_str(&name);
                            self.emit(Instr::DefineProp { obj: dst, name: k, src: t }, f.span.start);
                        }
                    }
                }
                ObjectProp::Getter(key, f) | ObjectProp::Setter(key, f) => {
                    let kind =
                        if matches!(p, ObjectProp::Getter(..)) { MethodKind::Getter } else { MethodKind::Setter };
                    match (key_name(key), key) {
                        (Some(name), _) => {
                            let t = self.alloc();
                            let idx = self.function(f, &name, FnKind::Method);
                            self.emit(Instr::Closure { dst: t, proto: idx }, f.span.start);
                            let k = self.k_str(&name);
                            self.emit(Instr::DefineAccessor { obj: dst, name: k, func: t, kind }, f.span.start);
                        }
                        (None, PropKey::Computed(ke)) => {
                            // The key is evaluated before the function is
                            // created, as in JS.
                            let rk = self.expr_temp(ke);
                            let t = self.alloc();
                            let idx = self.function(f, "", FnKind::Method);
                            self.emit(Instr::Closure { dst: t, proto: idx }, f.span.start);
                            self.emit(Instr::DefineAccessorComputed { obj: dst, key: rk, func: t, kind }, f.span.start);
                        }
                        (None, _) => {}
                    }
                }
            }
            self.free_to(m);
        }
    }

    /// A function or arrow expression; a named function expression can
    /// refer to itself by its name.
    fn closure_expr(&mut self, f: &'a Function, dst: Reg, hint: Option<&str>) {
        let name = f.name.as_ref().map(|n| n.name.clone()).or(hint.map(str::to_string)).unwrap_or_default();
        let pos = f.span.start;
        let self_cell = f.name.as_ref().and_then(|n| self.decl_id(n)).filter(|&id| {
            let b = self.binding(id);
            b.kind == BindKind::FnName && b.captured
        });
        let m = self.mark();
        if let Some(id) = self_cell {
            let c = self.alloc();
            self.emit(Instr::NewCell { dst: c }, pos);
            self.set_loc(id, Loc::Cell(c));
            let idx = self.function(f, &name, FnKind::Normal);
            self.emit(Instr::Closure { dst, proto: idx }, pos);
            self.emit(Instr::CellSet { cell: c, src: dst }, pos);
        } else {
            let idx = self.function(f, &name, FnKind::Normal);
            self.emit(Instr::Closure { dst, proto: idx }, pos);
        }
        self.free_to(m);
    }

    // ---- member chains and calls --------------------------------------------------

    /// Lands the short-circuit jumps of an optional chain: the whole chain
    /// is `undefined`.
    pub(crate) fn land_short_circuit(&mut self, sc: Vec<usize>, dst: Reg, pos: u32) {
        if sc.is_empty() {
            return;
        }
        let over = self.emit_jmp(pos);
        self.patch_all_here(sc);
        self.emit(Instr::LoadUndef { dst }, pos);
        self.patch_here(over);
    }

    fn chain_into(&mut self, e: &'a Expr, dst: Reg, sc: &mut Vec<usize>) {
        let u = unwrap_erased(e);
        if is_chain(u) {
            self.chain(u, dst, sc, false)
        } else {
            self.expr(e, dst)
        }
    }

    fn chain_reg(&mut self, e: &'a Expr, sc: &mut Vec<usize>) -> Reg {
        let u = unwrap_erased(e);
        if is_chain(u) {
            let t = self.alloc();
            self.chain(u, t, sc, false);
            t
        } else {
            self.expr_reg(e)
        }
    }

    /// A member access, index or call that may be part of an optional
    /// chain; `sc` collects the jumps that short-circuit the chain.
    fn chain(&mut self, e: &'a Expr, dst: Reg, sc: &mut Vec<usize>, spawn: bool) {
        match &e.kind {
            ExprKind::Member { object, property, optional } => {
                let k = self.k_member(property);
                if matches!(object.kind, ExprKind::Super) {
                    self.emit(Instr::GetSuper { dst, name: k }, property.span.start);
                    return;
                }
                if let Some(g) = self.namespace_member(object, &property.name) {
                    self.emit(Instr::GetGlobal { dst, idx: g }, property.span.start);
                    return;
                }
                let m = self.mark();
                let robj = self.chain_reg(object, sc);
                if *optional {
                    sc.push(self.emit(Instr::JmpIfNullish { src: robj, off: 0 }, property.span.start));
                }
                self.emit(Instr::GetProp { dst, obj: robj, name: k }, property.span.start);
                self.free_to(m);
            }
            ExprKind::Index { object, index, optional } => {
                if matches!(object.kind, ExprKind::Super) {
                    let m = self.mark();
                    let rk = self.expr_reg(index);
                    self.emit(Instr::GetSuperIndex { dst, key: rk }, self.op_pos(object.span.end));
                    self.free_to(m);
                    return;
                }
                let m = self.mark();
                let robj = if has_assign(index) {
                    let t = self.alloc();
                    self.chain_into(object, t, sc);
                    t
                } else {
                    self.chain_reg(object, sc)
                };
                let ipos = self.op_pos(object.span.end);
                if *optional {
                    sc.push(self.emit(Instr::JmpIfNullish { src: robj, off: 0 }, ipos));
                }
                match &unwrap_erased(index).kind {
                    ExprKind::String(s) if plain_name(s) => {
                        let k = self.k_str(s);
                        self.emit(Instr::GetProp { dst, obj: robj, name: k }, ipos);
                    }
                    _ => {
                        let rk = self.expr_reg(index);
                        self.emit(Instr::GetIndex { dst, obj: robj, key: rk }, ipos);
                    }
                }
                self.free_to(m);
            }
            ExprKind::Call { callee, args, optional } => self.call(callee, args, *optional, dst, sc, spawn),
            _ => self.expr(e, dst),
        }
    }

    /// The register to build a call in: `dst` itself when it is the
    /// topmost temporary (no copy of the result), else a new one.
    fn call_base(&mut self, dst: Reg) -> Reg {
        let next = self.mark();
        if self.is_temp(dst) && dst as u32 + 1 == next {
            dst
        } else {
            self.alloc()
        }
    }

    /// Arguments in consecutive registers from the next free one; `None`
    /// when there is a spread (then one array register holds them all).
    fn push_args(&mut self, args: &'a [Argument], pos: u32) -> Option<u16> {
        if args.iter().any(|a| matches!(a, Argument::Spread(_))) {
            let arr = self.alloc();
            self.emit(Instr::NewArray { dst: arr, cap: args.len().min(u16::MAX as usize) as u16 }, pos);
            for a in args {
                let m = self.mark();
                match a {
                    Argument::Expr(e) => {
                        let r = self.expr_reg(e);
                        self.emit(Instr::ArrayPush { arr, src: r }, e.span.start);
                    }
                    Argument::Spread(e) => {
                        let r = self.expr_reg(e);
                        self.emit(Instr::ArraySpread { arr, src: r }, e.span.start);
                    }
                }
                self.free_to(m);
            }
            return None;
        }
        if args.len() > u16::MAX as usize {
            let span = match &args[0] {
                Argument::Expr(e) | Argument::Spread(e) => e.span,
            };
            self.error(span, "too many arguments in one call (more than 65,535)", "in this call");
        }
        for a in args {
            if let Argument::Expr(e) = a {
                let r = self.alloc();
                self.expr(e, r);
            }
        }
        Some(args.len().min(u16::MAX as usize) as u16)
    }

    fn call(
        &mut self,
        callee: &'a Expr,
        args: &'a [Argument],
        optional: bool,
        dst: Reg,
        sc: &mut Vec<usize>,
        spawn: bool,
    ) {
        let m = self.mark();
        let f = self.call_base(dst);
        let cu = unwrap_erased(callee);
        let spread = args.iter().any(|a| matches!(a, Argument::Spread(_)));
        if !optional && self.is_call_with(cu, args) {
            // `__callWith(fn, thisArg, ...args)`: an ordinary call whose
            // receiver register holds `thisArg` instead of `undefined`.
            let (Argument::Expr(fe), Argument::Expr(te)) = (&args[0], &args[1]) else { unreachable!() };
            let pos = cu.span.start;
            // A local function and `thisArg` are read by `Call` where they
            // are (the prelude's `map`, `filter`, ... pass their
            // parameters), unless a later argument could assign them.
            let in_place = !(spawn || spread);
            let callee = match self.local_reg(fe).filter(|_| in_place && !args[1..].iter().any(arg_has_assign)) {
                Some(r) => r,
                None => {
                    self.expr(fe, f);
                    f
                }
            };
            let this_r = self.alloc();
            let this = match self.local_reg(te).filter(|_| in_place && !args[2..].iter().any(arg_has_assign)) {
                Some(r) => r,
                None => {
                    self.expr(te, this_r);
                    this_r
                }
            };
            let i = match (spawn, self.push_args(&args[2..], pos)) {
                (true, Some(argc)) => Instr::Spawn { f, argc },
                (true, None) => Instr::SpawnSpread { f },
                (false, Some(argc)) => Instr::Call { f, argc, callee, this },
                (false, None) => Instr::CallSpread { f },
            };
            self.emit(i, pos);
            self.finish_call(f, dst, m);
            return;
        }
        let mut method = None;
        // What `Call` reads as the callee and `this` (see `Instr::Call`).
        let mut callee = f;
        let mut this = f + 1;
        let pos;
        match &cu.kind {
            ExprKind::Super => {
                pos = cu.span.start;
                self.alloc(); // f+1: scratch
                let i = match self.push_args(args, pos) {
                    Some(argc) => Instr::SuperCall { f, argc },
                    None => Instr::SuperCallSpread { f },
                };
                self.emit(i, pos);
                self.finish_call(f, dst, m);
                return;
            }
            ExprKind::Member { object, property, optional: member_opt } => {
                pos = property.span.start;
                let k = self.k_member(property);
                let this_r = self.alloc();
                if matches!(object.kind, ExprKind::Super) {
                    self.emit(Instr::GetSuper { dst: f, name: k }, pos);
                    let r = self.res.refs.get(&object.span.start).copied();
                    let a = self.ref_access(r);
                    self.load_access(a, this_r, pos);
                } else if let Some(g) = self.namespace_member(object, &property.name) {
                    self.emit(Instr::GetGlobal { dst: f, idx: g }, pos);
                    if spread || spawn {
                        self.emit(Instr::LoadUndef { dst: this_r }, pos);
                    } else {
                        this = NO_THIS;
                    }
                } else if let Some(r) = self
                    .local_reg(object)
                    .filter(|_| !(optional || spread || spawn || *member_opt || args.iter().any(arg_has_assign)))
                {
                    // `x.m(...)` with `x` a local: `CallMethod` reads the
                    // receiver straight from its register (no argument can
                    // change it first).
                    method = Some((k, r));
                } else {
                    self.chain_into(object, this_r, sc);
                    if *member_opt {
                        sc.push(self.emit(Instr::JmpIfNullish { src: this_r, off: 0 }, pos));
                    }
                    if optional || spread || spawn {
                        self.emit(Instr::GetProp { dst: f, obj: this_r, name: k }, pos);
                    } else {
                        method = Some((k, this_r));
                    }
                }
            }
            ExprKind::Index { object, index, .. } if matches!(object.kind, ExprKind::Super) => {
                pos = cu.span.start;
                let this_r = self.alloc();
                let m2 = self.mark();
                let rk = self.expr_reg(index);
                self.emit(Instr::GetSuperIndex { dst: f, key: rk }, self.op_pos(object.span.end));
                self.free_to(m2);
                let r = self.res.refs.get(&object.span.start).copied();
                let a = self.ref_access(r);
                self.load_access(a, this_r, pos);
            }
            ExprKind::Index { object, index, optional: index_opt } => {
                pos = cu.span.start;
                let this_r = self.alloc();
                self.chain_into(object, this_r, sc);
                if *index_opt {
                    sc.push(self.emit(Instr::JmpIfNullish { src: this_r, off: 0 }, index.span.start));
                }
                let m2 = self.mark();
                let rk = self.expr_reg(index);
                let p = self.op_pos(object.span.end);
                self.emit(Instr::GetIndex { dst: f, obj: this_r, key: rk }, p);
                self.free_to(m2);
            }
            _ => {
                pos = cu.span.start;
                // `g(x)` with `g` a local: `Call` reads it from its register
                // (no argument can change it first), as `CallMethod` does a
                // local receiver.
                match self.local_reg(cu).filter(|_| !(optional || spread || spawn || args.iter().any(arg_has_assign))) {
                    Some(r) => callee = r,
                    None => self.chain_into(cu, f, sc),
                }
                let this_r = self.alloc();
                if optional || spread || spawn {
                    self.emit(Instr::LoadUndef { dst: this_r }, pos);
                } else {
                    this = NO_THIS;
                }
            }
        }
        if optional && method.is_none() {
            sc.push(self.emit(Instr::JmpIfNullish { src: f, off: 0 }, pos));
        }
        let argc = self.push_args(args, pos);
        let i = match (spawn, method, argc) {
            (true, _, Some(argc)) => Instr::Spawn { f, argc },
            (true, _, None) => Instr::SpawnSpread { f },
            (false, Some((name, recv)), Some(argc)) => Instr::CallMethod { f, name, argc, recv },
            (false, _, Some(argc)) => Instr::Call { f, argc, callee, this },
            (false, _, None) => Instr::CallSpread { f },
        };
        self.emit(i, pos);
        self.finish_call(f, dst, m);
    }

    /// Whether `callee(args)` is a direct call of the built-in
    /// `__callWith` with the function and `this` as plain arguments.
    fn is_call_with(&self, callee: &Expr, args: &[Argument]) -> bool {
        let ExprKind::Ident(i) = &callee.kind else { return false };
        i.name == "__callWith"
            && matches!(self.res.refs.get(&i.span.start), Some(Ref::Global(g)) if *g as usize == global_slot("__callWith"))
            && args.len() >= 2
            && matches!((&args[0], &args[1]), (Argument::Expr(_), Argument::Expr(_)))
    }

    fn finish_call(&mut self, f: Reg, dst: Reg, m: u32) {
        if f != dst {
            self.emit_move_last(dst, f);
        }
        self.free_to(m);
    }

    /// `Move dst, src` with the position of the previous instruction.
    fn emit_move_last(&mut self, dst: Reg, src: Reg) {
        let pos = self.f().proto.spans.last().copied().unwrap_or(0);
        self.emit(Instr::Move { dst, src }, pos);
    }

    /// `ns.x` where `ns` is `import * as ns` and `x` one of its exports:
    /// the export's global slot.
    fn namespace_member(&mut self, object: &'a Expr, name: &str) -> Option<u32> {
        let ExprKind::Ident(i) = &unwrap_erased(object).kind else { return None };
        let Some(Ref::Global(g)) = self.res.refs.get(&i.span.start).copied() else { return None };
        self.res.namespaces.get(&g)?.get(name).copied()
    }

    fn new_expr(&mut self, callee: &'a Expr, args: &'a [Argument], dst: Reg, pos: u32) {
        let m = self.mark();
        let f = self.call_base(dst);
        self.expr(callee, f);
        self.alloc(); // f+1: the new object
        let i = match self.push_args(args, pos) {
            Some(argc) => Instr::New { f, argc },
            None => Instr::NewSpread { f },
        };
        self.emit(i, pos);
        self.finish_call(f, dst, m);
    }

    // ---- assignment ---------------------------------------------------------------

    /// `target op= value`; the result goes to `dst` when given.
    pub(crate) fn assign(&mut self, op: AssignOp, target: &'a Pattern, value: &'a Expr, dst: Option<Reg>, pos: u32) {
        let m = self.mark();
        match &target.kind {
            PatternKind::Ident(i) => self.assign_ident(i, op, value, dst, pos),
            PatternKind::Expr(e) => {
                let te = unwrap_erased(e);
                match &te.kind {
                    ExprKind::Ident(i) => self.assign_ident(i, op, value, dst, pos),
                    ExprKind::Member { object, property, .. } => {
                        if matches!(object.kind, ExprKind::Super) {
                            self.error(
                                te.span,
                                "assignment to a `super` property is not supported",
                                "assignment to `super`",
                            );
                        } else {
                            let robj = if has_assign(value) { self.expr_temp(object) } else { self.expr_reg(object) };
                            let k = self.k_member(property);
                            let pos = (self.node_pos(object), self.op_pos(te.span.end));
                            self.assign_prop(robj, PropTarget::Named(k), op, value, dst, pos, Some(&property.name));
                        }
                    }
                    ExprKind::Index { object, index, .. } => {
                        let hazard = has_assign(value) || has_assign(index);
                        let robj = if hazard { self.expr_temp(object) } else { self.expr_reg(object) };
                        let rk = if has_assign(value) { self.expr_temp(index) } else { self.expr_reg(index) };
                        let pos = (self.node_pos(object), self.op_pos(te.span.end));
                        self.assign_prop(robj, PropTarget::Key(rk), op, value, dst, pos, None);
                    }
                    _ => {
                        // Reported by the resolver.
                        let t = self.alloc();
                        self.expr(value, t);
                        if let Some(d) = dst {
                            self.emit(Instr::Move { dst: d, src: t }, pos);
                        }
                    }
                }
            }
            PatternKind::Array { .. } | PatternKind::Object { .. } => {
                let v = match dst {
                    Some(d) => d,
                    None => self.alloc(),
                };
                self.expr(value, v);
                // An array pattern may replace its source register by the
                // collected elements; the expression's value is the source.
                let src = if dst.is_some() && matches!(target.kind, PatternKind::Array { .. }) {
                    let t = self.alloc();
                    self.emit(Instr::Move { dst: t, src: v }, pos);
                    t
                } else {
                    v
                };
                self.bind_pattern(target, src, false);
            }
        }
        self.free_to(m);
    }

    fn assign_ident(&mut self, ident: &'a Ident, op: AssignOp, value: &'a Expr, dst: Option<Reg>, pos: u32) {
        let acc = self.ident_access(ident);
        let name = Some(ident.name.as_str());
        match (op, acc) {
            (AssignOp::Assign, Access::Reg(r)) => {
                if needs_temp(value) && mentions(value, &ident.name) {
                    let t = self.alloc();
                    self.expr_named(value, t, name);
                    self.emit(Instr::Move { dst: r, src: t }, pos);
                } else {
                    self.expr_named(value, r, name);
                }
                if let Some(d) = dst {
                    self.emit(Instr::Move { dst: d, src: r }, pos);
                }
            }
            (AssignOp::Assign, _) => {
                let v = match dst {
                    Some(d) => {
                        self.expr_named(value, d, name);
                        d
                    }
                    None => self.expr_reg_named(value, name),
                };
                self.store_access(acc, v, pos);
            }
            (AssignOp::Compound(bop), Access::Reg(r)) => {
                if let Some(imm) = addi_imm(bop, value) {
                    self.emit(addi(bop, r, r, imm), pos);
                } else if has_assign(value) {
                    let t = self.alloc();
                    self.emit(Instr::Move { dst: t, src: r }, pos);
                    let rb = self.expr_reg(value);
                    self.emit(binop(bop, r, t, rb), pos);
                } else {
                    let rb = self.expr_reg(value);
                    self.emit(binop(bop, r, r, rb), pos);
                }
                if let Some(d) = dst {
                    self.emit(Instr::Move { dst: d, src: r }, pos);
                }
            }
            (AssignOp::Compound(bop), _) => {
                let v = dst.unwrap_or_else(|| self.alloc());
                self.load_access(acc, v, pos);
                if let Some(imm) = addi_imm(bop, value) {
                    self.emit(addi(bop, v, v, imm), pos);
                } else {
                    let rb = self.expr_reg(value);
                    self.emit(binop(bop, v, v, rb), pos);
                }
                self.store_access(acc, v, pos);
            }
            (AssignOp::Logical(lop), Access::Reg(r)) => {
                let j = self.short_circuit_jump(lop, r, pos);
                if needs_temp(value) && mentions(value, &ident.name) {
                    let t = self.alloc();
                    self.expr_named(value, t, name);
                    self.emit(Instr::Move { dst: r, src: t }, pos);
                } else {
                    self.expr_named(value, r, name);
                }
                self.patch_here(j);
                if let Some(d) = dst {
                    self.emit(Instr::Move { dst: d, src: r }, pos);
                }
            }
            (AssignOp::Logical(lop), _) => {
                let v = dst.unwrap_or_else(|| self.alloc());
                self.load_access(acc, v, pos);
                let j = self.short_circuit_jump(lop, v, pos);
                self.expr_named(value, v, name);
                self.store_access(acc, v, pos);
                self.patch_here(j);
            }
        }
    }

    /// `obj.name op= value` / `obj[key] op= value`. Positions: `get` for
    /// reading the old value (as V8: the object expression's position),
    /// `set` for the store (the assignment operator).
    #[allow(clippy::too_many_arguments)]
    fn assign_prop(
        &mut self,
        obj: Reg,
        target: PropTarget,
        op: AssignOp,
        value: &'a Expr,
        dst: Option<Reg>,
        (get, set): (u32, u32),
        name: Option<&str>,
    ) {
        if let (AssignOp::Assign, None) = (op, dst) {
            // The value needs no copy when it already is in a register.
            let m = self.mark();
            let r = self.expr_reg_named(value, name);
            self.set_prop(obj, target, r, set);
            self.free_to(m);
            return;
        }
        let v = dst.unwrap_or_else(|| self.alloc());
        match op {
            AssignOp::Assign => {
                self.expr_named(value, v, name);
                self.set_prop(obj, target, v, set);
            }
            AssignOp::Compound(bop) => {
                if let (PropTarget::Named(k), Some(imm), None) = (target, addi_imm(bop, value), dst) {
                    self.add_prop_i(obj, k, bop, imm, v, (get, set));
                    return;
                }
                self.get_prop(obj, target, v, get);
                if let Some(imm) = addi_imm(bop, value) {
                    self.emit(addi(bop, v, v, imm), set);
                } else {
                    let m = self.mark();
                    let rb = self.expr_reg(value);
                    self.emit(binop(bop, v, v, rb), set);
                    self.free_to(m);
                }
                self.set_prop(obj, target, v, set);
            }
            AssignOp::Logical(lop) => {
                self.get_prop(obj, target, v, get);
                let j = self.short_circuit_jump(lop, v, set);
                self.expr_named(value, v, name);
                self.set_prop(obj, target, v, set);
                self.patch_here(j);
            }
        }
    }

    fn get_prop(&mut self, obj: Reg, t: PropTarget, dst: Reg, pos: u32) {
        match t {
            PropTarget::Named(name) => self.emit(Instr::GetProp { dst, obj, name }, pos),
            PropTarget::Key(key) => self.emit(Instr::GetIndex { dst, obj, key }, pos),
        };
    }

    /// `R[obj].K[name] += imm` as a statement: `AddPropI` and, right after
    /// it, the general form it skips when it could do the addition itself
    /// (see `Instr::AddPropI`). `tmp` is a scratch register; `get` is the
    /// position of the read, `set` of the addition and the store.
    fn add_prop_i(&mut self, obj: Reg, name: ConstIdx, op: BinaryOp, imm: i16, tmp: Reg, (get, set): (u32, u32)) {
        self.emit(Instr::AddPropI { obj, imm, name }, get);
        self.emit(Instr::GetProp { dst: tmp, obj, name }, get);
        self.emit(addi(op, tmp, tmp, imm), set);
        self.emit(Instr::SetProp { obj, name, src: tmp }, set);
    }

    fn set_prop(&mut self, obj: Reg, t: PropTarget, src: Reg, pos: u32) {
        match t {
            PropTarget::Named(name) => self.emit(Instr::SetProp { obj, name, src }, pos),
            PropTarget::Key(key) => self.emit(Instr::SetIndex { obj, key, src }, pos),
        };
    }

    /// Stores R[src] into an assignment-target expression (destructuring
    /// assignment, `for (x.y of …)`).
    pub(crate) fn store_to_expr(&mut self, e: &'a Expr, src: Reg) {
        let e = unwrap_erased(e);
        let m = self.mark();
        match &e.kind {
            ExprKind::Ident(i) => {
                let a = self.ident_access(i);
                self.store_access(a, src, i.span.start);
            }
            ExprKind::Member { object, property, .. } if !matches!(object.kind, ExprKind::Super) => {
                let robj = self.expr_reg(object);
                let k = self.k_member(property);
                self.emit(Instr::SetProp { obj: robj, name: k, src }, property.span.start);
            }
            ExprKind::Index { object, index, .. } => {
                let robj = self.expr_reg(object);
                let rk = self.expr_reg(index);
                let p = self.op_pos(object.span.end);
                self.emit(Instr::SetIndex { obj: robj, key: rk, src }, p);
            }
            _ => {}
        }
        self.free_to(m);
    }

    // ---- ++ / -- ------------------------------------------------------------------

    pub(crate) fn update(&mut self, target: &'a Expr, inc: bool, prefix: bool, dst: Option<Reg>, pos: u32) {
        let imm: i16 = if inc { 1 } else { -1 };
        let t = unwrap_erased(target);
        let m = self.mark();
        match &t.kind {
            ExprKind::Ident(i) => match self.ident_access(i) {
                Access::Reg(r) => match dst {
                    None => {
                        self.emit(Instr::AddI { dst: r, src: r, imm, plus: false }, pos);
                    }
                    Some(d) if prefix => {
                        self.emit(Instr::AddI { dst: r, src: r, imm, plus: false }, pos);
                        self.emit(Instr::Move { dst: d, src: r }, pos);
                    }
                    Some(d) => {
                        self.emit(Instr::ToNumber { dst: d, src: r }, pos);
                        self.emit(Instr::AddI { dst: r, src: d, imm, plus: false }, pos);
                    }
                },
                acc => {
                    let old = self.alloc();
                    self.load_access(acc, old, pos);
                    match dst {
                        Some(d) if !prefix => {
                            self.emit(Instr::ToNumber { dst: d, src: old }, pos);
                            self.emit(Instr::AddI { dst: old, src: d, imm, plus: false }, pos);
                        }
                        _ => {
                            self.emit(Instr::AddI { dst: old, src: old, imm, plus: false }, pos);
                        }
                    }
                    self.store_access(acc, old, pos);
                    if let (Some(d), true) = (dst, prefix) {
                        self.emit(Instr::Move { dst: d, src: old }, pos);
                    }
                }
            },
            ExprKind::Member { object, property, .. } if !matches!(object.kind, ExprKind::Super) => {
                let robj = self.expr_reg(object);
                let k = self.k_member(property);
                let p = self.node_pos(object);
                self.update_prop(robj, PropTarget::Named(k), imm, prefix, dst, p);
            }
            ExprKind::Index { object, index, .. } => {
                let (robj, rk) = self.operands(object, index);
                let p = self.node_pos(object);
                self.update_prop(robj, PropTarget::Key(rk), imm, prefix, dst, p);
            }
            _ => {
                if let Some(d) = dst {
                    self.emit(Instr::LoadUndef { dst: d }, pos);
                }
            }
        }
        self.free_to(m);
    }

    fn update_prop(&mut self, obj: Reg, t: PropTarget, imm: i16, prefix: bool, dst: Option<Reg>, pos: u32) {
        let v = self.alloc();
        if let (PropTarget::Named(k), None) = (t, dst) {
            self.add_prop_i(obj, k, BinaryOp::Sub, imm, v, (pos, pos)); // `++`/`--`: numbers only
            return;
        }
        self.get_prop(obj, t, v, pos);
        match dst {
            Some(d) if !prefix => {
                self.emit(Instr::ToNumber { dst: d, src: v }, pos);
                self.emit(Instr::AddI { dst: v, src: d, imm, plus: false }, pos);
            }
            _ => {
                self.emit(Instr::AddI { dst: v, src: v, imm, plus: false }, pos);
            }
        }
        self.set_prop(obj, t, v, pos);
        if let (Some(d), true) = (dst, prefix) {
            self.emit(Instr::Move { dst: d, src: v }, pos);
        }
    }

    /// Canonical string of a numeric property key.
    pub(crate) fn key_const(&mut self, key: &PropKey) -> Option<ConstIdx> {
        match key {
            PropKey::Named(s, _) => Some(self.k_str(s)),
            PropKey::Number(n, _) => {
                let s = number_key(*n);
                Some(self.k_str(&s))
            }
            PropKey::Private(n, span) => Some(self.k_private(n, *span)),
            PropKey::Computed(_) => None,
        }
    }
}

#[derive(Clone, Copy)]
enum PropTarget {
    Named(ConstIdx),
    Key(Reg),
}
