//! Bayesian optimisation for discrete, constrained search spaces (Willemsen et al., the BO
//! paper, section III).
//!
//! The surrogate is a Gaussian process over the configurations of the space (Matérn 3/2 with
//! a fixed lengthscale on Kernel Tuner's ε-spaced encoding; parameters with a single value are
//! pruned). Only successful observations are fitted; failed configurations are simply never
//! proposed again. With `feasibility = true` (off here as in the paper, on in `auto`) BaCO's
//! random forest learns which configurations fail, from every evaluation, before each round:
//! EI and PI are multiplied by the probability that a candidate runs, and candidates below a
//! limit ε_f drawn from `{0, t/10, ..., t}` are not proposed, so the search stops returning to
//! a failing region beside the optimum that the GP, which never sees a failure, predicts fast. The acquisition function is evaluated on every configuration not yet
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
//! Beyond the paper, off here and on in `auto`: `lengthscales = "validated"`. On the ε-spaced
//! encoding the fixed lengthscale is 1.5 times the widest parameter's span: where the widest
//! parameter has 16 or more values (the shared GPU spaces) the others span a small part of it
//! and matter little, but where every parameter has 2 to 4 values (compiler tuning: tile
//! sizes, unrolling, loop orders) the kernel is nearly flat across the whole space and
//! smooths away a loop order that decides the run time. At the alignment's validation
//! checkpoints a kernel with one lengthscale per coordinate, its output scale and noise
//! fitted by maximum a posteriori (BaCO's priors, [`ktune_model::fit_hyperparameters`])
//! competes with the fixed ones on ranking the results since the last checkpoint, and
//! replaces them only when it ranks them better by 0.1 in Spearman's ρ (`FITTED_MARGIN`).
//! The incremental GP is then conditioned again under it, so proposals stay O(n·m).
//!
//! For spaces larger than `candidate_limit` (default 10^6) the acquisition is evaluated each
//! round on a uniform sample of `sample_size` configurations plus the Hamming
//! neighbourhoods of the five best observed ones. The sample is kept for `sample_rounds`
//! rounds (default 10) as the candidates of an incremental GP, so that a round costs one
//! `O(n·sample_size)` update instead of a posterior over the whole sample from scratch
//! (`O(n²·sample_size)`, about 300 ms at 200 observations and 50,000 samples on two cores);
//! then a fresh sample is drawn and the GP rebuilt over it in one blocked factorisation. The
//! neighbourhoods, which change as the best does, get the exact posterior.
//!
//! A sample seldom holds the acquisition's maximiser, and at 5% of a space it can miss the
//! fast region altogether. So each round also climbs, BaCO's local search (section 3.3 of
//! its paper): from the `climb_starts` (3) best candidates of the acquisition function that
//! proposes next, first-improvement hill climbing over the neighbours, on the exact
//! posterior, until no neighbour improves the acquisition; where a climb ends joins the
//! candidates. Measured with the limit lowered onto the 12 shared spaces, the climb wins back
//! half of what the sample loses against scoring every configuration (BENCHMARKS.md, "Large
//! spaces: climbing from the sample").
//!
//! The incremental GP over every configuration of an enumerated space holds 8 bytes per
//! observation and configuration (12 MB per observation at 1.5 million). Before the next
//! observation would take it past `model_memory` (default 2 GiB), the model goes on with a
//! kept sample as above, and says so.
//!
//! With `surrogate = "cgp"` the model is the clustered GP ([`ktune_model::ClusteredGp`]): one
//! exact GP with the same fixed hyperparameters per cluster of the observations, EI and PI
//! divided by the size of the candidate's component, and a share of uniformly random
//! proposals (`exploration_rate`, see [`crate::surrogate`]). Its components change with every
//! observation, so each round predicts every candidate afresh instead of incrementally.
//!
//! ## References
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, "Bayesian optimization for auto-tuning
//!   GPU kernels", section III and Table I.

mod options;
mod propose;
mod state;
mod strategy;

use options::OPTIONS;
pub use options::{
    Alignment, BoOptions, Exploration, ExplorationScale, InitialSampling, Lengthscales, Method,
    Scalarise, SubSpaceShare, Transform,
};
pub use strategy::BayesianOptimization;
pub(crate) use strategy::CheckedBo;
pub(crate) use strategy::ModelGuide;

use crate::surrogate::{self, SurrogateOptions};
use crate::{Entry, Factory, Options, StrategyError};

const NAME: &str = "bayes_opt";

fn check(options: &Options) -> Result<Box<dyn Factory>, StrategyError> {
    let o: BoOptions = surrogate::parse_with(NAME, options)?;
    Ok(crate::registry::factory(o.check()?, |c| {
        Box::new(BayesianOptimization::checked(c.clone()))
    }))
}

impl surrogate::WithSurrogate for BoOptions {
    fn surrogate(&mut self) -> &mut SurrogateOptions {
        &mut self.surrogate
    }
}

pub(crate) const ENTRY: Entry = Entry {
    name: NAME,
    aliases: &["bo", "bayesian_optimization"],
    about: "Bayesian optimisation for discrete constrained spaces (the BO paper): a Matérn 3/2 GP over every configuration, updated incrementally; EI, PI and LCB combined by advanced multi; contextual-variance exploration. ktune additions (options; see the module docs): the GP fits log run times, λ is scale-free, and 10 evaluations without improvement trigger one proposal of largest posterior variance.",
    options: OPTIONS,
    tunable: &[
        crate::Tunable::new("initial_samples", &["5", "10", "20"]),
        crate::Tunable::new(
            "initial_sampling",
            &["\"maximin\"", "\"random\"", "\"aligned\""],
        ),
        crate::Tunable::new("lengthscale", &["1.0", "1.5", "2.0"]),
        crate::Tunable::new("explore_after", &["0", "10", "20"]),
        crate::Tunable::new("feasibility", &["false", "true"]),
    ],
    check,
};

#[cfg(test)]
mod tests;
