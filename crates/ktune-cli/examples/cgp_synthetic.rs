//! The clustered GP against the plain GP on the cGP paper's synthetic non-smooth functions,
//! discretised as search spaces, in the spirit of its Tables 3.1 and 3.2:
//!
//! - f1 (section 1.3, a jump): `-x + 1` for `x < 0`, `x²` from 0 on, 201 points on [-1, 1];
//!   minimum 0 at 0, right beside the jump from 1.
//! - f2 (section 1.3, a discontinuous derivative): `‖x‖ - 1` outside the unit circle,
//!   `(‖x‖ - 1)⁴` inside, 41 x 41 points on [-2, 2]²; minimum 0 on the circle.
//! - f4 (section 3.1.2, two regimes split along `x2 = 0`, maximised): `1 / (1 + (x1 - 1/4)² +
//!   (x2 - 1/4)²)` above the line, `0.25 / (1 + x1² + x2²)` below, 41 x 41 points on [-1, 1]²;
//!   maximum 1 at (1/4, 1/4).
//!
//! f1 and f2 are shifted by +1 so that the strategies' log transform of run times applies as
//! it would to times (it does not move the optimum). For each function, strategy and budget,
//! 50 seeds of the plain strategy and of the same strategy with `surrogate=cgp`; prints the
//! share of seeds where the cGP's best is strictly better, equal, or worse than the GP's on the
//! same seed, and the mean distance of the best found from the optimum:
//! `cargo run --release -p ktune-cli --example cgp_synthetic [-- seeds]`

use ktune_core::testing::FnRunner;
use ktune_core::{Budget, Direction, Rng, Tuner};
use ktune_space::{Parameter, SearchSpace};
use rand::SeedableRng;

/// A synthetic function over grid indices.
#[derive(Clone, Copy)]
enum Function {
    F1,
    F2,
    F4,
}

impl Function {
    fn name(self) -> &'static str {
        match self {
            Function::F1 => "f1 (jump, 1-D)",
            Function::F2 => "f2 (kink on a circle, 2-D)",
            Function::F4 => "f4 (two regimes, 2-D, max)",
        }
    }

    fn direction(self) -> Direction {
        match self {
            Function::F4 => Direction::Maximize,
            _ => Direction::Minimize,
        }
    }

    fn space(self) -> SearchSpace {
        let params = match self {
            Function::F1 => vec![Parameter::integer_range("i", 0, 200, 1).expect("valid")],
            Function::F2 | Function::F4 => vec![
                Parameter::integer_range("i", 0, 40, 1).expect("valid"),
                Parameter::integer_range("j", 0, 40, 1).expect("valid"),
            ],
        };
        SearchSpace::new(params, &[] as &[&str]).expect("valid space")
    }

    fn value(self, space: &SearchSpace, c: &[u32]) -> f64 {
        let v: Vec<f64> = space
            .values(c)
            .iter()
            .map(|v| v.as_f64().unwrap_or(f64::NAN))
            .collect();
        match self {
            Function::F1 => {
                let x = -1.0 + v[0] * 0.01;
                1.0 + if x < 0.0 { -x + 1.0 } else { x * x }
            }
            Function::F2 => {
                let (x, y) = (-2.0 + v[0] * 0.1, -2.0 + v[1] * 0.1);
                let r = (x * x + y * y).sqrt();
                1.0 + if r > 1.0 { r - 1.0 } else { (r - 1.0).powi(4) }
            }
            Function::F4 => {
                let (x1, x2) = (-1.0 + v[0] * 0.05, -1.0 + v[1] * 0.05);
                if x2 > 0.0 {
                    1.0 / (1.0 + (x1 - 0.25).powi(2) + (x2 - 0.25).powi(2))
                } else {
                    0.25 / (1.0 + x1 * x1 + x2 * x2)
                }
            }
        }
    }
}

/// The distance of the best value found from the optimum after `budget` evaluations.
fn regret(f: Function, space: &SearchSpace, opt: f64, spec: &str, seed: u64, budget: usize) -> f64 {
    let (_, mut strategy) = ktune_strategies::create_spec(spec).expect("valid spec");
    let mut runner =
        FnRunner::new(move |space, c| Some(f.value(space, c))).metric("f", f.direction());
    let run = Tuner::new(space, &mut runner, Budget::evaluations(budget))
        .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
        .expect("the run completes");
    let best = run
        .best()
        .and_then(|r| r.outcome.objective())
        .unwrap_or(f64::NAN);
    (best - opt).abs()
}

fn main() {
    let seeds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(50);
    println!(
        "| function | strategy | budget | cGP better | equal | cGP worse | mean |best - opt|, GP | cGP |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for f in [Function::F1, Function::F2, Function::F4] {
        let space = f.space();
        let values: Vec<f64> = (0..space.size())
            .map(|r| f.value(&space, &space.configuration(r)))
            .collect();
        let opt = match f.direction() {
            Direction::Minimize => values.iter().copied().fold(f64::INFINITY, f64::min),
            Direction::Maximize => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        };
        for plain in ["bayes_opt", "baco"] {
            for budget in [30, 60] {
                let cgp = format!("{plain}:surrogate=cgp");
                let (mut better, mut equal, mut worse) = (0, 0, 0);
                let (mut sum_gp, mut sum_cgp) = (0.0, 0.0);
                for seed in 0..seeds {
                    let a = regret(f, &space, opt, plain, seed, budget);
                    let b = regret(f, &space, opt, &cgp, seed, budget);
                    sum_gp += a;
                    sum_cgp += b;
                    // Equal within rounding of the same grid value.
                    if (a - b).abs() <= 1e-12 {
                        equal += 1;
                    } else if b < a {
                        better += 1;
                    } else {
                        worse += 1;
                    }
                }
                let pct = |k: u64| 100.0 * k as f64 / seeds as f64;
                println!(
                    "| {} | `{plain}` | {budget} | {:.0}% | {:.0}% | {:.0}% | {:.2e} | {:.2e} |",
                    f.name(),
                    pct(better),
                    pct(equal),
                    pct(worse),
                    sum_gp / seeds as f64,
                    sum_cgp / seeds as f64
                );
            }
        }
    }
}
