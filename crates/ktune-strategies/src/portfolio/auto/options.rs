//! The documentation of `auto`'s options, with their defaults (checked equal to
//! [`AutoOptions::default`](super::AutoOptions) by the conformance suite).

use crate::OptionDoc;
use crate::local_search::KICK_SIZE_DOC;

pub(super) const OPTIONS: &[OptionDoc] = &[
    OptionDoc {
        name: "model",
        default: "\"bayes_opt\"",
        doc: "The model-based strategy: \"bayes_opt\" (fixed-lengthscale GP updated incrementally, about 1 ms a proposal) or \"baco\" (fitted GP, 5-30 ms a proposal).",
    },
    OptionDoc {
        name: "initial_samples",
        default: "10",
        doc: "Valid configurations the model samples (see initial_sampling) before it proposes; the other members wait for them.",
    },
    OptionDoc {
        name: "initial_sampling",
        default: "\"random\"",
        doc: "How the model's initial sample is drawn: \"random\" (uniform), \"maximin\" or \"lhs\" (bayes_opt's; baco samples uniformly).",
    },
    OptionDoc {
        name: "feasibility",
        default: "true",
        doc: "The model learns failing regions with BaCO's random forest (bayes_opt's `feasibility`).",
    },
    OptionDoc {
        name: "explore_after",
        default: "10",
        doc: "Evaluations without a new best before the model proposes where it knows least (bayes_opt's option; 0: never).",
    },
    OptionDoc {
        name: "local",
        default: "\"mls\"",
        doc: "The strategies beside the model, joined by `+`: \"mls\" (multi-start local search climbing from the study's best configuration), \"annealing\", \"genetic\", \"pso\", \"tpe\" (each with its defaults), or \"none\" (the model alone).",
    },
    OptionDoc {
        name: "local_start_samples",
        default: "20",
        doc: "Random configurations the local search samples to start a climb when the study's best is already a local optimum.",
    },
    OptionDoc {
        name: "schedule",
        default: "\"bandit\"",
        doc: "How the members share the budget: \"bandit\" (OpenTuner's AUC bandit picks each proposal's member) or \"stagnation\" (the model proposes until `patience` results in a row bring no new best, then the next member until the same happens to it, then the model again).",
    },
    OptionDoc {
        name: "patience",
        default: "10",
        doc: "With schedule = \"stagnation\": results in a row without a new best before the turn passes.",
    },
    OptionDoc {
        name: "c",
        default: "0.2",
        doc: "The bandit's exploration weight (OpenTuner's C is 0.05; 0.2 with a window of 50 scored higher on the benchmark spaces, BENCHMARKS.md).",
    },
    OptionDoc {
        name: "window",
        default: "50",
        doc: "The bandit remembers this many results (OpenTuner's 500): a short memory follows the phases of a run, the model's early finds, then the climbs.",
    },
    OptionDoc {
        name: "guide",
        default: "\"ei\"",
        doc: "The order in which the local search (mls) tries the neighbours of its configuration, by the model (model = \"bayes_opt\"): \"ei\" (expected improvement over the best), \"poi\" (probability of improvement) or \"mean\" (posterior mean), each cut by the feasibility forest; \"none\": random order.",
    },
    OptionDoc {
        name: "restarts",
        default: "true",
        doc: "The local search restarts from the best of `local_start_samples` random configurations when its climb reaches a local optimum (false: it proposes nothing until the model finds a better configuration to climb from).",
    },
    OptionDoc {
        name: "kicks",
        default: "30",
        doc: "At a local optimum, the local search first climbs from this many random perturbations of the study's best configuration (counted afresh at every new best), before it restarts.",
    },
    KICK_SIZE_DOC,
    OptionDoc {
        name: "climb_patience",
        default: "4",
        doc: "Neighbours the local search proposes from one configuration, in the model's order, before it counts as a local optimum (0: all of them).",
    },
    OptionDoc {
        name: "smooth_below",
        default: "0.35",
        doc: "After `probe` valid results: when the standard deviation of their logarithms is below this (a smooth landscape), the initial sample ends there and the members share the budget by `smooth_schedule` (0: never).",
    },
    OptionDoc {
        name: "probe",
        default: "5",
        doc: "The valid results of the initial sample the landscape is judged on (see smooth_below).",
    },
    OptionDoc {
        name: "smooth_schedule",
        default: "\"stagnation\"",
        doc: "The schedule on a landscape judged smooth (see smooth_below).",
    },
    OptionDoc {
        name: "alignment",
        default: "\"validated\"",
        doc: "How the model (bayes_opt) weighs how many times 2 divides each integer parameter's value, where that varies out of step with the value: a weight (0: not at all) or \"validated\" (bayes_opt's `alignment`).",
    },
];
