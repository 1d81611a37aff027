//! The strategy's own cost of one round (ask one configuration, tell its value) after a
//! number of observations: `cargo bench -p ktune-strategies --bench propose [-- OBSERVATIONS
//! STRATEGY [large[:N]]]` (default 200 observations, `bayes_opt`, the small space).
//!
//! The spaces are those of `bench/python_ask_tell.py`: five parameters cut by two
//! restrictions (1,512 valid configurations), and with `large` three more parameters of ten
//! values (1.5 million valid: above `bayes_opt`'s candidate limit, so its rounds score a
//! sample). `large:N` gives the three parameters N values each instead (1,512·N³ valid: 189,000
//! at 5, 774,144 at 8), to compare the enumerated model with the sample near the limit. The
//! objective is the script's cheap analytic bowl. The strategy runs
//! OBSERVATIONS rounds, then 20 more are timed one by one; the median and the mean of those
//! are printed, in milliseconds.

use std::time::Instant;

use ktune_core::{History, Observation, Rng};
use ktune_space::{Parameter, SearchSpace};
use rand::SeedableRng;

fn space(large: Option<i64>) -> SearchSpace {
    let mut params = vec![
        Parameter::integer("block_x", [16, 32, 64, 128, 256]),
        Parameter::integer("block_y", [1, 2, 4, 8, 16]),
        Parameter::integer("tile", [1, 2, 3, 4, 6, 8]),
        Parameter::integer("unroll", [0, 1, 2, 4]),
        Parameter::integer("vector", [1, 2, 4]),
    ];
    if let Some(n) = large {
        params.extend((0..3).map(|i| Parameter::integer_range(format!("p{i}"), 0, n - 1, 1)));
    }
    let params = params
        .into_iter()
        .collect::<Result<Vec<_>, _>>()
        .expect("valid parameters");
    SearchSpace::new(
        params,
        &["block_x * block_y <= 1024", "block_x * tile <= 1024"],
    )
    .expect("a valid space")
}

/// `bench/python_ask_tell.py`'s objective.
fn objective(v: &[f64]) -> f64 {
    let p = |i: usize| v.get(5 + i).copied().unwrap_or(3.0);
    (0..3).map(|i| (p(i) - 3.0).powi(2)).sum::<f64>() / 10.0
        + (v[0] * v[1] - 256.0).abs() / 64.0
        + (v[2] - 4.0).powi(2)
        + (v[3] - 2.0).powi(2)
        + 1.0 / v[4]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let observations: usize = args
        .first()
        .map_or(200, |a| a.parse().expect("OBSERVATIONS must be a number"));
    let spec = args.get(1).map_or("bayes_opt", String::as_str);
    let large = args.get(2).map(|a| match a.strip_prefix("large") {
        Some("") => 10,
        Some(n) => n
            .trim_start_matches(':')
            .parse()
            .expect("large:N needs a number of values N"),
        None => panic!("the third argument is `large` or `large:N`, not {a}"),
    });
    let space = space(large);
    let (_, mut strategy) = ktune_strategies::create_spec(spec).expect("a known strategy");
    let mut history = History::new();
    let mut rng = Rng::seed_from_u64(1);
    let mut times = Vec::new();
    for round in 0..observations + 20 {
        let started = Instant::now();
        let Some(config) = strategy.ask(&space, &history, 1, &mut rng).pop() else {
            break;
        };
        let v: Vec<f64> = space
            .values(&config)
            .iter()
            .map(|v| v.as_f64().expect("numeric values"))
            .collect();
        let observation = Observation {
            config,
            value: Some(objective(&v)),
            failure: None,
            variance: None,
            objectives: Vec::new(),
        };
        strategy.tell(&space, std::slice::from_ref(&observation));
        if round >= observations {
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        history.push(observation);
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let mean = times.iter().sum::<f64>() / times.len() as f64;
    println!(
        "{spec} on {} valid configurations, after {observations} observations: \
         median {median:.3} ms, mean {mean:.3} ms per round ({} timed)",
        space.size(),
        times.len()
    );
}
