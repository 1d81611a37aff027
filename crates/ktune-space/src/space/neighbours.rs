//! Neighbourhoods and repair, as Kernel Tuner defines them (constraint-aware EA paper,
//! section IV-A):
//!
//! - *strictly adjacent*: every value index is identical or one step away;
//! - *adjacent*: every value index is identical or the nearest lower/higher index that occurs
//!   in some valid configuration;
//! - *Hamming*: exactly one parameter differs;
//! - *index distance*: the valid configurations at the smallest non-zero sum of absolute
//!   value-index differences.
//!
//! All of them return only valid configurations and work for an invalid starting point too,
//! which is what repair needs. Because the space is a product of independent groups, each is
//! computed per group: the strictly-adjacent and adjacent sets are products of per-group sets,
//! and the index distance is a sum of per-group distances.

use rand::{Rng, RngExt};

use super::group::Group;
use super::{Configuration, SearchSpace};

/// A neighbour definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Neighbourhood {
    /// Every value index identical or one step away.
    StrictlyAdjacent,
    /// Every value index identical or the nearest lower/higher index that occurs in a valid
    /// configuration.
    Adjacent,
    /// Exactly one parameter differs.
    Hamming,
    /// The smallest non-zero sum of absolute value-index differences.
    IndexDistance,
}

impl Neighbourhood {
    /// All four, in the order of the paper.
    pub const ALL: [Neighbourhood; 4] = [
        Neighbourhood::StrictlyAdjacent,
        Neighbourhood::Adjacent,
        Neighbourhood::Hamming,
        Neighbourhood::IndexDistance,
    ];

    /// The name used in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Neighbourhood::StrictlyAdjacent => "strictly-adjacent",
            Neighbourhood::Adjacent => "adjacent",
            Neighbourhood::Hamming => "Hamming",
            Neighbourhood::IndexDistance => "index-distance",
        }
    }
}

/// The most neighbours returned at once; a product of per-group sets larger than this is cut
/// off in rank order (it takes around 14 free parameters to get there).
pub const MAX_NEIGHBOURS: usize = 1 << 22;

/// Draws of a random Hamming neighbour rejected before the neighbours are listed instead.
pub const RANDOM_NEIGHBOUR_TRIES: usize = 64;

impl SearchSpace {
    /// The valid neighbours of `config` (which need not be valid itself; it is never part of
    /// the result). Indices outside a domain are clamped into it first.
    pub fn neighbours(&self, config: &[u32], kind: Neighbourhood) -> Vec<Configuration> {
        let config = self.clamp(config);
        match kind {
            Neighbourhood::StrictlyAdjacent | Neighbourhood::Adjacent => {
                let sets: Vec<Vec<Vec<u32>>> = self
                    .groups
                    .iter()
                    .map(|g| box_set(g, &config, kind == Neighbourhood::Adjacent))
                    .collect();
                let mut out = self.product(&config, &sets);
                out.retain(|c| *c != config);
                out
            }
            Neighbourhood::Hamming => self.hamming(&config),
            Neighbourhood::IndexDistance => {
                if self.contains(&config) {
                    self.index_distance_neighbours(&config)
                } else {
                    self.nearest(&config)
                }
            }
        }
    }

    /// The valid configurations nearest to `config` by index distance (`config` itself when it
    /// is valid; ties all included).
    pub fn nearest(&self, config: &[u32]) -> Vec<Configuration> {
        let config = self.clamp(config);
        let sets: Vec<Vec<Vec<u32>>> = self
            .groups
            .iter()
            .map(|g| {
                if g.rank_of(&config).is_some() {
                    vec![g.params.iter().map(|&p| config[p]).collect()]
                } else {
                    closest_rows(g, &config, false).1
                }
            })
            .collect();
        self.product(&config, &sets)
    }

    /// Repairs `config` to its nearest valid configuration by index distance, breaking ties at
    /// random (the DE repair rule). A valid configuration is returned unchanged.
    pub fn repair_nearest<R: Rng + ?Sized>(&self, config: &[u32], rng: &mut R) -> Configuration {
        let mut out = self.clamp(config);
        for g in &self.groups {
            if g.rank_of(&out).is_none() {
                let (_, ties) = closest_rows(g, &out, false);
                let pick = &ties[rng.random_range(0..ties.len())];
                for (&p, &v) in g.params.iter().zip(pick) {
                    out[p] = v;
                }
            }
        }
        out
    }

    /// Repairs `config` to a random neighbour from the first non-empty of its
    /// strictly-adjacent, adjacent and Hamming neighbourhoods (the GA repair rule, Algorithm 3
    /// of the constraint-aware EA paper); when all three are empty, to its nearest valid
    /// configuration. A valid configuration is returned unchanged.
    pub fn repair_random_neighbour<R: Rng + ?Sized>(
        &self,
        config: &[u32],
        rng: &mut R,
    ) -> Configuration {
        let config = self.clamp(config);
        if self.contains(&config) {
            return config;
        }
        for adjacent in [false, true] {
            let sets: Vec<Vec<Vec<u32>>> = self
                .groups
                .iter()
                .map(|g| box_set(g, &config, adjacent))
                .collect();
            if sets.iter().all(|s| !s.is_empty()) {
                // Uniform over the product = uniform in each factor independently.
                let mut out = config.clone();
                for (g, s) in self.groups.iter().zip(&sets) {
                    let pick = &s[rng.random_range(0..s.len())];
                    for (&p, &v) in g.params.iter().zip(pick) {
                        out[p] = v;
                    }
                }
                return out;
            }
        }
        let hamming = self.hamming(&config);
        if !hamming.is_empty() {
            return hamming[rng.random_range(0..hamming.len())].clone();
        }
        self.repair_nearest(&config, rng)
    }

    /// A uniformly random valid neighbour of the valid configuration `config`, drawn without
    /// listing the neighbourhood where that is cheap (`None`: it has none). Hamming: a
    /// (parameter, other value) pair drawn uniformly is kept when the result is valid, which
    /// is uniform over the valid Hamming neighbours; after `RANDOM_NEIGHBOUR_TRIES` rejections
    /// (a sparse space) the neighbours are listed. Strictly adjacent: each index moved by -1,
    /// 0 or +1 (within its domain) uniformly, kept when the result is valid and not `config`,
    /// listed after as many rejections. Adjacent and index distance: listed.
    pub fn random_neighbour<R: Rng + ?Sized>(
        &self,
        config: &[u32],
        kind: Neighbourhood,
        rng: &mut R,
    ) -> Option<Configuration> {
        let pick = |list: Vec<Configuration>, rng: &mut R| {
            (!list.is_empty()).then(|| list[rng.random_range(0..list.len())].clone())
        };
        let config = self.clamp(config);
        if !self.contains(&config) {
            return pick(self.neighbours(&config, kind), rng);
        }
        match kind {
            Neighbourhood::Hamming => {
                let pairs: usize = self.params.iter().map(|p| p.len() - 1).sum();
                if pairs == 0 {
                    return None;
                }
                let mut c = config.clone();
                for _ in 0..RANDOM_NEIGHBOUR_TRIES {
                    let mut k = rng.random_range(0..pairs);
                    let p = self
                        .params
                        .iter()
                        .position(|p| {
                            let n = p.len() - 1;
                            if k < n {
                                true
                            } else {
                                k -= n;
                                false
                            }
                        })
                        .expect("k < pairs");
                    // The k-th value other than the current one.
                    let v = k as u32 + u32::from(k as u32 >= config[p]);
                    c[p] = v;
                    if self.contains(&c) {
                        return Some(c);
                    }
                    c[p] = config[p];
                }
                pick(self.hamming(&config), rng)
            }
            Neighbourhood::StrictlyAdjacent => {
                let mut c = config.clone();
                for _ in 0..RANDOM_NEIGHBOUR_TRIES {
                    for (i, p) in self.params.iter().enumerate() {
                        let lo = config[i].saturating_sub(1);
                        let hi = (config[i] + 1).min(p.len() as u32 - 1);
                        c[i] = rng.random_range(lo..=hi);
                    }
                    if c != config && self.contains(&c) {
                        return Some(c);
                    }
                }
                pick(self.neighbours(&config, kind), rng)
            }
            Neighbourhood::Adjacent | Neighbourhood::IndexDistance => {
                pick(self.neighbours(&config, kind), rng)
            }
        }
    }

    /// Indices clamped into their domains; missing entries become 0.
    pub(crate) fn clamp(&self, config: &[u32]) -> Configuration {
        self.params
            .iter()
            .enumerate()
            .map(|(i, p)| config.get(i).copied().unwrap_or(0).min(p.len() as u32 - 1))
            .collect()
    }

    fn hamming(&self, config: &[u32]) -> Vec<Configuration> {
        let invalid: Vec<&Group> = self
            .groups
            .iter()
            .filter(|g| g.rank_of(config).is_none())
            .collect();
        let candidates: Vec<&Group> = match invalid.len() {
            0 => self.groups.iter().collect(),
            1 => invalid,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        let mut c = config.to_vec();
        for g in candidates {
            for &p in &g.params {
                let original = c[p];
                for v in 0..self.params[p].len() as u32 {
                    if v == original {
                        continue;
                    }
                    c[p] = v;
                    if g.rank_of(&c).is_some() {
                        out.push(c.clone());
                    }
                }
                c[p] = original;
            }
        }
        out
    }

    fn index_distance_neighbours(&self, config: &[u32]) -> Vec<Configuration> {
        let per_group: Vec<(u64, Vec<Vec<u32>>)> = self
            .groups
            .iter()
            .map(|g| closest_rows(g, config, true))
            .collect();
        let Some(best) = per_group
            .iter()
            .filter(|(_, t)| !t.is_empty())
            .map(|(d, _)| *d)
            .min()
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (g, (d, ties)) in self.groups.iter().zip(&per_group) {
            if *d != best {
                continue;
            }
            for t in ties {
                let mut c = config.to_vec();
                for (&p, &v) in g.params.iter().zip(t) {
                    c[p] = v;
                }
                out.push(c);
                if out.len() >= MAX_NEIGHBOURS {
                    return out;
                }
            }
        }
        out
    }

    /// Every combination of one tuple per group (`sets[g]`), in rank order, capped at
    /// [`MAX_NEIGHBOURS`].
    fn product(&self, config: &[u32], sets: &[Vec<Vec<u32>>]) -> Vec<Configuration> {
        if sets.iter().any(Vec::is_empty) {
            return Vec::new();
        }
        let total = sets
            .iter()
            .fold(1usize, |a, s| a.saturating_mul(s.len()))
            .min(MAX_NEIGHBOURS);
        let mut out = Vec::with_capacity(total);
        let mut counter = vec![0usize; sets.len()];
        let mut c = config.to_vec();
        for _ in 0..total {
            for ((g, s), &i) in self.groups.iter().zip(sets).zip(&counter) {
                for (&p, &v) in g.params.iter().zip(&s[i]) {
                    c[p] = v;
                }
            }
            out.push(c.clone());
            for (slot, s) in counter.iter_mut().zip(sets).rev() {
                *slot += 1;
                if *slot < s.len() {
                    break;
                }
                *slot = 0;
            }
        }
        out
    }
}

/// The group's tuples inside the box around `config`: every index within one step
/// (strictly adjacent) or within the nearest occurring lower/higher index (adjacent). The
/// group's own tuple is included when valid.
fn box_set(g: &Group, config: &[u32], adjacent: bool) -> Vec<Vec<u32>> {
    let here: Vec<i64> = g.params.iter().map(|&p| i64::from(config[p])).collect();
    let k = here.len();
    let n = g.len() as usize;
    let row_of = |r: usize| -> Vec<u32> {
        match g.row(r) {
            Some(row) => row.to_vec(),
            None => vec![r as u32],
        }
    };
    let (mut lo, mut hi) = (vec![-1i64; k], vec![1i64; k]);
    if adjacent {
        lo.fill(i64::MIN);
        hi.fill(i64::MAX);
        for r in 0..n {
            let row = row_of(r);
            for i in 0..k {
                let d = i64::from(row[i]) - here[i];
                if d > 0 {
                    hi[i] = hi[i].min(d);
                } else if d < 0 {
                    lo[i] = lo[i].max(d);
                }
            }
        }
    }
    if g.row(0).is_none() {
        // A free parameter: every index in the box exists.
        let (a, b) = (here[0] + lo[0].max(-1), here[0] + hi[0].min(1));
        return (a.max(0)..=b.min(n as i64 - 1))
            .map(|v| vec![v as u32])
            .collect();
    }
    (0..n)
        .map(row_of)
        .filter(|row| {
            row.iter()
                .zip(&here)
                .zip(lo.iter().zip(&hi))
                .all(|((&v, &h), (&l, &u))| {
                    let d = i64::from(v) - h;
                    d >= l && d <= u
                })
        })
        .collect()
}

/// The group's tuples at the smallest index distance from `config` (non-zero distance when
/// `exclude_self`), with that distance.
fn closest_rows(g: &Group, config: &[u32], exclude_self: bool) -> (u64, Vec<Vec<u32>>) {
    let here: Vec<u32> = g.params.iter().map(|&p| config[p]).collect();
    let mut best = u64::MAX;
    let mut ties: Vec<Vec<u32>> = Vec::new();
    let mut consider = |row: &[u32]| {
        let d: u64 = row
            .iter()
            .zip(&here)
            .map(|(&a, &b)| u64::from(a.abs_diff(b)))
            .sum();
        if exclude_self && d == 0 {
            return;
        }
        if d < best {
            best = d;
            ties.clear();
        }
        if d == best {
            ties.push(row.to_vec());
        }
    };
    match g.row(0) {
        None => {
            // A free parameter: the closest other values are one step away (or the value itself).
            let v = here[0];
            if !exclude_self {
                consider(&[v]);
            }
            if v > 0 {
                consider(&[v - 1]);
            }
            if u64::from(v) + 1 < g.len() {
                consider(&[v + 1]);
            }
        }
        Some(_) => {
            for r in 0..g.len() as usize {
                consider(g.row(r).unwrap_or(&[]));
            }
        }
    }
    (best, ties)
}
