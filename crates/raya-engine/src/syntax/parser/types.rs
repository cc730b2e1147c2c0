//! TypeScript type syntax. Types are kept in the AST for a later type
//! checker and erased by the compiler.
//!
//! Forms without a dedicated [`TypeKind`] are encoded as `Named` types:
//! `null`, `void`, `this`, `any`, ... by their name; a conditional type
//! `C extends E ? A : B` as `__conditional<C, E, A, B>`; `infer X` as
//! `__infer<X>`; template literal types as `string`; type predicates
//! (`x is T`) as `boolean` and assertion signatures as `void`.

use super::stmt::starts_property_name;
use super::*;

fn named(name: &str, span: Span) -> TypeExpr {
    TypeExpr { kind: TypeKind::Named { name: name.to_string(), args: Vec::new() }, span }
}

impl<'s> Parser<'s> {
    pub(super) fn parse_type(&mut self) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.parse_type_inner();
        self.leave();
        r
    }

    fn parse_type_inner(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        if self.at(&T::Lt) {
            return self.parse_function_type(start);
        }
        if self.at_ident("abstract") && self.peek_kind(1) == &T::New {
            self.bump();
        }
        if self.at(&T::New) {
            self.bump();
            return self.parse_function_type(start);
        }
        if self.at(&T::LParen) && self.is_function_type_start() {
            return self.parse_function_type(start);
        }
        let t = self.parse_union_type()?;
        if self.at(&T::Extends) && !self.cur().nl_before {
            self.bump();
            let ext = self.parse_union_type()?;
            self.expect(&T::Question)?;
            let a = self.parse_type()?;
            self.expect(&T::Colon)?;
            let b = self.parse_type()?;
            return Ok(TypeExpr {
                kind: TypeKind::Named { name: "__conditional".into(), args: vec![t, ext, a, b] },
                span: self.span_from(start),
            });
        }
        Ok(t)
    }

    /// `(` ... `)` followed by `=>`.
    fn is_function_type_start(&self) -> bool {
        match self.matching_close(self.pos) {
            Some(close) => self.toks.get(close + 1).map(|t| &t.kind) == Some(&T::Arrow),
            None => false,
        }
    }

    /// `<T>(a: A, b?: B, ...r: R[]) => Ret` (type parameters optional).
    fn parse_function_type(&mut self, start: u32) -> PResult<TypeExpr> {
        self.parse_type_params_opt()?;
        let params = self.parse_type_fn_params()?;
        self.expect(&T::Arrow)?;
        let ret = self.parse_return_type()?;
        Ok(TypeExpr { kind: TypeKind::Function { params, ret: Box::new(ret) }, span: self.span_from(start) })
    }

    /// Parameters of a function type or signature.
    fn parse_type_fn_params(&mut self) -> PResult<Vec<(String, TypeExpr)>> {
        self.expect(&T::LParen)?;
        let mut params = Vec::new();
        while !self.at(&T::RParen) {
            let rest = self.eat(&T::DotDotDot);
            let name_start = self.start();
            let name = match self.kind() {
                T::LBrace | T::LBracket => {
                    let Some(close) = self.matching_close(self.pos) else {
                        return Err(self.unexpected("parameter name"));
                    };
                    self.pos = close + 1;
                    self.text(self.span_from(name_start)).to_string()
                }
                _ if self.at_ident_name() => self.ident_name()?.name,
                _ => return Err(self.unexpected("parameter name")),
            };
            self.eat(&T::Question);
            let ty = if self.eat(&T::Colon) { self.parse_type()? } else { named("any", self.span_from(name_start)) };
            params.push((if rest { format!("...{name}") } else { name }, ty));
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RParen)?;
        Ok(params)
    }

    /// A return type, which may also be a type predicate (`x is T`) or an
    /// assertion signature (`asserts x`).
    pub(super) fn parse_return_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        if self.at_ident("asserts") && matches!(self.peek_kind(1), T::Ident(_) | T::This) && !self.peek(1).nl_before {
            self.bump();
            self.bump();
            if self.at_ident("is") {
                self.bump();
                self.parse_type()?;
            }
            return Ok(named("void", self.span_from(start)));
        }
        if matches!(self.kind(), T::Ident(_) | T::This) && self.peek_is_ident(1, "is") && !self.peek(1).nl_before {
            self.bump();
            self.bump();
            self.parse_type()?;
            return Ok(named("boolean", self.span_from(start)));
        }
        self.parse_type()
    }

    fn parse_union_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        self.eat(&T::Pipe);
        let first = self.parse_intersection_type()?;
        if !self.at(&T::Pipe) {
            return Ok(first);
        }
        let mut parts = vec![first];
        while self.eat(&T::Pipe) {
            parts.push(self.parse_intersection_type()?);
        }
        Ok(TypeExpr { kind: TypeKind::Union(parts), span: self.span_from(start) })
    }

    fn parse_intersection_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        self.eat(&T::Amp);
        let first = self.parse_type_operator()?;
        if !self.at(&T::Amp) {
            return Ok(first);
        }
        let mut parts = vec![first];
        while self.eat(&T::Amp) {
            parts.push(self.parse_type_operator()?);
        }
        Ok(TypeExpr { kind: TypeKind::Intersection(parts), span: self.span_from(start) })
    }

    fn parse_type_operator(&mut self) -> PResult<TypeExpr> {
        self.enter()?;
        let r = self.parse_type_operator_inner();
        self.leave();
        r
    }

    fn parse_type_operator_inner(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        let next_is_type = !matches!(
            self.peek_kind(1),
            T::RParen | T::Comma | T::Semi | T::Eq | T::Gt | T::RBracket | T::RBrace | T::Pipe | T::Amp | T::Eof
        );
        if self.at_ident("keyof") && next_is_type {
            self.bump();
            let inner = self.parse_type_operator()?;
            return Ok(TypeExpr { kind: TypeKind::KeyOf(Box::new(inner)), span: self.span_from(start) });
        }
        if self.at_ident("readonly") && next_is_type {
            self.bump();
            return self.parse_type_operator();
        }
        if self.at_ident("unique") && self.peek_is_ident(1, "symbol") {
            self.bump();
            self.bump();
            return Ok(named("unique symbol", self.span_from(start)));
        }
        if self.at_ident("infer") && matches!(self.peek_kind(1), T::Ident(_)) {
            self.bump();
            let id = self.ident()?;
            let inner = named(&id.name, id.span);
            return Ok(TypeExpr {
                kind: TypeKind::Named { name: "__infer".into(), args: vec![inner] },
                span: self.span_from(start),
            });
        }
        self.parse_postfix_type()
    }

    fn parse_postfix_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        let mut t = self.parse_primary_type()?;
        while self.at(&T::LBracket) && !self.cur().nl_before {
            self.bump();
            if self.eat(&T::RBracket) {
                t = TypeExpr { kind: TypeKind::Array(Box::new(t)), span: self.span_from(start) };
            } else {
                let index = self.parse_type()?;
                self.expect(&T::RBracket)?;
                t = TypeExpr { kind: TypeKind::Indexed(Box::new(t), Box::new(index)), span: self.span_from(start) };
            }
        }
        Ok(t)
    }

    fn parse_primary_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        let span = self.cur().span;
        let literal = |p: &Self, span: Span| TypeExpr { kind: TypeKind::Literal(p.text(span).to_string()), span };
        match self.kind() {
            T::LParen => {
                self.bump();
                let mut t = self.parse_type()?;
                self.expect(&T::RParen)?;
                t.span = self.span_from(start);
                Ok(t)
            }
            T::LBrace => {
                let (members, span) = self.parse_type_members()?;
                Ok(TypeExpr { kind: TypeKind::Object(members), span })
            }
            T::LBracket => self.parse_tuple_type(),
            T::Str(_) | T::Number(_) | T::True | T::False | T::NoSubstTemplate(_) => {
                self.bump();
                Ok(literal(self, span))
            }
            T::Minus if matches!(self.peek_kind(1), T::Number(_)) => {
                self.bump();
                self.bump();
                Ok(literal(self, self.span_from(start)))
            }
            T::TemplateHead(_) => {
                self.bump();
                loop {
                    self.parse_type()?;
                    match self.kind() {
                        T::TemplateMiddle(_) => {
                            self.bump();
                        }
                        T::TemplateTail(_) => {
                            self.bump();
                            break;
                        }
                        _ => return Err(self.unexpected("`}` to close the template substitution")),
                    }
                }
                Ok(named("string", self.span_from(start)))
            }
            // `const` only appears in `x as const`.
            T::Null | T::Void | T::This | T::Const => {
                let name = self.kind().as_str();
                self.bump();
                Ok(named(name, span))
            }
            T::TypeOf => {
                self.bump();
                let mut name = self.ident_name()?.name;
                while self.at(&T::Dot) {
                    self.bump();
                    name.push('.');
                    name.push_str(&self.ident_name()?.name);
                }
                Ok(TypeExpr { kind: TypeKind::TypeOf(name), span: self.span_from(start) })
            }
            T::Ident(_) => {
                let mut name = self.ident()?.name;
                while self.at(&T::Dot) && matches!(self.peek_kind(1), T::Ident(_)) {
                    self.bump();
                    name.push('.');
                    name.push_str(&self.ident()?.name);
                }
                let args = if self.at(&T::Lt) { self.parse_type_args()? } else { Vec::new() };
                Ok(TypeExpr { kind: TypeKind::Named { name, args }, span: self.span_from(start) })
            }
            T::Error => Err(Fail),
            _ => Err(self.unexpected("type")),
        }
    }

    fn parse_tuple_type(&mut self) -> PResult<TypeExpr> {
        let start = self.start();
        self.bump();
        let mut elems = Vec::new();
        while !self.at(&T::RBracket) {
            // A rest element `...T[]` is kept as its array type.
            self.eat(&T::DotDotDot);
            // Named member: `name: T` / `name?: T`.
            if self.at_ident_name()
                && (self.peek_kind(1) == &T::Colon
                    || (self.peek_kind(1) == &T::Question && self.peek_kind(2) == &T::Colon))
            {
                self.bump();
                self.eat(&T::Question);
                self.bump();
            }
            let t = self.parse_type()?;
            self.eat(&T::Question);
            elems.push(t);
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::RBracket)?;
        Ok(TypeExpr { kind: TypeKind::Tuple(elems), span: self.span_from(start) })
    }

    /// `{ members }` of an object type literal or interface.
    pub(super) fn parse_type_members(&mut self) -> PResult<(Vec<TypeMember>, Span)> {
        let start = self.start();
        self.expect(&T::LBrace)?;
        let mut members = Vec::new();
        loop {
            while self.eat(&T::Semi) || self.eat(&T::Comma) {}
            if self.eat(&T::RBrace) {
                break;
            }
            if self.at_eof() {
                return Err(self.unexpected("`}`"));
            }
            members.push(self.parse_type_member()?);
            if self.eat(&T::Semi) || self.eat(&T::Comma) || self.at(&T::RBrace) || self.cur().nl_before {
                continue;
            }
            return Err(self.unexpected("`;` or `}`"));
        }
        Ok((members, self.span_from(start)))
    }

    fn parse_type_member(&mut self) -> PResult<TypeMember> {
        let start = self.start();
        let mut readonly = false;
        if matches!(self.kind(), T::Plus | T::Minus) && self.peek_is_ident(1, "readonly") {
            self.bump();
        }
        if self.at_ident("readonly") && starts_property_name(&self.peek(1).kind) && !self.peek(1).nl_before {
            readonly = true;
            self.bump();
        }
        // Call and construct signatures.
        if self.at(&T::LParen) || self.at(&T::Lt) {
            let ty = self.parse_signature(start)?;
            return Ok(TypeMember { name: "()".into(), optional: false, readonly, ty });
        }
        if self.at(&T::New) && matches!(self.peek_kind(1), T::LParen | T::Lt) {
            self.bump();
            let ty = self.parse_signature(start)?;
            return Ok(TypeMember { name: "new()".into(), optional: false, readonly, ty });
        }
        // Index signatures `[k: string]: T` and mapped types `[K in T]: U`.
        if self.at(&T::LBracket) && self.at_ident_name_at(1) && matches!(self.peek_kind(2), T::Colon | T::In) {
            self.bump();
            let key = self.ident_name()?.name;
            let is_mapped = self.at(&T::In);
            self.bump();
            let kt = self.parse_type()?;
            if is_mapped && self.at_ident("as") {
                self.bump();
                self.parse_type()?;
            }
            self.expect(&T::RBracket)?;
            let sep = if is_mapped { " in " } else { ": " };
            let name = format!("[{key}{sep}{}]", self.text(kt.span));
            let mut optional = false;
            if matches!(self.kind(), T::Plus | T::Minus) && self.peek_kind(1) == &T::Question {
                optional = self.at(&T::Plus);
                self.bump();
                self.bump();
            } else if self.eat(&T::Question) {
                optional = true;
            }
            let ty = if self.eat(&T::Colon) { self.parse_type()? } else { named("any", self.span_from(start)) };
            return Ok(TypeMember { name, optional, readonly, ty });
        }
        // Accessor signatures `get x(): T` / `set x(v: T)`.
        if (self.at_ident("get") || self.at_ident("set")) && starts_property_name(&self.peek(1).kind) {
            self.bump();
        }
        let name = match self.kind() {
            T::Ident(_) => self.ident()?.name,
            T::Str(s) => {
                let s = s.clone();
                self.bump();
                s
            }
            T::Number(_) => {
                let span = self.bump();
                self.text(span).to_string()
            }
            T::LBracket => {
                let open = self.bump();
                self.parse_assign(false)?;
                self.expect(&T::RBracket)?;
                self.text(self.span_from(open.start)).to_string()
            }
            k if k.is_keyword() => self.ident_name()?.name,
            _ => return Err(self.unexpected("property name")),
        };
        let optional = self.eat(&T::Question);
        let ty = if self.at(&T::LParen) || self.at(&T::Lt) {
            self.parse_signature(start)?
        } else if self.eat(&T::Colon) {
            self.parse_type()?
        } else {
            named("any", self.span_from(start))
        };
        Ok(TypeMember { name, optional, readonly, ty })
    }

    fn at_ident_name_at(&self, n: usize) -> bool {
        let k = self.peek_kind(n);
        matches!(k, T::Ident(_)) || k.is_keyword()
    }

    /// `<T>(params): R` of a method, call or construct signature.
    fn parse_signature(&mut self, start: u32) -> PResult<TypeExpr> {
        self.parse_type_params_opt()?;
        let params = self.parse_type_fn_params()?;
        let ret = if self.eat(&T::Colon) { self.parse_return_type()? } else { named("any", self.span_from(start)) };
        Ok(TypeExpr { kind: TypeKind::Function { params, ret: Box::new(ret) }, span: self.span_from(start) })
    }

    /// `<T extends C = D, ...>` if present.
    pub(super) fn parse_type_params_opt(&mut self) -> PResult<Vec<TypeParam>> {
        if !self.at(&T::Lt) {
            return Ok(Vec::new());
        }
        self.bump();
        let mut params = Vec::new();
        while !self.at(&T::Gt) {
            // Variance / const modifiers.
            if matches!(self.kind(), T::Const | T::In) && matches!(self.peek_kind(1), T::Ident(_)) {
                self.bump();
            }
            if self.at_ident("out") && matches!(self.peek_kind(1), T::Ident(_)) {
                self.bump();
            }
            let name = self.ident()?;
            let constraint = if self.eat(&T::Extends) { Some(self.parse_type()?) } else { None };
            let default = if self.eat(&T::Eq) { Some(self.parse_type()?) } else { None };
            params.push(TypeParam { name, constraint, default });
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::Gt)?;
        Ok(params)
    }

    /// `<A, B>` type arguments.
    pub(super) fn parse_type_args(&mut self) -> PResult<Vec<TypeExpr>> {
        self.expect(&T::Lt)?;
        let mut args = Vec::new();
        while !self.at(&T::Gt) {
            args.push(self.parse_type()?);
            if !self.eat(&T::Comma) {
                break;
            }
        }
        self.expect_list_close(&T::Gt)?;
        Ok(args)
    }
}
