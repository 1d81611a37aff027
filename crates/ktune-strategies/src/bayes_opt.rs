//! Bayesian optimisation for discrete, constrained search spaces (Willemsen et al., the BO
//! paper, section III).
//!
//! The surrogate is a Gaussian process over the configurations of the space (Matérn 3/2 with
//! a fixed lengthscale on Kernel Tuner's ε-spaced encoding; parameters with a single value are
//! pruned). Only successful observations are fitted; failed configurations are simply never
//! proposed again. The acquisition function is evaluated on every configuration not yet
//! evaluated, so no proposal is ever invalid or repeated. Because the hyperparameters are
//! fixed, each observation updates the posterior of every candidate incrementally in O(n·m)
//! ([`ktune_model::CandidateGp`]).
//!
//! The search starts with a maximin Latin hypercube sample of 20 valid configurations (failed
//! ones are replaced by random valid configurations until the sample is complete). Then the
//! acquisition functions (EI, PI, LCB by default) take turns; `advanced_multi` (the default)
//! proposes one configuration per evaluation, round-robin, each on the posterior updated with
//! every observation so far (the paper's "one acquisition function per function evaluation";
//! the incremental update makes this cheap), and judges the functions by discounted observation scores
//! (discount 0.75, failed observations counted as the median of the valid ones), drops one that
//! is repeatedly more than 10% worse than the mean and promotes one that is repeatedly 10%
//! better; `multi` (discount 0.65) lets every function propose from the same posterior each
//! round and drops functions that keep proposing the same configuration as another. The
//! exploration factor is the contextual variance of section III-F,
//! `λ = (σ̄² / (μ_s / f⁺)) / σ̄²_s`, or a constant.
//!
//! ## Where ktune departs from the paper (each one an option; all three off = the paper)
//!
//! Measured on the 12 brute-forced spaces of `ktune bench` (50 seeds, BENCHMARKS.md), the
//! paper's defaults lose to multi-start local search on the convolution spaces: there the fast
//! configurations form narrow, non-smooth pockets (e.g. shared memory off *and* a power-of-two
//! block width *and* four-row tiles), the smooth fixed-lengthscale GP predicts them badly, its
//! posterior variance collapses after a few dozen observations, and every acquisition function
//! keeps proposing configurations around one basin. Three changes fix most of that:
//!
//! - `transform = "log"`: the GP fits `ln y`. Run times spread over orders of magnitude (30x
//!   between optimum and median on some spaces), and a few very slow configurations otherwise
//!   dominate the normalised targets. Values of mixed sign fall back to no transform.
//! - `exploration_scale = "spread"`: λ in EI and PI multiplies the standard deviation of the
//!   fitted observations. The paper's λ is in the objective's own units, so it explores much
//!   more on a kernel that takes 1 ms than on one that takes 100 ms (the paper intends the
//!   factor to be independent of "the absolute scale of the observations", section III-F).
//! - `explore_after = 10`: after 10 evaluations in a row without a new best, one proposal goes
//!   to the unevaluated configuration of largest posterior variance (where the model knows
//!   least), then the acquisition functions resume. Of the escapes measured (a random
//!   configuration, LCB with a large λ, largest variance), largest variance scored best.
//!
//! For spaces larger than `candidate_limit` (default 10^6) the acquisition is evaluated each
//! round on a fresh uniform sample of `sample_size` configurations plus the Hamming
//! neighbourhoods of the best observed ones, with an exact GP refitted on the observations.
//!
//! ## References
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian optimization for auto-tuning
//!   GPU kernels", section III and Table I.

use std::collections::VecDeque;

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_model::{CandidateGp, DenseGp, Kernel, KernelKind};
use ktune_space::{Configuration, DistinctSampler, Encoder, Encoding, Neighbourhood, SearchSpace};
use rustc_hash::FxHashSet;
use serde::Deserialize;

use crate::{Entry, OptionDoc, Options, StrategyError, check_range, parse};

const NAME: &str = "bayes_opt";

/// An acquisition function (minimisation forms).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Acquisition {
    /// Expected improvement.
    Ei,
    /// Probability of improvement.
    Poi,
    /// Lower confidence bound.
    Lcb,
}

/// How acquisition functions are combined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Judge the functions by discounted observation scores; skip the worst, promote the best.
    AdvancedMulti,
    /// Skip functions that keep proposing the same configuration as another.
    Multi,
    /// Expected improvement only.
    Ei,
    /// Probability of improvement only.
    Poi,
    /// Lower confidence bound only.
    Lcb,
}

/// The exploration factor λ: the contextual variance, or a constant.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum Exploration {
    /// `"CV"`: contextual variance (section III-F).
    Named(String),
    /// A constant λ.
    Constant(f64),
}

/// How observations are transformed before they are fitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transform {
    /// Fit the observations as they are (the paper, Kernel Tuner).
    None,
    /// Fit `ln y` (`-ln(-y)` for a maximised objective in minimisation form): run times
    /// spread over orders of magnitude, and a few very slow configurations otherwise
    /// dominate the normalised targets. Falls back to `none` if the signs are mixed.
    Log,
}

/// The units of the exploration factor λ in EI and PI (`f⁺ - λ·unit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExplorationScale {
    /// λ in the objective's own units (the paper, Kernel Tuner): the same λ explores more
    /// when the objective is 1 ms than when it is 100 ms.
    Objective,
    /// λ times the standard deviation of the fitted observations: scale-free.
    Spread,
}

/// The options of Bayesian optimisation (defaults: Table I of the BO paper, plus the three
/// measured additions `transform`, `exploration_scale` and `explore_after`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoOptions {
    /// How acquisition functions are combined.
    pub method: Method,
    /// The acquisition functions, in order, for `multi` and `advanced_multi`.
    pub acquisition_order: Vec<Acquisition>,
    /// `"CV"` or a constant.
    pub exploration: Exploration,
    /// The covariance function.
    pub kernel: String,
    /// The lengthscale; by default 1.5 with the contextual variance, else 2.
    pub lengthscale: Option<f64>,
    /// Valid configurations in the initial sample.
    pub initial_samples: usize,
    /// `maximin` (the best of several Latin hypercube samples), `lhs` or `random`.
    pub initial_sampling: String,
    /// Skip threshold.
    pub skip_threshold: usize,
    /// Discount factor; by default 0.65 for multi, 0.75 for advanced multi.
    pub discount_factor: Option<f64>,
    /// Required improvement factor of advanced multi.
    pub required_improvement: f64,
    /// Drop parameters with a single value from the model.
    pub prune: bool,
    /// Spaces larger than this are scored on a sample each round.
    pub candidate_limit: u64,
    /// The uniform sample scored per round in large spaces.
    pub sample_size: usize,
    /// How observations are transformed before the GP fits them.
    pub transform: Transform,
    /// The units of λ in EI and PI.
    pub exploration_scale: ExplorationScale,
    /// After this many evaluations in a row without a new best, propose the candidate of
    /// largest posterior variance once (0: never, as in the paper).
    pub explore_after: usize,
}

impl Default for BoOptions {
    fn default() -> Self {
        BoOptions {
            method: Method::AdvancedMulti,
            acquisition_order: vec![Acquisition::Ei, Acquisition::Poi, Acquisition::Lcb],
            exploration: Exploration::Named("CV".into()),
            kernel: "matern32".into(),
            lengthscale: None,
            initial_samples: 20,
            initial_sampling: "maximin".into(),
            skip_threshold: 5,
            discount_factor: None,
            required_improvement: 0.1,
            prune: true,
            candidate_limit: 1_000_000,
            sample_size: 50_000,
            transform: Transform::Log,
            exploration_scale: ExplorationScale::Spread,
            explore_after: 10,
        }
    }
}

const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "method",
        default: "\"advanced_multi\"",
        doc: "How acquisition functions are combined: \"advanced_multi\", \"multi\", or a single one: \"ei\", \"poi\", \"lcb\".",
    },
    OptionDoc {
        name: "acquisition_order",
        default: "[\"ei\", \"poi\", \"lcb\"]",
        doc: "The acquisition functions of multi and advanced multi, in order.",
    },
    OptionDoc {
        name: "exploration",
        default: "\"CV\"",
        doc: "Exploration factor: \"CV\" (contextual variance, section III-F) or a constant (e.g. 0.01).",
    },
    OptionDoc {
        name: "kernel",
        default: "\"matern32\"",
        doc: "Covariance function: \"matern32\", \"matern52\" or \"rbf\".",
    },
    OptionDoc {
        name: "lengthscale",
        default: "null",
        doc: "Fixed lengthscale, in units of the ε-spaced encoding; null: 1.5 with the contextual variance, else 2 (Table I).",
    },
    OptionDoc {
        name: "initial_samples",
        default: "20",
        doc: "Valid configurations in the initial sample; failed ones are replaced by random valid ones.",
    },
    OptionDoc {
        name: "initial_sampling",
        default: "\"maximin\"",
        doc: "\"maximin\" (best of 10 Latin hypercube samples), \"lhs\" or \"random\".",
    },
    OptionDoc {
        name: "skip_threshold",
        default: "5",
        doc: "Rounds an acquisition function must be worse (or better, or duplicating) before it is skipped (or promoted).",
    },
    OptionDoc {
        name: "discount_factor",
        default: "null",
        doc: "Weight of older observations in the discounted observation score; null: 0.65 for multi, 0.75 for advanced multi (Table I).",
    },
    OptionDoc {
        name: "required_improvement",
        default: "0.1",
        doc: "Advanced multi: how far from the mean discounted score counts as worse or better.",
    },
    OptionDoc {
        name: "prune",
        default: "true",
        doc: "Leave parameters with a single value out of the model.",
    },
    OptionDoc {
        name: "transform",
        default: "\"log\"",
        doc: "Observations as the GP fits them: \"log\" (ln of the objective; mixed signs fall back to \"none\") or \"none\" (the paper).",
    },
    OptionDoc {
        name: "exploration_scale",
        default: "\"spread\"",
        doc: "Units of λ in EI and PI: \"spread\" (times the standard deviation of the fitted observations) or \"objective\" (the objective's own units, as the paper and Kernel Tuner).",
    },
    OptionDoc {
        name: "explore_after",
        default: "10",
        doc: "After this many evaluations without a new best, propose the candidate of largest posterior variance once; 0: never (the paper).",
    },
    OptionDoc {
        name: "candidate_limit",
        default: "1000000",
        doc: "Spaces larger than this are scored on a sample each round (and say so).",
    },
    OptionDoc {
        name: "sample_size",
        default: "50000",
        doc: "Configurations sampled per round in spaces above the candidate limit (plus the neighbourhoods of the best).",
    },
];

fn create(options: &Options) -> Result<Box<dyn Strategy + Send>, StrategyError> {
    let o: BoOptions = parse(NAME, options)?;
    Ok(Box::new(BayesianOptimization::new(o)?))
}

pub(crate) const ENTRY: Entry = Entry {
    name: NAME,
    aliases: &["bo", "bayesian_optimization"],
    about: "Bayesian optimisation for discrete constrained spaces (the BO paper): a Matérn 3/2 GP over every configuration, updated incrementally; EI, PI and LCB combined by advanced multi; contextual-variance exploration. ktune additions (options; see the module docs): the GP fits log run times, λ is scale-free, and 10 evaluations without improvement trigger one proposal of largest posterior variance.",
    options: OPTIONS,
    create,
};

/// Bayesian optimisation with a Gaussian process over the discrete space.
pub struct BayesianOptimization {
    opts: BoOptions,
    kernel: Kernel,
    exploration: Option<f64>,
    discount: f64,
    state: Option<State>,
}

/// The model and the bookkeeping, built on the first `ask` (it needs the space).
struct State {
    encoder: Encoder,
    /// Encoded dimensions kept after pruning.
    dims: Vec<usize>,
    model: Model,
    /// Configurations evaluated (or proposed and pending), by rank.
    visited: FxHashSet<u64>,
    /// Valid observed values, in order (minimisation form).
    valid: Vec<f64>,
    /// Fit `ln |y|` (with the sign of `y`); cleared if the signs turn out mixed.
    log: bool,
    /// Evaluations since the best last improved (counted after the initial sample).
    since_improvement: usize,
    /// The values the model holds, untransformed, in the order it took them.
    fitted_raw: Vec<f64>,
    best: f64,
    /// Proposals of the current round awaiting their results, with the acquisition function
    /// that proposed each (None in the initial sample).
    pending: Vec<(Configuration, Option<usize>)>,
    /// Results of the current round, per acquisition function.
    round: Vec<(usize, Option<f64>)>,
    /// The current round's proposals: which function, and whether it duplicated another.
    round_duplicates: Vec<(usize, bool)>,
    /// Initial sample still to propose.
    initial: VecDeque<Configuration>,
    initial_valid: usize,
    initial_done: bool,
    /// Contextual variance normalisation: initial sample mean and mean variance after it.
    mu_s: f64,
    var_s: f64,
    /// Acquisition functions still in use (indices into `acquisition_order`).
    active: Vec<usize>,
    /// Advanced multi: the position of the next function in the round-robin over `active`.
    cursor: usize,
    /// Observations credited to each acquisition function.
    af_obs: Vec<Vec<f64>>,
    worse: Vec<usize>,
    better: Vec<usize>,
    /// Multi: a sliding window of whether each function proposed a duplicate.
    duplicates: Vec<VecDeque<bool>>,
    sampler: DistinctSampler,
    notice_given: bool,
}

/// The surrogate: incremental over every configuration, or refitted on a sample per round.
enum Model {
    Full(Box<CandidateGp>),
    Sampled { observed: Vec<(Vec<f64>, f64)> },
}

impl BayesianOptimization {
    /// BO with the given options (validated).
    pub fn new(opts: BoOptions) -> Result<BayesianOptimization, StrategyError> {
        let invalid = |option: &str, message: String| StrategyError::Invalid {
            strategy: NAME.into(),
            option: option.into(),
            message,
        };
        let exploration = match &opts.exploration {
            Exploration::Named(s) if s.eq_ignore_ascii_case("cv") => None,
            Exploration::Named(s) => {
                return Err(invalid(
                    "exploration",
                    format!("must be \"CV\" or a number, not \"{s}\""),
                ));
            }
            Exploration::Constant(x) => {
                check_range(NAME, "exploration", *x, 0.0, 1e6)?;
                Some(*x)
            }
        };
        let kind = match opts.kernel.as_str() {
            "matern32" => KernelKind::Matern32,
            "matern52" => KernelKind::Matern52,
            "rbf" => KernelKind::Rbf,
            other => {
                return Err(invalid(
                    "kernel",
                    format!("must be \"matern32\", \"matern52\" or \"rbf\", not \"{other}\""),
                ));
            }
        };
        let lengthscale = opts
            .lengthscale
            .unwrap_or(if exploration.is_none() { 1.5 } else { 2.0 });
        check_range(NAME, "lengthscale", lengthscale, 1e-6, 1e6)?;
        if !matches!(opts.initial_sampling.as_str(), "maximin" | "lhs" | "random") {
            return Err(invalid(
                "initial_sampling",
                format!(
                    "must be \"maximin\", \"lhs\" or \"random\", not \"{}\"",
                    opts.initial_sampling
                ),
            ));
        }
        check_range(NAME, "initial_samples", opts.initial_samples, 1, 100_000)?;
        check_range(NAME, "skip_threshold", opts.skip_threshold, 1, 1_000_000)?;
        check_range(
            NAME,
            "required_improvement",
            opts.required_improvement,
            0.0,
            10.0,
        )?;
        check_range(NAME, "candidate_limit", opts.candidate_limit, 1, u64::MAX)?;
        check_range(NAME, "sample_size", opts.sample_size, 1, 100_000_000)?;
        if opts.acquisition_order.is_empty() {
            return Err(invalid(
                "acquisition_order",
                "must name at least one acquisition function".into(),
            ));
        }
        let discount = opts
            .discount_factor
            .unwrap_or(if opts.method == Method::Multi {
                0.65
            } else {
                0.75
            });
        check_range(NAME, "discount_factor", discount, 0.0, 1.0)?;
        Ok(BayesianOptimization {
            kernel: Kernel::new(kind, lengthscale),
            exploration,
            discount,
            opts,
            state: None,
        })
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
        let model = if space.size() <= self.opts.candidate_limit {
            let mut points = Vec::with_capacity(space.size() as usize * dims.len());
            let mut config = vec![0u32; space.dims()];
            for r in 0..space.size() {
                space.write_configuration(r, &mut config);
                points.extend(dims.iter().map(|&d| encoder.coordinate(d, config[d])));
            }
            match CandidateGp::new(self.kernel.clone(), points, dims.len()) {
                Ok(gp) => Model::Full(Box::new(gp)),
                Err(_) => Model::Sampled {
                    observed: Vec::new(),
                },
            }
        } else {
            Model::Sampled {
                observed: Vec::new(),
            }
        };
        let n_af = self.functions().len();
        let mut state = State {
            encoder,
            dims,
            model,
            visited: FxHashSet::default(),
            valid: Vec::new(),
            log: self.opts.transform == Transform::Log,
            since_improvement: 0,
            fitted_raw: Vec::new(),
            best: f64::INFINITY,
            pending: Vec::new(),
            round: Vec::new(),
            round_duplicates: Vec::new(),
            initial: VecDeque::new(),
            initial_valid: 0,
            initial_done: false,
            mu_s: 0.0,
            var_s: 0.0,
            active: (0..n_af).collect(),
            cursor: 0,
            af_obs: vec![Vec::new(); n_af],
            worse: vec![0; n_af],
            better: vec![0; n_af],
            duplicates: vec![VecDeque::new(); n_af],
            sampler: DistinctSampler::new(space.size()),
            notice_given: false,
        };
        // Anything evaluated before (a resumed run) is known already.
        for o in history.observations() {
            if let Some(r) = space.rank(&o.config) {
                state.mark_visited(r);
                if let Some(v) = o.value {
                    state.fit(r, &o.config, v);
                }
            }
        }
        let n = self.opts.initial_samples.saturating_sub(state.valid.len());
        let sample = match self.opts.initial_sampling.as_str() {
            "maximin" => space.maximin_latin_hypercube(n, 10, rng),
            "lhs" => space.latin_hypercube(n, rng),
            _ => Vec::new(),
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

    fn encode(&self, config: &[u32]) -> Vec<f64> {
        self.dims
            .iter()
            .map(|&d| self.encoder.coordinate(d, config[d]))
            .collect()
    }

    fn fit(&mut self, rank: u64, config: &[u32], value: f64) {
        if value < self.best {
            self.since_improvement = 0;
        }
        self.best = self.best.min(value);
        // The log transform is monotone only while every value has the same sign.
        if self.log && (value == 0.0 || self.valid.first().is_some_and(|&v0| !same_sign(v0, value)))
        {
            self.untransform();
        }
        self.valid.push(value);
        let raw = value;
        let value = self.to_model(value);
        match &mut self.model {
            Model::Full(gp) => {
                // Cannot fail for distinct candidates; if the factor could not be extended, the
                // configuration still counts as visited and the search goes on without it.
                if gp.observe(rank as usize, value).is_ok() {
                    self.fitted_raw.push(raw);
                }
            }
            Model::Sampled { observed } => {
                let x = self
                    .dims
                    .iter()
                    .map(|&d| self.encoder.coordinate(d, config[d]))
                    .collect();
                observed.push((x, value));
                self.fitted_raw.push(raw);
            }
        }
    }

    /// Drops the log transform: refits the model on the values as observed.
    fn untransform(&mut self) {
        self.log = false;
        match &mut self.model {
            Model::Full(gp) => {
                // The same points with finite values: cannot fail where observing did not.
                let _ = gp.replace_values(&self.fitted_raw);
            }
            Model::Sampled { observed } => {
                for ((_, y), &raw) in observed.iter_mut().zip(&self.fitted_raw) {
                    *y = raw;
                }
            }
        }
    }

    /// An observed value as the model fits it.
    fn to_model(&self, v: f64) -> f64 {
        if !self.log {
            v
        } else if v > 0.0 {
            v.ln()
        } else {
            -(-v).ln()
        }
    }

    fn median_valid(&self) -> f64 {
        if self.valid.is_empty() {
            return 0.0;
        }
        let mut v = self.valid.clone();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    }
}

fn same_sign(a: f64, b: f64) -> bool {
    a > 0.0 && b > 0.0 || a < 0.0 && b < 0.0
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

/// Standard normal CDF and PDF (`libm::erfc` for the tails' accuracy).
fn norm_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

fn norm_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The acquisition score of a candidate with posterior `mean` and standard deviation `std`
/// (smaller is better), as Kernel Tuner's minimisation forms: EI and PI against `best - λ`,
/// LCB as `mean - λ std`.
pub fn acquisition_score(af: Acquisition, mean: f64, std: f64, best: f64, lambda: f64) -> f64 {
    match af {
        Acquisition::Ei => {
            let fplus = best - lambda;
            let z = (fplus - mean) / (std + 1e-9);
            -((fplus - mean) * norm_cdf(z) + std * norm_pdf(z))
        }
        Acquisition::Poi => {
            let fplus = best - lambda;
            norm_cdf(-(fplus - mean) / (std + 1e-9))
        }
        Acquisition::Lcb => mean - lambda * std,
    }
}

/// The contextual-variance exploration factor of section III-F:
/// `λ = (mean_var / (mu_s / best)) / var_s`. `mu_s / best` is the improvement of the best
/// observation over the initial sample mean; for values below zero (a maximised objective in
/// minimisation form) the improvement is `best / mu_s`, and when the signs differ it is 1.
pub fn contextual_variance(mean_var: f64, mu_s: f64, best: f64, var_s: f64) -> f64 {
    let improvement = if mu_s > 0.0 && best > 0.0 {
        mu_s / best
    } else if mu_s < 0.0 && best < 0.0 {
        best / mu_s
    } else {
        1.0
    };
    let norm = if var_s > 0.0 { var_s } else { 1.0 };
    (mean_var / improvement) / norm
}

/// Σ_i obs_i · discount^(t−i): recent observations weigh most.
pub fn discounted_score(observations: &[f64], discount: f64) -> f64 {
    let t = observations.len();
    observations
        .iter()
        .enumerate()
        .map(|(i, o)| o * discount.powi((t - 1 - i) as i32))
        .sum()
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
        let functions = self.functions();
        // The candidates and their posterior.
        let (ranks, means, vars): (Vec<u64>, Vec<f64>, Vec<f64>) = match &st.model {
            Model::Full(gp) => {
                let means = gp.means();
                let vars = gp.variances();
                let ranks: Vec<u64> = (0..space.size())
                    .filter(|r| !st.visited.contains(r))
                    .collect();
                let m = ranks.iter().map(|&r| means[r as usize]).collect();
                let v = ranks.iter().map(|&r| vars[r as usize]).collect();
                (ranks, m, v)
            }
            Model::Sampled { observed } => {
                if !st.notice_given {
                    eprintln!(
                        "ktune: bayes_opt: the space has {} configurations (over the candidate limit of {}); each round scores a sample of {} plus the neighbourhoods of the best configurations",
                        space.size(),
                        self.opts.candidate_limit,
                        self.opts.sample_size
                    );
                    st.notice_given = true;
                }
                let mut sample = st.sampler.clone();
                let mut ranks: Vec<u64> = (0..self.opts.sample_size)
                    .map_while(|_| sample.next_rank(rng))
                    .collect();
                // Neighbourhoods of the five best observations.
                let mut best: Vec<&(Vec<f64>, f64)> = observed.iter().collect();
                best.sort_by(|a, b| a.1.total_cmp(&b.1));
                let mut seen: FxHashSet<u64> = ranks.iter().copied().collect();
                for (x, _) in best.into_iter().take(5) {
                    let config = self.decode(st, space, x);
                    for n in space.neighbours(&config, Neighbourhood::Hamming) {
                        if let Some(r) = space.rank(&n)
                            && !st.visited.contains(&r)
                            && seen.insert(r)
                        {
                            ranks.push(r);
                        }
                    }
                }
                let xs: Vec<Vec<f64>> = ranks
                    .iter()
                    .map(|&r| st.encode(&space.configuration(r)))
                    .collect();
                let xo: Vec<Vec<f64>> = observed.iter().map(|(x, _)| x.clone()).collect();
                let yo: Vec<f64> = observed.iter().map(|(_, y)| *y).collect();
                let (m, v) = match DenseGp::fit(&self.kernel, &xo, &yo) {
                    Ok(gp) => gp.predict(&xs).into_iter().unzip(),
                    Err(_) => (vec![0.0; xs.len()], vec![1.0; xs.len()]),
                };
                (ranks, m, v)
            }
        };
        if ranks.is_empty() {
            return Vec::new();
        }
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
        // Stagnation: the model keeps proposing configurations that do not improve on the
        // best, typically around one basin of a non-smooth landscape it describes badly. One
        // proposal where it knows least (largest posterior variance) leaves that basin.
        if self.opts.explore_after > 0 && st.since_improvement >= self.opts.explore_after {
            st.since_improvement = 0;
            let j = (0..vars.len())
                .max_by(|&a, &b| vars[a].total_cmp(&vars[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            return vec![(space.configuration(ranks[j]), None, false)];
        }
        let mut taken: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        // Advanced multi is round-robin: one function per evaluation, each on the posterior
        // updated with every observation so far (cheap here, as the update is incremental).
        let turn: Vec<usize> = if self.opts.method == Method::AdvancedMulti {
            vec![st.active[st.cursor % st.active.len()]]
        } else {
            st.active.clone()
        };
        for &a in &turn {
            let af = functions[a];
            let exclude = self.opts.method == Method::AdvancedMulti;
            let mut arg = usize::MAX;
            let mut arg_score = f64::INFINITY;
            for (j, (&mu, &var)) in means.iter().zip(&vars).enumerate() {
                if exclude && taken.contains(&j) {
                    continue;
                }
                // LCB's λ multiplies the posterior σ, which is in the fitted units already.
                let l = if af == Acquisition::Lcb {
                    lambda
                } else {
                    lambda * scale
                };
                let s = acquisition_score(af, mu, var.max(0.0).sqrt(), best, l);
                // Ties (and NaN) keep the first candidate: deterministic.
                if s < arg_score {
                    arg_score = s;
                    arg = j;
                }
            }
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

    /// After a round's results: the multi and advanced-multi bookkeeping.
    fn judge_round(&self, st: &mut State, duplicates: &[(usize, bool)]) {
        let round = std::mem::take(&mut st.round);
        if round.is_empty() || st.active.len() <= 1 {
            return;
        }
        let median = st.median_valid();
        for &(a, v) in &round {
            st.af_obs[a].push(v.unwrap_or(median));
        }
        match self.opts.method {
            Method::AdvancedMulti => {
                let scores: Vec<f64> = st
                    .af_obs
                    .iter()
                    .map(|o| discounted_score(o, self.discount))
                    .collect();
                let mean =
                    st.active.iter().map(|&a| scores[a]).sum::<f64>() / st.active.len() as f64;
                // Relative to |mean| so the rule also holds for negative (maximised) values.
                let margin = self.opts.required_improvement * mean.abs();
                for &a in &st.active {
                    if scores[a] > mean + margin {
                        st.worse[a] += 1;
                    } else if scores[a] < mean - margin {
                        st.better[a] += 1;
                    }
                }
                let worst_count = st.active.iter().map(|&a| st.worse[a]).max().unwrap_or(0);
                if worst_count >= self.opts.skip_threshold {
                    let worst = st
                        .active
                        .iter()
                        .copied()
                        .filter(|&a| st.worse[a] == worst_count)
                        .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
                        .unwrap_or(st.active[0]);
                    st.active.retain(|&a| a != worst);
                    st.worse.iter_mut().for_each(|c| *c = 0);
                    st.better.iter_mut().for_each(|c| *c = 0);
                } else {
                    let best_count = st.active.iter().map(|&a| st.better[a]).max().unwrap_or(0);
                    if best_count >= self.opts.skip_threshold {
                        let best = st
                            .active
                            .iter()
                            .copied()
                            .filter(|&a| st.better[a] == best_count)
                            .min_by(|&a, &b| scores[a].total_cmp(&scores[b]))
                            .unwrap_or(st.active[0]);
                        st.active = vec![best];
                    }
                }
            }
            Method::Multi => {
                for &(a, dup) in duplicates {
                    let w = &mut st.duplicates[a];
                    w.push_back(dup);
                    if w.len() > self.opts.skip_threshold {
                        w.pop_front();
                    }
                }
                let candidates: Vec<usize> = st
                    .active
                    .iter()
                    .copied()
                    .filter(|&a| {
                        st.duplicates[a].iter().filter(|&&d| d).count() >= self.opts.skip_threshold
                    })
                    .collect();
                if candidates.len() > 1 {
                    let keep = candidates
                        .iter()
                        .copied()
                        .min_by(|&a, &b| {
                            discounted_score(&st.af_obs[a], self.discount)
                                .total_cmp(&discounted_score(&st.af_obs[b], self.discount))
                        })
                        .unwrap_or(candidates[0]);
                    st.duplicates[keep].clear();
                    st.active.retain(|a| *a == keep || !candidates.contains(a));
                }
            }
            _ => {}
        }
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
        while !st.initial_done && out.len() < n && st.pending.len() + out.len() < n.max(1) {
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
        if !out.is_empty() || !st.pending.is_empty() {
            self.state = Some(st);
            return out;
        }
        if !st.initial_done {
            st.initial_done = true;
            st.mu_s = if st.valid.is_empty() {
                0.0
            } else {
                st.valid.iter().sum::<f64>() / st.valid.len() as f64
            };
            st.var_s = match &st.model {
                Model::Full(gp) => {
                    let vars = gp.variances();
                    let unvisited: Vec<f64> = (0..space.size())
                        .filter(|r| !st.visited.contains(r))
                        .map(|r| vars[r as usize])
                        .collect();
                    if unvisited.is_empty() {
                        1.0
                    } else {
                        unvisited.iter().sum::<f64>() / unvisited.len() as f64
                    }
                }
                Model::Sampled { .. } => 1.0,
            };
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
        st.round_duplicates = dups;
        self.state = Some(st);
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        let Some(mut st) = self.state.take() else {
            return;
        };
        for o in observations {
            let Some(i) = st.pending.iter().position(|(c, _)| *c == o.config) else {
                continue;
            };
            if st.initial_done {
                st.since_improvement += 1;
            }
            let (config, af) = st.pending.swap_remove(i);
            if let Some(r) = space.rank(&config)
                && let Some(v) = o.value
            {
                st.fit(r, &config, v);
                if af.is_none() && !st.initial_done {
                    st.initial_valid += 1;
                }
            }
            if let Some(a) = af {
                st.round.push((a, o.value));
            }
        }
        if self.opts.method == Method::AdvancedMulti {
            if st.pending.is_empty() && !st.round.is_empty() {
                st.cursor += 1;
                if st.cursor >= st.active.len() {
                    st.cursor = 0;
                    st.round_duplicates.clear();
                    self.judge_round(&mut st, &[]);
                }
            }
        } else if st.pending.is_empty() && !st.round.is_empty() {
            let dups = std::mem::take(&mut st.round_duplicates);
            // Multi: duplicates get the observation of the function they duplicated.
            let mut round = st.round.clone();
            for (k, &(a, dup)) in dups.iter().enumerate() {
                if dup {
                    let original = dups[..k].iter().rev().find(|(_, d)| !d).map(|(o, _)| *o);
                    if let Some(v) =
                        original.and_then(|o| round.iter().find(|(x, _)| *x == o).map(|(_, v)| *v))
                    {
                        round.push((a, v));
                    }
                }
            }
            st.round = round;
            self.judge_round(&mut st, &dups);
        }
        self.state = Some(st);
    }
}

#[cfg(test)]
mod tests;
