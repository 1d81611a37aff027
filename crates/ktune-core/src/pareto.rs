//! Pareto dominance between results of several objectives, in minimisation form
//! ([`Direction::to_min`](crate::Direction::to_min)): what the strategies of several
//! objectives sort by and what `ktune results --pareto` lists.

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

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
