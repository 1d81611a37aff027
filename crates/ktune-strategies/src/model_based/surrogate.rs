//! The surrogate choice of the Bayesian strategies (`bayes_opt`, `baco`): their own GP, or
//! the clustered GP of Luo et al. for non-smooth objectives (`surrogate = "cgp"`), with the
//! cGP's options. The options are the same keys in both strategies, declared once here and
//! split off the strategy's own options before those are parsed.

use ktune_model::{ClusterOptions, ClusteredGp, ExactGp, Weighting};
use rand::RngExt;
use serde::Deserialize;

use crate::{OptionDoc, Options, StrategyError, parse};

/// The model of the objective.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SurrogateKind {
    /// The strategy's own Gaussian process.
    #[default]
    Gp,
    /// One GP per cluster of the observations (the cGP paper).
    Cgp,
}

/// How the acquisition is weighted per component of the cGP.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ComponentWeighting {
    /// Divided by the component's number of observations (the paper).
    #[default]
    Size,
    /// Not weighted.
    None,
}

/// The surrogate options shared by the Bayesian strategies (defaults: the cGP paper's).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct SurrogateOptions {
    /// `gp` (the strategy's own) or `cgp`.
    pub surrogate: SurrogateKind,
    /// cGP: the number of k-means clusters (largest number of components).
    pub clusters: usize,
    /// cGP: the factor ξ on the standardised value in the clustered pairs `(x, ξ·y)`.
    pub xi: f64,
    /// cGP: neighbours that vote on a candidate's component.
    pub neighbours: usize,
    /// cGP: components with fewer observations are merged into the nearest.
    pub min_cluster_size: usize,
    /// cGP: the acquisition weight per component.
    pub weighting: ComponentWeighting,
    /// cGP: β of the boundary term (the weight is multiplied by `1 + β·dissent`).
    pub boundary: f64,
    /// cGP: the probability that a proposal maximises the acquisition; otherwise it is a
    /// uniformly random valid configuration.
    pub exploration_rate: f64,
}

impl Default for SurrogateOptions {
    fn default() -> Self {
        let c = ClusterOptions::default();
        SurrogateOptions {
            surrogate: SurrogateKind::Gp,
            clusters: c.clusters,
            xi: c.xi,
            neighbours: c.neighbours,
            min_cluster_size: c.min_size,
            weighting: ComponentWeighting::Size,
            boundary: c.boundary,
            exploration_rate: 0.8,
        }
    }
}

/// The keys of [`SurrogateOptions`].
const KEYS: &[&str] = &[
    "surrogate",
    "clusters",
    "xi",
    "neighbours",
    "min_cluster_size",
    "weighting",
    "boundary",
    "exploration_rate",
];

/// The checked cGP settings of a strategy.
#[derive(Clone, Debug)]
pub(crate) struct Cgp {
    pub options: ClusterOptions,
    pub exploration_rate: f64,
}

impl Cgp {
    /// A clustered GP whose components start as `prototype`.
    pub fn model(&self, prototype: ExactGp) -> Option<ClusteredGp> {
        ClusteredGp::new(prototype, self.options.clone()).ok()
    }

    /// Whether this proposal is a uniformly random configuration instead of the
    /// acquisition's maximiser (draws from `rng` only when the rate is below 1, so that a
    /// rate of 1 leaves the run exactly as without exploration).
    pub fn explore(&self, rng: &mut ktune_core::Rng) -> bool {
        self.exploration_rate < 1.0 && rng.random::<f64>() >= self.exploration_rate
    }
}

/// The options of a strategy that takes the surrogate keys beside its own.
pub(crate) trait WithSurrogate: serde::de::DeserializeOwned {
    /// Where its surrogate options go.
    fn surrogate(&mut self) -> &mut SurrogateOptions;
}

/// A strategy's options `O`, the surrogate keys split off and parsed first (each set of
/// keys refused by the strategy's name where it is wrong).
pub(crate) fn parse_with<O: WithSurrogate>(
    strategy: &str,
    options: &Options,
) -> Result<O, StrategyError> {
    let (surrogate, rest) = SurrogateOptions::split(strategy, options)?;
    let mut o: O = parse(strategy, &rest)?;
    *o.surrogate() = surrogate;
    Ok(o)
}

impl SurrogateOptions {
    /// Splits the surrogate keys off a strategy's options and parses them; the rest is
    /// returned for the strategy's own struct.
    pub(crate) fn split(
        strategy: &str,
        options: &Options,
    ) -> Result<(SurrogateOptions, Options), StrategyError> {
        let (mine, rest): (Options, Options) = options
            .clone()
            .into_iter()
            .partition(|(k, _)| KEYS.contains(&k.as_str()));
        Ok((parse(strategy, &mine)?, rest))
    }

    /// The cGP settings when `surrogate = "cgp"` (the values in their documented ranges,
    /// which the registry checked).
    pub(crate) fn cgp(&self) -> Option<Cgp> {
        if self.surrogate == SurrogateKind::Gp {
            return None;
        }
        Some(Cgp {
            options: ClusterOptions {
                clusters: self.clusters,
                xi: self.xi,
                neighbours: self.neighbours,
                min_size: self.min_cluster_size,
                weighting: match self.weighting {
                    ComponentWeighting::Size => Weighting::InverseSize,
                    ComponentWeighting::None => Weighting::None,
                },
                boundary: self.boundary,
            },
            exploration_rate: self.exploration_rate,
        })
    }
}

/// A strategy's own options' documentation `own` followed by the surrogate options', as
/// one list of `N`, their total (checked when compiling).
pub(crate) const fn with_docs<const N: usize>(own: &[OptionDoc]) -> [OptionDoc; N] {
    assert!(
        own.len() + DOCS.len() == N,
        "N is not the number of options"
    );
    let mut out = [DOCS[0]; N];
    let mut i = 0;
    while i < N {
        out[i] = if i < own.len() {
            own[i]
        } else {
            DOCS[i - own.len()]
        };
        i += 1;
    }
    out
}

/// The documentation of the surrogate options, listed by both strategies.
pub(crate) const DOCS: [OptionDoc; 8] = [
    OptionDoc::new("surrogate", "\"gp\"", "The model: \"gp\" (one Gaussian process) or \"cgp\" (the clustered GP of Luo et al. for non-smooth objectives: k-means on (configuration, ξ·value), k-nearest-neighbour classification, one GP per component, EI weighted by the inverse component size). The options below apply to \"cgp\" only."),
    OptionDoc::new("clusters", "3", "cgp: the number of k-means clusters (the largest number of components); 1 is the plain GP.").count(1, 64),
    OptionDoc::new("xi", "1.0", "cgp: the factor ξ on the standardised value in the clustered pairs (configuration, ξ·value).").real(0.0, 1e6),
    OptionDoc::new("neighbours", "3", "cgp: the nearest observed configurations (per-parameter-type distances) that vote on a candidate's component.").count(1, 1000),
    OptionDoc::new("min_cluster_size", "3", "cgp: clusters with fewer observations are merged into the nearest one.").count(1, 100_000),
    OptionDoc::new("weighting", "\"size\"", "cgp: the acquisition (EI, PI) of a candidate divided by its component's number of observations (\"size\", the paper) or not (\"none\")."),
    OptionDoc::new("boundary", "0.0", "cgp: β of the boundary term: the acquisition weight times 1 + β × the share of the candidate's neighbours in another component (0: none, the paper's recommendation).").real(0.0, 1e6),
    OptionDoc::new("exploration_rate", "0.8", "cgp: the probability that a proposal maximises the acquisition; otherwise it is a uniformly random valid configuration (the paper's default 0.8).").real(0.0, 1.0),
];

#[cfg(test)]
mod tests {
    use ktune_core::{Budget, Rng, Tuner};
    use rand::SeedableRng;

    use crate::create_spec;

    /// The configurations a strategy evaluates on a shared brute-forced space (with natural
    /// failures), in order.
    fn trace(spec: &str, budget: usize) -> Option<Vec<Option<f64>>> {
        let path = crate::testkit::shared_space("convolution_A6000");
        if !path.exists() {
            eprintln!("SKIPPED: {} is not there", path.display());
            return None;
        }
        let sim = ktune_runners::Simulation::open(&path, None, None).unwrap();
        let (_, mut s) = create_spec(spec).unwrap();
        let mut runner = sim.runner();
        let run = Tuner::new(sim.space(), &mut runner, Budget::evaluations(budget))
            .run(s.as_mut(), &mut Rng::seed_from_u64(5))
            .unwrap();
        Some(run.objective_values())
    }

    #[test]
    fn one_cluster_without_exploration_is_the_plain_strategy() {
        for (plain, budget) in [("bayes_opt", 60), ("baco", 40)] {
            let Some(a) = trace(plain, budget) else {
                return;
            };
            let one = format!("{plain}:surrogate=cgp:clusters=1:exploration_rate=1");
            assert_eq!(a, trace(&one, budget).unwrap(), "{one}");
            // The default cGP is another search.
            let cgp = format!("{plain}:surrogate=cgp");
            assert_ne!(a, trace(&cgp, budget).unwrap(), "{cgp}");
        }
    }

    /// A cost over a permutation, a categorical and an integer parameter.
    fn mixed(space: &ktune_space::SearchSpace, c: &ktune_space::Configuration) -> Option<f64> {
        use ktune_space::Value;
        let v = space.values(c);
        let Value::Perm(order) = &v[0] else {
            unreachable!("the first parameter is a permutation")
        };
        let jump = if matches!(v[1], Value::Str(s) if s == "fast") {
            0.0
        } else {
            5.0
        };
        let t = v[2].as_f64().unwrap_or(0.0);
        Some(1.0 + f64::from(order[0]) + jump + (t - 4.0).powi(2))
    }

    #[test]
    fn the_cgp_handles_permutation_and_categorical_parameters() {
        use ktune_space::{Parameter, SearchSpace};
        let space = SearchSpace::new(
            vec![
                Parameter::permutation("order", ["i", "j", "k", "l"]).unwrap(),
                Parameter::categorical("mode", ["fast", "slow", "safe"]).unwrap(),
                Parameter::integer_range("tile", 1, 8, 1).unwrap(),
            ],
            &["order.index('i') != 3"],
        )
        .unwrap();
        let run = |spec: &str, seed: u64| {
            let (_, mut s) = create_spec(spec).unwrap();
            let mut runner = ktune_core::testing::FnRunner::new(mixed);
            Tuner::new(&space, &mut runner, Budget::evaluations(40))
                .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
                .unwrap()
        };
        for spec in ["baco:surrogate=cgp", "bayes_opt:surrogate=cgp"] {
            let a = run(spec, 3);
            assert_eq!(a.records.len(), 40, "{spec}");
            assert!(
                a.records.iter().all(|r| space.contains(&r.config)),
                "{spec}"
            );
            assert_eq!(
                a.objective_values(),
                run(spec, 3).objective_values(),
                "{spec}"
            );
            // The optimum (cost 1) is found or nearly: the model sees the regimes.
            let best = a.best().and_then(|r| r.outcome.objective()).unwrap();
            assert!(best <= 2.0, "{spec}: best {best}");
        }
    }
}
