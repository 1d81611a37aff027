//! The cluster-classify machinery of the clustered GP: k-means on observations of mixed
//! parameter types, and a k-nearest-neighbour classifier that assigns any configuration to a
//! cluster.
//!
//! Both work with the per-parameter distances of [`Metric`] (unit lengthscales), so that
//! categorical and permutation parameters cluster as they are compared by the GP:
//!
//! - k-nearest neighbours uses the metric's squared distance directly.
//! - k-means needs means, which make no sense for a category index or an ordering. It runs
//!   instead in a Euclidean *embedding* in which the squared distance between two points is
//!   exactly the metric's: a numeric coordinate is itself; a categorical parameter becomes a
//!   one-hot vector over the values observed, scaled by 1/√2; a permutation under Spearman's
//!   distance its positions scaled by 1/√max; under Kendall's the order of each pair of
//!   items (0/1) scaled by 1/√pairs; under Hamming a one-hot of each item's position scaled by
//!   1/√(2n). Means of those vectors are valid centroids (for a categorical parameter: the
//!   frequency of each value), and k-means minimises the same within-cluster distances the
//!   GP sees.
//!
//! k-means is written here (k-means++ seeding, Lloyd iterations, about 80 lines): the crates
//! that have it (linfa-clustering, smartcore) bring their own array stacks and a second
//! `rand`, for a loop this small (see the design notes on dependencies).

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::kernel::{Distance, Hyperparameters, Kernel, KernelKind, Metric, Prepared};

/// `(start, end, distance)` of each parameter of a metric over points of dimension `dims`.
fn blocks(metric: &Metric, dims: usize) -> Vec<(usize, usize, Distance)> {
    match metric {
        Metric::PerCoordinate(d) => (0..dims).map(|i| (i, i + 1, *d)).collect(),
        Metric::Parameters(bs) => {
            let mut start = 0;
            bs.iter()
                .map(|b| {
                    let r = (start, start + b.len, b.distance);
                    start += b.len;
                    r
                })
                .collect()
        }
    }
}

/// A Euclidean embedding of points under a [`Metric`]: squared Euclidean distances between
/// embedded points equal the metric's squared distances (unit lengthscales).
#[derive(Clone, Debug)]
pub(crate) struct Embedding {
    blocks: Vec<(usize, usize, Distance)>,
    /// Per block, the values (tuples of coordinates) seen for a Hamming (categorical)
    /// parameter.
    categories: Vec<Vec<Vec<f64>>>,
}

impl Embedding {
    /// The embedding for `points` (the categories are those that occur in them).
    pub(crate) fn new(metric: &Metric, points: &[Vec<f64>]) -> Embedding {
        let dims = points.first().map_or(0, Vec::len);
        let blocks = blocks(metric, dims);
        let categories = blocks
            .iter()
            .map(|&(s, e, d)| {
                if d != Distance::Hamming {
                    return Vec::new();
                }
                let mut seen: Vec<Vec<f64>> = Vec::new();
                for p in points {
                    if !seen.iter().any(|c| c.as_slice() == &p[s..e]) {
                        seen.push(p[s..e].to_vec());
                    }
                }
                seen
            })
            .collect();
        Embedding { blocks, categories }
    }

    /// The embedded coordinates of `x`.
    pub(crate) fn embed(&self, x: &[f64]) -> Vec<f64> {
        let mut out = Vec::with_capacity(x.len());
        for (&(s, e, d), cats) in self.blocks.iter().zip(&self.categories) {
            let a = &x[s..e];
            let n = a.len();
            match d {
                Distance::Euclidean => out.extend_from_slice(a),
                Distance::Hamming => {
                    let h = std::f64::consts::FRAC_1_SQRT_2;
                    out.extend(cats.iter().map(|c| if c.as_slice() == a { h } else { 0.0 }));
                }
                Distance::Spearman => {
                    let max = n as f64 * ((n * n) as f64 - 1.0) / 3.0;
                    let s = if max > 0.0 { 1.0 / max.sqrt() } else { 0.0 };
                    out.extend(a.iter().map(|p| p * s));
                }
                Distance::Kendall => {
                    let pairs = n * n.saturating_sub(1) / 2;
                    let s = if pairs > 0 {
                        1.0 / (pairs as f64).sqrt()
                    } else {
                        0.0
                    };
                    for i in 0..n {
                        for j in i + 1..n {
                            out.push(if a[i] < a[j] { s } else { 0.0 });
                        }
                    }
                }
                Distance::PermutationHamming => {
                    let s = if n > 0 {
                        1.0 / (2.0 * n as f64).sqrt()
                    } else {
                        0.0
                    };
                    for &p in a {
                        // Item i at position p: one-hot over the n positions.
                        out.extend((0..n).map(|q| if q as f64 == p { s } else { 0.0 }));
                    }
                }
            }
        }
        out
    }
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// k-means (k-means++ seeding, Lloyd iterations) of `points` into at most `k` clusters:
/// the label of each point, labels `0..k'` with `k' <= k` all used. The best of `restarts`
/// seedings by within-cluster sum of squares; deterministic for a `seed`.
pub(crate) fn kmeans(points: &[Vec<f64>], k: usize, restarts: usize, seed: u64) -> Vec<usize> {
    let n = points.len();
    if n == 0 {
        return Vec::new();
    }
    let k = k.clamp(1, n);
    if k == 1 {
        return vec![0; n];
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut best: Option<(f64, Vec<usize>)> = None;
    for _ in 0..restarts.max(1) {
        // k-means++: each next centre drawn with probability proportional to the squared
        // distance to the nearest centre chosen so far.
        let mut centres: Vec<Vec<f64>> = vec![points[rng.random_range(0..n)].clone()];
        let mut d2: Vec<f64> = points.iter().map(|p| dist2(p, &centres[0])).collect();
        while centres.len() < k {
            let total: f64 = d2.iter().sum();
            if total <= 0.0 {
                break; // fewer distinct points than k
            }
            let mut u = rng.random::<f64>() * total;
            let mut pick = n - 1;
            for (i, &w) in d2.iter().enumerate() {
                if u < w {
                    pick = i;
                    break;
                }
                u -= w;
            }
            centres.push(points[pick].clone());
            for (d, p) in d2.iter_mut().zip(points) {
                *d = d.min(dist2(p, &points[pick]));
            }
        }
        let mut labels = vec![0usize; n];
        for _ in 0..100 {
            let mut changed = false;
            for (l, p) in labels.iter_mut().zip(points) {
                let nearest = (0..centres.len())
                    .min_by(|&a, &b| dist2(p, &centres[a]).total_cmp(&dist2(p, &centres[b])))
                    .unwrap_or(0);
                if *l != nearest {
                    *l = nearest;
                    changed = true;
                }
            }
            let dims = points[0].len();
            let mut sums = vec![vec![0.0; dims]; centres.len()];
            let mut counts = vec![0usize; centres.len()];
            for (&l, p) in labels.iter().zip(points) {
                counts[l] += 1;
                for (s, v) in sums[l].iter_mut().zip(p) {
                    *s += v;
                }
            }
            for ((c, s), &m) in centres.iter_mut().zip(sums).zip(&counts) {
                if m > 0 {
                    *c = s.into_iter().map(|v| v / m as f64).collect();
                }
            }
            if !changed {
                break;
            }
        }
        let inertia: f64 = labels
            .iter()
            .zip(points)
            .map(|(&l, p)| dist2(p, &centres[l]))
            .sum();
        if best.as_ref().is_none_or(|(b, _)| inertia < *b) {
            best = Some((inertia, labels));
        }
    }
    let labels = best.map(|(_, l)| l).unwrap_or_else(|| vec![0; n]);
    compact(&labels)
}

/// Renumbers labels to `0..k'` in order of first appearance.
fn compact(labels: &[usize]) -> Vec<usize> {
    let mut map: Vec<(usize, usize)> = Vec::new();
    labels
        .iter()
        .map(|&l| match map.iter().find(|(from, _)| *from == l) {
            Some(&(_, to)) => to,
            None => {
                let to = map.len();
                map.push((l, to));
                to
            }
        })
        .collect()
}

/// k-nearest-neighbour classification of points by the labels of the observed ones, under a
/// metric's distances (unit lengthscales).
#[derive(Clone, Debug)]
pub(crate) struct Classifier {
    prepared: Prepared,
    neighbours: usize,
}

/// The class of a point and how sure the vote was.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Vote {
    /// The class.
    pub label: usize,
    /// The share of the neighbours that voted for another class, in `[0, 1)`: 0 deep inside
    /// a class, larger next to the boundary between two.
    pub dissent: f64,
}

impl Classifier {
    /// A classifier for points of dimension `dims` under `metric` (validated by the caller).
    pub(crate) fn new(metric: &Metric, dims: usize, neighbours: usize) -> Classifier {
        let kernel = Kernel::with_metric(
            KernelKind::Matern52,
            metric.clone(),
            Hyperparameters::isotropic(1.0),
        );
        Classifier {
            prepared: kernel.prepare(dims),
            neighbours: neighbours.max(1),
        }
    }

    /// The class of `x` by a majority of its nearest observed points (`labels[i]` of
    /// `observed[i]`); a tie goes to the class of the nearest point among the tied ones.
    pub(crate) fn classify(&self, x: &[f64], observed: &[Vec<f64>], labels: &[usize]) -> Vote {
        let k = self.neighbours.min(observed.len());
        if k == 0 {
            return Vote {
                label: 0,
                dissent: 0.0,
            };
        }
        // The k nearest by insertion into a short sorted list (k is small).
        let mut nearest: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
        for (i, p) in observed.iter().enumerate() {
            let d = self.prepared.r2(x, p);
            if nearest.len() < k || d < nearest[k - 1].0 {
                let at = nearest.partition_point(|&(e, _)| e <= d);
                nearest.insert(at, (d, i));
                nearest.truncate(k);
            }
        }
        let mut votes: Vec<(usize, usize)> = Vec::new(); // (label, count), first-seen = nearest
        for &(_, i) in &nearest {
            match votes.iter_mut().find(|(l, _)| *l == labels[i]) {
                Some(v) => v.1 += 1,
                None => votes.push((labels[i], 1)),
            }
        }
        let mut win = votes[0];
        for &v in &votes[1..] {
            if v.1 > win.1 {
                win = v;
            }
        }
        Vote {
            label: win.0,
            dissent: 1.0 - win.1 as f64 / k as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Block;

    fn block(len: usize, distance: Distance) -> Block {
        Block { len, distance }
    }

    #[test]
    fn embedding_preserves_every_distance() {
        let metric = Metric::Parameters(vec![
            block(1, Distance::Euclidean),
            block(1, Distance::Hamming),
            block(4, Distance::Spearman),
            block(4, Distance::Kendall),
            block(4, Distance::PermutationHamming),
        ]);
        let perms = [
            [0.0, 1.0, 2.0, 3.0],
            [3.0, 1.0, 0.0, 2.0],
            [1.0, 0.0, 3.0, 2.0],
        ];
        let mut points = Vec::new();
        for (i, p) in perms.iter().enumerate() {
            for (j, q) in perms.iter().enumerate() {
                let mut x = vec![0.1 * i as f64, (i * 2 + j) as f64 % 3.0];
                x.extend_from_slice(p);
                x.extend_from_slice(q);
                x.extend_from_slice(&perms[(i + j) % 3]);
                points.push(x);
            }
        }
        let emb = Embedding::new(&metric, &points);
        let exact = Classifier::new(&metric, 14, 1);
        for a in &points {
            for b in &points {
                let want = exact.prepared.r2(a, b);
                let got = dist2(&emb.embed(a), &emb.embed(b));
                assert!(
                    (want - got).abs() < 1e-12,
                    "{want} vs {got} for {a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn kmeans_separates_well_separated_groups_and_is_deterministic() {
        let mut points = Vec::new();
        for i in 0..30 {
            let t = f64::from(i) * 0.01;
            points.push(vec![t, 0.0]);
            points.push(vec![5.0 + t, 5.0]);
            points.push(vec![-5.0, 5.0 + t]);
        }
        let labels = kmeans(&points, 3, 3, 7);
        for g in 0..3 {
            let first = labels[g];
            assert!(
                (0..30).all(|i| labels[3 * i + g] == first),
                "group {g} split: {labels:?}"
            );
        }
        assert_ne!(labels[0], labels[1]);
        assert_ne!(labels[1], labels[2]);
        assert_ne!(labels[0], labels[2]);
        assert_eq!(labels, kmeans(&points, 3, 3, 7));
        // Labels are 0.. in order of first appearance.
        assert_eq!(&labels[..3], &[0, 1, 2]);
        // k = 1, more clusters than points, identical points, no points.
        assert_eq!(kmeans(&points, 1, 3, 7), vec![0; 90]);
        assert_eq!(kmeans(&points[..2], 5, 3, 7).len(), 2);
        assert_eq!(kmeans(&vec![vec![1.0, 1.0]; 6], 3, 3, 7), vec![0; 6]);
        assert!(kmeans(&[], 3, 3, 7).is_empty());
    }

    #[test]
    fn nearest_neighbours_vote_and_report_dissent() {
        let metric = Metric::PerCoordinate(Distance::Euclidean);
        let observed: Vec<Vec<f64>> = [0.0, 0.1, 0.2, 1.0, 1.1, 1.2]
            .iter()
            .map(|&v| vec![v])
            .collect();
        let labels = [0, 0, 0, 1, 1, 1];
        let c = Classifier::new(&metric, 1, 3);
        assert_eq!(
            c.classify(&[0.05], &observed, &labels),
            Vote {
                label: 0,
                dissent: 0.0
            }
        );
        assert_eq!(c.classify(&[1.3], &observed, &labels).label, 1);
        // Between the groups, two of three neighbours decide; the third dissents.
        let v = c.classify(&[0.58], &observed, &labels);
        assert_eq!(v.label, 0);
        assert!((v.dissent - 1.0 / 3.0).abs() < 1e-12);
        let v = c.classify(&[0.62], &observed, &labels);
        assert_eq!(v.label, 1);
        // Categorical distance: equal or not.
        let cat = Metric::PerCoordinate(Distance::Hamming);
        let c = Classifier::new(&cat, 1, 1);
        assert_eq!(c.classify(&[4.0], &observed, &labels).label, 0);
        assert_eq!(c.classify(&[1.1], &observed, &labels).label, 1);
    }
}
