//! Runners, one file each, all behind [`ktune_core::Runner`].
//!
//! - [`simulate`]: replays a brute-forced Kernel Tuner cache file, with a simulated clock
//!   (the BO paper's simulation mode), so strategies can be compared without a GPU.
#![deny(missing_docs)]

pub mod simulate;

pub use simulate::{Simulation, SimulationError, SimulationRunner};
