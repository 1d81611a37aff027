//! What earlier studies say about this one: the priors' ranking of the configurations, and
//! the guard that stops trusting a prior that ranks this study's own results badly.
//!
//! Why ranks: a prior is another task (another GPU, problem size or code version), whose
//! values are in its own scale (a faster device is faster everywhere), so only its ordering
//! carries over. Each prior's results become ranks from 0 (its best) to 1 (its worst; a
//! failure is 1 too), and a configuration's score is the weighted mean of the ranks the
//! priors that measured it give it (smaller is better).
//!
//! Why weights, and these: on the 12 shared spaces the order of five other GPUs' averaged
//! ranks is worth much (issue 44: 0.835 on the mean against 0.661 for cold `auto`), but one
//! other GPU alone can mislead badly (an NVIDIA GPU's ranking on an AMD one scores below
//! -0.5). So each prior is weighted by how well it ranks this study's own results so far:
//! over the pairs of this study's results that the prior both measured, Kendall's τ between
//! the prior's ranks and the results (a failure here is worse than any value), and the
//! weight is `max(τ, 0)²`, or, as `auto` weighs its priors' order, `max(τ − 1/√pairs, 0)²`
//! (`PriorTrust::Evidence`: τ counts only beyond what chance gives on so few pairs). A prior
//! is trusted (weight 1) until three such pairs are in; an unrelated one (τ near 0) or a
//! misleading one (τ < 0) then fades within a few evaluations.
//!
//! Why a prior alone is judged by its top: its order alone makes the first proposals, and a
//! prior can rank this study's results well overall (its bad configurations are bad here too)
//! while its best ones are mediocre here: convolution on the A100 ranks the W6600's results
//! with τ ≈ 0.4, but its first picks are 13 times the W6600's optimum, where a quarter of all
//! configurations are within 3 times. So with one prior each pair counts with the hyperbolic
//! weights of the prior's ranks of its two configurations (Vigna's weighted τ,
//! `1 / (1 + rank × (n − 1))` for each): what decides is whether the configurations the prior
//! ranks best beat the others here. Over the 60 (target, source) pairs of the shared spaces,
//! seeds 0-9, that left one pair more than 2 standard errors below cold `auto` where the plain τ
//! left three (mean 0.850 against 0.856; BENCHMARKS.md, transfer). With several priors the
//! plain τ stays: their averaged order does not hang on one prior's top, and the top-weighted
//! τ scored less at 20 evaluations there (0.841 against 0.852, leaving one device out). The weights are recomputed from all pairs at every result (a few thousand
//! pairs at 100 results: microseconds).
//!
//! Why the priors are also judged by each other: before this study has results, a prior that says
//! nothing about it (values shuffled across its configurations) looks as good as one that says
//! much, and trusting it costs the first evaluations, which on spaces tuned in a dozen evaluations
//! are the whole score. But related priors agree with each other (on the shared spaces Kendall's τ
//! between two GPUs' results is 0.27-0.85 within a vendor and 0.02-0.47 across vendors;
//! `bench/prior_agreement.py`) where a shuffled one agrees with none (τ ≈ 0). So where there are
//! several priors, each starts from its mean τ with the others: one below `CONSENSUS_MIN` is not
//! trusted until this study's own results vouch for it: its τ on them must clear two standard
//! deviations of τ between unrelated rankings of as many results (for 10 results 0.50, for 40
//! 0.23), since with five priors one clears a lower bar by chance most of the time.
//!
//! A prior whose measurements mostly fold onto fewer configurations here (more than
//! `FOLDED` of them per configuration: it varied parameters this study lacks, as the other
//! kernel's spaces do for the shared names `block_size_x` and `block_size_y`) is doubted the
//! same way: its ranks of this study's configurations are a guess among the many
//! measurements that fell on each. A single prior has nothing to be judged by and is
//! trusted until its pairs come in, as before.

use ktune_core::{MatchedPrior, Observation};
use ktune_space::Configuration;
use rustc_hash::{FxHashMap, FxHashSet};

/// Pairs of results below which a prior is trusted fully.
const MIN_PAIRS: usize = 3;

/// A prior's weight below which it counts as switched off.
const OFF: f64 = 0.01;

/// The mean Kendall's τ with the other priors below which a prior is not trusted until this
/// study's results vouch for it.
const CONSENSUS_MIN: f64 = 0.1;

/// Measurements per configuration of this study above which a prior counts as folded.
const FOLDED: f64 = 2.0;

/// Candidates two priors must share for their agreement to count.
const CONSENSUS_COMMON: usize = 10;

/// At most this many shared candidates (evenly spaced in the candidates' order) are
/// compared between two priors: an exact τ on a thousand is a few milliseconds for five
/// priors, and plenty to tell 0 from 0.2.
const CONSENSUS_SAMPLE: usize = 1000;

/// How far a study trusts its priors (`auto`'s `prior_trust`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PriorTrust {
    /// Every prior counts alike, always (the fixed order).
    All,
    /// Each prior weighted by `max(τ, 0)²`.
    #[default]
    Tau,
    /// Each prior weighted by `max(τ - 1/√pairs, 0)²`: τ counts only beyond what chance
    /// gives on so few pairs; a prior alone with τ weighted to its top (as `Top`).
    Evidence,
    /// As `Evidence`, with τ weighted to the prior's top: each pair counts with the
    /// hyperbolic weights of the prior's ranks of its two configurations (Vigna's weighted
    /// τ), so what decides is whether the configurations the prior ranks best are better
    /// here than the others.
    Top,
}

/// The priors' ranking of the configurations they measured, weighted by how well each ranks
/// this study's results.
#[derive(Clone, Debug, Default)]
pub(crate) struct PriorRanking {
    /// Every configuration any prior measured, once, in the order the priors list them.
    candidates: Vec<Configuration>,
    /// Each candidate's position in `candidates`.
    index: FxHashMap<Configuration, usize>,
    /// The ranks, a row per candidate and a column per prior: 0 (best) to 1 (worst or
    /// failed), NaN where the prior did not measure it.
    ranks: Vec<f64>,
    /// The priors' values in the same layout: each prior's results standardised (on the log
    /// scale where all are positive), a failure as its worst result, NaN where the prior did
    /// not measure the candidate.
    values: Vec<f64>,
    /// Per prior: its weight.
    weights: Vec<f64>,
    /// Per prior: concordant and discordant pairs of this study's results.
    pairs: Vec<(usize, usize)>,
    /// Per prior: the same pairs weighted to the prior's top (`PriorTrust::Top`).
    weighted: Vec<(f64, f64)>,
    /// Per prior: the number of candidates it ranks (the hyperbolic weights' scale).
    ranked: Vec<f64>,
    /// Per prior: whether it agrees too little with the other priors to be trusted before
    /// this study's results vouch for it.
    doubted: Vec<bool>,
    /// Per prior: this study's results it measured too.
    measured: Vec<usize>,
    /// This study's results that some prior measured, in order: the candidate and the value
    /// (`None`: failed; in minimisation form).
    results: Vec<(usize, Option<f64>)>,
    /// Configurations already heard.
    heard: FxHashSet<Configuration>,
    /// How the weights follow this study's results.
    trust: PriorTrust,
    /// The candidates by score, for the weights they were sorted with.
    order: Option<(Vec<f64>, Vec<usize>)>,
    /// With several priors: after this many joint picks, each trusted prior's own best.
    each_best_after: Option<usize>,
    /// The constant of reciprocal rank fusion the order is scored with (`None`: the mean
    /// rank).
    fusion: Option<f64>,
    /// With several priors: pairs of this study's results that a prior ranks less than this
    /// far apart (in its ranks, 0 to 1) say nothing about it.
    min_gap: f64,
}

impl PriorRanking {
    /// The ranking of `priors`, each weighted by how well it ranks this study's results as
    /// `trust` says.
    pub(crate) fn new(priors: &[MatchedPrior], trust: PriorTrust) -> PriorRanking {
        let k = priors.len();
        let mut index: FxHashMap<Configuration, usize> = FxHashMap::default();
        let mut candidates = Vec::new();
        let mut ranks: Vec<f64> = Vec::new();
        let mut values: Vec<f64> = Vec::new();
        for (j, p) in priors.iter().enumerate() {
            for ((c, r), z) in ranks_of(p).into_iter().zip(standardised(p)) {
                let i = *index.entry(c.clone()).or_insert_with(|| {
                    candidates.push(c.clone());
                    ranks.extend(std::iter::repeat_n(f64::NAN, k));
                    values.extend(std::iter::repeat_n(f64::NAN, k));
                    candidates.len() - 1
                });
                ranks[i * k + j] = r;
                values[i * k + j] = z;
            }
        }
        let doubted: Vec<bool> = consensus(&ranks, k)
            .into_iter()
            .zip(priors)
            .map(|(tau, p)| {
                let folded = p.report.matched as f64 > FOLDED * p.report.configurations as f64;
                trust != PriorTrust::All && (folded || tau.is_some_and(|t| t < CONSENSUS_MIN))
            })
            .collect();
        PriorRanking {
            weights: doubted.iter().map(|&d| if d { 0.0 } else { 1.0 }).collect(),
            pairs: vec![(0, 0); k],
            weighted: vec![(0.0, 0.0); k],
            ranked: priors
                .iter()
                .map(|p| p.observations.len().max(2) as f64)
                .collect(),
            measured: vec![0; k],
            doubted,
            candidates,
            index,
            ranks,
            values,
            results: Vec::new(),
            heard: FxHashSet::default(),
            trust,
            order: None,
            each_best_after: None,
            fusion: None,
            min_gap: 0.0,
        }
    }

    /// With several priors, a pair of this study's results counts for or against a prior
    /// only where the prior ranks its two configurations at least `gap` apart (ranks 0 to
    /// 1). The first proposals are all near the top of every prior, and which of two
    /// near-optimal configurations is faster here is close to a coin toss: judged on such
    /// pairs the guard reweighs good priors at random and leaves the order they agree on
    /// (measured on convolution_W7800: the fixed order finds the second-best configuration
    /// 8th, the guard never within the first ten). A prior alone is judged by its top as
    /// before.
    pub(crate) fn with_min_gap(mut self, gap: f64) -> PriorRanking {
        self.min_gap = gap;
        self
    }

    /// With several priors, [`best`](Self::best) proposes each trusted prior's own best
    /// (most trusted first) after the first `after` joint picks.
    pub(crate) fn with_each_best_after(mut self, after: Option<usize>) -> PriorRanking {
        self.each_best_after = after;
        self
    }

    /// The candidates are ordered by reciprocal rank fusion with constant `k` (see
    /// [`score`](Self::score)) instead of by their mean rank; `0` keeps the mean rank.
    pub(crate) fn with_fusion(mut self, k: usize) -> PriorRanking {
        self.fusion = (k > 0).then_some(k as f64);
        self
    }

    /// Whether there is no prior, or every prior is switched off by the guard.
    pub(crate) fn is_off(&self) -> bool {
        self.weights.iter().all(|&w| w < OFF)
    }

    /// The priors' weights, in order.
    pub(crate) fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Every configuration any prior measured, once; [`value`](PriorRanking::value) and the
    /// scores take positions in it.
    pub(crate) fn candidates(&self) -> &[Configuration] {
        &self.candidates
    }

    /// The value the priors give candidate `i`: the weighted mean of their standardised
    /// results (in standard deviations of each prior's results from its mean; a failure as
    /// its worst), or `None` where no prior that counts measured it.
    pub(crate) fn value(&self, i: usize) -> Option<f64> {
        self.weighted_mean(&self.values, i)
    }

    /// The score of candidate `i` (smaller is better), or `None` where no prior that counts
    /// measured it: the weighted mean of the ranks the priors give it, or with fusion
    /// constant `k` the weighted mean of `-1 / (k + place)`, where `place` is its place in
    /// each prior's order (0 for the prior's best). Fusion puts a configuration at the top of
    /// some priors before one that is middling in all (Cormack et al., SIGIR 2009); for a
    /// prior alone both give the same order.
    fn score(&self, i: usize) -> Option<f64> {
        let Some(k_rrf) = self.fusion else {
            return self.weighted_mean(&self.ranks, i);
        };
        let k = self.weights.len();
        let (mut sum, mut weight) = (0.0, 0.0);
        let row = &self.ranks[i * k..(i + 1) * k];
        for ((&x, &w), &n) in row.iter().zip(&self.weights).zip(&self.ranked) {
            if w >= OFF && !x.is_nan() {
                sum -= w / (k_rrf + x * (n - 1.0));
                weight += w;
            }
        }
        (weight > 0.0).then(|| sum / weight)
    }

    /// Row `i` of `table` (a column per prior, NaN where unmeasured) averaged with the
    /// priors' weights, over the priors that count and measured it.
    fn weighted_mean(&self, table: &[f64], i: usize) -> Option<f64> {
        let k = self.weights.len();
        let (mut sum, mut weight) = (0.0, 0.0);
        for (&x, &w) in table[i * k..(i + 1) * k].iter().zip(&self.weights) {
            if w >= OFF && !x.is_nan() {
                sum += w * x;
                weight += w;
            }
        }
        (weight > 0.0).then(|| sum / weight)
    }

    /// Up to `n` configurations for which `usable` holds, best scored first (ties in the
    /// order the priors listed them).
    pub(crate) fn best(
        &mut self,
        n: usize,
        mut usable: impl FnMut(&Configuration) -> bool,
    ) -> Vec<Configuration> {
        if self.order.as_ref().is_none_or(|(w, _)| *w != self.weights) {
            let mut scored: Vec<(f64, usize)> = (0..self.candidates.len())
                .filter_map(|i| self.score(i).map(|s| (s, i)))
                .collect();
            scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            let joint: Vec<usize> = scored.into_iter().map(|(_, i)| i).collect();
            let order = match self.each_best_after.filter(|_| self.weights.len() > 1) {
                Some(after) => self.with_each_best(joint, after),
                None => joint,
            };
            self.order = Some((self.weights.clone(), order));
        }
        let order = self.order.as_ref().map_or(&[][..], |(_, o)| o.as_slice());
        order
            .iter()
            .map(|&i| &self.candidates[i])
            .filter(|c| usable(c))
            .take(n)
            .cloned()
            .collect()
    }

    /// The joint order with each trusted prior's own best (the most trusted first) after its
    /// first `after` picks: the joint order favours what is good on average, and the best of a
    /// prior that ranks this study well is often better here than that.
    fn with_each_best(&self, joint: Vec<usize>, after: usize) -> Vec<usize> {
        let k = self.weights.len();
        let mut priors: Vec<usize> = (0..k).filter(|&j| self.weights[j] >= OFF).collect();
        priors.sort_by(|&a, &b| self.weights[b].total_cmp(&self.weights[a]));
        let mut seq: Vec<usize> = joint.iter().take(after).copied().collect();
        for j in priors {
            let best = (0..self.candidates.len())
                .filter(|&i| !self.ranks[i * k + j].is_nan())
                .min_by(|&a, &b| self.ranks[a * k + j].total_cmp(&self.ranks[b * k + j]));
            if let Some(b) = best
                && !seq.contains(&b)
            {
                seq.push(b);
            }
        }
        let placed: FxHashSet<usize> = seq.iter().copied().collect();
        seq.extend(
            joint
                .into_iter()
                .skip(after)
                .filter(|i| !placed.contains(i)),
        );
        seq
    }

    /// Hears this study's results: each new one is compared with the earlier ones under
    /// every prior that measured both, and the weights follow.
    pub(crate) fn tell(&mut self, observations: &[Observation]) {
        let k = self.weights.len();
        for o in observations {
            if !self.heard.insert(o.config.clone()) {
                continue;
            }
            let Some(&i) = self.index.get(&o.config) else {
                continue;
            };
            for &(h, v) in &self.results {
                for j in 0..k {
                    let (r, q) = (self.ranks[i * k + j], self.ranks[h * k + j]);
                    if r.is_nan() || q.is_nan() || (k > 1 && (r - q).abs() < self.min_gap) {
                        continue;
                    }
                    let top = |x: f64| 1.0 / (1.0 + x * (self.ranked[j] - 1.0));
                    let w = top(r) + top(q);
                    match agreement(r, q, o.value, v) {
                        Some(true) => {
                            self.pairs[j].0 += 1;
                            self.weighted[j].0 += w;
                        }
                        Some(false) => {
                            self.pairs[j].1 += 1;
                            self.weighted[j].1 += w;
                        }
                        None => {}
                    }
                }
            }
            for j in 0..k {
                if !self.ranks[i * k + j].is_nan() {
                    self.measured[j] += 1;
                }
            }
            self.results.push((i, o.value));
        }
        if self.trust == PriorTrust::All {
            return;
        }
        for (j, w) in self.weights.iter_mut().enumerate() {
            let ((c, d), doubted) = (self.pairs[j], self.doubted[j]);
            *w = if c + d < MIN_PAIRS {
                if doubted { 0.0 } else { 1.0 }
            } else {
                let n = (c + d) as f64;
                // A prior alone is judged by its top: its order alone makes the proposals,
                // and a prior that ranks this study's results well overall can still rank
                // its best configurations badly here (an NVIDIA GPU's on an AMD one).
                let to_its_top =
                    self.trust == PriorTrust::Top || (k == 1 && self.trust == PriorTrust::Evidence);
                let tau = if to_its_top {
                    let (wc, wd) = self.weighted[j];
                    (wc - wd) / (wc + wd).max(f64::MIN_POSITIVE)
                } else {
                    (c as f64 - d as f64) / n
                };
                let chance = match self.trust {
                    _ if doubted => 2.0 * tau_deviation(self.measured[j]),
                    PriorTrust::Evidence | PriorTrust::Top => n.sqrt().recip(),
                    _ => 0.0,
                };
                (tau - chance).max(0.0).powi(2)
            };
        }
    }
}

/// The standard deviation of Kendall's τ between two unrelated rankings of `m` items.
fn tau_deviation(m: usize) -> f64 {
    let m = m.max(2) as f64;
    (2.0 * (2.0 * m + 5.0) / (9.0 * m * (m - 1.0))).sqrt()
}

/// Per prior: its mean Kendall's τ with each other prior over the candidates both measured
/// (where they share at least [`CONSENSUS_COMMON`]); `None` where no other prior shares
/// enough with it (a single prior).
fn consensus(ranks: &[f64], k: usize) -> Vec<Option<f64>> {
    let rows = ranks.len().checked_div(k).unwrap_or(0);
    let mut tau = vec![vec![None; k]; k];
    for a in 0..k {
        for b in a + 1..k {
            let shared: Vec<usize> = (0..rows)
                .filter(|&i| !ranks[i * k + a].is_nan() && !ranks[i * k + b].is_nan())
                .collect();
            if shared.len() < CONSENSUS_COMMON {
                continue;
            }
            let step = shared.len().div_ceil(CONSENSUS_SAMPLE);
            let sample: Vec<(f64, f64)> = shared
                .iter()
                .step_by(step)
                .map(|&i| (ranks[i * k + a], ranks[i * k + b]))
                .collect();
            let (mut concordant, mut discordant) = (0u64, 0u64);
            for (i, &(x1, y1)) in sample.iter().enumerate() {
                for &(x2, y2) in &sample[i + 1..] {
                    match ((x1 - x2) * (y1 - y2)).partial_cmp(&0.0) {
                        Some(std::cmp::Ordering::Greater) => concordant += 1,
                        Some(std::cmp::Ordering::Less) => discordant += 1,
                        _ => {}
                    }
                }
            }
            let n = concordant + discordant;
            if n > 0 {
                let t = (concordant as f64 - discordant as f64) / n as f64;
                (tau[a][b], tau[b][a]) = (Some(t), Some(t));
            }
        }
    }
    tau.into_iter()
        .map(|row| {
            let known: Vec<f64> = row.into_iter().flatten().collect();
            (!known.is_empty()).then(|| known.iter().sum::<f64>() / known.len() as f64)
        })
        .collect()
}

/// Whether the prior's ranks `r`, `q` order two results `a`, `b` (`None`: failed) the same
/// way; `None` where either side ties (two failures, equal values or equal ranks).
fn agreement(r: f64, q: f64, a: Option<f64>, b: Option<f64>) -> Option<bool> {
    let here = match (a, b) {
        (Some(a), Some(b)) => a.partial_cmp(&b)?,
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => return None,
    };
    let there = r.partial_cmp(&q)?;
    match (here, there) {
        (std::cmp::Ordering::Equal, _) | (_, std::cmp::Ordering::Equal) => None,
        (h, t) => Some(h == t),
    }
}

/// A prior's ranks, in the order it lists its configurations: its results ordered, ties
/// sharing the mean of their places, scaled to 0 (best) to 1 (worst); failures 1.
fn ranks_of(prior: &MatchedPrior) -> Vec<(&Configuration, f64)> {
    let mut valid: Vec<(f64, usize)> = prior
        .observations
        .iter()
        .enumerate()
        .filter_map(|(i, (_, v))| v.map(|v| (v, i)))
        .collect();
    valid.sort_by(|a, b| a.0.total_cmp(&b.0));
    let last = valid.len().saturating_sub(1).max(1) as f64;
    let mut rank = vec![1.0; prior.observations.len()];
    let mut i = 0;
    while i < valid.len() {
        let mut j = i;
        while j + 1 < valid.len() && valid[j + 1].0 == valid[i].0 {
            j += 1;
        }
        let place = (i + j) as f64 / 2.0 / last;
        for &(_, o) in &valid[i..=j] {
            rank[o] = place;
        }
        i = j + 1;
    }
    prior
        .observations
        .iter()
        .map(|(c, _)| c)
        .zip(rank)
        .collect()
}

/// A prior's results standardised, in the order it lists its configurations: on the log
/// scale where every result is positive (run times: devices differ by a factor, which the log
/// turns into a shift), minus their mean, over their standard deviation; a failure as its
/// worst result; all 0 where the results do not spread.
fn standardised(prior: &MatchedPrior) -> Vec<f64> {
    let positive = prior
        .observations
        .iter()
        .all(|(_, v)| v.is_none_or(|v| v > 0.0));
    let scaled = |v: f64| if positive { v.ln() } else { v };
    let valid: Vec<f64> = prior
        .observations
        .iter()
        .filter_map(|(_, v)| v.map(scaled))
        .filter(|v| v.is_finite())
        .collect();
    let n = valid.len().max(1) as f64;
    let mean = valid.iter().sum::<f64>() / n;
    let sd = (valid.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n).sqrt();
    let z = |v: f64| if sd > 0.0 { (v - mean) / sd } else { 0.0 };
    let worst = valid.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let failed = if worst.is_finite() { z(worst) } else { 0.0 };
    prior
        .observations
        .iter()
        .map(|(_, v)| match v.map(scaled) {
            Some(v) if v.is_finite() => z(v),
            _ => failed,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::MatchReport;

    fn prior(values: &[Option<f64>]) -> MatchedPrior {
        MatchedPrior {
            source: "p".into(),
            observations: values
                .iter()
                .enumerate()
                .map(|(i, v)| (vec![i as u32], *v))
                .collect(),
            report: MatchReport::default(),
        }
    }

    fn told(x: u32, v: Option<f64>) -> Observation {
        Observation {
            config: vec![x],
            value: v,
            failure: None,
            variance: None,
            objectives: Vec::new(),
        }
    }

    #[test]
    fn ranks_scale_from_best_to_worst_with_ties_and_failures() {
        let p = prior(&[Some(3.0), Some(1.0), None, Some(3.0), Some(2.0)]);
        let got: Vec<f64> = ranks_of(&p).into_iter().map(|(_, r)| r).collect();
        // 1.0 first, 2.0 second, the two 3.0 share places 2 and 3; the failure last.
        assert_eq!(got, vec![2.5 / 3.0, 0.0, 1.0, 2.5 / 3.0, 1.0 / 3.0]);
    }

    #[test]
    fn each_priors_best_can_follow_the_first_joint_picks() {
        // Joint order (mean ranks 1/6, 1/3, 1/2, ... ): 2, then the rest; a's own best is 0,
        // b's is 4.
        let a = prior(&[Some(1.0), Some(5.0), Some(2.0), Some(3.0), Some(6.0)]);
        let b = prior(&[Some(6.0), Some(5.0), Some(2.0), Some(3.0), Some(1.0)]);
        let joint = PriorRanking::new(&[a.clone(), b.clone()], PriorTrust::Tau).best(5, |_| true);
        assert_eq!(joint[0], vec![2]);
        let mut mixed =
            PriorRanking::new(&[a.clone(), b], PriorTrust::Tau).with_each_best_after(Some(1));
        let got = mixed.best(5, |_| true);
        assert_eq!(got[..3], [vec![2], vec![0], vec![4]]);
        // The rest in the joint order, each once.
        let mut sorted = got.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 5);
        // A prior alone has nothing to mix.
        let mut alone = PriorRanking::new(&[a], PriorTrust::Tau).with_each_best_after(Some(1));
        assert_eq!(alone.best(2, |_| true), vec![vec![0], vec![2]]);
    }

    #[test]
    fn fusion_puts_the_top_of_some_priors_before_the_middle_of_all() {
        // Configuration 0 is the best of two priors and the worst of the third; 1 is second
        // in all three: mean ranks 1/3 against 1/4, so the mean rank puts 1 first, fusion 0.
        let a = prior(&[Some(1.0), Some(2.0), Some(3.0), Some(4.0), Some(5.0)]);
        let c = prior(&[Some(9.0), Some(2.0), Some(3.0), Some(4.0), Some(1.0)]);
        let three = [a.clone(), a.clone(), c];
        let mean = PriorRanking::new(&three, PriorTrust::Tau).best(2, |_| true);
        assert_eq!(mean, vec![vec![1], vec![0]]);
        let fused = PriorRanking::new(&three, PriorTrust::Tau)
            .with_fusion(1)
            .best(2, |_| true);
        assert_eq!(fused, vec![vec![0], vec![1]]);
        // 0 keeps the mean rank; for a prior alone the order is the same either way.
        let plain = PriorRanking::new(&three, PriorTrust::Tau)
            .with_fusion(0)
            .best(2, |_| true);
        assert_eq!(plain, mean);
        let alone = |k| {
            PriorRanking::new(std::slice::from_ref(&a), PriorTrust::Tau)
                .with_fusion(k)
                .best(5, |_| true)
        };
        assert_eq!(alone(0), alone(300));
    }

    #[test]
    fn the_best_is_ranked_by_every_prior_and_scale_does_not_matter() {
        // The second prior is the first on a device ten times slower.
        let a = prior(&[Some(1.0), Some(2.0), Some(3.0), Some(4.0)]);
        let b = prior(&[Some(10.0), Some(30.0), Some(20.0), None]);
        let mut ranking = PriorRanking::new(&[a, b], PriorTrust::Tau);
        // Ranks 0, 1/3, 2/3, 1 and 0, 1, 1/2, 1 (failed): means 0, 2/3, 7/12, 1.
        assert_eq!(
            ranking.best(4, |_| true),
            vec![vec![0], vec![2], vec![1], vec![3]]
        );
        assert_eq!(ranking.best(2, |c| c[0] != 0), vec![vec![2], vec![1]]);
    }

    /// The priors' values are standardised per prior: a device ten times slower gives the
    /// same values (on the log scale), a failure counts as the prior's worst result, and a
    /// prior switched off by the guard no longer counts.
    #[test]
    fn values_are_standardised_per_prior_and_follow_the_weights() {
        let a = prior(&[Some(1.0), Some(2.0), Some(4.0), Some(8.0)]);
        let slow = prior(&[Some(10.0), Some(20.0), Some(40.0), Some(80.0)]);
        let ranking = PriorRanking::new(&[a.clone(), slow], PriorTrust::Tau);
        let alone = PriorRanking::new(std::slice::from_ref(&a), PriorTrust::Tau);
        let values: Vec<f64> = (0..4).map(|i| ranking.value(i).unwrap()).collect();
        for (i, v) in values.iter().enumerate() {
            assert!((v - alone.value(i).unwrap()).abs() < 1e-12, "{i}");
        }
        // ln 1, ln 2, ln 4, ln 8 are evenly spaced: standardised, ±1.342 and ±0.447.
        assert!((values[0] + 1.3416).abs() < 1e-3 && (values[2] - 0.4472).abs() < 1e-3);
        let failing = prior(&[Some(1.0), None, Some(4.0), Some(8.0)]);
        let r = PriorRanking::new(&[failing], PriorTrust::Tau);
        assert_eq!(r.value(1), r.value(3), "a failure is as bad as the worst");
        // A prior that ranks this study backwards is switched off, and its values with it.
        let backwards = prior(&[Some(8.0), Some(4.0), Some(2.0), Some(1.0)]);
        let mut r = PriorRanking::new(&[backwards], PriorTrust::Tau);
        assert!((r.value(0).unwrap() + values[0]).abs() < 1e-12);
        r.tell(&[told(0, Some(1.0)), told(1, Some(2.0)), told(2, Some(3.0))]);
        assert_eq!(r.value(0), None);
    }

    #[test]
    fn a_prior_that_ranks_this_study_backwards_fades_and_a_good_one_stays() {
        let good = prior(&[Some(1.0), Some(2.0), Some(3.0), Some(4.0), Some(5.0)]);
        let bad = prior(&[Some(5.0), Some(4.0), Some(3.0), Some(2.0), Some(1.0)]);
        let mut ranking = PriorRanking::new(&[good.clone(), bad.clone()], PriorTrust::Tau);
        // Trusted alike until there are pairs to judge them on.
        ranking.tell(&[told(0, Some(1.0)), told(4, Some(9.0))]);
        assert_eq!(ranking.weights(), [1.0, 1.0]);
        // The good prior orders 5 of the 6 pairs as they came (the failure of 3 is worse
        // than the 9.0 of 4, which it ranks last): τ = 2/3, weight 4/9; the bad one orders
        // 5 of 6 backwards: weight 0.
        ranking.tell(&[told(2, Some(5.0)), told(3, None)]);
        assert!((ranking.weights()[0] - 4.0 / 9.0).abs() < 1e-12);
        assert_eq!(ranking.weights()[1], 0.0);
        assert_eq!(ranking.best(1, |_| true), vec![vec![0]]);
        // Unguarded: both count, always.
        let mut blind = PriorRanking::new(&[good, bad.clone()], PriorTrust::All);
        blind.tell(&[told(0, Some(1.0)), told(4, Some(9.0)), told(2, Some(5.0))]);
        assert!(!blind.is_off());
        // The bad prior alone is switched off once it has misled.
        let mut alone = PriorRanking::new(&[bad], PriorTrust::Tau);
        alone.tell(&[told(0, Some(1.0)), told(4, Some(9.0)), told(2, Some(5.0))]);
        assert!(alone.is_off());
        assert_eq!(alone.best(3, |_| true), Vec::<Configuration>::new());
    }

    #[test]
    fn pairs_a_prior_ranks_close_together_do_not_judge_it_with_a_gap() {
        // Twenty candidates; both priors rank 0, 1 and 2 at the top (ranks 0 to 2/19).
        let n = 20;
        let of = |f: &dyn Fn(usize) -> f64| prior(&(0..n).map(|i| Some(f(i))).collect::<Vec<_>>());
        let (a, b) = (of(&|i| i as f64), of(&|i| i as f64 * 2.0));
        // Here 0, 1, 2 came in backwards: every pair among them disagrees with both priors.
        let backwards = [told(0, Some(3.0)), told(1, Some(2.0)), told(2, Some(1.0))];
        let mut plain = PriorRanking::new(&[a.clone(), b.clone()], PriorTrust::Tau);
        plain.tell(&backwards);
        assert!(plain.is_off(), "{:?}", plain.weights());
        // With a gap of 0.15, pairs ranked within 3/19 of each other say nothing: both stay.
        let mut gapped =
            PriorRanking::new(&[a.clone(), b.clone()], PriorTrust::Tau).with_min_gap(0.15);
        gapped.tell(&backwards);
        assert_eq!(gapped.weights(), [1.0, 1.0]);
        // Pairs ranked far apart still count: 19 (last for both) faster than 0, 1 and 2.
        gapped.tell(&[told(19, Some(0.5))]);
        assert!(gapped.is_off(), "{:?}", gapped.weights());
        // A prior alone is judged by its top as before, whatever the gap.
        let mut alone =
            PriorRanking::new(std::slice::from_ref(&a), PriorTrust::Tau).with_min_gap(0.15);
        let mut alone_plain = PriorRanking::new(&[a], PriorTrust::Tau);
        alone.tell(&backwards);
        alone_plain.tell(&backwards);
        assert_eq!(alone.weights(), alone_plain.weights());
    }

    /// Several priors are judged by each other before this study has results: one that
    /// agrees with none of the others (values shuffled) is not trusted until the study's own
    /// results vouch for it beyond chance; a single prior is trusted until its pairs come in.
    #[test]
    fn a_prior_that_agrees_with_no_other_waits_for_the_studys_evidence() {
        let n = 40;
        let of = |f: &dyn Fn(usize) -> f64| prior(&(0..n).map(|i| Some(f(i))).collect::<Vec<_>>());
        let (a, b) = (of(&|i| i as f64), of(&|i| 2.0 * i as f64 + 3.0));
        // Permutations that keep no order: τ = -0.05 with the two above, -0.2 between them.
        let shuffled = |m: usize| of(&|i| ((i * m) % n) as f64);
        let mut ranking = PriorRanking::new(&[a, b, shuffled(17)], PriorTrust::Tau);
        assert_eq!(ranking.weights(), [1.0, 1.0, 0.0]);
        // Alone, a shuffled prior has nothing to be judged by; unguarded, every prior counts.
        assert!(!PriorRanking::new(&[shuffled(17)], PriorTrust::Tau).is_off());
        assert!(!PriorRanking::new(&[shuffled(17), shuffled(29)], PriorTrust::All).is_off());
        // Two shuffled priors: neither is trusted, nothing is proposed.
        let mut doubted = PriorRanking::new(&[shuffled(17), shuffled(29)], PriorTrust::Tau);
        assert!(doubted.is_off());
        assert!(doubted.best(5, |_| true).is_empty());
        // Results in the shuffled prior's order: on four, τ = 1 is hardly beyond two
        // standard deviations of chance (2 × 0.49); on five it is (2 × 0.41).
        let result = |i: u32| told(i, Some(((i as usize * 17) % n) as f64));
        ranking.tell(&(0..4).map(result).collect::<Vec<_>>());
        assert!(ranking.weights()[2] < OFF, "{:?}", ranking.weights());
        ranking.tell(&[result(4)]);
        let vouched = (1.0 - 2.0 * tau_deviation(5)).powi(2);
        assert!(vouched > OFF);
        // A prior whose measurements fold three to a configuration is doubted too, alone.
        let mut folded = shuffled(1);
        folded.report.matched = 120;
        folded.report.configurations = 40;
        assert!(PriorRanking::new(&[folded], PriorTrust::Tau).is_off());
        assert!(
            (ranking.weights()[2] - vouched).abs() < 1e-12,
            "{:?}",
            ranking.weights()
        );
    }
}
