//! How strategies scale with parallel workers (`ktune bench --workers 1,2,4,8,16`): runs on
//! a simulated clock, each trace labelled `strategy/wN` and holding the simulated time each
//! evaluation finished (`meta.finished`).
//!
//! For each strategy and number of workers `N`:
//! - **time to target**: the simulated time at which the best value so far is within
//!   `target` (5%) of the space's optimum; the median over seeds (a run that never gets
//!   there counts as infinitely slow, so a median over seeds most of which fail is `—`), and
//!   the speed-up over one worker, `median T(1) / median T(N)`, as a geometric mean over the
//!   spaces where both medians exist;
//! - **time score**: the normalised best value `(median - best(t)) / (median - optimum)`
//!   (0: the space's median, 1: the optimum) averaged over 20 equally spaced times up to
//!   the median duration of the same strategy's one-worker runs on that space: how far the
//!   search gets in a given wall time;
//! - **score**: the performance score per evaluation ([`score_run`](crate::score_run)),
//!   which shows what parallel proposals cost in sample efficiency.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::{SpaceStats, Trace, score_run};

/// Times at which the time score is taken, as fractions of the one-worker duration.
const TIME_POINTS: usize = 20;

/// The strategy and worker count of a trace label `name/wN`.
pub fn parse_label(label: &str) -> Option<(&str, usize)> {
    let (name, n) = label.rsplit_once("/w")?;
    Some((name, n.parse().ok()?))
}

/// The label of `strategy` run by `workers` simulated workers.
pub fn label(strategy: &str, workers: usize) -> String {
    format!("{strategy}/w{workers}")
}

/// One run: its best value in the minimised direction after each evaluation, and when.
struct Run {
    best_min: Vec<f64>,
    finished: Vec<f64>,
}

impl Run {
    fn of(trace: &Trace, sign: f64) -> Option<Run> {
        let finished: Vec<f64> = trace
            .meta
            .as_ref()?
            .get("finished")?
            .as_array()?
            .iter()
            .map(|t| t.as_f64().unwrap_or(f64::NAN))
            .collect();
        if finished.len() != trace.values.len() {
            return None;
        }
        let mut best = f64::INFINITY;
        let best_min = trace
            .values
            .iter()
            .map(|v| {
                if let Some(v) = v.filter(|v| v.is_finite()) {
                    best = best.min(sign * v);
                }
                best
            })
            .collect();
        Some(Run { best_min, finished })
    }

    /// When the best value first came within `target` of `opt_min` (minimised direction).
    fn time_to(&self, opt_min: f64, target: f64) -> Option<f64> {
        let enough = opt_min + target * opt_min.abs();
        self.best_min
            .iter()
            .position(|&b| b <= enough)
            .map(|i| self.finished[i])
    }

    fn duration(&self) -> f64 {
        self.finished.last().copied().unwrap_or(0.0)
    }

    /// The best value at simulated time `t` (infinite before the first valid one).
    fn best_at(&self, t: f64) -> f64 {
        let n = self.finished.partition_point(|&f| f <= t);
        if n == 0 {
            f64::INFINITY
        } else {
            self.best_min[n - 1]
        }
    }
}

/// The median, with `None` as infinitely large; `None` when the median is.
fn median(values: &[Option<f64>]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v: Vec<f64> = values.iter().map(|x| x.unwrap_or(f64::INFINITY)).collect();
    v.sort_by(f64::total_cmp);
    let m = crate::table::median_of_sorted(&v);
    m.is_finite().then_some(m)
}

/// Strategy, space, workers.
type Key = (String, String, usize);

/// What one strategy did with one number of workers on one space.
#[derive(Default)]
struct Cell {
    ttt: Vec<Option<f64>>,
    time_scores: Vec<f64>,
    scores: Vec<f64>,
    durations: Vec<f64>,
}

/// The report on `traces` (those with `strategy/wN` labels; others are ignored) over
/// `spaces`, for a target within `target` (e.g. 0.05) of the optimum, as Markdown.
pub fn workers_report(traces: &[Trace], spaces: &[SpaceStats], target: f64) -> String {
    let mut runs: BTreeMap<Key, Vec<(&Trace, Run)>> = BTreeMap::new();
    let by_name: BTreeMap<&str, &SpaceStats> = spaces.iter().map(|s| (s.name(), s)).collect();
    for t in traces {
        let (Some((name, n)), Some(stats)) =
            (parse_label(&t.strategy), by_name.get(t.space.as_str()))
        else {
            continue;
        };
        if let Some(run) = Run::of(t, stats.direction().sign()) {
            runs.entry((name.to_string(), t.space.clone(), n))
                .or_default()
                .push((t, run));
        }
    }
    let mut cells: BTreeMap<Key, Cell> = BTreeMap::new();
    for ((strategy, space, n), list) in &runs {
        let stats = by_name[space.as_str()];
        let sign = stats.direction().sign();
        let (opt, med) = (sign * stats.optimum(), sign * stats.median());
        // The time axis of the time score: the one-worker runs' median duration.
        let reference = runs
            .get(&(strategy.clone(), space.clone(), 1))
            .and_then(|one| {
                median(
                    &one.iter()
                        .map(|(_, r)| Some(r.duration()))
                        .collect::<Vec<_>>(),
                )
            })
            .unwrap_or_else(|| {
                median(
                    &list
                        .iter()
                        .map(|(_, r)| Some(r.duration()))
                        .collect::<Vec<_>>(),
                )
                .unwrap_or(0.0)
            });
        let cell = cells
            .entry((strategy.clone(), space.clone(), *n))
            .or_default();
        for (trace, run) in list {
            cell.ttt.push(run.time_to(opt, target));
            cell.durations.push(run.duration());
            let span = (med - opt).max(1e-12 * opt.abs().max(1e-300));
            let ts: f64 = (1..=TIME_POINTS)
                .map(|k| {
                    let b = run.best_at(reference * k as f64 / TIME_POINTS as f64);
                    (med - if b.is_finite() { b } else { med }) / span
                })
                .sum::<f64>()
                / TIME_POINTS as f64;
            cell.time_scores.push(ts);
            cell.scores.push(score_run(stats, &trace.values).score);
        }
    }
    let strategies: Vec<String> = {
        let mut s: Vec<String> = cells.keys().map(|k| k.0.clone()).collect();
        s.dedup();
        s
    };
    let workers: Vec<usize> = {
        let mut w: Vec<usize> = cells.keys().map(|k| k.2).collect();
        w.sort_unstable();
        w.dedup();
        w
    };
    let space_names: Vec<String> = {
        let mut s: Vec<String> = cells.keys().map(|k| k.1.clone()).collect();
        s.sort();
        s.dedup();
        s
    };
    let mean = |v: &[f64]| {
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let mut out = String::new();
    let pct = (target * 100.0).round();
    let _ = writeln!(
        out,
        "## Parallel workers on a simulated clock\n\n\
         Time to within {pct}% of the optimum: the speed-up over one worker is the geometric \
         mean over the spaces where both medians exist (in brackets: how many); reached: the \
         share of runs that got there. Time score: the normalised best value (0: the space's \
         median, 1: the optimum) averaged over 20 times up to the one-worker duration. Score: \
         the performance score per evaluation.\n"
    );
    let _ = writeln!(
        out,
        "| strategy | workers | speed-up to target | reached | time score | score | mean duration (s) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|");
    for s in &strategies {
        for &n in &workers {
            let mut ratios = Vec::new();
            let (mut reached, mut runs_n) = (0usize, 0usize);
            let (mut ts, mut sc, mut du) = (Vec::new(), Vec::new(), Vec::new());
            for space in &space_names {
                let Some(c) = cells.get(&(s.clone(), space.clone(), n)) else {
                    continue;
                };
                reached += c.ttt.iter().filter(|t| t.is_some()).count();
                runs_n += c.ttt.len();
                ts.extend(&c.time_scores);
                sc.extend(&c.scores);
                du.extend(&c.durations);
                let one = cells
                    .get(&(s.clone(), space.clone(), 1))
                    .and_then(|c1| median(&c1.ttt));
                if let (Some(t1), Some(tn)) = (one, median(&c.ttt))
                    && tn > 0.0
                {
                    ratios.push(t1 / tn);
                }
            }
            if runs_n == 0 {
                continue;
            }
            let speedup = if ratios.is_empty() {
                "—".to_string()
            } else {
                let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
                format!("{g:.2}x ({})", ratios.len())
            };
            let _ = writeln!(
                out,
                "| {s} | {n} | {speedup} | {:.0}% | {:.3} | {:.3} | {:.0} |",
                100.0 * reached as f64 / runs_n as f64,
                mean(&ts),
                mean(&sc),
                mean(&du)
            );
        }
    }
    let _ = writeln!(
        out,
        "\nMedian simulated seconds to within {pct}% of the optimum, per space (— : most runs did not get there):\n"
    );
    let _ = write!(out, "| space | strategy |");
    for n in &workers {
        let _ = write!(out, " {n} |");
    }
    let _ = writeln!(out);
    let _ = write!(out, "|---|---|");
    for _ in &workers {
        let _ = write!(out, "---:|");
    }
    let _ = writeln!(out);
    for space in &space_names {
        for s in &strategies {
            let _ = write!(out, "| {space} | {s} |");
            for &n in &workers {
                let cell = cells
                    .get(&(s.clone(), space.clone(), n))
                    .and_then(|c| median(&c.ttt));
                let _ = write!(
                    out,
                    " {} |",
                    cell.map_or("—".to_string(), |t| format!("{t:.0}"))
                );
            }
            let _ = writeln!(out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    fn trace(strategy: &str, seed: i64, values: &[f64], finished: &[f64]) -> Trace {
        Trace {
            tool: "ktune-test".into(),
            strategy: strategy.into(),
            space: "toy".into(),
            seed,
            values: values.iter().map(|&v| Some(v)).collect(),
            wall_seconds: f64::NAN,
            points: Vec::new(),
            meta: Some(serde_json::json!({ "finished": finished })),
        }
    }

    #[test]
    fn labels_round_trip() {
        assert_eq!(
            parse_label(&label("bayes_opt:method=ei", 16)),
            Some(("bayes_opt:method=ei", 16))
        );
        assert_eq!(parse_label("random"), None);
        assert_eq!(parse_label("a/wx"), None);
    }

    /// Two workers reaching the optimum in half the time show a 2x speed-up, and the same
    /// per-evaluation score.
    #[test]
    fn halving_the_time_to_target_is_a_speedup_of_two() {
        let space: Vec<Option<f64>> = (1..=100).map(|i| Some(f64::from(i))).collect();
        let stats = SpaceStats::new("toy", &space, Direction::Minimize).unwrap();
        let values = [50.0, 20.0, 1.0, 30.0];
        let traces = vec![
            trace("s/w1", 0, &values, &[10.0, 20.0, 30.0, 40.0]),
            trace("s/w1", 1, &values, &[10.0, 20.0, 30.0, 40.0]),
            trace("s/w2", 0, &values, &[5.0, 10.0, 15.0, 20.0]),
            trace("s/w2", 1, &values, &[5.0, 10.0, 15.0, 20.0]),
            // Another strategy that never gets within 5% (1.05).
            trace("t/w1", 0, &[60.0, 40.0], &[10.0, 20.0]),
            trace("t/w2", 0, &[60.0, 40.0], &[5.0, 10.0]),
            // Not a workers trace: ignored.
            trace("s", 0, &values, &[1.0, 2.0, 3.0, 4.0]),
        ];
        let report = workers_report(&traces, &[stats], 0.05);
        crate::contains_all(
            &report,
            &[
                "| s | 1 | 1.00x (1) | 100% |",
                "| s | 2 | 2.00x (1) | 100% |",
                "| t | 2 | — | 0% |",
                "| toy | s | 30 | 15 |",
                "| toy | t | — | — |",
            ],
        );
    }

    #[test]
    fn the_median_counts_failures_as_infinitely_slow() {
        assert_eq!(median(&[Some(1.0), None, Some(3.0)]), Some(3.0));
        assert_eq!(median(&[Some(1.0), None, None]), None);
        assert_eq!(median(&[Some(1.0), Some(2.0)]), Some(1.5));
        assert_eq!(median(&[]), None);
    }
}
