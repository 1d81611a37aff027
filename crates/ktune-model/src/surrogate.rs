//! The extension point for surrogate models: what a Bayesian optimisation strategy needs
//! from a model of the objective, whatever the model is.

use crate::error::ModelError;
use crate::kernel::Kernel;

/// An encoded configuration, with its rank in the search space when it has one.
///
/// The rank is a stable key: a model over a fixed candidate set ([`CandidateGp`]) finds its
/// candidate by it without comparing coordinates; other models ignore it.
///
/// [`CandidateGp`]: crate::CandidateGp
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point<'a> {
    /// The coordinates (the model's encoding of the configuration).
    pub x: &'a [f64],
    /// The configuration's rank in the search space, if the caller knows it.
    pub key: Option<u64>,
}

impl<'a> Point<'a> {
    /// A point with a key.
    pub fn keyed(x: &'a [f64], key: u64) -> Self {
        Point { x, key: Some(key) }
    }

    /// A point without a key.
    pub fn new(x: &'a [f64]) -> Self {
        Point { x, key: None }
    }
}

/// A prediction and the acquisition weight of its point ([`Surrogate::predict_weighted`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weighted {
    /// Posterior mean.
    pub mean: f64,
    /// Posterior variance of the latent objective.
    pub variance: f64,
    /// The factor on an improvement-type acquisition at this point (1: none).
    pub weight: f64,
}

/// A probabilistic model of the objective over encoded configurations: it is told
/// observations and predicts a mean and a variance anywhere.
///
/// Predictions are of the latent objective (the variance excludes observation noise) in
/// the units of the observed values. Implementations: [`CandidateGp`] (the BO paper's
/// incremental GP over every configuration, fixed hyperparameters), [`ExactGp`] (an
/// exact GP refitted on demand, with hyperparameters fitted by maximum likelihood when
/// asked: BaCO's mixed-type GP) and [`ClusteredGp`] (one GP per cluster of the
/// observations, for non-smooth objectives).
///
/// [`ClusteredGp`]: crate::ClusteredGp
/// [`CandidateGp`]: crate::CandidateGp
/// [`ExactGp`]: crate::ExactGp
pub trait Surrogate: Send + Sync {
    /// Adds one observation `y` at `point`.
    fn observe(&mut self, point: Point<'_>, y: f64) -> Result<(), ModelError>;

    /// Replaces the observed values, one per observation in the order they were observed
    /// (e.g. after the caller changed how it transforms them). On error the model is left
    /// unchanged.
    fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError>;

    /// Sets the known measurement variance of each observation, one per observation in the
    /// order they were observed, in the units of the observed values as the model holds them
    /// (after the caller's transformation); it is added to the noise term of that
    /// observation, so values measured less precisely pull the posterior less. Observations
    /// made later have none until this is called again. Models without a per-observation
    /// noise term ignore it (the default).
    fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        let _ = variances;
        Ok(())
    }

    /// Posterior `(mean, variance)` at each point.
    fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError>;

    /// Posterior mean and variance at each point, and the weight by which an
    /// improvement-type acquisition (EI, PI) at that point is multiplied. Models of one
    /// component weigh every point 1 (the default); the clustered GP gives each candidate its
    /// component's weight (the inverse of the component's size).
    fn predict_weighted(&self, points: &[Point<'_>]) -> Result<Vec<Weighted>, ModelError> {
        Ok(self
            .predict(points)?
            .into_iter()
            .map(|(mean, variance)| Weighted {
                mean,
                variance,
                weight: 1.0,
            })
            .collect())
    }

    /// Fits the hyperparameters to the observations (nothing for a model with fixed
    /// hyperparameters). `seed` makes a randomised fit repeatable.
    fn fit(&mut self, seed: u64) -> Result<(), ModelError> {
        let _ = seed;
        Ok(())
    }

    /// Replaces the kernel (hyperparameters the caller chose, e.g. on held-out results) and
    /// conditions every observation on it. On error the model is left unchanged; models
    /// that cannot (the default) say so with [`ModelError::Unsupported`].
    fn set_kernel(&mut self, kernel: Kernel) -> Result<(), ModelError> {
        let _ = kernel;
        Err(ModelError::Unsupported {
            what: "replace its kernel",
        })
    }

    /// The values observed so far, in order.
    fn observed_values(&self) -> &[f64];

    /// Forgets every observation after the first `len` (nothing when there are no more),
    /// so that a batch of proposals can be made on fantasised observations (the kriging
    /// believer) and the model returned to what it was measured on.
    fn truncate(&mut self, len: usize);

    /// The number of observations.
    fn len(&self) -> usize {
        self.observed_values().len()
    }

    /// True before the first observation.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The surrogate conformance suite: what every [`Surrogate`] must do, run against each
/// implementation with the same assertions.
#[cfg(test)]
mod conformance {
    use super::*;
    use crate::{
        CandidateGp, ClusterOptions, ClusteredGp, Distance, ExactGp, FitOptions, Kernel,
        KernelKind, Metric,
    };

    /// A 2-d grid of 7 × 7 candidates on [0, 1]², keyed by index.
    fn grid() -> Vec<f64> {
        (0..49)
            .flat_map(|i| [f64::from(i % 7) / 6.0, f64::from(i / 7) / 6.0])
            .collect()
    }

    fn objective(x: &[f64]) -> f64 {
        (x[0] - 0.3).powi(2) + 2.0 * (x[1] - 0.6).powi(2) + 0.5
    }

    fn models() -> Vec<(&'static str, Box<dyn Surrogate>)> {
        let mut k = Kernel::new(KernelKind::Matern52, 0.4);
        k.hyper.noise = 1e-8;
        vec![
            (
                "candidate GP",
                Box::new(CandidateGp::new(k.clone(), grid(), 2).unwrap()),
            ),
            ("exact GP", Box::new(ExactGp::new(k.clone()))),
            (
                "fitted exact GP",
                Box::new(ExactGp::fitted(
                    KernelKind::Matern52,
                    Metric::PerCoordinate(Distance::Euclidean),
                    FitOptions::default(),
                )),
            ),
            (
                "clustered GP",
                Box::new(
                    ClusteredGp::new(
                        ExactGp::new(k),
                        ClusterOptions {
                            clusters: 2,
                            ..ClusterOptions::default()
                        },
                    )
                    .unwrap(),
                ),
            ),
        ]
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
                .unwrap();
        }
    }

    const SEEN: [usize; 12] = [0, 6, 42, 48, 24, 10, 17, 31, 38, 3, 21, 45];

    /// A model that replaces its kernel predicts as one built with that kernel and told the
    /// same observations; one that cannot says so and predicts as before.
    #[test]
    fn every_surrogate_replaces_its_kernel_or_says_it_cannot() {
        let g = grid();
        let other = Kernel::with_hyperparameters(
            KernelKind::Matern52,
            crate::Hyperparameters {
                lengthscales: vec![0.2, 0.9],
                output_scale: 1.0,
                noise: 1e-8,
            },
        );
        let mut replaced = 0;
        for (name, mut model) in models() {
            observe(model.as_mut(), &g, &SEEN);
            let before = model.predict(&points(&g)).unwrap();
            match model.set_kernel(other.clone()) {
                Ok(()) => {
                    replaced += 1;
                    let mut fresh = ExactGp::new(other.clone());
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
                }
                Err(e) => {
                    assert!(matches!(e, ModelError::Unsupported { .. }), "{name}: {e}");
                    assert_eq!(model.predict(&points(&g)).unwrap(), before, "{name}");
                }
            }
        }
        assert!(
            replaced >= 2,
            "the candidate and the exact GP replace their kernels"
        );
    }

    /// Observations are kept in order, predicted back closely with little variance, and
    /// unobserved points are less certain.
    #[test]
    fn every_surrogate_interpolates_what_it_observed() {
        let g = grid();
        for (name, mut model) in models() {
            assert!(model.is_empty(), "{name}");
            observe(model.as_mut(), &g, &SEEN);
            model.fit(7).unwrap();
            assert_eq!(model.len(), SEEN.len(), "{name}");
            let expected: Vec<f64> = SEEN
                .iter()
                .map(|&i| objective(&g[2 * i..2 * i + 2]))
                .collect();
            assert_eq!(model.observed_values(), expected.as_slice(), "{name}");
            let p = model.predict(&points(&g)).unwrap();
            // On average: the clustered GP predicts an observed point from the component
            // its neighbours are in, which need not be the one it was observed in.
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
    }

    /// Observations added and then truncated away leave the predictions as they were:
    /// a batch's fantasised observations must not linger.
    #[test]
    fn every_surrogate_forgets_truncated_observations() {
        let g = grid();
        for (name, mut model) in models() {
            observe(model.as_mut(), &g, &SEEN[..8]);
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
            observe(model.as_mut(), &g, &[1]);
            assert_eq!(model.len(), 9, "{name}");
            model.truncate(0);
            assert!(model.is_empty(), "{name}");
        }
    }

    /// New values replace the old ones in order; a wrong count is refused and changes
    /// nothing.
    #[test]
    fn every_surrogate_replaces_values_in_order() {
        let g = grid();
        for (name, mut model) in models() {
            observe(model.as_mut(), &g, &SEEN[..5]);
            let doubled: Vec<f64> = model.observed_values().iter().map(|v| 2.0 * v).collect();
            model.replace_values(&doubled).unwrap();
            assert_eq!(model.observed_values(), doubled.as_slice(), "{name}");
            assert!(model.replace_values(&doubled[..4]).is_err(), "{name}");
            assert_eq!(model.observed_values(), doubled.as_slice(), "{name}");
            let p = model.predict(&points(&g)).unwrap();
            let i = SEEN[2];
            assert!((p[i].0 - doubled[2]).abs() < 0.05, "{name}: {:?}", p[i]);
        }
    }
}
