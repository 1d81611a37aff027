//! Population-based strategies: a population of configurations moved, bred or mutated
//! generation by generation.
//!
//! The continuous swarms (`pso`, `firefly`) share `continuous`: the ε-spaced encoding
//! of the search space, Algorithm 2's repair of a point to a valid configuration, and the
//! bookkeeping of a population's evaluations. `differential_evolution` and
//! `genetic_algorithm` work on value indices directly, repaired to valid configurations by
//! the space. `nsga2` breeds as the genetic algorithm does, for several objectives; the two
//! share `generation`, the bookkeeping of a generation under evaluation.

pub(crate) mod continuous;
pub(crate) mod differential_evolution;
pub(crate) mod firefly;
pub(crate) mod generation;
pub(crate) mod genetic_algorithm;
pub(crate) mod nsga2;
pub(crate) mod pso;
