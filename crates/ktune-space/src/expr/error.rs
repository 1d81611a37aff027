//! Error types of the constraint language: compile-time [`ExprError`] and run-time [`EvalError`].

use std::ops::Range;

/// Why evaluating a compiled constraint (or a constant expression) failed.
///
/// For a constraint, every one of these means the configuration is infeasible
/// (see [`Constraint::is_satisfied`](super::Constraint::is_satisfied)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Integer or float division, floor division or modulo by zero, or `0 ** -n`
    /// (Python's `ZeroDivisionError`).
    #[error("division or modulo by zero")]
    DivisionByZero,
    /// An integer result does not fit in an `i64`, a float power overflowed, or an
    /// infinite float was converted to an integer (Python's `OverflowError`, plus
    /// Python big integers that do not fit in 64 bits).
    #[error("numeric overflow")]
    Overflow,
    /// A negative number raised to a fractional power: Python would produce a complex number.
    #[error("negative number raised to a fractional power (the result would be complex)")]
    ComplexResult,
    /// `int()` or `round()` of a NaN (Python's `ValueError`).
    #[error("cannot convert NaN to an integer")]
    NotANumber,
    /// A parameter value does not have the type its [`Symbol`](super::Symbol) declared.
    #[error("a parameter value does not have the declared type")]
    TypeMismatch,
    /// The values slice is too short for a parameter index the constraint reads.
    #[error("a parameter value is missing (the values slice is too short)")]
    MissingValue,
}

/// What kind of problem an [`ExprError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ExprErrorKind {
    /// The source could not be split into tokens (bad character, unterminated string, bad number).
    Lex,
    /// The tokens do not form an expression.
    Parse,
    /// A name that is neither a parameter nor a comprehension variable.
    UnknownName,
    /// A well-formed expression that is not well typed (e.g. a string compared with a number).
    Type,
    /// Valid Python that the language does not support (unknown functions, bitwise operators, ...).
    Unsupported,
    /// Evaluating a constant expression failed (`eval_list` / `eval_const`).
    Eval,
}

/// A compile-time (or constant-evaluation) error, located in the source.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct ExprError {
    /// What kind of problem this is.
    pub kind: ExprErrorKind,
    /// Byte offsets into the source string (`start..end`, end exclusive). An error at the end
    /// of the input has an empty span `len..len`.
    pub span: Range<usize>,
    /// One-line description, without location.
    pub message: String,
    /// Optional hint, e.g. "did you mean `block_size_x`?".
    pub help: Option<String>,
}

impl ExprError {
    /// Creates an error without help text.
    pub(crate) fn new(kind: ExprErrorKind, span: Range<usize>, message: impl Into<String>) -> Self {
        ExprError {
            kind,
            span,
            message: message.into(),
            help: None,
        }
    }

    /// Adds a help text.
    pub(crate) fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Multi-line rendering: the message, the source line holding the span (indented by two
    /// spaces), a caret line with `^` under the span (at least one caret, also for an error at
    /// the end of the input), and `help: ...` when there is help. No trailing newline.
    ///
    /// ```text
    /// unknown name `block_sise_x`
    ///   block_sise_x * 2 <= 1024
    ///   ^^^^^^^^^^^^
    /// help: did you mean `block_size_x`?
    /// ```
    pub fn render(&self, source: &str) -> String {
        let start = floor_boundary(source, self.span.start);
        let end = floor_boundary(source, self.span.end.max(start));
        let line_start = source[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i);
        let line: String = source[line_start..line_end]
            .chars()
            .map(|c| if c.is_whitespace() { ' ' } else { c })
            .collect();
        let col = source[line_start..start].chars().count();
        let width = source[start..end.min(line_end)].chars().count().max(1);
        let (line, col, width) = crate::error::snippet(&line, col, width);
        let mut out = String::with_capacity(self.message.len() + 2 * line.len() + 16);
        out.push_str(&self.message);
        out.push_str("\n  ");
        out.push_str(line.trim_end());
        out.push_str("\n  ");
        out.extend(std::iter::repeat_n(' ', col));
        out.extend(std::iter::repeat_n('^', width));
        if let Some(help) = &self.help {
            out.push_str("\nhelp: ");
            out.push_str(help);
        }
        out
    }
}

/// Largest char boundary `<= i` (clamped to the length).
fn floor_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The candidate closest to `name`: a case-insensitive match first, otherwise the one with
/// the smallest edit distance when that distance is at most a third of the name's length
/// (at least 1, at most 3).
pub(crate) fn suggest<'a>(
    name: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let lower = name.to_lowercase();
    let limit = (name.chars().count() / 3).clamp(1, 3);
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let cl = c.to_lowercase();
        if cl == lower {
            return Some(c);
        }
        let d = edit_distance(&lower, &cl);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let names = ["block_size_x", "block_size_y", "tile", "Threads"];
        let s = |n| suggest(n, names.iter().copied());
        assert_eq!(s("block_sise_x"), Some("block_size_x"));
        assert_eq!(s("BLOCK_SIZE_Y"), Some("block_size_y"));
        assert_eq!(s("threads"), Some("Threads"));
        assert_eq!(s("tiles"), Some("tile"));
        assert_eq!(s("zzz"), None);
        assert_eq!(s("x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }

    #[test]
    fn render_caret_lines() {
        let e = ExprError::new(ExprErrorKind::Parse, 4..5, "unexpected token `*`");
        assert_eq!(
            e.render("a * * b"),
            "unexpected token `*`\n  a * * b\n      ^"
        );
        let e = ExprError::new(ExprErrorKind::Parse, 3..3, "unexpected end of input")
            .with_help("finish it");
        assert_eq!(
            e.render("a +"),
            "unexpected end of input\n  a +\n     ^\nhelp: finish it"
        );
        // Non-ASCII text before the span: carets count characters, not bytes.
        let e = ExprError::new(ExprErrorKind::UnknownName, 9..11, "unknown name `yy`");
        assert_eq!(
            e.render("ééé + yy"),
            "unknown name `yy`\n  ééé + yy\n        ^^"
        );
        // Out-of-range spans are clamped rather than panicking.
        let e = ExprError::new(ExprErrorKind::Parse, 50..60, "m");
        assert_eq!(e.render("ab"), "m\n  ab\n    ^");
        let e = ExprError::new(ExprErrorKind::Parse, 1..2, "m");
        assert_eq!(e.render("é"), "m\n  é\n  ^");
    }
}
