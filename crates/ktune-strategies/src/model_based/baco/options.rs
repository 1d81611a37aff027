//! The options of `baco`, with their defaults and documentation.

use std::collections::BTreeMap;

use ktune_model::KernelKind;
use serde::Deserialize;

use crate::OptionDoc;
use crate::encoding::PermutationDistance;
use crate::surrogate::{self, SurrogateOptions};

/// How observations are transformed before the GP fits them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputTransform {
    /// `ln y` (`-ln(-y)` for a maximised objective in minimisation form); values of mixed
    /// sign fall back to no transform.
    Log,
    /// The values as observed.
    None,
}

/// The options of BaCO-style Bayesian optimisation (defaults: the paper, and BaCO's
/// published implementation where the paper leaves a number open).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BacoOptions {
    /// Uniformly sampled valid configurations before the models take over.
    pub initial_samples: usize,
    /// Covariance function: "matern52" (the paper), "matern32" or "rbf".
    #[serde(deserialize_with = "crate::options::choice")]
    pub kernel: KernelKind,
    /// Gamma priors on the hyperparameters (off: maximum likelihood).
    pub priors: bool,
    /// Transform of the observations before the GP fits them.
    pub transform: OutputTransform,
    /// The distance of permutation parameters.
    pub permutation_distance: PermutationDistance,
    /// Per permutation parameter, a distance other than `permutation_distance`.
    pub permutation_distances: BTreeMap<String, PermutationDistance>,
    /// Learn hidden constraints with a random forest and weight the acquisition by the
    /// probability that a configuration runs.
    pub feasibility: bool,
    /// The largest minimum-feasibility limit ε_f, drawn anew each proposal from
    /// `{0, threshold/10, ..., threshold}`.
    pub feasibility_threshold: f64,
    /// Valid configurations sampled uniformly to start the acquisition's local search.
    pub random_points: usize,
    /// Spaces with at most this many configurations are scored whole instead of sampled.
    pub exhaustive: usize,
    /// The best of them that start a climb.
    pub starts: usize,
    /// The best observed configurations that also start a climb.
    pub best_starts: usize,
    /// Random hyperparameter settings scored at the first fit (the best few are refined).
    pub fit_samples: usize,
    /// The surrogate (BaCO's GP, or the clustered GP of fitted component GPs) and its
    /// options: keys of their own in a spec, split off before the rest is parsed.
    #[serde(skip)]
    pub surrogate: SurrogateOptions,
}

impl Default for BacoOptions {
    fn default() -> Self {
        BacoOptions {
            initial_samples: 10,
            kernel: KernelKind::Matern52,
            priors: true,
            transform: OutputTransform::Log,
            permutation_distance: PermutationDistance::Spearman,
            permutation_distances: BTreeMap::new(),
            feasibility: true,
            feasibility_threshold: 0.1,
            random_points: 2000,
            exhaustive: 0,
            starts: 10,
            best_starts: 3,
            fit_samples: 200,
            surrogate: SurrogateOptions::default(),
        }
    }
}

pub(super) const OPTIONS: &[OptionDoc] =
    &surrogate::with_docs::<{ OWN.len() + surrogate::DOCS.len() }>(OWN);

/// The strategy's own options (the surrogate's follow them).
const OWN: &[OptionDoc] = &[
    OptionDoc::new("initial_samples", "10", "Uniformly sampled valid configurations before the models take over (BaCO's default); sampling goes on until one of them runs.").count(1, 100_000),
    OptionDoc::new("kernel", "\"matern52\"", "Covariance function: \"matern52\" (the paper), \"matern32\" or \"rbf\"."),
    OptionDoc::new("priors", "true", "Gamma priors on lengthscales (Gamma(3, 6)), output scale and noise; false: maximum likelihood."),
    OptionDoc::new("transform", "\"log\"", "Observations as the GP fits them: \"log\" (mixed signs fall back to \"none\") or \"none\"."),
    OptionDoc::new("permutation_distance", "\"spearman\"", "Distance between orderings of a permutation parameter: \"spearman\", \"kendall\", \"hamming\" or \"categorical\" (equal or not)."),
    OptionDoc::new("permutation_distances", "{}", "Per permutation parameter, another distance: e.g. { loop_order = \"kendall\" } in a [strategy] table."),
    OptionDoc::new("feasibility", "true", "Learn hidden constraints (failed configurations) with a random forest; the acquisition is EI times the probability of running."),
    OptionDoc::new("feasibility_threshold", "0.1", "Configurations less likely to run than ε_f are skipped; ε_f is drawn each proposal from {0, t/10, ..., t}.").real(0.0, 1.0),
    OptionDoc::new("random_points", "2000", "Valid configurations sampled uniformly to start the acquisition's local search.").count(1, 10_000_000),
    OptionDoc::new("exhaustive", "0", "Spaces with at most this many valid configurations have the acquisition scored at every one of them (exact maximisation) instead of sampled (besides spaces no larger than random_points); off by default: 12000 scored lower on the 16 benchmark spaces (BENCHMARKS.md).").count(0, 10_000_000),
    OptionDoc::new("starts", "10", "The best sampled configurations that start a hill climb over one-parameter changes.").count(0, 100_000),
    OptionDoc::new("best_starts", "3", "The best observed configurations that also start a climb.").count(0, 100_000),
    OptionDoc::new("fit_samples", "200", "Random hyperparameter settings scored at the first fit; the best 5 are refined with L-BFGS, later fits start from the last optimum.").count(1, 1_000_000),
];
