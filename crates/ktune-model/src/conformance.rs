//! The surrogate conformance suite: what every [`Surrogate`] must do, with the same
//! assertions for each implementation (this crate's models run it in their tests; a model
//! written elsewhere runs it in its own).
//!
//! The suite observes a smooth function of two coordinates at points of a 7 × 7 grid on
//! [0, 1]² (point `i` at `grid()[2i..2i + 2]`, keyed by `i`), so a model that must know its
//! candidates up front is built on [`grid`].
//!
//! ```
//! use ktune_model::conformance::check_surrogate;
//! use ktune_model::{ExactGp, Kernel, KernelKind};
//!
//! let mut kernel = Kernel::new(KernelKind::Matern52, 0.4);
//! kernel.hyper.noise = 1e-8;
//! let report = check_surrogate("exact GP", &mut || Box::new(ExactGp::new(kernel.clone())));
//! assert!(report.replaces_kernel);
//! ```

use crate::{ExactGp, Hyperparameters, Kernel, KernelKind, ModelError, Point, Surrogate};

/// What the suite found a surrogate does where the contract leaves it a choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// It replaces its kernel when asked ([`Surrogate::set_kernel`]); otherwise it said it
    /// cannot.
    pub replaces_kernel: bool,
}

/// Runs every check on fresh models made by `make`; `name` goes into the messages. Panics
/// where the model breaks the contract.
pub fn check_surrogate(name: &str, make: &mut dyn FnMut() -> Box<dyn Surrogate>) -> Report {
    interpolates_what_it_observed(name, make().as_mut());
    forgets_truncated_observations(name, make().as_mut());
    replaces_values_in_order(name, make().as_mut());
    Report {
        replaces_kernel: replaces_its_kernel_or_says_it_cannot(name, make().as_mut()),
    }
}

/// The suite's candidates: a 7 × 7 grid on [0, 1]², two coordinates per point.
pub fn grid() -> Vec<f64> {
    (0..49)
        .flat_map(|i| [f64::from(i % 7) / 6.0, f64::from(i / 7) / 6.0])
        .collect()
}

fn objective(x: &[f64]) -> f64 {
    (x[0] - 0.3).powi(2) + 2.0 * (x[1] - 0.6).powi(2) + 0.5
}

fn points(g: &[f64]) -> Vec<Point<'_>> {
    g.chunks(2)
        .enumerate()
        .map(|(i, x)| Point::keyed(x, i as u64))
        .collect()
}

fn observe(model: &mut dyn Surrogate, g: &[f64], which: &[usize]) {
    for &i in which {
        let x = &g[2 * i..2 * i + 2];
        model
            .observe(Point::keyed(x, i as u64), objective(x))
            .unwrap_or_else(|e| panic!("observing point {i}: {e}"));
    }
}

/// The points the checks observe (corners, centre, a spread of the rest).
const SEEN: [usize; 12] = [0, 6, 42, 48, 24, 10, 17, 31, 38, 3, 21, 45];

/// A model that replaces its kernel predicts as one built with that kernel and told the same
/// observations; one that cannot says so and predicts as before. Whether it replaced it.
fn replaces_its_kernel_or_says_it_cannot(name: &str, model: &mut dyn Surrogate) -> bool {
    let g = grid();
    let other = Kernel::with_hyperparameters(
        KernelKind::Matern52,
        Hyperparameters {
            lengthscales: vec![0.2, 0.9],
            output_scale: 1.0,
            noise: 1e-8,
        },
    );
    observe(model, &g, &SEEN);
    let before = model.predict(&points(&g)).unwrap();
    match model.set_kernel(other.clone()) {
        Ok(()) => {
            let mut fresh = ExactGp::new(other);
            observe(&mut fresh, &g, &SEEN);
            let want = fresh.predict(&points(&g)).unwrap();
            let got = model.predict(&points(&g)).unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert!(
                    (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6,
                    "{name}: {a:?} against {b:?}"
                );
            }
            assert!(
                got.iter()
                    .zip(&before)
                    .any(|(a, b)| (a.0 - b.0).abs() > 1e-3),
                "{name}: the new kernel changed nothing"
            );
            true
        }
        Err(e) => {
            assert!(matches!(e, ModelError::Unsupported { .. }), "{name}: {e}");
            assert_eq!(model.predict(&points(&g)).unwrap(), before, "{name}");
            false
        }
    }
}

/// Observations are kept in order, predicted back closely with little variance, and
/// unobserved points are less certain.
fn interpolates_what_it_observed(name: &str, model: &mut dyn Surrogate) {
    let g = grid();
    assert!(model.is_empty(), "{name}");
    observe(model, &g, &SEEN);
    model.fit(7).unwrap();
    assert_eq!(model.len(), SEEN.len(), "{name}");
    let expected: Vec<f64> = SEEN
        .iter()
        .map(|&i| objective(&g[2 * i..2 * i + 2]))
        .collect();
    assert_eq!(model.observed_values(), expected.as_slice(), "{name}");
    let p = model.predict(&points(&g)).unwrap();
    // On average: the clustered GP predicts an observed point from the component its
    // neighbours are in, which need not be the one it was observed in.
    let error = SEEN
        .iter()
        .map(|&i| (p[i].0 - objective(&g[2 * i..2 * i + 2])).abs())
        .sum::<f64>()
        / SEEN.len() as f64;
    assert!(
        error < 0.1,
        "{name}: mean error {error} at the observations"
    );
    let seen_var = SEEN.iter().map(|&i| p[i].1).fold(0.0, f64::max);
    let unseen_var = (0..49)
        .filter(|i| !SEEN.contains(i))
        .map(|i| p[i].1)
        .fold(0.0, f64::max);
    assert!(unseen_var > seen_var, "{name}: {unseen_var} <= {seen_var}");
    let weighted = model.predict_weighted(&points(&g)).unwrap();
    for (w, q) in weighted.iter().zip(&p) {
        assert!((w.mean - q.0).abs() < 1e-9 && w.weight > 0.0, "{name}");
    }
}

/// Observations added and then truncated away leave the predictions as they were: a batch's
/// fantasised observations must not linger.
fn forgets_truncated_observations(name: &str, model: &mut dyn Surrogate) {
    let g = grid();
    observe(model, &g, &SEEN[..8]);
    let before = model.predict(&points(&g)).unwrap();
    // Fantasies, far from the truth.
    for &i in &[1usize, 2, 40] {
        model
            .observe(Point::keyed(&g[2 * i..2 * i + 2], i as u64), -5.0)
            .unwrap();
    }
    assert_eq!(model.len(), 11, "{name}");
    let during = model.predict(&points(&g)).unwrap();
    assert!((during[1].0 - before[1].0).abs() > 0.1, "{name}");
    model.truncate(8);
    model.truncate(20);
    assert_eq!(model.len(), 8, "{name}");
    assert_eq!(model.observed_values().len(), 8, "{name}");
    let after = model.predict(&points(&g)).unwrap();
    for (j, (a, b)) in after.iter().zip(&before).enumerate() {
        assert!(
            (a.0 - b.0).abs() < 1e-9 && (a.1 - b.1).abs() < 1e-9,
            "{name}: at {j}: {a:?} instead of {b:?}"
        );
    }
    // A truncated point can be observed again (with its true value now).
    observe(model, &g, &[1]);
    assert_eq!(model.len(), 9, "{name}");
    model.truncate(0);
    assert!(model.is_empty(), "{name}");
}

/// New values replace the old ones in order; a wrong count is refused and changes nothing.
fn replaces_values_in_order(name: &str, model: &mut dyn Surrogate) {
    let g = grid();
    observe(model, &g, &SEEN[..5]);
    let doubled: Vec<f64> = model.observed_values().iter().map(|v| 2.0 * v).collect();
    model.replace_values(&doubled).unwrap();
    assert_eq!(model.observed_values(), doubled.as_slice(), "{name}");
    assert!(model.replace_values(&doubled[..4]).is_err(), "{name}");
    assert_eq!(model.observed_values(), doubled.as_slice(), "{name}");
    let p = model.predict(&points(&g)).unwrap();
    let i = SEEN[2];
    assert!((p[i].0 - doubled[2]).abs() < 0.05, "{name}: {:?}", p[i]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CandidateGp, ClusterOptions, ClusteredGp, Distance, FitOptions, Metric};

    fn kernel() -> Kernel {
        let mut k = Kernel::new(KernelKind::Matern52, 0.4);
        k.hyper.noise = 1e-8;
        k
    }

    #[test]
    fn the_candidate_gp_conforms() {
        let report = check_surrogate("candidate GP", &mut || {
            Box::new(CandidateGp::new(kernel(), grid(), 2).unwrap())
        });
        assert!(report.replaces_kernel);
    }

    #[test]
    fn the_exact_gp_conforms_fixed_or_fitted() {
        let report = check_surrogate("exact GP", &mut || Box::new(ExactGp::new(kernel())));
        assert!(report.replaces_kernel);
        check_surrogate("fitted exact GP", &mut || {
            Box::new(ExactGp::fitted(
                KernelKind::Matern52,
                Metric::PerCoordinate(Distance::Euclidean),
                FitOptions::default(),
            ))
        });
    }

    #[test]
    fn the_clustered_gp_conforms() {
        check_surrogate("clustered GP", &mut || {
            let options = ClusterOptions {
                clusters: 2,
                ..ClusterOptions::default()
            };
            Box::new(ClusteredGp::new(ExactGp::new(kernel()), options).unwrap())
        });
    }

    /// A model that keeps fantasies after a truncation fails the suite.
    #[test]
    fn the_suite_catches_a_model_that_forgets_nothing() {
        struct Sticky(ExactGp);
        impl Surrogate for Sticky {
            fn observe(&mut self, point: Point<'_>, value: f64) -> Result<(), ModelError> {
                self.0.observe(point, value)
            }
            fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError> {
                self.0.predict(points)
            }
            fn replace_values(&mut self, values: &[f64]) -> Result<(), ModelError> {
                self.0.replace_values(values)
            }
            fn observed_values(&self) -> &[f64] {
                self.0.observed_values()
            }
            fn truncate(&mut self, _: usize) {}
        }
        let outcome = std::panic::catch_unwind(|| {
            check_surrogate("sticky", &mut || Box::new(Sticky(ExactGp::new(kernel()))))
        });
        assert!(outcome.is_err());
    }
}
