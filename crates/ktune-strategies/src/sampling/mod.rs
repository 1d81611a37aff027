//! Sampling without a model: uniform random sampling, brute force, and the sampler of
//! never-evaluated configurations that the other families start and restart from.

pub(crate) mod brute_force;
mod fresh;
pub(crate) mod prior_rank;
pub(crate) mod random;

pub(crate) use fresh::{FreshSampler, unevaluated};
