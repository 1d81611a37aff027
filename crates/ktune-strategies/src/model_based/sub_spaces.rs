//! How much a space's sub-spaces (its combinations of switches: shared memory on or off, a
//! loop order) share their landscape, estimated from the results.
//!
//! The model's kernel between sub-spaces ([`ktune_model::SubSpaces`]) is the intrinsic
//! coregionalisation model: `f(x, s)` has variance `σ²` everywhere and correlation `ρ`
//! between two sub-spaces `s ≠ s'` at the same sizes `x`, so
//! `E[(f(x, s) − f(x, s'))²] = 2σ²(1 − ρ)`. Pairs of results that differ only in their
//! switches (the local search's switch kicks and climbs make them) give the left side, the
//! variance of all results `σ²`: a moment estimate of `ρ`. It needs no fit, which matters
//! here: the marginal likelihood under the fixed kernel prefers any split, and the maximum a
//! posteriori fit almost none (docs/benchmarks/auto.md, "Sub-spaces in the kernel").
//!
//! On the brute-forced spaces the estimate tells the two kinds apart that the option
//! `sub_spaces` could not: after 120 results of `auto`, its median is 0.25-0.72 on the
//! NVIDIA convolution spaces (shared memory on and off rank the same sizes with a
//! correlation of −0.13 to 0.57) and 0.93-0.98 on most dedispersion spaces (tile strides,
//! 0.84 to 1.0; `bench/sub_space_share.py` computes it from traced runs).

use rustc_hash::FxHashMap;

/// Pairs with no difference at all that the estimate starts from: with few pairs it stays
/// near 1 (the stationary kernel), which is right where the switches matter little.
pub(crate) const PRIOR_PAIRS: f64 = 4.0;

/// The smallest share estimated: the development spaces were measured at 0.25 and 0.5.
pub(crate) const LOWEST_SHARE: f64 = 0.25;

/// The estimated share of the landscape the sub-spaces of `switches` (coordinates of the
/// points) have in common, from the results `ys` at `points`: `1 − Σd² / (2 σ² (pairs +
/// PRIOR_PAIRS))` over the pairs of results with the same coordinates apart from the
/// switches, their differences `d`, and the variance `σ²` of all results; at least
/// [`LOWEST_SHARE`], at most 1. `None` without such a pair or with a constant landscape.
pub(crate) fn estimate_share(points: &[Vec<f64>], ys: &[f64], switches: &[usize]) -> Option<f64> {
    let n = points.len().min(ys.len());
    if switches.is_empty() || n < 3 {
        return None;
    }
    let mean = ys[..n].iter().sum::<f64>() / n as f64;
    let variance = ys[..n].iter().map(|y| (y - mean).powi(2)).sum::<f64>() / n as f64;
    if variance.is_nan() || variance <= 0.0 {
        return None;
    }
    // The results by their coordinates apart from the switches (bit patterns: the encoding
    // gives each value one coordinate value).
    let mut groups: FxHashMap<Vec<u64>, Vec<f64>> = FxHashMap::default();
    for (x, &y) in points[..n].iter().zip(ys) {
        let key = x
            .iter()
            .enumerate()
            .filter(|(i, _)| !switches.contains(i))
            .map(|(_, v)| v.to_bits())
            .collect();
        groups.entry(key).or_default().push(y);
    }
    let (mut pairs, mut squares) = (0usize, 0.0);
    for g in groups.values() {
        for (i, a) in g.iter().enumerate() {
            for b in &g[i + 1..] {
                pairs += 1;
                squares += (a - b).powi(2);
            }
        }
    }
    if pairs == 0 {
        return None;
    }
    let share = 1.0 - squares / (2.0 * variance * (pairs as f64 + PRIOR_PAIRS));
    Some(share.clamp(LOWEST_SHARE, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Points `(size, switch)` and a landscape per switch value.
    fn results(f: impl Fn(f64, f64) -> f64) -> (Vec<Vec<f64>>, Vec<f64>) {
        let mut points = Vec::new();
        for i in 0..12 {
            for s in [0.0, 1.0] {
                points.push(vec![i as f64 / 11.0, s]);
            }
        }
        let ys = points.iter().map(|p| f(p[0], p[1])).collect();
        (points, ys)
    }

    #[test]
    fn sub_spaces_with_one_landscape_share_it() {
        // The switch adds a constant too small to matter: the estimate stays near 1.
        let (points, ys) = results(|x, s| (x - 0.3).powi(2) * 10.0 + 0.01 * s);
        let share = estimate_share(&points, &ys, &[1]).unwrap();
        assert!(share > 0.99, "{share}");
    }

    #[test]
    fn sub_spaces_with_opposite_landscapes_share_little() {
        // Where the switch is on, the best size is at the other end.
        let (points, ys) = results(|x, s| if s == 0.0 { x } else { 1.0 - x });
        let share = estimate_share(&points, &ys, &[1]).unwrap();
        assert_eq!(share, LOWEST_SHARE);
        // Half-correlated landscapes land in between.
        let (points, ys) = results(|x, s| x + s * (x * 7.0).sin() * 0.4);
        let share = estimate_share(&points, &ys, &[1]).unwrap();
        assert!(LOWEST_SHARE < share && share < 0.95, "{share}");
    }

    #[test]
    fn few_pairs_keep_the_estimate_near_the_stationary_kernel() {
        let (points, ys) = results(|x, s| x + s * (x * 7.0).sin() * 0.4);
        // Only the first two sizes have both switch values.
        let keep: Vec<usize> = (0..points.len()).filter(|&i| i < 4 || i % 2 == 0).collect();
        let p: Vec<Vec<f64>> = keep.iter().map(|&i| points[i].clone()).collect();
        let y: Vec<f64> = keep.iter().map(|&i| ys[i]).collect();
        let few = estimate_share(&p, &y, &[1]).unwrap();
        let all = estimate_share(&points, &ys, &[1]).unwrap();
        assert!(few > all && all > LOWEST_SHARE, "{few} {all}");
    }

    #[test]
    fn nothing_to_estimate_from() {
        let (points, ys) = results(|x, _| x);
        assert_eq!(estimate_share(&points, &ys, &[]), None);
        // No two results at the same sizes.
        let odd: Vec<Vec<f64>> = points.iter().step_by(2).cloned().collect();
        let y: Vec<f64> = ys.iter().step_by(2).copied().collect();
        assert_eq!(estimate_share(&odd, &y, &[1]), None);
        // A flat landscape.
        assert_eq!(
            estimate_share(&points, &vec![1.0; points.len()], &[1]),
            None
        );
    }
}
