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

/// A result's score under a goal (smaller is better; `None`: the goal rules it out).
type Score<'a> = Box<dyn Fn(&[f64]) -> Option<f64> + 'a>;

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
        let ran: Vec<(usize, &[f64])> = points
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.as_deref().map(|p| (i, p)))
            .filter(|(_, p)| p.len() >= directions.len() && p.iter().all(|v| v.is_finite()))
            .collect();
        let best_of = |j: usize| {
            ran.iter()
                .map(|(_, p)| directions[j].to_min(p[j]))
                .fold(f64::INFINITY, f64::min)
        };
        let score: Score<'_> = match self {
            Goal::Within { best, within } => {
                let limits: Vec<(usize, f64)> = within
                    .iter()
                    .map(|&(j, f)| {
                        let b = best_of(j);
                        // In minimisation form: a minimised objective's best b allows
                        // b·(1+f) when b > 0; a maximised one's (−best) allows −best/(1+f).
                        let limit = if b >= 0.0 {
                            b * (1.0 + f)
                        } else {
                            b / (1.0 + f)
                        };
                        (j, limit)
                    })
                    .collect();
                let best = *best;
                Box::new(move |p: &[f64]| {
                    limits
                        .iter()
                        .all(|&(j, limit)| directions[j].to_min(p[j]) <= limit)
                        .then(|| directions[best].to_min(p[best]))
                })
            }
            Goal::Weighted(weights) => {
                let bests: Vec<f64> = (0..directions.len()).map(best_of).collect();
                Box::new(move |p: &[f64]| {
                    let mut sum = 0.0;
                    for (j, &w) in weights.iter().enumerate() {
                        if w == 0.0 {
                            continue;
                        }
                        let (v, b) = (p[j], directions[j].to_min(bests[j]).abs());
                        let relative = match directions[j] {
                            crate::Direction::Minimize => v / b,
                            crate::Direction::Maximize => b / v,
                        };
                        sum += w * relative;
                    }
                    sum.is_finite().then_some(sum)
                })
            }
        };
        ran.iter()
            .filter_map(|&(i, p)| score(p).map(|s| (s, i)))
            .min_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)))
            .map(|(_, i)| i)
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
