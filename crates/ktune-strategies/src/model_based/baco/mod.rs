//! Bayesian optimisation as BaCO does it (Hellsten et al., "BaCO: A Fast and Portable
//! Bayesian Compiler Optimization Framework", sections 3 and 4), for mixed, constrained
//! search spaces of any size.
//!
//! - **Model**: a Gaussian process with one distance per parameter type (numbers on their
//!   normalised, possibly logarithmic scale; categorical values by equality; permutations by
//!   Spearman's, Kendall's or Hamming distance; see [`crate::encoding`]), Matérn 5/2 over the
//!   lengthscale-weighted Euclidean norm of those distances, an output scale and Gaussian
//!   noise. The hyperparameters are refitted before every proposal by maximum a posteriori
//!   under gamma priors, from random starts refined by L-BFGS at the first fit and from the
//!   last optimum after that. The observations are log-transformed (the paper's ablation:
//!   removing the transforms hurts at every budget) and standardised.
//! - **Acquisition**: noise-free expected improvement (the posterior variance of the latent
//!   function, not of a noisy observation, so observed configurations are not worth
//!   re-sampling) below the best observed value, times the probability that the
//!   configuration runs.
//! - **Hidden constraints**: a random forest trained on every outcome, failed or not, gives
//!   that probability; configurations below a limit ε_f, drawn anew for every proposal from
//!   `{0, 0.01, ..., 0.1}`, are skipped.
//! - **Acquisition optimisation**: a multi-start local search over valid configurations
//!   (uniform samples from the factorised space, which never materialises, and the best
//!   observed configurations as starts; moves change one parameter or swap two items of a
//!   permutation), so spaces of 10^10 configurations and more work as small ones do.
//! - **Initial design**: `initial_samples` uniformly random valid configurations, continued
//!   until one of them runs; a run in which everything fails keeps sampling.
//!
//! With `surrogate = "cgp"` the model is the clustered GP ([`ktune_model::ClusteredGp`]): one
//! such GP per cluster of the observations, each with its own fitted hyperparameters, EI
//! divided by the size of the candidate's component, and a share of uniformly random
//! proposals (`exploration_rate`, see [`crate::surrogate`]).
//!
//! Asked for several configurations at once, it proposes the best distinct configurations of
//! one local search (no batch acquisition yet).
//!
//! Where BaCO's paper leaves a number open, its published implementation's default is used:
//! 10 initial samples, priors Gamma(3, 6) on lengthscales (inputs in `[0, 1]`), Gamma(2, 0.15)
//! on the output scale and Gamma(1.1, 0.05) on the noise, a forest of 50 trees with no
//! bootstrap and 75% of the features per split, and ε_f up to 0.1. The local search samples
//! 2000 configurations (BaCO: 30 000), as measured to keep an iteration within tens of
//! milliseconds at a hundred observations.

mod options;
mod strategy;

pub use options::BacoOptions;
use options::OPTIONS;
pub use strategy::Baco;
pub(crate) use strategy::CheckedBaco;

use crate::surrogate::{self, SurrogateOptions};
use crate::{Entry, Factory, Options, StrategyError};

const NAME: &str = "baco";

fn check(options: &Options) -> Result<Box<dyn Factory>, StrategyError> {
    let o: BacoOptions = surrogate::parse_with(NAME, options)?;
    Ok(crate::registry::factory(o.resolve(), |c| {
        Box::new(Baco::checked(c.clone()))
    }))
}

impl surrogate::WithSurrogate for BacoOptions {
    fn surrogate(&mut self) -> &mut SurrogateOptions {
        &mut self.surrogate
    }
}

pub(crate) const ENTRY: Entry = Entry {
    name: NAME,
    aliases: &[],
    about: "BaCO's Bayesian optimisation: a Gaussian process with one distance per parameter type (permutations by Spearman's distance) and hyperparameters fitted under gamma priors, noise-free EI times the probability of running from a random forest trained on failures, and a multi-start local search of the acquisition that works on spaces too large to enumerate.",
    options: OPTIONS,
    tunable: &[
        crate::Tunable::new("initial_samples", &["5", "10", "20"]),
        crate::Tunable::new("starts", &["5", "10", "20"]),
        crate::Tunable::new("best_starts", &["1", "3", "5"]),
        crate::Tunable::new("feasibility_threshold", &["0.0", "0.1", "0.3"]),
    ],
    check,
};

#[cfg(test)]
mod tests;
