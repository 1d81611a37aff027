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
}

/// Per-dimension distance contribution.
///
/// This issue needs only Euclidean distance on the given coordinates; later kernels
/// (BaCO) add Hamming, permutation and logarithmic distances.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distance {
    /// `(a - b)²` per dimension, i.e. Euclidean distance overall.
    Euclidean,
}

impl Distance {
    /// Contribution of one dimension to the *squared* distance, before lengthscale scaling.
    #[inline]
    pub fn contribution(self, a: f64, b: f64) -> f64 {
        match self {
            Distance::Euclidean => {
                let t = a - b;
                t * t
            }
        }
    }
}

/// Kernel hyperparameters (fixed during a run, but replaceable through `rebuild`).
#[derive(Clone, Debug, PartialEq)]
pub struct Hyperparameters {
    /// One lengthscale per dimension, or a single value broadcast to all dimensions.
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

    /// Checks that the hyperparameters are usable for points of dimension `dims`.
    pub fn validate(&self, dims: usize) -> Result<(), ModelError> {
        let n = self.lengthscales.len();
        if n != 1 && n != dims {
            return Err(ModelError::DimensionMismatch {
                what: "lengthscales (one, or one per dimension)".into(),
                expected: dims,
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

    /// The lengthscale of dimension `dim` (the broadcast value when there is only one).
    pub fn lengthscale(&self, dim: usize) -> f64 {
        match self.lengthscales.as_slice() {
            [l] => *l,
            ls => ls.get(dim).copied().unwrap_or(f64::NAN),
        }
    }
}

/// A stationary kernel: correlation function, distance and hyperparameters.
///
/// `k(a, b) = output_scale · kind(r)`, `r² = Σ_d distance(a_d, b_d) / l_d²`.
/// The noise term is *not* part of `eval`; models add it to the training diagonal only.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Correlation function.
    pub kind: KernelKind,
    /// Per-dimension distance.
    pub distance: Distance,
    /// Hyperparameters.
    pub hyper: Hyperparameters,
}

impl Kernel {
    /// Kernel with Euclidean distance, one lengthscale, output scale 1 and noise `1e-10`.
    pub fn new(kind: KernelKind, lengthscale: f64) -> Self {
        Kernel::with_hyperparameters(kind, Hyperparameters::isotropic(lengthscale))
    }

    /// Kernel with Euclidean distance and the given hyperparameters.
    pub fn with_hyperparameters(kind: KernelKind, hyper: Hyperparameters) -> Self {
        Kernel {
            kind,
            distance: Distance::Euclidean,
            hyper,
        }
    }

    /// `k(a, b)`. Returns NaN if `a` and `b` differ in length or the lengthscales do not
    /// fit their dimension (use [`Kernel::validate`] to get an error instead).
    pub fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        let n = self.hyper.lengthscales.len();
        if a.len() != b.len() || (n != 1 && n != a.len()) {
            return f64::NAN;
        }
        let r2: f64 = a
            .iter()
            .zip(b)
            .enumerate()
            .map(|(d, (&x, &y))| {
                let l = self.hyper.lengthscale(d);
                self.distance.contribution(x, y) / (l * l)
            })
            .sum();
        self.hyper.output_scale * self.kind.correlation(r2)
    }

    /// Prior variance `k(x, x)` (the output scale, for these stationary kernels).
    pub fn prior_variance(&self) -> f64 {
        self.hyper.output_scale
    }

    /// Checks that the kernel is usable for points of dimension `dims`.
    pub fn validate(&self, dims: usize) -> Result<(), ModelError> {
        self.hyper.validate(dims)
    }

    /// Precomputes what the inner loops need. Call only after [`Kernel::validate`].
    pub(crate) fn prepare(&self, dims: usize) -> Prepared {
        Prepared {
            kind: self.kind,
            distance: self.distance,
            inv_ls2: (0..dims)
                .map(|d| {
                    let l = self.hyper.lengthscale(d);
                    1.0 / (l * l)
                })
                .collect(),
            output_scale: self.hyper.output_scale,
        }
    }
}

/// A validated kernel with inverse squared lengthscales expanded to `dims` entries.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    kind: KernelKind,
    distance: Distance,
    inv_ls2: Vec<f64>,
    output_scale: f64,
}

impl Prepared {
    /// `k(a, b)` for points of the validated dimension.
    #[inline]
    pub(crate) fn eval(&self, a: &[f64], b: &[f64]) -> f64 {
        let mut r2 = 0.0;
        for ((&x, &y), &il2) in a.iter().zip(b).zip(&self.inv_ls2) {
            r2 += self.distance.contribution(x, y) * il2;
        }
        self.output_scale * self.kind.correlation(r2)
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
}
