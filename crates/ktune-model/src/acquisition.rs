//! Acquisition functions and the portfolio that combines them, shared by the Bayesian
//! strategies.
//!
//! Every score here is in minimisation form (smaller is better), on posterior means and
//! standard deviations in the units the model was fitted in.

use std::collections::VecDeque;

/// An acquisition function (minimisation forms, as Kernel Tuner's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Acquisition {
    /// Expected improvement.
    Ei,
    /// Probability of improvement.
    Poi,
    /// Lower confidence bound.
    Lcb,
}

/// Standard normal CDF (`libm::erfc` for the tails' accuracy).
pub fn norm_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z / std::f64::consts::SQRT_2)
}

/// Standard normal PDF.
pub fn norm_pdf(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The acquisition score of a candidate with posterior `mean` and standard deviation `std`
/// (smaller is better), as Kernel Tuner's minimisation forms: EI and PI against `best - λ`,
/// LCB as `mean - λ std`.
pub fn score(af: Acquisition, mean: f64, std: f64, best: f64, lambda: f64) -> f64 {
    match af {
        Acquisition::Ei => {
            let fplus = best - lambda;
            let z = (fplus - mean) / (std + 1e-9);
            -((fplus - mean) * norm_cdf(z) + std * norm_pdf(z))
        }
        Acquisition::Poi => {
            let fplus = best - lambda;
            norm_cdf(-(fplus - mean) / (std + 1e-9))
        }
        Acquisition::Lcb => mean - lambda * std,
    }
}

/// An acquisition [`score`] with the acquisition multiplied by a candidate's `weight` (the
/// clustered GP's component weight, [`crate::Weighted`]): the expected improvement (EI) or the
/// probability of improvement (PI) scaled, the score staying in minimisation form. LCB is
/// returned unchanged: it is not an improvement and has no zero to scale towards.
pub fn weighted(af: Acquisition, score: f64, weight: f64) -> f64 {
    if weight == 1.0 {
        return score;
    }
    match af {
        Acquisition::Ei => score * weight,
        // The score is 1 - PI.
        Acquisition::Poi => 1.0 - (1.0 - score) * weight,
        Acquisition::Lcb => score,
    }
}

/// Expected improvement below `best` of a candidate whose objective (to minimise) has
/// posterior `mean` and standard deviation `std`: `(best - μ)Φ(z) + σφ(z)`,
/// `z = (best - μ)/σ` (BaCO's noise-free EI when `std` is the latent function's, without the
/// observation noise, and `best` the best observed value).
pub fn expected_improvement(mean: f64, std: f64, best: f64) -> f64 {
    let gap = best - mean;
    if std.is_nan() || std <= 0.0 {
        return gap.max(0.0);
    }
    let z = gap / std;
    (gap * norm_cdf(z) + std * norm_pdf(z)).max(0.0)
}

/// The contextual-variance exploration factor of the BO paper (section III-F):
/// `λ = (mean_var / (mu_s / best)) / var_s`. `mu_s / best` is the improvement of the best
/// observation over the initial sample mean; for values below zero (a maximised objective in
/// minimisation form) the improvement is `best / mu_s`, and when the signs differ it is 1.
pub fn contextual_variance(mean_var: f64, mu_s: f64, best: f64, var_s: f64) -> f64 {
    let improvement = if mu_s > 0.0 && best > 0.0 {
        mu_s / best
    } else if mu_s < 0.0 && best < 0.0 {
        best / mu_s
    } else {
        1.0
    };
    let norm = if var_s > 0.0 { var_s } else { 1.0 };
    (mean_var / improvement) / norm
}

/// Σ_i obs_i · discount^(t−i): recent observations weigh most.
pub fn discounted_score(observations: &[f64], discount: f64) -> f64 {
    let t = observations.len();
    observations
        .iter()
        .enumerate()
        .map(|(i, o)| o * discount.powi((t - 1 - i) as i32))
        .sum()
}

/// How a [`Portfolio`] combines its acquisition functions (the BO paper, section III-E).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combination {
    /// One function per evaluation, round-robin; functions are judged by discounted
    /// observation scores, the one repeatedly worse than the mean by the required
    /// improvement is dropped, one repeatedly better is kept alone.
    AdvancedMulti,
    /// Every function proposes each round; functions that keep proposing the same
    /// configuration as another are dropped, keeping the best by discounted score.
    Multi,
    /// A single function.
    Single,
}

/// Several acquisition functions taking turns, and the bookkeeping that judges them.
///
/// Use: [`turn`](Portfolio::turn) names the functions that propose next; the caller
/// reports what they proposed with [`proposed`](Portfolio::proposed), then each result
/// with [`record`](Portfolio::record), and calls [`round_done`](Portfolio::round_done)
/// once every proposal of the round has its result.
#[derive(Clone, Debug)]
pub struct Portfolio {
    combination: Combination,
    functions: Vec<Acquisition>,
    discount: f64,
    skip_threshold: usize,
    required_improvement: f64,
    /// Functions still in use (indices into `functions`).
    active: Vec<usize>,
    /// Advanced multi: the position of the next function in the round-robin over `active`.
    cursor: usize,
    /// Observations credited to each function.
    af_obs: Vec<Vec<f64>>,
    worse: Vec<usize>,
    better: Vec<usize>,
    /// Multi: a sliding window of whether each function proposed a duplicate.
    duplicates: Vec<VecDeque<bool>>,
    /// Results of the current round, per function.
    round: Vec<(usize, Option<f64>)>,
    /// The current round's proposals: which function, and whether it duplicated another.
    round_duplicates: Vec<(usize, bool)>,
}

impl Portfolio {
    /// A portfolio of `functions` (one for [`Combination::Single`]).
    pub fn new(
        combination: Combination,
        functions: Vec<Acquisition>,
        discount: f64,
        skip_threshold: usize,
        required_improvement: f64,
    ) -> Portfolio {
        let n = functions.len();
        Portfolio {
            combination,
            functions,
            discount,
            skip_threshold,
            required_improvement,
            active: (0..n).collect(),
            cursor: 0,
            af_obs: vec![Vec::new(); n],
            worse: vec![0; n],
            better: vec![0; n],
            duplicates: vec![VecDeque::new(); n],
            round: Vec::new(),
            round_duplicates: Vec::new(),
        }
    }

    /// The functions, by index.
    pub fn functions(&self) -> &[Acquisition] {
        &self.functions
    }

    /// How the functions are combined.
    pub fn combination(&self) -> Combination {
        self.combination
    }

    /// The functions that propose next, in order (indices into [`functions`]); advanced
    /// multi names one, the others every active function.
    ///
    /// [`functions`]: Portfolio::functions
    pub fn turn(&self) -> Vec<usize> {
        if self.combination == Combination::AdvancedMulti {
            vec![self.active[self.cursor % self.active.len()]]
        } else {
            self.active.clone()
        }
    }

    /// The functions still in use.
    pub fn active(&self) -> &[usize] {
        &self.active
    }

    /// What this turn proposed: per proposal, the function and whether it duplicated an
    /// earlier proposal of the same turn (multi credits a duplicate with the result of the
    /// proposal it repeated).
    pub fn proposed(&mut self, proposals: Vec<(usize, bool)>) {
        self.round_duplicates = proposals;
    }

    /// The result of a proposal by function `af` (`None`: it failed).
    pub fn record(&mut self, af: usize, value: Option<f64>) {
        self.round.push((af, value));
    }

    /// Called when every proposal made so far has its result: ends the turn and, when a
    /// round is complete, judges the functions. `median` is the median valid observation
    /// (the score a failed proposal is credited with), computed only when needed.
    pub fn round_done(&mut self, median: impl FnOnce() -> f64) {
        if self.round.is_empty() {
            return;
        }
        if self.combination == Combination::AdvancedMulti {
            self.cursor += 1;
            if self.cursor >= self.active.len() {
                self.cursor = 0;
                self.round_duplicates.clear();
                self.judge(median, &[]);
            }
        } else {
            let dups = std::mem::take(&mut self.round_duplicates);
            // Multi: duplicates get the observation of the function they duplicated.
            let mut round = self.round.clone();
            for (k, &(a, dup)) in dups.iter().enumerate() {
                if dup {
                    let original = dups[..k].iter().rev().find(|(_, d)| !d).map(|(o, _)| *o);
                    if let Some(v) =
                        original.and_then(|o| round.iter().find(|(x, _)| *x == o).map(|(_, v)| *v))
                    {
                        round.push((a, v));
                    }
                }
            }
            self.round = round;
            self.judge(median, &dups);
        }
    }

    /// The active function whose count (rounds judged worse, or better) is the largest, when
    /// that reaches the skip threshold; among ties the highest score when `highest` (the
    /// worst), else the lowest (the best).
    fn decided(&self, counts: &[usize], scores: &[f64], highest: bool) -> Option<usize> {
        let count = self.active.iter().map(|&a| counts[a]).max().unwrap_or(0);
        if count < self.skip_threshold {
            return None;
        }
        let tied = self.active.iter().copied().filter(|&a| counts[a] == count);
        let by_score = |a: &usize, b: &usize| scores[*a].total_cmp(&scores[*b]);
        let pick = if highest {
            tied.max_by(by_score)
        } else {
            tied.min_by(by_score)
        };
        Some(pick.unwrap_or(self.active[0]))
    }

    /// After a round's results: the multi and advanced-multi rules.
    fn judge(&mut self, median: impl FnOnce() -> f64, duplicates: &[(usize, bool)]) {
        let round = std::mem::take(&mut self.round);
        if round.is_empty() || self.active.len() <= 1 {
            return;
        }
        let median = median();
        for &(a, v) in &round {
            self.af_obs[a].push(v.unwrap_or(median));
        }
        match self.combination {
            Combination::AdvancedMulti => {
                let scores: Vec<f64> = self
                    .af_obs
                    .iter()
                    .map(|o| discounted_score(o, self.discount))
                    .collect();
                let mean =
                    self.active.iter().map(|&a| scores[a]).sum::<f64>() / self.active.len() as f64;
                // Relative to |mean| so the rule also holds for negative (maximised) values.
                let margin = self.required_improvement * mean.abs();
                for &a in &self.active {
                    if scores[a] > mean + margin {
                        self.worse[a] += 1;
                    } else if scores[a] < mean - margin {
                        self.better[a] += 1;
                    }
                }
                if let Some(worst) = self.decided(&self.worse, &scores, true) {
                    self.active.retain(|&a| a != worst);
                    self.worse.iter_mut().for_each(|c| *c = 0);
                    self.better.iter_mut().for_each(|c| *c = 0);
                } else if let Some(best) = self.decided(&self.better, &scores, false) {
                    self.active = vec![best];
                }
            }
            Combination::Multi => {
                for &(a, dup) in duplicates {
                    let w = &mut self.duplicates[a];
                    w.push_back(dup);
                    if w.len() > self.skip_threshold {
                        w.pop_front();
                    }
                }
                let candidates: Vec<usize> = self
                    .active
                    .iter()
                    .copied()
                    .filter(|&a| {
                        self.duplicates[a].iter().filter(|&&d| d).count() >= self.skip_threshold
                    })
                    .collect();
                if candidates.len() > 1 {
                    let keep = candidates
                        .iter()
                        .copied()
                        .min_by(|&a, &b| {
                            discounted_score(&self.af_obs[a], self.discount)
                                .total_cmp(&discounted_score(&self.af_obs[b], self.discount))
                        })
                        .unwrap_or(candidates[0]);
                    self.duplicates[keep].clear();
                    self.active
                        .retain(|a| *a == keep || !candidates.contains(a));
                }
            }
            Combination::Single => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contextual_variance_matches_hand_computed_values() {
        // λ = (σ̄² / (μs / f⁺)) / σ̄²_s = (0.5 / (10 / 5)) / 2 = 0.125
        assert!((contextual_variance(0.5, 10.0, 5.0, 2.0) - 0.125).abs() < 1e-15);
        // No improvement yet: μs / f⁺ = 1, so λ = σ̄² / σ̄²_s.
        assert!((contextual_variance(0.3, 4.0, 4.0, 0.6) - 0.5).abs() < 1e-15);
        // Negative values (a maximised objective): improvement is f⁺ / μs = -8 / -4 = 2.
        assert!((contextual_variance(1.0, -4.0, -8.0, 1.0) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn discounted_scores_match_hand_computed_values() {
        // 3·0.75² + 2·0.75 + 1
        assert!((discounted_score(&[3.0, 2.0, 1.0], 0.75) - 4.1875).abs() < 1e-15);
        // 0.65 (multi): 5·0.65 + 7
        assert!((discounted_score(&[5.0, 7.0], 0.65) - 10.25).abs() < 1e-15);
        assert_eq!(discounted_score(&[], 0.75), 0.0);
    }

    #[test]
    fn acquisition_functions_match_hand_computed_values() {
        // EI at μ = f⁺, σ = 1, λ = 0: σ φ(0) = 0.3989422804014327 (negated: smaller is better).
        assert!(
            (score(Acquisition::Ei, 1.0, 1.0, 1.0, 0.0) + 0.398_942_280_401_432_7).abs() < 1e-12
        );
        // PI is scored as Φ(-(f⁺ - λ - μ)/(σ + 1e-9)) (Kernel Tuner's guard against σ = 0).
        assert!(
            (score(Acquisition::Poi, 2.0, 1.0, 1.0, 0.0) - 0.841_344_746_068_542_9).abs() < 1e-9
        );
        // LCB: μ - λσ.
        assert_eq!(score(Acquisition::Lcb, 2.0, 0.5, 0.0, 2.0), 1.0);
        // A lower mean is a better EI score at equal σ.
        assert!(
            score(Acquisition::Ei, 0.5, 1.0, 1.0, 0.01)
                < score(Acquisition::Ei, 1.5, 1.0, 1.0, 0.01)
        );
    }

    #[test]
    fn expected_improvement_by_hand() {
        // At the incumbent with σ = 1: σ φ(0).
        assert!((expected_improvement(1.0, 1.0, 1.0) - 0.398_942_280_401_432_7).abs() < 1e-12);
        // No uncertainty: the plain improvement, never negative.
        assert_eq!(expected_improvement(0.5, 0.0, 1.0), 0.5);
        assert_eq!(expected_improvement(1.5, 0.0, 1.0), 0.0);
        // (best - μ)Φ(z) + σφ(z) with best - μ = 1, σ = 2: z = 0.5.
        let want = 1.0 * norm_cdf(0.5) + 2.0 * norm_pdf(0.5);
        assert!((expected_improvement(0.0, 2.0, 1.0) - want).abs() < 1e-15);
        // Lower means and larger uncertainty both promise more.
        assert!(expected_improvement(0.0, 1.0, 1.0) > expected_improvement(0.5, 1.0, 1.0));
        assert!(expected_improvement(2.0, 2.0, 1.0) > expected_improvement(2.0, 1.0, 1.0));
    }

    fn portfolio(combination: Combination) -> Portfolio {
        Portfolio::new(
            combination,
            vec![Acquisition::Ei, Acquisition::Poi, Acquisition::Lcb],
            0.75,
            2,
            0.1,
        )
    }

    #[test]
    fn advanced_multi_takes_turns_and_drops_a_function_that_stays_worse() {
        let mut p = portfolio(Combination::AdvancedMulti);
        // Rounds of three turns: EI and PI find 1.0, LCB 10.0 (or fails: the median).
        for round in 0..2 {
            for (turn, value) in [(0, Some(1.0)), (1, Some(1.0)), (2, None)] {
                assert_eq!(p.turn(), vec![turn], "round {round}");
                p.proposed(vec![(turn, false)]);
                p.record(turn, value);
                p.round_done(|| 10.0);
            }
        }
        // Worse than the mean by more than 10% twice (the skip threshold): dropped.
        assert_eq!(p.active(), &[0, 1]);
        assert_eq!(p.turn(), vec![0]);
    }

    #[test]
    fn multi_drops_functions_that_keep_duplicating_another() {
        let mut p = portfolio(Combination::Multi);
        for _ in 0..2 {
            assert_eq!(p.turn(), vec![0, 1, 2]);
            // PI repeats EI's proposal; LCB proposes something else.
            p.proposed(vec![(0, false), (1, true), (2, false)]);
            p.record(0, Some(2.0));
            p.record(2, Some(3.0));
            p.round_done(|| 2.5);
        }
        // Only PI duplicated, so nothing is dropped: dropping needs two duplicating functions.
        assert_eq!(p.active(), &[0, 1, 2]);
        for _ in 0..2 {
            p.proposed(vec![(0, false), (1, true), (2, true)]);
            p.record(0, Some(2.0));
            p.round_done(|| 2.5);
        }
        // PI and LCB both duplicated twice: the one with the better discounted score (both
        // were credited EI's 2.0 for their duplicates, LCB had 3.0 before) stays.
        assert_eq!(p.active(), &[0, 1]);
    }

    #[test]
    fn a_single_function_never_changes() {
        let mut p = Portfolio::new(Combination::Single, vec![Acquisition::Lcb], 0.75, 1, 0.1);
        for _ in 0..5 {
            assert_eq!(p.turn(), vec![0]);
            p.proposed(vec![(0, false)]);
            p.record(0, None);
            p.round_done(|| panic!("no judging with one function"));
        }
    }
}
