//! `auto`, the default strategy: Bayesian optimisation that learns from failures, and a local
//! search that refines the best configuration found, sharing one budget through OpenTuner's
//! AUC bandit ([`crate::bandit`]).
//!
//! Why a portfolio: measured on the 12 shared spaces (BENCHMARKS.md, issues 5, 12, 13 and 20)
//! no single strategy is best everywhere. The GP strategies win where the landscape is smooth
//! on a log scale (the dedispersion spaces: `bayes_opt` 0.95-0.97 where local searches score
//! 0.1-0.8), the local searches where the fast configurations form narrow pockets that a
//! smooth GP does not predict (convolution_A4000/A6000: MLS and annealing 0.6-0.76, `bayes_opt`
//! 0.27-0.29), and only BaCO's feasibility forest keeps the search out of failing regions
//! next to the optimum. So `auto` runs two strategies on one history:
//!
//! - **model**: `bayes_opt` with the feasibility forest (`feasibility = true`) and a small
//!   initial sample (`initial_samples`), so the model starts early. The sample is not
//!   uniform (`initial_sampling = "aligned_lhs"`): a value `2^k · q` (`q` odd) of an integer
//!   parameter whose alignment varies out of step with its value weighs `1 / q^4`, so block
//!   sizes of 64 or 128 and tiles of 2 or 4 come up far more often than 48, 112 or 3, and
//!   the sample is a Latin hypercube over those weights, so each parameter's values spread
//!   over it. Its kernel's lengthscales are validated (`lengthscales = "validated"`): one
//!   fitted per coordinate replaces the fixed one where it ranks the results better
//!   (except where two or more priors' results are the model's mean).
//! - **local**: multi-start local search that jumps to the study's best configuration
//!   whenever another strategy found a better one (`mls` with `follow_best = true`), so the
//!   neighbourhood of every new best is climbed to a local optimum. The model orders the
//!   climb's neighbours (`guide`): the climb tries first the one with the largest expected
//!   improvement, and last those the feasibility forest rules out. After 4 neighbours
//!   without an improvement (`climb_patience`) the climb takes its configuration for a local
//!   optimum, and from there climbs again from the study's best with a few random parameters
//!   changed (`kicks`, an iterated local search around the best), or, for half of the kicks
//!   (`switch_kicks`), with one or two of its switches changed into the combination the
//!   study has tried least.
//!
//! Each proposal comes from the strategy the bandit chooses: the one whose recent proposals
//! most often became the new best. (`schedule = "stagnation"` instead lets the model propose
//! until `patience` results in a row bring no new best, then the other members in turn:
//! measured below the bandit on the mean, above it at small budgets and on the smooth
//! spaces.) Every strategy is told every observation, so the model fits the climb's
//! evaluations and the climb starts from the model's finds.
//!
//! Which of the two suits a run is judged from its first results (`smooth_below`): where the
//! first 5 valid results spread little on a log scale (a standard deviation below 0.35, as on
//! the smooth dedispersion spaces, against 0.44-1.40 on the convolution spaces with their
//! narrow pockets), the model's initial sample ends there and the stagnation schedule takes
//! over; elsewhere the sample goes on to 10 and the bandit shares the budget.
//!
//! The model sees alignment (`alignment = "validated"`): each integer parameter whose factors
//! of 2 vary out of step with its value (block sizes 16, 32, 48, ... 256; tiles 1 to 8) gets a
//! coordinate for them, since fast GPU configurations sit at aligned sizes (64 and 128, not
//! 48 or 80; tiles of 2 or 4, not 3), a pattern no distance on the value can express. Its
//! weight (0, 0.25, 0.5 or 1) is chosen on held-out results at every doubling of the results:
//! the weight whose model, fitted to the results before the last choice, ranks those since
//! best. Measured on the shared spaces: 0.603 → 0.643 (50 seeds), and both A100 spaces, where
//! `auto` lost to the genetic algorithm and annealing, are no longer lost (BENCHMARKS.md).
//!
//! Why kicks and patience: on convolution_A4000, 17 of 50 runs sat at 120 evaluations in one
//! trap (1.24 × the optimum) from which every single change is worse and three parameters
//! must change at once; the climb, which proved each local optimum by evaluating its whole
//! neighbourhood (tens of evaluations) and then restarted from random samples, rarely left
//! it. Cutting the proof short and perturbing the best instead of restarting: 0.643 → 0.655
//! on the shared spaces (50 seeds), convolution_A4000 0.473 → 0.616, and no space is lost by
//! more than two standard errors (BENCHMARKS.md). Kicks change 1 or 2 of the 10 parameters
//! (`kick_size = 0.2`); up to 3 (0.3) scored the same on the mean and lost convolution_A100.
//!
//! Why switch kicks (issue 50): the switches (parameters of two values, or not numbers:
//! `use_shmem`, `read_only`, a loop order) split a space into sub-spaces with landscapes of
//! their own, and a trap can hold the search in one of them. On convolution_A100 22 of 50
//! runs ended at one configuration with shared memory and the read-only cache off (1.47 ×
//! the optimum), having spent 1-15 of 120 evaluations in the sub-space with both on, which
//! holds every configuration within 1.5 × the optimum; a random kick of one or two of seven
//! parameters flips exactly those two once in 42 kicks. Half of the kicks now move the best
//! into the switch combination evaluated least (a frequency memory, as tabu search's), keeping
//! its sizes: on the failure-heavy development spaces 0.614 → 0.695 (100 seeds), and on the
//! 12 shared spaces see docs/benchmarks/auto.md, "Switch kicks". All kicks of this kind
//! (`switch_kicks = 1`) scored the same there and lost on the compiler-tuning stand-ins.
//!
//! Why an aligned initial sample (issue 50): the first evaluations decide the spaces whose
//! window is short (random search reaches the target in 12-46 evaluations on the AMD
//! convolution spaces), and a uniform sample can only match random search there. Drawn this
//! way, 20 configurations alone score 0.44 above uniform ones on the 12 shared spaces, and
//! better on every one of them; in `auto` the mean score rose from 0.731 to 0.839 on seeds
//! 0-9 (0.305 → 0.504 at 20 evaluations), with powers 3 to 8 alike, and held on seeds 50-99
//! (docs/benchmarks/auto.md, issue 50). Where every value is aligned already (powers of two)
//! the sample is uniform.
//!
//! Why a Latin hypercube over the weights and validated lengthscales (issue 50, fifteenth
//! session): on spaces where every parameter has 2 to 4 values, as in compiler tuning (CPU
//! matrix multiplications with tile sizes, unrolling and loop orders; an OpenMP MTTKRP with a
//! loop permutation, chunk and schedule; BENCHMARKS.md), the aligned weights are uniform and
//! the fixed lengthscale spans the whole encoding, so `auto` scored below `baco`, at
//! 10 evaluations what random search scores. With both: 0.346 → 0.548 on six such spaces
//! (seeds 0-49; 0.350 → 0.401 on seeds 50-99, where `baco` scores 0.465, ahead on the CPU
//! matrix multiplications; at 10 evaluations no better than before on those seeds), and on
//! the 12 shared spaces 0.841 → 0.848 (seeds 0-49) and 0.836 → 0.845 (seeds 50-99).
//!
//! Why a failure rules out what is larger (`monotone_failures`, seventeenth session): a
//! kernel's shared memory, registers and threads grow with its block and tile sizes, so a
//! configuration at least as large as a failing one in every size, and alike otherwise, fails
//! 64-100% of the time on the shared convolution spaces (base rate 3-11%). The model does not
//! propose such a configuration, its initial sample and the climbs it guides pass over them,
//! until one of them runs ([`crate::model_based::monotone`]). Measured: failed evaluations
//! 21.3% → 19.1% on the failure-heavy development spaces at the same score (0.572 / 0.571,
//! 50 seeds), 1.6% → 1.5% on the 12 shared spaces at the same score (0.850, 20 seeds).
//!
//! Why the forest sees the footprint (`footprint`, nineteenth session): what a kernel asks
//! for grows with the product of its block and tile sizes, not with any one of them, and a
//! forest on the parameters alone draws that surface only from failures on several of its
//! sides. With the log of the product as one more feature
//! ([`crate::model_based::footprint`]), failed evaluations on the failure-heavy development
//! spaces fell from 19% to 10% (seeds 0-49 and 50-99 alike; their failures are a threshold
//! on such a product by construction, so this overstates the real spaces), convolution_A6000
//! 10.1% → 8.4% and convolution_W7800 4.6% → 4.4%, and the score rose there (0.571 → 0.601,
//! 0.589 → 0.614); on the 12 shared spaces the score is the same (0.850 / 0.847 on seeds
//! 0-19, 0.838 / 0.845 on 20-39) with fewer failures (docs/benchmarks/auto.md).
//!
//! Why the forest's largest ε_f is 0.4 (`feasibility_threshold`, nineteenth session; 0.1
//! before, BaCO's): with the footprint the forest is right often enough to be trusted more.
//! Without it, 0.3 and 0.5 cost score (sixteenth session: 0.584 → 0.556 / 0.528 on the
//! development spaces); with it, 0.4 fails 9.9% → 8.1% of the evaluations there at the same
//! score (0.593 → 0.598 over seeds 0-149, chosen among 0.2-0.5 on seeds 0-99; seeds 100-149
//! alone 0.581 → 0.567), convolution_W7800 3.4% → 3.0% at budget 120 (1.2 × its base rate is
//! 3.2%), and on the 12 shared spaces -0.004 ± 0.004 paired (40 seeds) with 1.0% → 0.9%
//! failed.
//!
//! Why the model no longer proposes where it knows least after 10 results without a new
//! best (`explore_after = 0`, nineteenth session; `bayes_opt`'s escape): traced with `ktune
//! bench --trace-configs`, that proposal lands in the corner of the largest blocks and
//! tiles, and on the failure-heavy development spaces 7 of its 1304 proposals were a new
//! best while 45% of them failed on convolution_W7800. Without it, paired over the same
//! seeds, the score is the same on the 12 shared spaces (+0.000 ± 0.005, 40 seeds) and on
//! the four real convolution spaces at budget 120 (-0.003 ± 0.005, 100 seeds), a little
//! higher on the compiler-tuning stand-ins (0.548 → 0.557, 0.401 → 0.406), and a third
//! fewer evaluations fail on the 12 shared spaces (convolution_W7800 4.3-4.9% → 2.0-2.8%,
//! base rate 2.7%). It was worth having before the aligned initial sample (issue 18:
//! convolution_A6000 0.694 → 0.484 without it, 10 seeds).
//!
//! Why the model's correlation between the switches' sub-spaces is estimated from the
//! results (`sub_spaces = "estimated"`, twenty-second session): correlating configurations
//! with different switches less lets the best tile move with shared memory, but a fixed
//! share did not suit every space. At 0.5 ([`ktune_model::SubSpaces`], twenty-first session)
//! the failure-heavy development spaces gained (0.695 → 0.703) and the 12 shared spaces lost
//! -0.015 ± 0.006 paired, every dedispersion space, whose switches (the tile strides) barely
//! change the landscape; chosen per run by the validation's ranking or by the marginal
//! likelihood it kept none of the gains or lost the same. The moment estimate from results
//! that differ only in their switches ([`crate::model_based::sub_spaces`]) stays near 1 on
//! dedispersion and falls to 0.25-0.72 on the NVIDIA convolution spaces: on the development
//! spaces 0.695 → 0.742 (unseen seeds 0.663 → 0.719), on the 12 shared spaces even (-0.001 ±
//! 0.003 and +0.001 ± 0.004 paired on seeds 0-49 and 50-99), on the compiler-tuning
//! stand-ins 0.523 → 0.550 (docs/benchmarks/auto.md).
//!
//! Why the model keeps its three acquisition functions to the end of the budget
//! (`exploit_after = 1`, `smooth_exploit_after = 1`; twenty-third and twenty-fourth
//! sessions): proposing by expected improvement alone once half the budget is spent (what
//! exploring teaches has ever fewer evaluations left to pay off) lost 0.03-0.04 on the
//! compiler-tuning stand-ins at budget 60 and raised convolution_W7800's failed share when
//! done on every landscape. Done only on a landscape judged smooth, and for at most the last
//! 60 evaluations (`exploit_last`; from the middle of a budget of 609 it lost 0.015 ± 0.007
//! on dedispersion_A100), it left every measured set even, and gained on
//! dedispersion_A6000_limit at budget 120 on the seeds it was chosen on (+0.013 ± 0.006 and
//! +0.007 ± 0.009) but not clearly on unseen ones (+0.007 ± 0.005 and -0.004 ± 0.010 over
//! 200 seeds each). Its spread across seeds there, which looked within issue 50's bar on the
//! first two seed sets, was not on the others, with or without it (docs/benchmarks/auto.md).
//! Both are options.
//!
//! The bandit's weight `c = 0.2` and window of 50 results (OpenTuner's 0.05 and 500) were
//! chosen with `ktune bench tune-strategy auto` and a 10-seed comparison on the shared spaces
//! (BENCHMARKS.md, issue 18): a short memory follows the phases of a run, the model's early
//! finds, then the climbs.

use ktune_core::{History, MatchedPrior, Observation, Rng, Strategy};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rustc_hash::FxHashMap;
use serde::Deserialize;

use crate::bandit::AucBandit;
use crate::local_search::{Guide, MultiStartLocalSearch, Perturbation};
use crate::model_based::baco::CheckedBaco;
use crate::model_based::bayes_opt::{
    Alignment, BayesianOptimization, BoOptions, CheckedBo, InitialSampling, Lengthscales, Method,
    ModelGuide, SubSpaceShare,
};
use crate::model_based::tpe::{Tpe, TpeOptions};
use crate::sampling::prior_rank::PriorRank;
use crate::transfer::PriorTrust;
use crate::{Baco, BacoOptions};
use crate::{Entry, Options, StrategyError, parse};
use ktune_model::acquisition::Acquisition;
use options::OPTIONS;

const NAME: &str = "auto";

/// The model's index among the members (the local search, when present, is 1).
const MODEL: usize = 0;

/// The model-based member of `auto`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Model {
    /// `bayes_opt` with the feasibility forest.
    BayesOpt,
    /// `baco`.
    Baco,
}

/// How `auto` shares the budget among its members.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Schedule {
    /// OpenTuner's AUC bandit picks the member of every proposal.
    Bandit,
    /// The model proposes until `patience` of its results in a row bring no new best, then
    /// the next other member until the same happens to it, then the model again.
    Stagnation,
}

/// How the model orders the local search's neighbours.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClimbGuide {
    /// By expected improvement over the best.
    Ei,
    /// By probability of improving on the best.
    Poi,
    /// By posterior mean.
    Mean,
    /// Not at all: the climb's random order.
    None,
}

impl ClimbGuide {
    fn acquisition(self) -> Option<Acquisition> {
        match self {
            ClimbGuide::Ei => Some(Acquisition::Ei),
            ClimbGuide::Poi => Some(Acquisition::Poi),
            // LCB with no exploration term is the posterior mean.
            ClimbGuide::Mean => Some(Acquisition::Lcb),
            ClimbGuide::None => None,
        }
    }
}

/// A strategy beside the model (`local`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Local {
    /// The climb from the study's best (`mls`, guided by the model).
    Mls,
    /// `simulated_annealing` with its defaults.
    Annealing,
    /// `genetic_algorithm` with its defaults.
    Genetic,
    /// `pso` with its defaults.
    Pso,
    /// `tpe` with its defaults.
    Tpe,
}

impl crate::options::Choice for Local {
    const NAMES: &'static [(&'static str, Self)] = &[
        ("mls", Local::Mls),
        ("annealing", Local::Annealing),
        ("genetic", Local::Genetic),
        ("pso", Local::Pso),
        ("tpe", Local::Tpe),
    ];
}

/// The strategies beside the model, written joined by `+` (`"mls+annealing"`), or `"none"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locals(pub Vec<Local>);

impl std::str::FromStr for Locals {
    type Err = String;
    fn from_str(text: &str) -> Result<Locals, String> {
        use crate::options::Choice;
        text.split('+')
            .map(str::trim)
            .filter(|name| !name.eq_ignore_ascii_case("none"))
            .map(|name| {
                Local::from_name(name).map_err(|_| {
                    format!(
                        "names \"{name}\"; give \"mls\", \"annealing\", \"genetic\", \"pso\", \"tpe\" or \"none\", joined by +"
                    )
                })
            })
            .collect::<Result<_, _>>()
            .map(Locals)
    }
}

impl<'de> Deserialize<'de> for Locals {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// The options of `auto`.
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AutoOptions {
    /// The model: `bayes_opt` (fixed hyperparameters, incremental, about 1 ms a proposal) or
    /// `baco` (fitted hyperparameters, 5-30 ms a proposal).
    pub model: Model,
    /// Valid configurations the model samples before it proposes.
    pub initial_samples: usize,
    /// How: `random` (uniform), `maximin` or `lhs` (`bayes_opt`'s; `baco` samples uniformly).
    #[serde(deserialize_with = "crate::options::choice")]
    pub initial_sampling: InitialSampling,
    /// With `aligned` sampling: how strongly values with small odd parts are preferred.
    pub aligned_power: f64,
    /// Learn failing regions with the feasibility forest.
    pub feasibility: bool,
    /// The largest ε_f of the forest (the model's `feasibility_threshold`).
    pub feasibility_threshold: f64,
    /// A failure rules out the configurations larger in every size (the model's
    /// `monotone_failures`, in its proposals and the climbs it guides).
    pub monotone_failures: bool,
    /// The forest also sees each configuration's footprint (the model's `footprint`).
    pub footprint: bool,
    /// With priors: the forest learns from their failures too (`bayes_opt`'s option).
    pub prior_failures: bool,
    /// With two or more priors: the model's mean is their results (`bayes_opt`'s option).
    pub prior_mean: bool,
    /// The model's stagnation escape (`bayes_opt`'s `explore_after`; 0: off).
    pub explore_after: usize,
    /// The strategies beside the model, joined by `+`: `mls` (the climb from the study's
    /// best), `annealing`, `genetic`, `pso`, `tpe`, or `none`.
    pub local: Locals,
    /// Random configurations the local search samples to start a climb when the study's
    /// best is a local optimum already.
    pub local_start_samples: usize,
    /// How the members share the budget.
    pub schedule: Schedule,
    /// With `schedule = "stagnation"`: results in a row without a new best before the turn
    /// passes.
    pub patience: usize,
    /// The bandit's exploration weight.
    pub c: f64,
    /// The bandit's window, in results.
    pub window: usize,
    /// The order in which the local search (`mls`) tries neighbours, by the model (with
    /// `model = "bayes_opt"`).
    pub guide: ClimbGuide,
    /// The local search restarts from `local_start_samples` random configurations at a
    /// local optimum (false: it waits for the model's next best).
    pub restarts: bool,
    /// At a local optimum, the local search first climbs from this many perturbations of the
    /// study's best configuration (per new best), each changing 1 to
    /// `max(1, ⌊kick_size · parameters⌋)` random parameters.
    pub kicks: usize,
    /// The largest share of the parameters a kick changes.
    pub kick_size: f64,
    /// The share of the kicks that move the study's best into the combination of the
    /// space's switches the study has evaluated least.
    pub switch_kicks: f64,
    /// Neighbours the climb proposes from one configuration before it counts as a local
    /// optimum (0: all of them).
    pub climb_patience: usize,
    /// After `probe` valid results of the initial sample: when the standard deviation of
    /// their logarithms is below this (a smooth landscape), the initial sample ends there and
    /// the members share the budget by `smooth_schedule` (0: never).
    pub smooth_below: f64,
    /// The valid results the landscape is judged on.
    pub probe: usize,
    /// The schedule on a smooth landscape.
    pub smooth_schedule: Schedule,
    /// The share of the evaluation budget after which the model (`bayes_opt`) proposes by
    /// expected improvement alone (1: never).
    pub exploit_after: f64,
    /// The same on a landscape judged smooth (see `smooth_below`).
    pub smooth_exploit_after: f64,
    /// The most evaluations at the end of the budget the model exploits for (0: no limit).
    pub exploit_last: usize,
    /// How the model weighs how many times 2 divides each integer parameter's value
    /// (`bayes_opt`'s `alignment`).
    pub alignment: Alignment,
    /// Whether the model's kernel with fitted per-coordinate lengthscales competes with the
    /// fixed one (`bayes_opt`'s `lengthscales`).
    pub lengthscales: Lengthscales,
    /// The model's correlation between the sub-spaces of the space's switches (`bayes_opt`'s
    /// `sub_spaces`).
    pub sub_spaces: SubSpaceShare,
    /// With two or more priors: the proposals taken from their order before the other
    /// members propose.
    pub prior_first: usize,
    /// With one prior alone: the same count (a lone prior that ranks this study badly costs
    /// every one of them, where the initial sample would not).
    pub prior_first_alone: usize,
    /// With one prior alone: whether its order stays a member of the bandit after those
    /// first proposals.
    pub prior_member_alone: bool,
    /// With priors: how each is weighted by how well it ranks this study's results.
    pub prior_trust: PriorTrust,
    /// With priors: whether the priors' first proposals come before the model's initial
    /// sample or count as part of it.
    pub prior_sample: PriorSample,
    /// With several priors: after this many of their joint picks, each trusted prior's own
    /// best (0: only the joint order).
    pub prior_each_best: usize,
    /// With several priors: the constant of the reciprocal rank fusion that orders their
    /// joint picks (0: their mean rank).
    pub prior_fusion: usize,
    /// With several priors: the least gap in a prior's ranks for a pair of this study's
    /// results to count for or against it.
    pub prior_gap: f64,
    /// With several objectives: the share of the proposals after the first `startup` of
    /// the multi-objective TPE that come from it (0: the members alone, on the first
    /// objective).
    pub front_share: f64,
    /// With several objectives: what the model fits (`bayes_opt`'s option).
    pub scalarise: crate::model_based::bayes_opt::Scalarise,
}

/// Where `auto`'s first proposals from the priors stand to the model's initial sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PriorSample {
    /// Before it: the model's uniform sample, and the other members' wait, follow them.
    Before,
    /// Part of it: the model starts as early as without priors (what the priors proposed
    /// is its sample, biased to where they agree). With the priors' results as the model's
    /// mean (`prior_mean`) the model needs no uniform sample to see the landscape.
    Within,
    /// Within it with two or more priors, before it with one. One other device can mislead
    /// (across vendors), and the model's uniform sample is what shows it; several that agree
    /// with each other rarely do (measured: with one prior, `within` put four (target,
    /// source) pairs more than 2 SE below cold `auto`, `before` two; BENCHMARKS.md, transfer).
    #[default]
    Several,
}

impl Default for AutoOptions {
    fn default() -> Self {
        AutoOptions {
            model: Model::BayesOpt,
            initial_samples: 10,
            initial_sampling: InitialSampling::AlignedLhs,
            aligned_power: 4.0,
            feasibility: true,
            feasibility_threshold: 0.4,
            monotone_failures: true,
            footprint: true,
            prior_failures: true,
            prior_mean: true,
            explore_after: 0,
            local: Locals(vec![Local::Mls]),
            local_start_samples: 20,
            schedule: Schedule::Bandit,
            patience: 10,
            c: 0.2,
            window: 50,
            guide: ClimbGuide::Ei,
            restarts: true,
            kicks: 30,
            kick_size: 0.2,
            switch_kicks: 0.5,
            climb_patience: 4,
            smooth_below: 0.35,
            probe: 5,
            smooth_schedule: Schedule::Stagnation,
            exploit_after: 1.0,
            smooth_exploit_after: 1.0,
            exploit_last: 60,
            alignment: Alignment::Validated,
            lengthscales: Lengthscales::Validated,
            sub_spaces: SubSpaceShare::Estimated,
            prior_first: 10,
            prior_first_alone: 1,
            prior_member_alone: true,
            prior_trust: PriorTrust::Evidence,
            prior_sample: PriorSample::Several,
            prior_each_best: 0,
            prior_fusion: 300,
            prior_gap: 0.0,
            front_share: 0.5,
            scalarise: crate::model_based::bayes_opt::Scalarise::First,
        }
    }
}

/// One of `auto`'s strategies: the model and the climb are kept as themselves so that the
/// model can order the climb's neighbours.
enum Member {
    BayesOpt(Box<BayesianOptimization>),
    Climb(Box<MultiStartLocalSearch>),
    Other(Box<dyn Strategy + Send>),
}

impl Member {
    fn strategy(&mut self) -> &mut dyn Strategy {
        match self {
            Member::BayesOpt(b) => b.as_mut(),
            Member::Climb(m) => m.as_mut(),
            Member::Other(s) => s.as_mut(),
        }
    }

    fn strategy_ref(&self) -> &dyn Strategy {
        match self {
            Member::BayesOpt(b) => b.as_ref(),
            Member::Climb(m) => m.as_ref(),
            Member::Other(s) => s.as_ref(),
        }
    }

    /// The member's proposals; a climb is ordered by `guide` when one is given.
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
        guide: Option<&dyn Guide>,
    ) -> Vec<Configuration> {
        match self {
            Member::Climb(m) => m.ask_guided(space, history, n, rng, guide),
            other => other.strategy().ask(space, history, n, rng),
        }
    }
}

/// Strategies sharing one budget through an AUC bandit.
pub struct Auto {
    members: Vec<Member>,
    /// The member that proposes in the priors' order, when the study has priors.
    prior_arm: Option<usize>,
    /// With two or more priors: the proposals from their order before any other member's.
    prior_first: usize,
    /// With one prior: the same.
    prior_first_alone: usize,
    /// With one prior: whether its order is a member after its first proposals.
    prior_member_alone: bool,
    /// How many of those this study has proposed.
    prior_proposed: usize,
    /// How far the priors are trusted.
    prior_trust: PriorTrust,
    /// Whether the priors' first proposals lengthen the model's initial sample.
    prior_sample: PriorSample,
    /// After how many joint picks each trusted prior's own best comes (0: never).
    prior_each_best: usize,
    /// The reciprocal rank fusion constant of the priors' order (0: their mean rank).
    prior_fusion: usize,
    /// The least gap in a prior's ranks for a pair of results to judge it.
    prior_gap: f64,
    /// With several objectives: the multi-objective TPE, the share of proposals it makes,
    /// and the proposals made by it and by the members since it started.
    front: Tpe,
    front_share: f64,
    front_asked: usize,
    /// Whether the study seeks one configuration by a goal (the front is not spread).
    seeks_goal: bool,
    members_asked: usize,
    /// The number of priors the study has.
    priors: usize,
    /// The configurations the priors' member proposed (not a sample of the landscape).
    from_priors: rustc_hash::FxHashSet<Configuration>,
    /// The bandit's weight and window (to make it again when a member joins).
    c: f64,
    window: usize,
    guide: Option<Acquisition>,
    smooth_below: f64,
    probe: usize,
    smooth_schedule: Schedule,
    /// Whether the landscape was judged smooth (`None`: not yet, or never).
    smooth: Option<bool>,
    /// The share of the budget after which the model exploits (on a landscape not judged
    /// smooth, and on one judged smooth), the most evaluations it exploits for (0: no limit),
    /// the budget in evaluations (`None`: the study has none), and whether it has begun.
    exploit_after: f64,
    smooth_exploit_after: f64,
    exploit_last: usize,
    budget: Option<usize>,
    exploiting: bool,
    bandit: AucBandit,
    /// Members that had nothing more to propose.
    exhausted: Vec<bool>,
    /// Proposals awaiting their results, and the member that made each.
    pending: FxHashMap<Configuration, usize>,
    /// The multi-objective TPE's proposals of the last `ask` (for [`Strategy::origin`]).
    front_last: Vec<Configuration>,
    /// The best value told so far (minimisation form).
    best: Option<f64>,
    /// Evaluations before the local search may propose.
    warm_up: usize,
    schedule: Schedule,
    patience: usize,
    /// With the stagnation schedule: whose turn it is, and its results in a row without a
    /// new best.
    turn: usize,
    stale: usize,
    local_turns: usize,
}

/// The model of `auto`, checked.
#[derive(Clone, Debug)]
enum CheckedModel {
    BayesOpt(Box<CheckedBo>),
    Baco(Box<CheckedBaco>),
}

/// `auto`'s options after [`AutoOptions::check`], with its members' options checked too.
#[derive(Clone, Debug)]
pub(crate) struct CheckedAuto {
    o: AutoOptions,
    model: CheckedModel,
    /// The members beside the model other than the climb.
    others: Vec<(Local, crate::CheckedStrategy)>,
}

impl AutoOptions {
    /// Checks every option once, its members' options with them.
    pub(crate) fn check(&self) -> Result<CheckedAuto, StrategyError> {
        let o = self;
        let model = match o.model {
            Model::BayesOpt => CheckedModel::BayesOpt(Box::new(
                BoOptions {
                    initial_samples: o.initial_samples,
                    initial_sampling: o.initial_sampling,
                    aligned_power: o.aligned_power,
                    feasibility: o.feasibility,
                    feasibility_threshold: o.feasibility_threshold,
                    monotone_failures: o.monotone_failures,
                    footprint: o.footprint,
                    prior_failures: o.prior_failures,
                    prior_mean: o.prior_mean,
                    explore_after: o.explore_after,
                    alignment: o.alignment,
                    lengthscales: o.lengthscales,
                    sub_spaces: o.sub_spaces,
                    scalarise: o.scalarise,
                    ..BoOptions::default()
                }
                .check()?,
            )),
            Model::Baco => CheckedModel::Baco(Box::new(
                BacoOptions {
                    initial_samples: o.initial_samples,
                    feasibility: o.feasibility,
                    feasibility_threshold: o.feasibility_threshold,
                    ..BacoOptions::default()
                }
                .resolve(),
            )),
        };
        let mut others = Vec::new();
        for &local in &o.local.0 {
            let name = match local {
                Local::Mls => continue,
                Local::Annealing => "simulated_annealing",
                Local::Genetic => "genetic_algorithm",
                Local::Pso => "pso",
                Local::Tpe => "tpe",
            };
            others.push((local, crate::CheckedStrategy::new(name, &Options::new())?));
        }
        Ok(CheckedAuto {
            o: o.clone(),
            model,
            others,
        })
    }
}

impl Auto {
    /// `auto` with the given options, which must lie in their documented ranges (the tests'
    /// way in: strategies are created through the registry, [`crate::create`]).
    #[cfg(test)]
    pub(crate) fn new(o: &AutoOptions) -> Result<Auto, StrategyError> {
        Ok(Auto::checked(&o.check()?))
    }

    /// `auto` with checked options: it cannot fail.
    pub(crate) fn checked(c: &CheckedAuto) -> Auto {
        let o = &c.o;
        let model = match &c.model {
            CheckedModel::BayesOpt(bo) => {
                Member::BayesOpt(Box::new(BayesianOptimization::checked(bo.as_ref().clone())))
            }
            CheckedModel::Baco(baco) => {
                Member::Other(Box::new(Baco::checked(baco.as_ref().clone())))
            }
        };
        let mut members = vec![model];
        let mut others = c.others.iter();
        for &local in &o.local.0 {
            members.push(match local {
                Local::Mls => Member::Climb(Box::new(
                    MultiStartLocalSearch::new(
                        Neighbourhood::Hamming,
                        true,
                        true,
                        o.local_start_samples,
                    )
                    .following_best(true)
                    .restarting(o.restarts)
                    .patient(o.climb_patience)
                    .kicking(
                        o.kicks,
                        Perturbation::Random {
                            fraction: o.kick_size,
                        },
                    )
                    .switching(o.switch_kicks),
                )),
                _ => match others.next() {
                    Some((_, strategy)) => Member::Other(strategy.build()),
                    None => unreachable!("every member beside the climb was checked"),
                },
            });
        }
        Auto {
            bandit: AucBandit::new(members.len(), o.c, o.window),
            prior_arm: None,
            prior_first: o.prior_first,
            prior_first_alone: o.prior_first_alone,
            prior_member_alone: o.prior_member_alone,
            prior_proposed: 0,
            prior_trust: o.prior_trust,
            prior_sample: o.prior_sample,
            prior_each_best: o.prior_each_best,
            prior_fusion: o.prior_fusion,
            prior_gap: o.prior_gap,
            front: Tpe::checked(TpeOptions::default()),
            front_share: o.front_share,
            front_asked: 0,
            seeks_goal: false,
            members_asked: 0,
            priors: 0,
            from_priors: Default::default(),
            c: o.c,
            window: o.window,
            exhausted: vec![false; members.len()],
            members,
            guide: o.guide.acquisition(),
            smooth_below: o.smooth_below,
            probe: o.probe,
            smooth_schedule: o.smooth_schedule,
            smooth: None,
            exploit_after: o.exploit_after,
            smooth_exploit_after: o.smooth_exploit_after,
            exploit_last: o.exploit_last,
            budget: None,
            exploiting: false,
            pending: FxHashMap::default(),
            front_last: Vec::new(),
            best: None,
            warm_up: o.initial_samples,
            schedule: o.schedule,
            patience: o.patience,
            turn: MODEL,
            stale: 0,
            local_turns: 0,
        }
    }
}

impl Auto {
    /// Once `probe` results are valid: a landscape whose results spread little on a log scale
    /// is smooth (the dedispersion spaces: a standard deviation of 0.08-0.31 over all their
    /// configurations, the convolution spaces 0.44-1.40), and the model predicts it well from
    /// few samples, so its initial sample ends and the schedule changes.
    fn judge_landscape(&mut self, history: &History) {
        // The priors' proposals are the best of other tasks, not a sample of this landscape.
        let values: Vec<f64> = history
            .observations()
            .iter()
            .filter(|o| !self.from_priors.contains(&o.config))
            .filter_map(|o| o.value)
            .filter(|v| v.is_finite())
            .collect();
        if values.len() < self.probe {
            return;
        }
        let same_sign = values.iter().all(|&v| v > 0.0) || values.iter().all(|&v| v < 0.0);
        let logs: Vec<f64> = values.iter().map(|v| v.abs().ln()).collect();
        let mean = logs.iter().sum::<f64>() / logs.len() as f64;
        let sd = (logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / logs.len() as f64).sqrt();
        let smooth = same_sign && sd < self.smooth_below;
        self.smooth = Some(smooth);
        if smooth {
            if let Member::BayesOpt(b) = &mut self.members[MODEL] {
                b.shorten_initial_sample(values.len());
            }
            self.warm_up = self.warm_up.min(history.len());
            self.schedule = self.smooth_schedule;
        }
    }

    /// Once `exploit_after` of the budget is spent (`smooth_exploit_after` on a landscape
    /// judged smooth), and at most `exploit_last` evaluations are left, the model proposes by
    /// expected improvement alone: what it learns from exploring has ever fewer evaluations
    /// left to pay off.
    fn exploit_late(&mut self, history: &History) {
        let Some(budget) = self.budget else {
            return;
        };
        if self.exploiting {
            return;
        }
        let share = if self.smooth == Some(true) {
            self.smooth_exploit_after
        } else {
            self.exploit_after
        };
        // With a long budget, exploring still pays long after its middle.
        let cap = match self.exploit_last {
            0 => 0,
            last => budget.saturating_sub(last),
        };
        let from = (share * budget as f64).max(cap as f64);
        if share >= 1.0 || (history.len() as f64) < from {
            return;
        }
        self.exploiting = true;
        if let Member::BayesOpt(b) = &mut self.members[MODEL] {
            b.set_method(Method::Ei);
        }
    }

    /// The stagnation schedule's next turn: from the model to the next other member (in
    /// order, once the initial sample is done), from any other member back to the model.
    fn pass_turn(&mut self, warm: bool) {
        self.stale = 0;
        if self.turn != MODEL || !warm || self.members.len() == 1 {
            self.turn = MODEL;
            return;
        }
        self.local_turns += 1;
        self.turn = 1 + (self.local_turns - 1) % (self.members.len() - 1);
    }
}

impl Strategy for Auto {
    /// With several objectives, after the multi-objective TPE's random start, a share of
    /// the proposals comes from it: the members chase the first objective (they are told
    /// its values) and find the front's fast end, the TPE, whose good group is the first
    /// Pareto fronts, spreads along the front. Measured in BENCHMARKS.md (multi-objective).
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        self.exploit_late(history);
        let several = self.front_share > 0.0
            && !self.seeks_goal
            && history.len() >= TpeOptions::default().startup
            && history
                .observations()
                .iter()
                .any(|o| o.objectives.len() > 1);
        self.front_last.clear();
        if !several {
            return self.ask_members(space, history, n, rng);
        }
        let mut to_front = 0;
        for _ in 0..n.max(1) {
            let total = (self.front_asked + to_front + self.members_asked + 1) as f64;
            if ((self.front_asked + to_front) as f64) < self.front_share * total {
                to_front += 1;
            } else {
                self.members_asked += 1;
            }
        }
        let mut out = self.front.ask(space, history, to_front.min(n), rng);
        self.front_last.clone_from(&out);
        self.front_asked += to_front;
        let rest = n.saturating_sub(out.len());
        if rest > 0 {
            let more = self.ask_members(space, history, rest, rng);
            for c in more {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        for o in observations {
            let improved = o.value.is_some_and(|v| self.best.is_none_or(|b| v < b));
            if improved {
                self.best = o.value;
            }
            if let Some(arm) = self.pending.remove(&o.config) {
                self.bandit.record(arm, improved);
                if arm == self.turn {
                    self.stale = if improved { 0 } else { self.stale + 1 };
                    if self.stale >= self.patience {
                        self.pass_turn(true);
                    }
                }
            }
        }
        for m in &mut self.members {
            m.strategy().tell(space, observations);
        }
        // What one member has told another may give the exhausted one something to do
        // (the local search climbs from a new best).
        self.exhausted.iter_mut().for_each(|e| *e = false);
    }

    fn set_budget(&mut self, evaluations: Option<usize>) {
        self.budget = evaluations;
        for m in &mut self.members {
            m.strategy().set_budget(evaluations);
        }
    }

    /// The model seeks the goal (it fits the goal's values, recomputed each round; the climb
    /// follows the first objective, ordering its neighbours by the model); the
    /// multi-objective TPE, which spreads proposals along the whole front, no longer takes a
    /// share of them. Measured on the H100's time and energy (BENCHMARKS.md, several
    /// objectives): the goal's own configuration found in more runs at 20-100 evaluations
    /// than by `auto` without the goal.
    fn set_goal(&mut self, goal: &ktune_core::pareto::Goal) -> bool {
        let mut sought = false;
        for m in &mut self.members {
            sought |= m.strategy().set_goal(goal);
        }
        self.seeks_goal = sought;
        sought
    }

    /// With priors, a member joins that proposes in their order (each prior weighted by how
    /// well it ranks the study's results); the others are told them too.
    fn set_priors(&mut self, priors: &[MatchedPrior]) {
        for m in &mut self.members {
            m.strategy().set_priors(priors);
        }
        if priors.is_empty() || self.prior_arm.is_some() {
            return;
        }
        self.priors = priors.len();
        let each_best = (self.prior_each_best > 0).then_some(self.prior_each_best);
        let mut member = PriorRank::guarded_only(
            self.prior_trust,
            each_best,
            self.prior_fusion,
            self.prior_gap,
        );
        member.set_priors(priors);
        self.members.push(Member::Other(Box::new(member)));
        self.exhausted.push(false);
        self.prior_arm = Some(self.members.len() - 1);
        self.bandit = AucBandit::new(self.members.len(), self.c, self.window);
    }

    /// The member that proposed it (`model`, `prior`, the local member's name: `mls`, or
    /// `front`, the multi-objective TPE), and what within it proposed it where the member
    /// says (`model/ei`, `model/initial`).
    fn origin(&self, config: &Configuration) -> Option<String> {
        if self.front_last.contains(config) {
            return Some("front".to_string());
        }
        let &arm = self.pending.get(config)?;
        let member = &self.members[arm];
        let name = if arm == MODEL {
            "model"
        } else if Some(arm) == self.prior_arm {
            "prior"
        } else {
            member.strategy_ref().name()
        };
        Some(match member.strategy_ref().origin(config) {
            Some(inner) => format!("{name}/{inner}"),
            None => name.to_string(),
        })
    }

    fn name(&self) -> &str {
        NAME
    }
}

impl Auto {
    fn ask_members(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        if self.smooth.is_none() && self.smooth_below > 0.0 {
            self.judge_landscape(history);
        }
        let mut out: Vec<Configuration> = Vec::new();
        // With priors, their best-ranked configurations come first: on the shared spaces
        // the order of five other GPUs' ranks alone scores more at 20 evaluations (0.76)
        // than cold `auto` at 120 (0.53; BENCHMARKS.md, transfer); the guard stops it
        // where the first results disagree with it.
        if let Some(arm) = self.prior_arm {
            let limit = if self.priors == 1 {
                self.prior_first_alone
            } else {
                self.prior_first
            };
            // Counted in this study's proposals, not its results: the session may have
            // measured the default configuration first, which would take a lone prior's
            // only turn. A resumed study with more results than that has had its turn.
            let first = if history.len() > limit {
                0
            } else {
                limit.saturating_sub(self.prior_proposed)
            };
            if first > 0 && !self.exhausted[arm] {
                let want = n.max(1).min(first);
                let proposed = self.members[arm].ask(space, history, want, rng, None);
                self.exhausted[arm] = proposed.is_empty();
                // The model's uniform sample, and the other members' wait for it, follow
                // the priors' first proposals (as many as the guard lets through).
                if self.prior_sample == PriorSample::Before
                    || (self.prior_sample == PriorSample::Several && self.priors < 2)
                {
                    self.warm_up += proposed.len();
                    if let Member::BayesOpt(b) = &mut self.members[MODEL] {
                        b.lengthen_initial_sample(proposed.len());
                    }
                }
                for c in proposed {
                    if !self.pending.contains_key(&c) {
                        self.prior_proposed += 1;
                        self.pending.insert(c.clone(), arm);
                        self.from_priors.insert(c.clone());
                        out.push(c);
                    }
                }
                if out.len() >= n.max(1) {
                    return out;
                }
            }
        }
        // One member proposes the whole batch; one that has nothing left is passed over.
        while out.len() < n.max(1) {
            // The model's initial sample comes first: a climb from the best of a few random
            // configurations improves often in small steps, which the bandit would credit
            // while the sample would have found far better starts (measured: on spaces whose
            // score window is 12-46 evaluations, climbing from the start scored below random).
            let warm = history.len() + out.len() >= self.warm_up;
            let allowed: Vec<bool> = self
                .exhausted
                .iter()
                .enumerate()
                .map(|(arm, e)| {
                    !e && (arm == MODEL || warm)
                        && (self.prior_member_alone
                            || self.priors != 1
                            || Some(arm) != self.prior_arm)
                })
                .collect();
            let chosen = match self.schedule {
                Schedule::Bandit => self.bandit.choose(&allowed, rng),
                Schedule::Stagnation => {
                    if !allowed[self.turn] {
                        self.pass_turn(warm);
                    }
                    allowed[self.turn]
                        .then_some(self.turn)
                        .or_else(|| allowed.iter().position(|&a| a))
                }
            };
            let Some(arm) = chosen else {
                break;
            };
            let want = n.max(1) - out.len();
            let (model, others) = self.members.split_at_mut(1);
            let proposed = if arm == MODEL {
                model[0].ask(space, history, want, rng, None)
            } else {
                let guide = match (&model[0], self.guide) {
                    (Member::BayesOpt(b), Some(af)) => Some(ModelGuide(b, af)),
                    _ => None,
                };
                others[arm - 1].ask(
                    space,
                    history,
                    want,
                    rng,
                    guide.as_ref().map(|g| g as &dyn Guide),
                )
            };
            let fresh: Vec<Configuration> = proposed
                .into_iter()
                .filter(|c| !out.contains(c) && !self.pending.contains_key(c))
                .collect();
            if fresh.is_empty() {
                self.exhausted[arm] = true;
                continue;
            }
            for c in fresh {
                self.pending.insert(c.clone(), arm);
                if Some(arm) == self.prior_arm {
                    self.from_priors.insert(c.clone());
                }
                out.push(c);
            }
        }
        out
    }
}

fn check(options: &Options) -> Result<Box<dyn crate::Factory>, StrategyError> {
    let o: AutoOptions = parse(NAME, options)?;
    Ok(crate::registry::factory(o.check()?, |c| {
        Box::new(Auto::checked(c))
    }))
}

pub(crate) const ENTRY: Entry = Entry {
    name: NAME,
    aliases: &["default", "portfolio"],
    about: "The default: Bayesian optimisation with BaCO's feasibility forest and a local search that climbs from the best configuration found, sharing the budget through OpenTuner's AUC bandit (each proposal from the strategy whose recent proposals most often found a new best).",
    options: OPTIONS,
    tunable: &[
        crate::Tunable::new("model", &["\"bayes_opt\"", "\"baco\""]),
        crate::Tunable::new("initial_samples", &["5", "10", "20"]),
        crate::Tunable::new(
            "initial_sampling",
            &[
                "\"aligned_lhs\"",
                "\"aligned\"",
                "\"random\"",
                "\"maximin\"",
            ],
        ),
        crate::Tunable::new("lengthscales", &["\"validated\"", "\"fixed\""]),
        crate::Tunable::new("sub_spaces", &["1", "0.5", "0.25", "\"estimated\""]),
        crate::Tunable::new("aligned_power", &["2", "4", "8"]),
        crate::Tunable::new("feasibility", &["true", "false"]),
        crate::Tunable::new("explore_after", &["0", "5", "10", "20"]),
        crate::Tunable::new(
            "local",
            &["\"mls\"", "\"none\"", "\"mls+annealing\"", "\"annealing\""],
        ),
        crate::Tunable::new("local_start_samples", &["1", "5", "10", "20"]),
        crate::Tunable::new("schedule", &["\"bandit\"", "\"stagnation\""]),
        crate::Tunable::new("patience", &["5", "10", "20", "40"]),
        crate::Tunable::new("c", &["0.01", "0.05", "0.2", "1.0"]),
        crate::Tunable::new("window", &["50", "100", "500"]),
        crate::Tunable::new("guide", &["\"ei\"", "\"poi\"", "\"none\""]),
        crate::Tunable::new("smooth_below", &["0", "0.2", "0.35", "0.5"]),
        crate::Tunable::new("exploit_after", &["0.3", "0.5", "0.7", "1"]),
        crate::Tunable::new("smooth_exploit_after", &["0.3", "0.5", "0.7", "1"]),
        crate::Tunable::new("exploit_last", &["30", "60", "120", "0"]),
        crate::Tunable::new("kicks", &["0", "10", "30", "100"]),
        crate::Tunable::new("kick_size", &["0.2", "0.3", "0.5"]),
        crate::Tunable::new("switch_kicks", &["0", "0.5", "1"]),
        crate::Tunable::new("climb_patience", &["0", "4", "6", "8"]),
    ],
    check,
};

mod options;
#[cfg(test)]
mod tests;
