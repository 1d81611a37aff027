//! Multi-start local search (MLS): first-improvement hill climbing, restarted at every local
//! optimum.
//!
//! Each climb starts from the best of `start_samples` random unevaluated configurations. The
//! climber looks at the neighbours of its current configuration (Hamming by default, or the
//! adjacent / strictly-adjacent neighbourhoods of the constraint-aware paper, section IV-A)
//! in random order (or in the space's order) and moves to the first one that is better; with
//! `restart = false` it looks at the whole neighbourhood and moves to the best one (best
//! improvement). Neighbours that were already evaluated are compared by their memoised values
//! at no cost, so only unevaluated neighbours are proposed. When every neighbour is known and
//! none is better, the configuration is a local optimum and a new climb starts. Failed
//! configurations are worse than any successful one and never better than each other.
//! With `follow_best = true` the climb moves to the study's best configuration whenever that
//! is better than its own: in `auto`, where a model proposes too, every new best the model
//! finds is climbed to a local optimum. Two more things can make the climb cheaper and let
//! it leave a trap (both off by default in `mls`, on in `auto`; on `mls` alone, with its
//! random neighbour order, neither helped: see BENCHMARKS.md, "Kicks in `mls` alone"):
//! - **patience**: a configuration counts as a local optimum after so many of its neighbours
//!   were proposed without an improvement. With the model ordering the neighbours by
//!   expected improvement, the last ones are the least promising, and proving an optimum
//!   costs a whole neighbourhood (tens of evaluations with a 16-value block size).
//! - **kicks**: at a local optimum the climb starts again from the study's best configuration
//!   with a few random parameters changed (greedy ILS's perturbation), keeping those
//!   parameters where the kick put them until the others are at their local optimum. Without
//!   that freeze the climb undoes the kick in one step (every single change of a trap is
//!   worse, so the trap is the kicked configuration's best neighbour). Kicks are counted
//!   afresh at every new best; after the last one the search restarts from random samples.
//!
//! Why Kernel Tuner's MLS and greedy ILS score below random search (-0.59 and -0.85 on our
//! spaces), and what is done here instead. (1) Budget spent on neighbourhoods: its `mls`
//! defaults to best improvement, which evaluates the entire neighbourhood (one batch) before
//! every move, so a few hundred evaluations buy a handful of moves; its greedy variants leave
//! the climb after the *first* improvement (`base_hillclimb` breaks out when `restart` is
//! true) and restart from a random sample or a perturbation, so climbs never reach a local
//! optimum; and the neighbour list is built from a child that keeps the values of earlier
//! dimensions, so many "neighbours" differ in several parameters. Here the default is first
//! improvement, the climb goes on from every improvement, revisits cost nothing and restarts
//! happen only at true local optima. (2) The start: a climb from one random configuration
//! spends its first tens of evaluations around a typical (poor) configuration, while the
//! score averages over every budget from 1 to `n_max`, which is 12-46 on some spaces. On the
//! 12 shared spaces (50 seeds) this MLS scores -0.12 from one random start (-0.42 with best
//! improvement, Kernel Tuner's setting) and 0.48 when each climb starts from the best of 20
//! random samples, hence `start_samples = 20`.
//!
//! ## References
//! - F.-J. Willemsen, S. Heldens, R. V. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//!   Optimization in Auto-Tuning", sections III and IV-A (neighbour definitions).
//! - Kernel Tuner 1.5.0, `strategies/mls.py`, `greedy_mls.py` and `hillclimbers.py`.
//! - H. R. Lourenço, O. C. Martin, T. Stützle, "Iterated Local Search", Handbook of
//!   Metaheuristics, 2003 (local search with restarts as the baseline of ILS).

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};

use rand::RngExt;
use rand::seq::SliceRandom;
use rustc_hash::FxHashMap;
use std::sync::Arc;

use crate::StrategyError;
use crate::fresh::FreshSampler;

// ----------------------------------------------------------------------------------------
// Shared by the local searches (MLS, greedy ILS, simulated annealing).
// ----------------------------------------------------------------------------------------

/// Whether objective `a` is strictly better than `b` (minimisation form). A failed value
/// (`None`, or NaN) is worse than any successful one and never better than another failure.
pub(crate) fn better(a: Option<f64>, b: Option<f64>) -> bool {
    match (ok(a), ok(b)) {
        (Some(a), Some(b)) => a < b,
        (Some(_), None) => true,
        (None, _) => false,
    }
}

/// The value as a number, `None` when it failed (or is NaN).
pub(crate) fn ok(v: Option<f64>) -> Option<f64> {
    v.filter(|v| !v.is_nan())
}

/// Parses a neighbourhood option: `Hamming`, `adjacent` or `strictly-adjacent` (case and
/// `-`/`_` are not significant).
pub(crate) fn parse_neighbourhood(
    strategy: &str,
    option: &str,
    name: &str,
) -> Result<Neighbourhood, StrategyError> {
    match name.to_ascii_lowercase().replace('_', "-").as_str() {
        "hamming" => Ok(Neighbourhood::Hamming),
        "adjacent" => Ok(Neighbourhood::Adjacent),
        "strictly-adjacent" => Ok(Neighbourhood::StrictlyAdjacent),
        _ => Err(StrategyError::Invalid {
            strategy: strategy.to_string(),
            option: option.to_string(),
            message: format!(
                "must be one of \"Hamming\", \"adjacent\", \"strictly-adjacent\", not {name:?}"
            ),
        }),
    }
}

/// Checks that `value` is a number greater than 0.
pub(crate) fn check_positive(
    strategy: &str,
    option: &str,
    value: f64,
) -> Result<(), StrategyError> {
    if value.is_nan() || value <= 0.0 {
        return Err(StrategyError::Invalid {
            strategy: strategy.to_string(),
            option: option.to_string(),
            message: format!("must be greater than 0, not {value}"),
        });
    }
    Ok(())
}

/// The default number of random configurations a local search samples for each (re)start.
pub(crate) const START_SAMPLES: usize = 20;

/// The documentation of the `start_samples` option (the same for every local search).
pub(crate) const START_SAMPLES_DOC: crate::OptionDoc = crate::OptionDoc {
    name: "start_samples",
    default: "20",
    doc: "Each (re)start is the best of this many random unevaluated configurations (1: a single random start, as in Kernel Tuner).",
};

/// Checks the `start_samples` option.
pub(crate) fn check_start_samples(strategy: &str, value: usize) -> Result<(), StrategyError> {
    crate::check_range(strategy, "start_samples", value, 1, 1_000_000)
}

/// The documentation of the `kick_size` option (the same wherever the climb kicks).
pub(crate) const KICK_SIZE_DOC: crate::OptionDoc = crate::OptionDoc {
    name: "kick_size",
    default: "0.2",
    doc: "The largest share of the parameters a kick changes: each changes 1 to max(1, kick_size x parameters) random parameters, repaired to valid.",
};

/// Checks the `kicks` and `kick_size` options and gives the kicks' perturbation.
pub(crate) fn kick_perturbation(
    strategy: &str,
    kicks: usize,
    kick_size: f64,
) -> Result<Perturbation, StrategyError> {
    crate::check_range(strategy, "kicks", kicks, 0, 1_000_000)?;
    crate::check_range(strategy, "kick_size", kick_size, 0.0, 1.0)?;
    Ok(Perturbation::Random {
        fraction: kick_size,
    })
}

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

/// The order in which a hill climber looks at the neighbours of its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// A fresh random permutation at every configuration (Kernel Tuner's `randomize`).
    Random,
    /// The space's order: parameter by parameter, values in declaration order.
    Sequential,
}

impl Order {
    /// Parses `random` or `sequential`.
    pub(crate) fn parse(strategy: &str, option: &str, name: &str) -> Result<Order, StrategyError> {
        match name.to_ascii_lowercase().as_str() {
            "random" => Ok(Order::Random),
            "sequential" => Ok(Order::Sequential),
            _ => Err(StrategyError::Invalid {
                strategy: strategy.to_string(),
                option: option.to_string(),
                message: format!("must be \"random\" or \"sequential\", not {name:?}"),
            }),
        }
    }
}

/// What orders a climb's neighbours when a model of the objective is at hand (`auto`'s
/// model guiding its local search): a score per configuration, smaller first (evaluated
/// neighbours, which cost nothing, still come before any of them). `None`: no opinion yet,
/// the climber's own order stands.
pub(crate) trait Guide {
    /// The scores of `configs`, in order.
    fn promise(&self, space: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>>;
}

/// An evaluated configuration and its value (`None` when it failed).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Point {
    /// The configuration.
    pub(crate) config: Configuration,
    /// Its objective in minimisation form, `None` when it failed.
    pub(crate) value: Option<f64>,
}

/// What a hill climber wants next.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Climb {
    /// Evaluate these (never evaluated) configurations.
    Propose(Vec<Configuration>),
    /// The climb is at a local optimum (every neighbour is known and none is better), or it
    /// has not been started.
    Optimum,
}

/// The neighbour lists of the configurations visited, as ranks, so that a local search that
/// comes back to a configuration (free steps over memoised values, a climb that ends where an
/// earlier one did) does not recompute them. Bounded: it is emptied when it holds more than
/// [`NeighbourCache::MAX_STORED`] ranks (8 MiB). Only looked up, never iterated, so it cannot
/// affect a run's choices.
#[derive(Clone, Debug, Default)]
pub(crate) struct NeighbourCache {
    lists: FxHashMap<u64, Arc<[u64]>>,
    stored: usize,
}

impl NeighbourCache {
    /// The most ranks held at once.
    pub(crate) const MAX_STORED: usize = 1 << 20;

    /// The ranks of the valid neighbours of `config` (in the space's order).
    pub(crate) fn get(
        &mut self,
        space: &SearchSpace,
        config: &[u32],
        kind: Neighbourhood,
    ) -> Arc<[u64]> {
        let compute = || -> Arc<[u64]> {
            space
                .neighbours(config, kind)
                .iter()
                .filter_map(|c| space.rank(c))
                .collect()
        };
        let Some(rank) = space.rank(config) else {
            return compute();
        };
        if let Some(l) = self.lists.get(&rank) {
            return l.clone();
        }
        let list = compute();
        if self.stored + list.len() > Self::MAX_STORED {
            self.lists.clear();
            self.stored = 0;
        }
        self.stored += list.len();
        self.lists.insert(rank, list.clone());
        list
    }
}

/// A hill climber as an ask/tell state machine: first improvement (or best improvement)
/// over a neighbourhood, proposing only unevaluated neighbours and comparing evaluated ones
/// by their memoised values. The neighbour list of the current configuration is computed
/// once per configuration (and cached), not at every ask.
#[derive(Clone, Debug)]
pub(crate) struct HillClimber {
    neighbourhood: Neighbourhood,
    order: Order,
    first_improvement: bool,
    /// Where the climb is.
    current: Option<Point>,
    /// A starting configuration still to be evaluated (or looked up).
    start: Option<Configuration>,
    /// The neighbours of `current` (ranks); `None` until looked up after a move.
    neighbours: Option<Arc<[u64]>>,
    /// The scan order: indices into `neighbours`.
    scan: Vec<u32>,
    /// How far the scan has got.
    next: usize,
    /// Best improvement: the best neighbour seen in this scan.
    best: Option<Point>,
    /// Neighbours proposed and not yet told.
    pending: Vec<Configuration>,
    cache: NeighbourCache,
    /// Parameters the climb may not change (after a kick, the kicked ones) until it reaches
    /// a local optimum of the others; empty: none.
    frozen: Vec<usize>,
    /// Neighbours proposed from one configuration before it counts as a local optimum.
    patience: usize,
    /// Neighbours proposed since the climb last moved.
    tried: usize,
    /// Scratch space for one configuration.
    buf: Vec<u32>,
}

impl HillClimber {
    /// A climber that has not started.
    pub(crate) fn new(neighbourhood: Neighbourhood, order: Order, first_improvement: bool) -> Self {
        HillClimber {
            neighbourhood,
            order,
            first_improvement,
            current: None,
            start: None,
            neighbours: None,
            scan: Vec::new(),
            next: 0,
            best: None,
            pending: Vec::new(),
            cache: NeighbourCache::default(),
            frozen: Vec::new(),
            patience: usize::MAX,
            tried: 0,
            buf: Vec::new(),
        }
    }

    /// Gives up on a configuration after proposing `patience` of its neighbours without
    /// finding a better one, as if it were a local optimum (0: never). With a guide that
    /// orders the neighbours by promise, the last ones are the least likely to improve.
    pub(crate) fn with_patience(mut self, patience: usize) -> Self {
        self.patience = if patience == 0 { usize::MAX } else { patience };
        self
    }

    /// Starts a new climb at `config` (which may or may not have been evaluated).
    pub(crate) fn start_at(&mut self, config: Configuration) {
        self.stop();
        self.start = Some(config);
    }

    /// Starts a new climb at `config` that keeps the parameters `frozen` as they are until
    /// it reaches a local optimum of the others, then climbs on in all of them.
    pub(crate) fn start_frozen(&mut self, config: Configuration, frozen: Vec<usize>) {
        self.start_at(config);
        self.frozen = frozen;
    }

    /// Whether a climb is under way (started and not abandoned).
    pub(crate) fn is_started(&self) -> bool {
        self.current.is_some() || self.start.is_some()
    }

    /// The configuration the climb is at, once its start has been evaluated.
    pub(crate) fn current(&self) -> Option<&Point> {
        self.current.as_ref()
    }

    /// Abandons the climb (the next one begins with [`start_at`](Self::start_at)).
    pub(crate) fn stop(&mut self) {
        self.current = None;
        self.start = None;
        self.neighbours = None;
        self.best = None;
        self.pending.clear();
        self.frozen.clear();
    }

    fn move_to(&mut self, p: Point) {
        self.current = Some(p);
        self.tried = 0;
        self.neighbours = None;
        self.next = 0;
        self.best = None;
    }

    /// Up to `n` unevaluated configurations to evaluate next, or [`Climb::Optimum`].
    pub(crate) fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Climb {
        self.ask_guided(space, history, n, rng, None)
    }

    /// [`ask`](Self::ask), the neighbours not yet scanned reordered by `guide` (when given
    /// and it has an opinion) before every proposal.
    pub(crate) fn ask_guided(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
        guide: Option<&dyn Guide>,
    ) -> Climb {
        if let Some(s) = self.start.take() {
            match history.get(&s) {
                Some(o) => self.move_to(Point {
                    config: s,
                    value: o.value,
                }),
                None => {
                    self.start = Some(s.clone());
                    return Climb::Propose(vec![s]);
                }
            }
        }
        self.buf.resize(space.dims(), 0);
        // Every pass moves to a strictly better configuration, so this ends.
        loop {
            let Some(cur) = &self.current else {
                return Climb::Optimum;
            };
            let list = match &self.neighbours {
                Some(l) => l.clone(),
                None => {
                    let l = self.cache.get(space, &cur.config, self.neighbourhood);
                    self.scan.clear();
                    self.scan.extend(0..l.len() as u32);
                    if self.order == Order::Random {
                        self.scan.shuffle(rng);
                    }
                    self.neighbours = Some(l.clone());
                    l
                }
            };
            if let Some(g) = guide {
                reorder(
                    &mut self.scan[self.next..],
                    &mut self.buf,
                    space,
                    history,
                    &list,
                    g,
                );
            }
            let mut out = Vec::new();
            let mut moved = None;
            while self.next < list.len()
                && out.len() < n.max(1)
                && self.tried + out.len() < self.patience
            {
                let rank = list[self.scan[self.next] as usize];
                space.write_configuration(rank, &mut self.buf);
                if self.frozen.iter().any(|&d| self.buf[d] != cur.config[d]) {
                    self.next += 1;
                    continue;
                }
                match history.get(&self.buf) {
                    Some(o) => {
                        if self.first_improvement {
                            if better(o.value, cur.value) {
                                if out.is_empty() {
                                    moved = Some(Point {
                                        config: self.buf.clone(),
                                        value: o.value,
                                    });
                                }
                                // Else: propose what we have; the next ask moves here.
                                break;
                            }
                        } else if better(o.value, self.best.as_ref().and_then(|b| b.value)) {
                            self.best = Some(Point {
                                config: self.buf.clone(),
                                value: o.value,
                            });
                        }
                    }
                    None => out.push(self.buf.clone()),
                }
                self.next += 1;
            }
            if let Some(p) = moved {
                self.move_to(p);
                continue;
            }
            if !out.is_empty() {
                self.tried += out.len();
                self.pending.clone_from(&out);
                return Climb::Propose(out);
            }
            // The whole neighbourhood is known (or patience ran out).
            if !self.first_improvement
                && let Some(b) = self.best.take()
                && better(b.value, cur.value)
            {
                self.move_to(b);
                continue;
            }
            if !self.frozen.is_empty() {
                // A local optimum of the free parameters: now climb in all of them.
                self.frozen.clear();
                self.neighbours = None;
                self.next = 0;
                self.tried = 0;
                continue;
            }
            return Climb::Optimum;
        }
    }

    /// Learns the values of what it proposed (other observations are ignored).
    pub(crate) fn tell(&mut self, observations: &[Observation]) {
        let mut improved: Option<Point> = None;
        for o in observations {
            if self.start.as_ref() == Some(&o.config) {
                self.start = None;
                self.move_to(Point {
                    config: o.config.clone(),
                    value: o.value,
                });
            } else if self.pending.contains(&o.config) {
                let p = Point {
                    config: o.config.clone(),
                    value: o.value,
                };
                if self.first_improvement {
                    if better(o.value, improved.as_ref().and_then(|b| b.value))
                        && better(o.value, self.current.as_ref().and_then(|c| c.value))
                    {
                        improved = Some(p);
                    }
                } else if better(o.value, self.best.as_ref().and_then(|b| b.value)) {
                    self.best = Some(p);
                }
            }
        }
        self.pending.clear();
        if let Some(p) = improved {
            self.move_to(p);
        }
    }
}

/// Sorts the neighbours still to scan (`rest`, indices into `list`): the evaluated ones first
/// (free to compare), then the others by the guide's score; ties keep their order (the
/// random permutation).
fn reorder(
    rest: &mut [u32],
    buf: &mut [u32],
    space: &SearchSpace,
    history: &History,
    list: &[u64],
    guide: &dyn Guide,
) {
    if rest.len() < 2 {
        return;
    }
    let mut unknown: Vec<Configuration> = Vec::new();
    let mut slot: FxHashMap<u32, usize> = FxHashMap::default();
    for &i in rest.iter() {
        space.write_configuration(list[i as usize], buf);
        if history.get(buf).is_none() {
            slot.insert(i, unknown.len());
            unknown.push(buf.to_vec());
        }
    }
    let Some(scores) = guide.promise(space, &unknown) else {
        return;
    };
    let key = |i: &u32| slot.get(i).map_or(f64::NEG_INFINITY, |&k| scores[k]);
    rest.sort_by(|a, b| key(a).total_cmp(&key(b)));
}

// ----------------------------------------------------------------------------------------
// Multi-start local search.
// ----------------------------------------------------------------------------------------

/// Multi-start local search: hill climbing with random restarts at local optima.
#[derive(Clone, Debug)]
pub struct MultiStartLocalSearch {
    climber: HillClimber,
    starts: Starts,
    start_samples: usize,
    /// Move the climb to the study's best configuration whenever it is better than the
    /// climb's (found by another strategy of a portfolio, or another worker).
    follow_best: bool,
    /// Restart from random samples at a local optimum; without, a search that follows the
    /// best waits (proposes nothing) until someone finds a better configuration.
    restarts: bool,
    /// Climbs from perturbations of the study's best configuration at a local optimum (per
    /// new best), before a restart.
    kicks: usize,
    /// How many parameters each of those perturbations changes.
    perturbation: Perturbation,
    /// Kicks since the study's best last improved.
    kicked: usize,
    /// The study's best value when last looked at.
    known_best: Option<f64>,
    /// The climb started from a kick: it does not jump back to the study's best until a
    /// better one is found.
    detour: bool,
}

impl MultiStartLocalSearch {
    /// A search over `neighbourhood`, looking at neighbours in random order (`random_order`)
    /// or the space's order, moving at the first improvement (`first_improvement`, Kernel
    /// Tuner's `restart = True`) or after the whole neighbourhood (best improvement), each
    /// climb starting from the best of `start_samples` random unevaluated configurations.
    pub fn new(
        neighbourhood: Neighbourhood,
        random_order: bool,
        first_improvement: bool,
        start_samples: usize,
    ) -> MultiStartLocalSearch {
        let order = if random_order {
            Order::Random
        } else {
            Order::Sequential
        };
        MultiStartLocalSearch {
            climber: HillClimber::new(neighbourhood, order, first_improvement),
            starts: Starts::default(),
            start_samples: start_samples.max(1),
            follow_best: false,
            restarts: true,
            kicks: 0,
            perturbation: Perturbation::Random { fraction: 0.3 },
            kicked: 0,
            known_best: None,
            detour: false,
        }
    }

    /// A configuration counts as a local optimum after `patience` of its neighbours were
    /// proposed without an improvement (0: only when every neighbour is known).
    pub fn patient(mut self, patience: usize) -> MultiStartLocalSearch {
        self.climber = self.climber.with_patience(patience);
        self
    }

    /// At a local optimum: up to `kicks` climbs (per new best) from the study's best
    /// configuration perturbed by `perturbation`, before a restart. Iterated
    /// local search around the best: it leaves a trap that only several parameters changed
    /// at once escape, where every single change is worse.
    pub fn kicking(mut self, kicks: usize, perturbation: Perturbation) -> MultiStartLocalSearch {
        self.kicks = kicks;
        self.perturbation = perturbation;
        self
    }

    /// Whether a climb at a local optimum restarts from random samples (the default) or,
    /// when following the best, proposes nothing until a better configuration is found: in a
    /// portfolio the other strategies explore, and the climb resumes from their finds.
    pub fn restarting(mut self, restarts: bool) -> MultiStartLocalSearch {
        self.restarts = restarts;
        self
    }

    /// Whether the climb jumps to the study's best configuration whenever that is better
    /// than the climb's own (the local refinement of a portfolio).
    pub fn following_best(mut self, follow: bool) -> MultiStartLocalSearch {
        self.follow_best = follow;
        self
    }
}

impl Default for MultiStartLocalSearch {
    fn default() -> Self {
        MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, START_SAMPLES)
    }
}

impl Strategy for MultiStartLocalSearch {
    fn name(&self) -> &str {
        "mls"
    }

    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        self.ask_guided(space, history, n, rng, None)
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.starts.exclude(space, observations);
        self.climber.tell(observations);
    }
}

impl MultiStartLocalSearch {
    /// [`Strategy::ask`], each climb scanning its neighbours in the order `guide` gives.
    pub(crate) fn ask_guided(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
        guide: Option<&dyn Guide>,
    ) -> Vec<Configuration> {
        if let Some(best) = history.best() {
            let new_best = better(best.value, self.known_best);
            if new_best {
                self.known_best = best.value;
                self.kicked = 0;
            }
            if self.follow_best
                && (new_best || !self.detour)
                && better(best.value, self.climber.current().and_then(|c| c.value))
            {
                self.detour = false;
                self.climber.start_at(best.config.clone());
            }
        }
        // Ends: a climb only moves to better configurations, and a restart samples
        // unevaluated configurations.
        loop {
            if !self.climber.is_started() {
                if !self.restarts && self.follow_best {
                    return Vec::new();
                }
                match self.starts.next(space, history, n, self.start_samples, rng) {
                    Start::Propose(v) => return v,
                    Start::Ready(c) => self.climber.start_at(c),
                    Start::Exhausted => return Vec::new(),
                }
            }
            match self.climber.ask_guided(space, history, n, rng, guide) {
                Climb::Propose(v) => return v,
                Climb::Optimum => {
                    self.detour = false;
                    if self.kicked < self.kicks
                        && let Some(best) = history.best()
                    {
                        self.kicked += 1;
                        self.detour = true;
                        let kicked = self.perturbation.apply(space, &best.config, rng);
                        // The climb first refines the other parameters: moving a kicked one
                        // back leads straight back to the best (every single change of it
                        // is worse), and nothing is learnt.
                        let frozen = (0..space.dims())
                            .filter(|&d| kicked[d] != best.config[d])
                            .collect();
                        self.climber.start_frozen(kicked, frozen);
                    } else {
                        self.climber.stop();
                    }
                }
            }
        }
    }
}

/// MLS options.
#[derive(serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
struct MlsOptions {
    #[serde(alias = "neighbor")]
    neighbour: String,
    restart: bool,
    order: String,
    start_samples: usize,
    follow_best: bool,
    kicks: usize,
    kick_size: f64,
    climb_patience: usize,
}

impl Default for MlsOptions {
    fn default() -> Self {
        MlsOptions {
            neighbour: "Hamming".into(),
            restart: true,
            order: "random".into(),
            start_samples: START_SAMPLES,
            follow_best: false,
            kicks: 0,
            kick_size: 0.2,
            climb_patience: 0,
        }
    }
}

fn create(options: &crate::Options) -> Result<Box<dyn Strategy + Send>, crate::StrategyError> {
    const NAME: &str = "mls";
    let o: MlsOptions = crate::parse(NAME, options)?;
    let neighbourhood = parse_neighbourhood(NAME, "neighbour", &o.neighbour)?;
    let order = Order::parse(NAME, "order", &o.order)?;
    check_start_samples(NAME, o.start_samples)?;
    let perturbation = kick_perturbation(NAME, o.kicks, o.kick_size)?;
    Ok(Box::new(
        MultiStartLocalSearch::new(
            neighbourhood,
            order == Order::Random,
            o.restart,
            o.start_samples,
        )
        .following_best(o.follow_best)
        .patient(o.climb_patience)
        .kicking(o.kicks, perturbation),
    ))
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: "mls",
    aliases: &["multi_start_local_search"],
    about: "Multi-start local search: first-improvement hill climbing over valid neighbours, restarted from a random unevaluated configuration at each local optimum.",
    options: &[
        crate::OptionDoc {
            name: "neighbour",
            default: "\"Hamming\"",
            doc: "Neighbourhood: \"Hamming\" (one parameter differs), \"adjacent\" or \"strictly-adjacent\".",
        },
        crate::OptionDoc {
            name: "restart",
            default: "true",
            doc: "Move as soon as a better neighbour is found (first improvement); false evaluates the whole neighbourhood and moves to the best (Kernel Tuner's `restart`).",
        },
        crate::OptionDoc {
            name: "order",
            default: "\"random\"",
            doc: "Order in which neighbours are tried: \"random\" (a new permutation at every configuration) or \"sequential\" (parameter by parameter).",
        },
        START_SAMPLES_DOC,
        crate::OptionDoc {
            name: "follow_best",
            default: "false",
            doc: "Move the climb to the study's best configuration whenever it is better than the climb's own (found by another strategy of a portfolio, or by another worker).",
        },
        crate::OptionDoc {
            name: "kicks",
            default: "0",
            doc: "At a local optimum, first climb from this many random perturbations of the study's best configuration (counted afresh at every new best; the perturbed parameters stay put until the others reach their local optimum), then restart (an iterated local search). Off by default: alone, `mls` scored no better with kicks (0.460 against 0.476 on the 12 shared spaces); in `auto` they pay.",
        },
        KICK_SIZE_DOC,
        crate::OptionDoc {
            name: "climb_patience",
            default: "0",
            doc: "A configuration counts as a local optimum after this many of its neighbours brought no improvement (0: only when every neighbour is known). Meant for neighbours tried in a model's order, as `auto` does; in random order it ends climbs early (0.274 at 4, against 0.476).",
        },
    ],
    tunable: &[
        crate::Tunable {
            name: "neighbour",
            values: &["\"Hamming\"", "\"adjacent\"", "\"strictly-adjacent\""],
        },
        crate::Tunable {
            name: "restart",
            values: &["true", "false"],
        },
        crate::Tunable {
            name: "start_samples",
            values: &["1", "5", "10", "20", "40"],
        },
        crate::Tunable {
            name: "kicks",
            values: &["0", "10", "30", "100"],
        },
        crate::Tunable {
            name: "climb_patience",
            values: &["0", "4", "8", "16"],
        },
    ],
    create,
};

/// Helpers shared by the tests of the local searches.
#[cfg(test)]
pub(crate) mod test_support {
    use ktune_core::{
        Budget, CoreError, Direction, FailureKind, History, Metric, Observation, Outcome, Rng,
        Runner, Strategy, Timings, Tuner, TuningRun,
    };
    use ktune_space::{Configuration, Parameter, SearchSpace};
    use rand::SeedableRng;

    /// A runner evaluating a function of the value indices (`None` = a runtime failure).
    pub(crate) struct FnRunner<F>(pub(crate) F, Vec<Metric>);

    impl<F: FnMut(&[u32]) -> Option<f64>> FnRunner<F> {
        pub(crate) fn new(f: F) -> Self {
            FnRunner(f, vec![Metric::new("f", Direction::Minimize)])
        }
    }

    impl<F: FnMut(&[u32]) -> Option<f64>> Runner for FnRunner<F> {
        fn name(&self) -> &str {
            "fn"
        }
        fn metrics(&self) -> &[Metric] {
            &self.1
        }
        fn evaluate(
            &mut self,
            _: &SearchSpace,
            configs: &[Configuration],
        ) -> Result<Vec<Outcome>, CoreError> {
            Ok(configs
                .iter()
                .map(|c| match (self.0)(c) {
                    Some(v) => Outcome::ok(vec![v], Timings::default()),
                    None => Outcome::failed(FailureKind::Runtime, "fails", Timings::default()),
                })
                .collect())
        }
    }

    /// Runs `strategy` through the tuner on `space` with objective `f`.
    pub(crate) fn run(
        strategy: &mut dyn Strategy,
        space: &SearchSpace,
        f: impl FnMut(&[u32]) -> Option<f64>,
        budget: usize,
        seed: u64,
    ) -> TuningRun {
        let mut runner = FnRunner::new(f);
        let budget = Budget {
            max_evaluations: Some(budget),
            ..Budget::default()
        };
        Tuner::new(space, &mut runner, budget)
            .run(strategy, &mut Rng::seed_from_u64(seed))
            .unwrap()
    }

    /// One integer parameter `x` with values `0..n`.
    pub(crate) fn line(n: i64) -> SearchSpace {
        SearchSpace::new(
            vec![Parameter::integer_range("x", 0, n - 1, 1).unwrap()],
            &[] as &[&str],
        )
        .unwrap()
    }

    /// Two parameters `x`, `y` in `0..n` with `x + y < n + 3` and `(x * y) % 3 != 1`.
    pub(crate) fn constrained(n: i64) -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer_range("x", 0, n - 1, 1).unwrap(),
                Parameter::integer_range("y", 0, n - 1, 1).unwrap(),
            ],
            &[format!("x + y < {}", n + 3), "(x * y) % 3 != 1".to_string()],
        )
        .unwrap()
    }

    /// Records an evaluation in `history` and returns its observation.
    pub(crate) fn observe(
        history: &mut History,
        config: &[u32],
        value: Option<f64>,
    ) -> Observation {
        let o = Observation {
            config: config.to_vec(),
            value,
            failure: value.is_none().then_some(FailureKind::Runtime),
            variance: None,
        };
        history.push(o.clone());
        o
    }

    /// Checks what the conformance test checks, for one spec: valid, unique, the budget
    /// used, deterministic, seed-dependent, and the whole space covered when the budget
    /// allows (the run never gets stuck).
    pub(crate) fn conforms(spec: &str) {
        let space = constrained(30);
        let f = |c: &[u32]| {
            let (x, y) = (f64::from(c[0]), f64::from(c[1]));
            ((c[0] + 2 * c[1]) % 11 != 4).then(|| (x - 17.0).powi(2) + (y - 5.0).powi(2) + 1.0)
        };
        let go = |seed, budget| {
            let (_, mut s) = crate::create_spec(spec).unwrap();
            run(s.as_mut(), &space, f, budget, seed)
        };
        let configs = |r: &TuningRun| {
            r.records
                .iter()
                .map(|r| r.config.clone())
                .collect::<Vec<_>>()
        };
        let a = go(1, 100);
        assert_eq!(a.records.len(), 100, "{spec}: {:?}", a.stop);
        assert!(
            a.records.iter().all(|r| space.contains(&r.config)),
            "{spec}"
        );
        assert_eq!(
            configs(&a),
            configs(&go(1, 100)),
            "{spec} is not deterministic"
        );
        assert_ne!(configs(&a), configs(&go(2, 100)), "{spec} ignores its seed");
        let size = space.size() as usize;
        let all = go(3, size + 10);
        assert_eq!(all.stop, ktune_core::StopReason::SpaceExhausted, "{spec}");
        let unique: std::collections::BTreeSet<_> = configs(&all).into_iter().collect();
        assert_eq!((all.records.len(), unique.len()), (size, size), "{spec}");
    }

    /// Mean per-suggestion overhead (strategy time / evaluations) of `spec` on a Kernel Tuner
    /// cache, in microseconds, when the file is there.
    pub(crate) fn overhead_us(spec: &str, budget: usize, seeds: u64) -> Option<f64> {
        let path = crate::testkit::shared_space("dedispersion_A100");
        if !path.exists() {
            return None;
        }
        let sim = ktune_runners::Simulation::open(&path, None, None).unwrap();
        let (mut secs, mut n) = (0.0, 0usize);
        for seed in 0..seeds {
            let (_, mut s) = crate::create_spec(spec).unwrap();
            let mut runner = sim.runner();
            let budget = Budget {
                max_evaluations: Some(budget),
                ..Budget::default()
            };
            let r = Tuner::new(sim.space(), &mut runner, budget)
                .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
                .unwrap();
            secs += r.strategy_seconds;
            n += r.records.len();
        }
        Some(secs / n as f64 * 1e6)
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::*;
    use super::*;
    use rand::SeedableRng;

    /// With `follow_best`, a better configuration found by someone else (told, not proposed)
    /// becomes the climb's start: the next proposals are its neighbours. Without it the
    /// search keeps to its own random starts.
    #[test]
    fn following_the_best_climbs_from_what_others_found() {
        let space = SearchSpace::new(
            vec![
                ktune_space::Parameter::integer_range("x", 0, 29, 1).unwrap(),
                ktune_space::Parameter::integer_range("y", 0, 29, 1).unwrap(),
            ],
            &[] as &[&str],
        )
        .unwrap();
        let found = Observation {
            config: vec![17, 4],
            value: Some(1.0),
            failure: None,
            variance: None,
        };
        let neighbours_proposed = |follow: bool| -> usize {
            let mut s = MultiStartLocalSearch::default().following_best(follow);
            let mut history = History::new();
            let mut rng = Rng::seed_from_u64(7);
            history.push(found.clone());
            s.tell(&space, std::slice::from_ref(&found));
            (0..10)
                .filter(|_| {
                    let c = s.ask(&space, &history, 1, &mut rng).remove(0);
                    let o = Observation {
                        config: c.clone(),
                        value: Some(2.0),
                        failure: None,
                        variance: None,
                    };
                    history.push(o.clone());
                    s.tell(&space, &[o]);
                    c.iter().zip(&found.config).filter(|(a, b)| a != b).count() == 1
                })
                .count()
        };
        assert_eq!(neighbours_proposed(true), 10);
        assert!(neighbours_proposed(false) < 5);
    }

    /// Two basins on a line of 20: a local minimum at 5 (value 1) and the global one at 15.
    fn two_basins(c: &[u32]) -> Option<f64> {
        let x = f64::from(c[0]);
        Some(((x - 5.0).abs() + 1.0).min((x - 15.0).abs()))
    }

    /// Drives a climber alone until it reports a local optimum; returns the evaluations.
    fn climb(
        climber: &mut HillClimber,
        space: &SearchSpace,
        history: &mut History,
        f: impl Fn(&[u32]) -> Option<f64>,
        rng: &mut Rng,
    ) -> usize {
        let mut evaluations = 0;
        while let Climb::Propose(v) = climber.ask(space, history, 1, rng) {
            assert_eq!(v.len(), 1);
            assert!(
                !history.contains(&v[0]),
                "proposed an evaluated configuration"
            );
            let o = observe(history, &v[0], f(&v[0]));
            climber.tell(&[o]);
            evaluations += 1;
            assert!(evaluations < 100, "the climb does not end");
        }
        evaluations
    }

    #[test]
    fn failures_are_worse_than_anything_and_never_better_than_each_other() {
        assert!(better(Some(1.0), Some(2.0)));
        assert!(!better(Some(2.0), Some(2.0)));
        assert!(better(Some(1e300), None));
        assert!(!better(None, Some(1e300)));
        assert!(!better(None, None));
        assert!(!better(Some(f64::NAN), Some(1.0)));
        assert!(better(Some(-5.0), Some(f64::NAN)));
    }

    #[test]
    fn the_climber_reaches_the_local_optimum_of_its_basin() {
        let space = line(20);
        for seed in 0..10 {
            let mut rng = Rng::seed_from_u64(seed);
            let mut climber =
                HillClimber::new(Neighbourhood::StrictlyAdjacent, Order::Random, true);
            let mut history = History::new();
            climber.start_at(vec![0]);
            let n = climb(&mut climber, &space, &mut history, two_basins, &mut rng);
            // Up the slope 1..=5, then 6 (and perhaps 4) to prove 5 is an optimum.
            assert_eq!(climber.current().unwrap().config, vec![5]);
            assert!((7..=8).contains(&n), "{n} evaluations");
            // From the other side of the ridge it finds the global optimum.
            climber.start_at(vec![11]);
            climb(&mut climber, &space, &mut history, two_basins, &mut rng);
            assert_eq!(climber.current().unwrap().config, vec![15]);
        }
    }

    #[test]
    fn evaluated_neighbours_are_compared_by_their_memoised_values_without_proposing_them() {
        let space = line(10);
        let mut history = History::new();
        observe(&mut history, &[0], Some(5.0));
        observe(&mut history, &[1], Some(4.0));
        observe(&mut history, &[2], Some(3.0));
        let mut climber = HillClimber::new(Neighbourhood::StrictlyAdjacent, Order::Random, true);
        climber.start_at(vec![0]);
        let mut rng = Rng::seed_from_u64(0);
        // It walks 0 -> 1 -> 2 for free and proposes the only unknown neighbour.
        assert_eq!(
            climber.ask(&space, &history, 1, &mut rng),
            Climb::Propose(vec![vec![3]])
        );
        assert_eq!(climber.current().unwrap().config, vec![2]);
        let o = observe(&mut history, &[3], Some(9.0));
        climber.tell(&[o]);
        assert_eq!(climber.ask(&space, &history, 1, &mut rng), Climb::Optimum);
        assert_eq!(climber.current().unwrap().config, vec![2]);
    }

    #[test]
    fn a_failed_start_moves_to_any_success_and_never_to_a_failure() {
        let space = line(10);
        let f = |c: &[u32]| (c[0] >= 3).then_some(f64::from(c[0]));
        let mut rng = Rng::seed_from_u64(3);
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        let mut history = History::new();
        climber.start_at(vec![1]);
        climb(&mut climber, &space, &mut history, f, &mut rng);
        assert_eq!(climber.current().unwrap().config, vec![3]);
        // A failed configuration whose neighbours all fail is a local optimum.
        let space = line(3);
        let mut history = History::new();
        climber.start_at(vec![0]);
        climb(&mut climber, &space, &mut history, |_| None, &mut rng);
        assert_eq!(climber.current().unwrap().config, vec![0]);
        assert_eq!(history.len(), 3);
    }

    /// Prefers configurations near `x = target` (a stand-in for a model's expected
    /// improvement), or has no opinion.
    struct Towards(Option<f64>);

    impl Guide for Towards {
        fn promise(&self, _: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>> {
            let t = self.0?;
            Some(
                configs
                    .iter()
                    .map(|c| (f64::from(c[0]) - t).abs())
                    .collect(),
            )
        }
    }

    /// A guided climb proposes the neighbours in the guide's order, compares the evaluated
    /// ones before proposing anything, and keeps its own order when the guide has no opinion.
    #[test]
    fn a_guide_orders_the_neighbours_and_evaluated_ones_come_first() {
        let space = line(8);
        let f = |c: &[u32]| Some((f64::from(c[0]) - 6.0).abs());
        let climb = |guide: &Towards, known: &[u32], seed: u64| -> Vec<u32> {
            let mut rng = Rng::seed_from_u64(seed);
            let mut history = History::new();
            for &k in known {
                observe(&mut history, &[k], f(&[k]));
            }
            let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
            climber.start_at(vec![0]);
            let mut order = Vec::new();
            while let Climb::Propose(v) =
                climber.ask_guided(&space, &history, 1, &mut rng, Some(guide))
            {
                let o = observe(&mut history, &v[0], f(&v[0]));
                order.push(v[0][0]);
                climber.tell(&[o]);
            }
            order
        };
        // The guide points at 6, the optimum: the start, then 6, then the rest around it.
        for seed in 0..5 {
            let order = climb(&Towards(Some(6.0)), &[], seed);
            assert_eq!(&order[..2], &[0, 6], "seed {seed}: {order:?}");
            assert_eq!(order.len(), 8);
        }
        // The guide points the wrong way: it is followed all the same, one step at a time.
        let order = climb(&Towards(Some(1.0)), &[], 0);
        assert_eq!(&order[..3], &[0, 1, 2], "{order:?}");
        // 3 is known and better than the start: the climb moves there before it proposes
        // the guide's favourite, and never proposes 3.
        let mut rng = Rng::seed_from_u64(0);
        let mut history = History::new();
        observe(&mut history, &[3], f(&[3]));
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        climber.start_at(vec![0]);
        let guide = Towards(Some(1.0));
        let Climb::Propose(v) = climber.ask_guided(&space, &history, 1, &mut rng, Some(&guide))
        else {
            panic!("the start is proposed first");
        };
        let o = observe(&mut history, &v[0], f(&v[0]));
        climber.tell(&[o]);
        let Climb::Propose(v) = climber.ask_guided(&space, &history, 1, &mut rng, Some(&guide))
        else {
            panic!("the climb goes on");
        };
        assert_eq!(climber.current().unwrap().config, vec![3]);
        assert_eq!(v, vec![vec![1]]);
        // No opinion: the climber's random order, as without a guide.
        let mut rng = Rng::seed_from_u64(3);
        let mut history = History::new();
        let mut plain = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        plain.start_at(vec![0]);
        let mut unguided = Vec::new();
        while let Climb::Propose(v) = plain.ask(&space, &history, 1, &mut rng) {
            let o = observe(&mut history, &v[0], f(&v[0]));
            unguided.push(v[0][0]);
            plain.tell(&[o]);
        }
        assert_eq!(climb(&Towards(None), &[], 3), unguided);
    }

    /// Following the best without restarts, the search proposes nothing at a local optimum
    /// until a better configuration is told; with restarts it samples new starts.
    #[test]
    fn without_restarts_a_search_following_the_best_waits_at_an_optimum() {
        let space = line(8);
        let f = |c: &[u32]| Some((f64::from(c[0]) - 6.0).abs());
        let mut history = History::new();
        for k in [5, 6, 7] {
            observe(&mut history, &[k], f(&[k]));
        }
        let mut rng = Rng::seed_from_u64(0);
        let mut waiting = MultiStartLocalSearch::new(Neighbourhood::Adjacent, true, true, 2)
            .following_best(true)
            .restarting(false);
        assert!(waiting.ask(&space, &history, 1, &mut rng).is_empty());
        let mut restarting =
            MultiStartLocalSearch::new(Neighbourhood::Adjacent, true, true, 2).following_best(true);
        assert_eq!(restarting.ask(&space, &history, 1, &mut rng).len(), 1);
        // A new best elsewhere (told by another strategy) gives the waiting search a climb.
        let far = line(8);
        let mut history = History::new();
        for (k, v) in [(5, 1.0), (6, 0.5), (7, 1.0), (1, 0.1)] {
            observe(&mut history, &[k], Some(v));
        }
        let next = waiting.ask(&far, &history, 1, &mut rng);
        assert!(next == vec![vec![0]] || next == vec![vec![2]], "{next:?}");
    }

    /// A grid of `dims` parameters with values `0..n`, every configuration valid.
    fn grid(dims: usize, n: i64) -> SearchSpace {
        SearchSpace::new(
            (0..dims)
                .map(|d| {
                    ktune_space::Parameter::integer_range(format!("p{d}"), 0, n - 1, 1).unwrap()
                })
                .collect(),
            &[] as &[&str],
        )
        .unwrap()
    }

    /// Patience ends a climb at a configuration after that many neighbours proposed without
    /// an improvement; without it every neighbour is proposed first.
    #[test]
    fn a_patient_climb_gives_up_after_so_many_neighbours() {
        let space = grid(2, 10);
        // The start is the optimum: no neighbour improves.
        let f = |c: &[u32]| Some(f64::from(c[0] + c[1]));
        for (patience, expected) in [(3, 3), (7, 7), (0, 18)] {
            let mut rng = Rng::seed_from_u64(1);
            let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true)
                .with_patience(patience);
            let mut history = History::new();
            climber.start_at(vec![0, 0]);
            let n = climb(&mut climber, &space, &mut history, f, &mut rng);
            assert_eq!(n, 1 + expected, "patience {patience}");
        }
        // A move starts the count afresh: from the far corner the climb reaches the optimum.
        let mut rng = Rng::seed_from_u64(2);
        let mut climber =
            HillClimber::new(Neighbourhood::Hamming, Order::Random, true).with_patience(18);
        let mut history = History::new();
        climber.start_at(vec![9, 9]);
        climb(&mut climber, &space, &mut history, f, &mut rng);
        assert_eq!(climber.current().unwrap().config, vec![0, 0]);
    }

    /// A climb started with frozen parameters changes only the others until it is at their
    /// local optimum, then climbs on in all of them.
    #[test]
    fn a_frozen_parameter_waits_for_a_local_optimum_of_the_others() {
        let space = grid(2, 10);
        let f = |c: &[u32]| Some((f64::from(c[0]) - 7.0).abs() + (f64::from(c[1]) - 3.0).abs());
        for seed in 0..5 {
            let mut rng = Rng::seed_from_u64(seed);
            let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
            let mut history = History::new();
            climber.start_frozen(vec![0, 9], vec![0]);
            let mut y_done = false;
            while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
                if !y_done && v[0][0] != 0 {
                    // x moves only once y is at its optimum for x = 0.
                    assert_eq!(climber.current().unwrap().config, vec![0, 3], "seed {seed}");
                    y_done = true;
                }
                let o = observe(&mut history, &v[0], f(&v[0]));
                climber.tell(&[o]);
            }
            assert!(y_done);
            assert_eq!(climber.current().unwrap().config, vec![7, 3], "seed {seed}");
        }
    }

    /// A trap every single change of which is worse: the fast region needs two parameters
    /// changed at once. Following the best without restarts, the search waits at the trap;
    /// with kicks it perturbs the best and finds the optimum.
    #[test]
    fn kicks_leave_a_trap_that_no_single_change_leaves() {
        let space = grid(3, 5);
        let trap = vec![0u32, 0, 0];
        let f = |c: &[u32]| {
            let region = c[0] >= 2 && c[1] >= 2;
            Some(if c == [0, 0, 0] {
                1.0
            } else if region {
                0.5 - 0.05 * f64::from(c[0] + c[1] + c[2])
            } else {
                2.0 + f64::from(c[0] + c[1] + c[2])
            })
        };
        let search = |kicks: usize, seed: u64| -> (Option<f64>, usize) {
            let mut s = MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, 1)
                .following_best(true)
                .restarting(false)
                .kicking(kicks, Perturbation::Fixed(2));
            let mut history = History::new();
            let mut rng = Rng::seed_from_u64(seed);
            let o = observe(&mut history, &trap, f(&trap));
            s.tell(&space, &[o]);
            loop {
                let v = s.ask(&space, &history, 1, &mut rng);
                let Some(c) = v.first() else { break };
                assert!(!history.contains(c), "proposed an evaluated configuration");
                let o = observe(&mut history, c, f(c));
                s.tell(&space, &[o]);
            }
            (history.best().and_then(|b| b.value), history.len())
        };
        for seed in 0..10 {
            // The trap's 12 neighbours, then nothing.
            assert_eq!(search(0, seed), (Some(1.0), 13), "seed {seed}");
            let (best, evaluations) = search(30, seed);
            assert!(
                (best.unwrap() - (0.5 - 0.05 * 12.0)).abs() < 1e-12,
                "seed {seed}"
            );
            assert!(evaluations < 125, "seed {seed}: {evaluations} evaluations");
        }
    }

    /// `mls` from the registry takes `kicks`: at the local optimum its next climb starts next
    /// to the best (one parameter changed, frozen, and the others climbed), where without
    /// kicks it restarts from random samples anywhere in the space.
    #[test]
    fn registry_mls_kicks_climb_on_next_to_the_best() {
        let space = grid(3, 5);
        let f = |c: &[u32]| Some(f64::from(c[0] + c[1] + c[2]));
        let distance = |c: &[u32]| c.iter().filter(|&&v| v != 0).count();
        // The Hamming distance from the optimum (the origin) of the first configuration
        // proposed once the optimum and its 12 neighbours are known.
        let first_after_optimum = |spec: &str, seed: u64| -> usize {
            let (_, mut s) = crate::create_spec(spec).unwrap();
            let r = test_support::run(s.as_mut(), &space, f, 125, seed);
            let mut optimum = false;
            let mut neighbours = 0;
            for rec in &r.records {
                if optimum && neighbours == 12 {
                    return distance(&rec.config);
                }
                match distance(&rec.config) {
                    0 => optimum = true,
                    1 => neighbours += 1,
                    _ => {}
                }
            }
            panic!("{spec}, seed {seed}: the optimum was never proven");
        };
        let kicked: Vec<usize> = (0..10)
            .map(|seed| first_after_optimum("mls:kicks=5:kick_size=0.2", seed))
            .collect();
        assert!(kicked.iter().all(|&d| d == 2), "{kicked:?}");
        let restarted: Vec<usize> = (0..10)
            .map(|seed| first_after_optimum("mls", seed))
            .collect();
        assert!(restarted.contains(&3), "{restarted:?}");
    }

    #[test]
    fn sequential_order_follows_the_space_and_best_improvement_sees_every_neighbour() {
        let space = line(6);
        let mut rng = Rng::seed_from_u64(0);
        let mut history = History::new();
        let f = |c: &[u32]| Some((f64::from(c[0]) - 3.0).abs());
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Sequential, true);
        climber.start_at(vec![0]);
        let mut order = Vec::new();
        while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
            let o = observe(&mut history, &v[0], f(&v[0]));
            order.push(v[0][0]);
            climber.tell(&[o]);
        }
        // 0, then 1 (better: move), then 2 (better), 3 (better), then 4 and 5 around it.
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
        assert_eq!(climber.current().unwrap().config, vec![3]);

        // Best improvement: the whole neighbourhood of the start before any move.
        let mut history = History::new();
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, false);
        climber.start_at(vec![0]);
        let mut seen = Vec::new();
        while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
            if !seen.is_empty() {
                assert_eq!(climber.current().unwrap().config, vec![0]);
            }
            let o = observe(&mut history, &v[0], f(&v[0]));
            seen.push(v[0][0]);
            climber.tell(&[o]);
        }
        assert_eq!(seen.len(), 6);
        assert_eq!(climber.current().unwrap().config, vec![3]);
    }

    #[test]
    fn a_batch_holds_distinct_unevaluated_neighbours_and_moves_to_the_best() {
        let space = line(10);
        let mut rng = Rng::seed_from_u64(5);
        let mut history = History::new();
        let f = |c: &[u32]| Some((f64::from(c[0]) - 7.0).abs());
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        climber.start_at(vec![0]);
        let Climb::Propose(start) = climber.ask(&space, &history, 4, &mut rng) else {
            panic!()
        };
        let o = observe(&mut history, &start[0], f(&start[0]));
        climber.tell(&[o]);
        let Climb::Propose(batch) = climber.ask(&space, &history, 4, &mut rng) else {
            panic!()
        };
        assert_eq!(batch.len(), 4);
        let unique: std::collections::BTreeSet<_> = batch.iter().collect();
        assert_eq!(unique.len(), 4);
        let obs: Vec<_> = batch
            .iter()
            .map(|c| observe(&mut history, c, f(c)))
            .collect();
        climber.tell(&obs);
        let best = batch
            .iter()
            .min_by(|a, b| f(a).partial_cmp(&f(b)).unwrap())
            .unwrap();
        assert_eq!(&climber.current().unwrap().config, best);
    }

    #[test]
    fn mls_restarts_at_local_optima_and_covers_the_space() {
        let space = line(20);
        let mut mls = MultiStartLocalSearch::new(Neighbourhood::StrictlyAdjacent, true, true, 1);
        let run = test_support::run(&mut mls, &space, two_basins, 100, 4);
        assert_eq!(run.stop, ktune_core::StopReason::SpaceExhausted);
        assert_eq!(run.records.len(), 20);
        // Both basins were climbed: the global optimum is found.
        assert_eq!(run.best().unwrap().config, vec![15]);
        // After the first local optimum the next proposal is not one of its neighbours.
        let values: Vec<u32> = run.records.iter().map(|r| r.config[0]).collect();
        let first_opt = if values[0] < 10 { 5 } else { 15 };
        let i = values.iter().position(|&v| v == first_opt).unwrap();
        let after = &values[i + 1..];
        let j = after
            .iter()
            .position(|&v| v.abs_diff(first_opt) > 1)
            .unwrap();
        assert!(j <= 2, "{values:?}");
    }

    #[test]
    fn each_climb_starts_from_the_best_of_its_random_sample() {
        let space = line(100);
        let f = |c: &[u32]| (!c[0].is_multiple_of(7)).then_some(f64::from(c[0]));
        for seed in 0..10 {
            let mut mls =
                MultiStartLocalSearch::new(Neighbourhood::StrictlyAdjacent, true, true, 5);
            let run = test_support::run(&mut mls, &space, f, 6, seed);
            let xs: Vec<u32> = run.records.iter().map(|r| r.config[0]).collect();
            let best = xs[..5]
                .iter()
                .copied()
                .filter(|&x| !x.is_multiple_of(7))
                .min()
                .unwrap_or(xs[0]);
            assert_eq!(xs[5].abs_diff(best), 1, "{xs:?}");
        }
        // The sample is drawn without repeats even when the space is smaller than it.
        let mut mls = MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, 50);
        let run = test_support::run(&mut mls, &line(7), f, 100, 0);
        assert_eq!(run.records.len(), 7);
        assert_eq!(run.stop, ktune_core::StopReason::SpaceExhausted);
    }

    #[test]
    fn mls_conforms_and_beats_random_on_a_smooth_landscape() {
        conforms("mls");
        conforms("mls:neighbour=adjacent:order=sequential");
        conforms("mls:restart=false:neighbour=strictly-adjacent");
        conforms("mls:kicks=10:kick_size=0.5:climb_patience=3");
        let space = constrained(30);
        let f =
            |c: &[u32]| Some((f64::from(c[0]) - 17.0).powi(2) + (f64::from(c[1]) - 5.0).powi(2));
        let mean = |spec: &str| {
            (0..20)
                .map(|seed| {
                    let (_, mut s) = crate::create_spec(spec).unwrap();
                    test_support::run(s.as_mut(), &space, f, 40, seed)
                        .best()
                        .and_then(|r| r.outcome.objective())
                        .unwrap()
                })
                .sum::<f64>()
                / 20.0
        };
        assert!(mean("mls") < mean("random"));
    }

    #[test]
    fn mls_options_are_validated() {
        let ok = |spec: &str| {
            crate::create_spec(spec)
                .map(|_| ())
                .map_err(|e| e.to_string())
        };
        assert!(ok("mls").is_ok());
        assert!(
            ok("multi_start_local_search:neighbor=adjacent:order=sequential:restart=false").is_ok()
        );
        assert!(ok("mls:neighbour=hamming").is_ok());
        let e = ok("mls:neighbour=diagonal").unwrap_err();
        assert!(e.contains("`neighbour`") && e.contains("diagonal"), "{e}");
        let e = ok("mls:order=backwards").unwrap_err();
        assert!(e.contains("`order`"), "{e}");
        assert!(ok("mls:restart=3").is_err());
        assert!(ok("mls:start_samples=1").is_ok());
        assert!(
            ok("mls:start_samples=0")
                .unwrap_err()
                .contains("`start_samples`")
        );
        assert!(ok("mls:popsize=3").unwrap_err().contains("popsize"));
        assert!(ok("mls:kicks=30:kick_size=0.2:climb_patience=4").is_ok());
        let e = ok("mls:kick_size=1.5").unwrap_err();
        assert!(e.contains("`kick_size`") && e.contains("1.5"), "{e}");
        assert!(ok("mls:kicks=-1").unwrap_err().contains("kicks"));
        assert!(ok("mls:climb_patience=-2").is_err());
    }

    #[test]
    #[ignore = "timing; run with --release -- --ignored --nocapture"]
    fn overhead_per_suggestion_on_dedispersion() {
        for spec in [
            "mls",
            "mls:neighbour=adjacent",
            "greedy_ils",
            "greedy_ils:neighbour=adjacent",
            "simulated_annealing",
            "simulated_annealing:neighbour=adjacent",
        ] {
            for budget in [1000, 11130] {
                if let Some(us) = overhead_us(spec, budget, 3) {
                    println!("{spec:<40} budget {budget:>5}: {us:8.1} µs per suggestion");
                }
            }
        }
    }
}
