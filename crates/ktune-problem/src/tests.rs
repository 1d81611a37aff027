use super::*;
use ktune_core::Direction;

const SPACE: &str = r#"
constraints = ["x * y <= 64"]

[[parameter]]
name = "x"
values = [1, 2, 4, 8]

[[parameter]]
name = "y"
values = [1, 2, 4, 8, 16]
"#;

fn read(text: &str) -> Result<ProblemSpec, ProblemError> {
    ProblemSpec::from_toml_str(text, Path::new("dir/gemm.toml"))
}

fn err(text: &str) -> String {
    match read(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_section_is_typed_and_checked_once() {
    let text = format!(
        "{SPACE}\n[runner]\nrun = \"./bench {{x}} {{y}}\"\nobjective = {{ name = \"GFLOP/s\", regex = 'g: (?P<value>[0-9.]+)' }}\n\n\
         [strategy]\nname = \"ga\"\npopsize = 12\n\n[budget]\nmax_evaluations = 40\n\n\
         [storage]\nurl = \"sqlite:///tmp/s.db\"\nstudy = \"gemm-a100\"\n"
    );
    let p = read(&text).unwrap();
    assert_eq!(p.space.parameters.len(), 2);
    assert_eq!(p.space.build().unwrap().size(), 4 * 5 - 1);
    let runner = p.runner.as_ref().unwrap();
    assert_eq!(runner.kind(), "command");
    // A rate is maximised unless the file says otherwise.
    assert_eq!(
        p.objective().unwrap(),
        Metric::new("GFLOP/s", Direction::Maximize)
    );
    let s = p.strategy.as_ref().unwrap();
    assert_eq!(s.name(), "genetic_algorithm");
    assert_eq!(s.canonical(), "genetic_algorithm:popsize=12");
    assert_eq!(s.create().unwrap().name(), "genetic_algorithm");
    assert_eq!(p.budget.budget().max_evaluations, Some(40));
    let storage = p.storage.as_ref().unwrap();
    assert_eq!(
        storage.location,
        Location::Sqlite(PathBuf::from("/tmp/s.db"))
    );
    assert_eq!(p.study_name(), "gemm-a100");
    assert_eq!(p.dir, Path::new("dir"));
}

#[test]
fn a_file_with_only_a_space_has_no_runner_and_defaults() {
    let p = read(SPACE).unwrap();
    assert!(p.runner.is_none() && p.objective().is_none());
    assert!(p.strategy.is_none() && p.storage.is_none());
    assert_eq!(p.budget, BudgetSpec::default());
    assert_eq!(p.study_name(), "gemm");
}

#[test]
fn cuda_objectives_carry_their_direction() {
    let text = format!(
        "{SPACE}\n[runner]\nkind = \"cuda\"\nsource = \"k.cu\"\nkernel = \"k\"\nproblem_size = [64]\nobjective = \"GFLOP/s\"\nflops = \"2 * x\"\n"
    );
    let p = read(&text).unwrap();
    assert_eq!(p.runner.as_ref().unwrap().kind(), "cuda");
    assert_eq!(
        p.objective().unwrap(),
        Metric::new("GFLOP/s", Direction::Maximize)
    );
    let p = read(&format!(
        "{SPACE}\n[runner]\nkind = \"cuda\"\nsource = \"k.cu\"\nkernel = \"k\"\nproblem_size = [64]\n"
    ))
    .unwrap();
    assert_eq!(
        p.objective().unwrap(),
        Metric::new("time", Direction::Minimize)
    );
}

#[test]
fn the_fingerprint_is_the_one_earlier_versions_stored() {
    // Databases written before the description was typed must still resume: the runner
    // part of the fingerprint is the [runner] table as JSON, as it always was.
    let text = format!("{SPACE}\n[runner]\nrun = \"./b {{x}}\"\njobs = 2\n");
    let p = read(&text).unwrap();
    let space = p.space.build().unwrap();
    let doc: toml::Table = toml::from_str(&text).unwrap();
    let before = serde_json::to_string(&serde_json::to_value(doc.get("runner")).unwrap()).unwrap();
    assert_eq!(
        p.fingerprint(&space, "time"),
        Fingerprint::new(&space, &before, "time")
    );
}

#[test]
fn each_section_names_itself_and_the_file_in_errors() {
    let e = err(&format!("{SPACE}\n[runner]\nkind = \"opencl\"\n"));
    assert!(
        e.contains("[runner] section of `dir/gemm.toml`") && e.contains("available: command, cuda"),
        "{e}"
    );
    let e = err(&format!("{SPACE}\n[runner]\nkind = 3\n"));
    assert!(e.contains("kind = 3 is not a runner's name"), "{e}");
    let e = err(&format!("{SPACE}\n[runner]\nrun = \"x\"\nrepaet = 3\n"));
    assert!(
        e.contains("[runner] section") && e.contains("repaet"),
        "{e}"
    );
    let e = err(&format!(
        "{SPACE}\n[runner]\nkind = \"cuda\"\nkernel = \"k\"\n"
    ));
    assert!(
        e.contains("[runner] section") && e.contains("source"),
        "{e}"
    );
    let e = err(&format!("{SPACE}\n[strategy]\nname = \"annealing-ish\"\n"));
    assert!(
        e.contains("[strategy] section") && e.contains("unknown strategy `annealing-ish`"),
        "{e}"
    );
    let e = err(&format!("{SPACE}\n[strategy]\npopsize = 3\n"));
    assert!(e.contains("needs a `name`"), "{e}");
    let e = err(&format!(
        "{SPACE}\n[strategy]\nname = \"ga\"\npopsize = -3\n"
    ));
    assert!(e.contains("genetic_algorithm"), "{e}");
    let e = err(&format!("{SPACE}\n[budget]\nmax_evaluation = 3\n"));
    assert!(
        e.contains("[budget] section") && e.contains("max_evaluation"),
        "{e}"
    );
    let e = err(&format!("{SPACE}\n[budget]\nmax_seconds = -1.0\n"));
    assert!(e.contains("[budget] section"), "{e}");
    let e = err(&format!("{SPACE}\n[storage]\nurl = \"mysql://x\"\n"));
    assert!(
        e.contains("[storage] section") && e.contains("mysql"),
        "{e}"
    );
    let e = err(&format!("{SPACE}\n[storage]\nstudy = \"a\"\n"));
    assert!(e.contains("[storage] section") && e.contains("url"), "{e}");
    // The space's reader still refuses unknown sections, with their position.
    let e = err(&format!("{SPACE}\n[stratgy]\nname = \"ga\"\n"));
    assert!(e.contains("stratgy"), "{e}");
}

#[test]
fn a_missing_file_is_named() {
    let e = ProblemSpec::from_path("/no/such/ktune.toml").unwrap_err();
    assert!(matches!(e, ProblemError::Io { .. }));
    assert!(e.to_string().contains("/no/such/ktune.toml"), "{e}");
}

#[test]
fn command_line_strategies_are_checked_like_tables() {
    let s = StrategySpec::from_command_line("random_sample").unwrap();
    assert_eq!(s.name(), "random");
    assert_eq!(s.canonical(), "random");
    assert!(StrategySpec::from_command_line("ga:popsize=0").is_err());
    assert_eq!(StrategySpec::default_strategy().name(), "auto");
}

#[test]
fn the_runners_input_files_are_the_sources_and_data_it_names() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let files = |name: &str| {
        ProblemSpec::from_path(examples.join(name).join("ktune.toml"))
            .unwrap()
            .input_files()
    };
    // The command runner: words of its commands that are files beside the spec; not the
    // compiler, the flags or the templated binary.
    assert_eq!(files("matmul-cpu"), [PathBuf::from("matmul.c")]);
    assert_eq!(files("cuda-vector-add"), [PathBuf::from("vector_add.cu")]);
    // Not the files a command writes (after -o or a redirection), nor the run command's
    // arguments and outputs: only its scripts. Quoted words as the runner splits them.
    let dir = tempfile::tempdir().unwrap();
    for f in [
        "bench.c",
        "my util.c",
        "drive.py",
        "bench",
        "log.txt",
        "res.json",
        "data.bin",
    ] {
        std::fs::write(dir.path().join(f), "int main(void) { return 0; }\n").unwrap();
    }
    let spec = dir.path().join("ktune.toml");
    std::fs::write(
        &spec,
        format!(
            "{SPACE}\n[runner]\nshell = true\n\
             compile = \"gcc -O2 -I. bench.c 'my util.c' missing.c -o bench > log.txt\"\n\
             run = [\"python3\", \"drive.py\", \"--out\", \"res.json\", \"data.bin\"]\n"
        ),
    )
    .unwrap();
    let problem = ProblemSpec::from_path(&spec).unwrap();
    assert_eq!(
        problem.input_files(),
        ["bench.c", "my util.c", "drive.py"].map(PathBuf::from)
    );
    // A digest per file, stable and sensitive to the contents.
    let digest = problem.input_digest();
    assert_eq!(
        digest.keys().collect::<Vec<_>>(),
        ["bench.c", "drive.py", "my util.c"]
    );
    // SHA-256, as `sha256sum` prints it.
    assert_eq!(
        digest["bench.c"],
        "2ad75d95660563887d8d3f1d0ae1dcf18c2379cbd83a5c72f5ab276351ee6949"
    );
    assert_eq!(problem.input_digest(), digest, "stable");
    std::fs::write(dir.path().join("bench.c"), "int main(void) { return 1; }\n").unwrap();
    assert_ne!(problem.input_digest()["bench.c"], digest["bench.c"]);
}
