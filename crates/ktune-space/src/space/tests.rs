//! Tests of construction, indexing, sampling, neighbours, repair and encodings, most of them
//! against a brute-force walk of the Cartesian product of small random spaces.

use std::collections::{BTreeSet, HashMap};

use proptest::prelude::*;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::sample::DistinctSampler;
use super::*;
use crate::expr::{Constraint, Interner, Scalar};
use crate::param::Parameter;

/// A random small problem: integer domains and constraints given as truth tables over their
/// scope (any relation at all, so construction is tested on arbitrary structure).
#[derive(Clone, Debug)]
struct Problem {
    domains: Vec<Vec<i64>>,
    /// (scope, table): `table[mixed-radix index of the scope's value indices]` says feasible.
    relations: Vec<(Vec<usize>, Vec<bool>)>,
}

impl Problem {
    fn params(&self) -> Vec<Parameter> {
        self.domains
            .iter()
            .enumerate()
            .map(|(i, d)| Parameter::integer(format!("p{i}"), d.iter().copied()).unwrap())
            .collect()
    }

    fn constraints(&self) -> Vec<Constraint> {
        self.relations
            .iter()
            .enumerate()
            .map(|(k, (scope, table))| {
                let lookup: Vec<HashMap<i64, usize>> = scope
                    .iter()
                    .map(|&p| {
                        self.domains[p]
                            .iter()
                            .enumerate()
                            .map(|(i, &v)| (v, i))
                            .collect()
                    })
                    .collect();
                let sizes: Vec<usize> = scope.iter().map(|&p| self.domains[p].len()).collect();
                let (scope2, table) = (scope.clone(), table.clone());
                Constraint::from_fn(
                    &format!("relation {k}"),
                    scope.clone(),
                    move |values: &[Scalar]| {
                        let mut code = 0;
                        for ((&p, l), &s) in scope2.iter().zip(&lookup).zip(&sizes) {
                            let Scalar::Int(v) = values[p] else {
                                return false;
                            };
                            code = code * s + l[&v];
                        }
                        table[code]
                    },
                )
            })
            .collect()
    }

    fn feasible(&self, config: &[u32]) -> bool {
        self.relations.iter().all(|(scope, table)| {
            let code = scope.iter().fold(0usize, |a, &p| {
                a * self.domains[p].len() + config[p] as usize
            });
            table[code]
        })
    }

    fn cartesian(&self) -> Vec<Configuration> {
        let mut out = vec![vec![]];
        for d in &self.domains {
            out = out
                .into_iter()
                .flat_map(|c: Vec<u32>| {
                    (0..d.len() as u32).map(move |v| {
                        let mut c = c.clone();
                        c.push(v);
                        c
                    })
                })
                .collect();
        }
        out
    }

    fn space(&self) -> Result<SearchSpace, SpaceError> {
        SearchSpace::with_constraints(self.params(), self.constraints(), Interner::default())
    }

    /// The same space built without tabulated constraints (every check a closure call).
    fn space_untabulated(&self) -> Result<SearchSpace, SpaceError> {
        SearchSpace::build(
            self.params(),
            self.constraints(),
            Interner::default(),
            0,
            f64::INFINITY,
            &BuildProgress::new(),
        )
    }
}

fn problem() -> impl Strategy<Value = Problem> {
    (1usize..=5)
        .prop_flat_map(|n| {
            let domains = prop::collection::vec(prop::collection::btree_set(-8i64..24, 1..=5), n);
            (Just(n), domains)
        })
        .prop_flat_map(|(n, domains)| {
            let domains: Vec<Vec<i64>> = domains
                .into_iter()
                .map(|d| d.into_iter().collect())
                .collect();
            let sizes: Vec<usize> = domains.iter().map(Vec::len).collect();
            let relation =
                prop::collection::btree_set(0..n, 1..=n.min(3)).prop_flat_map(move |scope| {
                    let scope: Vec<usize> = scope.into_iter().collect();
                    let cells: usize = scope.iter().map(|&p| sizes[p]).product();
                    (
                        Just(scope),
                        prop::collection::vec(prop::bool::weighted(0.7), cells),
                    )
                });
            (Just(domains), prop::collection::vec(relation, 0..=4))
        })
        .prop_map(|(domains, relations)| Problem { domains, relations })
}

fn index_distance(a: &[u32], b: &[u32]) -> u64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| u64::from(x.abs_diff(y)))
        .sum()
}

fn set(v: Vec<Configuration>) -> BTreeSet<Configuration> {
    v.into_iter().collect()
}

/// Kernel Tuner's definitions, computed over the list of feasible configurations.
fn brute_neighbours(
    feasible: &[Configuration],
    c: &[u32],
    kind: Neighbourhood,
) -> BTreeSet<Configuration> {
    let others = feasible.iter().filter(|f| f.as_slice() != c);
    match kind {
        Neighbourhood::StrictlyAdjacent => others
            .filter(|f| f.iter().zip(c).all(|(&a, &b)| a.abs_diff(b) <= 1))
            .cloned()
            .collect(),
        Neighbourhood::Adjacent => {
            let k = c.len();
            let mut lo = vec![-1i64; k];
            let mut hi = vec![1i64; k];
            for i in 0..k {
                let diffs = feasible.iter().map(|f| i64::from(f[i]) - i64::from(c[i]));
                hi[i] = diffs.clone().filter(|&d| d > 0).min().unwrap_or(1);
                lo[i] = diffs.filter(|&d| d < 0).max().unwrap_or(-1);
            }
            others
                .filter(|f| {
                    (0..k).all(|i| {
                        let d = i64::from(f[i]) - i64::from(c[i]);
                        d >= lo[i] && d <= hi[i]
                    })
                })
                .cloned()
                .collect()
        }
        Neighbourhood::Hamming => others
            .filter(|f| f.iter().zip(c).filter(|(a, b)| a != b).count() == 1)
            .cloned()
            .collect(),
        Neighbourhood::IndexDistance => {
            let best = others.clone().map(|f| index_distance(f, c)).min();
            others
                .filter(|f| Some(index_distance(f, c)) == best)
                .cloned()
                .collect()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn enumeration_equals_brute_force(p in problem()) {
        let feasible: Vec<Configuration> = p.cartesian().into_iter().filter(|c| p.feasible(c)).collect();
        match p.space() {
            Err(SpaceError::EmptySpace { .. }) => prop_assert!(feasible.is_empty()),
            Err(e) => prop_assert!(false, "unexpected error {e}"),
            Ok(space) => {
                prop_assert_eq!(space.size(), feasible.len() as u64);
                let plain = p.space_untabulated().unwrap();
                prop_assert_eq!(plain.iter().collect::<Vec<_>>(), space.iter().collect::<Vec<_>>());
                let listed: Vec<Configuration> = space.iter().collect();
                prop_assert_eq!(set(listed.clone()), set(feasible.clone()));
                for (r, c) in listed.iter().enumerate() {
                    prop_assert_eq!(space.rank(c), Some(r as u64));
                }
                for c in p.cartesian() {
                    prop_assert_eq!(space.contains(&c), p.feasible(&c));
                    prop_assert_eq!(space.satisfies_constraints(&c), p.feasible(&c));
                    prop_assert_eq!(space.unsatisfied_constraints(&c).is_empty(), p.feasible(&c));
                }
            }
        }
    }

    #[test]
    fn neighbours_match_the_definitions(p in problem(), seed in any::<u64>()) {
        let Ok(space) = p.space() else { return Ok(()) };
        let feasible: Vec<Configuration> = space.iter().collect();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        // Valid and invalid starting points alike.
        for c in p.cartesian().into_iter().take(40) {
            for kind in Neighbourhood::ALL {
                let got = space.neighbours(&c, kind);
                prop_assert!(got.iter().all(|n| space.contains(n) && *n != c));
                let expected = if kind == Neighbourhood::IndexDistance && !space.contains(&c) {
                    let best = feasible.iter().map(|f| index_distance(f, &c)).min();
                    feasible.iter().filter(|f| Some(index_distance(f, &c)) == best).cloned().collect()
                } else {
                    brute_neighbours(&feasible, &c, kind)
                };
                prop_assert_eq!(set(got), expected, "{:?} of {:?}", kind, c);
            }
            for kind in Neighbourhood::ALL {
                let all = space.neighbours(&c, kind);
                match space.random_neighbour(&c, kind, &mut rng) {
                    Some(n) => prop_assert!(all.contains(&n), "{:?} of {:?}: {:?}", kind, c, n),
                    None => prop_assert!(all.is_empty(), "{:?} of {:?}", kind, c),
                }
            }
            let nearest = space.repair_nearest(&c, &mut rng);
            prop_assert!(space.contains(&nearest));
            let best = feasible.iter().map(|f| index_distance(f, &c)).min().unwrap();
            prop_assert_eq!(index_distance(&nearest, &c), best);
            let repaired = space.repair_random_neighbour(&c, &mut rng);
            prop_assert!(space.contains(&repaired));
            if space.contains(&c) {
                prop_assert_eq!(&repaired, &c);
            }
        }
    }

    #[test]
    fn sampling_is_valid_and_distinct(p in problem(), seed in any::<u64>(), n in 1usize..40) {
        let Ok(space) = p.space() else { return Ok(()) };
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
        for sample in [
            space.sample_distinct(n, &mut rng),
            space.latin_hypercube(n, &mut rng),
            space.maximin_latin_hypercube(n, 5, &mut rng),
        ] {
            prop_assert_eq!(sample.len() as u64, (n as u64).min(space.size()));
            prop_assert!(sample.iter().all(|c| space.contains(c)));
            prop_assert_eq!(set(sample.clone()).len(), sample.len());
        }
        prop_assert!(space.contains(&space.sample(&mut rng)));
    }

    #[test]
    fn encodings_round_trip_and_decode_to_nearest_valid(p in problem(), x in prop::collection::vec(-0.2f64..1.2, 5)) {
        let Ok(space) = p.space() else { return Ok(()) };
        let feasible: Vec<Configuration> = space.iter().collect();
        for encoding in [Encoding::Normalized, Encoding::EpsSpaced] {
            let enc = space.encoder(encoding);
            for c in &feasible {
                let e = enc.encode(c);
                for (v, (lo, hi)) in e.iter().zip(enc.bounds()) {
                    prop_assert!(*lo <= *v && *v <= *hi);
                }
                prop_assert_eq!(&enc.decode(&e), c);
                prop_assert_eq!(&enc.decode_valid(&space, &e), c);
            }
            let x = &x[..space.dims()];
            let got = enc.decode_valid(&space, x);
            prop_assert!(space.contains(&got));
            let dist = |c: &[u32]| -> f64 {
                enc.encode(c).iter().zip(x).map(|(a, b)| (a - b) * (a - b)).sum()
            };
            let best = feasible.iter().map(|f| dist(f)).fold(f64::INFINITY, f64::min);
            prop_assert!((dist(&got) - best).abs() < 1e-12);
        }
    }
}

fn seeded(seed: u64) -> Xoshiro256PlusPlus {
    Xoshiro256PlusPlus::seed_from_u64(seed)
}

/// A space of three groups with uneven group sizes, so that a biased sampler (choosing
/// children uniformly in a tree) would be caught.
fn uneven_space() -> SearchSpace {
    SearchSpace::with_constraints(
        vec![
            Parameter::integer("a", [1, 2, 3, 4]).unwrap(),
            Parameter::integer("b", [1, 2, 3, 4]).unwrap(),
            Parameter::integer("c", [0, 1, 2]).unwrap(),
        ],
        vec![Constraint::from_fn("a <= b", vec![0, 1], |v| {
            v[0].le_int(&v[1])
        })],
        Interner::default(),
    )
    .unwrap()
}

trait LeInt {
    fn le_int(&self, other: &Scalar) -> bool;
}
impl LeInt for Scalar {
    fn le_int(&self, other: &Scalar) -> bool {
        matches!((self, other), (Scalar::Int(a), Scalar::Int(b)) if a <= b)
    }
}

#[test]
fn uniform_sampling_passes_a_chi_square_test() {
    let space = uneven_space();
    assert_eq!(space.size(), 10 * 3);
    let mut rng = seeded(7);
    let draws = 60_000;
    let mut counts = vec![0u64; space.size() as usize];
    for _ in 0..draws {
        let c = space.sample(&mut rng);
        counts[space.rank(&c).unwrap() as usize] += 1;
    }
    let expected = draws as f64 / counts.len() as f64;
    let chi2: f64 = counts
        .iter()
        .map(|&o| (o as f64 - expected).powi(2) / expected)
        .sum();
    // 29 degrees of freedom: the 99.9th percentile is 58.3.
    assert!(chi2 < 58.3, "chi-square {chi2} for counts {counts:?}");

    // Without replacement: every rank once per full pass, and first draws uniform too.
    let mut first = vec![0u64; space.size() as usize];
    for s in 0..6_000u64 {
        let ranks = space.sample_distinct_ranks(space.size() as usize, &mut seeded(s));
        assert_eq!(ranks.iter().collect::<BTreeSet<_>>().len(), ranks.len());
        first[ranks[0] as usize] += 1;
    }
    let expected = 6_000.0 / first.len() as f64;
    let chi2: f64 = first
        .iter()
        .map(|&o| (o as f64 - expected).powi(2) / expected)
        .sum();
    assert!(chi2 < 58.3, "chi-square {chi2} for first draws {first:?}");
}

#[test]
fn random_neighbours_are_uniform_over_the_valid_ones() {
    // A constrained space in which some Hamming and strictly-adjacent draws are rejected.
    let space = SearchSpace::new(
        vec![
            Parameter::integer("a", [1, 2, 3, 4, 5]).unwrap(),
            Parameter::integer("b", [1, 2, 3, 4]).unwrap(),
            Parameter::integer("c", [1, 2]).unwrap(),
        ],
        &["a * b <= 10", "a + c != 4"],
    )
    .unwrap();
    let mut rng = seeded(9);
    let from = vec![1, 1, 0]; // a = 2, b = 2, c = 1
    assert!(space.contains(&from));
    for kind in [Neighbourhood::Hamming, Neighbourhood::StrictlyAdjacent] {
        let all = space.neighbours(&from, kind);
        assert!(all.len() >= 4, "{kind:?}: {all:?}");
        let mut counts = vec![0usize; all.len()];
        let draws = 2000 * all.len();
        for _ in 0..draws {
            let n = space.random_neighbour(&from, kind, &mut rng).unwrap();
            counts[all.iter().position(|a| *a == n).unwrap()] += 1;
        }
        // Every neighbour within 15% of its expected share (2000 draws each: sd about 2%).
        for (n, &k) in all.iter().zip(&counts) {
            assert!((1700..=2300).contains(&k), "{kind:?} {n:?}: {k} of {draws}");
        }
    }
}

#[test]
fn distinct_sampler_skips_excluded_ranks_and_ends() {
    let mut s = DistinctSampler::new(10);
    for r in [0, 3, 9, 3, 42] {
        s.exclude(r);
    }
    assert_eq!(s.available(), 7);
    let mut rng = seeded(1);
    let got: BTreeSet<u64> = std::iter::from_fn(|| s.next_rank(&mut rng)).collect();
    assert_eq!(got, [1, 2, 4, 5, 6, 7, 8].into_iter().collect());
    assert_eq!(s.next_rank(&mut rng), None);
}

#[test]
fn weighted_draws_follow_the_weights_and_skip_used_ranks() {
    // Ranks 0-9 weigh 1, ranks 10-99 weigh 1/9: the light ones together weigh 10, so the
    // first draw is a heavy one half of the time.
    let weight = |r: u64| if r < 10 { 1.0 } else { 1.0 / 9.0 };
    let mut rng = seeded(7);
    let draws = 4000;
    let heavy = (0..draws)
        .filter(|_| {
            let mut s = DistinctSampler::new(100);
            s.next_rank_weighted(&mut rng, 1000, weight).unwrap() < 10
        })
        .count();
    assert!((1800..=2200).contains(&heavy), "{heavy} of {draws}");

    // Without replacement, excluded ranks never come back, and the sampler ends.
    let mut s = DistinctSampler::new(20);
    s.exclude(4);
    let got: Vec<u64> =
        std::iter::from_fn(|| s.next_rank_weighted(&mut rng, 50, |r| (r % 3) as f64 / 2.0))
            .collect();
    assert_eq!(got.len(), 19);
    assert!(!got.contains(&4));
    assert_eq!(got.iter().collect::<BTreeSet<_>>().len(), 19);
    // Weight 0 everywhere: the tries run out and a rank is taken anyway.
    let mut s = DistinctSampler::new(5);
    assert!(s.next_rank_weighted(&mut rng, 3, |_| 0.0).is_some());
}

#[test]
fn sampling_is_deterministic_per_seed() {
    let space = uneven_space();
    let a = space.latin_hypercube(8, &mut seeded(3));
    let b = space.latin_hypercube(8, &mut seeded(3));
    let c = space.latin_hypercube(8, &mut seeded(4));
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn latin_hypercube_covers_every_stratum_when_unconstrained() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer_range("x", 0, 9, 1).unwrap(),
            Parameter::integer_range("y", 0, 9, 1).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let s = space.latin_hypercube(10, &mut seeded(5));
    for d in 0..2 {
        let used: BTreeSet<u32> = s.iter().map(|c| c[d]).collect();
        assert_eq!(used.len(), 10, "dimension {d} strata {s:?}");
    }
}

/// Weighted strata: a value weighing half of the total gets half of the sample (to within
/// one point), values of no weight none; an unweighted parameter is stratified as before.
#[test]
fn weighted_latin_hypercube_gives_each_value_its_share() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer("block", [16, 32, 48, 64]).unwrap(),
            Parameter::integer_range("y", 0, 9, 1).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let weights = vec![Some(vec![1.0, 0.0, 0.0, 1.0]), None];
    for seed in 0..20 {
        let s = space.latin_hypercube_weighted(10, &weights, &mut seeded(seed));
        assert_eq!(s.len(), 10);
        let count = |v: u32| s.iter().filter(|c| c[0] == v).count();
        assert_eq!(
            (count(0), count(1), count(2), count(3)),
            (5, 0, 0, 5),
            "{s:?}"
        );
        let ys: BTreeSet<u32> = s.iter().map(|c| c[1]).collect();
        assert_eq!(ys.len(), 10, "the unweighted parameter's strata {s:?}");
    }
    // No weights at all: the plain Latin hypercube, draw for draw.
    assert_eq!(
        space.latin_hypercube_weighted(7, &[None, None], &mut seeded(1)),
        space.latin_hypercube(7, &mut seeded(1))
    );
}

#[test]
fn eps_spaced_encoding_matches_kernel_tuner() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer("a", [1, 2, 4, 8]).unwrap(),
            Parameter::integer("b", [0, 1]).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let enc = space.encoder(Encoding::EpsSpaced);
    // eps = 1/4; value i -> (i + 0.5) * eps; bounds [0, m * eps].
    assert_eq!(enc.encode(&[3, 1]), vec![0.875, 0.375]);
    assert_eq!(enc.bounds(), &[(0.0, 1.0), (0.0, 0.5)]);
    assert_eq!(enc.decode(&[0.3, 0.49]), vec![1, 1]);
}

#[test]
fn log_scale_parameters_encode_by_log_value() {
    let p = Parameter::integer("t", [1, 2, 4, 1024])
        .unwrap()
        .with_log_scale(true)
        .unwrap();
    let space = SearchSpace::new(vec![p], &[] as &[&str]).unwrap();
    let enc = space.encoder(Encoding::Normalized);
    assert!((enc.encode(&[2])[0] - 0.2).abs() < 1e-12);
    assert_eq!(enc.decode(&[0.65]), vec![3]);
    assert_eq!(enc.decode(&[0.5]), vec![2]);
}

#[test]
fn a_huge_factored_space_costs_only_its_groups() {
    // 20 parameters of 10 values, linked in pairs: Cartesian 1e20, feasible 55^10 ≈ 2.5e17.
    let params: Vec<Parameter> = (0..20)
        .map(|i| Parameter::integer_range(format!("p{i}"), 0, 9, 1).unwrap())
        .collect();
    let constraints: Vec<Constraint> = (0..10)
        .map(|i| {
            Constraint::from_fn("a <= b", vec![2 * i, 2 * i + 1], move |v| {
                v[2 * i].le_int(&v[2 * i + 1])
            })
        })
        .collect();
    let space = SearchSpace::with_constraints(params, constraints, Interner::default()).unwrap();
    assert_eq!(space.size(), 55u64.pow(10));
    assert_eq!(space.groups().len(), 10);
    assert!(
        space.memory_bytes() < 100_000,
        "{} bytes",
        space.memory_bytes()
    );
    let mut rng = seeded(11);
    let c = space.sample(&mut rng);
    assert!(space.satisfies_constraints(&c));
    let r = space.rank(&c).unwrap();
    assert_eq!(space.configuration(r), c);
    assert_eq!(space.configuration(space.size() - 1), vec![9; 20]);
}

#[test]
fn empty_space_names_the_strongest_constraint() {
    let params = vec![
        Parameter::integer("a", [1, 2]).unwrap(),
        Parameter::integer("b", [1, 2]).unwrap(),
    ];
    let never = Constraint::from_fn("never", vec![0, 1], |_| false);
    let half = Constraint::from_fn("a == 1", vec![0], |v| v[0] == Scalar::Int(1));
    let err =
        SearchSpace::with_constraints(params, vec![half, never], Interner::default()).unwrap_err();
    match err {
        SpaceError::EmptySpace {
            culprit,
            rejected,
            cartesian,
        } => {
            assert_eq!(culprit, "never");
            assert_eq!(rejected, 1.0);
            assert_eq!(cartesian, "4");
        }
        other => panic!("unexpected {other}"),
    }
}

#[test]
fn duplicate_parameters_are_rejected() {
    let params = vec![
        Parameter::integer("a", [1]).unwrap(),
        Parameter::integer("a", [2]).unwrap(),
    ];
    assert!(matches!(
        SearchSpace::new(params, &[] as &[&str]),
        Err(SpaceError::DuplicateParameter { .. })
    ));
}

#[test]
fn from_configurations_keeps_exactly_the_listed_ones() {
    let params = vec![
        Parameter::integer("a", [1, 2, 3]).unwrap(),
        Parameter::categorical("b", ["x", "y"]).unwrap(),
    ];
    let space =
        SearchSpace::from_configurations(params, &[vec![2, 1], vec![0, 0], vec![2, 1]]).unwrap();
    assert_eq!(space.size(), 2);
    assert!(space.contains(&[2, 1]));
    assert!(!space.contains(&[1, 1]));
    assert_eq!(space.describe(&[2, 1]), "a=3, b=y");
}

/// Random constraint expressions over `p0..p{n-1}` (integer parameters).
fn expression(n: usize) -> impl Strategy<Value = String> {
    let var = (0..n).prop_map(|i| format!("p{i}"));
    let term = prop_oneof![var.clone(), (-3i64..8).prop_map(|c| c.to_string())];
    let arith = (
        term.clone(),
        prop::sample::select(vec!["+", "-", "*", "/", "//", "%"]),
        term,
    )
        .prop_map(|(a, op, b)| format!("({a} {op} {b})"));
    let cmp = (
        arith.clone(),
        prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]),
        arith.clone(),
    )
        .prop_map(|(a, op, b)| format!("{a} {op} {b}"));
    let chained = (-5i64..5, var.clone(), 0i64..12)
        .prop_map(|(lo, v, hi)| format!("{lo} <= {v} * 2 <= {hi}"));
    let member = (var, prop::collection::vec(-2i64..10, 1..4)).prop_map(|(v, l)| {
        format!(
            "{v} in [{}]",
            l.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        )
    });
    let atom = prop_oneof![4 => cmp, 1 => chained, 1 => member];
    (
        atom.clone(),
        prop::sample::select(vec!["and", "or", ""]),
        atom,
    )
        .prop_map(|(a, op, b)| {
            if op.is_empty() {
                a
            } else {
                format!("({a}) {op} not ({b})")
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn expression_constraints_equal_the_brute_force_filter(
        (domains, exprs) in (1usize..=4).prop_flat_map(|n| (
            prop::collection::vec(prop::collection::btree_set(-4i64..10, 1..=4), n),
            prop::collection::vec(expression(n), 0..=3),
        ))
    ) {
        let p = Problem { domains: domains.into_iter().map(|d| d.into_iter().collect()).collect(), relations: vec![] };
        let params = p.params();
        let brute: Vec<Configuration> = p
            .cartesian()
            .into_iter()
            .filter(|c| {
                let mut interner = Interner::default();
                let symbols = constraint_symbols(&params);
                let values: Vec<Scalar> = c.iter().enumerate().map(|(i, &v)| Scalar::Int(p.domains[i][v as usize])).collect();
                exprs.iter().all(|e| Constraint::compile(e, &symbols, &mut interner).unwrap().is_satisfied(&values))
            })
            .collect();
        match SearchSpace::new(params.clone(), &exprs) {
            Err(SpaceError::EmptySpace { .. }) => prop_assert!(brute.is_empty()),
            Err(e) => prop_assert!(false, "{e}"),
            Ok(space) => {
                prop_assert_eq!(set(space.iter().collect()), set(brute));
                let (compiled, interner) = {
                    let mut interner = Interner::default();
                    let symbols = constraint_symbols(&params);
                    (exprs.iter().map(|e| Constraint::compile(e, &symbols, &mut interner).unwrap()).collect::<Vec<_>>(), interner)
                };
                let plain = SearchSpace::build(params, compiled, interner, 0, f64::INFINITY, &BuildProgress::new()).unwrap();
                prop_assert_eq!(plain.iter().collect::<Vec<_>>(), space.iter().collect::<Vec<_>>());
            }
        }
    }
}

#[test]
fn division_by_zero_makes_a_configuration_infeasible() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer("x", [4, 6]).unwrap(),
            Parameter::integer("y", [0, 2, 3]).unwrap(),
            Parameter::categorical("mode", ["a", "b"]).unwrap(),
        ],
        &["x % y == 0", "x / y >= 2 or mode in ['b']"],
    )
    .unwrap();
    // y = 0 is never feasible; (4,2), (6,2), (6,3) divide; x / y >= 2 holds for all three.
    assert_eq!(space.size(), 3 * 2);
    assert!(space.iter().all(|c| c[1] != 0));
}

#[test]
fn expressions_over_the_parameters_evaluate_on_configurations() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer("bx", [16, 32]).unwrap(),
            Parameter::real("scale", [0.5, 2.0]).unwrap(),
            Parameter::categorical("layout", ["row", "col"]).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let config = space
        .configuration_of(&[Value::Int(32), Value::Real(2.0), Value::Str("col".into())])
        .unwrap();
    let e = space
        .expression("bx * 4 if layout == 'col' else bx")
        .unwrap();
    assert_eq!(e.evaluate(&space.scalars(&config)), Ok(Scalar::Int(128)));
    let f = space.expression("bx * scale").unwrap();
    assert_eq!(f.evaluate(&space.scalars(&config)), Ok(Scalar::Real(64.0)));
    let err = space.expression("bx * tile").unwrap_err();
    assert!(
        err.render("bx * tile").contains("tile"),
        "{}",
        err.render("bx * tile")
    );
}

#[test]
fn constraints_read_permutations_by_item_and_position() {
    let space = SearchSpace::new(
        vec![
            Parameter::permutation("order", ["i", "j", "k"]).unwrap(),
            Parameter::integer("x", [1, 2]).unwrap(),
        ],
        &[
            "order.index('i') < order.index('k')",
            "order[0] == 'j' or x == 2",
        ],
    )
    .unwrap();
    // Orderings with i before k: [i, j, k], [i, k, j], [j, i, k]. With x = 1 only the one
    // starting with j remains; with x = 2 all three.
    assert_eq!(space.size(), 4);
    let kept: Vec<String> = (0..space.size())
        .map(|r| space.describe(&space.configuration(r)))
        .collect();
    for c in &kept {
        assert!(
            c.contains("x=2") || c.contains("order=[j, i, k]"),
            "{kept:?}"
        );
    }
    // The permutation and x are linked by the second constraint: one group.
    assert_eq!(space.groups().len(), 1);
}

/// Knuth's estimate is exact on a tree of uniform branching: 6 parameters of 10 values linked
/// by one constraint checked at the last depth make 10 + 100 + ... + 10^6 checks.
#[test]
fn a_group_that_would_take_too_long_is_refused_before_it_starts() {
    let params: Vec<Parameter> = (0..6)
        .map(|i| Parameter::integer_range(format!("p{i}"), 1, 10, 1).unwrap())
        .collect();
    // A remainder has no interval bounds: nothing is pruned before the last parameter, so
    // the estimate is exactly the unpruned tree.
    let sum = "(p0 + p1 + p2 + p3 + p4 + p5) % 7 != 3";
    let build = |limit: f64| {
        let mut interner = Interner::default();
        let symbols = constraint_symbols(&params);
        let c = Constraint::compile(sum, &symbols, &mut interner).unwrap();
        SearchSpace::with_constraints_limited(params.clone(), vec![c], interner, limit)
    };
    let exact = 1_111_110.0;
    match build(exact - 1.0) {
        Err(SpaceError::TooMuchWork {
            params: names,
            cartesian,
            estimate,
            ..
        }) => {
            assert_eq!(names, ["p0", "p1", "p2", "p3", "p4", "p5"]);
            assert_eq!(cartesian, "1000000");
            assert!((estimate - exact).abs() < 1e-6 * exact, "{estimate}");
        }
        other => panic!("{:?}", other.map(|s| s.size())),
    }
    let e = build(1000.0).err().unwrap().to_string();
    assert!(
        e.contains("{p0, p1, p2, p3, p4, p5}") && e.contains("--max-enumeration"),
        "{e}"
    );
    // With the limit raised it builds.
    assert!(build(exact + 1.0).unwrap().size() > 0);
}

fn linked(params: usize, values: i64) -> Vec<Parameter> {
    (0..params)
        .map(|i| Parameter::integer(format!("p{i}"), 0..values).unwrap())
        .collect()
}

#[test]
fn a_build_reports_its_progress_to_the_end() {
    let progress = BuildProgress::new();
    assert_eq!(progress.fraction(), 0.0);
    // Two groups: a large linked one (split into subtrees) and a free parameter.
    let mut params = linked(4, 20);
    params.push(Parameter::integer("free", [1, 2]).unwrap());
    let space = SearchSpace::new_observed(
        params,
        &["p0 + p1 + p2 + p3 < 60"],
        DEFAULT_MAX_CHECKS,
        &progress,
    )
    .unwrap();
    assert!(space.size() > 0);
    assert_eq!(progress.fraction(), 1.0);
}

#[test]
fn a_cancelled_build_stops_with_interrupted() {
    // Cancelled before it starts.
    let progress = BuildProgress::new();
    progress.cancel();
    let e = SearchSpace::new_observed(linked(3, 10), &["p0 < p1"], DEFAULT_MAX_CHECKS, &progress)
        .unwrap_err();
    assert!(matches!(e, SpaceError::Interrupted), "{e}");
    // Cancelled from another thread in the middle of a group that needs about 10^9 checks
    // (minutes on one core): it stops at the next subtree instead.
    let progress = BuildProgress::new();
    let e = std::thread::scope(|s| {
        let build = s.spawn(|| {
            SearchSpace::new_observed(
                linked(9, 10),
                &["(p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8) % 1000 == 999"],
                f64::INFINITY,
                &progress,
            )
        });
        while progress.fraction() == 0.0 && !build.is_finished() {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        progress.cancel();
        build.join().unwrap()
    })
    .unwrap_err();
    assert!(matches!(e, SpaceError::Interrupted), "{e}");
}

#[test]
fn interval_bounds_prune_partial_assignments() {
    // Nine parameters of ten values whose sum must be 81: only all nines. Unpruned, the
    // enumeration checks about 10^9 leaves; bounded, a branch whose sum can no longer reach
    // 81 is cut where it starts, so the estimate stays under a limit of a million checks.
    let params = linked(9, 10);
    let names: Vec<String> = (0..9).map(|i| format!("p{i}")).collect();
    let sum = format!("{} == 81", names.join(" + "));
    let mut interner = Interner::default();
    let symbols = constraint_symbols(&params);
    let c = Constraint::compile(&sum, &symbols, &mut interner).unwrap();
    let space =
        SearchSpace::with_constraints_limited(params.clone(), vec![c], interner, 1e6).unwrap();
    assert_eq!(space.size(), 1);
    assert_eq!(space.configuration(0), vec![9; 9]);
    // The same relation as a closure has no bounds: refused under the same limit.
    let f = Constraint::from_fn("sum is 81", (0..9).collect(), |v| {
        v.iter()
            .map(|s| if let Scalar::Int(i) = s { *i } else { 0 })
            .sum::<i64>()
            == 81
    });
    assert!(matches!(
        SearchSpace::with_constraints_limited(params, vec![f], Interner::default(), 1e6),
        Err(SpaceError::TooMuchWork { .. })
    ));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Interval pruning is sound with real and boolean parameters too: the space equals the
    /// brute-force filter of the same constraints.
    #[test]
    fn bounds_never_remove_a_feasible_configuration(
        xs in prop::collection::btree_set(-20i64..20, 1..5),
        ys in prop::collection::btree_set(-20i64..20, 1..5),
        k in -30i64..30,
        ops in prop::collection::vec(prop::sample::select(vec!["+", "-", "*", "/"]), 2),
        cmp in prop::sample::select(vec!["<", "<=", "==", "!=", ">", ">="]),
    ) {
        let params = vec![
            Parameter::real("x", xs.iter().map(|&v| v as f64 / 4.0)).unwrap(),
            Parameter::integer("y", ys.iter().copied()).unwrap(),
            Parameter::boolean("b").unwrap(),
        ];
        let expr = format!("(x {} y) {} b {cmp} {k} / 3", ops[0], ops[1]);
        let symbols = constraint_symbols(&params);
        let mut interner = Interner::default();
        let c = Constraint::compile(&expr, &symbols, &mut interner).unwrap();
        let mut brute = BTreeSet::new();
        for (i, &x) in xs.iter().enumerate() {
            for (j, &y) in ys.iter().enumerate() {
                for (l, b) in [false, true].into_iter().enumerate() {
                    let v = [Scalar::Real(x as f64 / 4.0), Scalar::Int(y), Scalar::Bool(b)];
                    if c.is_satisfied(&v) {
                        brute.insert(vec![i as u32, j as u32, l as u32]);
                    }
                }
            }
        }
        match SearchSpace::new(params, &[expr.as_str()]) {
            Err(SpaceError::EmptySpace { .. }) => prop_assert!(brute.is_empty()),
            Err(e) => prop_assert!(false, "{e}"),
            Ok(space) => prop_assert_eq!(set(space.iter().collect()), brute, "{}", expr),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, ..ProptestConfig::default() })]

    /// Constraints that compare the positions of a permutation's items with each other and
    /// with numeric parameters are bounded during the enumeration (`order.index(k)`); the
    /// space is still exactly the brute-force filter of the Cartesian product.
    #[test]
    fn position_constraints_equal_the_brute_force_filter(
        templates in prop::collection::vec(
            (0usize..5, 0u32..4, 0u32..4, 0i64..4, prop::sample::select(vec!["<", "<=", "==", "!=", ">"])),
            1..=3,
        )
    ) {
        let params = vec![
            Parameter::integer("x", [0, 1, 2, 3]).unwrap(),
            Parameter::permutation("order", [0, 1, 2, 3].map(|i: i32| i.to_string())).unwrap(),
            Parameter::integer("y", [-1, 2, 5]).unwrap(),
        ];
        let exprs: Vec<String> = templates
            .iter()
            .map(|&(form, a, b, c, op)| match form {
                0 => format!("order.index({a}) {op} order.index({b})"),
                1 => format!("order.index({a}) {op} x"),
                2 => format!("order.index({a}) + x {op} y + {c}"),
                3 => format!("order.index({a}) {op} order.index({b}) or y > {c}"),
                _ => format!("x * order.index('{a}') {op} {c} * y"),
            })
            .collect();
        let mut interner = Interner::default();
        let symbols = constraint_symbols(&params);
        let compiled: Vec<Constraint> = exprs
            .iter()
            .map(|e| Constraint::compile(e, &symbols, &mut interner).unwrap())
            .collect();
        let scalars: Vec<Vec<Scalar>> = params.iter().map(|p| p.scalars(&mut interner)).collect();
        let mut brute = Vec::new();
        for i in 0..4u32 {
            for j in 0..scalars[1].len() as u32 {
                for k in 0..3u32 {
                    let values = [scalars[0][i as usize], scalars[1][j as usize], scalars[2][k as usize]];
                    if compiled.iter().all(|c| c.is_satisfied(&values)) {
                        brute.push(vec![i, j, k]);
                    }
                }
            }
        }
        match SearchSpace::new(params, &exprs) {
            Err(SpaceError::EmptySpace { .. }) => prop_assert!(brute.is_empty()),
            Err(e) => prop_assert!(false, "{e}"),
            Ok(space) => prop_assert_eq!(set(space.iter().collect()), set(brute)),
        }
    }
}
