use ktune_core::{Budget, Direction, Metric, Rng, Tuner};
use ktune_space::SearchSpace;
use rand::SeedableRng;

use crate::testkit::{Bowl, sparse_space};

fn run(spec: &str, space: &SearchSpace, seed: u64, budget: usize) -> ktune_core::TuningRun {
    let (_, mut s) = crate::create_spec(spec).unwrap();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
    Tuner::new(
        space,
        &mut runner,
        Budget {
            max_evaluations: Some(budget),
            ..Budget::default()
        },
    )
    .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
    .unwrap()
}

#[test]
fn finds_the_bowls_optimum() {
    let space = sparse_space();
    let r = run("baco", &space, 1, 40);
    let best = r.best().and_then(|b| b.outcome.objective()).unwrap();
    assert!(best <= 2.0, "best {best} after 40 evaluations");
}
