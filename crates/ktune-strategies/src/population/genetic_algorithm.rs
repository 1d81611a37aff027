//! Genetic algorithm (GA), constraint-aware as in Kernel Tuner.
//!
//! A population of `popsize` configurations is completely replaced every generation. After a
//! generation has been evaluated its individuals are sorted by objective (failed ones last),
//! and each pair of parents is chosen by rank: the position in the sorted population is a
//! Beta(`selection_alpha`, `selection_beta`) draw scaled to the population size, so better
//! individuals are more likely to reproduce whatever the magnitudes of their objective values
//! (Figure 2 of the paper). The parents are recombined by single-point, two-point, uniform or
//! disruptive uniform crossover. In the constraint-aware variant every invalid child is first
//! repaired to a random valid neighbour from the first non-empty of its strictly-adjacent,
//! adjacent and Hamming neighbourhoods (Algorithm 3), and then, with chance
//! 1/`mutation_chance`, mutated to a random valid Hamming neighbour; the initial population is
//! a random sample of valid configurations. The constraint-unaware variant
//! (`constraint_aware = false`) starts from random points of the Cartesian product, never
//! repairs, and mutates by giving one parameter a different random value, so it can propose
//! invalid configurations, which fail and rank last. After `maxiter` generations the search
//! restarts from a fresh random population.
//!
//! ## References
//! F.-J. Willemsen, S. Heldens, R. V. van Nieuwpoort, B. van Werkhoven, "Constraint-aware
//! Optimization in Auto-Tuning" (section IV-D, Figure 2, Algorithm 3, Table IV); Kernel Tuner
//! 1.5.0, `kernel_tuner/strategies/genetic_algorithm.py`.

use std::cmp::Ordering;

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, DistinctSampler, Neighbourhood, SearchSpace};
use rand::RngExt;
use rustc_hash::FxHashSet;

use super::generation::{Generation, Handed, Member};

const NAME: &str = "genetic_algorithm";

/// Generations in a row that may consist only of already-evaluated configurations before the
/// worse half of the next one is replaced by unevaluated random individuals.
const STALE_GENERATIONS: usize = 3;

/// Crossovers tried per population slot before the rest of a generation is filled with random
/// individuals (a converged population breeds mostly duplicates).
const BREED_ATTEMPTS: usize = 5;

/// Random draws tried for an unevaluated individual before falling back to drawing ranks
/// without replacement.
const FRESH_TRIES: usize = 64;

/// Generations one `ask` may step through while every child turns out to be evaluated already;
/// only reached when the space is exhausted.
const MAX_GENERATIONS_PER_ASK: usize = 64;

/// How two parents are recombined into two children.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Crossover {
    /// Genes before a random cut point from one parent, the rest from the other.
    SinglePoint,
    /// The genes between two random cut points from the other parent.
    TwoPoint,
    /// Every gene from either parent with equal chance.
    Uniform,
    /// Exactly half (rounded up) of the genes in which the parents differ are swapped, so the
    /// children differ from both parents whenever the parents differ in two genes or more.
    DisruptiveUniform,
}

/// The options of [`GeneticAlgorithm`] (defaults: Table IV of the paper, except
/// `mutation_chance`, Kernel Tuner's).
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GeneticAlgorithmOptions {
    /// Individuals per generation.
    pub popsize: usize,
    /// Generations before the search restarts from a fresh random population.
    pub maxiter: usize,
    /// The crossover method.
    pub method: Crossover,
    /// A child mutates with chance one in `mutation_chance`.
    pub mutation_chance: u32,
    /// First shape parameter of the Beta distribution of the selected rank.
    pub selection_alpha: f64,
    /// Second shape parameter of the Beta distribution of the selected rank.
    pub selection_beta: f64,
    /// Repair and mutate within the valid configurations (off: the constraint-unaware GA).
    pub constraint_aware: bool,
}

impl Default for GeneticAlgorithmOptions {
    fn default() -> Self {
        GeneticAlgorithmOptions {
            popsize: 20,
            maxiter: 150,
            method: Crossover::SinglePoint,
            // Kernel Tuner's 1 in 55, not the paper's tuned 1 in 5: on the 12 shared spaces
            // (50 seeds) 0.433 against 0.388, and it no longer loses dedispersion_MI250X to
            // Kernel Tuner (BENCHMARKS.md, issue 20).
            mutation_chance: 55,
            // Kernel Tuner's `random.betavariate(1, 2.5)`, the distribution of Figure 2.
            selection_alpha: 1.0,
            selection_beta: 2.5,
            constraint_aware: true,
        }
    }
}

/// Minimisation form of an observation's objective (`None`: failed).
fn value_of(o: &Observation) -> Option<f64> {
    o.value.filter(|v| !v.is_nan())
}

/// Minimisation order with failures (`None`) after every number; never compares a failure
/// as a number.
fn by_value(a: Option<f64>, b: Option<f64>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// The genetic algorithm. See the module documentation.
#[derive(Clone, Debug)]
pub struct GeneticAlgorithm {
    options: GeneticAlgorithmOptions,
    /// The current generation, in breeding order.
    members: Generation<f64>,
    /// The current generation's number since the last (re)start; 0 is the random population.
    generation: usize,
    /// Consecutive generations without an unevaluated individual.
    stale: usize,
    /// Unused ranks, for drawing unevaluated individuals once most of the space is evaluated.
    sampler: Option<DistinctSampler>,
}

crate::registry::checked_by!(GeneticAlgorithmOptions => GeneticAlgorithm);

impl GeneticAlgorithm {
    /// A genetic algorithm with options that passed [`GeneticAlgorithmOptions::check`].
    fn checked(options: GeneticAlgorithmOptions) -> GeneticAlgorithm {
        GeneticAlgorithm {
            options,
            members: Generation::default(),
            generation: 0,
            stale: 0,
            sampler: None,
        }
    }

    /// A random individual that is neither evaluated nor in `taken`: valid in the
    /// constraint-aware variant, from the Cartesian product otherwise (a valid one once random
    /// draws keep hitting evaluated configurations); `None` when every valid configuration is
    /// evaluated or taken.
    fn fresh(
        &mut self,
        space: &SearchSpace,
        history: &History,
        taken: &FxHashSet<Configuration>,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        for _ in 0..FRESH_TRIES {
            let c = if self.options.constraint_aware {
                space.sample(rng)
            } else {
                space
                    .params()
                    .iter()
                    .map(|p| rng.random_range(0..p.len() as u32))
                    .collect()
            };
            if !history.contains(&c) && !taken.contains(&c) {
                return Some(c);
            }
        }
        // Most of the space is evaluated: draw valid ranks without replacement. A rank drawn
        // and skipped is evaluated or about to be, so it is never needed again.
        let sampler = self
            .sampler
            .get_or_insert_with(|| DistinctSampler::new(space.size()));
        while let Some(r) = sampler.next_rank(rng) {
            let c = space.configuration(r);
            if !history.contains(&c) && !taken.contains(&c) {
                return Some(c);
            }
        }
        None
    }

    /// A child after crossover: repaired (constraint-aware only), then perhaps mutated. The
    /// paper's order: "Our GA first repairs invalid solutions and then mutates if needed."
    fn finish_child(
        &self,
        child: Configuration,
        space: &SearchSpace,
        rng: &mut Rng,
    ) -> Configuration {
        let child = if self.options.constraint_aware {
            space.repair_random_neighbour(&child, rng)
        } else {
            child
        };
        if rng.random_range(0..self.options.mutation_chance) == 0 {
            mutate(child, space, self.options.constraint_aware, rng)
        } else {
            child
        }
    }

    /// Replaces the current generation by the next one (bred from it, or a fresh random
    /// population at the start and after `maxiter` generations). Returns whether the new
    /// generation has any individual.
    fn advance(&mut self, space: &SearchSpace, history: &History, rng: &mut Rng) -> bool {
        let popsize = self.options.popsize;
        let mut next: Vec<Configuration> = Vec::with_capacity(popsize);
        let mut taken: FxHashSet<Configuration> = FxHashSet::default();
        if self.members.is_empty() || self.generation + 1 >= self.options.maxiter {
            // Kernel Tuner ends the run after maxiter generations; ktune restarts instead so
            // that a budget larger than popsize * maxiter is still spent searching.
            self.generation = 0;
        } else {
            self.generation += 1;
            let mut ranked: Vec<&Member<f64>> = self.members.members().iter().collect();
            ranked.sort_by(|a, b| by_value(a.known().copied(), b.known().copied()));
            let parents: Vec<Configuration> =
                ranked.into_iter().map(|m| m.config.clone()).collect();
            let (alpha, beta) = (self.options.selection_alpha, self.options.selection_beta);
            let mut attempts = 0;
            // Kernel Tuner loops until the generation is full, which never ends once the
            // population has converged to one configuration; the attempts are bounded here and
            // the rest of the generation is filled with random individuals.
            while next.len() < popsize && attempts < popsize * BREED_ATTEMPTS {
                attempts += 1;
                let (i, j) = select_parents(parents.len(), alpha, beta, rng);
                let (c1, c2) = crossover(self.options.method, &parents[i], &parents[j], rng);
                for child in [c1, c2] {
                    if next.len() == popsize {
                        break;
                    }
                    let child = self.finish_child(child, space, rng);
                    if !taken.contains(&child) {
                        taken.insert(child.clone());
                        next.push(child);
                    }
                }
            }
        }
        while next.len() < popsize {
            match self.fresh(space, history, &taken, rng) {
                Some(c) => {
                    taken.insert(c.clone());
                    next.push(c);
                }
                None => break,
            }
        }

        // A generation of evaluated configurations costs nothing but also finds nothing; after
        // a few in a row, the worse half makes way for unevaluated random individuals.
        if next.iter().any(|c| !history.contains(c)) {
            self.stale = 0;
        } else {
            self.stale += 1;
            if self.stale >= STALE_GENERATIONS {
                self.stale = 0;
                let value = |c: &Configuration| {
                    history.get(c).and_then(|o| o.value).filter(|v| !v.is_nan())
                };
                next.sort_by(|a, b| by_value(value(a), value(b)));
                let keep = next.len().div_ceil(2).min(next.len().saturating_sub(1));
                for slot in next.iter_mut().skip(keep) {
                    match self.fresh(space, history, &taken, rng) {
                        Some(c) => {
                            taken.insert(c.clone());
                            *slot = c;
                        }
                        None => break,
                    }
                }
            }
        }

        self.members = Generation::new(next);
        !self.members.is_empty()
    }
}

/// Mutation in exactly one parameter value. Constraint-aware: a random valid Hamming
/// neighbour (unchanged when there is none). Unaware: one parameter, among those with more
/// than one value, gets a different random value (the result may be invalid). Kernel Tuner
/// picks the parameter among all of them and leaves the individual unchanged when it has a
/// single value; the paper says mutation happens in exactly one parameter value, so ktune
/// only picks parameters that can change.
pub(crate) fn mutate(
    child: Configuration,
    space: &SearchSpace,
    aware: bool,
    rng: &mut Rng,
) -> Configuration {
    if aware {
        let mut neighbours = space.neighbours(&child, Neighbourhood::Hamming);
        if neighbours.is_empty() {
            return child;
        }
        let i = rng.random_range(0..neighbours.len());
        return neighbours.swap_remove(i);
    }
    let params = space.params();
    let mutable = params.iter().filter(|p| p.len() > 1).count();
    if mutable == 0 {
        return child;
    }
    let k = rng.random_range(0..mutable);
    let d = (0..params.len())
        .filter(|&d| params[d].len() > 1)
        .nth(k)
        .expect("k < mutable");
    let mut child = child;
    let v = rng.random_range(0..params[d].len() as u32 - 1);
    child[d] = if v >= child[d] { v + 1 } else { v };
    child
}

/// Two children of `a` and `b` (of equal length) by `method`.
pub(crate) fn crossover(
    method: Crossover,
    a: &[u32],
    b: &[u32],
    rng: &mut Rng,
) -> (Configuration, Configuration) {
    let d = a.len();
    let (mut c1, mut c2) = (a.to_vec(), b.to_vec());
    match method {
        // Kernel Tuner draws the cut from 0..d, where 0 just copies the parents; the cut is
        // drawn from 1..d here so each child takes genes from both parents.
        Crossover::SinglePoint => {
            if d >= 2 {
                let cut = rng.random_range(1..d);
                c1[cut..].copy_from_slice(&b[cut..]);
                c2[cut..].copy_from_slice(&a[cut..]);
            }
        }
        // Two distinct cut points in 1..d, the genes between them swapped (Kernel Tuner draws
        // them from 1..d-1, or from 0..d below five parameters).
        Crossover::TwoPoint => {
            if d < 3 {
                return crossover(Crossover::SinglePoint, a, b, rng);
            }
            let p = rng.random_range(1..d);
            let mut q = rng.random_range(1..d - 1);
            if q >= p {
                q += 1;
            }
            let (lo, hi) = (p.min(q), p.max(q));
            c1[lo..hi].copy_from_slice(&b[lo..hi]);
            c2[lo..hi].copy_from_slice(&a[lo..hi]);
        }
        Crossover::Uniform => {
            for i in 0..d {
                if rng.random::<bool>() {
                    c1[i] = b[i];
                    c2[i] = a[i];
                }
            }
        }
        // A uniformly random half (rounded up) of the differing genes is swapped; Kernel
        // Tuner's repeated left-to-right scan with coin flips swaps as many, but favours the
        // first positions.
        Crossover::DisruptiveUniform => {
            let mut differ: Vec<usize> = (0..d).filter(|&i| a[i] != b[i]).collect();
            let swaps = differ.len().div_ceil(2);
            for k in 0..swaps {
                let j = rng.random_range(k..differ.len());
                differ.swap(k, j);
                let i = differ[k];
                c1[i] = b[i];
                c2[i] = a[i];
            }
        }
    }
    (c1, c2)
}

/// Two distinct positions in a sorted population of `len` (the same one twice when `len` is
/// 1), each drawn by [`select_rank`]; a repeat is redrawn, as in Kernel Tuner.
fn select_parents(len: usize, alpha: f64, beta: f64, rng: &mut Rng) -> (usize, usize) {
    let i = select_rank(len, alpha, beta, rng);
    if len < 2 {
        return (i, i);
    }
    for _ in 0..64 {
        let j = select_rank(len, alpha, beta, rng);
        if j != i {
            return (i, j);
        }
    }
    // A very peaked distribution: any other position.
    (i, (i + 1 + rng.random_range(0..len - 1)) % len)
}

/// A position in a population of `len` sorted best first: `floor(B * len)` with
/// `B ~ Beta(alpha, beta)`, so with the default Beta(1, 2.5) the best position is the most
/// likely and the chance falls off smoothly with rank (Figure 2).
fn select_rank(len: usize, alpha: f64, beta: f64, rng: &mut Rng) -> usize {
    ((beta_variate(alpha, beta, rng) * len as f64) as usize).min(len.saturating_sub(1))
}

/// A uniform draw in (0, 1].
fn open_unit(rng: &mut Rng) -> f64 {
    1.0 - rng.random::<f64>()
}

/// One draw from Beta(alpha, beta) built from uniform draws only: `rand_distr` is not a
/// dependency of this crate, and sampling by hand also fixes the exact sequence of draws, so a
/// seed reproduces the same run whatever distribution crate versions are around. With one
/// shape equal to 1 (the default Beta(1, 2.5)) the inverse CDF is closed-form and takes one
/// uniform: `1 - U^(1/beta)`; otherwise `X / (X + Y)` with gamma variates `X ~ Gamma(alpha)`,
/// `Y ~ Gamma(beta)`.
fn beta_variate(alpha: f64, beta: f64, rng: &mut Rng) -> f64 {
    if alpha == 1.0 {
        return 1.0 - open_unit(rng).powf(1.0 / beta);
    }
    if beta == 1.0 {
        return open_unit(rng).powf(1.0 / alpha);
    }
    let x = gamma_variate(alpha, rng);
    let y = gamma_variate(beta, rng);
    let sum = x + y;
    if sum > 0.0 { x / sum } else { 0.5 }
}

/// One draw from Gamma(shape, 1): Marsaglia and Tsang's squeeze method (2000), with
/// `Gamma(a) = Gamma(a + 1) * U^(1/a)` for shapes below 1.
fn gamma_variate(shape: f64, rng: &mut Rng) -> f64 {
    if shape < 1.0 {
        let boost = open_unit(rng).powf(1.0 / shape);
        return gamma_variate(shape + 1.0, rng) * boost;
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        // A standard normal draw by Box-Muller.
        let x = (-2.0 * open_unit(rng).ln()).sqrt()
            * (std::f64::consts::TAU * rng.random::<f64>()).cos();
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        if open_unit(rng).ln() < 0.5 * x * x + d - d * v + d * v.ln() {
            return d * v;
        }
    }
}

impl Strategy for GeneticAlgorithm {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let mut out = Vec::with_capacity(n);
        let mut generations = 0;
        while self.members.hand_out(history, n, &mut out, value_of) == Handed::Done {
            if generations == MAX_GENERATIONS_PER_ASK {
                break;
            }
            generations += 1;
            if !self.advance(space, history, rng) {
                break;
            }
        }
        out
    }

    fn tell(&mut self, _: &SearchSpace, observations: &[Observation]) {
        self.members.tell(observations, value_of);
    }

    fn name(&self) -> &str {
        NAME
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &["ga"],
    about: "Genetic algorithm: the population is replaced every generation by children of \
            rank-selected parents (Beta-distributed ranks), with crossover, repair to a random \
            valid neighbour and Hamming mutation; restarts after maxiter generations.",
    options: &[
        crate::OptionDoc::new("popsize", "20", "Individuals per generation.").count(2, 10_000),
        crate::OptionDoc::new("maxiter", "150", "Generations before the search restarts from a fresh random population.").count(1, 1_000_000),
        crate::OptionDoc::new("method", "\"single_point\"", "Crossover: `single_point`, `two_point`, `uniform` or `disruptive_uniform`."),
        crate::OptionDoc::new("mutation_chance", "55", "A child mutates with chance 1 in mutation_chance (1 always mutates).").count(1, 1_000_000),
        crate::OptionDoc::new("selection_alpha", "1.0", "First shape parameter of the Beta distribution of a parent's rank, best first.").real(0.1, 100.0),
        crate::OptionDoc::new("selection_beta", "2.5", "Second shape parameter of the Beta distribution of a parent's rank; larger favours the best more.").real(0.1, 100.0),
        crate::OptionDoc::new("constraint_aware", "true", "Valid initial population, repair of invalid children and valid Hamming mutation; false: random Cartesian individuals, no repair, one-value mutation (invalid ones fail)."),
    ],
    tunable: &[
        crate::Tunable::new("popsize", &["10", "20", "30"]),
        crate::Tunable::new("maxiter", &["50", "150"]),
        crate::Tunable::new(
            "method",
            &[
                "\"single_point\"",
                "\"two_point\"",
                "\"uniform\"",
                "\"disruptive_uniform\"",
            ],
        ),
        crate::Tunable::new("mutation_chance", &["5", "20", "55", "100"]),
    ],
    check: crate::registry::check::<GeneticAlgorithmOptions>,
};

#[cfg(test)]
mod tests;
