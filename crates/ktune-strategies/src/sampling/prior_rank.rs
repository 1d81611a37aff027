//! `prior_rank`: the configurations in the order earlier studies rank them (see
//! [`crate::transfer`]), then uniformly random ones. The baseline that transfer is measured
//! against (issue 44: the fixed order of the priors' averaged ranks), and a warm start on its
//! own; without priors it is random sampling.
//!
//! With `first` and `then = "auto"` it is the obvious warm start that the method must beat:
//! the priors' top `first` configurations (or, with `pick = "each_best"`, each prior's own
//! best), then `auto` as if there were no priors, told everything measured so far.

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
    /// Proposals taken from the priors before `then` takes over (0: all of them).
    pub first: usize,
    /// Which configurations the priors give.
    pub pick: Pick,
    /// What follows the priors' proposals.
    pub then: Then,
}

/// Which configurations `prior_rank` takes from the priors.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pick {
    /// By the priors' ranks, averaged.
    #[default]
    Rank,
    /// Each prior's own best configuration, in the priors' order.
    EachBest,
}

/// What `prior_rank` proposes once the priors' proposals are used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// Uniformly random configurations.
    #[default]
    Random,
    /// `auto` with its defaults and no priors (a cold start after a warm one).
    Auto,
}

/// The priors' order, then random configurations (or `auto`).
#[derive(Default)]
pub struct PriorRank {
    trust: PriorTrust,
    /// Proposals from the priors before `then` (0: all).
    first: usize,
    pick: Pick,
    /// Each prior's best, with `pick = each_best`.
    each_best: Vec<Configuration>,
    /// What proposes after the priors (none: random configurations).
    then: Option<Box<dyn Strategy + Send>>,
    /// Propose nothing once the priors' order is used up or switched off (as a member of
    /// `auto`, which has other members to propose), instead of random configurations.
    priors_only: bool,
    ranking: Option<PriorRanking>,
    /// With several priors: after this many joint picks, each trusted prior's own best.
    each_best_after: Option<usize>,
    /// The constant of reciprocal rank fusion of the priors' order (0: their mean rank).
    fusion: usize,
    /// With several priors: the least gap in a prior's ranks for a pair of results to judge it.
    min_gap: f64,
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
        let usable = |c: &Configuration| !history.contains(c) && !proposed.contains(c);
        let left = match self.first {
            0 => n,
            first => first.saturating_sub(self.proposed.len()).min(n),
        };
        let mut out = match (&mut self.ranking, self.pick) {
            (_, Pick::EachBest) => {
                let first = match self.first {
                    0 => self.each_best.len(),
                    first => first.min(self.each_best.len()),
                };
                let left = first.saturating_sub(self.proposed.len()).min(n);
                self.each_best
                    .iter()
                    .filter(|c| usable(c))
                    .take(left)
                    .cloned()
                    .collect()
            }
            (Some(r), Pick::Rank) if !r.is_off() && left > 0 => r.best(left, usable),
            _ => Vec::new(),
        };
        if out.len() < n
            && let Some(then) = &mut self.then
        {
            for c in then.ask(space, history, n - out.len(), rng) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        while out.len() < n && !self.priors_only && self.then.is_none() {
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
        if let Some(then) = &mut self.then {
            then.tell(space, observations);
        }
        self.fresh.exclude(space, observations);
    }

    fn set_budget(&mut self, evaluations: Option<usize>) {
        if let Some(then) = &mut self.then {
            then.set_budget(evaluations);
        }
    }

    fn set_goal(&mut self, goal: &ktune_core::pareto::Goal) -> bool {
        self.then.as_mut().is_some_and(|then| then.set_goal(goal))
    }

    /// Not told to `then`: it starts cold.
    fn set_priors(&mut self, priors: &[MatchedPrior]) {
        self.ranking = Some(
            PriorRanking::new(priors, self.trust)
                .with_each_best_after(self.each_best_after)
                .with_fusion(self.fusion)
                .with_min_gap(self.min_gap),
        );
        self.each_best = Vec::new();
        for p in priors {
            let best = p
                .observations
                .iter()
                .filter_map(|(c, v)| v.map(|v| (v, c)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, c)) = best
                && !self.each_best.contains(c)
            {
                self.each_best.push(c.clone());
            }
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}

impl PriorRank {
    /// The priors' order, each prior weighted by how well it ranks the study's results, and
    /// nothing once that is used up or switched off: `auto`'s member for priors.
    pub(crate) fn guarded_only(
        trust: PriorTrust,
        each_best_after: Option<usize>,
        fusion: usize,
        min_gap: f64,
    ) -> PriorRank {
        PriorRank {
            trust,
            priors_only: true,
            each_best_after,
            fusion,
            min_gap,
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
            first: self.first,
            pick: self.pick,
            then: match self.then {
                Then::Random => None,
                Then::Auto => Some(crate::CheckedStrategy::default_strategy().build()),
            },
            ..PriorRank::default()
        })
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &[],
    about: "The configurations in the order the study's priors rank them (each prior's results as ranks, averaged), then uniformly random ones: the fixed-order baseline of transfer; random sampling without priors.",
    options: &[
        crate::OptionDoc::new(
            "guard",
            "false",
            "Weigh each prior by how well it ranks this study's own results (Kendall's τ, squared; a prior that misleads is dropped), instead of every prior alike.",
        ),
        crate::OptionDoc::new(
            "first",
            "0",
            "Proposals taken from the priors before `then` takes over (0: all of them; with pick = \"each_best\", one per prior).",
        )
        .count(0, 1_000_000),
        crate::OptionDoc::new(
            "pick",
            "\"rank\"",
            "Which configurations the priors give: \"rank\" (by their ranks, averaged) or \"each_best\" (each prior's own best configuration).",
        ),
        crate::OptionDoc::new(
            "then",
            "\"random\"",
            "What follows the priors' proposals: \"random\" configurations, or \"auto\" with its defaults and no priors (told everything measured so far): the warm-start baselines of transfer.",
        ),
    ],
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

    /// A run of `prior_rank` with `options` on the line, told `priors`: the first `n`
    /// configurations it evaluated.
    fn run_with(options: &str, priors: &[MatchedPrior], n: usize) -> Vec<f64> {
        let space = line(40);
        let text = match options {
            "" => "prior_rank".to_string(),
            o => format!("prior_rank:{o}"),
        };
        let mut s = text.parse::<crate::CheckedStrategy>().unwrap().build();
        let mut runner = FnRunner::values(|x| Some((x[0] - 30.0).abs()));
        let run = Tuner::new(&space, &mut runner, Budget::evaluations(n))
            .priors(priors)
            .run(s.as_mut(), &mut Rng::seed_from_u64(3))
            .unwrap();
        run.records.iter().map(|r| f64::from(r.config[0])).collect()
    }

    #[test]
    fn the_warm_start_baselines_take_the_priors_first_then_auto_cold() {
        let space = line(40);
        let good = earlier(&space, |x| Some(100.0 + ((x - 30) as f64).powi(2)));
        let other = earlier(&space, |x| Some(((x - 10) as f64).powi(2)));
        // The top 3 of the averaged ranks, then auto: not the priors' order any more.
        let top = run_with("first=3:then=auto", std::slice::from_ref(&good), 8);
        let ordered = run_with("", std::slice::from_ref(&good), 8);
        assert_eq!(top[..3], ordered[..3]);
        assert_eq!(ordered[..5], [30.0, 29.0, 31.0, 28.0, 32.0]);
        assert_ne!(top[3..], ordered[3..]);
        // Each prior's best, in the priors' order, then auto.
        let each = run_with(
            "pick=each_best:then=auto",
            &[other.clone(), good.clone()],
            6,
        );
        assert_eq!(each[..2], [10.0, 30.0]);
        let each_one = run_with("pick=each_best:first=1", &[other, good], 6);
        assert_eq!(each_one[..1], [10.0]);
        assert_ne!(each_one[1], 30.0);
        // Unknown choices are refused naming them.
        let e = "prior_rank:then=bo"
            .parse::<crate::CheckedStrategy>()
            .unwrap_err()
            .to_string();
        ktune_core::testing::assert_mentions(&e, &["then", "bo"]);
    }
}
