//! Local search: strategies that climb from configuration to neighbouring configuration.
//!
//! They share one `HillClimber` (first or best improvement over a neighbourhood, proposing
//! only unevaluated neighbours and comparing evaluated ones by their memoised values, with
//! an optional `Guide` that orders the neighbours by a model's opinion), its `Starts`
//! (the best of a few random configurations never evaluated) and its `Perturbation`s
//! (kicks: a few random parameters changed and repaired):
//! - `mls`: multi-start local search, restarted at every local optimum (also `auto`'s
//!   local search);
//! - `greedy_ils`: iterated local search, restarted from a perturbation of the best;
//! - `simulated_annealing`: moves accepted by the Metropolis rule on a cooling schedule.

mod climber;
pub(crate) mod greedy_ils;
pub(crate) mod mls;
mod perturbation;
pub(crate) mod simulated_annealing;
mod starts;
#[cfg(test)]
mod tests;

pub(crate) use climber::{Climb, Guide, HillClimber, NeighbourCache, Order, Point};
pub(crate) use mls::MultiStartLocalSearch;
pub(crate) use perturbation::{KICK_SIZE_DOC, Perturbation, switch_kick};
pub(crate) use starts::{START_SAMPLES, START_SAMPLES_DOC, Start, Starts};
