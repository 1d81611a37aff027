use ktune_core::{Budget, Direction, Rng, Tuner};
use ktune_space::SearchSpace;
use rand::SeedableRng;

use crate::testkit::{bowl, sparse_space};

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
    let space = sparse_space();
    let (_, strategy) = crate::create_spec("baco").unwrap();
    let session = ktune_core::Session::new(
        &space,
        strategy,
        Budget::evaluations(40),
        Direction::Minimize,
        Rng::seed_from_u64(1),
    )
    .unwrap();
    let mut runner = bowl();
    let run = ktune_core::simulate_workers(session, &mut runner, 4).unwrap();
    assert_eq!(run.records.len(), 40);
    assert_eq!(run.stop, ktune_core::StopReason::Evaluations);
    let mut configs: Vec<&ktune_space::Configuration> =
        run.records.iter().map(|r| &r.config).collect();
    configs.sort();
    configs.dedup();
    assert_eq!(configs.len(), 40);
    let best = run
        .records
        .iter()
        .filter_map(|r| r.outcome.objective())
        .fold(f64::INFINITY, f64::min);
    assert!(best <= 3.0, "best {best}");
}
