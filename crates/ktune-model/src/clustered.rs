//! The clustered Gaussian process (cGP) of Luo et al., "Non-smooth Bayesian optimization in
//! tuning problems" (section 2.3, Algorithm 1): one GP per regime of a non-smooth objective.
//!
//! 1. **Cluster** the observations as pairs `(x, ξ·y)` (encoded configuration, standardised
//!    value) with k-means (k = 3 by default): two configurations close in `x` whose values
//!    differ a lot land in different clusters, close ones with close values together.
//!    Clusters with fewer than `min_size` observations are merged into the nearest one.
//! 2. **Classify** any configuration by its k nearest observed configurations (k = 3), on `x`
//!    alone, so every candidate belongs to exactly one component.
//! 3. **Fit** one GP per component (its own normalisation and hyperparameters: fixed, or
//!    fitted by [`Surrogate::fit`]); a candidate's prediction is its component's.
//! 4. **Acquire**: the paper maximises EI in each component and takes the component whose
//!    best EI divided by its number of observations is largest, which is the same as
//!    maximising `EI(x) / n(component of x)` over all candidates: that divisor is the
//!    prediction's [`Weighted::weight`], so both Bayesian strategies apply the weighting with
//!    the acquisition they already have. The optional boundary term multiplies the weight by
//!    `1 + β·dissent`, where dissent is the share of a candidate's neighbours of another
//!    component (0 inside a component, up to 2/3 at a boundary): the paper adds a penalty
//!    "normalised to the same scale" as the acquisition; a factor is that scale without
//!    having to estimate it, and leaves a candidate without expected improvement at zero.
//!
//! The clustering is redone whenever the observations change, deterministically (k-means++
//! seeded from the number of observations), and components are numbered by their mean value
//! so that the hyperparameters fitted for the best regime warm-start its next fit. With one
//! cluster the model is its component GP, weight 1: exactly the plain GP.

use std::sync::OnceLock;

use crate::cluster::{Classifier, Embedding, kmeans};
use crate::error::ModelError;
use crate::exact::ExactGp;
use crate::kernel::Metric;
use crate::observations::Observations;
use crate::surrogate::{Point, Surrogate, Weighted};

/// How the acquisition of a candidate is weighted by its component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weighting {
    /// By the inverse of the component's number of observations (the paper's default,
    /// needed for its convergence argument, Appendix E).
    InverseSize,
    /// Not at all: the acquisition of each candidate under its component's GP.
    None,
}

/// The options of the clustered GP (defaults: the paper's footnotes and section 3).
#[derive(Clone, Debug, PartialEq)]
pub struct ClusterOptions {
    /// The number of k-means clusters (the largest number of components).
    pub clusters: usize,
    /// The factor ξ on the standardised value in the pairs `(x, ξ·y)` that are clustered.
    pub xi: f64,
    /// Neighbours that vote on a candidate's component.
    pub neighbours: usize,
    /// Components with fewer observations are merged into the nearest one.
    pub min_size: usize,
    /// The acquisition weight of a component.
    pub weighting: Weighting,
    /// β of the boundary term (0: none, the paper's recommendation).
    pub boundary: f64,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions {
            clusters: 3,
            xi: 1.0,
            neighbours: 3,
            min_size: 3,
            weighting: Weighting::InverseSize,
            boundary: 0.0,
        }
    }
}

impl ClusterOptions {
    /// Checks every option once, naming the one that is out of range.
    pub fn validate(&self) -> Result<(), ModelError> {
        let bad = |name: &'static str, value: f64, reason: &'static str| {
            Err(ModelError::InvalidHyperparameter {
                name,
                value,
                reason,
            })
        };
        if self.clusters == 0 || self.clusters > 64 {
            return bad("clusters", self.clusters as f64, "must be 1 to 64");
        }
        if !(self.xi.is_finite() && self.xi >= 0.0) {
            return bad("xi", self.xi, "must be finite and >= 0");
        }
        if self.neighbours == 0 || self.neighbours > 1000 {
            return bad("neighbours", self.neighbours as f64, "must be 1 to 1000");
        }
        if self.min_size == 0 {
            return bad("min_size", 0.0, "must be at least 1");
        }
        if !(self.boundary.is_finite() && self.boundary >= 0.0) {
            return bad("boundary", self.boundary, "must be finite and >= 0");
        }
        Ok(())
    }
}

/// The partition of the observations and one GP per component.
#[derive(Debug)]
struct Components {
    /// The component of each observation.
    labels: Vec<usize>,
    gps: Vec<ExactGp>,
    /// Per component, its acquisition weight before the boundary term.
    weights: Vec<f64>,
}

/// The clustered GP: a [`Surrogate`] made of one GP per cluster of the observations.
#[derive(Debug)]
pub struct ClusteredGp {
    /// An empty GP whose settings (kernel, fixed or fitted hyperparameters) every component
    /// starts from.
    prototype: ExactGp,
    options: ClusterOptions,
    classifier: Option<Classifier>,
    obs: Observations,
    components: OnceLock<Result<Components, ModelError>>,
    /// The component GPs of the last partition, best regime first: their (fitted)
    /// hyperparameters are where the next partition's components start.
    previous: Vec<ExactGp>,
}

impl ClusteredGp {
    /// A clustered GP whose components are copies of `prototype` (which must have no
    /// observations; its kernel's metric is also the classifier's).
    pub fn new(prototype: ExactGp, options: ClusterOptions) -> Result<ClusteredGp, ModelError> {
        options.validate()?;
        if !prototype.is_empty() {
            return Err(ModelError::LengthMismatch {
                what: format!(
                    "the prototype GP of a clustered GP must be empty; it has {} observations",
                    prototype.len()
                ),
            });
        }
        Ok(ClusteredGp {
            prototype,
            options,
            classifier: None,
            obs: Observations::default(),
            components: OnceLock::new(),
            previous: Vec::new(),
        })
    }

    /// The options.
    pub fn options(&self) -> &ClusterOptions {
        &self.options
    }

    fn metric(&self) -> &Metric {
        &self.prototype.kernel().metric
    }

    /// The component of each observation, in order (clustering now if needed).
    pub fn labels(&self) -> Result<&[usize], ModelError> {
        Ok(&self.components()?.labels)
    }

    /// The number of observations in each component.
    pub fn sizes(&self) -> Result<Vec<usize>, ModelError> {
        Ok(self.components()?.gps.iter().map(Surrogate::len).collect())
    }

    /// The component GPs (best regime first).
    pub fn component_models(&self) -> Result<&[ExactGp], ModelError> {
        Ok(&self.components()?.gps)
    }

    fn components(&self) -> Result<&Components, ModelError> {
        self.components
            .get_or_init(|| self.partition())
            .as_ref()
            .map_err(Clone::clone)
    }

    fn changed(&mut self) {
        if let Some(Ok(c)) = self.components.take() {
            self.previous = c.gps;
        }
    }

    /// Clusters the observations and builds a GP per component.
    fn partition(&self) -> Result<Components, ModelError> {
        let n = self.obs.y.len();
        let labels = if n == 0 {
            Vec::new()
        } else {
            let k = self.options.clusters.min(n / self.options.min_size).max(1);
            let mean = self.obs.y.iter().sum::<f64>() / n as f64;
            let sd = (self
                .obs
                .y
                .iter()
                .map(|v| (v - mean) * (v - mean))
                .sum::<f64>()
                / n as f64)
                .sqrt();
            let scale = if sd > 0.0 { self.options.xi / sd } else { 0.0 };
            let embedding = Embedding::new(self.metric(), &self.obs.x);
            let pairs: Vec<Vec<f64>> = self
                .obs
                .x
                .iter()
                .zip(&self.obs.y)
                .map(|(x, &y)| {
                    let mut p = embedding.embed(x);
                    p.push((y - mean) * scale);
                    p
                })
                .collect();
            // Deterministic: the same observations give the same partition.
            let seed = 0x9e37_79b9_7f4a_7c15_u64 ^ n as u64;
            let labels = kmeans(&pairs, k, 3, seed);
            merge_small(&pairs, labels, self.options.min_size)
        };
        // Number the components by their mean value, best (smallest) first.
        let count = labels.iter().copied().max().map_or(0, |m| m + 1);
        let mut means: Vec<(f64, usize)> = (0..count)
            .map(|c| {
                let (s, m) = labels
                    .iter()
                    .zip(&self.obs.y)
                    .filter(|(l, _)| **l == c)
                    .fold((0.0, 0usize), |(s, m), (_, &v)| (s + v, m + 1));
                (s / m.max(1) as f64, c)
            })
            .collect();
        means.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut order = vec![0usize; count];
        for (new, &(_, old)) in means.iter().enumerate() {
            order[old] = new;
        }
        let labels: Vec<usize> = labels.iter().map(|&l| order[l]).collect();
        let count = count.max(1);
        let mut gps = Vec::with_capacity(count);
        for c in 0..count {
            let mut gp = self
                .previous
                .get(c)
                .map_or_else(|| self.prototype.clone(), ExactGp::emptied);
            let mut noise = Vec::new();
            for (i, _) in labels.iter().enumerate().filter(|(_, l)| **l == c) {
                gp.observe(Point::new(&self.obs.x[i]), self.obs.y[i])?;
                if !self.obs.noise.is_empty() {
                    noise.push(self.obs.noise[i]);
                }
            }
            if !noise.is_empty() {
                gp.set_noise(&noise)?;
            }
            gps.push(gp);
        }
        let smallest = gps.iter().map(Surrogate::len).filter(|&m| m > 0).min();
        let weights = gps
            .iter()
            .map(|gp| match (self.options.weighting, smallest) {
                // Relative to the smallest component, so that one component weighs 1.
                (Weighting::InverseSize, Some(s)) if !gp.is_empty() => s as f64 / gp.len() as f64,
                _ => 1.0,
            })
            .collect();
        Ok(Components {
            labels,
            gps,
            weights,
        })
    }
}

/// Merges every cluster smaller than `min_size` into the cluster whose centroid is nearest
/// to its own (smallest first), until none is left or one cluster remains; labels stay
/// `0..k'`.
fn merge_small(points: &[Vec<f64>], mut labels: Vec<usize>, min_size: usize) -> Vec<usize> {
    loop {
        let count = labels.iter().copied().max().map_or(0, |m| m + 1);
        if count <= 1 {
            return labels;
        }
        let sizes: Vec<usize> = (0..count)
            .map(|c| labels.iter().filter(|&&l| l == c).count())
            .collect();
        let Some(small) = (0..count)
            .filter(|&c| sizes[c] < min_size)
            .min_by_key(|&c| (sizes[c], c))
        else {
            return labels;
        };
        let centroid = |c: usize| -> Vec<f64> {
            let dims = points[0].len();
            let mut s = vec![0.0; dims];
            for (p, _) in points.iter().zip(&labels).filter(|(_, l)| **l == c) {
                for (a, v) in s.iter_mut().zip(p) {
                    *a += v;
                }
            }
            s.iter().map(|v| v / sizes[c].max(1) as f64).collect()
        };
        let from = centroid(small);
        let into = (0..count)
            .filter(|&c| c != small && sizes[c] > 0)
            .min_by(|&a, &b| {
                let da: f64 = centroid(a)
                    .iter()
                    .zip(&from)
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum();
                let db: f64 = centroid(b)
                    .iter()
                    .zip(&from)
                    .map(|(x, y)| (x - y) * (x - y))
                    .sum();
                da.total_cmp(&db)
            })
            .unwrap_or(0);
        for l in &mut labels {
            if *l == small {
                *l = into;
            }
            // Close the gap the merged cluster leaves.
            if *l > small {
                *l -= 1;
            }
        }
    }
}

impl Surrogate for ClusteredGp {
    fn observe(&mut self, point: Point<'_>, y: f64) -> Result<(), ModelError> {
        if self.classifier.is_none() {
            self.prototype.kernel().validate(point.x.len())?;
        }
        self.obs.push(point.x, y)?;
        if self.classifier.is_none() {
            self.classifier = Some(Classifier::new(
                self.metric(),
                point.x.len(),
                self.options.neighbours,
            ));
        }
        self.changed();
        Ok(())
    }

    fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        self.obs.replace_values(ys)?;
        self.changed();
        Ok(())
    }

    fn truncate(&mut self, len: usize) {
        if len < self.obs.y.len() {
            self.obs.truncate(len);
            self.changed();
        }
    }

    fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        self.obs.set_noise(variances)?;
        self.changed();
        Ok(())
    }

    fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError> {
        Ok(self
            .predict_weighted(points)?
            .into_iter()
            .map(|w| (w.mean, w.variance))
            .collect())
    }

    fn predict_weighted(&self, points: &[Point<'_>]) -> Result<Vec<Weighted>, ModelError> {
        let c = self.components()?;
        let (Some(classifier), false) = (&self.classifier, self.obs.y.is_empty()) else {
            // No observation yet: as the components (an error for exact GPs).
            return self.prototype.predict_weighted(points);
        };
        let votes: Vec<_> = if c.gps.len() == 1 {
            Vec::new()
        } else {
            points
                .iter()
                .map(|p| classifier.classify(p.x, &self.obs.x, &c.labels))
                .collect()
        };
        let mut out = vec![
            Weighted {
                mean: 0.0,
                variance: 0.0,
                weight: 0.0
            };
            points.len()
        ];
        for (k, gp) in c.gps.iter().enumerate() {
            let idx: Vec<usize> = if votes.is_empty() {
                (0..points.len()).collect()
            } else {
                (0..points.len()).filter(|&i| votes[i].label == k).collect()
            };
            if idx.is_empty() {
                continue;
            }
            let own: Vec<Point<'_>> = idx.iter().map(|&i| points[i]).collect();
            for (&i, (mean, variance)) in idx.iter().zip(gp.predict(&own)?) {
                let dissent = votes.get(i).map_or(0.0, |v| v.dissent);
                out[i] = Weighted {
                    mean,
                    variance,
                    weight: c.weights[k] * (1.0 + self.options.boundary * dissent),
                };
            }
        }
        Ok(out)
    }

    fn fit(&mut self, seed: u64) -> Result<(), ModelError> {
        // Partition first (a no-op when nothing changed), then fit each component.
        self.components()?;
        if let Some(Ok(c)) = self.components.get_mut() {
            for (k, gp) in c.gps.iter_mut().enumerate() {
                gp.fit(seed.wrapping_add(k as u64))?;
            }
        }
        Ok(())
    }

    fn observed_values(&self) -> &[f64] {
        &self.obs.y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Kernel, KernelKind};
    use crate::{FitOptions, Priors};

    /// f1 of the paper: `-x + 1` below 0, `x²` from 0 on: a jump from 1 to 0 at the minimum.
    fn f1(x: f64) -> f64 {
        if x < 0.0 { -x + 1.0 } else { x * x }
    }

    fn fixed() -> ExactGp {
        let mut k = Kernel::new(KernelKind::Matern52, 0.3);
        k.hyper.noise = 1e-6;
        ExactGp::new(k)
    }

    fn observe_all(model: &mut dyn Surrogate, xs: &[f64], f: impl Fn(f64) -> f64) {
        for &x in xs {
            model.observe(Point::new(&[x]), f(x)).unwrap();
        }
    }

    #[test]
    fn one_cluster_is_exactly_the_plain_gp() {
        let xs: Vec<f64> = (0..12).map(|i| -1.0 + f64::from(i) * 0.18).collect();
        let mut plain = fixed();
        observe_all(&mut plain, &xs, f1);
        let one = ClusterOptions {
            clusters: 1,
            ..ClusterOptions::default()
        };
        let mut cgp = ClusteredGp::new(fixed(), one).unwrap();
        observe_all(&mut cgp, &xs, f1);
        let grid: Vec<[f64; 1]> = (0..41).map(|i| [-1.0 + f64::from(i) * 0.05]).collect();
        let points: Vec<Point<'_>> = grid.iter().map(|g| Point::new(g)).collect();
        let a = plain.predict(&points).unwrap();
        let b = cgp.predict_weighted(&points).unwrap();
        for (p, w) in a.iter().zip(&b) {
            assert_eq!((p.0, p.1, 1.0), (w.mean, w.variance, w.weight));
        }
    }

    #[test]
    fn the_jump_of_f1_separates_the_two_regimes() {
        // Pilot samples on [-1, 1]: the left branch (values 1 to 2) and the right (0 to 1).
        let xs: Vec<f64> = (0..20).map(|i| -0.95 + f64::from(i) * 0.1).collect();
        let opts = ClusterOptions {
            clusters: 2,
            ..ClusterOptions::default()
        };
        let mut cgp = ClusteredGp::new(fixed(), opts).unwrap();
        observe_all(&mut cgp, &xs, f1);
        let labels = cgp.labels().unwrap().to_vec();
        // Components are numbered best first: the right branch (small values) is 0.
        for (x, l) in xs.iter().zip(&labels) {
            assert_eq!(*l, usize::from(*x < 0.0), "x = {x}: {labels:?}");
        }
        assert_eq!(cgp.sizes().unwrap(), vec![10, 10]);
        // Just right of the jump the cGP predicts the right branch; the single GP smooths
        // across the jump and predicts far too high there.
        let at = [Point::new(&[0.02])];
        let cg = cgp.predict(&at).unwrap()[0].0;
        let mut plain = fixed();
        observe_all(&mut plain, &xs, f1);
        let gp = plain.predict(&at).unwrap()[0].0;
        assert!((cg - f1(0.02)).abs() < 0.05, "cGP {cg}");
        assert!(
            (gp - f1(0.02)).abs() > 3.0 * (cg - f1(0.02)).abs(),
            "GP {gp}, cGP {cg}"
        );
        // Deterministic: the same observations, the same partition.
        let mut again = ClusteredGp::new(fixed(), cgp.options().clone()).unwrap();
        observe_all(&mut again, &xs, f1);
        assert_eq!(again.labels().unwrap(), labels.as_slice());
    }

    #[test]
    fn weights_are_inverse_component_sizes_and_the_boundary_raises_them() {
        // 12 points on the right, 6 on the left.
        let mut xs: Vec<f64> = (0..12).map(|i| 0.05 + f64::from(i) * 0.08).collect();
        xs.extend((0..6).map(|i| -0.9 + f64::from(i) * 0.15));
        let opts = ClusterOptions {
            clusters: 2,
            boundary: 0.0,
            ..ClusterOptions::default()
        };
        let mut cgp = ClusteredGp::new(fixed(), opts.clone()).unwrap();
        observe_all(&mut cgp, &xs, f1);
        assert_eq!(cgp.sizes().unwrap(), vec![12, 6]);
        let w =
            |m: &ClusteredGp, x: f64| m.predict_weighted(&[Point::new(&[x])]).unwrap()[0].weight;
        assert_eq!(w(&cgp, 0.5), 0.5);
        assert_eq!(w(&cgp, -0.5), 1.0);
        // Unweighted.
        let mut none = ClusteredGp::new(
            fixed(),
            ClusterOptions {
                weighting: Weighting::None,
                ..opts.clone()
            },
        )
        .unwrap();
        observe_all(&mut none, &xs, f1);
        assert_eq!(w(&none, 0.5), 1.0);
        // With β = 3, a candidate whose neighbours disagree (next to the jump) weighs more
        // than one inside a component.
        let mut edge = ClusteredGp::new(
            fixed(),
            ClusterOptions {
                boundary: 3.0,
                ..opts
            },
        )
        .unwrap();
        observe_all(&mut edge, &xs, f1);
        assert_eq!(w(&edge, 0.6), 0.5);
        // -0.1: neighbours -0.15, 0.05 and -0.3, the left component wins 2 to 1.
        assert!((w(&edge, -0.1) - 2.0).abs() < 1e-12, "{}", w(&edge, -0.1));
    }

    #[test]
    fn small_clusters_are_merged() {
        // One far outlier value would be a cluster of one.
        let xs: Vec<f64> = (0..10).map(|i| f64::from(i) * 0.1).collect();
        let mut cgp = ClusteredGp::new(
            fixed(),
            ClusterOptions {
                clusters: 3,
                min_size: 3,
                ..ClusterOptions::default()
            },
        )
        .unwrap();
        observe_all(&mut cgp, &xs, |x| if x > 0.85 { 100.0 } else { x });
        assert!(
            cgp.sizes().unwrap().iter().all(|&s| s >= 3),
            "{:?}",
            cgp.sizes()
        );
    }

    #[test]
    fn fitted_components_and_bad_input() {
        let opts = FitOptions {
            priors: Some(Priors::default()),
            samples: 20,
            ..FitOptions::default()
        };
        let proto = ExactGp::fitted(
            KernelKind::Matern52,
            Metric::PerCoordinate(crate::Distance::Euclidean),
            opts,
        );
        let mut cgp = ClusteredGp::new(proto.clone(), ClusterOptions::default()).unwrap();
        // Before any observation it cannot predict, as its components cannot.
        assert_eq!(
            cgp.predict_weighted(&[Point::new(&[0.3])]).unwrap_err(),
            proto.predict(&[Point::new(&[0.3])]).unwrap_err()
        );
        let xs: Vec<f64> = (0..24).map(|i| -0.96 + f64::from(i) * 0.08).collect();
        // The components' hyperparameters once fitted with seed 3.
        let fitted = |cgp: &mut ClusteredGp| {
            observe_all(cgp, &xs, f1);
            cgp.fit(3).unwrap();
            let models = cgp.component_models().unwrap();
            models
                .iter()
                .map(|g| g.kernel().hyper.clone())
                .collect::<Vec<_>>()
        };
        let before = fitted(&mut cgp);
        assert!(before.len() >= 2);
        // A refit with the same seed is deterministic.
        let mut again = ClusteredGp::new(proto.clone(), ClusterOptions::default()).unwrap();
        assert_eq!(before, fitted(&mut again));
        // Values replaced, noise set, dimension and values checked.
        let n = cgp.len();
        cgp.replace_values(&vec![1.0; n]).unwrap();
        assert!(cgp.replace_values(&[1.0]).is_err());
        cgp.set_noise(&vec![0.01; n]).unwrap();
        assert!(cgp.set_noise(&[f64::NAN; 1]).is_err());
        assert!(cgp.observe(Point::new(&[0.1, 0.2]), 1.0).is_err());
        assert!(cgp.observe(Point::new(&[0.1]), f64::INFINITY).is_err());
        assert!(cgp.predict(&[Point::new(&[0.5])]).is_ok());
        // Options are checked once.
        for bad in [
            ClusterOptions {
                clusters: 0,
                ..ClusterOptions::default()
            },
            ClusterOptions {
                xi: f64::NAN,
                ..ClusterOptions::default()
            },
            ClusterOptions {
                boundary: -1.0,
                ..ClusterOptions::default()
            },
        ] {
            assert!(ClusteredGp::new(proto.clone(), bad).is_err());
        }
        let mut used = proto.clone();
        used.observe(Point::new(&[0.0]), 1.0).unwrap();
        assert!(ClusteredGp::new(used, ClusterOptions::default()).is_err());
    }
}
