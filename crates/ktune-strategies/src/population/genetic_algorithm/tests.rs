//! Tests of `genetic_algorithm`.

use std::collections::BTreeSet;

use ktune_core::testing::{configs, failures, integers, space_of};
use ktune_core::{Budget, FailureKind, Tuner, TuningRun};
use ktune_space::Parameter;
use rand::SeedableRng;

use super::*;

fn rng(seed: u64) -> Rng {
    Rng::seed_from_u64(seed)
}

use crate::testkit::{bowl, sparse_space};

fn strategy(options: serde_json::Value) -> Result<Box<dyn Strategy + Send>, crate::StrategyError> {
    crate::registry::check::<GeneticAlgorithmOptions>(options.as_object().unwrap())
        .map(|f| f.build())
}

fn run(options: serde_json::Value, seed: u64, budget: usize) -> TuningRun {
    let space = sparse_space();
    let mut runner = bowl();
    let mut s = strategy(options).unwrap();
    Tuner::new(&space, &mut runner, Budget::evaluations(budget))
        .run(s.as_mut(), &mut rng(seed))
        .unwrap()
}

#[test]
fn single_point_takes_a_prefix_from_one_parent_and_the_rest_from_the_other() {
    let (a, b) = (vec![0u32; 6], vec![1u32; 6]);
    let mut cuts = BTreeSet::new();
    let mut r = rng(1);
    for _ in 0..500 {
        let (c1, c2) = crossover(Crossover::SinglePoint, &a, &b, &mut r);
        let cut = c1.iter().position(|&g| g == 1).expect("a gene of b");
        assert!((1..6).contains(&cut), "{c1:?}");
        assert!(c1[..cut].iter().all(|&g| g == 0) && c1[cut..].iter().all(|&g| g == 1));
        assert!(c1.iter().zip(&c2).all(|(x, y)| x + y == 1), "complementary");
        cuts.insert(cut);
    }
    assert_eq!(cuts.len(), 5, "every inner cut occurs");
    // One parameter: nothing to cut.
    assert_eq!(
        crossover(Crossover::SinglePoint, &[3], &[4], &mut r),
        (vec![3], vec![4])
    );
}

#[test]
fn two_point_swaps_the_genes_between_two_cuts() {
    let (a, b) = (vec![0u32; 6], vec![1u32; 6]);
    let mut segments = BTreeSet::new();
    let mut r = rng(2);
    for _ in 0..2000 {
        let (c1, c2) = crossover(Crossover::TwoPoint, &a, &b, &mut r);
        let lo = c1.iter().position(|&g| g == 1).expect("a gene of b");
        let hi = lo + c1[lo..].iter().take_while(|&&g| g == 1).count();
        assert!(
            lo >= 1 && hi <= 5,
            "both ends stay with the first parent: {c1:?}"
        );
        assert!(c1[hi..].iter().all(|&g| g == 0), "one segment: {c1:?}");
        assert!(c1.iter().zip(&c2).all(|(x, y)| x + y == 1));
        segments.insert((lo, hi));
    }
    assert_eq!(segments.len(), 10, "every pair of inner cuts occurs");
}

#[test]
fn uniform_takes_each_gene_from_either_parent_with_equal_chance() {
    let (a, b) = (vec![0u32; 8], vec![1u32; 8]);
    let mut from_b = [0usize; 8];
    let mut r = rng(3);
    for _ in 0..4000 {
        let (c1, c2) = crossover(Crossover::Uniform, &a, &b, &mut r);
        assert!(c1.iter().zip(&c2).all(|(x, y)| x + y == 1));
        for (i, &g) in c1.iter().enumerate() {
            from_b[i] += g as usize;
        }
    }
    for n in from_b {
        assert!((1800..2200).contains(&n), "{from_b:?}");
    }
}

#[test]
fn disruptive_uniform_swaps_half_of_the_differing_genes() {
    let a = vec![0, 5, 2, 7, 4, 9, 6];
    let b = vec![1, 5, 3, 7, 5, 9, 8];
    let differ = [0usize, 2, 4, 6];
    let mut r = rng(4);
    let mut swapped = [0usize; 7];
    for _ in 0..2000 {
        let (c1, c2) = crossover(Crossover::DisruptiveUniform, &a, &b, &mut r);
        assert!(c1 != a && c1 != b && c2 != a && c2 != b);
        let from_b: Vec<usize> = (0..7).filter(|&i| c1[i] == b[i] && a[i] != b[i]).collect();
        assert_eq!(from_b.len(), 2, "ceil(4 / 2) genes swapped: {c1:?}");
        for i in 0..7 {
            assert_eq!(c2[i], if c1[i] == a[i] { b[i] } else { a[i] });
            if c1[i] != a[i] {
                swapped[i] += 1;
            }
        }
    }
    for i in 0..7 {
        if differ.contains(&i) {
            assert!((850..1150).contains(&swapped[i]), "{swapped:?}");
        } else {
            assert_eq!(swapped[i], 0);
        }
    }
    // An odd number of differences rounds up.
    let (c1, _) = crossover(Crossover::DisruptiveUniform, &[0, 0, 0], &[1, 1, 1], &mut r);
    assert_eq!(c1.iter().sum::<u32>(), 2);
}

#[test]
fn beta_selection_favours_better_ranks() {
    let mut r = rng(5);
    let (len, draws) = (20usize, 200_000usize);
    let mut counts = vec![0usize; len];
    for _ in 0..draws {
        counts[select_rank(len, 1.0, 2.5, &mut r)] += 1;
    }
    // P(rank = k) = (1 - k/20)^2.5 - (1 - (k+1)/20)^2.5 for Beta(1, 2.5).
    for (k, &c) in counts.iter().enumerate() {
        let p = (1.0 - k as f64 / 20.0).powf(2.5) - (1.0 - (k + 1) as f64 / 20.0).powf(2.5);
        let f = c as f64 / draws as f64;
        assert!((f - p).abs() < 0.004, "rank {k}: {f} vs {p}");
    }
    assert!(counts.windows(2).all(|w| w[0] > w[1]), "{counts:?}");
    assert!(counts[0] > 8 * counts[15], "{counts:?}");

    // The gamma path: Beta(2, 5) has mean 2/7 and variance 10/392.
    let xs: Vec<f64> = (0..100_000)
        .map(|_| beta_variate(2.0, 5.0, &mut r))
        .collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / xs.len() as f64;
    assert!((mean - 2.0 / 7.0).abs() < 0.003, "{mean}");
    assert!((var - 10.0 / 392.0).abs() < 0.001, "{var}");
    // Shapes below one, and in range.
    let xs: Vec<f64> = (0..100_000)
        .map(|_| beta_variate(0.5, 0.5, &mut r))
        .collect();
    assert!(xs.iter().all(|x| (0.0..=1.0).contains(x)));
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    assert!((mean - 0.5).abs() < 0.005, "{mean}");

    // Parents are distinct positions.
    for _ in 0..1000 {
        let (i, j) = select_parents(3, 1.0, 2.5, &mut r);
        assert!(i != j && i < 3 && j < 3);
    }
    assert_eq!(select_parents(1, 1.0, 2.5, &mut r), (0, 0));
}

#[test]
fn repair_then_mutation_keeps_children_valid() {
    let space = sparse_space();
    let ga = GeneticAlgorithm::checked(GeneticAlgorithmOptions {
        mutation_chance: 1,
        ..GeneticAlgorithmOptions::default()
    });
    let mut r = rng(6);
    let parents = space.sample_distinct(30, &mut r);
    let (mut invalid, mut changed) = (0, 0);
    for k in 0..2000 {
        let (a, b) = (&parents[k % 30], &parents[(k * 7 + 1) % 30]);
        let (c1, _) = crossover(Crossover::Uniform, a, b, &mut r);
        invalid += usize::from(!space.contains(&c1));
        let child = ga.finish_child(c1.clone(), &space, &mut r);
        assert!(space.contains(&child), "{c1:?} -> {child:?}");
        changed += usize::from(child != c1);
    }
    assert!(
        invalid > 200,
        "crossover should often break the constraints: {invalid}"
    );
    assert!(
        changed > 1500,
        "mutation_chance = 1 always mutates: {changed}"
    );
    // A valid child's mutation is a valid Hamming neighbour.
    for p in &parents {
        let m = mutate(p.clone(), &space, true, &mut r);
        assert!(space.contains(&m));
        assert_eq!(m.iter().zip(p).filter(|(x, y)| x != y).count(), 1);
    }
}

#[test]
fn unaware_mutation_changes_exactly_one_value() {
    let space = space_of(
        vec![
            Parameter::integer("fixed", [1]).unwrap(),
            integers("x", 0, 9),
            Parameter::integer("y", [1, 2]).unwrap(),
        ],
        &["x != 3"],
    );
    let mut r = rng(7);
    for _ in 0..500 {
        let c = vec![0, r.random_range(0..10), r.random_range(0..2)];
        let m = mutate(c.clone(), &space, false, &mut r);
        assert_eq!(m[0], 0);
        assert_eq!(m.iter().zip(&c).filter(|(x, y)| x != y).count(), 1);
        assert!(space.is_in_bounds(&m));
    }
}

#[test]
fn constraint_aware_runs_are_valid_unique_and_deterministic() {
    for method in ["single_point", "two_point", "uniform", "disruptive_uniform"] {
        let o = serde_json::json!({ "method": method });
        let a = run(o.clone(), 1, 150);
        assert_eq!(a.records.len(), 150, "{method}");
        for r in &a.records {
            assert!(sparse_space().contains(&r.config), "{method}");
            assert_ne!(r.outcome.failure(), Some(FailureKind::Invalid));
        }
        let c = configs(&a);
        assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), c.len(), "{method}");
        assert_eq!(
            c,
            configs(&run(o.clone(), 1, 150)),
            "{method} is not deterministic"
        );
        assert_ne!(c, configs(&run(o, 2, 150)), "{method}: seeds should differ");
    }
}

#[test]
fn unaware_variant_proposes_invalid_configurations() {
    let o = serde_json::json!({ "constraint_aware": false });
    let a = run(o.clone(), 1, 200);
    assert_eq!(a.records.len(), 200);
    let invalid = failures(&a, FailureKind::Invalid);
    assert!(invalid > 20, "{invalid}");
    assert!(a.best().is_some());
    let c = configs(&a);
    assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), c.len());
    assert_eq!(c, configs(&run(o, 1, 200)));
}

#[test]
fn exhausts_small_spaces_without_stalling() {
    let size = sparse_space().size() as usize;
    for o in [
        serde_json::json!({}),
        serde_json::json!({ "maxiter": 1 }),
        serde_json::json!({ "popsize": 2, "mutation_chance": 1000 }),
        serde_json::json!({ "popsize": 1000 }),
        serde_json::json!({ "constraint_aware": false }),
        serde_json::json!({ "method": "disruptive_uniform", "selection_beta": 100.0 }),
    ] {
        let a = run(o.clone(), 3, 3 * size + 3200);
        let valid = a
            .records
            .iter()
            .filter(|r| sparse_space().contains(&r.config))
            .count();
        assert_eq!(valid, size, "{o}: stopped with {:?}", a.stop);
    }
}

#[test]
fn finds_the_bowl_minimum_more_often_than_random() {
    // A larger smooth landscape: the mean best after 100 evaluations over 30 seeds.
    let space = space_of(
        vec![
            integers("x", 0, 39),
            integers("y", 0, 39),
            integers("z", 0, 9),
            integers("w", 0, 9),
        ],
        &["(x + z) % 3 != 0"],
    );
    let mean_best = |name: &str| {
        let mut total = 0.0;
        for seed in 0..30 {
            let mut runner = bowl();
            let mut s = crate::create(name, &crate::Options::new()).unwrap();
            let run = Tuner::new(&space, &mut runner, Budget::evaluations(100))
                .run(s.as_mut(), &mut rng(seed))
                .unwrap();
            total += run.best().unwrap().outcome.objective().unwrap();
        }
        total / 30.0
    };
    let (ga, random) = (mean_best("ga"), mean_best("random"));
    assert!(ga < random, "ga {ga} vs random {random}");
}

/// Strategy overhead per suggestion on a real space (run with `--ignored --nocapture`,
/// in release mode for a meaningful number).
#[test]
#[ignore = "timing; run with --release -- --ignored --nocapture"]
fn overhead_per_suggestion_on_dedispersion() {
    for file in ["dedispersion_A100", "convolution_A100"] {
        let path = crate::testkit::shared_space(file);
        let sim = ktune_runners::Simulation::open(&path, None, None).unwrap();
        for (o, budget) in [
            (serde_json::json!({}), 500),
            (serde_json::json!({}), 3000),
            (serde_json::json!({ "constraint_aware": false }), 3000),
        ] {
            let mut s = strategy(o.clone()).unwrap();
            let run = Tuner::new(sim.space(), &mut sim.runner(), Budget::evaluations(budget))
                .run(s.as_mut(), &mut rng(1))
                .unwrap();
            println!(
                "{file} ({} configurations, {} parameters) {o}: {} evaluations, {:.1} us per suggestion",
                sim.space().size(),
                sim.space().dims(),
                run.records.len(),
                run.strategy_seconds / run.records.len() as f64 * 1e6
            );
        }
    }
}
