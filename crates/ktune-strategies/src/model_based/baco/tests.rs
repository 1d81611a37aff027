use ktune_core::{Budget, Rng, Tuner};
use ktune_space::SearchSpace;
use rand::SeedableRng;

use crate::testkit::{best_of_workers, bowl, sparse_space};

fn run(spec: &str, space: &SearchSpace, seed: u64, budget: usize) -> ktune_core::TuningRun {
    let (_, mut s) = crate::create_spec(spec).unwrap();
    let mut runner = bowl();
    Tuner::new(space, &mut runner, Budget::evaluations(budget))
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

#[test]
fn measurement_variances_reach_the_model() {
    crate::conformance::check_variances_change_the_search(
        &crate::conformance::Subject::registered("baco"),
    );
}

/// Four asynchronous workers: baco proposes while the others still measure (pending
/// proposals believed at their posterior mean), spends the budget on distinct
/// configurations and still finds the bowl's optimum region.
#[test]
fn asynchronous_workers_get_distinct_proposals() {
    let best = best_of_workers("baco", &sparse_space(), &mut bowl(), (40, 4, 1));
    assert!(best <= 3.0, "best {best}");
}
