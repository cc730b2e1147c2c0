//! The front end: source text to AST.
//!
//! `lexer` turns text into tokens (logos), `parser` builds the [`ast`] by
//! recursive descent with Pratt expression parsing and recovers at statement
//! boundaries, reporting [`diagnostic::Diagnostic`]s instead of stopping.

pub mod ast;
pub mod diagnostic;
pub mod lexer;
pub mod parser;
pub mod span;

pub use parser::parse;
