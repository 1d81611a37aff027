//! Tests every registered strategy must pass (Kernel Tuner's `strategy_map` tests, Optuna's
//! parametrised sampler tests): valid proposals only when constraint-aware, never a repeat,
//! the budget respected, deterministic per seed, different seeds differ, better than random
//! search on a smooth landscape.

use std::collections::BTreeSet;

use ktune_core::{
    Asked, Budget, Direction, FailureKind, Metric, Record, Rng, Session, Tuner, TuningRun,
};
use ktune_space::Configuration;
use rand::SeedableRng;

use super::testkit::{Bowl, small_space, sparse_space};
use super::{Options, REGISTRY, create, create_spec};

fn run_spec(spec: &str, seed: u64, budget: usize) -> TuningRun {
    let space = sparse_space();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
    let (_, mut strategy) = create_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let budget = Budget {
        max_evaluations: Some(budget),
        ..Budget::default()
    };
    Tuner::new(&space, &mut runner, budget)
        .run(strategy.as_mut(), &mut Rng::seed_from_u64(seed))
        .unwrap_or_else(|e| panic!("{spec}: {e}"))
}

fn configs(run: &TuningRun) -> Vec<Configuration> {
    run.records.iter().map(|r| r.config.clone()).collect()
}

fn check(spec: &str, aware: bool) {
    let space = sparse_space();
    assert!(
        space.size() < 40 * 40 * 2 / 3,
        "the test space should be mostly infeasible"
    );
    let run = run_spec(spec, 1, 60);
    let a = configs(&run);
    assert_eq!(a.len(), 60, "{spec} stopped early: {:?}", run.stop);
    assert_eq!(
        a.iter().collect::<BTreeSet<_>>().len(),
        a.len(),
        "{spec} repeated a configuration"
    );
    if aware {
        for r in &run.records {
            assert!(
                space.contains(&r.config),
                "{spec} proposed an invalid configuration"
            );
            assert_ne!(r.outcome.failure(), Some(FailureKind::Invalid), "{spec}");
        }
    }
    assert_eq!(
        a,
        configs(&run_spec(spec, 1, 60)),
        "{spec} is not deterministic"
    );
    if spec != "brute_force" {
        assert_ne!(
            a,
            configs(&run_spec(spec, 2, 60)),
            "{spec} ignores its seed"
        );
    }
    // A budget larger than the space: no repeats, and the run ends when the space is
    // exhausted (on a small space, so that model-based strategies need not fit hundreds of
    // observations here).
    let small = small_space();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
    let (_, mut strategy) = create_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
    let long = Tuner::new(
        &small,
        &mut runner,
        Budget {
            max_evaluations: Some(small.size() as usize + 50),
            ..Budget::default()
        },
    )
    .run(strategy.as_mut(), &mut Rng::seed_from_u64(3))
    .unwrap_or_else(|e| panic!("{spec}: {e}"));
    let long = configs(&long);
    assert_eq!(
        long.iter().collect::<BTreeSet<_>>().len(),
        long.len(),
        "{spec}"
    );
    if aware {
        assert_eq!(
            long.len() as u64,
            small.size(),
            "{spec} did not exhaust the space"
        );
    }
}

#[test]
fn every_strategy_is_valid_unique_within_budget_and_deterministic() {
    for e in REGISTRY {
        check(e.name, true);
        if e.options.iter().any(|o| o.name == "constraint_aware") {
            check(&format!("{}:constraint_aware=false", e.name), false);
        }
        if e.options.iter().any(|o| o.name == "surrogate") {
            check(&format!("{}:surrogate=cgp", e.name), true);
        }
    }
}

/// Two workers sharing one study of 60 evaluations, the way a storage makes them: each
/// session is told the other's records before it asks (observations it did not propose),
/// asks for several configurations at once, and claims them; a configuration the other holds
/// is given back as held elsewhere, and a claim beyond the study's budget is refused. Every
/// strategy must keep proposing distinct, new configurations, and the study must end with its
/// budget spent, nothing measured twice.
fn check_shared_study(spec: &str) {
    let space = sparse_space();
    let budget = Budget {
        max_evaluations: Some(60),
        ..Budget::default()
    };
    let mut sessions: Vec<Session<'_>> = [1u64, 2]
        .iter()
        .map(|&seed| {
            let (_, strategy) = create_spec(spec).unwrap_or_else(|e| panic!("{spec}: {e}"));
            Session::new(
                &space,
                strategy,
                budget.clone(),
                Direction::Minimize,
                Rng::seed_from_u64(seed),
            )
            .unwrap()
        })
        .collect();
    let mut runner = Bowl(vec![Metric::new("f", Direction::Minimize)]);
    let mut study: Vec<Record> = Vec::new();
    let mut claimed: BTreeSet<Configuration> = BTreeSet::new();
    let mut seen = [0usize; 2];
    let mut held: [Vec<Configuration>; 2] = [Vec::new(), Vec::new()];
    let mut done = [false; 2];
    for _round in 0..2000 {
        if done == [true, true] {
            break;
        }
        // Both ask before either tells, so their batches are in flight together.
        for w in 0..2 {
            if done[w] {
                continue;
            }
            let s = &mut sessions[w];
            s.observe(study[seen[w]..].to_vec());
            seen[w] = study.len();
            match s.ask(if w == 0 { 3 } else { 2 }).unwrap() {
                Asked::Stop(_) => done[w] = true,
                Asked::Evaluate(batch) => {
                    assert!(!batch.is_empty() && batch.len() <= 3, "{spec}");
                    let distinct: BTreeSet<_> = batch.iter().collect();
                    assert_eq!(
                        distinct.len(),
                        batch.len(),
                        "{spec} asked twice in one batch"
                    );
                    for c in batch {
                        assert!(
                            space.contains(&c),
                            "{spec} proposed an invalid configuration"
                        );
                        assert!(
                            study.iter().all(|r| r.config != c),
                            "{spec}: the session let a recorded configuration through"
                        );
                        if claimed.contains(&c) {
                            s.abandon(std::slice::from_ref(&c), true);
                        } else if study.len() + claimed.len() >= 60 {
                            s.abandon(std::slice::from_ref(&c), false);
                        } else {
                            claimed.insert(c.clone());
                            held[w].push(c);
                        }
                    }
                }
            }
        }
        for w in 0..2 {
            let batch = std::mem::take(&mut held[w]);
            if batch.is_empty() {
                continue;
            }
            let outcomes = ktune_core::Runner::evaluate(&mut runner, &space, &batch).unwrap();
            let s = &mut sessions[w];
            let before = s.records().len();
            s.tell(batch.iter().cloned().zip(outcomes).collect())
                .unwrap();
            for r in &s.records()[before..] {
                claimed.remove(&r.config);
                study.push(r.clone());
            }
        }
    }
    assert_eq!(done, [true, true], "{spec}: the workers never finished");
    let distinct: BTreeSet<_> = study.iter().map(|r| &r.config).collect();
    assert_eq!(
        distinct.len(),
        study.len(),
        "{spec} measured a configuration twice"
    );
    assert_eq!(study.len(), 60, "{spec}: the study's budget was not spent");
}

#[test]
fn every_strategy_shares_a_study_with_foreign_observations_and_batches() {
    for e in REGISTRY {
        check_shared_study(e.name);
    }
}

#[test]
fn random_and_brute_force_cover_the_space_exactly() {
    let size = sparse_space().size() as usize;
    for name in ["random", "brute_force"] {
        assert_eq!(configs(&run_spec(name, 2, size + 50)).len(), size, "{name}");
    }
}

/// Mean over seeds of the best value found in `budget` evaluations.
fn mean_best(spec: &str, budget: usize) -> f64 {
    let seeds = 0..16u64;
    let n = seeds.clone().count() as f64;
    seeds
        .map(|s| {
            run_spec(spec, s, budget)
                .best()
                .and_then(|r| r.outcome.objective())
                .unwrap_or(f64::INFINITY)
        })
        .sum::<f64>()
        / n
}

#[test]
fn optimisers_beat_random_search_on_a_smooth_landscape() {
    // 150 of about 570 valid configurations: enough for population methods (DE starts with
    // 16 x 3 = 48 members) to get past their initial sample.
    let random = mean_best("random", 150);
    for e in REGISTRY
        .iter()
        .filter(|e| !matches!(e.name, "random" | "brute_force"))
    {
        let mut specs = vec![e.name.to_string()];
        if e.options.iter().any(|o| o.name == "surrogate") {
            specs.push(format!("{}:surrogate=cgp", e.name));
        }
        for spec in specs {
            let ours = mean_best(&spec, 150);
            assert!(
                ours < random,
                "{spec}: mean best {ours} is not better than random's {random}"
            );
        }
    }
}

#[test]
fn unknown_names_and_options_are_errors() {
    let e = create("simulated_anealing", &Options::new())
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("unknown strategy `simulated_anealing`") && e.contains("random, brute_force"),
        "{e}"
    );
    for entry in REGISTRY {
        let e = create_spec(&format!("{}:no_such_option=1", entry.name))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no_such_option"), "{}: {e}", entry.name);
        // Every documented option is accepted with its documented default.
        for o in entry.options {
            let spec = format!("{}:{}={}", entry.name, o.name, o.default.trim_matches('"'));
            assert!(
                create_spec(&spec).is_ok(),
                "{spec}: {:?}",
                create_spec(&spec).err()
            );
        }
    }
}

#[test]
fn the_strategy_docs_are_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/strategies.md");
    let generated = super::markdown();
    if std::env::var_os("KTUNE_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/strategies.md is out of date: run `KTUNE_BLESS=1 cargo test -p ktune-strategies the_strategy_docs` and commit it"
    );
}

/// What `ktune bench tune-strategy` searches must be options the strategy documents, and
/// every value it tries must create the strategy.
#[test]
fn every_tunable_value_is_a_valid_documented_option() {
    for e in REGISTRY {
        for t in e.tunable {
            assert!(
                e.options.iter().any(|o| o.name == t.name),
                "{}: tunable `{}` is not a documented option",
                e.name,
                t.name
            );
            assert!(
                t.values.len() >= 2,
                "{}: `{}` has one value",
                e.name,
                t.name
            );
            for v in t.values {
                let value: serde_json::Value = serde_json::from_str(v)
                    .unwrap_or_else(|err| panic!("{}: `{}` = {v}: {err}", e.name, t.name));
                let mut options = Options::new();
                options.insert(t.name.to_string(), value);
                if let Err(err) = (e.create)(&options) {
                    panic!("{}: `{}` = {v} is refused: {err}", e.name, t.name);
                }
            }
        }
    }
}
