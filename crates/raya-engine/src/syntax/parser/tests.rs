//! Parser tests. ASTs are compared through a compact S-expression form.

use super::*;

// ----- printer ------------------------------------------------------------------

fn bin(op: BinaryOp) -> &'static str {
    use BinaryOp::*;
    match op {
        Add => "+",
        Sub => "-",
        Mul => "*",
        Div => "/",
        Rem => "%",
        Pow => "**",
        Eq => "==",
        NotEq => "!=",
        StrictEq => "===",
        StrictNotEq => "!==",
        Lt => "<",
        LtEq => "<=",
        Gt => ">",
        GtEq => ">=",
        BitAnd => "&",
        BitOr => "|",
        BitXor => "^",
        Shl => "<<",
        Shr => ">>",
        UShr => ">>>",
        In => "in",
        InstanceOf => "instanceof",
    }
}

fn logic(op: LogicalOp) -> &'static str {
    match op {
        LogicalOp::And => "&&",
        LogicalOp::Or => "||",
        LogicalOp::Nullish => "??",
    }
}

fn join<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(" ")
}

fn key(k: &PropKey) -> String {
    match k {
        PropKey::Named(n, _) => n.clone(),
        PropKey::Number(n, _) => format!("#{n}"),
        PropKey::Computed(e) => format!("[{}]", ex(e)),
        PropKey::Private(n, _) => n.clone(),
    }
}

fn ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeKind::Named { name, args } if args.is_empty() => name.clone(),
        TypeKind::Named { name, args } => format!("{name}<{}>", args.iter().map(ty).collect::<Vec<_>>().join(",")),
        TypeKind::Array(e) => format!("{}[]", ty(e)),
        TypeKind::Tuple(es) => format!("[{}]", es.iter().map(ty).collect::<Vec<_>>().join(",")),
        TypeKind::Union(es) => format!("({})", es.iter().map(ty).collect::<Vec<_>>().join("|")),
        TypeKind::Intersection(es) => {
            format!("({})", es.iter().map(ty).collect::<Vec<_>>().join("&"))
        }
        TypeKind::Function { params, ret } => format!(
            "(fn({}) => {})",
            params.iter().map(|(n, t)| format!("{n}:{}", ty(t))).collect::<Vec<_>>().join(","),
            ty(ret)
        ),
        TypeKind::Object(ms) => format!("{{{}}}", members(ms)),
        TypeKind::Literal(s) => s.clone(),
        TypeKind::TypeOf(s) => format!("typeof {s}"),
        TypeKind::KeyOf(t) => format!("keyof {}", ty(t)),
        TypeKind::Indexed(a, b) => format!("{}[{}]", ty(a), ty(b)),
    }
}

fn members(ms: &[TypeMember]) -> String {
    ms.iter()
        .map(|m| {
            format!(
                "{}{}{}:{};",
                if m.readonly { "readonly " } else { "" },
                m.name,
                if m.optional { "?" } else { "" },
                ty(&m.ty)
            )
        })
        .collect()
}

fn pat(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Ident(id) => id.name.clone(),
        PatternKind::Array { elems, rest } => {
            let mut parts: Vec<String> = elems
                .iter()
                .map(|e| match e {
                    None => "_".into(),
                    Some(PatternElem { pattern, default: None }) => pat(pattern),
                    Some(PatternElem { pattern, default: Some(d) }) => format!("(= {} {})", pat(pattern), ex(d)),
                })
                .collect();
            if let Some(r) = rest {
                parts.push(format!("...{}", pat(r)));
            }
            format!("[{}]", parts.join(" "))
        }
        PatternKind::Object { props, rest } => {
            let mut parts: Vec<String> = props
                .iter()
                .map(|p| match &p.default {
                    None => format!("{}:{}", key(&p.key), pat(&p.value)),
                    Some(d) => format!("{}:(= {} {})", key(&p.key), pat(&p.value), ex(d)),
                })
                .collect();
            if let Some(r) = rest {
                parts.push(format!("...{}", pat(r)));
            }
            format!("{{{}}}", parts.join(" "))
        }
        PatternKind::Expr(e) => ex(e),
    }
}

fn args(a: &[Argument]) -> String {
    a.iter()
        .map(|a| match a {
            Argument::Expr(e) => format!(" {}", ex(e)),
            Argument::Spread(e) => format!(" ...{}", ex(e)),
        })
        .collect()
}

fn param(p: &Param) -> String {
    let mut s = String::new();
    if p.rest {
        s.push_str("...");
    }
    s.push_str(&pat(&p.pattern));
    if p.optional {
        s.push('?');
    }
    if let Some(t) = &p.ty {
        s.push(':');
        s.push_str(&ty(t));
    }
    if let Some(d) = &p.default {
        s.push('=');
        s.push_str(&ex(d));
    }
    s
}

fn func(f: &Function) -> String {
    let mut s = String::from("(");
    s.push_str(if f.is_arrow { "arrow" } else { "fn" });
    if f.is_async {
        s.push_str(" async");
    }
    if let Some(n) = &f.name {
        s.push(' ');
        s.push_str(&n.name);
    }
    if !f.type_params.is_empty() {
        s.push_str(&format!(" <{}>", tparams(&f.type_params)));
    }
    s.push_str(&format!(" ({})", join(&f.params, param)));
    if let Some(r) = &f.return_type {
        s.push_str(&format!(":{}", ty(r)));
    }
    match &f.body {
        FunctionBody::Expr(e) => s.push_str(&format!(" {}", ex(e))),
        FunctionBody::Block(b) => s.push_str(&format!(" {{{}}}", join(b, st))),
    }
    s.push(')');
    s
}

fn tparams(tps: &[TypeParam]) -> String {
    tps.iter()
        .map(|t| {
            let mut s = t.name.name.clone();
            if let Some(c) = &t.constraint {
                s.push_str(&format!(" extends {}", ty(c)));
            }
            if let Some(d) = &t.default {
                s.push_str(&format!("={}", ty(d)));
            }
            s
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn class(c: &Class) -> String {
    let mut s = String::from("(class");
    if let Some(n) = &c.name {
        s.push_str(&format!(" {}", n.name));
    }
    if !c.type_params.is_empty() {
        s.push_str(&format!(" <{}>", tparams(&c.type_params)));
    }
    if let Some(e) = &c.extends {
        s.push_str(&format!(" extends {}", ex(e)));
    }
    if !c.implements.is_empty() {
        s.push_str(&format!(" implements {}", c.implements.iter().map(ty).collect::<Vec<_>>().join(",")));
    }
    for m in &c.members {
        s.push(' ');
        if m.is_static {
            s.push_str("static ");
        }
        s.push_str(&match &m.kind {
            ClassMemberKind::Constructor(f) => format!("(ctor {})", func(f)),
            ClassMemberKind::Method { key: k, func: f } => {
                format!("(method {} {})", key(k), func(f))
            }
            ClassMemberKind::Getter { key: k, func: f } => format!("(get {} {})", key(k), func(f)),
            ClassMemberKind::Setter { key: k, func: f } => format!("(set {} {})", key(k), func(f)),
            ClassMemberKind::StaticBlock(f) => format!("(block {})", func(f)),
            ClassMemberKind::Field { key: k, ty: t, init } => format!(
                "(field {}{}{})",
                key(k),
                t.as_ref().map(|t| format!(":{}", ty(t))).unwrap_or_default(),
                init.as_ref().map(|e| format!("={}", ex(e))).unwrap_or_default()
            ),
        });
    }
    s.push(')');
    s
}

fn ex(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Number(n) => format!("{n}"),
        ExprKind::String(s) => format!("{s:?}"),
        ExprKind::Regex { pattern, flags } => format!("/{pattern}/{flags}"),
        ExprKind::Template(parts) => format!(
            "(tpl {})",
            join(parts, |p| match p {
                TemplatePart::Str(s) => format!("{s:?}"),
                TemplatePart::Expr(e) => ex(e),
            })
        ),
        ExprKind::Bool(b) => format!("{b}"),
        ExprKind::Null => "null".into(),
        ExprKind::Undefined => "undefined".into(),
        ExprKind::Ident(id) => id.name.clone(),
        ExprKind::This => "this".into(),
        ExprKind::Super => "super".into(),
        ExprKind::Array(els) => format!(
            "[{}]",
            join(els, |e| match e {
                ArrayElem::Expr(e) => ex(e),
                ArrayElem::Spread(e) => format!("...{}", ex(e)),
                ArrayElem::Hole => "_".into(),
            })
        ),
        ExprKind::Object(props) => format!(
            "{{{}}}",
            join(props, |p| match p {
                ObjectProp::KeyValue(k, v) => format!("{}:{}", key(k), ex(v)),
                ObjectProp::Spread(e) => format!("...{}", ex(e)),
                ObjectProp::Method(k, f) => format!("(method {} {})", key(k), func(f)),
                ObjectProp::Getter(k, f) => format!("(get {} {})", key(k), func(f)),
                ObjectProp::Setter(k, f) => format!("(set {} {})", key(k), func(f)),
            })
        ),
        ExprKind::Function(f) => func(f),
        ExprKind::Class(c) => class(c),
        ExprKind::Unary(op, a) => {
            let o = match op {
                UnaryOp::Neg => "neg",
                UnaryOp::Plus => "pos",
                UnaryOp::Not => "!",
                UnaryOp::BitNot => "~",
                UnaryOp::TypeOf => "typeof",
                UnaryOp::Void => "void",
            };
            format!("({o} {})", ex(a))
        }
        ExprKind::Update { increment, prefix, target } => {
            let o = if *increment { "++" } else { "--" };
            if *prefix {
                format!("({o}pre {})", ex(target))
            } else {
                format!("(post{o} {})", ex(target))
            }
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", bin(*op), ex(a), ex(b)),
        ExprKind::Logical(op, a, b) => format!("({} {} {})", logic(*op), ex(a), ex(b)),
        ExprKind::Assign { op, target, value } => {
            let o = match op {
                AssignOp::Assign => "=".to_string(),
                AssignOp::Compound(b) => format!("{}=", bin(*b)),
                AssignOp::Logical(l) => format!("{}=", logic(*l)),
            };
            format!("({o} {} {})", pat(target), ex(value))
        }
        ExprKind::Conditional { cond, then, otherwise } => format!("(? {} {} {})", ex(cond), ex(then), ex(otherwise)),
        ExprKind::Call { callee, args: a, optional } => {
            format!("(call{} {}{})", if *optional { "?." } else { "" }, ex(callee), args(a))
        }
        ExprKind::New { callee, args: a } => format!("(new {}{})", ex(callee), args(a)),
        ExprKind::Member { object, property, optional } => {
            format!("({} {} {})", if *optional { "?." } else { "." }, ex(object), property.name)
        }
        ExprKind::Index { object, index, optional } => {
            format!("({} {} {})", if *optional { "?.[]" } else { "[]" }, ex(object), ex(index))
        }
        ExprKind::Sequence(es) => format!("(, {})", join(es, ex)),
        ExprKind::Await(e) => format!("(await {})", ex(e)),
        ExprKind::Yield { arg, delegate } => match arg {
            Some(a) => format!("({} {})", if *delegate { "yield*" } else { "yield" }, ex(a)),
            None => "(yield)".into(),
        },
        ExprKind::Spawn(e) => format!("(spawn {})", ex(e)),
        ExprKind::As(e, t) => format!("(as {} {})", ex(e), ty(t)),
        ExprKind::NonNull(e) => format!("(nonnull {})", ex(e)),
        ExprKind::Error => "<error>".into(),
        ExprKind::TaggedTemplate { tag, cooked, raw, exprs } => format!(
            "(tag {} {} {} {})",
            ex(tag),
            join(cooked, |c| format!("{c:?}")),
            join(raw, |r| format!("{r:?}")),
            join(exprs, ex)
        ),
        ExprKind::PrivateIn { name, object } => format!("(in {} {})", name.name, ex(object)),
    }
}

fn var(d: &VarDecl) -> String {
    let kw = match d.kind {
        VarKind::Let => "let",
        VarKind::Const => "const",
    };
    let ds = join(&d.decls, |d| {
        let mut s = pat(&d.target);
        if let Some(t) = &d.ty {
            s.push_str(&format!(":{}", ty(t)));
        }
        if let Some(i) = &d.init {
            s.push_str(&format!("={}", ex(i)));
        }
        s
    });
    format!("({kw} {ds})")
}

fn block(b: &[Stmt]) -> String {
    format!("{{{}}}", join(b, st))
}

fn st(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Expr(e) => ex(e),
        StmtKind::Var(d) => var(d),
        StmtKind::Function(f) => func(f),
        StmtKind::Class(c) => class(c),
        StmtKind::TypeAlias { name, type_params, ty: t } => {
            format!(
                "(type {}{} {})",
                name.name,
                if type_params.is_empty() { String::new() } else { format!("<{}>", tparams(type_params)) },
                ty(t)
            )
        }
        StmtKind::Interface { name, type_params, extends, members: ms } => format!(
            "(interface {}{}{} {{{}}})",
            name.name,
            if type_params.is_empty() { String::new() } else { format!("<{}>", tparams(type_params)) },
            if extends.is_empty() {
                String::new()
            } else {
                format!(" extends {}", extends.iter().map(ty).collect::<Vec<_>>().join(","))
            },
            members(ms)
        ),
        StmtKind::Block(b) => block(b),
        StmtKind::If { cond, then, otherwise } => match otherwise {
            Some(o) => format!("(if {} {} {})", ex(cond), st(then), st(o)),
            None => format!("(if {} {})", ex(cond), st(then)),
        },
        StmtKind::While { cond, body } => format!("(while {} {})", ex(cond), st(body)),
        StmtKind::DoWhile { body, cond } => format!("(do {} {})", st(body), ex(cond)),
        StmtKind::For { init, cond, update, body } => format!(
            "(for {} {} {} {})",
            match init {
                None => "_".into(),
                Some(ForInit::Var(d)) => var(d),
                Some(ForInit::Expr(e)) => ex(e),
            },
            cond.as_ref().map(ex).unwrap_or_else(|| "_".into()),
            update.as_ref().map(ex).unwrap_or_else(|| "_".into()),
            st(body)
        ),
        StmtKind::ForOf { decl, target, iterable, body, .. } => {
            format!("(for-of {}{} {} {})", decl_kw(decl), pat(target), ex(iterable), st(body))
        }
        StmtKind::ForIn { decl, target, object, body } => {
            format!("(for-in {}{} {} {})", decl_kw(decl), pat(target), ex(object), st(body))
        }
        StmtKind::Break(l) => format!("(break{})", l.as_ref().map(|l| format!(" {}", l.name)).unwrap_or_default()),
        StmtKind::Continue(l) => {
            format!("(continue{})", l.as_ref().map(|l| format!(" {}", l.name)).unwrap_or_default())
        }
        StmtKind::Return(e) => format!("(return{})", e.as_ref().map(|e| format!(" {}", ex(e))).unwrap_or_default()),
        StmtKind::Throw(e) => format!("(throw {})", ex(e)),
        StmtKind::Try { block: b, handler, finalizer } => {
            let mut s = format!("(try {}", block(b));
            if let Some(h) = handler {
                s.push_str(&format!(
                    " (catch{} {})",
                    h.param.as_ref().map(|p| format!(" {}", pat(p))).unwrap_or_default(),
                    block(&h.body)
                ));
            }
            if let Some(f) = finalizer {
                s.push_str(&format!(" (finally {})", block(f)));
            }
            s.push(')');
            s
        }
        StmtKind::Switch { discriminant, cases } => format!(
            "(switch {} {})",
            ex(discriminant),
            join(cases, |c| format!(
                "({} {})",
                c.test.as_ref().map(|t| format!("case {}", ex(t))).unwrap_or_else(|| "default".into()),
                join(&c.body, st)
            ))
        ),
        StmtKind::Labeled { label, body } => format!("(label {} {})", label.name, st(body)),
        StmtKind::Select(cases) => format!(
            "(select {})",
            join(cases, |c| {
                let head = match &c.kind {
                    SelectCaseKind::Receive { binding: Some((k, p)), channel } => format!(
                        "recv {} {} {}",
                        if *k == VarKind::Const { "const" } else { "let" },
                        pat(p),
                        ex(channel)
                    ),
                    SelectCaseKind::Receive { binding: None, channel } => format!("recv {}", ex(channel)),
                    SelectCaseKind::Send { channel, value } => {
                        format!("send {} {}", ex(channel), ex(value))
                    }
                    SelectCaseKind::Timeout(ms) => format!("sleep {}", ex(ms)),
                    SelectCaseKind::Default => "default".into(),
                };
                format!("({head} {})", block(&c.body))
            })
        ),
        StmtKind::Import(i) => format!(
            "(import {:?} {})",
            i.source,
            match &i.kind {
                ImportKind::Named(ns) => format!("{{{}}}", join(ns, |(a, b)| format!("{}:{}", a.name, b.name))),
                ImportKind::Namespace(n) => format!("* {}", n.name),
                ImportKind::ReExport(ns) =>
                    format!("reexport {{{}}}", join(ns, |(a, b)| format!("{}:{}", a.name, b.name))),
                ImportKind::ReExportAll => "reexport *".into(),
            }
        ),
        StmtKind::Export(s) => format!("(export {})", st(s)),
        StmtKind::ExportList(specs) => {
            format!("(export {{{}}})", join(specs, |s| format!("{}:{}", s.local.name, s.exported.name)))
        }
        StmtKind::Empty => ";".into(),
        StmtKind::Enum(e) => format!(
            "(enum {} {})",
            e.name.name,
            join(&e.members, |m| match &m.init {
                Some(i) => format!("{}={}", m.name.name, ex(i)),
                None => m.name.name.clone(),
            })
        ),
    }
}

fn decl_kw(d: &Option<VarKind>) -> &'static str {
    match d {
        Some(VarKind::Let) => "let ",
        Some(VarKind::Const) => "const ",
        None => "",
    }
}

// ----- helpers ------------------------------------------------------------------

/// Parses `src`, asserts it has no errors, returns the statements printed.
fn ok(src: &str) -> String {
    let (prog, diags) = parse(src, 0);
    assert!(diags.is_empty(), "unexpected errors for {src:?}:\n{diags:#?}");
    prog.body.iter().map(st).collect::<Vec<_>>().join("\n")
}

/// The single expression statement of `src`, printed.
fn e(src: &str) -> String {
    ok(src)
}

/// Error messages for `src`.
fn errs(src: &str) -> Vec<String> {
    parse(src, 0).1.into_iter().map(|d| d.message).collect()
}

fn one_err(src: &str) -> Diagnostic {
    let (_, diags) = parse(src, 0);
    assert_eq!(diags.len(), 1, "expected exactly one error for {src:?}, got {diags:#?}");
    diags.into_iter().next().unwrap_or_else(|| Diagnostic::new(0, Span::default(), ""))
}

// ----- expressions ----------------------------------------------------------------

#[test]
fn regex_literals_are_primary_expressions() {
    assert_eq!(e("/a+/g.test(s)"), "(call (. /a+/g test) s)");
    assert_eq!(e("x = a / b / c"), "(= x (/ (/ a b) c))");
    assert_eq!(e("s.split(/,\\s*/)"), "(call (. s split) /,\\s*/)");
}

#[test]
fn precedence_and_associativity() {
    assert_eq!(e("1 + 2 * 3"), "(+ 1 (* 2 3))");
    assert_eq!(e("(1 + 2) * 3"), "(* (+ 1 2) 3)");
    assert_eq!(e("a - b - c"), "(- (- a b) c)");
    assert_eq!(e("2 ** 3 ** 2"), "(** 2 (** 3 2))");
    assert_eq!(e("(-2) ** 2"), "(** (neg 2) 2)");
    assert_eq!(e("-(2 ** 2)"), "(neg (** 2 2))");
    assert_eq!(e("2 ** -1"), "(** 2 (neg 1))");
    assert_eq!(e("a || b && c"), "(|| a (&& b c))");
    assert_eq!(e("a ?? b ?? c"), "(?? (?? a b) c)");
    assert_eq!(e("a | b ^ c & d"), "(| a (^ b (& c d)))");
    assert_eq!(e("a == b < c"), "(== a (< b c))");
    assert_eq!(e("a << 1 + 2"), "(<< a (+ 1 2))");
    assert_eq!(e("a >> b >>> c"), "(>>> (>> a b) c)");
    assert_eq!(e("a >= b"), "(>= a b)");
    assert_eq!(e("a > b"), "(> a b)");
    assert_eq!(e("a in b instanceof C"), "(instanceof (in a b) C)");
    assert_eq!(e("a = b = c"), "(= a (= b c))");
    assert_eq!(e("a += b -= 1"), "(+= a (-= b 1))");
    assert_eq!(e("x >>= 1; y >>>= 2; z **= 2"), "(>>= x 1)\n(>>>= y 2)\n(**= z 2)");
    assert_eq!(e("a ??= b; a ||= c; a &&= d"), "(??= a b)\n(||= a c)\n(&&= a d)");
    assert_eq!(e("a ? b : c ? d : e"), "(? a b (? c d e))");
    assert_eq!(e("a ? b = 1 : c"), "(? a (= b 1) c)");
    assert_eq!(e("a, b = 1, c"), "(, a (= b 1) c)");
    assert_eq!(e("!a && -b"), "(&& (! a) (neg b))");
    assert_eq!(e("typeof a === 'string'"), "(=== (typeof a) \"string\")");
    assert_eq!(e("void 0"), "(void 0)");
    assert_eq!(e("~x + +y"), "(+ (~ x) (pos y))");
    assert_eq!(e("- -x"), "(neg (neg x))");
    assert_eq!(e("a++ + ++b"), "(+ (post++ a) (++pre b))");
    assert_eq!(e("x-- - --y"), "(- (post-- x) (--pre y))");
    assert_eq!(e("(a ?? b) || c"), "(|| (?? a b) c)");
    assert_eq!(e("a ?? (b || c)"), "(?? a (|| b c))");
    assert_eq!(e("1 - -1"), "(- 1 (neg 1))");
}

#[test]
fn exponent_and_nullish_mixing_errors() {
    let d = one_err("-2 ** 2");
    assert_eq!(d.message, "unary `-` cannot be used before `**` without parentheses");
    assert!(d.hint.is_some());
    assert_eq!(one_err("typeof x ** 2").message, "unary `typeof` cannot be used before `**` without parentheses");
    assert_eq!(one_err("a ?? b || c").message, "`??` cannot be mixed with `||` or `&&` without parentheses");
    assert_eq!(one_err("a || b ?? c").message, "`??` cannot be mixed with `||` or `&&` without parentheses");
    assert_eq!(one_err("a && b ?? c").message, "`??` cannot be mixed with `||` or `&&` without parentheses");
}

#[test]
fn member_call_chains() {
    assert_eq!(e("a.b.c(1)(2)[3]"), "([] (call (call (. (. a b) c) 1) 2) 3)");
    assert_eq!(e("a?.b?.[c]?.(d)"), "(call?. (?.[] (?. a b) c) d)");
    assert_eq!(e("a?.b.c"), "(. (?. a b) c)");
    assert_eq!(e("f(...xs, 1, ...ys)"), "(call f ...xs 1 ...ys)");
    assert_eq!(e("f(a, b,)"), "(call f a b)");
    assert_eq!(e("obj.class.new.default"), "(. (. (. obj class) new) default)");
    assert_eq!(e("new X(1).y"), "(. (new X 1) y)");
    assert_eq!(e("new X"), "(new X)");
    assert_eq!(e("new a.b.C()"), "(new (. (. a b) C))");
    assert_eq!(e("new new X()()"), "(new (new X))");
    assert_eq!(e("new X().m()"), "(call (. (new X) m))");
    assert_eq!(e("new Map<string, number>()"), "(new Map)");
    assert_eq!(e("new Channel<number>(2)"), "(new Channel 2)");
    assert_eq!(e("new Array<Array<number>>()"), "(new Array)");
    assert_eq!(e("f<number>(x)"), "(call f x)");
    assert_eq!(e("a.f<Map<string, number[]>>(x)"), "(call (. a f) x)");
    assert_eq!(e("a < b > (c)"), "(call a c)");
    assert_eq!(e("a < b && c > d"), "(&& (< a b) (> c d))");
    assert_eq!(e("a < b"), "(< a b)");
    assert_eq!(e("x!.y!"), "(nonnull (. (nonnull x) y))");
    assert_eq!(e("x as number"), "(as x number)");
    assert_eq!(e("x as unknown as string[]"), "(as (as x unknown) string[])");
    assert_eq!(e("a + b as any"), "(as (+ a b) any)");
    assert_eq!(e("super.m(); super(1)"), "(call (. super m))\n(call super 1)");
    assert_eq!(e("this.x"), "(. this x)");
    assert_eq!(e("a\n(b)"), "(call a b)");
    assert_eq!(e("a\n[1]"), "([] a 1)");
}

#[test]
fn literals() {
    assert_eq!(e("[1, , 2, ...xs, ]"), "[1 _ 2 ...xs]");
    assert_eq!(e("[,]"), "[_]");
    assert_eq!(e("[1,,]"), "[1 _]");
    assert_eq!(e("[]"), "[]");
    assert_eq!(
        e("({ a, b: 1, [k]: 2, ...o, 'str': 3, 4: 5, m() { return 1 }, get g() { return 2 }, set s(v) {}, async am() {} })"),
        "{a:a b:1 [k]:2 ...o str:3 #4:5 (method m (fn m () {(return 1)})) (get g (fn g () {(return 2)})) (set s (fn s (v) {})) (method am (fn async am () {}))}"
    );
    assert_eq!(
        e("({ get: 1, set: 2, async: 3, get() {}, new: 4 })"),
        "{get:1 set:2 async:3 (method get (fn get () {})) new:4}"
    );
    assert_eq!(e("({ undefined })"), "{undefined:undefined}");
    assert_eq!(e("`a${b}c${d + 1}`"), "(tpl \"a\" b \"c\" (+ d 1) \"\")");
    assert_eq!(e("`plain`"), "(tpl \"plain\")");
    assert_eq!(e("`${`in${x}`}`"), "(tpl \"\" (tpl \"in\" x \"\") \"\")");
    assert_eq!(e("`${ {a: 1}.a }`"), "(tpl \"\" (. {a:1} a) \"\")");
    assert_eq!(e("null; undefined; true; false; 0x10; 'x'"), "null\nundefined\ntrue\nfalse\n16\n\"x\"");
}

#[test]
fn functions_and_arrows() {
    assert_eq!(e("x => x + 1"), "(arrow (x) (+ x 1))");
    assert_eq!(e("() => {}"), "(arrow () {})");
    assert_eq!(e("(x, y) => { return x }"), "(arrow (x y) {(return x)})");
    assert_eq!(e("(x: number = 1, ...r: number[]): string => 's'"), "(arrow (x:number=1 ...r:number[]):string \"s\")");
    assert_eq!(e("async x => await x"), "(arrow async (x) (await x))");
    assert_eq!(e("async (x) => x"), "(arrow async (x) x)");
    assert_eq!(e("async () => {}"), "(arrow async () {})");
    assert_eq!(e("async (a): Promise<number> => a"), "(arrow async (a):Promise<number> a)");
    assert_eq!(e("<T>(x: T): T => x"), "(arrow <T> (x:T):T x)");
    assert_eq!(e("<T,>(x: T) => x"), "(arrow <T> (x:T) x)");
    assert_eq!(e("({ a, b }, [c, d]) => a"), "(arrow ({a:a b:b} [c d]) a)");
    assert_eq!(e("(a?: string) => a"), "(arrow (a?:string) a)");
    assert_eq!(e("() => ({})"), "(arrow () {})");
    assert_eq!(e("(a, b)"), "(, a b)");
    assert_eq!(e("(a)"), "a");
    assert_eq!(e("c ? (a) : b"), "(? c a b)");
    assert_eq!(e("f(x => x, (y) => y)"), "(call f (arrow (x) x) (arrow (y) y))");
    assert_eq!(e("a = b => c => d"), "(= a (arrow (b) (arrow (c) d)))");
    assert_eq!(e("x => y => x + y"), "(arrow (x) (arrow (y) (+ x y)))");
    assert_eq!(e("(function () {})"), "(fn () {})");
    assert_eq!(e("(function named<T>(a: T): void {})"), "(fn named <T> (a:T):void {})");
    assert_eq!(e("(async function () {})"), "(fn async () {})");
    assert_eq!(e("(async () => { })()"), "(call (arrow async () {}))");
    assert_eq!(e("async => async"), "(arrow (async) async)");
    assert_eq!(e("(class {})"), "(class)");
    assert_eq!(e("(class A extends B {})"), "(class A extends B)");
}

#[test]
fn spawn_prefix() {
    assert_eq!(e("async f(x)"), "(spawn (call f x))");
    assert_eq!(e("await async f()"), "(await (spawn (call f)))");
    assert_eq!(e("const t = async obj.run(1, 2)"), "(const t=(spawn (call (. obj run) 1 2)))");
    assert_eq!(e("async (f)(x)"), "(spawn (call f x))");
    assert_eq!(e("async f(x).then(g)"), "(spawn (call (. (call f x) then) g))");
    assert_eq!(e("[async a(), async b()]"), "[(spawn (call a)) (spawn (call b))]");
    let d = one_err("async x");
    assert_eq!(d.message, "`async` must be followed by a call");
    assert!(d.hint.unwrap_or_default().contains("(async () =>"));
    assert_eq!(one_err("async new X()").message, "`async` must be followed by a call");
    // `async` alone on a line is an identifier.
    assert_eq!(e("async\nf(x)"), "async\n(call f x)");
}

#[test]
fn destructuring_assignment() {
    assert_eq!(e("[a, b] = [b, a]"), "(= [a b] [b a])");
    assert_eq!(e("({ x } = o)"), "(= {x:x} o)");
    assert_eq!(e("({ x = 1, y: [z] = [], ...r } = o)"), "(= {x:(= x 1) y:(= [z] []) ...r} o)");
    assert_eq!(e("[a, , b = 2, ...rest] = xs"), "(= [a _ (= b 2) ...rest] xs)");
    assert_eq!(e("[o.x, o[1]] = p"), "(= [(. o x) ([] o 1)] p)");
    assert_eq!(e("[[a], {b}] = c"), "(= [[a] {b:b}] c)");
    assert_eq!(e("x! = 1"), "(= x 1)");
    assert_eq!(e("(x as any).y = 1"), "(= (. (as x any) y) 1)");
    assert_eq!(one_err("({ x = 1 })").message, "invalid shorthand property initializer");
    assert_eq!(one_err("f({ x = 1 })").message, "invalid shorthand property initializer");
    assert_eq!(one_err("1 = 2").message, "invalid assignment target");
    assert_eq!(one_err("a + b = 2").message, "invalid assignment target");
    assert_eq!(one_err("[a] += 2").message, "invalid assignment target");
    assert_eq!(one_err("a?.b = 2").message, "invalid assignment target");
    assert_eq!(one_err("[...a, b] = c").message, "a rest element must be last in a destructuring pattern");
    assert_eq!(one_err("f()++").message, "invalid increment/decrement operand");
    assert_eq!(one_err("++1").message, "invalid increment/decrement operand");
}

// ----- statements ----------------------------------------------------------------

#[test]
fn declarations() {
    assert_eq!(ok("let x = 1, y: number, z;"), "(let x=1 y:number z)");
    assert_eq!(ok("const [a, b = 2, ...c] = xs"), "(const [a (= b 2) ...c]=xs)");
    assert_eq!(ok("const { x, y: z = 1, ...rest } = p"), "(const {x:x y:(= z 1) ...rest}=p)");
    assert_eq!(ok("const { a: { b }, 'c': d, [k]: e } = p"), "(const {a:{b:b} c:d [k]:e}=p)");
    assert_eq!(ok("let x!: number"), "(let x:number)");
    assert_eq!(
        ok("function f<T extends object = {}>(a: T, b?: number, c = 1, ...d: string[]): void { }"),
        "(fn f <T extends object={}> (a:T b?:number c=1 ...d:string[]):void {})"
    );
    assert_eq!(ok("async function g(): Promise<number> { return 1 }"), "(fn async g ():Promise<number> {(return 1)})");
    assert_eq!(ok("function h({ a, b }: P, [c]: Q) {}"), "(fn h ({a:a b:b}:P [c]:Q) {})");
    assert_eq!(ok("function o(x: number): void;\nfunction o(x) {}"), ";\n(fn o (x) {})");
    assert_eq!(ok("type P = { x: number; y?: string };"), "(type P {x:number;y?:string;})");
    assert_eq!(ok("type F<T> = (x: T) => T"), "(type F<T> (fn(x:T) => T))");
    assert_eq!(
        ok("interface I<T> extends A, B<T> { x: number; readonly y?: T, m(a: number): string\n n: T[] }"),
        "(interface I<T> extends A,B<T> {x:number;readonly y?:T;m:(fn(a:number) => string);n:T[];})"
    );
    assert_eq!(ok("type = 1"), "(= type 1)");
    assert_eq!(ok("interface\nfoo"), "interface\nfoo");
}

#[test]
fn var_is_an_error_with_hint() {
    let (prog, diags) = parse("var x = 1;\nx;", 0);
    assert_eq!(diags.len(), 1);
    assert_eq!(diags[0].message, "`var` is not supported");
    assert_eq!(diags[0].hint.as_deref(), Some("use `let` (or `const`) instead"));
    assert_eq!(diags[0].span, Span::new(0, 3));
    assert_eq!(prog.body.iter().map(st).collect::<Vec<_>>(), vec!["(let x=1)", "x"]);
    assert_eq!(errs("for (var i = 0; i < 3; i++) {}"), vec!["`var` is not supported"]);
}

#[test]
fn const_needs_initializer() {
    assert_eq!(errs("const x;"), vec!["missing initializer in `const` declaration"]);
    assert_eq!(errs("let [a];"), vec!["missing initializer in destructuring declaration"]);
    assert_eq!(ok("for (const x of xs) {}"), "(for-of const x xs {})");
}

#[test]
fn class_members() {
    let src = "class A<T> extends B implements I, J<T> {
  x: number = 1
  static y = 2;
  private readonly z?: string
  declare w: number;
  constructor(a: number) { super(a) }
  m(): void {}
  static s() {}
  async am() {}
  static async sam() {}
  get g(): number { return 1 }
  set g(v: number) {}
  static get sg() { return 1 }
  'str'() {}
  [k]() {}
  42 = 1
  public static override readonly q = 3
  abstract ab(): void;
  over(x: number): void
  over(x: any) {}
  static = 1
  get = 2
  async
  other() {}
}";
    assert_eq!(
        ok(src),
        "(class A <T> extends B implements I,J<T> (field x:number=1) static (field y=2) (field z:string) \
         (ctor (fn constructor (a:number) {(call super a)})) (method m (fn m ():void {})) static (method s (fn s () {})) \
         (method am (fn async am () {})) static (method sam (fn async sam () {})) (get g (fn g ():number {(return 1)})) \
         (set g (fn g (v:number) {})) static (get sg (fn sg () {(return 1)})) (method str (fn str () {})) (method [k] (fn () {})) \
         (field #42=1) static (field q=3) (method over (fn over (x:any) {})) (field static=1) (field get=2) (field async) \
         (method other (fn other () {})))"
    );
    assert_eq!(ok("class C extends mixin(A, B)<T> {}"), "(class C extends (call mixin A B))");
    assert_eq!(ok("class C extends a.B {}"), "(class C extends (. a B))");
    assert_eq!(ok("abstract class D {}"), "(class D)");
    assert_eq!(errs("class F { get g(x) { } }"), vec!["a getter cannot have parameters"]);
    assert_eq!(errs("class F { set s() { } }"), vec!["a setter must have exactly one parameter"]);
    assert_eq!(errs("class F { x = 1 y = 2 }"), vec!["expected `;`, found `y`"]);
}

#[test]
fn control_flow() {
    assert_eq!(ok("if (a) b; else if (c) d; else { e }"), "(if a b (if c d {e}))");
    assert_eq!(ok("while (x) x--"), "(while x (post-- x))");
    assert_eq!(ok("do x++; while (x < 3)"), "(do (post++ x) (< x 3))");
    assert_eq!(ok("do { } while (false) x"), "(do {} false)\nx");
    assert_eq!(ok("for (;;) {}"), "(for _ _ _ {})");
    assert_eq!(
        ok("for (let i = 0, j = 1; i < n; i++, j--) ;"),
        "(for (let i=0 j=1) (< i n) (, (post++ i) (post-- j)) ;)"
    );
    assert_eq!(ok("for (i = 0; i < n; i++) {}"), "(for (= i 0) (< i n) (post++ i) {})");
    assert_eq!(ok("for (const x of xs) {}"), "(for-of const x xs {})");
    assert_eq!(ok("for (let [k, v] of m) {}"), "(for-of let [k v] m {})");
    assert_eq!(ok("for (const k in obj) {}"), "(for-in const k obj {})");
    assert_eq!(ok("for (x of xs) {}"), "(for-of x xs {})");
    assert_eq!(ok("for (o.p in obj) {}"), "(for-in (. o p) obj {})");
    assert_eq!(ok("for ([a, b] of pairs) {}"), "(for-of [a b] pairs {})");
    assert_eq!(ok("for (let i = ('a' in o) ? 1 : 0; ;) break"), "(for (let i=(? (in \"a\" o) 1 0)) _ _ (break))");
    assert_eq!(ok("for (const of of ofs) {}"), "(for-of const of ofs {})");
    assert_eq!(
        ok("outer: for (;;) { inner: while (1) { break outer; continue inner } }"),
        "(label outer (for _ _ _ {(label inner (while 1 {(break outer) (continue inner)}))}))"
    );
    assert_eq!(
        ok("switch (x) { case 1: case 2: a(); break; default: b(); case 3: }"),
        "(switch x (case 1 ) (case 2 (call a) (break)) (default (call b)) (case 3 ))"
    );
    assert_eq!(ok("return; return 1"), "(return)\n(return 1)");
    assert_eq!(ok("throw new Error('x')"), "(throw (new Error \"x\"))");
    assert_eq!(ok("try { a } catch (e) { b } finally { c }"), "(try {a} (catch e {b}) (finally {c}))");
    assert_eq!(ok("try { a } catch { b }"), "(try {a} (catch {b}))");
    assert_eq!(ok("try { a } catch (e: unknown) { }"), "(try {a} (catch e {}))");
    assert_eq!(ok("try { a } finally { }"), "(try {a} (finally {}))");
    assert_eq!(ok("try {} catch ({ message }) {}"), "(try {} (catch {message:message} {}))");
    assert_eq!(ok("{ ; }"), "{;}");
    assert_eq!(ok(";;"), ";\n;");
    assert_eq!(ok("debugger;"), ";");
    assert_eq!(errs("try { }"), vec!["expected `catch` or `finally`, found end of file"]);
    assert_eq!(errs("if (x) let y = 1"), vec!["declaration cannot appear in a single-statement context"]);
    assert_eq!(errs("switch (x) { default: default: }"), vec!["multiple `default` clauses in `switch`"]);
}

#[test]
fn modules() {
    assert_eq!(ok("import { a, b as c } from \"./x.raya\""), "(import \"./x.raya\" {a:a b:c})");
    assert_eq!(ok("import * as u from './x'"), "(import \"./x\" * u)");
    assert_eq!(ok("import './side'"), "(import \"./side\" {})");
    assert_eq!(ok("import { default as d, type T, x } from './m'"), "(import \"./m\" {default:d x:x})");
    assert_eq!(ok("import type { T } from './t'"), ";");
    assert_eq!(ok("export function f() {}"), "(export (fn f () {}))");
    assert_eq!(ok("export async function f() {}"), "(export (fn async f () {}))");
    assert_eq!(ok("export const x = 1, y = 2"), "(export (const x=1 y=2))");
    assert_eq!(ok("export let x"), "(export (let x))");
    assert_eq!(ok("export class C {}"), "(export (class C))");
    assert_eq!(ok("export { a, b as c, }"), "(export {a:a b:c})");
    assert_eq!(ok("export type T = number"), "(export (type T number))");
    assert_eq!(ok("export interface I { }"), "(export (interface I {}))");
    assert_eq!(ok("import d from './x'"), "(import \"./x\" {default:d})");
    assert_eq!(ok("import d, { a, b as c } from './x'"), "(import \"./x\" {default:d a:a b:c})");
    assert_eq!(ok("export default 1"), "(const default=1)\n(export {default:default})");
    assert_eq!(ok("export default function f() {}"), "(fn f () {})\n(export {f:default})");
    assert_eq!(ok("export default class C {}"), "(class C)\n(export {C:default})");
    assert_eq!(ok("export default class {}"), "(const default=(class))\n(export {default:default})");
    assert_eq!(ok("export { a, default as b } from './x'"), "(import \"./x\" reexport {a:a default:b})");
    assert_eq!(ok("export * from './x'"), "(import \"./x\" reexport *)");
    assert_eq!(errs("export { default }"), vec!["expected identifier, found keyword `default`"]);
    assert_eq!(
        errs("function f() { export default 1; }"),
        vec!["`export default` is only allowed at the top level of a module"]
    );
    assert_eq!(
        errs("{ export default class {} }"),
        vec!["`export default` is only allowed at the top level of a module"]
    );
    assert_eq!(errs("export * as ns from './x'"), vec!["`export * as name from` is not supported"]);
    assert_eq!(errs("import { a } from x"), vec!["expected a module path string, found `x`"]);
    assert_eq!(errs("import { class } from './x'"), vec!["expected `as`, found `}`"]);
}

#[test]
fn select_statement() {
    let src = "select {
  case const v = ch1.receive(): console.log('got', v)
  case let w = chans[0].receive(): break
  case ch2.receive(): a()
  case ch3.send(x + 1): b(); c()
  case sleep(100): d()
  default: e()
}";
    assert_eq!(
        ok(src),
        "(select (recv const v ch1 {(call (. console log) \"got\" v)}) (recv let w ([] chans 0) {(break)}) \
         (recv ch2 {(call a)}) (send ch3 (+ x 1) {(call b) (call c)}) (sleep 100 {(call d)}) (default {(call e)}))"
    );
    assert_eq!(ok("select {}"), "(select )");
    assert_eq!(ok("select { default: case sleep(1): }"), "(select (default {}) (sleep 1 {}))");
    // `select` is still an identifier elsewhere.
    assert_eq!(ok("select(1); let select = 2"), "(call select 1)\n(let select=2)");
    let d = one_err("select { case foo(): x() }");
    assert_eq!(d.message, "invalid `select` case");
    assert_eq!(d.label, "not a channel operation");
    assert!(d.hint.unwrap_or_default().contains("`CH.send(VALUE)`"));
    assert_eq!(errs("select { case const v = ch.send(1): }"), vec!["invalid `select` case"]);
    assert_eq!(errs("select { case ch.receive(1): }"), vec!["invalid `select` case"]);
    assert_eq!(errs("select { case ch?.receive(): }"), vec!["invalid `select` case"]);
    assert_eq!(errs("select { case sleep(): }"), vec!["invalid `select` case"]);
    assert_eq!(errs("select { default: default: }"), vec!["multiple `default` cases in `select`"]);
    assert_eq!(errs("select { foo }"), vec!["expected `case`, `default` or `}`, found `foo`"]);
    // A bad case does not hide the next one's errors.
    assert_eq!(errs("select { case f(): case g(): }"), vec!["invalid `select` case", "invalid `select` case"]);
}

// ----- types ---------------------------------------------------------------------

fn ty_of(src: &str) -> String {
    let out = ok(&format!("let x: {src}"));
    let out = out.strip_prefix("(let x:").unwrap_or(&out);
    out.strip_suffix(')').unwrap_or(out).to_string()
}

#[test]
fn types() {
    assert_eq!(ty_of("number"), "number");
    assert_eq!(ty_of("Channel<number>"), "Channel<number>");
    assert_eq!(ty_of("Map<string, Array<number>>"), "Map<string,Array<number>>");
    assert_eq!(ty_of("Map<string, Map<string, Array<number>>>"), "Map<string,Map<string,Array<number>>>");
    assert_eq!(ty_of("string[][]"), "string[][]");
    assert_eq!(ty_of("number | null"), "(number|null)");
    assert_eq!(ty_of("| 'a' | 'b'"), "('a'|'b')");
    assert_eq!(ty_of("A & B | C"), "((A&B)|C)");
    assert_eq!(ty_of("(number | string)[]"), "(number|string)[]");
    assert_eq!(ty_of("[number, string?, ...boolean[]]"), "[number,string,boolean[]]");
    assert_eq!(ty_of("[a: number, b?: string]"), "[number,string]");
    assert_eq!(ty_of("(x: number, y?: string) => void"), "(fn(x:number,y:string) => void)");
    assert_eq!(ty_of("(...xs: number[]) => void"), "(fn(...xs:number[]) => void)");
    assert_eq!(ty_of("() => () => void"), "(fn() => (fn() => void))");
    assert_eq!(ty_of("<T>(x: T) => T"), "(fn(x:T) => T)");
    assert_eq!(ty_of("new () => Foo"), "(fn() => Foo)");
    assert_eq!(
        ty_of("{ a: number, b?: string; readonly c: T; m(): void; [k: string]: any }"),
        "{a:number;b?:string;readonly c:T;m:(fn() => void);[k: string]:any;}"
    );
    assert_eq!(ty_of("{ [K in keyof T]?: T[K] }"), "{[K in keyof T]?:T[K];}");
    assert_eq!(ty_of("'lit' | 1 | -1 | true | false"), "('lit'|1|-1|true|false)");
    assert_eq!(ty_of("typeof x.y"), "typeof x.y");
    assert_eq!(ty_of("keyof T"), "keyof T");
    assert_eq!(ty_of("T['a'][number]"), "T['a'][number]");
    assert_eq!(ty_of("ns.Type<X>"), "ns.Type<X>");
    assert_eq!(
        ty_of("null | undefined | void | any | unknown | never | this"),
        "(null|undefined|void|any|unknown|never|this)"
    );
    assert_eq!(ty_of("readonly string[]"), "string[]");
    assert_eq!(ty_of("T extends string ? 'a' : 'b'"), "__conditional<T,string,'a','b'>");
    assert_eq!(ty_of("`a${string}`"), "string");
    assert_eq!(ty_of("({ a: 1 })"), "{a:1;}");
    assert_eq!(ok("let x: Array<number>= []"), "(let x:Array<number>=[])");
    assert_eq!(ok("function is(x: any): x is string { return true }"), "(fn is (x:any):boolean {(return true)})");
}

// ----- ASI -------------------------------------------------------------------------

#[test]
fn automatic_semicolon_insertion() {
    assert_eq!(ok("let a = 1\nlet b = 2"), "(let a=1)\n(let b=2)");
    assert_eq!(ok("a\n++b"), "a\n(++pre b)");
    assert_eq!(ok("a++\nb"), "(post++ a)\nb");
    assert_eq!(ok("return\nx"), "(return)\nx");
    assert_eq!(ok("x\n.y"), "(. x y)");
    assert_eq!(ok("a = b\n+ c"), "(= a (+ b c))");
    assert_eq!(ok("{ a } b"), "{a}\nb");
    assert_eq!(ok("{ 1\n2 } 3"), "{1 2}\n3");
    assert_eq!(ok("f(() => {}\n)"), "(call f (arrow () {}))");
    assert_eq!(ok("const f = () => {}\n(g)"), "(const f=(arrow () {}))\ng");
    assert_eq!(ok("let x = 1 /* c\n */ let y = 2"), "(let x=1)\n(let y=2)");
    assert_eq!(ok("for (;;) { break\nlabel }"), "(for _ _ _ {(break) label})");
    assert_eq!(ok("x\n!y"), "x\n(! y)");
    assert_eq!(ok("let x = a\nas\nb"), "(let x=a)\nas\nb");
    assert_eq!(errs("let a = 1 let b = 2"), vec!["expected `;`, found keyword `let`"]);
    assert_eq!(errs("a b"), vec!["expected `;`, found `b`"]);
    assert_eq!(errs("throw\nnew Error()"), vec!["line break is not allowed after `throw`"]);
}

// ----- errors and recovery --------------------------------------------------------

#[test]
fn error_messages() {
    let d = one_err("f(1, 2;");
    assert_eq!(d.message, "expected `,` or `)`, found `;`");
    assert_eq!(d.label, "expected `,` or `)`");
    assert_eq!(d.span, Span::new(6, 7));
    assert_eq!(one_err("let = 5").message, "expected identifier or destructuring pattern, found `=`");
    assert_eq!(one_err("let class = 5").message, "expected identifier, found keyword `class`");
    assert_eq!(one_err("x = ;").message, "expected expression, found `;`");
    assert_eq!(one_err("if x {}").message, "expected `(`, found `x`");
    assert_eq!(one_err("`a${}`").message, "expected expression, found `}`");
    let d = one_err("function f() {\n  let x = 1;\n");
    assert_eq!(d.message, "expected `}`, found end of file");
    assert_eq!(d.hint.as_deref(), Some("the `{` opened at 1:14 is never closed"));
    assert_eq!(one_err("let s = 'abc").message, "unterminated string literal");
    assert_eq!(one_err("/* x").message, "unterminated block comment");
    assert_eq!(one_err("x = /ab(/").message, "invalid regular expression: Unterminated group");
    assert_eq!(one_err("x = /ab\ny").message, "unterminated regular expression literal");
    assert_eq!(one_err("let x = <number>y").message, "type assertions with `<T>` are not supported");
    assert_eq!(one_err("delete o.x").message, "the `delete` operator is not supported");
    assert_eq!(one_err("super").message, "`super` must be followed by an argument list or a member access");
    assert_eq!(one_err("x = 08").message, "decimal literals with a leading zero are not allowed");
    assert_eq!(one_err("let x = 1 # 2").message, "unexpected character `#`");
    assert_eq!(one_err("()").message, "expected expression, found `)`");
    assert_eq!(one_err("(a, b) \n => 1").message, "line break is not allowed before `=>`");
    assert_eq!(one_err("}").message, "unexpected closing delimiter `}`");
}

#[test]
fn recovery_reports_every_error() {
    let src = "let a = 1;
let b = (2 + ;
function ok1() { return a }
let c = [1, 2 3];
class K { m() { return 1 } }
foo(1,, 2);
const d = 4;
";
    let (prog, diags) = parse(src, 0);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        vec!["expected expression, found `;`", "expected `,` or `]`, found `3`", "expected expression, found `,`"]
    );
    let printed: Vec<String> = prog.body.iter().map(st).collect();
    assert_eq!(
        printed,
        vec![
            "(let a=1)",
            "(let b=<error>)",
            "(fn ok1 () {(return a)})",
            "(let c=<error>)",
            "(class K (method m (fn m () {(return 1)})))",
            "(const d=4)",
        ]
    );
}

#[test]
fn recovery_inside_blocks_and_functions() {
    let src = "function f() {
  let x = ;
  g(x
  return x
}
function g() {
  if (a {
  }
  h()
}
let ok = 1
";
    let (prog, diags) = parse(src, 0);
    let msgs: Vec<&str> = diags.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        vec![
            "expected expression, found `;`",
            "expected `,` or `)`, found keyword `return`",
            "expected `)`, found `{`"
        ]
    );
    let printed: Vec<String> = prog.body.iter().map(st).collect();
    assert_eq!(printed, vec!["(fn f () {(let x=<error>) (return x)})", "(fn g () {(call h)})", "(let ok=1)"]);
}

#[test]
fn recovery_keeps_function_arguments_together() {
    let src = "let x = foo(1 2,\n  function () { return 1 })\nlet y = 2\n";
    let (prog, diags) = parse(src, 0);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    let printed: Vec<String> = prog.body.iter().map(st).collect();
    assert_eq!(printed, vec!["(let x=<error>)", "(let y=2)"]);
}

#[test]
fn recovery_inside_classes_and_cases() {
    let src = "class A {
  m(a b) { return 1 }
  n() { return 2 }
  p(: number) {}
  static q = 1
}
switch (x) {
  case 1 2: f()
  case 3: g(
  case 4: h()
}
select {
  case ch.receive(1: a()
  case ch2.receive(): b()
}
";
    let (prog, diags) = parse(src, 0);
    let msgs: Vec<(String, u32)> = diags.iter().map(|d| (d.message.clone(), d.span.start)).collect();
    assert_eq!(msgs.len(), 5, "{msgs:#?}");
    let printed: Vec<String> = prog.body.iter().map(st).collect();
    assert_eq!(
        printed,
        vec![
            "(class A (method n (fn n () {(return 2)})) static (field q=1))",
            "(switch x (case <error> (call f)) (case 3 ) (case 4 (call h)))",
            "(select (recv ch2 {(call b)}))",
        ]
    );
}

#[test]
fn recovery_skips_unbalanced_objects() {
    let src = "const o = { a: 1, b: 2 c: 3 }\nconst p = 2\nx = { y: }\nz()";
    let (prog, diags) = parse(src, 0);
    assert_eq!(diags.len(), 2, "{diags:#?}");
    let printed: Vec<String> = prog.body.iter().map(st).collect();
    assert_eq!(printed, vec!["(const o=<error>)", "(const p=2)", "(call z)"]);
}

#[test]
fn spans() {
    let (prog, _) = parse("  foo.bar(1, 2)  ;\nlet x = a[0].b;", 0);
    let s0 = &prog.body[0];
    assert_eq!(s0.span, Span::new(2, 18));
    let StmtKind::Expr(call) = &s0.kind else { panic!("not an expression") };
    assert_eq!(call.span, Span::new(2, 15));
    let ExprKind::Call { callee, .. } = &call.kind else { panic!("not a call") };
    assert_eq!(callee.span, Span::new(2, 9));
    let s1 = &prog.body[1];
    assert_eq!(s1.span, Span::new(19, 34));
    let StmtKind::Var(d) = &s1.kind else { panic!("not a var") };
    let init = d.decls[0].init.as_ref().map(|e| e.span);
    assert_eq!(init, Some(Span::new(27, 33)));
    assert_eq!(d.decls[0].target.span, Span::new(23, 24));
    // Parenthesised expressions include their parentheses.
    let (prog, _) = parse("(a + b) * c", 0);
    assert_eq!(prog.body[0].span, Span::new(0, 11));
    let StmtKind::Expr(e) = &prog.body[0].kind else { panic!() };
    let ExprKind::Binary(_, l, _) = &e.kind else { panic!() };
    assert_eq!(l.span, Span::new(0, 7));
    // Functions and classes.
    let (prog, _) = parse("async function f() {}\nclass C { m() {} }", 0);
    let StmtKind::Function(f) = &prog.body[0].kind else { panic!() };
    assert_eq!(f.span, Span::new(0, 21));
    let StmtKind::Class(c) = &prog.body[1].kind else { panic!() };
    assert_eq!(c.span, Span::new(22, 40));
    assert_eq!(c.members[0].span, Span::new(32, 38));
}

// ----- robustness ----------------------------------------------------------------

const BIG_PROGRAM: &str = r#"import { helper, other as o } from "./util.raya";
import * as u from "./u";

type Point = { x: number; y?: number };
interface Shape<T> extends Base { area(): number; tag: T }

export const ITEMS: Array<number> = [1, 2, 3, , ...more];
let { a, b: [c, d = 2], ...rest } = obj;

export async function main(args: string[] = [], ...xs: number[]): Promise<void> {
  const ch = new Channel<number>(10);
  const t = async worker(ch, 1_000);
  for (const v of ch) { console.log(`got ${v} at ${Date.now()}`); }
  for (let i = 0, j = 10; i < j; i++, j--) { if (i % 2 === 0) continue; else break; }
  for (const k in obj) obj[k] = undefined;
  outer: while (true) {
    select {
      case const v = ch.receive(): console.log(v); break outer;
      case ch.send(1): break;
      case sleep(100): continue outer;
      default: await Task.yield();
    }
  }
  do { x **= 2; } while (x < 100)
  switch (x) { case 1: y = 2; break; default: y ??= 3; }
  try { throw new Error("boom"); } catch (e) { console.error(e.message); } finally { ch.close(); }
  try { risky(); } catch { }
  const f = (p: number, q?: string): string => `${p}${q ?? ""}`;
  const g = async (x) => await x;
  const h = x => x * 2;
  const obj2 = { a, [k]: 1, get g() { return 1 }, set s(v) { }, m() { }, ...rest, "s": 2, 3: 4 };
  [a, b] = [b, a];
  ({ x: a, y = 1 } = obj2);
  const r = (a?.b?.[c]?.(d) ?? (e || f)) && !g;
  const n = -(2 ** 3) + 0xff - 0b101 * 0o17 / 1.5e3 % .5;
  x = y as number; z = w!; q = typeof p === "string" ? p : void 0;
  const m = new Map<string, Array<number>>();
  const v = f<number>(x) >>> 2 << 1 >> 3;
  await [t, async other()];
  return;
}

class Animal<T> extends Base implements Named {
  static count: number = 0;
  private readonly name: string;
  constructor(name: string) { super(name); this.name = name; Animal.count++; }
  get label(): string { return this.name }
  set label(v: string) { this.name = v }
  async speak(): Promise<string> { return super.speak() + "!"; }
  static create() { return new Animal("x") }
}
main();
"#;

#[test]
fn big_program_parses_cleanly() {
    let (prog, diags) = parse(BIG_PROGRAM, 0);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(prog.body.len(), 9);
}

#[test]
fn never_panics_on_prefixes() {
    // `parse_here` so that a panic fails the test instead of becoming an
    // "internal error" diagnostic.
    for (i, _) in BIG_PROGRAM.char_indices() {
        check_no_internal_error(&BIG_PROGRAM[..i]);
    }
    // Suffixes too (start in the middle of constructs).
    for (i, _) in BIG_PROGRAM.char_indices().step_by(7) {
        check_no_internal_error(&BIG_PROGRAM[i..]);
    }
}

#[test]
fn truncated_programs_report_errors() {
    // Cutting inside a statement always leaves something to complain about.
    let src = "function f(a, b) { return a + b }";
    for i in "function".len()..src.len() {
        let cut = &src[..i];
        let (_, diags) = parse(cut, 0);
        let complete = cut == "function f(a, b) { return a + b }";
        assert!(complete || !diags.is_empty(), "no error for {cut:?}");
    }
}

/// A tiny deterministic PRNG (xorshift) for the fuzz tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn fuzz_random_token_soup() {
    let pieces = [
        "let",
        "const",
        "var",
        "x",
        "y",
        "=",
        "==",
        "=>",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ";",
        ",",
        ".",
        "?.",
        "?",
        ":",
        "1",
        "'s'",
        "`t${",
        "`",
        "}`",
        "+",
        "-",
        "**",
        "!",
        "async",
        "await",
        "function",
        "class",
        "extends",
        "new",
        "<",
        ">",
        ">>",
        "select",
        "case",
        "default",
        "for",
        "of",
        "in",
        "if",
        "else",
        "return",
        "\n",
        " ",
        "...",
        "as",
        "type",
        "/*",
        "*/",
        "//",
        "\"",
        "#",
        "import",
        "export",
        "from",
        "try",
        "catch",
        "switch",
        "while",
        "do",
        "break",
        "get",
        "set",
        "static",
        "interface",
        "|",
        "&",
        "keyof",
        "typeof",
        "this",
        "super",
        "0x",
        "1_",
        "@",
        "\\",
        "é",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let n = 1 + rng.below(40);
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(pieces[rng.below(pieces.len())]);
            if rng.below(3) == 0 {
                s.push(' ');
            }
        }
        check_no_internal_error(&s);
    }
}

/// A short source is parsed on the caller's thread with a low nesting
/// limit first; reaching it is not an error but a second parse on the
/// helper thread, whose limit is the one reported.
#[test]
fn short_sources_nested_past_the_first_limit_still_parse() {
    let src = format!("x = {}1{}", "(".repeat(100), ")".repeat(100));
    assert!(src.len() <= HERE_MAX_BYTES && 200 > HERE_MAX_DEPTH);
    assert!(parse_with(&src, 0, HERE_MAX_DEPTH).1, "too deep for the first parse");
    let (prog, diags) = parse(&src, 0);
    assert!(diags.is_empty(), "{diags:#?}");
    assert_eq!(prog.body.len(), 1);
    let src = format!("x = {}1{}", "(".repeat(600), ")".repeat(600));
    assert!(src.len() <= HERE_MAX_BYTES);
    let (_, diags) = parse(&src, 0);
    assert_eq!(diags.len(), 1, "{diags:#?}");
    assert!(diags[0].hint.as_deref().is_some_and(|h| h.contains(&format!("at most {MAX_DEPTH} levels"))), "{diags:#?}");
    // Shallow code is parsed once, here.
    assert!(!parse_with("const a = [1, { b: (2 + 3) * 4 }];", 0, HERE_MAX_DEPTH).1);
}

/// Parses on this thread (so a panic fails the test) and checks that no
/// code was skipped without a diagnostic.
fn check_no_internal_error(src: &str) {
    let (_, diags) = parse_here(src, 0, MAX_DEPTH);
    assert!(!diags.iter().any(|d| d.message.starts_with("internal error")), "internal error for {src:?}");
}

#[test]
fn fuzz_mutated_program() {
    let mut rng = Rng(12345);
    let bytes = BIG_PROGRAM.as_bytes();
    for _ in 0..400 {
        let mut v = bytes.to_vec();
        for _ in 0..1 + rng.below(6) {
            if v.is_empty() {
                break;
            }
            let i = rng.below(v.len());
            match rng.below(3) {
                0 => {
                    v.remove(i);
                }
                1 => v.insert(i, b"(){}[];,=<>`'\"/*\n"[rng.below(17)]),
                _ => {
                    let j = rng.below(v.len());
                    v.swap(i, j)
                }
            }
        }
        let s = String::from_utf8_lossy(&v);
        check_no_internal_error(&s);
    }
}

#[test]
fn deep_nesting_is_reported_not_overflowed() {
    for (open, close) in
        [("(", ")"), ("[", "]"), ("{a:", "}"), ("-", ""), ("a=>", ""), ("`${", "}`"), ("x?", ":y"), ("2**", "")]
    {
        let src = format!("x = {}1{}", open.repeat(5000), close.repeat(5000));
        let (_, diags) = parse(&src, 0);
        assert!(diags.iter().any(|d| d.message == "code is nested too deeply"), "{open}: {diags:#?}");
    }
    let src = format!("{}{}", "{".repeat(5000), "}".repeat(5000));
    let (_, diags) = parse(&src, 0);
    assert_eq!(diags.len(), 1);
    let src = format!("let x: {}number{}", "Array<".repeat(3000), ">".repeat(3000));
    let (_, diags) = parse(&src, 0);
    assert_eq!(diags[0].message, "code is nested too deeply");
    // Moderate nesting is fine.
    let src = format!("x = {}1{}", "(".repeat(300), ")".repeat(300));
    assert!(parse(&src, 0).1.is_empty());
    let src = format!("x = {}1{}", "[{a: ".repeat(150), "}]".repeat(150));
    assert!(parse(&src, 0).1.is_empty());
}
#[test]
fn edge_cases() {
    let cases = [
        ("a ? (b) : c => d", "(? a b (arrow (c) d))"),
        ("a ? (b): T => d : e", "(? a (arrow (b):T d) e)"),
        ("a ? f((b): c => d) : e", "(? a (call f (arrow (b):c d)) e)"),
        ("x = y / z / w", "(= x (/ (/ y z) w))"),
        ("f(<T>(x: T) => x)", "(call f (arrow <T> (x:T) x))"),
        ("new Promise<number>()", "(new Promise)"),
        ("const { default: d, class: c } = x", "(const {default:d class:c}=x)"),
        (
            "class A { get get() { return 1 } set set(v) {} 'constructor'() {} static constructor() {} }",
            "(class A (get get (fn get () {(return 1)})) (set set (fn set (v) {})) (ctor (fn constructor () {})) static (method constructor (fn constructor () {})))",
        ),
        ("label: { break label; }", "(label label {(break label)})"),
        ("(a = (1)) => a", "(arrow (a=1) a)"),
        ("({a} = {}) => a", "(arrow ({a:a}={}) a)"),
        ("(a, b) => a, c", "(, (arrow (a b) a) c)"),
        ("x => ({...x})", "(arrow (x) {...x})"),
        ("`a}b`", "(tpl \"a}b\")"),
        ("a.b\n++c", "(. a b)\n(++pre c)"),
        ("let a = b\n(c)", "(let a=(call b c))"),
        ("if (x) return\nfoo()", "(if x (return))\n(call foo)"),
        ("let async = 1; async = 2; async.x", "(let async=1)\n(= async 2)\n(. async x)"),
        ("for (const x of await xs) {}", "(for-of const x (await xs) {})"),
        ("async f?.()", "(spawn (call?. f))"),
        ("(1).toFixed(2); 1..toFixed(2)", "(call (. 1 toFixed) 2)\n(call (. 1 toFixed) 2)"),
        ("x = [a, b] = [c, d]", "(= x (= [a b] [c d]))"),
        ("while (a) if (b) break; else continue", "(while a (if b (break) (continue)))"),
        ("let f = (x): x is string => true", "(let f=(arrow (x):boolean true))"),
        ("x = a?.[0]?.b!.c", "(= x (. (nonnull (?. (?.[] a 0) b)) c))"),
        ("x = y satisfies Z", "(= x y)"),
        ("x = [1, 2] as const", "(= x (as [1 2] const))"),
        ("let v = <T,>(x: T) => x", "(let v=(arrow <T> (x:T) x))"),
        ("x = a ? b : c = 1", "(= x (? a b (= c 1)))"),
        ("let x = 5\n-1", "(let x=(- 5 1))"),
        ("y = x++\n+1", "(= y (+ (post++ x) 1))"),
        ("a\n?.b", "(?. a b)"),
        ("get\nx", "get\nx"),
        ("x = { get }", "(= x {get:get})"),
        ("let {a, ...b} = c", "(let {a:a ...b}=c)"),
        ("x = (a, b,) => 1", "(= x (arrow (a b) 1))"),
        ("for (let i = 0; i < n; i++) for (const j in o) if (j) continue", "(for (let i=0) (< i n) (post++ i) (for-in const j o (if j (continue))))"),
        ("x = yield", "(= x (yield))"),
        ("f(yield a, yield)", "(call f (yield a) (yield))"),
        ("x = yield* g()", "(= x (yield* (call g)))"),
        ("x = async function* () {}", "(= x (fn async () {}))"),
        ("yield\na", "(yield)\na"),
    ];
    for (src, want) in cases {
        assert_eq!(ok(src), want, "for {src:?}");
    }
    let bad = [
        ("o = { *g: 1 }", "expected `(`, found `:`"),
        ("class { }", "expected class name, found `{`"),
        ("new.target", "`new.target` is not supported"),
        ("let [a, ...b,] = c", "a rest element must be last in a destructuring pattern"),
        ("let {...b, a} = c", "a rest element must be last in a destructuring pattern"),
        ("function f(...a, b) {}", "a rest parameter must be the last parameter"),
        ("function f(...a = 1) {}", "a rest parameter cannot have a default value"),
        ("x = (a, b,)", "expected expression, found `)`"),
        ("if (a) function f() {}", "declaration cannot appear in a single-statement context"),
        ("for await (const x in y) {}", "`for await` needs an `of` loop: `for await (const x of xs)`"),
        ("for await (let i = 0; i < 1; i++) {}", "`for await` needs an `of` loop: `for await (const x of xs)`"),
        ("for (const x = 1 of y) {}", "the variable of a for-of loop cannot have an initializer"),
    ];
    for (src, want) in bad {
        assert_eq!(one_err(src).message, want, "for {src:?}");
    }
}

#[test]
fn typescript_class_and_declaration_forms() {
    let cases = [
        (r#"enum E { A, B = 2, "c d" = "x" }"#, r#"(enum E A B=2 c d="x")"#),
        ("const enum F { X = 1 << 2 }", "(enum F X=(<< 1 2))"),
        ("export enum G { }", "(export (enum G ))"),
        // Ambient declarations are erased.
        ("declare const V: string; declare function f(): void; declare class K { m(): void }", ";\n;\n;"),
        ("declare enum D { A } declare var v: number", ";\n;"),
        (r#"declare module "m" { export function f(): void; } declare global { interface W { x: number } }"#, ";\n;"),
        ("export declare const X: number", ";"),
        // Parameter properties: fields first, assigned at the start of the
        // body, or right after `super(...)` in a derived class.
        (
            "class P { constructor(public x: number, private readonly y = 2) { go(); } }",
            "(class P (field x) (field y) (ctor (fn constructor (x:number y=2) {(= (. this x) x) (= (. this y) y) (call go)})))",
        ),
        (
            "class Q extends R { constructor(protected x: number) { pre(); super(x); post(); } }",
            "(class Q extends R (field x) (ctor (fn constructor (x:number) {(call pre) (call super x) (= (. this x) x) (call post)})))",
        ),
        ("class S { static a = 1; static { init(this); } }", "(class S static (field a=1) static (block (fn () {(call init this)})))"),
        (
            "class T { #x = 1; static #y; #m() {} get #g() { return 1; } has(o) { return #x in o && this.#x; } }",
            "(class T (field #x=1) static (field #y) (method #m (fn #m () {})) (get #g (fn #g () {(return 1)})) \
             (method has (fn has (o) {(return (&& (in #x o) (. this #x)))})))",
        ),
        // Tagged templates keep the cooked and the raw strings.
        ("tag`a${x}b\\n${y}`", r#"(tag tag Some("a") Some("b\n") Some("") "a" "b\\n" "" x y)"#),
        ("o.f`\\u{41}`", r#"(tag (. o f) Some("A") "\\u{41}" )"#),
        ("super[k]()", "(call ([] super k))"),
        // An invalid escape is allowed in a tagged template: no cooked string.
        ("t`\\unicode ${1} \\xyz`", r#"(tag t None None "\\unicode " " \\xyz" 1)"#),
    ];
    for (src, want) in cases {
        assert_eq!(ok(src), want, "for {src:?}");
    }
    let bad = [
        ("function f(public x) {}", "a parameter property is only allowed in a constructor"),
        ("class A { m(private x) {} }", "a parameter property is only allowed in a constructor"),
        ("class A { constructor(public {x}) {} }", "a parameter property cannot be declared using a binding pattern"),
        (
            "class A extends B { constructor(public x) { if (x) { super(); } } }",
            "a derived class with parameter properties must call `super(...)` at the top level of its constructor",
        ),
        ("o = { #x: 1 }", "private names are only allowed in class bodies"),
        ("#x + 1", "a private name can only be used after `.` or before `in`"),
        ("enum E { [k] = 1 }", "an enum member cannot have a numeric or computed name"),
        ("declare x + 1", "`declare` must be followed by a declaration"),
        ("x = `\\unicode`", "invalid Unicode escape sequence"),
        ("class A extends B { #x = 1; m() { return super.#x; } }", "`super` has no private members"),
    ];
    for (src, want) in bad {
        assert_eq!(one_err(src).message, want, "for {src:?}");
    }
}
