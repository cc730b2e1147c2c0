//! `console.log` formatting of values (LANGUAGE.md §5).
