//! One round of proposals: the acquisition functions over the candidates (or a climb from
//! the best of a sample above the candidate limit), batches on fantasised values, the
//! feasibility forest's weights, and what the model is told.

use ktune_core::Rng;
#[cfg(test)]
use ktune_model::DenseGp;
use ktune_model::acquisition::{self, Acquisition, contextual_variance};
use ktune_model::{CandidateGp, ModelError, Point, Surrogate};
use std::io::Write as _;

use crate::model_based::prior_mean::PriorMean;
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rustc_hash::FxHashSet;

use super::options::{ExplorationScale, Method};
use crate::model_based::acquisition_search::{self, SearchOptions};

use super::state::*;
use super::strategy::BayesianOptimization;

impl BayesianOptimization {
    /// Scores every unvisited candidate (or a sample in large spaces) and returns, for each
    /// active acquisition function in order, the configuration it proposes (distinct ones for
    /// advanced multi; possibly repeated ones for multi, flagged as duplicates).
    pub(super) fn propose_round(
        &self,
        st: &mut State,
        space: &SearchSpace,
        rng: &mut Rng,
    ) -> Vec<(Configuration, Option<usize>, bool)> {
        // The cGP's exploration rate: some proposals are uniformly random valid
        // configurations instead of the acquisition's maximiser.
        if let Some(cgp) = &self.cgp
            && cgp.explore(rng)
            && let Some(r) = st.sampler.clone().next_rank(rng)
        {
            return vec![(space.configuration(r), None, false)];
        }
        let functions = st.portfolio.functions().to_vec();
        if matches!(st.candidates, Candidates::Pool(_) | Candidates::Sampled) && !st.notice_given {
            {
                // A closed stderr drops the notice (`eprintln!` would panic).
                let _ = writeln!(
                    std::io::stderr(),
                    "ktune: bayes_opt: the space has {} configurations (over the candidate limit of {}); each round scores a sample of {} (drawn anew every {} rounds) plus the neighbourhoods of the best configurations{}",
                    space.size(),
                    self.opts.candidate_limit,
                    self.opts.sample_size,
                    if matches!(st.candidates, Candidates::Pool(_)) {
                        self.opts.sample_rounds
                    } else {
                        1
                    },
                    if self.opts.climb_starts > 0 {
                        format!(
                            ", and climbs from its {} best candidates",
                            self.opts.climb_starts
                        )
                    } else {
                        String::new()
                    }
                );
            }
            st.notice_given = true;
        }
        if self.opts.feasibility {
            st.refresh_forest(self.opts.feasibility_threshold, rng);
        }
        let turn: Vec<Acquisition> = st.portfolio.turn().iter().map(|&a| functions[a]).collect();
        let (ranks, (means, vars, weights)) = self.scored(st, space, rng, &turn);
        if ranks.is_empty() {
            return Vec::new();
        }
        let terms = self.terms(st, &vars);
        // Stagnation: the model keeps proposing configurations that do not improve on the
        // best, typically around one basin of a non-smooth landscape it describes badly. One
        // proposal where it knows least (largest posterior variance) leaves that basin.
        if self.opts.explore_after > 0 && st.since_improvement >= self.opts.explore_after {
            st.since_improvement = 0;
            let j = (0..vars.len())
                .filter(|&j| weights[j] > 0.0)
                .max_by(|&a, &b| vars[a].total_cmp(&vars[b]).then(b.cmp(&a)))
                .unwrap_or(0);
            return vec![(space.configuration(ranks[j]), None, false)];
        }
        let mut taken: Vec<usize> = Vec::new();
        let mut out = Vec::new();
        // Advanced multi is round-robin: one function per evaluation, each on the posterior
        // updated with every observation so far (cheap here, as the update is incremental).
        for a in st.portfolio.turn() {
            let af = functions[a];
            let exclude = self.opts.method == Method::AdvancedMulti;
            let mut arg = maximiser(af, terms, &means, &vars, &weights, |j| {
                exclude && taken.contains(&j)
            });
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

    /// `count` proposals beyond a round (a batch, or an ask while earlier proposals are
    /// still being evaluated), each on the model told every pending configuration at a
    /// fantasised value ([`Batch`]), the acquisition functions taking turns; the model is
    /// returned to its real observations afterwards.
    pub(super) fn propose_believed(
        &self,
        st: &mut State,
        space: &SearchSpace,
        rng: &mut Rng,
        count: usize,
    ) -> Vec<Configuration> {
        let real = st.model.len();
        let pending: Vec<Configuration> = st.pending.iter().map(|(c, _)| c.clone()).collect();
        for c in &pending {
            st.fantasise(space, c, self.opts.batch);
        }
        let functions = st.portfolio.functions().to_vec();
        if self.opts.feasibility {
            st.refresh_forest(self.opts.feasibility_threshold, rng);
        }
        let mut out = Vec::new();
        for k in 0..count {
            let af = functions[k % functions.len()];
            let (ranks, (means, vars, weights)) = self.scored(st, space, rng, &[af]);
            if ranks.is_empty() {
                break;
            }
            let terms = self.terms(st, &vars);
            let j = match maximiser(af, terms, &means, &vars, &weights, |_| false) {
                usize::MAX => 0,
                j => j,
            };
            let c = space.configuration(ranks[j]);
            st.mark_visited(ranks[j]);
            st.pending.push((c.clone(), None));
            if k + 1 < count {
                st.fantasise(space, &c, self.opts.batch);
            }
            out.push(c);
        }
        st.model.truncate(real);
        out
    }

    /// The unvisited candidates of a round and their posterior (and acquisition weight:
    /// 1 but for the cGP); above the candidate limit, with where the climbs of `climb_for`
    /// (the acquisition functions that propose next) ended.
    pub(super) fn scored(
        &self,
        st: &State,
        space: &SearchSpace,
        rng: &mut Rng,
        climb_for: &[Acquisition],
    ) -> (Vec<u64>, Predicted) {
        match &st.candidates {
            Candidates::All(points) => {
                let ranks: Vec<u64> = (0..space.size())
                    .filter(|r| !st.visited.contains(r))
                    .collect();
                let d = st.width();
                let keyed: Vec<Point<'_>> = ranks
                    .iter()
                    .map(|&r| {
                        let i = r as usize;
                        Point::keyed(&points[i * d..(i + 1) * d], r)
                    })
                    .collect();
                let mut predicted = predictions(&st.model, &keyed);
                feasible_weights(st, keyed.iter().map(|p| p.x), &mut predicted.2);
                st.rule_out_ranks(space, &ranks, &mut predicted.2);
                (ranks, predicted)
            }
            Candidates::Pool(pool) => {
                let w = st.width();
                let (mut ranks, mut points): (Vec<u64>, Vec<Point<'_>>) = pool
                    .ranks
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| !st.visited.contains(r))
                    .map(|(k, &r)| {
                        let x = &pool.points[k * w..(k + 1) * w];
                        (r, Point::keyed(x, (pool.first + k) as u64))
                    })
                    .unzip();
                let near = self.near_the_best(st, space, |r| pool.index.contains_key(&r));
                let xs: Vec<Vec<f64>> = near
                    .iter()
                    .map(|&r| st.encode(&space.configuration(r)))
                    .collect();
                ranks.extend(near);
                points.extend(xs.iter().map(|x| Point::new(x)));
                let mut predicted = predictions(&st.model, &points);
                feasible_weights(st, points.iter().map(|p| p.x), &mut predicted.2);
                st.rule_out_ranks(space, &ranks, &mut predicted.2);
                self.climb(st, space, rng, climb_for, &mut ranks, &mut predicted);
                (ranks, predicted)
            }
            Candidates::Sampled => {
                let mut sample = st.sampler.clone();
                let mut ranks: Vec<u64> = (0..self.opts.sample_size)
                    .map_while(|_| sample.next_rank(rng))
                    .collect();
                let sampled: FxHashSet<u64> = ranks.iter().copied().collect();
                ranks.extend(self.near_the_best(st, space, |r| sampled.contains(&r)));
                let xs: Vec<Vec<f64>> = ranks
                    .iter()
                    .map(|&r| st.encode(&space.configuration(r)))
                    .collect();
                let points: Vec<Point<'_>> = xs.iter().map(|x| Point::new(x)).collect();
                let mut predicted = predictions(&st.model, &points);
                feasible_weights(st, xs.iter().map(Vec::as_slice), &mut predicted.2);
                st.rule_out_ranks(space, &ranks, &mut predicted.2);
                self.climb(st, space, rng, climb_for, &mut ranks, &mut predicted);
                (ranks, predicted)
            }
        }
    }

    /// Above the candidate limit the acquisition's maximiser is seldom in the sample. From
    /// the `climb_starts` best candidates of each of `functions`, a hill climb over
    /// the neighbours (BaCO's local search, on the exact posterior off the sample) finds
    /// where the function is best near them; the best configuration each climb reached that
    /// is not a candidate yet joins the round's candidates, with its posterior.
    pub(super) fn climb(
        &self,
        st: &State,
        space: &SearchSpace,
        rng: &mut Rng,
        functions: &[Acquisition],
        ranks: &mut Vec<u64>,
        predicted: &mut Predicted,
    ) {
        if self.opts.climb_starts == 0 || ranks.is_empty() || !st.best.is_finite() {
            return;
        }
        let terms = self.terms(st, &predicted.1);
        let mut functions = functions.to_vec();
        functions.dedup();
        let have: FxHashSet<u64> = ranks.iter().copied().collect();
        let mut ends: Vec<Configuration> = Vec::new();
        for af in functions {
            let l = if af == Acquisition::Lcb {
                terms.lambda
            } else {
                terms.lambda * terms.scale
            };
            let (means, vars, weights) = &*predicted;
            let scores: Vec<f64> = (0..ranks.len())
                .map(|j| acquisition_value(af, means[j], vars[j], weights[j], terms.best, l))
                .collect();
            let mut order: Vec<usize> = (0..ranks.len())
                .filter(|&j| scores[j].is_finite())
                .collect();
            order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]).then(a.cmp(&b)));
            let starts: Vec<Configuration> = order
                .iter()
                .take(self.opts.climb_starts)
                .map(|&j| space.configuration(ranks[j]))
                .collect();
            let found = acquisition_search::maximise(
                space,
                SearchOptions {
                    random_points: 0,
                    exhaustive: 0,
                    starts: 0,
                },
                &starts,
                &|r| !st.visited.contains(&r),
                &mut |configs| {
                    self.acquisition_values(st, space, configs, af, terms.best, l)
                        .into_iter()
                        .map(|v| if v.is_finite() { -v } else { f64::NEG_INFINITY })
                        .collect()
                },
                rng,
            );
            if let Some((c, _)) = found.into_iter().find(|(c, _)| {
                space
                    .rank(c)
                    .is_some_and(|r| !have.contains(&r) && !ends.contains(c))
            }) {
                ends.push(c);
            }
        }
        if ends.is_empty() {
            return;
        }
        let xs: Vec<Vec<f64>> = ends.iter().map(|c| st.encode(c)).collect();
        let points = self.points_of(st, space, &ends, &xs);
        let (m, v, mut w) = predictions(&st.model, &points);
        feasible_weights(st, xs.iter().map(Vec::as_slice), &mut w);
        rule_out_configs(st, &ends, &mut w);
        ranks.extend(ends.iter().filter_map(|c| space.rank(c)));
        predicted.0.extend(m);
        predicted.1.extend(v);
        predicted.2.extend(w);
    }

    /// The unvisited configurations in the Hamming neighbourhoods of the five best
    /// observations that are not `sampled` (each once): in a large space, where the
    /// search refines what the sample found.
    pub(super) fn near_the_best(
        &self,
        st: &State,
        space: &SearchSpace,
        sampled: impl Fn(u64) -> bool,
    ) -> Vec<u64> {
        let mut best: Vec<(&Vec<f64>, f64)> = st
            .told
            .iter()
            .zip(st.model.observed_values().iter().copied())
            .collect();
        best.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let mut out = Vec::new();
        for (x, _) in best.into_iter().take(5) {
            let config = self.decode(st, space, x);
            for n in space.neighbours(&config, Neighbourhood::Hamming) {
                if let Some(r) = space.rank(&n)
                    && !st.visited.contains(&r)
                    && !sampled(r)
                    && seen.insert(r)
                {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Tells the model a valid result, making room for it first (see `make_room`).
    pub(super) fn fit(
        &self,
        st: &mut State,
        rank: u64,
        config: &[u32],
        value: f64,
        variance: Option<f64>,
        objectives: &[f64],
    ) {
        self.make_room(st);
        st.fit(rank, config, value, variance, objectives);
    }

    /// The incremental GP over every configuration holds one row of cross-covariances per
    /// observation (8 bytes a configuration): before the next observation would take them
    /// past `model_memory`, the model moves to a sample of the space, as above the candidate
    /// limit (rebuilt over the points told so far; the next round draws the sample).
    pub(super) fn make_room(&self, st: &mut State) {
        let Candidates::All(points) = &st.candidates else {
            return;
        };
        if self.cgp.is_some() {
            return;
        }
        let width = st.width();
        let configurations = points.len() / width.max(1);
        let bytes = (st.model.len() as f64 + 1.0) * configurations as f64 * 8.0;
        if bytes <= self.memory_limit() {
            return;
        }
        // On failure the model stays over every configuration, past the limit.
        if let Ok(gp) = self.model_over(st, &[]) {
            {
                // A closed stderr drops the notice (`eprintln!` would panic).
                let _ = writeln!(
                    std::io::stderr(),
                    "ktune: bayes_opt: the model over all {configurations} configurations would take more than model_memory = {} MiB at {} observations; it goes on with a sample of {} drawn anew every {} rounds",
                    self.opts.model_memory,
                    st.model.len() + 1,
                    self.opts.sample_size,
                    self.opts.sample_rounds
                );
            }
            st.notice_given = true;
            st.model = PriorMean::plain(Box::new(gp));
            st.candidates = Candidates::Pool(Pool::empty());
        }
    }

    /// A candidate GP whose candidates are the points told so far, observed again with
    /// their values and variances (one blocked factorisation), then `sample` (encoded,
    /// row-major): the model of a kept sample.
    pub(super) fn model_over(&self, st: &State, sample: &[f64]) -> Result<CandidateGp, ModelError> {
        let kernel = self.current_kernel(st);
        let candidates: Vec<f64> = st.told.iter().flatten().chain(sample).copied().collect();
        let mut gp = CandidateGp::new(kernel, candidates, st.width())?;
        let told: Vec<usize> = (0..st.told.len()).collect();
        gp.observe_all(&told, &st.targets.fitted())?;
        if let Some(variances) = st.targets.model_variances() {
            gp.set_noise(&variances)?;
        }
        Ok(gp)
    }

    /// `model_memory` in bytes.
    pub(super) fn memory_limit(&self) -> f64 {
        self.opts.model_memory * 1024.0 * 1024.0
    }

    /// In a large space, draws a fresh sample every `sample_rounds` rounds and rebuilds the
    /// model over it: the points told so far become its first candidates, observed again
    /// with their values and variances (`O(n²·m)`, once per `sample_rounds` rounds; each
    /// observation in between costs `O(n·m)`).
    pub(super) fn refresh_pool(&self, st: &mut State, space: &SearchSpace, rng: &mut Rng) {
        if let Candidates::Pool(pool) = &mut st.candidates {
            if pool.rounds_left > 0 {
                pool.rounds_left -= 1;
                return;
            }
        } else {
            return;
        }
        // No larger than `model_memory` allows for the rows of the next `sample_rounds`
        // observations (at least one configuration).
        let rows = (st.told.len() + self.opts.sample_rounds) as f64;
        let room = (self.memory_limit() / 8.0 / rows) as usize;
        let size = self
            .opts
            .sample_size
            .min(room.saturating_sub(st.told.len()))
            .max(1);
        let mut sampler = st.sampler.clone();
        let ranks: Vec<u64> = (0..size).map_while(|_| sampler.next_rank(rng)).collect();
        let mut points = Vec::with_capacity(ranks.len() * st.width());
        let mut config = vec![0u32; space.dims()];
        for &r in &ranks {
            space.write_configuration(r, &mut config);
            encode_into(&st.encoder, &st.dims, &st.aligned, &config, &mut points);
        }
        let first = st.told.len();
        let rebuilt = self.model_over(st, &points);
        let Candidates::Pool(pool) = &mut st.candidates else {
            return;
        };
        // On failure (a factorisation the old model managed incrementally), the old sample
        // and model are kept for another `sample_rounds` rounds.
        if let Ok(gp) = rebuilt {
            st.model = PriorMean::plain(Box::new(gp));
            *pool = Pool {
                index: ranks
                    .iter()
                    .enumerate()
                    .map(|(k, &r)| (r, first + k))
                    .collect(),
                ranks,
                first,
                points,
                rounds_left: 0,
            };
        }
        pool.rounds_left = self.opts.sample_rounds.saturating_sub(1);
    }

    /// λ, the incumbent (model units) and the unit of λ, for this round's variances.
    pub(super) fn terms(&self, st: &State, vars: &[f64]) -> Terms {
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
        Terms {
            lambda,
            best,
            scale,
        }
    }

    /// The alignment weight in use (`None` with alignment off or before the first ask).
    #[cfg(test)]
    pub(crate) fn alignment_weight(&self) -> Option<f64> {
        let st = self.state.as_ref()?;
        (!st.aligned.is_empty()).then_some(st.alignment_weight)
    }

    /// In a large space: the current sample's ranks, and the largest gaps between the
    /// model's posterior (mean, variance) at the sample's unvisited configurations and
    /// that of a dense GP fitted from scratch to everything told.
    #[cfg(test)]
    pub(crate) fn pool_and_gap(&self) -> Option<(Vec<u64>, f64, f64)> {
        let st = self.state.as_ref()?;
        let Candidates::Pool(pool) = &st.candidates else {
            return None;
        };
        let kernel = self.current_kernel(st);
        let dense = DenseGp::fit(&kernel, &st.told, &st.targets.fitted()).ok()?;
        let w = st.width();
        let (mut dm, mut dv) = (0.0f64, 0.0f64);
        for (k, r) in pool.ranks.iter().enumerate() {
            if st.visited.contains(r) {
                continue;
            }
            let x = &pool.points[k * w..(k + 1) * w];
            let got = st.model.predict(&[pool.point(*r, x)]).ok()?[0];
            let want = dense.predict(&[x.to_vec()])[0];
            dm = dm.max((got.0 - want.0).abs());
            dv = dv.max((got.1 - want.1).abs());
        }
        Some((pool.ranks.clone(), dm, dv))
    }

    /// The fitted kernel's lengthscales, while the validation prefers it.
    #[cfg(test)]
    pub(crate) fn fitted_lengthscales(&self) -> Option<Vec<f64>> {
        let st = self.state.as_ref()?;
        Some(st.fitted_kernel.as_ref()?.hyper.lengthscales.clone())
    }

    /// How many times the alignment weight was chosen.
    #[cfg(test)]
    pub(crate) fn alignment_validations(&self) -> usize {
        self.state.as_ref().map_or(0, |st| st.validations)
    }

    /// Ends the initial sample once `n` configurations of it are valid (fewer than asked at
    /// construction): `auto` does so when the first results show a smooth landscape.
    pub(crate) fn shorten_initial_sample(&mut self, n: usize) {
        self.opts.initial_samples = self.opts.initial_samples.min(n.max(1));
        if let Some(st) = &mut self.state {
            st.initial.clear();
        }
    }

    /// Combines the acquisition functions by `method` from the next round on, the record of
    /// how each did started afresh: `auto` does so for the last part of its budget.
    pub(crate) fn set_method(&mut self, method: Method) {
        self.opts.method = method;
        let portfolio = self.portfolio();
        if let Some(st) = &mut self.state {
            st.portfolio = portfolio;
        }
    }

    /// Samples `k` more configurations at random before the model proposes (set before the
    /// first ask): `auto` does so for the proposals it takes from priors first, so that the
    /// model still sees a uniform sample of the space.
    pub(crate) fn lengthen_initial_sample(&mut self, k: usize) {
        self.opts.initial_samples += k;
    }

    /// How promising the model finds each of `configs` as the next step of a climb from the
    /// best configuration, by `af` against the best with no exploration term (EI and PI of
    /// improving on it, LCB: the posterior mean), in minimisation form (smaller is more
    /// promising): EI and PI times the feasibility forest's probability that it runs, and
    /// +∞ wherever the forest rules it out. `None` until the initial sample is done.
    pub(crate) fn promise(
        &self,
        space: &SearchSpace,
        configs: &[Configuration],
        af: Acquisition,
    ) -> Option<Vec<f64>> {
        let st = self.state.as_ref()?;
        if !st.initial_done || !st.best.is_finite() {
            return None;
        }
        Some(self.acquisition_values(st, space, configs, af, st.to_model(st.best), 0.0))
    }

    /// `af` at each of `configs` against `best` (model units) with exploration `l`, in
    /// minimisation form, weighted by the feasibility forest (+∞ where it rules one out).
    pub(super) fn acquisition_values(
        &self,
        st: &State,
        space: &SearchSpace,
        configs: &[Configuration],
        af: Acquisition,
        best: f64,
        l: f64,
    ) -> Vec<f64> {
        let xs: Vec<Vec<f64>> = configs.iter().map(|c| st.encode(c)).collect();
        let points = self.points_of(st, space, configs, &xs);
        let (means, vars, mut weights) = predictions(&st.model, &points);
        feasible_weights(st, xs.iter().map(Vec::as_slice), &mut weights);
        rule_out_configs(st, configs, &mut weights);
        means
            .iter()
            .zip(&vars)
            .zip(&weights)
            .map(|((&mu, &var), &w)| acquisition_value(af, mu, var, w, best, l))
            .collect()
    }

    /// The model's points for `configs` (encoded as `xs`): keyed where the model holds them
    /// (cached), unkeyed otherwise.
    pub(super) fn points_of<'a>(
        &self,
        st: &'a State,
        space: &SearchSpace,
        configs: &[Configuration],
        xs: &'a [Vec<f64>],
    ) -> Vec<Point<'a>> {
        match &st.candidates {
            // Keyed by rank, as the round's candidates: the incremental model has them cached.
            Candidates::All(encoded) => {
                let d = st.width();
                configs
                    .iter()
                    .zip(xs)
                    .map(|(c, x)| match space.rank(c) {
                        Some(r) => {
                            let i = r as usize;
                            Point::keyed(&encoded[i * d..(i + 1) * d], r)
                        }
                        None => Point::new(x),
                    })
                    .collect()
            }
            Candidates::Pool(pool) => configs
                .iter()
                .zip(xs)
                .map(|(c, x)| match space.rank(c) {
                    Some(r) => pool.point(r, x),
                    None => Point::new(x),
                })
                .collect(),
            Candidates::Sampled => xs.iter().map(|x| Point::new(x)).collect(),
        }
    }

    pub(super) fn decode(&self, st: &State, space: &SearchSpace, x: &[f64]) -> Configuration {
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
}

/// Multiplies the acquisition weights by the forest's probability that each point runs, and
/// sets the weight of points below this round's ε_f to 0 (never proposed).
pub(super) fn feasible_weights<'a>(
    st: &State,
    xs: impl Iterator<Item = &'a [f64]>,
    weights: &mut [f64],
) {
    let Some((forest, limit)) = &st.forest else {
        return;
    };
    // The forest learnt from rows with the footprint appended (`State::forest_row`).
    let mut buf = Vec::new();
    for (x, w) in xs.zip(weights.iter_mut()) {
        let p = match &st.footprint {
            Some(f) => forest.probability(f.append(x, &mut buf)),
            None => forest.probability(x),
        };
        *w = if p < *limit { 0.0 } else { *w * p };
    }
}

/// Sets the weight of each of `configs` that `monotone_failures` rules out to 0.
fn rule_out_configs(st: &State, configs: &[Configuration], weights: &mut [f64]) {
    for (c, w) in configs.iter().zip(weights.iter_mut()) {
        if *w > 0.0 && st.rules_out(c) {
            *w = 0.0;
        }
    }
}

/// Means, variances and acquisition weights of the candidates.
type Predicted = (Vec<f64>, Vec<f64>, Vec<f64>);

/// What the acquisition functions of a round share.
#[derive(Clone, Copy)]
pub(super) struct Terms {
    /// The exploration factor λ.
    pub(super) lambda: f64,
    /// The incumbent, as the model fits values.
    pub(super) best: f64,
    /// The unit of λ in EI and PI.
    pub(super) scale: f64,
}

/// The candidate that `af` scores best (the first on ties and NaN: deterministic), among
/// those `skip` keeps; `usize::MAX` when none is kept or every score is NaN.
pub(super) fn maximiser(
    af: Acquisition,
    t: Terms,
    means: &[f64],
    vars: &[f64],
    weights: &[f64],
    skip: impl Fn(usize) -> bool,
) -> usize {
    let mut arg = usize::MAX;
    let mut arg_score = f64::INFINITY;
    for (j, ((&mu, &var), &w)) in means.iter().zip(vars).zip(weights).enumerate() {
        // A weight of 0: the feasibility forest rules the candidate out this round.
        if skip(j) || w <= 0.0 {
            continue;
        }
        // LCB's λ multiplies the posterior σ, which is in the fitted units already.
        let l = if af == Acquisition::Lcb {
            t.lambda
        } else {
            t.lambda * t.scale
        };
        let s = acquisition_value(af, mu, var, w, t.best, l);
        if s < arg_score {
            arg_score = s;
            arg = j;
        }
    }
    arg
}

/// `af` at one posterior (mean `mu`, variance `var`) with acquisition weight `w`, in
/// minimisation form; +∞ where the weight rules the configuration out.
pub(super) fn acquisition_value(
    af: Acquisition,
    mu: f64,
    var: f64,
    w: f64,
    best: f64,
    l: f64,
) -> f64 {
    if w <= 0.0 {
        return f64::INFINITY;
    }
    acquisition::weighted(
        af,
        acquisition::score(af, mu, var.max(0.0).sqrt(), best, l),
        w,
    )
}

/// Means, variances and acquisition weights of `points`, or the prior (weight 1) where the
/// model cannot predict (no valid observation yet, or a covariance that cannot be
/// factorised).
pub(super) fn predictions(model: &dyn Surrogate, points: &[Point<'_>]) -> Predicted {
    match model.predict_weighted(points) {
        Ok(p) => {
            let mut out = (
                Vec::with_capacity(p.len()),
                Vec::with_capacity(p.len()),
                Vec::with_capacity(p.len()),
            );
            for w in p {
                out.0.push(w.mean);
                out.1.push(w.variance);
                out.2.push(w.weight);
            }
            out
        }
        Err(_) => (
            vec![0.0; points.len()],
            vec![1.0; points.len()],
            vec![1.0; points.len()],
        ),
    }
}
