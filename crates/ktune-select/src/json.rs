//! The JSON a wisdom file is made of, read and written by hand.
//!
//! Why by hand: this crate is linked into applications to choose a configuration at run
//! time, and must not bring dependencies with it (issue 45). Wisdom files use a small part of
//! JSON (objects, arrays, strings, numbers, booleans, null; one document per line), so a
//! reader of that part is short; it accepts exactly RFC 8259's grammar and says where a
//! document goes wrong.

use std::fmt::Write as _;

/// A JSON value. Objects keep their keys in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number written without a fraction or exponent that fits an `i64`.
    Int(i64),
    /// Any other number.
    Real(f64),
    /// A string.
    Str(String),
    /// An array.
    Array(Vec<Json>),
    /// An object, its members in the order written.
    Object(Vec<(String, Json)>),
}

impl Json {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A string's text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An array's elements.
    pub fn as_array(&self) -> Option<&[Json]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A number as an `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        match *self {
            Json::Int(i) => Some(i as f64),
            Json::Real(x) => Some(x),
            _ => None,
        }
    }

    /// The document as compact JSON text (non-finite numbers, which JSON lacks, as `null`).
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Json::Real(x) if x.is_finite() => {
                // `{:?}` keeps a `.0` on whole numbers, so they read back as reals.
                let _ = write!(out, "{x:?}");
            }
            Json::Real(_) => out.push_str("null"),
            Json::Str(s) => write_string(s, out),
            Json::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Json::Object(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_string(k, out);
                    out.push_str(": ");
                    v.write(out);
                }
                out.push('}');
            }
        }
    }
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Where and why a document is not JSON: the byte offset (in characters, from 0) and what
/// was expected there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    /// The character at which reading stopped.
    pub column: usize,
    /// What was wrong there.
    pub message: String,
}

/// Reads one JSON document (whitespace around it allowed, nothing after it).
pub fn parse(text: &str) -> Result<Json, JsonError> {
    let chars: Vec<char> = text.chars().collect();
    let mut p = Parser { chars, at: 0 };
    p.space();
    let v = p.value(0)?;
    p.space();
    if p.at < p.chars.len() {
        return Err(p.error("text after the end of the document"));
    }
    Ok(v)
}

/// Nesting deeper than this is refused (a wisdom record nests three levels).
const MAX_DEPTH: usize = 64;

struct Parser {
    chars: Vec<char>,
    at: usize,
}

impl Parser {
    fn error(&self, message: &str) -> JsonError {
        let message = if self.at >= self.chars.len() {
            format!("{message} (the text ends there: cut off?)")
        } else {
            message.to_string()
        };
        JsonError {
            column: self.at,
            message,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn space(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.at += 1;
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        let n = word.chars().count();
        if self.chars.len() >= self.at + n
            && self.chars[self.at..self.at + n]
                .iter()
                .copied()
                .eq(word.chars())
        {
            self.at += n;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.peek() {
            Some('{') => self.object(depth),
            Some('[') => self.array(depth),
            Some('"') => self.string().map(Json::Str),
            Some('-' | '0'..='9') => self.number(),
            _ if self.eat("true") => Ok(Json::Bool(true)),
            _ if self.eat("false") => Ok(Json::Bool(false)),
            _ if self.eat("null") => Ok(Json::Null),
            _ => Err(self.error("expected a value")),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.at += 1;
        let mut members = Vec::new();
        self.space();
        if self.peek() == Some('}') {
            self.at += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.space();
            if self.peek() != Some('"') {
                return Err(self.error("expected a member name in quotes"));
            }
            let key = self.string()?;
            self.space();
            if self.peek() != Some(':') {
                return Err(self.error("expected `:` after a member name"));
            }
            self.at += 1;
            self.space();
            let v = self.value(depth + 1)?;
            members.push((key, v));
            self.space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some('}') => {
                    self.at += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, JsonError> {
        self.at += 1;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(']') {
            self.at += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.space();
            items.push(self.value(depth + 1)?);
            self.space();
            match self.peek() {
                Some(',') => self.at += 1,
                Some(']') => {
                    self.at += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1;
        let mut s = String::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error("a string without its closing quote"));
            };
            self.at += 1;
            match c {
                '"' => return Ok(s),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return Err(self.error("a string without its closing quote"));
                    };
                    self.at += 1;
                    match e {
                        '"' => s.push('"'),
                        '\\' => s.push('\\'),
                        '/' => s.push('/'),
                        'b' => s.push('\u{8}'),
                        'f' => s.push('\u{c}'),
                        'n' => s.push('\n'),
                        'r' => s.push('\r'),
                        't' => s.push('\t'),
                        'u' => s.push(self.unicode_escape()?),
                        _ => {
                            self.at -= 1;
                            return Err(self.error("an unknown escape in a string"));
                        }
                    }
                }
                c if (c as u32) < 0x20 => {
                    self.at -= 1;
                    return Err(self.error("a control character in a string (write it escaped)"));
                }
                c => s.push(c),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut v = 0;
        for _ in 0..4 {
            let d = self
                .peek()
                .and_then(|c| c.to_digit(16))
                .ok_or_else(|| self.error("expected four hexadecimal digits after `\\u`"))?;
            v = v * 16 + d;
            self.at += 1;
        }
        Ok(v)
    }

    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !self.eat("\\u") {
                return Err(self.error("a lone surrogate in a `\\u` escape"));
            }
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err(self.error("a lone surrogate in a `\\u` escape"));
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        char::from_u32(code).ok_or_else(|| self.error("a lone surrogate in a `\\u` escape"))
    }

    fn number(&mut self) -> Result<Json, JsonError> {
        let start = self.at;
        if self.peek() == Some('-') {
            self.at += 1;
        }
        let digits = |p: &mut Parser| {
            let from = p.at;
            while matches!(p.peek(), Some('0'..='9')) {
                p.at += 1;
            }
            p.at - from
        };
        let first = self.peek();
        let whole = digits(self);
        if whole == 0 || (first == Some('0') && whole > 1) {
            self.at = start;
            return Err(self.error("a malformed number"));
        }
        let mut integral = true;
        if self.peek() == Some('.') {
            self.at += 1;
            integral = false;
            if digits(self) == 0 {
                self.at = start;
                return Err(self.error("a malformed number"));
            }
        }
        if matches!(self.peek(), Some('e' | 'E')) {
            self.at += 1;
            integral = false;
            if matches!(self.peek(), Some('+' | '-')) {
                self.at += 1;
            }
            if digits(self) == 0 {
                self.at = start;
                return Err(self.error("a malformed number"));
            }
        }
        let text: String = self.chars[start..self.at].iter().collect();
        if integral && let Ok(i) = text.parse::<i64>() {
            return Ok(Json::Int(i));
        }
        text.parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .map(Json::Real)
            .ok_or_else(|| {
                self.at = start;
                self.error("a number out of range")
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn documents_read_back_as_written() {
        let doc = parse(
            r#" {"a": [1, -2.5, 3e2, true, null], "b": "x\"\\\n\u00e9\ud83d\ude00", "c": {}} "#,
        )
        .unwrap();
        assert_eq!(doc.get("a").unwrap().as_array().unwrap()[0], Json::Int(1));
        assert_eq!(
            doc.get("a").unwrap().as_array().unwrap()[2],
            Json::Real(300.0)
        );
        assert_eq!(doc.get("b").unwrap().as_str(), Some("x\"\\\né😀"));
        assert_eq!(parse(&doc.to_text()).unwrap(), doc);
    }

    #[test]
    fn mistakes_are_placed() {
        for (text, column, said) in [
            (r#"{"a": 1"#, 7, "cut off"),
            (r#"{"a" 1}"#, 5, "expected `:`"),
            ("[01]", 1, "malformed number"),
            ("[1,]", 3, "expected a value"),
            ("\"a\u{1}\"", 2, "control character"),
            ("{} x", 3, "text after the end"),
            ("[1e999]", 1, "out of range"),
            (r#""\ud800""#, 7, "lone surrogate"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.column, column, "{text}: {e:?}");
            assert!(e.message.contains(said), "{text}: {e:?}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(
            parse(&deep)
                .unwrap_err()
                .message
                .contains("nested too deeply")
        );
    }

    fn json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            any::<i64>().prop_map(Json::Int),
            (-1e300f64..1e300).prop_map(Json::Real),
            "\\PC{0,8}".prop_map(Json::Str),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
                prop::collection::vec(("[a-z\\n\"]{0,4}", inner), 0..4).prop_map(Json::Object),
            ]
        })
    }

    proptest! {
        #[test]
        fn what_is_written_reads_back(doc in json()) {
            prop_assert_eq!(parse(&doc.to_text()).unwrap(), doc);
        }

        #[test]
        fn any_text_is_read_without_a_panic(text in "\\PC{0,40}") {
            let _ = parse(&text);
        }
    }
}
