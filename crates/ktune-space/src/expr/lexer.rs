//! Tokeniser for the Python expression subset.

use super::ast::Span;
use super::error::{ExprError, ExprErrorKind};

/// One token kind (with its value for literals and names).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    Int(i64),
    Float(f64),
    Str(String),
    Name(String),
    True,
    False,
    And,
    Or,
    Not,
    In,
    Is,
    If,
    Else,
    For,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Plus,
    Minus,
    Star,
    Slash,
    DoubleSlash,
    Percent,
    DoubleStar,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    /// A lone `=`.
    Assign,
    Dot,
    /// `&`, `|`, `^`, `~`, `<<`, `>>`: lexed only to report them as unsupported.
    Bitwise(&'static str),
    Eof,
}

/// A token with its byte span in the source.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn lex_err(span: Span, msg: impl Into<String>) -> ExprError {
    ExprError::new(ExprErrorKind::Lex, span, msg)
}

/// Splits `src` into tokens; the last one is always [`Tok::Eof`] with span `len..len`.
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, ExprError> {
    let bytes = src.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let c = bytes[i];
        let start = i;
        // Multi-byte (non-ASCII) characters.
        if c >= 0x80 {
            let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
            if ch.is_alphabetic() {
                let end = ident_end(src, i);
                toks.push(name_token(&src[i..end], i..end));
                i = end;
                continue;
            }
            if ch.is_whitespace() {
                i += ch.len_utf8();
                continue;
            }
            return Err(lex_err(
                i..i + ch.len_utf8(),
                format!("unexpected character `{ch}`"),
            ));
        }
        let next = bytes.get(i + 1).copied();
        let (tok, len) = match c {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' => {
                i += 1;
                continue;
            }
            b'#' => {
                i = src[i..].find('\n').map_or(src.len(), |n| i + n);
                continue;
            }
            b'0'..=b'9' => {
                let (tok, end) = lex_number(src, i)?;
                toks.push(Token { tok, span: i..end });
                i = end;
                continue;
            }
            b'.' if next.is_some_and(|n| n.is_ascii_digit()) => {
                let (tok, end) = lex_number(src, i)?;
                toks.push(Token { tok, span: i..end });
                i = end;
                continue;
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let end = ident_end(src, i);
                toks.push(name_token(&src[i..end], i..end));
                i = end;
                continue;
            }
            b'\'' | b'"' => {
                let (s, end) = lex_string(src, i)?;
                toks.push(Token {
                    tok: Tok::Str(s),
                    span: i..end,
                });
                i = end;
                continue;
            }
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b',' => (Tok::Comma, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' if next == Some(b'*') => (Tok::DoubleStar, 2),
            b'*' => (Tok::Star, 1),
            b'/' if next == Some(b'/') => (Tok::DoubleSlash, 2),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'<' if next == Some(b'=') => (Tok::Le, 2),
            b'<' if next == Some(b'<') => (Tok::Bitwise("<<"), 2),
            b'<' => (Tok::Lt, 1),
            b'>' if next == Some(b'=') => (Tok::Ge, 2),
            b'>' if next == Some(b'>') => (Tok::Bitwise(">>"), 2),
            b'>' => (Tok::Gt, 1),
            b'=' if next == Some(b'=') => (Tok::EqEq, 2),
            b'=' => (Tok::Assign, 1),
            b'!' if next == Some(b'=') => (Tok::Ne, 2),
            b'.' => (Tok::Dot, 1),
            b'&' => (Tok::Bitwise("&"), 1),
            b'|' => (Tok::Bitwise("|"), 1),
            b'^' => (Tok::Bitwise("^"), 1),
            b'~' => (Tok::Bitwise("~"), 1),
            _ => {
                let msg = if c.is_ascii_graphic() {
                    format!("unexpected character `{}`", c as char)
                } else {
                    format!("unexpected character {:?}", c as char)
                };
                let err = lex_err(start..start + 1, msg);
                return Err(if c == b'!' {
                    err.with_help("use `not` for negation and `!=` for inequality")
                } else {
                    err
                });
            }
        };
        toks.push(Token {
            tok,
            span: start..start + len,
        });
        i += len;
    }
    toks.push(Token {
        tok: Tok::Eof,
        span: src.len()..src.len(),
    });
    Ok(toks)
}

fn ident_end(src: &str, start: usize) -> usize {
    src[start..]
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(src.len(), |(n, _)| start + n)
}

fn name_token(word: &str, span: Span) -> Token {
    let tok = match word {
        "True" => Tok::True,
        "False" => Tok::False,
        "and" => Tok::And,
        "or" => Tok::Or,
        "not" => Tok::Not,
        "in" => Tok::In,
        "is" => Tok::Is,
        "if" => Tok::If,
        "else" => Tok::Else,
        "for" => Tok::For,
        _ => Tok::Name(word.to_string()),
    };
    Token { tok, span }
}

/// Lexes a numeric literal starting at `start`; returns the token and the end offset.
fn lex_number(src: &str, start: usize) -> Result<(Tok, usize), ExprError> {
    let b = src.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    // Prefixed integers.
    if at(start) == b'0' && matches!(at(start + 1), b'x' | b'X' | b'o' | b'O' | b'b' | b'B') {
        let radix = match at(start + 1) {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            _ => 2,
        };
        let mut i = start + 2;
        let mut digits = String::new();
        while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
            if b[i] != b'_' {
                digits.push(b[i] as char);
            }
            i += 1;
        }
        let span = start..i;
        if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
            return Err(lex_err(span, "invalid integer literal"));
        }
        return match i64::from_str_radix(&digits, radix) {
            Ok(v) => Ok((Tok::Int(v), i)),
            Err(_) => Err(lex_err(
                span,
                "integer literal is too large (integers are 64-bit)",
            )),
        };
    }
    let mut i = start;
    let mut text = String::new();
    let digits = |i: &mut usize, text: &mut String| {
        while *i < b.len() {
            if b[*i].is_ascii_digit() {
                text.push(b[*i] as char);
            } else if b[*i] == b'_' && b.get(*i + 1).is_some_and(|c| c.is_ascii_digit()) {
                // digit separator
            } else {
                break;
            }
            *i += 1;
        }
    };
    digits(&mut i, &mut text);
    let mut is_float = false;
    if at(i) == b'.' {
        is_float = true;
        text.push('.');
        i += 1;
        digits(&mut i, &mut text);
    }
    if matches!(at(i), b'e' | b'E') {
        let mut j = i + 1;
        let mut exp = String::from("e");
        if matches!(at(j), b'+' | b'-') {
            exp.push(at(j) as char);
            j += 1;
        }
        if at(j).is_ascii_digit() {
            digits(&mut j, &mut exp);
            text.push_str(&exp);
            is_float = true;
            i = j;
        } else {
            return Err(lex_err(
                start..j,
                "invalid float literal: missing exponent digits",
            ));
        }
    }
    if at(i).is_ascii_alphabetic() || at(i) == b'_' {
        let end = ident_end(src, i);
        return Err(lex_err(start..end, "invalid number literal"));
    }
    let span = start..i;
    if is_float {
        match text.parse::<f64>() {
            Ok(v) => Ok((Tok::Float(v), i)),
            Err(_) => Err(lex_err(span, "invalid float literal")),
        }
    } else {
        if text.len() > 1 && text.starts_with('0') && text.bytes().any(|c| c != b'0') {
            return Err(lex_err(
                span,
                "leading zeros in decimal integer literals are not permitted",
            )
            .with_help("use an `0o` prefix for octal integers"));
        }
        match text.parse::<i64>() {
            Ok(v) => Ok((Tok::Int(v), i)),
            Err(_) => Err(lex_err(
                span,
                "integer literal is too large (integers are 64-bit)",
            )),
        }
    }
}

/// Lexes a single- or double-quoted string starting at `start` (the quote).
fn lex_string(src: &str, start: usize) -> Result<(String, usize), ExprError> {
    let quote = src.as_bytes()[start] as char;
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices().peekable();
    while let Some((off, c)) = chars.next() {
        let pos = start + 1 + off;
        match c {
            c if c == quote => return Ok((out, pos + 1)),
            '\n' | '\r' => break,
            '\\' => match chars.next() {
                Some((_, e)) => match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    '0' => out.push('\0'),
                    '\\' | '\'' | '"' => out.push(e),
                    '\n' => {}
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                },
                None => break,
            },
            c => out.push(c),
        }
    }
    let end = src[start..]
        .find(['\n', '\r'])
        .map_or(src.len(), |n| start + n);
    Err(lex_err(start..end, "unterminated string").with_help(format!("add a closing {quote}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers() {
        let ints = [
            ("12", 12),
            ("0x1F", 31),
            ("0b101", 5),
            ("0o17", 15),
            ("1_000", 1000),
        ];
        let floats = [
            ("1.5", 1.5),
            ("1e3", 1000.0),
            (".5", 0.5),
            ("2.", 2.0),
            ("1.5e-3", 0.0015),
            ("1E+2", 100.0),
        ];
        let ints = ints.map(|(s, i)| (s, Tok::Int(i)));
        let floats = floats.map(|(s, x)| (s, Tok::Float(x)));
        let largest = ("9223372036854775807", Tok::Int(i64::MAX));
        // Lexed as one text, each number separated by a space.
        let (texts, mut toks): (Vec<&str>, Vec<Tok>) =
            ints.into_iter().chain(floats).chain([largest]).unzip();
        toks.push(Tok::Eof);
        assert_eq!(kinds(&texts.join(" ")), toks);
        assert!(lex("9223372036854775808").is_err());
        assert!(lex("0x").is_err());
        assert!(lex("1e").is_err());
        assert!(lex("007").is_err());
        assert_eq!(kinds("00"), vec![Tok::Int(0), Tok::Eof]);
        assert!(lex("12abc").is_err());
    }

    #[test]
    fn operators_and_keywords() {
        assert_eq!(
            kinds("a**b//c<=d!=e not in"),
            vec![
                Tok::Name("a".into()),
                Tok::DoubleStar,
                Tok::Name("b".into()),
                Tok::DoubleSlash,
                Tok::Name("c".into()),
                Tok::Le,
                Tok::Name("d".into()),
                Tok::Ne,
                Tok::Name("e".into()),
                Tok::Not,
                Tok::In,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn strings() {
        assert_eq!(
            kinds(r#"'a' "b" 'it\'s' "x\ty""#),
            vec![
                Tok::Str("a".into()),
                Tok::Str("b".into()),
                Tok::Str("it's".into()),
                Tok::Str("x\ty".into()),
                Tok::Eof
            ]
        );
        let e = lex("x == 'abc").unwrap_err();
        assert_eq!(e.kind, ExprErrorKind::Lex);
        assert_eq!(e.span, 5..9);
        assert_eq!(e.message, "unterminated string");
    }

    #[test]
    fn spans_are_byte_offsets() {
        let t = lex("é + ab").unwrap();
        assert_eq!(t[0].span, 0..2);
        assert_eq!(t[1].span, 3..4);
        assert_eq!(t[2].span, 5..7);
        assert_eq!(t[3].span, 7..7);
    }
}
