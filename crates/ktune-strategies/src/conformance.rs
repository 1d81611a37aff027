//! Tests every registered strategy must pass (Kernel Tuner's `strategy_map` tests, Optuna's
//! parametrised sampler tests): valid proposals only, never a repeat, the budget respected,
//! deterministic per seed.

use ktune_core::{Budget, CoreError, Direction, Metric, Outcome, Rng, Runner, Timings, Tuner};
use ktune_space::{Configuration, Parameter, SearchSpace};
use rand::SeedableRng;

use super::{STRATEGIES, create};

/// A smooth landscape with a band of failing configurations.
struct Bowl(Vec<Metric>);

impl Runner for Bowl {
    fn name(&self) -> &str {
        "bowl"
    }
    fn metrics(&self) -> &[Metric] {
        &self.0
    }
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        Ok(configs
            .iter()
            .map(|c| {
                let v = space.values(c);
                let (x, y) = (v[0].as_f64().unwrap(), v[1].as_f64().unwrap());
                if (x + y) as i64 % 7 == 3 {
                    Outcome::failed(
                        ktune_core::FailureKind::Runtime,
                        "fails",
                        Timings::default(),
                    )
                } else {
                    Outcome::ok(
                        vec![(x - 11.0).powi(2) + (y - 4.0).powi(2)],
                        Timings::default(),
                    )
                }
            })
            .collect())
    }
}

/// Mostly infeasible: 40x40 Cartesian, about a sixth feasible.
fn sparse_space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer_range("x", 0, 39, 1).unwrap(),
            Parameter::integer_range("y", 0, 39, 1).unwrap(),
        ],
        &["(x * y) % 6 == 0", "x + y <= 40"],
    )
    .unwrap()
}

fn run(name: &str, seed: u64, budget: usize) -> Vec<Configuration> {
    let space = sparse_space();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
    let mut strategy = create(name).unwrap();
    let budget = Budget {
        max_evaluations: Some(budget),
        ..Budget::default()
    };
    Tuner::new(&space, &mut runner, budget)
        .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
        .unwrap()
        .records
        .into_iter()
        .map(|r| {
            assert!(
                space.contains(&r.config),
                "{name} proposed an invalid configuration"
            );
            assert_ne!(r.outcome.failure(), Some(ktune_core::FailureKind::Invalid));
            r.config
        })
        .collect()
}

#[test]
fn every_strategy_is_valid_unique_within_budget_and_deterministic() {
    let size = sparse_space().size() as usize;
    assert!(
        size < 40 * 40 / 3,
        "the test space should be mostly infeasible: {size}"
    );
    for (name, _) in STRATEGIES {
        let a = run(name, 1, 60);
        assert_eq!(a.len(), 60, "{name}");
        let unique: std::collections::BTreeSet<_> = a.iter().collect();
        assert_eq!(unique.len(), a.len(), "{name} repeated a configuration");
        assert_eq!(a, run(name, 1, 60), "{name} is not deterministic");
        // Asked for more than the space holds: it stops when the space is exhausted.
        assert_eq!(run(name, 2, size + 50).len(), size, "{name}");
    }
    assert_ne!(run("random", 1, 60), run("random", 2, 60));
}

#[test]
fn unknown_names_list_the_known_ones() {
    let e = create("simulated_anealing").err().unwrap().to_string();
    assert!(
        e.contains("unknown strategy `simulated_anealing`") && e.contains("random, brute_force"),
        "{e}"
    );
}
