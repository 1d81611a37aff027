//! Hyperparameters by maximum a posteriori: the log marginal likelihood of the standardised
//! observations plus gamma log-priors, maximised over log lengthscales, log output scale and
//! log noise with L-BFGS from several starts (BaCO, section 3.2).
//!
//! The gradient is analytic: `∂/∂θ log p(y|θ) = ½ tr((ααᵀ - K⁻¹) ∂K/∂θ)` with `α = K⁻¹y`,
//! and for the lengthscale `l_p` of parameter `p`,
//! `∂K_ij/∂ log l_p = σ² · dk/d(r²) · (-2 D_p(i, j) / l_p²)`, `D_p` being the parameter's
//! contribution to `r²` before scaling.

use std::cell::RefCell;

use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use faer::linalg::solvers::{DenseSolveCore, Solve};
use faer::{Mat, Side};
use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::error::ModelError;
use crate::kernel::{Hyperparameters, Kernel, KernelKind, Metric, Prepared};
use crate::stats::normalisation;

/// A gamma prior `Gamma(shape, rate)` on a positive hyperparameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gamma {
    /// Shape `α`.
    pub shape: f64,
    /// Rate `β`.
    pub rate: f64,
}

impl Gamma {
    /// `log p(x)` up to a constant, `(α - 1) ln x - β x`.
    fn log_density(self, x: f64) -> f64 {
        (self.shape - 1.0) * x.ln() - self.rate * x
    }

    /// `d log p(x) / dx`.
    fn dlog_density(self, x: f64) -> f64 {
        (self.shape - 1.0) / x - self.rate
    }

    /// The most likely value (`(α - 1)/β`, or a small positive value when `α <= 1`).
    pub fn mode(self) -> f64 {
        if self.shape > 1.0 {
            (self.shape - 1.0) / self.rate
        } else {
            1e-3 / self.rate.max(1e-300)
        }
    }
}

/// Priors on the hyperparameters, for inputs normalised to `[0, 1]` (each parameter's
/// contribution to `r²` at most 1) and standardised outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priors {
    /// On every lengthscale.
    pub lengthscale: Gamma,
    /// On the output scale (signal variance).
    pub output_scale: Gamma,
    /// On the noise variance.
    pub noise: Gamma,
}

impl Default for Priors {
    /// BaCO's GP (BoTorch's `SingleTaskGP` of the versions it requires): lengthscales
    /// `Gamma(3, 6)` (mode 1/3, mean 1/2: long enough that a parameter's values stay related,
    /// short enough for a non-smooth landscape), output scale `Gamma(2, 0.15)`, noise
    /// `Gamma(1.1, 0.05)`.
    fn default() -> Self {
        Priors {
            lengthscale: Gamma {
                shape: 3.0,
                rate: 6.0,
            },
            output_scale: Gamma {
                shape: 2.0,
                rate: 0.15,
            },
            noise: Gamma {
                shape: 1.1,
                rate: 0.05,
            },
        }
    }
}

/// How hyperparameters are fitted.
#[derive(Clone, Debug, PartialEq)]
pub struct FitOptions {
    /// Gamma priors (maximum a posteriori), or `None` for maximum likelihood.
    pub priors: Option<Priors>,
    /// Random settings drawn at the first fit (log-uniform over the ranges below), of which
    /// the `keep` most likely are refined with L-BFGS.
    pub samples: usize,
    /// See `samples`.
    pub keep: usize,
    /// At later fits: random settings drawn besides the previous optimum (which is always
    /// refined), and how many of them are refined too.
    pub warm_samples: usize,
    /// See `warm_samples`.
    pub warm_keep: usize,
    /// L-BFGS iterations per start at most.
    pub max_iters: u64,
    /// The same for a warm start (the optimum moves little between fits).
    pub warm_max_iters: u64,
    /// The noise variance never goes below this (standardised units).
    pub min_noise: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            priors: Some(Priors::default()),
            samples: 200,
            keep: 5,
            warm_samples: 0,
            warm_keep: 0,
            max_iters: 40,
            warm_max_iters: 15,
            min_noise: 1e-6,
        }
    }
}

/// Ranges of the random starting settings, log10: lengthscales and output scale in
/// `[0.1, 3.2]`, noise in `[1e-5, 0.1]` (BaCO's multistart ranges).
const LOG10_SCALE: (f64, f64) = (-1.0, 0.5);
const LOG10_NOISE: (f64, f64) = (-5.0, -1.0);

/// `θ`, the cost there and the gradient.
type Evaluation = (Vec<f64>, f64, Vec<f64>);

/// The negative log posterior of the hyperparameters and its gradient, over
/// `θ = (ln l_1, …, ln l_P, ln σ², ln(σ_n² - min_noise))`.
struct Objective {
    kind: KernelKind,
    /// Per parameter `p`, `D_p(i, j)` for the pairs `i < j`, packed row by row (the
    /// matrices are symmetric with a zero diagonal).
    contrib: Vec<Vec<f64>>,
    /// The standardised observations.
    y: Vec<f64>,
    /// Per observation, its known measurement variance in standardised units (empty: none),
    /// added to the diagonal beside the fitted noise.
    extra: Vec<f64>,
    n: usize,
    priors: Option<Priors>,
    min_noise: f64,
    /// The last evaluation, as argmin asks for the cost and the gradient at one point.
    memo: RefCell<Option<Evaluation>>,
}

impl Objective {
    /// The objective for observations `y` at `x` (checked by the caller).
    fn new(
        kind: KernelKind,
        metric: &Metric,
        x: &[Vec<f64>],
        y: &[f64],
        extra: &[f64],
        priors: Option<Priors>,
        min_noise: f64,
    ) -> Objective {
        let dims = x[0].len();
        let params = metric.parameters(dims);
        let n = x.len();
        // Each parameter's contribution to r² for every pair, computed once: they do not
        // depend on the hyperparameters.
        let prep: Prepared =
            Kernel::with_metric(kind, metric.clone(), Hyperparameters::isotropic(1.0))
                .prepare(dims);
        let mut contrib = vec![Vec::with_capacity(n * n.saturating_sub(1) / 2); params];
        let mut buf = vec![0.0; params];
        for i in 0..n {
            for j in i + 1..n {
                prep.contributions(&x[i], &x[j], &mut buf);
                for (q, v) in buf.iter().enumerate() {
                    contrib[q].push(*v);
                }
            }
        }
        let (mean, std) = normalisation(y);
        Objective {
            kind,
            contrib,
            y: y.iter().map(|v| (v - mean) / std).collect(),
            extra: extra.iter().map(|v| v / (std * std)).collect(),
            n,
            priors,
            min_noise,
            memo: RefCell::new(None),
        }
    }

    fn parameters(&self) -> usize {
        self.contrib.len()
    }

    /// The hyperparameters at `theta`.
    fn hyper(&self, theta: &[f64]) -> Hyperparameters {
        let p = self.parameters();
        Hyperparameters {
            lengthscales: theta[..p].iter().map(|t| t.exp()).collect(),
            output_scale: theta[p].exp(),
            noise: self.min_noise + theta[p + 1].exp(),
        }
    }

    /// `(-log posterior, its gradient)`, or `None` where the covariance cannot be factorised.
    fn evaluate(&self, theta: &[f64]) -> Option<(f64, Vec<f64>)> {
        self.evaluate_with(theta, true)
    }

    /// `-log posterior` only (no inverse, no gradient): for scoring random starts.
    fn cost_only(&self, theta: &[f64]) -> f64 {
        self.evaluate_with(theta, false)
            .map_or(f64::INFINITY, |(c, _)| c)
    }

    /// The cost, and the gradient when `gradient` (else an empty vector).
    fn evaluate_with(&self, theta: &[f64], gradient: bool) -> Option<(f64, Vec<f64>)> {
        if let Some((t, c, g)) = self.memo.borrow().as_ref()
            && t == theta
        {
            return Some((*c, g.clone()));
        }
        let h = self.hyper(theta);
        if !h
            .lengthscales
            .iter()
            .chain([&h.output_scale, &h.noise])
            .all(|v| v.is_finite() && *v > 0.0)
        {
            return None;
        }
        let (n, p) = (self.n, self.parameters());
        let inv_l2: Vec<f64> = h.lengthscales.iter().map(|l| 1.0 / (l * l)).collect();
        // r² and the correlation for every pair i < j.
        let pairs = n * n.saturating_sub(1) / 2;
        let mut r2 = vec![0.0; pairs];
        for (c, il2) in self.contrib.iter().zip(&inv_l2) {
            for (r, d) in r2.iter_mut().zip(c) {
                *r += d * il2;
            }
        }
        let corr: Vec<f64> = r2.iter().map(|&r| self.kind.correlation(r)).collect();
        let sigma2 = h.output_scale;
        let mut k = Mat::<f64>::zeros(n, n);
        let mut idx = 0;
        for i in 0..n {
            k[(i, i)] = sigma2 + h.noise + self.extra.get(i).copied().unwrap_or(0.0);
            for j in i + 1..n {
                let v = sigma2 * corr[idx];
                k[(i, j)] = v;
                k[(j, i)] = v;
                idx += 1;
            }
        }
        let llt = k.llt(Side::Lower).ok()?;
        let l = llt.L();
        let mut alpha = Mat::from_fn(n, 1, |i, _| self.y[i]);
        llt.solve_in_place(alpha.as_mut());
        let alpha = alpha.col_as_slice(0).to_vec();
        let fit: f64 = alpha.iter().zip(&self.y).map(|(a, y)| a * y).sum();
        let log_det_half: f64 = (0..n).map(|i| l[(i, i)].ln()).sum();
        let lml = -0.5 * fit - log_det_half - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
        if !lml.is_finite() {
            return None;
        }
        if !gradient {
            let mut log_post = lml;
            if let Some(pr) = self.priors {
                log_post += h
                    .lengthscales
                    .iter()
                    .map(|&l| pr.lengthscale.log_density(l))
                    .sum::<f64>()
                    + pr.output_scale.log_density(sigma2)
                    + pr.noise.log_density(h.noise);
            }
            return log_post.is_finite().then_some((-log_post, Vec::new()));
        }
        let kinv = llt.inverse();
        // W = ααᵀ - K⁻¹; ∂lml/∂θ = ½ Σ_ij W_ij ∂K_ij/∂θ, the off-diagonal pairs twice.
        let w = |i: usize, j: usize| alpha[i] * alpha[j] - kinv[(i, j)];
        let mut grad = vec![0.0; p + 2];
        let mut g_noise = 0.0;
        let mut g_sigma = 0.0;
        for i in 0..n {
            let wii = w(i, i);
            g_noise += wii;
            g_sigma += wii * sigma2;
        }
        let mut dc = vec![0.0; pairs];
        let mut idx = 0;
        for i in 0..n {
            for j in i + 1..n {
                let wij = 2.0 * w(i, j);
                g_sigma += wij * sigma2 * corr[idx];
                dc[idx] = wij * sigma2 * self.kind.dcorrelation_dr2(r2[idx]);
                idx += 1;
            }
        }
        for q in 0..p {
            let s: f64 = dc.iter().zip(&self.contrib[q]).map(|(a, d)| a * d).sum();
            grad[q] = 0.5 * s * (-2.0 * inv_l2[q]);
        }
        grad[p] = 0.5 * g_sigma;
        let noise_raw = theta[p + 1].exp();
        grad[p + 1] = 0.5 * g_noise * noise_raw;
        let mut log_post = lml;
        if let Some(pr) = self.priors {
            for (q, &l) in h.lengthscales.iter().enumerate() {
                log_post += pr.lengthscale.log_density(l);
                grad[q] += pr.lengthscale.dlog_density(l) * l;
            }
            log_post += pr.output_scale.log_density(sigma2);
            grad[p] += pr.output_scale.dlog_density(sigma2) * sigma2;
            log_post += pr.noise.log_density(h.noise);
            grad[p + 1] += pr.noise.dlog_density(h.noise) * noise_raw;
        }
        let cost = -log_post;
        let grad: Vec<f64> = grad.iter().map(|g| -g).collect();
        if !cost.is_finite() || grad.iter().any(|g| !g.is_finite()) {
            return None;
        }
        *self.memo.borrow_mut() = Some((theta.to_vec(), cost, grad.clone()));
        Some((cost, grad))
    }
}

/// The objective as argmin sees it (by reference, so it outlives each run).
struct Problem<'a>(&'a Objective);

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, theta: &Self::Param) -> Result<f64, argmin::core::Error> {
        self.0
            .evaluate(theta)
            .map(|(c, _)| c)
            .ok_or_else(|| argmin::core::Error::msg("covariance not positive definite"))
    }
}

impl Gradient for Problem<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, theta: &Self::Param) -> Result<Vec<f64>, argmin::core::Error> {
        self.0
            .evaluate(theta)
            .map(|(_, g)| g)
            .ok_or_else(|| argmin::core::Error::msg("covariance not positive definite"))
    }
}

/// The result of a fit.
#[derive(Clone, Debug, PartialEq)]
pub struct Fitted {
    /// The best hyperparameters found.
    pub hyper: Hyperparameters,
    /// Their log posterior (log marginal likelihood of the standardised observations plus
    /// the log priors, up to the priors' constants).
    pub log_posterior: f64,
}

/// Fits the hyperparameters of a `kind` kernel over `metric` to observations `y` at `x`
/// (standardised inside, as the models standardise them): the most likely of random
/// settings (and of `previous`, when given: a warm start) refined by L-BFGS.
///
/// Errors: fewer than two observations, mismatched or non-finite inputs, a metric that does
/// not fit the points, or no setting whose covariance can be factorised.
pub fn fit_hyperparameters(
    kind: KernelKind,
    metric: &Metric,
    x: &[Vec<f64>],
    y: &[f64],
    previous: Option<&Hyperparameters>,
    options: &FitOptions,
    seed: u64,
) -> Result<Fitted, ModelError> {
    fit_hyperparameters_noisy(kind, metric, x, y, &[], previous, options, seed)
}

/// [`fit_hyperparameters`] where each observation has a known measurement variance
/// `extra[i]` (in the units of `y`; empty for none), added to the covariance's diagonal
/// beside the fitted noise (a heteroscedastic noise term).
#[allow(clippy::too_many_arguments)]
pub fn fit_hyperparameters_noisy(
    kind: KernelKind,
    metric: &Metric,
    x: &[Vec<f64>],
    y: &[f64],
    extra: &[f64],
    previous: Option<&Hyperparameters>,
    options: &FitOptions,
    seed: u64,
) -> Result<Fitted, ModelError> {
    let dims = crate::observations::check_training(x, y, extra)?;
    if x.len() < 2 {
        return Err(ModelError::LengthMismatch {
            what: format!("{} observations: fitting needs at least two", x.len()),
        });
    }
    metric.validate(dims)?;
    let params = metric.parameters(dims);
    let objective = Objective::new(kind, metric, x, y, extra, options.priors, options.min_noise);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let ln10 = std::f64::consts::LN_10;
    let mut draw = |range: (f64, f64)| rng.random_range(range.0..range.1) * ln10;
    let (samples, keep, iterations) = match previous {
        None => (options.samples, options.keep, options.max_iters),
        Some(_) => (
            options.warm_samples,
            options.warm_keep,
            options.warm_max_iters,
        ),
    };
    let mut starts: Vec<(f64, Vec<f64>)> = (0..samples)
        .map(|_| {
            let mut t: Vec<f64> = (0..params).map(|_| draw(LOG10_SCALE)).collect();
            t.push(draw(LOG10_SCALE));
            t.push(draw(LOG10_NOISE));
            (objective.cost_only(&t), t)
        })
        .filter(|(c, _)| c.is_finite())
        .collect();
    starts.sort_by(|a, b| a.0.total_cmp(&b.0));
    starts.truncate(keep);
    if let Some(h) =
        previous.filter(|h| h.lengthscales.len() == params || h.lengthscales.len() == 1)
    {
        let mut t: Vec<f64> = (0..params).map(|q| h.lengthscale(q).ln()).collect();
        t.push(h.output_scale.ln());
        t.push((h.noise - options.min_noise).max(1e-12).ln());
        let c = objective.cost_only(&t);
        if c.is_finite() {
            starts.insert(0, (c, t));
        }
    }
    let mut best: Option<(f64, Vec<f64>)> = None;
    for (c0, t0) in starts {
        let refined = LBFGS::new(MoreThuenteLineSearch::new(), 7)
            .with_tolerance_grad(1e-6)
            .and_then(|s| s.with_tolerance_cost(1e-9))
            .ok()
            .and_then(|solver| {
                Executor::new(Problem(&objective), solver)
                    .configure(|state| state.param(t0.clone()).max_iters(iterations))
                    .run()
                    .ok()
            })
            .and_then(|r| {
                let state = r.state();
                state
                    .get_best_param()
                    .map(|p| (state.get_best_cost(), p.clone()))
            })
            .filter(|(c, _)| c.is_finite() && *c <= c0);
        let (c, t) = refined.unwrap_or((c0, t0));
        if best.as_ref().is_none_or(|(bc, _)| c < *bc) {
            best = Some((c, t));
        }
    }
    let Some((cost, theta)) = best else {
        return Err(ModelError::NotPositiveDefinite {
            row: 0,
            pivot: f64::NAN,
            max_jitter: 0.0,
        });
    };
    Ok(Fitted {
        hyper: objective.hyper(&theta),
        log_posterior: -cost,
    })
}

/// The negative log posterior and its gradient at `theta` (for tests against finite
/// differences).
#[cfg(test)]
pub(crate) fn objective_at(
    kind: KernelKind,
    metric: &Metric,
    x: &[Vec<f64>],
    y: &[f64],
    priors: Option<Priors>,
    theta: &[f64],
) -> Option<(f64, Vec<f64>)> {
    Objective::new(kind, metric, x, y, &[], priors, 1e-6).evaluate(theta)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Distance;

    /// Points of a number, a categorical (4 values) and a permutation of three items.
    fn mixed() -> (Metric, Vec<Vec<f64>>, Vec<f64>) {
        let metric = Metric::mixed_for_tests(Distance::Spearman);
        let perms = [
            [0.0, 1.0, 2.0],
            [1.0, 0.0, 2.0],
            [2.0, 1.0, 0.0],
            [0.0, 2.0, 1.0],
            [1.0, 2.0, 0.0],
            [2.0, 0.0, 1.0],
        ];
        let mut x = Vec::new();
        let mut y = Vec::new();
        for i in 0..14 {
            let a = (i as f64 * 0.618).fract();
            let c = (i % 4) as f64;
            let p = perms[(i * 5) % 6];
            y.push(3.0 * a * a + if c == 2.0 { 1.5 } else { 0.0 } + p[0] - 0.3 * p[2]);
            x.push(vec![a, c, p[0], p[1], p[2]]);
        }
        (metric, x, y)
    }

    #[test]
    fn the_gradient_matches_finite_differences() {
        let (metric, x, y) = mixed();
        for kind in [KernelKind::Matern52, KernelKind::Matern32, KernelKind::Rbf] {
            for priors in [None, Some(Priors::default())] {
                let theta = vec![-0.7, 0.2, -0.3, 0.1, -4.0];
                let (c, g) = objective_at(kind, &metric, &x, &y, priors, &theta).unwrap();
                // The cheap path that scores random starts agrees.
                let o = Objective::new(kind, &metric, &x, &y, &[], priors, 1e-6);
                assert!((o.cost_only(&theta) - c).abs() <= 1e-12 * c.abs().max(1.0));
                for q in 0..theta.len() {
                    let h = 1e-5;
                    let mut up = theta.clone();
                    up[q] += h;
                    let mut down = theta.clone();
                    down[q] -= h;
                    let fd = (objective_at(kind, &metric, &x, &y, priors, &up).unwrap().0
                        - objective_at(kind, &metric, &x, &y, priors, &down)
                            .unwrap()
                            .0)
                        / (2.0 * h);
                    assert!(
                        (fd - g[q]).abs() <= 1e-5 * fd.abs().max(1.0),
                        "{kind:?} priors {} θ_{q}: analytic {} vs finite difference {fd}",
                        priors.is_some(),
                        g[q]
                    );
                }
            }
        }
    }

    #[test]
    fn the_log_posterior_is_the_marginal_likelihood_plus_the_priors() {
        // Without priors the cost is minus the log marginal likelihood a dense GP reports.
        let (metric, x, y) = mixed();
        let theta = [-0.5, 0.3, -0.2, 0.4, -6.0];
        let (cost, _) = objective_at(KernelKind::Matern52, &metric, &x, &y, None, &theta).unwrap();
        let o = Objective::new(KernelKind::Matern52, &metric, &x, &y, &[], None, 1e-6);
        let kernel = Kernel::with_metric(KernelKind::Matern52, metric.clone(), o.hyper(&theta));
        let dense = crate::DenseGp::fit(&kernel, &x, &y).unwrap();
        assert!((-cost - dense.log_marginal_likelihood()).abs() < 1e-9);
    }

    #[test]
    fn irrelevant_parameters_get_long_lengthscales() {
        // y depends on the first of four numeric parameters only.
        let x: Vec<Vec<f64>> = (0..40)
            .map(|i| {
                let f = |k: f64| (i as f64 * k).fract();
                vec![f(0.618), f(0.414), f(0.732), f(0.236)]
            })
            .collect();
        let y: Vec<f64> = x.iter().map(|p| (6.0 * p[0]).sin()).collect();
        let metric = Metric::PerCoordinate(Distance::Euclidean);
        let fit_from = |start: Option<&Hyperparameters>, seed| {
            fit_hyperparameters(
                KernelKind::Matern52,
                &metric,
                &x,
                &y,
                start,
                &FitOptions::default(),
                seed,
            )
            .unwrap()
        };
        let fit = fit_from(None, 1);
        let l = &fit.hyper.lengthscales;
        assert!(
            l[1..].iter().all(|&li| li > 3.0 * l[0]),
            "relevant {} vs irrelevant {:?}",
            l[0],
            &l[1..]
        );
        // Deterministic per seed, and a warm start from the optimum keeps it.
        assert_eq!(fit, fit_from(None, 1));
        let warm = fit_from(Some(&fit.hyper), 2);
        assert!(warm.log_posterior >= fit.log_posterior - 1e-6);
    }

    #[test]
    fn bad_input_is_an_error() {
        let metric = Metric::PerCoordinate(Distance::Euclidean);
        let o = FitOptions::default();
        let k = KernelKind::Matern52;
        assert!(fit_hyperparameters(k, &metric, &[vec![0.0]], &[1.0], None, &o, 0).is_err());
        assert!(
            fit_hyperparameters(k, &metric, &[vec![0.0], vec![1.0]], &[1.0], None, &o, 0).is_err()
        );
        assert!(
            fit_hyperparameters(
                k,
                &metric,
                &[vec![0.0], vec![1.0, 2.0]],
                &[1.0, 2.0],
                None,
                &o,
                0
            )
            .is_err()
        );
        assert!(
            fit_hyperparameters(
                k,
                &metric,
                &[vec![0.0], vec![1.0]],
                &[1.0, f64::NAN],
                None,
                &o,
                0
            )
            .is_err()
        );
        // Identical points with different values: the noise absorbs it.
        let f = fit_hyperparameters(
            k,
            &metric,
            &[vec![0.5], vec![0.5]],
            &[1.0, 2.0],
            None,
            &o,
            0,
        )
        .unwrap();
        assert!(f.hyper.noise > 1e-3, "{f:?}");
    }
}
