//! The strategy: the initial sample, the surrogate and its candidates, one round of
//! proposals per `ask`, and what each result teaches in `tell`.

use std::collections::VecDeque;
use std::sync::Arc;

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_model::acquisition::{Acquisition, Combination, Portfolio};
use ktune_model::{CandidateGp, DenseGp, ExactGp, Kernel, Point, SubSpaces, Surrogate};
use ktune_model::{FitOptions, fit_hyperparameters};
use ktune_space::{Configuration, DistinctSampler, Encoding, SearchSpace};
use rustc_hash::FxHashSet;

use super::NAME;
use super::options::{
    Alignment, BoOptions, Exploration, InitialSampling, Lengthscales, Method, Scalarise,
    SubSpaceShare, Transform,
};
use super::propose::*;
use super::state::*;
use crate::model_based::footprint::Footprint;
use crate::model_based::monotone::FailureOrthants;
use crate::model_based::prior_mean::{self, PriorMean};
use crate::model_based::sub_spaces;
use crate::surrogate::Cgp;
use crate::transfer::{PriorRanking, PriorTrust};
use crate::transform::Targets;
use crate::{StrategyError, encoding};

/// Bayesian optimisation with a Gaussian process over the discrete space.
pub struct BayesianOptimization {
    pub(super) opts: BoOptions,
    pub(super) kernel: Kernel,
    pub(super) exploration: Option<f64>,
    pub(super) discount: f64,
    /// The clustered GP's settings when it is the surrogate.
    pub(super) cgp: Option<Cgp>,
    /// The weights the alignment coordinates may take: none (off), one (fixed) or several
    /// (chosen on held-out results).
    pub(super) alignment_weights: Vec<f64>,
    pub(super) state: Option<State>,
    /// The priors' outcomes the feasibility forest learns from too (`prior_failures`).
    pub(super) prior_outcomes: Vec<(Configuration, bool)>,
    /// The priors' ranking, whose values become the surrogate's mean (`prior_mean`).
    pub(super) prior_ranking: Option<PriorRanking>,
    /// The study's goal, when it seeks one configuration of several objectives: the model
    /// fits the goal's values, recomputed from the objectives before each round.
    pub(super) goal: Option<ktune_core::pareto::Goal>,
    /// What proposed each configuration of the last `ask` ([`Strategy::origin`]).
    pub(super) origins: Vec<(Configuration, &'static str)>,
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
    /// Resolves the defaults that depend on other options and checks what the documented
    /// ranges (checked by the registry) cannot say.
    pub(crate) fn check(self) -> Result<CheckedBo, StrategyError> {
        let opts = self;
        let exploration = match opts.exploration {
            Exploration::ContextualVariance => None,
            Exploration::Constant(x) => Some(x),
        };
        let lengthscale = opts
            .lengthscale
            .unwrap_or(if exploration.is_none() { 1.5 } else { 2.0 });
        let alignment_weights = match opts.alignment {
            Alignment::Weight(w) => {
                if w > 0.0 {
                    vec![w]
                } else {
                    Vec::new()
                }
            }
            Alignment::Validated => VALIDATED_WEIGHTS.to_vec(),
        };
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
        let cgp = opts.surrogate.cgp();
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
    /// BO with the given options, which must lie in their documented ranges (the tests'
    /// way in: strategies are created through the registry, [`crate::create`]).
    #[cfg(test)]
    pub(crate) fn new(opts: BoOptions) -> Result<BayesianOptimization, StrategyError> {
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
            prior_outcomes: Vec::new(),
            prior_ranking: None,
            goal: None,
            origins: Vec::new(),
        }
    }

    /// The kernel with weight `w` on the `aligned` alignment coordinates that follow `dims`
    /// value coordinates: their lengthscale is the others' divided by `w`, so a coordinate
    /// spanning `[0, 1]` counts as one spanning `[0, w]` (0: as good as absent).
    pub(super) fn kernel_for(&self, dims: usize, aligned: usize, w: f64) -> Kernel {
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

    /// The kernel the model uses now: the fitted one when the validation chose it, else
    /// the fixed kernel with the alignment weight in use.
    pub(super) fn current_kernel(&self, st: &State) -> Kernel {
        let kernel = st.fitted_kernel.clone().unwrap_or_else(|| {
            self.kernel_for(st.dims.len(), st.aligned.len(), st.alignment_weight)
        });
        between_sub_spaces(&st.switches, st.sub_space_share, kernel)
    }

    /// With `sub_spaces = "estimated"`, every [`SHARE_ESTIMATE_EVERY`] results: the share
    /// the sub-spaces have in common, estimated from the results that differ only in their
    /// switches ([`crate::model_based::sub_spaces`]); the model is conditioned again under
    /// the new kernel when the share moved by more than [`SHARE_STEP`].
    pub(super) fn estimate_sub_spaces(&self, st: &mut State) {
        if self.opts.sub_spaces != SubSpaceShare::Estimated
            || st.switches.is_empty()
            || st.told.len() < st.next_share_estimate
        {
            return;
        }
        st.next_share_estimate = st.told.len() + SHARE_ESTIMATE_EVERY;
        let Some(share) = sub_spaces::estimate_share(&st.told, &st.targets.fitted(), &st.switches)
        else {
            return;
        };
        if (share - st.sub_space_share).abs() <= SHARE_STEP {
            return;
        }
        let was = st.sub_space_share;
        st.sub_space_share = share;
        if st.model.set_kernel(self.current_kernel(st)).is_err() {
            st.sub_space_share = was;
            let _ = st.model.set_kernel(self.current_kernel(st));
        }
    }

    /// At each checkpoint (the initial sample's size, then double the results), the kernel
    /// whose model, fitted to the results before the last checkpoint (the first half of the
    /// initial sample at the first), ranks the results since most like their measured order:
    /// the fixed kernel under each alignment weight, and with `lengthscales = "validated"`
    /// one whose per-coordinate lengthscales are fitted to those same results. The model is
    /// conditioned again under the winner when it changed. (Not the marginal likelihood
    /// between them: with fixed, near-noiseless hyperparameters it favours whatever keeps
    /// the points furthest apart, the largest weight, on every space tried.)
    pub(super) fn choose_kernel(&self, st: &mut State) {
        let weights: &[f64] = if st.aligned.is_empty() {
            &[]
        } else {
            &self.alignment_weights
        };
        // Not with the priors' results as the mean: the candidates are judged and fitted on
        // the results themselves, while such a model fits what the mean leaves (measured:
        // convolution_A100 with the other five GPUs as priors, 0.807 → 0.642 on seeds 0-4).
        let fit =
            self.opts.lengthscales == Lengthscales::Validated && st.model.told_values().is_none();
        if (weights.len() < 2 && !fit) || st.told.len() < st.next_validation {
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
        let score = |kernel: &Kernel| -> Option<f64> {
            let kernel = &between_sub_spaces(&st.switches, st.sub_space_share, kernel.clone());
            let gp = DenseGp::fit(kernel, train_x, train_y).ok()?;
            let means: Vec<f64> = gp.predict(test_x).into_iter().map(|p| p.0).collect();
            Some(rank_correlation(&means, test_y)).filter(|s| s.is_finite())
        };
        // The fixed kernels: the one in use first, so that a tie keeps it.
        let mut fixed: Vec<f64> = if weights.is_empty() {
            vec![st.alignment_weight]
        } else {
            weights.to_vec()
        };
        fixed.sort_by_key(|&w| w != st.alignment_weight || st.fitted_kernel.is_some());
        let mut best: Option<(Option<f64>, f64)> = None;
        if fit && st.fitted_kernel.is_some() {
            // In use: it competes first, refitted to the training results.
            if let Some(k) = self.fitted(train_x, train_y, split)
                && let Some(s) = score(&k)
            {
                best = Some((None, s));
            }
        }
        for &w in &fixed {
            let kernel = self.kernel_for(st.dims.len(), st.aligned.len(), w);
            if let Some(s) = score(&kernel)
                && best.is_none_or(|(_, bs)| s > bs + 1e-9)
            {
                best = Some((Some(w), s));
            }
        }
        if fit
            && st.fitted_kernel.is_none()
            && let Some(k) = self.fitted(train_x, train_y, split)
            && let Some(s) = score(&k)
            && best.is_none_or(|(_, bs)| s > bs + FITTED_MARGIN)
        {
            best = Some((None, s));
        }
        let Some((choice, _)) = best else {
            return;
        };
        let was = (st.alignment_weight, st.fitted_kernel.is_some());
        let kernel = match choice {
            Some(w) => {
                st.alignment_weight = w;
                None
            }
            // Kept or newly chosen, the fitted kernel is fitted again to every result.
            None => {
                let all = n.saturating_sub(VALIDATION_LIMIT);
                self.fitted(&st.told[all..], &ys[all..], n)
            }
        };
        let changed = kernel.is_some() || was != (st.alignment_weight, false);
        st.fitted_kernel = kernel;
        if changed {
            let kernel = self.current_kernel(st);
            if st.model.set_kernel(kernel).is_err() {
                // The factorisation failed under the new kernel: back to the fixed one.
                st.fitted_kernel = None;
                let _ = st.model.set_kernel(self.current_kernel(st));
            }
        }
    }

    /// The kernel with one lengthscale per coordinate, its output scale and noise fitted by
    /// maximum a posteriori (BaCO's priors) to the results `y` at `x`, its random starts
    /// drawn from `seed` (the number of results up to the last of them).
    fn fitted(&self, x: &[Vec<f64>], y: &[f64], seed: usize) -> Option<Kernel> {
        let fitted = fit_hyperparameters(
            self.kernel.kind,
            &self.kernel.metric,
            x,
            y,
            None,
            &FitOptions::default(),
            seed as u64,
        )
        .ok()?;
        Some(Kernel::with_metric(
            self.kernel.kind,
            self.kernel.metric.clone(),
            fitted.hyper,
        ))
    }

    /// At each checkpoint (as the alignment's), whether the priors' mean is kept: the model
    /// fitted to the results before the checkpoint (the first half at the first) with the
    /// mean and the slope those results give, against the same model without it, on how
    /// like their measured order each ranks the results since. Ties keep the mean as it is.
    /// (Where the priors' ranking holds over the whole space but not among the fastest
    /// configurations, as on dedispersion_W6600 with the other GPUs, the mean draws the
    /// search to where the priors were fast; the results since show it.)
    pub(super) fn choose_prior_mean(&self, st: &mut State) {
        if st.told.len() < st.next_prior_validation {
            return;
        }
        let Some(f) = st.model.told_values() else {
            return;
        };
        let n = st.told.len();
        st.next_prior_validation = n * 2;
        let split = n / 2;
        if f.len() != n || split < 3 || n - split < 3 {
            return;
        }
        let ys = st.targets.fitted();
        let from = split.saturating_sub(VALIDATION_LIMIT);
        let kernel = self.current_kernel(st);
        let score = |keep: bool| -> Option<f64> {
            let s = if keep {
                prior_mean::slope(&f[from..split], &ys[from..split])
            } else {
                0.0
            };
            let train: Vec<f64> = (from..split).map(|i| ys[i] - s * f[i]).collect();
            let gp = DenseGp::fit(&kernel, &st.told[from..split], &train).ok()?;
            let means: Vec<f64> = gp
                .predict(&st.told[split..])
                .into_iter()
                .zip(&f[split..])
                .map(|(p, fi)| p.0 + s * fi)
                .collect();
            Some(rank_correlation(&means, &ys[split..])).filter(|r| r.is_finite())
        };
        if let (Some(with), Some(without)) = (score(true), score(false))
            && (with - without).abs() > 1e-9
        {
            st.model.keep(with > without);
        }
    }

    pub(super) fn combination(&self) -> Combination {
        match self.opts.method {
            Method::AdvancedMulti => Combination::AdvancedMulti,
            Method::Multi => Combination::Multi,
            Method::Ei | Method::Poi | Method::Lcb => Combination::Single,
        }
    }

    /// A fresh record of how the acquisition functions of `method` did.
    pub(super) fn portfolio(&self) -> Portfolio {
        Portfolio::new(
            self.combination(),
            self.functions(),
            self.discount,
            self.opts.skip_threshold,
            self.opts.required_improvement,
        )
    }

    pub(super) fn functions(&self) -> Vec<Acquisition> {
        match self.opts.method {
            Method::AdvancedMulti | Method::Multi => self.opts.acquisition_order.clone(),
            Method::Ei => vec![Acquisition::Ei],
            Method::Poi => vec![Acquisition::Poi],
            Method::Lcb => vec![Acquisition::Lcb],
        }
    }

    pub(super) fn init(&self, space: &SearchSpace, history: &History, rng: &mut Rng) -> State {
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
        // The switches' coordinates (positions in `dims`).
        let switches: Vec<usize> = {
            let all = crate::roles::switches(space);
            (0..dims.len())
                .filter(|&i| all.contains(&dims[i]))
                .collect()
        };
        let sub_space_share = match self.opts.sub_spaces {
            SubSpaceShare::Share(s) => s,
            SubSpaceShare::Estimated => 1.0,
        };
        let kernel = between_sub_spaces(
            &switches,
            sub_space_share,
            self.kernel_for(dims.len(), aligned.len(), alignment_weight),
        );
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
        // The priors' results as the mean, over every configuration (keyed by rank).
        let model = match (&self.prior_ranking, &candidates) {
            (Some(ranking), Candidates::All(_)) => PriorMean::guided(model, ranking.clone(), space),
            _ => PriorMean::plain(model),
        };
        let mut state = State {
            encoder,
            switches,
            sub_space_share,
            next_share_estimate: self.opts.initial_samples.max(2),
            dims,
            aligned,
            alignment_weight,
            fitted_kernel: None,
            next_validation: self.opts.initial_samples.max(2),
            next_prior_validation: self.opts.initial_samples.max(2),
            validation_split: 0,
            validations: 0,
            told: Vec::new(),
            model,
            candidates,
            visited: FxHashSet::default(),
            valid: Vec::new(),
            targets: Targets::new(self.opts.transform == Transform::Log),
            objective_rows: Vec::new(),
            since_improvement: 0,
            best: f64::INFINITY,
            pending: Vec::new(),
            portfolio: self.portfolio(),
            initial: VecDeque::new(),
            initial_valid: 0,
            initial_done: false,
            mu_s: 0.0,
            var_s: 0.0,
            sampler: DistinctSampler::new(space.size()),
            initial_weights: match self.opts.initial_sampling {
                InitialSampling::Aligned | InitialSampling::AlignedLhs => space
                    .params()
                    .iter()
                    .map(|p| encoding::aligned_weights(p.values(), self.opts.aligned_power))
                    .collect(),
                _ => Vec::new(),
            },
            notice_given: false,
            rows: Vec::new(),
            prior_rows: Vec::new(),
            prior_ran: Vec::new(),
            prior_failing: FxHashSet::default(),
            prior_checked: (0, 0),
            ran: Vec::new(),
            forest: None,
            orthants: if self.opts.feasibility && self.opts.monotone_failures {
                FailureOrthants::new(space)
            } else {
                None
            },
            footprint: None,
        };
        if self.opts.feasibility && self.opts.footprint {
            state.footprint = Footprint::new(space, &state.encoder, &state.dims);
        }
        for (c, ran) in &self.prior_outcomes {
            if let Some(r) = space.rank(c) {
                state.prior_rows.push(state.forest_row(c));
                state.prior_ran.push(*ran);
                if !ran {
                    state.prior_failing.insert(r);
                }
            }
        }
        // Anything evaluated before (a resumed run) is known already.
        for o in history.observations() {
            if let Some(r) = space.rank(&o.config) {
                state.mark_visited(r);
                state.record(self.opts.feasibility, &o.config, o.value.is_some());
                state.check_prior(r, o.value.is_some());
                if let Some(v) = o.value {
                    self.fit(&mut state, r, &o.config, v, o.variance, &o.objectives);
                }
            }
        }
        state.model.hear(history.observations());
        let n = self.opts.initial_samples.saturating_sub(state.valid.len());
        let sample = match self.opts.initial_sampling {
            InitialSampling::Maximin => space.maximin_latin_hypercube(n, 10, rng),
            InitialSampling::Lhs => space.latin_hypercube(n, rng),
            InitialSampling::AlignedLhs => {
                space.latin_hypercube_weighted(n, &state.initial_weights, rng)
            }
            InitialSampling::Random | InitialSampling::Aligned => Vec::new(),
        };
        state.initial = sample
            .into_iter()
            .filter(|c| !history.contains(c))
            .collect();
        state.initial_valid = state.valid.len();
        state
    }
}

impl Strategy for BayesianOptimization {
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
        self.origins.clear();
        // Initial sample: the Latin hypercube points, then random valid replacements for the
        // failed ones, until enough are valid.
        // `n` is the number of idle workers: proposals still being evaluated do not count.
        let mut passed_over = 0;
        while !st.initial_done && out.len() < n.max(1) {
            let next = match st.initial.pop_front() {
                Some(c) => Some(c),
                None if st.initial_valid + st.pending.len() < self.opts.initial_samples => {
                    st.next_initial(space, rng)
                }
                None => None,
            };
            let Some(c) = next else { break };
            let Some(r) = space.rank(&c) else { continue };
            if st.visited.contains(&r) {
                continue;
            }
            // A draw larger than a failure is passed over, a bounded number of times: where
            // the failures rule out nearly everything, the sample takes what it draws.
            if st.rules_out(&c) && passed_over < PASS_OVER_LIMIT {
                passed_over += 1;
                continue;
            }
            st.mark_visited(r);
            st.pending.push((c.clone(), None));
            self.origins.push((c.clone(), "initial"));
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
                    let (_, vars, _) = predictions(&st.model, &unvisited);
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
        self.choose_kernel(&mut st);
        self.estimate_sub_spaces(&mut st);
        self.choose_prior_mean(&mut st);
        self.refresh_pool(&mut st, space, rng);
        if waiting {
            out = self.propose_believed(&mut st, space, rng, n.max(1));
            self.origins
                .extend(out.iter().map(|c| (c.clone(), "believed")));
            self.state = Some(st);
            return out;
        }
        // ParEGO (without a goal): the round proposes for a scalarisation of the objectives
        // drawn afresh. A goal: its values move with the bests, so the model fits them afresh each round.
        if let Some(goal) = &self.goal {
            st.rescalarise_with(self.opts.transform == Transform::Log, |rows| {
                goal.steer_all(rows)
            });
        } else if self.opts.scalarise == Scalarise::Parego
            && let Some(k) = st.objective_rows.first().map(Vec::len)
        {
            let weights = simplex_weights(k, rng);
            st.rescalarise(&weights);
        }
        // A round: one proposal per active acquisition function.
        let round = self.propose_round(&mut st, space, rng);
        let functions = self.functions();
        let mut dups = Vec::new();
        for (c, a, duplicate) in round {
            // A round's proposal without a function is the stagnation escape's.
            let origin = a.map_or("explore", |a| acquisition_name(functions[a]));
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
            self.origins.push((c.clone(), origin));
            out.push(c);
        }
        // Multi: a duplicate proposal is credited with the observation of the original.
        st.portfolio.proposed(dups);
        // A batch larger than a round.
        if out.len() < n {
            let more = self.propose_believed(&mut st, space, rng, n - out.len());
            self.origins
                .extend(more.iter().map(|c| (c.clone(), "believed")));
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
            let value = self.told_value(&st, o);
            let Some(i) = st.pending.iter().position(|(c, _)| *c == o.config) else {
                // Another worker's evaluation (or a repeat): data all the same, fitted once.
                if let Some(r) = space.rank(&o.config)
                    && !st.visited.contains(&r)
                {
                    st.mark_visited(r);
                    st.record(self.opts.feasibility, &o.config, o.value.is_some());
                    st.check_prior(r, o.value.is_some());
                    if let Some(v) = value {
                        self.fit(&mut st, r, &o.config, v, o.variance, &o.objectives);
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
            if let Some(r) = space.rank(&config) {
                st.check_prior(r, o.value.is_some());
            }
            if let Some(r) = space.rank(&config)
                && let Some(v) = value
            {
                self.fit(&mut st, r, &config, v, o.variance, &o.objectives);
                if af.is_none() && !st.initial_done {
                    st.initial_valid += 1;
                }
            }
            if let Some(a) = af {
                st.portfolio.record(a, value);
            }
        }
        st.model.hear(observations);
        if st.pending.is_empty() {
            let valid = &st.valid;
            st.portfolio.round_done(|| median(valid));
        }
        self.state = Some(st);
    }

    /// With `feasibility` and `prior_failures`, the forest learns from the priors' outcomes
    /// too (`prior_outcomes`).
    /// With `prior_mean` and two or more priors, the surrogate's mean is the priors' results
    /// (`crate::model_based::prior_mean`). Not from a single prior: one other device can
    /// mislead, and has no second to be judged by (measured: with one prior the mean put
    /// two more (target, source) pairs more than 2 SE below cold `auto`; BENCHMARKS.md,
    /// transfer).
    fn set_priors(&mut self, priors: &[ktune_core::MatchedPrior]) {
        if self.opts.feasibility && self.opts.prior_failures {
            self.prior_outcomes = prior_outcomes(priors);
        }
        if self.opts.prior_mean && priors.len() >= 2 {
            self.prior_ranking = Some(PriorRanking::new(priors, PriorTrust::Tau));
        }
    }

    /// The model fits the goal's values, recomputed from every result's objectives before
    /// each round (the session tells each at the bests of its time); ParEGO's scalarisations
    /// give way to it.
    fn set_goal(&mut self, goal: &ktune_core::pareto::Goal) -> bool {
        self.goal = Some(goal.clone());
        true
    }

    /// `initial` (the initial sample), the acquisition function of a round (`ei`, `poi`,
    /// `lcb`), `explore` (the stagnation escape) or `believed` (beyond a round, on
    /// fantasised values).
    fn origin(&self, config: &Configuration) -> Option<String> {
        self.origins
            .iter()
            .find(|(c, _)| c == config)
            .map(|(_, o)| (*o).to_string())
    }

    fn name(&self) -> &str {
        NAME
    }
}

impl BayesianOptimization {
    /// The value an observation is fitted with: with a goal, the goal's value of its
    /// objectives against the results held and it (the next round recomputes every value as
    /// the bests move); otherwise its own.
    fn told_value(&self, st: &State, o: &Observation) -> Option<f64> {
        let v = o.value?;
        let (Some(goal), true) = (&self.goal, o.objectives.len() > 1) else {
            return Some(v);
        };
        let reference = ktune_core::pareto::GoalReference::of(
            st.objective_rows
                .iter()
                .chain([&o.objectives])
                .map(Vec::as_slice),
        );
        Some(goal.steer(&o.objectives, &reference)).filter(|v| v.is_finite())
    }
}

/// At most this many of the priors' failing configurations (and as many running ones) teach
/// the feasibility forest: enough to draw a failing region, few enough that regrowing the
/// forest before each proposal stays cheap.
const PRIOR_ROWS: usize = 200;

/// `kernel` with the correlation between the sub-spaces of `switches` (coordinates) scaled
/// by `share` (1: unchanged).
fn between_sub_spaces(switches: &[usize], share: f64, kernel: Kernel) -> Kernel {
    if share >= 1.0 || switches.is_empty() {
        return kernel;
    }
    kernel.between_sub_spaces(SubSpaces {
        coordinates: switches.to_vec(),
        shared: share,
    })
}

/// With `sub_spaces = "estimated"`, how many results pass between estimates of the share
/// (one pass over the results each).
const SHARE_ESTIMATE_EVERY: usize = 10;

/// How far the estimated share must move before the model is conditioned again under it
/// (a refactorisation each time).
const SHARE_STEP: f64 = 0.1;

/// How many draws of one ask's initial sample may be passed over for being larger than a
/// failure (`monotone_failures`), so that a space whose failures rule out nearly everything
/// still gets its sample.
const PASS_OVER_LIMIT: usize = 1000;

/// The priors' outcomes for the feasibility forest: each configuration they measured, failing
/// where most of the priors that measured it failed; every failing one (evenly thinned to
/// [`PRIOR_ROWS`]) and as many running ones, evenly spaced. None where no prior failed, and
/// none from a single prior: one device's failures are another's successes (across vendors
/// they differ), and one prior has no second to confirm them (measured: with one other GPU
/// as the prior, its failures cost convolution_A100 0.04; BENCHMARKS.md, transfer).
fn prior_outcomes(priors: &[ktune_core::MatchedPrior]) -> Vec<(Configuration, bool)> {
    if priors.len() < 2 {
        return Vec::new();
    }
    let mut share: rustc_hash::FxHashMap<&Configuration, (usize, usize)> = Default::default();
    let mut order = Vec::new();
    for p in priors {
        for (c, v) in &p.observations {
            let e = share.entry(c).or_insert_with(|| {
                order.push(c);
                (0, 0)
            });
            e.0 += usize::from(v.is_some());
            e.1 += 1;
        }
    }
    let (failing, running): (Vec<&Configuration>, Vec<&Configuration>) =
        order.into_iter().partition(|c| {
            let (ran, of) = share[c];
            2 * ran < of
        });
    let thin = |list: Vec<&Configuration>, n: usize| -> Vec<Configuration> {
        let step = list.len().div_ceil(n.max(1)).max(1);
        list.into_iter().step_by(step).take(n).cloned().collect()
    };
    let failing = thin(failing, PRIOR_ROWS);
    if failing.is_empty() {
        return Vec::new();
    }
    let running = thin(running, failing.len());
    failing
        .into_iter()
        .map(|c| (c, false))
        .chain(running.into_iter().map(|c| (c, true)))
        .collect()
}

/// The model as a climb's guide, scoring by one acquisition function
/// ([`BayesianOptimization::promise`]); with `monotone_failures` it rules out the
/// configurations larger than a failure.
pub(crate) struct ModelGuide<'a>(pub(crate) &'a BayesianOptimization, pub(crate) Acquisition);

impl crate::local_search::Guide for ModelGuide<'_> {
    fn promise(&self, space: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>> {
        self.0.promise(space, configs, self.1)
    }

    fn rules_out(&self, config: &[u32]) -> bool {
        self.0.state.as_ref().is_some_and(|st| st.rules_out(config))
    }
}

/// Weights drawn uniformly from the `k`-simplex: normalised standard exponentials.
fn simplex_weights(k: usize, rng: &mut Rng) -> Vec<f64> {
    use rand::RngExt;
    let draws: Vec<f64> = (0..k).map(|_| -(1.0 - rng.random::<f64>()).ln()).collect();
    let sum: f64 = draws.iter().sum();
    draws
        .iter()
        .map(|d| d / sum.max(f64::MIN_POSITIVE))
        .collect()
}

/// An acquisition function's name in traces.
fn acquisition_name(a: Acquisition) -> &'static str {
    match a {
        Acquisition::Ei => "ei",
        Acquisition::Poi => "poi",
        Acquisition::Lcb => "lcb",
    }
}
