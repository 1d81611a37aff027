//! `baco` on a space too large to enumerate: 12 parameters in six linked pairs
//! (`a_k * b_k <= limit`), and the same structure with fewer values per parameter, to show
//! that the strategy's time and memory do not grow with the space's size. Prints the space
//! size, the median strategy time per iteration (ask + tell) at 90-110 observations and the
//! process's peak resident memory:
//! `cargo run --release -p ktune-cli --example baco_scale -- [values per parameter] [seeds]`

use ktune_core::testing::{FnRunner, Timed};
use ktune_core::{Budget, Rng, Tuner};
use ktune_space::{Parameter, SearchSpace};
use rand::SeedableRng;

/// A smooth function of the values with a failing region, so the forest has work too.
fn synthetic(v: &[f64]) -> Option<f64> {
    if v[0] + v[1] > 1.8 * v.len() as f64 {
        return None;
    }
    let f: f64 = v
        .iter()
        .enumerate()
        .map(|(i, x)| (x - (i % 5 + 2) as f64).powi(2))
        .sum();
    Some(1.0 + f)
}

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let values: i64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(16);
    let seeds: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(3);
    let mut params = Vec::new();
    let mut constraints = Vec::new();
    for k in 0..6 {
        params.push(Parameter::integer_range(format!("a{k}"), 1, values, 1).expect("valid"));
        params.push(Parameter::integer_range(format!("b{k}"), 1, values, 1).expect("valid"));
        constraints.push(format!("a{k} * b{k} <= {}", values * values / 2));
    }
    let space = SearchSpace::new(params, &constraints).expect("valid space");
    let mut times = Vec::new();
    for seed in 0..seeds {
        let (_, inner) = ktune_strategies::create_spec("baco").expect("registered");
        let mut timed = Timed::new(inner);
        let mut runner = FnRunner::values(synthetic);
        Tuner::new(&space, &mut runner, Budget::evaluations(110))
            .run(&mut timed, &mut Rng::seed_from_u64(seed))
            .expect("runs");
        times.extend(
            timed
                .samples
                .iter()
                .filter(|(n, _)| (90..=110).contains(n))
                .map(|(_, t)| *t),
        );
    }
    times.sort_by(f64::total_cmp);
    let median = times.get(times.len() / 2).copied().unwrap_or(f64::NAN);
    println!(
        "{} configurations (12 parameters of {values} values, 6 linked pairs): baco median ask+tell at 90-110 observations {:.1} ms ({} iterations, {seeds} seeds); peak RSS {:.1} MiB",
        space.size(),
        median * 1e3,
        times.len(),
        peak_rss_mib()
    );
}
