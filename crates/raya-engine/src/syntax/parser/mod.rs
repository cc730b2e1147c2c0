//! The parser: tokens to [`ast::Program`](super::ast::Program).
//!
//! Hand-written recursive descent; expressions use precedence climbing.
//! Errors are reported as [`Diagnostic`]s and the parser recovers at
//! statement boundaries, so one run reports every syntax error of a file
//! and still returns the statements that parsed.
//!
//! Layout: this file holds the token cursor, error reporting, recovery and
//! ASI helpers; `stmt.rs` statements and declarations, `expr.rs`
//! expressions and patterns, `types.rs` TypeScript type syntax.

use super::ast::*;
use super::diagnostic::{Diagnostic, FileId};
use super::lexer::{self, Token, TokenKind as T};
use super::span::{LineIndex, Span};

mod expr;
mod stmt;
mod types;

#[cfg(test)]
mod tests;

/// Parses one file. Never panics; returns the statements that parsed and
/// every syntax error found (lexical errors included), in source order.
///
/// The parser is recursive, so it runs on a scoped helper thread with a
/// large stack (reserved lazily by the OS) to accept deeply nested code
/// whatever the caller's stack size; if that thread cannot be created it
/// runs here with a lower nesting limit.
///
/// Short sources (an `eval`, a REPL input, a small module) are first
/// parsed on the caller's thread with a low nesting limit: creating the
/// helper thread and mapping its stack costs more than parsing them. Only
/// if that limit is reached are they parsed again on the helper thread.
pub fn parse(src: &str, file: FileId) -> (Program, Vec<Diagnostic>) {
    const STACK_SIZE: usize = 64 << 20;
    if src.len() <= HERE_MAX_BYTES {
        let (done, too_deep) = parse_with(src, file, HERE_MAX_DEPTH);
        if !too_deep {
            return done;
        }
    }
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("raya-parser".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || parse_here(src, file, MAX_DEPTH))
            .map(|handle| handle.join())
    });
    match outcome {
        Ok(Ok(result)) => result,
        Ok(Err(_panic)) => {
            let d = Diagnostic::new(file, Span::default(), "internal error: the parser crashed on this file")
                .with_label("while parsing this file")
                .with_hint("this is a bug in Raya; please report it with the file");
            (Program { body: Vec::new() }, vec![d])
        }
        Err(_) => parse_here(src, file, FALLBACK_MAX_DEPTH),
    }
}

/// [`parse`] on the current thread with the given nesting limit.
fn parse_here(src: &str, file: FileId, max_depth: u32) -> (Program, Vec<Diagnostic>) {
    parse_with(src, file, max_depth).0
}

/// [`parse_here`], and whether the nesting limit was reached.
fn parse_with(src: &str, file: FileId, max_depth: u32) -> ((Program, Vec<Diagnostic>), bool) {
    let (toks, lex_diags) = lexer::tokenize(src, file);
    let mut p = Parser::new(src, file, toks, max_depth);
    p.lex_diags = lex_diags;
    let body = p.parse_program();
    let lex_diags = std::mem::take(&mut p.lex_diags);
    if p.recoveries > 0 && p.diags.is_empty() && lex_diags.is_empty() {
        // Code was skipped but nothing said why: never drop code silently.
        let d = Diagnostic::new(file, Span::default(), "internal error: the parser skipped code without reporting why")
            .with_label("in this file")
            .with_hint("this is a bug in Raya; please report it with the file");
        p.diags.push(d);
    }
    let mut diags = lex_diags;
    diags.extend(p.diags);
    diags.sort_by_key(|d| d.span.start);
    ((Program { body }, diags), p.too_deep)
}

/// Marker for "an error was reported; unwind to a recovery point".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Fail;

pub(crate) type PResult<T> = Result<T, Fail>;

/// Deepest nesting of statements / expressions / types / patterns (a
/// parenthesised expression costs two levels). Deeper input is reported
/// instead of overflowing the stack. Unoptimised builds use up to ~11 KB of
/// stack per level, so this fits the parser thread's stack with room.
const MAX_DEPTH: u32 = 1000;

/// The limit when parsing on the caller's thread (assumed to have at least
/// 2 MB of stack).
const FALLBACK_MAX_DEPTH: u32 = 120;

/// Sources up to this size are parsed on the caller's thread first
/// ([`parse`]), with nesting limit `HERE_MAX_DEPTH`: at ~11 KB of stack
/// per level unoptimised, well within any thread's stack.
const HERE_MAX_BYTES: usize = 2048;
const HERE_MAX_DEPTH: u32 = 32;

/// Parser position saved for backtracking.
#[derive(Clone, Copy)]
struct Snapshot {
    pos: usize,
    diags: usize,
    covers: usize,
    too_deep: bool,
}

pub(crate) struct Parser<'s> {
    src: &'s str,
    file: FileId,
    toks: Vec<Token>,
    pos: usize,
    diags: Vec<Diagnostic>,
    /// Shorthand properties with initialisers (`{ x = 1 }`) not yet turned
    /// into destructuring patterns; reported at the end of their statement.
    cover_inits: Vec<Span>,
    depth: u32,
    max_depth: u32,
    /// Nesting depth of the expression that is the true branch of the
    /// innermost `?:` being parsed (0 when none); see `paren_arrow`.
    cond_then_depth: u32,
    /// Number of error recoveries (code skipped after a failure).
    recoveries: usize,
    /// The nesting limit was reported (it is reported once).
    too_deep: bool,
    /// Statements a module-level statement expands to after itself
    /// (`export default function f() {}` is the declaration, then
    /// `export { f as default }`).
    pending: Vec<Stmt>,
    /// TypeScript parameter properties (`constructor(public x: number)`)
    /// of the parameter list parsed last: the parameter's name and the
    /// modifier's span. The class member that owns the list takes them.
    param_props: Vec<(Ident, Span)>,
    /// The next parameter list is a constructor's (may have parameter
    /// properties); cleared when that list starts.
    ctor_params: bool,
    /// The lexer's errors. A tagged template takes back those of invalid
    /// escapes in its strings (allowed there: the cooked string is then
    /// undefined).
    lex_diags: Vec<Diagnostic>,
}

impl<'s> Parser<'s> {
    fn new(src: &'s str, file: FileId, toks: Vec<Token>, max_depth: u32) -> Parser<'s> {
        Parser {
            src,
            file,
            toks,
            pos: 0,
            diags: Vec::new(),
            cover_inits: Vec::new(),
            depth: 0,
            max_depth,
            cond_then_depth: 0,
            recoveries: 0,
            too_deep: false,
            pending: Vec::new(),
            param_props: Vec::new(),
            ctor_params: false,
            lex_diags: Vec::new(),
        }
    }

    // ----- token cursor -------------------------------------------------

    fn cur(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn kind(&self) -> &T {
        &self.toks[self.pos].kind
    }

    fn peek(&self, n: usize) -> &Token {
        let i = (self.pos + n).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn peek_kind(&self, n: usize) -> &T {
        &self.peek(n).kind
    }

    fn at(&self, k: &T) -> bool {
        self.kind() == k
    }

    fn at_eof(&self) -> bool {
        self.at(&T::Eof)
    }

    fn at_ident(&self, name: &str) -> bool {
        matches!(self.kind(), T::Ident(s) if s == name)
    }

    fn peek_is_ident(&self, n: usize, name: &str) -> bool {
        matches!(self.peek_kind(n), T::Ident(s) if s == name)
    }

    /// Advances past the current token (never past `Eof`); returns its span.
    fn bump(&mut self) -> Span {
        let s = self.cur().span;
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        s
    }

    fn eat(&mut self, k: &T) -> bool {
        if self.at(k) {
            self.bump();
            true
        } else {
            false
        }
    }

    /// End of the last consumed token.
    fn prev_end(&self) -> u32 {
        if self.pos == 0 {
            0
        } else {
            self.toks[self.pos - 1].span.end
        }
    }

    fn start(&self) -> u32 {
        self.cur().span.start
    }

    fn span_from(&self, start: u32) -> Span {
        Span { start, end: self.prev_end().max(start) }
    }

    fn text(&self, span: Span) -> &'s str {
        self.src.get(span.start as usize..span.end as usize).unwrap_or("")
    }

    /// The next token follows the current one with nothing in between.
    fn adjacent(&self, n: usize) -> bool {
        let a = self.peek(n.saturating_sub(1));
        let b = self.peek(n);
        a.span.end == b.span.start && !matches!(b.kind, T::Eof)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot { pos: self.pos, diags: self.diags.len(), covers: self.cover_inits.len(), too_deep: self.too_deep }
    }

    fn restore(&mut self, s: Snapshot) {
        self.pos = s.pos;
        self.diags.truncate(s.diags);
        self.cover_inits.truncate(s.covers);
        self.too_deep = s.too_deep;
    }

    /// Runs `f` speculatively: on failure, rewinds and returns `None`.
    fn try_parse<R>(&mut self, f: impl FnOnce(&mut Self) -> PResult<R>) -> Option<R> {
        let snap = self.snapshot();
        match f(self) {
            Ok(r) => Some(r),
            Err(Fail) => {
                self.restore(snap);
                None
            }
        }
    }

    /// Index of the token closing the bracket at index `open`. Gives up at
    /// a `;` directly inside the brackets (never valid there), so that an
    /// unclosed bracket does not cost a scan to the end of the file.
    fn matching_close(&self, open: usize) -> Option<usize> {
        let mut depth = 0usize;
        for (i, t) in self.toks.iter().enumerate().skip(open) {
            match t.kind {
                T::Semi if depth == 1 => return None,
                T::LParen | T::LBracket | T::LBrace => depth += 1,
                T::RParen | T::RBracket | T::RBrace => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some(i);
                    }
                }
                T::Eof => return None,
                _ => {}
            }
        }
        None
    }

    // ----- nesting guard ------------------------------------------------

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            self.depth -= 1;
            if !self.too_deep {
                self.too_deep = true;
                let span = self.cur().span;
                self.report(
                    Diagnostic::new(self.file, span, "code is nested too deeply")
                        .with_label("nesting limit reached here")
                        .with_hint(format!(
                            "the parser accepts at most {} levels of nesting, each link of a chain such as \
                             `a + b + …` or `a.b.c…` counting as one; split it with intermediate variables",
                            self.max_depth
                        )),
                );
            }
            return Err(Fail);
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// One more link of a chain (`a + b + …`, `a.b.c…`): a nesting level
    /// the caller gives back when the chain ends.
    fn enter_chain(&mut self) -> PResult<()> {
        self.enter()
    }

    // ----- diagnostics --------------------------------------------------

    fn report(&mut self, d: Diagnostic) {
        // One error per position: later ones at the same place are
        // consequences of the first (and are reported right after it).
        if self.is_reported(d.span.start) {
            return;
        }
        self.diags.push(d);
    }

    fn is_reported(&self, start: u32) -> bool {
        self.diags.iter().rev().take(8).any(|e| e.span.start == start)
    }

    fn error(&mut self, span: Span, message: impl Into<String>, label: impl Into<String>) {
        let d = Diagnostic::new(self.file, span, message).with_label(label);
        self.report(d);
    }

    fn error_hint(
        &mut self,
        span: Span,
        message: impl Into<String>,
        label: impl Into<String>,
        hint: impl Into<String>,
    ) {
        let d = Diagnostic::new(self.file, span, message).with_label(label).with_hint(hint);
        self.report(d);
    }

    /// How the current token is named in "found ..." messages.
    fn describe(&self, t: &Token) -> String {
        match &t.kind {
            T::Eof => "end of file".into(),
            T::Str(_) => "string literal".into(),
            T::NoSubstTemplate(_) | T::TemplateHead(_) => "template literal".into(),
            T::TemplateMiddle(_) | T::TemplateTail(_) => "`}`".into(),
            T::Error => "invalid token".into(),
            k if k.is_keyword() => format!("keyword `{}`", k.as_str()),
            _ => {
                let text = self.text(t.span);
                if text.chars().count() > 24 {
                    let short: String = text.chars().take(20).collect();
                    format!("`{short}…`")
                } else {
                    format!("`{text}`")
                }
            }
        }
    }

    /// Reports "expected {what}, found {current}" and returns `Fail`.
    fn unexpected(&mut self, what: &str) -> Fail {
        let t = self.cur().clone();
        if t.kind == T::Error || self.is_reported(t.span.start) {
            // Already reported (by the lexer, or as an earlier error here).
            return Fail;
        }
        let found = self.describe(&t);
        let label = format!("expected {what}");
        let mut d = Diagnostic::new(self.file, t.span, format!("expected {what}, found {found}")).with_label(label);
        if t.kind == T::Eof {
            if let Some(h) = self.unclosed_hint() {
                d = d.with_hint(h);
            }
        }
        self.report(d);
        Fail
    }

    /// For errors at end of file: names the innermost unclosed bracket.
    fn unclosed_hint(&self) -> Option<String> {
        let mut stack: Vec<&Token> = Vec::new();
        for t in &self.toks {
            match t.kind {
                T::LParen | T::LBracket | T::LBrace => stack.push(t),
                T::RParen | T::RBracket | T::RBrace => {
                    stack.pop();
                }
                _ => {}
            }
        }
        let open = stack.last()?;
        let (line, col) = LineIndex::new(self.src).line_col(self.src, open.span.start);
        Some(format!("the `{}` opened at {line}:{col} is never closed", open.kind.as_str()))
    }

    fn expect(&mut self, k: &T) -> PResult<Span> {
        if self.at(k) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`{}`", k.as_str())))
        }
    }

    /// Expects the closing bracket of a list: "expected `,` or `)`".
    fn expect_list_close(&mut self, k: &T) -> PResult<Span> {
        if self.at(k) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(&format!("`,` or `{}`", k.as_str())))
        }
    }

    // ----- identifiers --------------------------------------------------

    /// A binding or reference identifier (contextual keywords allowed).
    fn ident(&mut self) -> PResult<Ident> {
        if let T::Ident(name) = self.kind() {
            let id = Ident { name: name.clone(), span: self.cur().span };
            self.bump();
            return Ok(id);
        }
        Err(self.unexpected("identifier"))
    }

    /// Any identifier name, including reserved words (property names).
    fn ident_name(&mut self) -> PResult<Ident> {
        let t = self.cur();
        if let T::Ident(name) = &t.kind {
            let id = Ident { name: name.clone(), span: t.span };
            self.bump();
            return Ok(id);
        }
        if t.kind.is_keyword() {
            let id = Ident { name: t.kind.as_str().to_string(), span: t.span };
            self.bump();
            return Ok(id);
        }
        Err(self.unexpected("identifier"))
    }

    fn at_ident_name(&self) -> bool {
        matches!(self.kind(), T::Ident(_)) || self.kind().is_keyword()
    }

    // ----- statement boundaries ------------------------------------------

    /// Consumes a `;`, or accepts its automatic insertion.
    fn semicolon(&mut self) -> PResult<()> {
        if self.eat(&T::Semi) {
            return Ok(());
        }
        if matches!(self.kind(), T::RBrace | T::Eof) || self.cur().nl_before {
            return Ok(());
        }
        Err(self.unexpected("`;`"))
    }

    /// After an error: skips to a statement boundary (`;` consumed, `}` of
    /// the enclosing block not consumed, or a token that starts a statement
    /// on a new line). `stmt_start` is the index of the failed statement's
    /// first token; brackets it left open are skipped to their close.
    fn recover(&mut self, stmt_start: usize) {
        self.skip_to_boundary(stmt_start, false);
    }

    /// Like [`Parser::recover`] for a class member: the boundary is a `;`,
    /// the class's `}`, or a new line starting with a member name.
    fn recover_member(&mut self, member_start: usize) {
        self.skip_to_boundary(member_start, true);
    }

    /// Test builds check that every recovery is explained by an error
    /// reported inside the skipped construct (starting at token `start`).
    #[cfg(test)]
    fn check_reported(&mut self, start: usize) {
        let last = self.toks.len() - 1;
        let from = self.toks[start.min(last)].span.start;
        let reported = self.too_deep
            || self.diags.iter().any(|d| d.span.start >= from)
            || self.toks[start.min(last)..=self.pos.min(last)].iter().any(|t| t.kind == T::Error);
        if !reported {
            let span = self.cur().span;
            self.diags.push(Diagnostic::new(self.file, span, "internal error: silent recovery"));
        }
    }

    #[cfg(not(test))]
    fn check_reported(&mut self, _start: usize) {}

    fn skip_to_boundary(&mut self, start: usize, members: bool) {
        self.recoveries += 1;
        self.check_reported(start);
        let mut braces = 0usize;
        let mut parens = 0usize;
        for t in &self.toks[start.min(self.pos)..self.pos] {
            match t.kind {
                T::LBrace => braces += 1,
                T::RBrace => braces = braces.saturating_sub(1),
                T::LParen | T::LBracket => parens += 1,
                T::RParen | T::RBracket => parens = parens.saturating_sub(1),
                _ => {}
            }
        }
        loop {
            let t = self.cur();
            match t.kind {
                T::Eof => return,
                T::Semi if braces == 0 => {
                    self.bump();
                    return;
                }
                T::RBrace if braces == 0 => return,
                // The next clause of the enclosing `switch` / `select`.
                T::Case | T::Default if braces == 0 && !members && self.pos > start => return,
                _ => {}
            }
            // After a `}` that ends a line, a new line that can start a
            // statement is taken as one even if a `(` was left open.
            let after_block = self.pos > 0 && self.toks[self.pos - 1].kind == T::RBrace;
            let open_ok = parens == 0 || after_block;
            let starts = if members {
                open_ok && (matches!(t.kind, T::Ident(_) | T::Str(_) | T::Number(_)) || t.kind.is_keyword())
            } else {
                is_statement_keyword(&t.kind)
                    || (open_ok && (matches!(t.kind, T::Function | T::Class) || starts_expression_statement(&t.kind)))
            };
            if braces == 0 && t.nl_before && self.pos > start && starts {
                return;
            }
            match t.kind {
                T::LBrace => braces += 1,
                T::RBrace => braces = braces.saturating_sub(1),
                T::LParen | T::LBracket => parens += 1,
                T::RParen | T::RBracket => parens = parens.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    /// After an error in a `case` head: skips to its `:` on the same line
    /// (consumed) so that the case's statements are still parsed.
    fn recover_case_head(&mut self, start: usize) {
        self.recoveries += 1;
        self.check_reported(start);
        let mut depth = 0usize;
        loop {
            let t = self.cur();
            match t.kind {
                T::Eof => return,
                T::Colon if depth == 0 => {
                    self.bump();
                    return;
                }
                T::Case | T::Default if depth == 0 => return,
                T::RBrace if depth == 0 => return,
                _ if t.nl_before && depth == 0 => return,
                T::LBrace | T::LParen | T::LBracket => depth += 1,
                T::RBrace | T::RParen | T::RBracket => depth = depth.saturating_sub(1),
                _ => {}
            }
            self.bump();
        }
    }

    /// Reports shorthand initialisers (`{ x = 1 }`) of the statement that
    /// started at `start` which never became destructuring patterns.
    fn flush_cover_inits(&mut self, start: u32, report: bool) {
        let mut keep = Vec::new();
        let pending = std::mem::take(&mut self.cover_inits);
        for s in pending {
            if s.start >= start {
                if report {
                    self.error_hint(
                        s,
                        "invalid shorthand property initializer",
                        "`=` is only allowed here in a destructuring pattern",
                        "use `:` to give the property a value",
                    );
                }
            } else {
                keep.push(s);
            }
        }
        self.cover_inits = keep;
    }

    // ----- program --------------------------------------------------------

    fn parse_program(&mut self) -> Vec<Stmt> {
        let mut body = Vec::new();
        while !self.at_eof() {
            if self.at(&T::RBrace) {
                let span = self.bump();
                self.error(span, "unexpected closing delimiter `}`", "no block to close here");
                continue;
            }
            let before = self.pos;
            if let Some(s) = self.parse_statement_recovering() {
                body.push(s);
            }
            body.append(&mut self.pending);
            if self.pos == before {
                self.bump();
            }
        }
        body
    }

    /// Parses one statement; on error recovers and returns `None`.
    fn parse_statement_recovering(&mut self) -> Option<Stmt> {
        let start_idx = self.pos;
        let start = self.start();
        match self.parse_statement() {
            Ok(s) => {
                self.flush_cover_inits(start, true);
                Some(s)
            }
            Err(Fail) => {
                self.flush_cover_inits(start, false);
                self.recover(start_idx);
                None
            }
        }
    }

    /// `{ statements }`; returns the statements and the span of the block.
    fn parse_block(&mut self) -> PResult<(Vec<Stmt>, Span)> {
        let start = self.start();
        self.expect(&T::LBrace)?;
        let mut body = Vec::new();
        loop {
            match self.kind() {
                T::RBrace => {
                    self.bump();
                    break;
                }
                T::Eof => {
                    let _ = self.unexpected("`}`");
                    break;
                }
                _ => {}
            }
            let before = self.pos;
            if let Some(s) = self.parse_statement_recovering() {
                body.push(s);
            }
            if self.pos == before {
                self.bump();
            }
        }
        Ok((body, self.span_from(start)))
    }
}

/// Keywords that can only begin a statement (used by error recovery).
fn is_statement_keyword(k: &T) -> bool {
    matches!(
        k,
        T::Let
            | T::Const
            | T::Var
            | T::If
            | T::For
            | T::While
            | T::Do
            | T::Return
            | T::Throw
            | T::Try
            | T::Switch
            | T::Break
            | T::Continue
            | T::Import
            | T::Export
    )
}

/// Tokens that can start an expression statement.
fn starts_expression_statement(k: &T) -> bool {
    matches!(
        k,
        T::Ident(_)
            | T::This
            | T::Super
            | T::New
            | T::Number(_)
            | T::Str(_)
            | T::Regex(_)
            | T::NoSubstTemplate(_)
            | T::TemplateHead(_)
            | T::LParen
            | T::LBracket
            | T::PlusPlus
            | T::MinusMinus
            | T::Bang
            | T::Tilde
            | T::TypeOf
            | T::Void
            | T::Delete
            | T::True
            | T::False
            | T::Null
    )
}
