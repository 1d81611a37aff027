//! Kicks: a few random parameters of a configuration changed, repaired to the nearest valid
//! configuration (greedy ILS's perturbation, and the kicks of `mls` and `auto`).

use ktune_core::Rng;
use ktune_space::{Configuration, SearchSpace};
use rand::RngExt;
use rand::seq::SliceRandom;

/// The documentation of the `kick_size` option (the same wherever the climb kicks).
pub(crate) const KICK_SIZE_DOC: crate::OptionDoc = crate::OptionDoc::new("kick_size", "0.2", "The largest share of the parameters a kick changes: each changes 1 to max(1, kick_size x parameters) random parameters, repaired to valid.").real(0.0, 1.0);

/// How many parameters a perturbation changes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Perturbation {
    /// A uniformly random number from 1 to `max(1, ⌊fraction · parameters⌋)`.
    Random {
        /// The largest share of the parameters changed (Kernel Tuner's `random_walk`).
        fraction: f64,
    },
    /// Exactly this many parameters (all of them when there are fewer).
    Fixed(usize),
}

impl Perturbation {
    /// `config` with this many random parameters (of those with more than one value) set to
    /// random other values, repaired to the nearest valid configuration.
    pub(crate) fn apply(
        &self,
        space: &SearchSpace,
        config: &[u32],
        rng: &mut Rng,
    ) -> Configuration {
        let mut free: Vec<usize> = (0..space.dims())
            .filter(|&d| space.params()[d].len() > 1)
            .collect();
        let k = match *self {
            Perturbation::Fixed(k) => k,
            Perturbation::Random { fraction } => {
                let most = ((fraction * space.dims() as f64) as usize).max(1);
                rng.random_range(1..=most)
            }
        }
        .min(free.len());
        free.shuffle(rng);
        let mut out = config.to_vec();
        for &d in &free[..k] {
            let len = space.params()[d].len() as u32;
            // A uniformly random value other than the current one.
            let v = rng.random_range(0..len - 1);
            out[d] = if v >= out[d] { v + 1 } else { v };
        }
        space.repair_nearest(&out, rng)
    }
}
