//! The strategy: the initial sample, the surrogate and its candidates, one round of
//! proposals per `ask`, and what each result teaches in `tell`.

use std::collections::VecDeque;
use std::sync::Arc;

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_model::acquisition::{self, Acquisition, Combination, Portfolio, contextual_variance};
use ktune_model::{
    CandidateGp, DenseGp, ExactGp, FeasibilityForest, ForestOptions, Kernel, ModelError, Point,
    Surrogate, feasibility_limit,
};
use ktune_space::{Configuration, DistinctSampler, Encoder, Encoding, Neighbourhood, SearchSpace};
use rand::RngExt;
use rustc_hash::{FxHashMap, FxHashSet};

use super::NAME;
use super::options::{
    Alignment, Batch, BoOptions, Exploration, ExplorationScale, InitialSampling, Method, Transform,
};
use crate::model_based::acquisition_search::{self, SearchOptions};
use crate::surrogate::Cgp;
use crate::transform::{Added, Targets};
use crate::{StrategyError, check_range, encoding};

/// Bayesian optimisation with a Gaussian process over the discrete space.
pub struct BayesianOptimization {
    opts: BoOptions,
    kernel: Kernel,
    exploration: Option<f64>,
    discount: f64,
    /// The clustered GP's settings when it is the surrogate.
    cgp: Option<Cgp>,
    /// The weights the alignment coordinates may take: none (off), one (fixed) or several
    /// (chosen on held-out results).
    alignment_weights: Vec<f64>,
    state: Option<State>,
}

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
fn encode_into(
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
const VALIDATED_WEIGHTS: [f64; 4] = [0.0, 0.25, 0.5, 1.0];

/// The validation fits at most this many results before the checkpoint (one dense GP's
/// Cholesky factorisation per weight, cubic in this).
const VALIDATION_LIMIT: usize = 500;

/// The model and the bookkeeping, built on the first `ask` (it needs the space).
struct State {
    encoder: Encoder,
    /// Encoded dimensions kept after pruning.
    dims: Vec<usize>,
    /// The alignment coordinates appended after `dims`' (with `alignment`): per space
    /// dimension, one coordinate in `[0, 1]` per value index; their weight is the kernel's
    /// lengthscale on them.
    aligned: Vec<(usize, Vec<f64>)>,
    /// The current alignment weight and the number of valid results at which the validation
    /// chooses it again.
    alignment_weight: f64,
    next_validation: usize,
    /// The results the last choice was made on (its test results begin there).
    validation_split: usize,
    /// How many choices were made.
    validations: usize,
    /// The encoded points the model was told, in order: the alignment validation's data, and
    /// where the neighbourhoods of the best come from in sampled spaces.
    told: Vec<Vec<f64>>,
    /// The surrogate, told every valid observation (transformed as `log` says).
    model: Box<dyn Surrogate>,
    /// Where proposals come from.
    candidates: Candidates,
    /// Configurations evaluated (or proposed and pending), by rank.
    visited: FxHashSet<u64>,
    /// Valid observed values, in order (minimisation form).
    valid: Vec<f64>,
    /// The values the model holds and their scale (log while the signs agree).
    targets: Targets,
    /// Evaluations since the best last improved (counted after the initial sample).
    since_improvement: usize,
    best: f64,
    /// Proposals of the current round awaiting their results, with the acquisition function
    /// that proposed each (None in the initial sample).
    pending: Vec<(Configuration, Option<usize>)>,
    /// The acquisition functions and their judging.
    portfolio: Portfolio,
    /// Initial sample still to propose.
    initial: VecDeque<Configuration>,
    initial_valid: usize,
    initial_done: bool,
    /// Contextual variance normalisation: initial sample mean and mean variance after it.
    mu_s: f64,
    var_s: f64,
    sampler: DistinctSampler,
    notice_given: bool,
    /// Every evaluated configuration, encoded, and whether it ran: the feasibility forest's
    /// data (kept only with `feasibility`).
    rows: Vec<Vec<f64>>,
    ran: Vec<bool>,
    /// The forest of this round and its ε_f (none until something has failed).
    forest: Option<(FeasibilityForest, f64)>,
}

/// The configurations each round scores.
enum Candidates {
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
struct Pool {
    /// The sampled configurations' ranks; the one at position `k` is candidate `first + k`.
    ranks: Vec<u64>,
    first: usize,
    /// Candidate index by rank, of the sample.
    index: FxHashMap<u64, usize>,
    /// The encoded sample, row-major.
    points: Vec<f64>,
    /// Rounds left before a fresh sample is drawn.
    rounds_left: usize,
}

impl Pool {
    /// No sample yet: the next round draws one.
    fn empty() -> Pool {
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
    fn point<'a>(&self, rank: u64, x: &'a [f64]) -> Point<'a> {
        match self.index.get(&rank) {
            Some(&j) => Point::keyed(x, j as u64),
            None => Point::new(x),
        }
    }
}

/// `bayes_opt`'s options after [`BoOptions::check`], with what they resolve to: the kernel,
/// λ, the discount factor, the cGP settings and the alignment weights.
#[derive(Clone, Debug)]
pub(crate) struct CheckedBo {
    opts: BoOptions,
    kernel: Kernel,
    exploration: Option<f64>,
    discount: f64,
    cgp: Option<Cgp>,
    alignment_weights: Vec<f64>,
}

impl BoOptions {
    /// Checks every option once (ranges, and the defaults that depend on other options).
    pub(crate) fn check(self) -> Result<CheckedBo, StrategyError> {
        let opts = self;
        let exploration = match opts.exploration {
            Exploration::ContextualVariance => None,
            Exploration::Constant(x) => {
                check_range(NAME, "exploration", x, 0.0, 1e6)?;
                Some(x)
            }
        };
        let lengthscale = opts
            .lengthscale
            .unwrap_or(if exploration.is_none() { 1.5 } else { 2.0 });
        check_range(NAME, "lengthscale", lengthscale, 1e-6, 1e6)?;
        check_range(NAME, "initial_samples", opts.initial_samples, 1, 100_000)?;
        check_range(NAME, "skip_threshold", opts.skip_threshold, 1, 1_000_000)?;
        let alignment_weights = match opts.alignment {
            Alignment::Weight(w) => {
                check_range(NAME, "alignment", w, 0.0, 100.0)?;
                if w > 0.0 { vec![w] } else { Vec::new() }
            }
            Alignment::Validated => VALIDATED_WEIGHTS.to_vec(),
        };
        check_range(
            NAME,
            "required_improvement",
            opts.required_improvement,
            0.0,
            10.0,
        )?;
        check_range(NAME, "candidate_limit", opts.candidate_limit, 1, u64::MAX)?;
        check_range(
            NAME,
            "feasibility_threshold",
            opts.feasibility_threshold,
            0.0,
            1.0,
        )?;
        check_range(NAME, "sample_size", opts.sample_size, 1, 100_000_000)?;
        check_range(NAME, "sample_rounds", opts.sample_rounds, 1, 1_000_000)?;
        check_range(NAME, "climb_starts", opts.climb_starts, 0, 1000)?;
        check_range(NAME, "model_memory", opts.model_memory, 0.001, 1e9)?;
        if opts.acquisition_order.is_empty() {
            return Err(StrategyError::Invalid {
                strategy: NAME.into(),
                option: "acquisition_order".into(),
                message: "must name at least one acquisition function".into(),
            });
        }
        let discount = opts
            .discount_factor
            .unwrap_or(if opts.method == Method::Multi {
                0.65
            } else {
                0.75
            });
        check_range(NAME, "discount_factor", discount, 0.0, 1.0)?;
        let cgp = opts.surrogate.check(NAME)?;
        Ok(CheckedBo {
            kernel: Kernel::new(opts.kernel, lengthscale),
            alignment_weights,
            cgp,
            exploration,
            discount,
            opts,
        })
    }
}

impl BayesianOptimization {
    /// BO with the given options (validated).
    pub fn new(opts: BoOptions) -> Result<BayesianOptimization, StrategyError> {
        Ok(BayesianOptimization::checked(opts.check()?))
    }

    /// BO with checked options: it cannot fail.
    pub(crate) fn checked(c: CheckedBo) -> BayesianOptimization {
        BayesianOptimization {
            alignment_weights: c.alignment_weights,
            cgp: c.cgp,
            kernel: c.kernel,
            exploration: c.exploration,
            discount: c.discount,
            opts: c.opts,
            state: None,
        }
    }

    /// The kernel with weight `w` on the `aligned` alignment coordinates that follow `dims`
    /// value coordinates: their lengthscale is the others' divided by `w`, so a coordinate
    /// spanning `[0, 1]` counts as one spanning `[0, w]` (0: as good as absent).
    fn kernel_for(&self, dims: usize, aligned: usize, w: f64) -> Kernel {
        if aligned == 0 {
            return self.kernel.clone();
        }
        let l = self.kernel.hyper.lengthscale(0);
        let mut kernel = self.kernel.clone();
        kernel.hyper.lengthscales = std::iter::repeat_n(l, dims)
            .chain(std::iter::repeat_n(
                if w > 0.0 { l / w } else { l * 1e6 },
                aligned,
            ))
            .collect();
        kernel
    }

    /// At each checkpoint (the initial sample's size, then double the results), the
    /// alignment weight whose model, fitted to the results before the last checkpoint
    /// (the first half of the initial sample at the first), ranks the results since most
    /// like their measured order; the model is conditioned again under it when it changed.
    /// (Not the marginal likelihood: with fixed, near-noiseless hyperparameters it favours
    /// whatever keeps the points furthest apart, the largest weight, on every space tried.)
    fn choose_alignment(&self, st: &mut State) {
        if self.alignment_weights.len() < 2
            || st.aligned.is_empty()
            || st.told.len() < st.next_validation
        {
            return;
        }
        let n = st.told.len();
        let split = if st.validation_split == 0 {
            n / 2
        } else {
            st.validation_split
        };
        st.validation_split = n;
        st.next_validation = n * 2;
        if split < 2 || n - split < 3 {
            return;
        }
        st.validations += 1;
        let ys = st.targets.fitted();
        let from = split.saturating_sub(VALIDATION_LIMIT);
        let (train_x, train_y) = (&st.told[from..split], &ys[from..split]);
        let (test_x, test_y) = (&st.told[split..], &ys[split..]);
        let mut best: Option<(f64, f64)> = None;
        for &w in &self.alignment_weights {
            let kernel = self.kernel_for(st.dims.len(), st.aligned.len(), w);
            let Ok(gp) = DenseGp::fit(&kernel, train_x, train_y) else {
                continue;
            };
            let means: Vec<f64> = gp.predict(test_x).into_iter().map(|p| p.0).collect();
            let score = rank_correlation(&means, test_y);
            // Ties keep the weight in use (then the smaller).
            let better = match best {
                None => true,
                Some((bw, bs)) => {
                    score > bs + 1e-9 || (score >= bs - 1e-9 && w == st.alignment_weight && bw != w)
                }
            };
            if score.is_finite() && better {
                best = Some((w, score));
            }
        }
        if let Some((w, _)) = best
            && w != st.alignment_weight
            && st
                .model
                .set_kernel(self.kernel_for(st.dims.len(), st.aligned.len(), w))
                .is_ok()
        {
            st.alignment_weight = w;
        }
    }

    fn combination(&self) -> Combination {
        match self.opts.method {
            Method::AdvancedMulti => Combination::AdvancedMulti,
            Method::Multi => Combination::Multi,
            Method::Ei | Method::Poi | Method::Lcb => Combination::Single,
        }
    }

    fn functions(&self) -> Vec<Acquisition> {
        match self.opts.method {
            Method::AdvancedMulti | Method::Multi => self.opts.acquisition_order.clone(),
            Method::Ei => vec![Acquisition::Ei],
            Method::Poi => vec![Acquisition::Poi],
            Method::Lcb => vec![Acquisition::Lcb],
        }
    }

    fn init(&self, space: &SearchSpace, history: &History, rng: &mut Rng) -> State {
        let encoder = space.encoder(Encoding::EpsSpaced);
        let dims: Vec<usize> = (0..space.dims())
            .filter(|&d| !self.opts.prune || space.params()[d].len() > 1)
            .collect();
        let aligned: Vec<(usize, Vec<f64>)> = if self.alignment_weights.is_empty() {
            Vec::new()
        } else {
            dims.iter()
                .filter_map(|&d| Some((d, encoding::alignment(space.params()[d].values())?)))
                .collect()
        };
        // Until the first validation, the largest weight offered.
        let alignment_weight = self.alignment_weights.iter().copied().fold(0.0, f64::max);
        let kernel = self.kernel_for(dims.len(), aligned.len(), alignment_weight);
        let width = dims.len() + aligned.len();
        // Every configuration, encoded in rank order.
        let all_points = || {
            let mut points = Vec::with_capacity(space.size() as usize * width);
            let mut config = vec![0u32; space.dims()];
            for r in 0..space.size() {
                space.write_configuration(r, &mut config);
                encode_into(&encoder, &dims, &aligned, &config, &mut points);
            }
            points
        };
        // The clustered GP of fixed-hyperparameter exact GPs, when asked for: it predicts
        // every candidate from its component's GP (no incremental candidate posterior, as the
        // components change with every observation).
        let clustered = || -> Option<Box<dyn Surrogate>> {
            let model = self.cgp.as_ref()?.model(ExactGp::new(kernel.clone()))?;
            Some(Box::new(model))
        };
        let sampled = || {
            (
                clustered().unwrap_or_else(|| {
                    Box::new(ExactGp::new(kernel.clone())) as Box<dyn Surrogate>
                }),
                Candidates::Sampled,
            )
        };
        let (model, candidates) =
            if let (Some(model), true) = (clustered(), space.size() <= self.opts.candidate_limit) {
                (model, Candidates::All(all_points().into()))
            } else if space.size() <= self.opts.candidate_limit {
                let points: Arc<[f64]> = all_points().into();
                match CandidateGp::new(kernel.clone(), Arc::clone(&points), width) {
                    Ok(gp) => (Box::new(gp) as Box<dyn Surrogate>, Candidates::All(points)),
                    Err(_) => sampled(),
                }
            } else if self.cgp.is_some() {
                sampled()
            } else {
                // The first sample is drawn in the first round after the initial sample.
                match CandidateGp::new(kernel.clone(), Vec::new(), width) {
                    Ok(gp) => (
                        Box::new(gp) as Box<dyn Surrogate>,
                        Candidates::Pool(Pool::empty()),
                    ),
                    Err(_) => sampled(),
                }
            };
        let mut state = State {
            encoder,
            dims,
            aligned,
            alignment_weight,
            next_validation: self.opts.initial_samples.max(2),
            validation_split: 0,
            validations: 0,
            told: Vec::new(),
            model,
            candidates,
            visited: FxHashSet::default(),
            valid: Vec::new(),
            targets: Targets::new(self.opts.transform == Transform::Log),
            since_improvement: 0,
            best: f64::INFINITY,
            pending: Vec::new(),
            portfolio: Portfolio::new(
                self.combination(),
                self.functions(),
                self.discount,
                self.opts.skip_threshold,
                self.opts.required_improvement,
            ),
            initial: VecDeque::new(),
            initial_valid: 0,
            initial_done: false,
            mu_s: 0.0,
            var_s: 0.0,
            sampler: DistinctSampler::new(space.size()),
            notice_given: false,
            rows: Vec::new(),
            ran: Vec::new(),
            forest: None,
        };
        // Anything evaluated before (a resumed run) is known already.
        for o in history.observations() {
            if let Some(r) = space.rank(&o.config) {
                state.mark_visited(r);
                state.record(self.opts.feasibility, &o.config, o.value.is_some());
                if let Some(v) = o.value {
                    self.fit(&mut state, r, &o.config, v, o.variance);
                }
            }
        }
        let n = self.opts.initial_samples.saturating_sub(state.valid.len());
        let sample = match self.opts.initial_sampling {
            InitialSampling::Maximin => space.maximin_latin_hypercube(n, 10, rng),
            InitialSampling::Lhs => space.latin_hypercube(n, rng),
            InitialSampling::Random => Vec::new(),
        };
        state.initial = sample
            .into_iter()
            .filter(|c| !history.contains(c))
            .collect();
        state.initial_valid = state.valid.len();
        state
    }
}

impl State {
    fn mark_visited(&mut self, rank: u64) {
        self.visited.insert(rank);
        self.sampler.exclude(rank);
    }

    /// Keeps an evaluated configuration as data for the feasibility forest.
    fn record(&mut self, feasibility: bool, config: &[u32], ran: bool) {
        if feasibility {
            let x = self.encode(config);
            self.rows.push(x);
            self.ran.push(ran);
        }
    }

    /// Regrows the feasibility forest on every evaluation so far (BaCO refits it before each
    /// proposal) and draws this round's ε_f; no forest while nothing has failed.
    fn refresh_forest(&mut self, threshold: f64, rng: &mut Rng) {
        self.forest = None;
        if self.ran.iter().all(|&ok| ok) {
            return;
        }
        let seed: u64 = rng.random();
        let limit = feasibility_limit(threshold, rng);
        if let Ok(f) =
            FeasibilityForest::fit(&self.rows, &self.ran, &ForestOptions::default(), seed)
        {
            self.forest = Some((f, limit));
        }
    }

    fn encode(&self, config: &[u32]) -> Vec<f64> {
        let mut x = Vec::with_capacity(self.width());
        encode_into(&self.encoder, &self.dims, &self.aligned, config, &mut x);
        x
    }

    /// Coordinates per configuration.
    fn width(&self) -> usize {
        self.dims.len() + self.aligned.len()
    }

    fn fit(&mut self, rank: u64, config: &[u32], value: f64, variance: Option<f64>) {
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
    fn fantasise(&mut self, space: &SearchSpace, config: &[u32], how: Batch) {
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

    /// An observed value as the model fits it.
    fn to_model(&self, v: f64) -> f64 {
        self.targets.to_model(v)
    }

    fn median_valid(&self) -> f64 {
        median(&self.valid)
    }
}

/// The median of `values` (0 when there are none).
fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Population standard deviation of `y` (1 when there is no spread): the unit of λ in EI and
/// PI under `exploration_scale = "spread"`.
fn spread(y: impl Iterator<Item = f64> + Clone) -> f64 {
    let (n, sum) = y.clone().fold((0usize, 0.0), |(n, s), v| (n + 1, s + v));
    if n == 0 {
        return 1.0;
    }
    let mean = sum / n as f64;
    let var = y.map(|v| (v - mean) * (v - mean)).sum::<f64>() / n as f64;
    if var > 0.0 { var.sqrt() } else { 1.0 }
}

impl BayesianOptimization {
    /// Scores every unvisited candidate (or a sample in large spaces) and returns, for each
    /// active acquisition function in order, the configuration it proposes (distinct ones for
    /// advanced multi; possibly repeated ones for multi, flagged as duplicates).
    fn propose_round(
        &self,
        st: &mut State,
        space: &SearchSpace,
        rng: &mut Rng,
    ) -> Vec<(Configuration, Option<usize>, bool)> {
        // The cGP's exploration rate: some proposals are uniformly random valid
        // configurations instead of the acquisition's maximiser.
        if let Some(cgp) = &self.cgp
            && cgp.explore(rng)
            && let Some(r) = st.sampler.clone().next_rank(rng)
        {
            return vec![(space.configuration(r), None, false)];
        }
        let functions = st.portfolio.functions().to_vec();
        if matches!(st.candidates, Candidates::Pool(_) | Candidates::Sampled) && !st.notice_given {
            eprintln!(
                "ktune: bayes_opt: the space has {} configurations (over the candidate limit of {}); each round scores a sample of {} (drawn anew every {} rounds) plus the neighbourhoods of the best configurations{}",
                space.size(),
                self.opts.candidate_limit,
                self.opts.sample_size,
                if matches!(st.candidates, Candidates::Pool(_)) {
                    self.opts.sample_rounds
                } else {
                    1
                },
                if self.opts.climb_starts > 0 {
                    format!(
                        ", and climbs from its {} best candidates",
                        self.opts.climb_starts
                    )
                } else {
                    String::new()
                }
            );
            st.notice_given = true;
        }
        if self.opts.feasibility {
            st.refresh_forest(self.opts.feasibility_threshold, rng);
        }
        let turn: Vec<Acquisition> = st.portfolio.turn().iter().map(|&a| functions[a]).collect();
        let (ranks, (means, vars, weights)) = self.scored(st, space, rng, &turn);
        if ranks.is_empty() {
            return Vec::new();
        }
        let terms = self.terms(st, &vars);
        // Stagnation: the model keeps proposing configurations that do not improve on the
        // best, typically around one basin of a non-smooth landscape it describes badly. One
        // proposal where it knows least (largest posterior variance) leaves that basin.
        if self.opts.explore_after > 0 && st.since_improvement >= self.opts.explore_after {
            st.since_improvement = 0;
            let j = (0..vars.len())
                .filter(|&j| weights[j] > 0.0)
                .max_by(|&a, &b| vars[a].total_cmp(&vars[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            return vec![(space.configuration(ranks[j]), None, false)];
        }
        let mut taken: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        // Advanced multi is round-robin: one function per evaluation, each on the posterior
        // updated with every observation so far (cheap here, as the update is incremental).
        for a in st.portfolio.turn() {
            let af = functions[a];
            let exclude = self.opts.method == Method::AdvancedMulti;
            let mut arg = maximiser(af, terms, &means, &vars, &weights, |j| {
                exclude && taken.contains(&j)
            });
            if arg == usize::MAX {
                arg = (0..ranks.len()).find(|j| !taken.contains(j)).unwrap_or(0);
            }
            let duplicate = taken.contains(&arg);
            taken.push(arg);
            out.push((space.configuration(ranks[arg]), Some(a), duplicate));
            if taken.len() >= ranks.len() {
                break;
            }
        }
        out
    }

    /// `count` proposals beyond a round (a batch, or an ask while earlier proposals are
    /// still being evaluated), each on the model told every pending configuration at a
    /// fantasised value ([`Batch`]), the acquisition functions taking turns; the model is
    /// returned to its real observations afterwards.
    fn propose_believed(
        &self,
        st: &mut State,
        space: &SearchSpace,
        rng: &mut Rng,
        count: usize,
    ) -> Vec<Configuration> {
        let real = st.model.len();
        let pending: Vec<Configuration> = st.pending.iter().map(|(c, _)| c.clone()).collect();
        for c in &pending {
            st.fantasise(space, c, self.opts.batch);
        }
        let functions = st.portfolio.functions().to_vec();
        if self.opts.feasibility {
            st.refresh_forest(self.opts.feasibility_threshold, rng);
        }
        let mut out = Vec::new();
        for k in 0..count {
            let af = functions[k % functions.len()];
            let (ranks, (means, vars, weights)) = self.scored(st, space, rng, &[af]);
            if ranks.is_empty() {
                break;
            }
            let terms = self.terms(st, &vars);
            let j = match maximiser(af, terms, &means, &vars, &weights, |_| false) {
                usize::MAX => 0,
                j => j,
            };
            let c = space.configuration(ranks[j]);
            st.mark_visited(ranks[j]);
            st.pending.push((c.clone(), None));
            if k + 1 < count {
                st.fantasise(space, &c, self.opts.batch);
            }
            out.push(c);
        }
        st.model.truncate(real);
        out
    }

    /// The unvisited candidates of a round and their posterior (and acquisition weight:
    /// 1 but for the cGP); above the candidate limit, with where the climbs of `climb_for`
    /// (the acquisition functions that propose next) ended.
    fn scored(
        &self,
        st: &State,
        space: &SearchSpace,
        rng: &mut Rng,
        climb_for: &[Acquisition],
    ) -> (Vec<u64>, Predicted) {
        match &st.candidates {
            Candidates::All(points) => {
                let ranks: Vec<u64> = (0..space.size())
                    .filter(|r| !st.visited.contains(r))
                    .collect();
                let d = st.width();
                let keyed: Vec<Point<'_>> = ranks
                    .iter()
                    .map(|&r| {
                        let i = r as usize;
                        Point::keyed(&points[i * d..(i + 1) * d], r)
                    })
                    .collect();
                let mut predicted = predictions(st.model.as_ref(), &keyed);
                feasible_weights(st, keyed.iter().map(|p| p.x), &mut predicted.2);
                (ranks, predicted)
            }
            Candidates::Pool(pool) => {
                let w = st.width();
                let (mut ranks, mut points): (Vec<u64>, Vec<Point<'_>>) = pool
                    .ranks
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !st.visited.contains(r))
                    .map(|(k, &r)| {
                        let x = &pool.points[k * w..(k + 1) * w];
                        (r, Point::keyed(x, (pool.first + k) as u64))
                    })
                    .unzip();
                let near = self.near_the_best(st, space, |r| pool.index.contains_key(&r));
                let xs: Vec<Vec<f64>> = near
                    .iter()
                    .map(|&r| st.encode(&space.configuration(r)))
                    .collect();
                ranks.extend(near);
                points.extend(xs.iter().map(|x| Point::new(x)));
                let mut predicted = predictions(st.model.as_ref(), &points);
                feasible_weights(st, points.iter().map(|p| p.x), &mut predicted.2);
                self.climb(st, space, rng, climb_for, &mut ranks, &mut predicted);
                (ranks, predicted)
            }
            Candidates::Sampled => {
                let mut sample = st.sampler.clone();
                let mut ranks: Vec<u64> = (0..self.opts.sample_size)
                    .map_while(|_| sample.next_rank(rng))
                    .collect();
                let sampled: FxHashSet<u64> = ranks.iter().copied().collect();
                ranks.extend(self.near_the_best(st, space, |r| sampled.contains(&r)));
                let xs: Vec<Vec<f64>> = ranks
                    .iter()
                    .map(|&r| st.encode(&space.configuration(r)))
                    .collect();
                let points: Vec<Point<'_>> = xs.iter().map(|x| Point::new(x)).collect();
                let mut predicted = predictions(st.model.as_ref(), &points);
                feasible_weights(st, xs.iter().map(Vec::as_slice), &mut predicted.2);
                self.climb(st, space, rng, climb_for, &mut ranks, &mut predicted);
                (ranks, predicted)
            }
        }
    }

    /// Above the candidate limit the acquisition's maximiser is seldom in the sample. From
    /// the `climb_starts` best candidates of each of `functions`, a hill climb over
    /// the neighbours (BaCO's local search, on the exact posterior off the sample) finds
    /// where the function is best near them; the best configuration each climb reached that
    /// is not a candidate yet joins the round's candidates, with its posterior.
    fn climb(
        &self,
        st: &State,
        space: &SearchSpace,
        rng: &mut Rng,
        functions: &[Acquisition],
        ranks: &mut Vec<u64>,
        predicted: &mut Predicted,
    ) {
        if self.opts.climb_starts == 0 || ranks.is_empty() || !st.best.is_finite() {
            return;
        }
        let terms = self.terms(st, &predicted.1);
        let mut functions = functions.to_vec();
        functions.dedup();
        let have: FxHashSet<u64> = ranks.iter().copied().collect();
        let mut ends: Vec<Configuration> = Vec::new();
        for af in functions {
            let l = if af == Acquisition::Lcb {
                terms.lambda
            } else {
                terms.lambda * terms.scale
            };
            let (means, vars, weights) = &*predicted;
            let scores: Vec<f64> = (0..ranks.len())
                .map(|j| acquisition_value(af, means[j], vars[j], weights[j], terms.best, l))
                .collect();
            let mut order: Vec<usize> = (0..ranks.len())
                .filter(|&j| scores[j].is_finite())
                .collect();
            order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
            let starts: Vec<Configuration> = order
                .iter()
                .take(self.opts.climb_starts)
                .map(|&j| space.configuration(ranks[j]))
                .collect();
            let found = acquisition_search::maximise(
                space,
                SearchOptions {
                    random_points: 0,
                    exhaustive: 0,
                    starts: 0,
                },
                &starts,
                &|r| !st.visited.contains(&r),
                &mut |configs| {
                    self.acquisition_values(st, space, configs, af, terms.best, l)
                        .into_iter()
                        .map(|v| if v.is_finite() { -v } else { f64::NEG_INFINITY })
                        .collect()
                },
                rng,
            );
            if let Some((c, _)) = found.into_iter().find(|(c, _)| {
                space
                    .rank(c)
                    .is_some_and(|r| !have.contains(&r) && !ends.contains(c))
            }) {
                ends.push(c);
            }
        }
        if ends.is_empty() {
            return;
        }
        let xs: Vec<Vec<f64>> = ends.iter().map(|c| st.encode(c)).collect();
        let points = self.points_of(st, space, &ends, &xs);
        let (m, v, mut w) = predictions(st.model.as_ref(), &points);
        feasible_weights(st, xs.iter().map(Vec::as_slice), &mut w);
        ranks.extend(ends.iter().filter_map(|c| space.rank(c)));
        predicted.0.extend(m);
        predicted.1.extend(v);
        predicted.2.extend(w);
    }

    /// The unvisited configurations in the Hamming neighbourhoods of the five best
    /// observations that are not `sampled` (each once): in a large space, where the
    /// search refines what the sample found.
    fn near_the_best(
        &self,
        st: &State,
        space: &SearchSpace,
        sampled: impl Fn(u64) -> bool,
    ) -> Vec<u64> {
        let mut best: Vec<(&Vec<f64>, f64)> = st
            .told
            .iter()
            .zip(st.model.observed_values().iter().copied())
            .collect();
        best.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let mut out = Vec::new();
        for (x, _) in best.into_iter().take(5) {
            let config = self.decode(st, space, x);
            for n in space.neighbours(&config, Neighbourhood::Hamming) {
                if let Some(r) = space.rank(&n)
                    && !st.visited.contains(&r)
                    && !sampled(r)
                    && seen.insert(r)
                {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Tells the model a valid result, making room for it first (see `make_room`).
    fn fit(&self, st: &mut State, rank: u64, config: &[u32], value: f64, variance: Option<f64>) {
        self.make_room(st);
        st.fit(rank, config, value, variance);
    }

    /// The incremental GP over every configuration holds one row of cross-covariances per
    /// observation (8 bytes a configuration): before the next observation would take them
    /// past `model_memory`, the model moves to a sample of the space, as above the candidate
    /// limit (rebuilt over the points told so far; the next round draws the sample).
    fn make_room(&self, st: &mut State) {
        let Candidates::All(points) = &st.candidates else {
            return;
        };
        if self.cgp.is_some() {
            return;
        }
        let width = st.width();
        let configurations = points.len() / width.max(1);
        let bytes = (st.model.len() as f64 + 1.0) * configurations as f64 * 8.0;
        if bytes <= self.memory_limit() {
            return;
        }
        // On failure the model stays over every configuration, past the limit.
        if let Ok(gp) = self.model_over(st, &[]) {
            eprintln!(
                "ktune: bayes_opt: the model over all {configurations} configurations would take more than model_memory = {} MiB at {} observations; it goes on with a sample of {} drawn anew every {} rounds",
                self.opts.model_memory,
                st.model.len() + 1,
                self.opts.sample_size,
                self.opts.sample_rounds
            );
            st.notice_given = true;
            st.model = Box::new(gp);
            st.candidates = Candidates::Pool(Pool::empty());
        }
    }

    /// A candidate GP whose candidates are the points told so far, observed again with
    /// their values and variances (one blocked factorisation), then `sample` (encoded,
    /// row-major): the model of a kept sample.
    fn model_over(&self, st: &State, sample: &[f64]) -> Result<CandidateGp, ModelError> {
        let kernel = self.kernel_for(st.dims.len(), st.aligned.len(), st.alignment_weight);
        let candidates: Vec<f64> = st.told.iter().flatten().chain(sample).copied().collect();
        let mut gp = CandidateGp::new(kernel, candidates, st.width())?;
        let told: Vec<usize> = (0..st.told.len()).collect();
        gp.observe_all(&told, &st.targets.fitted())?;
        if let Some(variances) = st.targets.model_variances() {
            gp.set_noise(&variances)?;
        }
        Ok(gp)
    }

    /// `model_memory` in bytes.
    fn memory_limit(&self) -> f64 {
        self.opts.model_memory * 1024.0 * 1024.0
    }

    /// In a large space, draws a fresh sample every `sample_rounds` rounds and rebuilds the
    /// model over it: the points told so far become its first candidates, observed again
    /// with their values and variances (`O(n²·m)`, once per `sample_rounds` rounds; each
    /// observation in between costs `O(n·m)`).
    fn refresh_pool(&self, st: &mut State, space: &SearchSpace, rng: &mut Rng) {
        if let Candidates::Pool(pool) = &mut st.candidates {
            if pool.rounds_left > 0 {
                pool.rounds_left -= 1;
                return;
            }
        } else {
            return;
        }
        // No larger than `model_memory` allows for the rows of the next `sample_rounds`
        // observations (at least one configuration).
        let rows = (st.told.len() + self.opts.sample_rounds) as f64;
        let room = (self.memory_limit() / 8.0 / rows) as usize;
        let size = self
            .opts
            .sample_size
            .min(room.saturating_sub(st.told.len()))
            .max(1);
        let mut sampler = st.sampler.clone();
        let ranks: Vec<u64> = (0..size).map_while(|_| sampler.next_rank(rng)).collect();
        let mut points = Vec::with_capacity(ranks.len() * st.width());
        let mut config = vec![0u32; space.dims()];
        for &r in &ranks {
            space.write_configuration(r, &mut config);
            encode_into(&st.encoder, &st.dims, &st.aligned, &config, &mut points);
        }
        let first = st.told.len();
        let rebuilt = self.model_over(st, &points);
        let Candidates::Pool(pool) = &mut st.candidates else {
            return;
        };
        // On failure (a factorisation the old model managed incrementally), the old sample
        // and model are kept for another `sample_rounds` rounds.
        if let Ok(gp) = rebuilt {
            st.model = Box::new(gp);
            *pool = Pool {
                index: ranks
                    .iter()
                    .enumerate()
                    .map(|(k, &r)| (r, first + k))
                    .collect(),
                ranks,
                first,
                points,
                rounds_left: 0,
            };
        }
        pool.rounds_left = self.opts.sample_rounds.saturating_sub(1);
    }

    /// λ, the incumbent (model units) and the unit of λ, for this round's variances.
    fn terms(&self, st: &State, vars: &[f64]) -> Terms {
        let mean_var = vars.iter().sum::<f64>() / vars.len() as f64;
        let lambda = match self.exploration {
            Some(l) => l,
            None => contextual_variance(mean_var, st.mu_s, st.best, st.var_s),
        };
        let best = st.to_model(if st.best.is_finite() {
            st.best
        } else {
            st.median_valid()
        });
        let scale = match self.opts.exploration_scale {
            ExplorationScale::Objective => 1.0,
            ExplorationScale::Spread => spread(st.valid.iter().map(|&v| st.to_model(v))),
        };
        Terms {
            lambda,
            best,
            scale,
        }
    }

    /// The alignment weight in use (`None` with alignment off or before the first ask).
    #[cfg(test)]
    pub(crate) fn alignment_weight(&self) -> Option<f64> {
        let st = self.state.as_ref()?;
        (!st.aligned.is_empty()).then_some(st.alignment_weight)
    }

    /// In a large space: the current sample's ranks, and the largest gaps between the
    /// model's posterior (mean, variance) at the sample's unvisited configurations and
    /// that of a dense GP fitted from scratch to everything told.
    #[cfg(test)]
    pub(crate) fn pool_and_gap(&self) -> Option<(Vec<u64>, f64, f64)> {
        let st = self.state.as_ref()?;
        let Candidates::Pool(pool) = &st.candidates else {
            return None;
        };
        let kernel = self.kernel_for(st.dims.len(), st.aligned.len(), st.alignment_weight);
        let dense = DenseGp::fit(&kernel, &st.told, &st.targets.fitted()).ok()?;
        let w = st.width();
        let (mut dm, mut dv) = (0.0f64, 0.0f64);
        for (k, r) in pool.ranks.iter().enumerate() {
            if st.visited.contains(r) {
                continue;
            }
            let x = &pool.points[k * w..(k + 1) * w];
            let got = st.model.predict(&[pool.point(*r, x)]).ok()?[0];
            let want = dense.predict(&[x.to_vec()])[0];
            dm = dm.max((got.0 - want.0).abs());
            dv = dv.max((got.1 - want.1).abs());
        }
        Some((pool.ranks.clone(), dm, dv))
    }

    /// How many times the alignment weight was chosen.
    #[cfg(test)]
    pub(crate) fn alignment_validations(&self) -> usize {
        self.state.as_ref().map_or(0, |st| st.validations)
    }

    /// Ends the initial sample once `n` configurations of it are valid (fewer than asked at
    /// construction): `auto` does so when the first results show a smooth landscape.
    pub(crate) fn shorten_initial_sample(&mut self, n: usize) {
        self.opts.initial_samples = self.opts.initial_samples.min(n.max(1));
        if let Some(st) = &mut self.state {
            st.initial.clear();
        }
    }

    /// How promising the model finds each of `configs` as the next step of a climb from the
    /// best configuration, by `af` against the best with no exploration term (EI and PI of
    /// improving on it, LCB: the posterior mean), in minimisation form (smaller is more
    /// promising): EI and PI times the feasibility forest's probability that it runs, and
    /// +∞ wherever the forest rules it out. `None` until the initial sample is done.
    pub(crate) fn promise(
        &self,
        space: &SearchSpace,
        configs: &[Configuration],
        af: Acquisition,
    ) -> Option<Vec<f64>> {
        let st = self.state.as_ref()?;
        if !st.initial_done || !st.best.is_finite() {
            return None;
        }
        Some(self.acquisition_values(st, space, configs, af, st.to_model(st.best), 0.0))
    }

    /// `af` at each of `configs` against `best` (model units) with exploration `l`, in
    /// minimisation form, weighted by the feasibility forest (+∞ where it rules one out).
    fn acquisition_values(
        &self,
        st: &State,
        space: &SearchSpace,
        configs: &[Configuration],
        af: Acquisition,
        best: f64,
        l: f64,
    ) -> Vec<f64> {
        let xs: Vec<Vec<f64>> = configs.iter().map(|c| st.encode(c)).collect();
        let points = self.points_of(st, space, configs, &xs);
        let (means, vars, mut weights) = predictions(st.model.as_ref(), &points);
        feasible_weights(st, xs.iter().map(Vec::as_slice), &mut weights);
        means
            .iter()
            .zip(&vars)
            .zip(&weights)
            .map(|((&mu, &var), &w)| acquisition_value(af, mu, var, w, best, l))
            .collect()
    }

    /// The model's points for `configs` (encoded as `xs`): keyed where the model holds them
    /// (cached), unkeyed otherwise.
    fn points_of<'a>(
        &self,
        st: &'a State,
        space: &SearchSpace,
        configs: &[Configuration],
        xs: &'a [Vec<f64>],
    ) -> Vec<Point<'a>> {
        match &st.candidates {
            // Keyed by rank, as the round's candidates: the incremental model has them cached.
            Candidates::All(encoded) => {
                let d = st.width();
                configs
                    .iter()
                    .zip(xs)
                    .map(|(c, x)| match space.rank(c) {
                        Some(r) => {
                            let i = r as usize;
                            Point::keyed(&encoded[i * d..(i + 1) * d], r)
                        }
                        None => Point::new(x),
                    })
                    .collect()
            }
            Candidates::Pool(pool) => configs
                .iter()
                .zip(xs)
                .map(|(c, x)| match space.rank(c) {
                    Some(r) => pool.point(r, x),
                    None => Point::new(x),
                })
                .collect(),
            Candidates::Sampled => xs.iter().map(|x| Point::new(x)).collect(),
        }
    }

    fn decode(&self, st: &State, space: &SearchSpace, x: &[f64]) -> Configuration {
        let mut full = vec![0.0; space.dims()];
        for (&d, &v) in st.dims.iter().zip(x) {
            full[d] = v;
        }
        for (d, slot) in full.iter_mut().enumerate() {
            if !st.dims.contains(&d) {
                *slot = st.encoder.coordinate(d, 0);
            }
        }
        st.encoder.decode(&full)
    }
}

impl Strategy for BayesianOptimization {
    fn name(&self) -> &str {
        NAME
    }

    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        if self.state.is_none() {
            self.state = Some(self.init(space, history, rng));
        }
        let mut st = self.state.take().expect("initialised above");
        let mut out = Vec::new();
        // Initial sample: the Latin hypercube points, then random valid replacements for the
        // failed ones, until enough are valid.
        // `n` is the number of idle workers: proposals still being evaluated do not count.
        while !st.initial_done && out.len() < n.max(1) {
            let next = match st.initial.pop_front() {
                Some(c) => Some(c),
                None if st.initial_valid + st.pending.len() < self.opts.initial_samples => {
                    st.sampler.next_rank(rng).map(|r| space.configuration(r))
                }
                None => None,
            };
            let Some(c) = next else { break };
            let Some(r) = space.rank(&c) else { continue };
            if st.visited.contains(&r) {
                continue;
            }
            st.mark_visited(r);
            st.pending.push((c.clone(), None));
            out.push(c);
        }
        if !out.is_empty() {
            self.state = Some(st);
            return out;
        }
        // Asked while earlier proposals are still being evaluated (parallel workers): the
        // initial sample is as complete as it will get, and the proposals are made on the
        // model told the pending ones at fantasised values.
        let waiting = !st.pending.is_empty();
        if !st.initial_done {
            st.initial_done = true;
            st.mu_s = if st.valid.is_empty() {
                0.0
            } else {
                st.valid.iter().sum::<f64>() / st.valid.len() as f64
            };
            st.var_s = match &st.candidates {
                Candidates::All(points) => {
                    let d = st.width();
                    let unvisited: Vec<Point<'_>> = (0..space.size())
                        .filter(|r| !st.visited.contains(r))
                        .map(|r| {
                            let i = r as usize;
                            Point::keyed(&points[i * d..(i + 1) * d], r)
                        })
                        .collect();
                    let (_, vars, _) = predictions(st.model.as_ref(), &unvisited);
                    if vars.is_empty() {
                        1.0
                    } else {
                        vars.iter().sum::<f64>() / vars.len() as f64
                    }
                }
                Candidates::Pool(_) | Candidates::Sampled => 1.0,
            };
        }
        // Before any fantasy is told: the validation fits real results only.
        self.choose_alignment(&mut st);
        self.refresh_pool(&mut st, space, rng);
        if waiting {
            out = self.propose_believed(&mut st, space, rng, n.max(1));
            self.state = Some(st);
            return out;
        }
        // A round: one proposal per active acquisition function.
        let round = self.propose_round(&mut st, space, rng);
        let mut dups = Vec::new();
        for (c, a, duplicate) in round {
            if let Some(a) = a {
                dups.push((a, duplicate));
            }
            if duplicate {
                continue;
            }
            if let Some(r) = space.rank(&c) {
                st.mark_visited(r);
            }
            st.pending.push((c.clone(), a));
            out.push(c);
        }
        // Multi: a duplicate proposal is credited with the observation of the original.
        st.portfolio.proposed(dups);
        // A batch larger than a round.
        if out.len() < n {
            let more = self.propose_believed(&mut st, space, rng, n - out.len());
            out.extend(more);
        }
        self.state = Some(st);
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        let Some(mut st) = self.state.take() else {
            return;
        };
        for o in observations {
            let Some(i) = st.pending.iter().position(|(c, _)| *c == o.config) else {
                // Another worker's evaluation (or a repeat): data all the same, fitted once.
                if let Some(r) = space.rank(&o.config)
                    && !st.visited.contains(&r)
                {
                    st.mark_visited(r);
                    st.record(self.opts.feasibility, &o.config, o.value.is_some());
                    if let Some(v) = o.value {
                        self.fit(&mut st, r, &o.config, v, o.variance);
                        if !st.initial_done {
                            st.initial_valid += 1;
                        }
                    }
                }
                continue;
            };
            if st.initial_done {
                st.since_improvement += 1;
            }
            let (config, af) = st.pending.swap_remove(i);
            st.record(self.opts.feasibility, &config, o.value.is_some());
            if let Some(r) = space.rank(&config)
                && let Some(v) = o.value
            {
                self.fit(&mut st, r, &config, v, o.variance);
                if af.is_none() && !st.initial_done {
                    st.initial_valid += 1;
                }
            }
            if let Some(a) = af {
                st.portfolio.record(a, o.value);
            }
        }
        if st.pending.is_empty() {
            let valid = &st.valid;
            st.portfolio.round_done(|| median(valid));
        }
        self.state = Some(st);
    }
}

/// Multiplies the acquisition weights by the forest's probability that each point runs, and
/// sets the weight of points below this round's ε_f to 0 (never proposed).
fn feasible_weights<'a>(st: &State, xs: impl Iterator<Item = &'a [f64]>, weights: &mut [f64]) {
    let Some((forest, limit)) = &st.forest else {
        return;
    };
    for (x, w) in xs.zip(weights.iter_mut()) {
        let p = forest.probability(x);
        *w = if p < *limit { 0.0 } else { *w * p };
    }
}

/// Means, variances and acquisition weights of the candidates.
type Predicted = (Vec<f64>, Vec<f64>, Vec<f64>);

/// What the acquisition functions of a round share.
#[derive(Clone, Copy)]
struct Terms {
    /// The exploration factor λ.
    lambda: f64,
    /// The incumbent, as the model fits values.
    best: f64,
    /// The unit of λ in EI and PI.
    scale: f64,
}

/// The candidate that `af` scores best (the first on ties and NaN: deterministic), among
/// those `skip` keeps; `usize::MAX` when none is kept or every score is NaN.
fn maximiser(
    af: Acquisition,
    t: Terms,
    means: &[f64],
    vars: &[f64],
    weights: &[f64],
    skip: impl Fn(usize) -> bool,
) -> usize {
    let mut arg = usize::MAX;
    let mut arg_score = f64::INFINITY;
    for (j, ((&mu, &var), &w)) in means.iter().zip(vars).zip(weights).enumerate() {
        // A weight of 0: the feasibility forest rules the candidate out this round.
        if skip(j) || w <= 0.0 {
            continue;
        }
        // LCB's λ multiplies the posterior σ, which is in the fitted units already.
        let l = if af == Acquisition::Lcb {
            t.lambda
        } else {
            t.lambda * t.scale
        };
        let s = acquisition_value(af, mu, var, w, t.best, l);
        if s < arg_score {
            arg_score = s;
            arg = j;
        }
    }
    arg
}

/// `af` at one posterior (mean `mu`, variance `var`) with acquisition weight `w`, in
/// minimisation form; +∞ where the weight rules the configuration out.
fn acquisition_value(af: Acquisition, mu: f64, var: f64, w: f64, best: f64, l: f64) -> f64 {
    if w <= 0.0 {
        return f64::INFINITY;
    }
    acquisition::weighted(
        af,
        acquisition::score(af, mu, var.max(0.0).sqrt(), best, l),
        w,
    )
}

/// Means, variances and acquisition weights of `points`, or the prior (weight 1) where the
/// model cannot predict (no valid observation yet, or a covariance that cannot be
/// factorised).
fn predictions(model: &dyn Surrogate, points: &[Point<'_>]) -> Predicted {
    match model.predict_weighted(points) {
        Ok(p) => {
            let mut out = (
                Vec::with_capacity(p.len()),
                Vec::with_capacity(p.len()),
                Vec::with_capacity(p.len()),
            );
            for w in p {
                out.0.push(w.mean);
                out.1.push(w.variance);
                out.2.push(w.weight);
            }
            out
        }
        Err(_) => (
            vec![0.0; points.len()],
            vec![1.0; points.len()],
            vec![1.0; points.len()],
        ),
    }
}

/// The model as a climb's guide, scoring by one acquisition function
/// ([`BayesianOptimization::promise`]).
pub(crate) struct ModelGuide<'a>(pub(crate) &'a BayesianOptimization, pub(crate) Acquisition);

impl crate::local_search::Guide for ModelGuide<'_> {
    fn promise(&self, space: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>> {
        self.0.promise(space, configs, self.1)
    }
}
