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
