//! Optimisation strategies, one file each, all behind [`ktune_core::Strategy`], and a registry
//! that creates them by name.
//!
//! ```
//! let s = ktune_strategies::create("random").unwrap();
//! assert_eq!(s.name(), "random");
//! assert!(ktune_strategies::create("annealing-ish").is_err());
//! ```
#![deny(missing_docs)]

mod brute_force;
mod random;

pub use brute_force::BruteForce;
pub use random::RandomSampling;

use ktune_core::Strategy;

/// The strategies the registry knows, with a one-line description each.
pub const STRATEGIES: &[(&str, &str)] = &[
    (
        "random",
        "uniform random sampling without replacement (the baseline of the performance score)",
    ),
    ("brute_force", "every configuration in rank order"),
];

/// A strategy name that the registry does not know.
#[derive(Debug, thiserror::Error)]
#[error("unknown strategy `{name}`; available: {}", STRATEGIES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "))]
pub struct UnknownStrategy {
    /// The name asked for.
    pub name: String,
}

/// Creates a strategy by name (see [`STRATEGIES`]).
pub fn create(name: &str) -> Result<Box<dyn Strategy + Send>, UnknownStrategy> {
    match name {
        "random" | "random_sample" => Ok(Box::new(RandomSampling::new())),
        "brute_force" | "brute-force" => Ok(Box::new(BruteForce::new())),
        _ => Err(UnknownStrategy {
            name: name.to_string(),
        }),
    }
}

#[cfg(test)]
mod conformance;
