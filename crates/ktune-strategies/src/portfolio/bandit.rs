//! The area-under-the-curve bandit that OpenTuner (and ATF after it) uses to share one budget
//! among search techniques: each technique is credited when one of its proposals becomes the
//! new best, recent credits weigh more than old ones, and a small exploration term keeps every
//! technique in use.
//!
//! For arm `a`, over the last `window` results in order, with `k` counting `a`'s own results
//! (1, 2, ...): exploitation = `Σ k·[result k was a new best] / (n_a(n_a+1)/2)`, the area
//! under `a`'s cumulative-credit curve normalised to 1; exploration =
//! `sqrt(2 log2(N) / n_a)` (UCB1's term, `N` results in the window, `n_a` of them `a`'s).
//! The arm maximising `exploitation + c · exploration` is chosen; arms without a result in
//! the window come first.
//!
//! ## References
//! - J. Ansel et al., "OpenTuner: An Extensible Framework for Program Autotuning", PACT 2014,
//!   section 3.2 (the AUC bandit meta technique; defaults `c = 0.05`, window 500).
//! - R. Schulze, S. Gorlatch, A. Rasch, "Auto-Tuning Framework (ATF)": the same bandit as the
//!   default combination of its search techniques.

use std::collections::VecDeque;

use ktune_core::Rng;
use rand::RngExt;

/// Credits of a fixed set of arms over a sliding window of results.
#[derive(Clone, Debug)]
pub struct AucBandit {
    c: f64,
    window: usize,
    /// The window: which arm produced each result, and whether it was a new best.
    results: VecDeque<(usize, bool)>,
    uses: Vec<usize>,
}

impl AucBandit {
    /// A bandit over `arms` arms with exploration weight `c` and a window of `window` results
    /// (at least 1).
    pub fn new(arms: usize, c: f64, window: usize) -> AucBandit {
        AucBandit {
            c,
            window: window.max(1),
            results: VecDeque::new(),
            uses: vec![0; arms],
        }
    }

    /// Records a result of `arm`: whether it improved on the best so far.
    pub fn record(&mut self, arm: usize, improved: bool) {
        if arm >= self.uses.len() {
            return;
        }
        self.results.push_back((arm, improved));
        self.uses[arm] += 1;
        if self.results.len() > self.window
            && let Some((old, _)) = self.results.pop_front()
        {
            self.uses[old] -= 1;
        }
    }

    /// The results of `arm` in the window.
    pub fn uses(&self, arm: usize) -> usize {
        self.uses.get(arm).copied().unwrap_or(0)
    }

    /// The arm's normalised area under its credit curve, in `[0, 1]` (0 without results).
    pub fn exploitation(&self, arm: usize) -> f64 {
        let (mut k, mut area) = (0.0, 0.0);
        for &(a, improved) in &self.results {
            if a == arm {
                k += 1.0;
                if improved {
                    area += k;
                }
            }
        }
        if k == 0.0 {
            0.0
        } else {
            area * 2.0 / (k * (k + 1.0))
        }
    }

    /// The arm to use next among those `allowed`, ties broken at random; `None` when none is
    /// allowed.
    pub fn choose(&self, allowed: &[bool], rng: &mut Rng) -> Option<usize> {
        let arms: Vec<usize> = (0..self.uses.len())
            .filter(|&a| allowed.get(a).copied().unwrap_or(false))
            .collect();
        // Untried arms first, in order (the portfolio lists them by priority).
        if let Some(&a) = arms.iter().find(|&&a| self.uses[a] == 0) {
            return Some(a);
        }
        let n = self.results.len().max(2) as f64;
        let scores: Vec<f64> = arms
            .iter()
            .map(|&a| self.exploitation(a) + self.c * (2.0 * n.log2() / self.uses[a] as f64).sqrt())
            .collect();
        let top = scores.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let best: Vec<usize> = arms
            .iter()
            .zip(&scores)
            .filter(|(_, s)| **s >= top)
            .map(|(&a, _)| a)
            .collect();
        match best.len() {
            0 => None,
            1 => Some(best[0]),
            k => Some(best[rng.random_range(0..k)]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn recent_credit_weighs_more_than_old() {
        let mut b = AucBandit::new(2, 0.0, 100);
        // Arm 0 improved early, then stopped; arm 1 improves late.
        for i in 0..10 {
            b.record(0, i < 3);
            b.record(1, i >= 7);
        }
        assert!(b.exploitation(1) > b.exploitation(0));
        // Arm 0: credits at k = 1, 2, 3 of 10: (1+2+3)/55.
        assert!((b.exploitation(0) - 6.0 / 55.0).abs() < 1e-12);
        let mut rng = Rng::seed_from_u64(1);
        assert_eq!(b.choose(&[true, true], &mut rng), Some(1));
        assert_eq!(b.choose(&[true, false], &mut rng), Some(0));
        assert_eq!(b.choose(&[false, false], &mut rng), None);
    }

    #[test]
    fn untried_arms_come_first_and_the_window_forgets() {
        let mut b = AucBandit::new(3, 0.05, 4);
        let mut rng = Rng::seed_from_u64(2);
        assert_eq!(b.choose(&[true; 3], &mut rng), Some(0));
        b.record(0, true);
        assert_eq!(b.choose(&[true; 3], &mut rng), Some(1));
        b.record(1, false);
        b.record(2, false);
        assert_eq!(b.choose(&[true; 3], &mut rng), Some(0));
        // Four results later arm 0's credit has left the window.
        for _ in 0..4 {
            b.record(1, false);
        }
        assert_eq!(b.exploitation(0), 0.0);
        // Arms 0 and 2 are untried again within the window: the first comes first.
        assert_eq!(b.choose(&[true; 3], &mut rng), Some(0));
    }

    #[test]
    fn exploration_brings_back_a_neglected_arm() {
        let mut b = AucBandit::new(2, 1.0, 500);
        b.record(0, false);
        for _ in 0..50 {
            b.record(1, false);
        }
        let mut rng = Rng::seed_from_u64(3);
        // Neither has credit; the arm used once has the larger exploration term.
        assert_eq!(b.choose(&[true, true], &mut rng), Some(0));
    }
}
