//! One configuration for several instances (problem sizes, inputs, devices of one machine):
//! a runner per instance, each configuration measured on every one. The objective is the
//! geometric mean of the instances' objectives, each also reported as its own metric
//! (`time@n512`, kept among what the runner observed too, so `ktune results` shows it); a
//! failure on any instance fails the configuration, its reason naming the instance.
//!
//! Why the plain geometric mean: it orders configurations exactly as the geometric mean of
//! each instance's value relative to a fixed reference (its best known, or its default's)
//! does, since the references' product is a constant factor, and unlike "relative to the best
//! known" it does not change as the study finds better configurations: stored results stay
//! comparable, and a resumed study reads them as they were.

use ktune_core::{CoreError, FailureKind, Metric, Outcome, Runner, Timings};
use ktune_space::{Configuration, SearchSpace};

/// A runner per instance, as one runner.
pub struct Instances {
    names: Vec<String>,
    runners: Vec<Box<dyn Runner>>,
    metrics: Vec<Metric>,
    /// Set when the process can no longer measure (shared by runners of one GPU context:
    /// a kernel fault on one instance poisons all): no instance runs after it is set.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Instances {
    /// The instances, each a name and the runner that measures on it; the objective is the
    /// first runner's (all measure the same metric).
    ///
    /// # Panics
    /// Without instances (a caller's mistake: the spec reader refuses an empty list).
    pub fn new(instances: Vec<(String, Box<dyn Runner>)>) -> Instances {
        let objective = instances
            .first()
            .expect("at least one instance")
            .1
            .metrics()[0]
            .clone();
        let mut metrics = vec![objective.clone()];
        metrics.extend(
            instances
                .iter()
                .map(|(n, _)| Metric::new(format!("{}@{n}", objective.name), objective.direction)),
        );
        let (names, runners) = instances.into_iter().unzip();
        Instances {
            names,
            runners,
            metrics,
            stop: None,
        }
    }

    /// No instance is measured once `flag` is set (the runners' "fresh process needed" flag,
    /// when they share one device context): the configurations finished so far are
    /// returned, the rest left for a new process.
    pub fn stop_when(mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// The outcomes of the configurations finished when measuring ended early: those that
    /// failed already, or that every instance measured, up to the first one left unfinished.
    fn finished(&self, outcomes: &[Vec<Outcome>]) -> Vec<Outcome> {
        let done = |o: &Vec<Outcome>| {
            o.iter().any(|o| o.objective().is_none()) || o.len() == self.runners.len()
        };
        outcomes
            .iter()
            .take_while(|o| done(o))
            .map(|o| self.combine(o))
            .collect()
    }

    /// The combined outcome of one configuration from its outcomes on the instances (all of
    /// them, or up to the one it failed on).
    fn combine(&self, outcomes: &[Outcome]) -> Outcome {
        match combine(self.names.iter().map(String::as_str).zip(outcomes)) {
            Err(failed) => failed,
            Ok((mean, values, timings)) => {
                // Also as observed: stores and exports keep those by name.
                let observed = self.metrics[1..]
                    .iter()
                    .zip(&values)
                    .map(|(m, v)| (m.name.clone(), serde_json::json!(v)))
                    .collect();
                let mut all = vec![mean];
                all.extend(values);
                Outcome::ok(all, timings).with_observed(observed)
            }
        }
    }
}

/// One configuration's outcomes on its instances (named, in order) combined: the geometric
/// mean of their objectives, each one's value, and their times summed; or, at the first that
/// failed or has no value above 0, that failure with the times so far, its reason naming the
/// instance. Shared with the simulation of instances ([`crate::Simulation::instances`]).
pub(crate) fn combine<'a>(
    instances: impl IntoIterator<Item = (&'a str, &'a Outcome)>,
) -> Result<(f64, Vec<f64>, Timings), Outcome> {
    let mut timings = Timings::default();
    let mut values = Vec::new();
    for (name, o) in instances {
        let t = o.timings();
        timings.compile += t.compile;
        timings.benchmark += t.benchmark;
        timings.verification += t.verification;
        timings.framework += t.framework;
        match o {
            Outcome::Failed { kind, reason, .. } => {
                return Err(Outcome::failed(
                    *kind,
                    format!("instance {name}: {reason}"),
                    timings,
                ));
            }
            Outcome::Ok { .. } => match o.objective() {
                Some(v) if v > 0.0 && v.is_finite() => values.push(v),
                v => {
                    return Err(Outcome::failed(
                        FailureKind::Runtime,
                        format!(
                            "instance {name}: {} has no geometric mean (it needs values above 0)",
                            v.map_or("no value".to_string(), |v| v.to_string())
                        ),
                        timings,
                    ));
                }
            },
        }
    }
    let mean = (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp();
    Ok((mean, values, timings))
}

impl Runner for Instances {
    fn name(&self) -> &str {
        "instances"
    }

    fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    fn evaluate(
        &mut self,
        space: &SearchSpace,
        configs: &[Configuration],
    ) -> Result<Vec<Outcome>, CoreError> {
        // Per configuration, its outcome on each instance so far; a configuration that failed
        // on one instance is not run on the next (it has failed already).
        let mut outcomes: Vec<Vec<Outcome>> = vec![Vec::new(); configs.len()];
        for i in 0..self.runners.len() {
            let alive: Vec<usize> = (0..configs.len())
                .filter(|&c| outcomes[c].iter().all(|o| o.objective().is_some()))
                .collect();
            if alive.is_empty() {
                break;
            }
            if self
                .stop
                .as_ref()
                .is_some_and(|f| f.load(std::sync::atomic::Ordering::SeqCst))
            {
                return Err(CoreError::RunnerStopped {
                    runner: "instances".into(),
                    message: format!(
                        "the device cannot be used again in this process (before instance {}); a new process resumes",
                        self.names[i]
                    ),
                    outcomes: self.finished(&outcomes),
                });
            }
            let batch: Vec<Configuration> = alive.iter().map(|&c| configs[c].clone()).collect();
            let (measured, ended) = match self.runners[i].evaluate(space, &batch) {
                Ok(o) => (o, None),
                Err(CoreError::OutOfTime { outcomes }) => (outcomes, Some(None)),
                Err(CoreError::RunnerStopped {
                    runner,
                    message,
                    outcomes,
                }) => (outcomes, Some(Some((runner, message)))),
                Err(e) => return Err(e),
            };
            for (&c, o) in alive.iter().zip(measured) {
                outcomes[c].push(o);
            }
            match ended {
                None => {}
                Some(None) => {
                    return Err(CoreError::OutOfTime {
                        outcomes: self.finished(&outcomes),
                    });
                }
                Some(Some((runner, message))) => {
                    return Err(CoreError::RunnerStopped {
                        runner,
                        message: format!("instance {}: {message}", self.names[i]),
                        outcomes: self.finished(&outcomes),
                    });
                }
            }
        }
        Ok(outcomes.iter().map(|o| self.combine(o)).collect())
    }

    /// Not passed on: the instances' values are on other scales than their geometric mean.
    fn set_incumbent(&mut self, _best: Option<f64>) {}

    fn set_time_left(&mut self, seconds: Option<f64>) {
        for r in &mut self.runners {
            r.set_time_left(seconds);
        }
    }

    fn device(&self) -> Option<String> {
        self.runners[0].device()
    }

    fn warnings(&self) -> Vec<String> {
        self.names
            .iter()
            .zip(&self.runners)
            .flat_map(|(n, r)| {
                r.warnings()
                    .into_iter()
                    .map(move |w| format!("instance {n}: {w}"))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::Direction;
    use ktune_space::Parameter;

    /// A runner whose objective is `scale * x`, failing at `fail`; it counts what it runs.
    fn scaled(
        scale: f64,
        fail: Option<i64>,
    ) -> (
        Box<dyn Runner>,
        std::sync::Arc<std::sync::atomic::AtomicUsize>,
    ) {
        let runs = std::sync::Arc::<std::sync::atomic::AtomicUsize>::default();
        let counted = std::sync::Arc::clone(&runs);
        let runner = ktune_core::testing::FnRunner::outcomes(move |space, c| {
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let ktune_space::Value::Int(x) = space.values(c)[0] else {
                unreachable!()
            };
            if Some(*x) == fail {
                Outcome::failed(FailureKind::Runtime, "segfault", Timings::default())
            } else {
                Outcome::ok(vec![scale * *x as f64], Timings::default())
            }
        })
        .metric("time", Direction::Minimize);
        (Box::new(runner), runs)
    }

    #[test]
    fn the_objective_is_the_geometric_mean_and_any_failure_fails() {
        let space = SearchSpace::new(
            vec![Parameter::integer("x", [1, 2, 4]).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        let (small, _) = scaled(1.0, Some(1));
        let (large, large_runs) = scaled(16.0, Some(4));
        let mut runner = Instances::new(vec![("small".into(), small), ("large".into(), large)]);
        let names: Vec<&str> = runner.metrics().iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["time", "time@small", "time@large"]);
        let configs: Vec<Configuration> = space.iter().collect();
        let out = runner.evaluate(&space, &configs).unwrap();
        // x = 2: sqrt(2 * 32) = 8, and each instance's value.
        match &out[1] {
            Outcome::Ok { values, .. } => {
                assert!((values[0] - 8.0).abs() < 1e-12, "{values:?}");
                assert_eq!(values[1..], [2.0, 32.0]);
            }
            o => panic!("{o:?}"),
        }
        match &out[2] {
            Outcome::Failed { reason, .. } => assert_eq!(reason, "instance large: segfault"),
            o => panic!("{o:?}"),
        }
        // x = 1 failed on the first instance: not run on the second.
        match &out[0] {
            Outcome::Failed { reason, .. } => assert_eq!(reason, "instance small: segfault"),
            o => panic!("{o:?}"),
        }
        assert_eq!(large_runs.load(std::sync::atomic::Ordering::Relaxed), 2);
    }

    #[test]
    fn a_runner_that_stops_ends_the_batch_with_what_every_instance_finished() {
        let space = SearchSpace::new(
            vec![Parameter::integer("x", [1, 2, 4]).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        let flag = std::sync::Arc::<std::sync::atomic::AtomicBool>::default();
        let (small, _) = scaled(4.0, None);
        // Fails at x = 2 and stops there, setting the flag, as a CUDA runner does after a
        // kernel fault.
        let stop = std::sync::Arc::clone(&flag);
        let large = ktune_core::testing::FnRunner::outcomes(move |space, c| {
            let ktune_space::Value::Int(x) = space.values(c)[0] else {
                unreachable!()
            };
            if *x == 2 {
                Outcome::failed(FailureKind::Runtime, "kernel fault", Timings::default())
            } else {
                Outcome::ok(vec![*x as f64], Timings::default())
            }
        })
        .metric("time", Direction::Minimize)
        .on_batch(move |_, mut outcomes| {
            match outcomes.iter().position(|o| o.objective().is_none()) {
                Some(i) => {
                    outcomes.truncate(i + 1);
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    Err(CoreError::RunnerStopped {
                        runner: "faulting".into(),
                        message: "the GPU needs a new process".into(),
                        outcomes,
                    })
                }
                None => Ok(outcomes),
            }
        });
        let large = Box::new(large);
        let mut runner = Instances::new(vec![("small".into(), small), ("large".into(), large)])
            .stop_when(std::sync::Arc::clone(&flag));
        let configs: Vec<Configuration> = space.iter().collect();
        let Err(CoreError::RunnerStopped {
            message, outcomes, ..
        }) = runner.evaluate(&space, &configs)
        else {
            panic!("the runner stopped")
        };
        assert!(message.starts_with("instance large: "), "{message}");
        // x = 1 on both instances: sqrt(4 * 1); x = 2 failed on the large one; x = 4 was
        // measured on the small one only, and is left for the new process.
        assert_eq!(outcomes.len(), 2, "{outcomes:?}");
        assert_eq!(outcomes[0].objective(), Some(2.0));
        match &outcomes[1] {
            Outcome::Failed { reason, .. } => assert_eq!(reason, "instance large: kernel fault"),
            o => panic!("{o:?}"),
        }
        // With the flag set, nothing runs again in this process.
        let Err(CoreError::RunnerStopped { outcomes, .. }) = runner.evaluate(&space, &configs[2..])
        else {
            panic!("stopped before the first instance")
        };
        assert!(outcomes.is_empty());
    }
}
