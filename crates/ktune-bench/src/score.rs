//! The performance score of one optimisation run.
//!
//! For a run with raw values `x_1, x_2, ...` (one per distinct configuration evaluated, `None` for
//! a failed one), `best(n)` is the best valid value among the first `n` (the space's median while
//! none is valid; a run that stopped early keeps its final best), and
//! `P(n) = (B(n) - best(n)) / (B(n) - opt)`. The run's score is the mean of `P(n)` over
//! `n = 1..n_max`: 0 is as good as random search, 1 means the optimum was found at once, below 0
//! is worse than random. The denominator is kept at least `1e-12 · |opt|` (it is 0 only at
//! `n = N`), as in kt-peer's `score.py`.
//!
//! ## References
//! - F.-J. Willemsen, R. van Nieuwpoort, B. van Werkhoven, *Bayesian optimization for auto-tuning
//!   GPU kernels* (PMBS 2021), and the constraint-aware evolutionary algorithm paper, section V-A,
//!   for the score; kt-peer's `score.py` for the exact conventions followed here.

use serde::{Deserialize, Serialize};

use crate::SpaceStats;
use crate::space::MAE_CHECKPOINTS;

/// How one run did on one space.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunScore {
    /// Mean of `P(n)` over `n = 1..n_max` (0 = random search, 1 = optimum at once).
    pub score: f64,
    /// Mean over `n = 40, 60, ..., 220` of `|best(n) - opt| / |opt|` (infinite or NaN when the
    /// optimum is 0).
    pub mae220: f64,
    /// The 1-based position of the first evaluation as good as the optimum, if any.
    pub found_optimum_at: Option<usize>,
    /// The score over the first `EARLY_HORIZONS` evaluations only (at most `n_max`):
    /// how a strategy does at small budgets.
    pub early: [f64; 3],
}

/// The small budgets the early scores are taken at (BaCO's tiny and small budgets are of
/// this order).
pub const EARLY_HORIZONS: [usize; 3] = [20, 60, 120];

/// Scores one run: `values` are the raw objective values of the distinct configurations it
/// evaluated, in order (`None`, or a non-finite value, for a configuration that failed).
///
/// ```
/// use ktune_bench::{score_run, Direction, SpaceStats};
///
/// // a space of 100 configurations (times in ms); every tenth one fails
/// let space: Vec<Option<f64>> = (1..=100)
///     .map(|i| if i % 10 == 0 { None } else { Some(i as f64) })
///     .collect();
/// let stats = SpaceStats::new("toy", &space, Direction::Minimize)?;
///
/// // a lucky run: the optimum first
/// let lucky = score_run(&stats, &[Some(1.0), Some(57.0)]);
/// assert_eq!(lucky.score, 1.0);
/// assert_eq!(lucky.found_optimum_at, Some(1));
/// assert_eq!(lucky.mae220, 0.0);
///
/// // a run that never gets past the median scores below random search
/// let poor = score_run(&stats, &[None, Some(80.0), Some(60.0)]);
/// assert!(poor.score < 0.0 && poor.found_optimum_at.is_none());
/// # Ok::<(), ktune_bench::BenchError>(())
/// ```
pub fn score_run(stats: &SpaceStats, values: &[Option<f64>]) -> RunScore {
    let sign = stats.direction().sign();
    let opt = stats.opt_min();
    let fill = stats.median_min();
    let n_max = stats.n_max();
    let horizon = stats.horizon();
    let guard = 1e-12 * opt.abs().max(1e-300);
    let mut best = f64::INFINITY;
    let mut p_sum = 0.0;
    let mut early = [0.0; 3];
    let mut mae_sum = 0.0;
    let mut next_checkpoint = 0;
    let found_optimum_at = (0..values.len())
        .find(|&i| valid_min(values, i, sign).is_some_and(|v| v <= opt))
        .map(|i| i + 1);
    for n in 1..=horizon {
        if let Some(v) = valid_min(values, n - 1, sign)
            && v < best
        {
            best = v;
        }
        let b_n = if best.is_finite() { best } else { fill };
        if n <= n_max {
            let b = stats.baseline_min(n);
            p_sum += (b - b_n) / (b - opt).max(guard);
            for (e, &h) in early.iter_mut().zip(&EARLY_HORIZONS) {
                if n == h.min(n_max) {
                    *e = p_sum / n as f64;
                }
            }
        }
        if next_checkpoint < MAE_CHECKPOINTS.len() && n == MAE_CHECKPOINTS[next_checkpoint] {
            mae_sum += (b_n - opt).abs() / opt.abs();
            next_checkpoint += 1;
        }
    }
    RunScore {
        score: p_sum / n_max as f64,
        mae220: mae_sum / MAE_CHECKPOINTS.len() as f64,
        found_optimum_at,
        early,
    }
}

/// The `i`-th value of a run in the minimised direction, if it is valid (present and finite).
fn valid_min(values: &[Option<f64>], i: usize, sign: f64) -> Option<f64> {
    values
        .get(i)
        .copied()
        .flatten()
        .filter(|v| v.is_finite())
        .map(|v| sign * v)
}

/// `best(n)` in raw units for `n = 1..=horizon` (the median while nothing valid was seen).
pub(crate) fn best_so_far_raw(
    stats: &SpaceStats,
    values: &[Option<f64>],
    horizon: usize,
) -> Vec<f64> {
    let sign = stats.direction().sign();
    let mut best = f64::INFINITY;
    (1..=horizon)
        .map(|n| {
            if let Some(v) = valid_min(values, n - 1, sign)
                && v < best
            {
                best = v;
            }
            stats.raw(if best.is_finite() {
                best
            } else {
                stats.median_min()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;
    use rand::SeedableRng;
    use rand::seq::SliceRandom;
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn space(n: usize) -> Vec<Option<f64>> {
        (0..n)
            .map(|i| (i % 6 != 5).then(|| 1.0 + ((i * 7919) % 1009) as f64 / 10.0))
            .collect()
    }

    #[test]
    fn the_baseline_itself_scores_zero() {
        let st = SpaceStats::new("s", &space(2000), Direction::Minimize).unwrap();
        let run: Vec<Option<f64>> = (1..=st.n_max()).map(|n| Some(st.baseline(n))).collect();
        let s = score_run(&st, &run);
        assert!(s.score.abs() < 1e-12, "{}", s.score);
    }

    /// A few good configurations among many: random search needs long to get close, so
    /// n_max > 120.
    fn wide_space() -> Vec<Option<f64>> {
        (0..20_000)
            .map(|i| {
                Some(if i % 1000 == 0 {
                    1.0 + i as f64 * 1e-4
                } else {
                    100.0 + (i % 997) as f64
                })
            })
            .collect()
    }

    #[test]
    fn early_scores_average_the_first_evaluations_only() {
        let wide = wide_space();
        let st = SpaceStats::new("s", &wide, Direction::Minimize).unwrap();
        assert!(st.n_max() > 120, "{}", st.n_max());
        // The baseline scores zero at every horizon; the optimum at once scores one.
        let base: Vec<Option<f64>> = (1..=st.n_max()).map(|n| Some(st.baseline(n))).collect();
        assert!(score_run(&st, &base).early.iter().all(|e| e.abs() < 1e-12));
        assert_eq!(score_run(&st, &[Some(st.optimum())]).early, [1.0; 3]);
        // Finding the optimum at evaluation 40: nothing gained in the first 20, and the
        // score at 60 is between.
        let mut late = vec![Some(st.median()); 39];
        late.push(Some(st.optimum()));
        let s = score_run(&st, &late);
        assert!(s.early[0] < 0.1, "{:?}", s.early);
        assert!(
            s.early[0] < s.early[1] && s.early[1] < s.early[2] && s.early[2] <= s.score + 1e-12
        );
        // A space whose n_max is below a horizon: that early score is the whole score.
        let small = SpaceStats::new("t", &space(30), Direction::Minimize).unwrap();
        let run: Vec<Option<f64>> = space(30).into_iter().rev().collect();
        let sc = score_run(&small, &run);
        assert!(small.n_max() <= 60);
        assert_eq!(sc.early[2], sc.score);
    }

    /// Capping a space's budget at a horizon makes the score the early score there.
    #[test]
    fn a_capped_space_scores_the_early_score() {
        let wide = wide_space();
        let st = SpaceStats::new("s", &wide, Direction::Minimize).unwrap();
        assert!(st.n_max() > 120, "{}", st.n_max());
        let mut run: Vec<Option<f64>> = (0..50).map(|i| Some(150.0 - i as f64)).collect();
        run.push(Some(st.optimum()));
        run.extend((0..100).map(|_| Some(st.median())));
        let full = score_run(&st, &run);
        for (h, early) in EARLY_HORIZONS.iter().zip(full.early) {
            let capped = st.capped(*h);
            assert_eq!(capped.n_max(), *h);
            assert!((score_run(&capped, &run).score - early).abs() < 1e-12);
            assert!((score_run(&capped, &run[..*h]).score - early).abs() < 1e-12);
        }
        assert_eq!(st.capped(100_000).n_max(), st.n_max());
    }

    #[test]
    fn optimum_first_scores_one() {
        let st = SpaceStats::new("s", &space(2000), Direction::Minimize).unwrap();
        let s = score_run(&st, &[Some(st.optimum())]);
        assert_eq!(s.score, 1.0); // P(n) = (B - opt) / (B - opt) for every n
        assert_eq!(s.mae220, 0.0);
        assert_eq!(s.found_optimum_at, Some(1));
        let later = score_run(&st, &[None, Some(50.0), Some(st.optimum())]);
        assert_eq!(later.found_optimum_at, Some(3));
        assert!(later.score < 1.0 && later.score > 0.9);
    }

    #[test]
    fn only_failures_score_the_median() {
        let st = SpaceStats::new("s", &space(2000), Direction::Minimize).unwrap();
        let (opt, med) = (st.optimum(), st.median());
        let want: f64 = (1..=st.n_max())
            .map(|n| (st.baseline(n) - med) / (st.baseline(n) - opt))
            .sum::<f64>()
            / st.n_max() as f64;
        for run in [vec![], vec![None; 10], vec![None; 5000]] {
            let s = score_run(&st, &run);
            assert!((s.score - want).abs() < 1e-12);
            assert!((s.mae220 - (med - opt) / opt).abs() < 1e-12);
            assert_eq!(s.found_optimum_at, None);
        }
    }

    #[test]
    fn random_search_scores_about_zero() {
        let items = space(1500);
        let st = SpaceStats::new("s", &items, Direction::Minimize).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
        let mut scores = Vec::new();
        for _ in 0..2000 {
            let mut run = items.clone();
            run.shuffle(&mut rng);
            run.truncate(st.budget());
            scores.push(score_run(&st, &run).score);
        }
        let m = scores.iter().sum::<f64>() / scores.len() as f64;
        let sd = (scores.iter().map(|s| (s - m).powi(2)).sum::<f64>() / (scores.len() - 1) as f64)
            .sqrt();
        let se = sd / (scores.len() as f64).sqrt();
        assert!(
            m.abs() < 4.0 * se + 0.005,
            "random search scores {m} ± {se}"
        );
    }

    #[test]
    fn a_run_that_stops_keeps_its_final_best() {
        let st = SpaceStats::new("s", &space(2000), Direction::Minimize).unwrap();
        let short = [Some(30.0), Some(12.0)];
        let mut padded = short.to_vec();
        padded.resize(st.horizon(), None);
        assert_eq!(score_run(&st, &short), score_run(&st, &padded));
        let best = best_so_far_raw(&st, &[None, Some(30.0), Some(12.0)], 5);
        assert_eq!(best, vec![st.median(), 30.0, 12.0, 12.0, 12.0]);
    }

    #[test]
    fn maximize_equals_negated_minimize() {
        let raw: Vec<Option<f64>> = space(900).iter().map(|v| v.map(|x| 1000.0 / x)).collect();
        let neg: Vec<Option<f64>> = raw.iter().map(|v| v.map(|x| -x)).collect();
        let max = SpaceStats::new("g", &raw, Direction::Maximize).unwrap();
        let min = SpaceStats::new("g", &neg, Direction::Minimize).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(2);
        for len in [0, 1, 30, 400] {
            let mut run = raw.clone();
            run.shuffle(&mut rng);
            run.truncate(len);
            let run_neg: Vec<Option<f64>> = run.iter().map(|v| v.map(|x| -x)).collect();
            assert_eq!(score_run(&max, &run), score_run(&min, &run_neg));
        }
        let best = max.optimum();
        assert_eq!(score_run(&max, &[Some(best)]).score, 1.0);
    }
}
