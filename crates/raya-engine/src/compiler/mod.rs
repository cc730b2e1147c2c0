//! AST to bytecode.
