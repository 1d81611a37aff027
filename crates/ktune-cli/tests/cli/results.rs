//! `ktune results` for a user who may read a study but not write where it lies (a shared
//! project folder, a cluster file system, an archive).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use crate::common::{Succeeds, assert_mentions, ktune_in, written};

const SPEC: &str = "[[parameter]]\nname = \"x\"\nvalues = [1, 2, 4, 8]\n\n[runner]\n\
run = \"echo t: {x}\"\nobjective = { name = \"time\", regex = 't: (?P<value>[0-9.]+)' }\n\n\
[budget]\nmax_evaluations = 4\n";

/// The user the reads run as: `nobody` where the tests run as root (whom no permission
/// stops), this user otherwise; `None` (with the reason printed) where `nobody` cannot run
/// the test binary (a checkout in a folder only root may enter).
fn reader() -> Option<Vec<String>> {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some(Vec::new());
    }
    let run_as = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ];
    let ok = std::process::Command::new(run_as[0])
        .args(&run_as[1..])
        .arg(env!("CARGO_BIN_EXE_ktune"))
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "SKIPPED: reading as a user without write access needs `setpriv` and a ktune binary \
             that the user `nobody` may run"
        );
        return None;
    }
    Some(run_as.iter().map(|s| s.to_string()).collect())
}

fn read_as(reader: &[String], dir: &Path, args: &[&str]) -> Output {
    let mut c = match reader.split_first() {
        Some((first, rest)) => {
            let mut c = std::process::Command::new(first);
            c.args(rest).arg(env!("CARGO_BIN_EXE_ktune"));
            c.current_dir(dir);
            c
        }
        None => ktune_in(dir),
    };
    c.args(args).output().unwrap()
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn results_are_read_without_write_access_and_an_older_state_is_named() {
    let Some(reader) = reader() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    written(&dir, "s.toml", SPEC);
    let out = ktune_in(&dir).args(["tune", "s.toml"]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let db = dir.join("s.db");
    let url = format!("sqlite://{}", db.display());
    set_mode(tmp.path(), 0o755);
    set_mode(&db, 0o444);
    set_mode(&dir, 0o555);
    for (args, shown) in [
        (vec!["results", "s.db"], ["x=8", "x=1"]),
        (vec!["results", "--storage", url.as_str()], ["x=8", "x=1"]),
        (
            // Every configuration was measured, in the strategy's order.
            vec!["results", "s.db", "--format", "csv"],
            ["seq,x,status", ",8,ok,8,"],
        ),
    ] {
        let out = read_as(&reader, &dir, &args);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{args:?}: {stderr}");
        assert_mentions(&stdout, &shown);
        assert!(!stderr.contains("warning"), "{args:?}: {stderr}");
    }

    // A writer that has not ended leaves results in the write-ahead log: a reader who
    // cannot create SQLite's shared-memory file there sees the file's older state, and is
    // told so.
    set_mode(&dir, 0o755);
    set_mode(&db, 0o644);
    let fingerprint = ktune_store::Store::open_existing(&db)
        .unwrap()
        .fingerprint()
        .unwrap();
    let mut writer = ktune_store::Store::open(&db, &fingerprint).unwrap();
    writer.set_meta("max_evaluations", "99").unwrap();
    // Still open, as in a tuning run that goes on.
    std::mem::forget(writer);
    let _ = std::fs::remove_file(dir.join("s.db-shm"));
    set_mode(&dir, 0o555);
    let out = read_as(&reader, &dir, &["results", "s.db", "--studies"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    set_mode(&dir, 0o755);
    assert!(out.status.success(), "{stderr}");
    assert_mentions(&stderr, &["s.db-wal", "shown is the state before them"]);
    let budget = stdout.lines().nth(1).unwrap_or_default().to_string();
    assert!(
        budget.split_whitespace().nth(5) == Some("4"),
        "the file's own state has the budget 4: {stdout}"
    );
}

/// What `ktune report`, `results --out` and `export` write never replaces the study it was
/// made from, nor any results database (before, `ktune report s.db -o s.db` made s.db a
/// web page).
#[test]
fn an_output_never_replaces_a_results_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    std::fs::copy(
        crate::common::repo("crates/ktune-report/tests/fixture/study.db"),
        &db,
    )
    .unwrap();
    let other = dir.path().join("other.db");
    std::fs::copy(&db, &other).unwrap();
    let before = std::fs::read(&db).unwrap();
    let d = db.to_str().unwrap();
    let o = other.to_str().unwrap();
    for (args, said) in [
        (vec!["report", d, "-o", d], "is the file being read"),
        (vec!["report", d, "-o", o], "is an SQLite database"),
        (
            vec!["results", d, "--format", "csv", "--out", d],
            "is an SQLite database",
        ),
        (vec!["export", d, "--wisdom", d], "is the file being read"),
        (vec!["export", d, "--header", o], "is an SQLite database"),
    ] {
        crate::common::ktune()
            .args(&args)
            .fails_saying(&[said, "choose another file"]);
    }
    assert_eq!(std::fs::read(&db).unwrap(), before);
    assert_eq!(std::fs::read(&other).unwrap(), before);
}

/// A storage URL given where a file is expected is named as one, without its password;
/// nor does any other message say the password.
#[test]
fn a_password_in_a_misplaced_url_is_never_said() {
    let url = "postgresql://tuner:s3cret-pw@127.0.0.1:1/db";
    let dir = tempfile::tempdir().unwrap();
    let spec = written(dir.path(), "s.toml", SPEC);
    let spec = spec.to_str().unwrap();
    for args in [
        vec!["results", url],
        vec!["report", url],
        vec!["dashboard", url],
        vec!["results", spec, "--export", url],
        vec!["space", spec, "--prior", url],
        vec![
            "space",
            spec,
            "--prior",
            "host=h password=s3cret-pw dbname=d",
        ],
        vec!["results", "--storage", "sqlite://tuner:s3cret-pw@/tmp/x.db"],
    ] {
        let err = crate::common::ktune().args(&args).fails();
        assert!(!err.contains("s3cret"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let err = crate::common::ktune().args(["results", url]).fails();
    assert_mentions(&err, &["is a storage URL, not a file", "--storage"]);
}
