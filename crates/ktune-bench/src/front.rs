//! The multi-objective counterpart of the performance score: how much of the true Pareto
//! front's hypervolume a run has covered beyond what random search covers with as many
//! evaluations.
//!
//! ## The definition
//!
//! A space of `N` configurations has for each valid one a point of two objective values (in
//! the minimised direction: an objective to maximise is negated). Each objective is normalised
//! so that its best value over the space is 0 and its **median** over the valid configurations
//! is 1, and the **reference point is (1, 1)**: the hypervolume of a set of points is the area
//! of the part of the unit box `[0, 1]²` that some point of the set dominates. Why the medians:
//! they play the part the median plays in the single-objective score (a run that never gets
//! better than a typical configuration in both objectives has covered nothing), they do not
//! move with a few extreme values the way the worst values would, and points worse than a
//! typical configuration in some objective are not what a user tuning for the trade-off wants.
//!
//! With `HV(n)` the hypervolume of a run's first `n` evaluations, `HV*` that of every valid
//! configuration (the true front) and `E(n)` the expected hypervolume of `n` distinct uniform
//! draws among the `N` configurations (failures included, dominating nothing),
//! `P(n) = (HV(n) - E(n)) / (HV* - E(n))`, and the run's score is the mean of `P(n)` over
//! `n = 1..n_max`: 0 is random search, 1 the whole front at once, below 0 worse than random.
//! `n_max` is the smallest `n` with `E(n) ≥ 0.95 HV*` (random search covers 95% of the front's
//! hypervolume), at most `min(N, 1000)`: the single-objective rule's 5%, read on the
//! hypervolume. The denominator is kept at least `1e-12`, as the single-objective score does.
//!
//! ## The random baseline, exactly
//!
//! A point `z` of the box is covered by `n` draws unless none of the `D(z)` configurations that
//! dominate it is drawn, which happens with probability
//! `q_D(n) = C(N - D, n) / C(N, n)`. So with `A_d` the area of the box dominated by exactly
//! `d` configurations, `E(n) = Σ_{d ≥ 1} A_d (1 - q_d(n))` and `HV* = Σ_{d ≥ 1} A_d`. The areas
//! come from one sweep over the points in order of the first objective: between two
//! consecutive first-objective values the dominated count is a step function of the second
//! objective, whose steps are the second-objective values of the points already passed. That
//! is `O(m²)` for the `m` points inside the box (a few million operations for the shared
//! spaces) and `q_d(n)` follows from `q_{d-1}(n)` by one multiplication, as in the
//! single-objective baseline. Two objectives only: for three or more the areas become volumes
//! of an arrangement that this sweep does not cover.
//!
//! ## References
//! - E. Zitzler, L. Thiele, *Multiobjective optimization using evolutionary algorithms — a
//!   comparative case study* (PPSN 1998), for the hypervolume indicator.
//! - The single-objective score of this crate ([`score_run`](crate::score_run)), whose
//!   conventions (mean over `n`, `n_max`, early horizons) this follows.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::score::EARLY_HORIZONS;
use crate::space::{N_MAX_CAP, N_MAX_FRACTION};
use crate::table::{mean_se, significant};
use crate::{BenchError, Direction, Trace};

/// The Pareto-front statistics of one brute-forced space of two objectives: its normalisation,
/// the true front's hypervolume and the exact random-search baseline `E(n)`.
#[derive(Clone, Debug)]
pub struct FrontStats {
    name: String,
    directions: [Direction; 2],
    n_total: usize,
    /// Per objective, in the minimised direction: the best valid value (normalised to 0).
    ideal: [f64; 2],
    /// Per objective, in the minimised direction: the median of the valid values (normalised
    /// to 1: the reference point).
    reference: [f64; 2],
    /// The true front's normalised hypervolume.
    hv_true: f64,
    /// `curve[n - 1] = E(n)`, `n = 1..=min(N, N_MAX_CAP)`.
    curve: Vec<f64>,
    n_max: usize,
    /// The true front in raw units, best first objective first.
    front: Vec<[f64; 2]>,
}

/// How one run did on a space of two objectives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrontScore {
    /// Mean of `P(n)` over `n = 1..n_max`.
    pub score: f64,
    /// The same mean over the first 20, 60 and 120 evaluations (at most `n_max`).
    pub early: [f64; 3],
    /// The share of the true front's hypervolume the whole run covered.
    pub coverage: f64,
}

impl FrontStats {
    /// The statistics of a space from each configuration's two raw objective values (`None`:
    /// the configuration fails).
    ///
    /// # Errors
    /// [`BenchError::NoValidValue`] when no configuration is valid,
    /// [`BenchError::NonFiniteValue`] for a NaN or infinite value, [`BenchError::FlatObjective`]
    /// when an objective's best valid value is its median (the box is empty),
    /// [`BenchError::EmptyFront`] when no configuration beats the medians in both (the
    /// objectives are exactly opposed, and the front has no area against the reference).
    pub fn new(
        name: impl Into<String>,
        points: &[Option<[f64; 2]>],
        directions: [Direction; 2],
    ) -> Result<FrontStats, BenchError> {
        let name = name.into();
        let mut valid: Vec<[f64; 2]> = Vec::with_capacity(points.len());
        for (index, p) in points.iter().enumerate() {
            let Some(p) = p else { continue };
            for v in p {
                if !v.is_finite() {
                    return Err(BenchError::NonFiniteValue {
                        space: name,
                        index,
                        value: *v,
                    });
                }
            }
            valid.push([directions[0].sign() * p[0], directions[1].sign() * p[1]]);
        }
        if valid.is_empty() {
            return Err(BenchError::NoValidValue { space: name });
        }
        let mut ideal = [0.0; 2];
        let mut reference = [0.0; 2];
        for k in 0..2 {
            let mut column: Vec<f64> = valid.iter().map(|p| p[k]).collect();
            column.sort_by(f64::total_cmp);
            ideal[k] = column[0];
            reference[k] = crate::table::median_of_sorted(&column);
            if reference[k] <= ideal[k] {
                return Err(BenchError::FlatObjective {
                    space: name,
                    objective: k,
                });
            }
        }
        let mut stats = FrontStats {
            name,
            directions,
            n_total: points.len(),
            ideal,
            reference,
            hv_true: 0.0,
            curve: Vec::new(),
            n_max: 1,
            front: Vec::new(),
        };
        let boxed: Vec<[f64; 2]> = valid
            .iter()
            .map(|&p| stats.normalise(p))
            .filter(|u| u[0] < 1.0 && u[1] < 1.0)
            .collect();
        let areas = areas_by_dominance(&boxed);
        stats.hv_true = areas.iter().sum();
        if stats.hv_true <= 0.0 {
            return Err(BenchError::EmptyFront { space: stats.name });
        }
        stats.curve = (1..=stats.n_total.min(N_MAX_CAP))
            .map(|n| expected_hypervolume(&areas, stats.n_total, n))
            .collect();
        let target = (1.0 - N_MAX_FRACTION) * stats.hv_true;
        stats.n_max = stats
            .curve
            .iter()
            .position(|&e| e >= target)
            .map_or(stats.curve.len(), |i| i + 1);
        let mut front = pareto_front(&valid);
        for p in &mut front {
            *p = [directions[0].sign() * p[0], directions[1].sign() * p[1]];
        }
        stats.front = front;
        Ok(stats)
    }

    /// The space's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether smaller or larger values of each objective are better.
    pub fn directions(&self) -> [Direction; 2] {
        self.directions
    }

    /// N: the number of configurations, failing ones included.
    pub fn n_total(&self) -> usize {
        self.n_total
    }

    /// The reference point in raw units: each objective's median over the valid
    /// configurations.
    pub fn reference(&self) -> [f64; 2] {
        [
            self.directions[0].sign() * self.reference[0],
            self.directions[1].sign() * self.reference[1],
        ]
    }

    /// The true Pareto front in raw units, the best first objective first.
    pub fn front(&self) -> &[[f64; 2]] {
        &self.front
    }

    /// The true front's hypervolume in the normalised box (at most 1).
    pub fn hypervolume(&self) -> f64 {
        self.hv_true
    }

    /// `E(n)`: the expected normalised hypervolume of `n` distinct uniform draws.
    pub fn baseline(&self, n: usize) -> f64 {
        let n = n.clamp(1, self.n_total);
        match self.curve.get(n - 1) {
            Some(&e) => e,
            None => self.hv_true,
        }
    }

    /// `n_max`: the smallest `n` with `E(n) ≥ 0.95 HV*`, at most `min(N, 1000)`.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The normalised hypervolume of a set of raw points (`None`: failed).
    pub fn hypervolume_of(&self, points: &[Option<[f64; 2]>]) -> f64 {
        let boxed: Vec<[f64; 2]> = points
            .iter()
            .flatten()
            .filter(|p| p.iter().all(|v| v.is_finite()))
            .map(|p| self.normalise(self.min_form(*p)))
            .collect();
        hypervolume(&boxed)
    }

    fn min_form(&self, p: [f64; 2]) -> [f64; 2] {
        [
            self.directions[0].sign() * p[0],
            self.directions[1].sign() * p[1],
        ]
    }

    fn normalise(&self, p: [f64; 2]) -> [f64; 2] {
        [0, 1].map(|k| (p[k] - self.ideal[k]) / (self.reference[k] - self.ideal[k]))
    }
}

/// Scores one run: `points` are the raw objective values of the distinct configurations it
/// evaluated, in order (`None` for one that failed).
///
/// ```
/// use ktune_bench::{score_front_run, Direction, FrontStats};
///
/// // 400 configurations (i, j): time 1 + i; energy 1 + j plus more the faster it runs, so
/// // the 20 with j = 0 trade time for energy (the front) and the others are behind them
/// let space: Vec<Option<[f64; 2]>> = (0..400)
///     .map(|k| {
///         let (i, j) = ((k / 20) as f64, (k % 20) as f64);
///         Some([1.0 + i, 1.0 + j + 0.3 * (19.0 - i)])
///     })
///     .collect();
/// let stats = FrontStats::new("toy", &space, [Direction::Minimize; 2])?;
/// let front: Vec<Option<[f64; 2]>> = (0..20).map(|i| space[i * 20]).collect();
/// let worst: Vec<Option<[f64; 2]>> = (0..20).map(|i| space[i * 20 + 19]).collect();
/// assert_eq!(stats.front().len(), 20);
/// assert!(score_front_run(&stats, &front).score > 0.5);
/// assert!(score_front_run(&stats, &worst).score < 0.0);
/// # Ok::<(), ktune_bench::BenchError>(())
/// ```
pub fn score_front_run(stats: &FrontStats, points: &[Option<[f64; 2]>]) -> FrontScore {
    let n_max = stats.n_max;
    let mut boxed: Vec<[f64; 2]> = Vec::new();
    let mut hv = 0.0;
    let mut p_sum = 0.0;
    let mut early = [0.0; 3];
    for n in 1..=n_max {
        if let Some(Some(p)) = points.get(n - 1)
            && p.iter().all(|v| v.is_finite())
        {
            let u = stats.normalise(stats.min_form(*p));
            if u[0] < 1.0 && u[1] < 1.0 {
                boxed.push(u);
                hv = hypervolume(&boxed);
            }
        }
        let e = stats.baseline(n);
        p_sum += (hv - e) / (stats.hv_true - e).max(1e-12);
        for (slot, &h) in early.iter_mut().zip(&EARLY_HORIZONS) {
            if n == h.min(n_max) {
                *slot = p_sum / n as f64;
            }
        }
    }
    FrontScore {
        score: p_sum / n_max as f64,
        early,
        coverage: stats.hypervolume_of(points) / stats.hv_true,
    }
}

/// A trace's points as pairs of its first two objectives (`None` where it failed or has
/// fewer than two values); `None` for a trace that recorded no points.
fn pairs(trace: &Trace) -> Option<Vec<Option<[f64; 2]>>> {
    (!trace.points.is_empty()).then(|| {
        trace
            .points
            .iter()
            .map(|p| p.as_ref().filter(|p| p.len() >= 2).map(|p| [p[0], p[1]]))
            .collect()
    })
}

/// The multi-objective scores of `traces` on `spaces` as Markdown: per tool/strategy the mean
/// over spaces of the hypervolume score, at 20/60/120 evaluations, and the share of the true
/// front's hypervolume covered; per space the score's mean ± standard error; and the spaces'
/// fronts. Traces without points, or of spaces not given, are left out (and counted).
pub fn front_report(traces: &[Trace], spaces: &[FrontStats]) -> String {
    let by_name: BTreeMap<&str, &FrontStats> = spaces.iter().map(|s| (s.name(), s)).collect();
    let mut cells: BTreeMap<(String, String), Vec<FrontScore>> = BTreeMap::new();
    let mut skipped = 0usize;
    for t in traces {
        let (Some(stats), Some(points)) = (by_name.get(t.space.as_str()), pairs(t)) else {
            skipped += 1;
            continue;
        };
        cells
            .entry((format!("{}/{}", t.tool, t.strategy), t.space.clone()))
            .or_default()
            .push(score_front_run(stats, &points));
    }
    let names: Vec<&str> = by_name.keys().copied().collect();
    let keys: Vec<String> = {
        let mut k: Vec<String> = cells.keys().map(|(k, _)| k.clone()).collect();
        k.dedup();
        k
    };
    let over_spaces = |key: &str, f: &dyn Fn(&FrontScore) -> f64| -> f64 {
        let per: Vec<f64> = names
            .iter()
            .filter_map(|s| cells.get(&(key.to_string(), (*s).to_string())))
            .map(|runs| mean_se(&runs.iter().map(f).collect::<Vec<_>>()).0)
            .collect();
        per.iter().sum::<f64>() / per.len().max(1) as f64
    };
    let mut rows: Vec<(String, f64)> = keys
        .iter()
        .map(|k| (k.clone(), over_spaces(k, &|r| r.score)))
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Hypervolume score (two objectives)\n\nHypervolume score: 0 = random search, 1 = the whole Pareto front at once, the mean over n = 1..n_max of (HV(n) - E(n)) / (HV* - E(n)), where HV is the area dominated in the box from each objective's best (0) to its median (1, the reference point) and E(n) the exact expected hypervolume of n random configurations; unweighted mean over spaces. @20, @60, @120: the same over the first 20, 60 and 120 evaluations. Covered: the share of the true front's hypervolume the whole run dominated.\n"
    );
    let _ = writeln!(
        md,
        "| tool/strategy | score | @20 | @60 | @120 | covered | runs/space | spaces |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for (k, score) in &rows {
        let early = |i: usize| over_spaces(k, &|r: &FrontScore| r.early[i]);
        let runs = names
            .iter()
            .filter_map(|s| cells.get(&(k.clone(), (*s).to_string())))
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        let covered = names
            .iter()
            .filter(|s| cells.contains_key(&(k.clone(), (**s).to_string())))
            .count();
        let _ = writeln!(
            md,
            "| {k} | {score:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {runs} | {covered}/{} |",
            early(0),
            early(1),
            early(2),
            over_spaces(k, &|r| r.coverage),
            names.len()
        );
    }
    let _ = writeln!(
        md,
        "\n### Hypervolume score per space (mean ± standard error over runs)\n"
    );
    let _ = writeln!(md, "| tool/strategy | {} |", names.join(" | "));
    let _ = writeln!(md, "|---|{}", "---:|".repeat(names.len()));
    for (k, _) in &rows {
        let cols: Vec<String> = names
            .iter()
            .map(|s| match cells.get(&(k.clone(), (*s).to_string())) {
                Some(runs) => {
                    let (m, se) = mean_se(&runs.iter().map(|r| r.score).collect::<Vec<_>>());
                    if se.is_nan() {
                        format!("{m:.3}")
                    } else {
                        format!("{m:.3} ± {se:.3}")
                    }
                }
                None => "–".to_string(),
            })
            .collect();
        let _ = writeln!(md, "| {k} | {} |", cols.join(" | "));
    }
    let _ = writeln!(md, "\n### Fronts\n");
    let _ = writeln!(
        md,
        "| space | directions | configurations | on the true front | reference point (medians) | HV* | n_max |"
    );
    let _ = writeln!(md, "|---|---|---:|---:|---|---:|---:|");
    for s in spaces {
        let [a, b] = s.reference();
        let _ = writeln!(
            md,
            "| {} | {}, {} | {} | {} | ({}, {}) | {:.4} | {} |",
            s.name(),
            s.directions()[0],
            s.directions()[1],
            s.n_total(),
            s.front().len(),
            significant(a, 5),
            significant(b, 5),
            s.hypervolume(),
            s.n_max()
        );
    }
    if skipped > 0 {
        let _ = writeln!(
            md,
            "\n{skipped} trace(s) without two objectives or of other spaces left out."
        );
    }
    md
}

/// The hypervolume of points in the unit box (each `< 1` in both coordinates) against the
/// reference point (1, 1).
pub(crate) fn hypervolume(points: &[[f64; 2]]) -> f64 {
    let front = pareto_front(points);
    let mut area = 0.0;
    let mut y_above = 1.0;
    // Best first coordinate first, so the second falls: each point adds the band between its
    // own second coordinate and its predecessor's, from its first coordinate to the box's edge.
    for p in front.iter().filter(|p| p[0] < 1.0 && p[1] < 1.0) {
        area += (1.0 - p[0]) * (y_above - p[1]);
        y_above = p[1];
    }
    area
}

/// The non-dominated points (in minimisation form), sorted by the first coordinate
/// ascending (so the second descends); duplicates kept once.
pub(crate) fn pareto_front(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut sorted: Vec<[f64; 2]> = points.to_vec();
    sorted.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    let mut front: Vec<[f64; 2]> = Vec::new();
    for p in sorted {
        if front.last().is_none_or(|last| p[1] < last[1]) {
            front.push(p);
        }
    }
    front
}

/// `A_d` for `d = 0..=m`: the area of the unit box dominated by exactly `d` of `points` (each
/// inside the box). See the module docs.
fn areas_by_dominance(points: &[[f64; 2]]) -> Vec<f64> {
    let m = points.len();
    let mut by_x: Vec<[f64; 2]> = points.to_vec();
    by_x.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mut areas = vec![0.0; m + 1];
    // The second coordinates of the points passed so far, ascending.
    let mut ys: Vec<f64> = Vec::with_capacity(m);
    for (s, p) in by_x.iter().enumerate() {
        let at = ys.partition_point(|&y| y < p[1]);
        ys.insert(at, p[1]);
        let next_x = by_x.get(s + 1).map_or(1.0, |q| q[0]);
        let width = next_x - p[0];
        if width <= 0.0 {
            continue;
        }
        for d in 1..=ys.len() {
            let top = ys.get(d).copied().unwrap_or(1.0);
            areas[d] += width * (top - ys[d - 1]);
        }
    }
    areas
}

/// `E(n) = Σ_{d ≥ 1} A_d (1 - C(N - d, n) / C(N, n))`.
fn expected_hypervolume(areas: &[f64], n_total: usize, n: usize) -> f64 {
    let mut q = 1.0; // q_0
    let mut sum = 0.0;
    for (d, &a) in areas.iter().enumerate().skip(1) {
        // q_d = q_{d-1} (N - d + 1 - n) / (N - d + 1); 0 once fewer than n are left.
        let remaining = n_total - d + 1;
        q = if remaining <= n {
            0.0
        } else {
            q * (remaining - n) as f64 / remaining as f64
        };
        sum += a * (1.0 - q);
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{RngExt, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    fn random_space(n: usize, fail_every: usize, seed: u64) -> Vec<Option<[f64; 2]>> {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                (i % fail_every != 0).then(|| {
                    let t: f64 = rng.random_range(1.0..10.0);
                    // energy falls with time on average: a real trade-off, with noise
                    [t, 20.0 / t + rng.random_range(0.0..3.0)]
                })
            })
            .collect()
    }

    /// E(n) by enumerating every n-subset (tiny spaces only).
    fn enumerate(stats: &FrontStats, space: &[Option<[f64; 2]>], n: usize) -> f64 {
        let big_n = space.len();
        let (mut total, mut count) = (0.0, 0usize);
        for mask in 0u32..(1 << big_n) {
            if mask.count_ones() as usize != n {
                continue;
            }
            let chosen: Vec<Option<[f64; 2]>> = (0..big_n)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| space[i])
                .collect();
            total += stats.hypervolume_of(&chosen);
            count += 1;
        }
        total / count as f64
    }

    #[test]
    fn the_baseline_is_the_mean_over_every_subset() {
        let mut tested = 0;
        for seed in 0..40 {
            let space = random_space(12, 5, seed);
            // a few draws of so few points have none beating both medians
            let stats = match FrontStats::new("tiny", &space, [Direction::Minimize; 2]) {
                Err(BenchError::EmptyFront { .. }) => continue,
                other => other.unwrap(),
            };
            tested += 1;
            for n in 1..=12 {
                let exact = enumerate(&stats, &space, n);
                assert!(
                    (stats.baseline(n) - exact).abs() < 1e-12,
                    "seed {seed}, n {n}: {} against {exact}",
                    stats.baseline(n)
                );
            }
            assert!((stats.baseline(12) - stats.hypervolume()).abs() < 1e-12);
        }
        assert!(tested >= 4, "only {tested} spaces had a front");
    }

    #[test]
    fn the_true_front_covers_its_own_hypervolume() {
        let space = random_space(300, 7, 9);
        let stats = FrontStats::new("s", &space, [Direction::Minimize; 2]).unwrap();
        let front: Vec<Option<[f64; 2]>> = stats.front().iter().map(|&p| Some(p)).collect();
        assert!((stats.hypervolume_of(&front) - stats.hypervolume()).abs() < 1e-12);
        assert!((stats.hypervolume_of(&space) - stats.hypervolume()).abs() < 1e-12);
        // every front point is valid and none dominates another
        for a in stats.front() {
            for b in stats.front() {
                assert!(!(a[0] < b[0] && a[1] < b[1]), "{a:?} dominates {b:?}");
            }
        }
        let run = score_front_run(&stats, &front);
        assert!(run.score > 0.8, "the front first scores {}", run.score);
        assert!((run.coverage - 1.0).abs() < 1e-12);
        // a failure first delays everything by one evaluation
        let late: Vec<Option<[f64; 2]>> = std::iter::once(None).chain(front.clone()).collect();
        let delayed = score_front_run(&stats, &late);
        assert!(delayed.score < run.score && delayed.coverage == run.coverage);
    }

    #[test]
    fn random_search_scores_about_zero() {
        let space = random_space(2000, 4, 3);
        let stats = FrontStats::new("s", &space, [Direction::Minimize; 2]).unwrap();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let runs = 400;
        let mut sum = 0.0;
        for _ in 0..runs {
            let mut order: Vec<usize> = (0..space.len()).collect();
            for i in 0..stats.n_max() {
                let j = rng.random_range(i..order.len());
                order.swap(i, j);
            }
            let run: Vec<Option<[f64; 2]>> =
                order[..stats.n_max()].iter().map(|&i| space[i]).collect();
            sum += score_front_run(&stats, &run).score;
        }
        let mean = sum / runs as f64;
        assert!(mean.abs() < 0.05, "random search scores {mean}");
    }

    #[test]
    fn maximised_objectives_are_negated() {
        let space = random_space(200, 9, 5);
        let flipped: Vec<Option<[f64; 2]>> =
            space.iter().map(|p| p.map(|[a, b]| [a, -b])).collect();
        let min = FrontStats::new("a", &space, [Direction::Minimize; 2]).unwrap();
        let max =
            FrontStats::new("b", &flipped, [Direction::Minimize, Direction::Maximize]).unwrap();
        assert!((min.hypervolume() - max.hypervolume()).abs() < 1e-12);
        assert_eq!(min.n_max(), max.n_max());
        let run_min = score_front_run(&min, &space[..50]);
        let run_max = score_front_run(&max, &flipped[..50]);
        assert!((run_min.score - run_max.score).abs() < 1e-12);
        assert_eq!(max.reference()[1], -min.reference()[1]);
    }

    #[test]
    fn bad_spaces_are_refused_with_their_name() {
        let none: Vec<Option<[f64; 2]>> = vec![None; 5];
        let e = FrontStats::new("empty", &none, [Direction::Minimize; 2]).unwrap_err();
        assert!(e.to_string().contains("empty"), "{e}");
        let flat: Vec<Option<[f64; 2]>> = (0..5).map(|i| Some([1.0, i as f64])).collect();
        let e = FrontStats::new("flat", &flat, [Direction::Minimize; 2]).unwrap_err();
        assert!(
            matches!(e, BenchError::FlatObjective { objective: 0, .. }),
            "{e}"
        );
        // exactly opposed: nothing beats both medians
        let opposed: Vec<Option<[f64; 2]>> =
            (0..9).map(|i| Some([i as f64, 9.0 - i as f64])).collect();
        let e = FrontStats::new("opposed", &opposed, [Direction::Minimize; 2]).unwrap_err();
        assert!(matches!(e, BenchError::EmptyFront { .. }), "{e}");
        assert!(e.to_string().contains("opposed"), "{e}");
        let nan = vec![Some([1.0, f64::NAN])];
        assert!(FrontStats::new("nan", &nan, [Direction::Minimize; 2]).is_err());
    }
}
