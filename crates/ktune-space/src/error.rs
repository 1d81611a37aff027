//! Errors of the search-space crate, each naming the problem and, where it comes from a file,
//! where (file, line, column, the line itself and a caret under the offending text).

use std::fmt;
use std::path::PathBuf;

use crate::expr::ExprError;

/// A position in a source file, with the line text, so it can be shown with a caret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file, or a description such as `<string>`.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The text of that line.
    pub line_text: String,
    /// How many characters the caret underlines (at least 1).
    pub width: usize,
}

impl Location {
    /// The location of the byte range `span` inside `text`.
    pub fn from_span(
        file: impl Into<String>,
        text: &str,
        span: std::ops::Range<usize>,
    ) -> Location {
        let start = floor_char_boundary(text, span.start.min(text.len()));
        let end = floor_char_boundary(text, span.end.clamp(start, text.len()));
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count() + 1;
        let width = text[start..end.min(line_end).max(start)]
            .chars()
            .count()
            .max(1);
        Location {
            file: file.into(),
            line,
            column,
            line_text: text[line_start..line_end]
                .trim_end_matches('\r')
                .to_string(),
            width,
        }
    }
}

/// The most characters of a source line an error shows: a longer line (a generated spec, a
/// megabyte of values on one line) is cut to this many around the caret, with `...` where
/// text was left out.
pub(crate) const SNIPPET_CHARS: usize = 120;

/// The part of `line` to show for a caret at character `col` (0-based) `width` characters
/// wide: `(text, col, width)` in the text shown.
pub(crate) fn snippet(line: &str, col: usize, width: usize) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= SNIPPET_CHARS {
        return (line.to_string(), col, width);
    }
    let width = width.clamp(1, SNIPPET_CHARS / 2);
    let col = col.min(chars.len());
    let start = col.saturating_sub((SNIPPET_CHARS - width) / 2);
    let end = (start + SNIPPET_CHARS).min(chars.len());
    let start = end.saturating_sub(SNIPPET_CHARS).min(start);
    let mut text = String::new();
    let mut at = col - start;
    if start > 0 {
        text.push_str("...");
        at += 3;
    }
    text.extend(&chars[start..end]);
    if end < chars.len() {
        text.push_str("...");
    }
    (text, at, width)
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gutter = self.line.to_string().len();
        let (text, col, width) = snippet(&self.line_text, self.column - 1, self.width);
        writeln!(
            f,
            "{:gutter$}--> {}:{}:{}",
            "", self.file, self.line, self.column
        )?;
        writeln!(f, "{:gutter$} |", "")?;
        writeln!(f, "{} | {}", self.line, text)?;
        write!(
            f,
            "{:gutter$} | {}{}",
            "",
            " ".repeat(col),
            "^".repeat(width)
        )
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Everything that can go wrong while reading a spec or building a search space.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpaceError {
    /// A file could not be read.
    #[error("cannot read `{}`: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file is not valid TOML, JSON or gzip, or a field has the wrong shape. The message
    /// carries the line and column.
    #[error("`{file}` is not a valid {format} file:\n{message}")]
    Syntax {
        /// The file.
        file: String,
        /// `TOML`, `JSON`, ...
        format: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A field of the spec is wrong (the message says which and why).
    #[error("{message}{}", fmt_location(location))]
    Spec {
        /// What is wrong.
        message: String,
        /// Where, when known.
        location: Option<Box<Location>>,
    },
    /// A constraint (or a value expression) does not lex, parse or type-check.
    #[error("{}", fmt_expr(context, location, expression, error))]
    Expr {
        /// Which expression, e.g. `constraint 3`.
        context: String,
        /// Where in the file, when known.
        location: Option<Box<Location>>,
        /// The expression's source.
        expression: String,
        /// The error, with its span inside `expression`.
        error: Box<ExprError>,
    },
    /// Two parameters share a name.
    #[error("duplicate parameter `{name}`{}", fmt_location(location))]
    DuplicateParameter {
        /// The name.
        name: String,
        /// Where the second one is defined, when known.
        location: Option<Box<Location>>,
    },
    /// A domain lists a value twice.
    #[error("parameter `{name}` lists the value `{value}` more than once")]
    DuplicateValue {
        /// The parameter.
        name: String,
        /// The value.
        value: String,
    },
    /// A parameter has no values.
    #[error("parameter `{name}` has no values (an empty domain)")]
    EmptyDomain {
        /// The parameter.
        name: String,
    },
    /// A parameter definition is invalid.
    #[error("parameter `{name}`: {message}")]
    InvalidParameter {
        /// The parameter.
        name: String,
        /// Why.
        message: String,
    },
    /// No configuration satisfies the constraints.
    #[error(
        "no configuration satisfies the constraints (the Cartesian product has {cartesian} configurations); \
         the constraint that removes the most on its own is `{culprit}`, rejecting {:.1}% of the combinations of its parameters",
        rejected * 100.0
    )]
    EmptySpace {
        /// Size of the Cartesian product.
        cartesian: String,
        /// The constraint that rejects the largest share.
        culprit: String,
        /// The share it rejects, in [0, 1].
        rejected: f64,
    },
    /// Building a group of linked parameters would take too long: the constraints are
    /// checked only once all their parameters have values, so the whole product of the group
    /// is walked.
    #[error(
        "building the search space would take too long: the parameters {{{}}} are linked by constraints into one group of {cartesian} combinations, and enumerating it needs about {estimate:.1e} constraint checks (the limit is {limit:.0e}). Split the constraint that links them into constraints on fewer parameters (each is checked as soon as its own parameters have values), narrow their ranges, or raise the limit with --max-enumeration",
        params.join(", ")
    )]
    TooMuchWork {
        /// The group's parameters.
        params: Vec<String>,
        /// The product of their (filtered) domain sizes.
        cartesian: String,
        /// The estimated number of constraint checks.
        estimate: f64,
        /// The limit.
        limit: f64,
    },
    /// The build was cancelled through its [`BuildProgress`](crate::BuildProgress).
    #[error("the search-space build was interrupted")]
    Interrupted,
    /// The space has more configurations than a `u64` can index.
    #[error("the search space has more than 2^64 configurations; split it or add constraints")]
    TooLarge,
    /// Another error, with the place in the file it comes from.
    #[error("{error}\n{location}")]
    Located {
        /// The error.
        error: Box<SpaceError>,
        /// Where.
        location: Box<Location>,
    },
    /// A configuration or value list does not fit the space.
    #[error("{0}")]
    Mismatch(String),
}

impl SpaceError {
    /// The error without the location wrapper, for matching on its kind.
    pub fn kind(&self) -> &SpaceError {
        match self {
            SpaceError::Located { error, .. } => error.kind(),
            other => other,
        }
    }

    pub(crate) fn at(self, location: Option<Location>) -> SpaceError {
        match location {
            Some(l) => SpaceError::Located {
                error: Box::new(self),
                location: Box::new(l),
            },
            None => self,
        }
    }
}

/// `context: message`, then either the file location (which shows the line) or the
/// expression with a caret, then the help.
fn fmt_expr(
    context: &str,
    location: &Option<Box<Location>>,
    expression: &str,
    error: &ExprError,
) -> String {
    match location {
        Some(l) => {
            let help = error
                .help
                .as_ref()
                .map(|h| format!("\nhelp: {h}"))
                .unwrap_or_default();
            format!("{context}: {}\n{l}{help}", error.message)
        }
        None => format!("{context}: {}", error.render(expression)),
    }
}

fn fmt_location(location: &Option<Box<Location>>) -> String {
    match location {
        Some(l) => format!("\n{l}"),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_megabyte_line_is_cut_around_the_caret() {
        let mut text = "x + 1, ".repeat(150_000);
        let at = text.len() / 2;
        text.insert_str(at, "@@oops@@");
        let loc = Location::from_span("big.toml", &text, at..at + 8);
        let shown = loc.to_string();
        assert!(shown.len() < 400, "{} bytes shown", shown.len());
        let lines: Vec<&str> = shown.lines().collect();
        let (code, caret) = (lines[2], lines[3]);
        let c = caret.find('^').unwrap();
        assert_eq!(&code[c..c + 8], "@@oops@@", "\n{code}\n{caret}");
        assert!(code.contains("...") && caret.ends_with("^^^^^^^^"));
        assert!(shown.contains(&format!("big.toml:1:{}", at + 1)), "{shown}");
        // The same for a constraint's own rendering.
        let src = format!("{} + @", "x".repeat(5000));
        let e = crate::expr::ExprError::new(
            crate::expr::ExprErrorKind::Parse,
            5003..5004,
            "unexpected `@`",
        );
        let r = e.render(&src);
        assert!(r.len() < 400, "{r}");
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(
            lines[1].chars().nth(lines[2].find('^').unwrap()),
            Some('@'),
            "{r}"
        );
    }

    #[test]
    fn location_points_at_span() {
        let text = "a = 1\nconstraints = [\"x * yy < 3\"]\n";
        let start = text.find("yy").unwrap();
        let loc = Location::from_span("spec.toml", text, start..start + 2);
        assert_eq!((loc.line, loc.column, loc.width), (2, 21, 2));
        let shown = loc.to_string();
        assert!(shown.contains("--> spec.toml:2:21"), "{shown}");
        assert!(
            shown.ends_with(&format!(" | {}^^", " ".repeat(20))),
            "{shown}"
        );
    }

    #[test]
    fn location_at_end_of_text_has_one_caret() {
        let loc = Location::from_span("f", "abc", 3..3);
        assert_eq!((loc.line, loc.column, loc.width), (1, 4, 1));
    }
}
