//! Exact dense Gaussian process (Cholesky by faer), predicting anywhere.

use faer::{Mat, Side};
use rayon::prelude::*;

use crate::error::ModelError;
use crate::kernel::{Kernel, Prepared};
use crate::stats::{jitter_sequence, normalisation};

/// Test points are processed in blocks of this many, to bound temporary memory.
const PREDICT_BLOCK: usize = 1024;

/// Exact Gaussian process regression with fixed hyperparameters.
///
/// Semantics are those of scikit-learn's
/// `GaussianProcessRegressor(kernel, alpha=noise, normalize_y=True, optimizer=None)`:
/// `y` is normalised by its mean and population standard deviation, the GP is fitted to
/// the normalised values with `noise` added to the covariance diagonal, and predictions
/// are de-normalised (`mean = ȳ + s·μ`, `variance = s²·σ²`, the latent-function
/// variance without the noise term).
///
/// If the Cholesky factorisation fails (scikit-learn would raise), jitter
/// `max(noise, 1e-10·k(0))·10^k`, `k = 0..=8`, is added to the diagonal until it
/// succeeds; [`DenseGp::jitter`] reports how much was added.
#[derive(Clone, Debug)]
pub struct DenseGp {
    kernel: Kernel,
    prep: Prepared,
    dims: usize,
    x: Vec<Vec<f64>>,
    /// Lower Cholesky factor of `K + (noise + jitter)·I`.
    l: Mat<f64>,
    /// `(K + noise·I)⁻¹ y_norm`.
    alpha: Vec<f64>,
    y_mean: f64,
    y_std: f64,
    lml: f64,
    jitter: f64,
}

impl DenseGp {
    /// Fits the GP to observations `y` at points `x` (each of the same dimension).
    ///
    /// Errors: no observations, `x`/`y` length mismatch, ragged or non-finite `x`,
    /// non-finite `y`, invalid hyperparameters, or a covariance that stays
    /// non-positive-definite with the largest jitter.
    pub fn fit(kernel: &Kernel, x: &[Vec<f64>], y: &[f64]) -> Result<DenseGp, ModelError> {
        DenseGp::fit_noisy(kernel, x, y, &[])
    }

    /// [`DenseGp::fit`] where each observation has a known measurement variance `extra[i]`
    /// (in the units of `y`; empty for none), added to the diagonal beside the kernel's noise:
    /// a value measured less precisely pulls the posterior less.
    pub fn fit_noisy(
        kernel: &Kernel,
        x: &[Vec<f64>],
        y: &[f64],
        extra: &[f64],
    ) -> Result<DenseGp, ModelError> {
        let dims = crate::observations::check_training(x, y, extra)?;
        if x.is_empty() {
            return Err(ModelError::LengthMismatch {
                what: "no observations: at least one is needed".into(),
            });
        }
        kernel.validate(dims)?;
        let prep = kernel.prepare(dims);
        let n = x.len();
        let noise = kernel.hyper.noise;

        let (y_mean, y_std) = normalisation(y);
        let k = Mat::from_fn(n, n, |i, j| prep.eval(&x[i], &x[j]));
        let factor = |jitter: f64| {
            let mut a = k.clone();
            for i in 0..n {
                let known = extra.get(i).map_or(0.0, |v| v / (y_std * y_std));
                a[(i, i)] += noise + known + jitter;
            }
            a.llt(Side::Lower).map(|llt| llt.L().to_owned())
        };
        let mut jitter = 0.0;
        let mut l = factor(0.0);
        if l.is_err() {
            for j in jitter_sequence(noise, kernel.prior_variance()) {
                jitter = j;
                l = factor(j);
                if l.is_ok() {
                    break;
                }
            }
        }
        let l = match l {
            Ok(l) => l,
            Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => {
                return Err(ModelError::NotPositiveDefinite {
                    row: index,
                    pivot: f64::NAN,
                    max_jitter: jitter,
                });
            }
        };

        let mut rhs = Mat::from_fn(n, 1, |i, _| (y[i] - y_mean) / y_std);
        l.solve_lower_triangular_in_place(rhs.as_mut());
        // rhs = L⁻¹ y_norm here: the data-fit term is its squared norm.
        let fit_term: f64 = rhs.col_as_slice(0).iter().map(|v| v * v).sum();
        l.transpose().solve_upper_triangular_in_place(rhs.as_mut());
        let alpha = rhs.col_as_slice(0).to_vec();
        let log_det_half: f64 = (0..n).map(|i| l[(i, i)].ln()).sum();
        let lml =
            -0.5 * fit_term - log_det_half - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();

        Ok(DenseGp {
            kernel: kernel.clone(),
            prep,
            dims,
            x: x.to_vec(),
            l,
            alpha,
            y_mean,
            y_std,
            lml,
            jitter,
        })
    }

    /// Posterior `(mean, variance)` at each point, in `y` units; variance is clamped at 0.
    ///
    /// A point whose dimension differs from the training points gives `(NaN, NaN)`.
    pub fn predict(&self, x: &[Vec<f64>]) -> Vec<(f64, f64)> {
        let x: Vec<&[f64]> = x.iter().map(Vec::as_slice).collect();
        self.predict_slices(&x)
    }

    /// [`DenseGp::predict`] for points given as slices (blocks of points in parallel).
    pub fn predict_slices(&self, x: &[&[f64]]) -> Vec<(f64, f64)> {
        let valid: Vec<usize> = (0..x.len()).filter(|&i| x[i].len() == self.dims).collect();
        let blocks: Vec<Vec<(usize, (f64, f64))>> = valid
            .par_chunks(PREDICT_BLOCK)
            .map(|block| self.predict_block(x, block))
            .collect();
        let mut out = vec![(f64::NAN, f64::NAN); x.len()];
        for (t, p) in blocks.into_iter().flatten() {
            out[t] = p;
        }
        out
    }

    /// Predictions for the points `x[t]`, `t` in `block`.
    fn predict_block(&self, x: &[&[f64]], block: &[usize]) -> Vec<(usize, (f64, f64))> {
        let n = self.x.len();
        let s2 = self.y_std * self.y_std;
        let mut kt = Mat::from_fn(n, block.len(), |i, j| {
            self.prep.eval(&self.x[i], x[block[j]])
        });
        let means: Vec<f64> = (0..block.len())
            .map(|j| {
                kt.col_as_slice(j)
                    .iter()
                    .zip(&self.alpha)
                    .map(|(k, a)| k * a)
                    .sum()
            })
            .collect();
        self.l.solve_lower_triangular_in_place(kt.as_mut());
        block
            .iter()
            .enumerate()
            .map(|(j, &t)| {
                let vv: f64 = kt.col_as_slice(j).iter().map(|v| v * v).sum();
                let var = (self.prep.eval(x[t], x[t]) - vv).max(0.0);
                (t, (self.y_mean + self.y_std * means[j], s2 * var))
            })
            .collect()
    }

    /// Log marginal likelihood of the normalised targets (as scikit-learn reports it):
    /// `-½ yᵀK⁻¹y - ½ log|K| - n/2 log 2π` with `K` including noise (and any jitter).
    pub fn log_marginal_likelihood(&self) -> f64 {
        self.lml
    }

    /// Number of training points.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Always false: a fitted GP has at least one observation.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Extra jitter that had to be added to the diagonal (0 when none was needed).
    pub fn jitter(&self) -> f64 {
        self.jitter
    }

    /// The kernel the GP was fitted with.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelKind;

    /// Two points, RBF with lengthscale 1, noise 0: solved by hand.
    #[test]
    fn two_point_hand_solution() {
        let mut kernel = Kernel::new(KernelKind::Rbf, 1.0);
        kernel.hyper.noise = 0.0;
        let x = vec![vec![0.0], vec![1.0]];
        let y = [1.0, 3.0];
        let gp = DenseGp::fit(&kernel, &x, &y).unwrap();
        // ȳ = 2, s = 1, y_norm = [-1, 1]; c = k(0, 1) = e^{-1/2}.
        // K⁻¹ = 1/(1-c²) [[1, -c], [-c, 1]];  α = [-1, 1] / (1 - c).
        let c = (-0.5f64).exp();
        // Test point x* = 0.5: k* = [e^{-1/8}, e^{-1/8}] -> μ_norm = 0 (symmetry).
        // σ² = 1 - k*ᵀ K⁻¹ k* = 1 - 2 e^{-1/4} / (1 + c).
        let e = (-0.125f64).exp();
        let var_mid = 1.0 - 2.0 * e * e / (1.0 + c);
        // Test point x* = 2: k* = [e^{-2}, e^{-1/2}] -> μ_norm = (c - e^{-2}) / (1 - c).
        let mu2 = (c - (-2f64).exp()) / (1.0 - c);
        let p = gp.predict(&[vec![0.5], vec![2.0], vec![0.0]]);
        assert!((p[0].0 - 2.0).abs() < 1e-14);
        assert!((p[0].1 - var_mid).abs() < 1e-14);
        assert!(
            (p[1].0 - (2.0 + mu2)).abs() < 1e-14,
            "{:?} vs {}",
            p[1],
            2.0 + mu2
        );
        // At a training point with no noise: mean = y, variance 0.
        assert!((p[2].0 - 1.0).abs() < 1e-14);
        assert!(p[2].1.abs() < 1e-14);
        // LML: y_normᵀ α = 2 / (1 - c); log|K| = log(1 - c²).
        let lml = -1.0 / (1.0 - c) - 0.5 * (1.0 - c * c).ln() - (2.0 * std::f64::consts::PI).ln();
        assert!((gp.log_marginal_likelihood() - lml).abs() < 1e-13);
        assert_eq!(gp.jitter(), 0.0);
    }

    /// Three points, Matérn 3/2 with output scale 2, non-trivial ȳ and s: checked against
    /// the closed-form 3×3 inverse (adjugate / determinant).
    #[test]
    fn three_point_hand_solution() {
        let mut kernel = Kernel::new(KernelKind::Matern32, 2.0);
        kernel.hyper.noise = 0.0;
        kernel.hyper.output_scale = 2.0;
        let x = vec![vec![0.0], vec![2.0], vec![4.0]];
        let y = [5.0, 5.0, 11.0];
        let gp = DenseGp::fit(&kernel, &x, &y).unwrap();
        // ȳ = 7, s = √8, y_norm = [-2, -2, 4]/√8.
        let m = |r: f64| 2.0 * (1.0 + 3f64.sqrt() * r) * (-(3f64.sqrt()) * r).exp();
        let (a, b, c) = (m(0.0), m(1.0), m(2.0));
        // K = [[a, b, c], [b, a, b], [c, b, a]]; adjugate-based inverse.
        let det = a * (a * a - b * b) - b * (b * a - b * c) + c * (b * b - a * c);
        let inv = [
            [a * a - b * b, c * b - b * a, b * b - a * c],
            [c * b - b * a, a * a - c * c, c * b - a * b],
            [b * b - a * c, c * b - a * b, a * a - b * b],
        ];
        let s = 8f64.sqrt();
        let yn = [-2.0 / s, -2.0 / s, 4.0 / s];
        let alpha: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| inv[i][j] * yn[j]).sum::<f64>() / det)
            .collect();
        let xs = 3.0;
        let ks = [m(1.5), m(0.5), m(0.5)];
        let mu: f64 = (0..3).map(|i| ks[i] * alpha[i]).sum();
        let quad: f64 = (0..3)
            .map(|i| (0..3).map(|j| ks[i] * inv[i][j] * ks[j]).sum::<f64>())
            .sum::<f64>()
            / det;
        let p = gp.predict(&[vec![xs]]);
        assert!((p[0].0 - (7.0 + s * mu)).abs() < 1e-12);
        assert!((p[0].1 - 8.0 * (2.0 - quad)).abs() < 1e-12);
    }

    #[test]
    fn bad_input() {
        let k = Kernel::new(KernelKind::Matern52, 1.0);
        assert!(DenseGp::fit(&k, &[], &[]).is_err());
        assert!(DenseGp::fit(&k, &[vec![0.0]], &[1.0, 2.0]).is_err());
        assert!(DenseGp::fit(&k, &[vec![0.0], vec![0.0, 1.0]], &[1.0, 2.0]).is_err());
        assert!(DenseGp::fit(&k, &[vec![f64::NAN]], &[1.0]).is_err());
        assert!(DenseGp::fit(&k, &[vec![0.0]], &[f64::INFINITY]).is_err());
        let mut k2 = k.clone();
        k2.hyper.lengthscales = vec![1.0, 2.0];
        assert!(matches!(
            DenseGp::fit(&k2, &[vec![0.0]], &[1.0]),
            Err(ModelError::DimensionMismatch { .. })
        ));
        let gp = DenseGp::fit(&k, &[vec![0.0]], &[1.0]).unwrap();
        let p = gp.predict(&[vec![0.0, 1.0], vec![0.5]]);
        assert!(p[0].0.is_nan() && p[0].1.is_nan());
        assert!(p[1].0.is_finite());
    }

    #[test]
    fn duplicate_points_need_jitter() {
        let mut k = Kernel::new(KernelKind::Rbf, 1.0);
        k.hyper.noise = 0.0;
        let x = vec![vec![0.0], vec![0.0], vec![1.0]];
        let gp = DenseGp::fit(&k, &x, &[1.0, 1.5, 2.0]).unwrap();
        assert!(gp.jitter() > 0.0);
        let p = gp.predict(&[vec![0.0], vec![0.3]]);
        assert!(p.iter().all(|(m, v)| m.is_finite() && v.is_finite()));
    }
}
