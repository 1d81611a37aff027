//! Statistics of one brute-forced space: optimum, median, the exact random-search baseline
//! `B(n)` and the evaluation budget `n_max`.
//!
//! ## The baseline
//!
//! With `N` configurations of which `M` are valid, valid values sorted `v_1 <= ... <= v_M`
//! (in the minimised direction), and `n` distinct uniform draws,
//! `p_k(n) = P(no draw among the k best) = C(N-k, n) / C(N, n)`. Conditioned on at least one
//! valid draw, `P(best > v_k) = (p_k - p_M) / (1 - p_M)`, so
//!
//! ```text
//! B(n) - v_1 = Σ_{k=1}^{M-1} (v_{k+1} - v_k) (p_k - p_M) / (1 - p_M)
//! ```
//!
//! which equals `Σ_k v_k (p_{k-1} - p_k) / (1 - p_M) - v_1` (the form in the architecture note and
//! in kt-peer's `baseline.py`) but has only non-negative terms, so the distance to the optimum,
//! the denominator of the score, suffers no cancellation. The ratio of consecutive binomials
//! `p_k / p_{k-1} = (N - k + 1 - n) / (N - k + 1)` gives every `p_k` in one multiplication
//! (relative error below `k · 2^-53`, smaller than that of differences of log-gammas of
//! arguments near `N`); `p_M = C(N-M, n) / C(N, n)` comes from log-gamma (relative error about
//! `1e-11` for `N` near 20,000; it matters only for small `n`: on a space of 3,000
//! configurations `B(n)` agrees with exact rational arithmetic to `4e-12` at `n = 1` and to
//! `1e-15` from `n = 5` on). As `p_k - p_M`
//! decreases in `k`, the tail after term `k` is at most `(p_k - p_M) (v_M - v_{k+1})`, and the sum
//! stops once that bound is below `1e-17` of the sum: for large `n` only the first `~40 N / n`
//! terms count. The whole curve for `n = 1..1000` and `N = 20,000` costs a few million
//! operations and is computed once per space.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::BenchError;
use crate::special::ln_choose;

/// The budget rule stops at this many evaluations.
pub const N_MAX_CAP: usize = 1000;
/// Fraction of the way from the optimum to the median that the random baseline must reach at
/// `n_max`.
pub const N_MAX_FRACTION: f64 = 0.05;
/// MAE@220 is measured at these evaluation counts.
pub const MAE_CHECKPOINTS: [usize; 10] = [40, 60, 80, 100, 120, 140, 160, 180, 200, 220];
/// The smallest scoring horizon: every run is followed to at least this many evaluations.
pub const MIN_HORIZON: usize = 220;

/// Relative size below which the tail of the baseline sum is dropped.
const TAIL_TOLERANCE: f64 = 1e-17;

/// Whether smaller (e.g. time) or larger (e.g. GFLOP/s) objective values are better.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Smaller is better.
    Minimize,
    /// Larger is better; values are negated before the methodology is applied.
    Maximize,
}

impl Direction {
    /// The factor that turns a raw value into one to minimise.
    pub(crate) fn sign(self) -> f64 {
        match self {
            Direction::Minimize => 1.0,
            Direction::Maximize => -1.0,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Direction::Minimize => "minimize",
            Direction::Maximize => "maximize",
        })
    }
}

impl FromStr for Direction {
    type Err = BenchError;

    /// Accepts `minimize`/`min` and `maximize`/`max`, in any case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "minimize" | "min" => Ok(Direction::Minimize),
            "maximize" | "max" => Ok(Direction::Maximize),
            _ => Err(BenchError::InvalidDirection(s.to_string())),
        }
    }
}

/// Statistics of one brute-forced space, from the objective value of each of its N configurations
/// (None = the configuration fails when run). Values are raw; `direction` says how to read them.
///
/// The random-search baseline `B(n)` is computed once, for `n = 1..min(N, 1000)`, when the
/// statistics are built.
#[derive(Clone, Debug)]
pub struct SpaceStats {
    name: String,
    direction: Direction,
    n_total: usize,
    /// Valid values in the minimised direction (raw times `direction.sign()`), ascending.
    sorted: Vec<f64>,
    /// Median of `sorted` (numpy's convention: mean of the two middle values when M is even).
    median: f64,
    /// `curve[n - 1] = B(n)` in the minimised direction, `n = 1..=min(N, N_MAX_CAP)`.
    curve: Vec<f64>,
    n_max: usize,
    /// Evaluations a run gets at least (see [`SpaceStats::with_budget_at_least`]).
    budget_floor: usize,
}

impl SpaceStats {
    /// Builds the statistics of a space from the raw objective value of each configuration.
    ///
    /// # Errors
    /// [`BenchError::NoValidValue`] when every configuration fails (or there are none),
    /// [`BenchError::NonFiniteValue`] for a NaN or infinite value.
    pub fn new(
        name: impl Into<String>,
        values: &[Option<f64>],
        direction: Direction,
    ) -> Result<SpaceStats, BenchError> {
        let name = name.into();
        let sign = direction.sign();
        let mut sorted = Vec::with_capacity(values.len());
        for (index, v) in values.iter().enumerate() {
            if let Some(v) = *v {
                if !v.is_finite() {
                    return Err(BenchError::NonFiniteValue {
                        space: name,
                        index,
                        value: v,
                    });
                }
                sorted.push(sign * v);
            }
        }
        if sorted.is_empty() {
            return Err(BenchError::NoValidValue { space: name });
        }
        sorted.sort_by(f64::total_cmp);
        let median = crate::table::median_of_sorted(&sorted);
        let n_total = values.len();
        let curve: Vec<f64> = (1..=n_total.min(N_MAX_CAP))
            .map(|n| sorted[0] + expected_excess(&sorted, n_total, n))
            .collect();
        let n_max = budget_rule(&curve, sorted[0], median);
        Ok(SpaceStats {
            name,
            direction,
            n_total,
            sorted,
            median,
            curve,
            n_max,
            budget_floor: 0,
        })
    }

    /// The space's name (the file stem that traces use).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// N: the number of configurations, failing ones included.
    pub fn n_total(&self) -> usize {
        self.n_total
    }

    /// M: the number of configurations with a valid objective value.
    pub fn n_valid(&self) -> usize {
        self.sorted.len()
    }

    /// Whether smaller or larger values are better.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// Whether some configuration of the space has the raw value `v` (to a relative 1e-9:
    /// traces written by other tools go through decimal text).
    pub fn holds(&self, v: f64) -> bool {
        let v = self.direction.sign() * v;
        let tolerance = 1e-9 * v.abs();
        let at = self.sorted.partition_point(|&x| x < v - tolerance);
        self.sorted.get(at).is_some_and(|&x| x <= v + tolerance)
    }

    /// The best valid value, in raw units (e.g. the largest GFLOP/s for [`Direction::Maximize`]).
    pub fn optimum(&self) -> f64 {
        self.raw(self.sorted[0])
    }

    /// The median of the valid values, in raw units (the mean of the two middle values when
    /// their number is even, as numpy does).
    pub fn median(&self) -> f64 {
        self.raw(self.median)
    }

    /// `B(n)`: the exact expected best value, in raw units, of `n` distinct uniform draws among
    /// the N configurations, given at least one valid draw.
    ///
    /// `n > N` is treated as `N` (where `B = optimum`), `n = 0` as 1. Values for
    /// `n <= min(N, 1000)` come from a cache; larger `n` cost `O(M)`.
    pub fn baseline(&self, n: usize) -> f64 {
        self.raw(self.baseline_min(n))
    }

    /// `n_max`: the smallest `n` with `B(n) <= opt + 0.05 (median - opt)`, capped at
    /// `min(N, 1000)` (found by bisection, as the reference implementation does).
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The same space scored over at most `horizon` evaluations: `n_max` capped at it, so
    /// that a run's score is its early score at `horizon`. For comparing tools that were given
    /// fewer evaluations than the space's budget (a peer too slow to run to it).
    pub fn capped(&self, horizon: usize) -> SpaceStats {
        SpaceStats {
            n_max: self.n_max.min(horizon.max(1)),
            ..self.clone()
        }
    }

    /// The number of evaluations to give every strategy on this space: `max(n_max, 220)`,
    /// or more where [`with_budget_at_least`](Self::with_budget_at_least) asked, capped at N.
    pub fn budget(&self) -> usize {
        self.horizon().max(self.budget_floor).min(self.n_total)
    }

    /// The same space with runs given at least `n` evaluations (the score is unchanged): a
    /// space scored on two objectives too needs runs as long as its front's `n_max`.
    pub fn with_budget_at_least(mut self, n: usize) -> SpaceStats {
        self.budget_floor = n;
        self
    }

    /// The scoring horizon `max(n_max, 220)` (not capped at N: a run is followed to 220
    /// evaluations for MAE@220 even on a smaller space, keeping its final best).
    pub(crate) fn horizon(&self) -> usize {
        self.n_max.max(MIN_HORIZON)
    }

    /// The optimum in the minimised direction.
    pub(crate) fn opt_min(&self) -> f64 {
        self.sorted[0]
    }

    /// The worst valid value in the minimised direction.
    pub(crate) fn worst_min(&self) -> f64 {
        self.sorted[self.sorted.len() - 1]
    }

    /// The median in the minimised direction.
    pub(crate) fn median_min(&self) -> f64 {
        self.median
    }

    /// `B(n)` in the minimised direction.
    pub(crate) fn baseline_min(&self, n: usize) -> f64 {
        let n = n.clamp(1, self.n_total);
        match self.curve.get(n - 1) {
            Some(&b) => b,
            None => self.sorted[0] + expected_excess(&self.sorted, self.n_total, n),
        }
    }

    /// A raw value from one in the minimised direction.
    pub(crate) fn raw(&self, v: f64) -> f64 {
        self.direction.sign() * v
    }
}

/// `B(n) - v_1` for `n` distinct draws from `n_total` configurations whose valid values are
/// `sorted` (ascending, minimised direction); `1 <= n <= n_total`. See the module docs.
fn expected_excess(sorted: &[f64], n_total: usize, n: usize) -> f64 {
    let m = sorted.len();
    let big_n = n_total;
    debug_assert!(n >= 1 && n <= big_n && m >= 1 && m <= big_n);
    // p_M = C(N - M, n) / C(N, n): the chance that every draw fails.
    let ln_p_fail = ln_choose(big_n - m, n) - ln_choose(big_n, n);
    let p_fail = ln_p_fail.exp();
    let p_valid = if ln_p_fail == f64::NEG_INFINITY {
        1.0
    } else {
        -ln_p_fail.exp_m1()
    };
    let v_max = sorted[m - 1];
    let mut p = 1.0; // p_0
    let mut sum = 0.0;
    for k in 1..m {
        // p_k = p_{k-1} (N - k + 1 - n) / (N - k + 1); zero once fewer than n remain.
        let remaining = big_n - k + 1;
        if remaining <= n {
            break;
        }
        p *= (remaining - n) as f64 / remaining as f64;
        let excess = p - p_fail;
        if excess <= 0.0 {
            break;
        }
        sum += (sorted[k] - sorted[k - 1]) * excess;
        if excess * (v_max - sorted[k]) <= TAIL_TOLERANCE * sum {
            break;
        }
    }
    sum / p_valid
}

/// The budget rule by bisection over the cached curve (`curve[n-1] = B(n)`), exactly as
/// kt-peer's `RandomBaseline.budget` does.
fn budget_rule(curve: &[f64], opt: f64, median: f64) -> usize {
    let target = opt + N_MAX_FRACTION * (median - opt);
    let b = |n: usize| curve[n - 1];
    let (mut lo, mut hi) = (1, curve.len());
    if b(hi) > target {
        return hi;
    }
    while lo < hi {
        let mid = (lo + hi) / 2;
        if b(mid) <= target {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn mean(xs: &[f64]) -> f64 {
        xs.iter().sum::<f64>() / xs.len() as f64
    }

    /// Exact B(n) by enumerating every n-subset (tiny spaces only).
    fn enumerate(items: &[Option<f64>], n: usize) -> f64 {
        let big_n = items.len();
        let (mut tot, mut cnt) = (0.0, 0usize);
        for mask in 0u32..(1 << big_n) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let best = (0..big_n)
                .filter(|i| mask & (1 << i) != 0)
                .filter_map(|i| items[i])
                .fold(f64::INFINITY, f64::min);
            if best.is_finite() {
                tot += best;
                cnt += 1;
            }
        }
        tot / cnt as f64
    }

    #[test]
    fn baseline_matches_enumeration_with_failures_and_ties() {
        let items = [
            Some(3.0),
            Some(1.0),
            Some(2.0),
            Some(2.0),
            Some(5.0),
            None,
            None,
        ];
        let st = SpaceStats::new("tiny", &items, Direction::Minimize).unwrap();
        for n in 1..=items.len() {
            let want = enumerate(&items, n);
            let got = st.baseline(n);
            assert!((got - want).abs() < 1e-12, "n={n}: {got} vs {want}");
        }
        assert_eq!(st.baseline(100), 1.0);
        assert_eq!(st.baseline(0), st.baseline(1));
    }

    #[test]
    fn baseline_agrees_with_monte_carlo() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let n_total = 30;
        let items: Vec<Option<f64>> = (0..n_total)
            .map(|i| {
                if i % 4 == 3 {
                    None
                } else {
                    Some(1.0 + rng.random::<f64>() * 9.0)
                }
            })
            .collect();
        let st = SpaceStats::new("mc", &items, Direction::Minimize).unwrap();
        let draws = 200_000;
        for n in [1, 2, 5, 12, 25] {
            let mut idx: Vec<usize> = (0..n_total).collect();
            let mut bests = Vec::with_capacity(draws);
            while bests.len() < draws {
                // partial Fisher-Yates: the first n entries are a uniform n-subset
                for i in 0..n {
                    let j = rng.random_range(i..n_total);
                    idx.swap(i, j);
                }
                let best = idx[..n]
                    .iter()
                    .filter_map(|&i| items[i])
                    .fold(f64::INFINITY, f64::min);
                if best.is_finite() {
                    bests.push(best); // conditioned on at least one valid draw
                }
            }
            let m = mean(&bests);
            let var = bests.iter().map(|b| (b - m).powi(2)).sum::<f64>() / (draws - 1) as f64;
            let se = (var / draws as f64).sqrt();
            let exact = st.baseline(n);
            assert!(
                (m - exact).abs() <= 3.0 * se + 1e-12,
                "n={n}: Monte Carlo {m} ± {se} vs exact {exact}"
            );
        }
    }

    #[test]
    fn first_and_last_points() {
        let items: Vec<Option<f64>> = (0..500)
            .map(|i| Some(((i * 37) % 101) as f64 + 0.5))
            .collect();
        let st = SpaceStats::new("s", &items, Direction::Minimize).unwrap();
        let valid: Vec<f64> = items.iter().flatten().copied().collect();
        assert!((st.baseline(1) - mean(&valid)).abs() < 1e-12);
        assert_eq!(st.baseline(500), st.optimum());
        assert_eq!(st.baseline(10_000), st.optimum());
    }

    #[test]
    fn n_max_is_the_smallest_n_reaching_the_target() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let items: Vec<Option<f64>> = (0..5000)
            .map(|_| {
                let x: f64 = rng.random();
                (x > 0.1).then(|| (3.0 * x).exp())
            })
            .collect();
        let st = SpaceStats::new("s", &items, Direction::Minimize).unwrap();
        let target = st.optimum() + 0.05 * (st.median() - st.optimum());
        let n = st.n_max();
        assert!(n > 1 && n < 1000, "n_max = {n}");
        assert!(st.baseline(n) <= target && st.baseline(n - 1) > target);
        assert_eq!(st.budget(), n.max(220));
    }

    #[test]
    fn n_max_is_capped() {
        // one isolated optimum: random search needs nearly all 3000 draws to come close
        let mut items: Vec<Option<f64>> = (0..3000).map(|i| Some(2.0 + (i % 7) as f64)).collect();
        items[1234] = Some(1.0);
        let st = SpaceStats::new("s", &items, Direction::Minimize).unwrap();
        assert_eq!(st.n_max(), 1000);
        assert_eq!(st.budget(), 1000);
        // beyond the cached curve
        let (b1000, b1500, b2999) = (st.baseline(1000), st.baseline(1500), st.baseline(2999));
        assert!(b1000 > b1500 && b1500 > b2999 && b2999 > 1.0);
        // the optimum is missed with probability 1/2, and then a 2.0 is (almost surely) drawn
        assert!((b1500 - 1.5).abs() < 1e-9, "{b1500}");
        // a space smaller than 220: the budget is the whole space
        let small: Vec<Option<f64>> = (0..50).map(|i| Some(i as f64 + 1.0)).collect();
        let st = SpaceStats::new("t", &small, Direction::Minimize).unwrap();
        assert!(st.n_max() <= 50);
        assert_eq!(st.budget(), 50);
        assert_eq!(st.horizon(), 220);
    }

    #[test]
    fn the_tail_cut_changes_nothing() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut sorted: Vec<f64> = (0..4000).map(|_| rng.random::<f64>().powi(3)).collect();
        sorted.sort_by(f64::total_cmp);
        let n_total = 4500;
        for n in [1, 3, 40, 333, 1000, 4400] {
            // reference: every term, p_k from log-gamma
            let ln_c = ln_choose(n_total, n);
            let p = |k: usize| (ln_choose(n_total - k, n) - ln_c).exp();
            let p_m = p(sorted.len());
            let full: f64 = (1..sorted.len())
                .map(|k| (sorted[k] - sorted[k - 1]) * (p(k) - p_m))
                .sum::<f64>()
                / (1.0 - p_m);
            let fast = expected_excess(&sorted, n_total, n);
            assert!(
                (fast - full).abs() <= 1e-10 * full.abs() + 1e-300,
                "n={n}: {fast} vs {full}"
            );
        }
    }

    #[test]
    fn maximize_mirrors_minimize() {
        let raw: Vec<Option<f64>> = (0..300)
            .map(|i| (i % 9 != 0).then(|| 100.0 + ((i * 53) % 211) as f64))
            .collect();
        let neg: Vec<Option<f64>> = raw.iter().map(|v| v.map(|x| -x)).collect();
        let max = SpaceStats::new("m", &raw, Direction::Maximize).unwrap();
        let min = SpaceStats::new("m", &neg, Direction::Minimize).unwrap();
        let best = raw.iter().flatten().copied().fold(f64::MIN, f64::max);
        assert_eq!(max.optimum(), best);
        assert_eq!(max.optimum(), -min.optimum());
        assert_eq!(max.median(), -min.median());
        assert_eq!(max.n_max(), min.n_max());
        for n in [1, 7, 100, 299, 300] {
            assert_eq!(max.baseline(n), -min.baseline(n));
        }
        assert!(max.baseline(1) < max.baseline(50)); // larger is better, B grows
    }

    #[test]
    fn errors() {
        assert!(matches!(
            SpaceStats::new("e", &[None, None], Direction::Minimize),
            Err(BenchError::NoValidValue { .. })
        ));
        assert!(matches!(
            SpaceStats::new("e", &[], Direction::Minimize),
            Err(BenchError::NoValidValue { .. })
        ));
        let e =
            SpaceStats::new("e", &[Some(1.0), Some(f64::NAN)], Direction::Minimize).unwrap_err();
        assert!(matches!(e, BenchError::NonFiniteValue { index: 1, .. }));
        assert!(e.to_string().contains("`e`"));
    }

    #[test]
    fn median_follows_numpy() {
        let st = SpaceStats::new(
            "m",
            &[Some(4.0), Some(1.0), None, Some(3.0), Some(2.0)],
            Direction::Minimize,
        )
        .unwrap();
        assert_eq!(st.median(), 2.5);
        let st =
            SpaceStats::new("m", &[Some(4.0), Some(1.0), Some(3.0)], Direction::Minimize).unwrap();
        assert_eq!(st.median(), 3.0);
    }

    #[test]
    fn direction_names() {
        assert_eq!("MAX".parse::<Direction>().unwrap(), Direction::Maximize);
        assert_eq!(
            "minimize".parse::<Direction>().unwrap(),
            Direction::Minimize
        );
        assert!("up".parse::<Direction>().is_err());
        assert_eq!(Direction::Maximize.to_string(), "maximize");
        assert_eq!(
            serde_json::to_string(&Direction::Minimize).unwrap(),
            "\"minimize\""
        );
        let d: Direction = serde_json::from_str("\"maximize\"").unwrap();
        assert_eq!(d, Direction::Maximize);
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        fn space() -> impl Strategy<Value = Vec<Option<f64>>> {
            prop::collection::vec(
                prop_oneof![1 => Just(None), 4 => (0.0..100.0f64).prop_map(Some)],
                1..120,
            )
            .prop_filter("needs a valid value", |v| v.iter().any(Option::is_some))
        }

        proptest! {
            #[test]
            fn baseline_is_non_increasing_and_bounded(items in space()) {
                let st = SpaceStats::new("p", &items, Direction::Minimize).unwrap();
                let valid: Vec<f64> = items.iter().flatten().copied().collect();
                let worst = valid.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mut prev = f64::INFINITY;
                for n in 1..=items.len() {
                    let b = st.baseline(n);
                    prop_assert!(b >= st.optimum() && b <= worst + 1e-9);
                    prop_assert!(b <= prev + 1e-12 * prev.abs().max(1.0), "n={} {} > {}", n, b, prev);
                    prev = b;
                }
                prop_assert_eq!(st.baseline(items.len()), st.optimum());
                if valid.len() == items.len() {
                    prop_assert!((st.baseline(1) - mean(&valid)).abs() < 1e-9);
                }
            }
        }
    }
}
