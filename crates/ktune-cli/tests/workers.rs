//! Many workers, one study: `ktune tune --storage sqlite://... --study ...` started several
//! times on one file, with workers killed (SIGKILL) at random moments and restarted.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

fn project(dir: &Path, budget: usize) {
    std::fs::write(dir.join("prog.c"), PROGRAM).unwrap();
    let spec = format!(
        r#"
[[parameter]]
name = "x"
range = {{ start = 1, stop = 12, step = 1 }}

[[parameter]]
name = "y"
values = [0, 1, 2, 3]

[[parameter]]
name = "SLEEP_MS"
values = [400]

[runner]
kind = "command"
compile = ["gcc", "-O1", "prog.c", "-o", "{{build_dir}}/prog"]
run = ["{{build_dir}}/prog"]
defines = true
run_timeout = 10.0
repeat = 1
objective = {{ name = "time", regex = 'time: (?P<value>[0-9.]+) ms' }}

[strategy]
name = "random"

[budget]
max_evaluations = {budget}
"#
    );
    std::fs::write(dir.join("ktune.toml"), spec).unwrap();
}

fn start(dir: &Path, i: usize) -> Child {
    Command::new(env!("CARGO_BIN_EXE_ktune"))
        .current_dir(dir)
        .args([
            "tune",
            "ktune.toml",
            "--storage",
            "sqlite://study.db",
            "--study",
            "faults",
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

fn stored(dir: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_ktune"))
        .current_dir(dir)
        .args(["results", "study.db", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn four_workers_killed_and_restarted_record_every_configuration_once_within_the_budget() {
    if Command::new("gcc").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no gcc");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let budget = 40;
    project(dir.path(), budget);
    let mut workers: Vec<Child> = (0..4).map(|i| start(dir.path(), i)).collect();
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
        workers[victim] = start(dir.path(), next);
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
    let rows = stored(dir.path());
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
    let runs = std::fs::read_to_string(dir.path().join("runs.log")).unwrap_or_default();
    assert!(runs.lines().count() >= budget);
    eprintln!(
        "{} runs for {budget} records, {kills} workers killed",
        runs.lines().count()
    );
}
