//! The permutation-distance ablation of BaCO (its section 5.3) on a synthetic benchmark: a
//! loop nest of 6 loops to order (720 orderings) and two tile sizes. The cost of an order
//! grows with how deep the "expensive" loops sit and how far the loops that share data are
//! apart, as a loop reordering's cost does; the tiles add a smooth bowl. `baco` with each
//! permutation distance, 20 seeds, 60 evaluations; prints the mean normalised regret
//! `(best - opt) / (median - opt)` at 20, 40 and 60 evaluations (lower is better):
//! `cargo run --release -p ktune-cli --example baco_permutations [-- seeds]`

use ktune_core::testing::FnRunner;
use ktune_core::{Budget, Direction, Rng, Tuner};
use ktune_space::{Parameter, SearchSpace, Value};
use rand::SeedableRng;

/// The synthetic cost of a configuration.
fn cost(space: &SearchSpace, c: &[u32]) -> f64 {
    let values = space.values(c);
    let Value::Perm(order) = values[0] else {
        return f64::NAN;
    };
    // position of each loop (0 outermost)
    let mut pos = [0f64; 6];
    for (p, &item) in order.iter().enumerate() {
        pos[item as usize] = p as f64;
    }
    // Loops 0 and 1 are expensive to have inside; 2 and 3 share data and want to be adjacent;
    // 4 wants to be innermost.
    let depth = 3.0 * pos[0] + 2.0 * pos[1];
    let share = (pos[2] - pos[3]).abs();
    let inner = 5.0 - pos[4];
    let tx = values[1].as_f64().unwrap_or(0.0).log2();
    let ty = values[2].as_f64().unwrap_or(0.0).log2();
    10.0 + depth + 2.0 * share + 1.5 * inner + (tx - 4.0).powi(2) + 0.5 * (ty - 3.0).powi(2)
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let space = SearchSpace::new(
        vec![
            Parameter::permutation("order", ["a", "b", "c", "d", "e", "f"]).expect("valid"),
            Parameter::integer("tile_x", [2, 4, 8, 16, 32, 64, 128]).expect("valid"),
            Parameter::integer("tile_y", [2, 4, 8, 16, 32, 64]).expect("valid"),
        ],
        &[] as &[&str],
    )
    .expect("valid space");
    let mut all: Vec<f64> = (0..space.size())
        .map(|r| cost(&space, &space.configuration(r)))
        .collect();
    all.sort_by(f64::total_cmp);
    let (opt, median) = (all[0], all[all.len() / 2]);
    println!(
        "{} configurations (720 orderings of 6 loops x 42 tile pairs), optimum {opt}, median {median}",
        space.size()
    );
    for spec in [
        "baco",
        "baco:permutation_distance=kendall",
        "baco:permutation_distance=hamming",
        "baco:permutation_distance=categorical",
        "random",
    ] {
        let mut regret = [0.0f64; 3];
        for seed in 0..seeds {
            let (_, mut strategy) = ktune_strategies::create_spec(spec).expect("registered");
            let mut runner =
                FnRunner::new(|space, c| Some(cost(space, c))).metric("cost", Direction::Minimize);
            let run = Tuner::new(&space, &mut runner, Budget::evaluations(60))
                .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
                .expect("runs");
            for (k, n) in [20usize, 40, 60].iter().enumerate() {
                let best = run
                    .records
                    .iter()
                    .take(*n)
                    .filter_map(|r| r.outcome.objective())
                    .fold(f64::INFINITY, f64::min);
                regret[k] += (best - opt) / (median - opt) / seeds as f64;
            }
        }
        println!(
            "{spec:42} normalised regret at 20 / 40 / 60 evaluations: {:.3} / {:.3} / {:.3} ({seeds} seeds)",
            regret[0], regret[1], regret[2]
        );
    }
}
