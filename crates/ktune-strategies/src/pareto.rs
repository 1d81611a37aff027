//! Pareto dominance for strategies of several objectives: the fast non-dominated sort, the
//! crowding distance, and the order both give (NSGA-II's selection, MOTPE's good group).
//!
//! Failures follow Deb's constraint domination: a configuration that ran dominates one that
//! failed, so the failures form the last front.
//!
//! ## References
//! K. Deb, A. Pratap, S. Agarwal, T. Meyarivan, "A fast and elitist multiobjective genetic
//! algorithm: NSGA-II", IEEE Transactions on Evolutionary Computation 6(2), 2002.

use ktune_core::Observation;

/// An individual's objectives in minimisation form; `None`: failed (or never told).
pub(crate) type Objectives = Option<Vec<f64>>;

/// An observation's objectives in minimisation form (`None`: failed).
pub(crate) fn objectives_of(o: &Observation) -> Objectives {
    let v = o.value.filter(|v| !v.is_nan())?;
    if o.objectives.is_empty() {
        Some(vec![v])
    } else {
        Some(o.objectives.clone()).filter(|x| x.iter().all(|v| !v.is_nan()))
    }
}

/// Whether `a` dominates `b` under constraint domination: a point that ran dominates one that
/// failed; of two that ran, `a` is nowhere worse and somewhere better.
fn dominates(a: &Objectives, b: &Objectives) -> bool {
    match (a, b) {
        (Some(_), None) => true,
        (None, _) => false,
        (Some(a), Some(b)) => ktune_core::pareto::dominates(a, b),
    }
}

/// The fast non-dominated sort: the indices of `points` front by front, the first front first.
pub(crate) fn non_dominated_fronts(points: &[&Objectives]) -> Vec<Vec<usize>> {
    let n = points.len();
    let mut dominated_by = vec![0usize; n];
    let mut dominates_list: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        for j in 0..n {
            if i != j && dominates(points[i], points[j]) {
                dominates_list[i].push(j);
                dominated_by[j] += 1;
            }
        }
    }
    let mut fronts = Vec::new();
    let mut current: Vec<usize> = (0..n).filter(|&i| dominated_by[i] == 0).collect();
    while !current.is_empty() {
        let mut next = Vec::new();
        for &i in &current {
            for &j in &dominates_list[i] {
                dominated_by[j] -= 1;
                if dominated_by[j] == 0 {
                    next.push(j);
                }
            }
        }
        fronts.push(current);
        current = next;
    }
    fronts
}

/// The indices of `points` best first for several objectives: front by front, and within a
/// front the most isolated first (crowding distance), failures last.
pub(crate) fn pareto_order(points: &[&Objectives]) -> Vec<usize> {
    let mut order = Vec::with_capacity(points.len());
    for front in non_dominated_fronts(points) {
        let crowding = crowding_distances(&front, points);
        let mut by: Vec<usize> = (0..front.len()).collect();
        by.sort_by(|&a, &b| {
            crowding[b]
                .total_cmp(&crowding[a])
                .then(front[a].cmp(&front[b]))
        });
        order.extend(by.into_iter().map(|k| front[k]));
    }
    order
}

/// The crowding distance of each point of `front` (indices into `points`): the sum over the
/// objectives of the gap between its two neighbours relative to the front's range; the
/// extremes of every objective are infinitely far (always kept); failures 0.
pub(crate) fn crowding_distances(front: &[usize], points: &[&Objectives]) -> Vec<f64> {
    let mut distance = vec![0.0; front.len()];
    let Some(m) = front.iter().find_map(|&i| points[i].as_ref().map(Vec::len)) else {
        return distance;
    };
    let ran: Vec<usize> = (0..front.len())
        .filter(|&k| points[front[k]].is_some())
        .collect();
    for obj in 0..m {
        let value = |k: usize| points[front[k]].as_ref().map_or(f64::NAN, |v| v[obj]);
        let mut order = ran.clone();
        order.sort_by(|&a, &b| value(a).total_cmp(&value(b)));
        let (Some(&lo), Some(&hi)) = (order.first(), order.last()) else {
            continue;
        };
        let range = value(hi) - value(lo);
        distance[lo] = f64::INFINITY;
        distance[hi] = f64::INFINITY;
        if range <= 0.0 {
            continue;
        }
        for w in order.windows(3) {
            distance[w[1]] += (value(w[2]) - value(w[0])) / range;
        }
    }
    distance
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(v: &[f64]) -> Objectives {
        Some(v.to_vec())
    }

    #[test]
    fn fronts_follow_dominance_and_failures_come_last() {
        let points = [
            some(&[1.0, 5.0]),
            some(&[2.0, 2.0]),
            None,
            some(&[3.0, 3.0]),
            some(&[5.0, 1.0]),
            some(&[4.0, 4.0]),
        ];
        let refs: Vec<&Objectives> = points.iter().collect();
        let fronts = non_dominated_fronts(&refs);
        let sorted: Vec<Vec<usize>> = fronts
            .into_iter()
            .map(|mut f| {
                f.sort_unstable();
                f
            })
            .collect();
        assert_eq!(sorted, vec![vec![0, 1, 4], vec![3], vec![5], vec![2]]);
    }

    #[test]
    fn the_extremes_of_a_front_are_always_kept() {
        let points = [
            some(&[1.0, 5.0]),
            some(&[2.0, 4.0]),
            some(&[2.5, 3.9]),
            some(&[5.0, 1.0]),
        ];
        let refs: Vec<&Objectives> = points.iter().collect();
        let d = crowding_distances(&[0, 1, 2, 3], &refs);
        assert!(d[0].is_infinite() && d[3].is_infinite());
        // the point between two close neighbours is the most crowded
        assert!(d[1] < d[2] || d[2] < d[1]);
        assert!(d[1].is_finite() && d[2].is_finite());
    }
}
