//! An exact Gaussian process that keeps its observations and refits on demand: the
//! [`Surrogate`] for models whose points are not a fixed candidate set (local search over
//! spaces too large to enumerate, per-cluster models).

use std::sync::OnceLock;

use crate::dense::DenseGp;
use crate::error::ModelError;
use crate::fit::{FitOptions, fit_hyperparameters_noisy};
use crate::kernel::{Hyperparameters, Kernel, KernelKind, Metric};
use crate::observations::Observations;
use crate::surrogate::{Point, Surrogate};

/// Exact GP regression ([`DenseGp`]'s semantics) over the observations told so far.
///
/// The Cholesky factorisation is computed on the first prediction after a change and kept
/// until the next one, so a round of observations costs one factorisation.
#[derive(Debug)]
pub struct ExactGp {
    kernel: Kernel,
    obs: Observations,
    fitted: OnceLock<Result<DenseGp, ModelError>>,
    /// How [`Surrogate::fit`] fits the hyperparameters (`None`: they stay fixed), and
    /// whether they have been fitted once (later fits start from the last optimum).
    fitting: Option<(FitOptions, bool)>,
}

impl Clone for ExactGp {
    fn clone(&self) -> Self {
        ExactGp {
            kernel: self.kernel.clone(),
            obs: self.obs.clone(),
            fitted: OnceLock::new(),
            fitting: self.fitting.clone(),
        }
    }
}

impl ExactGp {
    /// A GP with no observations and fixed hyperparameters.
    pub fn new(kernel: Kernel) -> ExactGp {
        ExactGp {
            kernel,
            obs: Observations::default(),
            fitted: OnceLock::new(),
            fitting: None,
        }
    }

    /// A GP whose hyperparameters [`Surrogate::fit`] fits to the observations (maximum a
    /// posteriori with the options' priors); until the first fit they are the priors'
    /// modes (or 1 without priors).
    pub fn fitted(kind: KernelKind, metric: Metric, options: FitOptions) -> ExactGp {
        let hyper = match &options.priors {
            Some(p) => Hyperparameters {
                lengthscales: vec![p.lengthscale.mode()],
                output_scale: p.output_scale.mode(),
                noise: options.min_noise + 1e-4,
            },
            None => Hyperparameters {
                lengthscales: vec![1.0],
                output_scale: 1.0,
                noise: options.min_noise + 1e-4,
            },
        };
        let mut gp = ExactGp::new(Kernel::with_metric(kind, metric, hyper));
        gp.fitting = Some((options, false));
        gp
    }

    /// A GP with this one's kernel and fitting state (later fits start from its
    /// hyperparameters) and no observations.
    pub fn emptied(&self) -> ExactGp {
        ExactGp {
            kernel: self.kernel.clone(),
            obs: Observations::default(),
            fitted: OnceLock::new(),
            fitting: self.fitting.clone(),
        }
    }

    /// The current kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Replaces the kernel (e.g. with fitted hyperparameters).
    pub fn set_kernel(&mut self, kernel: Kernel) {
        self.kernel = kernel;
        self.fitted = OnceLock::new();
    }

    /// The observed points, in order.
    pub fn points(&self) -> &[Vec<f64>] {
        &self.obs.x
    }

    /// The model fitted to the observations so far.
    pub fn model(&self) -> Result<&DenseGp, ModelError> {
        self.fitted
            .get_or_init(|| {
                DenseGp::fit_noisy(&self.kernel, &self.obs.x, &self.obs.y, &self.obs.noise)
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

impl Surrogate for ExactGp {
    fn observe(&mut self, point: Point<'_>, y: f64) -> Result<(), ModelError> {
        self.obs.push(point.x, y)?;
        self.fitted = OnceLock::new();
        Ok(())
    }

    fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        self.obs.set_noise(variances)?;
        self.fitted = OnceLock::new();
        Ok(())
    }

    fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        self.obs.replace_values(ys)?;
        self.fitted = OnceLock::new();
        Ok(())
    }

    fn truncate(&mut self, len: usize) {
        if len < self.obs.y.len() {
            self.obs.truncate(len);
            self.fitted = OnceLock::new();
        }
    }

    fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError> {
        let x: Vec<&[f64]> = points.iter().map(|p| p.x).collect();
        Ok(self.model()?.predict_slices(&x))
    }

    fn fit(&mut self, seed: u64) -> Result<(), ModelError> {
        let Some((options, warm)) = &self.fitting else {
            return Ok(());
        };
        if self.obs.x.len() < 2 {
            return Ok(());
        }
        let previous = warm.then_some(&self.kernel.hyper);
        let fitted = fit_hyperparameters_noisy(
            self.kernel.kind,
            &self.kernel.metric,
            &self.obs.x,
            &self.obs.y,
            &self.obs.noise,
            previous,
            options,
            seed,
        )?;
        // The sub-spaces, if any, stay as they were: the fit's objective is the stationary
        // kernel's, and the factor between sub-spaces is the caller's choice.
        let mut kernel =
            Kernel::with_metric(self.kernel.kind, self.kernel.metric.clone(), fitted.hyper);
        kernel.sub_spaces = self.kernel.sub_spaces.clone();
        if let Some((_, warm)) = &mut self.fitting {
            *warm = true;
        }
        self.set_kernel(kernel);
        Ok(())
    }

    fn set_kernel(&mut self, kernel: Kernel) -> Result<(), ModelError> {
        if let Some(first) = self.obs.x.first() {
            kernel.validate(first.len())?;
        }
        self.kernel = kernel;
        self.fitted = OnceLock::new();
        Ok(())
    }

    fn observed_values(&self) -> &[f64] {
        &self.obs.y
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CandidateGp, KernelKind};

    fn data() -> (Vec<Vec<f64>>, Vec<f64>) {
        let x: Vec<Vec<f64>> = (0..9)
            .map(|i| vec![(i as f64 * 0.37).sin(), (i as f64 * 0.61).cos()])
            .collect();
        let y = x.iter().map(|p| 3.0 * p[0] - p[1] * p[1] + 10.0).collect();
        (x, y)
    }

    #[test]
    fn measurement_variance_weakens_an_imprecise_observation() {
        let mut kernel = Kernel::new(KernelKind::Matern52, 1.0);
        kernel.hyper.noise = 1e-6;
        let (mut x, mut y) = data();
        // A tenth observation far off the trend, right beside a precise one.
        x.push(vec![x[4][0] + 1e-3, x[4][1]]);
        y.push(y[4] + 5.0);
        let mut gp = ExactGp::new(kernel.clone());
        for (p, &v) in x.iter().zip(&y) {
            gp.observe(Point::new(p), v).unwrap();
        }
        let at = [Point::new(&x[9])];
        let plain = gp.predict(&at).unwrap()[0].0;
        // Zero variances change nothing.
        gp.set_noise(&[0.0; 10]).unwrap();
        assert_eq!(gp.predict(&at).unwrap()[0].0, plain);
        // The outlier was measured with a standard deviation of 10: the model trusts the
        // precise neighbour instead.
        let mut var = vec![0.0; 10];
        var[9] = 100.0;
        gp.set_noise(&var).unwrap();
        let noisy = gp.predict(&at).unwrap()[0].0;
        assert!((noisy - y[4]).abs() < 0.5, "{noisy} vs {}", y[4]);
        // Without it, the model is pulled far towards the outlier.
        assert!(plain - y[4] > 2.0, "{plain} vs {}", y[4]);
        // As a dense GP with the same variances, and fitting sees them too.
        let dense = DenseGp::fit_noisy(&kernel, &x, &y, &var).unwrap();
        assert_eq!(noisy, dense.predict(std::slice::from_ref(&x[9]))[0].0);
        assert!(gp.set_noise(&[1.0; 3]).is_err());
        assert!(gp.set_noise(&[f64::NAN; 10]).is_err());
        let mut fitted = ExactGp::fitted(
            KernelKind::Matern52,
            Metric::PerCoordinate(crate::Distance::Euclidean),
            FitOptions::default(),
        );
        for (p, &v) in x.iter().zip(&y) {
            fitted.observe(Point::new(p), v).unwrap();
        }
        fitted.set_noise(&var).unwrap();
        fitted.fit(1).unwrap();
        let p = fitted.predict(&at).unwrap()[0].0;
        assert!((p - y[4]).abs() < (p - y[9]).abs(), "{p}");
    }

    #[test]
    fn predicts_as_a_dense_gp_fitted_to_what_it_was_told() {
        let kernel = Kernel::new(KernelKind::Matern52, 0.7);
        let (x, y) = data();
        let mut gp = ExactGp::new(kernel.clone());
        assert!(
            gp.predict(&[Point::new(&[0.0, 0.0])]).is_err(),
            "nothing to fit yet"
        );
        for (p, &v) in x.iter().zip(&y) {
            gp.observe(Point::new(p), v).unwrap();
        }
        let dense = DenseGp::fit(&kernel, &x, &y).unwrap();
        let tests = [vec![0.1, 0.2], vec![-0.5, 0.9]];
        let points: Vec<Point<'_>> = tests.iter().map(|t| Point::new(t)).collect();
        assert_eq!(gp.predict(&points).unwrap(), dense.predict(&tests));
        assert_eq!(gp.observed_values(), y.as_slice());
        // New values for the same points.
        let y2: Vec<f64> = y.iter().map(|v| v * 2.0).collect();
        gp.replace_values(&y2).unwrap();
        let dense2 = DenseGp::fit(&kernel, &x, &y2).unwrap();
        assert_eq!(gp.predict(&points).unwrap(), dense2.predict(&tests));
        assert!(gp.replace_values(&y2[1..]).is_err());
        assert!(gp.observe(Point::new(&[0.0]), 1.0).is_err(), "dimension");
        assert!(gp.observe(Point::new(&[0.0, 0.0]), f64::NAN).is_err());
        assert_eq!(gp.len(), 9);
    }

    #[test]
    fn fitting_learns_hyperparameters_that_predict_better() {
        use crate::{Distance, FitOptions};
        // A steep function of one coordinate: the priors' mode (lengthscale 1/3) is too
        // smooth for it; fitted lengthscales are shorter and predict held-out points better.
        let f = |a: f64| (12.0 * a).sin();
        let xs: Vec<f64> = (0..30).map(|i| (i as f64 * 0.618).fract()).collect();
        let metric = Metric::PerCoordinate(Distance::Euclidean);
        let mut gp = ExactGp::fitted(KernelKind::Matern52, metric, FitOptions::default());
        for &a in &xs {
            gp.observe(Point::new(&[a]), f(a)).unwrap();
        }
        let held: Vec<Vec<f64>> = (0..20)
            .map(|i| vec![(i as f64 * 0.377 + 0.05).fract()])
            .collect();
        let points: Vec<Point<'_>> = held.iter().map(|h| Point::new(h)).collect();
        let error = |gp: &ExactGp| -> f64 {
            gp.predict(&points)
                .unwrap()
                .iter()
                .zip(&held)
                .map(|((m, _), h)| (m - f(h[0])).powi(2))
                .sum()
        };
        let before = error(&gp);
        let l_before = gp.kernel().hyper.lengthscales.clone();
        gp.fit(3).unwrap();
        assert_ne!(gp.kernel().hyper.lengthscales, l_before);
        let after = error(&gp);
        assert!(
            after < before,
            "squared error {after} after fitting, {before} before"
        );
        // A second fit starts from the first optimum and is repeatable.
        let mut again = gp.clone();
        gp.fit(4).unwrap();
        again.fit(4).unwrap();
        assert_eq!(gp.kernel(), again.kernel());
    }

    /// A fit replaces the hyperparameters and keeps the kernel's sub-spaces.
    #[test]
    fn fitting_keeps_the_sub_spaces() {
        use crate::{Distance, FitOptions, SubSpaces};
        let metric = Metric::PerCoordinate(Distance::Euclidean);
        let mut gp = ExactGp::fitted(KernelKind::Matern52, metric, FitOptions::default());
        let sub = SubSpaces {
            coordinates: vec![1],
            shared: 0.4,
        };
        gp.set_kernel(gp.kernel().clone().between_sub_spaces(sub.clone()));
        for i in 0..12 {
            let (a, s) = ((i as f64 * 0.618).fract(), f64::from(i % 2));
            gp.observe(Point::new(&[a, s]), (5.0 * a).sin() + s)
                .unwrap();
        }
        let before = gp.kernel().hyper.clone();
        gp.fit(1).unwrap();
        assert_ne!(gp.kernel().hyper, before);
        assert_eq!(gp.kernel().sub_spaces, Some(sub));
    }

    #[test]
    fn the_candidate_gp_is_a_surrogate_keyed_by_candidate_index() {
        let kernel = Kernel::new(KernelKind::Matern32, 0.5);
        let (x, y) = data();
        let flat: Vec<f64> = x.iter().flatten().copied().collect();
        let mut gp = CandidateGp::new(kernel.clone(), flat, 2).unwrap();
        // Observe five by key and one by coordinates.
        for i in 0..5 {
            Surrogate::observe(&mut gp, Point::keyed(&x[i], i as u64), y[i]).unwrap();
        }
        Surrogate::observe(&mut gp, Point::new(&x[6]), y[6]).unwrap();
        // A point that is no candidate is appended (see the candidate GP's tests), but not
        // with a value it cannot fit.
        assert!(Surrogate::observe(&mut gp, Point::new(&[9.0, 9.0]), f64::NAN).is_err());
        assert_eq!(gp.num_candidates(), x.len());
        // Keyed predictions are the candidates' posteriors...
        let keyed: Vec<Point<'_>> = (0..9).map(|i| Point::keyed(&x[i], i as u64)).collect();
        let p = gp.predict(&keyed).unwrap();
        for (i, &(m, v)) in p.iter().enumerate() {
            assert_eq!((m, v), (gp.mean(i), gp.variance(i)));
        }
        // ...and a point anywhere gets the exact posterior, as a dense GP gives it.
        let xo: Vec<Vec<f64>> = [0, 1, 2, 3, 4, 6].iter().map(|&i| x[i].clone()).collect();
        let yo: Vec<f64> = [0, 1, 2, 3, 4, 6].iter().map(|&i| y[i]).collect();
        let dense = DenseGp::fit(&kernel, &xo, &yo).unwrap();
        let far = [vec![0.3, -0.2], x[7].clone()];
        let want = dense.predict(&far);
        let got = gp
            .predict(&[Point::new(&far[0]), Point::new(&far[1])])
            .unwrap();
        for ((gm, gv), (wm, wv)) in got.iter().zip(&want) {
            assert!((gm - wm).abs() < 1e-9 * wm.abs().max(1.0), "{gm} {wm}");
            assert!((gv - wv).abs() < 1e-9, "{gv} {wv}");
        }
        // At a candidate, the keyless posterior equals the keyed one.
        let (m7, v7) = gp.posterior(&x[7]);
        assert!((m7 - gp.mean(7)).abs() < 1e-9 && (v7 - gp.variance(7)).abs() < 1e-9);
    }
}
