//! What `bayes_opt` keeps between rounds: the encoding, the surrogate and its candidates
//! (every configuration, or a sample kept for some rounds in large spaces), the values seen
//! and their transform, the initial sample, the feasibility forest's data.

use std::collections::VecDeque;
use std::sync::Arc;

use ktune_core::Rng;
use ktune_model::acquisition::Portfolio;
use ktune_model::{FeasibilityForest, ForestOptions, Kernel, Point, Surrogate, feasibility_limit};
use ktune_space::{Configuration, DistinctSampler, Encoder, SearchSpace};
use rand::RngExt;
use rustc_hash::{FxHashMap, FxHashSet};

use super::options::Batch;
use crate::model_based::footprint::Footprint;
use crate::model_based::monotone::FailureOrthants;
use crate::model_based::prior_mean::PriorMean;
use crate::transform::{Added, Targets};

/// Spearman's rank correlation of `a` and `b` (ties in arbitrary order; NaN for fewer than
/// two values or a constant ranking).
pub(crate) fn rank_correlation(a: &[f64], b: &[f64]) -> f64 {
    let ranks = |x: &[f64]| {
        let mut idx: Vec<usize> = (0..x.len()).collect();
        idx.sort_by(|&i, &j| x[i].total_cmp(&x[j]));
        let mut r = vec![0.0; x.len()];
        for (k, &i) in idx.iter().enumerate() {
            r[i] = k as f64;
        }
        r
    };
    let (ra, rb) = (ranks(a), ranks(b));
    let m = (a.len() as f64 - 1.0) / 2.0;
    let cov: f64 = ra.iter().zip(&rb).map(|(x, y)| (x - m) * (y - m)).sum();
    let var: f64 = ra.iter().map(|x| (x - m) * (x - m)).sum();
    cov / var
}

/// Appends the model's coordinates of `config`: the value coordinates of `dims`, then the
/// alignment coordinates.
pub(super) fn encode_into(
    encoder: &Encoder,
    dims: &[usize],
    aligned: &[(usize, Vec<f64>)],
    config: &[u32],
    out: &mut Vec<f64>,
) {
    out.extend(dims.iter().map(|&d| encoder.coordinate(d, config[d])));
    out.extend(aligned.iter().map(|(d, t)| t[config[*d] as usize]));
}

/// The alignment weights `"validated"` chooses among.
pub(super) const VALIDATED_WEIGHTS: [f64; 4] = [0.0, 0.25, 0.5, 1.0];

/// How much better (in Spearman's ρ over the results since the last checkpoint) the fitted
/// kernel must rank them than the fixed one before it replaces it: on a test of 5 to 20
/// results ρ is noisy, and on a flat landscape (the H100 reduction) the fitted kernel won
/// by chance and then chased noise (`auto` scored 0.679 there with the fixed kernel, 0.558
/// with no margin, 0.606 with 0.1; the CPU matmul spaces kept most of their gain:
/// docs/benchmarks/auto.md, issue 50).
pub(super) const FITTED_MARGIN: f64 = 0.1;

/// The validation fits at most this many results before the checkpoint (one dense GP's
/// Cholesky factorisation per weight, cubic in this).
pub(super) const VALIDATION_LIMIT: usize = 500;

/// The model and the bookkeeping, built on the first `ask` (it needs the space).
pub(super) struct State {
    pub(super) encoder: Encoder,
    /// Encoded dimensions kept after pruning.
    pub(super) dims: Vec<usize>,
    /// The coordinates (positions in `dims`) of the space's switches, whose combinations
    /// are the kernel's sub-spaces (option `sub_spaces`).
    pub(super) switches: Vec<usize>,
    /// The kernel's correlation between those sub-spaces now, as a share of the stationary
    /// kernel's, and with `sub_spaces = "estimated"` the number of results at which it is
    /// estimated again.
    pub(super) sub_space_share: f64,
    pub(super) next_share_estimate: usize,
    /// The alignment coordinates appended after `dims`' (with `alignment`): per space
    /// dimension, one coordinate in `[0, 1]` per value index; their weight is the kernel's
    /// lengthscale on them.
    pub(super) aligned: Vec<(usize, Vec<f64>)>,
    /// The current alignment weight and the number of valid results at which the validation
    /// chooses it again.
    pub(super) alignment_weight: f64,
    /// With `lengthscales = "validated"`: the fitted kernel, while the validation prefers it.
    pub(super) fitted_kernel: Option<Kernel>,
    pub(super) next_validation: usize,
    /// The results the last choice was made on (its test results begin there).
    pub(super) validation_split: usize,
    /// How many choices were made.
    pub(super) validations: usize,
    /// The number of valid results at which the held-out validation decides again whether
    /// the priors' mean is kept.
    pub(super) next_prior_validation: usize,
    /// The encoded points the model was told, in order: the alignment validation's data, and
    /// where the neighbourhoods of the best come from in sampled spaces.
    pub(super) told: Vec<Vec<f64>>,
    /// The surrogate, told every valid observation (transformed as `log` says), with the
    /// priors' results as its mean where there are priors.
    pub(super) model: PriorMean,
    /// Where proposals come from.
    pub(super) candidates: Candidates,
    /// Configurations evaluated (or proposed and pending), by rank.
    pub(super) visited: FxHashSet<u64>,
    /// Valid observed values, in order (minimisation form).
    pub(super) valid: Vec<f64>,
    /// The values the model holds and their scale (log while the signs agree).
    pub(super) targets: Targets,
    /// With several objectives, each value the model holds as its objectives (minimisation
    /// form), in the same order: what ParEGO scalarises again each round.
    pub(super) objective_rows: Vec<Vec<f64>>,
    /// Evaluations since the best last improved (counted after the initial sample).
    pub(super) since_improvement: usize,
    pub(super) best: f64,
    /// Proposals of the current round awaiting their results, with the acquisition function
    /// that proposed each (None in the initial sample).
    pub(super) pending: Vec<(Configuration, Option<usize>)>,
    /// The acquisition functions and their judging.
    pub(super) portfolio: Portfolio,
    /// Initial sample still to propose.
    pub(super) initial: VecDeque<Configuration>,
    pub(super) initial_valid: usize,
    pub(super) initial_done: bool,
    /// Contextual variance normalisation: initial sample mean and mean variance after it.
    pub(super) mu_s: f64,
    pub(super) var_s: f64,
    pub(super) sampler: DistinctSampler,
    /// With `aligned` initial sampling: per parameter, the weight of each value (`None`: all
    /// alike).
    pub(super) initial_weights: Vec<Option<Vec<f64>>>,
    pub(super) notice_given: bool,
    /// Every evaluated configuration, encoded, and whether it ran: the feasibility forest's
    /// data (kept only with `feasibility`).
    pub(super) rows: Vec<Vec<f64>>,
    pub(super) ran: Vec<bool>,
    /// The forest of this round and its ε_f (none until something has failed).
    pub(super) forest: Option<(FeasibilityForest, f64)>,
    /// With `monotone_failures`: the failures and what they rule out (none where no
    /// parameter is a size).
    pub(super) orthants: Option<FailureOrthants>,
    /// With `footprint`: the forest's extra feature (none where no parameter is a size).
    pub(super) footprint: Option<Footprint>,
    /// The priors' outcomes the forest learns from too, encoded, and whether each ran.
    pub(super) prior_rows: Vec<Vec<f64>>,
    pub(super) prior_ran: Vec<bool>,
    /// The ranks of the configurations the priors say fail.
    pub(super) prior_failing: FxHashSet<u64>,
    /// Of this study's results on configurations the priors say fail: (failed here too, all).
    pub(super) prior_checked: (usize, usize),
}

/// What the priors' outcomes weigh in the forest, in evaluations of this study: at first as
/// much as this many, then less as the study's own outcomes accumulate (half at as many).
const PRIOR_OUTCOMES_WEIGHT: f64 = 20.0;

/// The configurations each round scores.
pub(super) enum Candidates {
    /// Every configuration, encoded in rank order (the surrogate is keyed by rank).
    All(Arc<[f64]>),
    /// A sample kept for `sample_rounds` rounds plus the neighbourhoods of the best
    /// observations (spaces above `candidate_limit`): the surrogate is a candidate GP over
    /// the sample, keyed by candidate index.
    Pool(Pool),
    /// A fresh sample per round plus the neighbourhoods of the best observations (spaces
    /// above `candidate_limit`, with the clustered GP, whose components change with every
    /// observation).
    Sampled,
}

/// The sample a candidate GP is kept over in a large space. Its candidates are the points
/// told before it was drawn, then the sample, then points told since (appended by the
/// model, as they are observed).
pub(super) struct Pool {
    /// The sampled configurations' ranks; the one at position `k` is candidate `first + k`.
    pub(super) ranks: Vec<u64>,
    pub(super) first: usize,
    /// Candidate index by rank, of the sample.
    pub(super) index: FxHashMap<u64, usize>,
    /// The encoded sample, row-major.
    pub(super) points: Vec<f64>,
    /// Rounds left before a fresh sample is drawn.
    pub(super) rounds_left: usize,
}

impl Pool {
    /// No sample yet: the next round draws one.
    pub(super) fn empty() -> Pool {
        Pool {
            ranks: Vec::new(),
            first: 0,
            index: FxHashMap::default(),
            points: Vec::new(),
            rounds_left: 0,
        }
    }

    /// The model's key for `rank`'s encoded point `x`: its candidate index when sampled (a
    /// point the model does not hold goes without a key, and is appended when observed).
    pub(super) fn point<'a>(&self, rank: u64, x: &'a [f64]) -> Point<'a> {
        match self.index.get(&rank) {
            Some(&j) => Point::keyed(x, j as u64),
            None => Point::new(x),
        }
    }
}

impl State {
    pub(super) fn mark_visited(&mut self, rank: u64) {
        self.visited.insert(rank);
        self.sampler.exclude(rank);
    }

    /// Whether `monotone_failures` rules `config` out: at least as large as a failure.
    pub(super) fn rules_out(&self, config: &[u32]) -> bool {
        self.orthants.as_ref().is_some_and(|o| o.rules_out(config))
    }

    /// Zeroes the acquisition weight of every candidate (`ranks`) that
    /// `monotone_failures` rules out: never proposed.
    pub(super) fn rule_out_ranks(&self, space: &SearchSpace, ranks: &[u64], weights: &mut [f64]) {
        let Some(o) = self.orthants.as_ref().filter(|o| !o.is_empty()) else {
            return;
        };
        let mut buf = vec![0; space.dims()];
        for (&r, w) in ranks.iter().zip(weights.iter_mut()) {
            if *w > 0.0 {
                space.write_configuration(r, &mut buf);
                if o.rules_out(&buf) {
                    *w = 0.0;
                }
            }
        }
    }

    /// Keeps an evaluated configuration as data for the feasibility forest.
    pub(super) fn record(&mut self, feasibility: bool, config: &[u32], ran: bool) {
        if let Some(o) = &mut self.orthants {
            o.record(config, ran);
        }
        if feasibility {
            let x = self.forest_row(config);
            self.rows.push(x);
            self.ran.push(ran);
        }
    }

    /// The initial sample's next configuration not evaluated yet: uniform, or weighted by
    /// the values' alignment (`initial_weights`).
    pub(super) fn next_initial(
        &mut self,
        space: &SearchSpace,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        if self.initial_weights.iter().all(Option::is_none) {
            return self.sampler.next_rank(rng).map(|r| space.configuration(r));
        }
        let weights = &self.initial_weights;
        // Rejection from uniform draws, at most 10,000 tries a draw: where nearly every
        // configuration weighs little (many parameters with unaligned values) the heaviest
        // tried is taken rather than searching on.
        let r = self.sampler.next_rank_weighted(rng, 10_000, |r| {
            space
                .configuration(r)
                .iter()
                .zip(weights)
                .map(|(&v, w)| w.as_ref().map_or(1.0, |w| w[v as usize]))
                .product()
        })?;
        Some(space.configuration(r))
    }

    /// Notes whether a configuration the priors say fails failed here too.
    pub(super) fn check_prior(&mut self, rank: u64, ran: bool) {
        if self.prior_failing.contains(&rank) {
            self.prior_checked.1 += 1;
            self.prior_checked.0 += usize::from(!ran);
        }
    }

    /// The weight of each of the priors' rows in the forest: [`PRIOR_OUTCOMES_WEIGHT`]
    /// evaluations' worth in all, halved by as many of this study's own, and scaled by the
    /// share of the configurations the priors say fail that failed here too (once two were
    /// measured: failures of another device need not be failures here).
    pub(super) fn prior_row_weight(&self) -> f64 {
        if self.prior_rows.is_empty() {
            return 0.0;
        }
        let (failed, checked) = self.prior_checked;
        let agree = if checked >= 2 {
            failed as f64 / checked as f64
        } else {
            1.0
        };
        let own = self.rows.len() as f64;
        let total = PRIOR_OUTCOMES_WEIGHT * PRIOR_OUTCOMES_WEIGHT / (PRIOR_OUTCOMES_WEIGHT + own);
        // Worth less than one evaluation, the priors' rows only cost the forest's time.
        if total < 1.0 {
            return 0.0;
        }
        total * agree / self.prior_rows.len() as f64
    }

    /// Regrows the feasibility forest on every evaluation so far (BaCO refits it before each
    /// proposal) and draws this round's ε_f; no forest while nothing has failed.
    pub(super) fn refresh_forest(&mut self, threshold: f64, rng: &mut Rng) {
        self.forest = None;
        let prior = self.prior_row_weight();
        let priors_failed = prior > 0.0 && self.prior_ran.iter().any(|&ok| !ok);
        if self.ran.iter().all(|&ok| ok) && !priors_failed {
            return;
        }
        let seed: u64 = rng.random();
        let limit = feasibility_limit(threshold, rng);
        let fitted = if prior > 0.0 {
            let rows: Vec<Vec<f64>> = self.rows.iter().chain(&self.prior_rows).cloned().collect();
            let ran: Vec<bool> = self.ran.iter().chain(&self.prior_ran).copied().collect();
            let weights: Vec<f64> = std::iter::repeat_n(1.0, self.rows.len())
                .chain(std::iter::repeat_n(prior, self.prior_rows.len()))
                .collect();
            FeasibilityForest::fit_weighted(&rows, &ran, &weights, &ForestOptions::default(), seed)
        } else {
            FeasibilityForest::fit(&self.rows, &self.ran, &ForestOptions::default(), seed)
        };
        if let Ok(f) = fitted {
            self.forest = Some((f, limit));
        }
    }

    /// What the forest learns from a configuration: its encoding, and its footprint with
    /// `footprint`.
    pub(super) fn forest_row(&self, config: &[u32]) -> Vec<f64> {
        let mut x = self.encode(config);
        if let Some(f) = &self.footprint {
            x.push(f.of(&x));
        }
        x
    }

    pub(super) fn encode(&self, config: &[u32]) -> Vec<f64> {
        let mut x = Vec::with_capacity(self.width());
        encode_into(&self.encoder, &self.dims, &self.aligned, config, &mut x);
        x
    }

    /// Coordinates per configuration.
    pub(super) fn width(&self) -> usize {
        self.dims.len() + self.aligned.len()
    }

    pub(super) fn fit(
        &mut self,
        rank: u64,
        config: &[u32],
        value: f64,
        variance: Option<f64>,
        objectives: &[f64],
    ) {
        if value < self.best {
            self.since_improvement = 0;
        }
        self.best = self.best.min(value);
        self.valid.push(value);
        let raw = value;
        // The log transform is monotone only while every value has the same sign: a value
        // that breaks it makes every value fitted as observed.
        let (value, refit) = match self.targets.add(raw) {
            Added::Fit(t) => (t, false),
            Added::Refit => (raw, true),
        };
        let d = self.width();
        let encoded = self.encode(config);
        let told = match &self.candidates {
            Candidates::All(points) => {
                let r = rank as usize;
                // Cannot fail for distinct candidates; if the factor could not be extended,
                // the configuration still counts as visited and the search goes on without it.
                self.model
                    .observe(Point::keyed(&points[r * d..(r + 1) * d], rank), value)
                    .is_ok()
            }
            Candidates::Pool(pool) => self
                .model
                .observe(pool.point(rank, &encoded), value)
                .is_ok(),
            Candidates::Sampled => self.model.observe(Point::new(&encoded), value).is_ok(),
        };
        if !told {
            self.targets.pop();
            return;
        }
        self.told.push(encoded);
        if objectives.len() > 1 {
            self.objective_rows.push(objectives.to_vec());
        }
        if refit {
            // The same points with finite values: cannot fail where observing did not.
            let _ = self.model.replace_values(&self.targets.fitted());
        }
        if let Some(variances) = self.targets.set_last_variance(variance) {
            let _ = self.model.set_noise(&variances);
        }
    }

    /// Tells the model (only) a fantasised value at a pending configuration: its posterior
    /// mean (the kriging believer) or the best value so far (the constant liar). A model
    /// that cannot take it is left as it is.
    pub(super) fn fantasise(&mut self, space: &SearchSpace, config: &[u32], how: Batch) {
        let Some(rank) = space.rank(config) else {
            return;
        };
        let x: Vec<f64>;
        let point = match &self.candidates {
            Candidates::All(points) => {
                let (d, r) = (self.width(), rank as usize);
                Point::keyed(&points[r * d..(r + 1) * d], rank)
            }
            Candidates::Pool(pool) => {
                x = self.encode(config);
                pool.point(rank, &x)
            }
            Candidates::Sampled => {
                x = self.encode(config);
                Point::new(&x)
            }
        };
        let lie = self.to_model(if self.best.is_finite() {
            self.best
        } else {
            self.median_valid()
        });
        let value = match how {
            Batch::Liar => lie,
            Batch::Believer => self
                .model
                .predict(std::slice::from_ref(&point))
                .ok()
                .and_then(|p| p.first().map(|m| m.0))
                .filter(|m| m.is_finite())
                .unwrap_or(lie),
        };
        let _ = self.model.observe(point, value);
    }

    /// ParEGO: every value the model holds becomes its objectives' augmented Chebyshev
    /// scalarisation under `weights` (each objective normalised to `[0, 1]` over the values
    /// held), on the scale observed. See [`rescalarise_with`](Self::rescalarise_with).
    pub(super) fn rescalarise(&mut self, weights: &[f64]) -> bool {
        const RHO: f64 = 0.05;
        if self.objective_rows.iter().any(|r| r.len() != weights.len()) {
            return false;
        }
        let k = weights.len();
        self.rescalarise_with(false, |rows| {
            let (mut lo, mut hi) = (vec![f64::INFINITY; k], vec![f64::NEG_INFINITY; k]);
            for r in rows {
                for j in 0..k {
                    lo[j] = lo[j].min(r[j]);
                    hi[j] = hi[j].max(r[j]);
                }
            }
            rows.iter()
                .map(|r| {
                    let f = |j: usize| {
                        let span = hi[j] - lo[j];
                        weights[j]
                            * if span > 0.0 {
                                (r[j] - lo[j]) / span
                            } else {
                                0.0
                            }
                    };
                    let max = (0..k).map(f).fold(0.0, f64::max);
                    let sum: f64 = (0..k).map(f).sum();
                    max + RHO * sum
                })
                .collect()
        })
    }

    /// Every value the model holds becomes `scalarise` of the objectives of all results
    /// held (fitted on the log scale where `log` and all are positive); the best value and
    /// the valid values follow. Nothing changes (false) unless every value held has its
    /// objectives (none told at fantasised values, all of one study of several) and the
    /// model takes the new values (replaced in place: no refactorisation).
    pub(super) fn rescalarise_with(
        &mut self,
        log: bool,
        scalarise: impl FnOnce(&[Vec<f64>]) -> Vec<f64>,
    ) -> bool {
        let rows = &self.objective_rows;
        if rows.is_empty() || rows.len() != self.targets.raw().len() {
            return false;
        }
        let scalar = scalarise(rows);
        if scalar.len() != rows.len() || scalar.iter().any(|v| !v.is_finite()) {
            return false;
        }
        let log = log && scalar.iter().all(|&v| v > 0.0);
        let mut targets = Targets::new(log);
        for &v in &scalar {
            targets.add(v);
        }
        if self.model.replace_values(&targets.fitted()).is_err() {
            return false;
        }
        self.targets = targets;
        self.best = scalar.iter().copied().fold(f64::INFINITY, f64::min);
        self.mu_s = scalar.iter().sum::<f64>() / scalar.len() as f64;
        self.valid = scalar;
        true
    }

    /// An observed value as the model fits it.
    pub(super) fn to_model(&self, v: f64) -> f64 {
        self.targets.to_model(v)
    }

    pub(super) fn median_valid(&self) -> f64 {
        median(&self.valid)
    }
}

/// The median of `values` (0 when there are none).
pub(super) fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    ktune_core::median_of_sorted(&v)
}

/// Population standard deviation of `y` (1 when there is no spread): the unit of λ in EI and
/// PI under `exploration_scale = "spread"`.
pub(super) fn spread(y: impl Iterator<Item = f64> + Clone) -> f64 {
    let (n, sum) = y.clone().fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
    if n == 0 {
        return 1.0;
    }
    let mean = sum / n as f64;
    let var = y.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
    if var > 0.0 { var.sqrt() } else { 1.0 }
}
