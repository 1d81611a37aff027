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

/// The query parameters a PostgreSQL storage URL may take: those tokio-postgres reads, and
/// the TLS files ktune reads itself (`pg_tls`).
const URL_PARAMETERS: [&str; 22] = [
    "user",
    "password",
    "dbname",
    "options",
    "application_name",
    "sslmode",
    "sslnegotiation",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "sslpassword",
    "host",
    "hostaddr",
    "port",
    "connect_timeout",
    "tcp_user_timeout",
    "keepalives",
    "keepalives_idle",
    "keepalives_interval",
    "keepalives_retries",
    "target_session_attrs",
    "load_balance_hosts",
];

/// What is wrong with a `postgresql://` URL, named, before it reaches the driver (whose
/// "invalid connection string", or a DNS error for a host that is half a password, names no
/// culprit): an `@` left unescaped in the user name or password, a port that is not one, an
/// unknown query parameter, a `connect_timeout` that is not a whole number of seconds.
pub(crate) fn check_postgres_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("postgresql://")
        .or_else(|| url.strip_prefix("postgres://"))
        .unwrap_or(url);
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let authority = before_query.split('/').next().unwrap_or("");
    let ats = authority.matches('@').count();
    if ats > 1 {
        return Err(format!(
            "the part before the host has {ats} `@`: an `@` in the user name or password must be \
             written %40"
        ));
    }
    let hosts = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    for host in hosts.split(',').filter(|h| !h.is_empty()) {
        // `[::1]:5432`: the port follows the bracket.
        let port = match host.strip_prefix('[') {
            Some(v6) => v6.split_once(']').and_then(|(_, p)| p.strip_prefix(':')),
            None => host.rsplit_once(':').map(|(_, p)| p),
        };
        if let Some(p) = port
            && !p.parse::<u16>().is_ok_and(|p| p > 0)
        {
            return Err(format!("port `{p}` is not a port number (1 to 65535)"));
        }
    }
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if !URL_PARAMETERS.contains(&key) {
            return Err(format!(
                "unknown parameter `{key}` (a storage URL takes {})",
                URL_PARAMETERS.join(", ")
            ));
        }
        if matches!(
            key,
            "connect_timeout" | "keepalives_idle" | "tcp_user_timeout"
        ) && value.parse::<u64>().is_err()
        {
            return Err(format!("{key}=`{value}`: give a whole number of seconds"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod url_tests {
    use super::check_postgres_url;

    #[test]
    fn postgres_url_mistakes_are_named() {
        for ok in [
            "postgresql://u:p%40ss@db.example:5432/ktune?sslmode=verify-full&connect_timeout=5",
            "postgres://u@[::1]:5433/k",
            "postgresql://u@h1:5432,h2:5433/k?target_session_attrs=read-write",
            "postgresql:///k",
        ] {
            assert_eq!(check_postgres_url(ok), Ok(()), "{ok}");
        }
        for (bad, said) in [
            (
                "postgresql://u:p@ss@db/k",
                "an `@` in the user name or password must be written %40",
            ),
            (
                "postgresql://u@db:99999/k",
                "port `99999` is not a port number",
            ),
            ("postgresql://u@db:0/k", "port `0`"),
            (
                "postgresql://u@db/k?sslmod=require",
                "unknown parameter `sslmod`",
            ),
            (
                "postgresql://u@db/k?connect_timeout=abc",
                "connect_timeout=`abc`: give a whole number",
            ),
        ] {
            let e = check_postgres_url(bad).unwrap_err();
            assert!(e.contains(said), "{bad}: {e}");
        }
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_refused_url_is_shown_without_its_password() {
        let e = crate::Location::parse("postgresql://me:s3cr@t@db.example:5432/k")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cr"), "{e}");
        assert!(e.contains("written %40"), "{e}");
    }
}
