//! NSGA-II: the non-dominated sorting genetic algorithm for several objectives at once,
//! constraint-aware as ktune's genetic algorithm is.
//!
//! Each generation of `popsize` children is bred from the parents, and once the children are
//! evaluated the next parents are chosen from parents and children together (elitism): the
//! configurations are sorted into fronts by Pareto dominance (the first front is dominated by
//! none, the second only by the first, ...), whole fronts are taken while they fit, and the
//! front that does not fit is cut by crowding distance (the spread a point leaves between its
//! neighbours on the front, in each objective relative to the front's range), so the parents
//! cover the front evenly. Parents are chosen by binary tournament on (front, crowding).
//!
//! Failures follow Deb's constraint domination: every configuration that ran dominates every
//! one that failed, and the failures form the last front, so they are bred from only when
//! nothing else is left. Children are made as the genetic algorithm makes them (crossover,
//! repair to a random valid neighbour, Hamming mutation with chance 1/`mutation_chance`), and
//! the first generation is a random sample of valid configurations. A child evaluated before
//! costs nothing: its objectives are read from the history. With one objective NSGA-II is an
//! elitist genetic algorithm with tournament selection.
//!
//! ## References
//! K. Deb, A. Pratap, S. Agarwal, T. Meyarivan, "A fast and elitist multiobjective genetic
//! algorithm: NSGA-II", IEEE Transactions on Evolutionary Computation 6(2), 2002 (the fast
//! non-dominated sort, the crowding distance, constraint domination); Kernel Tuner 1.5's
//! multi-objective tuning goes through pymoo's NSGA-II.

use std::cmp::Ordering;

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, SearchSpace};
use rand::RngExt;
use rustc_hash::FxHashSet;

use super::generation::{Generation, Handed, State};
use super::genetic_algorithm::{Crossover, crossover, mutate};
use crate::pareto::{Objectives, crowding_distances, non_dominated_fronts, objectives_of};
use crate::sampling::FreshSampler;

const NAME: &str = "nsga2";

/// Crossovers tried per population slot before the rest of a generation is filled with random
/// individuals.
const BREED_ATTEMPTS: usize = 5;

/// Generations one `ask` may step through while every child is evaluated already.
const MAX_GENERATIONS_PER_ASK: usize = 64;

/// The options of [`Nsga2`].
#[derive(Clone, Debug, PartialEq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Nsga2Options {
    /// Parents kept, and children bred, per generation.
    pub popsize: usize,
    /// The crossover method.
    pub method: Crossover,
    /// A child mutates with chance one in `mutation_chance`.
    pub mutation_chance: u32,
}

impl Default for Nsga2Options {
    fn default() -> Self {
        Nsga2Options {
            popsize: 20,
            method: Crossover::Uniform,
            mutation_chance: 10,
        }
    }
}

/// NSGA-II. See the module documentation.
#[derive(Clone, Debug)]
pub struct Nsga2 {
    options: Nsga2Options,
    /// The parents with their objectives, with their fronts and crowding distances.
    parents: Vec<(Configuration, Objectives)>,
    ranks: Vec<(usize, f64)>,
    /// The generation being evaluated.
    children: Generation<Vec<f64>>,
    /// Random configurations never evaluated: the first generation, and the rest of one
    /// that breeding could not fill.
    fresh: FreshSampler,
}

crate::registry::checked_by!(Nsga2Options => Nsga2);

impl Nsga2 {
    fn checked(options: Nsga2Options) -> Nsga2 {
        Nsga2 {
            options,
            parents: Vec::new(),
            ranks: Vec::new(),
            children: Generation::default(),
            fresh: FreshSampler::default(),
        }
    }

    /// The parents of the next generation from the parents and the children just evaluated.
    fn select(&mut self) {
        let mut pool: Vec<(Configuration, Objectives)> = std::mem::take(&mut self.parents);
        let mut seen: FxHashSet<Configuration> = pool.iter().map(|(c, _)| c.clone()).collect();
        for child in self.children.take_members() {
            if seen.insert(child.config.clone()) {
                let objectives = match child.state {
                    State::Known(o) => o,
                    _ => None,
                };
                pool.push((child.config, objectives));
            }
        }
        let points: Vec<&Objectives> = pool.iter().map(|(_, o)| o).collect();
        let fronts = non_dominated_fronts(&points);
        let mut keep: Vec<usize> = Vec::with_capacity(self.options.popsize);
        let mut ranks: Vec<(usize, f64)> = Vec::with_capacity(self.options.popsize);
        for (f, front) in fronts.iter().enumerate() {
            let crowding = crowding_distances(front, &points);
            if keep.len() + front.len() <= self.options.popsize {
                keep.extend(front);
                ranks.extend(crowding.iter().map(|&d| (f, d)));
                continue;
            }
            // The front that does not fit: its most isolated points.
            let mut order: Vec<usize> = (0..front.len()).collect();
            order.sort_by(|&a, &b| crowding[b].total_cmp(&crowding[a]));
            for &i in order.iter().take(self.options.popsize - keep.len()) {
                keep.push(front[i]);
                ranks.push((f, crowding[i]));
            }
            break;
        }
        let mut pool: Vec<Option<(Configuration, Objectives)>> =
            pool.into_iter().map(Some).collect();
        self.parents = keep.iter().filter_map(|&i| pool[i].take()).collect();
        self.ranks = ranks;
    }

    /// A parent by binary tournament: the lower front wins, then the larger crowding distance.
    fn tournament(&self, rng: &mut Rng) -> usize {
        let n = self.parents.len();
        let (a, b) = (rng.random_range(0..n), rng.random_range(0..n));
        let (ra, rb) = (self.ranks[a], self.ranks[b]);
        match ra.0.cmp(&rb.0).then(rb.1.total_cmp(&ra.1)) {
            Ordering::Greater => b,
            _ => a,
        }
    }

    /// A random valid configuration neither evaluated nor taken (none when the space has no
    /// other left).
    fn fresh(
        &mut self,
        space: &SearchSpace,
        history: &History,
        taken: &FxHashSet<Configuration>,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        // Each configuration is drawn once, so one that was taken is not drawn again.
        std::iter::from_fn(|| self.fresh.draw(space, history, rng)).find(|c| !taken.contains(c))
    }

    /// The next generation of children (the first: a random sample). Returns whether it has
    /// any.
    fn advance(&mut self, space: &SearchSpace, history: &History, rng: &mut Rng) -> bool {
        if !self.children.is_empty() {
            self.select();
        }
        let popsize = self.options.popsize;
        let mut next: Vec<Configuration> = Vec::with_capacity(popsize);
        let mut taken: FxHashSet<Configuration> = FxHashSet::default();
        if !self.parents.is_empty() {
            let mut attempts = 0;
            while next.len() < popsize && attempts < popsize * BREED_ATTEMPTS {
                attempts += 1;
                let (i, j) = (self.tournament(rng), self.tournament(rng));
                let (a, b) = (&self.parents[i].0, &self.parents[j].0);
                let (c1, c2) = crossover(self.options.method, a, b, rng);
                for child in [c1, c2] {
                    if next.len() == popsize {
                        break;
                    }
                    let child = space.repair_random_neighbour(&child, rng);
                    let child = if rng.random_range(0..self.options.mutation_chance) == 0 {
                        mutate(child, space, true, rng)
                    } else {
                        child
                    };
                    // A child that is a parent adds nothing to the pool.
                    if self.parents.iter().any(|(p, _)| *p == child) {
                        continue;
                    }
                    if taken.insert(child.clone()) {
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
        self.children = Generation::new(next);
        !self.children.is_empty()
    }
}

impl Strategy for Nsga2 {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let mut out = Vec::with_capacity(n);
        let mut generations = 0;
        while self.children.hand_out(history, n, &mut out, objectives_of) == Handed::Done {
            if generations == MAX_GENERATIONS_PER_ASK {
                // The population has converged on what it measured: rather than end the
                // run short of its budget, this ask explores fresh configurations (they
                // join the history, not the population).
                if out.is_empty() {
                    let taken = FxHashSet::default();
                    while out.len() < n {
                        match self.fresh(space, history, &taken, rng) {
                            Some(c) if !out.contains(&c) => out.push(c),
                            Some(_) => {}
                            None => break,
                        }
                    }
                }
                break;
            }
            generations += 1;
            if !self.advance(space, history, rng) {
                break;
            }
        }
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        self.fresh.exclude(space, observations);
        self.children.tell(observations, objectives_of);
    }

    fn name(&self) -> &str {
        NAME
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &["nsga_ii"],
    about: "NSGA-II for several objectives: elitist generations whose parents are chosen by \
            non-dominated sorting and crowding distance, failures dominated by every \
            configuration that ran; children by crossover, repair to a valid neighbour and \
            Hamming mutation.",
    options: &[
        crate::OptionDoc::new(
            "popsize",
            "20",
            "Parents kept, and children bred, per generation.",
        )
        .count(2, 10_000),
        crate::OptionDoc::new(
            "method",
            "\"uniform\"",
            "Crossover: `single_point`, `two_point`, `uniform` or `disruptive_uniform`.",
        ),
        crate::OptionDoc::new(
            "mutation_chance",
            "10",
            "A child mutates with chance 1 in mutation_chance (1 always mutates).",
        )
        .count(1, 1_000_000),
    ],
    tunable: &[
        crate::Tunable::new("popsize", &["10", "20", "40"]),
        crate::Tunable::new("mutation_chance", &["3", "10", "55"]),
    ],
    check: crate::registry::check::<Nsga2Options>,
};

#[cfg(test)]
mod tests {
    use super::*;

    fn some(v: &[f64]) -> Objectives {
        Some(v.to_vec())
    }

    #[test]
    fn selection_keeps_the_front_and_drops_failures() {
        let mut nsga = Nsga2::checked(Nsga2Options {
            popsize: 3,
            ..Nsga2Options::default()
        });
        nsga.children = Generation::new((0..5).map(|c| vec![c]).collect());
        let told = |c: u32, o: Objectives| Observation {
            config: vec![c],
            value: o.as_ref().map(|v| v[0]),
            failure: None,
            variance: None,
            objectives: o.unwrap_or_default(),
        };
        nsga.children.tell(
            &[
                told(0, some(&[1.0, 5.0])),
                told(1, None),
                told(2, some(&[3.0, 3.0])),
                told(3, some(&[5.0, 1.0])),
                told(4, some(&[4.0, 4.0])),
            ],
            objectives_of,
        );
        nsga.select();
        let mut kept: Vec<u32> = nsga.parents.iter().map(|(c, _)| c[0]).collect();
        kept.sort_unstable();
        assert_eq!(kept, vec![0, 2, 3]);
        assert!(nsga.ranks.iter().all(|&(front, _)| front == 0));
    }
}
