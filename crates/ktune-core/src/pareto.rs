//! Pareto dominance between results of several objectives, in minimisation form
//! ([`Direction::to_min`](crate::Direction::to_min)): what the strategies of several
//! objectives sort by and what `ktune results --pareto` lists; and the [`Goal`]s that pick
//! one configuration from a study of several ("the least energy within 5% of the fastest
//! time", a weighted sum).

use crate::Metric;

/// Whether `a` dominates `b`: nowhere worse and somewhere better (points of different lengths
/// dominate nothing).
pub fn dominates(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| x <= y)
        && a.iter().zip(b).any(|(x, y)| x < y)
}

/// The indices of the points no other point dominates (the Pareto front), in the order
/// given; a point with a NaN, or `None` (a failure), is never on it. Equal points are all
/// on it. Quadratic in the points: a study's thousands take milliseconds.
pub fn pareto_front(points: &[Option<Vec<f64>>]) -> Vec<usize> {
    let valid: Vec<(usize, &[f64])> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.as_deref().map(|p| (i, p)))
        .filter(|(_, p)| p.iter().all(|v| !v.is_nan()))
        .collect();
    valid
        .iter()
        .filter(|(_, p)| !valid.iter().any(|(_, q)| dominates(q, p)))
        .map(|&(i, _)| i)
        .collect()
}

/// The positions of the results on the Pareto front of `objectives`, best first objective
/// first (ties in the order given): each result's values as measured (the objectives first,
/// in order; `None` where it failed), under the objectives' directions. A result with fewer
/// values than objectives is not on it.
pub fn front_of(values: &[Option<&[f64]>], objectives: &[Metric]) -> Vec<usize> {
    let points: Vec<Option<Vec<f64>>> = values
        .iter()
        .map(|v| {
            v.filter(|v| v.len() >= objectives.len()).map(|v| {
                objectives
                    .iter()
                    .zip(v)
                    .map(|(m, &x)| m.direction.to_min(x))
                    .collect()
            })
        })
        .collect();
    let mut front = pareto_front(&points);
    let first = |i: usize| points[i].as_ref().map_or(f64::NAN, |p| p[0]);
    // Stable: equal first objectives keep their order.
    front.sort_by(|&a, &b| first(a).total_cmp(&first(b)));
    front
}

/// How one configuration is picked from a study of several objectives.
#[derive(Clone, Debug, PartialEq)]
pub enum Goal {
    /// The best of objective `best` among the results within a factor of the best of each
    /// objective in `within` (`energy within 5% of time`: the least energy among the results
    /// at most 1.05 times the fastest time; for a maximised objective, at least its best
    /// divided by 1.05).
    Within {
        /// The objective to optimise, by its position.
        best: usize,
        /// The objectives held near their best, by position, with the fraction allowed.
        within: Vec<(usize, f64)>,
    },
    /// The least weighted sum of each objective relative to its best (`f / best` for a
    /// minimised one, `best / f` for a maximised one, so that 1 is the best and units cancel):
    /// `weighted time=1, energy=0.5`.
    Weighted(Vec<f64>),
}

/// Why a goal cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "goal `{text}`: {message}; write e.g. `energy within 5% of time` or `weighted time=1, energy=0.5` (the objectives: {names})"
)]
pub struct GoalError {
    text: String,
    message: String,
    names: String,
}

impl Goal {
    /// Reads a goal over `objectives`: `A within P% of B[, C ...]` (P a percentage, each
    /// objective named as the study names it), or `weighted A=w, B=w` (weights at least 0,
    /// some above 0; unnamed objectives weigh 0).
    ///
    /// # Errors
    /// [`GoalError`] naming the goal, what is wrong and the study's objectives.
    pub fn parse(text: &str, objectives: &[Metric]) -> Result<Goal, GoalError> {
        let fail = |message: String| GoalError {
            text: text.to_string(),
            message,
            names: objectives
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        let index = |name: &str| {
            let name = name.trim();
            objectives
                .iter()
                .position(|m| m.name == name)
                .ok_or_else(|| fail(format!("`{name}` is not an objective of the study")))
        };
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("weighted") {
            let mut weights = vec![0.0; objectives.len()];
            for part in rest.split(',').filter(|p| !p.trim().is_empty()) {
                let (name, w) = part
                    .split_once('=')
                    .ok_or_else(|| fail(format!("`{}` is not `name=weight`", part.trim())))?;
                let i = index(name)?;
                let w: f64 = w
                    .trim()
                    .parse()
                    .ok()
                    .filter(|w: &f64| w.is_finite() && *w >= 0.0)
                    .ok_or_else(|| {
                        fail(format!(
                            "the weight of `{}` must be a number, at least 0",
                            name.trim()
                        ))
                    })?;
                weights[i] = w;
            }
            if weights.iter().all(|&w| w == 0.0) {
                return Err(fail("give some objective a weight above 0".into()));
            }
            return Ok(Goal::Weighted(weights));
        }
        let (best, rest) = t
            .split_once(" within ")
            .ok_or_else(|| fail("neither `... within ...` nor `weighted ...`".into()))?;
        let best = index(best)?;
        let (percent, of) = rest
            .split_once(" of ")
            .ok_or_else(|| fail("`within` needs `P% of` an objective".into()))?;
        let fraction: f64 = percent
            .trim()
            .strip_suffix('%')
            .and_then(|p| p.trim().parse().ok())
            .filter(|p: &f64| p.is_finite() && *p >= 0.0)
            .map(|p| p / 100.0)
            .ok_or_else(|| {
                fail(format!(
                    "`{}` is not a percentage such as 5%",
                    percent.trim()
                ))
            })?;
        let mut within = Vec::new();
        for name in of.split(',') {
            let i = index(name)?;
            if i == best {
                return Err(fail(format!(
                    "`{}` cannot be held near its best and optimised at once",
                    name.trim()
                )));
            }
            within.push((i, fraction));
        }
        Ok(Goal::Within { best, within })
    }

    /// The position in `points` (each result's objectives as measured, `None` where it
    /// failed) of the result the goal picks, under the objectives' `directions`; `None`
    /// when no result ran. Ties go to the earlier result.
    pub fn pick(
        &self,
        points: &[Option<Vec<f64>>],
        directions: &[crate::Direction],
    ) -> Option<usize> {
        let ran: Vec<(usize, Vec<f64>)> = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_deref().map(|p| (i, p)))
            .filter(|(_, p)| p.len() >= directions.len() && p.iter().all(|v| v.is_finite()))
            .map(|(i, p)| {
                (
                    i,
                    directions
                        .iter()
                        .zip(p)
                        .map(|(d, &v)| d.to_min(v))
                        .collect(),
                )
            })
            .collect();
        let reference = GoalReference::of(ran.iter().map(|(_, row)| row.as_slice()));
        ran.iter()
            .filter(|(_, row)| self.admits(row, &reference))
            .map(|(i, row)| (self.steer(row, &reference), *i))
            .filter(|(s, _)| s.is_finite())
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, i)| i)
    }

    /// Whether the goal admits a result (`row`: its objectives in minimisation form) beside
    /// the results `reference` holds: `Within` only those within their fractions of each
    /// best, `Weighted` all.
    pub fn admits(&self, row: &[f64], reference: &GoalReference) -> bool {
        match self {
            Goal::Within { within, .. } => within
                .iter()
                .all(|&(j, f)| relative(row[j], reference.best(j)) <= 1.0 + f),
            Goal::Weighted(_) => true,
        }
    }

    /// A result's value under the goal, for a strategy to minimise (`row`: its objectives in
    /// minimisation form; `reference`: the results so far, this one among them). Each
    /// objective counts relative to its best so far (`f / best` for a minimised one, `best /
    /// f` for a maximised one: 1 is the best, units cancel), so the value is at least 1
    /// where the results are positive:
    ///
    /// - `Weighted`: the weighted sum of the relative objectives, as [`pick`](Self::pick)
    ///   ranks them;
    /// - `Within`: where admitted, the relative objective it optimises; otherwise its largest
    ///   over the results so far times one plus how far (relatively) each held objective is
    ///   beyond its allowance. So every admitted result is better than every other, and the
    ///   others are better the nearer they are to being admitted (Deb's rule of feasibility
    ///   first), which leads a model towards the admitted region from either side.
    ///
    /// Among the results a reference holds, the least value is the one `pick` takes (where
    /// `Within` admits some). As the bests move, so do the values: a strategy that keeps
    /// them recomputes them ([`Strategy::set_goal`](crate::Strategy::set_goal)).
    pub fn steer(&self, row: &[f64], reference: &GoalReference) -> f64 {
        match self {
            Goal::Weighted(weights) => weights
                .iter()
                .enumerate()
                .filter(|&(_, &w)| w > 0.0)
                .map(|(j, &w)| w * relative(row[j], reference.best(j)))
                .sum(),
            Goal::Within { best, within } => {
                let own = relative(row[*best], reference.best(*best));
                let beyond: f64 = within
                    .iter()
                    .map(|&(j, f)| (relative(row[j], reference.best(j)) / (1.0 + f) - 1.0).max(0.0))
                    .sum();
                if beyond <= 0.0 {
                    own
                } else {
                    let worst = relative(reference.worst(*best), reference.best(*best));
                    worst.max(own) * (1.0 + beyond)
                }
            }
        }
    }

    /// [`steer`](Self::steer) for every row, against the reference of them all.
    pub fn steer_all(&self, rows: &[Vec<f64>]) -> Vec<f64> {
        let reference = GoalReference::of(rows.iter().map(Vec::as_slice));
        rows.iter().map(|r| self.steer(r, &reference)).collect()
    }

    /// How many objectives the goal was read for.
    pub fn objectives(&self) -> usize {
        match self {
            Goal::Weighted(w) => w.len(),
            Goal::Within { best, within } => within
                .iter()
                .map(|&(j, _)| j + 1)
                .chain([best + 1])
                .max()
                .unwrap_or(0),
        }
    }
}

/// The results a goal's values are relative to: each objective's best and worst so far, in
/// minimisation form.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GoalReference {
    lo: Vec<f64>,
    hi: Vec<f64>,
}

impl GoalReference {
    /// The reference of `rows` (each result's objectives in minimisation form).
    pub fn of<'r>(rows: impl IntoIterator<Item = &'r [f64]>) -> GoalReference {
        let mut reference = GoalReference::default();
        for row in rows {
            reference.add(row);
        }
        reference
    }

    /// Takes a result into account (its objectives in minimisation form; non-finite values
    /// are ignored).
    pub fn add(&mut self, row: &[f64]) {
        if self.lo.len() < row.len() {
            self.lo.resize(row.len(), f64::INFINITY);
            self.hi.resize(row.len(), f64::NEG_INFINITY);
        }
        for (j, &v) in row.iter().enumerate().filter(|(_, v)| v.is_finite()) {
            self.lo[j] = self.lo[j].min(v);
            self.hi[j] = self.hi[j].max(v);
        }
    }

    /// Objective `j`'s best so far (infinite before any result).
    pub fn best(&self, j: usize) -> f64 {
        self.lo.get(j).copied().unwrap_or(f64::INFINITY)
    }

    /// Objective `j`'s worst so far.
    pub fn worst(&self, j: usize) -> f64 {
        self.hi.get(j).copied().unwrap_or(f64::NEG_INFINITY)
    }
}

/// `v` relative to the best `b` (both in minimisation form): `v / b` where the best is
/// positive (a minimised time), `b / v` where it is negative (a maximised rate, negated), so
/// 1 is the best and larger is worse either way; `1 + v - b` where the best is 0.
fn relative(v: f64, b: f64) -> f64 {
    if b > 0.0 {
        v / b
    } else if b < 0.0 {
        b / v
    } else {
        1.0 + v - b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Direction;

    fn objectives() -> Vec<Metric> {
        vec![
            Metric::new("time", Direction::Minimize),
            Metric::new("energy", Direction::Minimize),
            Metric::new("GFLOP/s", Direction::Maximize),
        ]
    }

    #[test]
    fn goals_pick_within_a_margin_or_by_weights() {
        let o = objectives();
        let d: Vec<Direction> = o.iter().map(|m| m.direction).collect();
        let p = |t: f64, e: f64, g: f64| Some(vec![t, e, g]);
        let points = vec![
            p(10.0, 50.0, 100.0), // fastest
            p(10.4, 30.0, 96.0),  // within 5% of the fastest, least energy there
            p(10.6, 20.0, 94.0),  // least energy, 6% slower
            None,
            p(12.0, 25.0, 110.0), // most GFLOP/s
        ];
        let within = Goal::parse("energy within 5% of time", &o).unwrap();
        assert_eq!(within.pick(&points, &d), Some(1));
        let wider = Goal::parse("energy within 7% of time", &o).unwrap();
        assert_eq!(wider.pick(&points, &d), Some(2));
        // A maximised objective held near its best: at least 110 / 1.05.
        let near_rate = Goal::parse("time within 5% of GFLOP/s", &o).unwrap();
        assert_eq!(near_rate.pick(&points, &d), Some(4));
        // Each relative to its best: time 1.04 + energy 1.5 is the least sum for (1, 1).
        let w = Goal::parse("weighted time=1, energy=1", &o).unwrap();
        assert_eq!(w, Goal::Weighted(vec![1.0, 1.0, 0.0]));
        assert_eq!(w.pick(&points, &d), Some(2));
        let only_time = Goal::parse("weighted time=1", &o).unwrap();
        assert_eq!(only_time.pick(&points, &d), Some(0));
        assert_eq!(w.pick(&[None], &d), None);
    }

    #[test]
    fn steering_values_rank_as_the_goal_picks_and_lead_to_what_it_admits() {
        let o = objectives();
        let d: Vec<Direction> = o.iter().map(|m| m.direction).collect();
        // In minimisation form: time, energy, GFLOP/s negated.
        let rows: Vec<Vec<f64>> = vec![
            vec![10.0, 50.0, -100.0],
            vec![10.4, 30.0, -96.0],
            vec![10.6, 20.0, -94.0],
            vec![12.0, 25.0, -110.0],
            vec![20.0, 15.0, -50.0],
        ];
        let points: Vec<Option<Vec<f64>>> = rows
            .iter()
            .map(|r| Some(r.iter().zip(&d).map(|(&v, d)| d.to_min(v)).collect()))
            .collect();
        for text in [
            "energy within 5% of time",
            "energy within 7% of time",
            "energy within 25% of time",
            "time within 5% of GFLOP/s",
            "weighted time=1, energy=1",
            "weighted time=1, GFLOP/s=3",
        ] {
            let goal = Goal::parse(text, &o).unwrap();
            let values = goal.steer_all(&rows);
            let least = (0..rows.len())
                .min_by(|&a, &b| values[a].total_cmp(&values[b]))
                .unwrap();
            assert_eq!(Some(least), goal.pick(&points, &d), "{text}: {values:?}");
            assert!(values.iter().all(|&v| v >= 1.0), "{text}: {values:?}");
        }
        // Not admitted: worse than every admitted result, and better the nearer it is.
        let within = Goal::parse("energy within 5% of time", &o).unwrap();
        let v = within.steer_all(&rows);
        assert!(v[3] > v[2] && v[4] > v[3], "{v:?}");
        assert_eq!(v[1], 30.0 / 15.0);
        // The values follow the bests: a new fastest time moves the allowance.
        let mut reference = GoalReference::of(rows.iter().map(Vec::as_slice));
        assert!(within.admits(&rows[1], &reference));
        reference.add(&[9.0, 60.0, -90.0]);
        assert!(!within.admits(&rows[1], &reference));
        assert_eq!(within.objectives(), 2);
        assert_eq!(Goal::parse("weighted time=1", &o).unwrap().objectives(), 3);
    }

    #[test]
    fn bad_goals_name_the_problem_and_the_objectives() {
        let o = objectives();
        for (text, said) in [
            ("power within 5% of time", "`power` is not an objective"),
            ("energy within five of time", "not a percentage"),
            ("energy within 5%", "needs `P% of`"),
            (
                "energy within 5% of energy",
                "cannot be held near its best and optimised",
            ),
            ("weighted time=-1", "at least 0"),
            ("weighted time", "not `name=weight`"),
            ("weighted time=0", "a weight above 0"),
            ("fastest please", "neither"),
        ] {
            let e = Goal::parse(text, &o).unwrap_err().to_string();
            crate::testing::assert_mentions(&e, &[said, "time, energy, GFLOP/s"]);
        }
    }

    #[test]
    fn the_front_is_what_nothing_dominates() {
        let p = |a: f64, b: f64| Some(vec![a, b]);
        let points = vec![
            p(1.0, 5.0),
            p(2.0, 2.0),
            p(3.0, 3.0), // dominated by (2, 2)
            None,
            p(5.0, 1.0),
            p(2.0, 2.0), // equal to a front point: both stay
            p(f64::NAN, 0.0),
            p(5.0, 1.5), // dominated by (5, 1)
        ];
        assert_eq!(pareto_front(&points), [0, 1, 4, 5]);
        assert!(dominates(&[1.0, 1.0], &[1.0, 2.0]));
        assert!(!dominates(&[1.0, 1.0], &[1.0, 1.0]));
        assert!(!dominates(&[1.0], &[2.0, 2.0]));
        assert!(pareto_front(&[None]).is_empty());
        // In the objectives' directions, best first objective first, short results left out.
        let o = [
            Metric::new("time", crate::Direction::Minimize),
            Metric::new("GFLOP/s", crate::Direction::Maximize),
        ];
        let values: [&[f64]; 4] = [&[3.0, 30.0], &[1.0, 10.0], &[2.0, 5.0], &[0.5]];
        let given: Vec<Option<&[f64]>> = values.iter().map(|v| Some(*v)).chain([None]).collect();
        assert_eq!(front_of(&given, &o), [1, 0]);
    }
}
