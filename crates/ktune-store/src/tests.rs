//! Conformance tests of the store: round trips, fingerprints, durability and bad paths.

use std::path::{Path, PathBuf};

use ktune_core::{FailureKind, Observed, Outcome, Record, Timings};
use ktune_space::{Parameter, SearchSpace};
use rusqlite::Connection;
use serde_json::Value as Json;
use serde_json::json;

use super::*;

const RUNNER: &str = r#"{"command":"./bench","repeats":3}"#;

fn space_with(tile: &[i64], constraints: &[&str]) -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer("tile", tile.iter().copied()).unwrap(),
            Parameter::categorical("mode", ["fast", "safe, slow"]).unwrap(),
            Parameter::real("scale", [0.5, 1.0]).unwrap(),
        ],
        constraints,
    )
    .unwrap()
}

fn space() -> SearchSpace {
    space_with(&[1, 2], &["tile * scale < 2"])
}

fn fingerprint(space: &SearchSpace) -> Fingerprint {
    Fingerprint::new(space, RUNNER, "time")
}

fn timings(x: f64) -> Timings {
    Timings {
        compile: x,
        benchmark: x / 3.0,
        verification: 0.1,
        framework: 1e-9,
    }
}

fn records() -> Vec<Record> {
    vec![
        Record {
            config: vec![1, 0, 0],
            outcome: Outcome::ok(vec![2.5, 1234.000001, 0.1 + 0.2], timings(0.7))
                .with_samples(samples()),
            clock: 1.0,
        },
        Record {
            config: vec![0, 1, 0],
            outcome: Outcome::failed(
                FailureKind::Compile,
                "error: \"x\" undeclared\n  at line 3",
                timings(0.2),
            ),
            clock: 1.5,
        },
        Record {
            config: vec![0, 0, 0],
            outcome: Outcome::failed(FailureKind::WrongOutput, "", timings(0.0)),
            clock: 2.25,
        },
        Record {
            config: vec![1, 1, 0],
            outcome: Outcome::ok(vec![f64::INFINITY, -0.0], timings(1.0)).with_observed(
                [
                    ("device".to_string(), json!("NVIDIA H100 80GB HBM3")),
                    ("times_ms".to_string(), json!([0.5, 0.25])),
                ]
                .into_iter()
                .collect(),
            ),
            clock: 3.0,
        },
        // Violates `tile * scale < 2`: proposed by a constraint-unaware strategy.
        Record {
            config: vec![1, 1, 1],
            outcome: Outcome::failed(FailureKind::Invalid, "violates constraints", timings(0.0)),
            clock: 3.0,
        },
    ]
}

/// Repeated measurements, aborted early (the flag must survive too).
fn samples() -> ktune_core::Samples {
    ktune_core::Samples {
        values: vec![2.25, 2.5, 2.75],
        runs_per_sample: 4,
        aborted: true,
        statistic: ktune_core::Statistic::Median,
    }
}

fn db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ktune.db");
    (dir, path)
}

#[test]
fn records_round_trip_in_order() {
    let space = space();
    let (_dir, path) = db();
    let recs = records();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        assert!(store.is_empty().unwrap());
        assert!(store.records(&space).unwrap().is_empty());
        for r in &recs {
            store.record(&space, r).unwrap();
        }
        assert_eq!(store.records(&space).unwrap(), recs);
    }
    let store = Store::open(&path, &fingerprint(&space)).unwrap();
    assert_eq!(store.len().unwrap(), recs.len());
    let back = store.records(&space).unwrap();
    assert_eq!(back, recs);
    // -0.0 == 0.0, so check the sign survived too.
    match &back[3].outcome {
        Outcome::Ok { values, .. } => assert!(values[1].is_sign_negative()),
        other => panic!("{other:?}"),
    }
    assert_eq!(store.fingerprint().unwrap(), fingerprint(&space));
}

#[test]
fn not_a_number_survives() {
    let space = space();
    let (_dir, path) = db();
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    let t = Timings {
        compile: f64::NAN,
        ..Timings::default()
    };
    let r = Record {
        config: vec![0, 0, 0],
        outcome: Outcome::ok(vec![f64::NAN, f64::NEG_INFINITY], t),
        clock: f64::NAN,
    };
    store.record(&space, &r).unwrap();
    let back = &store.records(&space).unwrap()[0];
    assert!(back.clock.is_nan());
    assert!(back.outcome.timings().compile.is_nan());
    match &back.outcome {
        Outcome::Ok { values, .. } => {
            assert!(values[0].is_nan());
            assert_eq!(values[1], f64::NEG_INFINITY);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn rows_describe_the_evaluations() {
    let space = space();
    let (_dir, path) = db();
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    for r in &records() {
        store.record(&space, r).unwrap();
    }
    let rows = store.rows().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(
        rows[0],
        Row {
            seq: 0,
            params: vec![
                ("tile".into(), json!(2)),
                ("mode".into(), json!("fast")),
                ("scale".into(), json!(0.5)),
            ],
            status: "ok".into(),
            objective: Some(2.5),
            metrics: vec![2.5, 1234.000001, 0.1 + 0.2],
            reason: None,
            compile_s: 0.7,
            benchmark_s: 0.7 / 3.0,
            verification_s: 0.1,
            framework_s: 1e-9,
            clock_s: 1.0,
            observed: Default::default(),
            samples: Some(samples()),
            worker: None,
            device: None,
        }
    );
    assert_eq!(rows[1].seq, 1);
    assert_eq!(rows[1].status, "compile");
    assert_eq!(rows[1].objective, None);
    assert_eq!(
        rows[1].reason.as_deref(),
        Some("error: \"x\" undeclared\n  at line 3")
    );
    assert_eq!(rows[2].status, "wrong_output");
    assert_eq!(rows[2].reason.as_deref(), Some(""));
    assert_eq!(rows[4].status, "invalid");
    let statuses: Vec<i64> = rows.iter().map(|r| r.seq).collect();
    assert_eq!(statuses, [0, 1, 2, 3, 4]);
    // And the exports of stored rows.
    let csv = to_csv(&rows, "time");
    assert!(
        csv.starts_with("seq,tile,mode,scale,status,time,reason,"),
        "{csv}"
    );
    assert!(csv.contains(
        "\n1,1,\"safe, slow\",0.5,compile,,\"error: \"\"x\"\" undeclared\n  at line 3\","
    ));
    assert_eq!(to_json(&rows)[1]["params"]["mode"], "safe, slow");
}

#[test]
fn kernel_tuner_cache_of_stored_rows_reads_back() {
    let space = space();
    let (_dir, path) = db();
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    let recs = records();
    for r in &recs {
        store.record(&space, r).unwrap();
    }
    let doc = to_kernel_tuner_cache(
        &store.rows().unwrap(),
        "time",
        &crate::CacheHeader {
            kernel_name: "kernel",
            device_name: "NVIDIA H100",
            problem_size: Some(&[64, 8]),
        },
    );
    // The header Kernel Tuner 1.5 needs to resume or simulate from the file.
    assert_eq!(doc["device_name"], "NVIDIA H100");
    assert_eq!(doc["kernel_name"], "kernel");
    assert_eq!(doc["problem_size"], serde_json::json!([64, 8]));
    // Kernel Tuner appends to the cache, and reads a file that does not end with it as cut
    // off: `cache` is the last key.
    let text = serde_json::to_string_pretty(&doc).unwrap();
    assert!(text.ends_with("}\n}"), "{}", &text[text.len() - 40..]);
    assert_eq!(
        doc.as_object().unwrap().keys().next_back().unwrap(),
        "cache"
    );
    let data = ktune_space::spec::read_cache(&doc.to_string(), "cache.json").unwrap();
    assert!(data.warnings.is_empty(), "{:?}", data.warnings);
    assert_eq!(data.configurations.len(), recs.len());
    for r in &recs {
        let values: Vec<Json> = space
            .values(&r.config)
            .iter()
            .map(|v| v.to_json())
            .collect();
        let i = data
            .configurations
            .iter()
            .position(|c| {
                c.iter()
                    .zip(&data.parameters)
                    .map(|(&i, p)| p.values()[i as usize].to_json())
                    .collect::<Vec<_>>()
                    == values
            })
            .unwrap_or_else(|| panic!("{values:?} not read back"));
        let time = &data.records[i]["time"];
        match (&r.outcome, r.outcome.objective()) {
            (_, Some(v)) if v.is_finite() => assert_eq!(time.as_f64(), Some(v)),
            (_, Some(_)) => assert!(time.is_null()),
            (Outcome::Failed { kind, .. }, None) => assert_eq!(
                time.as_str(),
                Some(match kind {
                    FailureKind::Compile => "CompilationFailedConfig",
                    FailureKind::Invalid => "InvalidConfig",
                    _ => "RuntimeFailedConfig",
                })
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            data.records[i]["compile_time"].as_f64(),
            Some(r.outcome.timings().compile * 1000.0)
        );
    }
}

#[test]
fn meta_round_trips() {
    let space = space();
    let (_dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        assert_eq!(store.meta("strategy").unwrap(), None);
        store.set_meta("strategy", "bayes").unwrap();
        store.set_meta("seed", "42").unwrap();
        store.set_meta("seed", "43").unwrap();
        store.set_meta("note", "multi\nline, \"quoted\" ✓").unwrap();
        let e = store.set_meta("schema_version", "9").unwrap_err();
        assert!(matches!(e, StoreError::ReservedKey { .. }), "{e}");
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.meta("strategy").unwrap().as_deref(), Some("bayes"));
    assert_eq!(store.meta("seed").unwrap().as_deref(), Some("43"));
    assert_eq!(
        store.meta("note").unwrap().as_deref(),
        Some("multi\nline, \"quoted\" ✓")
    );
    assert_eq!(
        store.meta("schema_version").unwrap(),
        Some(SCHEMA_VERSION.to_string())
    );
}

#[test]
fn a_different_problem_is_refused_saying_what_changed() {
    let space = space();
    let (_dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &records()[0]).unwrap();
    }
    let bytes = std::fs::read(&path).unwrap();
    let refused = |fp: &Fingerprint| -> String {
        match Store::open(&path, fp) {
            Err(e @ StoreError::Mismatch { .. }) => e.to_string(),
            Err(e) => panic!("wrong error: {e}"),
            Ok(_) => panic!("opened with {fp:?}"),
        }
    };
    let e = refused(&fingerprint(&space_with(&[1, 2, 4], &["tile * scale < 2"])));
    assert!(
        e.contains("parameter `tile` has values [1, 2, 4] instead of [1, 2]"),
        "{e}"
    );
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("--db"), "{e}");
    assert!(e.contains("delete the old results"), "{e}");
    let e = refused(&fingerprint(&space_with(
        &[1, 2],
        &["tile * scale < 2", "tile < 3"],
    )));
    assert!(e.contains("constraint added: `tile < 3`"), "{e}");
    let e = refused(&Fingerprint::new(
        &space,
        r#"{"command":"./bench","repeats":7}"#,
        "time",
    ));
    assert!(e.contains("the runner settings changed"), "{e}");
    assert!(e.contains("`repeats` is 7 instead of 3"), "{e}");
    let e = refused(&Fingerprint::new(&space, RUNNER, "GFLOP/s"));
    assert!(
        e.contains("the objective is `GFLOP/s` instead of `time`"),
        "{e}"
    );
    // Refusals leave the file alone, and the same problem (with the runner settings spelled
    // differently) still opens.
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    let same = Fingerprint::new(&space, r#"{ "repeats": 3, "command": "./bench" }"#, "time");
    let store = Store::open(&path, &same).unwrap();
    assert_eq!(store.records(&space).unwrap(), vec![records()[0].clone()]);
}

#[test]
fn each_record_is_committed_before_it_returns() {
    let space = space();
    let (_dir, path) = db();
    let mut writer = Store::open(&path, &fingerprint(&space)).unwrap();
    let reader = Store::open_existing(&path).unwrap();
    assert!(reader.rows().unwrap().is_empty());
    for (i, r) in records().iter().enumerate() {
        writer.record(&space, r).unwrap();
        // A second connection sees it while the first is still open.
        let rows = reader.rows().unwrap();
        assert_eq!(rows.len(), i + 1);
        assert_eq!(reader.records(&space).unwrap()[i], *r);
        assert_eq!(Store::open_existing(&path).unwrap().len().unwrap(), i + 1);
    }
    // The write-ahead log is in use.
    let mode: String = writer
        .conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Readers do not stop the writer from committing metadata either.
    writer.set_meta("finished", "yes").unwrap();
    assert_eq!(reader.meta("finished").unwrap().as_deref(), Some("yes"));
}

#[test]
fn recording_twice_or_outside_the_space_is_an_error() {
    let space = space();
    let (_dir, path) = db();
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    let r = records()[0].clone();
    store.record(&space, &r).unwrap();
    let e = store.record(&space, &r).unwrap_err();
    assert!(matches!(e, StoreError::Duplicate { seq: 0, .. }), "{e}");
    assert!(
        e.to_string().contains("tile=2, mode=fast, scale=0.5"),
        "{e}"
    );
    for config in [vec![0, 0], vec![0, 2, 0], vec![9, 0, 0], vec![]] {
        let bad = Record {
            config,
            ..r.clone()
        };
        let e = store.record(&space, &bad).unwrap_err();
        assert!(matches!(e, StoreError::Space { .. }), "{e}");
    }
    assert_eq!(store.len().unwrap(), 1);
}

#[test]
fn records_outside_another_space_are_errors() {
    let space = space();
    let (_dir, path) = db();
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    store.record(&space, &records()[0]).unwrap();
    // tile = 2 is not in this space's domain.
    let e = store
        .records(&space_with(&[1, 4], &[]))
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["not in the search space", "tile=2"]);
    let other = SearchSpace::new(
        vec![Parameter::integer("x", [1, 2]).unwrap()],
        &[] as &[&str],
    )
    .unwrap();
    let e = store.records(&other).unwrap_err().to_string();
    assert!(e.contains("has parameters tile, mode, scale"), "{e}");
    // A wider domain maps the same values to other indices.
    let wider = space_with(&[0, 1, 2], &[]);
    assert_eq!(store.records(&wider).unwrap()[0].config, vec![2, 0, 0]);
}

#[test]
fn unwritable_paths_are_clear_errors_naming_the_path() {
    let space = space();
    let (dir, _) = db();
    let file = dir.path().join("plain.txt");
    std::fs::write(&file, "x").unwrap();
    let bad = [
        (file.join("ktune.db"), "is a file, not a directory"),
        (
            dir.path().join("missing").join("ktune.db"),
            "/missing` does not exist",
        ),
        (
            PathBuf::from("/proc/ktune-store-test.db"),
            "cannot be written",
        ),
        (dir.path().to_path_buf(), "it is a directory"),
    ];
    for (path, reason) in &bad {
        let e = Store::open(path, &fingerprint(&space)).unwrap_err();
        let text = e.to_string();
        assert!(matches!(e, StoreError::Open { .. }), "{path:?}: {text}");
        assert!(text.contains(&path.display().to_string()), "{text}");
        assert!(text.contains("cannot open or create"), "{text}");
        assert!(text.contains(reason), "{text}");
        assert!(std::error::Error::source(&e).is_some());
    }
    let e = Store::open_existing(&dir.path().join("nothing.db")).unwrap_err();
    assert!(matches!(e, StoreError::Missing { .. }), "{e}");
    assert!(!dir.path().join("nothing.db").exists());
}

#[test]
fn files_that_are_not_ktune_databases_are_refused_untouched() {
    let space = space();
    let (dir, _) = db();
    let text = dir.path().join("notes.db");
    let content = "this is not an SQLite file, it is a long enough line of plain text\n".repeat(20);
    std::fs::write(&text, &content).unwrap();
    for e in [
        Store::open(&text, &fingerprint(&space)).unwrap_err(),
        Store::open_existing(&text).unwrap_err(),
    ] {
        let s = e.to_string();
        assert!(matches!(e, StoreError::NotADatabase { .. }), "{s}");
        assert!(s.contains(&text.display().to_string()), "{s}");
        assert!(s.contains("not a ktune results database"), "{s}");
        assert!(s.contains("not an SQLite database"), "{s}");
    }
    assert_eq!(std::fs::read_to_string(&text).unwrap(), content);

    // Another program's SQLite database.
    let other = dir.path().join("other.sqlite");
    {
        let c = Connection::open(&other).unwrap();
        c.execute_batch("CREATE TABLE people (name TEXT); INSERT INTO people VALUES ('x');")
            .unwrap();
    }
    let before = std::fs::read(&other).unwrap();
    for e in [
        Store::open(&other, &fingerprint(&space)).unwrap_err(),
        Store::open_existing(&other).unwrap_err(),
    ] {
        assert!(matches!(e, StoreError::NotADatabase { .. }), "{e}");
        assert!(e.to_string().contains("without ktune's tables"), "{e}");
    }
    assert_eq!(std::fs::read(&other).unwrap(), before);

    // An empty file (e.g. made by `mktemp`) becomes a new database with `open`, but is not
    // one for `open_existing`.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        Store::open_existing(&empty).unwrap_err(),
        StoreError::NotADatabase { .. }
    ));
    Store::open(&empty, &fingerprint(&space)).unwrap();
    Store::open_existing(&empty).unwrap();
}

#[test]
fn damaged_or_newer_databases_are_errors_not_panics() {
    let space = space();
    let (_dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &records()[0]).unwrap();
        store.record(&space, &records()[1]).unwrap();
    }
    let raw = Connection::open(&path).unwrap();
    raw.execute(
        "UPDATE evaluations SET status = 'exploded' WHERE seq = 1",
        [],
    )
    .unwrap();
    let store = Store::open_existing(&path).unwrap();
    let e = store.rows().unwrap_err();
    assert!(matches!(e, StoreError::Corrupt { .. }), "{e}");
    assert!(e.to_string().contains("evaluation 1: bad status"), "{e}");
    raw.execute(
        "UPDATE evaluations SET status = 'ok', values_json = '{' WHERE seq = 1",
        [],
    )
    .unwrap();
    assert!(matches!(
        store.rows().unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    raw.execute(
        "UPDATE evaluations SET values_json = '[]', params_json = 7 WHERE seq = 1",
        [],
    )
    .unwrap();
    assert!(matches!(
        store.rows().unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    raw.execute("UPDATE studies SET fingerprint = '{not json'", [])
        .unwrap();
    assert!(matches!(
        Store::open(&path, &fingerprint(&space)).unwrap_err(),
        StoreError::Corrupt { .. }
    ));
    raw.execute(
        "UPDATE meta SET value = '5' WHERE key = 'schema_version'",
        [],
    )
    .unwrap();
    let e = Store::open_existing(&path).unwrap_err();
    assert!(matches!(e, StoreError::SchemaVersion { .. }), "{e}");
    assert!(e.to_string().contains("version 5"), "{e}");
}

/// Makes `path` look like a file written by schema version 3 (one problem per file, its
/// fingerprint in a table of its own).
fn downgrade_to_version_3(path: &Path) {
    let raw = Connection::open(path).unwrap();
    raw.execute_batch(
        "BEGIN; \
         CREATE TABLE fingerprint (json TEXT NOT NULL); \
         INSERT INTO fingerprint SELECT fingerprint FROM studies WHERE id = 1; \
         INSERT INTO meta (key, value) SELECT key, value FROM study_meta WHERE study = 1; \
         CREATE TABLE ev3 (seq INTEGER PRIMARY KEY, config TEXT NOT NULL UNIQUE, \
           params_json TEXT NOT NULL, status TEXT NOT NULL, objective REAL, \
           values_json TEXT NOT NULL, reason TEXT, compile REAL, benchmark REAL, \
           verification REAL, framework REAL, clock REAL, observed TEXT, samples TEXT); \
         INSERT INTO ev3 SELECT seq, config, params_json, status, objective, values_json, \
           reason, compile, benchmark, verification, framework, clock, observed, samples \
           FROM evaluations WHERE study = 1; \
         DROP TABLE evaluations; ALTER TABLE ev3 RENAME TO evaluations; \
         DROP TABLE studies; DROP TABLE study_meta; DROP TABLE claims; DROP TABLE workers; \
         UPDATE meta SET value = '3' WHERE key = 'schema_version'; COMMIT;",
    )
    .unwrap();
}

#[test]
fn version_3_files_become_the_default_study_and_keep_records_and_metadata() {
    let space = space();
    let (_dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.set_meta("strategy", "random").unwrap();
        for r in &records() {
            store.record(&space, r).unwrap();
        }
    }
    downgrade_to_version_3(&path);
    // Read-only first: through a copy, the file untouched.
    let before = std::fs::read(&path).unwrap();
    let reader = Store::open_existing(&path).unwrap();
    assert_eq!(reader.records(&space).unwrap(), records());
    assert_eq!(reader.meta("strategy").unwrap().as_deref(), Some("random"));
    drop(reader);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    assert_eq!(store.study(), crate::DEFAULT_STUDY);
    assert_eq!(store.records(&space).unwrap(), records());
    assert_eq!(store.meta("schema_version").unwrap().as_deref(), Some("4"));
    assert_eq!(store.meta("strategy").unwrap().as_deref(), Some("random"));
    store.set_meta("seed", "3").unwrap();
}

/// A study copied into a file of an older version: the file is upgraded first and keeps what
/// it held beside the copy.
#[test]
fn a_study_copied_into_an_older_file_upgrades_it_first() {
    let space = space();
    let (_old_dir, old) = db();
    {
        let mut store = Store::open(&old, &fingerprint(&space)).unwrap();
        store.record(&space, &records()[0]).unwrap();
    }
    downgrade_to_version_3(&old);
    let (_dir, source) = db();
    let dump = {
        let mut store = Store::open_study(&source, "copied", &fingerprint(&space)).unwrap();
        for r in &records() {
            store.record(&space, r).unwrap();
        }
        store.dump().unwrap()
    };
    let copy = Store::import(&old, &dump).unwrap();
    assert_eq!(copy.records(&space).unwrap(), records());
    drop(copy);
    let kept = Store::open(&old, &fingerprint(&space)).unwrap();
    assert_eq!(kept.records(&space).unwrap(), vec![records()[0].clone()]);
}

/// Makes `path` look like a file written by schema version 1 (no `observed` and no
/// `samples` column).
fn downgrade_to_version_1(path: &Path) {
    downgrade_to_version_3(path);
    let raw = Connection::open(path).unwrap();
    raw.execute_batch(
        "ALTER TABLE evaluations DROP COLUMN observed; \
         ALTER TABLE evaluations DROP COLUMN samples; \
         UPDATE meta SET value = '1' WHERE key = 'schema_version';",
    )
    .unwrap();
}

/// Makes `path` look like a file written by schema version 2 (no `samples` column).
fn downgrade_to_version_2(path: &Path) {
    downgrade_to_version_3(path);
    let raw = Connection::open(path).unwrap();
    raw.execute_batch(
        "ALTER TABLE evaluations DROP COLUMN samples; \
         UPDATE meta SET value = '2' WHERE key = 'schema_version';",
    )
    .unwrap();
}

#[test]
fn version_2_files_are_upgraded_and_then_keep_samples() {
    let space = space();
    let (_dir, path) = db();
    let observed = records()[3].clone();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &observed).unwrap();
    }
    downgrade_to_version_2(&path);
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    assert_eq!(store.records(&space).unwrap(), vec![observed.clone()]);
    let with_samples = records()[0].clone();
    store.record(&space, &with_samples).unwrap();
    assert_eq!(store.records(&space).unwrap(), vec![observed, with_samples]);
    let rows = store.rows().unwrap();
    let s = rows[1].summary().unwrap();
    assert_eq!((s.n, s.median, s.min), (3, 2.5, 2.25));
    assert!(rows[0].summary().is_none());
}

#[test]
fn version_1_files_are_upgraded_in_place_and_keep_their_records() {
    let space = space();
    let (_dir, path) = db();
    // Version 1 had no samples.
    let mut first = records()[0].clone();
    if let Outcome::Ok { samples, .. } = &mut first.outcome {
        *samples = None;
    }
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &first).unwrap();
    }
    downgrade_to_version_1(&path);
    let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
    assert_eq!(store.records(&space).unwrap(), vec![first.clone()]);
    // Observed values can be recorded after the upgrade.
    let with_observed = records()[3].clone();
    store.record(&space, &with_observed).unwrap();
    assert_eq!(
        store.records(&space).unwrap(),
        vec![first.clone(), with_observed]
    );
    assert_eq!(
        store.meta("schema_version").unwrap().as_deref(),
        Some(SCHEMA_VERSION.to_string().as_str())
    );
}

#[test]
fn read_only_version_1_files_are_read_without_observations() {
    let space = space();
    let (_dir, path) = db();
    // Version 1 had no samples.
    let mut first = records()[0].clone();
    if let Outcome::Ok { samples, .. } = &mut first.outcome {
        *samples = None;
    }
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &first).unwrap();
    }
    downgrade_to_version_1(&path);
    let mut perms = std::fs::metadata(&path).unwrap().permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&path, perms).unwrap();
    if std::fs::OpenOptions::new().write(true).open(&path).is_ok() {
        eprintln!("skipped: running as root, the read-only file is writable");
        return;
    }
    let store = Store::open_existing(&path).unwrap();
    assert_eq!(store.records(&space).unwrap(), vec![first]);
    assert_eq!(store.rows().unwrap()[0].observed, Observed::new());
}

fn loop_space(items: [&str; 3]) -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::permutation("order", items).unwrap(),
            Parameter::integer("tile", [8, 16]).unwrap(),
        ],
        &["order.index('i') < 2"],
    )
    .unwrap()
}

#[test]
fn permutations_are_shown_by_their_item_names_and_renamed_items_are_refused() {
    let space = loop_space(["i", "j", "k"]);
    let (_dir, path) = db();
    let config = space
        .configuration_of(&[
            ktune_space::Value::Perm(vec![0, 2, 1]),
            ktune_space::Value::Int(16),
        ])
        .unwrap();
    let record = Record {
        config: config.clone(),
        outcome: Outcome::ok(vec![1.5], timings(0.1)),
        clock: 1.0,
    };
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        store.record(&space, &record).unwrap();
    }
    let store = Store::open_existing(&path).unwrap();
    // Configurations come back as they were; rows name the items in order.
    assert_eq!(store.records(&space).unwrap(), vec![record.clone()]);
    let rows = store.rows().unwrap();
    assert_eq!(rows[0].params[0], ("order".into(), json!(["i", "k", "j"])));
    assert_eq!(value_display(&rows[0].params[0].1), "[i, k, j]");
    let csv = to_csv(&rows, "time");
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("0,\"i,k,j\",16,ok,1.5"),
        "{csv}"
    );
    drop(store);
    // The same orderings of other items are another problem.
    let e = match Store::open(&path, &fingerprint(&loop_space(["i", "j", "l"]))) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("opened a database made for other items"),
    };
    assert!(
        e.contains("permutation `order` has items [i, j, l] instead of [i, j, k]"),
        "{e}"
    );
    // A database whose fingerprint has no item names (made before they were stored) opens,
    // and shows the orderings as indices.
    let store = Store::open(&path, &fingerprint(&space)).unwrap();
    let mut old = store.fingerprint().unwrap();
    old.items.clear();
    store
        .conn
        .execute(
            "UPDATE studies SET fingerprint = ?1",
            [serde_json::to_string(&old).unwrap()],
        )
        .unwrap();
    assert_eq!(store.rows().unwrap()[0].params[0].1, json!([0, 2, 1]));
    drop(store);
    assert!(Store::open(&path, &fingerprint(&space)).is_ok());
}

#[test]
fn fingerprints_without_permutations_keep_their_format() {
    let text = serde_json::to_string(&fingerprint(&space())).unwrap();
    assert!(!text.contains("items"), "{text}");
    let back: Fingerprint = serde_json::from_str(&text).unwrap();
    assert_eq!(back, fingerprint(&space()));
}

#[test]
fn a_damaged_file_is_called_damaged_with_how_to_check_it() {
    let space = space();
    let (_dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        for r in &records() {
            store.record(&space, r).unwrap();
        }
    }
    let good = std::fs::read(&path).unwrap();
    let page = 4096;
    assert!(good.len() >= 3 * page, "{} bytes", good.len());
    // The second page (a table's root), then the schema's cells at the end of the first.
    for (offset, len) in [(page, 40), (page - 96, 40)] {
        let mut bad = good.clone();
        bad[offset..offset + len].fill(0);
        std::fs::write(&path, &bad).unwrap();
        for e in [
            Store::open_existing(&path).unwrap_err(),
            Store::open(&path, &fingerprint(&space)).unwrap_err(),
        ] {
            let s = e.to_string();
            assert!(
                matches!(e, StoreError::Damaged { .. }),
                "offset {offset}: {s}"
            );
            ktune_core::testing::assert_mentions(&s, &["is damaged", "PRAGMA integrity_check"]);
            assert!(!s.contains("without ktune's tables"), "{s}");
        }
    }
}

#[test]
fn reading_never_writes_and_works_without_write_access() {
    let space = space();
    let (dir, path) = db();
    {
        let mut store = Store::open(&path, &fingerprint(&space)).unwrap();
        for r in &records() {
            store.record(&space, r).unwrap();
        }
    }
    let before = std::fs::read(&path).unwrap();
    let mut reader = Store::open_existing(&path).unwrap();
    assert_eq!(reader.records(&space).unwrap(), records());
    // A read-only connection: writing is refused, the file is untouched.
    assert!(reader.record(&space, &records()[0]).is_err());
    assert!(reader.set_meta("note", "x").is_err());
    drop(reader);
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Where SQLite could not create its shared-memory file (a read-only directory), the
    // immutable fallback reads the same (the log is empty once the writer closed).
    assert!(crate::sqlite::wal_is_empty(&path));
    let immutable = Store::read_only(&path, true).unwrap();
    assert_eq!(immutable.records(&space).unwrap(), records());
    // Paths that need escaping in a URI.
    let odd = dir.path().join("a?b#c%d.db");
    std::fs::copy(&path, &odd).unwrap();
    assert_eq!(
        Store::read_only(&odd, true)
            .unwrap()
            .records(&space)
            .unwrap(),
        records()
    );
}

#[test]
fn sqlite_passes_the_storage_conformance_suite() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("study.db");
    crate::conformance::run_all(&|study, fingerprint| {
        Ok(Box::new(Store::open_study(&path, study, fingerprint)?))
    });
}

#[cfg(not(feature = "postgres"))]
#[test]
fn postgres_passes_the_storage_conformance_suite() {
    eprintln!(
        "SKIPPED: ktune-store was built without its `postgres` feature (`cargo test --workspace` enables it through ktune-cli)"
    );
}

/// A study copied out of a shared file into a new one reads back exactly, with its
/// workers and metadata; copying it again into the same file is refused and changes nothing.
#[test]
fn a_study_exports_to_another_file_exactly() {
    use ktune_core::Worker;
    let dir = tempfile::tempdir().unwrap();
    let (shared, out) = (dir.path().join("shared.db"), dir.path().join("out.db"));
    let space = space();
    let fp = fingerprint(&space);
    // Another study first, so that the exported one has another row id in each file.
    Store::open_study(&shared, "other", &Fingerprint::new(&space, "{}", "time"))
        .unwrap()
        .record(&space, &records()[0])
        .unwrap();
    let mut store = Store::open_study(&shared, "gemm", &fp).unwrap();
    store
        .join(
            &Worker {
                id: "w1".into(),
                host: "node7".into(),
                device: "NVIDIA H100".into(),
            },
            false,
        )
        .unwrap();
    for r in records() {
        store.record_by(&space, Some("w1"), &r, None).unwrap();
    }
    store.set_meta("strategy", "bayes_opt").unwrap();
    let dump = store.dump().unwrap();
    assert_eq!(dump.evaluations.len(), records().len());
    let copy = Store::import(&out, &dump).unwrap();
    assert_eq!(copy.study(), "gemm");
    assert_eq!(copy.records(&space).unwrap(), records());
    assert_eq!(copy.rows().unwrap(), store.rows().unwrap());
    assert_eq!(
        copy.rows().unwrap()[0].device.as_deref(),
        Some("NVIDIA H100")
    );
    assert_eq!(copy.meta("strategy").unwrap().as_deref(), Some("bayes_opt"));
    assert_eq!(copy.dump().unwrap(), dump);
    drop(copy);
    // The copy opens as the study for the same problem, and its only study is found alone.
    assert_eq!(Store::open_existing(&out).unwrap().study(), "gemm");
    let e = Store::import(&out, &dump).unwrap_err().to_string();
    assert!(e.contains("already has a study `gemm`"), "{e}");
    assert_eq!(
        Store::open_existing(&out).unwrap().len().unwrap(),
        records().len()
    );
}

#[test]
fn participants_wait_for_claims_held_elsewhere_and_stop_at_the_budget() {
    use ktune_core::{Budget, Cooperation, Direction, Participant, Session, Turn, Worker};
    use rand::SeedableRng;
    let (_dir, path) = db();
    let space = space_with(&[1, 2, 3, 4], &[]);
    let fp = fingerprint(&space);
    let budget = Budget::evaluations(2);
    let mut parts = Vec::new();
    for name in ["a", "b"] {
        let mut storage = Store::open_study(&path, "s", &fp).unwrap();
        let worker = Worker {
            id: name.into(),
            host: "h".into(),
            device: "d".into(),
        };
        storage.join(&worker, false).unwrap();
        let session = Session::new(
            &space,
            Box::new(ktune_core::testing::InOrder::default()),
            budget.clone(),
            Direction::Minimize,
            ktune_core::Rng::seed_from_u64(0),
        )
        .unwrap();
        let me = Participant::new(Cooperation {
            worker: name.into(),
            lease: std::time::Duration::from_secs(60),
            poll: std::time::Duration::from_millis(1),
            batch: 2,
        });
        parts.push((storage, session, me));
    }
    let (mut a, mut b) = {
        let mut it = parts.into_iter();
        (it.next().unwrap(), it.next().unwrap())
    };
    let quiet = &mut ();
    let Turn::Evaluate(held) = a.2.turn(&mut a.1, &mut a.0, quiet).unwrap() else {
        panic!("a gets work")
    };
    assert_eq!(held.len(), 2);
    // b's proposals are a's (held elsewhere, given back, an empty turn); then a holds the
    // whole budget: b waits rather than measuring a third configuration.
    assert_eq!(
        b.2.turn(&mut b.1, &mut b.0, quiet).unwrap(),
        Turn::Evaluate(Vec::new())
    );
    assert_eq!(b.2.turn(&mut b.1, &mut b.0, quiet).unwrap(), Turn::Wait);
    let results = held
        .iter()
        .map(|c| (c.clone(), Outcome::ok(vec![1.0], timings(0.1))))
        .collect();
    a.2.record(&mut a.1, &mut a.0, results, quiet).unwrap();
    // Once a's records are in, b hears of them and the study is over for it too.
    assert_eq!(
        b.2.turn(&mut b.1, &mut b.0, quiet).unwrap(),
        Turn::Stop(ktune_core::StopReason::Evaluations)
    );
    assert_eq!(b.1.records().len(), 2);
    assert_eq!(a.0.records(&space).unwrap().len(), 2);
}

#[test]
fn processes_creating_the_same_new_file_at_once_all_open_it() {
    // Workers started together race to create the file; switching it to write-ahead logging
    // answered "database is locked" to all but one before the retry.
    let space = space();
    let fp = fingerprint(&space);
    for round in 0..20 {
        let (_dir, path) = db();
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        Store::open_study(&path, "s", &fp).map(|_| ())
                    })
                })
                .collect();
            for h in handles {
                if let Err(e) = h.join().unwrap() {
                    panic!("round {round}: {e}");
                }
            }
        });
    }
}

/// Two studies, one minimised with a budget and a failure, one maximised with two workers,
/// among whatever else the storage holds: each is summarised with its own counts, best value
/// in its direction, budget and workers, the older first.
pub(crate) fn studies_are_summarised(location: &Location) {
    use ktune_core::{Storage, Worker};
    let space = crate::conformance::space();
    let fp = Fingerprint::new(&space, "{}", "time");
    let (a, b) = (
        crate::conformance::unique("sum-a"),
        crate::conformance::unique("sum-b"),
    );
    let ok = |x: u32, v: f64| Record {
        config: vec![x],
        outcome: Outcome::ok(vec![v], Timings::default()),
        clock: f64::from(x),
    };
    let worker = |id: &str| Worker {
        id: id.into(),
        host: "node".into(),
        device: "GPU".into(),
    };
    let mut sa: Box<dyn Storage> = location.open_study(&a, &fp).unwrap();
    sa.join(&worker("w1"), false).unwrap();
    sa.set_meta(DIRECTION_KEY, "minimize").unwrap();
    sa.set_meta(BUDGET_KEY, "10").unwrap();
    let failed = Record {
        config: vec![5],
        outcome: Outcome::failed(FailureKind::Compile, "no", Timings::default()),
        clock: 5.0,
    };
    for r in [ok(1, 3.0), ok(2, 2.0), failed] {
        sa.record(&space, "w1", &r, None).unwrap();
    }
    let mut sb: Box<dyn Storage> = location.open_study(&b, &fp).unwrap();
    sb.join(&worker("w1"), false).unwrap();
    sb.join(&worker("w2"), false).unwrap();
    sb.set_meta(DIRECTION_KEY, "maximize").unwrap();
    for r in [ok(1, 5.0), ok(2, 7.0)] {
        sb.record(&space, "w2", &r, None).unwrap();
    }
    // Configurations being measured: two by w1, one by w2; one claim of w2 has expired.
    let lease = std::time::Duration::from_secs(60);
    for (x, w) in [(3, "w1"), (4, "w1"), (6, "w2")] {
        sb.claim(&vec![x], w, lease, None).unwrap();
    }
    sb.claim(&vec![7], "w2", std::time::Duration::ZERO, None)
        .unwrap();
    drop((sa, sb));
    let claims: Vec<(String, String, u64)> = location
        .live_claims()
        .unwrap()
        .into_iter()
        .filter(|c| c.0 == a || c.0 == b)
        .collect();
    assert_eq!(
        claims,
        [
            (b.clone(), "w1".to_string(), 2),
            (b.clone(), "w2".to_string(), 1)
        ]
    );
    let all = location.studies().unwrap();
    let at = |name: &str| all.iter().position(|s| s.name == name).unwrap();
    let (ia, ib) = (at(&a), at(&b));
    assert!(ia < ib, "{all:?}");
    let (sa, sb) = (&all[ia], &all[ib]);
    assert_eq!(
        (sa.evaluations, sa.failed, sa.best, sa.budget, sa.workers),
        (3, 1, Some(2.0), Some(10), 1),
        "{sa:?}"
    );
    assert_eq!(sa.direction.as_deref(), Some("minimize"));
    assert_eq!(
        (sb.evaluations, sb.failed, sb.best, sb.budget, sb.workers),
        (2, 0, Some(7.0), None, 2),
        "{sb:?}"
    );
    assert_eq!((sa.claims, sb.claims), (0, 3));
    assert!(sa.created.is_some_and(|t| t > 1.7e9) && sb.created >= sa.created);
}

#[test]
fn sqlite_studies_are_summarised() {
    let dir = tempfile::tempdir().unwrap();
    let location = Location::Sqlite(dir.path().join("shared.db"));
    studies_are_summarised(&location);
    // A missing file is the usual error.
    let missing = Location::Sqlite(dir.path().join("none.db"));
    assert!(matches!(missing.studies(), Err(StoreError::Missing { .. })));
}
