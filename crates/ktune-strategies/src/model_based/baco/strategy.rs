//! The strategy: an initial uniform sample, then per proposal a refit of the mixed-type GP
//! and of the feasibility forest, and a local search of EI × P(feasible).

use ktune_core::{History, Observation, Rng, Strategy};
use ktune_model::acquisition::expected_improvement;
use ktune_model::{
    ExactGp, FeasibilityForest, FitOptions, ForestOptions, KernelKind, Point, Priors, Surrogate,
    feasibility_limit,
};
use ktune_space::{Configuration, DistinctSampler, SearchSpace};
use rand::RngExt;
use rustc_hash::FxHashSet;
use std::io::Write as _;

use super::NAME;
use super::options::{BacoOptions, OutputTransform};
use crate::encoding::MixedEncoding;
use crate::model_based::acquisition_search::{SearchOptions, maximise};
use crate::surrogate::Cgp;
use crate::transform::{Added, Targets};

/// Bayesian optimisation as BaCO does it, for mixed, constrained spaces of any size.
pub struct Baco {
    opts: BacoOptions,
    kind: KernelKind,
    /// The clustered GP's settings when it is the surrogate.
    cgp: Option<Cgp>,
    state: Option<State>,
}

/// Everything learnt so far, built on the first `ask` (it needs the space).
struct State {
    encoding: MixedEncoding,
    /// BaCO's GP, or the clustered GP made of such GPs.
    gp: Box<dyn Surrogate>,
    targets: Targets,
    /// Every observation, failed or not: encoded point and whether it ran.
    rows: Vec<Vec<f64>>,
    ran: Vec<bool>,
    /// The best observed value (minimisation form) and the best configurations by value.
    best: Vec<(f64, Configuration)>,
    /// Configurations evaluated or proposed, by rank.
    visited: FxHashSet<u64>,
    sampler: DistinctSampler,
    /// Proposals made by uniform sampling so far.
    sampled: usize,
    /// Model-guided proposals since the hyperparameters were last fitted.
    since_fit: usize,
    /// Proposals not yet told (being evaluated, here or by other workers).
    pending: Vec<Configuration>,
}

/// `baco`'s options after [`BacoOptions::check`], with the cGP settings they resolve to.
#[derive(Clone, Debug)]
pub(crate) struct CheckedBaco {
    opts: BacoOptions,
    cgp: Option<Cgp>,
}

impl BacoOptions {
    /// The options with what they resolve to (their ranges were checked by the registry).
    pub(crate) fn resolve(self) -> CheckedBaco {
        let cgp = self.surrogate.cgp();
        CheckedBaco { opts: self, cgp }
    }
}

impl Baco {
    /// BaCO with checked options: it cannot fail.
    pub(crate) fn checked(c: CheckedBaco) -> Baco {
        Baco {
            cgp: c.cgp,
            kind: c.opts.kernel,
            opts: c.opts,
            state: None,
        }
    }

    fn fit_options(&self) -> FitOptions {
        FitOptions {
            priors: self.opts.priors.then(Priors::default),
            samples: self.opts.fit_samples,
            ..FitOptions::default()
        }
    }

    fn init(&self, space: &SearchSpace) -> State {
        for name in self.opts.permutation_distances.keys() {
            let is_permutation = space.param_index(name).is_some_and(|p| {
                matches!(
                    space.params()[p].kind(),
                    ktune_space::ParamKind::Permutation { .. }
                )
            });
            if !is_permutation {
                {
                    // A closed stderr drops the notice (`eprintln!` would panic).
                    let _ = writeln!(
                        std::io::stderr(),
                        "ktune: {NAME}: permutation_distances names `{name}`, which is not a permutation parameter of this space; ignored"
                    );
                }
            }
        }
        let encoding = MixedEncoding::new(space, self.opts.permutation_distance, &|name| {
            self.opts.permutation_distances.get(name).copied()
        });
        let exact = ExactGp::fitted(self.kind, encoding.metric().clone(), self.fit_options());
        let gp: Box<dyn Surrogate> = match self.cgp.as_ref().and_then(|c| c.model(exact.clone())) {
            Some(clustered) => Box::new(clustered),
            None => Box::new(exact),
        };
        State {
            encoding,
            gp,
            targets: Targets::new(self.opts.transform == OutputTransform::Log),
            rows: Vec::new(),
            ran: Vec::new(),
            best: Vec::new(),
            visited: FxHashSet::default(),
            sampler: DistinctSampler::new(space.size()),
            sampled: 0,
            since_fit: usize::MAX,
            pending: Vec::new(),
        }
    }

    /// The model-guided proposals: up to `n` unvisited configurations, best first, or none
    /// when the models cannot rank anything (the caller samples instead).
    fn propose(
        &self,
        st: &mut State,
        space: &SearchSpace,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        // The cGP's exploration rate: some proposals are uniformly random valid
        // configurations (the caller samples one when nothing is proposed).
        if let Some(cgp) = &self.cgp
            && cgp.explore(rng)
        {
            return Vec::new();
        }
        // Refit the hyperparameters to every observation so far (warm-started from the last
        // optimum): before every proposal while there are fewer than 200 observations (the
        // budgets BaCO is made for), then every n/100-th: a fit costs O(n³) per likelihood
        // evaluation, and with hundreds of observations one more barely moves the optimum.
        let seed: u64 = rng.random();
        st.since_fit = st.since_fit.saturating_add(1);
        if st.since_fit >= (st.gp.len() / 100).max(1) {
            let _ = st.gp.fit(seed);
            st.since_fit = 0;
        }
        let failures = st.ran.iter().any(|ok| !ok);
        let forest = (self.opts.feasibility && failures)
            .then(|| {
                FeasibilityForest::fit(&st.rows, &st.ran, &ForestOptions::default(), rng.random())
                    .ok()
            })
            .flatten();
        let limit = feasibility_limit(self.opts.feasibility_threshold, rng);
        if st.best.is_empty() {
            return Vec::new();
        }
        // One proposal with nothing pending: the acquisition's maximiser. Otherwise (a batch,
        // or an ask while earlier proposals are being evaluated) one proposal at a time, each
        // on the model told every pending configuration at its posterior mean (the kriging
        // believer, as bayes_opt does), which the model then forgets.
        if n == 1 && st.pending.is_empty() {
            return self
                .ranked(st, space, forest.as_ref(), limit, rng)
                .map(|r| r.into_iter().take(1).map(|(c, _)| c).collect())
                .unwrap_or_default();
        }
        let real = st.gp.len();
        for c in st.pending.clone() {
            st.believe(space, &c);
        }
        let mut out: Vec<Configuration> = Vec::new();
        while out.len() < n {
            let Some(ranked) = self.ranked(st, space, forest.as_ref(), limit, rng) else {
                break;
            };
            let Some((c, _)) = ranked.into_iter().find(|(c, _)| !out.contains(c)) else {
                break;
            };
            if let Some(r) = space.rank(&c) {
                st.mark(r);
            }
            st.believe(space, &c);
            out.push(c);
        }
        st.gp.truncate(real);
        out
    }

    /// Unvisited configurations by expected improvement (times the probability of being
    /// feasible), best first, from the local search; `None` when the model cannot predict.
    fn ranked(
        &self,
        st: &State,
        space: &SearchSpace,
        forest: Option<&FeasibilityForest>,
        limit: f64,
        rng: &mut Rng,
    ) -> Option<Vec<(Configuration, f64)>> {
        let (best_raw, _) = st.best.first()?;
        let best = st.targets.to_model(*best_raw);
        let encoding = &st.encoding;
        let gp = &st.gp;
        let mut failed_prediction = false;
        let mut score = |configs: &[Configuration]| -> Vec<f64> {
            let xs: Vec<Vec<f64>> = configs.iter().map(|c| encoding.encode(space, c)).collect();
            let points: Vec<Point<'_>> = xs.iter().map(|x| Point::new(x)).collect();
            let Ok(pred) = gp.predict_weighted(&points) else {
                failed_prediction = true;
                return vec![f64::NEG_INFINITY; configs.len()];
            };
            pred.iter()
                .zip(&xs)
                .map(|(w, x)| {
                    let p = forest.map_or(1.0, |f| f.probability(x));
                    if p < limit {
                        f64::NEG_INFINITY
                    } else {
                        // The weight is 1 but for the cGP (its component's weight).
                        expected_improvement(w.mean, w.variance.max(0.0).sqrt(), best)
                            * p
                            * w.weight
                    }
                })
                .collect()
        };
        let starts: Vec<Configuration> = st
            .best
            .iter()
            .take(self.opts.best_starts)
            .map(|(_, c)| c.clone())
            .collect();
        let visited = &st.visited;
        let ranked = maximise(
            space,
            SearchOptions {
                random_points: self.opts.random_points,
                exhaustive: self.opts.exhaustive,
                starts: self.opts.starts,
            },
            &starts,
            &|r| !visited.contains(&r),
            &mut score,
            rng,
        );
        (!failed_prediction).then_some(ranked)
    }
}

impl State {
    fn mark(&mut self, rank: u64) {
        self.visited.insert(rank);
        self.sampler.exclude(rank);
    }

    /// Tells the model (only) that `config` takes its posterior mean there.
    fn believe(&mut self, space: &SearchSpace, config: &Configuration) {
        let x = self.encoding.encode(space, config);
        let point = Point::new(&x);
        if let Ok(p) = self.gp.predict(std::slice::from_ref(&point))
            && let Some(&(mean, _)) = p.first()
            && mean.is_finite()
        {
            let _ = self.gp.observe(point, mean);
        }
    }

    /// Learns from one observation (proposed here or not).
    fn learn(
        &mut self,
        space: &SearchSpace,
        config: &Configuration,
        value: Option<f64>,
        variance: Option<f64>,
    ) {
        if let Some(i) = self.pending.iter().position(|c| c == config) {
            self.pending.swap_remove(i);
        }
        let Some(rank) = space.rank(config) else {
            return;
        };
        self.mark(rank);
        let x = self.encoding.encode(space, config);
        self.rows.push(x.clone());
        self.ran.push(value.is_some());
        let Some(v) = value else { return };
        match self.targets.add(v) {
            Added::Fit(t) => {
                if self.gp.observe(Point::new(&x), t).is_err() {
                    self.targets.pop();
                    return;
                }
            }
            Added::Refit => {
                // The same points with the untransformed values.
                if self.gp.observe(Point::new(&x), v).is_err() {
                    self.targets.pop();
                    return;
                }
                let _ = self.gp.replace_values(&self.targets.fitted());
            }
        }
        if let Some(variances) = self.targets.set_last_variance(variance) {
            let _ = self.gp.set_noise(&variances);
        }
        let at = self.best.partition_point(|(b, _)| *b <= v);
        self.best.insert(at, (v, config.clone()));
        self.best.truncate(16);
    }
}

impl Strategy for Baco {
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        if self.state.is_none() {
            let mut st = self.init(space);
            // A resumed run: learn from everything evaluated before.
            for o in history.observations() {
                st.learn(space, &o.config, o.value, o.variance);
            }
            self.state = Some(st);
        }
        let Some(mut st) = self.state.take() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let model_ready =
            |st: &State| st.sampled >= self.opts.initial_samples && !st.best.is_empty();
        if model_ready(&st) {
            out = self.propose(&mut st, space, n, rng);
            for c in &out {
                if let Some(r) = space.rank(c) {
                    st.mark(r);
                }
            }
        }
        // The initial design, a run where nothing has run yet, or nothing left to rank:
        // uniformly random valid configurations.
        while out.len() < n {
            let Some(r) = st.sampler.next_rank(rng) else {
                break;
            };
            st.mark(r);
            st.sampled += 1;
            out.push(space.configuration(r));
            if model_ready(&st) && out.len() < n {
                let more = self.propose(&mut st, space, n - out.len(), rng);
                for c in more {
                    if let Some(r) = space.rank(&c) {
                        st.mark(r);
                    }
                    out.push(c);
                }
            }
        }
        st.pending.extend(out.iter().cloned());
        self.state = Some(st);
        out
    }

    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        let Some(st) = self.state.as_mut() else {
            return;
        };
        for o in observations {
            st.learn(space, &o.config, o.value, o.variance);
        }
    }

    fn name(&self) -> &str {
        NAME
    }
}
