//! The documentation of `auto`'s options, with their defaults (checked equal to
//! [`AutoOptions::default`](super::AutoOptions) by the conformance suite).

use crate::OptionDoc;
use crate::local_search::KICK_SIZE_DOC;

pub(super) const OPTIONS: &[OptionDoc] = &[
    OptionDoc::new("model", "\"bayes_opt\"", "The model-based strategy: \"bayes_opt\" (fixed-lengthscale GP updated incrementally, about 1 ms a proposal) or \"baco\" (fitted GP, 5-30 ms a proposal)."),
    OptionDoc::new("initial_samples", "10", "Valid configurations the model samples (see initial_sampling) before it proposes; the other members wait for them.").count(1, 100_000),
    OptionDoc::new("initial_sampling", "\"random\"", "How the model's initial sample is drawn: \"random\" (uniform), \"maximin\" or \"lhs\" (bayes_opt's; baco samples uniformly)."),
    OptionDoc::new("feasibility", "true", "The model learns failing regions with BaCO's random forest (bayes_opt's `feasibility`)."),
    OptionDoc::new("prior_mean", "true", "With two or more priors: the model's GP has the priors' results as its mean, times a slope fitted to this study's results (bayes_opt's `prior_mean`)."),
    OptionDoc::new("prior_failures", "true", "With two or more priors: the model's feasibility forest learns from the priors' failures too, weighed down as this study's own outcomes accumulate (bayes_opt's `prior_failures`)."),
    OptionDoc::new("explore_after", "10", "Evaluations without a new best before the model proposes where it knows least (bayes_opt's option; 0: never)."),
    OptionDoc::new("local", "\"mls\"", "The strategies beside the model, joined by `+`: \"mls\" (multi-start local search climbing from the study's best configuration), \"annealing\", \"genetic\", \"pso\", \"tpe\" (each with its defaults), or \"none\" (the model alone)."),
    OptionDoc::new("local_start_samples", "20", "Random configurations the local search samples to start a climb when the study's best is already a local optimum.").count(1, 100_000),
    OptionDoc::new("schedule", "\"bandit\"", "How the members share the budget: \"bandit\" (OpenTuner's AUC bandit picks each proposal's member) or \"stagnation\" (the model proposes until `patience` results in a row bring no new best, then the next member until the same happens to it, then the model again)."),
    OptionDoc::new("patience", "10", "With schedule = \"stagnation\": results in a row without a new best before the turn passes.").count(1, 1_000_000),
    OptionDoc::new("c", "0.2", "The bandit's exploration weight (OpenTuner's C is 0.05; 0.2 with a window of 50 scored higher on the benchmark spaces, BENCHMARKS.md).").real(0.0, 100.0),
    OptionDoc::new("window", "50", "The bandit remembers this many results (OpenTuner's 500): a short memory follows the phases of a run, the model's early finds, then the climbs.").count(1, 1_000_000),
    OptionDoc::new("guide", "\"ei\"", "The order in which the local search (mls) tries the neighbours of its configuration, by the model (model = \"bayes_opt\"): \"ei\" (expected improvement over the best), \"poi\" (probability of improvement) or \"mean\" (posterior mean), each cut by the feasibility forest; \"none\": random order."),
    OptionDoc::new("restarts", "true", "The local search restarts from the best of `local_start_samples` random configurations when its climb reaches a local optimum (false: it proposes nothing until the model finds a better configuration to climb from)."),
    OptionDoc::new("kicks", "30", "At a local optimum, the local search first climbs from this many random perturbations of the study's best configuration (counted afresh at every new best), before it restarts.").count(0, 1_000_000),
    KICK_SIZE_DOC,
    OptionDoc::new("climb_patience", "4", "Neighbours the local search proposes from one configuration, in the model's order, before it counts as a local optimum (0: all of them)."),
    OptionDoc::new("smooth_below", "0.35", "After `probe` valid results: when the standard deviation of their logarithms is below this (a smooth landscape), the initial sample ends there and the members share the budget by `smooth_schedule` (0: never).").real(0.0, 100.0),
    OptionDoc::new("probe", "5", "The valid results of the initial sample the landscape is judged on (see smooth_below).").count(2, 100_000),
    OptionDoc::new("smooth_schedule", "\"stagnation\"", "The schedule on a landscape judged smooth (see smooth_below)."),
    OptionDoc::new("alignment", "\"validated\"", "How the model (bayes_opt) weighs how many times 2 divides each integer parameter's value, where that varies out of step with the value: a weight (0: not at all) or \"validated\" (bayes_opt's `alignment`).").real(0.0, 100.0),
    OptionDoc::new("prior_first", "10", "With priors (earlier studies of related tasks): the proposals taken from the priors' order (their results as ranks, each prior weighted by how well it ranks this study's results) before the other members propose; afterwards the priors' order is a member like the others.").count(0, 100_000),
    OptionDoc::new("prior_trust", "\"evidence\"", "With priors: how each is weighted in the priors' order, by Kendall's τ between its ranks and this study's results over the pairs of them it measured: max(τ - 1/√pairs, 0)² (\"evidence\": τ counts only beyond what chance gives on so few pairs; a prior alone with τ weighted to its top, each pair by the hyperbolic weights of the prior's ranks of its two configurations), max(τ, 0)² (\"tau\"), the top-weighted τ for every prior (\"top\"), or \"all\" alike. With the first three a prior that agrees with none of the other priors, or whose measurements fold onto few configurations here, gets no weight until its τ clears two standard deviations of chance. Measured with the priors' results as the model's mean: \"evidence\" scores a little more with five related priors (0.947 against 0.943; \"top\" 0.841 against 0.852 at 20 evaluations) and leaves one (target, source) pair of a single prior more than 2 standard errors below cold `auto` (\"tau\": three)."),
    OptionDoc::new("prior_sample", "\"several\"", "With priors: their first proposals count \"within\" the model's initial sample (the model starts as early as without priors, its mean the priors' results: `prior_mean`), or come \"before\" its uniform sample (which then starts after them); \"several\": within with two or more priors, before with one (one other device can mislead, and the uniform sample shows it)."),
];
