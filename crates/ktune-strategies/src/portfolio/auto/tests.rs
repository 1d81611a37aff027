//! Tests of `auto`.

use ktune_core::{Budget, Tuner};
use rand::SeedableRng;

use super::*;
use crate::testkit::{bowl, sparse_space};

fn tuned(o: &AutoOptions, budget: usize, seed: u64) -> (Auto, ktune_core::TuningRun) {
    let space = sparse_space();
    let mut auto = Auto::new(o).unwrap();
    let mut runner = bowl();
    let run = Tuner::new(&space, &mut runner, Budget::evaluations(budget))
        .run(&mut auto, &mut Rng::seed_from_u64(seed))
        .unwrap();
    (auto, run)
}

/// The local search waits for the model's initial sample, then both propose and the
/// bandit has results of both.
#[test]
fn the_local_search_starts_after_the_initial_sample() {
    let o = AutoOptions::default();
    let (auto, _) = tuned(&o, o.initial_samples, 1);
    assert_eq!(auto.bandit.exploitation(1), 0.0);
    assert!(auto.bandit.exploitation(MODEL) > 0.0);
    let (auto, run) = tuned(&o, 60, 1);
    assert_eq!(run.records.len(), 60);
    let uses: Vec<usize> = (0..2).map(|arm| auto.bandit.uses(arm)).collect();
    assert!(uses[0] >= o.initial_samples && uses[1] > 0, "{uses:?}");
    let best = run.best().and_then(|b| b.outcome.objective()).unwrap();
    assert!(best <= 2.0, "best {best} after 60 evaluations");
}

#[test]
fn without_the_local_search_it_is_the_model_alone() {
    let o = AutoOptions {
        local: "none".parse().unwrap(),
        ..AutoOptions::default()
    };
    let (auto, run) = tuned(&o, 40, 2);
    assert_eq!(auto.members.len(), 1);
    assert_eq!(auto.bandit.uses(MODEL), run.records.len());
}

#[test]
fn the_members_are_the_model_and_those_named() {
    for (local, n) in [
        ("none", 1),
        ("mls", 2),
        ("mls+annealing", 3),
        ("genetic + pso", 3),
    ] {
        let o = AutoOptions {
            local: local.parse().unwrap(),
            ..AutoOptions::default()
        };
        assert_eq!(Auto::new(&o).unwrap().members.len(), n, "{local}");
    }
    let o = AutoOptions {
        local: "mls+annealing".parse().unwrap(),
        ..AutoOptions::default()
    };
    let (auto, run) = tuned(&o, 80, 3);
    assert_eq!(run.records.len(), 80);
    // Every member proposed after the initial sample.
    for arm in 0..3 {
        assert!(auto.bandit.uses(arm) > 0, "arm {arm} never proposed");
    }
}

/// The stagnation schedule: the model keeps the turn while it improves; with a patience
/// longer than the run the local search never proposes, with a short one both do.
#[test]
fn the_stagnation_schedule_passes_the_turn_when_results_stop_improving() {
    let run = |patience: usize| {
        let o = AutoOptions {
            schedule: Schedule::Stagnation,
            patience,
            window: 1000,
            ..AutoOptions::default()
        };
        tuned(&o, 60, 4).0
    };
    let never = run(1_000_000);
    assert_eq!(never.bandit.uses(1), 0);
    assert_eq!(never.bandit.uses(MODEL), 60);
    let often = run(2);
    assert!(often.bandit.uses(1) > 0 && often.bandit.uses(MODEL) > 10);
}

/// The model's guide reaches the climb: the same seed takes another path with it, and the
/// guided run still climbs to the bowl's floor.
#[test]
fn the_guide_changes_the_climbs_proposals() {
    let guided = AutoOptions::default();
    let blind = AutoOptions {
        guide: ClimbGuide::None,
        ..AutoOptions::default()
    };
    let configs = |run: &ktune_core::TuningRun| -> Vec<Configuration> {
        run.records.iter().map(|r| r.config.clone()).collect()
    };
    let (_, a) = tuned(&guided, 60, 6);
    let (_, b) = tuned(&blind, 60, 6);
    assert_eq!(configs(&a)[..10], configs(&b)[..10], "the initial sample");
    assert_ne!(configs(&a), configs(&b));
    let best = a.best().and_then(|b| b.outcome.objective()).unwrap();
    assert!(best <= 2.0, "best {best} after 60 evaluations");
}

/// The forest's largest ε_f reaches the model: where half the space fails, a high one keeps
/// more proposals out of the failing half than none does, on the same seed.
#[test]
fn the_feasibility_threshold_reaches_the_models_forest() {
    let space = sparse_space();
    // x >= 20 fails; elsewhere a bowl with its minimum at x = 12, y = 6.
    let f = |i: &[u32]| {
        (i[0] < 20).then(|| {
            let (x, y) = (f64::from(i[0]), f64::from(i[1]));
            1.0 + (x - 12.0).powi(2) + (y - 6.0).powi(2)
        })
    };
    let failures = |threshold: f64, seed: u64| {
        let o = AutoOptions {
            feasibility_threshold: threshold,
            ..AutoOptions::default()
        };
        let mut auto = Auto::new(&o).unwrap();
        let run = crate::testkit::run(&mut auto, &space, f, 60, seed);
        run.records
            .iter()
            .filter(|r| r.outcome.objective().is_none())
            .count()
    };
    let (open, strict): (usize, usize) = (0..4)
        .map(|seed| (failures(0.0, seed), failures(1.0, seed)))
        .fold((0, 0), |(a, b), (x, y)| (a + x, b + y));
    assert!(
        strict < open,
        "failures: {strict} with ε_f up to 1, {open} with 0"
    );
}

/// A flat landscape (values within a few percent) is judged smooth after `probe` valid
/// results: the model's initial sample ends there and the stagnation schedule takes
/// over; the bowl (values 1 to 150) is not, and nothing changes.
#[test]
fn a_smooth_landscape_ends_the_initial_sample_early() {
    let o = AutoOptions::default();
    let space = sparse_space();
    let mut flat = Auto::new(&o).unwrap();
    let level = |c: &[u32]| {
        let v = space.values(c);
        Some(100.0 + (v[0].as_f64().unwrap() + v[1].as_f64().unwrap()) / 10.0)
    };
    crate::testkit::run(&mut flat, &space, level, 30, 7);
    assert_eq!(flat.smooth, Some(true));
    assert_eq!(flat.schedule, Schedule::Stagnation);
    assert_eq!(flat.warm_up, o.probe);
    let (bowl, _) = tuned(&o, 30, 7);
    assert_eq!(bowl.smooth, Some(false));
    assert_eq!(bowl.schedule, Schedule::Bandit);
    assert_eq!(bowl.warm_up, o.initial_samples);
    let off = AutoOptions {
        smooth_below: 0.0,
        ..AutoOptions::default()
    };
    let (never, _) = tuned(&off, 30, 7);
    assert_eq!(never.smooth, None);
}

/// The acquisition functions behind the model's proposals of a 60-evaluation run on
/// `runner`'s landscape, before and after its evaluation `split`.
fn functions_split(
    o: &AutoOptions,
    mut runner: ktune_core::testing::FnRunner,
    split: usize,
) -> [std::collections::BTreeSet<String>; 2] {
    let space = sparse_space();
    let mut auto = Auto::new(o).unwrap();
    let run = Tuner::new(&space, &mut runner, Budget::evaluations(60))
        .trace_origins()
        .run(&mut auto, &mut Rng::seed_from_u64(5))
        .unwrap();
    let mut halves: [std::collections::BTreeSet<String>; 2] = Default::default();
    for (i, origin) in run.origins.iter().enumerate() {
        if let Some(o) = origin.as_deref()
            && o.starts_with("model/")
            && o != "model/initial"
        {
            halves[usize::from(i >= split)].insert(o.to_string());
        }
    }
    halves
}

/// [`functions_split`] at the middle of the run.
fn functions_by_half(
    o: &AutoOptions,
    runner: ktune_core::testing::FnRunner,
) -> [std::collections::BTreeSet<String>; 2] {
    functions_split(o, runner, 30)
}

/// A landscape whose values lie within a few percent of each other: judged smooth.
fn level() -> ktune_core::testing::FnRunner<'static> {
    ktune_core::testing::FnRunner::values(|x| Some(100.0 + (x[0] + x[1]) / 10.0))
}

/// Asserts that the model proposed by several acquisition functions in the first half of a
/// run with `o` on `runner`'s landscape, and by expected improvement alone in the second.
fn assert_exploits_second_half(o: &AutoOptions, runner: ktune_core::testing::FnRunner) {
    let [early, late] = functions_by_half(o, runner);
    assert!(early.len() > 1, "{early:?}");
    assert_eq!(late, ["model/ei".to_string()].into(), "{late:?}");
}

/// Asserts that the model still proposed by several acquisition functions in the second half.
fn assert_explores_second_half(o: &AutoOptions, runner: ktune_core::testing::FnRunner) {
    let [_, late] = functions_by_half(o, runner);
    assert!(late.len() > 1, "{late:?}");
}

/// Past `exploit_after` of the budget the model proposes by expected improvement alone;
/// before, and with the default (`exploit_after = 1`) throughout, by its three functions.
#[test]
fn the_model_exploits_the_last_part_of_the_budget() {
    let half = AutoOptions {
        exploit_after: 0.5,
        ..AutoOptions::default()
    };
    assert_exploits_second_half(&half, bowl());
    assert_explores_second_half(&AutoOptions::default(), bowl());
}

/// On a landscape judged smooth, `smooth_exploit_after = 0.5` exploits after half the
/// budget, and the default (1) keeps the three functions; `exploit_after` does not act there.
#[test]
fn on_a_smooth_landscape_smooth_exploit_after_decides() {
    let smooth_half = AutoOptions {
        smooth_exploit_after: 0.5,
        ..AutoOptions::default()
    };
    assert_exploits_second_half(&smooth_half, level());
    assert_explores_second_half(&AutoOptions::default(), level());
    let rough_half = AutoOptions {
        exploit_after: 0.5,
        ..AutoOptions::default()
    };
    assert_explores_second_half(&rough_half, level());
}

/// `exploit_last` caps the exploiting end of the budget: with 20, a 60-evaluation run on a
/// smooth landscape with `smooth_exploit_after = 0.5` explores to its 40th evaluation, past
/// the middle.
#[test]
fn the_model_exploits_at_most_the_last_exploit_last_evaluations() {
    let capped = AutoOptions {
        smooth_exploit_after: 0.5,
        exploit_last: 20,
        ..AutoOptions::default()
    };
    let [before, after] = functions_split(&capped, level(), 40);
    assert_eq!(after, ["model/ei".to_string()].into(), "{after:?}");
    let [_, middle] = functions_split(&capped, level(), 30);
    assert!(middle.len() > 1, "{middle:?}");
    assert!(before.len() > 1, "{before:?}");
}

/// An earlier study of the sparse space whose results rank it as `f` does.
fn prior_from(f: impl Fn(&[f64]) -> Option<f64>) -> ktune_core::MatchedPrior {
    use ktune_core::{Direction, Prior};
    let space = sparse_space();
    let names = space
        .params()
        .iter()
        .map(|p| p.name().to_string())
        .collect();
    let mut p = Prior::new("earlier", names, Direction::Minimize);
    for c in space.iter() {
        let values: Vec<ktune_space::Value> = space.values(&c).into_iter().cloned().collect();
        let x: Vec<f64> = values.iter().map(|v| v.as_f64().unwrap()).collect();
        p.push(values, f(&x));
    }
    p.match_onto(&space, Direction::Minimize).unwrap()
}

/// The best value after each of the first `n` evaluations, mean over 5 seeds.
fn with_priors(priors: &[ktune_core::MatchedPrior], n: usize) -> Vec<f64> {
    let space = sparse_space();
    let mut sums = vec![0.0; n];
    for seed in 0..5 {
        let mut auto = Auto::new(&AutoOptions::default()).unwrap();
        let mut runner = bowl();
        let run = Tuner::new(&space, &mut runner, Budget::evaluations(n))
            .priors(priors)
            .run(&mut auto, &mut Rng::seed_from_u64(seed))
            .unwrap();
        let mut best = f64::INFINITY;
        for (k, r) in run.records.iter().enumerate() {
            best = best.min(r.outcome.objective().unwrap_or(f64::INFINITY));
            sums[k] += best / 5.0;
        }
    }
    sums
}

/// A prior of the same landscape on another scale (another device) puts the optimum among
/// the first proposals; one that ranks it backwards is dropped by the guard and costs
/// little; without priors nothing changes.
#[test]
fn priors_that_agree_are_followed_and_priors_that_mislead_are_dropped() {
    let bowl_values = |x: &[f64]| -> Option<f64> {
        let (a, b) = (x[0], x[1]);
        ((a + b) as i64 % 7 != 3).then(|| (a - 11.0).powi(2) + (b - 4.0).powi(2) + 1.0)
    };
    let good = prior_from(|x| bowl_values(x).map(|v| 3.0 * v + 7.0));
    let bad = prior_from(|x| bowl_values(x).map(|v| -v));
    let cold = with_priors(&[], 30);
    let warm = with_priors(std::slice::from_ref(&good), 30);
    let misled = with_priors(std::slice::from_ref(&bad), 30);
    // The space's optimum (2.0: the bowl's minimum is ruled out by the constraints) is the
    // good prior's first proposal; cold, it takes more than ten evaluations.
    let optimum = cold
        .iter()
        .chain(&warm)
        .copied()
        .fold(f64::INFINITY, f64::min);
    assert_eq!(warm[0], optimum, "{warm:?}");
    assert!(cold[9] > optimum, "{cold:?}");
    // Dropped within the first few evaluations, the misleading prior leaves auto about as
    // good as cold by 30.
    assert!(
        misled[29] <= cold[29] * 1.5 + 0.5,
        "misled {misled:?}, cold {cold:?}"
    );
    let mut auto = Auto::new(&AutoOptions::default()).unwrap();
    ktune_core::Strategy::set_priors(&mut auto, &[]);
    assert_eq!((auto.members.len(), auto.prior_arm), (2, None));
}

/// `auto` with `options` and `priors`, and the four configurations it asks for first.
fn first_four(
    options: &AutoOptions,
    space: &ktune_space::SearchSpace,
    priors: &[ktune_core::MatchedPrior],
) -> (Auto, Vec<ktune_space::Configuration>) {
    let mut auto = Auto::new(options).unwrap();
    ktune_core::Strategy::set_priors(&mut auto, priors);
    let asked = ktune_core::Strategy::ask(
        &mut auto,
        space,
        &ktune_core::History::default(),
        4,
        &mut Rng::seed_from_u64(1),
    );
    (auto, asked)
}

/// `prior_sample`: the priors' first proposals come before the model's initial sample (which
/// then waits for them), or count within it (the model starts as early as without priors);
/// by default within it with several priors and before it with one.
#[test]
fn the_priors_first_proposals_come_before_the_models_sample_or_within_it() {
    let space = sparse_space();
    let good = |scale: f64| {
        prior_from(move |x| Some(scale * ((x[0] - 11.0).powi(2) + (x[1] - 4.0).powi(2))))
    };
    let first_ask = |sample: PriorSample, priors: &[ktune_core::MatchedPrior]| {
        // Four proposals from one prior as from two.
        let options = AutoOptions {
            prior_sample: sample,
            prior_first_alone: 10,
            ..AutoOptions::default()
        };
        let (auto, asked) = first_four(&options, &space, priors);
        assert_eq!(asked.len(), 4);
        assert!(asked.iter().all(|c| auto.from_priors.contains(c)));
        auto.warm_up
    };
    let initial = AutoOptions::default().initial_samples;
    let (one, two) = ([good(1.0)], [good(1.0), good(2.0)]);
    assert_eq!(first_ask(PriorSample::Before, &one), initial + 4);
    assert_eq!(first_ask(PriorSample::Within, &one), initial);
    assert_eq!(first_ask(PriorSample::Several, &one), initial + 4);
    assert_eq!(first_ask(PriorSample::Before, &two), initial + 4);
    assert_eq!(first_ask(PriorSample::Several, &two), initial);
    assert_eq!(AutoOptions::default().prior_sample, PriorSample::Several);
}

/// `prior_first` counts the priors' first proposals with two or more priors,
/// `prior_first_alone` with one.
#[test]
fn a_lone_prior_proposes_first_as_often_as_prior_first_alone_says() {
    let space = sparse_space();
    let good = |scale: f64| {
        prior_from(move |x| Some(scale * ((x[0] - 11.0).powi(2) + (x[1] - 4.0).powi(2))))
    };
    let options = AutoOptions {
        prior_first: 3,
        prior_first_alone: 1,
        ..AutoOptions::default()
    };
    let from_priors = |priors: &[ktune_core::MatchedPrior]| {
        let (auto, asked) = first_four(&options, &space, priors);
        assert_eq!(asked.len(), 4);
        asked
            .iter()
            .filter(|c| auto.from_priors.contains(*c))
            .count()
    };
    assert_eq!(from_priors(&[good(1.0)]), 1);
    assert_eq!(from_priors(&[good(1.0), good(2.0)]), 3);
    // The session measured the default configuration first: a lone prior still has its
    // turn (its count is of this study's proposals, not its results).
    let mut auto = Auto::new(&options).unwrap();
    ktune_core::Strategy::set_priors(&mut auto, &[good(1.0)]);
    let mut history = ktune_core::History::new();
    let default = space.configuration(0);
    history.push(ktune_core::Observation {
        config: default.clone(),
        value: Some(1.0e3),
        failure: None,
        variance: None,
        objectives: Vec::new(),
    });
    ktune_core::Strategy::tell(&mut auto, &space, &history.observations()[..1]);
    let asked =
        ktune_core::Strategy::ask(&mut auto, &space, &history, 1, &mut Rng::seed_from_u64(1));
    assert_eq!(asked.len(), 1);
    assert!(auto.from_priors.contains(&asked[0]), "{asked:?}");
}

/// Priors that agree with no other prior (values shuffled across configurations) are not
/// followed before the study's own results vouch for them: the first proposals are the
/// model's uniform sample, as without priors, and the same study with a prior that agrees
/// with a second one starts from them.
#[test]
fn priors_that_agree_with_no_other_are_not_followed_blindly() {
    let space = sparse_space();
    let first_asked = |priors: &[ktune_core::MatchedPrior]| {
        let (auto, asked) = first_four(&AutoOptions::default(), &space, priors);
        asked
            .iter()
            .filter(|c| auto.from_priors.contains(*c))
            .count()
    };
    let shuffled = |m: f64| prior_from(move |x| Some(((x[0] * m + x[1] * 31.0) % 53.0).floor()));
    assert_eq!(first_asked(&[shuffled(17.0), shuffled(29.0)]), 0);
    let bowl = |scale: f64| {
        prior_from(move |x| Some(scale * ((x[0] - 11.0).powi(2) + (x[1] - 4.0).powi(2))))
    };
    assert_eq!(first_asked(&[bowl(1.0), bowl(3.0)]), 4);
}

/// `prior_member_alone = false`: a lone prior proposes its first `prior_first_alone`
/// configurations and nothing after; by default its order stays a member the bandit picks
/// (a prior of the same landscape improves often, so it is picked again).
#[test]
fn a_lone_prior_stays_a_member_unless_told_otherwise() {
    let space = sparse_space();
    let good = prior_from(|x| Some(2.0 * ((x[0] - 11.0).powi(2) + (x[1] - 4.0).powi(2))));
    let from_prior = |member: bool| {
        let options = AutoOptions {
            prior_member_alone: member,
            ..AutoOptions::default()
        };
        let mut auto = Auto::new(&options).unwrap();
        let mut runner = bowl();
        Tuner::new(&space, &mut runner, Budget::evaluations(60))
            .priors(std::slice::from_ref(&good))
            .run(&mut auto, &mut Rng::seed_from_u64(3))
            .unwrap();
        auto.from_priors.len()
    };
    assert_eq!(from_prior(false), 1);
    assert!(from_prior(true) > 1);
    assert!(AutoOptions::default().prior_member_alone);
}

/// A traced run says which member proposed each configuration: the model's initial sample
/// first, then the model's acquisition functions and the climb, each as often as the bandit
/// counted its proposals.
#[test]
fn a_traced_run_names_the_member_and_function_of_every_proposal() {
    // A window as long as the run: the bandit counts every result.
    let o = AutoOptions {
        window: 1000,
        ..AutoOptions::default()
    };
    let space = sparse_space();
    let mut auto = Auto::new(&o).unwrap();
    let mut runner = bowl();
    let run = Tuner::new(&space, &mut runner, Budget::evaluations(60))
        .trace_origins()
        .run(&mut auto, &mut Rng::seed_from_u64(5))
        .unwrap();
    let origins: Vec<&str> = run
        .origins
        .iter()
        .map(|o| o.as_deref().expect("auto attributes every proposal"))
        .collect();
    assert_eq!(origins.len(), 60);
    assert!(
        origins[..o.initial_samples]
            .iter()
            .all(|&o| o == "model/initial"),
        "{origins:?}"
    );
    let known = [
        "model/initial",
        "model/ei",
        "model/poi",
        "model/lcb",
        "model/explore",
        "mls/start",
        "mls/climb",
        "mls/kick",
        "mls/switch",
    ];
    assert!(origins.iter().all(|o| known.contains(o)), "{origins:?}");
    let from_model = origins.iter().filter(|o| o.starts_with("model/")).count();
    assert_eq!(from_model, auto.bandit.uses(MODEL));
    assert_eq!(origins.len() - from_model, auto.bandit.uses(1));
    assert!(
        origins.contains(&"model/ei") && origins.contains(&"mls/climb"),
        "{origins:?}"
    );
}

/// `auto`'s runs with fixed seeds on recorded spaces whose switches shape the search (switch
/// kicks, the estimated sub-space share; the sparse space of the suite's fixed-seed traces has
/// none), as ranks: the record that a refactor of the default strategy changes nothing.
/// Regenerate only for an intended change of behaviour, with `KTUNE_UPDATE_GOLDEN=1 cargo test
/// -p ktune-strategies --release golden_traces_on_recorded_spaces`. Like `bayes_opt`'s golden
/// traces it assumes the CPU kind CI runs on (the model's linear algebra picks its SIMD kernels
/// at run time).
#[test]
fn golden_traces_on_recorded_spaces_are_unchanged() {
    let mut text = String::from(
        "# auto's configurations (ranks in each space) with a fixed seed, in order.\n\
         # Regenerate: KTUNE_UPDATE_GOLDEN=1 cargo test -p ktune-strategies --release golden_traces_on_recorded_spaces\n",
    );
    for (stem, seed, budget) in [
        ("convolution_A100", 1, 120),
        ("dedispersion_A6000", 2, 120),
        ("convolution_W7800", 3, 60),
    ] {
        let sim = ktune_runners::Simulation::open(&crate::testkit::shared_space(stem), None, None)
            .unwrap_or_else(|e| {
                panic!("{stem}: {e} (the shared data set sits beside the checkout)")
            });
        let (_, mut s) = crate::create_spec("auto").unwrap();
        let run = Tuner::new(sim.space(), &mut sim.runner(), Budget::evaluations(budget))
            .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
            .unwrap();
        let ranks: Vec<String> = run
            .records
            .iter()
            .map(|r| sim.space().rank(&r.config).unwrap().to_string())
            .collect();
        text.push_str(&format!(
            "{stem} seed={seed} budget={budget}: {}\n",
            ranks.join(" ")
        ));
    }
    crate::testkit::check_golden(
        "src/portfolio/auto/golden_traces.txt",
        &text,
        "golden_traces_on_recorded_spaces",
    );
}
