//! The time-based view of the auto-tuning methodology (`--budget-kind time`): a run is scored
//! against simulated time instead of evaluations, so what a strategy chooses to evaluate (slow
//! or failing configurations cost their recorded time) and its own computation both count.
//!
//! Each evaluation of a trace costs the recorded compile, benchmark and verification time of
//! the configuration it evaluated (looked up in the brute-forced space by its objective value:
//! traces hold values, not configurations; a failed evaluation costs the mean recorded time of
//! the space's failing configurations) plus the strategy's own measured time, spread evenly
//! over its evaluations (`meta.strategy_seconds` for ktune, `meta.kt_strategy_ms` for Kernel
//! Tuner's traces, else the run's wall time). The time budget is `T_max = n_max · τ̄`, the
//! time random search needs for `n_max` evaluations (`τ̄` the mean recorded time of a
//! configuration), and the score is the mean over 100 equally spaced times `t ≤ T_max` of
//! `P(t) = (B(t) - best(t)) / (B(t) - opt)`, with `B(t)` random search's expected best after
//! `t / τ̄` evaluations (interpolated; the median before the first) and `best(t)` the run's
//! best among the evaluations finished by `t` (the median before the first). 0 is random
//! search, 1 the optimum at once, as for the score per evaluation. A run that ends before
//! `T_max` keeps its best; the table says how many did.
//!
//! ## References
//! - F.-J. Willemsen, R. Schoonhoven, J. Filipovič, J. O. Tørring, R. van Nieuwpoort,
//!   B. van Werkhoven, "A methodology for comparing optimization algorithms for auto-tuning",
//!   FGCS 2024 (time-based budgets and the performance score).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::{SpaceStats, Trace};

/// Times at which `P(t)` is taken.
const TIME_POINTS: usize = 100;

/// What evaluating a configuration of one space costs, by its objective value.
#[derive(Clone, Debug)]
pub struct TimeModel {
    /// Recorded seconds by the bits of the objective value (the mean where values repeat).
    by_value: HashMap<u64, f64>,
    failed: f64,
    mean: f64,
}

impl TimeModel {
    /// From every configuration of the space: its objective value (`None` when it fails) and
    /// its recorded evaluation time in seconds.
    pub fn new(configurations: &[(Option<f64>, f64)]) -> TimeModel {
        let mut sums: HashMap<u64, (f64, usize)> = HashMap::new();
        let (mut failed_sum, mut failed_n) = (0.0, 0usize);
        for &(v, s) in configurations {
            match v.filter(|v| v.is_finite()) {
                Some(v) => {
                    let e = sums.entry(v.to_bits()).or_insert((0.0, 0));
                    e.0 += s;
                    e.1 += 1;
                }
                None => {
                    failed_sum += s;
                    failed_n += 1;
                }
            }
        }
        let n = configurations.len().max(1) as f64;
        let mean = configurations.iter().map(|c| c.1).sum::<f64>() / n;
        TimeModel {
            by_value: sums
                .into_iter()
                .map(|(k, (s, n))| (k, s / n as f64))
                .collect(),
            failed: if failed_n > 0 {
                failed_sum / failed_n as f64
            } else {
                mean
            },
            mean,
        }
    }

    /// The mean recorded time of a configuration (random search's time per evaluation).
    pub fn mean_seconds(&self) -> f64 {
        self.mean
    }

    /// The recorded time of the configuration with this value, and whether it was found
    /// (else the mean).
    pub fn seconds(&self, value: Option<f64>) -> (f64, bool) {
        match value.filter(|v| v.is_finite()) {
            None => (self.failed, true),
            Some(v) => match self.by_value.get(&v.to_bits()) {
                Some(&s) => (s, true),
                None => (self.mean, false),
            },
        }
    }
}

/// How one run did against simulated time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeScore {
    /// The mean of `P(t)` over the time budget.
    pub score: f64,
    /// The simulated seconds the run took in all.
    pub seconds: f64,
    /// Whether the run lasted the whole time budget.
    pub covered: bool,
    /// Evaluations whose value was not found in the space (costed at the mean).
    pub unmatched: usize,
}

/// The strategy's own seconds per evaluation of a trace.
fn overhead_per_evaluation(trace: &Trace) -> f64 {
    let n = trace.values.len().max(1) as f64;
    let meta = trace.meta.as_ref();
    let own = meta
        .and_then(|m| m.get("strategy_seconds"))
        .and_then(serde_json::Value::as_f64)
        .or_else(|| {
            meta.and_then(|m| m.get("kt_strategy_ms"))
                .and_then(serde_json::Value::as_f64)
                .filter(|v| v.is_finite())
                .map(|ms| ms / 1000.0)
        })
        .unwrap_or(trace.wall_seconds);
    own.max(0.0) / n
}

/// Scores one trace against simulated time (see the module documentation).
pub fn time_score_run(stats: &SpaceStats, model: &TimeModel, trace: &Trace) -> TimeScore {
    let sign = stats.direction().sign();
    let opt = stats.opt_min();
    let fill = stats.median_min();
    let guard = 1e-12 * opt.abs().max(1e-300);
    let tau = model.mean_seconds().max(1e-12);
    let t_max = stats.n_max() as f64 * tau;
    let overhead = overhead_per_evaluation(trace);
    // When each evaluation finished, and the best so far then (minimised direction).
    let mut clock = 0.0;
    let mut best = f64::INFINITY;
    let mut unmatched = 0;
    let steps: Vec<(f64, f64)> = trace
        .values
        .iter()
        .map(|&v| {
            let (s, found) = model.seconds(v);
            unmatched += usize::from(!found);
            clock += s + overhead;
            if let Some(v) = v.filter(|v| v.is_finite()).map(|v| sign * v)
                && v < best
            {
                best = v;
            }
            (clock, best)
        })
        .collect();
    let baseline = |n: f64| -> f64 {
        if n < 1.0 {
            fill + (stats.baseline_min(1) - fill) * n
        } else {
            let lo = n.floor() as usize;
            let (a, b) = (stats.baseline_min(lo), stats.baseline_min(lo + 1));
            a + (b - a) * (n - lo as f64)
        }
    };
    let mut i = 0;
    let mut p_sum = 0.0;
    for k in 1..=TIME_POINTS {
        let t = t_max * k as f64 / TIME_POINTS as f64;
        while i < steps.len() && steps[i].0 <= t {
            i += 1;
        }
        let b_t = if i == 0 || !steps[i - 1].1.is_finite() {
            fill
        } else {
            steps[i - 1].1
        };
        let b = baseline(t / tau);
        p_sum += (b - b_t) / (b - opt).max(guard);
    }
    TimeScore {
        score: p_sum / TIME_POINTS as f64,
        seconds: clock,
        covered: clock >= t_max,
        unmatched,
    }
}

/// The time-based score table of `traces` over `spaces` (each with its time model), as
/// Markdown: per strategy the mean over spaces, the share of runs that lasted the time budget
/// and the strategy's own time per evaluation; then per space (mean ± standard error).
pub fn time_report(traces: &[Trace], spaces: &[(&SpaceStats, &TimeModel)]) -> String {
    let by_name: BTreeMap<&str, (&SpaceStats, &TimeModel)> =
        spaces.iter().map(|&(s, m)| (s.name(), (s, m))).collect();
    // (tool/strategy, space) -> scores, and per strategy the coverage and overhead.
    let mut cells: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut covered: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut overhead: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut unmatched = 0usize;
    for t in traces {
        let Some(&(stats, model)) = by_name.get(t.space.as_str()) else {
            continue;
        };
        let key = format!("{}/{}", t.tool, t.strategy);
        let s = time_score_run(stats, model, t);
        unmatched += s.unmatched;
        cells
            .entry((key.clone(), t.space.clone()))
            .or_default()
            .push(s.score);
        let c = covered.entry(key.clone()).or_default();
        c.0 += usize::from(s.covered);
        c.1 += 1;
        overhead
            .entry(key)
            .or_default()
            .push(overhead_per_evaluation(t) * 1000.0);
    }
    let space_names: Vec<&str> = by_name.keys().copied().collect();
    let mean_se = |v: &[f64]| -> (f64, f64) {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        (m, (var / n).sqrt())
    };
    let mut rows: Vec<(String, f64)> = covered
        .keys()
        .map(|k| {
            let per_space: Vec<f64> = space_names
                .iter()
                .filter_map(|s| cells.get(&(k.clone(), (*s).to_string())))
                .map(|v| mean_se(v).0)
                .collect();
            (
                k.clone(),
                per_space.iter().sum::<f64>() / per_space.len().max(1) as f64,
            )
        })
        .collect();
    rows.sort_by(|a, b| b.1.total_cmp(&a.1));
    let mut md = String::new();
    let _ = writeln!(
        md,
        "### Scores against simulated time\n\nPerformance score over simulated time (0 = random search, 1 = optimum at once): each evaluation costs its configuration's recorded compile, benchmark and verification time plus the strategy's own measured time per evaluation; the budget is n_max times the mean recorded time of a configuration. Lasted: the share of runs still going at the end of the budget (the others keep their best).\n"
    );
    let _ = writeln!(
        md,
        "| tool/strategy | time score | lasted | strategy ms/eval | spaces |"
    );
    let _ = writeln!(md, "|---|---:|---:|---:|---:|");
    for (k, mean) in &rows {
        let (c, n) = covered[k];
        let (oh, _) = mean_se(&overhead[k]);
        let spaces = space_names
            .iter()
            .filter(|s| cells.contains_key(&(k.clone(), (**s).to_string())))
            .count();
        let _ = writeln!(
            md,
            "| {k} | {mean:.3} | {:.0}% | {oh:.3} | {spaces}/{} |",
            100.0 * c as f64 / n.max(1) as f64,
            space_names.len()
        );
    }
    let _ = writeln!(
        md,
        "\n### Time score per space (mean ± standard error over runs)\n"
    );
    let _ = writeln!(md, "| tool/strategy | {} |", space_names.join(" | "));
    let _ = writeln!(md, "|---|{}", "---:|".repeat(space_names.len()));
    for (k, _) in &rows {
        let cellv: Vec<String> = space_names
            .iter()
            .map(|s| match cells.get(&(k.clone(), (*s).to_string())) {
                Some(v) => {
                    let (m, se) = mean_se(v);
                    format!("{m:.3} ± {se:.3}")
                }
                None => "—".into(),
            })
            .collect();
        let _ = writeln!(md, "| {k} | {} |", cellv.join(" | "));
    }
    let _ = writeln!(
        md,
        "\n| space | mean seconds per configuration | time budget (s) |"
    );
    let _ = writeln!(md, "|---|---:|---:|");
    for (name, (stats, model)) in &by_name {
        let _ = writeln!(
            md,
            "| {name} | {:.3} | {:.1} |",
            model.mean_seconds(),
            stats.n_max() as f64 * model.mean_seconds()
        );
    }
    if unmatched > 0 {
        let _ = writeln!(
            md,
            "\n{unmatched} evaluations had values not found in their space and were costed at the mean."
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    fn space() -> (SpaceStats, TimeModel) {
        // 100 configurations, values 1..=100 ms; a configuration takes 2 s to evaluate, the
        // optimum 10 s, every tenth fails (1 s).
        let values: Vec<Option<f64>> = (1..=100)
            .map(|i| if i % 10 == 0 { None } else { Some(i as f64) })
            .collect();
        let stats = SpaceStats::new("toy", &values, Direction::Minimize).unwrap();
        let model = TimeModel::new(
            &values
                .iter()
                .map(|&v| match v {
                    None => (None, 1.0),
                    Some(1.0) => (v, 10.0),
                    Some(_) => (v, 2.0),
                })
                .collect::<Vec<_>>(),
        );
        (stats, model)
    }

    fn trace(values: Vec<Option<f64>>, strategy_seconds: f64) -> Trace {
        Trace {
            tool: "t".into(),
            strategy: "s".into(),
            space: "toy".into(),
            seed: 0,
            values,
            wall_seconds: 0.0,
            points: Vec::new(),
            meta: Some(serde_json::json!({ "strategy_seconds": strategy_seconds })),
        }
    }

    #[test]
    fn the_model_costs_each_value_and_failures() {
        let (_, m) = space();
        assert_eq!(m.seconds(Some(1.0)), (10.0, true));
        assert_eq!(m.seconds(Some(57.0)), (2.0, true));
        assert_eq!(m.seconds(None), (1.0, true));
        let (s, found) = m.seconds(Some(57.5));
        assert!(!found && (s - m.mean_seconds()).abs() < 1e-12);
        // 80 of 2 s, 10 of 1 s, one of 10 s... (mean over all 100)
        assert!((m.mean_seconds() - (89.0 * 2.0 + 10.0 + 10.0) / 100.0).abs() < 1e-12);
    }

    #[test]
    fn the_optimum_first_scores_almost_one_and_its_own_time_counts() {
        let (stats, m) = space();
        let fast = time_score_run(&stats, &m, &trace(vec![Some(1.0)], 0.0));
        // The optimum is known once its 10 s are over (a fifth of the budget or so), and the
        // median is what counts before: below 1, unlike its score per evaluation.
        assert!(fast.score > 0.5 && fast.score < 1.0, "{fast:?}");
        assert!(!fast.covered);
        // The same run whose strategy spent an hour before proposing it scores below random.
        let slow = time_score_run(&stats, &m, &trace(vec![Some(1.0)], 3600.0));
        assert!(slow.score < 0.0, "{slow:?}");
        assert!(slow.covered);
        assert_eq!(slow.seconds, 3610.0);
    }

    #[test]
    fn failures_cost_time_and_give_nothing() {
        let (stats, m) = space();
        let n = stats.n_max() * 2;
        let failing = time_score_run(&stats, &m, &trace(vec![None; n], 0.0));
        let median = time_score_run(&stats, &m, &trace(vec![Some(50.0); 1], 0.0));
        // Never better than the median: below random search throughout.
        assert!(failing.score < 0.0 && median.score < 0.0);
        assert!(failing.covered, "{failing:?}");
        assert_eq!(failing.unmatched, 0);
    }

    #[test]
    fn the_report_ranks_strategies_and_counts_runs_that_lasted() {
        let (stats, m) = space();
        let mut good = trace(vec![Some(1.0)], 0.0);
        good.strategy = "good".into();
        let mut poor = trace(vec![Some(90.0); 1], 0.0);
        poor.strategy = "poor".into();
        let md = time_report(&[poor, good], &[(&stats, &m)]);
        let good_at = md.find("| t/good |").unwrap();
        let poor_at = md.find("| t/poor |").unwrap();
        assert!(good_at < poor_at, "{md}");
        assert!(md.contains("| 0% |"), "{md}");
    }
}
