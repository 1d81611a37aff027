//! Agreement of the hypervolume score with an independent implementation
//! (`bench/front_score.py`: the dominated areas from a grid with prefix counts where the crate
//! sweeps, and q_d(n) from log-gamma where the crate multiplies).
//!
//! `tests/data/golden_fronts.json` was written once by
//! `python3 bench/front_score.py --objective time,energy_j h100_reduction.json h100_matmul.json
//! --traces T.jsonl --json golden_fronts.json`, with the two spaces exported from
//! `bench/data/h100-energy/{reduction,matmul}.db` (`ktune results DB --format cache`) and two
//! seeds of four strategies from `ktune bench ... --objective time,energy_j`; this test needs
//! no Python.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ktune_bench::{Direction, FrontStats, score_front_run};
use serde::Deserialize;

const TOL: f64 = 1e-9;

#[derive(Deserialize)]
struct Space {
    hv_true: f64,
    n_max: usize,
    baseline: BTreeMap<String, f64>,
    reference: [f64; 2],
    directions: [Direction; 2],
    points: Vec<Option<[f64; 2]>>,
}

#[derive(Deserialize)]
struct Run {
    strategy: String,
    space: String,
    seed: i64,
    score: f64,
    points: Vec<Option<Vec<f64>>>,
}

#[derive(Deserialize)]
struct Golden {
    spaces: BTreeMap<String, Space>,
    runs: Vec<Run>,
}

#[test]
fn the_front_score_agrees_with_the_python_implementation() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden_fronts.json");
    let golden: Golden = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut stats = BTreeMap::new();
    for (name, s) in &golden.spaces {
        let f = FrontStats::new(name.as_str(), &s.points, s.directions).unwrap();
        assert!(
            (f.hypervolume() - s.hv_true).abs() < TOL,
            "{name}: HV* {} against {}",
            f.hypervolume(),
            s.hv_true
        );
        assert_eq!(f.n_max(), s.n_max, "{name}: n_max");
        for (n, e) in &s.baseline {
            let n: usize = n.parse().unwrap();
            assert!(
                (f.baseline(n) - e).abs() < TOL,
                "{name}: E({n}) {} against {e}",
                f.baseline(n)
            );
        }
        for k in 0..2 {
            assert!((f.reference()[k] - s.reference[k]).abs() <= 1e-12 * s.reference[k].abs());
        }
        stats.insert(name.clone(), f);
    }
    assert!(golden.runs.len() >= 8);
    for run in &golden.runs {
        let points: Vec<Option<[f64; 2]>> = run
            .points
            .iter()
            .map(|p| p.as_ref().map(|p| [p[0], p[1]]))
            .collect();
        let got = score_front_run(&stats[&run.space], &points).score;
        assert!(
            (got - run.score).abs() < TOL,
            "{} on {} seed {}: {got} against {}",
            run.strategy,
            run.space,
            run.seed,
            run.score
        );
    }
}
