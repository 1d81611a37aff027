//! Gaussian-process surrogate models for ktune.
//!
//! * [`Kernel`]: a stationary covariance function ([`KernelKind`]) over a per-dimension
//!   [`Distance`], with [`Hyperparameters`] (lengthscales, output scale, noise).
//! * [`DenseGp`]: exact GP regression by Cholesky factorisation, predicting anywhere.
//! * [`CandidateGp`]: exact GP over a fixed discrete candidate set, updated
//!   incrementally in `O(n·m)` per observation, for Bayesian optimisation.
//!
//! Both models follow scikit-learn's
//! `GaussianProcessRegressor(kernel, alpha=noise, normalize_y=True)` with fixed
//! hyperparameters: targets are normalised by mean and population standard deviation,
//! `noise` is added to the training diagonal in normalised units, and predictions
//! (mean, latent variance) are returned in the original units.
#![deny(missing_docs)]

mod candidate;
mod dense;
mod error;
mod kernel;
mod stats;

pub use candidate::CandidateGp;
pub use dense::DenseGp;
pub use error::ModelError;
pub use kernel::{Distance, Hyperparameters, Kernel, KernelKind};
