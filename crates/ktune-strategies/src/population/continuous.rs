//! The machinery of the continuous swarms (PSO, firefly): the ε-spaced encoding of the
//! search space, Algorithm 2's constraint-aware repair of a point to a valid configuration,
//! the bookkeeping of a population's evaluations and its fresh re-seeding.

use ktune_core::{History, Observation, Rng};
use ktune_space::{Configuration, DistinctSampler, Encoder, Encoding, Neighbourhood, SearchSpace};
use rand::RngExt;

/// An observed value as the swarms use it: failures and NaN are `None` (the worst).
pub(crate) fn value_of(o: &Observation) -> Option<f64> {
    o.value.filter(|v| !v.is_nan())
}

/// Which rule of the repair chose the configuration to evaluate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Repair {
    /// The snapped point was valid.
    Snapped,
    /// The closest strictly-adjacent neighbour of the snapped point.
    StrictlyAdjacent,
    /// The closest adjacent neighbour.
    Adjacent,
    /// The closest Hamming neighbour.
    Hamming,
    /// None of the three neighbourhoods had a valid configuration: the valid configuration
    /// nearest to the position (an addition to Algorithm 2, which returns nothing here and
    /// leaves Kernel Tuner to penalise the position without evaluating anything).
    Nearest,
}

/// The feasible tuples of one constrained group, sorted lexicographically, for fast
/// closest-in-a-box searches (a trie walked by binary search).
#[derive(Clone, Debug)]
struct GroupIndex {
    /// Global parameter indices of the group.
    params: Vec<usize>,
    /// Rows of `params.len()` value indices each, sorted lexicographically.
    rows: Vec<u32>,
    /// Per parameter, the sorted distinct value indices that occur in some row.
    occurring: Vec<Vec<u32>>,
}

impl GroupIndex {
    fn k(&self) -> usize {
        self.params.len()
    }

    fn len(&self) -> usize {
        self.rows.len() / self.k()
    }

    fn cell(&self, row: usize, level: usize) -> u32 {
        self.rows[row * self.k() + level]
    }

    /// The rows in `lo..hi` (which share their first `level` values) whose value at `level`
    /// is `v`.
    fn equal_range(&self, level: usize, lo: usize, hi: usize, v: u32) -> (usize, usize) {
        let first = |pred: &dyn Fn(u32) -> bool| {
            let (mut a, mut b) = (lo, hi);
            while a < b {
                let m = a + (b - a) / 2;
                if pred(self.cell(m, level)) {
                    a = m + 1;
                } else {
                    b = m;
                }
            }
            a
        };
        (first(&|c| c < v), first(&|c| c <= v))
    }

    /// Whether the group's part of `config` is feasible.
    fn contains(&self, config: &[u32]) -> bool {
        let (mut lo, mut hi) = (0, self.len());
        for (level, &p) in self.params.iter().enumerate() {
            (lo, hi) = self.equal_range(level, lo, hi, config[p]);
            if lo == hi {
                return false;
            }
        }
        true
    }

    /// The row closest to the position, among rows whose value at every level is one of
    /// `allowed[level]` (pairs of squared coordinate distance and value index, sorted
    /// ascending), by branch and bound; ties go to the first found.
    fn closest(&self, allowed: &[Vec<(f64, u32)>]) -> Option<usize> {
        let mut best = (f64::INFINITY, None);
        self.search(0, 0, self.len(), 0.0, allowed, &mut best);
        best.1
    }

    fn search(
        &self,
        level: usize,
        lo: usize,
        hi: usize,
        partial: f64,
        allowed: &[Vec<(f64, u32)>],
        best: &mut (f64, Option<usize>),
    ) {
        if level == self.k() {
            if partial < best.0 {
                *best = (partial, Some(lo));
            }
            return;
        }
        for &(d, v) in &allowed[level] {
            let p = partial + d;
            if p >= best.0 {
                break;
            }
            let (a, b) = self.equal_range(level, lo, hi, v);
            if a < b {
                self.search(level + 1, a, b, p, allowed, best);
            }
        }
    }
}

/// The ε-spaced continuous view of a search space: bounds, snapping and the constraint-aware
/// repair of Algorithm 2.
#[derive(Clone, Debug)]
pub(crate) struct Continuous {
    encoder: Encoder,
    /// Lower bound of each dimension (0).
    pub(crate) lo: Vec<f64>,
    /// Upper bound of each dimension (`m_d ε`).
    pub(crate) hi: Vec<f64>,
    /// The groups that reject some tuple (groups whose every tuple is valid never need repair).
    groups: Vec<GroupIndex>,
    /// Whether `groups` was built.
    repairable: bool,
}

impl Continuous {
    /// The view of `space`; with `repair`, ready to repair (it enumerates each constrained
    /// group's tuples once), else for snapping only.
    pub(crate) fn new(space: &SearchSpace, repair: bool) -> Continuous {
        let encoder = space.encoder(Encoding::EpsSpaced);
        let (lo, hi) = encoder.bounds().iter().copied().unzip();
        let infos = space.groups();
        // Ranks combine the groups' local ranks by mixed radix, the first group slowest.
        let mut strides = vec![1u64; infos.len()];
        for g in (0..infos.len().saturating_sub(1)).rev() {
            strides[g] = strides[g + 1] * infos[g + 1].size;
        }
        let mut groups = Vec::new();
        let mut buf = vec![0u32; space.dims()];
        for (info, &stride) in infos.iter().zip(&strides) {
            if !repair || info.size as f64 >= info.cartesian_size {
                continue;
            }
            let params: Vec<usize> = info
                .params
                .iter()
                .map(|n| space.param_index(n).expect("a group names its parameters"))
                .collect();
            let mut tuples: Vec<Vec<u32>> = (0..info.size)
                .map(|r| {
                    space.write_configuration(r * stride, &mut buf);
                    params.iter().map(|&p| buf[p]).collect()
                })
                .collect();
            tuples.sort_unstable();
            let occurring = (0..params.len())
                .map(|l| {
                    let mut v: Vec<u32> = tuples.iter().map(|t| t[l]).collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .collect();
            groups.push(GroupIndex {
                params,
                rows: tuples.concat(),
                occurring,
            });
        }
        Continuous {
            encoder,
            lo,
            hi,
            groups,
            repairable: repair,
        }
    }

    /// Number of dimensions.
    pub(crate) fn dims(&self) -> usize {
        self.lo.len()
    }

    /// The continuous coordinates of a configuration.
    pub(crate) fn encode(&self, config: &[u32]) -> Vec<f64> {
        self.encoder.encode(config)
    }

    /// The nearest discrete point (possibly invalid).
    pub(crate) fn snap(&self, x: &[f64]) -> Configuration {
        self.encoder.decode(x)
    }

    /// A uniformly random position inside the bounds.
    pub(crate) fn uniform(&self, rng: &mut Rng) -> Vec<f64> {
        self.lo
            .iter()
            .zip(&self.hi)
            .map(|(&l, &h)| l + rng.random::<f64>() * (h - l))
            .collect()
    }

    /// Clips `x` into the bounds.
    pub(crate) fn clip(&self, x: &mut [f64]) {
        for ((v, &l), &h) in x.iter_mut().zip(&self.lo).zip(&self.hi) {
            *v = v.clamp(l, h);
        }
    }

    /// Squared Euclidean distance between `x` and the coordinates of `config`.
    pub(crate) fn distance2(&self, x: &[f64], config: &[u32]) -> f64 {
        x.iter()
            .zip(config)
            .enumerate()
            .map(|(d, (&v, &i))| {
                let t = self.encoder.coordinate(d, i) - v;
                t * t
            })
            .sum()
    }

    /// The evaluations of the positions `xs` (each position itself is left alone): with
    /// `aware` and `repair`, each snapped point repaired by Algorithm 2; with `aware` alone, a
    /// snapped point that violates the constraints is a failure at no cost, never proposed
    /// (Kernel Tuner 1.5 as its benchmarks run it: its `CostFunc` repairs only when the user
    /// passes `constraint_aware` explicitly, and otherwise scores an invalid point as the worst
    /// without evaluating anything); unaware, the snapped point is proposed as it is.
    pub(crate) fn pending<'a>(
        &self,
        space: &SearchSpace,
        xs: impl IntoIterator<Item = &'a [f64]>,
        aware: bool,
        repair: bool,
    ) -> Pending {
        let configs: Vec<Configuration> = xs
            .into_iter()
            .map(|x| {
                if aware && repair {
                    self.repair(space, x).0
                } else {
                    self.snap(x)
                }
            })
            .collect();
        let mut pending = Pending::new(configs);
        if aware && !repair {
            for (i, c) in pending.configs.iter().enumerate() {
                if !space.contains(c) {
                    pending.values[i] = Some(None);
                    pending.handed[i] = true;
                }
            }
        }
        pending
    }

    /// Algorithm 2: snaps `x`; if the point is invalid, the valid configuration closest to `x`
    /// (Euclidean distance in the ε-spaced space) among the first non-empty set of its
    /// strictly-adjacent, adjacent and Hamming neighbours; if all three are empty, the valid
    /// configuration nearest to `x`. Returns the rule that decided.
    ///
    /// Both adjacency neighbourhoods are products of per-group sets, and the squared distance
    /// adds up over groups, so the closest neighbour keeps the snapped tuple of every valid
    /// group (the per-coordinate nearest values) and takes the closest tuple in the box of
    /// every invalid group, found by branch and bound over that group's sorted tuples instead
    /// of listing the whole product.
    pub(crate) fn repair(&self, space: &SearchSpace, x: &[f64]) -> (Configuration, Repair) {
        assert!(self.repairable, "this view was built without repair");
        let snapped = self.snap(x);
        if space.contains(&snapped) {
            return (snapped, Repair::Snapped);
        }
        let invalid: Vec<&GroupIndex> = self
            .groups
            .iter()
            .filter(|g| !g.contains(&snapped))
            .collect();
        let d2 = |p: usize, v: u32| {
            let t = self.encoder.coordinate(p, v) - x[p];
            t * t
        };
        let sorted = |mut a: Vec<(f64, u32)>| {
            a.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            a
        };
        for (rule, adjacent) in [(Repair::StrictlyAdjacent, false), (Repair::Adjacent, true)] {
            let mut out = snapped.clone();
            let found = invalid.iter().all(|g| {
                let allowed: Vec<Vec<(f64, u32)>> = g
                    .params
                    .iter()
                    .zip(&g.occurring)
                    .map(|(&p, occ)| {
                        let t = snapped[p];
                        let m = space.params()[p].len() as u32;
                        let (below, above) = if adjacent {
                            let i = occ.partition_point(|&o| o < t);
                            let j = occ.partition_point(|&o| o <= t);
                            (i.checked_sub(1).map(|i| occ[i]), occ.get(j).copied())
                        } else {
                            (t.checked_sub(1), (t + 1 < m).then_some(t + 1))
                        };
                        sorted(
                            [below, Some(t), above]
                                .into_iter()
                                .flatten()
                                .map(|v| (d2(p, v), v))
                                .collect(),
                        )
                    })
                    .collect();
                match g.closest(&allowed) {
                    Some(r) => {
                        for (l, &p) in g.params.iter().enumerate() {
                            out[p] = g.cell(r, l);
                        }
                        true
                    }
                    None => false,
                }
            });
            if found {
                return (out, rule);
            }
        }
        let hamming = space.neighbours(&snapped, Neighbourhood::Hamming);
        let mut best: Option<(f64, &Configuration)> = None;
        for c in &hamming {
            let d = self.distance2(x, c);
            if best.is_none_or(|(b, _)| d < b) {
                best = Some((d, c));
            }
        }
        if let Some((_, c)) = best {
            return (c.clone(), Repair::Hamming);
        }
        // Beyond Algorithm 2: the nearest valid configuration, group by group.
        let mut out = snapped;
        for g in &invalid {
            let allowed: Vec<Vec<(f64, u32)>> = g
                .params
                .iter()
                .map(|&p| {
                    sorted(
                        (0..space.params()[p].len() as u32)
                            .map(|v| (d2(p, v), v))
                            .collect(),
                    )
                })
                .collect();
            if let Some(r) = g.closest(&allowed) {
                for (l, &p) in g.params.iter().enumerate() {
                    out[p] = g.cell(r, l);
                }
            }
        }
        (out, Repair::Nearest)
    }
}

/// The evaluations one step of a swarm waits for: configurations, each resolved from the
/// history (memoised, no cost) or from what `tell` reports, matched by configuration.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pending {
    pub(crate) configs: Vec<Configuration>,
    /// `Some(value)` once known (`value` itself `None` for a failure).
    pub(crate) values: Vec<Option<Option<f64>>>,
    handed: Vec<bool>,
    /// How many were handed out to be evaluated.
    pub(crate) fresh: usize,
}

impl Pending {
    /// Waits for `configs`.
    pub(crate) fn new(configs: Vec<Configuration>) -> Pending {
        let n = configs.len();
        Pending {
            configs,
            values: vec![None; n],
            handed: vec![false; n],
            fresh: 0,
        }
    }

    /// Resolves whatever the history already holds.
    pub(crate) fn resolve(&mut self, history: &History) {
        for (c, v) in self.configs.iter().zip(&mut self.values) {
            if v.is_none()
                && let Some(o) = history.get(c)
            {
                *v = Some(value_of(o));
            }
        }
    }

    /// Up to `n` unresolved configurations not handed out yet (each distinct configuration
    /// once); when every unresolved one was handed out already (its result never came back),
    /// they are handed out again.
    pub(crate) fn hand_out(&mut self, n: usize) -> Vec<Configuration> {
        let mut out: Vec<Configuration> = Vec::new();
        for again in [false, true] {
            for i in 0..self.configs.len() {
                if out.len() >= n {
                    break;
                }
                if self.values[i].is_none()
                    && self.handed[i] == again
                    && !out.contains(&self.configs[i])
                {
                    if !self.handed[i] {
                        self.fresh += 1;
                    }
                    self.handed[i] = true;
                    out.push(self.configs[i].clone());
                }
            }
            if !out.is_empty() {
                break;
            }
        }
        // Mark duplicates of what was handed out as handed too.
        for i in 0..self.configs.len() {
            if self.values[i].is_none() && out.contains(&self.configs[i]) {
                self.handed[i] = true;
            }
        }
        out
    }

    /// Records reported observations.
    pub(crate) fn tell(&mut self, observations: &[Observation]) {
        for o in observations {
            for (c, v) in self.configs.iter().zip(&mut self.values) {
                if v.is_none() && *c == o.config {
                    *v = Some(value_of(o));
                }
            }
        }
    }

    /// The value of request `i` (a failure when unknown).
    pub(crate) fn value(&self, i: usize) -> Option<f64> {
        self.values[i].flatten()
    }
}

/// A source of valid configurations that were never evaluated nor handed out by it: the
/// initial swarms and the diversification of stalled ones.
#[derive(Clone, Debug)]
pub(crate) struct Fresh {
    sampler: DistinctSampler,
    seen: usize,
}

impl Fresh {
    /// Over the whole space.
    pub(crate) fn new(space: &SearchSpace) -> Fresh {
        Fresh {
            sampler: DistinctSampler::new(space.size()),
            seen: 0,
        }
    }

    /// Excludes everything evaluated since the last call.
    pub(crate) fn sync(&mut self, space: &SearchSpace, history: &History) {
        for o in &history.observations()[self.seen.min(history.len())..] {
            if let Some(r) = space.rank(&o.config) {
                self.sampler.exclude(r);
            }
        }
        self.seen = history.len();
    }

    /// A uniformly random configuration from the rest of the space (`None` when none is left).
    pub(crate) fn draw(&mut self, space: &SearchSpace, rng: &mut Rng) -> Option<Configuration> {
        self.sampler.next_rank(rng).map(|r| space.configuration(r))
    }

    /// A starting position: a fresh valid configuration when constraint-aware (falling back to
    /// a uniform position when none is left), a uniform position otherwise.
    pub(crate) fn position(
        &mut self,
        space: &SearchSpace,
        view: &Continuous,
        aware: bool,
        rng: &mut Rng,
    ) -> Vec<f64> {
        if aware && let Some(c) = self.draw(space, rng) {
            return view.encode(&c);
        }
        view.uniform(rng)
    }

    /// A position to re-seed a stalled particle at, one that will propose something new: a
    /// fresh valid configuration when constraint-aware; otherwise a uniform position whose
    /// snapped point is not evaluated (a fresh valid configuration after 32 tries). `None`
    /// when nothing new is left.
    pub(crate) fn reseed(
        &mut self,
        space: &SearchSpace,
        view: &Continuous,
        history: &History,
        aware: bool,
        rng: &mut Rng,
    ) -> Option<Vec<f64>> {
        if !aware {
            for _ in 0..32 {
                let x = view.uniform(rng);
                if !history.contains(&view.snap(&x)) {
                    return Some(x);
                }
            }
        }
        self.draw(space, rng).map(|c| view.encode(&c))
    }
}

/// How many iterations in a row may evaluate only memoised configurations before the swarm is
/// diversified (every particle but the best re-seeded at a fresh configuration). Not in the
/// paper or Kernel Tuner, where a converged swarm re-evaluates memoised points until
/// `maxiter`; here that would spin without proposing anything.
pub(crate) const STALL_ITERATIONS: usize = 3;

/// The most swarm steps one `ask` performs before it gives up on finding something new for
/// this round.
pub(crate) const MAX_STEPS_PER_ASK: usize = 64;

/// What to propose when a round found nothing new: an evaluated configuration (a free repeat,
/// so the round is stale rather than the end of the run), or nothing when nothing is left.
pub(crate) fn stale_proposal(history: &History) -> Vec<Configuration> {
    history
        .best()
        .or(history.observations().first())
        .map(|o| vec![o.config.clone()])
        .unwrap_or_default()
}
