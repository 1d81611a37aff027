//! Optimising the acquisition function without enumerating the space (BaCO, section 3.3):
//! a uniform sample of valid configurations, the best of it and the best observed
//! configurations as starts, and hill climbing to the best valid neighbour (one parameter
//! changed; for a permutation, two items swapped) until no neighbour improves. `baco` runs
//! it every round; `bayes_opt` climbs from the best of its sample above the candidate limit.

use ktune_core::Rng;
use ktune_space::{Configuration, ParamKind, SearchSpace, Value};
use rand::seq::SliceRandom;
use rustc_hash::FxHashMap;

use crate::encoding::permutation_rank;

/// Every valid configuration that differs from `config` in one parameter: any other value
/// of an ordinary parameter, or one swap of two items of a permutation.
pub fn neighbours(space: &SearchSpace, config: &[u32]) -> Vec<Configuration> {
    let mut out = Vec::new();
    for (p, param) in space.params().iter().enumerate() {
        let current = config[p] as usize;
        let mut consider = |v: usize| {
            if v != current {
                let mut c = config.to_vec();
                c[p] = v as u32;
                if space.contains(&c) {
                    out.push(c);
                }
            }
        };
        match (param.kind(), &param.values()[current]) {
            (ParamKind::Permutation { .. }, Value::Perm(order)) => {
                for i in 0..order.len() {
                    for j in i + 1..order.len() {
                        let mut swapped = order.clone();
                        swapped.swap(i, j);
                        consider(permutation_rank(&swapped));
                    }
                }
            }
            _ => (0..param.len()).for_each(&mut consider),
        }
    }
    out
}

/// Neighbours scored together during a climb (one batched model prediction).
const CLIMB_CHUNK: usize = 16;

/// How the local search is run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchOptions {
    /// Uniformly sampled valid configurations scored first.
    pub random_points: usize,
    /// A space with at most this many configurations (or `random_points`) is scored whole.
    pub exhaustive: usize,
    /// The best of them that start a climb (besides the given starts).
    pub starts: usize,
}

/// Maximises `score` (a batch of configurations to their acquisition values; `-∞` marks a
/// configuration that must not be proposed) over the valid configurations that `allowed`
/// accepts, from `random_points` uniform samples (every configuration, when the space has
/// no more than that) and `extra_starts`. Returns every allowed configuration scored, best
/// first (ties by rank, so the result is deterministic).
pub fn maximise(
    space: &SearchSpace,
    options: SearchOptions,
    extra_starts: &[Configuration],
    allowed: &dyn Fn(u64) -> bool,
    score: &mut dyn FnMut(&[Configuration]) -> Vec<f64>,
    rng: &mut Rng,
) -> Vec<(Configuration, f64)> {
    // Scores by rank, so no configuration is scored twice.
    let mut known: FxHashMap<u64, f64> = FxHashMap::default();
    let mut score_new = |configs: Vec<Configuration>, known: &mut FxHashMap<u64, f64>| {
        let fresh: Vec<(u64, Configuration)> = configs
            .into_iter()
            .filter_map(|c| {
                let r = space.rank(&c)?;
                (allowed(r) && !known.contains_key(&r)).then_some((r, c))
            })
            .collect();
        let mut unique: Vec<(u64, Configuration)> = Vec::with_capacity(fresh.len());
        for (r, c) in fresh {
            if !unique.iter().any(|(u, _)| *u == r) {
                unique.push((r, c));
            }
        }
        let configs: Vec<Configuration> = unique.iter().map(|(_, c)| c.clone()).collect();
        let values = if configs.is_empty() {
            Vec::new()
        } else {
            score(&configs)
        };
        for ((r, _), v) in unique.iter().zip(values) {
            known.insert(*r, v);
        }
    };
    // A space no larger than the sample (or the exhaustive limit) is scored whole: exact,
    // and no dearer than sampling as many.
    let whole = options.random_points.max(options.exhaustive) as u64;
    let sample: Vec<Configuration> = if space.size() <= whole {
        (0..space.size()).map(|r| space.configuration(r)).collect()
    } else {
        (0..options.random_points)
            .map(|_| space.sample(rng))
            .collect()
    };
    score_new(sample.clone(), &mut known);
    let mut ranked: Vec<(f64, u64, Configuration)> = sample
        .into_iter()
        .filter_map(|c| {
            let r = space.rank(&c)?;
            known.get(&r).map(|&v| (v, r, c))
        })
        .filter(|(v, _, _)| *v > f64::NEG_INFINITY)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    ranked.dedup_by(|a, b| a.1 == b.1);
    let mut starts: Vec<Configuration> = extra_starts.to_vec();
    starts.extend(ranked.into_iter().take(options.starts).map(|(_, _, c)| c));
    for start in starts {
        let Some(rank) = space.rank(&start) else {
            continue;
        };
        let mut current = start;
        // A start that is not allowed (an observed configuration) is left at once.
        let mut value = known.get(&rank).copied().unwrap_or(f64::NEG_INFINITY);
        // First improvement over the neighbours in random order, scored a chunk at a time:
        // a climb ends, as best improvement's does, at a configuration no neighbour of which
        // scores higher, and it scores far fewer neighbours on the way when there are many
        // parameters (each move needs a chunk that contains a better one, not the whole
        // neighbourhood).
        'climb: loop {
            let mut around = neighbours(space, &current);
            around.shuffle(rng);
            for chunk in around.chunks(CLIMB_CHUNK) {
                score_new(chunk.to_vec(), &mut known);
                let best = chunk
                    .iter()
                    .filter_map(|c| {
                        let r = space.rank(c)?;
                        known.get(&r).map(|&v| (v, r, c))
                    })
                    .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
                if let Some((v, _, c)) = best
                    && v > value
                {
                    value = v;
                    current = c.clone();
                    continue 'climb;
                }
            }
            break;
        }
    }
    let mut all: Vec<(u64, f64)> = known
        .into_iter()
        .filter(|(_, v)| *v > f64::NEG_INFINITY)
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    all.into_iter()
        .map(|(r, v)| (space.configuration(r), v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_space::Parameter;
    use rand::SeedableRng;

    fn space() -> SearchSpace {
        SearchSpace::new(
            vec![
                Parameter::integer_range("x", 0, 19, 1).unwrap(),
                Parameter::integer_range("y", 0, 19, 1).unwrap(),
                Parameter::permutation("order", ["a", "b", "c"]).unwrap(),
            ],
            &["x + y <= 30"],
        )
        .unwrap()
    }

    #[test]
    fn neighbours_change_one_parameter_or_swap_two_items() {
        let s = space();
        let c = s
            .configuration_of(&[Value::Int(15), Value::Int(10), Value::Perm(vec![0, 1, 2])])
            .unwrap();
        let n = neighbours(&s, &c);
        // x: 0..=19 except 15, valid while x + 10 <= 30: 19 values; y: while 15 + y <= 30,
        // 0..=15 except 10: 15; order: 3 swaps.
        assert_eq!(n.len(), 19 + 15 + 3);
        assert!(n.iter().all(|m| s.contains(m)));
        for m in &n {
            let changed = (0..3).filter(|&p| m[p] != c[p]).count();
            assert_eq!(changed, 1);
        }
        let orders: Vec<&Value> = n
            .iter()
            .filter(|m| m[2] != c[2])
            .map(|m| &s.params()[2].values()[m[2] as usize])
            .collect();
        assert_eq!(
            orders,
            [
                &Value::Perm(vec![1, 0, 2]),
                &Value::Perm(vec![2, 1, 0]),
                &Value::Perm(vec![0, 2, 1])
            ]
        );
    }

    #[test]
    fn climbs_to_a_local_optimum_among_valid_neighbours() {
        let s = space();
        // A score with one optimum at x = 12, y = 18 (x + y = 30: on the constraint's edge),
        // order [2, 0, 1]; the observed configuration (13, 17, ...) is not allowed.
        let target = s
            .configuration_of(&[Value::Int(12), Value::Int(18), Value::Perm(vec![2, 0, 1])])
            .unwrap();
        let banned = s
            .rank(
                &s.configuration_of(&[Value::Int(13), Value::Int(17), Value::Perm(vec![2, 0, 1])])
                    .unwrap(),
            )
            .unwrap();
        let mut calls = 0usize;
        let mut score = |cs: &[Configuration]| -> Vec<f64> {
            calls += cs.len();
            cs.iter()
                .map(|c| {
                    let d: f64 = c
                        .iter()
                        .zip(&target)
                        .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
                        .sum();
                    -d
                })
                .collect()
        };
        let mut rng = Rng::seed_from_u64(3);
        let out = maximise(
            &s,
            SearchOptions {
                random_points: 20,
                exhaustive: 0,
                starts: 3,
            },
            &[],
            &|r| r != banned,
            &mut score,
            &mut rng,
        );
        assert_eq!(out[0].0, target);
        assert!(out.iter().all(|(c, _)| s.rank(c) != Some(banned)));
        // Best first, and every configuration scored once.
        assert!(out.windows(2).all(|w| w[0].1 >= w[1].1));
        assert_eq!(calls, out.len());
        // Fewer evaluations than the space has configurations.
        assert!((calls as u64) < s.size());
        // Scored whole when the space is within the exhaustive limit: the one allowed
        // configuration that a climb from 20 samples can miss is found.
        let mut calls = 0usize;
        let mut spike = |cs: &[Configuration]| -> Vec<f64> {
            calls += cs.len();
            cs.iter()
                .map(|c| if *c == target { 1.0 } else { 0.0 })
                .collect()
        };
        let out = maximise(
            &s,
            SearchOptions {
                random_points: 20,
                exhaustive: s.size() as usize,
                starts: 3,
            },
            &[],
            &|r| r != banned,
            &mut spike,
            &mut rng,
        );
        assert_eq!(out[0].0, target);
        assert_eq!(calls as u64, s.size() - 1);
    }
}
