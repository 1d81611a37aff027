//! ktune's GP hyperparameter fit on a data set written by `bench/gp_fit_sklearn.py`, timed
//! beside scikit-learn's: `cargo run --release -p ktune-model --example gp_fit_time -- gp-data.json`
//!
//! Prints the median time of a first fit (random starts, the best refined with L-BFGS), of a
//! warm refit (from the previous optimum, as `baco` refits before every proposal), and the
//! log marginal likelihood reached without priors (comparable with scikit-learn's). Then the
//! same for the clustered GP (k = 3, one fitted GP per component): a first fit (clustering
//! and three fits from random starts) and a warm refit (re-clustered, each component from the
//! last optimum of its regime), against the paper's claim that k components divide the
//! O(n³) fit by about k².

use std::time::Instant;

use ktune_model::{
    ClusterOptions, ClusteredGp, Distance, ExactGp, FitOptions, KernelKind, Metric, Point,
    Surrogate, fit_hyperparameters,
};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: gp_fit_time <data.json from bench/gp_fit_sklearn.py>");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {path}: {e}");
            std::process::exit(1);
        }
    };
    let data: serde_json::Value = match serde_json::from_str(&text) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {path} is not JSON: {e}");
            std::process::exit(1);
        }
    };
    let x: Vec<Vec<f64>> = serde_json::from_value(data["x"].clone()).unwrap_or_default();
    let y: Vec<f64> = serde_json::from_value(data["y"].clone()).unwrap_or_default();
    let metric = Metric::PerCoordinate(Distance::Euclidean);
    let kind = KernelKind::Matern52;
    let timed = |options: &FitOptions, previous: Option<&ktune_model::Hyperparameters>| {
        let mut times = Vec::new();
        let mut last = None;
        for seed in 0..5 {
            let t = Instant::now();
            let f = fit_hyperparameters(kind, &metric, &x, &y, previous, options, seed)
                .unwrap_or_else(|e| panic!("fit failed: {e}"));
            times.push(t.elapsed().as_secs_f64() * 1e3);
            last = Some(f);
        }
        (median(times), last.expect("five fits"))
    };
    let map = FitOptions::default();
    let (first_ms, first) = timed(&map, None);
    let (warm_ms, _) = timed(&map, Some(&first.hyper));
    let ml = FitOptions {
        priors: None,
        ..FitOptions::default()
    };
    let (ml_ms, ml_fit) = timed(&ml, None);
    println!(
        "ktune: n = {}, {} dims: first fit {first_ms:.1} ms, warm refit {warm_ms:.1} ms (with priors); \
         maximum likelihood {ml_ms:.1} ms, log marginal likelihood {:.2}",
        x.len(),
        x.first().map_or(0, Vec::len),
        ml_fit.log_posterior
    );

    // The clustered GP on the same data.
    let mut first = Vec::new();
    let mut warm = Vec::new();
    let mut sizes = Vec::new();
    for seed in 0..5 {
        let proto = ExactGp::fitted(kind, metric.clone(), FitOptions::default());
        let mut cgp = ClusteredGp::new(proto, ClusterOptions::default())
            .unwrap_or_else(|e| panic!("cgp: {e}"));
        for (p, &v) in x.iter().zip(&y) {
            cgp.observe(Point::new(p), v)
                .unwrap_or_else(|e| panic!("observe: {e}"));
        }
        let t = Instant::now();
        cgp.fit(seed).unwrap_or_else(|e| panic!("cgp fit: {e}"));
        first.push(t.elapsed().as_secs_f64() * 1e3);
        // A new partition (as after one more observation), each component warm-started.
        cgp.replace_values(&y).unwrap_or_else(|e| panic!("{e}"));
        let t = Instant::now();
        cgp.fit(seed + 100)
            .unwrap_or_else(|e| panic!("cgp fit: {e}"));
        warm.push(t.elapsed().as_secs_f64() * 1e3);
        sizes = cgp.sizes().unwrap_or_default();
    }
    println!(
        "cGP (k = 3, components of {sizes:?}): first fit {:.1} ms, warm refit {:.1} ms (with priors)",
        median(first),
        median(warm)
    );
}
