//! What the command-line tests share: the binary, the repository's files, the results of a
//! study as JSON, the spec of a gcc-compiled test program, and the skip when no compiler is
//! installed.

use std::path::{Path, PathBuf};

/// `ktune` as an `assert_cmd` command.
pub fn ktune() -> assert_cmd::Command {
    assert_cmd::Command::cargo_bin("ktune").unwrap()
}

/// `text` written to the file `name` in `dir`: its path.
pub fn written(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    path
}

/// A new temporary folder with `text` written to the file `name` in it: the folder, which
/// lives as long as the test holds it, and the file's path.
pub fn in_tempdir(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = written(dir.path(), name, text);
    (dir, path)
}

/// The `ktune results` table of the database `db`, as printed.
pub fn results_table(db: &Path) -> String {
    let out = ktune().arg("results").arg(db).output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Fails naming the first of `parts` that a text lacks, and showing the text.
pub use ktune_core::testing::assert_mentions;

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

/// `ktune space --json FILE`, parsed.
pub fn space_json(file: &Path) -> serde_json::Value {
    let out = ktune().args(["space", "--json"]).arg(file).succeeds();
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A brute-forced space of `../shared/data/spaces` (beside the checkout), by file stem.
pub fn shared_space(name: &str) -> PathBuf {
    repo(&format!("../shared/data/spaces/{name}.json.gz"))
}

/// A spec for a program `prog.c` compiled by gcc with the parameters as defines and its
/// objective printed as `time: V ms`: the `parameters` (TOML text) and `SLEEP_MS`, tuned at
/// random for `budget` evaluations, one run each.
pub fn gcc_spec(parameters: &str, sleep_ms: u64, budget: usize) -> String {
    format!(
        r#"{parameters}
[[parameter]]
name = "SLEEP_MS"
values = [{sleep_ms}]

[runner]
kind = "command"
compile = ["gcc", "-O1", "prog.c", "-o", "{{build_dir}}/prog"]
run = ["{{build_dir}}/prog"]
defines = true
run_timeout = 10.0
# One run per configuration, so that the run log counts configurations.
repeat = 1
objective = {{ name = "time", regex = 'time: (?P<value>[0-9.]+) ms' }}

[strategy]
name = "random"

[budget]
max_evaluations = {budget}
"#
    )
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

/// Running a command that must succeed (its output, or a failed test showing its standard
/// error) or fail (its standard error, or a failed test showing what it printed).
pub trait Succeeds {
    /// Runs the command and checks that it succeeded.
    fn succeeds(&mut self) -> std::process::Output;
    /// Runs the command and checks that it failed with a message, not a panic: its standard
    /// error.
    fn fails(&mut self) -> String;
    /// Runs the command and checks that it failed with a message naming every one of
    /// `parts`: its standard error.
    #[track_caller]
    fn fails_saying(&mut self, parts: &[&str]) -> String {
        let err = self.fails();
        assert_mentions(&err, parts);
        err
    }
}

/// The output of a finished command that must have succeeded (else a failed test showing its
/// standard error).
pub fn succeeded(out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The standard error of a finished command that must have failed without a panic (else a
/// failed test showing its output).
pub fn failed(out: std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !out.status.success(),
        "succeeded:\n{}\n{err}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(!err.contains("panicked"), "{err}");
    err
}

impl Succeeds for assert_cmd::Command {
    fn succeeds(&mut self) -> std::process::Output {
        succeeded(self.output().unwrap())
    }
    fn fails(&mut self) -> String {
        failed(self.output().unwrap())
    }
}

impl Succeeds for std::process::Command {
    fn succeeds(&mut self) -> std::process::Output {
        succeeded(self.output().unwrap())
    }
    fn fails(&mut self) -> String {
        failed(self.output().unwrap())
    }
}
