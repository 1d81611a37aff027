//! Tests of the PostgreSQL storage, on a real server (`KTUNE_PG_URL`; skipped without one).

use ktune_core::{Outcome, Record, Storage, Timings, Worker};
use ktune_space::{Parameter, SearchSpace};

use super::PgStore;
use crate::conformance::{self, unique};
use crate::{Fingerprint, Location, Store, StoreError};

/// The test server's URL (`scripts/test.sh` starts one), or `None` after saying why the
/// test is skipped.
fn server() -> Option<String> {
    match std::env::var("KTUNE_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            eprintln!(
                "SKIPPED: no PostgreSQL server: {} (run the tests with `bash scripts/test.sh`, which starts one, or set KTUNE_PG_URL)",
                std::env::var("KTUNE_PG_SKIP").unwrap_or_else(|_| "KTUNE_PG_URL is not set".into())
            );
            None
        }
    }
}

/// The test server's URL and the directory of its test certificates (`ca.pem`,
/// `other-ca.pem`, `client.pem`, `client.key`), where `scripts/test.sh` made them: in
/// the server's folder, which also holds its Unix-domain socket.
fn tls_server() -> Option<(String, std::path::PathBuf)> {
    let url = server()?;
    match std::env::var("KTUNE_PG_TLS") {
        Ok(dir) if !dir.is_empty() => Some((url, dir.into())),
        _ => {
            eprintln!(
                "SKIPPED: the PostgreSQL server has no TLS: {}",
                std::env::var("KTUNE_PG_TLS_SKIP").unwrap_or_else(|_| {
                    "KTUNE_PG_TLS is not set (scripts/test.sh sets it)".into()
                })
            );
            None
        }
    }
}

/// Whether the store's connection is encrypted, as the server sees it.
fn encrypted(store: &mut PgStore) -> bool {
    store
        .client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

/// Each `sslmode` encrypts and checks what libpq's does: the test server's certificate is
/// signed by `ca.pem` for the name `localhost` only.
#[test]
fn tls_modes_encrypt_and_check_as_in_libpq() {
    let Some((url, dir)) = tls_server() else {
        return;
    };
    let ca = dir.join("ca.pem").display().to_string();
    let other = dir.join("other-ca.pem").display().to_string();
    let by_name = url.replace("127.0.0.1", "localhost");
    let connect = |url: &str| PgStore::connect(url);
    // The default, prefer, encrypts when the server offers TLS.
    assert!(encrypted(&mut connect(&url).unwrap()));
    assert!(!encrypted(
        &mut connect(&format!("{url}?sslmode=disable")).unwrap()
    ));
    assert!(encrypted(
        &mut connect(&format!("{url}?sslmode=require")).unwrap()
    ));
    let full = format!("{by_name}?sslmode=verify-full&sslrootcert={ca}");
    assert!(encrypted(&mut connect(&full).unwrap()));
    // verify-ca checks the chain only, so the address works where the name is expected.
    assert!(encrypted(
        &mut connect(&format!("{url}?sslmode=verify-ca&sslrootcert={ca}")).unwrap()
    ));
    let e = connect(&format!("{url}?sslmode=verify-full&sslrootcert={ca}")).unwrap_err();
    let text = e.to_string();
    assert!(
        matches!(e, StoreError::Postgres { .. })
            && text.contains("not valid for name")
            && text.contains("host name were checked against")
            && text.contains("ca.pem"),
        "{text}"
    );
    // A certificate signed by another CA is refused, even by verify-ca and by require
    // with a root certificate.
    for mode in ["verify-ca", "require"] {
        let e = connect(&format!("{by_name}?sslmode={mode}&sslrootcert={other}")).unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("UnknownIssuer") && text.contains(&format!("sslmode={mode}")),
            "{mode}: {text}"
        );
    }
    // On the server's Unix-domain socket (in the folder above the certificates') sslmode
    // is ignored, as in libpq: there is no TLS there.
    let port = url.rsplit_once(':').unwrap().1.split('/').next().unwrap();
    let socket_dir = dir.parent().unwrap().display().to_string();
    let socket = format!(
        "postgresql://postgres@{}:{port}/postgres?sslmode=verify-full&sslrootcert={ca}",
        socket_dir.replace('/', "%2F")
    );
    assert!(!encrypted(&mut connect(&socket).unwrap()));
    // A missing root certificate is named before anything is sent.
    let e = connect(&format!("{url}?sslmode=verify-ca&sslrootcert=/no/such.pem")).unwrap_err();
    assert!(
        matches!(e, StoreError::Url { .. }) && e.to_string().contains("/no/such.pem"),
        "{e}"
    );
}

/// The whole storage works over a checked TLS connection.
#[test]
fn postgres_over_verified_tls_passes_the_storage_conformance_suite() {
    let Some((url, dir)) = tls_server() else {
        return;
    };
    let url = format!(
        "{}?sslmode=verify-full&sslrootcert={}",
        url.replace("127.0.0.1", "localhost"),
        dir.join("ca.pem").display()
    );
    conformance::run_all(&|study, fingerprint| {
        let mut store = PgStore::open_study(&url, study, fingerprint)?;
        assert!(encrypted(&mut store));
        Ok(Box::new(store))
    });
}

/// A role that may log in only with a client certificate (`cert` in pg_hba.conf) logs in
/// with `sslcert` and `sslkey`, and is refused without them.
#[test]
fn client_certificates_log_in() {
    let Some((url, dir)) = tls_server() else {
        return;
    };
    let mut admin = PgStore::connect(&url).unwrap();
    admin
        .client
        .batch_execute(
            "DO $$ BEGIN CREATE ROLE ktune_cert LOGIN; \
             EXCEPTION WHEN duplicate_object THEN NULL; END $$",
        )
        .unwrap();
    let as_cert = url
        .replace("postgres@", "ktune_cert@")
        .replace("127.0.0.1", "localhost");
    let ca = dir.join("ca.pem").display().to_string();
    let mut store = PgStore::connect(&format!(
        "{as_cert}?sslmode=verify-full&sslrootcert={ca}&sslcert={}&sslkey={}",
        dir.join("client.pem").display(),
        dir.join("client.key").display()
    ))
    .unwrap();
    assert!(encrypted(&mut store));
    let user: String = store
        .client
        .query_one("SELECT current_user::text", &[])
        .unwrap()
        .get(0);
    assert_eq!(user, "ktune_cert");
    let e =
        PgStore::connect(&format!("{as_cert}?sslmode=verify-full&sslrootcert={ca}")).unwrap_err();
    assert!(
        e.to_string()
            .contains("requires a valid client certificate"),
        "{e}"
    );
}

#[test]
fn postgres_passes_the_storage_conformance_suite() {
    let Some(url) = server() else { return };
    conformance::run_all(&|study, fingerprint| {
        Ok(Box::new(PgStore::open_study(&url, study, fingerprint)?))
    });
}

#[test]
fn postgres_studies_are_summarised() {
    let Some(url) = server() else { return };
    crate::tests::studies_are_summarised(&Location::parse(&url).unwrap());
}

/// Sixteen workers starting at the same moment on a study that does not exist yet (a
/// Slurm job's first seconds) all open the one study.
#[test]
fn workers_starting_together_make_one_study() {
    let Some(url) = server() else { return };
    let space = conformance::space();
    let fp = Fingerprint::new(&space, "{}", "time");
    let name = unique("together");
    let barrier = std::sync::Barrier::new(16);
    let studies: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                scope.spawn(|| {
                    barrier.wait();
                    let s = PgStore::open_study(&url, &name, &fp).unwrap();
                    format!("{}", s.study)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(studies.windows(2).all(|w| w[0] == w[1]), "{studies:?}");
    let mut one = PgStore::open_existing_study(&url, Some(&name)).unwrap();
    assert_eq!(format!("{}", one.study), studies[0]);
    one.delete_study().unwrap();
}

/// A study measured in PostgreSQL copies into an SQLite file that reads back the same
/// records, rows, workers and metadata; the copy of the copy is the same again.
#[test]
fn a_postgres_study_exports_to_sqlite_exactly() {
    let Some(url) = server() else { return };
    let space = SearchSpace::new(
        vec![
            Parameter::integer("tile", [8, 16, 32]).unwrap(),
            Parameter::permutation("order", ["i", "j", "k"]).unwrap(),
        ],
        &["tile > 8"],
    )
    .unwrap();
    let fp = Fingerprint::new(&space, r#"{"command":"./gemm"}"#, "time");
    let name = unique("export");
    let mut pg = PgStore::open_study(&url, &name, &fp).unwrap();
    pg.join(
        &Worker {
            id: "node3:41".into(),
            host: "node3".into(),
            device: "NVIDIA H200".into(),
        },
        false,
    )
    .unwrap();
    let records: Vec<Record> = (0..6u32)
        .map(|i| Record {
            config: vec![i % 3, i],
            outcome: if i == 2 {
                Outcome::failed(
                    ktune_core::FailureKind::Compile,
                    "ptxas: too many registers",
                    Timings::default(),
                )
            } else {
                Outcome::ok(
                    vec![1.0 / f64::from(i + 1)],
                    Timings {
                        compile: 0.5,
                        benchmark: f64::from(i),
                        ..Timings::default()
                    },
                )
            },
            clock: f64::from(i) * 1.5,
        })
        .collect();
    for r in &records {
        pg.record(&space, "node3:41", r, Some(10)).unwrap();
    }
    pg.set_meta("max_evaluations", "10").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("copy.db");
    let dump = Location::Postgres(url.clone())
        .dump_study(Some(&name))
        .unwrap();
    let copy = Store::import(&file, &dump).unwrap();
    assert_eq!(copy.records(&space).unwrap(), records);
    assert_eq!(copy.rows().unwrap(), pg.rows().unwrap());
    assert_eq!(
        copy.rows().unwrap()[0].device.as_deref(),
        Some("NVIDIA H200")
    );
    assert_eq!(
        copy.rows().unwrap()[1].params[1].1,
        serde_json::json!(["i", "k", "j"])
    );
    assert_eq!(copy.meta("max_evaluations").unwrap().as_deref(), Some("10"));
    assert_eq!(copy.dump().unwrap(), dump);
    pg.delete_study().unwrap();
    let e = PgStore::open_existing_study(&url, Some(&name)).unwrap_err();
    assert!(e.to_string().contains(&format!("no study `{name}`")), "{e}");
}

/// A server that is not there, a wrong database and a bad URL are errors that say
/// which and where, without the password.
#[test]
fn unreachable_servers_and_bad_urls_are_clear_errors() {
    let space = conformance::space();
    let fp = Fingerprint::new(&space, "{}", "time");
    let refused = |url: &str| PgStore::open_study(url, "s", &fp).unwrap_err();
    // Nothing listens on port 1.
    let e =
        refused("postgresql://tuner:secret@127.0.0.1:1/ktune?connect_timeout=5&sslpassword=hidden");
    let text = e.to_string();
    assert!(matches!(e, StoreError::Url { .. }), "{text}");
    assert!(
        !text.contains("secret") && !text.contains("hidden"),
        "{text}"
    );
    let e = refused("postgresql://tuner@127.0.0.1:1/ktune?connect_timeout=5&password=secret");
    let text = e.to_string();
    assert!(matches!(e, StoreError::Postgres { .. }), "{text}");
    assert!(
        text.contains("postgresql://tuner@127.0.0.1:1/ktune") && !text.contains("secret"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("connect"), "{text}");
    let e = refused("postgresql://host:notaport/db");
    assert!(
        matches!(e, StoreError::Url { .. }) && e.to_string().contains("e.g. postgresql://"),
        "{e}"
    );
    let Some(url) = server() else { return };
    let (base, _) = url.rsplit_once('/').unwrap();
    let e = refused(&format!("{base}/no_such_database"));
    assert!(
        e.to_string().contains("no_such_database") && e.to_string().contains("does not exist"),
        "{e}"
    );
}

/// A server that answers the TLS request with PostgreSQL's "no" (a minimal peer on a
/// local port: the byte `N`), under `sslmode=require`: the message says TLS is needed
/// and how to get it; `prefer` would go on without it and is not refused for TLS.
#[test]
fn a_server_without_tls_under_require_says_what_to_do() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let peer = std::thread::spawn(move || {
        // Two connections: require (refused after `N`), then prefer (goes on in plain
        // text, and gets closed).
        for _ in 0..2 {
            let (mut s, _) = listener.accept().unwrap();
            let mut request = [0u8; 8];
            s.read_exact(&mut request).unwrap();
            // Length 8, then the SSLRequest code 80877103.
            assert_eq!(request, [0, 0, 0, 8, 4, 210, 22, 47]);
            s.write_all(b"N").unwrap();
        }
    });
    let e = PgStore::connect(&format!(
        "postgresql://u@127.0.0.1:{port}/d?sslmode=require&connect_timeout=5"
    ))
    .unwrap_err()
    .to_string();
    ktune_core::testing::assert_mentions(&e, &["server does not support TLS", "(ssl = on)"]);
    let e = PgStore::connect(&format!(
        "postgresql://u@127.0.0.1:{port}/d?connect_timeout=5"
    ))
    .unwrap_err()
    .to_string();
    assert!(!e.contains("TLS"), "{e}");
    peer.join().unwrap();
}

#[test]
fn passwords_never_reach_messages() {
    assert_eq!(
        crate::redact("postgresql://u:p@ss@h:5/d"),
        "postgresql://u@h:5/d"
    );
    assert_eq!(crate::redact("postgresql://h/d"), "postgresql://h/d");
    assert_eq!(
        crate::redact("postgresql://u@h/d?sslmode=require&password=p%40ss&sslpassword=k"),
        "postgresql://u@h/d?sslmode=require"
    );
    assert_eq!(
        crate::redact("postgresql://u:x@h/d?password=p"),
        "postgresql://u@h/d"
    );
    assert_eq!(
        crate::redact(r"host=h password='a \' b' user=u sslpassword=k dbname=d"),
        "host=h user=u dbname=d"
    );
    assert_eq!(crate::redact("host=h password = secret"), "host=h");
    assert_eq!(
        Location::parse("postgres://a:b@c/d").unwrap().display(),
        "postgres://a@c/d"
    );
}
