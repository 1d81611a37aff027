//! Stationary covariance functions and their hyperparameters.
//!
//! A kernel is evaluated in two steps, so that both parts can be swapped independently:
//! 1. a [`Distance`] gives each dimension's contribution to the squared distance, which is
//!    divided by that dimension's squared lengthscale and summed into `r²`;
//! 2. a [`KernelKind`] maps `r` to a correlation in `[0, 1]`, which is multiplied by the
//!    output scale (signal variance).

use crate::error::ModelError;

/// The correlation function `k(r)` of a stationary kernel, `r` being the scaled distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelKind {
    /// Matérn ν = 3/2: `(1 + √3 r) exp(-√3 r)`.
    Matern32,
    /// Matérn ν = 5/2: `(1 + √5 r + 5r²/3) exp(-√5 r)`.
    Matern52,
    /// Squared exponential: `exp(-r²/2)`.
    Rbf,
}

impl KernelKind {
    /// Correlation at squared scaled distance `r2` (`k(0) = 1`).
    #[inline]
    pub fn correlation(self, r2: f64) -> f64 {
        match self {
            KernelKind::Rbf => (-0.5 * r2).exp(),
            KernelKind::Matern32 => {
                let s = (3.0 * r2).sqrt();
                (1.0 + s) * (-s).exp()
            }
            KernelKind::Matern52 => {
                let s = (5.0 * r2).sqrt();
                (1.0 + s + s * s / 3.0) * (-s).exp()
            }
        }
    }

    /// The derivative of [`correlation`](KernelKind::correlation) with respect to `r²`
    /// (finite at 0 for all three).
    #[inline]
    pub fn dcorrelation_dr2(self, r2: f64) -> f64 {
        match self {
            KernelKind::Rbf => -0.5 * (-0.5 * r2).exp(),
            KernelKind::Matern32 => {
                let s = (3.0 * r2).sqrt();
                -1.5 * (-s).exp()
            }
            KernelKind::Matern52 => {
                let s = (5.0 * r2).sqrt();
                -5.0 / 6.0 * (1.0 + s) * (-s).exp()
            }
        }
    }
}

/// How the coordinates of one parameter contribute to the squared distance `r²` (before the
/// parameter's lengthscale divides it). Every contribution lies in `[0, 1]` for inputs
/// normalised to `[0, 1]`, so one set of lengthscale priors suits every parameter type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distance {
    /// `Σ (a - b)²` over the parameter's coordinates: numeric, integer and ordinal
    /// parameters on a normalised (possibly logarithmic) scale, one coordinate each.
    Euclidean,
    /// 1 when any coordinate differs, else 0: categorical parameters, coordinate = the
    /// value's index.
    Hamming,
    /// Permutations of `n` items, coordinates = the position of each item (`0..n`):
    /// Spearman's `Σ (p_i - p'_i)²` divided by its largest value, `n(n² - 1)/3`.
    Spearman,
    /// Kendall's tau distance: the pairs of items whose order differs, divided by
    /// `n(n - 1)/2`.
    Kendall,
    /// The items whose position differs, divided by `n`.
    PermutationHamming,
}

impl Distance {
    /// The contribution of one parameter whose coordinates are `a` and `b` (equal lengths).
    #[inline]
    pub fn contribution(self, a: &[f64], b: &[f64]) -> f64 {
        match self {
            Distance::Euclidean => a
                .iter()
                .zip(b)
                .map(|(x, y)| {
                    let t = x - y;
                    t * t
                })
                .sum(),
            Distance::Hamming => f64::from(u8::from(a != b)),
            Distance::Spearman => {
                let n = a.len() as f64;
                let max = n * (n * n - 1.0) / 3.0;
                if max <= 0.0 {
                    return 0.0;
                }
                a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / max
            }
            Distance::Kendall => {
                let n = a.len();
                if n < 2 {
                    return 0.0;
                }
                let mut discordant = 0usize;
                for i in 0..n {
                    for j in i + 1..n {
                        if (a[i] < a[j]) != (b[i] < b[j]) {
                            discordant += 1;
                        }
                    }
                }
                discordant as f64 / (n * (n - 1) / 2) as f64
            }
            Distance::PermutationHamming => {
                if a.is_empty() {
                    return 0.0;
                }
                a.iter().zip(b).filter(|(x, y)| x != y).count() as f64 / a.len() as f64
            }
        }
    }
}

/// How the coordinates of an encoded point are grouped into parameters, each with one
/// distance and one lengthscale.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    /// Every coordinate is a parameter of its own, with this distance (one lengthscale per
    /// coordinate): the Euclidean distance of the BO paper's encodings.
    PerCoordinate(Distance),
    /// Parameters of one or more consecutive coordinates (a permutation of `n` items takes
    /// `n`), in order; the lengths sum to the point's dimension.
    Parameters(Vec<Block>),
}

/// One parameter of a [`Metric::Parameters`] layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Coordinates it takes.
    pub len: usize,
    /// How they are compared.
    pub distance: Distance,
}

impl Metric {
    /// The tests' mixed metric: a number, a categorical, and a permutation of three items
    /// compared by `permutation`.
    #[cfg(test)]
    pub(crate) fn mixed_for_tests(permutation: Distance) -> Metric {
        let block = |len, distance| Block { len, distance };
        Metric::Parameters(vec![
            block(1, Distance::Euclidean),
            block(1, Distance::Hamming),
            block(3, permutation),
        ])
    }

    /// The number of parameters (lengthscales) for points of dimension `dims`.
    pub fn parameters(&self, dims: usize) -> usize {
        match self {
            Metric::PerCoordinate(_) => dims,
            Metric::Parameters(blocks) => blocks.len(),
        }
    }

    /// Checks the layout against the points' dimension.
    pub fn validate(&self, dims: usize) -> Result<(), ModelError> {
        match self {
            Metric::PerCoordinate(_) => Ok(()),
            Metric::Parameters(blocks) => {
                let total: usize = blocks.iter().map(|b| b.len).sum();
                if total != dims || blocks.iter().any(|b| b.len == 0) {
                    return Err(ModelError::DimensionMismatch {
                        what: "coordinates of the metric's parameters (each at least one)".into(),
                        expected: dims,
                        got: total,
                    });
                }
                Ok(())
            }
        }
    }
}

/// Kernel hyperparameters (fixed during a run, but replaceable through `rebuild`).
#[derive(Clone, Debug, PartialEq)]
pub struct Hyperparameters {
    /// One lengthscale per parameter of the kernel's [`Metric`] (per coordinate by
    /// default), or a single value broadcast to all of them.
    pub lengthscales: Vec<f64>,
    /// Signal variance `k(x, x)`; default 1.
    pub output_scale: f64,
    /// Added to the diagonal of the training covariance, in normalised units
    /// (scikit-learn's `alpha`); default `1e-10`.
    pub noise: f64,
}

impl Default for Hyperparameters {
    fn default() -> Self {
        Hyperparameters::isotropic(1.0)
    }
}

impl Hyperparameters {
    /// A single lengthscale for all dimensions, output scale 1 and noise `1e-10`.
    pub fn isotropic(lengthscale: f64) -> Self {
        Hyperparameters {
            lengthscales: vec![lengthscale],
            output_scale: 1.0,
            noise: 1e-10,
        }
    }

    /// Checks that the hyperparameters are usable for `params` parameters (dimensions,
    /// with the default metric).
    pub fn validate(&self, params: usize) -> Result<(), ModelError> {
        let n = self.lengthscales.len();
        if n != 1 && n != params {
            return Err(ModelError::DimensionMismatch {
                what: "lengthscales (one, or one per parameter)".into(),
                expected: params,
                got: n,
            });
        }
        for &l in &self.lengthscales {
            if !(l.is_finite() && l > 0.0) {
                return Err(ModelError::InvalidHyperparameter {
                    name: "lengthscale",
                    value: l,
                    reason: "must be finite and > 0",
                });
            }
        }
        if !(self.output_scale.is_finite() && self.output_scale > 0.0) {
            return Err(ModelError::InvalidHyperparameter {
                name: "output_scale",
                value: self.output_scale,
                reason: "must be finite and > 0",
            });
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(ModelError::InvalidHyperparameter {
                name: "noise",
                value: self.noise,
                reason: "must be finite and >= 0",
            });
        }
        Ok(())
    }

    /// The lengthscale of parameter `dim` (the broadcast value when there is only one).
    pub fn lengthscale(&self, dim: usize) -> f64 {
        match self.lengthscales.as_slice() {
            [l] => *l,
            ls => ls.get(dim).copied().unwrap_or(f64::NAN),
        }
    }
}

/// Sub-spaces that share only part of their landscape: points whose `coordinates` differ
/// (a GPU kernel's switches, such as shared memory on or off) are correlated `shared` times
/// as much as the stationary kernel says.
///
/// This is the intrinsic coregionalisation model (Álvarez, Rosasco and Lawrence, *Kernels
/// for Vector-Valued Functions*, 2012) with one task per combination of the coordinates and
/// the task covariance `shared + (1 - shared) · δ`: each sub-space's landscape is a part
/// common to all (variance `shared`) plus a part of its own (`1 - shared`), under the same
/// lengthscales. A stationary kernel alone can only make the sub-spaces less alike
/// everywhere by a shorter lengthscale on the switch; it cannot let the best tile where
/// shared memory is on differ from the best where it is off.
#[derive(Clone, Debug, PartialEq)]
pub struct SubSpaces {
    /// The coordinates whose values name a sub-space.
    pub coordinates: Vec<usize>,
    /// The correlation factor between sub-spaces, in `(0, 1]` (1: the stationary kernel).
    pub shared: f64,
}

/// A kernel: a stationary correlation function, metric and hyperparameters, optionally
/// scaled down between sub-spaces.
///
/// `k(a, b) = output_scale · kind(r) · s(a, b)`, `r² = Σ_p distance_p(a_p, b_p) / l_p²`
/// over the metric's parameters `p`, `s = 1` within a sub-space and `shared` between two
/// ([`SubSpaces`]; 1 everywhere without). The noise term is *not* part of `eval`; models
/// add it to the training diagonal only.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Correlation function.
    pub kind: KernelKind,
    /// How coordinates are grouped into parameters and compared.
    pub metric: Metric,
    /// Hyperparameters.
    pub hyper: Hyperparameters,
    /// Sub-spaces correlated less than the stationary kernel says (`None`: stationary).
    pub sub_spaces: Option<SubSpaces>,
}

impl Kernel {
    /// Kernel with Euclidean distance, one lengthscale, output scale 1 and noise `1e-10`.
    pub fn new(kind: KernelKind, lengthscale: f64) -> Self {
        Kernel::with_hyperparameters(kind, Hyperparameters::isotropic(lengthscale))
    }

    /// Kernel with Euclidean distance per coordinate and the given hyperparameters.
    pub fn with_hyperparameters(kind: KernelKind, hyper: Hyperparameters) -> Self {
        Kernel {
            kind,
            metric: Metric::PerCoordinate(Distance::Euclidean),
            hyper,
            sub_spaces: None,
        }
    }

    /// Kernel over the parameters of `metric` with the given hyperparameters.
    pub fn with_metric(kind: KernelKind, metric: Metric, hyper: Hyperparameters) -> Self {
        Kernel {
            kind,
            metric,
            hyper,
            sub_spaces: None,
        }
    }

    /// This kernel with the correlation between the sub-spaces `sub_spaces` names scaled
    /// down ([`SubSpaces`]).
    pub fn between_sub_spaces(mut self, sub_spaces: SubSpaces) -> Self {
        self.sub_spaces = Some(sub_spaces);
        self
    }

    /// `k(a, b)`. Returns NaN if `a` and `b` differ in length or the kernel does not fit
    /// their dimension (use [`Kernel::validate`] to get an error instead).
    pub fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        if a.len() != b.len() || self.validate(a.len()).is_err() {
            return f64::NAN;
        }
        self.prepare(a.len()).eval(a, b)
    }

    /// Prior variance `k(x, x)` (the output scale, for these stationary kernels).
    pub fn prior_variance(&self) -> f64 {
        self.hyper.output_scale
    }

    /// Checks that the kernel is usable for points of dimension `dims`.
    pub fn validate(&self, dims: usize) -> Result<(), ModelError> {
        self.metric.validate(dims)?;
        if let Some(sub) = &self.sub_spaces {
            if let Some(&c) = sub.coordinates.iter().find(|&&c| c >= dims) {
                return Err(ModelError::DimensionMismatch {
                    what: "a sub-space coordinate (below the points' dimension)".into(),
                    expected: dims,
                    got: c,
                });
            }
            if !(sub.shared > 0.0 && sub.shared <= 1.0) {
                return Err(ModelError::InvalidHyperparameter {
                    name: "shared",
                    value: sub.shared,
                    reason: "must be in (0, 1]",
                });
            }
        }
        self.hyper.validate(self.metric.parameters(dims))
    }

    /// Precomputes what the inner loops need. Call only after [`Kernel::validate`].
    pub(crate) fn prepare(&self, dims: usize) -> Prepared {
        let params = self.metric.parameters(dims);
        let inv_ls2 = (0..params)
            .map(|d| {
                let l = self.hyper.lengthscale(d);
                1.0 / (l * l)
            })
            .collect();
        let layout = match &self.metric {
            Metric::PerCoordinate(Distance::Euclidean) => Layout::Euclidean,
            // One Euclidean coordinate per parameter is the same tight loop.
            Metric::Parameters(blocks)
                if blocks
                    .iter()
                    .all(|b| b.len == 1 && b.distance == Distance::Euclidean) =>
            {
                Layout::Euclidean
            }
            Metric::PerCoordinate(d) => Layout::Blocks((0..dims).map(|i| (i, i + 1, *d)).collect()),
            Metric::Parameters(blocks) => {
                let mut start = 0;
                Layout::Blocks(
                    blocks
                        .iter()
                        .map(|b| {
                            let r = (start, start + b.len, b.distance);
                            start += b.len;
                            r
                        })
                        .collect(),
                )
            }
        };
        Prepared {
            kind: self.kind,
            layout,
            inv_ls2,
            output_scale: self.hyper.output_scale,
            sub_spaces: self
                .sub_spaces
                .as_ref()
                .filter(|s| s.shared < 1.0 && !s.coordinates.is_empty())
                .map(|s| (s.coordinates.clone(), s.shared)),
        }
    }
}

/// Where each parameter's coordinates are, once validated.
#[derive(Clone, Debug)]
enum Layout {
    /// One coordinate per parameter, Euclidean: the tight loop of the BO paper's GP.
    Euclidean,
    /// `(start, end, distance)` per parameter.
    Blocks(Vec<(usize, usize, Distance)>),
}

/// A validated kernel with inverse squared lengthscales expanded to one per parameter.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    kind: KernelKind,
    layout: Layout,
    inv_ls2: Vec<f64>,
    output_scale: f64,
    /// The sub-spaces' coordinates and the factor between them.
    sub_spaces: Option<(Vec<usize>, f64)>,
}

impl Prepared {
    /// `r²`, the squared scaled distance between `a` and `b`.
    #[inline]
    pub(crate) fn r2(&self, a: &[f64], b: &[f64]) -> f64 {
        match &self.layout {
            Layout::Euclidean => {
                let mut r2 = 0.0;
                for ((&x, &y), &il2) in a.iter().zip(b).zip(&self.inv_ls2) {
                    let t = x - y;
                    r2 += t * t * il2;
                }
                r2
            }
            Layout::Blocks(blocks) => blocks
                .iter()
                .zip(&self.inv_ls2)
                .map(|(&(s, e, d), &il2)| d.contribution(&a[s..e], &b[s..e]) * il2)
                .sum(),
        }
    }

    /// Each parameter's unscaled contribution to `r²` (before dividing by `l²`), into `out`.
    pub(crate) fn contributions(&self, a: &[f64], b: &[f64], out: &mut [f64]) {
        match &self.layout {
            Layout::Euclidean => {
                for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                    let t = x - y;
                    *o = t * t;
                }
            }
            Layout::Blocks(blocks) => {
                for (o, &(s, e, d)) in out.iter_mut().zip(blocks) {
                    *o = d.contribution(&a[s..e], &b[s..e]);
                }
            }
        }
    }

    /// `k(a, b)` for points of the validated dimension.
    #[inline]
    pub(crate) fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        let k = self.output_scale * self.kind.correlation(self.r2(a, b));
        match &self.sub_spaces {
            None => k,
            Some((coordinates, shared)) => k * between(coordinates, *shared, a, b),
        }
    }

    /// `k(a, p)` for each point `p` of `points` (row-major, `out.len()` points), into `out`:
    /// the distances first, then the correlation over them in a loop of its own, which
    /// pipelines the `exp` calls instead of waiting on each point's distance.
    pub(crate) fn eval_many(&self, a: &[f64], points: &[f64], out: &mut [f64]) {
        let dims = a.len();
        if dims == 0 {
            out.fill(self.output_scale);
            return;
        }
        match &self.layout {
            Layout::Euclidean => {
                for (o, p) in out.iter_mut().zip(points.chunks_exact(dims)) {
                    let mut r2 = 0.0;
                    for ((&x, &y), &il2) in a.iter().zip(p).zip(&self.inv_ls2) {
                        let t = x - y;
                        r2 += t * t * il2;
                    }
                    *o = r2;
                }
            }
            Layout::Blocks(_) => {
                for (o, p) in out.iter_mut().zip(points.chunks_exact(dims)) {
                    *o = self.r2(a, p);
                }
            }
        }
        // The same operations as `eval`, in the same order: the same numbers to the bit.
        let scale = self.output_scale;
        match self.kind {
            KernelKind::Rbf => out.iter_mut().for_each(|o| *o = scale * (-0.5 * *o).exp()),
            KernelKind::Matern32 => out.iter_mut().for_each(|o| {
                let s = (3.0 * *o).sqrt();
                *o = scale * ((1.0 + s) * (-s).exp());
            }),
            KernelKind::Matern52 => out.iter_mut().for_each(|o| {
                let s = (5.0 * *o).sqrt();
                *o = scale * ((1.0 + s + s * s / 3.0) * (-s).exp());
            }),
        }
        if let Some((coordinates, shared)) = &self.sub_spaces {
            for (o, p) in out.iter_mut().zip(points.chunks_exact(dims)) {
                *o *= between(coordinates, *shared, a, p);
            }
        }
    }
}

/// The factor [`SubSpaces`] puts on `k(a, b)`: 1 within a sub-space, `shared` between two.
#[inline]
fn between(coordinates: &[usize], shared: f64, a: &[f64], b: &[f64]) -> f64 {
    if coordinates.iter().all(|&c| a[c] == b[c]) {
        1.0
    } else {
        shared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-14 * b.abs().max(1e-300)
    }

    #[test]
    fn hand_computed_values() {
        // a, b at Euclidean distance 1, lengthscale 2 -> r = 0.5.
        let a = [0.0, 0.0];
        let b = [0.6, 0.8];
        let r: f64 = 0.5;
        let s3 = 3f64.sqrt() * r;
        let s5 = 5f64.sqrt() * r;
        let m32 = (1.0 + s3) * (-s3).exp();
        let m52 = (1.0 + s5 + 5.0 * r * r / 3.0) * (-s5).exp();
        let rbf = (-r * r / 2.0).exp();
        // Numerical values computed independently.
        assert!((m32 - 0.784_887_653_957_450_6).abs() < 1e-15, "{m32}");
        assert!((m52 - 0.828_649_142_418_125_3).abs() < 1e-15, "{m52}");
        assert!((rbf - 0.882_496_902_584_595_5).abs() < 1e-15, "{rbf}");
        for (kind, want) in [
            (KernelKind::Matern32, m32),
            (KernelKind::Matern52, m52),
            (KernelKind::Rbf, rbf),
        ] {
            let k = Kernel::new(kind, 2.0);
            assert!(close(k.eval(&a, &b), want), "{kind:?}");
            assert!(close(k.prepare(2).eval(&a, &b), want), "{kind:?}");
            assert_eq!(k.eval(&a, &a), 1.0);
            let mut k3 = k.clone();
            k3.hyper.output_scale = 3.0;
            assert!(close(k3.eval(&a, &b), 3.0 * want));
        }
    }

    #[test]
    fn permutation_distances_by_hand() {
        // BaCO's figure 3: π = [1, 2, 3, 4] and π' = [2, 4, 3, 1], π_i being the position of
        // item i; here 0-based.
        let p = [0.0, 1.0, 2.0, 3.0];
        let q = [1.0, 3.0, 2.0, 0.0];
        // Kendall: of the 6 pairs, those whose order differs: (1,4), (2,3), (2,4), (3,4).
        assert_eq!(Distance::Kendall.contribution(&p, &q), 4.0 / 6.0);
        // Spearman: Σ (p_i - q_i)² = 1 + 4 + 0 + 9 = 14, over n(n² - 1)/3 = 20.
        assert_eq!(Distance::Spearman.contribution(&p, &q), 14.0 / 20.0);
        // Hamming: items 1, 2 and 4 moved.
        assert_eq!(Distance::PermutationHamming.contribution(&p, &q), 3.0 / 4.0);
        // The reversal is the farthest permutation for Spearman and Kendall.
        let r = [3.0, 2.0, 1.0, 0.0];
        assert_eq!(Distance::Spearman.contribution(&p, &r), 1.0);
        assert_eq!(Distance::Kendall.contribution(&p, &r), 1.0);
        for d in [
            Distance::Spearman,
            Distance::Kendall,
            Distance::PermutationHamming,
            Distance::Hamming,
            Distance::Euclidean,
        ] {
            assert_eq!(d.contribution(&p, &p), 0.0, "{d:?}");
            assert_eq!(d.contribution(&p, &q), d.contribution(&q, &p), "{d:?}");
        }
        // Categorical: any difference counts 1.
        assert_eq!(Distance::Hamming.contribution(&[2.0], &[5.0]), 1.0);
        // One item: no distance.
        assert_eq!(Distance::Spearman.contribution(&[0.0], &[0.0]), 0.0);
    }

    #[test]
    fn a_mixed_metric_sums_each_parameters_distance_over_its_lengthscale() {
        // A number, a categorical, a permutation of three items.
        let metric = Metric::mixed_for_tests(Distance::Kendall);
        let hyper = Hyperparameters {
            lengthscales: vec![0.5, 2.0, 1.0],
            output_scale: 1.0,
            noise: 0.0,
        };
        let k = Kernel::with_metric(KernelKind::Rbf, metric, hyper);
        let a = [0.25, 1.0, 0.0, 1.0, 2.0];
        let b = [0.75, 3.0, 1.0, 0.0, 2.0];
        // r² = 0.5²/0.25 + 1/4 + (1 discordant of 3)/1
        let r2: f64 = 1.0 + 0.25 + 1.0 / 3.0;
        assert!(close(k.eval(&a, &b), (-0.5 * r2).exp()));
        // Three lengthscales, five coordinates: a fourth lengthscale is an error.
        assert!(k.validate(5).is_ok());
        let mut bad = k.clone();
        bad.hyper.lengthscales.push(1.0);
        assert!(bad.validate(5).is_err());
        // Blocks must cover the point exactly.
        assert!(k.validate(4).is_err());
        assert!(k.eval(&a[..4], &b[..4]).is_nan());
    }

    #[test]
    fn anisotropic_lengthscales() {
        let mut k = Kernel::new(KernelKind::Rbf, 1.0);
        k.hyper.lengthscales = vec![1.0, 4.0];
        // r² = 1²/1 + 2²/16 = 1.25
        let v = k.eval(&[0.0, 0.0], &[1.0, 2.0]);
        assert!(close(v, (-0.625f64).exp()));
        assert!(k.validate(2).is_ok());
        assert!(k.validate(3).is_err());
        assert!(k.eval(&[0.0, 0.0, 0.0], &[1.0, 2.0, 3.0]).is_nan());
        assert!(k.eval(&[0.0, 0.0], &[1.0]).is_nan());
    }

    #[test]
    fn invalid_hyperparameters() {
        for (ls, os, noise) in [
            (0.0, 1.0, 0.0),
            (f64::NAN, 1.0, 0.0),
            (1.0, -1.0, 0.0),
            (1.0, f64::INFINITY, 0.0),
            (1.0, 1.0, -1e-3),
            (1.0, 1.0, f64::NAN),
        ] {
            let h = Hyperparameters {
                lengthscales: vec![ls],
                output_scale: os,
                noise,
            };
            assert!(h.validate(3).is_err(), "{h:?}");
        }
        assert!(
            Hyperparameters {
                lengthscales: vec![],
                ..Default::default()
            }
            .validate(2)
            .is_err()
        );
    }

    /// Between sub-spaces the kernel is `shared` times the stationary one, within one it is
    /// the stationary one; `eval_many` agrees with `eval`; a factor outside `(0, 1]` or a
    /// coordinate past the points' dimension is refused.
    #[test]
    fn sub_spaces_scale_the_correlation_between_them() {
        let stationary = Kernel::new(KernelKind::Matern52, 0.8);
        let split = stationary.clone().between_sub_spaces(SubSpaces {
            coordinates: vec![1, 2],
            shared: 0.3,
        });
        split.validate(3).unwrap();
        let (a, same, other) = ([0.1, 1.0, 0.0], [0.7, 1.0, 0.0], [0.7, 1.0, 1.0]);
        assert!(close(split.eval(&a, &same), stationary.eval(&a, &same)));
        assert!(close(
            split.eval(&a, &other),
            0.3 * stationary.eval(&a, &other)
        ));
        assert!(close(split.eval(&a, &a), split.prior_variance()));
        let prep = split.prepare(3);
        let points: Vec<f64> = (0..30).map(|i| f64::from((i * 5) % 3) / 2.0).collect();
        let mut many = vec![0.0; 10];
        prep.eval_many(&a, &points, &mut many);
        for (m, p) in many.iter().zip(points.chunks_exact(3)) {
            assert_eq!(*m, prep.eval(&a, p));
        }
        for (coordinates, shared) in [
            (vec![1], 0.0),
            (vec![1], 1.5),
            (vec![1], f64::NAN),
            (vec![3], 0.5),
        ] {
            let k = stationary.clone().between_sub_spaces(SubSpaces {
                coordinates: coordinates.clone(),
                shared,
            });
            assert!(k.validate(3).is_err(), "{coordinates:?} {shared}");
        }
    }

    /// A size `x` and a switch `s` whose best sizes differ (x = 1 where s = 0, x = 6 where s =
    /// 1), the sub-spaces strongly correlated by the stationary kernel: from every point
    /// where s = 0 and three where s = 1, the model between sub-spaces predicts the switched
    /// landscape with less than 0.6 times the stationary model's error, which carries the
    /// other sub-space's shape over.
    #[test]
    fn sub_spaces_let_a_switch_move_the_best_size() {
        use crate::DenseGp;
        let f = |x: u32, s: u32| {
            let x = f64::from(x);
            if s == 0 {
                (x - 1.0).powi(2)
            } else {
                (x - 6.0).powi(2) + 2.0
            }
        };
        let point = |x: u32, s: u32| vec![f64::from(x) / 7.0, f64::from(s)];
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for (x, s) in (0..8).map(|x| (x, 0)).chain([(0, 1), (3, 1), (7, 1)]) {
            xs.push(point(x, s));
            ys.push(f(x, s));
        }
        let error = |kernel: &Kernel| -> f64 {
            let gp = DenseGp::fit(kernel, &xs, &ys).unwrap();
            let switched: Vec<Vec<f64>> = (0..8).map(|x| point(x, 1)).collect();
            let means = gp.predict(&switched);
            (0..8)
                .map(|x| (means[x as usize].0 - f(x, 1)).abs())
                .sum::<f64>()
                / 8.0
        };
        let stationary = Kernel::new(KernelKind::Matern52, 2.0);
        let split = stationary.clone().between_sub_spaces(SubSpaces {
            coordinates: vec![1],
            shared: 0.25,
        });
        let (with, without) = (error(&split), error(&stationary));
        assert!(
            with < 0.6 * without,
            "mean absolute error where s = 1: {with} with sub-spaces, {without} without"
        );
    }

    /// Many points at once are the same numbers as one at a time, for each kind, for the
    /// Euclidean loop and for blocks of other distances, and for no coordinates at all.
    #[test]
    fn eval_many_matches_eval() {
        let blocks = Metric::Parameters(vec![
            Block {
                len: 1,
                distance: Distance::Euclidean,
            },
            Block {
                len: 2,
                distance: Distance::Hamming,
            },
        ]);
        let points: Vec<f64> = (0..60).map(|i| ((i * 7) % 11) as f64 / 4.0).collect();
        for kind in [KernelKind::Rbf, KernelKind::Matern32, KernelKind::Matern52] {
            let hyper = Hyperparameters {
                lengthscales: vec![0.7, 1.3, 2.0],
                output_scale: 2.5,
                noise: 0.0,
            };
            let euclid = Kernel::with_hyperparameters(kind, hyper.clone());
            let mixed = Kernel::with_metric(kind, blocks.clone(), hyper);
            for k in [euclid, mixed] {
                let prep = k.prepare(3);
                let a = [0.5, 1.0, 2.25];
                let mut many = vec![0.0; 20];
                prep.eval_many(&a, &points, &mut many);
                for (m, p) in many.iter().zip(points.chunks_exact(3)) {
                    assert!(
                        close(*m, prep.eval(&a, p)),
                        "{kind:?}: {m} {}",
                        prep.eval(&a, p)
                    );
                }
            }
            let none = Kernel::with_hyperparameters(kind, Hyperparameters::default());
            let mut out = vec![0.0; 3];
            none.prepare(0).eval_many(&[], &[], &mut out);
            assert_eq!(out, vec![none.hyper.output_scale; 3]);
        }
    }
}
