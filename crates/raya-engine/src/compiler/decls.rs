//! Syntactic helpers shared by the resolver and the code generator: which
//! names a block declares (hoisting), which identifiers a pattern binds,
//! and small questions about expressions.

use crate::syntax::ast::*;

/// One declaration hoisted to the start of its block.
#[derive(Clone, Copy)]
pub(crate) enum DeclItem<'a> {
    /// A name bound by `let`/`const` (one per identifier of the pattern).
    Var(VarKind, &'a Ident),
    Function(&'a Function, &'a Ident),
    Class(&'a Ident),
}

impl<'a> DeclItem<'a> {
    pub(crate) fn ident(&self) -> &'a Ident {
        match *self {
            DeclItem::Var(_, i) | DeclItem::Function(_, i) | DeclItem::Class(i) => i,
        }
    }
}

/// The declarations that belong to the scope of `stmts` (a block, a
/// function body, a module, or all the cases of a `switch` together).
pub(crate) fn block_decls<'a>(stmts: &'a [Stmt], out: &mut Vec<DeclItem<'a>>) {
    for s in stmts {
        stmt_decls(s, out);
    }
}

fn stmt_decls<'a>(s: &'a Stmt, out: &mut Vec<DeclItem<'a>>) {
    match &s.kind {
        StmtKind::Var(d) => {
            for decl in &d.decls {
                let mut ids = Vec::new();
                pattern_idents(&decl.target, &mut ids);
                out.extend(ids.into_iter().map(|i| DeclItem::Var(d.kind, i)));
            }
        }
        StmtKind::Function(f) => {
            if let Some(n) = &f.name {
                out.push(DeclItem::Function(f, n));
            }
        }
        StmtKind::Class(c) => {
            if let Some(n) = &c.name {
                out.push(DeclItem::Class(n));
            }
        }
        StmtKind::Enum(e) => out.push(DeclItem::Var(VarKind::Const, &e.name)),
        StmtKind::Export(inner) => stmt_decls(inner, out),
        _ => {}
    }
}

/// The identifiers a binding pattern declares, in source order.
pub(crate) fn pattern_idents<'a>(p: &'a Pattern, out: &mut Vec<&'a Ident>) {
    match &p.kind {
        PatternKind::Ident(i) => out.push(i),
        PatternKind::Array { elems, rest } => {
            for e in elems.iter().flatten() {
                pattern_idents(&e.pattern, out);
            }
            if let Some(r) = rest {
                pattern_idents(r, out);
            }
        }
        PatternKind::Object { props, rest } => {
            for pr in props {
                pattern_idents(&pr.value, out);
            }
            if let Some(r) = rest {
                pattern_idents(r, out);
            }
        }
        PatternKind::Expr(_) => {}
    }
}

/// Strips the erased wrappers `x as T` and `x!`.
pub(crate) fn unwrap_erased(mut e: &Expr) -> &Expr {
    loop {
        match &e.kind {
            ExprKind::As(inner, _) | ExprKind::NonNull(inner) => e = inner,
            _ => return e,
        }
    }
}

/// A numeric literal (possibly negated), e.g. `1`, `-2.5`.
pub(crate) fn number_literal(e: &Expr) -> Option<f64> {
    match &unwrap_erased(e).kind {
        ExprKind::Number(n) => Some(*n),
        ExprKind::Unary(UnaryOp::Neg, inner) => match &unwrap_erased(inner).kind {
            ExprKind::Number(n) => Some(-*n),
            _ => None,
        },
        _ => None,
    }
}

/// Whether evaluating `e` may assign a variable (an assignment or update
/// expression anywhere in it, outside nested functions). Used to decide
/// when an operand already in a variable's register must be copied
/// before a later operand is evaluated (`x + (x = 1)`).
pub(crate) fn has_assign(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Assign { .. } | ExprKind::Update { .. } => true,
        ExprKind::Number(_)
        | ExprKind::String(_)
        | ExprKind::Regex { .. }
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::Undefined
        | ExprKind::Ident(_)
        | ExprKind::This
        | ExprKind::Super
        | ExprKind::Function(_)
        | ExprKind::Error => false,
        ExprKind::Template(parts) => parts.iter().any(|p| match p {
            TemplatePart::Expr(e) => has_assign(e),
            TemplatePart::Str(_) => false,
        }),
        ExprKind::Array(elems) => elems.iter().any(|el| match el {
            ArrayElem::Expr(e) | ArrayElem::Spread(e) => has_assign(e),
            ArrayElem::Hole => false,
        }),
        ExprKind::Object(props) => props.iter().any(|p| match p {
            ObjectProp::KeyValue(k, v) => key_has_assign(k) || has_assign(v),
            ObjectProp::Spread(e) => has_assign(e),
            ObjectProp::Method(k, _) | ObjectProp::Getter(k, _) | ObjectProp::Setter(k, _) => key_has_assign(k),
        }),
        // A class body can hold static initialisers; be conservative.
        ExprKind::Class(_) | ExprKind::Yield { .. } => true,
        ExprKind::Unary(_, a) | ExprKind::Await(a) | ExprKind::Spawn(a) | ExprKind::As(a, _) | ExprKind::NonNull(a) => {
            has_assign(a)
        }
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => has_assign(a) || has_assign(b),
        ExprKind::Conditional { cond, then, otherwise } => {
            has_assign(cond) || has_assign(then) || has_assign(otherwise)
        }
        ExprKind::Call { callee, args, .. } | ExprKind::New { callee, args } => {
            has_assign(callee)
                || args.iter().any(|a| match a {
                    Argument::Expr(e) | Argument::Spread(e) => has_assign(e),
                })
        }
        ExprKind::Member { object, .. } | ExprKind::PrivateIn { object, .. } => has_assign(object),
        ExprKind::Index { object, index, .. } => has_assign(object) || has_assign(index),
        ExprKind::Sequence(es) => es.iter().any(has_assign),
        ExprKind::TaggedTemplate { tag, exprs, .. } => has_assign(tag) || exprs.iter().any(has_assign),
    }
}

/// Whether `e` may be compiled twice, as a loop condition tested both
/// before the first iteration and at the bottom of each: it holds no
/// function, class or other literal whose code or allocation site would
/// be duplicated.
pub(crate) fn dup_safe(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Number(_)
        | ExprKind::String(_)
        | ExprKind::Regex { .. }
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::Undefined
        | ExprKind::Ident(_)
        | ExprKind::This => true,
        ExprKind::Unary(_, a) | ExprKind::Await(a) | ExprKind::As(a, _) | ExprKind::NonNull(a) => dup_safe(a),
        ExprKind::Update { target, .. } => dup_safe(target),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => dup_safe(a) && dup_safe(b),
        ExprKind::Member { object, .. } => dup_safe(object),
        ExprKind::Index { object, index, .. } => dup_safe(object) && dup_safe(index),
        ExprKind::Call { callee, args, .. } => {
            dup_safe(callee)
                && args.iter().all(|a| match a {
                    Argument::Expr(e) | Argument::Spread(e) => dup_safe(e),
                })
        }
        _ => false,
    }
}

fn key_has_assign(k: &PropKey) -> bool {
    match k {
        PropKey::Computed(e) => has_assign(e),
        _ => false,
    }
}

/// The display name of a property key (for function names); computed keys
/// have none.
pub(crate) fn key_name(k: &PropKey) -> Option<String> {
    match k {
        PropKey::Named(s, _) => Some(s.clone()),
        PropKey::Number(n, _) => Some(number_key(*n)),
        PropKey::Private(n, _) => Some(n.clone()),
        PropKey::Computed(_) => None,
    }
}

/// The canonical property-key string of a number (JS `String(n)`).
pub(crate) fn number_key(n: f64) -> String {
    crate::builtins::numconv::number_to_string(n)
}

/// Whether a statement is a loop (the target of `continue` and of a label
/// that `continue` may name).
pub(crate) fn is_loop(s: &Stmt) -> bool {
    matches!(
        s.kind,
        StmtKind::While { .. }
            | StmtKind::DoWhile { .. }
            | StmtKind::For { .. }
            | StmtKind::ForOf { .. }
            | StmtKind::ForIn { .. }
    )
}

/// Whether `e` reads or writes a variable called `name` in the current
/// function (nested functions cannot see register variables: a variable
/// they use is captured and lives in a cell). Conservative: class bodies
/// count as mentioning everything.
pub(crate) fn mentions(e: &Expr, name: &str) -> bool {
    let m = |x: &Expr| mentions(x, name);
    match &e.kind {
        ExprKind::Ident(i) => i.name == name,
        ExprKind::Number(_)
        | ExprKind::String(_)
        | ExprKind::Regex { .. }
        | ExprKind::Bool(_)
        | ExprKind::Null
        | ExprKind::Undefined
        | ExprKind::This
        | ExprKind::Super
        | ExprKind::Function(_)
        | ExprKind::Error => false,
        ExprKind::Class(_) => true,
        ExprKind::Yield { arg, .. } => arg.as_deref().is_some_and(m),
        ExprKind::Template(parts) => parts.iter().any(|p| matches!(p, TemplatePart::Expr(x) if m(x))),
        ExprKind::Array(elems) => elems.iter().any(|el| match el {
            ArrayElem::Expr(x) | ArrayElem::Spread(x) => m(x),
            ArrayElem::Hole => false,
        }),
        ExprKind::Object(props) => props.iter().any(|p| match p {
            ObjectProp::KeyValue(k, v) => key_mentions(k, name) || m(v),
            ObjectProp::Spread(x) => m(x),
            ObjectProp::Method(k, _) | ObjectProp::Getter(k, _) | ObjectProp::Setter(k, _) => key_mentions(k, name),
        }),
        ExprKind::Unary(_, a) | ExprKind::Await(a) | ExprKind::Spawn(a) | ExprKind::As(a, _) | ExprKind::NonNull(a) => {
            m(a)
        }
        ExprKind::Update { target, .. } => m(target),
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) => m(a) || m(b),
        ExprKind::Assign { target, value, .. } => pattern_mentions(target, name) || m(value),
        ExprKind::Conditional { cond, then, otherwise } => m(cond) || m(then) || m(otherwise),
        ExprKind::Call { callee, args, .. } | ExprKind::New { callee, args } => {
            m(callee)
                || args.iter().any(|a| match a {
                    Argument::Expr(x) | Argument::Spread(x) => m(x),
                })
        }
        ExprKind::Member { object, .. } | ExprKind::PrivateIn { object, .. } => m(object),
        ExprKind::Index { object, index, .. } => m(object) || m(index),
        ExprKind::Sequence(es) => es.iter().any(m),
        ExprKind::TaggedTemplate { tag, exprs, .. } => m(tag) || exprs.iter().any(m),
    }
}

fn key_mentions(k: &PropKey, name: &str) -> bool {
    matches!(k, PropKey::Computed(e) if mentions(e, name))
}

fn pattern_mentions(p: &Pattern, name: &str) -> bool {
    match &p.kind {
        PatternKind::Ident(i) => i.name == name,
        PatternKind::Expr(e) => mentions(e, name),
        PatternKind::Array { elems, rest } => {
            elems
                .iter()
                .flatten()
                .any(|el| pattern_mentions(&el.pattern, name) || el.default.as_ref().is_some_and(|d| mentions(d, name)))
                || rest.as_ref().is_some_and(|r| pattern_mentions(r, name))
        }
        PatternKind::Object { props, rest } => {
            props.iter().any(|pr| {
                key_mentions(&pr.key, name)
                    || pattern_mentions(&pr.value, name)
                    || pr.default.as_ref().is_some_and(|d| mentions(d, name))
            }) || rest.as_ref().is_some_and(|r| pattern_mentions(r, name))
        }
    }
}

/// Calls `f` on every expression of statement `s` (pre-order), without
/// entering nested functions or class bodies (they are other functions).
pub(crate) fn visit_stmt_exprs<'a>(s: &'a Stmt, f: &mut dyn FnMut(&'a Expr)) {
    let ve = |e: &'a Expr, f: &mut dyn FnMut(&'a Expr)| visit_expr(e, f);
    match &s.kind {
        StmtKind::Expr(e) | StmtKind::Throw(e) => ve(e, f),
        StmtKind::Var(d) => visit_var(d, f),
        StmtKind::Block(b) => b.iter().for_each(|s| visit_stmt_exprs(s, f)),
        StmtKind::If { cond, then, otherwise } => {
            ve(cond, f);
            visit_stmt_exprs(then, f);
            if let Some(o) = otherwise {
                visit_stmt_exprs(o, f);
            }
        }
        StmtKind::While { cond, body } | StmtKind::DoWhile { body, cond } => {
            ve(cond, f);
            visit_stmt_exprs(body, f);
        }
        StmtKind::For { init, cond, update, body } => {
            match init {
                Some(ForInit::Var(d)) => visit_var(d, f),
                Some(ForInit::Expr(e)) => ve(e, f),
                None => {}
            }
            for e in cond.iter().chain(update.iter()) {
                ve(e, f);
            }
            visit_stmt_exprs(body, f);
        }
        StmtKind::ForOf { iterable: e, body, .. } | StmtKind::ForIn { object: e, body, .. } => {
            ve(e, f);
            visit_stmt_exprs(body, f);
        }
        StmtKind::Return(Some(e)) => ve(e, f),
        StmtKind::Try { block, handler, finalizer } => {
            block.iter().for_each(|s| visit_stmt_exprs(s, f));
            if let Some(h) = handler {
                h.body.iter().for_each(|s| visit_stmt_exprs(s, f));
            }
            if let Some(fin) = finalizer {
                fin.iter().for_each(|s| visit_stmt_exprs(s, f));
            }
        }
        StmtKind::Switch { discriminant, cases } => {
            ve(discriminant, f);
            for c in cases {
                if let Some(t) = &c.test {
                    ve(t, f);
                }
                c.body.iter().for_each(|s| visit_stmt_exprs(s, f));
            }
        }
        StmtKind::Labeled { body, .. } | StmtKind::Export(body) => visit_stmt_exprs(body, f),
        StmtKind::Select(cases) => {
            for c in cases {
                match &c.kind {
                    SelectCaseKind::Receive { channel, .. } => ve(channel, f),
                    SelectCaseKind::Send { channel, value } => {
                        ve(channel, f);
                        ve(value, f);
                    }
                    SelectCaseKind::Timeout(e) => ve(e, f),
                    SelectCaseKind::Default => {}
                }
                c.body.iter().for_each(|s| visit_stmt_exprs(s, f));
            }
        }
        _ => {}
    }
}

fn visit_var<'a>(d: &'a VarDecl, f: &mut dyn FnMut(&'a Expr)) {
    for decl in &d.decls {
        if let Some(i) = &decl.init {
            visit_expr(i, f);
        }
    }
}

/// Pre-order walk of an expression, not entering functions or classes.
pub(crate) fn visit_expr<'a>(e: &'a Expr, f: &mut dyn FnMut(&'a Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Template(parts) => {
            for p in parts {
                if let TemplatePart::Expr(x) = p {
                    visit_expr(x, f);
                }
            }
        }
        ExprKind::Array(elems) => {
            for el in elems {
                if let ArrayElem::Expr(x) | ArrayElem::Spread(x) = el {
                    visit_expr(x, f);
                }
            }
        }
        ExprKind::Object(props) => {
            for p in props {
                match p {
                    ObjectProp::KeyValue(k, v) => {
                        if let PropKey::Computed(k) = k {
                            visit_expr(k, f);
                        }
                        visit_expr(v, f);
                    }
                    ObjectProp::Spread(x) => visit_expr(x, f),
                    _ => {}
                }
            }
        }
        ExprKind::Unary(_, a)
        | ExprKind::Await(a)
        | ExprKind::Spawn(a)
        | ExprKind::As(a, _)
        | ExprKind::NonNull(a)
        | ExprKind::Update { target: a, .. }
        | ExprKind::Member { object: a, .. }
        | ExprKind::PrivateIn { object: a, .. } => visit_expr(a, f),
        ExprKind::TaggedTemplate { tag, exprs, .. } => {
            visit_expr(tag, f);
            exprs.iter().for_each(|x| visit_expr(x, f));
        }
        ExprKind::Yield { arg: Some(a), .. } => visit_expr(a, f),
        ExprKind::Yield { arg: None, .. } => {}
        ExprKind::Binary(_, a, b) | ExprKind::Logical(_, a, b) | ExprKind::Index { object: a, index: b, .. } => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        ExprKind::Assign { target, value, .. } => {
            if let PatternKind::Expr(t) = &target.kind {
                visit_expr(t, f);
            }
            visit_expr(value, f);
        }
        ExprKind::Conditional { cond, then, otherwise } => {
            visit_expr(cond, f);
            visit_expr(then, f);
            visit_expr(otherwise, f);
        }
        ExprKind::Call { callee, args, .. } | ExprKind::New { callee, args } => {
            visit_expr(callee, f);
            for a in args {
                let (Argument::Expr(x) | Argument::Spread(x)) = a;
                visit_expr(x, f);
            }
        }
        ExprKind::Sequence(es) => es.iter().for_each(|x| visit_expr(x, f)),
        _ => {}
    }
}

/// The TypeError message of a `for await` over `e` when `e`'s value turns
/// out not to be iterable, naming `e` as V8 does from the source (`o.a is
/// not async iterable`, `f(...) is not a function or its return value is
/// not async iterable`); `None` where V8 names the value instead.
pub(crate) fn callsite_text(e: &Expr) -> Option<String> {
    fn path(e: &Expr) -> Option<String> {
        match &unwrap_erased(e).kind {
            ExprKind::Ident(i) => Some(i.name.clone()),
            ExprKind::This => Some("this".into()),
            ExprKind::Member { object, property, .. } if !property.name.starts_with('#') => {
                Some(format!("{}.{}", path(object)?, property.name))
            }
            ExprKind::Index { object, index, .. } => match &index.kind {
                ExprKind::String(s) => Some(format!("{}.{}", path(object)?, s)),
                _ => None,
            },
            _ => None,
        }
    }
    match &unwrap_erased(e).kind {
        ExprKind::Call { callee, .. } => {
            Some(format!("{}(...) is not a function or its return value is not async iterable", path(callee)?))
        }
        ExprKind::Object(_) => Some("{(intermediate value)} is not async iterable".into()),
        _ => Some(format!("{} is not async iterable", path(e)?)),
    }
}
