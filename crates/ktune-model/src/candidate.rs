//! Incremental exact Gaussian process over a fixed, discrete candidate set.
//!
//! # Update rule
//!
//! Let `L` be the lower Cholesky factor of `K(X, X) + noise·I` over the `n` observed
//! points, `V = L⁻¹ K(X, C)` (`n × m`, over all `m` candidates), `z_y = L⁻¹ (y - c·1)` and
//! `z_1 = L⁻¹ 1`, where `c` is a fixed shift (the first observed value) that keeps the
//! accumulators at the scale of the *spread* of `y` rather than its offset. With
//! `y_norm = (y - ȳ·1) / s = ((y - c·1) - (ȳ - c)·1) / s`, the normalised posterior at
//! candidate `j` is
//!
//! ```text
//! μ_norm(j) = V_jᵀ L⁻¹ y_norm = (a_j - (ȳ - c)·b_j) / s,   a = Vᵀ z_y,  b = Vᵀ z_1
//! σ²_norm(j) = k(0) - V_jᵀ V_j = k(0) - r_j
//! ```
//!
//! so `mean_j = ȳ + a_j - (ȳ - c)·b_j` and `variance_j = s²·max(k(0) - r_j, 0)`, exactly,
//! for whatever `ȳ` and `s` are after the latest observation.
//!
//! Observing candidate `p` appends one row to `L`: `l = L⁻¹ k(X, x_p)`, which is column
//! `p` of `V` (no solve needed), and `l_nn = √(k(x_p, x_p) + noise - lᵀl)`. The new row
//! of `V` is `v = (k(x_p, C) - Σ_i l_i V_i) / l_nn`, the new entries of `z_y` and `z_1`
//! are `((y_p - c) - lᵀz_y) / l_nn` and `(1 - lᵀz_1) / l_nn`, and `a`, `b`, `r` are
//! updated with the new row only: `O(n·m)` time per observation, one streaming pass
//! over `V`.
//!
//! Why one file of over 800 lines: the model, its incremental update, its downdate (for
//! fantasised points taken back) and its blocked prediction share the invariants of one
//! factorisation; split apart, each would have to restate them.

use std::fmt;
use std::sync::Arc;

use faer::{Mat, Side};
use rayon::prelude::*;

use crate::error::ModelError;
use crate::kernel::{Kernel, Prepared};
use crate::stats::{PIVOT_THRESHOLD, jitter_sequence, normalisation};
use crate::surrogate::{Point, Surrogate};

/// Candidates are processed in chunks of this many (the chunk of the new row stays in L1).
const CHUNK: usize = 1024;
/// Below this many candidates, everything runs on the calling thread.
const PARALLEL_MIN: usize = 4 * CHUNK;
/// How far `s²` may drift from the scale the measurement variances were converted with
/// before they are converted again (a factor either way): at most a factor of 2 in how
/// much a measurement variance counts, against a refactorisation per observation.
const NOISE_RESCALE: f64 = 2.0;

/// Incremental exact GP over a fixed candidate set.
///
/// Posterior semantics are those of [`DenseGp`](crate::DenseGp) (scikit-learn's
/// `GaussianProcessRegressor(kernel, alpha=noise, normalize_y=True)` with fixed
/// hyperparameters) fitted to the observations so far, evaluated at every candidate;
/// each [`observe`](CandidateGp::observe) costs `O(n·m)` and the memory is `O(n·m)`.
///
/// With no observations the posterior is the prior: mean 0, variance `output_scale`.
///
/// # Example
///
/// ```
/// use ktune_model::{CandidateGp, Kernel, KernelKind};
///
/// // Five candidates on a line (dimension 1).
/// let candidates = vec![0.0, 0.25, 0.5, 0.75, 1.0];
/// let kernel = Kernel::new(KernelKind::Matern52, 0.5);
/// let mut gp = CandidateGp::new(kernel, candidates, 1)?;
///
/// gp.observe(0, 10.0)?;
/// gp.observe(4, 14.0)?;
/// assert_eq!(gp.len(), 2);
///
/// // Interpolates the observations (noise is 1e-10)...
/// assert!((gp.mean(0) - 10.0).abs() < 1e-6);
/// assert!(gp.variance(4) < 1e-6);
/// // ...and is uncertain in between.
/// let (means, vars) = (gp.means(), gp.variances());
/// assert!(means[2] > 10.0 && means[2] < 14.0);
/// assert!(vars[2] > vars[0]);
///
/// // Observing a candidate twice is an error.
/// assert!(gp.observe(0, 11.0).is_err());
/// # Ok::<(), ktune_model::ModelError>(())
/// ```
#[derive(Clone)]
pub struct CandidateGp {
    kernel: Kernel,
    prep: Prepared,
    dims: usize,
    m: usize,
    /// Candidate coordinates, row-major `m × dims` (shared with the caller, who usually
    /// needs them too).
    cands: Arc<[f64]>,
    observed: Vec<bool>,
    obs: Vec<usize>,
    ys: Vec<f64>,
    /// Shift `c` (the first observed value).
    shift: f64,
    /// Rows of `V = L⁻¹ K(X, C)`, one per observation, each of length `m`.
    rows: Vec<Vec<f64>>,
    z_y: Vec<f64>,
    z_1: Vec<f64>,
    a: Vec<f64>,
    b: Vec<f64>,
    r: Vec<f64>,
    /// `Σ ln l_ii`.
    log_diag: f64,
    /// `ln l_ii` of each observation, to forget the last ones exactly.
    ln_pivots: Vec<f64>,
    y_mean: f64,
    y_std: f64,
    /// Known measurement variance of each observation, in the units of the observed values
    /// (see [`Surrogate::set_noise`]).
    extra: Vec<f64>,
    /// The squared scale `s_ref²` that turns `extra` into the normalised units of the
    /// factor (`extra[i] / s_ref²` on its diagonal); 0 until a variance is set. The exact
    /// scale is the current `s²`, which moves with every observation: rescaling would
    /// refactorise (`O(n²·m)`), so `s_ref` is kept while `s²/s_ref²` stays within
    /// [`NOISE_RESCALE`] of 1.
    extra_scale: f64,
    jitter_events: usize,
    /// Scratch for `l`.
    l: Vec<f64>,
    /// The Cholesky factor `L` of the observations, row by row, packed: row `i` holds
    /// `L[i][0..=i]`. Below the diagonal it is in `V` too (`L[i][j] = V_j[obs_i]`), but read
    /// there it costs a cache miss per entry; the posterior off the candidates reads it here.
    factor: Vec<f64>,
}

impl fmt::Debug for CandidateGp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CandidateGp")
            .field("kernel", &self.kernel)
            .field("candidates", &self.m)
            .field("dims", &self.dims)
            .field("observed", &self.obs.len())
            .field("y_mean", &self.y_mean)
            .field("y_std", &self.y_std)
            .field("jitter_events", &self.jitter_events)
            .finish_non_exhaustive()
    }
}

impl CandidateGp {
    /// A GP with no observations over `candidates`: `m` points of dimension `dims`,
    /// row-major (`m·dims` values; a `Vec<f64>` or a shared `Arc<[f64]>`).
    ///
    /// Errors: `dims == 0`, a length that is not a multiple of `dims`, non-finite
    /// coordinates, or hyperparameters that are invalid for `dims`.
    pub fn new(
        kernel: Kernel,
        candidates: impl Into<Arc<[f64]>>,
        dims: usize,
    ) -> Result<CandidateGp, ModelError> {
        let candidates: Arc<[f64]> = candidates.into();
        if dims == 0 {
            return Err(ModelError::DimensionMismatch {
                what: "candidate dimension (must be at least 1)".into(),
                expected: 1,
                got: 0,
            });
        }
        if !candidates.len().is_multiple_of(dims) {
            return Err(ModelError::LengthMismatch {
                what: format!(
                    "{} candidate coordinates is not a multiple of dims = {dims}",
                    candidates.len()
                ),
            });
        }
        if let Some(i) = candidates.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                what: format!("coordinate {} of candidate {}", i % dims, i / dims),
                value: candidates[i],
            });
        }
        kernel.validate(dims)?;
        let m = candidates.len() / dims;
        Ok(CandidateGp {
            prep: kernel.prepare(dims),
            kernel,
            dims,
            m,
            cands: candidates,
            observed: vec![false; m],
            obs: Vec::new(),
            ys: Vec::new(),
            shift: 0.0,
            rows: Vec::new(),
            z_y: Vec::new(),
            z_1: Vec::new(),
            a: vec![0.0; m],
            b: vec![0.0; m],
            r: vec![0.0; m],
            log_diag: 0.0,
            ln_pivots: Vec::new(),
            y_mean: 0.0,
            y_std: 1.0,
            extra: Vec::new(),
            extra_scale: 0.0,
            jitter_events: 0,
            l: Vec::new(),
            factor: Vec::new(),
        })
    }

    /// Adds an observation at candidate `index` with value `y`: extends the Cholesky
    /// factor by one row and updates every candidate's posterior, in `O(n·m)`.
    ///
    /// If the new pivot is not safely positive (a duplicate or near-duplicate point),
    /// jitter `max(noise, 1e-10·k(0))·10^k`, `k = 0..=8`, is added to this observation's
    /// diagonal entry, and [`jitter_events`](CandidateGp::jitter_events) is incremented.
    ///
    /// Errors (the model is left unchanged): index out of range, candidate already
    /// observed, non-finite `y`, or a pivot that stays non-positive with the largest jitter.
    pub fn observe(&mut self, index: usize, y: f64) -> Result<(), ModelError> {
        self.observe_noisy(index, y, 0.0)
    }

    /// Observes candidates `indices` with values `ys`, in order: the posterior of
    /// [`observe`](CandidateGp::observe) called for each, computed on a model with no
    /// observations in one blocked factorisation (`O(n²·m)` flops, but not `n` passes over
    /// `V` in memory), or else one by one.
    ///
    /// Errors as [`observe`](CandidateGp::observe), and a length mismatch; on an error the
    /// observations before the failing one are kept.
    pub fn observe_all(&mut self, indices: &[usize], ys: &[f64]) -> Result<(), ModelError> {
        if indices.len() != ys.len() {
            return Err(ModelError::LengthMismatch {
                what: format!("{} candidates but {} values", indices.len(), ys.len()),
            });
        }
        let mut distinct = vec![false; self.m];
        let well_formed = ys.iter().all(|y| y.is_finite())
            && indices
                .iter()
                .all(|&j| j < self.m && !std::mem::replace(&mut distinct[j], true));
        if well_formed && self.factor_at_once(indices, ys, &vec![0.0; ys.len()]) {
            return Ok(());
        }
        for (&j, &y) in indices.iter().zip(ys) {
            self.observe(j, y)?;
        }
        Ok(())
    }

    /// [`observe`](CandidateGp::observe) with the observation's known measurement variance
    /// (units of `y`; counted once [`set_noise`](Surrogate::set_noise) has set a scale).
    fn observe_noisy(&mut self, index: usize, y: f64, variance: f64) -> Result<(), ModelError> {
        if index >= self.m {
            return Err(ModelError::IndexOutOfRange { index, len: self.m });
        }
        if self.observed[index] {
            return Err(ModelError::AlreadyObserved { index });
        }
        if !y.is_finite() {
            return Err(ModelError::NonFinite {
                what: format!("observed value at candidate {index}"),
                value: y,
            });
        }
        let n = self.obs.len();
        let noise = self.kernel.hyper.noise;
        let shift = if n == 0 { y } else { self.shift };
        let x_new = &self.cands[index * self.dims..(index + 1) * self.dims];

        // l = L⁻¹ k(X, x_new) is column `index` of V.
        self.l.clear();
        self.l.extend(self.rows.iter().map(|row| row[index]));
        let l = &self.l;
        let known = if self.extra_scale > 0.0 {
            variance / self.extra_scale
        } else {
            0.0
        };
        let diag = self.prep.eval(x_new, x_new) + noise + known;
        let pivot = diag - l.iter().map(|v| v * v).sum::<f64>();
        let threshold = PIVOT_THRESHOLD * diag;
        let mut jittered = false;
        let pivot = if pivot > threshold {
            pivot
        } else {
            let mut last = (pivot, 0.0);
            let found = pivot.is_finite()
                && jitter_sequence(noise, self.kernel.prior_variance()).any(|j| {
                    last = (pivot + j, j);
                    last.0 > threshold
                });
            if !found {
                return Err(ModelError::NotPositiveDefinite {
                    row: n,
                    pivot: last.0,
                    max_jitter: last.1,
                });
            }
            jittered = true;
            last.0
        };
        let l_nn = pivot.sqrt();
        let dot = |z: &[f64]| l.iter().zip(z).map(|(a, b)| a * b).sum::<f64>();
        let zy_new = ((y - shift) - dot(&self.z_y)) / l_nn;
        let z1_new = (1.0 - dot(&self.z_1)) / l_nn;

        // One pass over V: the new row, and the accumulators.
        let mut w = vec![0.0; self.m];
        let ctx = UpdateCtx {
            prep: &self.prep,
            cands: &self.cands,
            dims: self.dims,
            x_new,
            rows: &self.rows,
            l,
            l_nn,
            zy_new,
            z1_new,
        };
        if self.m >= PARALLEL_MIN {
            w.par_chunks_mut(CHUNK)
                .zip(self.a.par_chunks_mut(CHUNK))
                .zip(self.b.par_chunks_mut(CHUNK))
                .zip(self.r.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (((w, a), b), r))| ctx.update(c * CHUNK, w, a, b, r));
        } else {
            w.chunks_mut(CHUNK)
                .zip(self.a.chunks_mut(CHUNK))
                .zip(self.b.chunks_mut(CHUNK))
                .zip(self.r.chunks_mut(CHUNK))
                .enumerate()
                .for_each(|(c, (((w, a), b), r))| ctx.update(c * CHUNK, w, a, b, r));
        }

        self.rows.push(w);
        self.factor.extend_from_slice(&self.l);
        self.factor.push(l_nn);
        self.z_y.push(zy_new);
        self.z_1.push(z1_new);
        self.log_diag += l_nn.ln();
        self.ln_pivots.push(l_nn.ln());
        self.shift = shift;
        self.observed[index] = true;
        self.obs.push(index);
        self.ys.push(y);
        self.extra.push(variance);
        (self.y_mean, self.y_std) = normalisation(&self.ys);
        if jittered {
            self.jitter_events += 1;
        }
        Ok(())
    }

    /// Forgets every observation after the first `len`: each one's row of `V` leaves the
    /// accumulators it was added to (`O(m)` per observation, no refactorisation).
    pub fn truncate(&mut self, len: usize) {
        while self.obs.len() > len {
            let (Some(row), Some(zy), Some(z1), Some(j), Some(lp)) = (
                self.rows.pop(),
                self.z_y.pop(),
                self.z_1.pop(),
                self.obs.pop(),
                self.ln_pivots.pop(),
            ) else {
                break;
            };
            let undo = |((w, a), b): ((&f64, &mut f64), &mut f64), r: &mut f64| {
                *a -= w * zy;
                *b -= w * z1;
                *r -= w * w;
            };
            if self.m >= PARALLEL_MIN {
                row.par_iter()
                    .zip(self.a.par_iter_mut())
                    .zip(self.b.par_iter_mut())
                    .zip(self.r.par_iter_mut())
                    .for_each(|(x, r)| undo(x, r));
            } else {
                row.iter()
                    .zip(self.a.iter_mut())
                    .zip(self.b.iter_mut())
                    .zip(self.r.iter_mut())
                    .for_each(|(x, r)| undo(x, r));
            }
            self.ys.pop();
            self.extra.pop();
            self.observed[j] = false;
            self.log_diag -= lp;
        }
        let n = self.obs.len();
        self.factor.truncate(n * (n + 1) / 2);
        if self.obs.is_empty() {
            // Exactly the empty model, not one with rounding left in the accumulators.
            self.a.fill(0.0);
            self.b.fill(0.0);
            self.r.fill(0.0);
            self.log_diag = 0.0;
        }
        (self.y_mean, self.y_std) = normalisation(&self.ys);
    }

    /// Appends a candidate at `x` and returns its index: its column of `V` is solved from
    /// the observations so far (`O(n²)`, the cost of one [`posterior`](CandidateGp::posterior))
    /// and the candidate set is copied once (`O(m·dims)`), so that a point the caller did not
    /// list can be observed, or predicted again cheaply.
    ///
    /// Errors: a point of the wrong dimension or with a non-finite coordinate.
    pub fn push_candidate(&mut self, x: &[f64]) -> Result<usize, ModelError> {
        if x.len() != self.dims {
            return Err(ModelError::DimensionMismatch {
                what: "candidate dimension".into(),
                expected: self.dims,
                got: x.len(),
            });
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(ModelError::NonFinite {
                what: format!("coordinate {i} of a new candidate"),
                value: x[i],
            });
        }
        let v = self.solve_column(x);
        let dot = |z: &[f64]| v.iter().zip(z).map(|(a, b)| a * b).sum::<f64>();
        self.a.push(dot(&self.z_y));
        self.b.push(dot(&self.z_1));
        self.r.push(v.iter().map(|a| a * a).sum());
        for (row, vi) in self.rows.iter_mut().zip(&v) {
            row.push(*vi);
        }
        let mut cands = Vec::with_capacity(self.cands.len() + self.dims);
        cands.extend_from_slice(&self.cands);
        cands.extend_from_slice(x);
        self.cands = cands.into();
        self.observed.push(false);
        self.m += 1;
        Ok(self.m - 1)
    }

    /// `L⁻¹ k(X, x)` by forward substitution over the packed factor (`O(n²)`).
    fn solve_column(&self, x: &[f64]) -> Vec<f64> {
        let n = self.obs.len();
        let mut v: Vec<f64> = self
            .obs
            .iter()
            .map(|&j| self.prep.eval(self.candidate(j), x))
            .collect();
        for i in 0..n {
            let row = &self.factor[i * (i + 1) / 2..(i + 1) * (i + 2) / 2];
            let t = v[i]
                - row[..i]
                    .iter()
                    .zip(&v[..i])
                    .map(|(l, w)| l * w)
                    .sum::<f64>();
            v[i] = t / row[i];
        }
        v
    }

    /// Number of observations so far.
    pub fn len(&self) -> usize {
        self.obs.len()
    }

    /// True when nothing has been observed yet.
    pub fn is_empty(&self) -> bool {
        self.obs.is_empty()
    }

    /// Number of candidates `m`.
    pub fn num_candidates(&self) -> usize {
        self.m
    }

    /// The coordinates of candidate `j` (empty when out of range).
    pub fn candidate(&self, j: usize) -> &[f64] {
        self.cands
            .get(j * self.dims..(j + 1) * self.dims)
            .unwrap_or(&[])
    }

    /// Posterior `(mean, variance)` at any point `x` of the candidates' dimension, in
    /// `O(n²)`: the exact posterior of the observations so far, as at a candidate.
    ///
    /// It reads the packed factor: `V`'s entries at the observed candidates are `L` below
    /// the diagonal but not on it (`V_i[obs_i] = l_ii - (noise + known variance) / l_ii`).
    pub fn posterior(&self, x: &[f64]) -> (f64, f64) {
        if x.len() != self.dims {
            return (f64::NAN, f64::NAN);
        }
        let v = self.solve_column(x);
        let dot = |z: &[f64]| v.iter().zip(z).map(|(a, b)| a * b).sum::<f64>();
        let mean = self.y_mean + dot(&self.z_y) - (self.y_mean - self.shift) * dot(&self.z_1);
        let vv: f64 = v.iter().map(|a| a * a).sum();
        let var = self.y_std * self.y_std * (self.prep.eval(x, x) - vv).max(0.0);
        (mean, var)
    }

    /// [`posterior`](CandidateGp::posterior) at each of `xs` together: one blocked
    /// triangular solve by faer per block of points instead of a forward substitution per
    /// point. A local search's batches of neighbours take this path.
    pub fn posteriors(&self, xs: &[&[f64]]) -> Vec<(f64, f64)> {
        let n = self.obs.len();
        if xs.iter().any(|x| x.len() != self.dims) {
            return xs.iter().map(|x| self.posterior(x)).collect();
        }
        if n == 0 || xs.len() < 2 {
            return xs.iter().map(|x| self.posterior(x)).collect();
        }
        let l = Mat::from_fn(n, n, |i, j| {
            if j <= i {
                self.factor[i * (i + 1) / 2 + j]
            } else {
                0.0
            }
        });
        let told: Vec<f64> = self
            .obs
            .iter()
            .flat_map(|&j| self.candidate(j).iter().copied())
            .collect();
        // A block of points at a time, so that the right-hand sides stay `n × CHUNK`.
        let block = |xs: &[&[f64]]| -> Vec<(f64, f64)> {
            let mut v = Mat::<f64>::zeros(n, xs.len());
            for (p, x) in xs.iter().enumerate() {
                self.prep.eval_many(x, &told, v.col_as_slice_mut(p));
            }
            l.solve_lower_triangular_in_place(v.as_mut());
            (0..xs.len())
                .map(|p| {
                    let col = v.col(p);
                    let (mut a, mut b, mut vv) = (0.0, 0.0, 0.0);
                    for i in 0..n {
                        let w = col[i];
                        a += w * self.z_y[i];
                        b += w * self.z_1[i];
                        vv += w * w;
                    }
                    let mean = self.y_mean + a - (self.y_mean - self.shift) * b;
                    let var =
                        self.y_std * self.y_std * (self.prep.eval(xs[p], xs[p]) - vv).max(0.0);
                    (mean, var)
                })
                .collect()
        };
        if xs.len() <= CHUNK {
            block(xs)
        } else {
            xs.par_chunks(CHUNK).flat_map_iter(block).collect()
        }
    }

    /// Dimension of the candidates.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The current kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Candidate indices observed so far, in order.
    pub fn observed_indices(&self) -> &[usize] {
        &self.obs
    }

    /// Observed values, in the order of [`observed_indices`](CandidateGp::observed_indices).
    pub fn observed_values(&self) -> &[f64] {
        &self.ys
    }

    /// Whether candidate `j` has been observed (false when out of range).
    pub fn is_observed(&self, j: usize) -> bool {
        self.observed.get(j).copied().unwrap_or(false)
    }

    /// Posterior mean at candidate `j`, in `y` units (NaN if `j` is out of range).
    pub fn mean(&self, j: usize) -> f64 {
        match (self.a.get(j), self.b.get(j)) {
            (Some(&a), Some(&b)) => self.y_mean + a - (self.y_mean - self.shift) * b,
            _ => f64::NAN,
        }
    }

    /// Posterior variance at candidate `j`, in `y` units, `>= 0` (NaN if out of range).
    pub fn variance(&self, j: usize) -> f64 {
        match self.r.get(j) {
            Some(&r) => self.y_std * self.y_std * (self.kernel.prior_variance() - r).max(0.0),
            None => f64::NAN,
        }
    }

    /// Posterior means at all candidates (in parallel when there are many).
    pub fn means(&self) -> Vec<f64> {
        let (ym, dy) = (self.y_mean, self.y_mean - self.shift);
        let f = |(&a, &b): (&f64, &f64)| ym + a - dy * b;
        if self.m >= PARALLEL_MIN {
            self.a.par_iter().zip(&self.b).map(f).collect()
        } else {
            self.a.iter().zip(&self.b).map(f).collect()
        }
    }

    /// Posterior variances at all candidates (in parallel when there are many).
    pub fn variances(&self) -> Vec<f64> {
        let (s2, k0) = (self.y_std * self.y_std, self.kernel.prior_variance());
        let f = |&r: &f64| s2 * (k0 - r).max(0.0);
        if self.m >= PARALLEL_MIN {
            self.r.par_iter().map(f).collect()
        } else {
            self.r.iter().map(f).collect()
        }
    }

    /// Log marginal likelihood of the normalised observations, as
    /// [`DenseGp::log_marginal_likelihood`](crate::DenseGp::log_marginal_likelihood)
    /// reports it (0 with no observations). `O(n)`.
    pub fn log_marginal_likelihood(&self) -> f64 {
        let n = self.obs.len();
        if n == 0 {
            return 0.0;
        }
        let dy = self.y_mean - self.shift;
        let fit: f64 = self
            .z_y
            .iter()
            .zip(&self.z_1)
            .map(|(zy, z1)| {
                let t = (zy - dy * z1) / self.y_std;
                t * t
            })
            .sum();
        -0.5 * fit - self.log_diag - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln()
    }

    /// How many observations needed extra jitter on their diagonal entry, in the current
    /// factorisation (reset and recounted by [`rebuild`](CandidateGp::rebuild)).
    pub fn jitter_events(&self) -> usize {
        self.jitter_events
    }

    /// Recomputes everything from scratch with a new kernel (e.g. fitted
    /// hyperparameters), replaying the observations in order; `O(n²·m)`.
    ///
    /// On error the model is left unchanged.
    pub fn rebuild(&mut self, kernel: Kernel) -> Result<(), ModelError> {
        let ys = self.ys.clone();
        self.replay(kernel, &ys, self.extra_scale)
    }

    /// Conditions the model on new observed values, one per observation in the order they
    /// were observed (e.g. after the caller changed how it transforms its targets, or the
    /// mean it subtracts). The factor does not depend on the values, so only `z_y` and `a`
    /// are solved again (`O(n² + n·m)`), unless known measurement variances were converted
    /// with a spread more than `NOISE_RESCALE` away from the new one, when everything is
    /// (`O(n²·m)`).
    ///
    /// On error (a length mismatch or a non-finite value) the model is left unchanged.
    pub fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        if ys.len() != self.obs.len() {
            return Err(ModelError::LengthMismatch {
                what: format!(
                    "{} new values for {} observations",
                    ys.len(),
                    self.obs.len()
                ),
            });
        }
        if let Some(&y) = ys.iter().find(|y| !y.is_finite()) {
            return Err(ModelError::NonFinite {
                what: "replacement observed value".into(),
                value: y,
            });
        }
        let (mean, std) = normalisation(ys);
        let noisy = self.extra.iter().any(|&v| v > 0.0);
        let s2 = std * std;
        if noisy && !(1.0 / NOISE_RESCALE..=NOISE_RESCALE).contains(&(s2 / self.extra_scale)) {
            return self.replay(self.kernel.clone(), ys, s2);
        }
        self.resolve_values(ys);
        (self.y_mean, self.y_std) = (mean, std);
        Ok(())
    }

    /// `z_y = L⁻¹ (y - c·1)` by forward substitution on the packed factor, then `a = Vᵀ z_y`
    /// in one pass over `V`, for the finite values `ys` (one per observation).
    fn resolve_values(&mut self, ys: &[f64]) {
        let shift = ys.first().copied().unwrap_or(0.0);
        let mut z = Vec::with_capacity(ys.len());
        for (i, &y) in ys.iter().enumerate() {
            let row = &self.factor[i * (i + 1) / 2..(i + 1) * (i + 2) / 2];
            let dot: f64 = row[..i].iter().zip(&z).map(|(l, z)| l * z).sum();
            z.push(((y - shift) - dot) / row[i]);
        }
        let rows = &self.rows;
        let fill = |start: usize, a: &mut [f64]| {
            a.fill(0.0);
            let len = a.len();
            for (row, &zi) in rows.iter().zip(&z) {
                for (a, v) in a.iter_mut().zip(&row[start..start + len]) {
                    *a += v * zi;
                }
            }
        };
        if self.m >= PARALLEL_MIN {
            self.a
                .par_chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, a)| fill(c * CHUNK, a));
        } else {
            self.a
                .chunks_mut(CHUNK)
                .enumerate()
                .for_each(|(c, a)| fill(c * CHUNK, a));
        }
        self.z_y = z;
        self.shift = shift;
        self.ys = ys.to_vec();
    }

    /// A fresh factor with `kernel`, values `ys` and the variances converted with `scale`,
    /// replacing this one where it succeeds.
    fn replay(&mut self, kernel: Kernel, ys: &[f64], scale: f64) -> Result<(), ModelError> {
        let mut fresh = CandidateGp::new(kernel, Arc::clone(&self.cands), self.dims)?;
        fresh.extra_scale = scale;
        if ys.iter().all(|y| y.is_finite()) && fresh.factor_at_once(&self.obs, ys, &self.extra) {
            *self = fresh;
            return Ok(());
        }
        for ((&j, &y), &v) in self.obs.iter().zip(ys).zip(&self.extra) {
            fresh.observe_noisy(j, y, v)?;
        }
        *self = fresh;
        Ok(())
    }

    /// Observes the candidates `obs` (distinct, none observed yet, on a model with no
    /// observations) with values `ys` and variances `extra` in one blocked factorisation:
    /// `V = L⁻¹ K(X, C)` by faer's triangular solve, block by block in parallel, instead of
    /// one streaming pass over `V` per observation, which makes rebuilding over many
    /// candidates memory-bound. The posterior is the one observing them in order gives. Returns
    /// false, leaving the model unchanged, where a pivot would need jitter (then observing
    /// them one by one adds it as [`observe`](CandidateGp::observe) does).
    fn factor_at_once(&mut self, obs: &[usize], ys: &[f64], extra: &[f64]) -> bool {
        let n = obs.len();
        if n == 0 || !self.obs.is_empty() || obs.iter().any(|&j| j >= self.m) {
            return false;
        }
        let noise = self.kernel.hyper.noise;
        let x = |i: usize| &self.cands[obs[i] * self.dims..(obs[i] + 1) * self.dims];
        let known = |i: usize| {
            if self.extra_scale > 0.0 {
                extra[i] / self.extra_scale
            } else {
                0.0
            }
        };
        let diag: Vec<f64> = (0..n)
            .map(|i| self.prep.eval(x(i), x(i)) + noise + known(i))
            .collect();
        let k = Mat::from_fn(n, n, |i, j| {
            if i == j {
                diag[i]
            } else {
                self.prep.eval(x(i), x(j))
            }
        });
        let Ok(llt) = k.llt(Side::Lower) else {
            return false;
        };
        let l = llt.L().to_owned();
        // The incremental path's pivot test: jitter where a pivot is not safely positive
        // (or not a number).
        let safe = |i: usize| l[(i, i)] * l[(i, i)] > PIVOT_THRESHOLD * diag[i];
        if !(0..n).all(safe) {
            return false;
        }
        let shift = ys[0];
        // The observed points, contiguous: each candidate's column of `K` is one pass.
        let told: Vec<f64> = (0..n).flat_map(|i| x(i).iter().copied()).collect();
        let mut z = Mat::from_fn(n, 2, |i, c| if c == 0 { ys[i] - shift } else { 1.0 });
        l.solve_lower_triangular_in_place(z.as_mut());
        let (z_y, z_1): (Vec<f64>, Vec<f64>) = (0..n).map(|i| (z[(i, 0)], z[(i, 1)])).unzip();
        // Per block of candidates: its columns of V, and its a, b, r.
        let blocks: Vec<(Mat<f64>, Vec<[f64; 3]>)> = (0..self.m.div_ceil(CHUNK))
            .into_par_iter()
            .map(|c| {
                let (j0, j1) = (c * CHUNK, ((c + 1) * CHUNK).min(self.m));
                let mut v = Mat::<f64>::zeros(n, j1 - j0);
                for j in 0..j1 - j0 {
                    self.prep
                        .eval_many(self.candidate(j0 + j), &told, v.col_as_slice_mut(j));
                }
                l.solve_lower_triangular_in_place(v.as_mut());
                let abr = (0..j1 - j0)
                    .map(|j| {
                        let col = v.col(j);
                        let (mut a, mut b, mut r) = (0.0, 0.0, 0.0);
                        for i in 0..n {
                            let w = col[i];
                            a += w * z_y[i];
                            b += w * z_1[i];
                            r += w * w;
                        }
                        [a, b, r]
                    })
                    .collect();
                (v, abr)
            })
            .collect();
        let mut rows: Vec<Vec<f64>> = (0..n).map(|_| Vec::with_capacity(self.m)).collect();
        for (c, (v, abr)) in blocks.iter().enumerate() {
            for (i, row) in rows.iter_mut().enumerate() {
                row.extend((0..v.ncols()).map(|j| v[(i, j)]));
            }
            for (j, [a, b, r]) in abr.iter().enumerate() {
                let at = c * CHUNK + j;
                (self.a[at], self.b[at], self.r[at]) = (*a, *b, *r);
            }
        }
        self.rows = rows;
        self.z_y = z_y;
        self.z_1 = z_1;
        self.ln_pivots = (0..n).map(|i| l[(i, i)].ln()).collect();
        self.factor = (0..n)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .map(|ij| l[ij])
            .collect();
        self.log_diag = self.ln_pivots.iter().sum();
        self.shift = shift;
        for &j in obs {
            self.observed[j] = true;
        }
        self.obs = obs.to_vec();
        self.ys = ys.to_vec();
        self.extra = extra.to_vec();
        (self.y_mean, self.y_std) = normalisation(&self.ys);
        true
    }

    /// Sets each observation's known measurement variance (see
    /// [`Surrogate::set_noise`]). Only the observations from the first changed one on are
    /// refactorised (`O(n·m)` each: after one new observation, one), unless the spread of
    /// the values has moved more than `NOISE_RESCALE` from the scale the variances were
    /// converted with, when all are.
    ///
    /// Errors (the model is left unchanged): a length mismatch, or a negative or non-finite
    /// variance.
    pub fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        crate::observations::check_variances(variances, self.obs.len())?;
        let s2 = self.y_std * self.y_std;
        let rescale = self.extra_scale <= 0.0
            || !(1.0 / NOISE_RESCALE..=NOISE_RESCALE).contains(&(s2 / self.extra_scale));
        if rescale {
            if variances.iter().all(|&v| v == 0.0) && self.extra.iter().all(|&v| v == 0.0) {
                return Ok(());
            }
            let saved = std::mem::replace(&mut self.extra, variances.to_vec());
            let ys = self.ys.clone();
            let result = self.replay(self.kernel.clone(), &ys, s2);
            if result.is_err() {
                self.extra = saved;
            }
            return result;
        }
        let Some(first) = (0..variances.len()).find(|&i| variances[i] != self.extra[i]) else {
            return Ok(());
        };
        let tail: Vec<(usize, f64, f64)> = (first..self.obs.len())
            .map(|i| (self.obs[i], self.ys[i], self.extra[i]))
            .collect();
        self.truncate(first);
        for (k, &(j, y, _)) in tail.iter().enumerate() {
            if let Err(e) = self.observe_noisy(j, y, variances[first + k]) {
                // Only a smaller variance can make a pivot fail (a larger one makes the
                // factor safer); the old ones succeeded before.
                self.truncate(first);
                for &(j, y, old) in &tail {
                    self.observe_noisy(j, y, old)?;
                }
                return Err(e);
            }
        }
        Ok(())
    }
}

/// The candidate GP as a [`Surrogate`]: a point's key is its candidate index. A point
/// without a key is observed at the candidate with the same coordinates, appended as a new
/// candidate where there is none ([`push_candidate`](CandidateGp::push_candidate)), and
/// predicted anywhere (exactly, in `O(n²)` each).
impl Surrogate for CandidateGp {
    fn observe(&mut self, point: Point<'_>, y: f64) -> Result<(), ModelError> {
        let index = match point.key {
            Some(k) => usize::try_from(k).unwrap_or(usize::MAX),
            None => match (0..self.m).find(|&j| self.candidate(j) == point.x) {
                Some(j) => j,
                None => {
                    if !y.is_finite() {
                        return Err(ModelError::NonFinite {
                            what: "observed value at a new candidate".into(),
                            value: y,
                        });
                    }
                    self.push_candidate(point.x)?
                }
            },
        };
        CandidateGp::observe(self, index, y)
    }

    fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        CandidateGp::replace_values(self, ys)
    }

    fn truncate(&mut self, len: usize) {
        CandidateGp::truncate(self, len);
    }

    fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        CandidateGp::set_noise(self, variances)
    }

    fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError> {
        let held = |p: &Point<'_>| {
            p.key
                .and_then(|k| usize::try_from(k).ok())
                .filter(|&j| j < self.m)
        };
        let one = |p: &Point<'_>| match held(p) {
            Some(j) => (self.mean(j), self.variance(j)),
            None => (f64::NAN, f64::NAN),
        };
        let mut out: Vec<(f64, f64)> = if points.len() >= PARALLEL_MIN {
            points.par_iter().map(one).collect()
        } else {
            points.iter().map(one).collect()
        };
        // The points the model does not hold, solved together.
        let new: Vec<usize> = (0..points.len())
            .filter(|&i| held(&points[i]).is_none())
            .collect();
        if !new.is_empty() {
            let xs: Vec<&[f64]> = new.iter().map(|&i| points[i].x).collect();
            for (&i, p) in new.iter().zip(self.posteriors(&xs)) {
                out[i] = p;
            }
        }
        Ok(out)
    }

    fn set_kernel(&mut self, kernel: Kernel) -> Result<(), ModelError> {
        self.rebuild(kernel)
    }

    fn observed_values(&self) -> &[f64] {
        &self.ys
    }
}

/// Everything the per-chunk update reads.
struct UpdateCtx<'a> {
    prep: &'a Prepared,
    cands: &'a [f64],
    dims: usize,
    x_new: &'a [f64],
    rows: &'a [Vec<f64>],
    l: &'a [f64],
    l_nn: f64,
    zy_new: f64,
    z1_new: f64,
}

impl UpdateCtx<'_> {
    /// Computes the new row of `V` for candidates `j0..j0 + w.len()` into `w` and adds
    /// its contributions to `a`, `b`, `r` (all four slices have the chunk's length).
    fn update(&self, j0: usize, w: &mut [f64], a: &mut [f64], b: &mut [f64], r: &mut [f64]) {
        let len = w.len();
        let pts = &self.cands[j0 * self.dims..(j0 + len) * self.dims];
        self.prep.eval_many(self.x_new, pts, w);
        let seg = |i: usize| &self.rows[i][j0..j0 + len];
        let mut quads = self.l.chunks_exact(4);
        let mut i = 0;
        for q in quads.by_ref() {
            let (r0, r1, r2, r3) = (seg(i), seg(i + 1), seg(i + 2), seg(i + 3));
            for ((((wj, v0), v1), v2), v3) in w.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3) {
                *wj -= (q[0] * v0 + q[1] * v1) + (q[2] * v2 + q[3] * v3);
            }
            i += 4;
        }
        for &li in quads.remainder() {
            for (wj, v) in w.iter_mut().zip(seg(i)) {
                *wj -= li * v;
            }
            i += 1;
        }
        for (((wj, aj), bj), rj) in w.iter_mut().zip(a).zip(b).zip(r) {
            *wj /= self.l_nn;
            *aj += *wj * self.zy_new;
            *bj += *wj * self.z1_new;
            *rj += *wj * *wj;
        }
    }
}

#[cfg(test)]
mod tests;
