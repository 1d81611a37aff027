//! Where a climb starts: the best of a few random configurations never evaluated.

use ktune_core::{History, Observation, Rng};
use ktune_space::{Configuration, SearchSpace};

use crate::better;
use crate::local_search::Point;
use crate::sampling::FreshSampler;

/// The default number of random configurations a local search samples for each (re)start.
pub(crate) const START_SAMPLES: usize = 20;

/// The documentation of the `start_samples` option (the same for every local search).
pub(crate) const START_SAMPLES_DOC: crate::OptionDoc = crate::OptionDoc::new("start_samples", "20", "Each (re)start is the best of this many random unevaluated configurations (1: a single random start, as in Kernel Tuner).").count(1, 1_000_000);

/// What [`Starts::next`] gives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Start {
    /// Evaluate these random configurations first.
    Propose(Vec<Configuration>),
    /// Start here: the best of the sample (evaluated).
    Ready(Configuration),
    /// Every configuration of the space has been evaluated.
    Exhausted,
}

/// Starting points for local searches: the best of `k` random unevaluated configurations
/// (just a random one when `k = 1`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Starts {
    fresh: FreshSampler,
    drawn: Vec<Configuration>,
}

impl Starts {
    /// The next step towards a starting point from a sample of `k`, proposing up to `n`
    /// configurations at a time.
    pub(crate) fn next(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        k: usize,
        rng: &mut Rng,
    ) -> Start {
        loop {
            let mut out = Vec::new();
            while self.drawn.len() < k.max(1) && out.len() < n.max(1) {
                match self.fresh.draw(space, history, rng) {
                    Some(c) => {
                        self.drawn.push(c.clone());
                        out.push(c);
                    }
                    None => break,
                }
            }
            if !out.is_empty() {
                return Start::Propose(out);
            }
            if self.drawn.is_empty() {
                return Start::Exhausted;
            }
            // The sample is complete (or the space ran out): its best, failures last.
            let drawn = std::mem::take(&mut self.drawn);
            let mut best: Option<Point> = None;
            for c in drawn {
                if let Some(o) = history.get(&c)
                    && (best.is_none() || better(o.value, best.as_ref().and_then(|b| b.value)))
                {
                    best = Some(Point {
                        config: c,
                        value: o.value,
                    });
                }
            }
            if let Some(b) = best {
                return Start::Ready(b.config);
            }
            // Nothing of the sample was evaluated (the tuner dropped it): draw again.
        }
    }

    /// Marks evaluated configurations as used (call from `tell`).
    pub(crate) fn exclude(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.fresh.exclude(space, observations);
    }
}
