//! The hill climber every local search shares: first (or best) improvement over a
//! neighbourhood, as an ask/tell state machine over memoised values.

use std::sync::Arc;

use ktune_core::{History, Observation, Rng};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rand::seq::SliceRandom;
use rustc_hash::FxHashMap;

use crate::better;

/// The order in which a hill climber looks at the neighbours of its configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// A fresh random permutation at every configuration (Kernel Tuner's `randomize`).
    Random,
    /// The space's order: parameter by parameter, values in declaration order.
    Sequential,
}

impl crate::options::Choice for Order {
    const NAMES: &'static [(&'static str, Self)] =
        &[("random", Order::Random), ("sequential", Order::Sequential)];
}

/// What orders a climb's neighbours when a model of the objective is at hand (`auto`'s
/// model guiding its local search): a score per configuration, smaller first (evaluated
/// neighbours, which cost nothing, still come before any of them). `None`: no opinion yet,
/// the climber's own order stands.
pub(crate) trait Guide {
    /// The scores of `configs`, in order.
    fn promise(&self, space: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>>;

    /// Whether `config` is expected to fail so surely that the climb passes it over as if it
    /// had failed (a guide that knows nothing of failures: never).
    fn rules_out(&self, _config: &[u32]) -> bool {
        false
    }
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
                    // Passed over as a failure would be: it cannot improve on the climb.
                    None if guide.is_some_and(|g| g.rules_out(&self.buf)) => {}
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
