//! `prior_rank`: the configurations in the order earlier studies rank them (see
//! [`crate::transfer`]), then uniformly random ones. The baseline that transfer is measured
//! against (issue 44: the fixed order of the priors' averaged ranks), and a warm start on its
//! own; without priors it is random sampling.

use ktune_core::{History, MatchedPrior, Observation, Rng, Strategy};
use ktune_space::{Configuration, SearchSpace};
use rustc_hash::FxHashSet;
use serde::Deserialize;

use crate::sampling::FreshSampler;
use crate::transfer::{PriorRanking, PriorTrust};

const NAME: &str = "prior_rank";

/// The options of `prior_rank`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PriorRankOptions {
    /// Weigh each prior by how well it ranks this study's results (false: every prior
    /// counts alike, the fixed order).
    pub guard: bool,
}

/// The priors' order, then random configurations.
#[derive(Debug, Default)]
pub struct PriorRank {
    trust: PriorTrust,
    /// Propose nothing once the priors' order is used up or switched off (as a member of
    /// `auto`, which has other members to propose), instead of random configurations.
    priors_only: bool,
    ranking: Option<PriorRanking>,
    fresh: FreshSampler,
    proposed: FxHashSet<Configuration>,
}

impl Strategy for PriorRank {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let proposed = &self.proposed;
        let mut out = match &mut self.ranking {
            Some(r) if !r.is_off() => r.best(n, |c| !history.contains(c) && !proposed.contains(c)),
            _ => Vec::new(),
        };
        while out.len() < n && !self.priors_only {
            let Some(c) = self.fresh.draw(space, history, rng) else {
                break;
            };
            if !self.proposed.contains(&c) && !out.contains(&c) {
                out.push(c);
            }
        }
        self.proposed.extend(out.iter().cloned());
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        if let Some(r) = &mut self.ranking {
            r.tell(observations);
        }
        self.fresh.exclude(space, observations);
    }

    fn set_priors(&mut self, priors: &[MatchedPrior]) {
        self.ranking = Some(PriorRanking::new(priors, self.trust));
    }

    fn name(&self) -> &str {
        NAME
    }
}

impl PriorRank {
    /// The priors' order, each prior weighted by how well it ranks the study's results, and
    /// nothing once that is used up or switched off: `auto`'s member for priors.
    pub(crate) fn guarded_only(trust: PriorTrust) -> PriorRank {
        PriorRank {
            trust,
            priors_only: true,
            ..PriorRank::default()
        }
    }
}

impl crate::registry::StrategyOptions for PriorRankOptions {
    const STRATEGY: &'static str = NAME;

    fn build(&self) -> Box<dyn Strategy + Send> {
        Box::new(PriorRank {
            trust: if self.guard {
                PriorTrust::Tau
            } else {
                PriorTrust::All
            },
            ..PriorRank::default()
        })
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &[],
    about: "The configurations in the order the study's priors rank them (each prior's results as ranks, averaged), then uniformly random ones: the fixed-order baseline of transfer; random sampling without priors.",
    options: &[crate::OptionDoc::new(
        "guard",
        "false",
        "Weigh each prior by how well it ranks this study's own results (Kendall's τ, squared; a prior that misleads is dropped), instead of every prior alike.",
    )],
    tunable: &[],
    check: crate::registry::check::<PriorRankOptions>,
};

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::testing::{FnRunner, line};
    use ktune_core::{Budget, Direction, Prior, Tuner};
    use ktune_space::Value;
    use rand::SeedableRng;

    /// An earlier study of the line that measured `x` as `f(x)`.
    fn earlier(space: &SearchSpace, f: impl Fn(i64) -> Option<f64>) -> MatchedPrior {
        let mut p = Prior::new("earlier", vec!["x".into()], Direction::Minimize);
        for x in 0..space.size() as i64 {
            p.push(vec![Value::Int(x)], f(x));
        }
        p.match_onto(space, Direction::Minimize).unwrap()
    }

    fn order(guard: bool, prior: &MatchedPrior, truth: fn(f64) -> f64) -> Vec<f64> {
        let space = line(40);
        let trust = if guard {
            PriorTrust::Tau
        } else {
            PriorTrust::All
        };
        let mut s = PriorRank {
            trust,
            ..PriorRank::default()
        };
        let mut runner = FnRunner::values(|x| Some(truth(x[0])));
        let run = Tuner::new(&space, &mut runner, Budget::evaluations(8))
            .priors(std::slice::from_ref(prior))
            .run(&mut s, &mut Rng::seed_from_u64(1))
            .unwrap();
        run.records.iter().map(|r| f64::from(r.config[0])).collect()
    }

    #[test]
    fn follows_a_good_prior_and_drops_a_misleading_one_when_guarded() {
        let space = line(40);
        // The earlier study's best is at 30 too, on another scale.
        let good = earlier(&space, |x| Some(100.0 + ((x - 30) as f64).powi(2)));
        let near_30 = |x: f64| (x - 30.0).abs();
        assert_eq!(order(true, &good, near_30)[..3], [30.0, 29.0, 31.0]);
        // One that ranks backwards: its first proposals are judged and it is dropped, the
        // rest are random; unguarded, it is followed to the end.
        let bad = earlier(&space, |x| Some(-((x - 30) as f64).powi(2)));
        let blind = order(false, &bad, near_30);
        let guarded = order(true, &bad, near_30);
        assert_eq!(blind[..3], [0.0, 1.0, 2.0]);
        assert_eq!(guarded[..3], blind[..3]);
        assert_ne!(guarded[3..], blind[3..]);
    }
}
