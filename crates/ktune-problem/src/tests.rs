use std::path::{Path, PathBuf};

use super::*;
use ktune_core::testing::FnRunner;
use ktune_core::{Budget, Direction, JoinNote, Metric, StudyFacts};
use ktune_store::{Fingerprint, Location};

/// A two-parameter space with one constraint (also the priors' tests').
pub(crate) const SPACE: &str = r#"
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

#[track_caller]
fn err(text: &str) -> String {
    ktune_core::testing::refusal(read(text))
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
    assert_eq!(s.build().name(), "genetic_algorithm");
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
    let cases: &[(&str, &[&str])] = &[
        (
            "[runner]\nkind = \"hip\"\n",
            &[
                "[runner] section of `dir/gemm.toml`",
                "available: command, cuda, opencl",
            ],
        ),
        (
            "[runner]\nkind = \"opencl\"\nkernel = \"k\"\n",
            &["[runner] section", "missing field `source`"],
        ),
        ("[runner]\nkind = 3\n", &["kind = 3 is not a runner's name"]),
        (
            "[runner]\nrun = \"x\"\nrepaet = 3\n",
            &["[runner] section", "repaet"],
        ),
        (
            "[runner]\nkind = \"cuda\"\nkernel = \"k\"\n",
            &["[runner] section", "source"],
        ),
        (
            "[strategy]\nname = \"annealing-ish\"\n",
            &["[strategy] section", "unknown strategy `annealing-ish`"],
        ),
        ("[strategy]\npopsize = 3\n", &["needs a `name`"]),
        (
            "[strategy]\nname = \"ga\"\npopsize = -3\n",
            &["genetic_algorithm"],
        ),
        (
            "[budget]\nmax_evaluation = 3\n",
            &["[budget] section", "max_evaluation"],
        ),
        ("[budget]\nmax_seconds = -1.0\n", &["[budget] section"]),
        (
            "[storage]\nurl = \"mysql://x\"\n",
            &["[storage] section", "mysql"],
        ),
        ("[storage]\nstudy = \"a\"\n", &["[storage] section", "url"]),
        // The space's reader still refuses unknown sections, with their position.
        ("[stratgy]\nname = \"ga\"\n", &["stratgy"]),
    ];
    for (section, wanted) in cases {
        let e = err(&format!("{SPACE}\n{section}"));
        assert!(wanted.iter().all(|w| e.contains(w)), "{section}: {e}");
    }
}

#[test]
fn a_missing_file_is_named() {
    let e = ProblemSpec::from_path("/no/such/ktune.toml").unwrap_err();
    assert!(matches!(e, ProblemError::Io { .. }));
    assert!(e.to_string().contains("/no/such/ktune.toml"), "{e}");
}

fn plan(text: &str, args: RunArgs) -> Result<Plan, PlanError> {
    Plan::resolve(&read(text).unwrap(), args, &COMMAND_LINE)
}

#[test]
fn the_plan_takes_arguments_over_the_file_over_the_defaults() {
    let file = format!(
        "{SPACE}\n[strategy]\nname = \"ga\"\n\n[budget]\nmax_evaluations = 40\nmax_seconds = 9\n"
    );
    // The strategy, the budget's two limits and where the study lives.
    let resolved = |p: Plan| {
        let b = p.budget;
        (
            p.strategy.canonical().to_string(),
            b.max_evaluations,
            b.max_seconds,
            p.place,
        )
    };
    let p = plan(&file, RunArgs::default()).unwrap();
    let single = StudyPlace::Single(PathBuf::from("dir/gemm.db"));
    assert_eq!(
        resolved(p),
        (
            "genetic_algorithm".into(),
            Some(40),
            Some(9.0),
            Some(single)
        )
    );
    let p = plan(
        &file,
        RunArgs {
            strategy: Some("random_sample".parse().unwrap()),
            max_evaluations: Some(5),
            storage: Some("sqlite:///tmp/x.db".into()),
            ..RunArgs::default()
        },
    )
    .unwrap();
    let shared = StudyPlace::Shared {
        location: Location::Sqlite(PathBuf::from("/tmp/x.db")),
        study: "gemm".into(),
    };
    assert_eq!(
        resolved(p),
        ("random".into(), Some(5), Some(9.0), Some(shared))
    );
    // Nothing said anywhere: auto, no limit (which the command line refuses), and in memory
    // where the front end keeps no database.
    let p = plan(
        SPACE,
        RunArgs {
            database_beside_spec: false,
            ..RunArgs::default()
        },
    )
    .unwrap();
    assert_eq!(p.strategy.name(), "auto");
    assert_eq!(p.place, None);
    let e = p.require_limit(&COMMAND_LINE).unwrap_err().to_string();
    assert!(
        e.starts_with("no budget: give --max-evals or --time-limit"),
        "{e}"
    );
    assert!(
        p.require_limit(&PYTHON)
            .unwrap_err()
            .to_string()
            .contains("max_evals")
    );
}

#[test]
fn a_plan_names_arguments_that_contradict_or_are_out_of_range_as_the_front_end_spells_them() {
    let refused = |args: RunArgs| plan(SPACE, args).unwrap_err().to_string();
    let both = RunArgs {
        db: Some("a.db".into()),
        storage: Some("sqlite:///b.db".into()),
        ..RunArgs::default()
    };
    let e = refused(both.clone());
    assert!(
        e.contains("either --db (one process) or --storage (a shared study), not both"),
        "{e}"
    );
    let e = Plan::resolve(&read(SPACE).unwrap(), both, &PYTHON)
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["either db", "or storage"]);
    let study = Some("s".into());
    let e = refused(RunArgs {
        study,
        ..RunArgs::default()
    });
    assert!(e.starts_with("--study needs --storage"), "{e}");
    let e = refused(RunArgs {
        max_evaluations: Some(0),
        ..RunArgs::default()
    });
    assert_eq!(e, "--max-evals must be at least 1");
    for bad in [0.0, -1.0, f64::NAN, 1e300] {
        let max_seconds = Some(bad);
        let e = refused(RunArgs {
            max_seconds,
            ..RunArgs::default()
        });
        assert!(e.starts_with("--time-limit must be a positive"), "{e}");
        let e = refused(RunArgs {
            lease: bad,
            ..RunArgs::default()
        });
        assert!(e.starts_with("--lease must be a positive"), "{e}");
    }
    let storage = Some("mysql://h/db".into());
    let e = refused(RunArgs {
        storage,
        ..RunArgs::default()
    });
    assert!(e.contains("not a storage URL"), "{e}");
    // A query would have become part of the file's name.
    let e = refused(RunArgs {
        storage: Some("sqlite:///tmp/s.db?mode=ro".into()),
        ..RunArgs::default()
    });
    assert!(e.contains("takes no parameters (`?mode=ro`)"), "{e}");
    // Names printed back in every listing: not empty, no control characters.
    for (study, device, said) in [
        (Some(""), None, "--study cannot be empty"),
        (
            Some("a\nb"),
            None,
            "--study \"a\\nb\" contains the control character U+000A",
        ),
        (Some("x\u{1b}[2J"), None, "U+001B"),
        (None, Some(" "), "--device cannot be empty"),
    ] {
        let e = refused(RunArgs {
            storage: Some("sqlite:///tmp/s.db".into()),
            study: study.map(str::to_string),
            device: device.map(str::to_string),
            ..RunArgs::default()
        });
        assert!(e.contains(said), "{e}");
    }
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

/// Joins the study `s` in the SQLite file `db` as a process with these facts, and runs it
/// with random search on `x + y` when `measure` (how many evaluations the study then holds).
fn join(
    db: &Path,
    facts: &StudyFacts,
    measure: bool,
) -> Result<(Vec<JoinNote>, Option<usize>, usize), ktune_core::CoreError> {
    let space = read(SPACE).unwrap().space.build().unwrap();
    let place = StudyPlace::Shared {
        location: Location::Sqlite(db.to_path_buf()),
        study: "s".into(),
    };
    let mut study = place.join(Opening {
        space: (&space).into(),
        fingerprint: Fingerprint::new(&space, "{}", &facts.objective),
        facts: facts.clone(),
        budget: Budget::default(),
        cap: None,
        strategy: "random"
            .parse::<ktune_strategies::CheckedStrategy>()
            .unwrap()
            .build(),
        seed: facts.seed,
        participation: Participation {
            device: Some("test device".into()),
            allow_mixed_hardware: false,
            lease: std::time::Duration::from_secs(60),
            batch: 1,
        },
        priors: Vec::new(),
    })?;
    if measure {
        let mut runner = FnRunner::values(|x| Some(x[0] + x[1]));
        study.run(&mut runner, &mut ())?;
    }
    let held = study.storage.evaluations()?;
    Ok((study.joined.notes, study.joined.facts.budget, held))
}

fn facts(direction: Direction, budget: Option<usize>, strategy: &str) -> StudyFacts {
    StudyFacts {
        objective: "time".into(),
        direction,
        unit: Some("ms".into()),
        budget,
        strategy: strategy.into(),
        seed: 0,
        priors: Vec::new(),
        objectives: Vec::new(),
        goal: None,
    }
}

#[test]
fn a_process_with_another_direction_or_objective_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    join(&db, &facts(Direction::Minimize, Some(4), "random"), true).unwrap();
    let e = join(&db, &facts(Direction::Maximize, Some(4), "random"), false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("study `s` minimizes its objective and this process would maximize it"),
        "{e}"
    );
    // A study's objective is part of its fingerprint too; a study stored without the
    // objective key (an older one) takes the first writer's.
    let other = StudyFacts {
        objective: "energy".into(),
        ..facts(Direction::Minimize, Some(4), "random")
    };
    let mut storage = StudyPlace::Single(db.clone())
        .open(&Fingerprint::new(
            &read(SPACE).unwrap().space.build().unwrap(),
            "{}",
            "energy",
        ))
        .unwrap();
    storage.set_meta(ktune_core::OBJECTIVE_KEY, "time").unwrap();
    let e = other.join(storage.as_mut(), 0).unwrap_err().to_string();
    ktune_core::testing::assert_mentions(
        &e,
        &["measures `time` and this process would measure `energy`"],
    );
}

#[test]
fn a_study_of_several_objectives_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let two = StudyFacts {
        objectives: vec![
            ktune_core::Metric::new("time", Direction::Minimize),
            ktune_core::Metric::new("energy", Direction::Minimize),
        ],
        ..facts(Direction::Minimize, Some(4), "random")
    };
    let fingerprint = Fingerprint::new(&read(SPACE).unwrap().space.build().unwrap(), "{}", "time");
    let open = || StudyPlace::Single(db.clone()).open(&fingerprint).unwrap();
    let joined = two.join(open().as_mut(), 0).unwrap();
    assert_eq!(joined.facts.objectives, two.objectives);
    // The same list joins; one objective alone, or another list, is refused naming both.
    assert_eq!(
        two.join(open().as_mut(), 0).unwrap().facts.objectives,
        two.objectives
    );
    let one = facts(Direction::Minimize, Some(4), "random");
    let e = one.join(open().as_mut(), 0).unwrap_err().to_string();
    ktune_core::testing::assert_mentions(
        &e,
        &[
            "measures `time (minimize), energy (minimize)`",
            "`time (minimize) alone`",
            "keeps its objectives",
        ],
    );
    let flipped = StudyFacts {
        objectives: vec![
            ktune_core::Metric::new("time", Direction::Minimize),
            ktune_core::Metric::new("energy", Direction::Maximize),
        ],
        ..two.clone()
    };
    let e = flipped.join(open().as_mut(), 0).unwrap_err().to_string();
    ktune_core::testing::assert_mentions(&e, &["energy (maximize)"]);
    // A study of one objective records no list, and takes one objective as before.
    let db1 = dir.path().join("one.db");
    let mut storage = StudyPlace::Single(db1).open(&fingerprint).unwrap();
    assert!(
        one.join(storage.as_mut(), 0)
            .unwrap()
            .facts
            .objectives
            .is_empty()
    );
    assert_eq!(storage.meta(ktune_core::OBJECTIVES_KEY).unwrap(), None);
}

#[test]
fn a_studys_goal_is_kept_for_a_process_without_one_and_another_is_noted() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    let seeking = |goal: Option<&str>| StudyFacts {
        objectives: vec![
            ktune_core::Metric::new("time", Direction::Minimize),
            ktune_core::Metric::new("energy", Direction::Minimize),
        ],
        goal: goal.map(str::to_string),
        ..facts(Direction::Minimize, Some(4), "random")
    };
    let fingerprint = Fingerprint::new(&read(SPACE).unwrap().space.build().unwrap(), "{}", "time");
    let open = || StudyPlace::Single(db.clone()).open(&fingerprint).unwrap();
    let first = seeking(Some("energy within 5% of time"));
    let joined = first.join(open().as_mut(), 0).unwrap();
    assert_eq!(joined.facts.goal, first.goal);
    assert!(joined.notes.is_empty());
    // Resumed without a goal: the study's.
    let resumed = seeking(None).join(open().as_mut(), 0).unwrap();
    assert_eq!(resumed.facts.goal, first.goal);
    assert!(resumed.notes.is_empty());
    // With another: its own, with a note naming both; the study keeps its first.
    let other = seeking(Some("weighted time=1, energy=1"))
        .join(open().as_mut(), 0)
        .unwrap();
    assert_eq!(
        other.facts.goal.as_deref(),
        Some("weighted time=1, energy=1")
    );
    let note = other
        .notes
        .iter()
        .map(|n| n.to_string())
        .collect::<String>();
    ktune_core::testing::assert_mentions(
        &note,
        &[
            "started seeking `energy within 5% of time`",
            "seeks `weighted time=1, energy=1`",
        ],
    );
    assert_eq!(
        open().meta(ktune_core::GOAL_KEY).unwrap().as_deref(),
        Some("energy within 5% of time")
    );
}

#[test]
fn another_budget_is_noted_and_the_studys_kept_until_it_is_spent() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    // The first writer's budget, 6; a process joining with 9 works to 6.
    let (notes, budget, held) =
        join(&db, &facts(Direction::Minimize, Some(6), "random"), false).unwrap();
    assert!(notes.is_empty() && budget == Some(6) && held == 0);
    let (notes, budget, held) =
        join(&db, &facts(Direction::Minimize, Some(9), "tpe"), true).unwrap();
    assert_eq!(budget, Some(6));
    assert_eq!(held, 6);
    let said: Vec<String> = notes.iter().map(|n| n.to_string()).collect();
    assert_eq!(
        said,
        [
            "study `s` was started with strategy random; this process runs tpe",
            "study `s` has a budget of 6 evaluations; this process's 9 is ignored (a study keeps its first budget until it is spent)",
        ]
    );
    // Spent: a larger budget raises it, and that process measures the difference.
    let (notes, budget, held) =
        join(&db, &facts(Direction::Minimize, Some(9), "random"), true).unwrap();
    assert_eq!((budget, held), (Some(9), 9));
    assert_eq!(
        notes,
        [JoinNote::BudgetRaised {
            study: "s".into(),
            from: 6,
            to: 9
        }]
    );
    // A smaller one, or none, leaves it.
    let (notes, budget, _) =
        join(&db, &facts(Direction::Minimize, Some(3), "random"), false).unwrap();
    assert_eq!((notes.len(), budget), (1, Some(9)));
    let (notes, budget, _) = join(&db, &facts(Direction::Minimize, None, "random"), false).unwrap();
    assert_eq!((notes.len(), budget), (0, Some(9)));
}
