//! The priors in the surrogate: the Gaussian process models how this study's results differ
//! from what earlier studies measured, instead of how they differ from a constant.
//!
//! Why a mean function: a GP with a constant mean predicts the average wherever this study
//! has no result nearby, so its acquisition learns nothing from the priors about the
//! configurations it has not measured. Transfer methods in the literature put the other
//! tasks into the model (RGPE's ensemble of per-task GPs, Feurer et al. 2018; multi-task GPs;
//! the Gaussian-copula prior mean of Salinas et al. 2020). Here the priors measured the
//! configurations themselves (brute-forced or long studies of the same space), so the mean
//! needs no model of its own: it is the priors' results at each configuration, standardised
//! per prior on the log scale (devices differ by a factor, which the log turns into a
//! shift), averaged with the weights of [`crate::transfer`]'s guard, times a slope fitted to
//! this study's results.
//!
//! Why a fitted slope, never negative: it is the least-squares slope of this study's fitted
//! values on the priors' values at the same configurations, so a prior that says much pulls
//! the model as much as this study's results bear out, one that says little barely, and
//! one that ranks this study backwards (which the guard switches off too) not at all:
//! with a slope of 0 (or before three results) the model is the cold one. The GP keeps its
//! own normalisation of what remains.
//!
//! Only over every configuration of the space (the model keyed by rank); in a sampled space
//! the model goes on without it.

use ktune_core::Observation;
use ktune_model::{ModelError, Point, Surrogate, Weighted};
use ktune_space::SearchSpace;

use crate::transfer::PriorRanking;

/// Results of this study on configurations the priors measured below which the slope is 0.
const MIN_RESULTS: usize = 3;

/// A surrogate whose mean is what the priors measured ([module docs](self)); without priors,
/// the surrogate it wraps, unchanged.
pub(crate) struct PriorMean {
    inner: Box<dyn Surrogate>,
    guide: Option<Guide>,
    /// The observations' keys (ranks), in order.
    keys: Vec<Option<u64>>,
    /// The observed values as told (the inner model holds them less the mean).
    ys: Vec<f64>,
}

/// The priors' values per configuration and the slope they enter the mean with.
struct Guide {
    ranking: PriorRanking,
    /// Per rank of the space: the ranking's candidate, where a prior measured it.
    candidate: Vec<Option<u32>>,
    /// Per rank: the priors' value under the current weights (0, their mean, where none).
    value: Vec<f64>,
    /// The weights `value` was computed with.
    weights: Vec<f64>,
    slope: f64,
    /// Whether the mean is used: the strategy's held-out validation may turn it off (and on
    /// again).
    kept: bool,
}

impl Guide {
    fn new(ranking: PriorRanking, space: &SearchSpace) -> Guide {
        let mut candidate = vec![None; space.size() as usize];
        for (i, c) in ranking.candidates().iter().enumerate() {
            if let Some(r) = space.rank(c) {
                candidate[r as usize] = u32::try_from(i).ok();
            }
        }
        let mut guide = Guide {
            value: Vec::new(),
            weights: Vec::new(),
            candidate,
            ranking,
            slope: 0.0,
            kept: true,
        };
        guide.follow_weights();
        guide
    }

    /// Recomputes the values where the guard's weights changed, and returns the values and
    /// weights they replace (none where the weights did not change).
    fn follow_weights(&mut self) -> Option<(Vec<f64>, Vec<f64>)> {
        if self.weights == self.ranking.weights() {
            return None;
        }
        let value = self
            .candidate
            .iter()
            .map(|c| {
                c.and_then(|i| self.ranking.value(i as usize))
                    .unwrap_or(0.0)
            })
            .collect();
        let weights = self.ranking.weights().to_vec();
        Some((
            std::mem::replace(&mut self.value, value),
            std::mem::replace(&mut self.weights, weights),
        ))
    }

    /// The priors' value at `key`, 0 where there is none.
    fn at(&self, key: Option<u64>) -> f64 {
        key.and_then(|k| self.value.get(usize::try_from(k).ok()?))
            .copied()
            .unwrap_or(0.0)
    }

    /// The least-squares slope of `ys` on the priors' values at `keys` ([`slope`]), over
    /// the results on configurations the priors measured.
    fn fit_slope(&self, keys: &[Option<u64>], ys: &[f64]) -> f64 {
        let (xs, ys): (Vec<f64>, Vec<f64>) = keys
            .iter()
            .zip(ys)
            .filter(|(k, _)| {
                k.and_then(|k| self.candidate.get(k as usize).copied().flatten())
                    .is_some()
            })
            .map(|(&k, &y)| (self.at(k), y))
            .unzip();
        slope(&xs, &ys)
    }
}

/// The least-squares slope of `ys` on `xs`; 0 below [`MIN_RESULTS`] pairs, where the `xs` do
/// not spread, or where it is negative.
pub(crate) fn slope(xs: &[f64], ys: &[f64]) -> f64 {
    if xs.len() < MIN_RESULTS {
        return 0.0;
    }
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let (sxy, sxx) = xs.iter().zip(ys).fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    if sxx > 1e-12 {
        (sxy / sxx).max(0.0)
    } else {
        0.0
    }
}

impl PriorMean {
    /// `inner` alone, with whatever it was told already.
    pub(crate) fn plain(inner: Box<dyn Surrogate>) -> PriorMean {
        let ys = inner.observed_values().to_vec();
        PriorMean {
            keys: vec![None; ys.len()],
            ys,
            inner,
            guide: None,
        }
    }

    /// `inner` (with no observations yet, its points keyed by rank in `space`) with the mean
    /// the priors of `ranking` give (without it where `inner` was told something already).
    pub(crate) fn guided(
        inner: Box<dyn Surrogate>,
        ranking: PriorRanking,
        space: &SearchSpace,
    ) -> PriorMean {
        let guide = inner.is_empty().then(|| Guide::new(ranking, space));
        PriorMean {
            guide,
            ..PriorMean::plain(inner)
        }
    }

    /// The slope the priors' values enter the mean with (0: none, or not kept).
    #[cfg(test)]
    pub(crate) fn slope(&self) -> f64 {
        self.guide
            .as_ref()
            .filter(|g| g.kept)
            .map_or(0.0, |g| g.slope)
    }

    /// Whether the mean is kept (false without priors).
    #[cfg(test)]
    pub(crate) fn is_kept(&self) -> bool {
        self.guide.as_ref().is_some_and(|g| g.kept)
    }

    /// The priors' value at each observation, in order (none without priors).
    pub(crate) fn told_values(&self) -> Option<Vec<f64>> {
        let g = self.guide.as_ref()?;
        Some(self.keys.iter().map(|&k| g.at(k)).collect())
    }

    /// Keeps the mean or turns it off (the model is conditioned again where that changes
    /// it; where it cannot be, nothing changes).
    pub(crate) fn keep(&mut self, keep: bool) {
        let Some(g) = self.guide.as_mut() else {
            return;
        };
        if g.kept == keep {
            return;
        }
        g.kept = keep;
        let residuals = self.residuals(&self.ys);
        if self.inner.replace_values(&residuals).is_err()
            && let Some(g) = self.guide.as_mut()
        {
            g.kept = !keep;
        }
    }

    fn offset(&self, key: Option<u64>) -> f64 {
        self.guide
            .as_ref()
            .filter(|g| g.kept)
            .map_or(0.0, |g| g.slope * g.at(key))
    }

    /// This study's results, heard: the guard's weights follow them (the priors' values with
    /// them), the slope is fitted again, and the model conditioned on what the new mean leaves.
    /// Where the model cannot take the new values, it keeps the old mean.
    pub(crate) fn hear(&mut self, observations: &[Observation]) {
        let Some(guide) = self.guide.as_mut() else {
            return;
        };
        guide.ranking.tell(observations);
        let old_slope = guide.slope;
        let replaced = guide.follow_weights();
        guide.slope = guide.fit_slope(&self.keys, &self.ys);
        if !guide.kept || (replaced.is_none() && guide.slope == old_slope) {
            return;
        }
        let residuals: Vec<f64> = self.residuals(&self.ys);
        if self.inner.replace_values(&residuals).is_err()
            && let Some(g) = self.guide.as_mut()
        {
            g.slope = old_slope;
            if let Some((value, weights)) = replaced {
                (g.value, g.weights) = (value, weights);
            }
        }
    }

    /// `ys` (one per observation) less the mean at each observation.
    fn residuals(&self, ys: &[f64]) -> Vec<f64> {
        ys.iter()
            .zip(&self.keys)
            .map(|(y, &k)| y - self.offset(k))
            .collect()
    }
}

impl Surrogate for PriorMean {
    fn observe(&mut self, point: Point<'_>, y: f64) -> Result<(), ModelError> {
        let key = point.key;
        self.inner.observe(point, y - self.offset(key))?;
        self.keys.push(key);
        self.ys.push(y);
        Ok(())
    }

    fn replace_values(&mut self, ys: &[f64]) -> Result<(), ModelError> {
        if ys.len() != self.keys.len() {
            // The inner model says what is wrong.
            return self.inner.replace_values(ys);
        }
        self.inner.replace_values(&self.residuals(ys))?;
        self.ys = ys.to_vec();
        Ok(())
    }

    fn set_noise(&mut self, variances: &[f64]) -> Result<(), ModelError> {
        self.inner.set_noise(variances)
    }

    fn predict(&self, points: &[Point<'_>]) -> Result<Vec<(f64, f64)>, ModelError> {
        let mut out = self.inner.predict(points)?;
        if self.guide.is_some() {
            for (p, (m, _)) in points.iter().zip(&mut out) {
                *m += self.offset(p.key);
            }
        }
        Ok(out)
    }

    fn predict_weighted(&self, points: &[Point<'_>]) -> Result<Vec<Weighted>, ModelError> {
        let mut out = self.inner.predict_weighted(points)?;
        if self.guide.is_some() {
            for (p, w) in points.iter().zip(&mut out) {
                w.mean += self.offset(p.key);
            }
        }
        Ok(out)
    }

    fn fit(&mut self, seed: u64) -> Result<(), ModelError> {
        self.inner.fit(seed)
    }

    fn set_kernel(&mut self, kernel: ktune_model::Kernel) -> Result<(), ModelError> {
        self.inner.set_kernel(kernel)
    }

    fn observed_values(&self) -> &[f64] {
        &self.ys
    }

    fn truncate(&mut self, len: usize) {
        self.inner.truncate(len);
        self.keys.truncate(len);
        self.ys.truncate(len);
    }

    fn len(&self) -> usize {
        self.ys.len()
    }
}

#[cfg(test)]
mod tests {
    use ktune_core::{Direction, MatchedPrior, Prior};
    use ktune_model::{CandidateGp, Kernel, KernelKind};
    use ktune_space::{Parameter, SearchSpace, Value};

    use super::*;
    use crate::transfer::PriorTrust;

    fn line() -> SearchSpace {
        SearchSpace::new(
            vec![Parameter::integer_range("x", 0, 59, 1).unwrap()],
            &[] as &[&str],
        )
        .unwrap()
    }

    /// A run time with ripples, fastest near x = 41.
    fn time(x: u32) -> f64 {
        let x = f64::from(x);
        1.0 + (x - 41.0).abs() / 10.0 + 0.3 * (x * 0.9).sin().abs()
    }

    /// An earlier study that measured every configuration of `space` as `f` says.
    fn prior(space: &SearchSpace, f: impl Fn(u32) -> Option<f64>) -> MatchedPrior {
        let mut p = Prior::new("earlier", vec!["x".into()], Direction::Minimize);
        for c in space.iter() {
            p.push(vec![Value::Int(i64::from(c[0]))], f(c[0]));
        }
        p.match_onto(space, Direction::Minimize).unwrap()
    }

    /// The encoded configurations of the line, in rank order.
    fn points(space: &SearchSpace) -> Vec<f64> {
        (0..space.size()).map(|r| r as f64 / 59.0).collect()
    }

    fn model(space: &SearchSpace, priors: &[MatchedPrior]) -> PriorMean {
        let gp = CandidateGp::new(Kernel::new(KernelKind::Matern32, 0.1), points(space), 1);
        let inner = Box::new(gp.unwrap());
        if priors.is_empty() {
            PriorMean::plain(inner)
        } else {
            PriorMean::guided(inner, PriorRanking::new(priors, PriorTrust::Tau), space)
        }
    }

    /// Tells `m` this study's results at `xs` (the log of `truth`, as `bayes_opt` fits them).
    fn observe(m: &mut PriorMean, space: &SearchSpace, xs: &[u32], truth: impl Fn(u32) -> f64) {
        let p = points(space);
        let mut told = Vec::new();
        for &x in xs {
            let i = x as usize;
            let key = space.rank(&[x]).unwrap();
            m.observe(Point::keyed(&p[i..i + 1], key), truth(x).ln())
                .unwrap();
            told.push(Observation {
                config: vec![x],
                value: Some(truth(x)),
                failure: None,
                variance: None,
                objectives: Vec::new(),
            });
        }
        m.hear(&told);
    }

    fn means(m: &PriorMean, space: &SearchSpace) -> Vec<f64> {
        let p = points(space);
        let keyed: Vec<Point<'_>> = (0..60)
            .map(|i| Point::keyed(&p[i..i + 1], i as u64))
            .collect();
        m.predict(&keyed)
            .unwrap()
            .into_iter()
            .map(|p| p.0)
            .collect()
    }

    fn argmin(v: &[f64], skip: &[u32]) -> u32 {
        (0..v.len() as u32)
            .filter(|x| !skip.contains(x))
            .min_by(|&a, &b| v[a as usize].total_cmp(&v[b as usize]))
            .unwrap()
    }

    /// Four results far from the optimum: a prior of the same landscape on another device
    /// puts the model's best prediction at the optimum, which the GP alone cannot see; the
    /// observed values are interpolated either way.
    #[test]
    fn the_priors_results_become_the_mean_where_this_study_has_none() {
        let space = line();
        let seen = [5, 20, 50, 58];
        let truth = |x| 2.0 * time(x);
        let mut guided = model(&space, &[prior(&space, |x| Some(4.0 * time(x)))]);
        let mut plain = model(&space, &[]);
        observe(&mut guided, &space, &seen, truth);
        observe(&mut plain, &space, &seen, truth);
        assert!(guided.slope() > 0.1, "slope {}", guided.slope());
        let (g, p) = (means(&guided, &space), means(&plain, &space));
        let fastest = argmin(&(0..60).map(time).collect::<Vec<_>>(), &seen);
        assert_eq!(argmin(&g, &seen), fastest);
        assert!(argmin(&p, &seen).abs_diff(fastest) > 3, "{p:?}");
        for &x in &seen {
            assert!((g[x as usize] - truth(x).ln()).abs() < 1e-3, "{x}");
        }
        assert_eq!(guided.observed_values(), plain.observed_values());
    }

    /// A prior that ranks this study backwards adds nothing (the guard switches it off and
    /// the slope would be negative); the validation's `keep(false)` turns a good one off, and
    /// `keep(true)` on again.
    #[test]
    fn a_misleading_prior_or_a_mean_not_kept_leaves_the_gp_alone() {
        let space = line();
        let seen = [3, 17, 29, 41, 55];
        let mut backwards = model(&space, &[prior(&space, |x| Some(10.0 - time(x)))]);
        let mut plain = model(&space, &[]);
        observe(&mut backwards, &space, &seen, time);
        observe(&mut plain, &space, &seen, time);
        assert_eq!(backwards.slope(), 0.0);
        let close = |a: &[f64], b: &[f64]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9);
        assert!(close(&means(&backwards, &space), &means(&plain, &space)));
        let mut good = model(&space, &[prior(&space, |x| Some(3.0 * time(x)))]);
        observe(&mut good, &space, &seen, time);
        let kept = means(&good, &space);
        assert!(good.is_kept() && !close(&kept, &means(&plain, &space)));
        good.keep(false);
        assert!(!good.is_kept() && close(&means(&good, &space), &means(&plain, &space)));
        good.keep(true);
        assert!(close(&means(&good, &space), &kept));
    }

    /// Without priors it is the model it wraps, and passes the surrogate conformance suite
    /// (whose kernel check compares with a GP of constant mean, which the priors' mean is
    /// not); with them, what the suite checks besides holds too: forgotten observations
    /// leave the model as before them, and replaced values as if told from the start.
    #[test]
    fn the_surrogate_contract_holds_with_and_without_the_priors_mean() {
        let kernel = || {
            let mut k = Kernel::new(KernelKind::Matern52, 0.4);
            k.hyper.noise = 1e-8;
            k
        };
        let candidates = ktune_model::conformance::grid();
        ktune_model::conformance::check_surrogate("prior mean, no priors", &mut || {
            let inner = Box::new(CandidateGp::new(kernel(), candidates.clone(), 2).unwrap());
            Box::new(PriorMean::plain(inner))
        });
        let space = line();
        let good = prior(&space, |x| Some(3.0 * time(x)));
        let mut m = model(&space, std::slice::from_ref(&good));
        observe(&mut m, &space, &[3, 17, 29, 55], time);
        let before = means(&m, &space);
        let p = points(&space);
        for x in [8usize, 44] {
            m.observe(Point::keyed(&p[x..x + 1], x as u64), 0.5)
                .unwrap();
        }
        assert!(means(&m, &space) != before);
        m.truncate(4);
        let after = means(&m, &space);
        assert!(before.iter().zip(&after).all(|(a, b)| (a - b).abs() < 1e-9));
        let doubled: Vec<f64> = [3, 17, 29, 55].map(|x| (2.0 * time(x)).ln()).to_vec();
        m.replace_values(&doubled).unwrap();
        let mut fresh = model(&space, &[good]);
        observe(&mut fresh, &space, &[3, 17, 29, 55], time);
        fresh.replace_values(&doubled).unwrap();
        let mut again = model(&space, &[prior(&space, |x| Some(3.0 * time(x)))]);
        observe(&mut again, &space, &[3, 17, 29, 55], |x| 2.0 * time(x));
        // The slope is fitted when results are heard, so set the one `m` has.
        again.guide.as_mut().unwrap().slope = m.slope();
        again.replace_values(&doubled).unwrap();
        let (a, b) = (means(&m, &space), means(&again, &space));
        assert!(
            a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-6),
            "{a:?} {b:?}"
        );
        assert_eq!(m.observed_values(), doubled.as_slice());
    }
}
