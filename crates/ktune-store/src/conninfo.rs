//! Connection strings as text: the pairs of libpq's key-value form, and any storage URL
//! without its secrets, for messages. The TLS parameters (`pg_tls`) and the redaction read
//! the key-value form with the one parser here.

use std::ops::Range;

/// Connection parameters whose values are secrets.
const SECRET_KEYS: [&str; 2] = ["password", "sslpassword"];

/// One `key=value` of libpq's key-value form.
pub(crate) struct Pair {
    pub(crate) key: String,
    /// Unquoted and unescaped (read by the TLS parameters only).
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) value: String,
    /// The pair as written, from its key to the end of its value.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) span: Range<usize>,
    /// The value as written (quotes and escapes included).
    pub(crate) written: Range<usize>,
}

/// Why [`pairs`] stopped before the end of the string.
pub(crate) enum Stop {
    /// A word without `=` (the string is not in the key-value form from there on).
    NotAPair(String),
    /// A quoted value without its closing quote: the key, and the value as written.
    Unclosed(String, Range<usize>),
}

/// The pairs of `conn` in libpq's key-value form (`host=h user='a b'`: whitespace around `=`,
/// single quotes, backslash escapes), and where it stopped, when it did.
pub(crate) fn pairs(conn: &str) -> (Vec<Pair>, Option<Stop>) {
    let mut out = Vec::new();
    let mut chars = conn.char_indices().peekable();
    let at = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        chars.peek().map_or(conn.len(), |&(i, _)| i)
    };
    loop {
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let Some(&(start, _)) = chars.peek() else {
            return (out, None);
        };
        let mut key = String::new();
        while let Some((_, c)) = chars.next_if(|(_, c)| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        if chars.next_if(|(_, c)| *c == '=').is_none() {
            return (out, Some(Stop::NotAPair(key)));
        }
        while chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
        let from = at(&mut chars);
        let mut value = String::new();
        if chars.next_if(|(_, c)| *c == '\'').is_some() {
            loop {
                match chars.next() {
                    Some((_, '\'')) => break,
                    Some((_, '\\')) => value.extend(chars.next().map(|(_, c)| c)),
                    Some((_, c)) => value.push(c),
                    None => return (out, Some(Stop::Unclosed(key, from..conn.len()))),
                }
            }
        } else {
            while let Some((_, c)) = chars.next_if(|(_, c)| !c.is_whitespace()) {
                if c == '\\' {
                    value.extend(chars.next().map(|(_, c)| c));
                } else {
                    value.push(c);
                }
            }
        }
        let end = at(&mut chars);
        out.push(Pair {
            key,
            value,
            span: start..end,
            written: from..end,
        });
    }
}

/// A connection string without its passwords: the one of a URL's authority, and any
/// `password` or `sslpassword` parameter of its query or of libpq's key-value form.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_key_values(url);
    };
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|pair| !SECRET_KEYS.contains(&pair.split('=').next().unwrap_or("")))
                .collect();
            (rest, kept.join("&"))
        }
        None => (rest, String::new()),
    };
    let query = if query.is_empty() {
        query
    } else {
        format!("?{query}")
    };
    let (authority, tail) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split(':').next().unwrap_or("");
            format!("{scheme}://{user}@{host}{tail}{query}")
        }
        None => format!("{scheme}://{authority}{tail}{query}"),
    }
}

/// libpq's key-value form without its secret parameters; past a word that is not a pair,
/// nothing is recognised, so nothing is shown.
fn redact_key_values(conn: &str) -> String {
    let (pairs, stop) = pairs(conn);
    let secret = |key: &str| SECRET_KEYS.contains(&key);
    let mut shown: Vec<String> = pairs
        .iter()
        .filter(|p| !secret(&p.key))
        .map(|p| format!("{}={}", p.key, &conn[p.written.clone()]))
        .collect();
    match stop {
        Some(Stop::NotAPair(word)) => shown.push(word),
        Some(Stop::Unclosed(key, written)) if !secret(&key) => {
            shown.push(format!("{key}={}", &conn[written]));
        }
        _ => {}
    }
    shown.join(" ")
}
