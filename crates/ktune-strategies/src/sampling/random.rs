//! Uniform random sampling without replacement: the baseline every strategy is scored
//! against.

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, DistinctSampler, SearchSpace};

use super::unevaluated;

/// Draws configurations uniformly at random, never one that was already evaluated.
#[derive(Clone, Debug, Default)]
pub struct RandomSampling {
    sampler: Option<DistinctSampler>,
}

impl RandomSampling {
    /// A new sampler.
    pub fn new() -> RandomSampling {
        RandomSampling::default()
    }
}

impl Strategy for RandomSampling {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        // Anything evaluated before this strategy started (a resumed run) is skipped.
        let sampler = self
            .sampler
            .get_or_insert_with(|| unevaluated(space, history.observations()));
        (0..n)
            .map_while(|_| sampler.next_rank(rng))
            .map(|r| space.configuration(r))
            .collect()
    }

    fn tell(&mut self, _: &SearchSpace, _: &[Observation]) {}

    fn name(&self) -> &str {
        "random"
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: "random",
    aliases: &["random_sample"],
    about: "Uniform random sampling without replacement: the baseline of the performance score.",
    options: &[],
    tunable: &[],
    check: crate::registry::check_none::<RandomSampling>,
};
