//! `ktune tune` end to end with a real program compiled by gcc: tuning, failures recorded,
//! resume without re-measuring, SIGKILL in the middle of a run, results export, bad input.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::common::{
    Succeeds, assert_mentions, gcc_missing, gcc_spec, in_tempdir, ktune, ktune_in, results_table,
    run_log, written,
};

/// objective = (x - 5)^2 + y + 1 ms; x = 7 does not compile; x = 2 crashes. Every run appends
/// a line to runs.log so re-measurement can be detected. SLEEP_MS slows each run down.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#if x == 7
#error "x = 7 is not supported"
#endif
int main(void) {
    FILE *log = fopen("runs.log", "a");
    if (log) { fprintf(log, "%d %d\n", x, y); fclose(log); }
    if (SLEEP_MS > 0) usleep(SLEEP_MS * 1000);
    if (x == 2) abort();
    printf("time: %d ms\n", (x - 5) * (x - 5) + y + 1);
    return 0;
}
"#;

fn project(sleep_ms: u32, budget: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("prog.c"), PROGRAM).unwrap();
    let parameters = r#"
constraints = ["x + y <= 12"]

[[parameter]]
name = "x"
range = { start = 1, stop = 9, step = 1 }
default = 1

[[parameter]]
name = "y"
values = [0, 1, 2]
default = 2
"#;
    let spec = gcc_spec(parameters, sleep_ms.into(), budget);
    std::fs::write(dir.path().join("ktune.toml"), spec).unwrap();
    dir
}

/// `ktune tune SPEC ARGS...` started in the background, its standard output and error
/// `output()` (piped, or null).
fn spawn_tune(spec: &Path, args: &[&str], output: fn() -> Stdio) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_ktune"))
        .arg("tune")
        .arg(spec)
        .args(args)
        .stdout(output())
        .stderr(output())
        .spawn()
        .unwrap()
}

fn rows(db: &Path) -> Vec<serde_json::Value> {
    crate::common::results_json(Path::new("."), &[db.as_os_str()])
}

/// Resuming after the program's source changed keeps the stored results, with a warning
/// naming the file (they were measured with the old one); unchanged, it says nothing.
#[test]
fn a_source_edited_under_stored_results_is_named_on_resume() {
    let dir = project(0, 12);
    let spec = dir.path().join("ktune.toml");
    let tune = |max: &str| {
        let out = ktune()
            .arg("tune")
            .arg(&spec)
            .args(["--max-evals", max, "--quiet"])
            .succeeds();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    assert!(!tune("3").contains("changed since"));
    assert!(!tune("5").contains("changed since"), "nothing changed");
    let source = dir.path().join("prog.c");
    let mut text = std::fs::read_to_string(&source).unwrap();
    text.push_str("/* edited */\n");
    std::fs::write(&source, text).unwrap();
    let stderr = tune("7");
    assert!(
        stderr.contains("warning: prog.c changed since the 5 stored results were measured"),
        "{stderr}"
    );
    // Still the old results' digest: the next resume says it again, now over 7.
    assert!(tune("8").contains("prog.c changed since the 7 stored results"));
    assert_eq!(rows(&dir.path().join("ktune.db")).len(), 8);
}

#[test]
fn tunes_records_failures_and_resumes_without_remeasuring() {
    let dir = project(0, 12);
    let spec = dir.path().join("ktune.toml");
    let _ = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--max-evals", "8", "--quiet"])
        .succeeds();
    let db = dir.path().join("ktune.db");
    let first = rows(&db);
    assert_eq!(first.len(), 8);
    // The default (x=1, y=2) is measured first.
    assert_eq!(first[0]["params"]["x"], 1);
    let runs_before = run_log(dir.path()).len();

    // Same command with the spec's budget of 12: resumes, measures only 4 new configurations.
    let out = ktune().arg("tune").arg(&spec).succeeds();
    let summary = String::from_utf8(out.stdout).unwrap();
    assert!(summary.contains("best configuration: x="), "{summary}");
    assert!(
        summary.contains("default configuration: time = "),
        "{summary}"
    );
    assert!(summary.contains("(4 this run, 8 resumed)"), "{summary}");
    let second = rows(&db);
    assert_eq!(second.len(), 12);
    assert_eq!(&second[..8], &first[..], "stored results changed on resume");
    let configs: std::collections::BTreeSet<String> =
        second.iter().map(|r| r["params"].to_string()).collect();
    assert_eq!(configs.len(), 12, "a configuration was measured twice");
    // Nothing re-measured: the program ran once per new configuration that compiled.
    let compiled_new = second[8..]
        .iter()
        .filter(|r| r["status"] != "compile")
        .count();
    assert_eq!(run_log(dir.path()).len(), runs_before + compiled_new);
    for r in &second {
        if r["status"] == "compile" {
            assert!(
                r["reason"]
                    .as_str()
                    .unwrap()
                    .contains("x = 7 is not supported"),
                "{r}"
            );
        }
        if r["status"] == "runtime" {
            assert!(r["reason"].as_str().unwrap().contains("signal"), "{r}");
        }
    }
    // Exports.
    let csv = ktune()
        .args(["results", "--format", "csv"])
        .arg(&db)
        .output()
        .unwrap();
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert_eq!(csv.lines().count(), 13, "{csv}");
    let t4 = ktune()
        .args(["results", "--format", "t4"])
        .arg(&db)
        .output()
        .unwrap();
    let t4: serde_json::Value = serde_json::from_slice(&t4.stdout).unwrap();
    assert_eq!(t4["results"].as_array().unwrap().len(), 12);
    let top = ktune()
        .args(["results", "--top", "1"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(String::from_utf8(top.stdout).unwrap().lines().count() == 2);
}

#[test]
fn a_killed_run_resumes_with_every_committed_result() {
    let dir = project(300, 10);
    let spec = dir.path().join("ktune.toml");
    let mut child = spawn_tune(&spec, &["--quiet"], Stdio::null);
    std::thread::sleep(Duration::from_millis(2500));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let db = dir.path().join("ktune.db");
    let before = rows(&db);
    assert!(
        !before.is_empty() && before.len() < 10,
        "killed after {} evaluations",
        before.len()
    );
    let runs_before = run_log(dir.path());

    let _ = ktune().arg("tune").arg(&spec).arg("--quiet").succeeds();
    let after = rows(&db);
    assert_eq!(after.len(), 10);
    assert_eq!(&after[..before.len()], &before[..]);
    let configs: std::collections::BTreeSet<String> =
        after.iter().map(|r| r["params"].to_string()).collect();
    assert_eq!(configs.len(), 10);
    // At most the one evaluation in flight when killed was run without being recorded.
    let new_runs = run_log(dir.path()).len() - runs_before.len();
    let compiled_new = after[before.len()..]
        .iter()
        .filter(|r| r["status"] != "compile")
        .count();
    assert_eq!(new_runs, compiled_new, "something was re-measured");
}

#[test]
fn bad_input_is_a_clear_error() {
    let dir = project(0, 5);
    let spec = dir.path().join("ktune.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    let fails = |content: String, extra: &[&str], needle: &str| {
        std::fs::write(&spec, content).unwrap();
        ktune()
            .arg("tune")
            .arg(&spec)
            .args(extra)
            .fails_saying(&[needle]);
    };
    fails(
        text.replace("run = [\"{build_dir}/prog\"]\n", ""),
        &[],
        "no `run` command",
    );
    fails(
        text.replace(
            "\"{build_dir}/prog\"]\n",
            "\"{build_dir}/prog\", \"{tile}\"]\n",
        ),
        &[],
        "`{tile}`",
    );
    fails(
        text.replace("\"gcc\"", "\"gcc-9000\""),
        &[],
        "`gcc-9000` was not found",
    );
    fails(text.clone(), &["--db", "/proc/ktune.db"], "/proc/ktune.db");
    // A missing working directory is named, not blamed on the program.
    fails(
        text.replace(
            "defines = true",
            "defines = true\nworkdir = \"no/such/dir\"",
        ),
        &[],
        "workdir `",
    );
    fails(
        text.replace(
            "defines = true",
            "defines = true\nworkdir = \"no/such/dir\"",
        ),
        &[],
        "no/such/dir` does not exist",
    );
    // Durations that are not durations: too large for one, NaN, negative.
    for (key, value) in [
        ("run_timeout", "1e300"),
        ("compile_timeout", "1e300"),
        ("run_timeout", "nan"),
        ("compile_timeout", "-1.0"),
    ] {
        fails(
            text.replace(
                "run_timeout = 10.0",
                &format!("run_timeout = 10.0\n{key} = {value}"),
            )
            .replacen(
                "run_timeout = 10.0\n",
                "",
                usize::from(key == "run_timeout"),
            ),
            &[],
            key,
        );
    }
    for limit in ["nan", "1e300", "-5", "0"] {
        let flag = format!("--time-limit={limit}");
        fails(
            text.clone(),
            &[&flag],
            "'--time-limit <TIME_LIMIT>': a time limit must be a positive number of seconds",
        );
    }
    fails(
        text.replace(
            "max_evaluations = 5",
            "max_evaluations = 5\nmax_seconds = nan",
        ),
        &[],
        "[budget]",
    );
    // A database made for another spec.
    std::fs::write(&spec, &text).unwrap();
    assert!(
        ktune()
            .arg("tune")
            .arg(&spec)
            .arg("--quiet")
            .output()
            .unwrap()
            .status
            .success()
    );
    fails(
        text.replace("values = [0, 1, 2]", "values = [0, 1, 2, 3]"),
        &[],
        "parameter `y`",
    );
}

#[test]
fn the_matmul_example_tunes_end_to_end() {
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/matmul-cpu/ktune.toml");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("matmul.db");
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args([
            "--max-evals",
            "5",
            "--strategy",
            "random",
            "--seed",
            "3",
            "--json",
            "--db",
        ])
        .arg(&db)
        .succeeds();
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Four evaluations as JSON lines (the default was measured before them), then the summary.
    let summary = &lines.last().unwrap()["summary"];
    assert_eq!(summary["evaluations"], 5);
    // The tuner's overhead excludes compiling and running: far below the whole run's time.
    let overhead = summary["overhead_ms_per_evaluation"].as_f64().unwrap();
    let seconds = summary["seconds"].as_f64().unwrap();
    assert!(
        overhead >= 0.0 && overhead * 5.0 < 0.5 * seconds * 1e3,
        "overhead {overhead} ms per evaluation in {seconds} s"
    );
    let stored = rows(&db);
    assert_eq!(stored.len(), 5);
    let best = stored
        .iter()
        .filter_map(|r| r["objective"].as_f64())
        .fold(f64::INFINITY, f64::min);
    assert!(best.is_finite() && best > 0.0, "best {best}");
    assert_eq!(summary["best"]["time"].as_f64(), Some(best));
    for r in &stored {
        if r["status"] != "ok" {
            assert!(
                !r["reason"].as_str().unwrap_or("").is_empty(),
                "a failure without a reason: {r}"
            );
        }
    }
}

#[test]
fn ctrl_c_finishes_the_evaluation_in_flight_and_stops_cleanly() {
    let dir = project(400, 20);
    let spec = dir.path().join("ktune.toml");
    let child = spawn_tune(&spec, &[], Stdio::piped);
    std::thread::sleep(Duration::from_millis(2000));
    let killed = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Ended as an interrupted tool ends, so that a script can tell it from a finished run,
    // with the summary said all the same.
    assert_eq!(out.status.code(), Some(130), "{stdout}\n{stderr}");
    assert!(!stderr.contains("error:"), "{stderr}");
    assert!(stdout.contains("stopped because interrupted"), "{stdout}");
    let stored = rows(&dir.path().join("ktune.db"));
    assert!(
        !stored.is_empty() && stored.len() < 20,
        "{} stored",
        stored.len()
    );
    // Every run that started was finished and recorded.
    let compiled = stored.iter().filter(|r| r["status"] != "compile").count();
    assert_eq!(run_log(dir.path()).len(), compiled);
}

#[test]
fn the_loop_order_example_learns_its_hidden_constraint() {
    // A permutation parameter with a constraint on it, and tiles of 512 that crash: `baco`
    // tunes it end to end; its first evaluations are uniform samples, then the forest keeps
    // it out of the crashing region.
    let spec =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/loop-order-cpu/ktune.toml");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("loop-order.db");
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--max-evals", "14", "--seed", "1", "--quiet", "--db"])
        .arg(&db)
        .succeeds();
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The summary names the order by its items.
    assert!(stdout.contains("LOOP_ORDER=["), "{stdout}");
    let stored = rows(&db);
    assert_eq!(stored.len(), 14);
    let mut orders = std::collections::BTreeSet::new();
    for r in &stored {
        // Results name the loops: a permutation of i, j and k.
        let order: Vec<&str> = r["params"]["LOOP_ORDER"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["i", "j", "k"], "{r}");
        // The known constraint on the permutation: i is never innermost.
        assert_ne!(order[2], "i", "{r}");
        orders.insert(order.join(","));
        if r["params"]["TILE"] == 512 {
            assert_eq!(r["status"], "runtime", "{r}");
            assert!(r["reason"].as_str().unwrap().contains("signal"), "{r}");
        } else {
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
    assert!(orders.len() >= 2, "{orders:?}");
    let table = ktune()
        .args(["results", "--top", "1"])
        .arg(&db)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(
        orders
            .iter()
            .any(|o| table.contains(&format!("LOOP_ORDER=[{}]", o.replace(',', ", ")))),
        "{table}"
    );
}

#[test]
fn adaptive_measurements_are_stored_shown_and_the_finalists_reranked() {
    let dir = project(0, 8);
    let spec = dir.path().join("ktune.toml");
    // The adaptive defaults instead of one run per configuration.
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("repeat = 1\n", "");
    std::fs::write(&spec, text).unwrap();
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--seed", "3", "--rerank", "3", "--rerank-rounds", "4"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The program's output does not vary, so each configuration stops at the minimum of 3
    // samples, with an interval of zero width, or after 2 when it is clearly (more than
    // twice) worse than the best so far.
    assert!(stdout.contains("mean of 3 samples"), "{stdout}");
    assert!(
        stdout.contains("re-ranked after 4 interleaved rounds"),
        "{stdout}"
    );
    assert!(stdout.contains("the winner stands"), "{stdout}");
    let stored = rows(&dir.path().join("ktune.db"));
    let ok: Vec<&serde_json::Value> = stored.iter().filter(|r| r["status"] == "ok").collect();
    let best = ok
        .iter()
        .filter_map(|r| r["objective"].as_f64())
        .fold(f64::INFINITY, f64::min);
    let mut aborted = 0;
    for r in &ok {
        let n = r["samples"]["values"].as_array().unwrap().len();
        assert_eq!(r["summary"]["n"], n);
        if r["samples"]["aborted"] == true {
            aborted += 1;
            assert!(
                n == 2 && r["objective"].as_f64().unwrap() > 2.0 * best,
                "{r}"
            );
        } else {
            assert_eq!(n, 3, "{r}");
        }
    }
    assert!(aborted > 0 && aborted < ok.len(), "{ok:?}");
    let table = results_table(&dir.path().join("ktune.db"));
    assert_mentions(&table, &["±95%", "re-ranked after"]);
    // Re-ranking again later, from the database alone (it knows its spec).
    let log_before = run_log(dir.path()).len();
    let again = ktune()
        .arg("results")
        .arg(dir.path().join("ktune.db"))
        .args(["--rerank", "2", "--rerank-rounds", "5"])
        .succeeds();
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(
        again.contains("re-ranked after 5 interleaved rounds"),
        "{again}"
    );
    // Two configurations, five rounds, interleaved.
    let runs = run_log(dir.path());
    assert_eq!(runs.len(), log_before + 10);
    let new = &runs[log_before..];
    assert!(new.chunks(2).all(|c| c == &new[..2]), "{new:?}");
    assert_ne!(new[0], new[1]);
    // `ktune export` takes the re-ranking's winner.
    let db = dir.path().join("ktune.db").display().to_string();
    let wisdom = dir.path().join("k.wisdom");
    ktune()
        .args(["export", &db, "--device", &format!("{db}=Test CPU")])
        .args(["--size", &format!("{db}=1"), "--wisdom"])
        .arg(&wisdom)
        .succeeds();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert_mentions(&text, &["\"chosen\": \"the re-ranking's winner\""]);
}

/// Runs ktune with its standard output a pipe whose reader has already gone.
fn with_closed_stdout(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    std::process::Command::new(assert_cmd::cargo::cargo_bin("ktune"))
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_pipe_ends_every_command_quietly_and_keeps_the_results() {
    let dir = project(0, 6);
    let spec = dir.path().join("ktune.toml");
    let db = dir.path().join("ktune.db");
    // `ktune tune --json | head -1` where head has gone: the first evaluation is recorded,
    // the run stops, no panic.
    let out = with_closed_stdout(&["tune".as_ref(), spec.as_os_str(), "--json".as_ref()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let recorded = rows(&db).len();
    assert!((1..6).contains(&recorded), "{recorded} rows");
    for args in [
        vec!["results".as_ref(), db.as_os_str()],
        vec![
            "results".as_ref(),
            "--format".as_ref(),
            "csv".as_ref(),
            db.as_os_str(),
        ],
        vec!["strategies".as_ref()],
        vec!["space".as_ref(), spec.as_os_str()],
    ] {
        let out = with_closed_stdout(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    // Reading them back through closed pipes changed nothing.
    assert_eq!(rows(&db).len(), recorded);
}

/// Runs ktune with its standard error a pipe whose reader has already gone
/// (`ktune tune spec 2>&1 >/dev/null | head -1`), its standard output kept.
fn with_closed_stderr(args: &[&std::ffi::OsStr]) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    std::process::Command::new(assert_cmd::cargo::cargo_bin("ktune"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(writer)
        .output()
        .unwrap()
}

#[test]
fn a_closed_stderr_stops_tuning_as_its_reader_went_and_panics_nowhere() {
    let dir = project(0, 6);
    let spec = dir.path().join("ktune.toml");
    let db = dir.path().join("ktune.db");
    // Without a terminal the progress is one line per evaluation on stderr: its reader gone,
    // the run stops after recording what was in flight, says so on stdout and ends as a
    // tool ended by SIGPIPE (before, the first line panicked with 101 and dropped the other
    // jobs' evaluations).
    let out = with_closed_stderr(&["tune".as_ref(), spec.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(141), "{stdout}");
    assert!(stdout.contains("stopped because interrupted"), "{stdout}");
    let recorded = rows(&db).len();
    assert!((1..6).contains(&recorded), "{recorded} rows");
    // Resumed with stderr open, it measures the rest and nothing twice.
    ktune().arg("tune").arg(&spec).succeeds();
    let stored = rows(&db);
    assert_eq!(stored.len(), 6);
    // Commands whose stderr carries only notes go on to the end.
    let report = dir.path().join("report.html");
    let out = with_closed_stderr(&[
        "report".as_ref(),
        db.as_os_str(),
        "-o".as_ref(),
        report.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(std::fs::metadata(&report).unwrap().len() > 1000);
}

#[test]
fn the_log_numbers_each_evaluation_once_when_several_run_at_a_time() {
    let dir = project(0, 6);
    let spec = dir.path().join("ktune.toml");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(
        &spec,
        text.replace("repeat = 1\n", "repeat = 1\njobs = 2\n"),
    )
    .unwrap();
    let out = ktune().arg("tune").arg(&spec).succeeds();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Each batch of two is told after both are stored: numbered by place, not by count.
    for n in 1..=6 {
        let said = stderr.matches(&format!("ktune: [{n}/6] ")).count();
        assert_eq!(said, 1, "[{n}/6] said {said} times:\n{stderr}");
    }
}

#[test]
fn a_run_where_nothing_runs_says_why_and_fails() {
    let dir = project(0, 4);
    let spec = dir.path().join("ktune.toml");
    // Every configuration crashes at run time.
    let program = dir.path().join("prog.c");
    let source = std::fs::read_to_string(&program).unwrap();
    std::fs::write(&program, source.replace("if (x == 2) abort();", "abort();")).unwrap();
    let out = ktune().arg("tune").arg(&spec).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("no configuration ran successfully: 4 evaluated, 4 runtime"),
        "{stderr}"
    );
    // The reason, with an example.
    assert!(stdout.contains("4 runtime (e.g. "), "{stdout}");
    // Without a terminal, one line per evaluation as it happens.
    assert_mentions(&stderr, &["ktune: [1/4] x=", "ktune: [4/4] "]);
    assert!(stderr.contains(": failed (runtime); best -"), "{stderr}");
    // Everything is recorded all the same.
    assert_eq!(rows(&dir.path().join("ktune.db")).len(), 4);
    // The results table keeps the value column for values: the reason goes last.
    let table = results_table(&dir.path().join("ktune.db"));
    let row = table.lines().nth(1).unwrap_or_default();
    assert!(row.contains("runtime ") && row.contains(" -  "), "{table}");
    assert!(row.trim_end().ends_with("(no output))"), "{table}");
    // --json: the summary, then the same error.
    std::fs::remove_file(dir.path().join("ktune.db")).unwrap();
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .arg("--json")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let last = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string();
    assert_mentions(&last, &["\"summary\"", "\"failed\""]);
}

/// Whether process `pid` still runs (a zombie waiting for a reaper does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn a_second_ctrl_c_ends_the_program_under_test_too() {
    let (dir, spec) = in_tempdir(
        "ktune.toml",
        r#"
[[parameter]]
name = "x"
values = [1, 2]

[runner]
kind = "command"
run = ["sh", "-c", "echo $$ > pid; exec sleep 60"]
run_timeout = 120.0
repeat = 1

[budget]
max_evaluations = 2
"#,
    );
    let mut child = spawn_tune(&spec, &[], Stdio::null);
    let pid_file = dir.path().join("pid");
    let started = std::time::Instant::now();
    while !pid_file.exists()
        || std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .is_empty()
    {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the program never started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    assert!(alive(&pid));
    for _ in 0..2 {
        let sent = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(300));
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!alive(&pid), "the program under test ({pid}) still runs");
}

#[test]
fn the_time_limit_cuts_the_evaluation_in_flight() {
    // Every run takes 8 s; with a 1.5 s budget the first run is cut at the budget, recorded
    // as a timeout, and nothing else starts (the bound below leaves room for a loaded
    // machine; without the cut the run alone takes 8 s). The first run is the default
    // configuration's, measured through the study's session like any other: cut, it is
    // recorded, not lost.
    let dir = project(8000, 10);
    let spec = dir.path().join("ktune.toml");
    let started = std::time::Instant::now();
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--time-limit", "1.5", "--json"])
        .output()
        .unwrap();
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(wall < Duration::from_secs(6), "took {wall:?}\n{stdout}");
    let stored = rows(&dir.path().join("ktune.db"));
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert_eq!(stored[0]["status"], "timeout");
    assert_eq!(
        (&stored[0]["params"]["x"], &stored[0]["params"]["y"]),
        (&serde_json::json!(1), &serde_json::json!(2)),
        "{stored:?}"
    );
    let reason = stored[0]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("time budget ran out"), "{reason}");
    let last = stdout.lines().last().unwrap_or_default();
    assert!(last.contains("the time limit was reached"), "{last}");
}

#[test]
fn the_results_table_gives_the_objectives_unit_where_it_is_known() {
    let header = |spec_text: &str| {
        let dir = project(0, 3);
        let spec = dir.path().join("ktune.toml");
        let text = std::fs::read_to_string(&spec).unwrap();
        std::fs::write(&spec, spec_text_with(&text, spec_text)).unwrap();
        let _ = ktune()
            .arg("tune")
            .arg(&spec)
            .args(["--max-evals", "2", "--quiet"])
            .succeeds();
        let table = results_table(&dir.path().join("ktune.db"));
        table.lines().next().unwrap().to_string()
    };
    fn spec_text_with(text: &str, objective: &str) -> String {
        let old = "objective = { name = \"time\", regex = 'time: (?P<value>[0-9.]+) ms' }";
        assert!(text.contains(old));
        text.replace(old, objective)
    }
    let given = header(
        "objective = { name = \"time\", regex = 'time: (?P<value>[0-9.]+) ms', unit = \"ms\" }",
    );
    assert!(given.contains("time (ms)"), "{given}");
    // A value parsed from the output has no unit unless the spec gives one.
    let unknown = header("objective = { name = \"time\", regex = 'time: (?P<value>[0-9.]+) ms' }");
    assert!(
        unknown.contains("time") && !unknown.contains("time ("),
        "{unknown}"
    );
    // The measured wall time is in seconds.
    let wall = header("objective = { name = \"time\" }");
    assert!(wall.contains("time (s)"), "{wall}");
}

/// `--prior`: a study starts from an earlier one's measurements (its best first with
/// `prior_rank`, its best soon with `auto`), says how much of it maps, records it, and a
/// resumed study uses it again without being told; a `[transfer]` section does the same.
#[test]
fn a_study_starts_from_an_earlier_study_as_its_prior() {
    if crate::common::gcc_missing() {
        return;
    }
    let dir = project(0, 40);
    let spec = dir.path().join("ktune.toml");
    let tune = |args: &[&str]| {
        let out = ktune()
            .arg("tune")
            .arg(&spec)
            .args(args)
            .current_dir(dir.path())
            .succeeds();
        String::from_utf8(out.stderr).unwrap()
    };
    tune(&["--strategy", "brute_force", "--db", "a.db", "--quiet"]);
    let a = dir.path().join("a.db");
    let measured = rows(&a).len();
    assert!(measured > 20, "{measured}");
    let value = |r: &serde_json::Value| r["objective"].as_f64().unwrap_or(f64::INFINITY);

    let b = dir.path().join("b.db");
    let b_arg = b.to_str().unwrap();
    let a_arg = a.to_str().unwrap();
    // prior_rank on b.db, with `extra`.
    let prior_rank = |extra: &[&str]| {
        let args = [
            &["--strategy", "prior_rank", "--no-default", "--db", b_arg],
            extra,
        ];
        tune(&args.concat())
    };
    let said = prior_rank(&["--prior", a_arg, "--max-evals", "3"]);
    let line = format!("prior {a_arg}: {measured} of {measured} measurements map onto");
    assert!(said.contains(&line), "{said}");
    let first = rows(&b);
    assert_eq!(
        (&first[0]["params"]["x"], &first[0]["params"]["y"]),
        (&5.into(), &0.into())
    );
    assert!(first.iter().all(|r| value(r) <= 2.0), "{first:?}");

    // Resumed without --prior: the recorded prior, and the next of its order.
    let said = prior_rank(&["--max-evals", "6"]);
    assert!(said.contains(&line), "{said}");
    let all = rows(&b);
    assert_eq!(all.len(), 6);
    // `ktune results` says which priors the study started from.
    let table = results_table(&b);
    assert!(table.contains("priors of this study:"), "{table}");
    assert!(
        table.contains(&format!("  {a_arg} ({measured} measurements, ")),
        "{table}"
    );
    assert!(all[3..].iter().all(|r| value(r) <= 3.0), "{all:?}");

    // From the spec's [transfer] section (relative to the spec), with the default strategy.
    let text = std::fs::read_to_string(&spec).unwrap();
    let text = text.replace(
        "[strategy]\nname = \"random\"\n",
        "[transfer]\npriors = [\"a.db\"]\n",
    );
    written(dir.path(), "ktune.toml", &text);
    let said = tune(&["--db", "c.db", "--max-evals", "4"]);
    assert!(said.contains(&line), "{said}");
    let c = rows(&dir.path().join("c.db"));
    assert_eq!(
        c.iter().map(value).fold(f64::INFINITY, f64::min),
        1.0,
        "{c:?}"
    );

    // A prior that is not one is named before anything runs.
    written(dir.path(), "notes.txt", "x = 5 was fast\n");
    ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--db", "d.db", "--prior", "notes.txt"])
        .current_dir(dir.path())
        .fails_saying(&["notes.txt", "not a ktune study"]);
    assert!(!dir.path().join("d.db").exists());

    // The recorded prior gone (and the spec naming none): resuming says which one, and how
    // to go on.
    written(
        dir.path(),
        "ktune.toml",
        &text.replace(
            "[transfer]\npriors = [\"a.db\"]\n",
            "[strategy]\nname = \"random\"\n",
        ),
    );
    std::fs::rename(&a, dir.path().join("moved.db")).unwrap();
    ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--db", b_arg, "--max-evals", "7"])
        .current_dir(dir.path())
        .fails_saying(&[
            &format!("tuned with the prior `{a_arg}`, which cannot be read now"),
            "--prior",
            "No such file",
        ]);
    // Named anew, it goes on.
    tune(&["--db", b_arg, "--max-evals", "7", "--prior", "moved.db"]);
    assert_eq!(rows(&b).len(), 7);
}

/// A budget smaller than the study's given on the command line stops this run there, and
/// the study keeps its budget (before, the flag was ignored and the run went on to 60).
#[test]
fn a_smaller_max_evals_stops_a_resumed_run_there() {
    // A study of 20, interrupted after a few.
    let dir = project(300, 20);
    let spec = dir.path().join("ktune.toml");
    let db = dir.path().join("ktune.db");
    let child = spawn_tune(&spec, &[], Stdio::null);
    std::thread::sleep(Duration::from_millis(1500));
    std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    child.wait_with_output().unwrap();
    let before = rows(&db).len();
    assert!((1..18).contains(&before), "{before}");
    // Two more, then it stops; the study keeps its budget of 20 for a later run.
    let want = (before + 2).to_string();
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--max-evals", &want])
        .succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!(
            "has a budget of 20 evaluations; this run stops when it holds {want} (--max-evals)"
        )),
        "{said}"
    );
    assert_eq!(rows(&db).len(), before + 2);
    ktune().arg("tune").arg(&spec).succeeds();
    assert_eq!(rows(&db).len(), 20);
    // Zero is refused before anything is made.
    let fresh = dir.path().join("zero.db");
    ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--max-evals", "0", "--db"])
        .arg(&fresh)
        .fails_saying(&["--max-evals must be at least 1"]);
    assert!(!fresh.exists());
}

#[test]
fn a_default_that_breaks_the_constraints_is_named_not_dropped_in_silence() {
    let (dir, spec) = in_tempdir(
        "s.toml",
        "constraints = [\"x > 1\"]\n\n[[parameter]]\nname = \"x\"\nvalues = [1, 2, 3]\ndefault = 1\n\n\
         [runner]\nrun = \"echo t: {x}\"\n\
         objective = { name = \"time\", regex = 't: (?P<value>[0-9.]+)' }\n\n\
         [budget]\nmax_evaluations = 2\n",
    );
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .current_dir(dir.path())
        .succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("warning: the default configuration (x=1) breaks the constraints"),
        "{said}"
    );
    // A strategy from a file's [strategy] table, as `ktune bench` takes it.
    written(
        dir.path(),
        "strategy.toml",
        "[strategy]\nname = \"brute_force\"\n",
    );
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(["--strategy", "strategy.toml", "--db", "b.db"])
        .current_dir(dir.path())
        .succeeds();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("strategy brute_force"), "{said}");
}

/// A negative count, seed or time limit is named as such by every command (not taken for an
/// unknown flag with a tip that does not work).
#[test]
fn negative_numbers_and_bad_names_are_refused_naming_the_argument() {
    for (args, words) in [
        (
            vec!["tune", "x.toml", "--seed", "-1"],
            &["'--seed <SEED>'", "a seed cannot be negative"][..],
        ),
        (
            vec!["tune", "x.toml", "--max-evals", "-3"],
            &["--max-evals", "a count cannot be negative"],
        ),
        (
            vec!["tune", "x.toml", "--time-limit", "-0.5"],
            &["--time-limit", "must be a positive number of seconds"],
        ),
        (
            vec!["bench", "x.json", "--seeds", "-2"],
            &["--seeds", "a number of seeds cannot be negative"],
        ),
        (
            vec!["bench", "x.json", "--target", "1.5"],
            &["--target", "not a fraction from 0 to 1"],
        ),
        (
            vec!["results", "x.db", "--top", "-1"],
            &["--top", "a count cannot be negative"],
        ),
        (
            vec!["results", "x.db", "--study", ""],
            &["--study cannot be empty"],
        ),
        (
            vec!["results", "x.db", "--study", "a\u{1b}[31mb"],
            &["--study", "control character U+001B"],
        ),
    ] {
        let err = ktune().args(&args).fails();
        assert_mentions(&err, words);
        assert!(!err.contains("-- -"), "{args:?}: {err}");
    }
}

/// Two `ktune tune` processes started on one results database without `--storage` (one
/// forgotten in another terminal) share it: both end without an error, and the database
/// holds each configuration once, within the budget.
#[test]
fn two_processes_on_one_database_share_it() {
    let (dir, _) = in_tempdir(
        "s.toml",
        "[[parameter]]\nname = \"x\"\nvalues = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]\n\n\
         [runner]\nrun = \"sh -c 'sleep 0.2; echo t: {x}'\"\n\
         objective = { name = \"time\", regex = 't: (?P<value>[0-9.]+)' }\n\n\
         [budget]\nmax_evaluations = 8\n",
    );
    let start = || {
        crate::common::ktune_in(dir.path())
            .args(["tune", "s.toml", "--quiet"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (start(), start());
    for p in [a, b] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows = crate::common::results_json(dir.path(), &["s.db".as_ref()]);
    let mut xs: Vec<i64> = rows
        .iter()
        .map(|r| r["params"]["x"].as_i64().unwrap())
        .collect();
    assert_eq!(xs.len(), 8, "{rows:?}");
    xs.sort_unstable();
    xs.dedup();
    assert_eq!(xs.len(), 8, "a configuration was recorded twice: {rows:?}");
}

/// `[[instance]]`: each configuration compiled and run on every instance (its variables are
/// placeholders and defines like the parameters); the objective is the geometric mean, each
/// instance's value is shown, a failure on one fails the configuration naming it, resuming
/// measures nothing again, and other instances are another study.
#[test]
fn instances_measure_each_configuration_on_every_one() {
    if gcc_missing() {
        return;
    }
    let program = "#include <stdio.h>\n\
        int main(void) {\n\
            if (X == 5 && N == 400) return 3;\n\
            int d = X - N / 100;\n\
            printf(\"time: %d ms\\n\", d * d + 1 + N / 100);\n\
            return 0;\n\
        }\n";
    let spec = |second: u32| {
        format!(
            "[[parameter]]\nname = \"X\"\nvalues = [1, 2, 3, 4, 5]\n\n\
             [[instance]]\nname = \"n100\"\nN = 100\n\n\
             [[instance]]\nname = \"n{second}\"\nN = {second}\n\n\
             [runner]\ncompile = [\"gcc\", \"-O1\", \"prog.c\", \"-o\", \"{{build_dir}}/prog\"]\n\
             run = [\"{{build_dir}}/prog\"]\ndefines = true\nrepeat = 1\n\
             objective = {{ name = \"time\", regex = 'time: (?P<value>[0-9.]+) ms' }}\n\n\
             [strategy]\nname = \"brute_force\"\n\n[budget]\nmax_evaluations = 5\n"
        )
    };
    let (dir, path) = in_tempdir("ktune.toml", &spec(400));
    written(dir.path(), "prog.c", program);
    let out = ktune_in(dir.path()).arg("tune").arg(&path).succeeds();
    let text = String::from_utf8_lossy(&out.stdout);
    // X = 2: 3 at N = 100 and 9 at N = 400, the least geometric mean though each instance
    // alone is best elsewhere (X = 1 and X = 4).
    assert_mentions(
        &text,
        &[
            "best configuration: X=2",
            "time = 5.196152 (the geometric mean of n100: 3.000000, n400: 9.000000)",
            "instance n400: run exited with 3",
        ],
    );
    assert!(dir.path().join(".ktune/build/instance-n400").is_dir());
    // Each instance's value is kept with the result.
    let rows = crate::common::results_json(dir.path(), &["ktune.db".as_ref()]);
    let x2 = rows.iter().find(|r| r["params"]["X"] == 2).unwrap();
    assert_eq!(x2["observed"]["time@n100"], 3.0);
    assert_eq!(x2["observed"]["time@n400"], 9.0);
    // A study of instances exports its best, read with --storage as `ktune results` reads it.
    let url = format!("sqlite://{}", dir.path().join("ktune.db").display());
    let wisdom = dir.path().join("prog.wisdom");
    ktune()
        .args(["export", "--storage", &url, "--size", &format!("{url}=100")])
        .arg("--wisdom")
        .arg(&wisdom)
        .succeeds();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    assert_mentions(&text, &["\"config\": [2], \"problem_size\": [100, 1, 1]"]);
    let again = ktune_in(dir.path()).arg("tune").arg(&path).succeeds();
    assert_mentions(
        &String::from_utf8_lossy(&again.stdout),
        &["0 this run, 5 resumed"],
    );
    std::fs::write(&path, spec(300)).unwrap();
    ktune_in(dir.path())
        .arg("tune")
        .arg(&path)
        .fails_saying(&["holds results of a different tuning problem"]);
    for (bad, said) in [
        ("[[instance]]\nN = 1\n", "instance 1 has no name"),
        (
            "[[instance]]\nname = \"a\"\nN = 1\n\n[[instance]]\nname = \"b\"\nM = 1\n",
            "instance `b` has the variables [M] but `a` has [N]",
        ),
        (
            "[[instance]]\nname = \"a b\"\nN = 1\n",
            "instance name \"a b\"",
        ),
        (
            "[[instance]]\nname = \"a\"\nX = 1\n",
            "variable `X` is also a parameter",
        ),
        ("instance = []\n", "no instance is given"),
    ] {
        let text = format!(
            "{}{}",
            if bad.starts_with("instance = ") {
                bad
            } else {
                ""
            },
            spec(400).split("[[instance]]").next().unwrap().to_string()
                + if bad.starts_with("instance = ") {
                    ""
                } else {
                    bad
                }
                + "\n[runner]\nrun = \"true\"\n"
        );
        let (d, p) = in_tempdir("bad.toml", &text);
        ktune_in(d.path())
            .arg("tune")
            .arg(&p)
            .arg("--max-evals")
            .arg("1")
            .fails_saying(&[said]);
    }
}
