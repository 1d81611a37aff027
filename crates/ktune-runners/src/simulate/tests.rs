use std::path::PathBuf;

use ktune_core::{Budget, Rng, StopReason, Tuner};
use rand::SeedableRng;

use super::*;

fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/spaces")
        .join(rel)
}

const SMALL: &str = r#"{
"tune_params_keys": ["x", "y"],
"tune_params": {"x": [1, 2, 4], "y": [0, 1]},
"objective": "time",
"cache": {
"1,0": {"x": 1, "y": 0, "time": 3.0, "GFLOP/s": 10.0, "compile_time": 500.0, "benchmark_time": 100.0, "framework_time": 10.0},
"2,0": {"x": 2, "y": 0, "time": "CompilationFailedConfig", "compile_time": 200.0},
"4,0": {"x": 4, "y": 0, "time": 1.0, "GFLOP/s": 30.0, "compile_time": 500.0, "benchmark_time": 100.0},
"4,1": {"x": 4, "y": 1, "time": "RuntimeFailedConfig", "compile_time": 400.0}}
}"#;

fn small(objective: Option<&str>) -> Result<Simulation, SimulationError> {
    let data = ktune_space::spec::read_cache(SMALL, "small.json").unwrap();
    Simulation::from_cache(data, "small", "small.json", objective, None)
}

#[test]
fn replays_values_failures_and_timings() {
    let sim = small(None).unwrap();
    assert_eq!(sim.space().size(), 4);
    let mut values = sim.objective_values();
    values.sort_by(|a, b| a.partial_cmp(b).unwrap());
    assert_eq!(values, vec![None, None, Some(1.0), Some(3.0)]);
    let c = sim
        .space()
        .configuration_of(&[ktune_space::Value::Int(2), ktune_space::Value::Int(0)])
        .unwrap();
    let o = sim.outcome(&c).unwrap();
    assert_eq!(o.failure(), Some(FailureKind::Compile));
    assert!((o.timings().total() - 0.2).abs() < 1e-12);
    let c = sim
        .space()
        .configuration_of(&[ktune_space::Value::Int(1), ktune_space::Value::Int(0)])
        .unwrap();
    assert!((sim.outcome(&c).unwrap().timings().total() - 0.61).abs() < 1e-12);
    // (x=2, y=1) is not in the cache: outside the space.
    assert!(!sim.space().contains(&[1, 1]));
}

#[test]
fn other_objectives_and_their_direction() {
    let sim = small(Some("GFLOP/s")).unwrap();
    assert_eq!(sim.objective().direction, Direction::Maximize);
    let mut runner = sim.runner();
    let mut strategy = ktune_core::testing::InOrder::default();
    let run = Tuner::new(sim.space(), &mut runner, Budget::default())
        .run(&mut strategy, &mut Rng::seed_from_u64(0))
        .unwrap();
    assert_eq!(run.stop, StopReason::SpaceExhausted);
    assert_eq!(run.best().unwrap().outcome.objective(), Some(30.0));
    // The simulated clock is the sum of the recorded times (plus negligible strategy time).
    assert!(
        (run.clock - (0.61 + 0.2 + 0.6 + 0.4)).abs() < 0.01,
        "{}",
        run.clock
    );
}

#[test]
fn a_missing_objective_lists_what_is_there() {
    let e = small(Some("energy")).unwrap_err().to_string();
    ktune_core::testing::assert_mentions(&e, &["no objective `energy`", "GFLOP/s", "time"]);
    assert!(!e.contains("x,"), "parameters are not objectives: {e}");
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let e = Simulation::open(Path::new("/nonexistent/space.json.gz"), None, None)
        .unwrap_err()
        .to_string();
    ktune_core::testing::assert_mentions(&e, &["cannot read", "/nonexistent/space.json.gz"]);
}

#[test]
fn real_caches_replay_with_their_failures() {
    let sim = Simulation::open(&shared("convolution_A100.json.gz"), None, None).unwrap();
    assert_eq!(sim.name(), "convolution_A100");
    assert_eq!(sim.space().size(), 4362);
    let values = sim.objective_values();
    assert_eq!(values.iter().filter(|v| v.is_none()).count(), 155 + 6);
    assert_eq!(sim.objective().direction, Direction::Minimize);
}

#[test]
fn kernel_tuner_1_5_failures_carry_their_kind_in_error() {
    // Kernel Tuner 1.5 writes a failure as `__error__` and records no objective.
    let text = r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2, 3]}, "objective": "time",
"cache": {"1": {"x": 1, "time": 2.0},
"2": {"x": 2, "__error__": "CompilationFailedConfig", "compile_time": 10.0},
"3": {"x": 3, "__error__": "InvalidConfig"}}}"#;
    let data = ktune_space::spec::read_cache(text, "kt15.json").unwrap();
    let sim = Simulation::from_cache(data, "kt15", "kt15.json", None, None).unwrap();
    let kind = |x: i64| {
        let c = sim
            .space()
            .configuration_of(&[ktune_space::Value::Int(x)])
            .unwrap();
        sim.outcome(&c).unwrap().failure()
    };
    assert_eq!(kind(1), None);
    assert_eq!(kind(2), Some(FailureKind::Compile));
    assert_eq!(kind(3), Some(FailureKind::Invalid));
}

/// The simulation passes the runner conformance suite: its two measured configurations,
/// its compile and runtime failures, repeatable values, and no measuring again.
#[test]
fn the_simulation_passes_the_runner_conformance_suite() {
    let sim = small(None).unwrap();
    let space = sim.space().clone();
    let at = |x: i64, y: i64| {
        space
            .configuration_of(&[ktune_space::Value::Int(x), ktune_space::Value::Int(y)])
            .unwrap()
    };
    let fixture = crate::conformance::Fixture {
        succeed: vec![at(1, 0), at(4, 0)],
        fail: vec![
            (at(2, 0), FailureKind::Compile),
            (at(4, 1), FailureKind::Runtime),
        ],
        repeatable: true,
        remeasures: false,
        space: space.clone(),
    };
    crate::conformance::run_all(&mut || Box::new(sim.runner()), &fixture);
}

/// Two devices of the small cache: the second twice as slow at (1, 0), and (4, 0) failing
/// there; as instances, (1, 0) is the geometric mean and (4, 0) fails naming the instance.
#[test]
fn instances_take_the_geometric_mean_and_any_failure() {
    let other_text = SMALL
        .replace("\"time\": 3.0", "\"time\": 12.0")
        .replace("\"time\": 1.0,", "\"time\": \"RuntimeFailedConfig\",");
    let other = Simulation::from_cache(
        ktune_space::spec::read_cache(&other_text, "other.json").unwrap(),
        "other",
        "other.json",
        None,
        None,
    )
    .unwrap();
    let both = Simulation::instances("small_x2", &[small(None).unwrap(), other]).unwrap();
    assert_eq!(both.name(), "small_x2");
    assert_eq!(both.space().size(), 4);
    let at = |x: i64, y: i64| {
        let c = both
            .space()
            .configuration_of(&[ktune_space::Value::Int(x), ktune_space::Value::Int(y)])
            .unwrap();
        both.outcome(&c).unwrap().clone()
    };
    assert!((at(1, 0).objective().unwrap() - 6.0).abs() < 1e-12);
    // Compile and run times add up over the instances.
    assert!((at(1, 0).timings().total() - 1.22).abs() < 1e-12);
    match at(4, 0) {
        Outcome::Failed { kind, reason, .. } => {
            assert_eq!(kind, FailureKind::Runtime);
            assert!(reason.starts_with("instance other: "), "{reason}");
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(at(2, 0).failure(), Some(FailureKind::Compile));
    // Other parameters are no instance of the same configuration.
    let renamed = Simulation::from_cache(
        ktune_space::spec::read_cache(&SMALL.replace("\"y\"", "\"z\""), "z.json").unwrap(),
        "z",
        "z.json",
        None,
        None,
    )
    .unwrap();
    let e = Simulation::instances("bad", &[small(None).unwrap(), renamed])
        .unwrap_err()
        .to_string();
    assert!(e.contains("`small` and `z` have other parameters"), "{e}");
}
