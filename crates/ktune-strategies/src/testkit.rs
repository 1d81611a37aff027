//! Test fixtures shared by the strategies' tests: a smooth landscape with failures, and a
//! mostly infeasible space.

use ktune_core::{CoreError, FailureKind, Metric, Outcome, Runner, Timings};
use ktune_space::{Configuration, Parameter, SearchSpace};

/// A smooth bowl over the first two parameters with its minimum 1.0 at (11, 4) and a diagonal
/// band of failing configurations.
pub(crate) struct Bowl(pub(crate) Vec<Metric>);

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
                    Outcome::failed(FailureKind::Runtime, "fails", Timings::default())
                } else {
                    Outcome::ok(
                        vec![(x - 11.0).powi(2) + (y - 4.0).powi(2) + 1.0],
                        Timings::default(),
                    )
                }
            })
            .collect())
    }
}

/// Mostly infeasible: 40x40 Cartesian, about a sixth feasible, plus a free parameter.
pub(crate) fn sparse_space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer_range("x", 0, 39, 1).unwrap(),
            Parameter::integer_range("y", 0, 39, 1).unwrap(),
            Parameter::integer("z", [1, 2]).unwrap(),
        ],
        &["(x * y) % 6 == 0", "x + y <= 40"],
    )
    .unwrap()
}

/// A small constrained space (the Bowl's two parameters, 12 x 12 cut by a constraint, plus a
/// free one), for runs that exhaust it.
pub(crate) fn small_space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer_range("x", 4, 15, 1).unwrap(),
            Parameter::integer_range("y", 0, 11, 1).unwrap(),
            Parameter::integer("z", [1, 2]).unwrap(),
        ],
        &["x + y <= 20"],
    )
    .unwrap()
}

/// A brute-forced space of `../shared/data/spaces` (beside the checkout), by file stem.
pub(crate) fn shared_space(stem: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/spaces")
        .join(format!("{stem}.json.gz"))
}

/// The Bowl, but every value comes with samples whose spread grows with the value, so each
/// observation carries a measurement variance.
pub(crate) struct NoisyBowl(pub(crate) Bowl);

impl Runner for NoisyBowl {
    fn name(&self) -> &str {
        "noisy-bowl"
    }
    fn metrics(&self) -> &[Metric] {
        self.0.metrics()
    }
    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
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

/// Asserts that `spec` hears measurement variances: on the same values with and without
/// them (the Bowl and the NoisyBowl), the searches differ after the initial sample, and the
/// noisy one is deterministic per seed and still reaches the bowl's bottom region.
pub(crate) fn variances_change_the_search(spec: &str) {
    use ktune_core::{Budget, Direction, Rng, Tuner};
    use rand::SeedableRng;
    let space = sparse_space();
    let tune = |noisy: bool| {
        let (_, mut s) = crate::create_spec(spec).unwrap();
        let metrics = vec![Metric::new("f", Direction::Minimize)];
        let mut plain = Bowl(metrics.clone());
        let mut wrapped = NoisyBowl(Bowl(metrics));
        let runner: &mut dyn Runner = if noisy { &mut wrapped } else { &mut plain };
        let budget = Budget {
            max_evaluations: Some(40),
            ..Budget::default()
        };
        Tuner::new(&space, runner, budget)
            .run(s.as_mut(), &mut Rng::seed_from_u64(5))
            .unwrap()
    };
    let (quiet, noisy) = (tune(false), tune(true));
    let configs = |r: &ktune_core::TuningRun| -> Vec<Configuration> {
        r.records.iter().map(|r| r.config.clone()).collect()
    };
    // Same values, but the model weighs them by their precision: another search.
    assert_eq!(
        quiet.objective_values()[..10],
        noisy.objective_values()[..10],
        "{spec}"
    );
    assert_ne!(configs(&quiet), configs(&noisy), "{spec}");
    assert_eq!(configs(&noisy), configs(&tune(true)), "{spec}");
    let best = noisy.best().unwrap().outcome.objective().unwrap();
    // The bowl's median is in the hundreds and its bottom 2; a model that trusts each value
    // less (the values are exact here) may take a little longer to reach it.
    assert!(best <= 12.0, "{spec}: {best}");
}
