//! The options of `bayes_opt`, as written in a spec (`bayes_opt:key=value` or a
//! `[strategy]` table), with their defaults and documentation.

use ktune_model::KernelKind;
use ktune_model::acquisition::Acquisition;
use serde::Deserialize;

use crate::OptionDoc;
use crate::surrogate::{self, SurrogateOptions};

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
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Exploration {
    /// `"CV"` (any case): contextual variance (section III-F).
    ContextualVariance,
    /// A constant λ.
    Constant(f64),
}

impl<'de> Deserialize<'de> for Exploration {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_name(
            d,
            "CV",
            Exploration::Constant,
            Exploration::ContextualVariance,
        )
    }
}

/// How much the model weighs alignment (how many times 2 divides an integer parameter's
/// value): a fixed weight, or `"validated"`: chosen on held-out results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Alignment {
    /// The alignment coordinates span `[0, weight]` (0: none).
    Weight(f64),
    /// `"validated"` (any case): at the initial sample's size and every doubling of the
    /// results, the weight among 0, 0.25, 0.5 and 1 whose model, fitted to the results before
    /// the last checkpoint, ranks those since best.
    Validated,
}

impl<'de> Deserialize<'de> for Alignment {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_name(d, "validated", Alignment::Weight, Alignment::Validated)
    }
}

/// The model's correlation between configurations whose switches differ, as a share of the
/// stationary kernel's: fixed, or `"estimated"` from the results.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SubSpaceShare {
    /// This share throughout (1: stationary).
    Share(f64),
    /// `"estimated"` (any case): from the results that differ only in their switches
    /// ([`crate::model_based::sub_spaces`]), again every few results.
    Estimated,
}

impl<'de> Deserialize<'de> for SubSpaceShare {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        number_or_name(
            d,
            "estimated",
            SubSpaceShare::Share,
            SubSpaceShare::Estimated,
        )
    }
}

/// An option that is a number or one name (in any case): `number(x)` or `named`.
fn number_or_name<'de, D: serde::Deserializer<'de>, T>(
    d: D,
    name: &str,
    number: fn(f64) -> T,
    named: T,
) -> Result<T, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Number(x) => Ok(number(x.as_f64().unwrap_or(f64::NAN))),
        serde_json::Value::String(s) if s.eq_ignore_ascii_case(name) => Ok(named),
        _ => Err(serde::de::Error::custom(format!(
            "must be a number or {name:?}"
        ))),
    }
}

/// How the initial sample is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InitialSampling {
    /// The best of 10 Latin hypercube samples by their smallest distance.
    Maximin,
    /// One Latin hypercube sample.
    Lhs,
    /// Uniformly random valid configurations.
    Random,
    /// Random valid configurations, each value of a parameter whose alignment varies out of
    /// step with its value weighted by `1 / q^aligned_power` for its odd part `q`
    /// ([`encoding::aligned_weights`](crate::model_based::encoding::aligned_weights)): 64 and
    /// 128 more often than 48 or 112.
    Aligned,
    /// A Latin hypercube over the same weights: each parameter's values split into strata
    /// by their weighted shares (uniform where `Aligned` is), so every value comes up about
    /// as often as its weight says, paired at random with the other parameters'.
    AlignedLhs,
}

impl crate::options::Choice for InitialSampling {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("maximin", InitialSampling::Maximin),
        ("lhs", InitialSampling::Lhs),
        ("random", InitialSampling::Random),
        ("aligned", InitialSampling::Aligned),
        ("aligned_lhs", InitialSampling::AlignedLhs),
    ];
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

/// The GP's lengthscales: fixed (the paper's one lengthscale for every coordinate), or
/// also fitted per coordinate and kept where the fit predicts held-out results better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lengthscales {
    /// One fixed lengthscale (`lengthscale`) for every coordinate.
    Fixed,
    /// At every checkpoint of the alignment's validation (the initial sample's size, then
    /// each doubling of the results), a kernel with one lengthscale per coordinate (and
    /// its output scale and noise) fitted by maximum a posteriori, as `baco` fits its own,
    /// competes with the fixed ones on how well it ranks the results since the last
    /// checkpoint; the model uses the winner.
    Validated,
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

/// What the model fits where a study has several objectives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalarise {
    /// The first objective (the study's own), as with one.
    First,
    /// ParEGO (Knowles 2006): before each round, every result's objectives are normalised to
    /// `[0, 1]` over the results so far and combined by the augmented Chebyshev function
    /// `max_j λ_j f_j + 0.05 Σ_j λ_j f_j` with weights `λ` drawn uniformly from the simplex;
    /// the model fits that and proposes for it, so the rounds spread over the Pareto front.
    Parego,
}

/// How a batch is proposed: when more configurations are asked for than one round of the
/// acquisition functions gives, or while earlier proposals are still being evaluated (several
/// workers), each further proposal is made on the model told the pending configurations at
/// fantasised values, so that the batch spreads out instead of repeating one maximiser.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Batch {
    /// The kriging believer: a pending configuration is believed to take the model's
    /// posterior mean there (the mean is unchanged, its variance collapses).
    Believer,
    /// The constant liar: every pending configuration is said to equal the best value so
    /// far (optimistic: the region around it looks already exploited).
    Liar,
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
    #[serde(deserialize_with = "crate::options::choice")]
    pub kernel: KernelKind,
    /// The lengthscale; by default 1.5 with the contextual variance, else 2.
    pub lengthscale: Option<f64>,
    /// Valid configurations in the initial sample.
    pub initial_samples: usize,
    /// `maximin` (the best of several Latin hypercube samples), `lhs` or `random`.
    #[serde(deserialize_with = "crate::options::choice")]
    pub initial_sampling: InitialSampling,
    /// With `aligned` sampling: how strongly values with small odd parts are preferred
    /// (0: uniform).
    pub aligned_power: f64,
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
    /// Rounds a sample is kept in large spaces (its posterior updated with each observation)
    /// before a fresh one is drawn.
    pub sample_rounds: usize,
    /// Above the candidate limit: the best candidates of each acquisition function that
    /// start a hill climb over their neighbours (0: none).
    pub climb_starts: usize,
    /// MiB the incremental GP's cross-covariances may take before the model moves to a
    /// sample of the space.
    pub model_memory: f64,
    /// How observations are transformed before the GP fits them.
    pub transform: Transform,
    /// The units of λ in EI and PI.
    pub exploration_scale: ExplorationScale,
    /// After this many evaluations in a row without a new best, propose the candidate of
    /// largest posterior variance once (0: never, as in the paper).
    pub explore_after: usize,
    /// How proposals beyond one round are made (batches, parallel workers).
    pub batch: Batch,
    /// With several objectives: what the model fits.
    pub scalarise: Scalarise,
    /// Learn hidden constraints from failed configurations with BaCO's random forest and
    /// weight the acquisition by the probability that a configuration runs.
    pub feasibility: bool,
    /// The largest minimum-feasibility limit ε_f, drawn each round from `{0, t/10, ..., t}`.
    pub feasibility_threshold: f64,
    /// With `feasibility`: a failed configuration rules out those at least as large in every
    /// numeric parameter and alike in the others (`crate::model_based::monotone`), until
    /// one such runs.
    pub monotone_failures: bool,
    /// With `feasibility`: the forest also sees each configuration's footprint, the log of
    /// the product of its sizes (`crate::model_based::footprint`).
    pub footprint: bool,
    /// With `feasibility` and priors: the forest learns from the priors' failures too.
    pub prior_failures: bool,
    /// With two or more priors: the surrogate's mean is their results (`crate::model_based::prior_mean`).
    pub prior_mean: bool,
    /// For each integer parameter whose alignment varies out of step with its value, the model
    /// gets a coordinate for how many times 2 divides the value
    /// ([`crate::encoding::alignment`]), weighted as this says.
    pub alignment: Alignment,
    /// Whether a kernel with fitted per-coordinate lengthscales competes with the fixed one.
    pub lengthscales: Lengthscales,
    /// The kernel's correlation between the sub-spaces of the space's switches, as a share
    /// of the stationary kernel's (1: stationary; [`ktune_model::SubSpaces`]), or estimated.
    pub sub_spaces: SubSpaceShare,
    /// The surrogate (the GP above, or the clustered GP) and its options: keys of their own
    /// in a spec, split off before the rest is parsed.
    #[serde(skip)]
    pub surrogate: SurrogateOptions,
}

impl Default for BoOptions {
    fn default() -> Self {
        BoOptions {
            method: Method::AdvancedMulti,
            acquisition_order: vec![Acquisition::Ei, Acquisition::Poi, Acquisition::Lcb],
            exploration: Exploration::ContextualVariance,
            kernel: KernelKind::Matern32,
            lengthscale: None,
            initial_samples: 20,
            initial_sampling: InitialSampling::Maximin,
            aligned_power: 2.0,
            skip_threshold: 5,
            discount_factor: None,
            required_improvement: 0.1,
            prune: true,
            candidate_limit: 1_000_000,
            sample_size: 50_000,
            sample_rounds: 10,
            climb_starts: 3,
            model_memory: 2048.0,
            transform: Transform::Log,
            exploration_scale: ExplorationScale::Spread,
            explore_after: 10,
            batch: Batch::Believer,
            scalarise: Scalarise::First,
            feasibility: false,
            feasibility_threshold: 0.1,
            monotone_failures: false,
            footprint: false,
            prior_failures: true,
            prior_mean: true,
            alignment: Alignment::Weight(0.0),
            lengthscales: Lengthscales::Fixed,
            sub_spaces: SubSpaceShare::Share(1.0),
            surrogate: SurrogateOptions::default(),
        }
    }
}

pub(super) const OPTIONS: &[OptionDoc] =
    &surrogate::with_docs::<{ OWN.len() + surrogate::DOCS.len() }>(OWN);

/// The strategy's own options (the surrogate's follow them).
const OWN: &[OptionDoc] = &[
    OptionDoc::new("method", "\"advanced_multi\"", "How acquisition functions are combined: \"advanced_multi\", \"multi\", or a single one: \"ei\", \"poi\", \"lcb\"."),
    OptionDoc::new("acquisition_order", "[\"ei\", \"poi\", \"lcb\"]", "The acquisition functions of multi and advanced multi, in order."),
    OptionDoc::new("exploration", "\"CV\"", "Exploration factor: \"CV\" (contextual variance, section III-F) or a constant (e.g. 0.01).").real(0.0, 1e6),
    OptionDoc::new("kernel", "\"matern32\"", "Covariance function: \"matern32\", \"matern52\" or \"rbf\"."),
    OptionDoc::new("lengthscale", "null", "Fixed lengthscale, in units of the ε-spaced encoding; null: 1.5 with the contextual variance, else 2 (Table I).").real(1e-6, 1e6),
    OptionDoc::new("initial_samples", "20", "Valid configurations in the initial sample; failed ones are replaced by random valid ones.").count(1, 100_000),
    OptionDoc::new("initial_sampling", "\"maximin\"", "\"maximin\" (best of 10 Latin hypercube samples), \"lhs\", \"random\" or \"aligned\" (random, each value of an integer parameter whose alignment varies out of step with its value weighted by 1 / q^aligned_power for its odd part q: block sizes of 64 or 128 more often than 48 or 112, tiles of 2 or 4 more often than 3) or \"aligned_lhs\" (a Latin hypercube over the same weights: each value about as often as its weight says, every parameter's values spread over the sample)."),
    OptionDoc::new("aligned_power", "2", "With initial_sampling = \"aligned\": how strongly values with small odd parts are preferred (0: uniform).").real(0.0, 100.0),
    OptionDoc::new("skip_threshold", "5", "Rounds an acquisition function must be worse (or better, or duplicating) before it is skipped (or promoted).").count(1, 1_000_000),
    OptionDoc::new("discount_factor", "null", "Weight of older observations in the discounted observation score; null: 0.65 for multi, 0.75 for advanced multi (Table I).").real(0.0, 1.0),
    OptionDoc::new("required_improvement", "0.1", "Advanced multi: how far from the mean discounted score counts as worse or better.").real(0.0, 10.0),
    OptionDoc::new("prune", "true", "Leave parameters with a single value out of the model."),
    OptionDoc::new("transform", "\"log\"", "Observations as the GP fits them: \"log\" (ln of the objective; mixed signs fall back to \"none\") or \"none\" (the paper)."),
    OptionDoc::new("exploration_scale", "\"spread\"", "Units of λ in EI and PI: \"spread\" (times the standard deviation of the fitted observations) or \"objective\" (the objective's own units, as the paper and Kernel Tuner)."),
    OptionDoc::new("explore_after", "10", "After this many evaluations without a new best, propose the candidate of largest posterior variance once; 0: never (the paper)."),
    OptionDoc::new("batch", "\"believer\"", "Proposals beyond one round (a batch, or asks while other workers still measure) are made on the model told the pending configurations at fantasised values: \"believer\" (kriging believer: the posterior mean) or \"liar\" (constant liar: the best value so far)."),
    OptionDoc::new("scalarise", "\"first\"", "With several objectives: what the model fits: \"first\" (the first objective, as with one) or \"parego\" (ParEGO: before each round every result's objectives are normalised to [0, 1] and combined by the augmented Chebyshev function with weights drawn uniformly from the simplex, so that the rounds spread over the Pareto front). A study's goal (`ktune tune --goal`), when it has one, replaces both: the model fits the goal's values, recomputed before each round."),
    OptionDoc::new("alignment", "0", "For each integer parameter whose alignment varies out of step with its value (16, 32, 48, 64: 64 is aligned, 48 is not), the model gets a coordinate for how many times 2 divides the value, spanning [0, alignment] (0: none), or \"validated\": the weight among 0, 0.25, 0.5 and 1 whose model, fitted to the results before a checkpoint, ranks the results since most like their measured order, chosen again at the initial sample's size and every doubling of the results. Fast GPU configurations tend to sit at aligned sizes; where they do not, the validation turns the coordinate down.").real(0.0, 100.0),
    OptionDoc::new("sub_spaces", "1", "The kernel's correlation between configurations whose switches (parameters of two values, or not numbers) differ, as a share of what the stationary kernel gives (1: stationary): each combination of switches gets a landscape of its own beside the part they share (intrinsic coregionalisation), so that where shared memory is on the best tile may differ from where it is off. \"estimated\": from the results that differ only in their switches, every 10 results from the initial sample's size on (a moment estimate: 1 minus their mean squared difference over twice the results' variance, starting from 4 pairs with no difference; 0.25 at least).").real(0.01, 1.0),
    OptionDoc::new("lengthscales", "\"fixed\"", "\"fixed\": one lengthscale for every coordinate (`lengthscale`); \"validated\": at the alignment's checkpoints (the initial sample's size, then each doubling of the results) a kernel with one lengthscale per coordinate, fitted by maximum a posteriori as `baco` fits its own, competes with the fixed kernel on how well, fitted to the results before the last checkpoint, it ranks those since; the model uses the winner. Not with two or more priors' results as the model's mean (`prior_mean`)."),
    OptionDoc::new("feasibility", "false", "Learn hidden constraints (failed configurations) with BaCO's random forest: EI and PI are weighted by the probability of running, and configurations below ε_f are not proposed (the paper's GP never sees failures)."),
    OptionDoc::new("feasibility_threshold", "0.1", "With `feasibility`: configurations less likely to run than ε_f are skipped; ε_f is drawn each round from {0, t/10, ..., t}.").real(0.0, 1.0),
    OptionDoc::new("monotone_failures", "false", "With `feasibility`: a failed configuration rules out every configuration at least as large in each numeric parameter of three or more values and equal in the others (resources grow with block and tile sizes), in the model's proposals, its initial sample and a guided climb, until one of them runs."),
    OptionDoc::new("footprint", "false", "With `feasibility`: the forest also sees each configuration's footprint, the log of the product of its sizes (numeric parameters of three or more positive values): resources grow with it, so one failure already marks what is larger overall."),
    OptionDoc::new("prior_failures", "true", "With `feasibility` and two or more priors (earlier studies): the forest learns from the priors' outcomes too (their failing configurations and as many running ones, at most 200 each), weighing 20 evaluations at first, half as much once this study has 20 of its own and nothing once it has 380, scaled by the share of the configurations the priors say fail that failed here too."),
    OptionDoc::new("prior_mean", "true", "With two or more priors (earlier studies), over every configuration of the space: the GP's mean is the priors' results at each configuration (standardised per prior on the log scale, weighted as the guard against misleading priors says), times the least-squares slope of this study's results on them (never negative; 0 before three results), so that the model predicts what the priors measured where this study has no result nearby. At the alignment's checkpoints (the initial sample's size, then every doubling of the results) the model with and without it is fitted to the earlier half of the results and the one that ranks the later half better is kept."),
    OptionDoc::new("candidate_limit", "1000000", "Spaces larger than this are scored on a sample each round (and say so).").count(1, u64::MAX),
    OptionDoc::new("sample_size", "50000", "Configurations sampled in spaces above the candidate limit and scored each round (plus the neighbourhoods of the best).").count(1, 100_000_000),
    OptionDoc::new("sample_rounds", "10", "Above the candidate limit: rounds a sample is kept, its posterior updated with each observation in O(n·sample_size), before a fresh one is drawn and the model rebuilt over it in O(n²·sample_size) (1: a fresh sample every round).").count(1, 1_000_000),
    OptionDoc::new("climb_starts", "3", "Above the candidate limit: from this many of the best candidates of each acquisition function, a hill climb over the neighbours (BaCO's local search, on the exact posterior) looks for a better configuration outside the sample (0: none).").count(0, 1000),
    OptionDoc::new("model_memory", "2048", "MiB the model may hold: its incremental GP keeps 8 bytes per observation and configuration, so before an observation would take it past this over every configuration of the space, the model goes on with a sample, as above the candidate limit (and says so); the sample is made smaller if it has to.").real(0.001, 1e9),
];
