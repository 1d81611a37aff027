//! Traces through files: write -> read -> score gives the same numbers; errors name the file and
//! the line.

use ktune_bench::{
    BenchError, Direction, SpaceStats, Trace, read_traces, score_run, score_traces, write_traces,
};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

fn space(name: &str, n: usize, rng: &mut Xoshiro256PlusPlus) -> (Vec<Option<f64>>, SpaceStats) {
    let values: Vec<Option<f64>> = (0..n)
        .map(|_| (rng.random::<f64>() > 0.15).then(|| (rng.random::<f64>() * 2.0).exp()))
        .collect();
    let stats = SpaceStats::new(name, &values, Direction::Minimize).unwrap();
    (values, stats)
}

#[test]
fn write_read_score_round_trip() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(42);
    let (va, a) = space("a", 700, &mut rng);
    let (vb, b) = space("b", 90, &mut rng);
    let mut traces = Vec::new();
    for (name, values, st) in [("a", &va, &a), ("b", &vb, &b)] {
        for seed in 0..6 {
            let mut run = values.clone();
            run.shuffle(&mut rng);
            run.truncate(st.budget() - seed as usize);
            traces.push(Trace {
                tool: "ktune-0.1.0".into(),
                strategy: if seed % 2 == 0 { "random" } else { "other" }.into(),
                space: name.into(),
                seed,
                values: run,
                wall_seconds: rng.random::<f64>(),
                points: Vec::new(),
                meta: (seed == 3).then(|| serde_json::json!({"note": "x", "n": [1, 2]})),
            });
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/dir/runs.jsonl");
    write_traces(&path, &traces).unwrap();
    let back = read_traces(&path).unwrap();
    assert_eq!(back, traces);
    let spaces = [a, b];
    for (t, u) in traces.iter().zip(&back) {
        let st = spaces.iter().find(|s| s.name() == t.space).unwrap();
        assert_eq!(score_run(st, &t.values), score_run(st, &u.values));
    }
    let before = score_traces(&traces, &spaces).unwrap();
    let after = score_traces(&back, &spaces).unwrap();
    assert_eq!(before.rows(), after.rows());
    assert_eq!(before.to_markdown(), after.to_markdown());
    assert_eq!(before.rows().len(), 4);
}

#[test]
fn malformed_json_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.jsonl");
    let ok = r#"{"tool": "t", "strategy": "s", "space": "a", "seed": 1, "values": [1.0], "wall_seconds": 1}"#;
    std::fs::write(
        &path,
        format!("{ok}\n{ok}\n\n{ok}\n{{\"tool\": \"t\", \"values\": [1.0,, 2]}}\n{ok}\n"),
    )
    .unwrap();
    let err = read_traces(&path).unwrap_err();
    match &err {
        BenchError::Parse { path: p, line, .. } => {
            assert_eq!(p, &path);
            assert_eq!(*line, 5);
        }
        other => panic!("expected a parse error, got {other:?}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("broken.jsonl:5:"), "{msg}");
}
