//! Gaussian-process surrogate models for ktune.
//!
//! * [`Kernel`]: a stationary covariance function ([`KernelKind`]) over a per-dimension
//!   [`Distance`], with [`Hyperparameters`] (lengthscales, output scale, noise).
//! * [`DenseGp`]: exact GP regression by Cholesky factorisation, predicting anywhere.
//! * [`CandidateGp`]: exact GP over a fixed discrete candidate set, updated
//!   incrementally in `O(n·m)` per observation, for Bayesian optimisation.
//! * [`FeasibilityForest`]: a random-forest classifier of hidden constraints.
//! * [`ClusteredGp`]: the clustered GP (cGP) for non-smooth objectives: k-means on
//!   `(x, ξ·y)`, k-nearest-neighbour classification, one GP per component.
//! * [`Surrogate`]: the interface a strategy uses, implemented by [`CandidateGp`],
//!   [`ExactGp`] (an exact GP over the observations told, refitted on demand) and
//!   [`ClusteredGp`].
//!
//! Both models follow scikit-learn's
//! `GaussianProcessRegressor(kernel, alpha=noise, normalize_y=True)` with fixed
//! hyperparameters: targets are normalised by mean and population standard deviation,
//! `noise` is added to the training diagonal in normalised units, and predictions
//! (mean, latent variance) are returned in the original units.
#![deny(missing_docs)]

pub mod acquisition;
mod candidate;
mod cluster;
mod clustered;
pub mod conformance;
mod dense;
mod error;
mod exact;
mod fit;
mod forest;
mod kernel;
mod observations;
mod stats;
mod surrogate;

pub use candidate::CandidateGp;
pub use clustered::{ClusterOptions, ClusteredGp, Weighting};
pub use dense::DenseGp;
pub use error::ModelError;
pub use exact::ExactGp;
pub use fit::{FitOptions, Fitted, Gamma, Priors, fit_hyperparameters, fit_hyperparameters_noisy};
pub use forest::{FeasibilityForest, ForestOptions, feasibility_limit};
pub use kernel::{Block, Distance, Hyperparameters, Kernel, KernelKind, Metric, SubSpaces};
pub use surrogate::{Point, Surrogate, Weighted};
