//! Statements and declarations: variables, functions, classes, control
//! flow, modules, `select`, type aliases and interfaces.

use super::*;

/// How a function's name is handled.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum FnName {
    Required,
    Optional,
}

/// A `select` case head as written, before checking its shape.
enum SelectShape {
    Receive(Expr),
    Send(Expr, Expr),
    Sleep(Expr),
    Other(Span),
}

fn select_shape(e: Expr) -> SelectShape {
    let span = e.span;
    let ExprKind::Call { callee, mut args, optional: false } = e.kind else {
        return SelectShape::Other(span);
    };
    let one_arg = |args: &mut Vec<Argument>| match args.pop() {
        Some(Argument::Expr(a)) if args.is_empty() => Some(a),
        _ => None,
    };
    match callee.kind {
        ExprKind::Member { object, property, optional: false } if property.name == "receive" && args.is_empty() => {
            SelectShape::Receive(*object)
        }
        ExprKind::Member { object, property, optional: false } if property.name == "send" => match one_arg(&mut args) {
            Some(v) => SelectShape::Send(*object, v),
            None => SelectShape::Other(span),
        },
        ExprKind::Ident(id) if id.name == "sleep" => match one_arg(&mut args) {
            Some(ms) => SelectShape::Sleep(ms),
            None => SelectShape::Other(span),
        },
        _ => SelectShape::Other(span),
    }
}

const SELECT_HINT: &str =
    "a `select` case must be `const v = CH.receive()`, `CH.receive()`, `CH.send(VALUE)` or `sleep(MS)`";

impl<'s> Parser<'s> {
    pub(super) fn parse_statement(&mut self) -> PResult<Stmt> {
        self.enter()?;
        let r = self.parse_statement_inner();
        self.leave();
        r
    }

    fn parse_statement_inner(&mut self) -> PResult<Stmt> {
        let start = self.start();
        let kind = match self.kind() {
            T::LBrace => StmtKind::Block(self.parse_block()?.0),
            T::Semi => {
                self.bump();
                StmtKind::Empty
            }
            T::Const if self.peek_kind(1) == &T::Enum => {
                // `const enum` compiles to the same object as `enum`.
                self.bump();
                StmtKind::Enum(self.parse_enum()?)
            }
            T::Let | T::Const | T::Var => return self.parse_var_statement(),
            T::Function => match self.parse_function(start, false, FnName::Required, true)? {
                Some(f) => StmtKind::Function(f),
                None => StmtKind::Empty,
            },
            T::Class => StmtKind::Class(self.parse_class(start, FnName::Required)?),
            T::If => self.parse_if()?,
            T::While => {
                self.bump();
                let cond = self.parse_paren_expr()?;
                let body = Box::new(self.parse_sub_statement()?);
                StmtKind::While { cond, body }
            }
            T::Do => {
                self.bump();
                let body = Box::new(self.parse_sub_statement()?);
                self.expect(&T::While)?;
                let cond = self.parse_paren_expr()?;
                // After do-while a `;` is optional even on the same line.
                self.eat(&T::Semi);
                StmtKind::DoWhile { body, cond }
            }
            T::For => self.parse_for()?,
            T::Break | T::Continue => {
                let is_break = self.at(&T::Break);
                self.bump();
                let label = if matches!(self.kind(), T::Ident(_)) && !self.cur().nl_before {
                    Some(self.ident()?)
                } else {
                    None
                };
                self.semicolon()?;
                if is_break {
                    StmtKind::Break(label)
                } else {
                    StmtKind::Continue(label)
                }
            }
            T::Return => {
                self.bump();
                let arg = if matches!(self.kind(), T::Semi | T::RBrace | T::Eof) || self.cur().nl_before {
                    None
                } else {
                    Some(self.parse_expression(false)?)
                };
                self.semicolon()?;
                StmtKind::Return(arg)
            }
            T::Throw => {
                let kw = self.bump();
                if self.cur().nl_before {
                    self.error_hint(
                        kw,
                        "line break is not allowed after `throw`",
                        "the thrown value must start on this line",
                        "put the thrown expression on the same line as `throw`",
                    );
                }
                let arg = self.parse_expression(false)?;
                self.semicolon()?;
                StmtKind::Throw(arg)
            }
            T::Try => self.parse_try()?,
            T::Switch => self.parse_switch()?,
            T::Import => self.parse_import()?,
            T::Export => self.parse_export()?,
            T::Debugger => {
                self.bump();
                self.semicolon()?;
                StmtKind::Empty
            }
            T::Enum => StmtKind::Enum(self.parse_enum()?),

            T::With => {
                let span = self.cur().span;
                self.error(span, "`with` statements are not supported", "`with` statement");
                return Err(Fail);
            }
            T::Ident(name) => {
                let next = self.peek(1);
                let same_line = !next.nl_before;
                match name.as_str() {
                    _ if next.kind == T::Colon => {
                        let label = self.ident()?;
                        self.bump();
                        let body = Box::new(self.parse_statement()?);
                        StmtKind::Labeled { label, body }
                    }
                    "async" if next.kind == T::Function && same_line => {
                        self.bump();
                        match self.parse_function(start, true, FnName::Required, true)? {
                            Some(f) => StmtKind::Function(f),
                            None => StmtKind::Empty,
                        }
                    }
                    "type" if matches!(next.kind, T::Ident(_)) && same_line => self.parse_type_alias()?,
                    "interface" if matches!(next.kind, T::Ident(_)) && same_line => self.parse_interface()?,
                    "select" if next.kind == T::LBrace => self.parse_select()?,
                    "abstract" if next.kind == T::Class && same_line => {
                        self.bump();
                        StmtKind::Class(self.parse_class(start, FnName::Required)?)
                    }
                    "declare" if same_line && (matches!(next.kind, T::Ident(_)) || next.kind.is_keyword()) => {
                        self.parse_declare()?
                    }
                    "namespace" | "module"
                        if same_line && (matches!(next.kind, T::Ident(_)) || next.kind.is_keyword()) =>
                    {
                        let span = self.cur().span;
                        let msg = format!("`{name}` declarations are not supported");
                        self.error(span, msg, "not supported");
                        return Err(Fail);
                    }
                    _ => self.parse_expression_statement()?,
                }
            }
            _ => self.parse_expression_statement()?,
        };
        Ok(Stmt { kind, span: self.span_from(start) })
    }

    /// `enum Name { A, B = 2, "c d" = "x" }` at `enum`.
    fn parse_enum(&mut self) -> PResult<EnumDecl> {
        self.expect(&T::Enum)?;
        let name = self.ident()?;
        self.expect(&T::LBrace)?;
        let mut members = Vec::new();
        while !self.at(&T::RBrace) {
            let span = self.cur().span;
            let mname = match self.kind() {
                T::Ident(n) => n.clone(),
                T::Str(s) => s.clone(),
                k if k.is_keyword() => k.as_str().to_string(),
                T::Number(_) | T::LBracket => {
                    self.error(span, "an enum member cannot have a numeric or computed name", "not a member name");
                    return Err(Fail);
                }
                _ => return Err(self.unexpected("an enum member name")),
            };
            self.bump();
            let init = if self.eat(&T::Eq) { Some(self.parse_assign(false)?) } else { None };
            members.push(EnumMember { name: Ident { name: mname, span }, init });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBrace)?;
        Ok(EnumDecl { name, members })
    }

    /// `declare ...` at `declare`: an ambient declaration, which only
    /// describes what exists elsewhere; it is parsed and erased.
    fn parse_declare(&mut self) -> PResult<StmtKind> {
        let start = self.start();
        self.bump();
        match self.kind() {
            T::Let | T::Const | T::Var if self.peek_kind(1) != &T::Enum => {
                self.bump();
                loop {
                    self.parse_binding_target()?;
                    if self.eat(&T::Colon) {
                        self.parse_type()?;
                    }
                    if self.eat(&T::Eq) {
                        self.parse_assign(false)?;
                    }
                    if !self.eat(&T::Comma) {
                        break;
                    }
                }
                self.semicolon()?;
            }
            T::Ident(n) if matches!(n.as_str(), "module" | "namespace" | "global") => {
                // `declare module "m" { ... }`, `declare global { ... }`:
                // the body holds only declarations, skipped as a whole.
                self.bump();
                while !matches!(self.kind(), T::LBrace | T::Semi | T::Eof) && !self.cur().nl_before {
                    self.bump();
                }
                if self.at(&T::LBrace) {
                    let mut depth = 0usize;
                    loop {
                        match self.kind() {
                            T::LBrace | T::TemplateHead(_) => depth += 1,
                            T::RBrace | T::TemplateTail(_) => depth -= 1,
                            T::Eof => return Err(self.unexpected("`}`")),
                            _ => {}
                        }
                        self.bump();
                        if depth == 0 {
                            break;
                        }
                    }
                } else {
                    self.semicolon()?;
                }
            }
            _ => {
                let s = self.parse_statement()?;
                let ok = matches!(
                    &s.kind,
                    StmtKind::Function(_)
                        | StmtKind::Empty
                        | StmtKind::Class(_)
                        | StmtKind::Enum(_)
                        | StmtKind::TypeAlias { .. }
                        | StmtKind::Interface { .. }
                );
                if !ok {
                    let span = self.span_from(start);
                    self.error(span, "`declare` must be followed by a declaration", "not a declaration");
                }
            }
        }
        Ok(StmtKind::Empty)
    }

    fn parse_expression_statement(&mut self) -> PResult<StmtKind> {
        let e = self.parse_expression(false)?;
        self.semicolon()?;
        Ok(StmtKind::Expr(e))
    }

    /// The body of `if`/`while`/`for`/`do`: any statement, but a lexical
    /// declaration there is an error (as in JS).
    fn parse_sub_statement(&mut self) -> PResult<Stmt> {
        let decl = match self.kind() {
            T::Let | T::Const | T::Class => true,
            T::Ident(n) if n == "async" => self.peek_kind(1) == &T::Function,
            T::Function => true,
            _ => false,
        };
        if decl {
            let span = self.cur().span;
            self.error_hint(
                span,
                "declaration cannot appear in a single-statement context",
                "declaration not allowed here",
                "wrap it in a block: `{ ... }`",
            );
        }
        self.parse_statement()
    }

    pub(super) fn parse_paren_expr(&mut self) -> PResult<Expr> {
        self.expect(&T::LParen)?;
        let e = self.parse_expression(false)?;
        self.expect(&T::RParen)?;
        Ok(e)
    }

    // ----- variables --------------------------------------------------------

    fn parse_var_statement(&mut self) -> PResult<Stmt> {
        let start = self.start();
        let idx = self.pos;
        let (decl, recovered) = self.parse_var_decl(false, Some(idx))?;
        if !recovered {
            self.check_initializers(&decl);
            self.semicolon()?;
        }
        Ok(Stmt { kind: StmtKind::Var(decl), span: self.span_from(start) })
    }

    /// `let`/`const`/`var` and its declarators (no `;`). With `stmt_idx`,
    /// an error in an initialiser is recovered from here, keeping the
    /// binding with an error expression (the flag in the result is set).
    pub(super) fn parse_var_decl(&mut self, no_in: bool, stmt_idx: Option<usize>) -> PResult<(VarDecl, bool)> {
        let kind = match self.kind() {
            T::Const => VarKind::Const,
            T::Var => {
                let span = self.cur().span;
                self.error_hint(span, "`var` is not supported", "`var` declaration", "use `let` (or `const`) instead");
                VarKind::Let
            }
            _ => VarKind::Let,
        };
        self.bump();
        let mut decls = Vec::new();
        loop {
            let target = self.parse_binding_target()?;
            if self.at(&T::Bang) && !self.cur().nl_before {
                self.bump(); // definite assignment assertion `let x!: T`
            }
            let ty = if self.eat(&T::Colon) { Some(self.parse_type()?) } else { None };
            let init = if self.eat(&T::Eq) {
                match self.parse_assign(no_in) {
                    Ok(e) => Some(e),
                    Err(Fail) => match stmt_idx {
                        Some(idx) => {
                            let span = self.cur().span;
                            self.recover(idx);
                            let init = Some(Expr { kind: ExprKind::Error, span });
                            decls.push(VarDeclarator { target, ty, init });
                            return Ok((VarDecl { kind, decls }, true));
                        }
                        None => return Err(Fail),
                    },
                }
            } else {
                None
            };
            decls.push(VarDeclarator { target, ty, init });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        Ok((VarDecl { kind, decls }, false))
    }

    /// `const` and destructuring declarations need an initialiser.
    pub(super) fn check_initializers(&mut self, decl: &VarDecl) {
        for d in &decl.decls {
            if d.init.is_some() {
                continue;
            }
            if decl.kind == VarKind::Const {
                self.error_hint(
                    d.target.span,
                    "missing initializer in `const` declaration",
                    "needs an initializer",
                    "a `const` must be given its value where it is declared",
                );
            } else if !matches!(d.target.kind, PatternKind::Ident(_)) {
                self.error(d.target.span, "missing initializer in destructuring declaration", "needs an initializer");
            }
        }
    }

    // ----- control flow ------------------------------------------------------

    fn parse_if(&mut self) -> PResult<StmtKind> {
        self.bump();
        let cond = self.parse_paren_expr()?;
        let then = Box::new(self.parse_sub_statement()?);
        let otherwise = if self.eat(&T::Else) { Some(Box::new(self.parse_sub_statement()?)) } else { None };
        Ok(StmtKind::If { cond, then, otherwise })
    }

    fn parse_for(&mut self) -> PResult<StmtKind> {
        self.bump();
        let for_await = self.at_ident("await").then(|| self.cur().span);
        if for_await.is_some() {
            self.bump();
        }
        self.expect(&T::LParen)?;
        let init = match self.kind() {
            T::Semi => None,
            T::Let | T::Const | T::Var => {
                let (mut decl, _) = self.parse_var_decl(true, None)?;
                let single = decl.decls.len() == 1;
                if single && (self.at_ident("of") || self.at(&T::In)) {
                    let is_of = self.at_ident("of");
                    let Some(d) = decl.decls.pop() else {
                        return Err(Fail);
                    };
                    if d.init.is_some() {
                        let what = if is_of { "for-of" } else { "for-in" };
                        self.error(
                            d.target.span,
                            format!("the variable of a {what} loop cannot have an initializer"),
                            "initializer not allowed",
                        );
                    }
                    if let Some(ty) = &d.ty {
                        self.error(
                            ty.span,
                            "the variable of a for loop header cannot have a type annotation",
                            "remove this annotation",
                        );
                    }
                    self.bump();
                    return self.parse_for_in_of(is_of, for_await, Some(decl.kind), d.target);
                }
                self.check_initializers(&decl);
                Some(ForInit::Var(decl))
            }
            _ => {
                let e = self.parse_expression(true)?;
                if self.at_ident("of") || self.at(&T::In) {
                    let is_of = self.at_ident("of");
                    let target = self.expr_to_pattern(e)?;
                    self.bump();
                    return self.parse_for_in_of(is_of, for_await, None, target);
                }
                Some(ForInit::Expr(e))
            }
        };
        if let Some(span) = for_await {
            self.error(span, "`for await` needs an `of` loop: `for await (const x of xs)`", "`for await` without `of`");
        }
        self.expect(&T::Semi)?;
        let cond = if self.at(&T::Semi) { None } else { Some(self.parse_expression(false)?) };
        self.expect(&T::Semi)?;
        let update = if self.at(&T::RParen) { None } else { Some(self.parse_expression(false)?) };
        self.expect(&T::RParen)?;
        let body = Box::new(self.parse_sub_statement()?);
        Ok(StmtKind::For { init, cond, update, body })
    }

    /// After `of` / `in` in a for header.
    fn parse_for_in_of(
        &mut self,
        is_of: bool,
        for_await: Option<Span>,
        decl: Option<VarKind>,
        target: Pattern,
    ) -> PResult<StmtKind> {
        if let (Some(span), false) = (for_await, is_of) {
            self.error(span, "`for await` needs an `of` loop: `for await (const x of xs)`", "`for await` without `of`");
        }
        let e = if is_of { self.parse_assign(false)? } else { self.parse_expression(false)? };
        self.expect(&T::RParen)?;
        let body = Box::new(self.parse_sub_statement()?);
        Ok(if is_of {
            StmtKind::ForOf { decl, target, iterable: e, body, is_await: for_await.is_some() }
        } else {
            StmtKind::ForIn { decl, target, object: e, body }
        })
    }

    fn parse_try(&mut self) -> PResult<StmtKind> {
        self.bump();
        let (block, _) = self.parse_block()?;
        let handler = if self.eat(&T::Catch) {
            let param = if self.eat(&T::LParen) {
                let p = self.parse_binding_target()?;
                if self.eat(&T::Colon) {
                    self.parse_type()?;
                }
                self.expect(&T::RParen)?;
                Some(p)
            } else {
                None
            };
            let (body, _) = self.parse_block()?;
            Some(CatchClause { param, body })
        } else {
            None
        };
        let finalizer = if self.eat(&T::Finally) { Some(self.parse_block()?.0) } else { None };
        if handler.is_none() && finalizer.is_none() {
            return Err(self.unexpected("`catch` or `finally`"));
        }
        Ok(StmtKind::Try { block, handler, finalizer })
    }

    /// Statements of a `case`/`default` clause, up to the next clause.
    fn parse_case_body(&mut self) -> Vec<Stmt> {
        let mut body = Vec::new();
        while !matches!(self.kind(), T::Case | T::Default | T::RBrace | T::Eof) {
            let before = self.pos;
            if let Some(s) = self.parse_statement_recovering() {
                body.push(s);
            }
            if self.pos == before {
                self.bump();
            }
        }
        body
    }

    fn parse_switch(&mut self) -> PResult<StmtKind> {
        self.bump();
        let discriminant = self.parse_paren_expr()?;
        self.expect(&T::LBrace)?;
        let mut cases = Vec::new();
        let mut seen_default = false;
        loop {
            let start = self.start();
            let test = match self.kind() {
                T::RBrace => {
                    self.bump();
                    break;
                }
                T::Case => {
                    let case_idx = self.pos;
                    self.bump();
                    let head = self.parse_expression(false).and_then(|t| self.expect(&T::Colon).map(|_| t));
                    match head {
                        Ok(t) => Some(t),
                        Err(Fail) => {
                            self.recover_case_head(case_idx);
                            Some(Expr { kind: ExprKind::Error, span: self.span_from(start) })
                        }
                    }
                }
                T::Default => {
                    let span = self.bump();
                    if seen_default {
                        self.error(span, "multiple `default` clauses in `switch`", "second `default`");
                    }
                    seen_default = true;
                    self.expect(&T::Colon)?;
                    None
                }
                _ => return Err(self.unexpected("`case`, `default` or `}`")),
            };
            let body = self.parse_case_body();
            cases.push(SwitchCase { test, body, span: self.span_from(start) });
        }
        Ok(StmtKind::Switch { discriminant, cases })
    }

    fn parse_select(&mut self) -> PResult<StmtKind> {
        self.bump();
        self.expect(&T::LBrace)?;
        let mut cases = Vec::new();
        let mut seen_default = false;
        loop {
            let start = self.start();
            let kind = match self.kind() {
                T::RBrace => {
                    self.bump();
                    break;
                }
                T::Case => {
                    let case_idx = self.pos;
                    self.bump();
                    let head = self.parse_select_head().and_then(|k| self.expect(&T::Colon).map(|_| k));
                    match head {
                        Ok(k) => k,
                        Err(Fail) => {
                            self.recover_case_head(case_idx);
                            None
                        }
                    }
                }
                T::Default => {
                    let span = self.bump();
                    if seen_default {
                        self.error(span, "multiple `default` cases in `select`", "second `default`");
                    }
                    seen_default = true;
                    self.expect(&T::Colon)?;
                    Some(SelectCaseKind::Default)
                }
                _ => return Err(self.unexpected("`case`, `default` or `}`")),
            };
            let body = self.parse_case_body();
            if let Some(kind) = kind {
                cases.push(SelectCase { kind, body, span: self.span_from(start) });
            }
        }
        Ok(StmtKind::Select(cases))
    }

    /// The head of a `select` case; `None` (after reporting) when its shape
    /// is not one of the allowed ones.
    fn parse_select_head(&mut self) -> PResult<Option<SelectCaseKind>> {
        if matches!(self.kind(), T::Let | T::Const | T::Var) {
            let kind = match self.kind() {
                T::Const => VarKind::Const,
                T::Var => {
                    let span = self.cur().span;
                    self.error_hint(
                        span,
                        "`var` is not supported",
                        "`var` declaration",
                        "use `let` (or `const`) instead",
                    );
                    VarKind::Let
                }
                _ => VarKind::Let,
            };
            self.bump();
            let pattern = self.parse_binding_target()?;
            if self.eat(&T::Colon) {
                self.parse_type()?;
            }
            self.expect(&T::Eq)?;
            let e = self.parse_assign(false)?;
            return Ok(match select_shape(e) {
                SelectShape::Receive(channel) => {
                    Some(SelectCaseKind::Receive { binding: Some((kind, pattern)), channel })
                }
                SelectShape::Send(..) | SelectShape::Sleep(..) => {
                    let span = self.span_from(pattern.span.start);
                    self.error_hint(
                        span,
                        "invalid `select` case",
                        "only a `receive()` can be bound to a variable",
                        SELECT_HINT,
                    );
                    None
                }
                SelectShape::Other(span) => {
                    self.error_hint(span, "invalid `select` case", "not a channel receive", SELECT_HINT);
                    None
                }
            });
        }
        let e = self.parse_expression(false)?;
        Ok(match select_shape(e) {
            SelectShape::Receive(channel) => Some(SelectCaseKind::Receive { binding: None, channel }),
            SelectShape::Send(channel, value) => Some(SelectCaseKind::Send { channel, value }),
            SelectShape::Sleep(ms) => Some(SelectCaseKind::Timeout(ms)),
            SelectShape::Other(span) => {
                self.error_hint(span, "invalid `select` case", "not a channel operation", SELECT_HINT);
                None
            }
        })
    }

    // ----- functions ------------------------------------------------------

    /// `function name<T>(params): R { body }` at `function`. Returns `None`
    /// for a body-less overload signature (when `allow_overload`).
    pub(super) fn parse_function(
        &mut self,
        start: u32,
        is_async: bool,
        name: FnName,
        allow_overload: bool,
    ) -> PResult<Option<Function>> {
        self.expect(&T::Function)?;
        let is_generator = self.eat(&T::Star);
        let fname = if matches!(self.kind(), T::Ident(_)) {
            Some(self.ident()?)
        } else if name == FnName::Required {
            return Err(self.unexpected("function name"));
        } else {
            None
        };
        let f = self.parse_function_tail(start, fname, is_async, allow_overload)?;
        Ok(f.map(|f| Function { is_generator, ..f }))
    }

    /// Type parameters, parameters, return type and body.
    pub(super) fn parse_function_tail(
        &mut self,
        start: u32,
        name: Option<Ident>,
        is_async: bool,
        allow_overload: bool,
    ) -> PResult<Option<Function>> {
        let type_params = self.parse_type_params_opt()?;
        let params = self.parse_params()?;
        let return_type = if self.eat(&T::Colon) { Some(self.parse_return_type()?) } else { None };
        if allow_overload
            && !self.at(&T::LBrace)
            && (matches!(self.kind(), T::Semi | T::RBrace) || (self.cur().nl_before && !self.at_eof()))
        {
            self.eat(&T::Semi);
            return Ok(None);
        }
        let (body, _) = self.parse_block()?;
        Ok(Some(Function {
            name,
            params,
            body: FunctionBody::Block(body),
            is_async,
            is_arrow: false,
            is_generator: false,
            type_params,
            return_type,
            span: self.span_from(start),
        }))
    }

    /// `( params )`.
    pub(super) fn parse_params(&mut self) -> PResult<Vec<Param>> {
        self.expect(&T::LParen)?;
        let ctor = std::mem::take(&mut self.ctor_params);
        let mut props = Vec::new();
        let mut params = Vec::new();
        while !self.at(&T::RParen) {
            let start = self.start();
            // TypeScript `this` parameter: erased.
            if self.at(&T::This) && matches!(self.peek_kind(1), T::Colon | T::Comma | T::RParen) {
                self.bump();
                if self.eat(&T::Colon) {
                    self.parse_type()?;
                }
                if !self.eat(&T::Comma) {
                    break;
                }
                continue;
            }
            let mut modifier = None;
            while let T::Ident(n) = self.kind() {
                if !(matches!(n.as_str(), "public" | "private" | "protected" | "readonly" | "override")
                    && matches!(self.peek_kind(1), T::Ident(_) | T::LBrace | T::LBracket | T::DotDotDot))
                {
                    break;
                }
                modifier = Some(modifier.unwrap_or(self.cur().span));
                self.bump();
            }
            let rest = self.eat(&T::DotDotDot);
            let pattern = self.parse_binding_target()?;
            if let Some(mspan) = modifier {
                match &pattern.kind {
                    PatternKind::Ident(id) if ctor && !rest => props.push((id.clone(), mspan)),
                    PatternKind::Ident(_) if ctor => {
                        self.error(mspan, "a parameter property cannot be a rest parameter", "rest parameter");
                    }
                    _ if ctor => {
                        self.error(
                            mspan,
                            "a parameter property cannot be declared using a binding pattern",
                            "binding pattern",
                        );
                    }
                    _ => self.error_hint(
                        mspan,
                        "a parameter property is only allowed in a constructor",
                        "modifier on a parameter",
                        "remove the modifier, or move the parameter to the class's constructor",
                    ),
                }
            }
            let optional = self.eat(&T::Question);
            let ty = if self.eat(&T::Colon) { Some(self.parse_type()?) } else { None };
            let default = if self.eat(&T::Eq) { Some(self.parse_assign(false)?) } else { None };
            let span = self.span_from(start);
            if rest && default.is_some() {
                self.error(span, "a rest parameter cannot have a default value", "rest parameter with default");
            }
            if rest && !self.at(&T::RParen) {
                self.error(span, "a rest parameter must be the last parameter", "not last");
            }
            params.push(Param { pattern, ty, default, rest, optional, span });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RParen)?;
        if ctor {
            self.param_props = props;
        }
        Ok(params)
    }

    // ----- classes ----------------------------------------------------------

    /// `class Name<T> extends E implements I { members }` at `class`.
    pub(super) fn parse_class(&mut self, start: u32, name: FnName) -> PResult<Class> {
        self.expect(&T::Class)?;
        let cname = match self.kind() {
            T::Ident(n) if n != "implements" => Some(self.ident()?),
            _ if name == FnName::Required => return Err(self.unexpected("class name")),
            _ => None,
        };
        let type_params = self.parse_type_params_opt()?;
        let extends = if self.eat(&T::Extends) {
            let e = self.parse_lhs()?;
            if self.at(&T::Lt) {
                self.parse_type_args()?;
            }
            Some(Box::new(e))
        } else {
            None
        };
        let mut implements = Vec::new();
        if self.at_ident("implements") {
            self.bump();
            loop {
                implements.push(self.parse_type()?);
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        self.expect(&T::LBrace)?;
        let mut members = Vec::new();
        let mut ctor_props = None;
        loop {
            if self.eat(&T::Semi) {
                continue;
            }
            if self.eat(&T::RBrace) {
                break;
            }
            if self.at_eof() {
                return Err(self.unexpected("`}`"));
            }
            let member_start = self.pos;
            let cover_start = self.start();
            match self.parse_class_member() {
                Ok(Some(m)) => {
                    if let ClassMemberKind::Constructor(f) = &m.kind {
                        let props = std::mem::take(&mut self.param_props);
                        if !props.is_empty() {
                            ctor_props = Some((props, f.span));
                        }
                    }
                    members.push(m)
                }
                Ok(None) => {}
                Err(Fail) => {
                    self.flush_cover_inits(cover_start, false);
                    self.recover_member(member_start);
                    if self.pos == member_start {
                        self.bump();
                    }
                }
            }
        }
        if let Some((props, ctor_span)) = ctor_props {
            self.lower_param_props(&mut members, props, ctor_span, extends.is_some());
        }
        Ok(Class { name: cname, type_params, extends, implements, members, span: self.span_from(start) })
    }

    /// Parameter properties, as TypeScript compiles them: each becomes a
    /// field declared before the class's own fields, assigned from the
    /// parameter by `this.x = x` at the start of the constructor's body (in
    /// a derived class, right after the top-level `super(...)` call).
    fn lower_param_props(
        &mut self,
        members: &mut Vec<ClassMember>,
        props: Vec<(Ident, Span)>,
        ctor_span: Span,
        derived: bool,
    ) {
        let Some(ClassMemberKind::Constructor(ctor)) =
            members.iter_mut().map(|m| &mut m.kind).find(|k| matches!(k, ClassMemberKind::Constructor(_)))
        else {
            return;
        };
        let FunctionBody::Block(body) = &mut ctor.body else { return };
        let at = if derived {
            let is_super_call = |s: &Stmt| {
                matches!(&s.kind, StmtKind::Expr(Expr { kind: ExprKind::Call { callee, .. }, .. })
                    if matches!(callee.kind, ExprKind::Super))
            };
            match body.iter().position(is_super_call) {
                Some(i) => i + 1,
                None => {
                    self.error_hint(
                        props[0].1,
                        "a derived class with parameter properties must call `super(...)` at the top level of its constructor",
                        "parameter property",
                        "call `super(...)` as a statement of the constructor's body, not inside a block or expression",
                    );
                    return;
                }
            }
        } else {
            0
        };
        // The generated nodes take their positions from the modifier (for
        // `this`, the member and the assignment) and from the parameter's
        // name (for the read of the parameter): each position names one
        // node, as the compiler's tables expect.
        let assigns: Vec<Stmt> = props
            .iter()
            .map(|(id, mspan)| {
                let this = Expr { kind: ExprKind::This, span: *mspan };
                let member = Expr {
                    kind: ExprKind::Member { object: Box::new(this), property: id.clone(), optional: false },
                    span: *mspan,
                };
                let target = Pattern { kind: PatternKind::Expr(Box::new(member)), span: *mspan };
                let value = Expr { kind: ExprKind::Ident(id.clone()), span: id.span };
                let assign = Expr {
                    kind: ExprKind::Assign { op: AssignOp::Assign, target: Box::new(target), value: Box::new(value) },
                    span: *mspan,
                };
                Stmt { kind: StmtKind::Expr(assign), span: *mspan }
            })
            .collect();
        body.splice(at..at, assigns);
        let fields = props.iter().map(|(id, mspan)| ClassMember {
            kind: ClassMemberKind::Field { key: PropKey::Named(id.name.clone(), id.span), ty: None, init: None },
            is_static: false,
            span: Span { start: mspan.start, end: ctor_span.start.max(mspan.start) },
        });
        let fields: Vec<ClassMember> = fields.collect();
        members.splice(0..0, fields);
    }

    fn parse_class_member(&mut self) -> PResult<Option<ClassMember>> {
        let start = self.start();
        let mut is_static = false;
        let mut is_async = false;
        let mut is_abstract = false;
        while let T::Ident(n) = self.kind() {
            let n = n.as_str();
            if !matches!(
                n,
                "public"
                    | "private"
                    | "protected"
                    | "readonly"
                    | "static"
                    | "abstract"
                    | "override"
                    | "declare"
                    | "async"
                    | "accessor"
            ) {
                break;
            }
            let next = self.peek(1);
            if !starts_property_name(&next.kind) || (next.nl_before && n != "static") {
                break;
            }
            match n {
                "static" => is_static = true,
                "async" => is_async = true,
                "abstract" | "declare" => is_abstract = true,
                _ => {}
            }
            self.bump();
        }
        if self.at_ident("static") && self.peek_kind(1) == &T::LBrace {
            self.bump();
            let body_start = self.start();
            let (body, _) = self.parse_block()?;
            let func = Function {
                name: None,
                params: Vec::new(),
                body: FunctionBody::Block(body),
                is_async: false,
                is_generator: false,
                is_arrow: false,
                type_params: Vec::new(),
                return_type: None,
                span: self.span_from(body_start),
            };
            return Ok(Some(ClassMember {
                kind: ClassMemberKind::StaticBlock(func),
                is_static: true,
                span: self.span_from(start),
            }));
        }
        if self.at(&T::LBracket) && matches!(self.peek_kind(1), T::Ident(_)) && self.peek_kind(2) == &T::Colon {
            // An index signature `[key: string]: T;`: a type only.
            self.bump();
            self.bump();
            self.bump();
            self.parse_type()?;
            self.expect(&T::RBracket)?;
            if self.eat(&T::Colon) {
                self.parse_type()?;
            }
            self.semicolon()?;
            return Ok(None);
        }
        let mut accessor = None;
        if (self.at_ident("get") || self.at_ident("set")) && starts_property_name(&self.peek(1).kind) {
            accessor = Some(self.at_ident("get"));
            self.bump();
        }
        let is_generator = accessor.is_none() && self.eat(&T::Star);
        let (key, _) = self.parse_prop_key()?;
        if is_generator && !(self.at(&T::LParen) || self.at(&T::Lt)) {
            return Err(self.unexpected("`(`"));
        }
        if matches!(self.kind(), T::Question | T::Bang) && !self.cur().nl_before {
            self.bump();
        }
        let kind = if self.at(&T::LParen) || self.at(&T::Lt) {
            self.ctor_params =
                accessor.is_none() && !is_static && matches!(&key, PropKey::Named(n, _) if n == "constructor");
            let fname = prop_key_ident(&key);
            let key_start = prop_key_span(&key).start;
            let allow_overload = true;
            let Some(mut func) = self.parse_function_tail(key_start, fname, is_async, allow_overload)? else {
                return Ok(None);
            };
            func.is_generator = is_generator;
            match accessor {
                Some(true) => {
                    self.check_getter(&func);
                    ClassMemberKind::Getter { key, func }
                }
                Some(false) => {
                    self.check_setter(&func);
                    ClassMemberKind::Setter { key, func }
                }
                None => {
                    let is_ctor = !is_static && matches!(&key, PropKey::Named(n, _) if n == "constructor");
                    if is_ctor {
                        if is_async {
                            self.error(func.span, "a constructor cannot be `async`", "async constructor");
                        }
                        ClassMemberKind::Constructor(func)
                    } else {
                        ClassMemberKind::Method { key, func }
                    }
                }
            }
        } else {
            if accessor.is_some() || is_async {
                return Err(self.unexpected("`(`"));
            }
            let ty = if self.eat(&T::Colon) { Some(self.parse_type()?) } else { None };
            let init = if self.eat(&T::Eq) { Some(self.parse_assign(false)?) } else { None };
            self.semicolon()?;
            if is_abstract {
                // `declare x: T` / `abstract x: T` create no field at run time.
                return Ok(None);
            }
            ClassMemberKind::Field { key, ty, init }
        };
        Ok(Some(ClassMember { kind, is_static, span: self.span_from(start) }))
    }

    pub(super) fn check_getter(&mut self, f: &Function) {
        if !f.params.is_empty() {
            self.error(f.params[0].span, "a getter cannot have parameters", "unexpected parameter");
        }
    }

    pub(super) fn check_setter(&mut self, f: &Function) {
        if f.params.len() != 1 || f.params[0].rest {
            self.error(f.span, "a setter must have exactly one parameter", "setter");
        }
    }

    // ----- modules ----------------------------------------------------------

    fn parse_module_source(&mut self) -> PResult<(String, Span)> {
        if let T::Str(s) = self.kind() {
            let s = s.clone();
            let span = self.bump();
            Ok((s, span))
        } else {
            Err(self.unexpected("a module path string"))
        }
    }

    fn expect_contextual(&mut self, word: &str) -> PResult<()> {
        if self.at_ident(word) {
            self.bump();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{word}`")))
        }
    }

    fn parse_import(&mut self) -> PResult<StmtKind> {
        if matches!(self.peek_kind(1), T::LParen | T::Dot) {
            let span = self.cur().span;
            self.error(span, "dynamic `import()` and `import.meta` are not supported", "not supported");
            return Err(Fail);
        }
        self.bump();
        let type_only = self.at_ident("type")
            && (matches!(self.peek_kind(1), T::LBrace | T::Star)
                || (matches!(self.peek_kind(1), T::Ident(_)) && !self.peek_is_ident(1, "from")));
        if type_only {
            self.bump();
        }
        let kind = match self.kind() {
            T::Str(_) => {
                let (source, source_span) = self.parse_module_source()?;
                self.semicolon()?;
                return Ok(StmtKind::Import(ImportDecl { source, source_span, kind: ImportKind::Named(Vec::new()) }));
            }
            T::LBrace => {
                self.bump();
                let mut names = Vec::new();
                while !self.at(&T::RBrace) {
                    let mut is_type = false;
                    if self.at_ident("type")
                        && (matches!(self.peek_kind(1), T::Ident(_) | T::Str(_)) || self.peek_kind(1).is_keyword())
                        && !self.peek_is_ident(1, "as")
                    {
                        is_type = true;
                        self.bump();
                    }
                    let imported = if let T::Str(s) = self.kind() {
                        let id = Ident { name: s.clone(), span: self.cur().span };
                        self.bump();
                        id
                    } else {
                        self.ident_name()?
                    };
                    let local = if self.at_ident("as") {
                        self.bump();
                        self.ident()?
                    } else {
                        let tok = &self.toks[self.pos - 1];
                        if !matches!(tok.kind, T::Ident(_)) {
                            return Err(self.unexpected("`as`"));
                        }
                        imported.clone()
                    };
                    if !is_type {
                        names.push((imported, local));
                    }
                    if !self.eat(&T::Comma) {
                        break;
                    }
                }
                self.expect_list_close(&T::RBrace)?;
                ImportKind::Named(names)
            }
            T::Star => {
                self.bump();
                self.expect_contextual("as")?;
                ImportKind::Namespace(self.ident()?)
            }
            T::Ident(_) => {
                // `import x from "m"` / `import x, { a } from "m"`: `x` is
                // the export named `default`.
                let local = self.ident()?;
                let mut names = vec![(Ident { name: "default".into(), span: local.span }, local)];
                if self.eat(&T::Comma) {
                    if !self.at(&T::LBrace) {
                        return Err(self.unexpected("`{` (a namespace import goes in its own `import`)"));
                    }
                    self.bump();
                    while !self.at(&T::RBrace) {
                        let imported = self.ident_name()?;
                        let local = if self.at_ident("as") {
                            self.bump();
                            self.ident()?
                        } else {
                            imported.clone()
                        };
                        names.push((imported, local));
                        if !self.eat(&T::Comma) {
                            break;
                        }
                    }
                    self.expect_list_close(&T::RBrace)?;
                }
                ImportKind::Named(names)
            }
            _ => return Err(self.unexpected("`{`, `*` or a module path")),
        };
        self.expect_contextual("from")?;
        let (source, source_span) = self.parse_module_source()?;
        self.semicolon()?;
        if type_only {
            return Ok(StmtKind::Empty);
        }
        Ok(StmtKind::Import(ImportDecl { source, source_span, kind }))
    }

    fn parse_export(&mut self) -> PResult<StmtKind> {
        self.bump();
        match self.kind() {
            T::Default => self.parse_export_default(),
            T::Star => {
                self.bump();
                if self.at_ident("as") {
                    let span = self.cur().span;
                    self.error_hint(
                        span,
                        "`export * as name from` is not supported",
                        "namespace re-export",
                        "import the namespace, then export it: `import * as name from \"./m\"; export { name };`",
                    );
                    return Err(Fail);
                }
                self.expect_contextual("from")?;
                let (source, source_span) = self.parse_module_source()?;
                self.semicolon()?;
                Ok(StmtKind::Import(ImportDecl { source, source_span, kind: ImportKind::ReExportAll }))
            }
            T::LBrace => {
                self.bump();
                let mut specs = Vec::new();
                let mut keyword_locals = Vec::new();
                while !self.at(&T::RBrace) {
                    if self.at_ident("type") && matches!(self.peek_kind(1), T::Ident(_)) && !self.peek_is_ident(1, "as")
                    {
                        self.bump();
                        self.ident_name()?;
                        if self.at_ident("as") {
                            self.bump();
                            self.ident_name()?;
                        }
                    } else {
                        // A keyword is checked once the `from` is known:
                        // only a re-export may name `default`.
                        if self.kind().is_keyword() {
                            keyword_locals.push(self.cur().span);
                        }
                        let local = self.ident_name()?;
                        let exported = if self.at_ident("as") {
                            self.bump();
                            self.ident_name()?
                        } else {
                            local.clone()
                        };
                        specs.push(ExportSpecifier { local, exported });
                    }
                    if !self.eat(&T::Comma) {
                        break;
                    }
                }
                self.expect_list_close(&T::RBrace)?;
                if self.at_ident("from") {
                    self.bump();
                    let (source, source_span) = self.parse_module_source()?;
                    self.semicolon()?;
                    let list = specs.into_iter().map(|s| (s.local, s.exported)).collect();
                    return Ok(StmtKind::Import(ImportDecl { source, source_span, kind: ImportKind::ReExport(list) }));
                }
                if let Some(&span) = keyword_locals.first() {
                    self.error_hint(
                        span,
                        format!("expected identifier, found keyword `{}`", self.text(span)),
                        "expected identifier",
                        "only a re-export (`export { default as name } from \"./m\"`) may name a keyword",
                    );
                    return Err(Fail);
                }
                self.semicolon()?;
                Ok(StmtKind::ExportList(specs))
            }
            T::Function | T::Class | T::Let | T::Const | T::Var | T::Enum => self.export_decl(),
            T::Ident(n) => {
                let next = self.peek(1);
                let ok = match n.as_str() {
                    "async" => next.kind == T::Function,
                    "type" | "interface" => matches!(next.kind, T::Ident(_)),
                    "abstract" => next.kind == T::Class,
                    "declare" => matches!(next.kind, T::Ident(_)) || next.kind.is_keyword(),
                    _ => false,
                };
                if ok && !next.nl_before {
                    self.export_decl()
                } else {
                    Err(self.unexpected("a declaration or `{` after `export`"))
                }
            }
            _ => Err(self.unexpected("a declaration or `{` after `export`")),
        }
    }

    /// `export default ...`: a named function or class is declared as
    /// written and exported as `default` too; anything else (an expression,
    /// an anonymous function or class) initialises a module binding named
    /// `default`, which no source can name (it is a keyword), and whose
    /// value takes that name as JS gives it.
    fn parse_export_default(&mut self) -> PResult<StmtKind> {
        let kw = self.bump();
        if self.depth > 1 {
            // The exported binding is declared where the statement stands;
            // only the module scope can export it.
            self.error_hint(
                kw,
                "`export default` is only allowed at the top level of a module",
                "not at top level",
                "move it out of the block or function",
            );
            return Err(Fail);
        }
        let named_decl = match self.kind() {
            T::Function => matches!(self.peek_kind(1), T::Ident(_)) || *self.peek_kind(1) == T::Star,
            T::Class => matches!(self.peek_kind(1), T::Ident(ref n) if n != "extends" && n != "implements"),
            T::Ident(n) if n == "async" => {
                *self.peek_kind(1) == T::Function && matches!(self.peek_kind(2), T::Ident(_))
            }
            _ => false,
        };
        if named_decl {
            let start = self.start();
            let decl = self.parse_statement()?;
            let name = match &decl.kind {
                StmtKind::Function(f) => f.name.clone(),
                StmtKind::Class(c) => c.name.clone(),
                _ => None,
            };
            if let Some(local) = name {
                let exported = Ident { name: "default".into(), span: kw };
                let span = self.span_from(start);
                self.pending.push(Stmt { kind: StmtKind::ExportList(vec![ExportSpecifier { local, exported }]), span });
            }
            return Ok(decl.kind);
        }
        let start = self.start();
        let init = self.parse_assign(false)?;
        let is_decl = matches!(init.kind, ExprKind::Function(_) | ExprKind::Class(_));
        if !is_decl {
            self.semicolon()?;
        } else {
            self.eat(&T::Semi);
        }
        let local = Ident { name: "default".into(), span: kw };
        let span = self.span_from(start);
        self.pending.push(Stmt {
            kind: StmtKind::ExportList(vec![ExportSpecifier { local: local.clone(), exported: local.clone() }]),
            span,
        });
        Ok(StmtKind::Var(VarDecl {
            kind: VarKind::Const,
            decls: vec![VarDeclarator {
                target: Pattern { kind: PatternKind::Ident(local), span: kw },
                ty: None,
                init: Some(init),
            }],
        }))
    }

    fn export_decl(&mut self) -> PResult<StmtKind> {
        let inner = self.parse_statement()?;
        if matches!(inner.kind, StmtKind::Empty) {
            return Ok(StmtKind::Empty);
        }
        Ok(StmtKind::Export(Box::new(inner)))
    }

    // ----- type declarations --------------------------------------------------

    fn parse_type_alias(&mut self) -> PResult<StmtKind> {
        self.bump();
        let name = self.ident()?;
        let type_params = self.parse_type_params_opt()?;
        self.expect(&T::Eq)?;
        let ty = self.parse_type()?;
        self.semicolon()?;
        Ok(StmtKind::TypeAlias { name, type_params, ty })
    }

    fn parse_interface(&mut self) -> PResult<StmtKind> {
        self.bump();
        let name = self.ident()?;
        let type_params = self.parse_type_params_opt()?;
        let mut extends = Vec::new();
        if self.eat(&T::Extends) {
            loop {
                extends.push(self.parse_type()?);
                if !self.eat(&T::Comma) {
                    break;
                }
            }
        }
        let (members, _) = self.parse_type_members()?;
        Ok(StmtKind::Interface { name, type_params, extends, members })
    }
}

/// Tokens that can begin a property name (after a modifier or `get`/`set`).
pub(super) fn starts_property_name(k: &T) -> bool {
    matches!(k, T::Ident(_) | T::Str(_) | T::Number(_) | T::LBracket | T::Star | T::PrivateName(_)) || k.is_keyword()
}

pub(super) fn prop_key_span(k: &PropKey) -> Span {
    match k {
        PropKey::Named(_, s) | PropKey::Number(_, s) | PropKey::Private(_, s) => *s,
        PropKey::Computed(e) => e.span,
    }
}

/// A function name for a method with this key (none for computed keys).
pub(super) fn prop_key_ident(k: &PropKey) -> Option<Ident> {
    match k {
        PropKey::Named(n, s) => Some(Ident { name: n.clone(), span: *s }),
        PropKey::Number(n, s) => Some(Ident { name: format!("{n}"), span: *s }),
        PropKey::Private(n, s) => Some(Ident { name: n.clone(), span: *s }),
        PropKey::Computed(_) => None,
    }
}
