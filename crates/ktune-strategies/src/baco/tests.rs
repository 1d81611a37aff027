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

/// The Bowl, but every value comes with samples whose spread grows with the value, so each
/// observation carries a measurement variance.
struct NoisyBowl(Bowl);

impl ktune_core::Runner for NoisyBowl {
    fn name(&self) -> &str {
        "noisy-bowl"
    }
    fn metrics(&self) -> &[Metric] {
        self.0.metrics()
    }
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[ktune_space::Configuration],
    ) -> Result<Vec<ktune_core::Outcome>, ktune_core::CoreError> {
        Ok(self
            .0
            .evaluate(space, configs)?
            .into_iter()
            .map(|o| match o.objective() {
                Some(v) => o.with_samples(ktune_core::Samples::new(
                    vec![0.8 * v, v, 1.2 * v],
                    ktune_core::Statistic::Mean,
                )),
                None => o,
            })
            .collect())
    }
}

#[test]
fn measurement_variances_reach_the_model() {
    let space = sparse_space();
    let tune = |noisy: bool| {
        let (_, mut s) = crate::create_spec("baco").unwrap();
        let bowl = Bowl(vec![Metric::new("f", Direction::Minimize)]);
        let budget = Budget {
            max_evaluations: Some(30),
            ..Budget::default()
        };
        let mut plain = bowl;
        let mut wrapped;
        let runner: &mut dyn ktune_core::Runner = if noisy {
            wrapped = NoisyBowl(Bowl(vec![Metric::new("f", Direction::Minimize)]));
            &mut wrapped
        } else {
            &mut plain
        };
        Tuner::new(&space, runner, budget)
            .run(s.as_mut(), &mut Rng::seed_from_u64(5))
            .unwrap()
    };
    let (quiet, noisy) = (tune(false), tune(true));
    let configs = |r: &ktune_core::TuningRun| -> Vec<_> {
        r.records.iter().map(|r| r.config.clone()).collect()
    };
    // Same values, but the model weighs them by their precision: another search.
    assert_eq!(
        quiet.objective_values()[..10],
        noisy.objective_values()[..10]
    );
    assert_ne!(configs(&quiet), configs(&noisy));
    // And a deterministic one.
    assert_eq!(configs(&noisy), configs(&tune(true)));
    let best = noisy.best().unwrap().outcome.objective().unwrap();
    assert!(best <= 5.0, "{best}");
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
        Budget {
            max_evaluations: Some(40),
            ..Budget::default()
        },
        Direction::Minimize,
        Rng::seed_from_u64(1),
    )
    .unwrap();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
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
