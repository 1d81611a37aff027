//! Differential evolution in value-index space, constraint-aware.
//!
//! A population of `popsize` × (number of parameters with more than one value) configurations
//! (at most the size of the space) starts as a Latin hypercube sample of valid configurations.
//! Every generation builds one trial per member `x_i`: a mutant `v_i` is formed from the
//! value indices of other members (and of the best configuration found, for the `best`,
//! `currenttobest` and `randtobest` methods) with the differential weight `F`, rounded and
//! clipped to each parameter's index range; binomial or exponential crossover with rate `CR`
//! mixes it with `x_i` into `u_i`, which, when it violates the constraints, is repaired to the
//! valid configuration nearest by index distance (ties broken at random, the draw remembered
//! per trial). The trials are
//! evaluated as one batch; `u_i` replaces `x_i` when `f(u_i) <= f(x_i)` and `u_i` is not
//! already in the population (a failed configuration counts as worst and never replaces a
//! member), and the best is updated from the replacements. When the population has not
//! changed for two consecutive generations (or after `maxiter` generations) it is
//! reinitialised with random configurations that were never evaluated, keeping the best. The
//! constraint-unaware variant (`constraint_aware = false`) draws its initial population
//! uniformly from the Cartesian product of the domains and skips the repair, so invalid trials
//! cost an evaluation and fail.
//!
//! ## Beside Kernel Tuner 1.5's `diff_evo` (read line by line for issue 50)
//! The mutation variants and crossovers follow it; the defaults do not (below). Where they
//! differ:
//! - **The initial Latin hypercube.** Kernel Tuner snaps each invalid point to the first of
//!   the nearest valid configurations in its enumeration order (`np.argmin`), and stratifies
//!   over the index ranges that occur among valid configurations; here ties are broken at
//!   random and the strata span each parameter's whole domain. On a GEMM-like space whose
//!   enumeration starts at the largest values, Kernel Tuner's start leans towards large
//!   tiles: an accidental prior that helped on synthetic GEMM stand-ins (docs/benchmarks/
//!   peers.md, issue 50), not followed here.
//! - **Duplicate trials** within a generation are redrawn there (a random sample after 20
//!   tries) and collapse into one evaluation here; a repair's random tie is drawn on every
//!   call there and remembered per trial here.
//! - **Restarts.** After two unchanged generations the population restarts here from the best
//!   and fresh random configurations; in Kernel Tuner the counter never resets, and every
//!   later generation's trials are a fresh Latin hypercube sample. Kernel Tuner caps
//!   `maxiter` at the space's size and stops; here `maxiter` restarts too.
//! - The population counts the parameters with more than one declared value; Kernel Tuner
//!   those that vary among the valid configurations.
//! - **Defaults.** The paper's Table IV (popsize 16, F 0.7, CR 0.6, best1bin) gives a
//!   population of 16 × dimensions, 160 to 240 members on the 10- and 15-parameter spaces:
//!   more than a budget of 220 evaluations can evolve. Here popsize 4, F 1.0, CR 0.9 (still
//!   best1bin), chosen by `ktune bench tune-strategy diff_evo` cross-validated over the 12
//!   shared spaces and five stand-ins for unseen ones: 0.326 → 0.433 on the shared spaces and
//!   0.353 → 0.572 on the stand-ins (seeds 0-49), 0.288 → 0.509 and 0.322 → 0.553 on seeds
//!   50-99 (docs/benchmarks/peers.md, issue 50).
//!
//! ## References
//!
//! Constraint-aware EA paper (Kernel Tuner's constraint-aware optimisation algorithms),
//! section IV-B and Algorithm 1 (differential evolution), Table IV (hyperparameters:
//! popsize 16, differential weight 0.7, crossover rate 0.6, method best1bin); Storn and Price,
//! "Differential Evolution", J. Global Optimization 11 (1997), for the mutation variants and
//! the exponential crossover.

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, SearchSpace};
use rand::RngExt;
use rustc_hash::{FxHashMap, FxHashSet};

const NAME: &str = "diff_evo";

/// Every accepted `method`, as Kernel Tuner names them.
const METHODS: &[&str] = &[
    "best1bin",
    "rand1bin",
    "best2bin",
    "rand2bin",
    "best1exp",
    "rand1exp",
    "best2exp",
    "rand2exp",
    "currenttobest1bin",
    "currenttobest1exp",
    "randtobest1bin",
    "randtobest1exp",
];

/// How many generations in a row one `ask` may complete without finding a single
/// configuration that was not evaluated yet (all trials memoised) before it forces a
/// reinitialisation. Not in the paper: there such generations are free but still take time,
/// and a population that keeps swapping equal-valued members could cycle without end.
const MAX_MEMOISED_GENERATIONS: usize = 10;

/// How many repairs are remembered before the memory is cleared.
const MAX_REMEMBERED_REPAIRS: usize = 1 << 16;

/// The mutation operator (the `rand1`/`best1`/... part of `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mutation {
    /// `r1 + F (r2 - r3)`.
    Rand1,
    /// `best + F (r1 - r2)`.
    Best1,
    /// `r1 + F (r2 - r3) + F (r4 - r5)`.
    Rand2,
    /// `best + F (r1 - r2) + F (r3 - r4)`.
    Best2,
    /// `x_i + F (best - x_i) + F (r1 - r2)`.
    CurrentToBest1,
    /// `r1 + F (best - r1) + F (r2 - r3)`.
    RandToBest1,
}

impl Mutation {
    /// How many random members (other than `x_i`) the operator uses.
    fn draws(self) -> usize {
        match self {
            Mutation::Best1 | Mutation::CurrentToBest1 => 2,
            Mutation::Rand1 | Mutation::RandToBest1 => 3,
            Mutation::Best2 => 4,
            Mutation::Rand2 => 5,
        }
    }
}

/// The crossover operator (the `bin`/`exp` suffix of `method`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Crossover {
    /// Each coordinate from the mutant with probability `CR`, and always at `j_rand`.
    Binomial,
    /// A circular run of coordinates from the mutant, starting at a random one, continued
    /// while uniform draws stay below `CR`.
    Exponential,
}

/// A `method`: the mutation and the crossover, read from Kernel Tuner's name (`best1bin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeMethod {
    mutation: Mutation,
    crossover: Crossover,
}

impl<'de> serde::Deserialize<'de> for DeMethod {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        parse_method(&name)
            .map(|(mutation, crossover)| DeMethod {
                mutation,
                crossover,
            })
            .ok_or_else(|| {
                serde::de::Error::custom(format!("must be one of {}", METHODS.join(", ")))
            })
    }
}

impl std::fmt::Display for DeMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = METHODS
            .iter()
            .find(|m| parse_method(m) == Some((self.mutation, self.crossover)))
            .unwrap_or(&"?");
        f.write_str(name)
    }
}

fn parse_method(method: &str) -> Option<(Mutation, Crossover)> {
    let (head, crossover) = if let Some(h) = method.strip_suffix("bin") {
        (h, Crossover::Binomial)
    } else if let Some(h) = method.strip_suffix("exp") {
        (h, Crossover::Exponential)
    } else {
        return None;
    };
    let mutation = match head {
        "rand1" => Mutation::Rand1,
        "best1" => Mutation::Best1,
        "rand2" => Mutation::Rand2,
        "best2" => Mutation::Best2,
        "currenttobest1" => Mutation::CurrentToBest1,
        "randtobest1" => Mutation::RandToBest1,
        _ => return None,
    };
    Some((mutation, crossover))
}

/// The options of [`DifferentialEvolution`] (see [`ENTRY`] for their documentation).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiffEvoOptions {
    /// Population size (per dimension when `popsize_times_dimensions`).
    pub popsize: usize,
    /// Multiply `popsize` by the number of parameters with more than one value.
    pub popsize_times_dimensions: bool,
    /// Generations before the population is reinitialised (keeping the best).
    pub maxiter: u64,
    /// The differential weight.
    #[serde(rename = "F", alias = "f")]
    pub f: f64,
    /// The crossover rate.
    #[serde(rename = "CR", alias = "cr")]
    pub cr: f64,
    /// Mutation and crossover, e.g. `best1bin`.
    pub method: DeMethod,
    /// Keep every proposal valid (Latin hypercube start, nearest-valid repair).
    pub constraint_aware: bool,
}

impl Default for DiffEvoOptions {
    fn default() -> Self {
        DiffEvoOptions {
            popsize: 4,
            popsize_times_dimensions: true,
            maxiter: 1_000_000_000_000_000,
            f: 1.0,
            cr: 0.9,
            method: DeMethod {
                mutation: Mutation::Best1,
                crossover: Crossover::Binomial,
            },
            constraint_aware: true,
        }
    }
}

/// An evaluated population member (`value` is `None` when it failed).
#[derive(Clone, Debug, PartialEq)]
struct Member {
    config: Configuration,
    value: Option<f64>,
}

/// What the current batch of candidates is.
#[derive(Clone, Debug, PartialEq)]
enum Phase {
    /// A fresh population: on completion it becomes `keep` followed by the candidates.
    Fresh { keep: Vec<Member> },
    /// Trial vectors, one per population member, for selection.
    Trials,
}

/// Differential evolution (constraint-aware EA paper, Algorithm 1) as an ask/tell state
/// machine: one generation of trials is handed out across `ask` calls, selection runs once
/// every trial has been told.
#[derive(Clone, Debug)]
pub struct DifferentialEvolution {
    opts: DiffEvoOptions,
    mutation: Mutation,
    crossover: Crossover,
    /// Target population size (0 until the first `ask`).
    target: usize,
    /// Largest value index of every parameter.
    upper: Vec<u32>,
    /// The parameters with more than one value (the dimensions crossover works on).
    active: Vec<usize>,
    population: Vec<Member>,
    best: Option<Member>,
    phase: Phase,
    candidates: Vec<Configuration>,
    /// `Some(value)` once a candidate's observation is known.
    results: Vec<Option<Option<f64>>>,
    by_config: FxHashMap<Configuration, Vec<usize>>,
    /// Handed out and not yet told.
    outstanding: FxHashSet<Configuration>,
    next: usize,
    /// Completed selection generations since the last (re)initialisation.
    generation: u64,
    /// Consecutive generations in which the population did not change.
    unchanged: u32,
    exhausted: bool,
    /// Repairs already computed: invalid trial -> its repaired configuration.
    repairs: FxHashMap<Configuration, Configuration>,
}

crate::registry::checked_by!(DiffEvoOptions => DifferentialEvolution);

impl DifferentialEvolution {
    /// A new instance with options that passed [`DiffEvoOptions::check`].
    fn checked(opts: DiffEvoOptions) -> DifferentialEvolution {
        let DeMethod {
            mutation,
            crossover,
        } = opts.method;
        DifferentialEvolution {
            opts,
            mutation,
            crossover,
            target: 0,
            upper: Vec::new(),
            active: Vec::new(),
            population: Vec::new(),
            best: None,
            phase: Phase::Trials,
            candidates: Vec::new(),
            results: Vec::new(),
            by_config: FxHashMap::default(),
            outstanding: FxHashSet::default(),
            next: 0,
            generation: 0,
            unchanged: 0,
            exhausted: false,
            repairs: FxHashMap::default(),
        }
    }

    /// Sizes the population and sets up the initial one.
    fn start(&mut self, space: &SearchSpace, rng: &mut Rng) {
        self.upper = space
            .params()
            .iter()
            .map(|p| p.len().saturating_sub(1) as u32)
            .collect();
        self.active = (0..self.upper.len())
            .filter(|&d| self.upper[d] > 0)
            .collect();
        let mut n = self.opts.popsize;
        if self.opts.popsize_times_dimensions {
            n = n.saturating_mul(self.active.len().max(1));
        }
        self.target = n
            .min(usize::try_from(space.size()).unwrap_or(usize::MAX))
            .max(1);
        let initial = if self.opts.constraint_aware {
            space.latin_hypercube(self.target, rng)
        } else {
            self.cartesian_samples(self.target, &|_| false, rng)
        };
        self.set_candidates(Phase::Fresh { keep: Vec::new() }, initial);
    }

    /// Up to `n` distinct configurations drawn uniformly from the Cartesian product of the
    /// domains (each index uniform), skipping those `skip` rejects (bounded tries).
    fn cartesian_samples(
        &self,
        n: usize,
        skip: &dyn Fn(&[u32]) -> bool,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let mut seen = FxHashSet::default();
        let mut out = Vec::with_capacity(n);
        for _ in 0..n.saturating_mul(20) {
            if out.len() >= n {
                break;
            }
            let c: Configuration = self
                .upper
                .iter()
                .map(|&u| rng.random_range(0..=u))
                .collect();
            if !skip(&c) && seen.insert(c.clone()) {
                out.push(c);
            }
        }
        out
    }

    fn set_candidates(&mut self, phase: Phase, candidates: Vec<Configuration>) {
        self.by_config.clear();
        for (i, c) in candidates.iter().enumerate() {
            self.by_config.entry(c.clone()).or_default().push(i);
        }
        self.results = vec![None; candidates.len()];
        self.candidates = candidates;
        self.outstanding.clear();
        self.next = 0;
        self.phase = phase;
    }

    fn resolve(&mut self, config: &[u32], value: Option<f64>) {
        if let Some(idx) = self.by_config.get(config) {
            for &i in idx {
                if self.results[i].is_none() {
                    self.results[i] = Some(value);
                }
            }
        }
        self.outstanding.remove(config);
    }

    /// Completes the current batch (population update or selection) and builds the next one.
    fn advance(&mut self, space: &SearchSpace, history: &History, rng: &mut Rng, force: bool) {
        let evaluated: Vec<Member> = self
            .candidates
            .drain(..)
            .zip(self.results.drain(..))
            .map(|(config, r)| {
                let value = r.unwrap_or_else(|| history.get(&config).and_then(|o| o.value));
                Member { config, value }
            })
            .collect();
        let restart = match std::mem::replace(&mut self.phase, Phase::Trials) {
            Phase::Fresh { keep } => {
                self.population = keep;
                for m in evaluated {
                    if let Some(v) = m.value
                        && self
                            .best
                            .as_ref()
                            .and_then(|b| b.value)
                            .is_none_or(|b| v < b)
                    {
                        self.best = Some(m.clone());
                    }
                    self.population.push(m);
                }
                self.generation = 0;
                self.unchanged = 0;
                force
            }
            Phase::Trials => {
                let changed = self.select(evaluated);
                self.generation += 1;
                self.unchanged = if changed { 0 } else { self.unchanged + 1 };
                // The paper: no change "over two consecutive generations". Kernel Tuner 1.5.0
                // counts unchanged generations without resetting and restarts at more than
                // two, and then in every later generation; it also stops (rather than
                // restarts) after `min(maxiter, size)` generations.
                force || self.unchanged >= 2 || self.generation >= self.opts.maxiter
            }
        };
        if restart || self.population.is_empty() {
            self.reinitialise(space, history, rng);
        } else {
            let trials = self.trials(space, rng);
            self.set_candidates(Phase::Trials, trials);
        }
    }

    /// Selection (Algorithm 1, lines 6-10): `u_i` replaces `x_i` when it succeeded, is no
    /// worse (a failed `x_i` is worst) and is not in the population yet. Returns whether the
    /// population changed. Members are checked in order against the population as it is being
    /// updated, so two equal trials never both enter it.
    fn select(&mut self, trials: Vec<Member>) -> bool {
        let mut members: FxHashSet<Configuration> =
            self.population.iter().map(|m| m.config.clone()).collect();
        let mut changed = false;
        for (i, u) in trials.into_iter().enumerate().take(self.population.len()) {
            let Some(fu) = u.value else { continue };
            let x = &self.population[i];
            if x.value.is_some_and(|fx| fu > fx) || members.contains(&u.config) {
                continue;
            }
            members.remove(&x.config);
            members.insert(u.config.clone());
            if self
                .best
                .as_ref()
                .and_then(|b| b.value)
                .is_none_or(|b| fu <= b)
            {
                self.best = Some(u.clone());
            }
            self.population[i] = u;
            changed = true;
        }
        changed
    }

    /// A new random population of configurations never evaluated, keeping the best (section
    /// IV-B: "the population is reinitialized randomly"; Kernel Tuner draws a new Latin
    /// hypercube sample, which may repeat evaluated configurations, and offers it as trials).
    fn reinitialise(&mut self, space: &SearchSpace, history: &History, rng: &mut Rng) {
        let keep: Vec<Member> = self.best.iter().cloned().collect();
        let want = self.target.saturating_sub(keep.len()).max(1);
        let mut fresh = if self.opts.constraint_aware {
            Vec::new()
        } else {
            self.cartesian_samples(want, &|c| history.contains(c), rng)
        };
        if fresh.is_empty() {
            let mut sampler = crate::sampling::unevaluated(space, history.observations());
            fresh = (0..want)
                .map_while(|_| sampler.next_rank(rng))
                .map(|r| space.configuration(r))
                .collect();
        }
        if fresh.is_empty() {
            self.exhausted = true;
        }
        self.set_candidates(Phase::Fresh { keep }, fresh);
    }

    /// The nearest valid configuration to the invalid `trial` (Algorithm 1, lines 30-35),
    /// remembered per trial: a converged population keeps producing the same invalid trials,
    /// and each repair scans the trial's constraint group.
    fn repair(
        &mut self,
        space: &SearchSpace,
        trial: Configuration,
        rng: &mut Rng,
    ) -> Configuration {
        if let Some(r) = self.repairs.get(&trial) {
            return r.clone();
        }
        if self.repairs.len() >= MAX_REMEMBERED_REPAIRS {
            self.repairs.clear();
        }
        let repaired = space.repair_nearest(&trial, rng);
        self.repairs.insert(trial, repaired.clone());
        repaired
    }

    /// One trial per population member: mutation, crossover, repair (Algorithm 1, lines 3-5).
    fn trials(&mut self, space: &SearchSpace, rng: &mut Rng) -> Vec<Configuration> {
        let p = self.population.len();
        let k = self.mutation.draws();
        let mut picks = Vec::with_capacity(k);
        let mut out = Vec::with_capacity(p);
        for i in 0..p {
            draw_others(rng, p, i, k, &mut picks);
            let randoms: Vec<&[u32]> = picks
                .iter()
                .map(|&j| self.population[j].config.as_slice())
                .collect();
            let current = &self.population[i].config;
            // With no successful configuration yet there is no best: a random member stands in.
            let best = match &self.best {
                Some(b) => b.config.as_slice(),
                None => self.population[rng.random_range(0..p)].config.as_slice(),
            };
            let mutant = mutate(
                self.mutation,
                self.opts.f,
                current,
                best,
                &randoms,
                &self.upper,
            );
            let trial = crossover(
                self.crossover,
                self.opts.cr,
                current,
                &mutant,
                &self.active,
                rng,
            );
            out.push(if self.opts.constraint_aware && !space.contains(&trial) {
                self.repair(space, trial, rng)
            } else {
                trial
            });
        }
        out
    }
}

/// `k` random indices in `0..p` other than `i`, distinct when there are enough (Algorithm 1,
/// line 14), with replacement otherwise (as Kernel Tuner does); `i` itself when it is alone.
fn draw_others(rng: &mut Rng, p: usize, i: usize, k: usize, out: &mut Vec<usize>) {
    out.clear();
    if p <= 1 {
        out.resize(k, i);
        return;
    }
    let distinct = p > k;
    while out.len() < k {
        let j = rng.random_range(0..p - 1);
        let j = if j >= i { j + 1 } else { j };
        if !distinct || !out.contains(&j) {
            out.push(j);
        }
    }
}

/// The mutant of `current` in value-index space (Algorithm 1, lines 18-20): the operator's
/// formula per coordinate, rounded (half to even, as NumPy does) and clipped to
/// `0..=upper[d]`. `randoms` holds at least [`Mutation::draws`] vectors.
fn mutate(
    m: Mutation,
    f: f64,
    current: &[u32],
    best: &[u32],
    randoms: &[&[u32]],
    upper: &[u32],
) -> Configuration {
    (0..upper.len())
        .map(|d| {
            let x = |v: &[u32]| f64::from(v[d]);
            let r = |j: usize| x(randoms[j]);
            let v = match m {
                Mutation::Rand1 => r(0) + f * (r(1) - r(2)),
                Mutation::Best1 => x(best) + f * (r(0) - r(1)),
                Mutation::Rand2 => r(0) + f * (r(1) - r(2)) + f * (r(3) - r(4)),
                Mutation::Best2 => x(best) + f * (r(0) - r(1)) + f * (r(2) - r(3)),
                Mutation::CurrentToBest1 => {
                    x(current) + f * (x(best) - x(current)) + f * (r(0) - r(1))
                }
                Mutation::RandToBest1 => r(0) + f * (x(best) - r(0)) + f * (r(1) - r(2)),
            };
            v.round_ties_even().clamp(0.0, f64::from(upper[d])) as u32
        })
        .collect()
}

/// The trial from `target` and `mutant` over the dimensions in `active` (Algorithm 1, lines
/// 22-29 for binomial). Binomial: the paper's rule, `r < CR or j = j_rand` (Kernel Tuner
/// instead forces one random coordinate only when no draw fell below `CR`). Exponential:
/// Storn and Price's rule, a circular run starting at a random coordinate that always takes
/// the first one (Kernel Tuner's may take none).
fn crossover(
    kind: Crossover,
    cr: f64,
    target: &[u32],
    mutant: &[u32],
    active: &[usize],
    rng: &mut Rng,
) -> Configuration {
    let mut u = target.to_vec();
    let d = active.len();
    if d == 0 {
        return u;
    }
    match kind {
        Crossover::Binomial => {
            let j_rand = rng.random_range(0..d);
            for (k, &j) in active.iter().enumerate() {
                let r: f64 = rng.random();
                if r < cr || k == j_rand {
                    u[j] = mutant[j];
                }
            }
        }
        Crossover::Exponential => {
            let start = rng.random_range(0..d);
            let mut l = 0;
            loop {
                let j = active[(start + l) % d];
                u[j] = mutant[j];
                l += 1;
                if l >= d || rng.random::<f64>() >= cr {
                    break;
                }
            }
        }
    }
    u
}

impl Strategy for DifferentialEvolution {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        if n == 0 || space.size() == 0 {
            return Vec::new();
        }
        if self.target == 0 {
            self.start(space, rng);
        }
        let mut out = Vec::new();
        let mut memoised_generations = 0;
        loop {
            while out.len() < n && self.next < self.candidates.len() {
                let i = self.next;
                self.next += 1;
                if self.results[i].is_some() {
                    continue;
                }
                let c = self.candidates[i].clone();
                if let Some(o) = history.get(&c) {
                    // Already evaluated: its result is known, no need to propose it.
                    self.resolve(&c, o.value);
                } else if self.outstanding.insert(c.clone()) {
                    out.push(c);
                }
            }
            if !out.is_empty() || self.exhausted {
                return out;
            }
            // Everything of this batch is known: select and build the next one.
            memoised_generations += 1;
            let force = memoised_generations > MAX_MEMOISED_GENERATIONS;
            if force {
                memoised_generations = 0;
            }
            self.advance(space, history, rng, force);
        }
    }

    fn tell(&mut self, _: &SearchSpace, observations: &[Observation]) {
        for o in observations {
            self.resolve(&o.config, o.value);
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &["de", "differential_evolution"],
    about: "Differential evolution in value-index space: Latin hypercube start, mutation and crossover, repair to the nearest valid configuration, selection without duplicates, random restart when the population stalls (constraint-aware EA paper, Algorithm 1).",
    options: &OPTION_DOCS,
    tunable: &[
        crate::Tunable::new("popsize", &["2", "4", "8", "16"]),
        crate::Tunable::new("F", &["0.4", "0.7", "1.0"]),
        crate::Tunable::new("CR", &["0.3", "0.6", "0.9"]),
        crate::Tunable::new(
            "method",
            &["\"best1bin\"", "\"rand1bin\"", "\"currenttobest1bin\""],
        ),
    ],
    check: crate::registry::check::<DiffEvoOptions>,
};

const OPTION_DOCS: [crate::OptionDoc; 7] = [
    crate::OptionDoc::new("popsize", "4", "Population size, multiplied by the number of parameters with more than one value when `popsize_times_dimensions` (capped at the size of the space).").count(1, 100_000),
    crate::OptionDoc::new("popsize_times_dimensions", "true", "Multiply `popsize` by the number of parameters with more than one value."),
    crate::OptionDoc::new("maxiter", "1000000000000000", "Generations after which the population is reinitialised (keeping the best); Kernel Tuner's default, in effect no limit.").count(1, u64::MAX),
    crate::OptionDoc::new("F", "1.0", "Differential weight (mutation factor).").real(0.0, 2.0),
    crate::OptionDoc::new("CR", "0.9", "Crossover rate.").real(0.0, 1.0),
    crate::OptionDoc::new("method", "\"best1bin\"", "Mutation and crossover: `rand1`, `best1`, `rand2`, `best2`, `currenttobest1` or `randtobest1`, followed by `bin` (binomial) or `exp` (exponential)."),
    crate::OptionDoc::new("constraint_aware", "true", "Latin hypercube start over valid configurations and repair of invalid trials to the nearest valid one; `false` starts from the Cartesian product and lets invalid trials fail."),
];

#[cfg(test)]
mod tests;
