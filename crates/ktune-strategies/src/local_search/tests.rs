//! Tests of the local searches' shared machinery and of `mls`.
use ktune_core::{History, Observation, Rng, Strategy};
use ktune_space::{Configuration, Neighbourhood, SearchSpace};
use rand::SeedableRng;

use super::*;
use crate::roles::switches;
use crate::testkit::*;

/// With `follow_best`, a better configuration found by someone else (told, not proposed)
/// becomes the climb's start: the next proposals are its neighbours. Without it the
/// search keeps to its own random starts.
#[test]
fn following_the_best_climbs_from_what_others_found() {
    let space = SearchSpace::new(
        vec![
            ktune_space::Parameter::integer_range("x", 0, 29, 1).unwrap(),
            ktune_space::Parameter::integer_range("y", 0, 29, 1).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let found = Observation {
        config: vec![17, 4],
        value: Some(1.0),
        failure: None,
        variance: None,
        objectives: Vec::new(),
    };
    let neighbours_proposed = |follow: bool| -> usize {
        let mut s = MultiStartLocalSearch::default().following_best(follow);
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(7);
        history.push(found.clone());
        s.tell(&space, std::slice::from_ref(&found));
        (0..10)
            .filter(|_| {
                let c = s.ask(&space, &history, 1, &mut rng).remove(0);
                let o = Observation {
                    config: c.clone(),
                    value: Some(2.0),
                    failure: None,
                    variance: None,
                    objectives: Vec::new(),
                };
                history.push(o.clone());
                s.tell(&space, &[o]);
                c.iter().zip(&found.config).filter(|(a, b)| a != b).count() == 1
            })
            .count()
    };
    assert_eq!(neighbours_proposed(true), 10);
    assert!(neighbours_proposed(false) < 5);
}

/// Two basins on a line of 20: a local minimum at 5 (value 1) and the global one at 15.
fn two_basins(c: &[u32]) -> Option<f64> {
    let x = f64::from(c[0]);
    Some(((x - 5.0).abs() + 1.0).min((x - 15.0).abs()))
}

/// Drives a climber alone until it reports a local optimum; returns the evaluations.
fn climb(
    climber: &mut HillClimber,
    space: &SearchSpace,
    history: &mut History,
    f: impl Fn(&[u32]) -> Option<f64>,
    rng: &mut Rng,
) -> usize {
    let mut evaluations = 0;
    while let Climb::Propose(v) = climber.ask(space, history, 1, rng) {
        assert_eq!(v.len(), 1);
        assert!(
            !history.contains(&v[0]),
            "proposed an evaluated configuration"
        );
        let o = observe(history, &v[0], f(&v[0]));
        climber.tell(&[o]);
        evaluations += 1;
        assert!(evaluations < 100, "the climb does not end");
    }
    evaluations
}

#[test]
fn the_climber_reaches_the_local_optimum_of_its_basin() {
    let space = line(20);
    for seed in 0..10 {
        let mut rng = Rng::seed_from_u64(seed);
        let mut climber = HillClimber::new(Neighbourhood::StrictlyAdjacent, Order::Random, true);
        let mut history = History::new();
        climber.start_at(vec![0]);
        let n = climb(&mut climber, &space, &mut history, two_basins, &mut rng);
        // Up the slope 1..=5, then 6 (and perhaps 4) to prove 5 is an optimum.
        assert_eq!(climber.current().unwrap().config, vec![5]);
        assert!((7..=8).contains(&n), "{n} evaluations");
        // From the other side of the ridge it finds the global optimum.
        climber.start_at(vec![11]);
        climb(&mut climber, &space, &mut history, two_basins, &mut rng);
        assert_eq!(climber.current().unwrap().config, vec![15]);
    }
}

#[test]
fn evaluated_neighbours_are_compared_by_their_memoised_values_without_proposing_them() {
    let space = line(10);
    let mut history = History::new();
    observe(&mut history, &[0], Some(5.0));
    observe(&mut history, &[1], Some(4.0));
    observe(&mut history, &[2], Some(3.0));
    let mut climber = HillClimber::new(Neighbourhood::StrictlyAdjacent, Order::Random, true);
    climber.start_at(vec![0]);
    let mut rng = Rng::seed_from_u64(0);
    // It walks 0 -> 1 -> 2 for free and proposes the only unknown neighbour.
    assert_eq!(
        climber.ask(&space, &history, 1, &mut rng),
        Climb::Propose(vec![vec![3]])
    );
    assert_eq!(climber.current().unwrap().config, vec![2]);
    let o = observe(&mut history, &[3], Some(9.0));
    climber.tell(&[o]);
    assert_eq!(climber.ask(&space, &history, 1, &mut rng), Climb::Optimum);
    assert_eq!(climber.current().unwrap().config, vec![2]);
}

#[test]
fn a_failed_start_moves_to_any_success_and_never_to_a_failure() {
    let space = line(10);
    let f = |c: &[u32]| (c[0] >= 3).then_some(f64::from(c[0]));
    let mut rng = Rng::seed_from_u64(3);
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
    let mut history = History::new();
    climber.start_at(vec![1]);
    climb(&mut climber, &space, &mut history, f, &mut rng);
    assert_eq!(climber.current().unwrap().config, vec![3]);
    // A failed configuration whose neighbours all fail is a local optimum.
    let space = line(3);
    let mut history = History::new();
    climber.start_at(vec![0]);
    climb(&mut climber, &space, &mut history, |_| None, &mut rng);
    assert_eq!(climber.current().unwrap().config, vec![0]);
    assert_eq!(history.len(), 3);
}

/// Prefers configurations near `x = target` (a stand-in for a model's expected
/// improvement), or has no opinion.
struct Towards(Option<f64>);

impl Guide for Towards {
    fn promise(&self, _: &SearchSpace, configs: &[Configuration]) -> Option<Vec<f64>> {
        let t = self.0?;
        Some(
            configs
                .iter()
                .map(|c| (f64::from(c[0]) - t).abs())
                .collect(),
        )
    }
}

/// A guided climb proposes the neighbours in the guide's order, compares the evaluated
/// ones before proposing anything, and keeps its own order when the guide has no opinion.
#[test]
fn a_guide_orders_the_neighbours_and_evaluated_ones_come_first() {
    let space = line(8);
    let f = |c: &[u32]| Some((f64::from(c[0]) - 6.0).abs());
    let climb = |guide: &Towards, known: &[u32], seed: u64| -> Vec<u32> {
        let mut rng = Rng::seed_from_u64(seed);
        let mut history = History::new();
        for &k in known {
            observe(&mut history, &[k], f(&[k]));
        }
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        climber.start_at(vec![0]);
        let mut order = Vec::new();
        while let Climb::Propose(v) = climber.ask_guided(&space, &history, 1, &mut rng, Some(guide))
        {
            let o = observe(&mut history, &v[0], f(&v[0]));
            order.push(v[0][0]);
            climber.tell(&[o]);
        }
        order
    };
    // The guide points at 6, the optimum: the start, then 6, then the rest around it.
    for seed in 0..5 {
        let order = climb(&Towards(Some(6.0)), &[], seed);
        assert_eq!(&order[..2], &[0, 6], "seed {seed}: {order:?}");
        assert_eq!(order.len(), 8);
    }
    // The guide points the wrong way: it is followed all the same, one step at a time.
    let order = climb(&Towards(Some(1.0)), &[], 0);
    assert_eq!(&order[..3], &[0, 1, 2], "{order:?}");
    // 3 is known and better than the start: the climb moves there before it proposes
    // the guide's favourite, and never proposes 3.
    let mut rng = Rng::seed_from_u64(0);
    let mut history = History::new();
    observe(&mut history, &[3], f(&[3]));
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
    climber.start_at(vec![0]);
    let guide = Towards(Some(1.0));
    let Climb::Propose(v) = climber.ask_guided(&space, &history, 1, &mut rng, Some(&guide)) else {
        panic!("the start is proposed first");
    };
    let o = observe(&mut history, &v[0], f(&v[0]));
    climber.tell(&[o]);
    let Climb::Propose(v) = climber.ask_guided(&space, &history, 1, &mut rng, Some(&guide)) else {
        panic!("the climb goes on");
    };
    assert_eq!(climber.current().unwrap().config, vec![3]);
    assert_eq!(v, vec![vec![1]]);
    // No opinion: the climber's random order, as without a guide.
    let mut rng = Rng::seed_from_u64(3);
    let mut history = History::new();
    let mut plain = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
    plain.start_at(vec![0]);
    let mut unguided = Vec::new();
    while let Climb::Propose(v) = plain.ask(&space, &history, 1, &mut rng) {
        let o = observe(&mut history, &v[0], f(&v[0]));
        unguided.push(v[0][0]);
        plain.tell(&[o]);
    }
    assert_eq!(climb(&Towards(None), &[], 3), unguided);
}

/// Rules out every configuration from `from` on, and has no opinion on the order.
struct RulesOut(u32);

impl Guide for RulesOut {
    fn promise(&self, _: &SearchSpace, _: &[Configuration]) -> Option<Vec<f64>> {
        None
    }

    fn rules_out(&self, config: &[u32]) -> bool {
        config[0] >= self.0
    }
}

/// What the guide rules out the climb passes over as if it had failed: never proposed, and
/// the climb ends where it would have with them failing.
#[test]
fn a_guided_climb_passes_over_what_the_guide_rules_out() {
    let space = line(8);
    let f = |c: &[u32]| Some((f64::from(c[0]) - 6.0).abs());
    let mut rng = Rng::seed_from_u64(0);
    let mut history = History::new();
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
    climber.start_at(vec![0]);
    let guide = RulesOut(4);
    let mut proposed = Vec::new();
    while let Climb::Propose(v) = climber.ask_guided(&space, &history, 2, &mut rng, Some(&guide)) {
        let told: Vec<_> = v.iter().map(|c| observe(&mut history, c, f(c))).collect();
        proposed.extend(v.iter().map(|c| c[0]));
        climber.tell(&told);
    }
    assert!(proposed.iter().all(|&x| x < 4), "{proposed:?}");
    assert_eq!(climber.current().unwrap().config, vec![3]);
}

/// Following the best without restarts, the search proposes nothing at a local optimum
/// until a better configuration is told; with restarts it samples new starts.
#[test]
fn without_restarts_a_search_following_the_best_waits_at_an_optimum() {
    let space = line(8);
    let f = |c: &[u32]| Some((f64::from(c[0]) - 6.0).abs());
    let mut history = History::new();
    for k in [5, 6, 7] {
        observe(&mut history, &[k], f(&[k]));
    }
    let mut rng = Rng::seed_from_u64(0);
    let mut waiting = MultiStartLocalSearch::new(Neighbourhood::Adjacent, true, true, 2)
        .following_best(true)
        .restarting(false);
    assert!(waiting.ask(&space, &history, 1, &mut rng).is_empty());
    let mut restarting =
        MultiStartLocalSearch::new(Neighbourhood::Adjacent, true, true, 2).following_best(true);
    assert_eq!(restarting.ask(&space, &history, 1, &mut rng).len(), 1);
    // A new best elsewhere (told by another strategy) gives the waiting search a climb.
    let far = line(8);
    let mut history = History::new();
    for (k, v) in [(5, 1.0), (6, 0.5), (7, 1.0), (1, 0.1)] {
        observe(&mut history, &[k], Some(v));
    }
    let next = waiting.ask(&far, &history, 1, &mut rng);
    assert!(next == vec![vec![0]] || next == vec![vec![2]], "{next:?}");
}

/// A grid of `dims` parameters with values `0..n`, every configuration valid.
fn grid(dims: usize, n: i64) -> SearchSpace {
    SearchSpace::new(
        (0..dims)
            .map(|d| ktune_space::Parameter::integer_range(format!("p{d}"), 0, n - 1, 1).unwrap())
            .collect(),
        &[] as &[&str],
    )
    .unwrap()
}

/// Patience ends a climb at a configuration after that many neighbours proposed without
/// an improvement; without it every neighbour is proposed first.
#[test]
fn a_patient_climb_gives_up_after_so_many_neighbours() {
    let space = grid(2, 10);
    // The start is the optimum: no neighbour improves.
    let f = |c: &[u32]| Some(f64::from(c[0] + c[1]));
    for (patience, expected) in [(3, 3), (7, 7), (0, 18)] {
        let mut rng = Rng::seed_from_u64(1);
        let mut climber =
            HillClimber::new(Neighbourhood::Hamming, Order::Random, true).with_patience(patience);
        let mut history = History::new();
        climber.start_at(vec![0, 0]);
        let n = climb(&mut climber, &space, &mut history, f, &mut rng);
        assert_eq!(n, 1 + expected, "patience {patience}");
    }
    // A move starts the count afresh: from the far corner the climb reaches the optimum.
    let mut rng = Rng::seed_from_u64(2);
    let mut climber =
        HillClimber::new(Neighbourhood::Hamming, Order::Random, true).with_patience(18);
    let mut history = History::new();
    climber.start_at(vec![9, 9]);
    climb(&mut climber, &space, &mut history, f, &mut rng);
    assert_eq!(climber.current().unwrap().config, vec![0, 0]);
}

/// A climb started with frozen parameters changes only the others until it is at their
/// local optimum, then climbs on in all of them.
#[test]
fn a_frozen_parameter_waits_for_a_local_optimum_of_the_others() {
    let space = grid(2, 10);
    let f = |c: &[u32]| Some((f64::from(c[0]) - 7.0).abs() + (f64::from(c[1]) - 3.0).abs());
    for seed in 0..5 {
        let mut rng = Rng::seed_from_u64(seed);
        let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
        let mut history = History::new();
        climber.start_frozen(vec![0, 9], vec![0]);
        let mut y_done = false;
        while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
            if !y_done && v[0][0] != 0 {
                // x moves only once y is at its optimum for x = 0.
                assert_eq!(climber.current().unwrap().config, vec![0, 3], "seed {seed}");
                y_done = true;
            }
            let o = observe(&mut history, &v[0], f(&v[0]));
            climber.tell(&[o]);
        }
        assert!(y_done);
        assert_eq!(climber.current().unwrap().config, vec![7, 3], "seed {seed}");
    }
}

/// A trap every single change of which is worse: the fast region needs two parameters
/// changed at once. Following the best without restarts, the search waits at the trap;
/// with kicks it perturbs the best and finds the optimum.
#[test]
fn kicks_leave_a_trap_that_no_single_change_leaves() {
    let space = grid(3, 5);
    let trap = vec![0u32, 0, 0];
    let f = |c: &[u32]| {
        let region = c[0] >= 2 && c[1] >= 2;
        Some(if c == [0, 0, 0] {
            1.0
        } else if region {
            0.5 - 0.05 * f64::from(c[0] + c[1] + c[2])
        } else {
            2.0 + f64::from(c[0] + c[1] + c[2])
        })
    };
    let search = |kicks: usize, seed: u64| -> (Option<f64>, usize) {
        let mut s = MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, 1)
            .following_best(true)
            .restarting(false)
            .kicking(kicks, Perturbation::Fixed(2));
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(seed);
        let o = observe(&mut history, &trap, f(&trap));
        s.tell(&space, &[o]);
        loop {
            let v = s.ask(&space, &history, 1, &mut rng);
            let Some(c) = v.first() else { break };
            assert!(!history.contains(c), "proposed an evaluated configuration");
            let o = observe(&mut history, c, f(c));
            s.tell(&space, &[o]);
        }
        (history.best().and_then(|b| b.value), history.len())
    };
    for seed in 0..10 {
        // The trap's 12 neighbours, then nothing.
        assert_eq!(search(0, seed), (Some(1.0), 13), "seed {seed}");
        let (best, evaluations) = search(30, seed);
        assert!(
            (best.unwrap() - (0.5 - 0.05 * 12.0)).abs() < 1e-12,
            "seed {seed}"
        );
        assert!(evaluations < 125, "seed {seed}: {evaluations} evaluations");
    }
}

/// `mls` from the registry takes `kicks`: at the local optimum its next climb starts next
/// to the best (one parameter changed, frozen, and the others climbed), where without
/// kicks it restarts from random samples anywhere in the space.
#[test]
fn registry_mls_kicks_climb_on_next_to_the_best() {
    let space = grid(3, 5);
    let f = |c: &[u32]| Some(f64::from(c[0] + c[1] + c[2]));
    let distance = |c: &[u32]| c.iter().filter(|&&v| v != 0).count();
    // The Hamming distance from the optimum (the origin) of the first configuration
    // proposed once the optimum and its 12 neighbours are known.
    let first_after_optimum = |spec: &str, seed: u64| -> usize {
        let (_, mut s) = crate::create_spec(spec).unwrap();
        let r = run(s.as_mut(), &space, f, 125, seed);
        let mut optimum = false;
        let mut neighbours = 0;
        for rec in &r.records {
            if optimum && neighbours == 12 {
                return distance(&rec.config);
            }
            match distance(&rec.config) {
                0 => optimum = true,
                1 => neighbours += 1,
                _ => {}
            }
        }
        panic!("{spec}, seed {seed}: the optimum was never proven");
    };
    let kicked: Vec<usize> = (0..10)
        .map(|seed| first_after_optimum("mls:kicks=5:kick_size=0.2", seed))
        .collect();
    assert!(kicked.iter().all(|&d| d == 2), "{kicked:?}");
    let restarted: Vec<usize> = (0..10)
        .map(|seed| first_after_optimum("mls", seed))
        .collect();
    assert!(restarted.contains(&3), "{restarted:?}");
}

#[test]
fn sequential_order_follows_the_space_and_best_improvement_sees_every_neighbour() {
    let space = line(6);
    let mut rng = Rng::seed_from_u64(0);
    let mut history = History::new();
    let f = |c: &[u32]| Some((f64::from(c[0]) - 3.0).abs());
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Sequential, true);
    climber.start_at(vec![0]);
    let mut order = Vec::new();
    while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
        let o = observe(&mut history, &v[0], f(&v[0]));
        order.push(v[0][0]);
        climber.tell(&[o]);
    }
    // 0, then 1 (better: move), then 2 (better), 3 (better), then 4 and 5 around it.
    assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(climber.current().unwrap().config, vec![3]);

    // Best improvement: the whole neighbourhood of the start before any move.
    let mut history = History::new();
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, false);
    climber.start_at(vec![0]);
    let mut seen = Vec::new();
    while let Climb::Propose(v) = climber.ask(&space, &history, 1, &mut rng) {
        if !seen.is_empty() {
            assert_eq!(climber.current().unwrap().config, vec![0]);
        }
        let o = observe(&mut history, &v[0], f(&v[0]));
        seen.push(v[0][0]);
        climber.tell(&[o]);
    }
    assert_eq!(seen.len(), 6);
    assert_eq!(climber.current().unwrap().config, vec![3]);
}

#[test]
fn a_batch_holds_distinct_unevaluated_neighbours_and_moves_to_the_best() {
    let space = line(10);
    let mut rng = Rng::seed_from_u64(5);
    let mut history = History::new();
    let f = |c: &[u32]| Some((f64::from(c[0]) - 7.0).abs());
    let mut climber = HillClimber::new(Neighbourhood::Hamming, Order::Random, true);
    climber.start_at(vec![0]);
    let Climb::Propose(start) = climber.ask(&space, &history, 4, &mut rng) else {
        panic!()
    };
    let o = observe(&mut history, &start[0], f(&start[0]));
    climber.tell(&[o]);
    let Climb::Propose(batch) = climber.ask(&space, &history, 4, &mut rng) else {
        panic!()
    };
    assert_eq!(batch.len(), 4);
    let unique: std::collections::BTreeSet<_> = batch.iter().collect();
    assert_eq!(unique.len(), 4);
    let obs: Vec<_> = batch
        .iter()
        .map(|c| observe(&mut history, c, f(c)))
        .collect();
    climber.tell(&obs);
    let best = batch
        .iter()
        .min_by(|a, b| f(a).partial_cmp(&f(b)).unwrap())
        .unwrap();
    assert_eq!(&climber.current().unwrap().config, best);
}

#[test]
fn mls_restarts_at_local_optima_and_covers_the_space() {
    let space = line(20);
    let mut mls = MultiStartLocalSearch::new(Neighbourhood::StrictlyAdjacent, true, true, 1);
    let run = run(&mut mls, &space, two_basins, 100, 4);
    assert_eq!(run.stop, ktune_core::StopReason::SpaceExhausted);
    assert_eq!(run.records.len(), 20);
    // Both basins were climbed: the global optimum is found.
    assert_eq!(run.best().unwrap().config, vec![15]);
    // After the first local optimum the next proposal is not one of its neighbours.
    let values: Vec<u32> = run.records.iter().map(|r| r.config[0]).collect();
    let first_opt = if values[0] < 10 { 5 } else { 15 };
    let i = values.iter().position(|&v| v == first_opt).unwrap();
    let after = &values[i + 1..];
    let j = after
        .iter()
        .position(|&v| v.abs_diff(first_opt) > 1)
        .unwrap();
    assert!(j <= 2, "{values:?}");
}

#[test]
fn each_climb_starts_from_the_best_of_its_random_sample() {
    let space = line(100);
    let f = |c: &[u32]| (!c[0].is_multiple_of(7)).then_some(f64::from(c[0]));
    for seed in 0..10 {
        let mut mls = MultiStartLocalSearch::new(Neighbourhood::StrictlyAdjacent, true, true, 5);
        let run = run(&mut mls, &space, f, 6, seed);
        let xs: Vec<u32> = run.records.iter().map(|r| r.config[0]).collect();
        let best = xs[..5]
            .iter()
            .copied()
            .filter(|&x| !x.is_multiple_of(7))
            .min()
            .unwrap_or(xs[0]);
        assert_eq!(xs[5].abs_diff(best), 1, "{xs:?}");
    }
    // The sample is drawn without repeats even when the space is smaller than it.
    let mut mls = MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, 50);
    let run = run(&mut mls, &line(7), f, 100, 0);
    assert_eq!(run.records.len(), 7);
    assert_eq!(run.stop, ktune_core::StopReason::SpaceExhausted);
}

/// Each local search beats random search within 40 evaluations of a smooth landscape (the
/// conformance suite checks them at 150, and their variants' proposals).
#[test]
fn the_local_searches_beat_random_in_forty_evaluations() {
    let space = constrained(30);
    let f = |c: &[u32]| Some((f64::from(c[0]) - 17.0).powi(2) + (f64::from(c[1]) - 5.0).powi(2));
    let mean = |spec: &str| {
        (0..20)
            .map(|seed| {
                let (_, mut s) = crate::create_spec(spec).unwrap();
                run(s.as_mut(), &space, f, 40, seed)
                    .best()
                    .and_then(|r| r.outcome.objective())
                    .unwrap()
            })
            .sum::<f64>()
            / 20.0
    };
    for spec in ["mls", "greedy_ils", "simulated_annealing"] {
        assert!(mean(spec) < mean("random"), "{spec}");
    }
}

#[test]
#[ignore = "timing; run with --release -- --ignored --nocapture"]
fn overhead_per_suggestion_on_dedispersion() {
    for spec in [
        "mls",
        "mls:neighbour=adjacent",
        "greedy_ils",
        "greedy_ils:neighbour=adjacent",
        "simulated_annealing",
        "simulated_annealing:neighbour=adjacent",
    ] {
        for budget in [1000, 11130] {
            if let Some(us) = overhead_us(spec, budget, 3) {
                println!("{spec:<40} budget {budget:>5}: {us:8.1} µs per suggestion");
            }
        }
    }
}

/// A size `x` (eight values) and two switches `a`, `b`: the trap at x = 1 with both
/// switches off, the optimum where both are on (x = 7), either switch alone slow, and both
/// on slower still at the trap's size (so no climb from one switch on turns the other on).
fn switched_space() -> SearchSpace {
    SearchSpace::new(
        vec![
            ktune_space::Parameter::integer_range("x", 0, 7, 1).unwrap(),
            ktune_space::Parameter::integer_range("a", 0, 1, 1).unwrap(),
            ktune_space::Parameter::integer_range("b", 0, 1, 1).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap()
}

fn switched(c: &[u32]) -> Option<f64> {
    let x = f64::from(c[0]);
    Some(match (c[1], c[2]) {
        (0, 0) => 1.0 + 0.1 * (x - 1.0).abs(),
        (1, 1) => 4.0 - 0.5 * x,
        _ => 3.0,
    })
}

/// The switches are the parameters of two values; a switch kick moves into the combination
/// of them evaluated least and keeps the size.
#[test]
fn a_switch_kick_moves_into_the_least_visited_combination() {
    let space = switched_space();
    assert_eq!(switches(&space), vec![1, 2]);
    assert!(switches(&grid(3, 5)).is_empty());
    let mut history = History::new();
    for c in [
        [1, 0, 0],
        [2, 0, 0],
        [3, 0, 0],
        [1, 1, 0],
        [1, 0, 1],
        [4, 1, 0],
    ] {
        observe(&mut history, &c, switched(&c));
    }
    for seed in 0..20 {
        let mut rng = Rng::seed_from_u64(seed);
        let kicked = switch_kick(&space, &[1, 2], &history, &[1, 0, 0], &mut rng);
        assert_eq!(kicked, Some(vec![1, 1, 1]), "seed {seed}");
    }
    // Now both on is the most visited: the kick from there goes to one alone, (0, 1).
    for x in 0..8 {
        observe(&mut history, &[x, 1, 1], switched(&[x, 1, 1]));
    }
    let mut rng = Rng::seed_from_u64(0);
    let kicked = switch_kick(&space, &[1, 2], &history, &[5, 1, 1], &mut rng);
    assert_eq!(kicked, Some(vec![5, 0, 1]));
    assert_eq!(
        switch_kick(&space, &[], &history, &[5, 1, 1], &mut rng),
        None
    );
}

/// A trap that only both switches changed at once leave: kicks of one parameter never
/// leave it (the search waits there), switch kicks do at the first kick and climb to the
/// optimum.
#[test]
fn switch_kicks_leave_a_trap_that_one_parameter_kicks_do_not() {
    let space = switched_space();
    // The best found, and what proposed the optimum (x = 7, both switches on), as
    // `Strategy::origin` says.
    let search = |share: f64, seed: u64| -> (Option<f64>, Option<String>) {
        let mut s = MultiStartLocalSearch::new(Neighbourhood::Hamming, true, true, 1)
            .following_best(true)
            .restarting(false)
            .kicking(5, Perturbation::Fixed(1))
            .switching(share);
        let mut history = History::new();
        let mut rng = Rng::seed_from_u64(seed);
        let trap = vec![1u32, 0, 0];
        let o = observe(&mut history, &trap, switched(&trap));
        s.tell(&space, &[o]);
        let mut origins = Vec::new();
        let mut optimum_from = None;
        loop {
            let v = s.ask(&space, &history, 1, &mut rng);
            let Some(c) = v.first() else { break };
            assert!(!history.contains(c), "proposed an evaluated configuration");
            let origin = s.origin(c).expect("mls attributes every proposal");
            if c == &[7, 1, 1] {
                optimum_from = Some(origin.clone());
            }
            origins.push(origin);
            let o = observe(&mut history, c, switched(c));
            s.tell(&space, &[o]);
        }
        // From the trap: its neighbours first (a climb), then kicks.
        assert_eq!(origins[0], "climb", "seed {seed}: {origins:?}");
        let kicked = if share > 0.0 { "switch" } else { "kick" };
        assert!(origins.iter().any(|o| o == kicked), "{origins:?}");
        (history.best().and_then(|b| b.value), optimum_from)
    };
    for seed in 0..10 {
        assert_eq!(search(0.0, seed), (Some(1.0), None), "seed {seed}");
        assert_eq!(
            search(1.0, seed),
            (Some(0.5), Some("switch".to_string())),
            "seed {seed}"
        );
    }
}
