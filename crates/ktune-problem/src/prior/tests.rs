use std::path::{Path, PathBuf};

use ktune_core::testing::FnRunner;
use ktune_core::{Budget, Direction, JoinNote, StudyFacts};
use ktune_space::spec::SpaceSpec;
use ktune_space::{SearchSpace, Value};
use ktune_store::Fingerprint;
use serde_json::json;

use super::*;
use crate::{OpenStudy, Opening, Participation, StudyPlace};

use crate::tests::SPACE;

fn space() -> SearchSpace {
    SpaceSpec::from_toml_str(SPACE, "t.toml")
        .unwrap()
        .build()
        .unwrap()
}

/// The prior's time of (x, y): faster with more work per thread, ties broken by `x`; (4, 16)
/// failed.
fn time(x: i64, y: i64) -> Option<f64> {
    ((x, y) != (4, 16)).then(|| 100.0 / (x * y) as f64 + 0.01 * x as f64)
}

/// Every valid configuration of the space as a Kernel Tuner cache would record it.
fn cache_json() -> serde_json::Value {
    let mut cache = serde_json::Map::new();
    for x in [1i64, 2, 4, 8] {
        for y in [1i64, 2, 4, 8, 16] {
            if x * y <= 64 {
                let t = time(x, y).map_or(json!("RuntimeFailedConfig"), |t| json!(t));
                cache.insert(format!("{x},{y}"), json!({"x": x, "y": y, "time": t}));
            }
        }
    }
    json!({
        "kernel_name": "k",
        "tune_params_keys": ["x", "y"],
        "tune_params": {"x": [1, 2, 4, 8], "y": [1, 2, 4, 8, 16]},
        "cache": cache,
    })
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn load(text: &str, dir: &Path) -> Result<LoadedPrior, PriorLoadError> {
    PriorSource::parse(text, dir)?.load("time")
}

/// What a run of a study gives back: the configurations it evaluated, what joining noticed,
/// and the priors its strategy was told.
type StudyRun = (Vec<Vec<u32>>, Vec<JoinNote>, Vec<ktune_core::PriorFact>);

/// Opens the study in the SQLite file `db` with `strategy` and these priors (given as
/// loaded), and evaluates `n` configurations of `x * y` (a failure at x = 1, y = 16).
fn study_run(
    db: &Path,
    strategy: &str,
    priors: &[LoadedPrior],
    n: usize,
) -> Result<StudyRun, ktune_core::CoreError> {
    let mut runner = FnRunner::values(|v| (v != [1.0, 16.0]).then(|| v[0] * v[1]));
    study_run_of(&space(), &mut runner, db, strategy, priors, n)
}

/// [`study_run`] of any space and runner.
fn study_run_of(
    space: &SearchSpace,
    runner: &mut FnRunner<'_>,
    db: &Path,
    strategy: &str,
    priors: &[LoadedPrior],
    n: usize,
) -> Result<StudyRun, ktune_core::CoreError> {
    let mut study: OpenStudy<'_> = StudyPlace::Single(db.to_path_buf()).join(Opening {
        space: space.into(),
        fingerprint: Fingerprint::new(space, "{}", "time"),
        facts: StudyFacts {
            objective: "time".into(),
            direction: Direction::Minimize,
            unit: None,
            budget: Some(n),
            strategy: strategy.into(),
            seed: 1,
            priors: priors.iter().map(|p| p.fact.clone()).collect(),
            objectives: Vec::new(),
            goal: None,
        },
        budget: Budget::default(),
        cap: None,
        strategy: strategy
            .parse::<ktune_strategies::CheckedStrategy>()
            .unwrap()
            .build(),
        seed: 1,
        participation: Participation {
            device: Some("test device".into()),
            allow_mixed_hardware: false,
            lease: std::time::Duration::from_secs(60),
            batch: 1,
        },
        priors: priors.iter().map(|p| p.prior.clone()).collect(),
    })?;
    study.run(runner, &mut ())?;
    let facts = study.priors.iter().map(|(f, _)| f.clone()).collect();
    Ok((
        runner.evaluated().to_vec(),
        study.joined.notes.clone(),
        facts,
    ))
}

#[test]
fn a_cache_a_gzipped_cache_a_t4_file_and_a_study_all_read_as_priors() {
    let dir = tempfile::tempdir().unwrap();
    let text = cache_json().to_string();
    write(dir.path(), "a100.json", &text);
    let cache = load("a100.json", dir.path()).unwrap();
    assert_eq!(cache.prior.parameters, ["x", "y"]);
    assert_eq!(cache.prior.measurements.len(), 19);
    assert_eq!(
        cache
            .prior
            .measurements
            .iter()
            .filter(|m| m.objective.is_none())
            .count(),
        1,
        "the failure is kept as one"
    );
    assert_eq!(cache.fact.measurements, 19);
    assert!(
        Path::new(&cache.fact.source).is_absolute(),
        "{}",
        cache.fact.source
    );

    // The format is read from the content: a gzipped cache named anything is the same prior.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
    std::fs::write(dir.path().join("a100.data"), gz.finish().unwrap()).unwrap();
    let zipped = load("a100.data", dir.path()).unwrap();
    assert_eq!(zipped.fact.fingerprint, cache.fact.fingerprint);
    assert_eq!(zipped.prior.measurements, cache.prior.measurements);

    // A T4 file: configurations by name, the first objective's measurement, a failure as a
    // string; results the constraints refused are not measurements.
    let t4 = json!({"schema_version": "1.0.0", "results": [
        {"configuration": {"x": 8, "y": 8}, "invalidity": "correct", "objectives": ["time"],
         "measurements": [{"name": "time", "value": 1.5, "unit": "ms"}]},
        {"configuration": {"x": 4, "y": 16}, "invalidity": "runtime", "objectives": ["time"],
         "measurements": [{"name": "time", "value": "RuntimeFailedConfig", "unit": "ms"}]},
        {"configuration": {"x": 8, "y": 16}, "invalidity": "constraints", "objectives": ["time"],
         "measurements": []},
    ]});
    write(dir.path(), "run.t4", &t4.to_string());
    let t4 = load("run.t4", dir.path()).unwrap();
    assert_eq!(t4.prior.parameters, ["x", "y"]);
    assert_eq!(t4.prior.direction, Direction::Minimize);
    let objectives: Vec<_> = t4.prior.measurements.iter().map(|m| m.objective).collect();
    assert_eq!(objectives, [Some(1.5), None]);

    // A ktune study: every evaluation, failures as failures, in the study's direction.
    let db = dir.path().join("earlier.db");
    study_run(&db, "random", &[], 6).unwrap();
    let study = load("earlier.db", dir.path()).unwrap();
    assert_eq!(study.prior.measurements.len(), 6);
    assert_eq!(study.prior.parameters, ["x", "y"]);
    for m in &study.prior.measurements {
        let v: Vec<f64> = m.values.iter().map(|v| v.as_f64().unwrap()).collect();
        let want = (v != [1.0, 16.0]).then(|| v[0] * v[1]);
        assert_eq!(m.objective, want, "{v:?}");
    }
    // And by URL, naming the study.
    let url = format!("sqlite://{}#default", db.display());
    let by_url = load(&url, Path::new("/")).unwrap();
    assert_eq!(by_url.fact.fingerprint, study.fact.fingerprint);
    assert!(
        by_url.fact.source.ends_with("earlier.db#default"),
        "{}",
        by_url.fact.source
    );
}

#[test]
fn what_cannot_be_a_prior_is_named_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let err = |text: &str| load(text, dir.path()).unwrap_err().to_string();
    let e = err("missing.json");
    ktune_core::testing::assert_mentions(&e, &["missing.json", "cannot read"]);
    write(
        dir.path(),
        "notes.txt",
        "block sizes that worked: 128, 256\n",
    );
    let e = err("notes.txt");
    ktune_core::testing::assert_mentions(
        &e,
        &[
            "notes.txt",
            "not a ktune study, a Kernel Tuner cache or a T4",
        ],
    );
    write(dir.path(), "other.json", r#"{"name": "not a cache"}"#);
    let e = err("other.json");
    ktune_core::testing::assert_mentions(&e, &["other.json", "not a ktune study"]);
    write(
        dir.path(),
        "empty.t4",
        r#"{"schema_version": "1.0.0", "results": []}"#,
    );
    let e = err("empty.t4");
    ktune_core::testing::assert_mentions(&e, &["empty.t4", "holds no measurements"]);
    write(dir.path(), "c.json", &cache_json().to_string());
    let e = err("c.json#gemm");
    ktune_core::testing::assert_mentions(&e, &["#gemm", "not a ktune study file"]);
    let db = dir.path().join("s.db");
    study_run(&db, "random", &[], 2).unwrap();
    let e = err("s.db#nope");
    ktune_core::testing::assert_mentions(&e, &["s.db#nope", "nope"]);
    // A password never appears in what is reported or recorded.
    let e = load("postgresql://me:hunter2@localhost:1/db#s", dir.path())
        .map(|p| p.fact.source)
        .unwrap_or_else(|e| e.to_string());
    assert!(!e.contains("hunter2"), "{e}");
}

#[test]
fn a_study_records_its_priors_and_a_resumed_one_uses_them_again() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a100.json", &cache_json().to_string());
    let prior = load("a100.json", dir.path()).unwrap();
    // The order prior_rank follows without a guard: the prior's, failures last.
    let mut order: Vec<(f64, Vec<u32>)> = prior
        .prior
        .measurements
        .iter()
        .filter_map(|m| {
            let v: Vec<Value> = m.values.clone();
            let c = space().configuration_of(&v).unwrap();
            m.objective.map(|t| (t, c))
        })
        .collect();
    order.sort_by(|a, b| a.0.total_cmp(&b.0));
    let order: Vec<Vec<u32>> = order.into_iter().map(|(_, c)| c).collect();

    let db = dir.path().join("h100.db");
    let (first, notes, facts) =
        study_run(&db, "prior_rank", std::slice::from_ref(&prior), 3).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(facts, std::slice::from_ref(&prior.fact));
    assert_eq!(first, order[..3], "the priors' best first");

    // Resumed without naming them, for three more: the same priors, the next in their order.
    let (second, notes, facts) = study_run(&db, "prior_rank", &[], 6).unwrap();
    assert_eq!(facts, std::slice::from_ref(&prior.fact), "{notes:?}");
    assert_eq!(second, order[3..6]);

    // Resumed with another prior: that one is used, and the difference is said.
    write(
        dir.path(),
        "mi250x.t4",
        &json!({"schema_version": "1.0.0", "results": [
        {"configuration": {"x": 1, "y": 1}, "objectives": ["time"],
         "measurements": [{"name": "time", "value": 0.5, "unit": "ms"}]}]})
        .to_string(),
    );
    let other = load("mi250x.t4", dir.path()).unwrap();
    let (third, notes, facts) =
        study_run(&db, "prior_rank", std::slice::from_ref(&other), 7).unwrap();
    assert_eq!(facts, std::slice::from_ref(&other.fact));
    let said: Vec<&JoinNote> = notes
        .iter()
        .filter(|n| matches!(n, JoinNote::Priors { .. }))
        .collect();
    assert!(
        matches!(&said[..], [JoinNote::Priors { started, uses, .. }]
            if started[..] == *std::slice::from_ref(&prior.fact) && uses[..] == *std::slice::from_ref(&other.fact)),
        "{notes:?}"
    );
    assert!(
        said[0].to_string().contains("was started with priors"),
        "{}",
        said[0]
    );
    assert_eq!(
        third,
        [space()
            .configuration_of(&[Value::Int(1), Value::Int(1)])
            .unwrap()]
    );

    // A recorded prior that changed since stops a resumed study, naming it.
    let db = dir.path().join("a4000.db");
    study_run(&db, "prior_rank", std::slice::from_ref(&prior), 2).unwrap();
    let mut changed = cache_json();
    changed["cache"]["8,8"]["time"] = json!(99.0);
    write(dir.path(), "a100.json", &changed.to_string());
    let e = study_run(&db, "prior_rank", &[], 4)
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["a100.json", "changed since the study recorded it"]);
}

#[test]
fn a_prior_that_shares_no_parameter_or_goes_the_other_way_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("s.db");
    write(
        dir.path(),
        "other.t4",
        &json!({"schema_version": "1.0.0", "results": [
        {"configuration": {"tile": 4}, "objectives": ["time"],
         "measurements": [{"name": "time", "value": 0.5, "unit": "ms"}]}]})
        .to_string(),
    );
    let other = load("other.t4", dir.path()).unwrap();
    let e = study_run(&db, "auto", &[other], 2).unwrap_err().to_string();
    ktune_core::testing::assert_mentions(&e, &["other.t4", "tile"]);
    write(
        dir.path(),
        "rate.t4",
        &json!({"schema_version": "1.0.0", "results": [
        {"configuration": {"x": 4, "y": 4}, "objectives": ["GFLOP/s"],
         "measurements": [{"name": "GFLOP/s", "value": 900.0, "unit": ""}]}]})
        .to_string(),
    );
    let rate = load("rate.t4", dir.path()).unwrap();
    assert_eq!(rate.prior.direction, Direction::Maximize);
    let e = study_run(&dir.path().join("t.db"), "auto", &[rate], 2)
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["rate.t4", "maxim"]);
}

#[test]
fn the_transfer_section_names_priors_beside_the_spec_and_flags_replace_them() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a100.json", &cache_json().to_string());
    let spec = format!(
        "{SPACE}\n[runner]\nrun = \"true\"\nobjective = {{ name = \"time\", regex = 't: (?P<value>[0-9.]+)' }}\n\n\
         [transfer]\npriors = [\"a100.json\"]\n"
    );
    let path = write(dir.path(), "gemm.toml", &spec);
    let problem = crate::ProblemSpec::from_path(&path).unwrap();
    let plan = |priors: Option<Vec<String>>| {
        crate::Plan::resolve(
            &problem,
            crate::RunArgs {
                priors,
                max_evaluations: Some(4),
                ..crate::RunArgs::default()
            },
            &crate::COMMAND_LINE,
        )
    };
    let p = plan(None).unwrap();
    assert_eq!(p.priors.len(), 1);
    assert_eq!(
        p.facts(&problem).priors[0].source,
        dir.path().join("a100.json").display().to_string()
    );
    let given = dir.path().join("a100.json").display().to_string();
    assert_eq!(plan(Some(vec![given])).unwrap().priors.len(), 1);
    let e = plan(Some(vec!["nowhere.json".into()]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere.json"), "{e}");
    let bad = spec.replace("priors = [", "prior = [");
    write(dir.path(), "bad.toml", &bad);
    let e = crate::ProblemSpec::from_path(dir.path().join("bad.toml"))
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["[transfer]", "prior"]);
}

#[test]
fn a_studys_permutations_are_read_by_their_items_names() {
    let order = |items: &str| {
        SpaceSpec::from_toml_str(
            &format!("[[parameter]]\nname = \"order\"\ntype = \"permutation\"\nitems = {items}\n"),
            "t.toml",
        )
        .unwrap()
        .build()
        .unwrap()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("loops.db");
    // The earlier study declared the loops k, i, j; the order that runs i first is fastest.
    let earlier = order(r#"["k", "i", "j"]"#);
    let mut runner = FnRunner::new(|s, c| {
        let shown = s.describe(c);
        Some(if shown.starts_with("order=[i") {
            1.0
        } else {
            2.0
        })
    });
    study_run_of(&earlier, &mut runner, &db, "brute_force", &[], 6).unwrap();

    let loaded = load("loops.db", dir.path()).unwrap();
    assert_eq!(
        loaded.prior.items,
        [(
            "order".to_string(),
            vec!["k".to_string(), "i".to_string(), "j".to_string()]
        )]
    );
    // The target declares them i, j, k: what ran i first there is what runs i first here.
    let target = order(r#"["i", "j", "k"]"#);
    let m = loaded
        .prior
        .match_onto(&target, Direction::Minimize)
        .unwrap();
    assert_eq!(m.report.matched, 6);
    for (c, v) in &m.observations {
        let shown = target.describe(c);
        assert_eq!(
            *v == Some(1.0),
            shown.starts_with("order=[i"),
            "{shown}: {v:?}"
        );
    }
}
