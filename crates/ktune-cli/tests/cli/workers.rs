//! Many workers, one study: `ktune tune --storage URL --study NAME` started several times
//! on one SQLite file and on one PostgreSQL database, with workers killed (SIGKILL) at
//! random moments and restarted.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::{
    Succeeds, assert_mentions, gcc_missing, gcc_spec, ktune_in as ktune, succeeded,
};

/// objective = (x - 5)^2 + y + 1 ms after SLEEP_MS; x = 2 crashes. Every run appends a line
/// to runs.log.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
int main(void) {
    FILE *log = fopen("runs.log", "a");
    if (log) { fprintf(log, "%d %d\n", x, y); fclose(log); }
    usleep(SLEEP_MS * 1000);
    if (x == 2) abort();
    printf("time: %d ms\n", (x - 5) * (x - 5) + y + 1);
    return 0;
}
"#;

/// A project whose program sleeps `sleep_ms` per evaluation, tuned with `budget` evaluations.
fn project(dir: &Path, budget: usize, sleep_ms: u64) {
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    let parameters = r#"
[[parameter]]
name = "x"
range = { start = 1, stop = 12, step = 1 }

[[parameter]]
name = "y"
values = [0, 1, 2, 3]
"#;
    let spec = gcc_spec(parameters, sleep_ms, budget);
    std::fs::write(dir.join("ktune.toml"), spec).unwrap();
}

/// A project in a new directory ([`project`]), or `None` (the test skips) without gcc.
fn gcc_project(budget: usize, sleep_ms: u64) -> Option<tempfile::TempDir> {
    if gcc_missing() {
        return None;
    }
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), budget, sleep_ms);
    Some(dir)
}

/// Rewrites the project's spec with `edit`.
fn edit_spec(dir: &Path, edit: impl FnOnce(String) -> String) {
    let path = dir.join("ktune.toml");
    let spec = std::fs::read_to_string(&path).unwrap();
    std::fs::write(path, edit(spec)).unwrap();
}

/// Where the study lives: a storage URL and a study name.
struct Study {
    url: String,
    name: String,
}

fn start(dir: &Path, study: &Study, i: usize) -> Child {
    ktune(dir)
        .args([
            "tune",
            "ktune.toml",
            "--storage",
            &study.url,
            "--study",
            &study.name,
            "--lease",
            "1",
            "--quiet",
            "--seed",
        ])
        .arg(i.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `ktune results ARGS --format json` in `dir`, parsed.
fn results_json(dir: &Path, args: &[&str]) -> Vec<serde_json::Value> {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    crate::common::results_json(dir, &args)
}

fn stored(dir: &Path, study: &Study) -> Vec<serde_json::Value> {
    results_json(dir, &["--storage", &study.url, "--study", &study.name])
}

#[test]
fn four_workers_killed_and_restarted_record_every_configuration_once_within_the_budget() {
    let study = Study {
        url: "sqlite://study.db".into(),
        name: "faults".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    killed_and_restarted(dir.path(), &study);
}

#[test]
fn the_same_on_postgresql() {
    let Ok(url) = std::env::var("KTUNE_PG_URL") else {
        eprintln!(
            "SKIPPED: no PostgreSQL server: {} (`bash scripts/test.sh` starts one)",
            std::env::var("KTUNE_PG_SKIP").unwrap_or_else(|_| "KTUNE_PG_URL is not set".into())
        );
        return;
    };
    let study = Study {
        url,
        name: format!(
            "faults-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis()
        ),
    };
    let dir = tempfile::tempdir().unwrap();
    killed_and_restarted(dir.path(), &study);
}

/// Two workers on a PostgreSQL study over TLS that checks the server's certificate and name
/// (`scripts/test.sh` gives its server a certificate for `localhost` signed by a test CA).
#[test]
fn workers_share_a_postgresql_study_over_verified_tls() {
    let (Ok(url), Ok(tls)) = (std::env::var("KTUNE_PG_URL"), std::env::var("KTUNE_PG_TLS")) else {
        eprintln!(
            "SKIPPED: no PostgreSQL server with TLS: {} (`bash scripts/test.sh` starts one)",
            std::env::var("KTUNE_PG_SKIP")
                .or_else(|_| std::env::var("KTUNE_PG_TLS_SKIP"))
                .unwrap_or_else(|_| "KTUNE_PG_URL or KTUNE_PG_TLS is not set".into())
        );
        return;
    };
    let Some(dir) = gcc_project(6, 400) else {
        return;
    };
    let study = Study {
        url: format!(
            "{}?sslmode=verify-full&sslrootcert={tls}/ca.pem",
            url.replace("127.0.0.1", "localhost")
        ),
        name: format!("tls-{}", std::process::id()),
    };
    let workers: Vec<Child> = (0..2).map(|i| start(dir.path(), &study, i)).collect();
    for w in workers {
        succeeded(w.wait_with_output().unwrap());
    }
    let rows = stored(dir.path(), &study);
    assert_eq!(rows.len(), 6, "{rows:?}");
    let mut makers: Vec<&str> = rows.iter().filter_map(|r| r["worker"].as_str()).collect();
    makers.sort();
    makers.dedup();
    assert_eq!(makers.len(), 2, "{makers:?}");
    // The same study through a certificate of another CA is refused, saying what was checked.
    let other = study.url.replace("ca.pem", "other-ca.pem");
    ktune(dir.path())
        .args(["results", "--storage", &other, "--study", &study.name])
        .fails_saying(&["UnknownIssuer", "other-ca.pem"]);
}

/// Four workers, eight of them killed and replaced: the study ends with its budget of
/// records, each configuration once, made by several workers, each naming its device.
fn killed_and_restarted(dir: &Path, study: &Study) {
    if gcc_missing() {
        return;
    }
    let budget = 40;
    project(dir, budget, 400);
    let mut workers: Vec<Child> = (0..4).map(|i| start(dir, study, i)).collect();
    // A fixed sequence of kills (deterministic, no clock in the choice): every 400 ms one
    // worker dies mid-run and a new one takes its place.
    let mut kills = 0;
    let mut next = 4;
    let mut state = 12345u64;
    while kills < 8 {
        std::thread::sleep(Duration::from_millis(400));
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let victim = (state >> 33) as usize % workers.len();
        let _ = workers[victim].kill();
        let _ = workers[victim].wait();
        workers[victim] = start(dir, study, next);
        next += 1;
        kills += 1;
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for w in &mut workers {
        loop {
            if let Some(status) = w.try_wait().unwrap() {
                let mut err = String::new();
                if let Some(mut e) = w.stderr.take() {
                    use std::io::Read;
                    let _ = e.read_to_string(&mut err);
                }
                assert!(status.success(), "a worker failed: {err}");
                break;
            }
            assert!(Instant::now() < deadline, "the workers did not finish");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let rows = stored(dir, study);
    assert_eq!(rows.len(), budget, "the study holds exactly its budget");
    let mut configs: Vec<String> = rows.iter().map(|r| format!("{}", r["params"])).collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), budget, "a configuration was recorded twice");
    // The crash of x = 2 is recorded as a failure like any other outcome.
    assert!(
        rows.iter()
            .all(|r| r["status"] == "ok" || r["status"] == "runtime"),
        "{rows:?}"
    );
    // Every record names its worker and device; several workers recorded.
    assert!(
        rows.iter()
            .all(|r| r["worker"].is_string() && r["device"].is_string()),
        "{:?}",
        rows[0]
    );
    let mut makers: Vec<&str> = rows.iter().filter_map(|r| r["worker"].as_str()).collect();
    makers.sort();
    makers.dedup();
    assert!(makers.len() >= 4, "{makers:?}");
    // Killed workers' runs may be repeated by the worker that took over, never recorded twice.
    let runs = std::fs::read_to_string(dir.join("runs.log")).unwrap_or_default();
    assert!(runs.lines().count() >= budget);
    // The study copies out into a file of its own that lists the same.
    let export = || {
        let mut c = ktune(dir);
        c.args(["results", "--storage", &study.url, "--study", &study.name])
            .args(["--export", "sqlite://copy.db"]);
        c
    };
    let out = export().succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("copied study `{}` (40 evaluations", study.name)),
        "{said}"
    );
    let copy = Study {
        url: "sqlite://copy.db".into(),
        name: study.name.clone(),
    };
    assert_eq!(stored(dir, &copy), rows);
    export().fails_saying(&["already has a study"]);
    eprintln!(
        "{}: {} runs for {budget} records, {kills} workers killed",
        study.url,
        runs.lines().count()
    );
}

/// Storage URLs that cannot work are refused before anything runs, saying what to write.
#[test]
fn bad_storage_urls_and_argument_mixes_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), 4, 400);
    let said = |args: &[&str]| ktune(dir.path()).args(args).fails();
    let tune_at = |url: &str| said(&["tune", "ktune.toml", "--storage", url, "--study", "s"]);
    let results_at = |url: &str| said(&["results", "--storage", url]);
    let e = tune_at("mysql://h/db");
    assert_mentions(&e, &["not a storage URL", "postgresql://"]);
    let e = tune_at("sqlite://");
    assert!(e.contains("no path after sqlite://"), "{e}");
    let e = tune_at("postgresql://ktune:hunter2@127.0.0.1:1/none?connect_timeout=5");
    assert!(
        e.contains("postgresql://ktune@127.0.0.1:1/none") && !e.contains("hunter2"),
        "{e}"
    );
    // TLS parameters that cannot work are refused before connecting, saying what to add.
    let e = results_at("postgresql://ktune:hunter2@127.0.0.1:1/none?sslmode=verify-full");
    assert!(
        e.contains("needs the certificate of the CA")
            && e.contains("sslrootcert=/path/to/ca.pem")
            && !e.contains("hunter2"),
        "{e}"
    );
    let e = results_at("postgresql://127.0.0.1:1/none?sslmode=verify_full");
    assert!(e.contains("`sslmode=verify_full` is not one of"), "{e}");
    let e = said(&["results"]);
    assert!(e.contains("which results?"), "{e}");
    let e = said(&["results", "a.db", "--storage", "sqlite://b.db"]);
    assert!(e.contains("not both"), "{e}");
    let e = said(&[
        "results",
        "--storage",
        "sqlite://nothing.db",
        "--export",
        "sqlite://c.db",
    ]);
    assert!(e.contains("no results database at `nothing.db`"), "{e}");
    assert!(!dir.path().join("c.db").exists());
}

/// A study whose objective is maximised although its name suggests a time: `ktune results
/// --top` ranks by the direction the study was tuned in, for a shared study and for a
/// single-process database alike.
#[test]
fn results_rank_by_the_direction_the_study_was_tuned_in() {
    let Some(dir) = gcc_project(6, 1) else {
        return;
    };
    edit_spec(dir.path(), |spec| {
        let spec = spec.replace("ms' }", "ms', direction = \"maximize\" }");
        assert!(spec.contains("maximize"));
        spec
    });
    let shared = Study {
        url: "sqlite://shared.db".into(),
        name: "up".into(),
    };
    let mut w = start(dir.path(), &shared, 1);
    assert!(w.wait().unwrap().success());
    let _ = ktune(dir.path())
        .args(["tune", "ktune.toml", "--db", "single.db", "--quiet"])
        .succeeds();
    for source in [
        vec!["--storage", "sqlite://shared.db", "--study", "up"],
        vec!["single.db"],
    ] {
        let top = |n: &str| results_json(dir.path(), &[&source[..], &["--top", n]].concat());
        let all = top("100");
        let largest = all
            .iter()
            .filter_map(|r| r["objective"].as_f64())
            .fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(
            top("1")[0]["objective"].as_f64(),
            Some(largest),
            "{source:?}: {all:?}"
        );
    }
}

#[test]
fn a_storage_section_in_the_spec_makes_the_run_a_worker_of_that_study() {
    let Some(dir) = gcc_project(4, 1) else {
        return;
    };
    edit_spec(dir.path(), |spec| {
        spec + "\n[storage]\nurl = \"sqlite://from-spec.db\"\nstudy = \"spec-study\"\n"
    });
    let _ = ktune(dir.path())
        .args(["tune", "ktune.toml", "--quiet"])
        .succeeds();
    // Recorded in the spec's study, not in a database beside the spec.
    assert!(!dir.path().join("ktune.db").exists());
    let rows = results_json(
        dir.path(),
        &[
            "--storage",
            "sqlite://from-spec.db",
            "--study",
            "spec-study",
        ],
    );
    assert_eq!(rows.len(), 4);
    // The flags win over the section: --study names another study in the same storage.
    ktune(dir.path())
        .args([
            "tune",
            "ktune.toml",
            "--quiet",
            "--study",
            "other",
            "--max-evals",
            "2",
        ])
        .succeeds();
    let rows = results_json(
        dir.path(),
        &["--storage", "sqlite://from-spec.db", "--study", "other"],
    );
    assert_eq!(rows.len(), 2);
}

/// `ktune results --studies` lists every study of a storage with its counts and budget,
/// as a table or as JSON; other formats are refused.
#[test]
fn the_studies_of_a_storage_are_listed() {
    let Some(dir) = gcc_project(2, 400) else {
        return;
    };
    for (i, name) in ["first", "second"].iter().enumerate() {
        let study = Study {
            url: "sqlite://shared.db".into(),
            name: name.to_string(),
        };
        succeeded(start(dir.path(), &study, i).wait_with_output().unwrap());
    }
    let list = |extra: &[&str]| {
        let out = ktune(dir.path())
            .args(["results", "--storage", "sqlite://shared.db", "--studies"])
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, table, err) = list(&[]);
    assert!(ok, "{err}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(
        lines[0].starts_with("study") && lines[0].contains("evaluations"),
        "{table}"
    );
    assert!(
        lines[1].starts_with("first") && lines[2].starts_with("second"),
        "{table}"
    );
    let (ok, json, err) = list(&["--format", "json"]);
    assert!(ok, "{err}");
    let studies: serde_json::Value = serde_json::from_str(&json).unwrap();
    for s in studies.as_array().unwrap() {
        assert_eq!(s["evaluations"], 2, "{s}");
        assert_eq!(s["budget"], 2, "{s}");
        assert_eq!(s["direction"], "minimize", "{s}");
        assert_eq!(s["workers"], 1, "{s}");
    }
    let (ok, _, err) = list(&["--format", "csv"]);
    assert!(!ok && err.contains("as a table or as json"), "{err}");
    // Without --study, the studies are named, and how to list them.
    let out = ktune(dir.path())
        .args(["results", "--storage", "sqlite://shared.db"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("first, second"), "{err}");
}

/// A shared study's first worker proposes what `ktune tune` alone proposes with the same
/// seed; a second worker started with that seed draws from a stream of its own.
#[test]
fn workers_draw_their_own_random_numbers_and_the_first_reproduces_a_single_run() {
    let Some(dir) = gcc_project(6, 1) else {
        return;
    };
    let tune = |extra: &[&str]| {
        let _ = ktune(dir.path())
            .args(["tune", "ktune.toml", "--quiet", "--seed", "3"])
            .args(extra)
            .succeeds();
    };
    let configs = |rows: Vec<serde_json::Value>| -> Vec<String> {
        rows.iter().map(|r| r["params"].to_string()).collect()
    };
    tune(&["--no-default", "--db", "single.db"]);
    let single = configs(results_json(dir.path(), &["single.db"]));
    assert_eq!(single.len(), 6);
    tune(&[
        "--no-default",
        "--storage",
        "sqlite://shared.db",
        "--study",
        "first",
    ]);
    let first = configs(results_json(
        dir.path(),
        &["--storage", "sqlite://shared.db", "--study", "first"],
    ));
    assert_eq!(first, single);
    // The same seed for the second worker of a study: another stream. The first worker
    // joins, fixes the budget at 12 and stops at once (at most one evaluation).
    let pair = [
        "--no-default",
        "--storage",
        "sqlite://shared.db",
        "--study",
        "pair",
    ];
    tune(
        &[
            &pair[..],
            &["--max-evals", "12", "--time-limit", "0.000001"],
        ]
        .concat(),
    );
    let stored = &pair[1..];
    let before = configs(results_json(dir.path(), stored)).len();
    assert!(before <= 1, "{before}");
    tune(&pair);
    let both = configs(results_json(dir.path(), stored));
    assert_eq!(both.len(), 12);
    tune(&["--no-default", "--db", "single12.db", "--max-evals", "12"]);
    let single12 = configs(results_json(dir.path(), &["single12.db"]));
    assert_eq!(single12[..6], single[..]);
    // With the first worker's stream it would have measured the single run's sequence.
    assert_ne!(both[before..], single12[before..]);
}

/// A worker joining a study whose results were measured with another version of the program
/// (edited since, or another machine's copy) says so, naming the file.
#[test]
fn a_worker_names_a_source_that_changed_under_the_studys_results() {
    let Some(dir) = gcc_project(3, 0) else {
        return;
    };
    let study = Study {
        url: "sqlite://shared.db".into(),
        name: "edited".into(),
    };
    let finish = |i: usize| {
        let out = start(dir.path(), &study, i).wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{stderr}");
        stderr
    };
    assert!(!finish(0).contains("changed since"));
    assert!(!finish(1).contains("changed since"), "nothing changed");
    let source = dir.path().join("prog.c");
    let edited = std::fs::read_to_string(&source).unwrap() + "/* edited */\n";
    std::fs::write(&source, edited).unwrap();
    let stderr = finish(2);
    assert!(
        stderr.contains("warning: prog.c changed since the 3 stored results were measured"),
        "{stderr}"
    );
    assert_eq!(stored(dir.path(), &study).len(), 3);
}

/// A worker of a shared study ends by saying its part, and why it stopped in words.
#[test]
fn a_worker_says_why_it_stopped_in_words() {
    let (dir, _) = crate::common::in_tempdir(
        "s.toml",
        "[[parameter]]\nname = \"x\"\nvalues = [1, 2, 4, 8]\n\n[runner]\n\
         run = \"echo t: {x}\"\nobjective = { name = \"time\", regex = 't: (?P<value>[0-9.]+)' }\n\n\
         [budget]\nmax_evaluations = 3\n",
    );
    let out = ktune(dir.path())
        .args(["tune", "s.toml", "--storage", "sqlite://shared.db"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("3 evaluations recorded (stopped: the evaluation budget is spent)"),
        "{said}"
    );
}

/// A study of two instances shared by two workers: each worker measures a configuration on
/// both instances (an evaluation is a configuration on all), the study ends with its budget,
/// each configuration once, every record with both instances' values.
#[test]
fn workers_share_a_study_of_instances() {
    let Some(dir) = gcc_project(8, 100) else {
        return;
    };
    edit_spec(dir.path(), |spec| {
        spec.replace(
            "[runner]",
            "[[instance]]\nname = \"a\"\nSHIFT = 0\n\n[[instance]]\nname = \"b\"\nSHIFT = 1\n\n[runner]",
        )
    });
    let study = Study {
        url: format!("sqlite://{}", dir.path().join("shared.db").display()),
        name: "instances".into(),
    };
    let workers: Vec<Child> = (0..2).map(|i| start(dir.path(), &study, i)).collect();
    for w in workers {
        succeeded(w.wait_with_output().unwrap());
    }
    let rows = stored(dir.path(), &study);
    assert_eq!(rows.len(), 8, "{rows:?}");
    let mut configs: Vec<String> = rows.iter().map(|r| r["params"].to_string()).collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), 8);
    for r in rows.iter().filter(|r| r["status"] == "ok") {
        let (a, b) = (
            r["observed"]["time@a"].as_f64().unwrap(),
            r["observed"]["time@b"].as_f64().unwrap(),
        );
        assert!(
            (r["objective"].as_f64().unwrap() - (a * b).sqrt()).abs() < 1e-9,
            "{r}"
        );
    }
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    // Every evaluation ran the program once per instance, but for one that failed on the
    // first (x = 2 aborts): not run on the second.
    let failed = rows.iter().filter(|r| r["status"] != "ok").count();
    assert_eq!(runs.lines().count(), 2 * (8 - failed) + failed, "{runs}");
}
