//! Expressions (precedence climbing), arrow functions, literals, and
//! binding / assignment patterns.

use super::stmt::{prop_key_ident, prop_key_span, starts_property_name, FnName};
use super::*;

/// A binary-level operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BinKind {
    Bin(BinaryOp),
    Logic(LogicalOp),
    As,
    Satisfies,
}

fn expr(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// An identifier reference (`undefined` becomes [`ExprKind::Undefined`]).
fn ident_expr(id: Ident) -> Expr {
    let span = id.span;
    if id.name == "undefined" {
        expr(ExprKind::Undefined, span)
    } else {
        expr(ExprKind::Ident(id), span)
    }
}

/// Removes the erased wrappers `x!` and `x as T`.
fn strip_erased(e: Expr) -> Expr {
    match e.kind {
        ExprKind::NonNull(inner) | ExprKind::As(inner, _) => strip_erased(*inner),
        _ => e,
    }
}

/// Whether a member/call chain contains an optional link (`a?.b.c`).
fn chain_has_optional(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Member { object, optional, .. } | ExprKind::Index { object, optional, .. } => {
            *optional || chain_has_optional(object)
        }
        ExprKind::Call { callee, optional, .. } => *optional || chain_has_optional(callee),
        ExprKind::NonNull(inner) => chain_has_optional(inner),
        _ => false,
    }
}

impl<'s> Parser<'s> {
    // ----- entry points -------------------------------------------------------

    /// `Expression`: assignments separated by commas. `no_in` disables the
    /// `in` operator (for-loop heads).
    pub(super) fn parse_expression(&mut self, no_in: bool) -> PResult<Expr> {
        let first = self.parse_assign(no_in)?;
        if !self.at(&T::Comma) {
            return Ok(first);
        }
        let mut items = vec![first];
        while self.eat(&T::Comma) {
            items.push(self.parse_assign(no_in)?);
        }
        let span = Span { start: items[0].span.start, end: self.prev_end() };
        Ok(expr(ExprKind::Sequence(items), span))
    }

    /// `AssignmentExpression`: arrows, assignments, conditionals.
    pub(super) fn parse_assign(&mut self, no_in: bool) -> PResult<Expr> {
        self.enter()?;
        let r = self.parse_assign_inner(no_in);
        self.leave();
        r
    }

    fn parse_assign_inner(&mut self, no_in: bool) -> PResult<Expr> {
        if let Some(f) = self.try_arrow(no_in)? {
            return Ok(f);
        }
        if self.at(&T::Yield) {
            return self.parse_yield(no_in);
        }
        let lhs = self.parse_conditional(no_in)?;
        let Some((op, ntoks)) = self.peek_assign_op() else {
            return Ok(lhs);
        };
        for _ in 0..ntoks {
            self.bump();
        }
        let start = lhs.span.start;
        let target = if op == AssignOp::Assign { self.expr_to_pattern(lhs)? } else { self.simple_target(lhs)? };
        let value = self.parse_assign(no_in)?;
        let span = Span { start, end: value.span.end };
        Ok(expr(ExprKind::Assign { op, target: Box::new(target), value: Box::new(value) }, span))
    }

    /// `yield`, `yield expr`, `yield* expr` at `yield`. The operand is
    /// optional: a `yield` followed by a line break or by a token that
    /// cannot start an expression stands alone.
    fn parse_yield(&mut self, no_in: bool) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let delegate = !self.cur().nl_before && self.eat(&T::Star);
        let ends = matches!(self.kind(), T::RParen | T::RBracket | T::RBrace | T::Comma | T::Semi | T::Colon | T::Eof)
            || (self.at(&T::In) && no_in);
        let arg =
            if delegate || (!ends && !self.cur().nl_before) { Some(Box::new(self.parse_assign(no_in)?)) } else { None };
        Ok(expr(ExprKind::Yield { arg, delegate }, self.span_from(start)))
    }

    /// Counts adjacent `>` tokens (up to 3) and whether `=` follows, so
    /// `>`, `>=`, `>>`, `>>=`, `>>>`, `>>>=` can be told apart.
    fn gt_run(&self) -> (usize, bool) {
        let mut n = 1;
        while n < 3 && self.peek_kind(n) == &T::Gt && self.adjacent(n) {
            n += 1;
        }
        let eq = self.peek_kind(n) == &T::Eq && self.adjacent(n);
        (n, eq)
    }

    fn peek_assign_op(&self) -> Option<(AssignOp, usize)> {
        use AssignOp::*;
        use BinaryOp as B;
        Some(match self.kind() {
            T::Eq => (Assign, 1),
            T::PlusEq => (Compound(B::Add), 1),
            T::MinusEq => (Compound(B::Sub), 1),
            T::StarEq => (Compound(B::Mul), 1),
            T::SlashEq => (Compound(B::Div), 1),
            T::PercentEq => (Compound(B::Rem), 1),
            T::StarStarEq => (Compound(B::Pow), 1),
            T::ShlEq => (Compound(B::Shl), 1),
            T::AmpEq => (Compound(B::BitAnd), 1),
            T::PipeEq => (Compound(B::BitOr), 1),
            T::CaretEq => (Compound(B::BitXor), 1),
            T::AmpAmpEq => (Logical(LogicalOp::And), 1),
            T::PipePipeEq => (Logical(LogicalOp::Or), 1),
            T::QuestionQuestionEq => (Logical(LogicalOp::Nullish), 1),
            T::Gt => match self.gt_run() {
                (2, true) => (Compound(B::Shr), 3),
                (3, true) => (Compound(B::UShr), 4),
                _ => return None,
            },
            _ => return None,
        })
    }

    fn parse_conditional(&mut self, no_in: bool) -> PResult<Expr> {
        let (cond, _) = self.parse_binary(1, no_in)?;
        if !self.at(&T::Question) {
            return Ok(cond);
        }
        self.bump();
        let saved = self.cond_then_depth;
        self.cond_then_depth = self.depth + 1;
        let then = self.parse_assign(false);
        self.cond_then_depth = saved;
        let then = then?;
        self.expect(&T::Colon)?;
        let otherwise = self.parse_assign(no_in)?;
        let span = Span { start: cond.span.start, end: otherwise.span.end };
        Ok(expr(
            ExprKind::Conditional { cond: Box::new(cond), then: Box::new(then), otherwise: Box::new(otherwise) },
            span,
        ))
    }

    // ----- binary operators -----------------------------------------------------

    /// The binary operator at the cursor: (operator, precedence, tokens).
    fn peek_binop(&self, no_in: bool) -> Option<(BinKind, u8, usize)> {
        use BinKind::*;
        use BinaryOp as B;
        Some(match self.kind() {
            T::QuestionQuestion => (Logic(LogicalOp::Nullish), 1, 1),
            T::PipePipe => (Logic(LogicalOp::Or), 2, 1),
            T::AmpAmp => (Logic(LogicalOp::And), 3, 1),
            T::Pipe => (Bin(B::BitOr), 4, 1),
            T::Caret => (Bin(B::BitXor), 5, 1),
            T::Amp => (Bin(B::BitAnd), 6, 1),
            T::EqEq => (Bin(B::Eq), 7, 1),
            T::BangEq => (Bin(B::NotEq), 7, 1),
            T::EqEqEq => (Bin(B::StrictEq), 7, 1),
            T::BangEqEq => (Bin(B::StrictNotEq), 7, 1),
            T::Lt => (Bin(B::Lt), 8, 1),
            T::LtEq => (Bin(B::LtEq), 8, 1),
            T::Gt => match self.gt_run() {
                (1, false) => (Bin(B::Gt), 8, 1),
                (1, true) => (Bin(B::GtEq), 8, 2),
                (2, false) => (Bin(B::Shr), 9, 2),
                (3, false) => (Bin(B::UShr), 9, 3),
                _ => return None,
            },
            T::InstanceOf => (Bin(B::InstanceOf), 8, 1),
            T::In if !no_in => (Bin(B::In), 8, 1),
            T::Ident(w) if w == "as" && !self.cur().nl_before => (As, 8, 1),
            T::Ident(w) if w == "satisfies" && !self.cur().nl_before => (Satisfies, 8, 1),
            T::Shl => (Bin(B::Shl), 9, 1),
            T::Plus => (Bin(B::Add), 10, 1),
            T::Minus => (Bin(B::Sub), 10, 1),
            T::Star => (Bin(B::Mul), 11, 1),
            T::Slash => (Bin(B::Div), 11, 1),
            T::Percent => (Bin(B::Rem), 11, 1),
            T::StarStar => (Bin(B::Pow), 12, 1),
            _ => return None,
        })
    }

    /// Precedence climbing. Returns the expression and the operator of its
    /// top node when that node was built here (None for an operand), which
    /// the `??`-mixing rule needs since parentheses are not kept.
    fn parse_binary(&mut self, min: u8, no_in: bool) -> PResult<(Expr, Option<BinKind>)> {
        let base = self.depth;
        let r = self.parse_binary_links(min, no_in);
        self.depth = base;
        r
    }

    /// [`Parser::parse_binary`]; every operator of a left-associative
    /// chain (`a + b + c …`) nests the tree built so far one level deeper,
    /// so each costs a nesting level (given back by the caller): the
    /// passes after the parser recurse over that tree.
    fn parse_binary_links(&mut self, min: u8, no_in: bool) -> PResult<(Expr, Option<BinKind>)> {
        let unary_start =
            matches!(self.kind(), T::Minus | T::Plus | T::Bang | T::Tilde | T::TypeOf | T::Void | T::Delete)
                || self.at_ident("await");
        let unary_span = self.cur().span;
        let mut left = self.parse_unary()?;
        let mut top: Option<BinKind> = None;
        let mut bare_unary = unary_start;
        while let Some((op, prec, ntoks)) = self.peek_binop(no_in) {
            if prec < min {
                break;
            }
            if matches!(op, BinKind::As | BinKind::Satisfies) {
                self.bump();
                let ty = self.parse_type()?;
                let span = Span { start: left.span.start, end: ty.span.end };
                if op == BinKind::As {
                    left = expr(ExprKind::As(Box::new(left), ty), span);
                } else {
                    left.span = span;
                }
                top = None;
                bare_unary = false;
                continue;
            }
            let op_span = self.cur().span;
            if op == BinKind::Bin(BinaryOp::Pow) && bare_unary {
                let op_text = self.text(unary_span).to_string();
                self.error_hint(
                    op_span,
                    format!("unary `{op_text}` cannot be used before `**` without parentheses"),
                    "ambiguous exponentiation",
                    format!("write `({op_text}x) ** y` or `{op_text}(x ** y)`"),
                );
            }
            for _ in 0..ntoks {
                self.bump();
            }
            let next_min = if op == BinKind::Bin(BinaryOp::Pow) { prec } else { prec + 1 };
            // A nesting level: `**` (right-associative) recurses here once
            // per operator, `a ** a ** …` as deep as it is long.
            self.enter()?;
            let right = self.parse_binary(next_min, no_in);
            self.leave();
            let (right, right_top) = right?;
            let is_logic = |k: Option<BinKind>| matches!(k, Some(BinKind::Logic(LogicalOp::And | LogicalOp::Or)));
            let is_nullish = |k: Option<BinKind>| k == Some(BinKind::Logic(LogicalOp::Nullish));
            let mixed = match op {
                BinKind::Logic(LogicalOp::Nullish) => is_logic(top) || is_logic(right_top),
                BinKind::Logic(_) => is_nullish(top) || is_nullish(right_top),
                _ => false,
            };
            if mixed {
                self.error_hint(
                    op_span,
                    "`??` cannot be mixed with `||` or `&&` without parentheses",
                    "ambiguous operator mix",
                    "wrap one side in parentheses",
                );
            }
            let span = Span { start: left.span.start, end: right.span.end };
            let kind = match op {
                // `#x in obj`: the primary left a placeholder for `obj`.
                BinKind::Bin(BinaryOp::In) if matches!(&left.kind, ExprKind::PrivateIn { object, .. } if matches!(object.kind, ExprKind::Error)) =>
                {
                    let ExprKind::PrivateIn { name, .. } = left.kind else { unreachable!() };
                    ExprKind::PrivateIn { name, object: Box::new(right) }
                }
                BinKind::Bin(b) => ExprKind::Binary(b, Box::new(left), Box::new(right)),
                BinKind::Logic(l) => ExprKind::Logical(l, Box::new(left), Box::new(right)),
                // Handled before the loop body reaches here.
                BinKind::As | BinKind::Satisfies => ExprKind::Error,
            };
            left = expr(kind, span);
            top = Some(op);
            bare_unary = false;
            self.enter_chain()?;
        }
        Ok((left, top))
    }

    // ----- unary / postfix ------------------------------------------------------

    fn parse_unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.parse_unary_inner();
        self.leave();
        r
    }

    fn parse_unary_inner(&mut self) -> PResult<Expr> {
        let start = self.start();
        let op = match self.kind() {
            T::Bang => Some(UnaryOp::Not),
            T::Tilde => Some(UnaryOp::BitNot),
            T::Plus => Some(UnaryOp::Plus),
            T::Minus => Some(UnaryOp::Neg),
            T::TypeOf => Some(UnaryOp::TypeOf),
            T::Void => Some(UnaryOp::Void),
            _ => None,
        };
        if let Some(op) = op {
            self.bump();
            let arg = self.parse_unary()?;
            return Ok(expr(ExprKind::Unary(op, Box::new(arg)), self.span_from(start)));
        }
        match self.kind() {
            T::Delete => {
                let span = self.bump();
                self.error_hint(
                    span,
                    "the `delete` operator is not supported",
                    "`delete`",
                    "set the property to `undefined`, or use a `Map`",
                );
                self.parse_unary()?;
                Ok(expr(ExprKind::Error, self.span_from(start)))
            }
            T::PlusPlus | T::MinusMinus => {
                let increment = self.at(&T::PlusPlus);
                self.bump();
                let arg = self.parse_unary()?;
                let target = self.update_target(arg);
                Ok(expr(ExprKind::Update { increment, prefix: true, target: Box::new(target) }, self.span_from(start)))
            }
            T::Ident(w) if w == "await" => {
                self.bump();
                let arg = self.parse_unary()?;
                Ok(expr(ExprKind::Await(Box::new(arg)), self.span_from(start)))
            }
            T::Ident(w) if w == "async" && self.at_spawn() => {
                self.bump();
                let call = self.parse_lhs()?;
                let span = self.span_from(start);
                if matches!(call.kind, ExprKind::Call { .. }) {
                    Ok(expr(ExprKind::Spawn(Box::new(call)), span))
                } else {
                    self.error_hint(
                        call.span,
                        "`async` must be followed by a call",
                        "not a call",
                        "`async f(x)` runs the call `f(x)` as a new task; to spawn a block write `(async () => { ... })()`",
                    );
                    Ok(expr(ExprKind::Error, span))
                }
            }
            T::Lt => {
                let span = self.cur().span;
                self.error_hint(
                    span,
                    "type assertions with `<T>` are not supported",
                    "type assertion",
                    "use `x as T` instead",
                );
                Err(Fail)
            }
            _ => self.parse_postfix(),
        }
    }

    /// `async` followed on the same line by something that can start a call.
    fn at_spawn(&self) -> bool {
        let n = self.peek(1);
        !n.nl_before
            && matches!(
                n.kind,
                T::Ident(_)
                    | T::LParen
                    | T::This
                    | T::Super
                    | T::New
                    | T::LBracket
                    | T::Str(_)
                    | T::Number(_)
                    | T::NoSubstTemplate(_)
                    | T::TemplateHead(_)
                    | T::Regex(_)
            )
    }

    /// Checks the operand of `++`/`--`.
    fn update_target(&mut self, e: Expr) -> Expr {
        let e = strip_erased(e);
        let ok = match &e.kind {
            ExprKind::Ident(_) => true,
            ExprKind::Member { .. } | ExprKind::Index { .. } => !chain_has_optional(&e),
            ExprKind::Error => true,
            _ => false,
        };
        if ok {
            e
        } else {
            self.error(e.span, "invalid increment/decrement operand", "not a variable or property");
            expr(ExprKind::Error, e.span)
        }
    }

    fn parse_postfix(&mut self) -> PResult<Expr> {
        let e = self.parse_lhs()?;
        if matches!(self.kind(), T::PlusPlus | T::MinusMinus) && !self.cur().nl_before {
            let increment = self.at(&T::PlusPlus);
            self.bump();
            let start = e.span.start;
            let target = self.update_target(e);
            return Ok(expr(
                ExprKind::Update { increment, prefix: false, target: Box::new(target) },
                self.span_from(start),
            ));
        }
        Ok(e)
    }

    /// `a?.` : a `?` immediately followed by `.`.
    fn at_optional_chain(&self) -> bool {
        self.at(&T::Question) && self.peek_kind(1) == &T::Dot && self.adjacent(1)
    }

    /// `LeftHandSideExpression`: `new`, calls, member access, `!`.
    pub(super) fn parse_lhs(&mut self) -> PResult<Expr> {
        let base = self.depth;
        let r = self.parse_lhs_links();
        self.depth = base;
        r
    }

    /// [`Parser::parse_lhs`]; each member access, index, call or `!` of
    /// the chain costs a nesting level, as in `parse_binary_links`.
    fn parse_lhs_links(&mut self) -> PResult<Expr> {
        let mut e = if self.at(&T::New) { self.parse_new()? } else { self.parse_primary()? };
        let start = e.span.start;
        loop {
            if matches!(self.kind(), T::Dot | T::LBracket | T::LParen | T::Bang | T::Question) {
                self.enter_chain()?;
            }
            match self.kind() {
                T::Dot => {
                    self.bump();
                    let property = self.property_name()?;
                    if matches!(e.kind, ExprKind::Super) && property.name.starts_with('#') {
                        self.error(property.span, "`super` has no private members", "private name after `super`");
                        return Err(Fail);
                    }
                    e = expr(
                        ExprKind::Member { object: Box::new(e), property, optional: false },
                        self.span_from(start),
                    );
                }
                T::Question if self.at_optional_chain() => {
                    self.bump();
                    self.bump();
                    e = match self.kind() {
                        T::LBracket => {
                            self.bump();
                            let index = self.parse_expression(false)?;
                            self.expect(&T::RBracket)?;
                            expr(
                                ExprKind::Index { object: Box::new(e), index: Box::new(index), optional: true },
                                self.span_from(start),
                            )
                        }
                        T::LParen => {
                            let args = self.parse_args()?;
                            expr(ExprKind::Call { callee: Box::new(e), args, optional: true }, self.span_from(start))
                        }
                        _ => {
                            let property = self.property_name()?;
                            expr(
                                ExprKind::Member { object: Box::new(e), property, optional: true },
                                self.span_from(start),
                            )
                        }
                    };
                }
                T::LBracket => {
                    self.bump();
                    let index = self.parse_expression(false)?;
                    self.expect(&T::RBracket)?;
                    e = expr(
                        ExprKind::Index { object: Box::new(e), index: Box::new(index), optional: false },
                        self.span_from(start),
                    );
                }
                T::LParen => {
                    let args = self.parse_args()?;
                    e = expr(ExprKind::Call { callee: Box::new(e), args, optional: false }, self.span_from(start));
                }
                T::Bang if !self.cur().nl_before => {
                    self.bump();
                    e = expr(ExprKind::NonNull(Box::new(e)), self.span_from(start));
                }
                T::Lt => {
                    // `f<T>(x)`: speculative type arguments before a call.
                    let snap = self.snapshot();
                    let ok = self.parse_type_args().is_ok() && self.at(&T::LParen);
                    if !ok {
                        self.restore(snap);
                        break;
                    }
                }
                T::NoSubstTemplate(_) | T::TemplateHead(_) => {
                    e = self.parse_tagged_template(e, start)?;
                }
                _ => break,
            }
        }
        Ok(e)
    }

    /// A property name after `.` (reserved words allowed).
    fn property_name(&mut self) -> PResult<Ident> {
        if self.at_ident_name() {
            return self.ident_name();
        }
        if let T::PrivateName(n) = self.kind() {
            let name = n.clone();
            let span = self.bump();
            return Ok(Ident { name, span });
        }
        if self.at(&T::Error) {
            // `obj.#x`: the lexer reported `#`.
            return Err(Fail);
        }
        Err(self.unexpected("property name after `.`"))
    }

    fn parse_new(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.parse_new_inner();
        self.leave();
        r
    }

    fn parse_new_inner(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        if self.at(&T::Dot) {
            let span = self.span_from(start);
            self.error(span, "`new.target` is not supported", "not supported");
            return Err(Fail);
        }
        let mut callee = if self.at(&T::New) { self.parse_new()? } else { self.parse_primary()? };
        let cstart = callee.span.start;
        loop {
            match self.kind() {
                T::Dot => {
                    self.bump();
                    let property = self.property_name()?;
                    callee = expr(
                        ExprKind::Member { object: Box::new(callee), property, optional: false },
                        self.span_from(cstart),
                    );
                }
                T::LBracket => {
                    self.bump();
                    let index = self.parse_expression(false)?;
                    self.expect(&T::RBracket)?;
                    callee = expr(
                        ExprKind::Index { object: Box::new(callee), index: Box::new(index), optional: false },
                        self.span_from(cstart),
                    );
                }
                T::Question if self.at_optional_chain() => {
                    let span = self.cur().span;
                    self.error(span, "optional chaining is not allowed in a `new` expression", "`?.` after `new`");
                    return Err(Fail);
                }
                _ => break,
            }
        }
        if self.at(&T::Lt) {
            let snap = self.snapshot();
            let ok = self.parse_type_args().is_ok()
                && (matches!(
                    self.kind(),
                    T::LParen | T::Semi | T::RParen | T::RBracket | T::RBrace | T::Comma | T::Eof
                ) || self.cur().nl_before);
            if !ok {
                self.restore(snap);
            }
        }
        let args = if self.at(&T::LParen) { self.parse_args()? } else { Vec::new() };
        Ok(expr(ExprKind::New { callee: Box::new(callee), args }, self.span_from(start)))
    }

    pub(super) fn parse_args(&mut self) -> PResult<Vec<Argument>> {
        self.expect(&T::LParen)?;
        let mut args = Vec::new();
        while !self.at(&T::RParen) {
            if self.eat(&T::DotDotDot) {
                args.push(Argument::Spread(self.parse_assign(false)?));
            } else {
                args.push(Argument::Expr(self.parse_assign(false)?));
            }
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RParen)?;
        Ok(args)
    }

    // ----- primary ----------------------------------------------------------------

    fn parse_primary(&mut self) -> PResult<Expr> {
        let start = self.start();
        let span = self.cur().span;
        let kind = match self.kind() {
            T::Number(n) => ExprKind::Number(*n),
            T::Str(s) => ExprKind::String(s.clone()),
            T::Regex((pattern, flags)) => ExprKind::Regex { pattern: pattern.clone(), flags: flags.clone() },
            T::True => ExprKind::Bool(true),
            T::False => ExprKind::Bool(false),
            T::Null => ExprKind::Null,
            T::This => ExprKind::This,
            T::PrivateName(n) => {
                let name = Ident { name: n.clone(), span };
                if self.peek_kind(1) != &T::In {
                    self.error(span, "a private name can only be used after `.` or before `in`", "private name");
                    return Err(Fail);
                }
                // The object is filled in when the `in` is parsed.
                ExprKind::PrivateIn { name, object: Box::new(expr(ExprKind::Error, span)) }
            }
            T::Super => {
                if !matches!(self.peek_kind(1), T::LParen | T::Dot | T::LBracket) {
                    self.error(span, "`super` must be followed by an argument list or a member access", "bare `super`");
                    return Err(Fail);
                }
                ExprKind::Super
            }
            T::NoSubstTemplate(_) | T::TemplateHead(_) => return self.parse_template(),
            T::Ident(w) if w == "async" && self.peek_kind(1) == &T::Function && !self.peek(1).nl_before => {
                self.bump();
                return self.parse_function_expr(start, true);
            }
            T::Ident(_) => {
                let id = self.ident()?;
                return Ok(ident_expr(id));
            }
            T::Function => return self.parse_function_expr(start, false),
            T::Class => {
                let c = self.parse_class(start, FnName::Optional)?;
                return Ok(expr(ExprKind::Class(Box::new(c)), self.span_from(start)));
            }
            T::LParen => {
                self.bump();
                if self.at(&T::RParen) {
                    return Err(self.unexpected("expression"));
                }
                let mut e = self.parse_expression(false)?;
                self.expect(&T::RParen)?;
                e.span = self.span_from(start);
                return Ok(e);
            }
            T::LBracket => return self.parse_array_literal(),
            T::LBrace => return self.parse_object_literal(),
            _ => return Err(self.unexpected("expression")),
        };
        self.bump();
        Ok(expr(kind, span))
    }

    fn parse_function_expr(&mut self, start: u32, is_async: bool) -> PResult<Expr> {
        match self.parse_function(start, is_async, FnName::Optional, false)? {
            Some(f) => Ok(expr(ExprKind::Function(Box::new(f)), self.span_from(start))),
            None => Err(Fail),
        }
    }

    fn parse_template(&mut self) -> PResult<Expr> {
        let start = self.start();
        let head = match self.kind() {
            T::NoSubstTemplate(s) => {
                let s = s.clone();
                self.bump();
                return Ok(expr(ExprKind::Template(vec![TemplatePart::Str(s)]), self.span_from(start)));
            }
            T::TemplateHead(s) => s.clone(),
            _ => return Err(self.unexpected("template literal")),
        };
        self.bump();
        let mut parts = vec![TemplatePart::Str(head)];
        loop {
            let e = self.parse_expression(false)?;
            parts.push(TemplatePart::Expr(e));
            match self.kind() {
                T::TemplateMiddle(s) => {
                    parts.push(TemplatePart::Str(s.clone()));
                    self.bump();
                }
                T::TemplateTail(s) => {
                    parts.push(TemplatePart::Str(s.clone()));
                    self.bump();
                    break;
                }
                _ => return Err(self.unexpected("`}` to close the template substitution")),
            }
        }
        Ok(expr(ExprKind::Template(parts), self.span_from(start)))
    }

    /// `` tag`...` ``: the template's cooked and raw strings and its
    /// substitutions. The raw strings are the source text between the
    /// delimiters, with line terminators normalised to `\n` (as in JS).
    fn parse_tagged_template(&mut self, tag: Expr, start: u32) -> PResult<Expr> {
        let mut cooked = Vec::new();
        let mut raw = Vec::new();
        let mut exprs = Vec::new();
        loop {
            let (text, last) = match self.kind() {
                T::NoSubstTemplate(s) | T::TemplateTail(s) => (s.clone(), true),
                T::TemplateHead(s) | T::TemplateMiddle(s) => (s.clone(), false),
                _ => return Err(self.unexpected("`}` to close the template substitution")),
            };
            let span = self.bump();
            let src = self.text(span);
            // Strip the opening `` ` `` or `}` and the closing `` ` `` or `${`.
            let inner = src.get(1..).unwrap_or("");
            let inner =
                if last { inner.strip_suffix('`').unwrap_or(inner) } else { inner.strip_suffix("${").unwrap_or(inner) };
            raw.push(inner.replace("\r\n", "\n").replace('\r', "\n"));
            // An escape error inside this piece (not the opening backtick,
            // where an unterminated template is reported).
            let before = self.lex_diags.len();
            self.lex_diags.retain(|d| !(d.span.start > span.start && d.span.end <= span.end));
            cooked.push((self.lex_diags.len() == before).then_some(text));
            if last {
                break;
            }
            exprs.push(self.parse_expression(false)?);
        }
        Ok(expr(ExprKind::TaggedTemplate { tag: Box::new(tag), cooked, raw, exprs }, self.span_from(start)))
    }

    fn parse_array_literal(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let mut elems = Vec::new();
        loop {
            if self.at(&T::RBracket) {
                break;
            }
            if self.eat(&T::Comma) {
                elems.push(ArrayElem::Hole);
                continue;
            }
            if self.eat(&T::DotDotDot) {
                elems.push(ArrayElem::Spread(self.parse_assign(false)?));
            } else {
                elems.push(ArrayElem::Expr(self.parse_assign(false)?));
            }
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBracket)?;
        Ok(expr(ExprKind::Array(elems), self.span_from(start)))
    }

    fn parse_object_literal(&mut self) -> PResult<Expr> {
        let start = self.start();
        self.bump();
        let mut props = Vec::new();
        while !self.at(&T::RBrace) {
            props.push(self.parse_object_prop()?);
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBrace)?;
        Ok(expr(ExprKind::Object(props), self.span_from(start)))
    }

    fn parse_object_prop(&mut self) -> PResult<ObjectProp> {
        if self.eat(&T::DotDotDot) {
            return Ok(ObjectProp::Spread(self.parse_assign(false)?));
        }
        let next = self.peek(1);
        let name_follows = starts_property_name(&next.kind) && next.kind != T::Star;
        let mut accessor = None;
        let mut is_async = false;
        if (self.at_ident("get") || self.at_ident("set")) && name_follows {
            accessor = Some(self.at_ident("get"));
            self.bump();
        } else if self.at_ident("async") && name_follows && !next.nl_before {
            is_async = true;
            self.bump();
        }
        if self.at_ident("async") && self.peek_kind(1) == &T::Star {
            is_async = true;
            self.bump();
        }
        let is_generator = accessor.is_none() && self.eat(&T::Star);
        let (key, short) = self.parse_prop_key()?;
        if let PropKey::Private(_, span) = &key {
            self.error(*span, "private names are only allowed in class bodies", "private name");
            return Err(Fail);
        }
        if is_generator && !(self.at(&T::LParen) || self.at(&T::Lt)) {
            return Err(self.unexpected("`(`"));
        }
        if self.at(&T::LParen) || self.at(&T::Lt) {
            let start = prop_key_span(&key).start;
            let Some(mut f) = self.parse_function_tail(start, prop_key_ident(&key), is_async, false)? else {
                return Err(Fail);
            };
            f.is_generator = is_generator;
            return Ok(match accessor {
                Some(true) => {
                    self.check_getter(&f);
                    ObjectProp::Getter(key, f)
                }
                Some(false) => {
                    self.check_setter(&f);
                    ObjectProp::Setter(key, f)
                }
                None => ObjectProp::Method(key, f),
            });
        }
        if accessor.is_some() || is_async {
            return Err(self.unexpected("`(`"));
        }
        if self.eat(&T::Colon) {
            let value = self.parse_assign(false)?;
            return Ok(ObjectProp::KeyValue(key, value));
        }
        let Some(id) = short else {
            return Err(self.unexpected("`:`"));
        };
        if self.eat(&T::Eq) {
            // `{ x = 1 }`: only valid once this literal becomes a pattern.
            let value = self.parse_assign(false)?;
            let span = Span { start: id.span.start, end: value.span.end };
            self.cover_inits.push(span);
            let target = Pattern { span: id.span, kind: PatternKind::Ident(id) };
            let e =
                expr(ExprKind::Assign { op: AssignOp::Assign, target: Box::new(target), value: Box::new(value) }, span);
            return Ok(ObjectProp::KeyValue(key, e));
        }
        Ok(ObjectProp::KeyValue(key, ident_expr(id)))
    }

    /// A property key; the second value is the identifier when the key
    /// was a plain identifier (usable as shorthand).
    pub(super) fn parse_prop_key(&mut self) -> PResult<(PropKey, Option<Ident>)> {
        let span = self.cur().span;
        let key = match self.kind() {
            T::Ident(n) => {
                let id = Ident { name: n.clone(), span };
                self.bump();
                return Ok((PropKey::Named(id.name.clone(), span), Some(id)));
            }
            T::Str(s) => PropKey::Named(s.clone(), span),
            T::Number(n) => PropKey::Number(*n, span),
            k if k.is_keyword() => PropKey::Named(k.as_str().to_string(), span),
            T::LBracket => {
                self.bump();
                let e = self.parse_assign(false)?;
                self.expect(&T::RBracket)?;
                return Ok((PropKey::Computed(Box::new(e)), None));
            }
            T::PrivateName(n) => PropKey::Private(n.clone(), span),
            T::Error => return Err(Fail),
            _ => return Err(self.unexpected("property name")),
        };
        self.bump();
        Ok((key, None))
    }

    // ----- arrow functions ------------------------------------------------------

    /// Recognises an arrow function at the cursor (`x =>`, `(…) =>`,
    /// `(…): T =>`, `<T>(…) =>`, and their `async` forms).
    fn try_arrow(&mut self, no_in: bool) -> PResult<Option<Expr>> {
        let start = self.start();
        match self.kind() {
            T::Ident(name) => {
                let is_async = name == "async";
                if self.peek_kind(1) == &T::Arrow {
                    let id = self.ident()?;
                    return self.simple_arrow(start, false, id, no_in).map(Some);
                }
                if is_async && !self.peek(1).nl_before {
                    match self.peek_kind(1) {
                        T::Ident(_) if self.peek_kind(2) == &T::Arrow => {
                            self.bump();
                            let id = self.ident()?;
                            return self.simple_arrow(start, true, id, no_in).map(Some);
                        }
                        T::LParen => return self.paren_arrow(start, true, self.pos + 1, no_in),
                        T::Lt => return self.generic_arrow(start, true, no_in),
                        _ => {}
                    }
                }
                Ok(None)
            }
            T::LParen => self.paren_arrow(start, false, self.pos, no_in),
            T::Lt => self.generic_arrow(start, false, no_in),
            _ => Ok(None),
        }
    }

    fn simple_arrow(&mut self, start: u32, is_async: bool, id: Ident, no_in: bool) -> PResult<Expr> {
        let span = id.span;
        let param = Param {
            pattern: Pattern { kind: PatternKind::Ident(id), span },
            ty: None,
            default: None,
            rest: false,
            optional: false,
            span,
        };
        self.finish_arrow(start, is_async, Vec::new(), vec![param], None, no_in)
    }

    /// `(params) =>` or `(params): T =>` with the `(` at token `open`.
    fn paren_arrow(&mut self, start: u32, is_async: bool, open: usize, no_in: bool) -> PResult<Option<Expr>> {
        let Some(close) = self.matching_close(open) else {
            return Ok(None);
        };
        let after = self.toks.get(close + 1).map(|t| &t.kind);
        match after {
            Some(T::Arrow) => {
                if is_async {
                    self.bump();
                }
                let params = self.parse_params()?;
                self.finish_arrow(start, is_async, Vec::new(), params, None, no_in).map(Some)
            }
            Some(T::Colon) if self.depth == self.cond_then_depth => {
                // `c ? (x): T => y : z` vs `c ? (x) : y => z`: as in
                // TypeScript, in the true branch of `?:` an arrow with a
                // return type is only taken if a `:` follows the arrow.
                self.try_parse(|p| {
                    if is_async {
                        p.bump();
                    }
                    let params = p.parse_params()?;
                    p.expect(&T::Colon)?;
                    let ret = p.parse_return_type()?;
                    if !p.at(&T::Arrow) {
                        return Err(Fail);
                    }
                    let f = p.finish_arrow(start, is_async, Vec::new(), params, Some(ret), no_in)?;
                    if p.at(&T::Colon) {
                        Ok(f)
                    } else {
                        Err(Fail)
                    }
                })
                .map_or(Ok(None), |f| Ok(Some(f)))
            }
            Some(T::Colon) => {
                let head = self.try_parse(|p| {
                    if is_async {
                        p.bump();
                    }
                    let params = p.parse_params()?;
                    p.expect(&T::Colon)?;
                    let ret = p.parse_return_type()?;
                    if !p.at(&T::Arrow) {
                        return Err(Fail);
                    }
                    Ok((params, ret))
                });
                match head {
                    Some((params, ret)) => {
                        self.finish_arrow(start, is_async, Vec::new(), params, Some(ret), no_in).map(Some)
                    }
                    None => Ok(None),
                }
            }
            _ => Ok(None),
        }
    }

    /// `<T>(params) =>`, speculatively.
    fn generic_arrow(&mut self, start: u32, is_async: bool, no_in: bool) -> PResult<Option<Expr>> {
        let head = self.try_parse(|p| {
            if is_async {
                p.bump();
            }
            let tps = p.parse_type_params_opt()?;
            let params = p.parse_params()?;
            let ret = if p.eat(&T::Colon) { Some(p.parse_return_type()?) } else { None };
            if !p.at(&T::Arrow) {
                return Err(Fail);
            }
            Ok((tps, params, ret))
        });
        match head {
            Some((tps, params, ret)) => self.finish_arrow(start, is_async, tps, params, ret, no_in).map(Some),
            None => Ok(None),
        }
    }

    fn finish_arrow(
        &mut self,
        start: u32,
        is_async: bool,
        type_params: Vec<TypeParam>,
        params: Vec<Param>,
        return_type: Option<TypeExpr>,
        no_in: bool,
    ) -> PResult<Expr> {
        if self.at(&T::Arrow) && self.cur().nl_before {
            let span = self.cur().span;
            self.error(span, "line break is not allowed before `=>`", "move `=>` to the previous line");
        }
        self.expect(&T::Arrow)?;
        let body = if self.at(&T::LBrace) {
            FunctionBody::Block(self.parse_block()?.0)
        } else {
            FunctionBody::Expr(Box::new(self.parse_assign(no_in)?))
        };
        let span = self.span_from(start);
        let f = Function {
            name: None,
            params,
            body,
            is_async,
            is_arrow: true,
            is_generator: false,
            type_params,
            return_type,
            span,
        };
        Ok(expr(ExprKind::Function(Box::new(f)), span))
    }

    // ----- patterns -----------------------------------------------------------------

    /// A binding target: identifier, `[...]` or `{...}` pattern.
    pub(super) fn parse_binding_target(&mut self) -> PResult<Pattern> {
        self.enter()?;
        let r = self.parse_binding_target_inner();
        self.leave();
        r
    }

    fn parse_binding_target_inner(&mut self) -> PResult<Pattern> {
        match self.kind() {
            T::Ident(_) => {
                let id = self.ident()?;
                Ok(Pattern { span: id.span, kind: PatternKind::Ident(id) })
            }
            T::LBracket => self.parse_array_pattern(),
            T::LBrace => self.parse_object_pattern(),
            k if k.is_keyword() => Err(self.unexpected("identifier")),
            _ => Err(self.unexpected("identifier or destructuring pattern")),
        }
    }

    fn parse_array_pattern(&mut self) -> PResult<Pattern> {
        let start = self.start();
        self.bump();
        let mut elems = Vec::new();
        let mut rest = None;
        loop {
            if self.at(&T::RBracket) {
                break;
            }
            if self.eat(&T::Comma) {
                elems.push(None);
                continue;
            }
            if self.eat(&T::DotDotDot) {
                let p = self.parse_binding_target()?;
                if self.at(&T::Comma) {
                    self.error(p.span, "a rest element must be last in a destructuring pattern", "not last");
                    return Err(Fail);
                }
                rest = Some(Box::new(p));
                break;
            }
            let pattern = self.parse_binding_target()?;
            let default = if self.eat(&T::Eq) { Some(self.parse_assign(false)?) } else { None };
            elems.push(Some(PatternElem { pattern, default }));
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBracket)?;
        Ok(Pattern { kind: PatternKind::Array { elems, rest }, span: self.span_from(start) })
    }

    fn parse_object_pattern(&mut self) -> PResult<Pattern> {
        let start = self.start();
        self.bump();
        let mut props = Vec::new();
        let mut rest = None;
        loop {
            if self.at(&T::RBrace) {
                break;
            }
            if self.eat(&T::DotDotDot) {
                let id = self.ident()?;
                if self.at(&T::Comma) {
                    self.error(id.span, "a rest element must be last in a destructuring pattern", "not last");
                    return Err(Fail);
                }
                rest = Some(Box::new(Pattern { span: id.span, kind: PatternKind::Ident(id) }));
                break;
            }
            let (key, short) = self.parse_prop_key()?;
            let value = if self.eat(&T::Colon) {
                self.parse_binding_target()?
            } else {
                match short {
                    Some(id) => Pattern { span: id.span, kind: PatternKind::Ident(id) },
                    None => return Err(self.unexpected("`:`")),
                }
            };
            let default = if self.eat(&T::Eq) { Some(self.parse_assign(false)?) } else { None };
            props.push(ObjectPatternProp { key, value, default });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBrace)?;
        Ok(Pattern { kind: PatternKind::Object { props, rest }, span: self.span_from(start) })
    }

    /// Reinterprets an expression as an assignment target (for `=`,
    /// destructuring assignment and `for (x of ...)`).
    pub(super) fn expr_to_pattern(&mut self, e: Expr) -> PResult<Pattern> {
        let span = e.span;
        self.cover_inits.retain(|s| !(s.start >= span.start && s.end <= span.end));
        self.convert_pattern(e)
    }

    fn convert_pattern(&mut self, e: Expr) -> PResult<Pattern> {
        let span = e.span;
        let kind = match e.kind {
            ExprKind::Ident(id) => PatternKind::Ident(id),
            ExprKind::Member { .. } | ExprKind::Index { .. } => {
                if chain_has_optional(&e) {
                    self.error(span, "invalid assignment target", "optional chain cannot be assigned to");
                    return Err(Fail);
                }
                PatternKind::Expr(Box::new(e))
            }
            ExprKind::NonNull(inner) | ExprKind::As(inner, _) => return self.convert_pattern(*inner),
            ExprKind::Array(elems) => {
                let n = elems.len();
                let mut out = Vec::new();
                let mut rest = None;
                for (i, el) in elems.into_iter().enumerate() {
                    match el {
                        ArrayElem::Hole => out.push(None),
                        ArrayElem::Spread(x) => {
                            if i + 1 != n {
                                self.error(
                                    x.span,
                                    "a rest element must be last in a destructuring pattern",
                                    "not last",
                                );
                                return Err(Fail);
                            }
                            rest = Some(Box::new(self.convert_pattern(x)?));
                        }
                        ArrayElem::Expr(x) => out.push(Some(self.convert_pattern_elem(x)?)),
                    }
                }
                PatternKind::Array { elems: out, rest }
            }
            ExprKind::Object(props) => {
                let n = props.len();
                let mut out = Vec::new();
                let mut rest = None;
                for (i, p) in props.into_iter().enumerate() {
                    match p {
                        ObjectProp::KeyValue(key, v) => {
                            let PatternElem { pattern, default } = self.convert_pattern_elem(v)?;
                            out.push(ObjectPatternProp { key, value: pattern, default });
                        }
                        ObjectProp::Spread(x) => {
                            if i + 1 != n {
                                self.error(
                                    x.span,
                                    "a rest element must be last in a destructuring pattern",
                                    "not last",
                                );
                                return Err(Fail);
                            }
                            rest = Some(Box::new(self.convert_pattern(x)?));
                        }
                        ObjectProp::Method(_, f) | ObjectProp::Getter(_, f) | ObjectProp::Setter(_, f) => {
                            self.error(
                                f.span,
                                "invalid destructuring assignment target",
                                "a method cannot be assigned to",
                            );
                            return Err(Fail);
                        }
                    }
                }
                PatternKind::Object { props: out, rest }
            }
            ExprKind::Error => PatternKind::Expr(Box::new(Expr { kind: ExprKind::Error, span })),
            _ => {
                self.error(span, "invalid assignment target", "cannot assign to this");
                return Err(Fail);
            }
        };
        Ok(Pattern { kind, span })
    }

    /// An element of a destructuring assignment: `target` or `target = default`.
    fn convert_pattern_elem(&mut self, x: Expr) -> PResult<PatternElem> {
        match x.kind {
            ExprKind::Assign { op: AssignOp::Assign, target, value } => {
                Ok(PatternElem { pattern: *target, default: Some(*value) })
            }
            _ => Ok(PatternElem { pattern: self.convert_pattern(x)?, default: None }),
        }
    }

    /// Target of a compound assignment: a variable or property only.
    fn simple_target(&mut self, e: Expr) -> PResult<Pattern> {
        let e = strip_erased(e);
        let span = e.span;
        match e.kind {
            ExprKind::Ident(id) => Ok(Pattern { kind: PatternKind::Ident(id), span }),
            ExprKind::Member { .. } | ExprKind::Index { .. } if !chain_has_optional(&e) => {
                Ok(Pattern { kind: PatternKind::Expr(Box::new(e)), span })
            }
            _ => {
                self.error(span, "invalid assignment target", "cannot assign to this");
                Err(Fail)
            }
        }
    }
}
