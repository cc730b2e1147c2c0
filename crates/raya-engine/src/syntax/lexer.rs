//! The lexer: source text to [`Token`]s, built on `logos`.
//!
//! Words, numbers, strings, templates and comments are scanned by hand in
//! logos callbacks so that they can report precise diagnostics and keep
//! going. Template literals with `${}` are split into head / middle / tail
//! tokens (as in the ECMAScript grammar); a stack in the lexer's extras
//! tracks brace depth inside each substitution so that `}` closes the right
//! thing, including templates nested inside substitutions.
//!
//! `>` is always a single-character token: the parser glues adjacent `>`s
//! and `=` into `>=`, `>>`, `>>>`, `>>=`, `>>>=`, which lets it close nested
//! type arguments such as `Map<string, Array<number>>`.
//!
//! Identifiers may contain `\u` escapes (`\u0061bc` is `abc`); words
//! without a backslash never reach that slower path.
//!
//! Each token records whether a line terminator (possibly inside a comment)
//! precedes it, for automatic semicolon insertion.

use logos::{Filter, Lexer, Logos, Skip};

use super::diagnostic::{Diagnostic, FileId};
use super::span::Span;

/// One token with its byte span.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// A line terminator occurs between the previous token and this one.
    pub nl_before: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct LexError {
    span: Span,
    message: String,
    label: String,
    hint: Option<String>,
}

/// Lexer state carried between tokens.
#[derive(Debug, Default)]
pub struct LexExtras {
    errors: Vec<LexError>,
    /// One entry per open template substitution `${`: the number of `{`
    /// currently open inside it, and where its template literal started.
    templates: Vec<(u32, usize)>,
}

impl LexExtras {
    fn error(&mut self, start: usize, end: usize, message: impl Into<String>, label: impl Into<String>) {
        self.errors.push(LexError {
            span: Span::new(start, end),
            message: message.into(),
            label: label.into(),
            hint: None,
        });
    }

    fn error_hint(
        &mut self,
        start: usize,
        end: usize,
        message: impl Into<String>,
        label: impl Into<String>,
        hint: impl Into<String>,
    ) {
        self.errors.push(LexError {
            span: Span::new(start, end),
            message: message.into(),
            label: label.into(),
            hint: Some(hint.into()),
        });
    }
}

/// The kinds of token. Keywords listed here are reserved words; contextual
/// keywords (`async`, `await`, `of`, `get`, `set`, `static`, `type`,
/// `interface`, `as`, `from`, `select`, ...) are [`TokenKind::Ident`]s and
/// are recognised by the parser where they have a meaning.
#[derive(Logos, Debug, Clone, PartialEq)]
#[logos(extras = LexExtras)]
#[logos(skip r"[ \t\n\r\x0B\x0C]+")]
pub enum TokenKind {
    /// Start of an identifier or keyword (never produced: the callback
    /// returns `Ident` or a keyword kind).
    #[regex("[a-zA-Z_$]", word)]
    #[regex(r"[^\x00-\x7F]", non_ascii)]
    #[token("\\u", escaped_word)]
    #[doc(hidden)]
    WordStart,
    Ident(String),
    /// `#name`: a class's private name (the text includes the `#`).
    #[regex(r"#[a-zA-Z_$][a-zA-Z0-9_$]*", |lex| lex.slice().to_string())]
    PrivateName(String),

    Break,
    Case,
    Catch,
    Class,
    Const,
    Continue,
    Debugger,
    Default,
    Delete,
    Do,
    Else,
    Enum,
    Export,
    Extends,
    False,
    Finally,
    For,
    Function,
    If,
    Import,
    In,
    InstanceOf,
    Let,
    New,
    Null,
    Return,
    Super,
    Switch,
    This,
    Throw,
    True,
    Try,
    TypeOf,
    Var,
    Void,
    While,
    With,
    Yield,

    #[regex("[0-9]", number)]
    #[regex(r"\.[0-9]", number)]
    Number(f64),
    /// A string literal, escapes already decoded.
    #[token("\"", string)]
    #[token("'", string)]
    Str(String),
    /// Start of a template literal (never produced: the callback returns
    /// one of the template kinds below).
    #[token("`", template_start)]
    #[doc(hidden)]
    Backtick,
    /// `` `text` `` (cooked text).
    NoSubstTemplate(String),
    /// `` `text${ ``
    TemplateHead(String),
    /// `}text${`
    TemplateMiddle(String),
    /// `` }text` ``
    TemplateTail(String),
    /// A regular expression literal `/pattern/flags` (never produced by
    /// logos: [`tokenize`] rescans a `/` or `/=` where an expression may
    /// start): the pattern (the source text between the slashes) and the
    /// flags.
    Regex((String, String)),

    #[token("//", line_comment)]
    #[token("/*", block_comment)]
    #[doc(hidden)]
    Comment,

    #[token("{", lbrace)]
    LBrace,
    #[token("}", rbrace)]
    RBrace,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(";")]
    Semi,
    #[token(",")]
    Comma,
    #[token(".")]
    Dot,
    #[token("...")]
    DotDotDot,
    #[token("?")]
    Question,
    #[token("??")]
    QuestionQuestion,
    #[token("??=")]
    QuestionQuestionEq,
    #[token(":")]
    Colon,
    #[token("=>")]
    Arrow,
    #[token("=")]
    Eq,
    #[token("==")]
    EqEq,
    #[token("===")]
    EqEqEq,
    #[token("!")]
    Bang,
    #[token("!=")]
    BangEq,
    #[token("!==")]
    BangEqEq,
    #[token("<")]
    Lt,
    #[token("<=")]
    LtEq,
    #[token("<<")]
    Shl,
    #[token("<<=")]
    ShlEq,
    /// Always a single `>`; see the module docs.
    #[token(">")]
    Gt,
    #[token("+")]
    Plus,
    #[token("+=")]
    PlusEq,
    #[token("++")]
    PlusPlus,
    #[token("-")]
    Minus,
    #[token("-=")]
    MinusEq,
    #[token("--")]
    MinusMinus,
    #[token("*")]
    Star,
    #[token("*=")]
    StarEq,
    #[token("**")]
    StarStar,
    #[token("**=")]
    StarStarEq,
    #[token("/")]
    Slash,
    #[token("/=")]
    SlashEq,
    #[token("%")]
    Percent,
    #[token("%=")]
    PercentEq,
    #[token("&")]
    Amp,
    #[token("&=")]
    AmpEq,
    #[token("&&")]
    AmpAmp,
    #[token("&&=")]
    AmpAmpEq,
    #[token("|")]
    Pipe,
    #[token("|=")]
    PipeEq,
    #[token("||")]
    PipePipe,
    #[token("||=")]
    PipePipeEq,
    #[token("^")]
    Caret,
    #[token("^=")]
    CaretEq,
    #[token("~")]
    Tilde,

    /// An invalid character (already reported).
    Error,
    Eof,
}

impl TokenKind {
    /// The source form of a fixed token (punctuator or keyword), for
    /// messages; a description for the others.
    pub fn as_str(&self) -> &'static str {
        use TokenKind::*;
        match self {
            WordStart | Ident(_) => "identifier",
            PrivateName(_) => "private name",
            Break => "break",
            Case => "case",
            Catch => "catch",
            Class => "class",
            Const => "const",
            Continue => "continue",
            Debugger => "debugger",
            Default => "default",
            Delete => "delete",
            Do => "do",
            Else => "else",
            Enum => "enum",
            Export => "export",
            Extends => "extends",
            False => "false",
            Finally => "finally",
            For => "for",
            Function => "function",
            If => "if",
            Import => "import",
            In => "in",
            InstanceOf => "instanceof",
            Let => "let",
            New => "new",
            Null => "null",
            Return => "return",
            Super => "super",
            Switch => "switch",
            This => "this",
            Throw => "throw",
            True => "true",
            Try => "try",
            TypeOf => "typeof",
            Var => "var",
            Void => "void",
            While => "while",
            With => "with",
            Yield => "yield",
            Number(_) => "number",
            Str(_) => "string literal",
            Backtick | NoSubstTemplate(_) | TemplateHead(_) => "template literal",
            TemplateMiddle(_) | TemplateTail(_) => "}",
            Regex(_) => "regular expression",
            Comment => "comment",
            LBrace => "{",
            RBrace => "}",
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            Semi => ";",
            Comma => ",",
            Dot => ".",
            DotDotDot => "...",
            Question => "?",
            QuestionQuestion => "??",
            QuestionQuestionEq => "??=",
            Colon => ":",
            Arrow => "=>",
            Eq => "=",
            EqEq => "==",
            EqEqEq => "===",
            Bang => "!",
            BangEq => "!=",
            BangEqEq => "!==",
            Lt => "<",
            LtEq => "<=",
            Shl => "<<",
            ShlEq => "<<=",
            Gt => ">",
            Plus => "+",
            PlusEq => "+=",
            PlusPlus => "++",
            Minus => "-",
            MinusEq => "-=",
            MinusMinus => "--",
            Star => "*",
            StarEq => "*=",
            StarStar => "**",
            StarStarEq => "**=",
            Slash => "/",
            SlashEq => "/=",
            Percent => "%",
            PercentEq => "%=",
            Amp => "&",
            AmpEq => "&=",
            AmpAmp => "&&",
            AmpAmpEq => "&&=",
            Pipe => "|",
            PipeEq => "|=",
            PipePipe => "||",
            PipePipeEq => "||=",
            Caret => "^",
            CaretEq => "^=",
            Tilde => "~",
            Error => "invalid token",
            Eof => "end of file",
        }
    }

    /// Reserved words (which may still be used as property names).
    pub fn is_keyword(&self) -> bool {
        use TokenKind::*;
        matches!(
            self,
            Break
                | Case
                | Catch
                | Class
                | Const
                | Continue
                | Debugger
                | Default
                | Delete
                | Do
                | Else
                | Enum
                | Export
                | Extends
                | False
                | Finally
                | For
                | Function
                | If
                | Import
                | In
                | InstanceOf
                | Let
                | New
                | Null
                | Return
                | Super
                | Switch
                | This
                | Throw
                | True
                | Try
                | TypeOf
                | Var
                | Void
                | While
                | With
                | Yield
        )
    }
}

fn keyword(word: &str) -> Option<TokenKind> {
    use TokenKind::*;
    Some(match word {
        "break" => Break,
        "case" => Case,
        "catch" => Catch,
        "class" => Class,
        "const" => Const,
        "continue" => Continue,
        "debugger" => Debugger,
        "default" => Default,
        "delete" => Delete,
        "do" => Do,
        "else" => Else,
        "enum" => Enum,
        "export" => Export,
        "extends" => Extends,
        "false" => False,
        "finally" => Finally,
        "for" => For,
        "function" => Function,
        "if" => If,
        "import" => Import,
        "in" => In,
        "instanceof" => InstanceOf,
        "let" => Let,
        "new" => New,
        "null" => Null,
        "return" => Return,
        "super" => Super,
        "switch" => Switch,
        "this" => This,
        "throw" => Throw,
        "true" => True,
        "try" => Try,
        "typeof" => TypeOf,
        "var" => Var,
        "void" => Void,
        "while" => While,
        "with" => With,
        "yield" => Yield,
        _ => return None,
    })
}

/// Characters that may continue an identifier.
pub fn is_id_continue(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_' || c == '$'
    } else {
        c.is_alphanumeric()
            || c == '\u{200C}'
            || c == '\u{200D}'
            || ('\u{0300}'..='\u{036F}').contains(&c)
            || ('\u{1AB0}'..='\u{1AFF}').contains(&c)
            || ('\u{1DC0}'..='\u{1DFF}').contains(&c)
            || ('\u{20D0}'..='\u{20FF}').contains(&c)
            || ('\u{FE20}'..='\u{FE2F}').contains(&c)
    }
}

/// Characters that may start an identifier.
pub fn is_id_start(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphabetic() || c == '_' || c == '$'
    } else {
        c.is_alphabetic()
    }
}

fn is_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\u{0B}' | '\u{0C}' | ' ' | '\u{A0}' | '\u{FEFF}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    )
}

fn id_continue_len(s: &str) -> usize {
    s.char_indices().find(|&(_, c)| !is_id_continue(c)).map_or(s.len(), |(i, _)| i)
}

fn word(lex: &mut Lexer<TokenKind>) -> TokenKind {
    let n = id_continue_len(lex.remainder());
    lex.bump(n);
    if lex.remainder().starts_with('\\') {
        return word_with_escapes(lex);
    }
    let w = lex.slice();
    keyword(w).unwrap_or_else(|| TokenKind::Ident(w.to_string()))
}

/// A word that starts with `\u`.
fn escaped_word(lex: &mut Lexer<TokenKind>) -> TokenKind {
    lex.bump(0);
    word_with_escapes(lex)
}

/// Reads a `\u` escape at the start of `s` (`\uXXXX` or `\u{X…}`, as in
/// strings): the code point and the escape's length, or the length to
/// report and why it is invalid.
fn scan_identifier_escape(s: &str) -> Result<(u32, usize), (usize, &'static str)> {
    match scan_unicode_escape(&s[2..]) {
        (n, Some(v)) => Ok((v, 2 + n)),
        // `\u{…}` well formed but past U+10FFFF.
        (n, None) if s[2..].starts_with('{') && s[..2 + n].ends_with('}') => {
            Err((2 + n, "undefined Unicode code point"))
        }
        // Take a closing brace along (`\u{}`), so the rest reads as usual.
        (n, None) if s[2 + n..].starts_with('}') => Err((3 + n, "invalid Unicode escape sequence")),
        (n, None) => Err((2 + n, "invalid Unicode escape sequence")),
    }
}

/// How a diagnostic names the character an escape stands for: `-`, or
/// its code point when it would print as nothing (format characters,
/// combining marks, controls, spaces, lone surrogates).
fn describe_escaped_char(v: u32) -> String {
    match char::from_u32(v) {
        Some(c)
            if !(c.is_control()
                || c.is_whitespace()
                || ('\u{0300}'..='\u{036F}').contains(&c)
                || ('\u{200B}'..='\u{200F}').contains(&c)
                || ('\u{202A}'..='\u{202E}').contains(&c)
                || ('\u{2060}'..='\u{206F}').contains(&c)
                || c == '\u{FEFF}') =>
        {
            format!("`{c}`")
        }
        _ => format!("U+{v:04X}"),
    }
}

/// The slow path of a word: one with `\u` escapes (`\u0061bc`, `a\u{62}`),
/// which spell the characters they stand for. Each escape must give a
/// character the identifier may have at that place. A word with escapes is
/// never a keyword: one that spells a reserved word is an error (as in JS),
/// except where it is plainly a property name (`o.\u0069f`, `{ \u0069f: 1 }`).
fn word_with_escapes(lex: &mut Lexer<TokenKind>) -> TokenKind {
    let src = lex.source();
    let start = lex.span().start;
    let mut pos = start;
    let mut name = String::new();
    let mut escaped = false;
    loop {
        let rest = &src[pos..];
        if rest.starts_with("\\u") {
            escaped = true;
            match scan_identifier_escape(rest) {
                Ok((v, len)) => {
                    let c = char::from_u32(v);
                    let at_start = pos == start;
                    let fits = c.is_some_and(|c| if at_start { is_id_start(c) } else { is_id_continue(c) });
                    if fits {
                        name.extend(c);
                    } else {
                        let what = describe_escaped_char(v);
                        let place = if at_start { "start" } else { "be part of" };
                        lex.extras.error(
                            pos,
                            pos + len,
                            format!("`{}` ({what}) cannot {place} an identifier", &rest[..len]),
                            "escape of a character not allowed here",
                        );
                    }
                    pos += len;
                }
                Err((len, message)) => {
                    let len = len.min(rest.len()).max(2);
                    lex.extras.error(pos, pos + len, message, "in this identifier");
                    pos += len;
                }
            }
            continue;
        }
        match rest.chars().next() {
            Some(c) if (if pos == start { is_id_start(c) } else { is_id_continue(c) }) => {
                name.push(c);
                pos += c.len_utf8();
            }
            _ => break,
        }
    }
    lex.bump(pos - lex.span().end);
    if escaped && keyword(&name).is_some() {
        // A property name may be any word: `o.\u0069f`, `{ \u0069f: 1 }`.
        let before = src[..start].trim_end();
        let property = before.ends_with('.')
            || ((before.ends_with('{') || before.ends_with(',')) && src[pos..].trim_start().starts_with(':'));
        if !property {
            lex.extras.error_hint(
                start,
                pos,
                "keywords cannot contain escaped characters",
                format!("this spells the keyword `{name}`"),
                format!("write `{name}` without escapes"),
            );
            // Reported; a word that is a whole expression reads as meant, so
            // that it causes no second error ("cannot find name `this`").
            if let Some(k @ (TokenKind::This | TokenKind::True | TokenKind::False | TokenKind::Null)) = keyword(&name) {
                return k;
            }
        }
        return TokenKind::Ident(name);
    }
    if !escaped {
        if let Some(k) = keyword(&name) {
            return k;
        }
    }
    TokenKind::Ident(name)
}

fn non_ascii(lex: &mut Lexer<TokenKind>) -> Filter<TokenKind> {
    let Some(c) = lex.slice().chars().next() else {
        return Filter::Skip;
    };
    if is_js_whitespace(c) || is_line_terminator(c) {
        return Filter::Skip;
    }
    if is_id_start(c) {
        let n = id_continue_len(lex.remainder());
        lex.bump(n);
        if lex.remainder().starts_with('\\') {
            return Filter::Emit(word_with_escapes(lex));
        }
        return Filter::Emit(TokenKind::Ident(lex.slice().to_string()));
    }
    let span = lex.span();
    lex.extras.error(span.start, span.end, format!("unexpected character `{c}`"), "not valid here");
    Filter::Emit(TokenKind::Error)
}

fn line_comment(lex: &mut Lexer<TokenKind>) -> Skip {
    let rest = lex.remainder();
    let n = rest.find(is_line_terminator).unwrap_or(rest.len());
    lex.bump(n);
    Skip
}

fn block_comment(lex: &mut Lexer<TokenKind>) -> Skip {
    let rest = lex.remainder();
    match rest.find("*/") {
        Some(i) => lex.bump(i + 2),
        None => {
            let start = lex.span().start;
            lex.extras.error(start, start + 2, "unterminated block comment", "comment starts here");
            lex.bump(rest.len());
        }
    }
    Skip
}

/// A problem found while scanning a literal, at byte offsets relative to
/// the start of the scanned text.
#[derive(Debug, Clone, PartialEq)]
struct LitError {
    start: usize,
    end: usize,
    message: String,
    label: String,
    hint: Option<String>,
}

fn lit_err(start: usize, end: usize, message: impl Into<String>, label: impl Into<String>) -> LitError {
    LitError { start, end, message: message.into(), label: label.into(), hint: None }
}

fn push_lit_errors(extras: &mut LexExtras, base: usize, errs: Vec<LitError>) {
    for e in errs {
        extras.errors.push(LexError {
            span: Span::new(base + e.start, base + e.end),
            message: e.message,
            label: e.label,
            hint: e.hint,
        });
    }
}

/// Scans a numeric literal at the start of `s`. Returns its length, its
/// value and the problems found (offsets relative to `s`).
fn scan_number(s: &str) -> (usize, f64, Vec<LitError>) {
    let b = s.as_bytes();
    let mut errs = Vec::new();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let mut i;
    let value;
    if at(0) == b'0' && matches!(at(1), b'x' | b'X' | b'o' | b'O' | b'b' | b'B') {
        let (radix, name) = match at(1) {
            b'x' | b'X' => (16, "hexadecimal"),
            b'o' | b'O' => (8, "octal"),
            _ => (2, "binary"),
        };
        i = 2;
        while at(i).is_ascii_alphanumeric() || at(i) == b'_' {
            i += 1;
        }
        check_separators(&s[2..i], 2, &mut errs);
        let mut exact: Option<u128> = Some(0);
        let mut approx = 0f64;
        let mut ndigits = 0;
        let mut bad_digit = false;
        for (k, ch) in s[2..i].char_indices() {
            if ch == '_' {
                continue;
            }
            match ch.to_digit(radix) {
                Some(d) => {
                    ndigits += 1;
                    exact = exact.and_then(|v| v.checked_mul(radix as u128)).and_then(|v| v.checked_add(d as u128));
                    approx = approx * radix as f64 + d as f64;
                }
                None => {
                    if ch == 'n' && k + 2 + 1 == i {
                        // BigInt suffix, reported below.
                        i -= 1;
                        break;
                    }
                    if bad_digit {
                        continue; // one report per literal
                    }
                    bad_digit = true;
                    errs.push(lit_err(
                        2 + k,
                        2 + k + 1,
                        format!("invalid digit `{ch}` in {name} literal"),
                        "invalid digit",
                    ));
                }
            }
        }
        if ndigits == 0 && errs.is_empty() {
            errs.push(lit_err(0, i, format!("missing digits after `{}`", &s[..2]), format!("expected {name} digits")));
        }
        value = match exact {
            Some(v) => v as f64,
            None => approx,
        };
    } else {
        i = 0;
        while at(i).is_ascii_digit() || at(i) == b'_' {
            i += 1;
        }
        let int = &s[..i];
        check_separators(int, 0, &mut errs);
        if int.len() > 1 && int.starts_with('0') {
            if int.bytes().all(|c| (b'0'..=b'7').contains(&c)) {
                errs.push(LitError {
                    hint: Some(format!("use the `0o` prefix for an octal number: `0o{}`", &int[1..])),
                    ..lit_err(0, i, "legacy octal literals are not allowed", "octal literal")
                });
            } else {
                errs.push(LitError {
                    hint: Some("remove the leading zero".into()),
                    ..lit_err(0, i, "decimal literals with a leading zero are not allowed", "leading zero")
                });
            }
        }
        if at(i) == b'.' {
            i += 1;
            let f0 = i;
            while at(i).is_ascii_digit() || at(i) == b'_' {
                i += 1;
            }
            check_separators(&s[f0..i], f0, &mut errs);
        }
        if matches!(at(i), b'e' | b'E') {
            let e0 = i;
            let mut j = i + 1;
            if matches!(at(j), b'+' | b'-') {
                j += 1;
            }
            let d0 = j;
            while at(j).is_ascii_digit() || at(j) == b'_' {
                j += 1;
            }
            if j == d0 {
                errs.push(lit_err(e0, j, "missing exponent digits", "expected digits after the exponent"));
            } else {
                check_separators(&s[d0..j], d0, &mut errs);
            }
            i = j;
        }
        let clean: String = s[..i].chars().filter(|&c| c != '_').collect();
        value = clean.parse::<f64>().unwrap_or(0.0);
    }
    if at(i) == b'n' {
        errs.push(lit_err(0, i + 1, "BigInt literals are not supported", "BigInt literal"));
        i += 1;
    }
    let tail = id_continue_len(&s[i..]);
    if tail > 0 {
        errs.push(lit_err(
            i,
            i + tail,
            "an identifier cannot immediately follow a numeric literal",
            "unexpected identifier",
        ));
        i += tail;
    }
    (i, value, errs)
}

/// `_` must sit between two digits.
fn check_separators(group: &str, base: usize, errs: &mut Vec<LitError>) {
    let b = group.as_bytes();
    for (k, &c) in b.iter().enumerate() {
        if c == b'_' {
            let prev_ok = k > 0 && b[k - 1] != b'_';
            let next_ok = k + 1 < b.len() && b[k + 1] != b'_';
            if !prev_ok || !next_ok {
                errs.push(lit_err(
                    base + k,
                    base + k + 1,
                    "invalid numeric separator",
                    "`_` must be between two digits",
                ));
                return;
            }
        }
    }
}

fn number(lex: &mut Lexer<TokenKind>) -> f64 {
    let start = lex.span().start;
    let (len, value, errs) = scan_number(&lex.source()[start..]);
    let already = lex.slice().len();
    lex.bump(len.saturating_sub(already));
    push_lit_errors(&mut lex.extras, start, errs);
    value
}

/// Decodes the escape sequence after a backslash at the start of `s`,
/// appending to `out`. Returns the bytes consumed. Error offsets are
/// relative to `base` (the offset of `s` in the scanned text) minus one,
/// so that they include the backslash.
fn scan_escape(s: &str, base: usize, out: &mut String, errs: &mut Vec<LitError>) -> usize {
    let mut chars = s.chars();
    let Some(c) = chars.next() else { return 0 };
    let bs = base - 1; // the backslash
    match c {
        'n' => out.push('\n'),
        't' => out.push('\t'),
        'r' => out.push('\r'),
        'b' => out.push('\u{8}'),
        'f' => out.push('\u{C}'),
        'v' => out.push('\u{B}'),
        '0' if !s[1..].starts_with(|c: char| c.is_ascii_digit()) => out.push('\0'),
        '0'..='7' => {
            let n = s.bytes().take(3).take_while(|c| (b'0'..=b'7').contains(c)).count();
            errs.push(LitError {
                hint: Some("use a hexadecimal escape such as `\\x07` or `\\u{7}`".into()),
                ..lit_err(bs, base + n, "octal escape sequences are not allowed", "octal escape")
            });
            return n;
        }
        '8' | '9' => {
            errs.push(lit_err(bs, base + 1, format!("invalid escape sequence `\\{c}`"), "invalid escape"));
        }
        'x' => {
            let h = &s[1..];
            match (h.get(0..2))
                .and_then(|d| u32::from_str_radix(d, 16).ok().filter(|_| d.bytes().all(|c| c.is_ascii_hexdigit())))
            {
                Some(v) => {
                    out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                    return 3;
                }
                None => {
                    errs.push(LitError {
                        hint: Some("`\\x` must be followed by exactly two hexadecimal digits".into()),
                        ..lit_err(bs, base + 1, "invalid hexadecimal escape sequence", "invalid escape")
                    });
                }
            }
        }
        'u' => {
            let (n, cp) = scan_unicode_escape(&s[1..]);
            match cp {
                Some(cp) => {
                    let mut used = 1 + n;
                    if (0xD800..0xDC00).contains(&cp) {
                        // A high surrogate: combine with a following `\uDCxx`.
                        let rest = &s[used..];
                        if let Some(r) = rest.strip_prefix("\\u") {
                            let (n2, lo) = scan_unicode_escape(r);
                            if let Some(lo) = lo.filter(|lo| (0xDC00..0xE000).contains(lo)) {
                                let v = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
                                used += 2 + n2;
                                return used;
                            }
                        }
                    }
                    // A lone surrogate travels marked (see `crate::wtf8`).
                    match char::from_u32(cp) {
                        Some(c) => crate::wtf8::mark_char(out, c),
                        None if (0xD800..0xE000).contains(&cp) => crate::wtf8::mark(out, cp as u16),
                        None => out.push('\u{FFFD}'),
                    }
                    return used;
                }
                None => {
                    errs.push(LitError {
                        hint: Some("write `\\uHHHH` with four hexadecimal digits or `\\u{H...}` up to 10FFFF".into()),
                        ..lit_err(bs, base + 1 + n, "invalid Unicode escape sequence", "invalid escape")
                    });
                    return 1 + n;
                }
            }
        }
        '\r' => {
            if s[1..].starts_with('\n') {
                return 2;
            }
        }
        '\n' | '\u{2028}' | '\u{2029}' => {}
        c => out.push(c),
    }
    c.len_utf8()
}

/// After `\u`: either four hex digits or `{hex}`. Returns bytes consumed
/// and the code point (None when malformed).
fn scan_unicode_escape(s: &str) -> (usize, Option<u32>) {
    if let Some(r) = s.strip_prefix('{') {
        let n = r.bytes().take_while(|c| c.is_ascii_hexdigit()).count();
        if n == 0 || !r[n..].starts_with('}') {
            return (1 + n, None);
        }
        let digits = r[..n].trim_start_matches('0');
        let v = if digits.len() > 6 {
            None
        } else {
            u32::from_str_radix(if digits.is_empty() { "0" } else { digits }, 16).ok().filter(|&v| v <= 0x10FFFF)
        };
        (n + 2, v)
    } else {
        let n = s.bytes().take(4).take_while(|c| c.is_ascii_hexdigit()).count();
        if n < 4 {
            return (n, None);
        }
        (4, u32::from_str_radix(&s[..4], 16).ok())
    }
}

/// Scans a string literal body; `s` starts right after the opening quote.
/// Returns (bytes consumed including the closing quote, cooked value,
/// terminated, errors relative to `s`).
fn scan_string(s: &str, quote: char) -> (usize, String, bool, Vec<LitError>) {
    let mut out = String::new();
    let mut errs = Vec::new();
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        if c == quote {
            return (i + 1, out, true, errs);
        }
        match c {
            '\\' => {
                i += 1;
                i += scan_escape(&s[i..], i, &mut out, &mut errs);
            }
            '\n' | '\r' => return (i, out, false, errs),
            c => {
                crate::wtf8::mark_char(&mut out, c);
                i += c.len_utf8();
            }
        }
    }
    (i, out, false, errs)
}

fn string(lex: &mut Lexer<TokenKind>) -> String {
    let start = lex.span().start;
    let quote = if lex.slice() == "'" { '\'' } else { '"' };
    let (n, value, terminated, errs) = scan_string(lex.remainder(), quote);
    lex.bump(n);
    push_lit_errors(&mut lex.extras, start + 1, errs);
    if !terminated {
        let end = lex.span().end;
        lex.extras.error_hint(
            start,
            end,
            "unterminated string literal",
            "missing closing quote",
            format!("add `{quote}` before the end of the line"),
        );
    }
    value
}

/// Scans template characters; `s` starts after `` ` `` or `}`. Returns
/// (bytes consumed, cooked text, how it ended, errors relative to `s`).
fn scan_template(s: &str) -> (usize, String, TemplateEnd, Vec<LitError>) {
    let mut out = String::new();
    let mut errs = Vec::new();
    let mut i = 0;
    while let Some(c) = s[i..].chars().next() {
        match c {
            '`' => return (i + 1, out, TemplateEnd::Backtick, errs),
            '$' if s[i + 1..].starts_with('{') => return (i + 2, out, TemplateEnd::Subst, errs),
            '\\' => {
                i += 1;
                i += scan_escape(&s[i..], i, &mut out, &mut errs);
            }
            '\r' => {
                out.push('\n');
                i += if s[i + 1..].starts_with('\n') { 2 } else { 1 };
            }
            c => {
                crate::wtf8::mark_char(&mut out, c);
                i += c.len_utf8();
            }
        }
    }
    (i, out, TemplateEnd::Eof, errs)
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TemplateEnd {
    Backtick,
    Subst,
    Eof,
}

/// Scans a template piece after `` ` `` (`head`) or after the `}` closing a
/// substitution of the template that started at `tpl_start`.
fn template_piece(lex: &mut Lexer<TokenKind>, tpl_start: usize, head: bool) -> TokenKind {
    let base = lex.span().end;
    let (n, text, end, errs) = scan_template(lex.remainder());
    lex.bump(n);
    push_lit_errors(&mut lex.extras, base, errs);
    match end {
        TemplateEnd::Subst => {
            lex.extras.templates.push((0, tpl_start));
            if head {
                TokenKind::TemplateHead(text)
            } else {
                TokenKind::TemplateMiddle(text)
            }
        }
        TemplateEnd::Backtick | TemplateEnd::Eof => {
            if end == TemplateEnd::Eof {
                lex.extras.error(
                    tpl_start,
                    tpl_start + 1,
                    "unterminated template literal",
                    "template literal starts here",
                );
            }
            if head {
                TokenKind::NoSubstTemplate(text)
            } else {
                TokenKind::TemplateTail(text)
            }
        }
    }
}

fn template_start(lex: &mut Lexer<TokenKind>) -> TokenKind {
    let start = lex.span().start;
    template_piece(lex, start, true)
}

fn lbrace(lex: &mut Lexer<TokenKind>) {
    if let Some(top) = lex.extras.templates.last_mut() {
        top.0 += 1;
    }
}

fn rbrace(lex: &mut Lexer<TokenKind>) -> TokenKind {
    match lex.extras.templates.last_mut() {
        Some(top) if top.0 == 0 => {
            let (_, start) = top.to_owned();
            lex.extras.templates.pop();
            template_piece(lex, start, false)
        }
        Some(top) => {
            top.0 -= 1;
            TokenKind::RBrace
        }
        None => TokenKind::RBrace,
    }
}

/// Whether a `/` after `prev` starts a regular expression literal rather
/// than being a division: after nothing, an operator, an opening bracket or
/// a keyword that an expression may follow. After a value (a name, a
/// literal, `)`, `]`, `}`) it divides, as JS parsers decide in practice.
fn regex_allowed_after(prev: Option<&TokenKind>) -> bool {
    use TokenKind as T;
    let Some(prev) = prev else { return true };
    !matches!(
        prev,
        T::Ident(_)
            | T::Number(_)
            | T::Str(_)
            | T::NoSubstTemplate(_)
            | T::TemplateTail(_)
            | T::Regex(_)
            | T::RParen
            | T::RBracket
            | T::RBrace
            | T::This
            | T::Super
            | T::True
            | T::False
            | T::Null
            | T::PlusPlus
            | T::MinusMinus
            | T::Error
    )
}

/// Scans the regular expression literal whose `/` is at `start`: the
/// pattern up to the unescaped `/` outside a class, then the flags.
/// Reports an unterminated literal, bad flags and an invalid pattern (with
/// the span of the offending character). Returns the token and its end.
fn regex_literal(src: &str, start: usize, ex: &mut LexExtras) -> (TokenKind, usize) {
    let body = start + 1;
    let mut in_class = false;
    let mut escaped = false;
    let mut close = None;
    for (i, c) in src[body..].char_indices() {
        if is_line_terminator(c) {
            break;
        }
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => in_class = true,
            ']' => in_class = false,
            '/' if !in_class => {
                close = Some(body + i);
                break;
            }
            _ => {}
        }
    }
    let Some(close) = close else {
        let end = src[body..].find(is_line_terminator).map_or(src.len(), |i| body + i);
        ex.error(start, end, "unterminated regular expression literal", "regular expression starts here");
        return (TokenKind::Error, end);
    };
    let pattern = &src[body..close];
    let flags_start = close + 1;
    let flags_len = src[flags_start..]
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .unwrap_or(src.len() - flags_start);
    let end = flags_start + flags_len;
    let flags = &src[flags_start..end];
    if let Err(bad) = check_regex_flags(flags) {
        let at = flags_start + bad;
        let c = flags[bad..].chars().next().map_or(1, char::len_utf8);
        ex.error(at, at + c, "invalid regular expression flag", "not a valid flag here");
    } else if let Err((msg, off)) = check_regex(pattern, flags) {
        let at = body + off;
        let c = pattern[off..].chars().next().map_or(0, char::len_utf8);
        let msg = regex_message(pattern, &msg);
        ex.error(at, at + c.max(1), format!("invalid regular expression: {msg}"), "here");
    }
    (TokenKind::Regex((pattern.to_string(), flags.to_string())), end)
}

/// Checks regular expression flags: each of `dgimsuyv` at most once, and
/// not both `u` and `v`. `Err(i)`: the byte offset of the first bad flag.
pub fn check_regex_flags(flags: &str) -> Result<(), usize> {
    let mut seen = String::new();
    for (i, c) in flags.char_indices() {
        if !"dgimsuyv".contains(c)
            || seen.contains(c)
            || (c == 'u' && seen.contains('v'))
            || (c == 'v' && seen.contains('u'))
        {
            return Err(i);
        }
        seen.push(c);
    }
    Ok(())
}

/// The message V8 gives for the errors a script is most likely to meet,
/// the engine's own otherwise.
pub fn regex_message(pattern: &str, msg: &str) -> String {
    let opens = pattern.matches('(').count();
    let closes = pattern.matches(')').count();
    match msg {
        "Unbalanced parenthesis" if opens > closes => "Unterminated group".into(),
        "Unbalanced parenthesis" => "Unmatched ')'".into(),
        "Unbalanced bracket" => "Unterminated character class".into(),
        "Invalid atom character" => "Nothing to repeat".into(),
        "Quantifier not allowed here" => "Invalid quantifier".into(),
        "Invalid quantifier" => "Incomplete quantifier".into(),
        "Incomplete escape" | "Unterminated escape" => "\\ at end of pattern".into(),
        m if m.starts_with("Range values reversed") => "Range out of order in character class".into(),
        m if m.starts_with("Backreference to invalid named capture group") => "Invalid named capture referenced".into(),
        m => m.into(),
    }
}

/// What the engine accepts and ECMAScript does not: a quantifier after
/// `\b`, `\B`, `^` or `$`, and with `u`/`v` a lone `]` or `}`. The
/// message (V8's) and the byte offset of the offending character.
pub fn regex_syntax_gaps(p: &str, unicode: bool, sets: bool) -> Option<(String, usize)> {
    let b = p.as_bytes();
    let (mut i, mut depth, mut after_assertion) = (0, 0usize, false);
    while i < b.len() {
        let c = b[i];
        let quantifier_len = match c {
            b'*' | b'+' | b'?' => Some(1),
            b'{' => braced_quantifier_len(&p[i..]),
            _ => None,
        };
        if depth == 0 && after_assertion && quantifier_len.is_some() {
            return Some(("Nothing to repeat".into(), i));
        }
        after_assertion = false;
        match c {
            b'\\' => {
                after_assertion = depth == 0 && matches!(b.get(i + 1), Some(b'b' | b'B'));
                // The escaped character is skipped (a non-ASCII one's
                // continuation bytes match nothing below), and the braces
                // of `\u{…}`, `\p{…}`, `\P{…}`.
                i += 2;
                if matches!(b.get(i - 1), Some(b'u' | b'p' | b'P')) && b.get(i) == Some(&b'{') {
                    i += p[i..].find('}').map_or(0, |e| e + 1);
                }
                continue;
            }
            b'[' if depth == 0 || sets => depth += 1,
            b']' if depth > 0 => depth -= 1,
            b']' | b'}' if depth == 0 && unicode => return Some(("Lone quantifier brackets".into(), i)),
            b'^' | b'$' if depth == 0 => after_assertion = true,
            b'{' if depth == 0 => {
                if let Some(n) = quantifier_len {
                    i += n;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The length of a `{n}`, `{n,}` or `{n,m}` quantifier at the start of `s`.
fn braced_quantifier_len(s: &str) -> Option<usize> {
    let body = s.strip_prefix('{')?;
    let end = body.find('}')?;
    let inner = &body[..end];
    let (lo, hi) = inner.split_once(',').unwrap_or((inner, "0"));
    let digits = |d: &str| d.bytes().all(|x| x.is_ascii_digit());
    (!lo.is_empty() && digits(lo) && digits(hi)).then_some(end + 2)
}

/// Compiles `pattern` with `flags` (valid flags) to check it. On error: the
/// engine's message and the byte offset of the character where the pattern
/// goes wrong — the end of the shortest prefix that already fails the same
/// way (the engine itself reports no position), or the end of the pattern
/// when only the whole pattern fails.
pub fn check_regex(pattern: &str, flags: &str) -> Result<(), (String, usize)> {
    // As the run time compiles it: without `u`/`v`, as UTF-16 code units.
    let units = !flags.contains('u') && !flags.contains('v');
    let compile = |p: &str| {
        let r = if units {
            regress::Regex::from_unicode(p.encode_utf16().map(u32::from), flags)
        } else {
            regress::Regex::with_flags(p, flags)
        };
        r.err().map(|e| e.text)
    };
    if let Some(e) = regex_syntax_gaps(pattern, !units, flags.contains('v')) {
        return Err(e);
    }
    let Some(msg) = compile(pattern) else { return Ok(()) };
    // Each prefix is a compile: past a few thousand characters, point at
    // the end rather than spend quadratic time.
    if pattern.len() > 4096 {
        return Err((msg, pattern.len()));
    }
    let offset = pattern
        .char_indices()
        .map(|(i, c)| i + c.len_utf8())
        .find(|&end| compile(&pattern[..end]).as_deref() == Some(msg.as_str()))
        .map_or(pattern.len(), |end| pattern[..end].char_indices().last().map_or(0, |(i, _)| i));
    Err((msg, offset))
}

/// Splits `src` into tokens, ending with an [`TokenKind::Eof`] token.
/// Lexical errors are returned as diagnostics; invalid characters become
/// [`TokenKind::Error`] tokens.
pub fn tokenize(src: &str, file: FileId) -> (Vec<Token>, Vec<Diagnostic>) {
    let mut lex = TokenKind::lexer(src);
    if src.starts_with("#!") {
        lex.bump(src.find(is_line_terminator).unwrap_or(src.len()));
    }
    let mut toks: Vec<Token> = Vec::new();
    let mut diags = Vec::new();
    let mut prev_end = 0usize;
    let has_nl = |gap: &str| gap.contains(is_line_terminator);
    while let Some(res) = lex.next() {
        let span = lex.span();
        let kind = match res {
            Ok(k) => k,
            Err(()) => {
                let text = lex.slice();
                let mut d = Diagnostic::new(
                    file,
                    Span::new(span.start, span.end),
                    format!("unexpected character `{}`", text.escape_debug()),
                )
                .with_label("not valid here");
                match text {
                    "@" => d = d.with_hint("decorators are not supported"),
                    "\\" => d = d.with_hint("escapes are not allowed outside string literals"),
                    _ => {}
                }
                diags.push(d);
                TokenKind::Error
            }
        };
        let (kind, span) = match kind {
            TokenKind::Slash | TokenKind::SlashEq if regex_allowed_after(toks.last().map(|t| &t.kind)) => {
                let (kind, end) = regex_literal(src, span.start, &mut lex.extras);
                lex.bump(end - span.end);
                (kind, span.start..end)
            }
            k => (k, span),
        };
        let nl_before = toks.is_empty() || has_nl(src.get(prev_end..span.start).unwrap_or(""));
        prev_end = span.end;
        toks.push(Token { kind, span: Span::new(span.start, span.end), nl_before });
    }
    let nl_before = has_nl(src.get(prev_end..).unwrap_or("")) || toks.is_empty();
    toks.push(Token { kind: TokenKind::Eof, span: Span::new(src.len(), src.len()), nl_before });
    for e in lex.extras.errors {
        let mut d = Diagnostic::new(file, e.span, e.message).with_label(e.label);
        if let Some(h) = e.hint {
            d = d.with_hint(h);
        }
        diags.push(d);
    }
    diags.sort_by_key(|d| d.span.start);
    (toks, diags)
}

#[cfg(test)]
mod tests {
    use super::TokenKind as T;
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let (toks, diags) = tokenize(src, 0);
        assert!(diags.is_empty(), "unexpected diagnostics for {src:?}: {diags:?}");
        toks.into_iter().map(|t| t.kind).filter(|k| *k != T::Eof).collect()
    }

    fn errors(src: &str) -> Vec<String> {
        tokenize(src, 0).1.into_iter().map(|d| d.message).collect()
    }

    fn num(src: &str) -> f64 {
        match kinds(src).as_slice() {
            [T::Number(n)] => *n,
            other => panic!("{src:?} lexed as {other:?}"),
        }
    }

    fn string_value(src: &str) -> String {
        match kinds(src).as_slice() {
            [T::Str(s)] => s.clone(),
            other => panic!("{src:?} lexed as {other:?}"),
        }
    }

    fn regex(pattern: &str, flags: &str) -> TokenKind {
        T::Regex((pattern.into(), flags.into()))
    }

    #[test]
    fn regex_literals_where_an_expression_starts() {
        assert_eq!(kinds("/a+b/gi"), vec![regex("a+b", "gi")]);
        assert_eq!(kinds("x = /=/"), vec![T::Ident("x".into()), T::Eq, regex("=", "")]);
        // A `/` inside a class or escaped does not end the pattern.
        assert_eq!(kinds(r"(/[/]\//)"), vec![T::LParen, regex(r"[/]\/", ""), T::RParen]);
        assert_eq!(kinds("return /x/.test(s)")[1], regex("x", ""));
        assert_eq!(kinds("[/a/, /b/]")[3], regex("b", ""));
        // After a value it divides.
        assert_eq!(
            kinds("a / b / c"),
            vec![T::Ident("a".into()), T::Slash, T::Ident("b".into()), T::Slash, T::Ident("c".into())]
        );
        assert_eq!(kinds("(1) /2/ 3")[3], T::Slash);
        assert_eq!(kinds("x[0] /= 2")[4], T::SlashEq);
        assert_eq!(kinds("this / 2")[1], T::Slash);
        assert_eq!(kinds("`${x}` / 2")[3], T::Slash);
    }

    #[test]
    fn invalid_regex_literals_point_at_the_offending_character() {
        let one = |src: &str| {
            let (_, diags) = tokenize(src, 0);
            assert_eq!(diags.len(), 1, "{src:?}: {diags:?}");
            (diags[0].message.clone(), diags[0].span.start, diags[0].span.end)
        };
        assert_eq!(one("x = /a(b/"), ("invalid regular expression: Unterminated group".into(), 6, 7));
        assert_eq!(one("x = /ab)/"), ("invalid regular expression: Unmatched ')'".into(), 7, 8));
        assert_eq!(one("x = /a**/"), ("invalid regular expression: Nothing to repeat".into(), 7, 8));
        assert_eq!(one(r"x = /\p{Nope}/u").0, "invalid regular expression: Invalid property name");
        assert_eq!(one("x = /a/gig"), ("invalid regular expression flag".into(), 9, 10));
        assert_eq!(one("x = /a/uv"), ("invalid regular expression flag".into(), 8, 9));
        assert_eq!(one("x = /abc\n"), ("unterminated regular expression literal".into(), 4, 8));
        // Valid in unicode-sets mode only.
        assert_eq!(errors("x = /[[a-z]--[b]]/v"), Vec::<String>::new());
    }

    #[test]
    fn what_the_regex_engine_accepts_and_ecmascript_does_not() {
        let gap = |p: &str, u: bool, v: bool| regex_syntax_gaps(p, u, v);
        assert_eq!(gap("^*", false, false), Some(("Nothing to repeat".into(), 1)));
        assert_eq!(gap(r"a\b{2}", false, false), Some(("Nothing to repeat".into(), 3)));
        assert_eq!(gap("x]", true, false), Some(("Lone quantifier brackets".into(), 1)));
        assert_eq!(gap("a{2}}", true, true), Some(("Lone quantifier brackets".into(), 4)));
        // Fine: brackets in classes (nested with `v`), escaped, in `\u{…}`
        // and `\p{…}`, without `u`; quantified lookahead without `u`.
        for (p, u, v) in [
            ("[}]", true, false),
            ("[[a]]]", false, false),
            ("[[a]--[b]]", true, true),
            (r"\}\]", true, false),
            (r"\u{1F600}{2}\p{L}+", true, true),
            ("]{", false, false),
            ("(?=a)*", false, false),
            (r"\^*", false, false),
        ] {
            assert_eq!(gap(p, u, v), None, "{p}");
        }
    }

    #[test]
    fn identifiers_and_keywords() {
        assert_eq!(
            kinds("let x = $a_1 café é async of"),
            vec![
                T::Let,
                T::Ident("x".into()),
                T::Eq,
                T::Ident("$a_1".into()),
                T::Ident("café".into()),
                T::Ident("é".into()),
                T::Ident("async".into()),
                T::Ident("of".into()),
            ]
        );
        assert_eq!(kinds("iffy if"), vec![T::Ident("iffy".into()), T::If]);
        assert_eq!(kinds("变量 _"), vec![T::Ident("变量".into()), T::Ident("_".into())]);
    }

    #[test]
    fn unicode_escapes_in_identifiers() {
        assert_eq!(kinds(r"\u0061bc"), vec![T::Ident("abc".into())]);
        assert_eq!(kinds(r"a\u{62}c \u{0000061}"), vec![T::Ident("abc".into()), T::Ident("a".into())]);
        assert_eq!(kinds(r"\u00e9t\u00E9 caf\u00e9"), vec![T::Ident("été".into()), T::Ident("café".into())]);
        assert_eq!(kinds(r"\u0024x _\u0030"), vec![T::Ident("$x".into()), T::Ident("_0".into())]);
        // ZWJ may continue an identifier.
        assert_eq!(kinds(r"a\u200D"), vec![T::Ident("a\u{200D}".into())]);
        // The escaped word ends where the identifier does.
        assert_eq!(kinds(r"\u0061+b"), vec![T::Ident("a".into()), T::Plus, T::Ident("b".into())]);
        // Escaped contextual keywords are plain identifiers; escaped
        // reserved words are property names after `.` and before `:`.
        assert_eq!(kinds(r"\u0061sync"), vec![T::Ident("async".into())]);
        assert_eq!(kinds(r"o.\u0069f"), vec![T::Ident("o".into()), T::Dot, T::Ident("if".into())]);
        assert_eq!(kinds(r"{ \u0069f: 1 }").get(1), Some(&T::Ident("if".into())));
    }

    #[test]
    fn invalid_unicode_escapes_in_identifiers() {
        let one = |src: &str| {
            let (_, diags) = tokenize(src, 0);
            assert_eq!(diags.len(), 1, "{src:?}: {diags:?}");
            (diags[0].message.clone(), diags[0].span.start, diags[0].span.end)
        };
        assert_eq!(one(r"\u0030a"), ("`\\u0030` (`0`) cannot start an identifier".into(), 0, 6));
        assert_eq!(one(r"a\u002Db"), ("`\\u002D` (`-`) cannot be part of an identifier".into(), 1, 7));
        assert_eq!(one(r"\u{1F600}"), ("`\\u{1F600}` (`😀`) cannot start an identifier".into(), 0, 9));
        assert_eq!(one(r"\u200D"), ("`\\u200D` (U+200D) cannot start an identifier".into(), 0, 6));
        assert_eq!(one(r"x\u00 = 1"), ("invalid Unicode escape sequence".into(), 1, 5));
        assert_eq!(one(r"x\u"), ("invalid Unicode escape sequence".into(), 1, 3));
        assert_eq!(one(r"\u{} = 1"), ("invalid Unicode escape sequence".into(), 0, 4));
        assert_eq!(one(r"\u{61 = 1"), ("invalid Unicode escape sequence".into(), 0, 5));
        assert_eq!(one(r"\u{110000}a"), ("undefined Unicode code point".into(), 0, 10));
        assert_eq!(one(r"let \u0069f = 1"), ("keywords cannot contain escaped characters".into(), 4, 11));
        assert_eq!(one(r"x = \u0074his"), ("keywords cannot contain escaped characters".into(), 4, 13));
        assert_eq!(one(r"\u0074rue ? a : b"), ("keywords cannot contain escaped characters".into(), 0, 9));
        // Each bad escape of a pair is reported.
        assert_eq!(errors(r"\uD83D\uDE00").len(), 2);
        // `\x` escapes do not exist outside strings.
        assert_eq!(errors(r"\x61"), vec![r"unexpected character `\\`".to_string()]);
    }

    #[test]
    fn numbers() {
        assert_eq!(num("1_000"), 1000.0);
        assert_eq!(num("0xff"), 255.0);
        assert_eq!(num("0XFF"), 255.0);
        assert_eq!(num("0b101"), 5.0);
        assert_eq!(num("0o17"), 15.0);
        assert_eq!(num("1.5e3"), 1500.0);
        assert_eq!(num(".5"), 0.5);
        assert_eq!(num("5."), 5.0);
        assert_eq!(num("1e-2"), 0.01);
        assert_eq!(num("1.e3"), 1000.0);
        assert_eq!(num("0"), 0.0);
        assert_eq!(num("0.1"), 0.1);
        assert_eq!(num("1_0.0_1e1_0"), 10.01e10);
        assert_eq!(num("0xffff_ffff_ffff_ffff_ff"), 4722366482869645213696.0);
        assert_eq!(num("9007199254740993"), 9007199254740992.0);
        assert_eq!(kinds("1..toString"), vec![T::Number(1.0), T::Dot, T::Ident("toString".into())]);
        assert_eq!(kinds("a?.5:1"), vec![T::Ident("a".into()), T::Question, T::Number(0.5), T::Colon, T::Number(1.0)]);
    }

    #[test]
    fn bad_numbers() {
        assert_eq!(errors("1_"), vec!["invalid numeric separator"]);
        assert_eq!(errors("1__0"), vec!["invalid numeric separator"]);
        assert_eq!(errors("0x_f"), vec!["invalid numeric separator"]);
        assert_eq!(errors("1._5"), vec!["invalid numeric separator"]);
        assert_eq!(errors("1_.5"), vec!["invalid numeric separator"]);
        assert_eq!(errors("1e_5"), vec!["invalid numeric separator"]);
        assert_eq!(errors("0x"), vec!["missing digits after `0x`"]);
        assert_eq!(errors("0b102"), vec!["invalid digit `2` in binary literal"]);
        assert_eq!(errors("0xZZ"), vec!["invalid digit `Z` in hexadecimal literal"]);
        assert_eq!(errors("017"), vec!["legacy octal literals are not allowed"]);
        assert_eq!(errors("09"), vec!["decimal literals with a leading zero are not allowed"]);
        assert_eq!(errors("10n"), vec!["BigInt literals are not supported"]);
        assert_eq!(errors("3in x"), vec!["an identifier cannot immediately follow a numeric literal"]);
        assert_eq!(errors("1e"), vec!["missing exponent digits"]);
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(string_value(r#""a\nb\tc""#), "a\nb\tc");
        assert_eq!(string_value(r"'\r\b\f\v\0'"), "\r\u{8}\u{C}\u{B}\0");
        assert_eq!(string_value(r#"'it\'s "x"'"#), "it's \"x\"");
        assert_eq!(string_value(r#""\\""#), "\\");
        assert_eq!(string_value(r#""\x41\u0042\u{43}\u{1F600}""#), "ABC😀");
        assert_eq!(string_value(r#""\uD83D\uDE00""#), "😀");
        let mut lone = String::new();
        crate::wtf8::mark(&mut lone, 0xD83D);
        assert_eq!(string_value(r#""\uD83D""#), lone);
        assert_eq!(crate::wtf8::unmark(&string_value(r#""a\uDE00""#)), [b'a', 0xED, 0xB8, 0x80]);
        assert_eq!(string_value("\"a\\\nb\""), "ab");
        assert_eq!(string_value("\"a\\\r\nb\""), "ab");
        assert_eq!(string_value(r#""\q""#), "q");
        assert_eq!(string_value("'é😀'"), "é😀");
        assert_eq!(string_value("''"), "");
    }

    #[test]
    fn bad_strings() {
        assert_eq!(errors("\"abc"), vec!["unterminated string literal"]);
        assert_eq!(errors("'abc\nx"), vec!["unterminated string literal"]);
        assert_eq!(errors(r#""\x4""#), vec!["invalid hexadecimal escape sequence"]);
        assert_eq!(errors(r#""\u12""#), vec!["invalid Unicode escape sequence"]);
        assert_eq!(errors(r#""\u{110000}""#), vec!["invalid Unicode escape sequence"]);
        assert_eq!(errors(r#""\u{}""#), vec!["invalid Unicode escape sequence"]);
        assert_eq!(errors(r#""\1""#), vec!["octal escape sequences are not allowed"]);
        assert_eq!(errors(r#""\8""#), vec!["invalid escape sequence `\\8`"]);
        assert_eq!(errors("\"\\"), vec!["unterminated string literal"]);
        // The literal still produces a token.
        let (toks, _) = tokenize("\"abc\nx", 0);
        assert_eq!(toks[0].kind, T::Str("abc".into()));
        assert_eq!(toks[1].kind, T::Ident("x".into()));
    }

    #[test]
    fn templates() {
        assert_eq!(kinds("`abc`"), vec![T::NoSubstTemplate("abc".into())]);
        assert_eq!(
            kinds("`a${x}b${y}c`"),
            vec![
                T::TemplateHead("a".into()),
                T::Ident("x".into()),
                T::TemplateMiddle("b".into()),
                T::Ident("y".into()),
                T::TemplateTail("c".into()),
            ]
        );
        // Braces and templates inside substitutions.
        assert_eq!(
            kinds("`${ {a: 1}.a + `in${`ner`}` }!`"),
            vec![
                T::TemplateHead("".into()),
                T::LBrace,
                T::Ident("a".into()),
                T::Colon,
                T::Number(1.0),
                T::RBrace,
                T::Dot,
                T::Ident("a".into()),
                T::Plus,
                T::TemplateHead("in".into()),
                T::NoSubstTemplate("ner".into()),
                T::TemplateTail("".into()),
                T::TemplateTail("!".into()),
            ]
        );
        assert_eq!(kinds("`a\\`b\\${c}$ {`"), vec![T::NoSubstTemplate("a`b${c}$ {".into())]);
        assert_eq!(kinds("`l1\r\nl2\rl3`"), vec![T::NoSubstTemplate("l1\nl2\nl3".into())]);
        assert_eq!(kinds("`$`"), vec![T::NoSubstTemplate("$".into())]);
        assert_eq!(kinds("}"), vec![T::RBrace]);
        assert_eq!(errors("`abc"), vec!["unterminated template literal"]);
        assert_eq!(errors("`abc${x}def"), vec!["unterminated template literal"]);
    }

    #[test]
    fn comments_and_newlines() {
        let (toks, diags) = tokenize("a // c\nb /* x */ c /* \n */ d", 0);
        assert!(diags.is_empty());
        let nl: Vec<bool> = toks.iter().map(|t| t.nl_before).collect();
        assert_eq!(nl, vec![true, true, false, true, false]);
        assert_eq!(errors("a /* b"), vec!["unterminated block comment"]);
        assert_eq!(kinds("a\u{A0}b\u{2028}c"), vec![T::Ident("a".into()), T::Ident("b".into()), T::Ident("c".into())]);
        assert_eq!(kinds("#!/usr/bin/env raya\nx"), vec![T::Ident("x".into())]);
    }

    #[test]
    fn punctuators() {
        assert_eq!(
            kinds("a?.b ?? c ??= d >>>= e ... => === !== **= &&= ||="),
            vec![
                T::Ident("a".into()),
                T::Question,
                T::Dot,
                T::Ident("b".into()),
                T::QuestionQuestion,
                T::Ident("c".into()),
                T::QuestionQuestionEq,
                T::Ident("d".into()),
                T::Gt,
                T::Gt,
                T::Gt,
                T::Eq,
                T::Ident("e".into()),
                T::DotDotDot,
                T::Arrow,
                T::EqEqEq,
                T::BangEqEq,
                T::StarStarEq,
                T::AmpAmpEq,
                T::PipePipeEq,
            ]
        );
    }

    #[test]
    fn bad_characters_do_not_stop_lexing() {
        let (toks, diags) = tokenize("a # b @ c \u{1}", 0);
        assert_eq!(diags.len(), 3);
        assert_eq!(diags[0].message, "unexpected character `#`");
        assert_eq!(toks.iter().filter(|t| t.kind == T::Error).count(), 3);
        assert_eq!(toks.last().map(|t| &t.kind), Some(&T::Eof));
    }

    #[test]
    fn spans_are_bytes() {
        let (toks, _) = tokenize("é = \"ü\"", 0);
        assert_eq!(toks[0].span, Span::new(0, 2));
        assert_eq!(toks[2].span, Span::new(5, 9));
    }

    #[test]
    fn never_panics_on_junk() {
        let samples = [
            "\"\\u{",
            "\"\\u{1",
            "'\\x",
            "`${",
            "`${`",
            "}`",
            "0x",
            "0b",
            ".",
            "1e+",
            "\\u0041",
            "/*/",
            "`\\",
            "'\\u{FFFFFFFFFF}'",
            "0o8",
            "0_",
            "._1",
            "\u{FEFF}x",
            "`${}}}}`",
            "{{{`${{`",
        ];
        for s in samples {
            let _ = tokenize(s, 0);
        }
        // Every prefix of a tricky string.
        let tricky = "let s = `a${ {b: `c${d}e`} }f` + \"g\\u{1F600}\\x41\" /* c */ + 0x_1f + 1_0.5e-3 // end";
        for (i, _) in tricky.char_indices() {
            let _ = tokenize(&tricky[..i], 0);
        }
    }
}
