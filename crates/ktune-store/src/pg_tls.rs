//! TLS to the PostgreSQL server, with libpq's connection parameters.
//!
//! A storage URL takes libpq's `sslmode`, `sslrootcert`, `sslcert` and `sslkey` (in its query,
//! or as `key=value` pairs in the key-value form), so a connection string that works with
//! `psql` works with ktune. tokio-postgres knows only `disable`, `prefer` and `require` and
//! leaves the checking of certificates to the TLS connector, so these parameters are taken
//! off the string here and turned into a rustls configuration that checks what libpq checks:
//!
//! | `sslmode` | encrypted | certificate checked |
//! |---|---|---|
//! | `disable` | never | – |
//! | `allow`, `prefer` (default) | when the server offers it | against the root certificate where one is found |
//! | `require` | always | the same |
//! | `verify-ca` | always | chain to the root certificate |
//! | `verify-full` | always | chain, and the host name in the URL |
//!
//! On a Unix-domain socket the connection is never encrypted, whatever `sslmode` says (as in
//! libpq, which ignores it there).
//!
//! The root certificate is `sslrootcert` (a PEM file, or `system` for the system's CAs),
//! else `~/.postgresql/root.crt` where it exists. A client certificate (`sslcert` and
//! `sslkey`, else `~/.postgresql/postgresql.crt` and `.key` where they exist) is presented
//! when the server asks for one.
//!
//! rustls rather than OpenSSL: ktune builds and runs without the system's OpenSSL headers or
//! library, also inside the Python wheel.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ::postgres::config::SslMode;
use percent_encoding::percent_decode_str;
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::conninfo::{self, Pair, Stop};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl Mode {
    fn parse(value: &str) -> Option<Mode> {
        Some(match value {
            "disable" => Mode::Disable,
            "allow" => Mode::Allow,
            "prefer" => Mode::Prefer,
            "require" => Mode::Require,
            "verify-ca" => Mode::VerifyCa,
            "verify-full" => Mode::VerifyFull,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Disable => "disable",
            Mode::Allow => "allow",
            Mode::Prefer => "prefer",
            Mode::Require => "require",
            Mode::VerifyCa => "verify-ca",
            Mode::VerifyFull => "verify-full",
        }
    }
}

/// Where the certificates that may sign the server's come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    /// None found: the server's certificate is not checked (`prefer` and `require` only).
    None,
    /// A PEM file (`sslrootcert`, or `~/.postgresql/root.crt`).
    File(PathBuf),
    /// The system's certificate store (`sslrootcert=system`).
    System,
}

/// The TLS settings of one connection string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tls {
    pub(crate) mode: Mode,
    pub(crate) roots: Roots,
    /// The client certificate and its key, both PEM files.
    pub(crate) client: Option<(PathBuf, PathBuf)>,
}

/// A connection string's TLS parameter that cannot be used, with what to do instead.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TlsError(pub(crate) String);

impl fmt::Display for TlsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The TLS parameters this module handles; the rest of the string goes to tokio-postgres.
const KEYS: [&str; 5] = ["sslmode", "sslrootcert", "sslcert", "sslkey", "sslpassword"];

/// Splits the TLS parameters off `conn` (a `postgres[ql]://` URL or libpq's key-value form):
/// the string tokio-postgres can parse, and the settings. `home` is where `~/.postgresql`
/// is looked for (the user's home directory; none: no default files).
pub(crate) fn split(conn: &str, home: Option<&Path>) -> Result<(String, Tls), TlsError> {
    let (rest, params) = if conn.starts_with("postgres://") || conn.starts_with("postgresql://") {
        split_url(conn)
    } else {
        split_key_values(conn)?
    };
    let mut given = std::collections::HashMap::new();
    for (key, value) in params {
        // libpq takes the last of a repeated parameter.
        given.insert(key, value);
    }
    if given.contains_key("sslpassword") {
        return Err(TlsError(
            "`sslpassword` (an encrypted client key) is not supported; give an unencrypted key \
             (`openssl pkey -in key.pem -out plain.pem`) and keep it readable only by you"
                .into(),
        ));
    }
    let system = given.get("sslrootcert").map(String::as_str) == Some("system");
    let mode = match given.get("sslmode") {
        Some(value) => Mode::parse(value).ok_or_else(|| {
            TlsError(format!(
                "`sslmode={value}` is not one of disable, allow, prefer, require, verify-ca, verify-full"
            ))
        })?,
        // libpq: the system's CAs make sense only with the host name checked.
        None if system => Mode::VerifyFull,
        None => Mode::Prefer,
    };
    if system && mode != Mode::VerifyFull {
        return Err(TlsError(format!(
            "`sslrootcert=system` needs `sslmode=verify-full` (not `{}`): a public CA's certificate proves nothing without the host name",
            mode.name()
        )));
    }
    let dot = home.map(|h| h.join(".postgresql"));
    let roots = match given.get("sslrootcert") {
        _ if mode == Mode::Disable => Roots::None,
        Some(_) if system => Roots::System,
        Some(path) => Roots::File(PathBuf::from(path)),
        None => match dot.as_ref().map(|d| d.join("root.crt")) {
            Some(path) if path.is_file() => Roots::File(path),
            _ => Roots::None,
        },
    };
    if roots == Roots::None && matches!(mode, Mode::VerifyCa | Mode::VerifyFull) {
        return Err(TlsError(format!(
            "`sslmode={}` checks the server's certificate, so it needs the certificate of the CA that signed it: add `sslrootcert=/path/to/ca.pem` (or `sslrootcert=system` for a server with a public CA's certificate), or put it at ~/.postgresql/root.crt",
            mode.name()
        )));
    }
    let cert = given.get("sslcert").map(PathBuf::from);
    let key = given.get("sslkey").map(PathBuf::from);
    let default = |name: &str| dot.as_ref().map(|d| d.join(name)).filter(|p| p.is_file());
    let client = match (cert, key) {
        _ if mode == Mode::Disable => None,
        (Some(cert), Some(key)) => Some((cert, key)),
        (Some(cert), None) => match default("postgresql.key") {
            Some(key) => Some((cert, key)),
            None => {
                return Err(TlsError(format!(
                    "`sslcert={}` needs its private key: add `sslkey=/path/to/key.pem`",
                    cert.display()
                )));
            }
        },
        (None, Some(key)) => {
            return Err(TlsError(format!(
                "`sslkey={}` needs its certificate: add `sslcert=/path/to/cert.pem`",
                key.display()
            )));
        }
        (None, None) => default("postgresql.crt").zip(default("postgresql.key")),
    };
    let rest = match mode {
        // tokio-postgres checks nothing itself: these three tell it whether TLS is needed.
        Mode::Disable => with_param(&rest, conn, "sslmode", "disable"),
        Mode::Allow | Mode::Prefer => with_param(&rest, conn, "sslmode", "prefer"),
        Mode::Require | Mode::VerifyCa | Mode::VerifyFull => {
            with_param(&rest, conn, "sslmode", "require")
        }
    };
    Ok((
        rest,
        Tls {
            mode,
            roots,
            client,
        },
    ))
}

/// A URL without the TLS parameters of its query, and those parameters (percent-decoded).
fn split_url(url: &str) -> (String, Vec<(String, String)>) {
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), Vec::new());
    };
    let mut kept = Vec::new();
    let mut taken = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode_str(key).decode_utf8_lossy();
        if KEYS.contains(&key.as_ref()) {
            let value = percent_decode_str(value).decode_utf8_lossy().into_owned();
            taken.push((key.into_owned(), value));
        } else {
            kept.push(pair);
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, taken)
}

/// The key-value form (`host=h user='a b' sslmode=require`) without its TLS parameters, and
/// those parameters.
fn split_key_values(conn: &str) -> Result<(String, Vec<(String, String)>), TlsError> {
    let (pairs, stop) = conninfo::pairs(conn);
    match stop {
        // Not ours to judge: tokio-postgres says what is wrong with it.
        Some(Stop::NotAPair(_)) => return Ok((conn.to_string(), Vec::new())),
        Some(Stop::Unclosed(key, _)) => {
            return Err(TlsError(format!(
                "the value of `{key}` has no closing quote"
            )));
        }
        None => {}
    }
    let (taken, kept): (Vec<Pair>, Vec<Pair>) = pairs
        .into_iter()
        .partition(|p| KEYS.contains(&p.key.as_str()));
    let kept: Vec<&str> = kept.iter().map(|p| &conn[p.span.clone()]).collect();
    Ok((
        kept.join(" "),
        taken.into_iter().map(|p| (p.key, p.value)).collect(),
    ))
}

/// `rest` with `key=value` added, in the form of the original string `conn`.
fn with_param(rest: &str, conn: &str, key: &str, value: &str) -> String {
    if conn.starts_with("postgres://") || conn.starts_with("postgresql://") {
        let joint = if rest.contains('?') { '&' } else { '?' };
        format!("{rest}{joint}{key}={value}")
    } else if rest.is_empty() {
        format!("{key}={value}")
    } else {
        format!("{rest} {key}={value}")
    }
}

impl Tls {
    /// The mode tokio-postgres negotiates with.
    pub(crate) fn ssl_mode(&self) -> SslMode {
        match self.mode {
            Mode::Disable => SslMode::Disable,
            Mode::Allow | Mode::Prefer => SslMode::Prefer,
            Mode::Require | Mode::VerifyCa | Mode::VerifyFull => SslMode::Require,
        }
    }

    /// The rustls connector that checks what libpq would (none for `sslmode=disable`), with
    /// the certificate files read.
    pub(crate) fn connector(&self) -> Result<Option<MakeRustlsConnect>, TlsError> {
        if self.mode == Mode::Disable {
            return Ok(None);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| TlsError(format!("TLS set-up: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> = match &self.roots {
            Roots::None => Arc::new(Unchecked(provider)),
            roots => {
                let store = Arc::new(root_store(roots)?);
                let webpki = WebPkiServerVerifier::builder_with_provider(store, provider)
                    .build()
                    .map_err(|e| TlsError(format!("TLS set-up: {e}")))?;
                if self.mode == Mode::VerifyFull {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let config = match &self.client {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => {
                let chain = certificates(cert, "sslcert")?;
                let private = PrivateKeyDer::from_pem_file(key).map_err(|e| {
                    TlsError(format!(
                        "`sslkey={}`: cannot read a private key from it ({e})",
                        key.display()
                    ))
                })?;
                builder.with_client_auth_cert(chain, private).map_err(|e| {
                    TlsError(format!(
                        "`sslcert={}` and `sslkey={}` do not make a client identity ({e})",
                        cert.display(),
                        key.display()
                    ))
                })?
            }
        };
        Ok(Some(MakeRustlsConnect::new(config)))
    }

    /// A hint for a connection whose TLS failed with `detail`: what to do where the server
    /// has no TLS, else what was checked.
    pub(crate) fn hint(&self, detail: &str) -> String {
        if detail.contains("server does not support TLS") {
            return format!(
                "sslmode={} needs TLS: turn it on in the server (ssl = on) or connect with sslmode=prefer",
                self.mode.name()
            );
        }
        let what = match self.mode {
            Mode::VerifyFull => "the server's certificate chain and its host name were checked",
            Mode::VerifyCa => "the server's certificate chain was checked (not its host name)",
            _ if self.roots != Roots::None => {
                "the server's certificate chain was checked, because a root certificate was found"
            }
            _ => "the server's certificate was not checked",
        };
        let roots = match &self.roots {
            Roots::None => String::new(),
            Roots::File(path) => format!(" against {}", path.display()),
            Roots::System => " against the system's CAs".into(),
        };
        format!("sslmode={}: {what}{roots}", self.mode.name())
    }
}

fn certificates(path: &Path, key: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let read = |e: &dyn fmt::Display| {
        TlsError(format!(
            "`{key}={}`: cannot read certificates from it ({e})",
            path.display()
        ))
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| read(&e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| read(&e))?;
    if certs.is_empty() {
        return Err(read(&"it holds no PEM certificate"));
    }
    Ok(certs)
}

fn root_store(roots: &Roots) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    match roots {
        Roots::None => {}
        Roots::File(path) => {
            let key = "sslrootcert";
            for cert in certificates(path, key)? {
                store.add(cert).map_err(|e| {
                    TlsError(format!(
                        "`{key}={}`: not a usable CA certificate ({e})",
                        path.display()
                    ))
                })?;
            }
        }
        Roots::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _) = store.add_parsable_certificates(found.certs);
            if added == 0 {
                let why = found
                    .errors
                    .first()
                    .map_or("none found".to_string(), |e| e.to_string());
                return Err(TlsError(format!(
                    "`sslrootcert=system`: the system's CA certificates cannot be read ({why}); give the CA's file with `sslrootcert=/path/to/ca.pem`"
                )));
            }
        }
    }
    Ok(store)
}

/// `require` and `prefer` without a root certificate: encryption against eavesdropping, but
/// no defence against a server that impersonates another (as in libpq). The handshake's
/// signatures are still verified, so the session key is the certificate holder's.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a root certificate, whatever name the server has
/// (webpki checks the chain before the name, so a name error means the chain was good).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(tls: &Tls) -> TlsError {
        match tls.connector() {
            Err(e) => e,
            Ok(_) => panic!("{tls:?} made a connector"),
        }
    }

    fn split_ok(conn: &str, home: Option<&Path>) -> (String, Tls) {
        split(conn, home).unwrap_or_else(|e| panic!("{conn}: {e}"))
    }

    #[test]
    fn urls_lose_their_tls_parameters_and_keep_the_rest() {
        let (rest, tls) = split_ok(
            "postgresql://u@h:5/d?connect_timeout=5&sslmode=verify-full&sslrootcert=%2Ftmp%2Fa%20b.pem&application_name=x",
            None,
        );
        assert_eq!(
            rest,
            "postgresql://u@h:5/d?connect_timeout=5&application_name=x&sslmode=require"
        );
        assert_eq!(tls.mode, Mode::VerifyFull);
        assert_eq!(tls.roots, Roots::File("/tmp/a b.pem".into()));
        assert_eq!(tls.client, None);
        let (rest, tls) = split_ok("postgres://h/d", None);
        assert_eq!(rest, "postgres://h/d?sslmode=prefer");
        assert_eq!((tls.mode, tls.roots), (Mode::Prefer, Roots::None));
        // The last of a repeated parameter wins, as in libpq.
        let (rest, tls) = split_ok("postgres://h/d?sslmode=require&sslmode=disable", None);
        assert_eq!(rest, "postgres://h/d?sslmode=disable");
        assert_eq!(tls.mode, Mode::Disable);
        assert_eq!(tls.ssl_mode(), SslMode::Disable);
        assert!(tls.connector().unwrap().is_none());
    }

    #[test]
    fn key_value_strings_lose_their_tls_parameters_and_keep_the_rest() {
        let (rest, tls) = split_ok(
            r"host=h user='a b' sslmode = verify-ca sslrootcert='/x/it\'s.pem' dbname=d",
            None,
        );
        assert_eq!(rest, "host=h user='a b' dbname=d sslmode=require");
        assert_eq!(tls.mode, Mode::VerifyCa);
        assert_eq!(tls.roots, Roots::File("/x/it's.pem".into()));
        assert_eq!(split_ok("", None).0, "sslmode=prefer");
        let e = split("host=h sslrootcert='/x", None).unwrap_err();
        assert!(e.0.contains("no closing quote"), "{e}");
    }

    #[test]
    fn wrong_or_incomplete_tls_parameters_say_what_to_give() {
        let e = split("postgres://h/d?sslmode=verify", None).unwrap_err();
        assert!(e.0.contains("`sslmode=verify` is not one of"), "{e}");
        let e = split("postgres://h/d?sslmode=verify-full", None).unwrap_err();
        assert!(e.0.contains("sslrootcert=/path/to/ca.pem"), "{e}");
        let e = split("postgres://h/d?sslmode=require&sslrootcert=system", None).unwrap_err();
        assert!(e.0.contains("needs `sslmode=verify-full`"), "{e}");
        let e = split("postgres://h/d?sslcert=/c.pem", None).unwrap_err();
        assert!(e.0.contains("add `sslkey="), "{e}");
        let e = split("postgres://h/d?sslkey=/k.pem", None).unwrap_err();
        assert!(e.0.contains("add `sslcert="), "{e}");
        let e = split("postgres://h/d?sslpassword=x", None).unwrap_err();
        assert!(e.0.contains("not supported"), "{e}");
        // `system` alone means verify-full, as in libpq.
        let (_, tls) = split_ok("postgres://h/d?sslrootcert=system", None);
        assert_eq!((tls.mode, tls.roots), (Mode::VerifyFull, Roots::System));
    }

    #[test]
    fn files_under_dot_postgresql_are_used_where_they_exist() {
        let home = tempfile::tempdir().unwrap();
        let (_, tls) = split_ok("postgres://h/d?sslmode=require", Some(home.path()));
        assert_eq!((tls.roots, tls.client), (Roots::None, None));
        let dot = home.path().join(".postgresql");
        std::fs::create_dir(&dot).unwrap();
        for name in ["root.crt", "postgresql.crt", "postgresql.key"] {
            std::fs::write(dot.join(name), "").unwrap();
        }
        let (_, tls) = split_ok("postgres://h/d?sslmode=verify-ca", Some(home.path()));
        assert_eq!(tls.roots, Roots::File(dot.join("root.crt")));
        assert_eq!(
            tls.client,
            Some((dot.join("postgresql.crt"), dot.join("postgresql.key")))
        );
        let (_, tls) = split_ok("postgres://h/d?sslcert=/mine.crt", Some(home.path()));
        assert_eq!(
            tls.client,
            Some(("/mine.crt".into(), dot.join("postgresql.key")))
        );
        // An empty root file is refused when the connector is made, naming it.
        let e = refused(&tls);
        assert!(
            e.0.contains("root.crt") && e.0.contains("no PEM certificate"),
            "{e}"
        );
        let (_, tls) = split_ok("postgres://h/d?sslmode=disable", Some(home.path()));
        assert_eq!((tls.roots, tls.client), (Roots::None, None));
    }

    #[test]
    fn unreadable_certificate_files_are_named() {
        let (_, tls) = split_ok(
            "postgres://h/d?sslmode=verify-full&sslrootcert=/no/such/ca.pem",
            None,
        );
        let e = refused(&tls);
        assert!(
            e.0.contains("`sslrootcert=/no/such/ca.pem`: cannot read"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.pem");
        std::fs::write(&junk, "-----BEGIN CERTIFICATE-----\n!!!\n").unwrap();
        let (_, tls) = split_ok(
            &format!("postgres://h/d?sslrootcert={}", junk.display()),
            None,
        );
        let e = refused(&tls);
        assert!(e.0.contains("junk.pem`: cannot read"), "{e}");
        let (_, tls) = split_ok("postgres://h/d?sslmode=require", None);
        assert!(tls.connector().unwrap().is_some());
        assert!(tls.hint("").contains("not checked"), "{}", tls.hint(""));
    }
}
