//! One configuration for several instances (problem sizes, inputs, devices of one machine):
//! a runner per instance, each configuration measured on every one. The objective is the
//! geometric mean of the instances' objectives, each also reported as its own metric
//! (`time@n512`); a failure on any instance fails the configuration, its reason naming the
//! instance.
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
        }
    }

    /// The combined outcome of one configuration from its outcome on every instance.
    fn combine(&self, outcomes: &[&Outcome]) -> Outcome {
        let mut timings = Timings::default();
        for o in outcomes {
            let t = o.timings();
            timings.compile += t.compile;
            timings.benchmark += t.benchmark;
            timings.verification += t.verification;
            timings.framework += t.framework;
        }
        let mut values = Vec::with_capacity(outcomes.len());
        for (name, o) in self.names.iter().zip(outcomes) {
            match o {
                Outcome::Failed { kind, reason, .. } => {
                    return Outcome::failed(*kind, format!("instance {name}: {reason}"), timings);
                }
                Outcome::Ok { .. } => match o.objective() {
                    Some(v) if v > 0.0 && v.is_finite() => values.push(v),
                    v => {
                        return Outcome::failed(
                            FailureKind::Runtime,
                            format!(
                                "instance {name}: {} has no geometric mean (it needs values above 0)",
                                v.map_or("no value".to_string(), |v| v.to_string())
                            ),
                            timings,
                        );
                    }
                },
            }
        }
        let mean = (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp();
        let mut all = vec![mean];
        all.extend(values);
        Outcome::ok(all, timings)
    }
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
        let mut per_instance: Vec<Vec<Outcome>> = Vec::with_capacity(self.runners.len());
        let last = self.runners.len() - 1;
        for (i, runner) in self.runners.iter_mut().enumerate() {
            match runner.evaluate(space, configs) {
                Ok(outcomes) => per_instance.push(outcomes),
                // Out of time on the last instance: the configurations it finished are
                // measured everywhere. On an earlier one none is.
                Err(CoreError::OutOfTime { outcomes }) => {
                    let finished = if i == last {
                        per_instance.push(outcomes);
                        self.combined(&per_instance)
                    } else {
                        Vec::new()
                    };
                    return Err(CoreError::OutOfTime { outcomes: finished });
                }
                Err(e) => return Err(e),
            }
        }
        Ok(self.combined(&per_instance))
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

impl Instances {
    /// Per configuration measured on every instance (the shortest list), the combined
    /// outcome.
    fn combined(&self, per_instance: &[Vec<Outcome>]) -> Vec<Outcome> {
        let n = per_instance.iter().map(Vec::len).min().unwrap_or(0);
        (0..n)
            .map(|c| {
                let outcomes: Vec<&Outcome> = per_instance.iter().map(|o| &o[c]).collect();
                self.combine(&outcomes)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ktune_core::Direction;
    use ktune_space::Parameter;

    /// A runner whose objective is `scale * x`, failing at `fail`.
    struct Scaled {
        scale: f64,
        fail: Option<i64>,
        metrics: Vec<Metric>,
    }

    impl Runner for Scaled {
        fn name(&self) -> &str {
            "scaled"
        }
        fn metrics(&self) -> &[Metric] {
            &self.metrics
        }
        fn evaluate(
            &mut self,
            space: &SearchSpace,
            configs: &[Configuration],
        ) -> Result<Vec<Outcome>, CoreError> {
            Ok(configs
                .iter()
                .map(|c| {
                    let ktune_space::Value::Int(x) = space.values(c)[0] else {
                        unreachable!()
                    };
                    if Some(*x) == self.fail {
                        Outcome::failed(FailureKind::Runtime, "segfault", Timings::default())
                    } else {
                        Outcome::ok(vec![self.scale * *x as f64], Timings::default())
                    }
                })
                .collect())
        }
    }

    fn scaled(scale: f64, fail: Option<i64>) -> Box<dyn Runner> {
        Box::new(Scaled {
            scale,
            fail,
            metrics: vec![Metric::new("time", Direction::Minimize)],
        })
    }

    #[test]
    fn the_objective_is_the_geometric_mean_and_any_failure_fails() {
        let space = SearchSpace::new(
            vec![Parameter::integer("x", [1, 2, 4]).unwrap()],
            &[] as &[&str],
        )
        .unwrap();
        let mut runner = Instances::new(vec![
            ("small".into(), scaled(1.0, None)),
            ("large".into(), scaled(16.0, Some(4))),
        ]);
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
    }
}
