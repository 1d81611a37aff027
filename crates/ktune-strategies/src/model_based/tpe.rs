//! The tree-structured Parzen estimator (TPE; Bergstra, Bardenet, Bengio and Kégl, NeurIPS
//! 2011) as Optuna's default sampler runs it on categorical parameters, made constraint-aware.
//!
//! After `startup` random configurations, the observations are split into the best
//! `min(⌈gamma·n⌉, max_below)` ("below") and the rest ("above", failures last). Each group
//! gives a Parzen estimator over configurations: one kernel per observation (on every
//! parameter its value, smoothed by `prior_weight` spread over the domain) and one uniform
//! prior kernel, the observations weighted alike up to 25 and the oldest ramped down beyond
//! (Optuna's defaults). By default each kernel is a product over the parameters, so the
//! mixture keeps which values occurred together (Optuna's multivariate TPE, its default since
//! 5.0), and a proposal is the one of `candidates` draws from the below estimator l with the
//! largest ratio l(x)/g(x) to the above estimator g: 64 draws, where Optuna takes 24, since
//! the sharper choice scored higher on seeds it was not chosen on (+0.020 ± 0.009 paired,
//! BENCHMARKS.md). With `multivariate = false` each parameter has its own density and takes
//! its own value of largest ratio (univariate TPE); `univariate_until` proposes univariately
//! for the first results only (measured and not adopted, BENCHMARKS.md).
//!
//! Every parameter is a categorical, as a Kernel Tuner-style `tune_params` dict becomes in
//! Optuna: TPE learns which value of each switch pays (read-only caches, shared memory, a tile
//! size) and which go together, with no distance between values. Measured beside Optuna's own
//! TPE in BENCHMARKS.md: on the shared spaces it is the strongest strategy after `auto`.
//!
//! Several objectives (MOTPE, Ozaki et al., GECCO 2020; Optuna's multi-objective default): the
//! below group is the first Pareto fronts of the results (failures last), the front that does
//! not fit cut by crowding distance (Optuna cuts it by hypervolume contribution).
//!
//! Constraints: Optuna proposes outside a constrained space and learns from the refusals; here
//! only draws that are valid and new compete, drawn again (up to 20 times as many) when none
//! is, and a uniformly random new configuration is taken when still none is.

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, SearchSpace};
use rand::RngExt;
use rustc_hash::FxHashSet;
use serde::Deserialize;

use crate::pareto::{Objectives, objectives_of, pareto_order};
use crate::sampling::FreshSampler;

const NAME: &str = "tpe";

/// Observations weighted alike before the oldest are ramped down (Optuna's `default_weights`).
const FLAT_WEIGHTS: usize = 25;

/// Draws tried per proposal, in multiples of `candidates`, before a random new configuration
/// is taken instead (sparse spaces reject most draws).
const DRAW_ROUNDS: usize = 20;

/// The options of TPE (Optuna 5.0's defaults, but for `candidates`).
#[derive(Clone, Debug, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TpeOptions {
    /// Random configurations before the estimators propose.
    pub startup: usize,
    /// Configurations drawn from the below estimator per proposal.
    pub candidates: usize,
    /// The share of the observations in the below group.
    pub gamma: f64,
    /// The most observations in the below group.
    pub max_below: usize,
    /// The weight of the uniform prior kernel, and of the smoothing of each observation's.
    pub prior_weight: f64,
    /// Mixtures of product kernels (Optuna 5's default); false: one density per parameter.
    pub multivariate: bool,
    /// Observations before `multivariate` applies: fewer, and one density per parameter
    /// proposes (it learns from fewer results).
    pub univariate_until: usize,
}

impl Default for TpeOptions {
    fn default() -> Self {
        TpeOptions {
            startup: 10,
            candidates: 64,
            gamma: 0.1,
            max_below: 25,
            prior_weight: 1.0,
            multivariate: true,
            univariate_until: 0,
        }
    }
}

/// The TPE strategy.
#[derive(Clone, Debug)]
pub struct Tpe {
    opts: TpeOptions,
    fresh: FreshSampler,
    /// Configurations proposed (evaluated or pending), so none is proposed twice.
    proposed: FxHashSet<Configuration>,
}

/// A Parzen estimator over configurations: a mixture of one product kernel per observation
/// (on each parameter its value, smoothed over the domain) and a uniform prior kernel.
/// Because each kernel is a product over the parameters, the mixture keeps which values
/// occurred together (multivariate TPE, Optuna's default since 5.0).
struct Parzen {
    /// Per kernel, the observed value indices (the prior kernel has none).
    centres: Vec<Configuration>,
    /// Per kernel, the log of its mixture weight; the prior's last.
    log_weights: Vec<f64>,
    /// The log density of any configuration under the prior kernel, its weight included.
    log_prior: f64,
    /// Per kernel, the cumulative mixture weights, for drawing kernels.
    cumulative: Vec<f64>,
    /// Per parameter: domain size, and the log probability of the centre's value and of
    /// any other value under an observation's kernel.
    sizes: Vec<usize>,
    log_hit: Vec<f64>,
    log_miss: Vec<f64>,
    /// Per parameter, the probability that an observation's kernel keeps its value.
    keep: Vec<f64>,
}

impl Parzen {
    /// The estimator over `sizes`-valued parameters of the observed `centres` (in
    /// evaluation order), with Optuna's weights and prior.
    fn new(sizes: &[usize], centres: Vec<Configuration>, prior_weight: f64) -> Parzen {
        let mut weights = observation_weights(centres.len());
        weights.push(prior_weight);
        let total: f64 = weights.iter().sum();
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w / total;
                acc
            })
            .collect();
        // Optuna: every value gets prior_weight / kernels, the observed one 1 more.
        let s = prior_weight / (centres.len() + 1) as f64;
        let norm: Vec<f64> = sizes.iter().map(|&k| 1.0 + k as f64 * s).collect();
        let log_weights: Vec<f64> = weights.iter().map(|w| (w / total).ln()).collect();
        let uniform: f64 = sizes.iter().map(|&k| -(k as f64).ln()).sum();
        Parzen {
            log_prior: log_weights[centres.len()] + uniform,
            log_weights,
            cumulative,
            log_hit: norm.iter().map(|n| ((1.0 + s) / n).ln()).collect(),
            log_miss: norm.iter().map(|n| (s / n).ln()).collect(),
            keep: norm.iter().map(|n| 1.0 / n).collect(),
            sizes: sizes.to_vec(),
            centres,
        }
    }

    fn draw(&self, rng: &mut Rng) -> Configuration {
        let u = rng.random::<f64>();
        let kernel = self
            .cumulative
            .iter()
            .position(|&c| u < c)
            .unwrap_or(self.centres.len());
        let centre = self.centres.get(kernel);
        (0..self.sizes.len())
            .map(|d| match centre {
                Some(c) if rng.random::<f64>() < self.keep[d] => c[d],
                _ => rng.random_range(0..self.sizes[d] as u32),
            })
            .collect()
    }

    fn log_pdf(&self, x: &[u32]) -> f64 {
        let kernel = |c: &Configuration| -> f64 {
            (0..x.len())
                .map(|d| {
                    if c[d] == x[d] {
                        self.log_hit[d]
                    } else {
                        self.log_miss[d]
                    }
                })
                .sum()
        };
        log_sum_exp(
            self.centres
                .iter()
                .zip(&self.log_weights)
                .map(|(c, lw)| lw + kernel(c))
                .chain(std::iter::once(self.log_prior)),
        )
    }
}

/// ln Σ exp(t) over `terms`, in one pass without overflow (it is called for every draw of
/// every proposal, with a term per observation).
fn log_sum_exp(terms: impl Iterator<Item = f64>) -> f64 {
    let (mut max, mut sum) = (f64::NEG_INFINITY, 0.0);
    for t in terms {
        if t > max {
            sum = sum * (max - t).exp() + 1.0;
            max = t;
        } else {
            sum += (t - max).exp();
        }
    }
    max + sum.ln()
}

/// The product of one categorical density per parameter (univariate TPE).
struct Independent {
    /// Per parameter, the cumulative probabilities of its values.
    cumulative: Vec<Vec<f64>>,
    /// Per parameter, the log probabilities of its values.
    log: Vec<Vec<f64>>,
}

impl Independent {
    /// The marginals of `joint`, one per parameter.
    fn marginals(joint: &Parzen) -> Independent {
        let mut cumulative = Vec::with_capacity(joint.sizes.len());
        let mut log = Vec::with_capacity(joint.sizes.len());
        let prior_weight = joint.log_weights[joint.centres.len()].exp();
        for (d, &k) in joint.sizes.iter().enumerate() {
            let miss = joint.log_miss[d].exp();
            let hit = joint.log_hit[d].exp();
            let mut p = vec![prior_weight / k as f64; k];
            for (c, lw) in joint.centres.iter().zip(&joint.log_weights) {
                let w = lw.exp();
                for v in p.iter_mut() {
                    *v += w * miss;
                }
                p[c[d] as usize] += w * (hit - miss);
            }
            let mut acc = 0.0;
            cumulative.push(
                p.iter()
                    .map(|v| {
                        acc += v;
                        acc
                    })
                    .collect(),
            );
            log.push(p.iter().map(|v| v.ln()).collect());
        }
        Independent { cumulative, log }
    }

    /// ln l(v) − ln g(v) of value `v` of parameter `d`, `self` being l.
    fn log_ratio(&self, g: &Independent, d: usize, v: u32) -> f64 {
        self.log[d][v as usize] - g.log[d][v as usize]
    }

    fn draw_value(&self, d: usize, rng: &mut Rng) -> u32 {
        let c = &self.cumulative[d];
        let u = rng.random::<f64>() * c[c.len() - 1];
        c.iter().position(|&x| u < x).unwrap_or(c.len() - 1) as u32
    }
}

/// Optuna's `default_weights`: 1 for the newest 25, a ramp from 1/n to 1 for the older.
fn observation_weights(n: usize) -> Vec<f64> {
    if n < FLAT_WEIGHTS {
        return vec![1.0; n];
    }
    let ramp = n - FLAT_WEIGHTS;
    let lo = 1.0 / n as f64;
    (0..ramp)
        .map(|i| {
            if ramp == 1 {
                lo
            } else {
                lo + (1.0 - lo) * i as f64 / (ramp - 1) as f64
            }
        })
        .chain(std::iter::repeat_n(1.0, FLAT_WEIGHTS))
        .collect()
}

crate::registry::checked_by!(TpeOptions => Tpe);

impl Tpe {
    /// A TPE with options that passed [`TpeOptions::check`].
    pub(crate) fn checked(opts: TpeOptions) -> Tpe {
        Tpe {
            opts,
            fresh: FreshSampler::default(),
            proposed: FxHashSet::default(),
        }
    }

    fn is_new(&self, history: &History, config: &[u32]) -> bool {
        !self.proposed.contains(config) && !history.contains(config)
    }

    /// The below and above estimators, from `history`.
    fn estimators(&self, space: &SearchSpace, history: &History) -> (Parzen, Parzen) {
        let obs = history.observations();
        let order: Vec<usize> = if obs.iter().any(|o| o.objectives.len() > 1) {
            // Several objectives (MOTPE, Optuna's multi-objective TPE): the best are the
            // first Pareto fronts, the last one taken cut by crowding distance where Optuna
            // selects by hypervolume contribution.
            let points: Vec<Objectives> = obs.iter().map(objectives_of).collect();
            let refs: Vec<&Objectives> = points.iter().collect();
            pareto_order(&refs)
        } else {
            // Valid results by value, then failures (Optuna ranks infeasible trials last).
            let mut order: Vec<usize> = (0..obs.len()).collect();
            order.sort_by(|&a, &b| match (obs[a].value, obs[b].value) {
                (Some(x), Some(y)) => x.total_cmp(&y),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.cmp(&b),
            });
            order
        };
        let below_n = ((self.opts.gamma * obs.len() as f64).ceil() as usize)
            .min(self.opts.max_below)
            .min(obs.len());
        let sizes: Vec<usize> = space.params().iter().map(|p| p.len()).collect();
        let group = |mut members: Vec<usize>| {
            // In evaluation order, for the weights' ramp.
            members.sort_unstable();
            let centres = members.iter().map(|&i| obs[i].config.clone()).collect();
            Parzen::new(&sizes, centres, self.opts.prior_weight)
        };
        (
            group(order[..below_n].to_vec()),
            group(order[below_n..].to_vec()),
        )
    }

    fn propose(
        &mut self,
        space: &SearchSpace,
        history: &History,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        if history.len() < self.opts.startup {
            return self.random_new(space, history, rng);
        }
        let (below, above) = self.estimators(space, history);
        let multivariate = self.opts.multivariate && history.len() >= self.opts.univariate_until;
        let independent = (!multivariate).then(|| {
            (
                Independent::marginals(&below),
                Independent::marginals(&above),
            )
        });
        let ratio = |c: &[u32]| match &independent {
            None => below.log_pdf(c) - above.log_pdf(c),
            Some((l, g)) => c
                .iter()
                .enumerate()
                .map(|(d, &v)| l.log_ratio(g, d, v))
                .sum(),
        };
        if let Some((l, g)) = &independent {
            // Univariate: per parameter, the drawn value of largest ratio (which maximises
            // the summed ratio over the draws' combinations).
            let choice: Configuration = (0..space.dims())
                .map(|d| {
                    (0..self.opts.candidates)
                        .map(|_| l.draw_value(d, rng))
                        .max_by(|&a, &b| l.log_ratio(g, d, a).total_cmp(&l.log_ratio(g, d, b)))
                        .unwrap_or(0)
                })
                .collect();
            if space.contains(&choice) && self.is_new(history, &choice) {
                return Some(choice);
            }
        }
        // The candidate of largest l(x) / g(x) among draws from l that are valid and new.
        let mut best: Option<(f64, Configuration)> = None;
        for _ in 0..DRAW_ROUNDS {
            for _ in 0..self.opts.candidates {
                let c = match &independent {
                    None => below.draw(rng),
                    Some((l, _)) => (0..space.dims()).map(|d| l.draw_value(d, rng)).collect(),
                };
                if !space.contains(&c) || !self.is_new(history, &c) {
                    continue;
                }
                let score = ratio(&c);
                if best.as_ref().is_none_or(|(s, _)| score > *s) {
                    best = Some((score, c));
                }
            }
            if best.is_some() {
                break;
            }
        }
        match best {
            Some((_, c)) => Some(c),
            None => self.random_new(space, history, rng),
        }
    }

    fn random_new(
        &mut self,
        space: &SearchSpace,
        history: &History,
        rng: &mut Rng,
    ) -> Option<Configuration> {
        while let Some(c) = self.fresh.draw(space, history, rng) {
            if !self.proposed.contains(&c) {
                return Some(c);
            }
        }
        None
    }
}

impl Strategy for Tpe {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let Some(c) = self.propose(space, history, rng) else {
                break;
            };
            self.proposed.insert(c.clone());
            out.push(c);
        }
        out
    }

    fn tell(&mut self, _: &SearchSpace, _: &[Observation]) {}

    fn name(&self) -> &str {
        NAME
    }
}

pub(crate) const ENTRY: crate::Entry = crate::Entry {
    name: NAME,
    aliases: &["tree_parzen"],
    about: "Tree-structured Parzen estimator as Optuna's default sampler runs it, every parameter a categorical: after random start-up configurations, the configuration of largest ratio of the good results' density to the others' among draws from the former (multivariate: the densities are mixtures of product kernels); constraint-aware (only valid, new draws compete).",
    options: &[
        crate::OptionDoc::new("startup", "10", "Random configurations before the estimators propose (Optuna's n_startup_trials).").count(1, 1_000_000),
        crate::OptionDoc::new("candidates", "64", "Configurations drawn from the good results' density per proposal, the one of largest ratio taken (Optuna's n_ei_candidates, 24 there; 64 scored higher on unseen seeds, BENCHMARKS.md).").count(1, 100_000),
        crate::OptionDoc::new("gamma", "0.1", "The share of the results counted as good (at most max_below).").real(1e-6, 1.0),
        crate::OptionDoc::new("max_below", "25", "The most results counted as good.").count(1, 1_000_000),
        crate::OptionDoc::new("prior_weight", "1.0", "Weight of the uniform prior kernel in each density, and of the smoothing of each result's kernel over the other values.").real(1e-6, 1e6),
        crate::OptionDoc::new("multivariate", "true", "Each density a mixture of product kernels, one per result, so that values that occurred together are drawn together (Optuna's default since 5.0); false: one density per parameter, each parameter taking its own value of largest ratio (univariate TPE, Optuna's default before)."),
        crate::OptionDoc::new("univariate_until", "0", "Results before multivariate applies: with fewer, one density per parameter proposes. 100 scored +0.013 higher on the seeds it was chosen on but 0.017 lower on unseen ones (BENCHMARKS.md), so 0: multivariate from the start.").count(0, 1_000_000_000),
    ],
    tunable: &[
        crate::Tunable::new("candidates", &["24", "64", "128"]),
        crate::Tunable::new("gamma", &["0.1", "0.2", "0.3"]),
    ],
    check: crate::registry::check::<TpeOptions>,
};

#[cfg(test)]
mod tests {
    use ktune_core::{History, Rng, Strategy};
    use ktune_space::{Parameter, SearchSpace};
    use rand::SeedableRng;

    use super::{Independent, Parzen, Tpe, TpeOptions, observation_weights};
    use crate::testkit::observe;

    /// Every configuration of a `sizes` Cartesian product.
    fn all(sizes: &[usize]) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new()];
        for &k in sizes {
            out = out
                .into_iter()
                .flat_map(|c: Vec<u32>| {
                    (0..k as u32).map(move |v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        out
    }

    #[test]
    fn the_estimator_is_a_distribution_and_its_marginals_agree() {
        let sizes = [3, 2, 4];
        let centres: Vec<Vec<u32>> = (0..30).map(|i| vec![i % 3, i % 2, (i * 7) % 4]).collect();
        for n in [0, 1, 5, 30] {
            let p = Parzen::new(&sizes, centres[..n].to_vec(), 1.0);
            let configs = all(&sizes);
            let total: f64 = configs.iter().map(|c| p.log_pdf(c).exp()).sum();
            assert!((total - 1.0).abs() < 1e-12, "n = {n}: mass {total}");
            let m = Independent::marginals(&p);
            for (d, &k) in sizes.iter().enumerate() {
                for v in 0..k as u32 {
                    let joint: f64 = configs
                        .iter()
                        .filter(|c| c[d] == v)
                        .map(|c| p.log_pdf(c).exp())
                        .sum();
                    let marginal = m.log[d][v as usize].exp();
                    assert!(
                        (joint - marginal).abs() < 1e-12,
                        "n = {n}, d = {d}, v = {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn observed_combinations_are_likelier_than_their_parts_mixed() {
        // Two results: (0, 0) and (1, 1). Their mixture of product kernels makes (0, 0) and
        // (1, 1) likelier than (0, 1) and (1, 0); the product of marginals cannot.
        let p = Parzen::new(&[2, 2], vec![vec![0, 0], vec![1, 1]], 1.0);
        assert!(p.log_pdf(&[0, 0]) > p.log_pdf(&[0, 1]) + 0.3);
        let m = Independent::marginals(&p);
        let product = |c: [usize; 2]| m.log[0][c[0]] + m.log[1][c[1]];
        assert!((product([0, 0]) - product([0, 1])).abs() < 1e-12);
    }

    #[test]
    fn one_result_gives_optunas_density() {
        // Optuna 5.0, one observation of value 1 of 3: its kernel (0.5, 1.5, 0.5) / 2.5 and
        // the uniform prior, weighted alike.
        let p = Parzen::new(&[3], vec![vec![1]], 1.0);
        let expected = [0.1 + 1.0 / 6.0, 0.3 + 1.0 / 6.0, 0.1 + 1.0 / 6.0];
        for (v, e) in expected.iter().enumerate() {
            assert!(
                (p.log_pdf(&[v as u32]).exp() - e).abs() < 1e-12,
                "value {v}"
            );
        }
    }

    #[test]
    fn draws_follow_the_estimator() {
        let p = Parzen::new(&[4, 3], vec![vec![2, 1]; 8], 1.0);
        let mut rng = Rng::seed_from_u64(3);
        let n = 20_000;
        let hits = (0..n).filter(|_| p.draw(&mut rng) == [2, 1]).count() as f64 / n as f64;
        let expected = p.log_pdf(&[2, 1]).exp();
        assert!((hits - expected).abs() < 0.015, "{hits} against {expected}");
    }

    #[test]
    fn older_results_weigh_less_beyond_25_as_in_optuna() {
        assert_eq!(observation_weights(3), vec![1.0; 3]);
        assert_eq!(observation_weights(25), vec![1.0; 25]);
        // Optuna: np.linspace(1 / 30, 1, 5), then 25 ones.
        let w = observation_weights(30);
        let ramp = [1.0 / 30.0, 0.275, 31.0 / 60.0, 0.758_333_333_333_333_4, 1.0];
        for (a, b) in w[..5].iter().zip(ramp) {
            assert!((a - b).abs() < 1e-12, "{w:?}");
        }
        assert_eq!(&w[5..], &[1.0; 25]);
        assert_eq!(
            observation_weights(26),
            [vec![1.0 / 26.0], vec![1.0; 25]].concat()
        );
    }

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer_range("a", 0, 9, 1).unwrap(),
                Parameter::integer_range("b", 0, 9, 1).unwrap(),
                Parameter::integer("c", [0, 1]).unwrap(),
            ],
            &["a + b != 5"],
        )
        .unwrap()
    }

    #[test]
    fn the_good_results_choose_the_values_and_failures_count_as_bad() {
        for multivariate in [true, false] {
            let space = space();
            let mut history = History::new();
            // The good results all have a = 7 and c = 1; the others every other a, c = 0; the
            // failures a = 2 and c = 1.
            for a in (0..10).filter(|&a| a != 7) {
                for b in [1, 3, 8] {
                    if a + b != 5 {
                        observe(&mut history, &[a, b, 0], Some(10.0 + f64::from(a + b)));
                    }
                }
            }
            for b in [0, 2, 4, 6, 8] {
                observe(&mut history, &[7, b, 1], Some(1.0 + f64::from(b)));
            }
            for b in [0, 1, 2, 4, 6, 7, 8, 9] {
                observe(&mut history, &[2, b, 1], None);
            }
            let mut tpe = Tpe::checked(TpeOptions {
                multivariate,
                ..TpeOptions::default()
            });
            let asked = tpe.ask(&space, &history, 8, &mut Rng::seed_from_u64(1));
            assert_eq!(asked.len(), 8);
            let with = |d: usize, v: u32| asked.iter().filter(|c| c[d] == v).count();
            // Each parameter's own choice first: a = 7. Univariate TPE then trades a = 7
            // against b's good values (whose a = 7 combinations are taken).
            assert_eq!(asked[0][0], 7, "multivariate {multivariate}: {asked:?}");
            if multivariate {
                assert!(with(0, 7) >= 6, "{asked:?}");
            }
            assert!(with(2, 1) >= 5, "multivariate {multivariate}: {asked:?}");
            assert_eq!(with(0, 2), 0, "multivariate {multivariate}: {asked:?}");
            for c in &asked {
                assert!(space.contains(c) && !history.contains(c), "{c:?}");
            }
        }
    }

    #[test]
    fn with_several_objectives_the_good_results_are_the_first_fronts() {
        let space = space();
        let mut history = History::new();
        let mut push = |c: [u32; 3], point: Option<[f64; 2]>| {
            history.push(ktune_core::Observation {
                config: c.to_vec(),
                value: point.map(|p| p[0]),
                failure: None,
                variance: None,
                objectives: point.map_or_else(Vec::new, |p| p.to_vec()),
            });
        };
        // The front: a = 7 trading time for energy. Behind it a = 3, as fast as some of the
        // front (by time alone two of the best four) but far costlier; failures a = 2.
        for (b, t) in [(0u32, 1.0), (2, 2.0), (4, 3.0), (6, 4.0)] {
            push([7, b, 1], Some([t, 10.0 - t]));
        }
        for b in [0u32, 1, 3, 4, 6, 7, 8, 9] {
            push([3, b, 0], Some([1.5 + f64::from(b), 90.0]));
        }
        for b in [0u32, 1, 2, 4] {
            push([2, b, 1], None);
        }
        let tpe = Tpe::checked(TpeOptions {
            gamma: 0.25,
            ..TpeOptions::default()
        });
        let (below, _) = tpe.estimators(&space, &history);
        assert_eq!(below.centres.len(), 4);
        assert!(
            below.centres.iter().all(|c| c[0] == 7),
            "{:?}",
            below.centres
        );
    }

    #[test]
    fn univariate_until_proposes_univariately_then_multivariately() {
        let space = space();
        let f = |c: &[u32]| {
            f64::from((c[0] as i32 - 7).pow(2) + (c[1] as i32 - 2).pow(2)) + f64::from(c[2])
        };
        let tpe = |multivariate, univariate_until| {
            Tpe::checked(TpeOptions {
                multivariate,
                univariate_until,
                ..TpeOptions::default()
            })
        };
        let (mut hybrid, mut univariate) = (tpe(true, 25), tpe(false, 0));
        let (mut rng, mut twin_rng) = (Rng::seed_from_u64(3), Rng::seed_from_u64(3));
        let mut history = History::new();
        while history.len() < 25 {
            let asked = hybrid.ask(&space, &history, 1, &mut rng);
            assert_eq!(
                asked,
                univariate.ask(&space, &history, 1, &mut twin_rng),
                "after {} results",
                history.len()
            );
            observe(&mut history, &asked[0], Some(f(&asked[0])));
        }
        // From the 25th result on, the multivariate estimators propose (which univariate
        // ones would not always).
        let mut unlike_univariate = 0;
        for _ in 0..10 {
            let univariate = tpe(false, 0).ask(&space, &history, 1, &mut rng.clone());
            let multivariate = tpe(true, 0).ask(&space, &history, 1, &mut rng.clone());
            let asked = hybrid.ask(&space, &history, 1, &mut rng);
            assert_eq!(asked, multivariate, "after {} results", history.len());
            unlike_univariate += usize::from(asked != univariate);
            observe(&mut history, &asked[0], Some(f(&asked[0])));
        }
        assert!(unlike_univariate > 0);
    }
}
