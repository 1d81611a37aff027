//! Model-based strategies: a model of the objective (and of failures) chooses what to
//! measure next.
//!
//! - `bayes_opt`: Bayesian optimisation on the enumerated space (the BO paper's GP, or the
//!   clustered GP), with an acquisition portfolio and a feasibility forest;
//! - `baco`: BaCO-style Bayesian optimisation (mixed-type encoding, an acquisition searched
//!   by local search instead of enumerated);
//! - `tpe`: the tree-structured Parzen estimator.
//!
//! What they share: [`surrogate`] (the choice of GP and its options), [`encoding`] (BaCO's
//! mixed-type encoding and the alignment coordinates), `acquisition_search` (maximising an
//! acquisition function without enumerating the space), [`transform`] (the log transform of
//! observed values), `monotone` (a failure rules out the configurations larger in every
//! size), `footprint` (the log of the product of the sizes, a feature for the forest)
//! `prior_mean` (earlier studies' results as the surrogate's mean) and `sub_spaces`
//! (how much the combinations of switches share their landscape, estimated from results).

pub(crate) mod acquisition_search;
pub(crate) mod baco;
pub(crate) mod bayes_opt;
pub mod encoding;
pub(crate) mod footprint;
pub(crate) mod monotone;
pub(crate) mod prior_mean;
pub(crate) mod sub_spaces;
pub mod surrogate;
pub(crate) mod tpe;
pub mod transform;
