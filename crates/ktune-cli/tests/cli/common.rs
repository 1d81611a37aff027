//! What the command-line tests share: the binary, the repository's files, the results of a
//! study as JSON, and the skip when no compiler is installed.

use std::path::{Path, PathBuf};

/// `ktune` as an `assert_cmd` command.
pub fn ktune() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("ktune").unwrap()
}

/// `ktune` as a plain process, run in `dir` (for children that are killed or interrupted).
pub fn ktune_in(dir: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_ktune"));
    c.current_dir(dir);
    c
}

/// A file of the repository, by its path from the root.
pub fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// A brute-forced space of `../shared/data/spaces` (beside the checkout), by file stem.
pub fn shared_space(name: &str) -> PathBuf {
    repo(&format!("../shared/data/spaces/{name}.json.gz"))
}

/// Whether gcc is missing (the tests that compile skip, and say so).
pub fn gcc_missing() -> bool {
    let missing = std::process::Command::new("gcc")
        .arg("--version")
        .output()
        .is_err();
    if missing {
        eprintln!("SKIPPED: no gcc");
    }
    missing
}

/// `ktune results ARGS --format json` in `dir`, parsed.
pub fn results_json(dir: &Path, args: &[&std::ffi::OsStr]) -> Vec<serde_json::Value> {
    let out = ktune_in(dir)
        .arg("results")
        .args(args)
        .args(["--format", "json"])
        .succeeds();
    serde_json::from_slice::<serde_json::Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

/// The lines of `runs.log` in `dir`, where the test programs log every run.
pub fn run_log(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("runs.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Running a command that must succeed: its output, or a failed test showing its standard
/// error.
pub trait Succeeds {
    /// Runs the command and checks that it succeeded.
    fn succeeds(&mut self) -> std::process::Output;
}

fn succeeded(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

impl Succeeds for assert_cmd::Command {
    fn succeeds(&mut self) -> std::process::Output {
        succeeded(self.output().unwrap())
    }
}

impl Succeeds for std::process::Command {
    fn succeeds(&mut self) -> std::process::Output {
        succeeded(self.output().unwrap())
    }
}
