//! Uniform random configurations that were never evaluated: the (re)starts of the local
//! searches and the start-up and fallback of TPE.

use ktune_core::{History, Observation, Rng};
use ktune_space::{Configuration, DistinctSampler, SearchSpace};

/// Draws random configurations that were never evaluated, for (re)starts and fallbacks. It is kept in step
/// with the history through [`exclude`](Self::exclude), so a draw is O(1) expected.
#[derive(Clone, Debug, Default)]
pub(crate) struct FreshSampler {
    sampler: Option<DistinctSampler>,
}

impl FreshSampler {
    /// A uniformly random configuration not in `history`, or `None` when the whole space has
    /// been evaluated.
    pub(crate) fn draw(
        &mut self,
        space: &SearchSpace,
        history: &History,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        // Whatever was evaluated before this strategy started (a resumed run) is left out.
        let sampler = self
            .sampler
            .get_or_insert_with(|| unevaluated(space, history.observations()));
        while let Some(r) = sampler.next_rank(rng) {
            let c = space.configuration(r);
            if !history.contains(&c) {
                return Some(c);
            }
        }
        None
    }

    /// Marks evaluated configurations as used (call from `tell`).
    pub(crate) fn exclude(&mut self, space: &SearchSpace, observations: &[Observation]) {
        if let Some(s) = &mut self.sampler {
            exclude(s, space, observations);
        }
    }
}

/// A sampler of the space's ranks without those of `observations`.
pub(crate) fn unevaluated(space: &SearchSpace, observations: &[Observation]) -> DistinctSampler {
    let mut s = DistinctSampler::new(space.size());
    exclude(&mut s, space, observations);
    s
}

fn exclude(s: &mut DistinctSampler, space: &SearchSpace, observations: &[Observation]) {
    for o in observations {
        if let Some(r) = space.rank(&o.config) {
            s.exclude(r);
        }
    }
}
