//! The strategy extension point, and the history it can read.

use ktune_space::{Configuration, SearchSpace};
use rustc_hash::FxHashMap;

use crate::{FailureKind, MatchedPrior};

/// The random number generator every strategy is given: seeded by the caller, portable and
/// reproducible across platforms.
pub type Rng = rand_xoshiro::Xoshiro256PlusPlus;

/// What a strategy is told about one evaluated configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Observation {
    /// The configuration.
    pub config: Configuration,
    /// The objective in minimisation form (negated when it is maximised), or `None` when the
    /// configuration failed.
    pub value: Option<f64>,
    /// Why it failed, when it did.
    pub failure: Option<FailureKind>,
    /// The variance of `value` as an estimate, when it was measured repeatedly (the
    /// measurement noise, for models with a noise term); `None` for one measurement.
    pub variance: Option<f64>,
    /// Every objective in minimisation form, the first equal to `value`, when the study has
    /// several (time and energy, say); empty when it has one or the configuration failed.
    /// Single-objective strategies read `value` only.
    pub objectives: Vec<f64>,
}

/// Every configuration evaluated so far, in order, with O(1) look-up.
#[derive(Clone, Debug, Default)]
pub struct History {
    observations: Vec<Observation>,
    index: FxHashMap<Configuration, usize>,
    best: Option<usize>,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// Adds an observation (ignored if the configuration is already present).
    pub fn push(&mut self, observation: Observation) {
        if self.index.contains_key(&observation.config) {
            return;
        }
        let i = self.observations.len();
        if let Some(v) = observation.value
            && self.best().and_then(|b| b.value).is_none_or(|b| v < b)
        {
            self.best = Some(i);
        }
        self.index.insert(observation.config.clone(), i);
        self.observations.push(observation);
    }

    /// Number of evaluated configurations.
    pub fn len(&self) -> usize {
        self.observations.len()
    }

    /// Whether nothing has been evaluated.
    pub fn is_empty(&self) -> bool {
        self.observations.is_empty()
    }

    /// Whether `config` has been evaluated.
    pub fn contains(&self, config: &[u32]) -> bool {
        self.index.contains_key(config)
    }

    /// The observation of `config`, if evaluated.
    pub fn get(&self, config: &[u32]) -> Option<&Observation> {
        self.index.get(config).map(|&i| &self.observations[i])
    }

    /// All observations, in evaluation order.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// The best successful observation so far (the first one reaching the smallest value).
    pub fn best(&self) -> Option<&Observation> {
        self.best.map(|i| &self.observations[i])
    }
}

/// An optimisation strategy as an ask/tell state machine. It only proposes configurations and
/// learns from what it is told; the [`Session`](crate::Session) owns the budget and the
/// memoisation, the [`Tuner`](crate::Tuner) or a distributed worker the loop.
///
/// Contract:
/// - `ask` returns up to `n` configurations; fewer (or none) means it has nothing more to
///   propose. Constraint-aware strategies propose only configurations in the space; any
///   configuration outside it is recorded as an [`Invalid`](FailureKind::Invalid) failure and
///   costs an evaluation.
/// - A proposal that was already evaluated costs nothing: its stored observation is told
///   again.
/// - `ask(n)` with `n > 1` proposes distinct configurations, for workers evaluating at once.
/// - All randomness comes from the `rng` passed in, so a run is reproducible from its seed.
pub trait Strategy: Send {
    /// The name used in reports and on the command line.
    fn name(&self) -> &str;

    /// Up to `n` configurations to evaluate next.
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration>;

    /// Observations of the study, in the order they were recorded: of configurations it
    /// proposed, and of ones it did not (records of earlier runs, of other workers sharing the
    /// study, repeats of evaluated configurations). A proposal may never be told (another
    /// worker took it, or the run ended); a strategy must not wait for it forever.
    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]);

    /// The study's budget in evaluations, told before the first `ask` (`None`: the run is
    /// bounded only by time, a target or the space). A strategy whose schedule spans the
    /// run (annealing cools over it, as in Kernel Tuner) uses it; most ignore it.
    fn set_budget(&mut self, _evaluations: Option<usize>) {}

    /// Earlier measurements of related tasks (another device, problem size or code version)
    /// matched onto the space, told before the first `ask` when a study has priors. A
    /// strategy that uses them must not trust them blindly: a prior is another task, and
    /// may rank this one's configurations badly. Most strategies ignore them.
    fn set_priors(&mut self, _priors: &[MatchedPrior]) {}

    /// The goal a study of several objectives seeks one configuration by ("the least energy
    /// within 5% of the fastest time"), told before the first `ask`. A strategy that can
    /// seek it does so from every observation's `objectives` (a model fits the goal's
    /// values, [`Goal::steer_all`](crate::pareto::Goal::steer_all), recomputed as the bests
    /// move); the others go on minimising `value`, the first objective, and the goal picks
    /// from what they found. Why not tell every strategy the goal's value as `value`: the
    /// value of a result depends on the bests found after it, so a value told once goes
    /// stale, and measured on the H100's time and energy, strategies comparing such values
    /// (the climb, `auto`'s bandit) did worse than on the first objective (BENCHMARKS.md).
    /// Returns whether the strategy seeks it (the default: no, the goal only picks).
    fn set_goal(&mut self, _goal: &crate::pareto::Goal) -> bool {
        false
    }

    /// Which part of the strategy proposed `config`, asked right after the `ask` that
    /// proposed it: a portfolio's member, a model's acquisition function or its initial
    /// sample (`"model/ei"`, `"mls"`). What a trace of the run shows
    /// ([`Session::trace_origins`](crate::Session::trace_origins)), so that a run can be
    /// read without instrumenting the strategy. `None` (the default): the strategy does not
    /// say, as one of a single part need not.
    fn origin(&self, _config: &Configuration) -> Option<String> {
        None
    }
}

/// A borrowed strategy is a strategy (so a [`Session`](crate::Session) can drive one it does
/// not own).
impl<S: Strategy + ?Sized> Strategy for &mut S {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        (**self).ask(space, history, n, rng)
    }
    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        (**self).tell(space, observations)
    }
    fn set_budget(&mut self, evaluations: Option<usize>) {
        (**self).set_budget(evaluations)
    }
    fn set_priors(&mut self, priors: &[MatchedPrior]) {
        (**self).set_priors(priors)
    }
    fn set_goal(&mut self, goal: &crate::pareto::Goal) -> bool {
        (**self).set_goal(goal)
    }
    fn origin(&self, config: &Configuration) -> Option<String> {
        (**self).origin(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(c: u32, v: Option<f64>) -> Observation {
        Observation {
            config: vec![c],
            value: v,
            failure: v.is_none().then_some(FailureKind::Runtime),
            variance: None,
            objectives: Vec::new(),
        }
    }

    #[test]
    fn history_tracks_the_first_best_and_ignores_repeats() {
        let mut h = History::new();
        h.push(obs(0, Some(3.0)));
        h.push(obs(1, None));
        h.push(obs(2, Some(1.0)));
        h.push(obs(3, Some(1.0)));
        h.push(obs(2, Some(0.0)));
        assert_eq!(h.len(), 4);
        assert_eq!(h.best().unwrap().config, vec![2]);
        assert!(h.contains(&[1]));
        assert_eq!(h.get(&[1]).unwrap().failure, Some(FailureKind::Runtime));
        assert!(!h.contains(&[7]));
    }
}
