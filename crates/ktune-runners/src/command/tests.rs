//! The command runner against real programs compiled with the system gcc.

use std::path::Path;
use std::time::Instant;

use ktune_core::testing::{assert_mentions, refusal};
use ktune_space::{Parameter, SearchSpace, Value};

use super::*;

/// MODE 0: prints a time; 1: does not compile; 2: crashes; 3: hangs (with a child that hangs
/// too); 4: prints no time; 5: exits with 3; 6: says why it fails on stdout and exits with 2.
/// SIZE scales the printed time.
const PROGRAM: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <unistd.h>
#if MODE == 1
#error "tile size too large for this register file"
#endif
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 0;
    const char *env = getenv("KTUNE_size");
    if (MODE == 2) raise(SIGSEGV);
    if (MODE == 3) { fork(); for (;;) sleep(1); }
    if (MODE == 4) { printf("no measurement today\n"); return 0; }
    if (MODE == 5) { fprintf(stderr, "bad input\n"); return 3; }
    if (MODE == 6) { printf("matrix too small for this tile\n"); return 2; }
    printf("warming up\ntime: %d.5 ms\n", n * 10);
    printf("{\"time\": %d.25, \"env\": \"%s\"}\n", n, env ? env : "");
    return 0;
}
"#;

fn space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer_range("MODE", 0, 6, 1).unwrap(),
            Parameter::integer("size", [1, 2, 3]).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap()
}

fn spec(extra: &str) -> CommandSpec {
    let text = format!(
        "compile = [\"gcc\", \"-O1\", \"bench.c\", \"-o\", \"{{build_dir}}/bench\"]\nrun = [\"{{build_dir}}/bench\", \"{{size}}\"]\ndefines = true\nrun_timeout = 1.0\nobjective = {{ regex = 'time: (?P<value>[0-9.]+) ms' }}\n{extra}"
    );
    toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn dir_with_program() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bench.c"), PROGRAM).unwrap();
    dir
}

fn config(space: &SearchSpace, mode: i64, size: i64) -> Configuration {
    space
        .configuration_of(&[Value::Int(mode), Value::Int(size)])
        .unwrap()
}

#[test]
fn a_declared_exit_status_is_a_wrong_output_and_others_stay_runtime_failures() {
    let dir = dir_with_program();
    let space = space();
    let mut runner =
        CommandRunner::new(&spec("wrong_output_status = 3"), &space, dir.path()).unwrap();
    let configs: Vec<Configuration> = [5, 6, 0].map(|m| config(&space, m, 2)).to_vec();
    let out = runner.evaluate(&space, &configs).unwrap();
    assert_eq!(
        out[0].failure(),
        Some(FailureKind::WrongOutput),
        "{:?}",
        out[0]
    );
    match &out[0] {
        Outcome::Failed { reason, .. } => assert!(
            reason.contains("wrong output (run exited with 3") && reason.contains("bad input"),
            "{reason}"
        ),
        Outcome::Ok { .. } => unreachable!(),
    }
    assert_eq!(out[1].failure(), Some(FailureKind::Runtime), "{:?}", out[1]);
    assert_eq!(out[2].objective(), Some(20.5));
}

#[test]
fn every_kind_of_failure_is_recorded_and_tuning_goes_on() {
    let dir = dir_with_program();
    let space = space();
    let mut runner = CommandRunner::new(&spec("jobs = 2"), &space, dir.path()).unwrap();
    let configs: Vec<Configuration> = (0..7).map(|m| config(&space, m, 2)).collect();
    let started = Instant::now();
    let out = runner.evaluate(&space, &configs).unwrap();
    // The hang is killed at its 1 s timeout, child process included.
    assert!(started.elapsed().as_secs_f64() < 30.0);
    assert_eq!(out[0].objective(), Some(20.5), "{:?}", out[0]);
    assert!(out[0].timings().compile > 0.0 && out[0].timings().benchmark > 0.0);
    let reason = |o: &Outcome| match o {
        Outcome::Failed { reason, .. } => reason.clone(),
        Outcome::Ok { .. } => String::new(),
    };
    assert_eq!(out[1].failure(), Some(FailureKind::Compile));
    assert!(
        reason(&out[1]).contains("tile size too large"),
        "{}",
        reason(&out[1])
    );
    assert_eq!(out[2].failure(), Some(FailureKind::Runtime));
    assert!(reason(&out[2]).contains("signal 11"), "{}", reason(&out[2]));
    assert_eq!(out[3].failure(), Some(FailureKind::Timeout));
    assert!(reason(&out[3]).contains("killed"), "{}", reason(&out[3]));
    assert_eq!(out[4].failure(), Some(FailureKind::Runtime));
    assert!(
        reason(&out[4]).contains("could not read `time`")
            && reason(&out[4]).contains("no measurement today"),
        "{}",
        reason(&out[4])
    );
    assert_eq!(out[5].failure(), Some(FailureKind::Runtime));
    assert!(
        reason(&out[5]).contains("exited with 3") && reason(&out[5]).contains("bad input"),
        "{}",
        reason(&out[5])
    );
    // A program that says why on stdout, with nothing on stderr: what it said, not "(no
    // output)".
    assert_eq!(
        reason(&out[6]),
        "run exited with 2: (on stdout) matrix too small for this tile"
    );
    // Each configuration built in its own directory.
    assert!(
        dir.path()
            .join(".ktune/build")
            .join(space.rank(&configs[0]).unwrap().to_string())
            .join("bench")
            .exists()
    );
}

#[test]
fn the_process_group_is_killed_on_timeout() {
    let dir = dir_with_program();
    let space = space();
    let mut runner = CommandRunner::new(&spec(""), &space, dir.path()).unwrap();
    let hang = config(&space, 3, 1);
    runner.evaluate(&space, &[hang]).unwrap();
    // No process of the hanging program (or its forked child) survives the timeout.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let build = dir.path().join(".ktune/build").display().to_string();
    let survivors = std::process::Command::new("pgrep")
        .args(["-f", &build])
        .output()
        .unwrap();
    assert!(
        survivors.stdout.is_empty(),
        "left running: {}",
        String::from_utf8_lossy(&survivors.stdout)
    );
}

#[test]
fn objectives_from_json_lines_wall_time_and_repetitions() {
    let dir = dir_with_program();
    let space = space();
    let mut s = spec("env = true\nwarmup = 1\nrepeat = 3");
    s.objective = ObjectiveSpec {
        json_key: Some("time".into()),
        regex: None,
        ..ObjectiveSpec::default()
    };
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    let out = runner.evaluate(&space, &[config(&space, 0, 3)]).unwrap();
    assert_eq!(out[0].objective(), Some(3.25));
    // One value per metric: the mean, then the spread of the three identical runs.
    assert_eq!(runner.metrics().len(), 2);
    match &out[0] {
        Outcome::Ok { values, .. } => assert_eq!(values, &[3.25, 0.0]),
        other => panic!("{other:?}"),
    }
    let stdout = std::fs::read_to_string(
        dir.path()
            .join(".ktune/build")
            .join(space.rank(&config(&space, 0, 3)).unwrap().to_string())
            .join("run.stdout"),
    )
    .unwrap();
    assert!(
        stdout.contains("\"env\": \"3\""),
        "KTUNE_size reaches the program: {stdout}"
    );

    let mut s = spec("");
    s.objective = ObjectiveSpec::default();
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    let out = runner.evaluate(&space, &[config(&space, 0, 1)]).unwrap();
    let wall = out[0].objective().unwrap();
    assert!(wall > 0.0 && wall < 5.0, "{wall}");
}

#[test]
fn several_objectives_come_from_the_same_runs_first_one_steering_repetitions() {
    let dir = dir_with_program();
    let space = space();
    let text = "compile = [\"gcc\", \"-O1\", \"bench.c\", \"-o\", \"{build_dir}/bench\"]\n\
                run = [\"{build_dir}/bench\", \"{size}\"]\ndefines = true\nrepeat = 2\n\
                objectives = [{ name = \"time\", regex = 'time: (?P<value>[0-9.]+) ms', unit = \"ms\" },\n\
                { name = \"score\", json_key = \"time\", direction = \"maximize\" }]\n";
    let s: CommandSpec = toml::from_str(text).unwrap();
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    let metrics: Vec<(&str, Direction)> = runner
        .metrics()
        .iter()
        .map(|m| (m.name.as_str(), m.direction))
        .collect();
    assert_eq!(
        metrics,
        [
            ("time", Direction::Minimize),
            ("score", Direction::Maximize),
            ("time stdev", Direction::Minimize)
        ]
    );
    let out = runner
        .evaluate(&space, &[config(&space, 0, 3), config(&space, 4, 1)])
        .unwrap();
    match &out[0] {
        Outcome::Ok { values, .. } => assert_eq!(values, &[30.5, 3.25, 0.0]),
        other => panic!("{other:?}"),
    }
    // A run that prints neither fails naming the first objective it could not read.
    assert_mentions(&format!("{:?}", out[1]), &["could not read `time`"]);

    // One objective missing from the output is a failure naming it.
    let missing = text.replace("json_key = \"time\"", "json_key = \"energy\"");
    let s: CommandSpec = toml::from_str(&missing).unwrap();
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    let out = runner.evaluate(&space, &[config(&space, 0, 3)]).unwrap();
    assert!(out[0].objective().is_none());
    assert_mentions(&format!("{:?}", out[0]), &["could not read `score`"]);

    // Both ways at once, and two objectives of one name, are refused naming the problem.
    let both = format!("{text}objective = {{ regex = 'time: (?P<value>[0-9.]+) ms' }}\n");
    let s: CommandSpec = toml::from_str(&both).unwrap();
    let e = refusal(CommandRunner::new(&s, &space, dir.path()));
    assert_mentions(&e, &["objectives", "not both"]);
    let twice = text.replace("name = \"score\"", "name = \"time\"");
    let s: CommandSpec = toml::from_str(&twice).unwrap();
    let e = refusal(CommandRunner::new(&s, &space, dir.path()));
    assert_mentions(&e, &["two objectives are named `time`"]);
}

#[test]
fn string_templates_split_without_a_shell_unless_asked() {
    let dir = dir_with_program();
    let space = space();
    let s: CommandSpec = toml::from_str(
        "compile = \"gcc -O1 bench.c -o '{build_dir}/bench'\"\nrun = \"'{build_dir}/bench' {size}\"\ndefines = true\nobjective = { regex = 'time: (?P<value>[0-9.]+)' }\n",
    )
    .unwrap();
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    assert_eq!(
        runner.evaluate(&space, &[config(&space, 0, 1)]).unwrap()[0].objective(),
        Some(10.5)
    );
    // With a shell, pipes and redirections work.
    let s: CommandSpec = toml::from_str(
        "shell = true\ncompile = \"gcc -O1 bench.c -o {build_dir}/bench\"\nrun = \"{build_dir}/bench {size} | grep time: | head -n 1\"\ndefines = true\nobjective = { regex = 'time: (?P<value>[0-9.]+)' }\n",
    )
    .unwrap();
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    assert_eq!(
        runner.evaluate(&space, &[config(&space, 0, 3)]).unwrap()[0].objective(),
        Some(30.5)
    );
    assert_eq!(
        runner.placeholders().into_iter().collect::<Vec<_>>(),
        vec!["size".to_string()]
    );
}

fn setup_error(text: &str, dir: &Path) -> String {
    let s: CommandSpec = toml::from_str(text).unwrap();
    match CommandRunner::new(&s, &space(), dir) {
        Ok(_) => panic!("expected an error for {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_specs_are_clear_errors() {
    let dir = dir_with_program();
    let d = dir.path();
    assert!(setup_error("compile = [\"gcc\"]", d).contains("no `run` command"));
    let e = setup_error("run = [\"./x\", \"{tile}\"]", d);
    assert_mentions(&e, &["`{tile}`", "run command", "MODE, size"]);
    let e = setup_error(
        "compile = [\"gcc-that-is-not-here\", \"a.c\"]\nrun = [\"{build_dir}/a\"]",
        d,
    );
    assert!(
        e.contains("compile program `gcc-that-is-not-here` was not found"),
        "{e}"
    );
    let e = setup_error("run = [\"./missing-program\"]", d);
    assert!(
        e.contains("run program `./missing-program` was not found"),
        "{e}"
    );
    let e = setup_error(
        "run = [\"{build_dir}/a\"]\nobjective = { regex = 'time: ([0-9.]+)' }",
        d,
    );
    assert!(e.contains("named group `value`"), "{e}");
    let e = setup_error(
        "run = [\"{build_dir}/a\"]\nobjective = { regex = 'time: (?P<value>[0-9.]+' }",
        d,
    );
    assert!(e.contains("objective regex"), "{e}");
    let e = setup_error("run = [\"{build_dir}/a\"]\nrepeat = 0", d);
    assert!(e.contains("`repeat`"), "{e}");
    let e = setup_error("run = \"'{build_dir}/a\"", d);
    assert!(e.contains("unbalanced quotes"), "{e}");
    let e = setup_error("run = [\"{build_dir}/a}\"]", d);
    assert!(e.contains("unmatched `}`"), "{e}");
}

#[test]
fn a_relative_spec_directory_still_finds_the_build_directory() {
    let dir = dir_with_program();
    let space = space();
    let cwd = std::env::current_dir().unwrap();
    let relative = pathdiff(dir.path(), &cwd);
    let mut runner = CommandRunner::new(&spec(""), &space, &relative).unwrap();
    assert_eq!(
        runner.evaluate(&space, &[config(&space, 0, 1)]).unwrap()[0].objective(),
        Some(10.5)
    );
}

/// `path` relative to `base` (both absolute), through `..` components.
fn pathdiff(path: &Path, base: &Path) -> std::path::PathBuf {
    let (p, b): (Vec<_>, Vec<_>) = (path.components().collect(), base.components().collect());
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = std::path::PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c);
    }
    out
}

#[test]
fn permutations_reach_programs_as_item_names() {
    let dir = tempfile::tempdir().unwrap();
    let space = SearchSpace::new(
        vec![Parameter::permutation("order", ["i", "j", "k"]).unwrap()],
        &[] as &[&str],
    )
    .unwrap();
    // The order as an argument and as KTUNE_order, compared by the shell.
    let spec: CommandSpec = toml::from_str(
        "run = [\"sh\", \"-c\", \"if [ \\\"$0\\\" = k,j,i ] && [ \\\"$KTUNE_order\\\" = k,j,i ]; then echo 'time: 1 ms'; else echo 'time: 5 ms'; fi\", \"{order}\"]\n\
         env = true\nobjective = { regex = 'time: (?P<value>[0-9.]+) ms' }",
    )
    .unwrap();
    let mut runner = CommandRunner::new(&spec, &space, dir.path()).unwrap();
    let order = |o: [u32; 3]| space.configuration_of(&[Value::Perm(o.to_vec())]).unwrap();
    let out = runner
        .evaluate(&space, &[order([2, 1, 0]), order([0, 1, 2])])
        .unwrap();
    assert_eq!(out[0].objective(), Some(1.0), "{:?}", out[0]);
    assert_eq!(out[1].objective(), Some(5.0), "{:?}", out[1]);
}

/// Prints `time: BASE · (1 + JITTER · u) ms` with `u` uniform in [-1, 1) from a seeded
/// generator that advances by one step per run (the run count is kept in the build
/// directory), and appends its BASE to `runs.log` in the working directory: a program with a
/// known true time and controlled noise.
const JITTER: &str = r#"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    double b = atof(argv[1]), jit = atof(argv[2]);
    const char *counter = argv[3];
    long n = 0;
    FILE *f = fopen(counter, "r");
    if (f) { if (fscanf(f, "%ld", &n) != 1) n = 0; fclose(f); }
    f = fopen(counter, "w"); fprintf(f, "%ld\n", n + 1); fclose(f);
    unsigned long long x = 88172645463325252ULL ^ (unsigned long long)(SEED * 1000003 + n);
    for (int i = 0; i < 8; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    double u = (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    printf("time: %.9f ms\n", b * (1.0 + jit * u));
    FILE *log = fopen("runs.log", "a"); fprintf(log, "%s\n", argv[1]); fclose(log);
    return 0;
}
"#;

fn jitter_space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::real("base", [1.0, 1.03, 1.05, 3.0, 10.0]).unwrap(),
            Parameter::real("jitter", [0.001, 0.1, 0.2]).unwrap(),
            Parameter::integer_range("SEED", 0, 9, 1).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap()
}

fn jitter_runner(measure: &str) -> (tempfile::TempDir, CommandRunner) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("jitter.c"), JITTER).unwrap();
    let text = format!(
        "compile = [\"gcc\", \"-O1\", \"jitter.c\", \"-o\", \"{{build_dir}}/jitter\"]\n\
         run = [\"{{build_dir}}/jitter\", \"{{base}}\", \"{{jitter}}\", \"{{build_dir}}/count\"]\n\
         defines = true\nobjective = {{ regex = 'time: (?P<value>[0-9.]+) ms' }}\n\
         [measure]\n{measure}"
    );
    let spec: CommandSpec = toml::from_str(&text).unwrap();
    let space = jitter_space();
    let runner = CommandRunner::new(&spec, &space, dir.path()).unwrap();
    (dir, runner)
}

fn jitter_config(base: f64, jitter: f64, seed: i64) -> Configuration {
    jitter_space()
        .configuration_of(&[Value::Real(base), Value::Real(jitter), Value::Int(seed)])
        .unwrap()
}

#[test]
fn adaptive_repetition_stops_at_the_target_width() {
    let (_dir, mut runner) = jitter_runner("min = 3\nmax = 200\ntarget = 0.02");
    let space = jitter_space();
    let configs: Vec<Configuration> = (0..3).map(|s| jitter_config(10.0, 0.1, s)).collect();
    for o in runner.evaluate(&space, &configs).unwrap() {
        let samples = o.samples().unwrap_or_else(|| panic!("{o:?}"));
        let s = o.summary().unwrap();
        assert!(s.relative_half_width() <= 0.02, "{s:?}");
        // It stopped as soon as it got there: with one sample fewer it had not.
        let before = ktune_core::Summary::of(
            &samples.values[..samples.values.len() - 1],
            ktune_core::Statistic::Mean,
        );
        assert!(before.relative_half_width() > 0.02, "{samples:?}");
        // ±10% uniform noise (σ ≈ 5.8%) needs about 30 samples for ±2%.
        assert!((10..100).contains(&s.n), "{s:?}");
        assert!((s.mean - 10.0).abs() < 0.3 && o.objective() == Some(s.mean));
    }
    // Quiet configurations stop at the minimum.
    let quiet = runner
        .evaluate(&space, &[jitter_config(10.0, 0.001, 0)])
        .unwrap();
    assert_eq!(quiet[0].summary().unwrap().n, 3);
}

#[test]
fn early_abort_triggers_on_three_times_slower_but_not_within_noise() {
    let (_dir, mut runner) = jitter_runner("min = 3\nmax = 50\ntarget = 0.01\nabort = 2.0");
    let space = jitter_space();
    runner.set_incumbent(Some(1.0));
    let out = runner
        .evaluate(
            &space,
            &[jitter_config(3.0, 0.2, 1), jitter_config(1.05, 0.2, 2)],
        )
        .unwrap();
    let slow = out[0].samples().unwrap();
    assert!(slow.aborted && slow.values.len() < 10, "{slow:?}");
    // Aborted configurations are still measured results, the objective their mean.
    assert!(out[0].objective().unwrap() > 2.0);
    let close = out[1].samples().unwrap();
    assert!(!close.aborted && close.values.len() > 10, "{close:?}");
    // Without an incumbent nothing is aborted.
    runner.set_incumbent(None);
    let again = runner
        .evaluate(&space, &[jitter_config(3.0, 0.2, 3)])
        .unwrap();
    assert!(!again[0].samples().unwrap().aborted);
}

#[test]
fn remeasurement_interleaves_the_configurations() {
    let (dir, mut runner) = jitter_runner("warmup = 1");
    let space = jitter_space();
    let configs = [
        jitter_config(1.0, 0.001, 0),
        jitter_config(3.0, 0.001, 0),
        jitter_config(1.05, 0.001, 0),
    ];
    let out = runner.remeasure(&space, &configs, 4).unwrap();
    let log = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    let runs: Vec<f64> = log.lines().map(|l| l.parse().unwrap()).collect();
    // One warm-up run each, then A B C A B C ...
    assert_eq!(&runs[..3], [1.0, 3.0, 1.05]);
    let rounds: Vec<&[f64]> = runs[3..].chunks(3).collect();
    assert_eq!(rounds.len(), 4);
    assert!(rounds.iter().all(|r| r == &[1.0, 3.0, 1.05]), "{runs:?}");
    for (o, want) in out.iter().zip([1.0, 3.0, 1.05]) {
        let s = o.summary().unwrap();
        assert_eq!(s.n, 4);
        assert!((s.mean - want).abs() < 0.01 * want, "{s:?}");
    }
}

#[test]
fn a_fixed_repeat_still_means_exactly_that_many_runs() {
    let (dir, mut runner) = {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("jitter.c"), JITTER).unwrap();
        let text = "compile = [\"gcc\", \"-O1\", \"jitter.c\", \"-o\", \"{build_dir}/jitter\"]\n\
             run = [\"{build_dir}/jitter\", \"{base}\", \"{jitter}\", \"{build_dir}/count\"]\n\
             defines = true\nwarmup = 2\nrepeat = 5\n\
             objective = { regex = 'time: (?P<value>[0-9.]+) ms' }";
        let spec: CommandSpec = toml::from_str(text).unwrap();
        let runner = CommandRunner::new(&spec, &jitter_space(), dir.path()).unwrap();
        (dir, runner)
    };
    runner.set_incumbent(Some(0.001));
    let out = runner
        .evaluate(&jitter_space(), &[jitter_config(3.0, 0.2, 0)])
        .unwrap();
    let samples = out[0].samples().unwrap();
    assert_eq!((samples.values.len(), samples.aborted), (5, false));
    let log = std::fs::read_to_string(dir.path().join("runs.log")).unwrap();
    assert_eq!(log.lines().count(), 7);
}

#[test]
fn a_program_that_floods_its_output_is_read_in_bounded_memory() {
    // 40 MB of noise on stdout and stderr, then the time: only the last max_output bytes are
    // read, the objective (the last match) is still found, and the files are cut on disk.
    let dir = tempfile::tempdir().unwrap();
    let space = SearchSpace::new(
        vec![Parameter::integer("size", [1]).unwrap()],
        &[] as &[&str],
    )
    .unwrap();
    let text = "run = [\"sh\", \"-c\", \"head -c 40000000 /dev/zero | tr '\\\\\\\\0' x; head -c 40000000 /dev/zero >&2; echo; echo 'time: 7.5 ms'\"]\nrepeat = 1\nmax_output = 1048576\nobjective = { regex = 'time: (?P<value>[0-9.]+) ms' }\n";
    let s: CommandSpec = toml::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let mut runner = CommandRunner::new(&s, &space, dir.path()).unwrap();
    let c = space.configuration(0);
    let out = runner.evaluate(&space, std::slice::from_ref(&c)).unwrap();
    assert_eq!(out[0].objective(), Some(7.5), "{:?}", out[0]);
    let build = dir.path().join(".ktune/build").join("0");
    for f in ["run.stdout", "run.stderr"] {
        let len = std::fs::metadata(build.join(f)).unwrap().len();
        assert!(len < 1_100_000, "{f}: {len} bytes left on disk");
    }
    let kept = std::fs::read_to_string(build.join("run.stdout")).unwrap();
    assert!(
        kept.starts_with("[ktune: ") && kept.contains("bytes of output before this were dropped")
    );
    // Out of range.
    let bad: CommandSpec = toml::from_str(&text.replace("1048576", "10")).unwrap();
    let e = refusal(CommandRunner::new(&bad, &space, dir.path()));
    assert_mentions(&e, &["max_output"]);
}

/// With almost nothing of the time budget left, nothing is compiled or run: the batch ends
/// as out of time with no outcome (a configuration cut before it started is not recorded
/// as a timeout), and with time left it runs as usual.
#[test]
fn nothing_starts_in_the_last_moments_of_the_time_budget() {
    let dir = dir_with_program();
    let space = space();
    let mut runner = CommandRunner::new(&spec(""), &space, dir.path()).unwrap();
    let ok = config(&space, 0, 2);
    runner.set_time_left(Some(0.002));
    match runner.evaluate(&space, std::slice::from_ref(&ok)) {
        Err(ktune_core::CoreError::OutOfTime { outcomes }) => assert!(outcomes.is_empty()),
        other => panic!("{other:?}"),
    }
    let built = dir
        .path()
        .join(".ktune/build")
        .join(space.rank(&ok).unwrap().to_string())
        .join("bench");
    assert!(!built.exists(), "it was compiled");
    runner.set_time_left(Some(60.0));
    let out = runner.evaluate(&space, &[ok]).unwrap();
    assert_eq!(out[0].objective(), Some(20.5), "{:?}", out[0]);
    assert!(built.exists());
}

/// The command runner passes the runner conformance suite on the real program: two sizes
/// measured, a compile error, a crash, a hang killed at its timeout and a non-zero exit as
/// failures; the printed times repeat, and it measures configurations again.
#[test]
fn the_command_runner_passes_the_runner_conformance_suite() {
    let dir = dir_with_program();
    let space = space();
    let fixture = crate::conformance::Fixture {
        succeed: vec![config(&space, 0, 1), config(&space, 0, 3)],
        fail: vec![
            (config(&space, 1, 1), FailureKind::Compile),
            (config(&space, 2, 1), FailureKind::Runtime),
            (config(&space, 3, 1), FailureKind::Timeout),
            (config(&space, 5, 1), FailureKind::Runtime),
        ],
        repeatable: true,
        remeasures: true,
        space: space.clone(),
    };
    crate::conformance::run_all(
        &mut || Box::new(CommandRunner::new(&spec("jobs = 2"), &space, dir.path()).unwrap()),
        &fixture,
    );
}

#[test]
fn a_parameter_named_as_a_runner_placeholder_is_refused() {
    // Before, `{build_dir}` silently took the runner's folder and the parameter never
    // reached the program.
    let dir = dir_with_program();
    for name in ["build_dir", "config_id"] {
        let space = SearchSpace::new(
            vec![Parameter::integer(name, [1, 2]).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        let s: CommandSpec = toml::from_str(&format!(
            "run = [\"echo\", \"time: {{{name}}}\"]\nobjective = {{ regex = 'time: (?P<value>\\S+)' }}\n"
        ))
        .unwrap();
        let e = refusal(CommandRunner::new(&s, &space, dir.path()));
        assert_mentions(
            &e,
            &[&format!("parameter `{name}`"), "placeholder", "rename it"],
        );
    }
}
