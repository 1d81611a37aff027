//! Portfolios: several strategies sharing one budget.
//!
//! `auto` (the default strategy) runs Bayesian optimisation and a model-guided local search
//! side by side; [`bandit`] is the AUC bandit (OpenTuner's) that shares the budget between
//! the members by how much each has improved the best lately.

pub(crate) mod auto;
pub mod bandit;
