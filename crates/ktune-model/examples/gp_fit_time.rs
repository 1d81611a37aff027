//! ktune's GP hyperparameter fit on a data set written by `bench/gp_fit_sklearn.py`, timed
//! beside scikit-learn's: `cargo run --release -p ktune-model --example gp_fit_time -- gp-data.json`
//!
//! Prints the median time of a first fit (random starts, the best refined with L-BFGS), of a
//! warm refit (from the previous optimum, as `baco` refits before every proposal), and the
//! log marginal likelihood reached without priors (comparable with scikit-learn's).

use std::time::Instant;

use ktune_model::{Distance, FitOptions, KernelKind, Metric, fit_hyperparameters};

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
}
