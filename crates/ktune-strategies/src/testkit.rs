//! What this crate's tests share beyond [`ktune_core::testing`]: the bowl as a runner, a run
//! on a function of value indices, a run of simulated asynchronous workers, the brute-forced
//! spaces beside the checkout, the strategy time per suggestion on one of them, and the check
//! of a golden file of fixed-seed traces.

use std::path::PathBuf;

use ktune_core::testing::{FnRunner, landscape};
pub(crate) use ktune_core::testing::{constrained, line, observe, small_space, sparse_space};
use ktune_core::{Budget, Rng, Strategy, Tuner, TuningRun};
use ktune_space::SearchSpace;
use rand::SeedableRng;

/// The bowl of [`landscape::bowl`] as a runner (minimised `f`).
pub(crate) fn bowl() -> FnRunner<'static> {
    FnRunner::values(landscape::bowl)
}

/// Runs `strategy` on `space` with objective `f` of the value indices (`None`: a failure).
pub(crate) fn run(
    strategy: &mut dyn Strategy,
    space: &SearchSpace,
    f: impl FnMut(&[u32]) -> Option<f64>,
    budget: usize,
    seed: u64,
) -> TuningRun {
    ktune_core::testing::run(strategy, space, &mut FnRunner::indices(f), budget, seed)
}

/// Runs the strategy of `spec` on `space` with `workers` simulated asynchronous workers on one
/// session (minimising `runner`'s objective) for `budget` evaluations; checks that the run
/// spent the whole budget on distinct configurations, and returns the best value found.
pub(crate) fn best_of_workers(
    spec: &str,
    space: &SearchSpace,
    runner: &mut dyn ktune_core::Runner,
    (budget, workers, seed): (usize, usize, u64),
) -> f64 {
    let (_, strategy) = crate::create_spec(spec).unwrap();
    let session = ktune_core::Session::new(
        space,
        strategy,
        Budget::evaluations(budget),
        ktune_core::Direction::Minimize,
        Rng::seed_from_u64(seed),
    )
    .unwrap();
    let run = ktune_core::simulate_workers(session, runner, workers).unwrap();
    assert_eq!(run.records.len(), budget, "{spec}");
    assert_eq!(run.stop, ktune_core::StopReason::Evaluations, "{spec}");
    let distinct: std::collections::BTreeSet<_> = run.records.iter().map(|r| &r.config).collect();
    assert_eq!(
        distinct.len(),
        budget,
        "{spec}: a configuration proposed twice"
    );
    run.records
        .iter()
        .filter_map(|r| r.outcome.objective())
        .fold(f64::INFINITY, f64::min)
}

/// A brute-forced space of `../shared/data/spaces` (beside the checkout), by file stem.
pub(crate) fn shared_space(stem: &str) -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data/spaces")
        .join(format!("{stem}.json.gz"))
}

/// Mean per-suggestion overhead (strategy time / evaluations) of `spec` on a Kernel Tuner
/// cache, in microseconds, when the file is there.
pub(crate) fn overhead_us(spec: &str, budget: usize, seeds: u64) -> Option<f64> {
    let path = shared_space("dedispersion_A100");
    if !path.exists() {
        return None;
    }
    let sim = ktune_runners::Simulation::open(&path, None, None).ok()?;
    let (mut secs, mut n) = (0.0, 0usize);
    for seed in 0..seeds {
        let (_, mut s) = crate::create_spec(spec).ok()?;
        let mut runner = sim.runner();
        let budget = Budget::evaluations(budget);
        let r = Tuner::new(sim.space(), &mut runner, budget)
            .run(s.as_mut(), &mut Rng::seed_from_u64(seed))
            .ok()?;
        secs += r.strategy_seconds;
        n += r.records.len();
    }
    Some(secs / n as f64 * 1e6)
}

/// Checks `generated`, one case a line (`name: ranks`, or `#` comments), against the golden
/// file `rel` (from the crate's root); with `KTUNE_UPDATE_GOLDEN` set, rewrites the file first.
/// A difference names the cases changed (with the first evaluation that differs), new and gone,
/// and how to regenerate the file with `test`, the test's name.
pub(crate) fn check_golden(rel: &str, generated: &str, test: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    if std::env::var_os("KTUNE_UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}; regenerate it", path.display()));
    if on_disk == generated {
        return;
    }
    fn case(l: &str) -> (&str, &str) {
        l.split_once(": ").unwrap_or((l, ""))
    }
    let old: Vec<(&str, &str)> = on_disk.lines().map(case).collect();
    let new: Vec<(&str, &str)> = generated.lines().map(case).collect();
    let mut changes = Vec::new();
    for (name, ranks) in &new {
        match old.iter().find(|(n, _)| n == name) {
            None => changes.push(format!("{name}: new")),
            Some((_, was)) if was != ranks => {
                let first = was
                    .split(' ')
                    .zip(ranks.split(' '))
                    .position(|(a, b)| a != b)
                    .unwrap_or_else(|| was.split(' ').count().min(ranks.split(' ').count()));
                changes.push(format!("{name}: changed from evaluation {}", first + 1));
            }
            Some(_) => {}
        }
    }
    for (name, _) in &old {
        if !new.iter().any(|(n, _)| n == name) {
            changes.push(format!("{name}: no longer produced"));
        }
    }
    if changes.is_empty() {
        changes.push("the cases' order or the line endings".to_string());
    }
    panic!(
        "{rel} differs: {}; if the change is intended, run `KTUNE_UPDATE_GOLDEN=1 cargo test -p \
         ktune-strategies --release {test}` and commit it",
        changes.join("; ")
    );
}
