//! Sampling valid configurations: uniform (with and without replacement), Latin hypercube and
//! maximin Latin hypercube.
//!
//! Uniform sampling draws a uniform local rank in every group independently, which is uniform
//! over the product: BaCO's bias-free sampling from the leaves of the chain of trees.

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use rustc_hash::FxHashSet;

use super::{Configuration, SearchSpace};

impl SearchSpace {
    /// A uniformly random rank in `0..size()`.
    pub fn sample_rank<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        rng.random_range(0..self.size)
    }

    /// A uniformly random valid configuration.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> Configuration {
        let mut out = vec![0u32; self.dims()];
        for g in &self.groups {
            g.write(rng.random_range(0..g.len()), &mut out);
        }
        out
    }

    /// `n` distinct valid configurations drawn uniformly without replacement (all of them, in
    /// random order, when `n >= size()`).
    pub fn sample_distinct<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<Configuration> {
        self.sample_distinct_ranks(n, rng)
            .into_iter()
            .map(|r| self.configuration(r))
            .collect()
    }

    /// Ranks of `n` distinct configurations drawn uniformly without replacement.
    pub fn sample_distinct_ranks<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<u64> {
        let mut sampler = DistinctSampler::new(self.size);
        (0..n).map_while(|_| sampler.next_rank(rng)).collect()
    }

    /// A Latin hypercube sample of `n` distinct valid configurations: each parameter's value
    /// indices are split into `n` equal strata, one point per stratum per parameter, and each
    /// point is repaired to its nearest valid configuration by index distance (a random
    /// unused configuration when every nearest one is already in the sample).
    pub fn latin_hypercube<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Vec<Configuration> {
        self.latin_hypercube_weighted(n, &[], rng)
    }

    /// [`SearchSpace::latin_hypercube`] with the strata cut from each parameter's weighted
    /// distribution of values instead of its value indices: `weights[d][i]` weighs value `i`
    /// of parameter `d` (`None`, or `weights` shorter than the parameters: uniform). Every
    /// value then gets a share of the sample as near its weight's share as `n` allows, and
    /// the parameters are paired at random; with uniform weights this is the plain Latin
    /// hypercube.
    pub fn latin_hypercube_weighted<R: Rng + ?Sized>(
        &self,
        n: usize,
        weights: &[Option<Vec<f64>>],
        rng: &mut R,
    ) -> Vec<Configuration> {
        // Per parameter, the cumulative shares of its values (`None`: uniform).
        let cumulative: Vec<Option<Vec<f64>>> = (0..self.dims())
            .map(|d| {
                let w = weights.get(d)?.as_ref()?;
                let total: f64 = w.iter().sum();
                (total > 0.0 && w.len() == self.params[d].len()).then(|| {
                    w.iter()
                        .scan(0.0, |acc, x| {
                            *acc += x / total;
                            Some(*acc)
                        })
                        .collect()
                })
            })
            .collect();
        let n = n.min(usize::try_from(self.size).unwrap_or(usize::MAX));
        if n == 0 {
            return Vec::new();
        }
        let dims = self.dims();
        let strata: Vec<Vec<usize>> = (0..dims)
            .map(|_| {
                let mut s: Vec<usize> = (0..n).collect();
                s.shuffle(rng);
                s
            })
            .collect();
        let mut taken = FxHashSet::default();
        let mut out = Vec::with_capacity(n);
        let mut point = vec![0u32; dims];
        for i in 0..n {
            for (d, ((slot, stratum), p)) in
                point.iter_mut().zip(&strata).zip(&self.params).enumerate()
            {
                let m = p.len();
                let x = (stratum[i] as f64 + rng.random::<f64>()) / n as f64;
                *slot = match cumulative[d].as_deref() {
                    // The first value whose cumulative share passes x.
                    Some(c) => c.partition_point(|&share| share <= x).min(m - 1) as u32,
                    None => ((x * m as f64) as usize).min(m - 1) as u32,
                };
            }
            let mut candidates = self.nearest(&point);
            candidates.retain(|c| !taken.contains(&self.rank(c).unwrap_or(u64::MAX)));
            let chosen = if candidates.is_empty() {
                let mut sampler = DistinctSampler::new(self.size);
                for &r in &taken {
                    sampler.exclude(r);
                }
                match sampler.next_rank(rng) {
                    Some(r) => self.configuration(r),
                    None => break,
                }
            } else {
                let k = rng.random_range(0..candidates.len());
                candidates.swap_remove(k)
            };
            if let Some(r) = self.rank(&chosen) {
                taken.insert(r);
            }
            out.push(chosen);
        }
        out
    }

    /// The best of `candidates` Latin hypercube samples by the maximin criterion: the largest
    /// smallest pairwise Euclidean distance in the normalised index encoding.
    pub fn maximin_latin_hypercube<R: Rng + ?Sized>(
        &self,
        n: usize,
        candidates: usize,
        rng: &mut R,
    ) -> Vec<Configuration> {
        let scale: Vec<f64> = self
            .params
            .iter()
            .map(|p| {
                if p.len() > 1 {
                    1.0 / (p.len() - 1) as f64
                } else {
                    0.0
                }
            })
            .collect();
        let mut best: Option<(f64, Vec<Configuration>)> = None;
        for _ in 0..candidates.max(1) {
            let sample = self.latin_hypercube(n, rng);
            let mut min_d = f64::INFINITY;
            for (i, a) in sample.iter().enumerate() {
                for b in &sample[..i] {
                    let d: f64 = a
                        .iter()
                        .zip(b)
                        .zip(&scale)
                        .map(|((&x, &y), s)| {
                            let t = (f64::from(x) - f64::from(y)) * s;
                            t * t
                        })
                        .sum();
                    min_d = min_d.min(d);
                }
            }
            if best.as_ref().is_none_or(|(d, _)| min_d > *d) {
                best = Some((min_d, sample));
            }
        }
        best.map(|(_, s)| s).unwrap_or_default()
    }
}

/// Draws ranks uniformly without replacement, one at a time, from `0..size`, skipping any rank
/// marked with [`exclude`](Self::exclude) (for strategies that must not revisit evaluated
/// configurations).
///
/// Rejection sampling while at most half the space is used; after that the remaining ranks
/// are listed once and drawn by a partial Fisher-Yates shuffle, so every draw is O(1)
/// expected and the sampler never loops for long.
#[derive(Clone, Debug)]
pub struct DistinctSampler {
    size: u64,
    used: FxHashSet<u64>,
    remaining: Option<Vec<u64>>,
}

impl DistinctSampler {
    /// A sampler over `0..size` with nothing drawn yet.
    pub fn new(size: u64) -> DistinctSampler {
        DistinctSampler {
            size,
            used: FxHashSet::default(),
            remaining: None,
        }
    }

    /// Marks `rank` as used, so it is never returned.
    pub fn exclude(&mut self, rank: u64) {
        if rank < self.size
            && self.used.insert(rank)
            && let Some(rest) = &mut self.remaining
            && let Some(i) = rest.iter().position(|&r| r == rank)
        {
            rest.swap_remove(i);
        }
    }

    /// How many ranks are still available.
    pub fn available(&self) -> u64 {
        self.size - self.used.len() as u64
    }

    /// The next uniformly random unused rank, or `None` when every rank has been used.
    pub fn next_rank<R: Rng + ?Sized>(&mut self, rng: &mut R) -> Option<u64> {
        if self.available() == 0 {
            return None;
        }
        if self.remaining.is_none() && self.used.len() as u64 * 2 <= self.size {
            loop {
                let r = rng.random_range(0..self.size);
                if self.used.insert(r) {
                    return Some(r);
                }
            }
        }
        let rest = self
            .remaining
            .get_or_insert_with(|| (0..self.size).filter(|r| !self.used.contains(r)).collect());
        let i = rng.random_range(0..rest.len());
        let r = rest.swap_remove(i);
        self.used.insert(r);
        Some(r)
    }

    /// The next unused rank drawn with probability proportional to `weight(rank)` (each
    /// weight in `[0, 1]`), by rejection from uniform draws; `None` when every rank has been
    /// used. After `tries` rejections the heaviest rank seen is taken, so a space where nearly
    /// every weight is tiny still answers quickly (the draw is then only approximately
    /// proportional).
    pub fn next_rank_weighted<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        tries: usize,
        weight: impl Fn(u64) -> f64,
    ) -> Option<u64> {
        if self.available() == 0 {
            return None;
        }
        let mut heaviest: Option<(f64, u64)> = None;
        for _ in 0..tries.max(1) {
            let r = match &self.remaining {
                Some(rest) => rest[rng.random_range(0..rest.len())],
                None => {
                    let r = rng.random_range(0..self.size);
                    if self.used.contains(&r) {
                        continue;
                    }
                    r
                }
            };
            let w = weight(r);
            if rng.random::<f64>() < w {
                heaviest = Some((w, r));
                break;
            }
            if heaviest.is_none_or(|(h, _)| w > h) {
                heaviest = Some((w, r));
            }
        }
        match heaviest {
            Some((_, r)) => {
                self.exclude(r);
                Some(r)
            }
            // Every try hit a used rank (a nearly exhausted space drawn by rejection).
            None => self.next_rank(rng),
        }
    }
}
