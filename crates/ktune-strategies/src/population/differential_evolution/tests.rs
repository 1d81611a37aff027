//! Tests of `differential_evolution`.

use super::*;
use ktune_core::testing::{FnRunner, failures, integers, space_of};
use ktune_core::{Budget, FailureKind, Tuner};
use ktune_space::Parameter;
use rand::SeedableRng;

fn opts(pairs: &[(&str, serde_json::Value)]) -> crate::Options {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn de(pairs: &[(&str, serde_json::Value)]) -> DifferentialEvolution {
    DifferentialEvolution::checked(crate::parse(NAME, &opts(pairs)).unwrap())
}

/// 40x40, mostly infeasible.
fn sparse() -> SearchSpace {
    space_of(
        vec![integers("x", 0, 39), integers("y", 0, 39)],
        &["(x * y) % 6 == 0", "x + y <= 40"],
    )
}

/// A smooth bowl over the value indices, its floor at (3, 4, 5, ...), with a band of
/// failures.
fn index_bowl() -> FnRunner<'static> {
    FnRunner::indices(|c| {
        let s: f64 = c
            .iter()
            .enumerate()
            .map(|(d, &v)| (f64::from(v) - 3.0 - d as f64).powi(2))
            .sum();
        (c.iter().sum::<u32>() % 7 != 3).then_some(s)
    })
}

fn run(
    space: &SearchSpace,
    pairs: &[(&str, serde_json::Value)],
    seed: u64,
    budget: usize,
) -> ktune_core::TuningRun {
    let mut s = de(pairs);
    let mut runner = index_bowl();
    let budget = Budget::evaluations(budget);
    Tuner::new(space, &mut runner, budget)
        .batch_size(3)
        .run(&mut s, &mut Rng::seed_from_u64(seed))
        .unwrap()
}

#[test]
fn mutation_operators_follow_their_formulas() {
    let upper = [9u32, 9, 9];
    let cur: &[u32] = &[2, 2, 2];
    let best: &[u32] = &[6, 4, 0];
    let r: [&[u32]; 5] = [&[4, 4, 4], &[6, 2, 8], &[2, 0, 4], &[3, 3, 3], &[1, 1, 1]];
    let m = |k, f| mutate(k, f, cur, best, &r, &upper);
    // r1 + F (r2 - r3) = [4 + .5*4, 4 + .5*2, 4 + .5*4]
    assert_eq!(m(Mutation::Rand1, 0.5), vec![6, 5, 6]);
    // best + F (r1 - r2) = [6 - 1, 4 + 1, 0 - 2 -> clipped to 0]
    assert_eq!(m(Mutation::Best1, 0.5), vec![5, 5, 0]);
    // r1 + F (r2 - r3) + F (r4 - r5) = [4 + 2 + 1, 4 + 1 + 1, 4 + 2 + 1]
    assert_eq!(m(Mutation::Rand2, 0.5), vec![7, 6, 7]);
    // best + F (r1 - r2) + F (r3 - r4) = [6 - 1 - .5, 4 + 1 - 1.5, 0 - 2 + .5]: 4.5 and
    // 3.5 round half to even, -1.5 is clipped.
    assert_eq!(m(Mutation::Best2, 0.5), vec![4, 4, 0]);
    // cur + F (best - cur) + F (r1 - r2) = [2 + 2 - 1, 2 + 1 + 1, 2 - 1 - 2]
    assert_eq!(m(Mutation::CurrentToBest1, 0.5), vec![3, 4, 0]);
    // r1 + F (best - r1) + F (r2 - r3) = [4 + 1 + 2, 4 + 0 + 1, 4 - 2 + 2]
    assert_eq!(m(Mutation::RandToBest1, 0.5), vec![7, 5, 4]);
    // Clipping at the top, rounding half to even (2.5 -> 2, 3.5 -> 4).
    assert_eq!(m(Mutation::Rand1, 2.0), vec![9, 8, 9]);
    let half: [&[u32]; 3] = [&[2, 3, 0], &[1, 1, 0], &[0, 0, 0]];
    assert_eq!(
        mutate(Mutation::Rand1, 0.5, cur, best, &half, &upper),
        vec![2, 4, 0]
    );
    assert_eq!(
        parse_method("randtobest1exp"),
        Some((Mutation::RandToBest1, Crossover::Exponential))
    );
    assert!(METHODS.iter().all(|m| parse_method(m).is_some()));
    assert_eq!(parse_method("best3bin"), None);
}

/// Crossover of a target of zeros with a mutant of ones over six active dimensions: the
/// ones in the trial are the coordinates taken from the mutant.
fn cross(kind: Crossover, cr: f64, rng: &mut Rng) -> Vec<u32> {
    let active: Vec<usize> = (0..6).collect();
    crossover(kind, cr, &[0; 6], &[1; 6], &active, rng)
}

#[test]
fn binomial_crossover_always_takes_j_rand_from_the_mutant() {
    let mut rng = Rng::seed_from_u64(3);
    let mut seen = [0usize; 6];
    for _ in 0..600 {
        let u = cross(Crossover::Binomial, 0.0, &mut rng);
        assert_eq!(u.iter().sum::<u32>(), 1, "exactly j_rand with CR = 0");
        seen[u.iter().position(|&v| v == 1).unwrap()] += 1;
    }
    assert!(seen.iter().all(|&s| s > 50), "{seen:?}");
    let u = cross(Crossover::Binomial, 1.0, &mut rng);
    assert_eq!(u, vec![1; 6]);
    // Inactive (single-valued) dimensions are never chosen.
    let u = crossover(Crossover::Binomial, 0.0, &[0; 6], &[1; 6], &[4], &mut rng);
    assert_eq!(u, vec![0, 0, 0, 0, 1, 0]);
    // About CR of the other coordinates come from the mutant.
    let n: u32 = (0..1000)
        .map(|_| {
            cross(Crossover::Binomial, 0.5, &mut rng)
                .iter()
                .sum::<u32>()
        })
        .sum();
    assert!((3200..3800).contains(&n), "{n}");
}

#[test]
fn exponential_crossover_copies_one_circular_run() {
    let mut rng = Rng::seed_from_u64(5);
    for _ in 0..200 {
        let u = cross(Crossover::Exponential, 0.0, &mut rng);
        assert_eq!(u.iter().sum::<u32>(), 1);
    }
    let u = cross(Crossover::Exponential, 1.0, &mut rng);
    assert_eq!(u, vec![1; 6]);
    let mut lengths = [0usize; 7];
    for _ in 0..2000 {
        let u = cross(Crossover::Exponential, 0.5, &mut rng);
        let l = u.iter().sum::<u32>() as usize;
        lengths[l] += 1;
        // One circular run: exactly one 0 -> 1 transition around the circle (or all ones).
        let rises = (0..6).filter(|&j| u[j] == 1 && u[(j + 5) % 6] == 0).count();
        assert!(rises == 1 || l == 6, "{u:?}");
    }
    // P(L = 1) = 1 - CR, P(L = 2) = CR (1 - CR), ...
    assert!(
        lengths[0] == 0 && lengths[1] > 850 && lengths[2] > 400,
        "{lengths:?}"
    );
}

#[test]
fn repair_gives_the_nearest_valid_configuration() {
    let space = sparse();
    let mut rng = Rng::seed_from_u64(1);
    let valid: Vec<Configuration> = space.iter().collect();
    for c in [[35u32, 35], [7, 7], [39, 1], [13, 13], [5, 5]] {
        let r = space.repair_nearest(&c, &mut rng);
        assert!(space.contains(&r));
        let dist = |a: &[u32]| -> u32 { a.iter().zip(&c).map(|(x, y)| x.abs_diff(*y)).sum() };
        let nearest = valid.iter().map(|v| dist(v)).min().unwrap();
        assert_eq!(dist(&r), nearest, "{c:?} -> {r:?}");
    }
    // Every trial of a generation is valid after repair.
    let mut s = de(&[]);
    s.start(&space, &mut rng);
    s.population = s
        .candidates
        .iter()
        .map(|c| Member {
            config: c.clone(),
            value: Some(1.0),
        })
        .collect();
    s.best = Some(s.population[0].clone());
    for t in s.trials(&space, &mut rng) {
        assert!(space.contains(&t), "{t:?}");
    }
}

#[test]
fn population_is_sized_by_true_dimensions_and_capped_by_the_space() {
    let space = space_of(
        vec![
            integers("a", 0, 9),
            Parameter::integer("fixed", [4]).unwrap(),
            integers("b", 0, 9),
        ],
        &[],
    );
    let mut rng = Rng::seed_from_u64(1);
    let mut s = de(&[("popsize", 3.into())]);
    s.start(&space, &mut rng);
    assert_eq!(
        (s.target, s.candidates.len(), s.active.clone()),
        (6, 6, vec![0, 2])
    );
    let mut s = de(&[("popsize", 16.into())]);
    s.start(&space, &mut rng);
    assert_eq!(s.target, 32);
    let mut s = de(&[
        ("popsize", 16.into()),
        ("popsize_times_dimensions", false.into()),
    ]);
    s.start(&space, &mut rng);
    assert_eq!(s.target, 16);
    let mut s = de(&[("popsize", 100.into())]);
    s.start(&space, &mut rng);
    assert_eq!(s.target, 100);
    let distinct: FxHashSet<_> = s.candidates.iter().collect();
    assert_eq!(distinct.len(), 100);
    let mut s = de(&[("popsize", 200.into())]);
    s.start(&space, &mut rng);
    assert_eq!(s.target, 100, "capped at the space size");
}

fn member(c: &[u32], v: Option<f64>) -> Member {
    Member {
        config: c.to_vec(),
        value: v,
    }
}

#[test]
fn selection_keeps_the_population_duplicate_free() {
    let mut s = de(&[]);
    s.population = vec![
        member(&[0, 0], Some(5.0)),
        member(&[1, 1], Some(3.0)),
        member(&[2, 2], None),
        member(&[3, 3], Some(1.0)),
        member(&[4, 4], Some(2.0)),
    ];
    s.best = Some(s.population[3].clone());
    let changed = s.select(vec![
        member(&[9, 9], Some(4.0)), // better: replaces
        member(&[9, 9], Some(4.0)), // already in the population now: rejected
        member(&[7, 7], Some(9.0)), // a failed member is worst: replaced
        member(&[5, 5], None),      // failed trial: never replaces
        member(&[6, 6], Some(2.0)), // equal: replaces (<=), ties the best
    ]);
    assert!(changed);
    let configs: Vec<_> = s.population.iter().map(|m| m.config.clone()).collect();
    assert_eq!(
        configs,
        vec![vec![9, 9], vec![1, 1], vec![7, 7], vec![3, 3], vec![6, 6]]
    );
    assert_eq!(s.best.as_ref().unwrap().config, vec![3, 3]);
    // A trial equal to another member is never taken, however good.
    let changed = s.select(vec![
        member(&[3, 3], Some(1.0)),
        member(&[1, 1], Some(3.0)),
        member(&[5, 5], None),
        member(&[3, 3], Some(1.0)),
        member(&[0, 5], Some(0.5)),
    ]);
    assert!(changed);
    let distinct: FxHashSet<_> = s.population.iter().map(|m| &m.config).collect();
    assert_eq!(distinct.len(), 5);
    assert_eq!(s.best.as_ref().unwrap(), &member(&[0, 5], Some(0.5)));
    assert!(!s.select(vec![
        member(&[1, 1], Some(0.0)),
        member(&[9, 9], Some(4.0)),
        member(&[7, 7], Some(9.0)),
        member(&[3, 3], Some(1.0)),
        member(&[0, 5], Some(0.5)),
    ]));
}

#[test]
fn an_unchanged_population_is_reinitialised_keeping_the_best() {
    let space = sparse();
    let mut rng = Rng::seed_from_u64(7);
    let mut history = History::new();
    let mut s = de(&[("popsize", 3.into())]);
    s.start(&space, &mut rng);
    let initial = s.candidates.clone();
    for (k, c) in initial.iter().enumerate() {
        let o = Observation {
            config: c.clone(),
            value: Some(k as f64),
            failure: None,
            variance: None,
            objectives: Vec::new(),
        };
        history.push(o.clone());
        s.tell(&space, &[o]);
    }
    s.next = s.candidates.len();
    s.advance(&space, &history, &mut rng, false);
    assert_eq!(s.phase, Phase::Trials);
    assert_eq!(s.population.len(), 6);
    // Two generations whose trials are the members themselves: nothing changes.
    for round in 0..2 {
        let copies: Vec<Configuration> = s.population.iter().map(|m| m.config.clone()).collect();
        s.set_candidates(Phase::Trials, copies.clone());
        for c in &copies {
            let v = history.get(c).unwrap().value;
            s.resolve(c, v);
        }
        s.next = s.candidates.len();
        s.advance(&space, &history, &mut rng, false);
        assert_eq!(s.unchanged, round + 1);
    }
    let Phase::Fresh { keep } = &s.phase else {
        panic!("not reinitialised")
    };
    assert_eq!(keep, &vec![member(&initial[0], Some(0.0))]);
    assert_eq!(s.candidates.len(), 5);
    assert!(
        s.candidates
            .iter()
            .all(|c| space.contains(c) && !history.contains(c))
    );
    // Through ask: the new members are proposed, then become the population with the best.
    let asked = s.ask(&space, &history, 100, &mut rng);
    assert_eq!(asked, s.candidates);
}

#[test]
fn a_generation_of_evaluated_trials_never_stalls_the_run() {
    // A tiny space: trials soon repeat; the run must still cover the whole space.
    let space = space_of(vec![integers("x", 0, 5), integers("y", 0, 5)], &["x != y"]);
    let r = run(&space, &[("popsize", 2.into())], 3, 1000);
    assert_eq!(r.records.len(), 30);
    assert_eq!(r.stop, ktune_core::StopReason::SpaceExhausted);
}

#[test]
fn unaware_variant_samples_the_cartesian_product_without_repair() {
    let space = sparse();
    let r = run(&space, &[("constraint_aware", false.into())], 1, 200);
    assert_eq!(r.records.len(), 200);
    let invalid = failures(&r, FailureKind::Invalid);
    assert!(invalid > 50, "{invalid}");
    assert!(r.records.iter().all(|r| space.is_in_bounds(&r.config)));
    let aware = run(&space, &[], 1, 200);
    assert!(aware.records.iter().all(|r| space.contains(&r.config)));
    // Invalid configurations never enter the population.
    let mut s = de(&[("constraint_aware", false.into())]);
    let mut runner = index_bowl();
    let budget = Budget::evaluations(150);
    Tuner::new(&space, &mut runner, budget)
        .run(&mut s, &mut Rng::seed_from_u64(2))
        .unwrap();
    assert!(
        s.population
            .iter()
            .all(|m| m.value.is_none() || space.contains(&m.config))
    );
}

#[test]
fn runs_are_deterministic_per_seed_and_find_the_optimum() {
    let space = sparse();
    for method in METHODS {
        let o = [("method", serde_json::Value::from(*method))];
        let a = run(&space, &o, 11, 120);
        let configs = |r: &ktune_core::TuningRun| -> Vec<Configuration> {
            r.records.iter().map(|r| r.config.clone()).collect()
        };
        assert_eq!(configs(&a), configs(&run(&space, &o, 11, 120)), "{method}");
        assert_ne!(configs(&a), configs(&run(&space, &o, 12, 120)), "{method}");
        let distinct: FxHashSet<_> = a.records.iter().map(|r| &r.config).collect();
        assert_eq!(distinct.len(), a.records.len(), "{method}");
        assert!(a.records.iter().all(|r| space.contains(&r.config)));
    }
    let a = run(&space, &[], 4, 150);
    assert_eq!(a.best().unwrap().outcome.objective(), Some(0.0));
}
