//! Agreement with the Python reference scorer (kt-peer's `baseline.py` and `score.py`).
//!
//! The numbers in `tests/data/golden_*.json*` were generated once by `tests/data/gen_golden.py`
//! (see its docstring); this test needs no Python.

use std::path::PathBuf;

use ktune_bench::{Direction, SpaceStats, Trace, read_traces, score_run, score_traces};
use serde::Deserialize;

const TOL: f64 = 1e-9;

#[derive(Deserialize)]
struct GoldenSpace {
    name: String,
    direction: Direction,
    values: Vec<Option<f64>>,
    n_total: usize,
    n_valid: usize,
    opt: f64,
    median: f64,
    n_max: usize,
    #[serde(rename = "B")]
    b: Vec<f64>,
}

#[derive(Deserialize)]
struct GoldenRun {
    score: f64,
    mae220: f64,
    found_optimum_at: Option<usize>,
}

#[derive(Deserialize)]
struct GoldenRow {
    tool: String,
    strategy: String,
    space: String,
    runs: usize,
    score_mean: f64,
    score_se: Option<f64>,
    mae220_mean: f64,
    wall_median: f64,
}

#[derive(Deserialize)]
struct GoldenScores {
    per_line: Vec<GoldenRun>,
    rows: Vec<GoldenRow>,
}

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn load<T: for<'de> Deserialize<'de>>(name: &str) -> T {
    let text = std::fs::read_to_string(data(name)).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Relative agreement, with an absolute floor of `TOL` for values near 0.
fn assert_close(what: &str, got: f64, want: f64) {
    let err = (got - want).abs() / want.abs().max(1.0);
    assert!(
        err <= TOL,
        "{what}: rust {got} vs python {want} (error {err:e})"
    );
}

fn spaces() -> (Vec<GoldenSpace>, Vec<SpaceStats>) {
    let golden: Vec<GoldenSpace> = load("golden_spaces.json");
    let stats = golden
        .iter()
        .map(|g| SpaceStats::new(g.name.clone(), &g.values, g.direction).unwrap())
        .collect();
    (golden, stats)
}

#[test]
fn space_statistics_match_python() {
    let (golden, stats) = spaces();
    let mut max_err: f64 = 0.0;
    for (g, st) in golden.iter().zip(&stats) {
        assert_eq!(st.n_total(), g.n_total, "{}", g.name);
        assert_eq!(st.n_valid(), g.n_valid, "{}", g.name);
        assert_eq!(st.n_max(), g.n_max, "{}: n_max", g.name);
        assert_eq!(st.optimum(), g.opt, "{}: optimum", g.name);
        assert_close(&format!("{}: median", g.name), st.median(), g.median);
        assert_eq!(g.b.len(), g.n_max.max(220), "{}", g.name);
        for (i, &want) in g.b.iter().enumerate() {
            let got = st.baseline(i + 1);
            assert_close(&format!("{}: B({})", g.name, i + 1), got, want);
            max_err = max_err.max((got - want).abs() / want.abs().max(1.0));
        }
    }
    eprintln!("largest relative difference of B(n): {max_err:e}");
}

#[test]
fn run_scores_and_rows_match_python() {
    let (golden, stats) = spaces();
    let scores: GoldenScores = load("golden_scores.json");
    // the trace file is as Python's json writes it: NaN in `meta`, unknown fields
    let traces: Vec<Trace> = read_traces(&data("golden_traces.jsonl")).unwrap();
    assert_eq!(traces.len(), scores.per_line.len());

    let mut max_err: f64 = 0.0;
    for (i, (t, want)) in traces.iter().zip(&scores.per_line).enumerate() {
        let st = stats.iter().find(|s| s.name() == t.space).unwrap();
        let got = score_run(st, &t.values);
        let what = format!(
            "line {} ({}/{}/{} seed {})",
            i + 1,
            t.tool,
            t.strategy,
            t.space,
            t.seed
        );
        assert_close(&format!("{what}: score"), got.score, want.score);
        assert_close(&format!("{what}: MAE@220"), got.mae220, want.mae220);
        assert_eq!(got.found_optimum_at, want.found_optimum_at, "{what}");
        max_err = max_err.max((got.score - want.score).abs() / want.score.abs().max(1.0));
    }
    eprintln!("largest relative difference of a run's score: {max_err:e}");

    let table = score_traces(&traces, &stats).unwrap();
    assert_eq!(table.rows().len(), scores.rows.len());
    for want in &scores.rows {
        let r = table
            .row(&want.tool, &want.strategy, &want.space)
            .unwrap_or_else(|| panic!("no row for {}/{}/{}", want.tool, want.strategy, want.space));
        let what = format!("{}/{}/{}", want.tool, want.strategy, want.space);
        assert_eq!(r.runs(), want.runs, "{what}");
        assert_close(
            &format!("{what}: mean score"),
            r.mean_score(),
            want.score_mean,
        );
        match want.score_se {
            Some(se) => assert_close(&format!("{what}: SE"), r.std_error(), se),
            None => assert!(r.std_error().is_nan(), "{what}"),
        }
        assert_close(&format!("{what}: MAE@220"), r.mae220(), want.mae220_mean);
        assert_close(
            &format!("{what}: wall"),
            r.median_wall_seconds(),
            want.wall_median,
        );
    }
    assert_eq!(golden.len(), table.spaces().len());
}

#[test]
fn maximize_space_equals_its_negation() {
    let (golden, stats) = spaces();
    let (g, st) = golden
        .iter()
        .zip(&stats)
        .find(|(g, _)| g.direction == Direction::Maximize)
        .unwrap();
    let negated: Vec<Option<f64>> = g.values.iter().map(|v| v.map(|x| -x)).collect();
    let min = SpaceStats::new("neg", &negated, Direction::Minimize).unwrap();
    assert_eq!(min.n_max(), st.n_max());
    let traces: Vec<Trace> = read_traces(&data("golden_traces.jsonl")).unwrap();
    for t in traces.iter().filter(|t| t.space == g.name) {
        let neg: Vec<Option<f64>> = t.values.iter().map(|v| v.map(|x| -x)).collect();
        assert_eq!(score_run(st, &t.values), score_run(&min, &neg));
    }
}
