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

/// A URL's text after `scheme://`, split at the `@` that ends its user name and password:
/// the last `@` followed by text that reads as hosts and ports. Users write passwords with an
/// `@`, `/`, `?` or `#` left unescaped; read this way, those stay inside the password (and out
/// of every message) instead of becoming a host, a path or a query.
fn split_userinfo(rest: &str) -> (Option<&str>, &str) {
    let hosts_like = |after: &str| {
        after
            .split(['/', '?'])
            .next()
            .unwrap_or("")
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._~%:,[]-".contains(c))
    };
    // A password given in the query may hold an `@` too: only the text before it is searched.
    let query_password = ["?password=", "&password=", "?sslpassword=", "&sslpassword="]
        .iter()
        .filter_map(|p| rest.find(p))
        .min()
        .unwrap_or(rest.len());
    let at = rest[..query_password]
        .rmatch_indices('@')
        .map(|(i, _)| i)
        .find(|&i| hosts_like(&rest[i + 1..]))
        .or_else(|| rest[..query_password].rfind('@'));
    match at {
        Some(i) => (Some(&rest[..i]), &rest[i + 1..]),
        None => (None, rest),
    }
}

/// The pieces of a URL's query that may be shown: `key=value` of a known parameter that is
/// not a secret, up to the first secret. A piece without `=`, of an unknown key, or after a
/// password may be the rest of a password whose `&` was not escaped, so it is left out.
fn shown_query(query: &str) -> String {
    query
        .split('&')
        .take_while(|pair| !SECRET_KEYS.contains(&pair.split('=').next().unwrap_or("")))
        .filter(|pair| {
            pair.split_once('=')
                .is_some_and(|(k, _)| URL_PARAMETERS.contains(&k) && !SECRET_KEYS.contains(&k))
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A connection string without its passwords: the one of a URL's authority, and any
/// `password` or `sslpassword` parameter of its query or of libpq's key-value form.
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return redact_key_values(url);
    };
    let (userinfo, rest) = split_userinfo(rest);
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let query = shown_query(query);
    let query = if query.is_empty() {
        query
    } else {
        format!("?{query}")
    };
    match userinfo {
        Some(user) => {
            let user = user.split([':', '/', '?', '#', '@']).next().unwrap_or("");
            format!("{scheme}://{user}@{rest}{query}")
        }
        None => format!("{scheme}://{rest}{query}"),
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
/// culprit): an `@`, `/`, `?` or `#` left unescaped in the user name or password, a port that
/// is not one, an unknown query parameter, a `connect_timeout` that is not a whole number of
/// seconds. No message quotes text that may be part of a password.
pub(crate) fn check_postgres_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("postgresql://")
        .or_else(|| url.strip_prefix("postgres://"))
        .unwrap_or(url);
    let (userinfo, rest) = split_userinfo(rest);
    if let Some(userinfo) = userinfo {
        for (c, escaped) in [('@', "%40"), ('/', "%2F"), ('?', "%3F"), ('#', "%23")] {
            if userinfo.contains(c) {
                return Err(format!(
                    "the user name or password has an unescaped `{c}`: write it {escaped}"
                ));
            }
        }
    }
    let (before_query, query) = rest.split_once('?').unwrap_or((rest, ""));
    let hosts = before_query.split('/').next().unwrap_or("");
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
    let mut after_secret = false;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let known = pair
            .split_once('=')
            .filter(|(key, _)| URL_PARAMETERS.contains(key));
        let Some((key, value)) = known else {
            // The text may be the rest of a password: name it only where it cannot be.
            return Err(if after_secret {
                "the parameter after a password is not one: an `&` in a password must be \
                 written %26"
                    .to_string()
            } else {
                let key = pair.split('=').next().unwrap_or(pair);
                format!(
                    "unknown parameter `{key}` (a storage URL takes {})",
                    URL_PARAMETERS.join(", ")
                )
            });
        };
        if matches!(
            key,
            "connect_timeout" | "keepalives_idle" | "tcp_user_timeout"
        ) && value.parse::<u64>().is_err()
        {
            let value = if after_secret { "…" } else { value };
            return Err(format!("{key}=`{value}`: give a whole number of seconds"));
        }
        after_secret |= SECRET_KEYS.contains(&key);
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
                "the user name or password has an unescaped `@`: write it %40",
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
        // Characters users forget to escape stay in the password, and out of every message.
        for (bad, said, shown) in [
            (
                "postgresql://u:pa/QX@db/k",
                "unescaped `/`: write it %2F",
                "postgresql://u@db/k",
            ),
            (
                "postgresql://u:pa?QX@db/k",
                "unescaped `?`: write it %3F",
                "postgresql://u@db/k",
            ),
            (
                "postgresql://u@db/k?password=pa&QX&sslmode=require",
                "an `&` in a password must be written %26",
                "postgresql://u@db/k",
            ),
            (
                "postgresql://db/k?password=pa@QX:1",
                "",
                "postgresql://db/k",
            ),
        ] {
            let e = check_postgres_url(bad).err().unwrap_or_default();
            assert!(e.contains(said) && !e.contains("QX"), "{bad}: {e}");
            assert_eq!(crate::redact(bad), shown);
        }
    }

    #[cfg(feature = "postgres")]
    #[test]
    fn a_refused_url_is_shown_without_its_password() {
        let e = crate::Location::parse("postgresql://me:s3cr@t@db.example:5432/k")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("s3cr"), "{e}");
        assert!(e.contains("write it %40"), "{e}");
    }

    /// The parser fuzzed: URLs made of a password with every character users forget to
    /// escape, hosts, ports and query parameters good and bad. Whatever the URL, reading it
    /// never panics, and neither the URL as shown nor any refusal holds a piece of the
    /// password (each piece is fenced by a marker that appears nowhere else).
    mod fuzz {
        use super::check_postgres_url;
        use crate::{Location, redact};
        use proptest::prelude::*;

        const MARK: &str = "Zq9";

        fn password() -> impl Strategy<Value = String> {
            proptest::collection::vec("[a-z0-9@:/?#&=%,\\[\\] .]{0,6}", 1..4)
                .prop_map(|pieces| format!("{MARK}{}{MARK}", pieces.join(MARK)))
        }

        fn url() -> impl Strategy<Value = (String, String)> {
            (
                prop_oneof![Just("postgresql"), Just("postgres")],
                "[a-z]{0,5}",
                password(),
                proptest::bool::ANY,
                "[a-z.]{0,8}|\\[::1\\]",
                proptest::option::of("[0-9a-z]{0,6}"),
                "[a-z]{0,5}",
                proptest::collection::vec(
                    (
                        prop_oneof![
                            Just("sslmode"),
                            Just("connect_timeout"),
                            Just("password"),
                            Just("sslpassword"),
                            Just("application_name"),
                            Just("bogus"),
                        ],
                        "[a-z0-9]{0,4}",
                    ),
                    0..3,
                ),
                proptest::bool::ANY,
            )
                .prop_map(
                    |(scheme, user, pass, in_authority, host, port, db, query, pass_in_query)| {
                        let port = port.map(|p| format!(":{p}")).unwrap_or_default();
                        let userinfo = if in_authority {
                            format!("{user}:{pass}@")
                        } else if user.is_empty() {
                            String::new()
                        } else {
                            format!("{user}@")
                        };
                        let mut pairs: Vec<String> =
                            query.iter().map(|(k, v)| format!("{k}={v}")).collect();
                        if pass_in_query || !in_authority {
                            pairs.push(format!("password={pass}"));
                        }
                        let query = if pairs.is_empty() {
                            String::new()
                        } else {
                            format!("?{}", pairs.join("&"))
                        };
                        (
                            format!("{scheme}://{userinfo}{host}{port}/{db}{query}"),
                            pass,
                        )
                    },
                )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(
                std::env::var("KTUNE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(3000)
            ))]

            #[test]
            fn no_url_leaks_its_password_or_panics((url, _pass) in url()) {
                let shown = redact(&url);
                prop_assert!(!shown.contains(MARK), "{url} shown as {shown}");
                if let Err(why) = check_postgres_url(&url) {
                    prop_assert!(!why.contains(MARK), "{url}: {why}");
                }
                match Location::parse(&url) {
                    Ok(location) => {
                        let shown = location.display();
                        prop_assert!(!shown.contains(MARK), "{url} shown as {shown}");
                    }
                    Err(e) => {
                        let e = e.to_string();
                        prop_assert!(!e.contains(MARK), "{url}: {e}");
                    }
                }
            }

            #[test]
            fn any_text_is_read_without_a_panic(url in "(postgres(ql)?://|sqlite://)?\\PC{0,40}") {
                let _ = redact(&url);
                let _ = check_postgres_url(&url);
                let _ = Location::parse(&url).map(|l| l.display());
            }
        }
    }
}
