//! Optimisation strategies behind [`ktune_core::Strategy`], in families that share their
//! machinery, and a [registry](REGISTRY) that creates them by name with their options.
//!
//! - [`sampling`]: random sampling, brute force, and the sampler of never-evaluated
//!   configurations the others start from.
//! - [`local_search`]: the hill climber, its starts and perturbations; multi-start local
//!   search, greedy ILS, simulated annealing.
//! - [`population`]: the continuous encoding and repair of the swarms; PSO, firefly,
//!   differential evolution, the genetic algorithm.
//! - [`model_based`]: Bayesian optimisation (`bayes_opt`, `baco`), TPE, and what they share
//!   (surrogate choice, encodings, acquisition search, output transforms).
//! - [`portfolio`]: `auto` and the bandit that shares a budget between strategies.
//!
//! What the families read of a space's structure alike, which parameters are sizes (block
//! and tile sizes) and which are switches (shared memory on or off, a loop order), is in
//! the private module `roles`.
//!
//! Every strategy is constraint-aware (it moves through valid configurations using the
//! [`SearchSpace`](ktune_space::SearchSpace) API) unless its `constraint_aware` option is
//! switched off for an ablation. All options, with their defaults, are listed by
//! `ktune strategies` and in `docs/strategies.md` (generated from [`REGISTRY`]).
//!
//! ```
//! use ktune_strategies::{Options, create, create_spec};
//!
//! let s = create("random", &Options::new()).unwrap();
//! assert_eq!(s.name(), "random");
//! assert!(create("annealing-ish", &Options::new()).is_err());
//! let (_, ga) = create_spec("genetic_algorithm:popsize=30:method=uniform").unwrap();
//! assert_eq!(ga.name(), "genetic_algorithm");
//! ```
#![deny(missing_docs)]

mod compare;
pub mod conformance;
pub mod local_search;
pub mod model_based;
mod options;
mod pareto;
pub mod population;
pub mod portfolio;
mod registry;
mod roles;
pub mod sampling;
mod transfer;
pub use transfer::PriorTrust;

pub use model_based::{encoding, surrogate, transform};
pub use portfolio::bandit;

pub(crate) use compare::{better, ok};

pub use ktune_model::acquisition::Acquisition;
pub use model_based::baco::{Baco, BacoOptions};
pub use model_based::bayes_opt::{
    BayesianOptimization, BoOptions, Exploration, ExplorationScale, Method, Transform,
};
pub use options::{
    OptionDoc, Options, Range, StrategyError, check_range, options_spec, parse, parse_spec,
    parse_value,
};
pub use portfolio::auto::{
    Auto, AutoOptions, ClimbGuide, Model as AutoModel, Schedule as AutoSchedule,
};
pub use registry::{
    CheckedStrategy, Entry, Factory, REGISTRY, Tunable, create, create_from_table, create_spec,
    entry, markdown,
};
pub use sampling::brute_force::BruteForce;
pub use sampling::random::RandomSampling;

#[cfg(test)]
mod testkit;
