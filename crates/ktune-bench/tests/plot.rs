//! Convergence plots are written as PNG and SVG with their labels.

use ktune_bench::{Direction, SpaceStats, Trace, plot_convergence};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

#[test]
fn writes_png_and_svg() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
    let values: Vec<Option<f64>> = (0..4000)
        .map(|_| (rng.random::<f64>() > 0.2).then(|| 200.0 + 1800.0 * rng.random::<f64>().powi(4)))
        .collect();
    let stats = SpaceStats::new("gemm/A100 test", &values, Direction::Maximize).unwrap();
    let mut traces = Vec::new();
    for seed in 0..5 {
        let mut random = values.clone();
        random.shuffle(&mut rng);
        random.truncate(stats.budget());
        // a "good" strategy: mostly the better half of the space
        let mut good: Vec<Option<f64>> = values
            .iter()
            .copied()
            .filter(|v| v.is_some_and(|x| x > 700.0))
            .collect();
        good.shuffle(&mut rng);
        good.truncate(stats.budget());
        for (strategy, run) in [("random", random), ("good", good)] {
            traces.push(Trace {
                tool: "ktune-0.1.0".into(),
                strategy: strategy.into(),
                space: stats.name().into(),
                seed,
                values: run,
                wall_seconds: 1.0,
                points: Vec::new(),
                meta: None,
            });
        }
    }
    let refs: Vec<&Trace> = traces.iter().collect();
    let dir = tempfile::tempdir().unwrap();
    let out = std::env::var_os("KTUNE_BENCH_PLOT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| dir.path().join("plots"));
    let (png, svg) = plot_convergence(&stats, &refs, &out).unwrap();
    assert_eq!(png, out.join("gemm_A100_test.png"));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000);
    let text = std::fs::read_to_string(&svg).unwrap();
    for label in [
        "evaluations n",
        "random search B(n)",
        "ktune-0.1.0/good (5 runs)",
        "n_max",
    ] {
        assert!(text.contains(label), "{label} missing from the SVG");
    }
}
