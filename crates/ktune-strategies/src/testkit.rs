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
