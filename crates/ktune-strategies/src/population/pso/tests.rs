//! Tests of `pso`.

use super::*;
use crate::population::continuous::{Repair, value_of};
use ktune_core::testing::{failures, integers, space_of};
use ktune_core::{Budget, FailureKind, Runner, StopReason, Tuner, TuningRun};
use ktune_space::{Encoding, Neighbourhood, Parameter};
use rand::SeedableRng;

pub(crate) use crate::testkit::{bowl, sparse_space};

/// Three constrained groups and a free parameter.
fn grouped_space() -> SearchSpace {
    space_of(
        vec![
            Parameter::integer("a", [1, 2, 4, 8, 16, 32]).unwrap(),
            Parameter::integer("b", [1, 2, 4, 8, 16, 32]).unwrap(),
            integers("c", 0, 9),
            integers("d", 0, 11),
            integers("e", 0, 11),
            integers("f", 0, 4),
            integers("g", 0, 7),
            integers("h", 0, 7),
        ],
        &[
            "8 <= a * b <= 64",
            "(c + d) % 3 != 1",
            "d * e % 5 == 0",
            "g + h <= 6 or g == h",
        ],
    )
}

/// Two parameters of ten values each, with exactly the configurations listed.
fn listed(configs: &[[u32; 2]]) -> SearchSpace {
    let params = vec![integers("a", 0, 9), integers("b", 0, 9)];
    let configs: Vec<Configuration> = configs.iter().map(|c| c.to_vec()).collect();
    SearchSpace::from_configurations(params, &configs).unwrap()
}

pub(crate) fn run_on(space: &SearchSpace, spec: &str, seed: u64, budget: usize) -> TuningRun {
    let mut runner = bowl();
    let (_, mut strategy) = crate::create_spec(spec).unwrap();
    let budget = Budget::evaluations(budget);
    Tuner::new(space, &mut runner, budget)
        .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
        .unwrap()
}

pub(crate) fn configs(run: &TuningRun) -> Vec<Configuration> {
    run.records.iter().map(|r| r.config.clone()).collect()
}

/// Mean over seeds of the best value found within the budget.
pub(crate) fn mean_best(spec: &str, budget: usize, seeds: u64) -> f64 {
    let space = sparse_space();
    (0..seeds)
        .map(|s| {
            run_on(&space, spec, s, budget)
                .best()
                .and_then(|r| r.outcome.objective())
                .unwrap_or(f64::INFINITY)
        })
        .sum::<f64>()
        / seeds as f64
}

/// Checks what every swarm variant must do: distinct proposals, valid ones when
/// constraint-aware, invalid ones tried when not, determinism per seed, and a run that
/// covers a small space completely and ends.
pub(crate) fn check_behaviour(name: &str) {
    let space = sparse_space();
    let run = run_on(&space, name, 7, 150);
    let a = configs(&run);
    assert_eq!(a.len(), 150, "{name}: {:?}", run.stop);
    let unique: std::collections::BTreeSet<_> = a.iter().collect();
    assert_eq!(unique.len(), a.len(), "{name} repeated a configuration");
    assert!(a.iter().all(|c| space.contains(c)), "{name}");
    assert_eq!(a, configs(&run_on(&space, name, 7, 150)), "{name}");
    assert_ne!(a, configs(&run_on(&space, name, 8, 150)), "{name}");

    let unaware = format!("{name}:constraint_aware=false");
    let run = run_on(&space, &unaware, 7, 150);
    assert_eq!(run.records.len(), 150, "{unaware}: {:?}", run.stop);
    let invalid = failures(&run, FailureKind::Invalid);
    assert!(invalid > 0 && invalid < 150, "{unaware}: {invalid} invalid");
    assert_eq!(configs(&run), configs(&run_on(&space, &unaware, 7, 150)));

    // A budget beyond the space: every valid configuration once, then the run ends.
    let small = space_of(
        vec![integers("x", 0, 11), integers("y", 0, 11)],
        &["(x + 2 * y) % 3 == 0", "x + y <= 15"],
    );
    for spec in [name.to_string(), unaware] {
        let run = run_on(&small, &spec, 3, 10_000);
        let valid = configs(&run)
            .into_iter()
            .filter(|c| small.contains(c))
            .collect::<std::collections::BTreeSet<_>>();
        assert_eq!(run.stop, StopReason::SpaceExhausted, "{spec}");
        assert_eq!(valid.len() as u64, small.size(), "{spec}");
    }
}

/// Algorithm 2 spelled out with the space's own neighbour lists.
fn reference(space: &SearchSpace, view: &Continuous, x: &[f64]) -> (Configuration, Repair) {
    let snapped = view.snap(x);
    if space.contains(&snapped) {
        return (snapped, Repair::Snapped);
    }
    for (rule, kind) in [
        (Repair::StrictlyAdjacent, Neighbourhood::StrictlyAdjacent),
        (Repair::Adjacent, Neighbourhood::Adjacent),
        (Repair::Hamming, Neighbourhood::Hamming),
    ] {
        let n = space.neighbours(&snapped, kind);
        if let Some(c) = n
            .into_iter()
            .min_by(|a, b| view.distance2(x, a).total_cmp(&view.distance2(x, b)))
        {
            return (c, rule);
        }
    }
    let c = space.encoder(Encoding::EpsSpaced).decode_valid(space, x);
    (c, Repair::Nearest)
}

fn options(w: f64, c1: f64, c2: f64) -> PsoOptions {
    PsoOptions {
        w,
        c1,
        c2,
        ..PsoOptions::default()
    }
}

/// (How failures compare is `compare.rs`'s test.)
#[test]
fn a_nan_observation_has_no_value() {
    let o = Observation {
        config: vec![0],
        value: Some(f64::NAN),
        failure: None,
        variance: None,
        objectives: Vec::new(),
    };
    assert_eq!(value_of(&o), None);
}

#[test]
#[allow(clippy::needless_range_loop)]
fn velocity_and_position_update_on_hand_made_inputs() {
    let o = options(0.5, 3.0, 0.5);
    let mut p = Particle {
        x: vec![0.2, 0.4],
        v: vec![0.1, -0.2],
        best_x: vec![0.3, 0.1],
        best: Some(1.0),
    };
    let global = [0.6, 0.0];
    let mut rng = Rng::seed_from_u64(5);
    let mut draws = rng.clone();
    let mut expected = Vec::new();
    for d in 0..2 {
        let (r1, r2) = (draws.random::<f64>(), draws.random::<f64>());
        let v = 0.5 * p.v[d] + 3.0 * r1 * (p.best_x[d] - p.x[d]) + 0.5 * r2 * (global[d] - p.x[d]);
        expected.push((v, p.x[d] + v));
    }
    move_particle(&mut p, &global, &o, &mut rng);
    for d in 0..2 {
        assert!((p.v[d] - expected[d].0).abs() < 1e-15);
        assert!((p.x[d] - expected[d].1).abs() < 1e-15);
    }
    // Inertia only, then clipping to the bounds [0, m ε].
    let mut p = Particle {
        x: vec![0.2, 0.4],
        v: vec![2.0, -2.0],
        best_x: vec![0.2, 0.4],
        best: None,
    };
    move_particle(&mut p, &[0.2, 0.4], &options(1.0, 3.0, 0.5), &mut rng);
    assert_eq!((p.x[0], p.x[1]), (2.2, -1.6));
    let view = Continuous::new(&listed(&[[0, 0], [9, 3]]), true);
    view.clip(&mut p.x);
    assert_eq!(p.x, vec![1.0, 0.0]);
    assert_eq!(p.v, vec![2.0, -2.0], "the velocity is kept");
}

#[test]
fn the_encoding_is_eps_spaced_and_snaps_to_the_nearest_value() {
    let space = sparse_space();
    let view = Continuous::new(&space, true);
    let eps = 1.0 / 40.0;
    assert_eq!(view.hi, vec![1.0, 1.0, 2.0 * eps]);
    assert_eq!(
        view.encode(&[0, 39, 1]),
        vec![0.5 * eps, 39.5 * eps, 1.5 * eps]
    );
    assert_eq!(view.snap(&[0.0, 1.0, 1.01 * eps]), vec![0, 39, 1]);
    assert_eq!(
        view.snap(&[2.9 * eps, 3.1 * eps, 0.99 * eps]),
        vec![2, 3, 0]
    );
}

#[test]
fn repair_takes_the_closest_strictly_adjacent_neighbour() {
    // Every configuration but (5, 5); ε = 0.1, value i at (i + 0.5) / 10.
    let all: Vec<[u32; 2]> = (0..10)
        .flat_map(|a| (0..10).map(move |b| [a, b]))
        .filter(|&c| c != [5, 5])
        .collect();
    let space = listed(&all);
    let view = Continuous::new(&space, true);
    let x = [0.56, 0.58];
    assert_eq!(view.snap(&x), vec![5, 5]);
    assert_eq!(
        view.repair(&space, &x),
        (vec![5, 6], Repair::StrictlyAdjacent)
    );
    let x = [0.59, 0.56];
    assert_eq!(
        view.repair(&space, &x),
        (vec![6, 5], Repair::StrictlyAdjacent)
    );
    assert_eq!(
        view.repair(&space, &[0.31, 0.72]),
        (vec![3, 7], Repair::Snapped)
    );
}

#[test]
fn repair_falls_back_to_adjacent_then_hamming_then_the_nearest() {
    // a = 4 and a = 6 never occur and (5, 4..6) is infeasible: no strictly-adjacent
    // neighbour of (5, 5), but adjacent ones at a = 3 and a = 7.
    let rows: Vec<[u32; 2]> = (0..10)
        .flat_map(|a| (0..10).map(move |b| [a, b]))
        .filter(|&[a, b]| a != 4 && a != 6 && (a != 5 || !(4..=6).contains(&b)))
        .collect();
    let space = listed(&rows);
    let view = Continuous::new(&space, true);
    assert!(
        space
            .neighbours(&[5, 5], Neighbourhood::StrictlyAdjacent)
            .is_empty()
    );
    assert_eq!(
        view.repair(&space, &[0.52, 0.55]),
        (vec![3, 5], Repair::Adjacent)
    );
    assert_eq!(
        view.repair(&space, &[0.58, 0.56]),
        (vec![7, 5], Repair::Adjacent)
    );

    // b occurs only as 0, 3 and 9 and a only as 0, 3 and 5: the adjacent box of (5, 5)
    // is {3, 5} x {3, 5, 9}, empty; (5, 0) differs in b only.
    let space = listed(&[[5, 0], [0, 3], [0, 9], [3, 0]]);
    let view = Continuous::new(&space, true);
    assert!(
        space
            .neighbours(&[5, 5], Neighbourhood::Adjacent)
            .is_empty()
    );
    assert_eq!(
        view.repair(&space, &[0.55, 0.55]),
        (vec![5, 0], Repair::Hamming)
    );

    // No neighbour of any kind: the nearest valid configuration.
    let space = listed(&[[0, 3], [3, 0], [1, 1]]);
    let view = Continuous::new(&space, true);
    assert!(space.neighbours(&[5, 5], Neighbourhood::Hamming).is_empty());
    assert_eq!(
        view.repair(&space, &[0.55, 0.56]),
        (vec![0, 3], Repair::Nearest)
    );
    assert_eq!(
        view.repair(&space, &[0.56, 0.55]),
        (vec![3, 0], Repair::Nearest)
    );
}

#[test]
fn repair_matches_algorithm_2_spelled_out_with_neighbour_lists() {
    let mut rng = Rng::seed_from_u64(11);
    let mut rules = std::collections::BTreeMap::new();
    for space in [sparse_space(), grouped_space()] {
        let view = Continuous::new(&space, true);
        for _ in 0..3000 {
            let x = view.uniform(&mut rng);
            let (c, rule) = view.repair(&space, &x);
            let (r, ref_rule) = reference(&space, &view, &x);
            assert!(space.contains(&c));
            assert_eq!(rule, ref_rule, "{x:?}");
            let (d, e) = (view.distance2(&x, &c), view.distance2(&x, &r));
            assert!((d - e).abs() < 1e-12, "{x:?}: {c:?} at {d}, {r:?} at {e}");
            *rules.entry(format!("{rule:?}")).or_insert(0) += 1;
        }
    }
    assert!(rules.len() >= 3, "{rules:?}");
}

#[test]
fn the_swarm_evaluates_the_repair_and_keeps_its_position() {
    let space = sparse_space();
    let o = options(0.0, 0.0, 0.0); // nothing moves
    let mut rng = Rng::seed_from_u64(1);
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    // Initial positions are valid configurations, distinct.
    let start: Vec<Configuration> = s.particles.iter().map(|p| s.view.snap(&p.x)).collect();
    assert_eq!(start.len(), o.popsize);
    assert!(start.iter().all(|c| space.contains(c)));
    assert_eq!(
        start
            .iter()
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
        o.popsize
    );
    // Put particle 0 where the snapped point is invalid.
    let x = vec![5.6 / 40.0, 7.4 / 40.0, 0.3 / 40.0];
    assert!(!space.contains(&s.view.snap(&x)));
    s.particles[0] = s.particle(x.clone(), &mut rng);
    s.evaluate(&space, &o);
    let repaired = s.view.repair(&space, &x).0;
    let mut history = History::new();
    s.pending.resolve(&history);
    let asked = s.pending.hand_out(100);
    assert!(asked.contains(&repaired));
    let told: Vec<Observation> = asked
        .iter()
        .enumerate()
        .map(|(i, c)| Observation {
            config: c.clone(),
            value: (i != 3).then_some(i as f64 + 10.0),
            failure: None,
            variance: None,
            objectives: Vec::new(),
        })
        .collect();
    for t in &told {
        history.push(t.clone());
    }
    s.pending.tell(&told);
    s.advance(&space, &history, &o, &mut rng);
    assert_eq!(s.particles[0].x, x, "the position is not repaired");
    assert_eq!(
        s.particles[0].best_x, x,
        "the personal best is the position"
    );
    assert_eq!(s.particles[0].best, Some(10.0));
    assert_eq!(s.global, Some(10.0));
    assert_eq!(s.global_x, x);
    // The particle whose configuration failed keeps no value as its best.
    let failed = s
        .pending
        .configs
        .iter()
        .position(|c| *c == asked[3])
        .unwrap();
    assert_eq!(s.particles[failed].best, None);
    // Unmoved, the next iteration is all memoised: nothing new is handed out.
    s.pending.resolve(&history);
    assert!(s.pending.hand_out(100).is_empty());
}

#[test]
fn personal_and_global_bests_follow_the_evaluated_values() {
    let space = sparse_space();
    let o = PsoOptions {
        popsize: 3,
        ..options(0.0, 0.0, 0.0)
    };
    let mut rng = Rng::seed_from_u64(2);
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    let xs: Vec<Vec<f64>> = s.particles.iter().map(|p| p.x.clone()).collect();
    let finish = |s: &mut Swarm, values: [Option<f64>; 3], rng: &mut Rng| {
        for (i, v) in values.into_iter().enumerate() {
            s.pending.values[i] = Some(v);
        }
        s.advance(&space, &History::new(), &o, rng);
    };
    finish(&mut s, [None, Some(5.0), Some(3.0)], &mut rng);
    assert_eq!((s.global, &s.global_x), (Some(3.0), &xs[2]));
    finish(&mut s, [Some(4.0), Some(6.0), None], &mut rng);
    let bests: Vec<Option<f64>> = s.particles.iter().map(|p| p.best).collect();
    assert_eq!(bests, vec![Some(4.0), Some(5.0), Some(3.0)]);
    assert_eq!(s.global, Some(3.0));
    // All failed from the start: the first particle stands in as the global best.
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    let x0 = s.particles[0].x.clone();
    finish(&mut s, [None, None, None], &mut rng);
    assert_eq!((s.global, &s.global_x), (None, &x0));
}

#[test]
fn the_swarm_restarts_after_maxiter_and_diversifies_when_stalled() {
    let space = sparse_space();
    let o = PsoOptions {
        popsize: 4,
        maxiter: 2,
        ..options(0.0, 0.0, 0.0)
    };
    let mut rng = Rng::seed_from_u64(3);
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    let first: Vec<Vec<f64>> = s.particles.iter().map(|p| p.x.clone()).collect();
    for _ in 0..2 {
        s.pending.values.fill(Some(Some(1.0)));
        s.advance(&space, &History::new(), &o, &mut rng);
    }
    assert_eq!(s.iteration, 0);
    assert_eq!(s.global, None);
    assert!(s.particles.iter().zip(&first).all(|(p, x)| p.x != *x));

    // Nothing moves and everything is memoised: after STALL_ITERATIONS iterations all
    // particles but the best are re-seeded at unevaluated configurations.
    let o = PsoOptions {
        popsize: 4,
        ..options(0.0, 0.0, 0.0)
    };
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    let mut history = History::new();
    for (i, c) in s.pending.configs.iter().enumerate() {
        history.push(Observation {
            config: c.clone(),
            value: Some(i as f64),
            failure: None,
            variance: None,
            objectives: Vec::new(),
        });
    }
    let before: Vec<Vec<f64>> = s.particles.iter().map(|p| p.x.clone()).collect();
    for _ in 0..STALL_ITERATIONS {
        s.fresh.sync(&space, &history);
        s.pending.resolve(&history);
        assert!(s.pending.hand_out(10).is_empty());
        s.advance(&space, &history, &o, &mut rng);
    }
    assert_eq!(s.particles[0].x, before[0], "the best particle stays");
    for p in &s.particles[1..] {
        assert!(!history.contains(&s.view.snap(&p.x)));
    }
    s.pending.resolve(&history);
    assert_eq!(s.pending.hand_out(10).len(), 3);
}

#[test]
fn proposals_are_distinct_valid_deterministic_and_cover_small_spaces() {
    check_behaviour("pso");
    // The memoised repeats of a converging swarm are free: the strategy's own time stays
    // small and every record is new.
    let run = run_on(&grouped_space(), "particle_swarm:maxiter=5", 1, 400);
    assert_eq!(run.records.len(), 400);
}

#[test]
fn beats_random_search_given_a_few_iterations() {
    // The first `popsize` evaluations are the random initial swarm: on this small bowl PSO
    // only pulls ahead of random search after a few iterations.
    let random = mean_best("random", 150, 16);
    let ours = mean_best("pso", 150, 16);
    assert!(ours < random, "{ours} vs {random}");
}

/// Strategy time per suggestion on a brute-forced space (run by hand:
/// `cargo test --release -p ktune-strategies overhead -- --ignored --nocapture`).
#[test]
#[ignore = "timing; needs the shared simulation data"]
fn overhead_per_suggestion() {
    let path = crate::testkit::shared_space("dedispersion_A100");
    let sim = ktune_runners::Simulation::open(&path, None, None).unwrap();
    time_strategies(sim.space(), &mut || Box::new(sim.runner()));
    // A CLBlast-GEMM-like space: 14 parameters, one large constrained group.
    let p = |name: &str, v: &[i64]| Parameter::integer(name, v.iter().copied()).unwrap();
    let gemm = space_of(
        vec![
            p("MWG", &[16, 32, 64, 128]),
            p("NWG", &[16, 32, 64, 128]),
            p("KWG", &[16, 32]),
            p("MDIMC", &[8, 16, 32]),
            p("NDIMC", &[8, 16, 32]),
            p("MDIMA", &[8, 16, 32]),
            p("NDIMB", &[8, 16, 32]),
            p("KWI", &[2, 8]),
            p("VWM", &[1, 2, 4, 8]),
            p("VWN", &[1, 2, 4, 8]),
            p("STRM", &[0, 1]),
            p("STRN", &[0, 1]),
            p("SA", &[0, 1]),
            p("SB", &[0, 1]),
        ],
        &[
            "KWG % KWI == 0",
            "MWG % (MDIMC * VWM) == 0",
            "NWG % (NDIMC * VWN) == 0",
            "MWG % (MDIMA * VWM) == 0",
            "NWG % (NDIMB * VWN) == 0",
            "KWG % ((MDIMC * NDIMC) // MDIMA) == 0",
            "KWG % ((MDIMC * NDIMC) // NDIMB) == 0",
        ],
    );
    time_strategies(&gemm, &mut || Box::new(bowl()));
}

fn time_strategies<'a>(space: &SearchSpace, runner: &mut dyn FnMut() -> Box<dyn Runner + 'a>) {
    for spec in ["pso", "firefly_algorithm", "pso:constraint_aware=false"] {
        let (mut total, mut count, mut worst) = (0.0, 0usize, 0.0f64);
        for seed in 0..10 {
            let (_, strategy) = crate::create_spec(spec).unwrap();
            let mut timed = ktune_core::testing::Timed::new(strategy);
            let mut runner = runner();
            let budget = Budget::evaluations(2000);
            let run = Tuner::new(space, runner.as_mut(), budget)
                .run(&mut timed, &mut Rng::seed_from_u64(seed))
                .unwrap();
            total += run.strategy_seconds;
            count += run.records.len();
            worst = timed.samples.iter().map(|s| s.1).fold(worst, f64::max);
        }
        eprintln!(
            "{spec}: {} configurations, {} parameters: {:.1} µs per suggestion, slowest ask+tell {:.0} µs",
            space.size(),
            space.dims(),
            total / count as f64 * 1e6,
            worst * 1e6
        );
    }
}

/// Without repair, a position whose snapped point is invalid is a failure at no cost: it is
/// never handed out, its particle keeps no value, and the others are evaluated as usual.
#[test]
fn without_repair_an_invalid_point_fails_at_no_cost() {
    let space = sparse_space();
    let o = PsoOptions {
        repair: false,
        ..options(0.0, 0.0, 0.0)
    };
    let mut rng = Rng::seed_from_u64(1);
    let mut s = Swarm::new(&space, &History::new(), &o, &mut rng);
    let x = vec![5.6 / 40.0, 7.4 / 40.0, 0.3 / 40.0];
    let snapped = s.view.snap(&x);
    assert!(!space.contains(&snapped));
    s.particles[0] = s.particle(x.clone(), &mut rng);
    s.evaluate(&space, &o);
    s.pending.resolve(&History::new());
    let asked = s.pending.hand_out(100);
    let others = o.popsize - 1;
    assert_eq!(asked.len(), others, "every particle but the invalid one");
    assert!(asked.iter().all(|c| space.contains(c)));
    assert_eq!(s.pending.values[0], Some(None), "a failure, known at once");
    assert_eq!(s.pending.fresh, others);
}
