//! The runner conformance suite: what every [`Runner`] must do, whatever it measures.
//!
//! Each runner's tests call [`run_all`] with a [`Fixture`]: a space, configurations the
//! runner measures, and configurations that fail in known ways. The suite checks the
//! contract the [`Tuner`](ktune_core::Tuner) and the workers of a shared study rely on:
//! exactly one outcome per configuration, in order; failures are outcomes with a reason,
//! never errors; an empty batch is nothing; a measurement is repeatable where the runner says
//! so; an incumbent far better than anything does not turn measurements into failures; a
//! spent time budget ends a batch as out of time (or is left to the tuner), and the runner
//! works again once there is time; `remeasure` either measures in order or refuses. A runner
//! written outside this crate can run the same suite.

use ktune_core::{CoreError, Direction, FailureKind, Outcome, Runner};
use ktune_space::{Configuration, SearchSpace};

/// What a runner is tested on.
pub struct Fixture {
    /// The space the configurations belong to.
    pub space: SearchSpace,
    /// Configurations the runner measures successfully (at least one).
    pub succeed: Vec<Configuration>,
    /// Configurations that fail, and how.
    pub fail: Vec<(Configuration, FailureKind)>,
    /// Whether measuring a configuration twice gives the same objective value (a simulation,
    /// a program that prints a fixed value).
    pub repeatable: bool,
    /// Whether the runner measures configurations again ([`Runner::remeasure`]).
    pub remeasures: bool,
}

/// Runs every check on fresh runners from `make`.
pub fn run_all<'a>(make: &mut dyn FnMut() -> Box<dyn Runner + 'a>, fixture: &Fixture) {
    assert!(
        !fixture.succeed.is_empty(),
        "the fixture needs a configuration that succeeds"
    );
    names_and_metrics(make().as_mut());
    an_empty_batch_is_nothing(make().as_mut(), fixture);
    one_outcome_per_configuration_in_order(make().as_mut(), fixture);
    measurements_repeat(make().as_mut(), fixture);
    an_incumbent_does_not_make_failures(make().as_mut(), fixture);
    no_time_left_ends_the_batch_cleanly(make().as_mut(), fixture);
    remeasures_in_order_or_refuses(make().as_mut(), fixture);
}

/// A name, at least one metric (the first is the objective), no two metrics of one name,
/// and a device name that says something where there is one.
pub fn names_and_metrics(runner: &mut dyn Runner) {
    let name = runner.name().to_string();
    assert!(!name.trim().is_empty(), "a runner needs a name");
    let metrics = runner.metrics();
    assert!(!metrics.is_empty(), "{name}: no metrics");
    for (i, m) in metrics.iter().enumerate() {
        assert!(!m.name.trim().is_empty(), "{name}: metric {i} has no name");
        assert!(
            metrics[..i].iter().all(|o| o.name != m.name),
            "{name}: metric `{}` twice",
            m.name
        );
    }
    if let Some(device) = runner.device() {
        assert!(!device.trim().is_empty(), "{name}: an empty device name");
    }
}

/// An empty batch gives no outcomes, and no error.
pub fn an_empty_batch_is_nothing(runner: &mut dyn Runner, f: &Fixture) {
    let name = runner.name().to_string();
    let out = runner
        .evaluate(&f.space, &[])
        .unwrap_or_else(|e| panic!("{name}: an empty batch: {e}"));
    assert!(out.is_empty(), "{name}: {out:?}");
}

/// The fixture's configurations interleaved (each failure between two successes) and
/// reversed: one outcome per configuration, each in its place, the successes with a finite
/// value per metric, the failures of their kind with a reason.
pub fn one_outcome_per_configuration_in_order(runner: &mut dyn Runner, f: &Fixture) {
    let name = runner.name().to_string();
    let mut batch: Vec<(Configuration, Option<FailureKind>)> = Vec::new();
    let mut fails = f.fail.iter();
    for c in &f.succeed {
        batch.push((c.clone(), None));
        if let Some((c, kind)) = fails.next() {
            batch.push((c.clone(), Some(*kind)));
        }
    }
    batch.extend(fails.map(|(c, k)| (c.clone(), Some(*k))));
    batch.reverse();
    let configs: Vec<Configuration> = batch.iter().map(|(c, _)| c.clone()).collect();
    let out = runner
        .evaluate(&f.space, &configs)
        .unwrap_or_else(|e| panic!("{name}: failing configurations ended the batch: {e}"));
    assert_eq!(
        out.len(),
        configs.len(),
        "{name}: one outcome per configuration"
    );
    let metrics = runner.metrics().len();
    for ((c, expected), o) in batch.iter().zip(&out) {
        match (expected, o) {
            (None, Outcome::Ok { values, .. }) => {
                assert_eq!(values.len(), metrics, "{name}: {c:?}: a value per metric");
                assert!(
                    values[0].is_finite(),
                    "{name}: {c:?}: objective {}",
                    values[0]
                );
            }
            (
                Some(kind),
                Outcome::Failed {
                    kind: got, reason, ..
                },
            ) => {
                assert_eq!(got, kind, "{name}: {c:?}: {reason}");
                assert!(
                    !reason.trim().is_empty(),
                    "{name}: {c:?}: a failure without a reason"
                );
            }
            (expected, o) => panic!("{name}: {c:?}: expected {expected:?}, got {o:?}"),
        }
    }
}

/// Where the fixture says so, a configuration measured again gives the same objective.
pub fn measurements_repeat(runner: &mut dyn Runner, f: &Fixture) {
    if !f.repeatable {
        return;
    }
    let name = runner.name().to_string();
    let first = runner.evaluate(&f.space, &f.succeed).unwrap();
    let again = runner.evaluate(&f.space, &f.succeed).unwrap();
    for ((c, a), b) in f.succeed.iter().zip(&first).zip(&again) {
        assert_eq!(a.objective(), b.objective(), "{name}: {c:?}");
    }
}

/// Told of an incumbent ten times better than any of its configurations, a runner that
/// cuts clearly worse measurements short still measures them: a success stays a success.
pub fn an_incumbent_does_not_make_failures(runner: &mut dyn Runner, f: &Fixture) {
    let name = runner.name().to_string();
    let plain = runner.evaluate(&f.space, &f.succeed).unwrap();
    let objectives: Vec<f64> = plain.iter().filter_map(Outcome::objective).collect();
    assert_eq!(objectives.len(), f.succeed.len(), "{name}: {plain:?}");
    let incumbent = match runner.metrics()[0].direction {
        Direction::Minimize => objectives.iter().copied().fold(f64::INFINITY, f64::min) / 10.0,
        Direction::Maximize => objectives.iter().copied().fold(f64::NEG_INFINITY, f64::max) * 10.0,
    };
    runner.set_incumbent(Some(incumbent));
    let out = runner.evaluate(&f.space, &f.succeed).unwrap();
    runner.set_incumbent(None);
    for (c, o) in f.succeed.iter().zip(&out) {
        assert!(
            o.objective().is_some_and(f64::is_finite),
            "{name}: {c:?} with incumbent {incumbent}: {o:?}"
        );
    }
}

/// With no time left a batch either runs whole (a runner that leaves the budget to the
/// tuner) or ends as out of time with fewer outcomes, never another error; with time
/// again, the same batch runs whole.
pub fn no_time_left_ends_the_batch_cleanly(runner: &mut dyn Runner, f: &Fixture) {
    let name = runner.name().to_string();
    runner.set_time_left(Some(0.0));
    match runner.evaluate(&f.space, &f.succeed) {
        Ok(out) => assert_eq!(out.len(), f.succeed.len(), "{name}"),
        Err(CoreError::OutOfTime { outcomes }) => {
            assert!(outcomes.len() < f.succeed.len(), "{name}: {outcomes:?}");
        }
        Err(e) => panic!("{name}: with no time left: {e}"),
    }
    runner.set_time_left(None);
    let out = runner
        .evaluate(&f.space, &f.succeed)
        .unwrap_or_else(|e| panic!("{name}: after the time ran out: {e}"));
    assert!(
        out.iter().all(|o| o.objective().is_some()),
        "{name}: {out:?}"
    );
}

/// `remeasure` gives one outcome per configuration, in order (the successes measured
/// again), or, for a runner that cannot, refuses with an error that names it.
pub fn remeasures_in_order_or_refuses(runner: &mut dyn Runner, f: &Fixture) {
    let name = runner.name().to_string();
    let first = runner.evaluate(&f.space, &f.succeed).unwrap();
    match runner.remeasure(&f.space, &f.succeed, 2) {
        Ok(out) => {
            assert!(
                f.remeasures,
                "{name}: remeasured, but the fixture says it cannot"
            );
            assert_eq!(out.len(), f.succeed.len(), "{name}");
            for ((c, a), b) in f.succeed.iter().zip(&first).zip(&out) {
                assert!(
                    b.objective().is_some_and(f64::is_finite),
                    "{name}: {c:?}: {b:?}"
                );
                if f.repeatable {
                    assert_eq!(a.objective(), b.objective(), "{name}: {c:?}");
                }
            }
        }
        Err(CoreError::Runner {
            runner: who,
            message,
        }) => {
            assert!(!f.remeasures, "{name}: refused to remeasure: {message}");
            assert_eq!(who, name);
            assert!(!message.trim().is_empty());
        }
        Err(e) => panic!("{name}: remeasure: {e}"),
    }
}
