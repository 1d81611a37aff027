//! Brute force: every configuration, in rank order.

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, SearchSpace};

/// Proposes every configuration of the space once, in rank order.
#[derive(Clone, Debug, Default)]
pub struct BruteForce {
    next: u64,
}

impl BruteForce {
    /// Starts at rank 0.
    pub fn new() -> BruteForce {
        BruteForce::default()
    }
}

impl Strategy for BruteForce {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        _: &mut Rng,
    ) -> Vec<Configuration> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n && self.next < space.size() {
            let c = space.configuration(self.next);
            self.next += 1;
            if !history.contains(&c) {
                out.push(c);
            }
        }
        out
    }

    fn tell(&mut self, _: &SearchSpace, _: &[Observation]) {}

    fn name(&self) -> &str {
        "brute_force"
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: "brute_force",
    aliases: &["brute-force"],
    about: "Every configuration of the space once, in rank order.",
    options: &[],
    tunable: &[],
    check: crate::registry::check_none::<BruteForce>,
};
