//! A random-forest classifier for hidden constraints: the probability that a configuration
//! runs, learnt from every outcome (BaCO, section 4.2).
//!
//! Written here rather than taken from a crate: the acquisition is optimised by local search,
//! which scores tens of thousands of configurations per proposal, and the forest crate of the
//! ecosystem (`randomforest` 0.2) was measured at about 50 µs per prediction (see the project's
//! dependency notes); these trees are flat arrays, a prediction is a few hundred comparisons.
//! The training sets are small (one row per evaluation), so exact greedy splits are cheap.
//!
//! Settings follow BaCO's classifier (scikit-learn's, with BaCO's settings): every tree sees all
//! rows (no bootstrap), a random 75% of the features is considered at each split (features
//! constant among a node's rows do not count, as in scikit-learn), feasible rows weigh 0.8 and
//! failed ones 0.2 (the forest leans towards "runs", so it excludes only regions it has seen
//! fail), trees grow until their leaves are pure.

use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::ModelError;

/// How the forest is grown.
#[derive(Clone, Debug, PartialEq)]
pub struct ForestOptions {
    /// Trees.
    pub trees: usize,
    /// The share of features considered at each split.
    pub max_features: f64,
    /// The weight of a feasible row (a failed one weighs `1 - feasible_weight`).
    pub feasible_weight: f64,
    /// Depth at most.
    pub max_depth: usize,
}

impl Default for ForestOptions {
    fn default() -> Self {
        ForestOptions {
            trees: 50,
            max_features: 0.75,
            feasible_weight: 0.8,
            max_depth: 24,
        }
    }
}

/// A node: a split on `feature` at `threshold` (left: `<=`), or a leaf.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Split {
        feature: usize,
        threshold: f64,
        left: usize,
        right: usize,
    },
    /// The weighted share of feasible rows that reached the leaf.
    Leaf(f64),
}

/// BaCO's minimum-feasibility limit ε_f for one proposal, drawn from
/// `{0, threshold/10, ..., threshold}`: P(ε_f = 0) = 1/11 > 0, so a region the forest wrongly
/// condemns is never cut off for good.
pub fn feasibility_limit<R: rand::Rng + ?Sized>(threshold: f64, rng: &mut R) -> f64 {
    threshold * f64::from(rng.random_range(0..=10u32)) / 10.0
}

/// A random forest predicting the probability that a configuration is feasible.
#[derive(Clone, Debug, PartialEq)]
pub struct FeasibilityForest {
    trees: Vec<Vec<Node>>,
    dims: usize,
}

impl FeasibilityForest {
    /// Grows a forest on rows `x` (encoded configurations of one dimension) labelled
    /// `feasible`, deterministically from `seed`.
    ///
    /// Errors: no rows, mismatched lengths, ragged or non-finite rows.
    pub fn fit(
        x: &[Vec<f64>],
        feasible: &[bool],
        options: &ForestOptions,
        seed: u64,
    ) -> Result<FeasibilityForest, ModelError> {
        FeasibilityForest::fit_weighted(x, feasible, &[], options, seed)
    }

    /// [`fit`](Self::fit) with a weight per row (empty: 1 for every row), multiplying the
    /// class weights: rows that should count less (an earlier study's outcomes on another
    /// task) pull the splits and leaves less.
    ///
    /// Errors as `fit`, and a weight list of another length or with a negative or
    /// non-finite weight.
    pub fn fit_weighted(
        x: &[Vec<f64>],
        feasible: &[bool],
        row_weights: &[f64],
        options: &ForestOptions,
        seed: u64,
    ) -> Result<FeasibilityForest, ModelError> {
        if !row_weights.is_empty() && row_weights.len() != x.len() {
            return Err(ModelError::LengthMismatch {
                what: format!("{} rows but {} row weights", x.len(), row_weights.len()),
            });
        }
        if let Some(&w) = row_weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(ModelError::NonFinite {
                what: "row weight".into(),
                value: w,
            });
        }
        if x.len() != feasible.len() {
            return Err(ModelError::LengthMismatch {
                what: format!("{} rows but {} labels", x.len(), feasible.len()),
            });
        }
        if x.is_empty() {
            return Err(ModelError::LengthMismatch {
                what: "no rows: the forest needs at least one".into(),
            });
        }
        let dims = crate::observations::check_rows(x, "row")?;
        let weights: Vec<f64> = feasible
            .iter()
            .enumerate()
            .map(|(i, &f)| {
                let class = if f {
                    options.feasible_weight
                } else {
                    1.0 - options.feasible_weight
                };
                class * row_weights.get(i).copied().unwrap_or(1.0)
            })
            .collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // As scikit-learn rounds a fractional `max_features`: down, at least one.
        let per_split = ((options.max_features * dims as f64) as usize).clamp(1, dims.max(1));
        let trees = (0..options.trees.max(1))
            .map(|_| {
                let mut grower = Grower {
                    x,
                    feasible,
                    weights: &weights,
                    per_split,
                    max_depth: options.max_depth,
                    nodes: Vec::new(),
                    rng: Xoshiro256PlusPlus::seed_from_u64(rng.random()),
                };
                // Every feature's rows in increasing order, kept sorted down the tree, so a
                // split is found by one scan per feature instead of a sort per node.
                let sorted: Vec<Vec<usize>> = (0..dims)
                    .map(|f| {
                        let mut rows: Vec<usize> = (0..x.len()).collect();
                        rows.sort_by(|&a, &b| x[a][f].total_cmp(&x[b][f]).then(a.cmp(&b)));
                        rows
                    })
                    .collect();
                grower.grow(sorted, 0);
                grower.nodes
            })
            .collect();
        Ok(FeasibilityForest { trees, dims })
    }

    /// The probability that `x` is feasible: the mean over the trees of the feasible share
    /// of its leaf. A point of the wrong dimension gets 1 (nothing is known against it).
    pub fn probability(&self, x: &[f64]) -> f64 {
        if x.len() != self.dims {
            return 1.0;
        }
        let sum: f64 = self
            .trees
            .iter()
            .map(|nodes| {
                let mut i = 0;
                loop {
                    match &nodes[i] {
                        Node::Leaf(p) => break *p,
                        Node::Split {
                            feature,
                            threshold,
                            left,
                            right,
                        } => {
                            i = if x[*feature] <= *threshold {
                                *left
                            } else {
                                *right
                            }
                        }
                    }
                }
            })
            .sum();
        sum / self.trees.len() as f64
    }
}

/// Grows one tree into `nodes` (the root is node 0).
struct Grower<'a> {
    x: &'a [Vec<f64>],
    feasible: &'a [bool],
    weights: &'a [f64],
    per_split: usize,
    max_depth: usize,
    nodes: Vec<Node>,
    rng: Xoshiro256PlusPlus,
}

impl Grower<'_> {
    /// The weighted feasible share and total weight of `rows`.
    fn share(&self, rows: &[usize]) -> (f64, f64) {
        let (mut good, mut total) = (0.0, 0.0);
        for &r in rows {
            total += self.weights[r];
            if self.feasible[r] {
                good += self.weights[r];
            }
        }
        (if total > 0.0 { good / total } else { 1.0 }, total)
    }

    /// Adds the subtree of the rows in `sorted` (the same rows, sorted by each feature),
    /// returning its node index.
    fn grow(&mut self, sorted: Vec<Vec<usize>>, depth: usize) -> usize {
        let at = self.nodes.len();
        let (p, _) = self.share(&sorted[0]);
        self.nodes.push(Node::Leaf(p));
        if p == 0.0 || p == 1.0 || sorted[0].len() < 2 || depth >= self.max_depth {
            return at;
        }
        let dims = self.x[0].len();
        let mut features: Vec<usize> = (0..dims).collect();
        features.shuffle(&mut self.rng);
        // As scikit-learn's splitter: features constant among this node's rows do not count
        // towards `per_split` (they cannot split), so a node considers `per_split` features
        // that can, where it has that many.
        let x = self.x;
        features.retain(|&f| {
            let order = &sorted[f];
            x[order[0]][f] != x[order[order.len() - 1]][f]
        });
        features.truncate(self.per_split);
        let Some((feature, threshold)) = self.best_split(&sorted, &features) else {
            return at;
        };
        // Stable partitions keep each list sorted.
        let (left, right): (Vec<Vec<usize>>, Vec<Vec<usize>>) = sorted
            .into_iter()
            .map(|list| {
                list.into_iter()
                    .partition::<Vec<usize>, _>(|&r| x[r][feature] <= threshold)
            })
            .unzip();
        let l = self.grow(left, depth + 1);
        let r = self.grow(right, depth + 1);
        self.nodes[at] = Node::Split {
            feature,
            threshold,
            left: l,
            right: r,
        };
        at
    }

    /// The split on one of `features` with the lowest weighted Gini impurity (thresholds
    /// halfway between consecutive distinct values), if any separates the rows; `sorted[f]`
    /// lists the rows in increasing order of feature `f`.
    fn best_split(&self, sorted: &[Vec<usize>], features: &[usize]) -> Option<(usize, f64)> {
        let rows = &sorted[0];
        let gini = |good: f64, total: f64| {
            if total <= 0.0 {
                0.0
            } else {
                let p = good / total;
                total * 2.0 * p * (1.0 - p)
            }
        };
        let (p_all, w_all) = self.share(rows);
        let good_all = p_all * w_all;
        let mut best: Option<(f64, usize, f64)> = None;
        for &f in features {
            let order = &sorted[f];
            let (mut good, mut total) = (0.0, 0.0);
            for k in 0..order.len() - 1 {
                let r = order[k];
                total += self.weights[r];
                if self.feasible[r] {
                    good += self.weights[r];
                }
                let (v, next) = (self.x[r][f], self.x[order[k + 1]][f]);
                if v == next {
                    continue;
                }
                let impurity = gini(good, total) + gini(good_all - good, w_all - total);
                if best.is_none_or(|(b, _, _)| impurity < b) {
                    best = Some((impurity, f, 0.5 * (v + next)));
                }
            }
        }
        best.map(|(_, f, t)| (f, t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separates_a_failure_region() {
        // Failures where x0 > 0.6 and x1 < 0.3 (a corner), feasible elsewhere.
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..200 {
            let a = (i as f64 * 0.618_034).fract();
            let b = (i as f64 * 0.414_214).fract();
            let c = (i as f64 * 0.732_051).fract();
            x.push(vec![a, b, c]);
            y.push(!(a > 0.6 && b < 0.3));
        }
        let f = FeasibilityForest::fit(&x, &y, &ForestOptions::default(), 7).unwrap();
        // Well inside each region, the forest is confident.
        assert!(f.probability(&[0.9, 0.1, 0.5]) < 0.2);
        assert!(f.probability(&[0.2, 0.8, 0.5]) > 0.95);
        assert!(f.probability(&[0.3, 0.1, 0.9]) > 0.8);
        // Training accuracy at the 0.5 threshold.
        let right = x
            .iter()
            .zip(&y)
            .filter(|(p, ok)| (f.probability(p) >= 0.5) == **ok)
            .count();
        assert!(right >= 195, "{right} of 200");
        // Deterministic per seed; another seed draws other features at the splits.
        let grid: Vec<[f64; 3]> = (0..343)
            .map(|i| {
                [
                    (i % 7) as f64 / 6.0,
                    ((i / 7) % 7) as f64 / 6.0,
                    (i / 49) as f64 / 6.0,
                ]
            })
            .collect();
        let probs =
            |f: &FeasibilityForest| -> Vec<f64> { grid.iter().map(|g| f.probability(g)).collect() };
        let same = FeasibilityForest::fit(&x, &y, &ForestOptions::default(), 7).unwrap();
        assert!(probs(&f) == probs(&same));
        let other = FeasibilityForest::fit(&x, &y, &ForestOptions::default(), 8).unwrap();
        assert!(probs(&f) != probs(&other));
    }

    #[test]
    fn constant_features_do_not_take_the_place_of_informative_ones() {
        // One informative feature among eight constant ones (a space's fixed parameters): with
        // 75% of 9 features drawn per split, a draw that counted the constant ones would miss
        // the informative one in a quarter of the trees, which then predict the mean share
        // everywhere; scikit-learn (and so BaCO) skips them, and every tree splits.
        let x: Vec<Vec<f64>> = (0..40)
            .map(|i| {
                let mut row = vec![0.5; 9];
                row[4] = i as f64 / 39.0;
                row
            })
            .collect();
        let y: Vec<bool> = x.iter().map(|r| r[4] < 0.8).collect();
        let f = FeasibilityForest::fit(&x, &y, &ForestOptions::default(), 3).unwrap();
        let mut far = vec![0.5; 9];
        far[4] = 1.0;
        assert_eq!(f.probability(&far), 0.0);
        far[4] = 0.0;
        assert_eq!(f.probability(&far), 1.0);
    }

    /// Row weights: conflicting labels on the same points follow the heavier rows, and a
    /// weight of zero leaves a row out; weights of another length or below zero are errors.
    #[test]
    fn row_weights_decide_between_conflicting_rows() {
        // The same ten points twice: once failing (heavy), once running (light).
        let x: Vec<Vec<f64>> = (0..20).map(|i| vec![(i % 10) as f64 / 9.0]).collect();
        let y: Vec<bool> = (0..20).map(|i| i >= 10).collect();
        let weights = |fail: f64, run: f64| -> Vec<f64> {
            (0..20).map(|i| if i < 10 { fail } else { run }).collect()
        };
        let o = ForestOptions::default();
        let heavy_failures =
            FeasibilityForest::fit_weighted(&x, &y, &weights(1.0, 0.1), &o, 1).unwrap();
        let heavy_runs =
            FeasibilityForest::fit_weighted(&x, &y, &weights(0.1, 1.0), &o, 1).unwrap();
        assert!(heavy_failures.probability(&[0.5]) < 0.5);
        assert!(heavy_runs.probability(&[0.5]) > 0.5);
        let without = FeasibilityForest::fit_weighted(&x, &y, &weights(0.0, 1.0), &o, 1).unwrap();
        assert_eq!(without.probability(&[0.5]), 1.0);
        assert!(FeasibilityForest::fit_weighted(&x, &y, &[1.0; 3], &o, 1).is_err());
        assert!(FeasibilityForest::fit_weighted(&x, &y, &weights(-1.0, 1.0), &o, 1).is_err());
    }

    #[test]
    fn one_class_and_bad_input() {
        let x = vec![vec![0.0, 1.0], vec![1.0, 0.0]];
        let f = FeasibilityForest::fit(&x, &[true, true], &ForestOptions::default(), 0).unwrap();
        assert_eq!(f.probability(&[0.5, 0.5]), 1.0);
        assert_eq!(f.probability(&[0.5]), 1.0, "wrong dimension: nothing known");
        let f = FeasibilityForest::fit(&x, &[false, false], &ForestOptions::default(), 0).unwrap();
        assert_eq!(f.probability(&[0.5, 0.5]), 0.0);
        let o = ForestOptions::default();
        assert!(FeasibilityForest::fit(&[], &[], &o, 0).is_err());
        assert!(FeasibilityForest::fit(&x, &[true], &o, 0).is_err());
        assert!(
            FeasibilityForest::fit(&[vec![0.0], vec![1.0, 2.0]], &[true, false], &o, 0).is_err()
        );
        assert!(FeasibilityForest::fit(&[vec![f64::NAN]], &[true], &o, 0).is_err());
    }
}
