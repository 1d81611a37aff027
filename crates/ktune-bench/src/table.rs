//! Aggregation of many runs: one row per (tool, strategy, space) and the mean over spaces per
//! (tool, strategy), with a Markdown rendering.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde::Serialize;

use crate::score::score_run;
use crate::{BenchError, Direction, SpaceStats, Trace};

/// The scores of one strategy of one tool on one space, over its runs (one per seed).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreRow {
    tool: String,
    strategy: String,
    space: String,
    runs: usize,
    score: f64,
    score_se: f64,
    mae220: f64,
    /// Mean scores at the early horizons (20, 60, 120 evaluations).
    early: [f64; 3],
    /// The mean share of a run's evaluations that failed.
    failed: f64,
    wall_median: f64,
    evaluations_mean: f64,
    found_optimum: f64,
    #[serde(skip)]
    walls: Vec<f64>,
    /// Wall seconds per evaluation of each run.
    per_evaluation: Vec<f64>,
}

impl ScoreRow {
    /// The tool, e.g. `ktune-0.1.0`.
    pub fn tool(&self) -> &str {
        &self.tool
    }
    /// The strategy.
    pub fn strategy(&self) -> &str {
        &self.strategy
    }
    /// The space.
    pub fn space(&self) -> &str {
        &self.space
    }
    /// The number of runs (distinct seeds; the last line of a repeated seed counts).
    pub fn runs(&self) -> usize {
        self.runs
    }
    /// The mean performance score over the runs.
    pub fn mean_score(&self) -> f64 {
        self.score
    }
    /// The standard error of [`mean_score`](Self::mean_score) (sample standard deviation over
    /// `sqrt(runs)`; NaN for a single run).
    pub fn std_error(&self) -> f64 {
        self.score_se
    }
    /// The mean MAE@220 over the runs.
    pub fn mae220(&self) -> f64 {
        self.mae220
    }
    /// The mean scores over the first 20, 60 and 120 evaluations.
    pub fn early_scores(&self) -> [f64; 3] {
        self.early
    }
    /// The mean share of a run's evaluations that failed (a model of hidden constraints
    /// should keep it near the space's own share, or below).
    pub fn failed_share(&self) -> f64 {
        self.failed
    }
    /// The median wall-clock seconds of a run (runs with an unknown time are left out; NaN if
    /// no run has one).
    pub fn median_wall_seconds(&self) -> f64 {
        self.wall_median
    }
    /// The mean number of distinct evaluations per run.
    pub fn mean_evaluations(&self) -> f64 {
        self.evaluations_mean
    }
    /// The fraction of runs that evaluated the optimum.
    pub fn found_optimum_fraction(&self) -> f64 {
        self.found_optimum
    }
}

/// What the score table recalls of each space it covers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SpaceSummary {
    /// The space's name.
    pub name: String,
    /// Whether smaller or larger is better.
    pub direction: Direction,
    /// N, failing configurations included.
    pub n_total: usize,
    /// M, configurations with a valid value.
    pub n_valid: usize,
    /// The optimum, raw units.
    pub optimum: f64,
    /// The median, raw units.
    pub median: f64,
    /// The budget rule's `n_max`.
    pub n_max: usize,
}

/// One row per (tool, strategy, space) plus the mean over spaces per (tool, strategy).
#[derive(Clone, Debug, Serialize)]
pub struct ScoreTable {
    rows: Vec<ScoreRow>,
    spaces: Vec<SpaceSummary>,
}

/// Scores every trace against its space and aggregates per (tool, strategy, space).
///
/// Runs are told apart by seed: when a seed appears twice for the same (tool, strategy, space),
/// the later trace counts, as in kt-peer. Rows are sorted by tool, strategy, then space in the
/// order of `spaces`; spaces without traces are left out of the table.
///
/// # Errors
/// [`BenchError::UnknownSpace`] for a trace whose space is not in `spaces`,
/// [`BenchError::DuplicateSpace`] when two spaces share a name.
pub fn score_traces(traces: &[Trace], spaces: &[SpaceStats]) -> Result<ScoreTable, BenchError> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(spaces.len());
    for (i, st) in spaces.iter().enumerate() {
        if index.insert(st.name(), i).is_some() {
            return Err(BenchError::DuplicateSpace {
                space: st.name().to_string(),
            });
        }
    }
    // (tool, strategy, space index) -> seed -> trace; the last trace of a seed wins
    let mut groups: BTreeMap<(&str, &str, usize), BTreeMap<i64, &Trace>> = BTreeMap::new();
    for t in traces {
        let Some(&si) = index.get(t.space.as_str()) else {
            return Err(BenchError::UnknownSpace {
                space: t.space.clone(),
                tool: t.tool.clone(),
                strategy: t.strategy.clone(),
                seed: t.seed,
            });
        };
        groups
            .entry((&t.tool, &t.strategy, si))
            .or_default()
            .insert(t.seed, t);
    }
    let rows: Vec<ScoreRow> = groups
        .into_iter()
        .map(|((tool, strategy, si), runs)| {
            let st = &spaces[si];
            let scored: Vec<_> = runs.values().map(|t| score_run(st, &t.values)).collect();
            let scores: Vec<f64> = scored.iter().map(|s| s.score).collect();
            let maes: Vec<f64> = scored.iter().map(|s| s.mae220).collect();
            let early =
                [0, 1, 2].map(|k| mean(&scored.iter().map(|s| s.early[k]).collect::<Vec<_>>()));
            let failed: Vec<f64> = runs
                .values()
                .filter(|t| !t.values.is_empty())
                .map(|t| {
                    let bad = t
                        .values
                        .iter()
                        .filter(|v| !v.is_some_and(f64::is_finite))
                        .count();
                    bad as f64 / t.values.len() as f64
                })
                .collect();
            let walls: Vec<f64> = runs.values().map(|t| t.wall_seconds).collect();
            let lens: Vec<f64> = runs.values().map(|t| t.values.len() as f64).collect();
            let found: Vec<f64> = scored
                .iter()
                .map(|s| f64::from(u8::from(s.found_optimum_at.is_some())))
                .collect();
            let (score, score_se) = mean_se(&scores);
            ScoreRow {
                tool: tool.to_string(),
                strategy: strategy.to_string(),
                space: st.name().to_string(),
                runs: runs.len(),
                score,
                score_se,
                mae220: mean(&maes),
                early,
                failed: mean(&failed),
                wall_median: median(&walls),
                evaluations_mean: mean(&lens),
                found_optimum: mean(&found),
                per_evaluation: walls
                    .iter()
                    .zip(&lens)
                    .filter(|(_, n)| **n > 0.0)
                    .map(|(w, n)| w / n)
                    .collect(),
                walls,
            }
        })
        .collect();
    let used: Vec<bool> = (0..spaces.len())
        .map(|i| rows.iter().any(|r| r.space == spaces[i].name()))
        .collect();
    let spaces = spaces
        .iter()
        .zip(used)
        .filter(|(_, u)| *u)
        .map(|(st, _)| SpaceSummary {
            name: st.name().to_string(),
            direction: st.direction(),
            n_total: st.n_total(),
            n_valid: st.n_valid(),
            optimum: st.optimum(),
            median: st.median(),
            n_max: st.n_max(),
        })
        .collect();
    Ok(ScoreTable { rows, spaces })
}

/// The summary of one (tool, strategy) over the spaces it ran on.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRow {
    /// The tool.
    pub tool: String,
    /// The strategy.
    pub strategy: String,
    /// The number of spaces it has rows for.
    pub spaces: usize,
    /// Unweighted mean over spaces of the mean score.
    pub mean_score: f64,
    /// Unweighted mean over spaces of the mean MAE@220.
    pub mae220: f64,
    /// Unweighted means over spaces of the scores at 20, 60 and 120 evaluations.
    pub early: [f64; 3],
    /// Unweighted mean over spaces of the share of evaluations that failed.
    pub failed: f64,
    /// Median wall seconds over all its runs on all spaces.
    pub median_wall_seconds: f64,
    /// Median over all its runs of wall seconds per evaluation, in milliseconds (in simulation
    /// almost all of it is the strategy's own time).
    pub median_ms_per_evaluation: f64,
    /// The fewest runs on one space.
    pub min_runs: usize,
    /// The most runs on one space.
    pub max_runs: usize,
}

impl ScoreTable {
    /// One row per (tool, strategy, space), sorted by tool, strategy, then space.
    pub fn rows(&self) -> &[ScoreRow] {
        &self.rows
    }

    /// The spaces that have rows, in the order they were given to [`score_traces`].
    pub fn spaces(&self) -> &[SpaceSummary] {
        &self.spaces
    }

    /// The row of one (tool, strategy, space), if it has runs.
    pub fn row(&self, tool: &str, strategy: &str, space: &str) -> Option<&ScoreRow> {
        self.rows
            .iter()
            .find(|r| r.tool == tool && r.strategy == strategy && r.space == space)
    }

    /// The unweighted mean over spaces of a (tool, strategy)'s mean score; `None` without rows.
    pub fn mean_over_spaces(&self, tool: &str, strategy: &str) -> Option<f64> {
        let scores: Vec<f64> = self.agent_rows(tool, strategy).map(|r| r.score).collect();
        (!scores.is_empty()).then(|| mean(&scores))
    }

    /// One summary per (tool, strategy), best mean score first.
    pub fn summary(&self) -> Vec<SummaryRow> {
        let mut out: Vec<SummaryRow> = self
            .agents()
            .into_iter()
            .map(|(tool, strategy)| {
                let rows: Vec<&ScoreRow> = self.agent_rows(tool, strategy).collect();
                let scores: Vec<f64> = rows.iter().map(|r| r.score).collect();
                let maes: Vec<f64> = rows.iter().map(|r| r.mae220).collect();
                let walls: Vec<f64> = rows.iter().flat_map(|r| r.walls.iter().copied()).collect();
                SummaryRow {
                    tool: tool.to_string(),
                    strategy: strategy.to_string(),
                    spaces: rows.len(),
                    mean_score: mean(&scores),
                    mae220: mean(&maes),
                    early: [0, 1, 2]
                        .map(|k| mean(&rows.iter().map(|r| r.early[k]).collect::<Vec<_>>())),
                    failed: mean(&rows.iter().map(|r| r.failed).collect::<Vec<_>>()),
                    median_wall_seconds: median(&walls),
                    median_ms_per_evaluation: 1e3
                        * median(
                            &rows
                                .iter()
                                .flat_map(|r| r.per_evaluation.iter().copied())
                                .collect::<Vec<_>>(),
                        ),
                    min_runs: rows.iter().map(|r| r.runs).min().unwrap_or(0),
                    max_runs: rows.iter().map(|r| r.runs).max().unwrap_or(0),
                }
            })
            .collect();
        out.sort_by(|a, b| {
            b.mean_score
                .total_cmp(&a.mean_score)
                .then_with(|| (&a.tool, &a.strategy).cmp(&(&b.tool, &b.strategy)))
        });
        out
    }

    /// The table as Markdown: a summary (one line per tool/strategy, best first), the scores
    /// per space ("mean ± standard error"), and the spaces.
    pub fn to_markdown(&self) -> String {
        let mut md = String::new();
        let n_spaces = self.spaces.len();
        let _ = writeln!(
            md,
            "### Summary\n\nPerformance score: 0 = random search, 1 = optimum at once; unweighted \
             mean over spaces. @20, @60, @120: the same score over the first 20, 60 and 120 \
             evaluations (at most n_max). MAE@220: mean over n = 40, 60, ..., 220 of \
             |best(n) - opt| / |opt| (lower is better). Failed: the share of evaluations that \
             failed. Wall: median seconds per run, and median milliseconds per evaluation.\n"
        );
        md.push_str("| tool/strategy | score | @20 | @60 | @120 | MAE@220 | failed | median wall s | wall ms/eval | runs/space | spaces |\n");
        md.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for s in self.summary() {
            let runs = if s.min_runs == s.max_runs {
                s.min_runs.to_string()
            } else {
                format!("{}–{}", s.min_runs, s.max_runs)
            };
            let _ = writeln!(
                md,
                "| {}/{} | {} | {} | {} | {} | {} | {:.1}% | {} | {} | {} | {}/{} |",
                s.tool,
                s.strategy,
                fmt(s.mean_score, 3),
                fmt(s.early[0], 3),
                fmt(s.early[1], 3),
                fmt(s.early[2], 3),
                fmt(s.mae220, 3),
                100.0 * s.failed,
                fmt(s.median_wall_seconds, 2),
                fmt(s.median_ms_per_evaluation, 3),
                runs,
                s.spaces,
                n_spaces
            );
        }

        md.push_str("\n### Performance score per space (mean ± standard error over runs)\n\n");
        md.push_str("| tool/strategy |");
        for sp in &self.spaces {
            let _ = write!(md, " {} |", sp.name);
        }
        md.push_str("\n|---|");
        md.push_str(&"---:|".repeat(n_spaces));
        md.push('\n');
        for (tool, strategy) in self.agents() {
            let _ = write!(md, "| {tool}/{strategy} |");
            for sp in &self.spaces {
                let cell = match self.row(tool, strategy, &sp.name) {
                    None => String::new(),
                    Some(r) if r.score_se.is_nan() => fmt(r.score, 3),
                    Some(r) => format!("{} ± {}", fmt(r.score, 3), fmt(r.score_se, 3)),
                };
                let _ = write!(md, " {cell} |");
            }
            md.push('\n');
        }

        md.push_str("\n### Spaces\n\n");
        md.push_str("| space | direction | configurations | valid | optimum | median | n_max |\n");
        md.push_str("|---|---|---:|---:|---:|---:|---:|\n");
        for sp in &self.spaces {
            let cap = if sp.n_max >= crate::space::N_MAX_CAP {
                " (cap)"
            } else {
                ""
            };
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {}{} |",
                sp.name,
                sp.direction,
                sp.n_total,
                sp.n_valid,
                significant(sp.optimum, 5),
                significant(sp.median, 5),
                sp.n_max,
                cap
            );
        }
        md
    }

    /// The (tool, strategy) pairs with rows, sorted.
    fn agents(&self) -> Vec<(&str, &str)> {
        let mut agents: Vec<(&str, &str)> = self
            .rows
            .iter()
            .map(|r| (r.tool.as_str(), r.strategy.as_str()))
            .collect();
        agents.dedup(); // rows are sorted by (tool, strategy)
        agents
    }

    fn agent_rows<'a>(
        &'a self,
        tool: &'a str,
        strategy: &'a str,
    ) -> impl Iterator<Item = &'a ScoreRow> + 'a {
        self.rows
            .iter()
            .filter(move |r| r.tool == tool && r.strategy == strategy)
    }
}

fn fmt(x: f64, digits: usize) -> String {
    if x.is_nan() {
        "–".to_string()
    } else {
        format!("{x:.digits$}")
    }
}

/// `x` with `digits` significant digits (like Python's `g` format, without trailing zeros
/// trimmed).
pub(crate) fn significant(x: f64, digits: usize) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let exponent = x.abs().log10().floor() as i64;
    if exponent < -4 || exponent >= digits as i64 {
        format!("{:.*e}", digits.saturating_sub(1), x)
    } else {
        let decimals = (digits as i64 - 1 - exponent).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

fn mean(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// Mean and standard error (sample standard deviation / sqrt(n); NaN for one value).
pub(crate) fn mean_se(xs: &[f64]) -> (f64, f64) {
    let m = mean(xs);
    if xs.len() < 2 {
        return (m, f64::NAN);
    }
    let var = xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (xs.len() - 1) as f64;
    (m, (var / xs.len() as f64).sqrt())
}

/// Median of the non-NaN values (numpy's convention), NaN if there are none.
fn median(xs: &[f64]) -> f64 {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| !x.is_nan()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    median_of_sorted(&v)
}

/// The median of sorted values, which must not be empty (numpy's for an even count).
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(name: &str) -> SpaceStats {
        let values: Vec<Option<f64>> = (0..400)
            .map(|i| (i % 5 != 4).then(|| 1.0 + ((i * 31) % 397) as f64 / 10.0))
            .collect();
        SpaceStats::new(name, &values, Direction::Minimize).unwrap()
    }

    fn trace(
        tool: &str,
        strategy: &str,
        space: &str,
        seed: i64,
        values: Vec<Option<f64>>,
    ) -> Trace {
        Trace {
            tool: tool.into(),
            strategy: strategy.into(),
            space: space.into(),
            seed,
            values,
            wall_seconds: seed as f64,
            points: Vec::new(),
            meta: None,
        }
    }

    #[test]
    fn aggregates_per_seed_and_space() {
        let spaces = [stats("a"), stats("b")];
        let opt = spaces[0].optimum();
        let traces = vec![
            trace("k", "lucky", "a", 1, vec![Some(opt)]),
            trace("k", "lucky", "a", 2, vec![Some(40.0)]),
            trace("k", "lucky", "a", 2, vec![Some(opt)]), // same seed: replaces the one above
            trace("k", "lucky", "b", 5, vec![None]),
            trace("k", "fail", "b", 1, vec![]),
        ];
        let table = score_traces(&traces, &spaces).unwrap();
        assert_eq!(table.rows().len(), 3);
        let r = table.row("k", "lucky", "a").unwrap();
        assert_eq!((r.runs(), r.mean_score(), r.std_error()), (2, 1.0, 0.0));
        assert_eq!(r.median_wall_seconds(), 1.5);
        assert_eq!(r.found_optimum_fraction(), 1.0);
        let only_fail = score_run(&spaces[1], &[]).score;
        assert!(table.row("k", "lucky", "b").unwrap().std_error().is_nan());
        let m = table.mean_over_spaces("k", "lucky").unwrap();
        assert!((m - (1.0 + only_fail) / 2.0).abs() < 1e-12);
        assert_eq!(table.mean_over_spaces("k", "nothing"), None);
        let summary = table.summary();
        assert_eq!(summary[0].strategy, "lucky");
        assert_eq!((summary[0].min_runs, summary[0].max_runs), (1, 2));
        assert_eq!(summary[0].median_wall_seconds, 2.0);
        // Failed evaluations: none on a, the only one on b.
        assert_eq!(table.row("k", "lucky", "a").unwrap().failed_share(), 0.0);
        assert_eq!(table.row("k", "lucky", "b").unwrap().failed_share(), 1.0);
        assert_eq!(summary[0].failed, 0.5);
        let mixed = score_traces(
            &[trace(
                "k",
                "half",
                "a",
                1,
                vec![Some(5.0), None, Some(f64::NAN), Some(2.0)],
            )],
            &spaces,
        )
        .unwrap();
        assert_eq!(mixed.rows()[0].failed_share(), 0.5);

        let md = table.to_markdown();
        crate::contains_all(
            &md,
            &[
                "| 50.0% |",
                "| k/lucky | 1.000 ± 0.000 |",
                "| tool/strategy | a | b |",
                "| k/fail |  |",
                "1–2",
            ],
        );
    }

    #[test]
    fn unknown_and_duplicate_spaces_are_errors() {
        let spaces = [stats("a")];
        let e = score_traces(&[trace("k", "s", "zz", 3, vec![])], &spaces).unwrap_err();
        assert!(e.to_string().contains("`zz`"), "{e}");
        let e = score_traces(&[], &[stats("a"), stats("a")]).unwrap_err();
        assert!(matches!(e, BenchError::DuplicateSpace { .. }));
        let empty = score_traces(&[], &spaces).unwrap();
        assert!(empty.rows().is_empty() && empty.spaces().is_empty());
    }

    #[test]
    fn helpers() {
        assert_eq!(significant(4046.2708, 5), "4046.3");
        assert_eq!(significant(0.000_123_456, 5), "0.00012346");
        assert_eq!(significant(1.5e-7, 3), "1.50e-7");
        assert_eq!(significant(123_456.0, 5), "1.2346e5");
        assert_eq!(significant(-2.0, 3), "-2.00");
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0]), 2.5);
        assert!(median(&[f64::NAN]).is_nan());
        let (m, se) = mean_se(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(m, 2.5);
        assert!((se - (5.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-15);
    }
}
