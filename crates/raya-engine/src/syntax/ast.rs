//! The abstract syntax tree produced by the parser.
//!
//! Every node that can be the subject of a diagnostic or of a stack-trace
//! position carries a [`Span`] (byte offsets into its file's source). Type
//! annotations are parsed into [`TypeExpr`] and kept so that a later type
//! checker can use them; the compiler ignores them.

use super::span::Span;

/// A name as written in the source, with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One parsed `.raya` file.
#[derive(Debug, Clone)]
pub struct Program {
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    Let,
    Const,
}

#[derive(Debug, Clone)]
pub struct VarDeclarator {
    pub target: Pattern,
    pub ty: Option<TypeExpr>,
    pub init: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct VarDecl {
    pub kind: VarKind,
    pub decls: Vec<VarDeclarator>,
}

#[derive(Debug, Clone)]
pub enum StmtKind {
    Expr(Expr),
    Var(VarDecl),
    Function(Function),
    Class(Class),
    /// `type X<T> = ...;` — kept for a future type checker, erased.
    TypeAlias {
        name: Ident,
        type_params: Vec<TypeParam>,
        ty: TypeExpr,
    },
    /// `interface X<T> extends Y { ... }` — kept, erased.
    Interface {
        name: Ident,
        type_params: Vec<TypeParam>,
        extends: Vec<TypeExpr>,
        members: Vec<TypeMember>,
    },
    /// `enum E { A, B = 2 }` (also `const enum`): declares `E`, bound to
    /// the object TypeScript emits (numeric members mapped both ways).
    Enum(EnumDecl),
    Block(Vec<Stmt>),
    If {
        cond: Expr,
        then: Box<Stmt>,
        otherwise: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Box<Stmt>,
    },
    DoWhile {
        body: Box<Stmt>,
        cond: Expr,
    },
    For {
        init: Option<ForInit>,
        cond: Option<Expr>,
        update: Option<Expr>,
        body: Box<Stmt>,
    },
    /// `for (const x of xs)`; `decl` is `None` for `for (x of xs)` with an
    /// existing binding, in which case `target` is an assignment target.
    ForOf {
        decl: Option<VarKind>,
        target: Pattern,
        iterable: Expr,
        body: Box<Stmt>,
        /// `for await (… of xs)`: each value comes from the async iterator
        /// protocol (`[Symbol.asyncIterator]`), or is awaited when `xs` is
        /// only synchronously iterable.
        is_await: bool,
    },
    ForIn {
        decl: Option<VarKind>,
        target: Pattern,
        object: Expr,
        body: Box<Stmt>,
    },
    Break(Option<Ident>),
    Continue(Option<Ident>),
    Return(Option<Expr>),
    Throw(Expr),
    Try {
        block: Vec<Stmt>,
        /// `catch (param) { ... }`; the param is `None` for `catch { }`.
        handler: Option<CatchClause>,
        finalizer: Option<Vec<Stmt>>,
    },
    Switch {
        discriminant: Expr,
        cases: Vec<SwitchCase>,
    },
    Labeled {
        label: Ident,
        body: Box<Stmt>,
    },
    /// `select { case ...: ... }` — see LANGUAGE.md §6.
    Select(Vec<SelectCase>),
    Import(ImportDecl),
    /// `export <declaration>`: the declaration is exported under its name(s).
    Export(Box<Stmt>),
    /// `export { a, b as c };`
    ExportList(Vec<ExportSpecifier>),
    Empty,
}

#[derive(Debug, Clone)]
pub struct EnumDecl {
    pub name: Ident,
    pub members: Vec<EnumMember>,
}

/// One enum member. Inside initialisers, the earlier members are in scope
/// by their bare names (as in TypeScript), so each member is also a local
/// binding declared at `name`.
#[derive(Debug, Clone)]
pub struct EnumMember {
    pub name: Ident,
    pub init: Option<Expr>,
}

#[derive(Debug, Clone)]
pub enum ForInit {
    Var(VarDecl),
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub struct CatchClause {
    pub param: Option<Pattern>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone)]
pub struct SwitchCase {
    /// `None` for `default:`.
    pub test: Option<Expr>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct SelectCase {
    pub kind: SelectCaseKind,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum SelectCaseKind {
    /// `case const v = ch.receive():` / `case let v = ...:` / `case ch.receive():`
    Receive {
        binding: Option<(VarKind, Pattern)>,
        channel: Expr,
    },
    /// `case ch.send(value):`
    Send {
        channel: Expr,
        value: Expr,
    },
    /// `case sleep(ms):`
    Timeout(Expr),
    Default,
}

#[derive(Debug, Clone)]
pub struct ImportDecl {
    /// The module path as written (`"./util.raya"`).
    pub source: String,
    pub source_span: Span,
    pub kind: ImportKind,
}

#[derive(Debug, Clone)]
pub enum ImportKind {
    /// `import { a, b as c } from "..."`: (imported name, local binding).
    Named(Vec<(Ident, Ident)>),
    /// `import * as u from "..."`.
    Namespace(Ident),
    /// `export { a, b as c } from "..."`: (imported name, exported name);
    /// binds nothing locally.
    ReExport(Vec<(Ident, Ident)>),
    /// `export * from "..."`: every named export (not `default`).
    ReExportAll,
}

#[derive(Debug, Clone)]
pub struct ExportSpecifier {
    pub local: Ident,
    pub exported: Ident,
}

#[derive(Debug, Clone)]
pub struct TypeParam {
    pub name: Ident,
    pub constraint: Option<TypeExpr>,
    pub default: Option<TypeExpr>,
}

/// A function declaration, expression, arrow, method, getter or setter.
#[derive(Debug, Clone)]
pub struct Function {
    /// Declared name; for expressions assigned to a variable the compiler
    /// infers a display name separately.
    pub name: Option<Ident>,
    pub params: Vec<Param>,
    pub body: FunctionBody,
    pub is_async: bool,
    pub is_arrow: bool,
    /// `function*` / `*m()`: calling it makes a generator object.
    pub is_generator: bool,
    pub type_params: Vec<TypeParam>,
    pub return_type: Option<TypeExpr>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum FunctionBody {
    Block(Vec<Stmt>),
    /// Arrow function with an expression body: `x => x + 1`.
    Expr(Box<Expr>),
}

#[derive(Debug, Clone)]
pub struct Param {
    pub pattern: Pattern,
    pub ty: Option<TypeExpr>,
    pub default: Option<Expr>,
    /// `...rest`
    pub rest: bool,
    /// `x?: T`
    pub optional: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct Class {
    pub name: Option<Ident>,
    pub type_params: Vec<TypeParam>,
    pub extends: Option<Box<Expr>>,
    pub implements: Vec<TypeExpr>,
    pub members: Vec<ClassMember>,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub struct ClassMember {
    pub kind: ClassMemberKind,
    pub is_static: bool,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum ClassMemberKind {
    Constructor(Function),
    Method {
        key: PropKey,
        func: Function,
    },
    Getter {
        key: PropKey,
        func: Function,
    },
    Setter {
        key: PropKey,
        func: Function,
    },
    Field {
        key: PropKey,
        ty: Option<TypeExpr>,
        init: Option<Expr>,
    },
    /// `static { ... }`: compiled as a method called once on the class,
    /// in order with the static fields.
    StaticBlock(Function),
}

/// A property name in an object literal, class body or pattern.
#[derive(Debug, Clone)]
pub enum PropKey {
    /// `a`, `"a"`.
    Named(String, Span),
    /// `1`, `0x10`: the compiler converts it to its canonical string form.
    Number(f64, Span),
    /// `[expr]`
    Computed(Box<Expr>),
    /// `#name` (class members only): a private name, distinct from every
    /// string key and from the same spelling in another class.
    Private(String, Span),
}

/// A binding or assignment target.
#[derive(Debug, Clone)]
pub struct Pattern {
    pub kind: PatternKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum PatternKind {
    Ident(Ident),
    /// `[a, , b = 1, ...rest]`; `None` entries are holes.
    Array {
        elems: Vec<Option<PatternElem>>,
        rest: Option<Box<Pattern>>,
    },
    /// `{ a, b: c, d = 1, ...rest }`
    Object {
        props: Vec<ObjectPatternProp>,
        rest: Option<Box<Pattern>>,
    },
    /// Only in assignment targets: `obj.x = ...`, `arr[i] = ...` inside a
    /// destructuring assignment or `for (x.y of ...)`.
    Expr(Box<Expr>),
}

#[derive(Debug, Clone)]
pub struct PatternElem {
    pub pattern: Pattern,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct ObjectPatternProp {
    pub key: PropKey,
    pub value: Pattern,
    pub default: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Pow,
    Eq,
    NotEq,
    StrictEq,
    StrictNotEq,
    Lt,
    LtEq,
    Gt,
    GtEq,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    UShr,
    In,
    InstanceOf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogicalOp {
    And,
    Or,
    Nullish,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Plus,
    Not,
    BitNot,
    TypeOf,
    Void,
}

/// `=` or a compound assignment operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    Assign,
    /// `+=`, `-=`, ... `>>>=`: the binary operator applied.
    Compound(BinaryOp),
    /// `&&=`, `||=`, `??=`
    Logical(LogicalOp),
}

#[derive(Debug, Clone)]
pub enum TemplatePart {
    Str(String),
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub enum ArrayElem {
    Expr(Expr),
    Spread(Expr),
    /// `[1, , 2]`
    Hole,
}

#[derive(Debug, Clone)]
pub enum ObjectProp {
    /// `key: value` and shorthand `key` (value is then an `Ident` expr).
    KeyValue(PropKey, Expr),
    /// `...expr`
    Spread(Expr),
    /// `m() { }`, `get x() { }`, `set x(v) { }` in object literals.
    Method(PropKey, Function),
    Getter(PropKey, Function),
    Setter(PropKey, Function),
}

#[derive(Debug, Clone)]
pub enum Argument {
    Expr(Expr),
    Spread(Expr),
}

#[derive(Debug, Clone)]
pub enum ExprKind {
    Number(f64),
    String(String),
    Template(Vec<TemplatePart>),
    /// `/pattern/flags`: the pattern's source text, checked by the lexer.
    Regex {
        pattern: String,
        flags: String,
    },
    Bool(bool),
    Null,
    Undefined,
    Ident(Ident),
    This,
    /// `super` is only valid as `super(...)` or `super.x` / `super[x]`,
    /// which the parser produces as Call / Member with this callee.
    Super,
    Array(Vec<ArrayElem>),
    Object(Vec<ObjectProp>),
    Function(Box<Function>),
    Class(Box<Class>),
    Unary(UnaryOp, Box<Expr>),
    /// `++x` / `x++` / `--x` / `x--`.
    Update {
        increment: bool,
        prefix: bool,
        target: Box<Expr>,
    },
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Logical(LogicalOp, Box<Expr>, Box<Expr>),
    /// Target is an `Ident`, `Member`, `Index`, or (for `=`) an
    /// array/object literal reinterpreted as a pattern.
    Assign {
        op: AssignOp,
        target: Box<Pattern>,
        value: Box<Expr>,
    },
    Conditional {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Call {
        callee: Box<Expr>,
        args: Vec<Argument>,
        /// `f?.()`
        optional: bool,
    },
    New {
        callee: Box<Expr>,
        args: Vec<Argument>,
    },
    /// `obj.name` / `obj?.name`; also `obj.#name`, whose property is
    /// the private name with its `#` (no identifier starts with `#`).
    Member {
        object: Box<Expr>,
        property: Ident,
        optional: bool,
    },
    /// `obj[index]` / `obj?.[index]`
    Index {
        object: Box<Expr>,
        index: Box<Expr>,
        optional: bool,
    },
    /// `` tag`a${x}b` ``: `cooked` is `None` where an escape is invalid
    /// (allowed in tagged templates; the cooked string is then undefined).
    TaggedTemplate {
        tag: Box<Expr>,
        cooked: Vec<Option<String>>,
        raw: Vec<String>,
        exprs: Vec<Expr>,
    },
    /// `#name in obj`
    PrivateIn {
        name: Ident,
        object: Box<Expr>,
    },
    /// `a, b`
    Sequence(Vec<Expr>),
    /// `await expr`
    Await(Box<Expr>),
    /// `yield expr?` / `yield* expr` (`delegate`), inside a generator.
    Yield {
        arg: Option<Box<Expr>>,
        delegate: bool,
    },
    /// `async f(x)` spawn prefix: the operand is a `Call`.
    Spawn(Box<Expr>),
    /// `x as T` — erased; kept for the type checker.
    As(Box<Expr>, TypeExpr),
    /// `x!` — erased.
    NonNull(Box<Expr>),
    /// `(expr)` is not kept as a node; this marks an error already reported
    /// by the parser so later passes skip it silently.
    Error,
}

/// Parsed TypeScript type syntax. Erased by the compiler.
#[derive(Debug, Clone)]
pub struct TypeExpr {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Debug, Clone)]
pub enum TypeKind {
    /// `number`, `Foo`, `Map<K, V>`, `ns.Foo`
    Named {
        name: String,
        args: Vec<TypeExpr>,
    },
    Array(Box<TypeExpr>),
    Tuple(Vec<TypeExpr>),
    Union(Vec<TypeExpr>),
    Intersection(Vec<TypeExpr>),
    Function {
        params: Vec<(String, TypeExpr)>,
        ret: Box<TypeExpr>,
    },
    Object(Vec<TypeMember>),
    /// `"a"`, `1`, `true` as types.
    Literal(String),
    /// `typeof x`
    TypeOf(String),
    /// `keyof T`
    KeyOf(Box<TypeExpr>),
    Indexed(Box<TypeExpr>, Box<TypeExpr>),
}

#[derive(Debug, Clone)]
pub struct TypeMember {
    pub name: String,
    pub optional: bool,
    pub readonly: bool,
    /// For method signatures `m(x: T): R` this is a `TypeKind::Function`.
    pub ty: TypeExpr,
}
