//! Compile-time diagnostics and their rustc-style rendering.
//!
//! Every pass of the front end (lexer, parser, resolver/compiler, module
//! loader) reports problems as [`Diagnostic`] values and keeps going, so a
//! single run reports every error of a file. Rendering is done by
//! `codespan-reporting`, which draws the source line and caret underline.

use super::span::Span;

/// Identifies a loaded source file (index into [`SourceMap`]).
pub type FileId = usize;

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub message: String,
    pub file: FileId,
    pub span: Span,
    /// Short text under the caret, e.g. "expected `)`".
    pub label: String,
    /// A one-line hint shown after the snippet, when one helps.
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn new(file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic { message: message.into(), file, span, label: String::new(), hint: None }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = label.into();
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }
}

/// All source files of a program, by [`FileId`]. Cheap to clone (the
/// files are shared): code compiled into a live program (`eval`, REPL
/// inputs) extends a copy of the program's map, and a live program keeps
/// every file its functions may come from, one more per `eval`. So the
/// map is a persistent vector: chunks whose sizes are distinct powers of
/// two, largest first (a binary counter). Adding a file merges equal
/// chunks (amortised O(log n) pointer copies); cloning, dropping and
/// looking up touch one pointer per chunk, O(log n), where a flat vector
/// made every `eval` cost a copy of all earlier ones.
#[derive(Debug, Default, Clone)]
pub struct SourceMap {
    chunks: Vec<std::sync::Arc<[std::sync::Arc<SourceFile>]>>,
    len: usize,
}

#[derive(Clone)]
pub struct SourceFile {
    /// The path as the user wrote it (or as resolved relative to it).
    pub name: String,
    pub text: String,
    pub lines: super::span::LineIndex,
}

/// The text is left out: a `CompileError` holds every file of the program,
/// the prelude included, and its `Debug` form (what `unwrap` prints) should
/// show the diagnostics, not tens of thousands of lines of source.
impl std::fmt::Debug for SourceFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceFile").field("name", &self.name).field("bytes", &self.text.len()).finish_non_exhaustive()
    }
}

impl SourceMap {
    pub fn add(&mut self, name: String, text: String) -> FileId {
        let lines = super::span::LineIndex::new(&text);
        self.add_shared(std::sync::Arc::new(SourceFile { name, text, lines }))
    }

    /// Adds a file another map may hold too (the prelude's).
    pub fn add_shared(&mut self, file: std::sync::Arc<SourceFile>) -> FileId {
        self.chunks.push(std::sync::Arc::from([file]));
        while let [.., a, b] = &self.chunks[..] {
            if a.len() != b.len() {
                break;
            }
            let merged: std::sync::Arc<[_]> = a.iter().chain(b.iter()).cloned().collect();
            self.chunks.truncate(self.chunks.len() - 2);
            self.chunks.push(merged);
        }
        self.len += 1;
        self.len - 1
    }

    /// File `id`, to share with another map ([`SourceMap::add_shared`]).
    pub fn shared(&self, id: FileId) -> std::sync::Arc<SourceFile> {
        self.file(id).clone()
    }

    fn file(&self, id: FileId) -> &std::sync::Arc<SourceFile> {
        let mut at = id;
        for c in &self.chunks {
            if at < c.len() {
                return &c[at];
            }
            at -= c.len();
        }
        panic!("no source file {id} in a map of {}", self.len)
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        self.file(id)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every file, in `FileId` order.
    pub fn iter(&self) -> impl Iterator<Item = &SourceFile> {
        self.chunks.iter().flat_map(|c| c.iter().map(|f| &**f))
    }

    /// 1-based line and column of `offset` in file `id`.
    pub fn line_col(&self, id: FileId, offset: u32) -> (u32, u32) {
        let f = self.get(id);
        f.lines.line_col(&f.text, offset)
    }

    /// Renders diagnostics rustc-style (no colour), followed by a summary line.
    pub fn render(&self, diags: &[Diagnostic]) -> String {
        use codespan_reporting::diagnostic::{Diagnostic as CsDiag, Label};
        use codespan_reporting::files::SimpleFiles;
        use codespan_reporting::term::{self, termcolor::NoColor, Config};

        // Only the files the diagnostics point into are copied (the
        // others keep their ids with no text): a live program's map holds
        // the prelude and every earlier input.
        let mut files = SimpleFiles::new();
        for (id, f) in self.iter().enumerate() {
            let text = if diags.iter().any(|d| d.file == id) { f.text.clone() } else { String::new() };
            files.add(f.name.clone(), text);
        }
        let mut out = NoColor::new(Vec::new());
        let config = Config::default();
        for d in diags {
            let mut cs = CsDiag::error().with_message(&d.message).with_labels(vec![Label::primary(
                d.file,
                d.span.start as usize..d.span.end as usize,
            )
            .with_message(&d.label)]);
            if let Some(h) = &d.hint {
                cs = cs.with_notes(vec![format!("hint: {h}")]);
            }
            // Rendering into a Vec cannot fail for in-range spans; an
            // out-of-range span falls back to a plain line.
            if term::emit(&mut out, &config, &files, &cs).is_err() {
                let (l, c) = self.line_col(d.file, d.span.start);
                let line = format!("error: {}\n  --> {}:{}:{}\n", d.message, self.get(d.file).name, l, c);
                out.get_mut().extend_from_slice(line.as_bytes());
            }
        }
        let n = diags.len();
        let summary =
            format!("error: could not compile due to {} previous error{}\n", n, if n == 1 { "" } else { "s" });
        let mut s = String::from_utf8_lossy(&out.into_inner()).into_owned();
        s.push_str(&summary);
        s
    }
}

/// Levenshtein distance between two short names, for "did you mean" hints
/// (compile errors, the command line).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod edit_distance_tests {
    use super::edit_distance;

    #[test]
    fn counts_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("check", "check"), 0);
        assert_eq!(edit_distance("chek", "check"), 1);
        assert_eq!(edit_distance("fs", "fx"), 1);
        assert_eq!(edit_distance("", "run"), 3);
        assert_eq!(edit_distance("lenght", "length"), 2);
        assert_eq!(edit_distance("ünï", "uni"), 2, "by characters, not bytes");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_of_a_source_map_names_files_without_their_text() {
        let mut sources = SourceMap::default();
        sources.add("main.raya".into(), "const secret_text = 1;\n".repeat(1000));
        let shown = format!("{sources:?}");
        assert!(shown.contains("main.raya"), "{shown}");
        assert!(shown.contains("bytes: 23000"), "{shown}");
        assert!(!shown.contains("secret_text"), "{shown}");
    }

    /// A map extended one file at a time (as a live program's is, once
    /// per `eval`) finds every file by id, stays a handful of chunks (so
    /// cloning it is cheap), and an extended copy leaves the original as
    /// it was.
    #[test]
    fn a_growing_source_map_keeps_ids_and_few_chunks() {
        let mut sources = SourceMap::default();
        for i in 0..1000 {
            let id = sources.add(format!("<eval {i}>"), format!("{i};"));
            assert_eq!(id, i);
            let copy = sources.clone();
            assert!(copy.chunks.len() <= 11, "{} chunks for {} files", copy.chunks.len(), copy.len());
        }
        assert_eq!(sources.len(), 1000);
        for i in [0, 1, 511, 512, 767, 999] {
            assert_eq!(sources.get(i).name, format!("<eval {i}>"));
            assert_eq!(sources.line_col(i, 1), (1, 2));
        }
        assert_eq!(sources.iter().count(), 1000);
        let before = sources.clone();
        sources.add("later".into(), String::new());
        assert_eq!((before.len(), sources.len()), (1000, 1001));
        assert!(std::sync::Arc::ptr_eq(&before.shared(3), &sources.shared(3)), "files are shared, not copied");
        // Rendering names the file of the diagnostic and its line.
        let d = Diagnostic::new(500, Span { start: 0, end: 3 }, "bad").with_label("here");
        let text = sources.render(&[d]);
        assert!(text.contains("<eval 500>:1:1"), "{text}");
    }
}
