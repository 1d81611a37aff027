//! The machinery shared by the runners of compiled kernels ([`crate::cuda`] and
//! [`crate::opencl`]): from a configuration to a launch ([`launch`]: block and grid
//! dimensions, defines, the way Kernel Tuner derives them), the arguments on the host and
//! the comparison of outputs ([`data`]), the builds on worker threads beside the measurements
//! (`pipeline`), the `[runner]` keys both read ([`spec`]), the
//! guard against a wrong expected output ([`wrong_outputs`]), and how a batch ends and a
//! re-measured configuration becomes an outcome. Nothing here needs a device.

pub mod data;
pub mod launch;
pub(crate) mod pipeline;
pub mod spec;
pub mod wrong_outputs;

use ktune_core::{CoreError, Direction, FailureKind, Metric, Outcome, Samples, Statistic, Timings};
use ktune_space::{Configuration, SearchSpace, Value};

use data::{HostArg, compare};
use spec::{KernelObjective, VerifySpec};
use wrong_outputs::WrongOutputs;

/// How a run checks outputs: the tolerances `(atol, rtol)` and, unless every output has an
/// expected file, the reference configuration whose outputs are the expected ones.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checking {
    pub(crate) tolerances: Option<(f64, f64)>,
    pub(crate) reference: Option<Configuration>,
}

impl Checking {
    /// Counts a batch's outcomes in `wrong`; once the outputs are judged wrong (see
    /// [`WrongOutputs`]), the message that stops the run, naming where the expected output
    /// came from.
    pub(crate) fn wrong_outputs_stop(
        &self,
        wrong: &mut WrongOutputs,
        outcomes: &[Outcome],
        space: &SearchSpace,
    ) -> Option<String> {
        if !wrong.observe(outcomes) {
            return None;
        }
        let expected = match &self.reference {
            Some(r) => format!(
                "the reference configuration's output ({})",
                space.describe(r)
            ),
            None => "the expected output".to_string(),
        };
        Some(wrong.message(&expected))
    }

    /// Checks the arguments (no two of one name) and `[runner.verify]` against them; outputs
    /// are verified where `[runner.verify]` is given or some output has an expected file.
    pub(crate) fn new(
        verify: Option<&VerifySpec>,
        args: &[HostArg],
        space: &SearchSpace,
    ) -> Result<Checking, String> {
        for (i, a) in args.iter().enumerate() {
            if args[..i].iter().any(|b| b.name() == a.name()) {
                return Err(format!("[runner] two arguments are called `{}`", a.name()));
            }
        }
        let outputs = args
            .iter()
            .filter(|a| matches!(a, HostArg::Array { output: true, .. }))
            .count();
        let expected_files = args.iter().any(|a| {
            matches!(
                a,
                HostArg::Array {
                    expected: Some(_),
                    ..
                }
            )
        });
        let tolerances = match (verify, expected_files) {
            (Some(v), _) => Some((v.atol, v.rtol)),
            (None, true) => Some((1e-6, 0.0)),
            (None, false) => None,
        };
        if let Some((atol, rtol)) = tolerances {
            if outputs == 0 {
                return Err(
                    "[runner.verify]: no argument has `output = true`, so there is nothing to verify"
                        .into(),
                );
            }
            if !(atol >= 0.0 && rtol >= 0.0) {
                return Err(format!(
                    "[runner.verify]: tolerances must be at least 0 (atol = {atol}, rtol = {rtol})"
                ));
            }
        }
        let needs_reference = tolerances.is_some()
            && args.iter().any(|a| {
                matches!(
                    a,
                    HostArg::Array {
                        output: true,
                        expected: None,
                        ..
                    }
                )
            });
        let reference = if needs_reference {
            Some(reference_configuration(
                verify.and_then(|v| v.reference.as_ref()),
                space,
            )?)
        } else {
            None
        };
        Ok(Checking {
            tolerances,
            reference,
        })
    }

    /// Compares `outputs` (argument index, contents) with the `expected` ones; `Err` says
    /// which differs and how.
    pub(crate) fn compare(
        &self,
        args: &[HostArg],
        expected: &[Option<Vec<u8>>],
        outputs: &[(usize, Vec<u8>)],
    ) -> Result<(), String> {
        let Some((atol, rtol)) = self.tolerances else {
            return Ok(());
        };
        for (i, got) in outputs {
            let (HostArg::Array { name, dtype, .. }, Some(want)) = (&args[*i], &expected[*i])
            else {
                continue;
            };
            if let Some(m) = compare(*dtype, got, want, atol, rtol) {
                return Err(format!("output `{name}`: {m}"));
            }
        }
        Ok(())
    }
}

/// The expected contents per argument that the spec gives (outputs with an expected file).
pub(crate) fn expected_outputs(args: &[HostArg]) -> Vec<Option<Vec<u8>>> {
    args.iter()
        .map(|a| match a {
            HostArg::Array {
                expected: Some(e), ..
            } => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// The metrics every successful outcome of a kernel runner reports: the objectives, the
/// kernel time in milliseconds (when it is not one of them), its standard deviation.
pub(crate) fn metrics(objectives: &[KernelObjective]) -> Vec<Metric> {
    let mut metrics: Vec<Metric> = objectives
        .iter()
        .map(|o| Metric::new(o.name(), o.direction()))
        .collect();
    if !objectives.contains(&KernelObjective::Time) {
        metrics.push(Metric::new("time", Direction::Minimize));
    }
    metrics.push(Metric::new("time stdev", Direction::Minimize));
    metrics
}

/// An outcome's values, in the order of [`metrics`], from the mean kernel time and its
/// spread in milliseconds, the throughput and the power measured (watts, joules per
/// launch); `Err` names the objective that could not be computed.
pub(crate) fn values(
    objectives: &[KernelObjective],
    mean: f64,
    stdev: f64,
    gflops: Option<f64>,
    power: Option<(f64, f64)>,
) -> Result<Vec<f64>, String> {
    let mut values = Vec::with_capacity(objectives.len() + 2);
    for &o in objectives {
        let v = match o {
            KernelObjective::Time => Some(mean),
            KernelObjective::Gflops => gflops,
            KernelObjective::Energy => power.map(|(_, joules)| joules),
            KernelObjective::GflopsPerWatt => gflops.zip(power).map(|(g, (w, _))| g / w),
        };
        match v {
            Some(v) if v.is_finite() => values.push(v),
            _ => {
                return Err(format!(
                    "could not compute {} (GFLOP/s {gflops:?}, power {:?} W)",
                    o.name(),
                    power.map(|(w, _)| w)
                ));
            }
        }
    }
    if !objectives.contains(&KernelObjective::Time) {
        values.push(mean);
    }
    values.push(stdev);
    Ok(values)
}

/// The outcome of a configuration measured again in `values` (milliseconds per launch), each
/// sample `runs` launches long, taking `benchmark` seconds of the rounds.
pub(crate) fn remeasured(
    objectives: &[KernelObjective],
    statistic: Statistic,
    values: Vec<f64>,
    runs: usize,
    benchmark: f64,
    flops: Option<f64>,
) -> Outcome {
    let samples = Samples {
        values,
        runs_per_sample: runs,
        aborted: false,
        statistic,
    };
    let s = samples.summary();
    let timings = Timings {
        benchmark,
        ..Timings::default()
    };
    let gflops = flops.map(|f| f / (s.value() * 1e-3) / 1e9);
    match self::values(objectives, s.value(), s.stdev, gflops, None) {
        Ok(values) => Outcome::ok(values, timings).with_samples(samples),
        Err(m) => Outcome::failed(FailureKind::Runtime, m, timings),
    }
}

/// The error of a runner that stopped measuring (`message` says why), with the outcomes it
/// measured before.
pub(crate) fn stopped(runner: &str, message: String, outcomes: Vec<Outcome>) -> CoreError {
    CoreError::RunnerStopped {
        runner: runner.into(),
        message,
        outcomes,
    }
}

/// What an evaluation of `asked` configurations returns: every outcome, or those measured
/// before the runner stopped (`broken` says why) or the budget's time ran out.
pub(crate) fn batch_result(
    runner: &str,
    outcomes: Vec<Outcome>,
    asked: usize,
    broken: Option<&String>,
) -> Result<Vec<Outcome>, CoreError> {
    match broken {
        Some(m) if outcomes.len() < asked => Err(stopped(runner, m.clone(), outcomes)),
        _ if outcomes.len() < asked => Err(CoreError::OutOfTime { outcomes }),
        _ => Ok(outcomes),
    }
}

/// The best so far as a kernel time for a launch of `flops` operations (the unit of the
/// samples, for early abort), when the first objective is a time or a rate of the time.
pub(crate) fn incumbent_time(first: KernelObjective, best: f64, flops: Option<f64>) -> Option<f64> {
    match first {
        KernelObjective::Time => Some(best),
        KernelObjective::Gflops => flops.filter(|_| best > 0.0).map(|f| f / (best * 1e9) * 1e3),
        KernelObjective::Energy | KernelObjective::GflopsPerWatt => None,
    }
}

/// The configuration a run checks first (the reference, the arguments): the default one where
/// it is in the space, else the first (Kernel Tuner's `tune_params` declare no default).
pub(crate) fn configuration_to_check(space: &SearchSpace) -> Option<Configuration> {
    match space.default_configuration() {
        Some(config) if space.contains(&config) => Some(config),
        _ => (space.size() > 0).then(|| space.configuration(0)),
    }
}

/// The reference configuration: the default configuration with the values `table` gives.
pub(crate) fn reference_configuration(
    table: Option<&toml::Table>,
    space: &SearchSpace,
) -> Result<Configuration, String> {
    let mut config =
        configuration_to_check(space).ok_or_else(|| "the search space is empty".to_string())?;
    let Some(table) = table else {
        return Ok(config);
    };
    for (name, v) in table {
        let Some(p) = space.param_index(name) else {
            let names: Vec<&str> = space.params().iter().map(|p| p.name()).collect();
            return Err(format!(
                "[runner.verify] reference: `{name}` is not a parameter; parameters: {}",
                names.join(", ")
            ));
        };
        let wanted = match v {
            toml::Value::Integer(i) => Some(Value::Int(*i)),
            toml::Value::Float(x) => Some(Value::Real(*x)),
            toml::Value::Boolean(b) => Some(Value::Bool(*b)),
            toml::Value::String(s) => Some(Value::Str(s.clone())),
            _ => None,
        };
        let values = space.params()[p].values();
        let index = values.iter().position(|x| match (x, &wanted) {
            (a, Some(b)) if a == b => true,
            (Value::Real(a), Some(Value::Int(b))) => *a == *b as f64,
            _ => false,
        });
        let Some(index) = index else {
            return Err(format!(
                "[runner.verify] reference: {name} = {v} is not one of its values"
            ));
        };
        config[p] = index as u32;
    }
    if !space.contains(&config) {
        return Err(format!(
            "[runner.verify] reference: {} violates the constraints",
            space.describe(&config)
        ));
    }
    Ok(config)
}

/// The program text of one configuration: its defines as `#define` lines, as Kernel Tuner
/// puts them, then `#line 1 "file"` (so that the compiler's messages keep the file's own
/// line numbers) and the source.
pub(crate) fn source_with_defines(source: &str, file: &str, launch: &launch::Launch) -> String {
    let mut text = String::with_capacity(source.len() + 40 * launch.defines.len());
    for (name, value) in &launch.defines {
        text.push_str(&format!("#define {name} {value}\n"));
    }
    text.push_str(&format!("#line 1 \"{file}\"\n"));
    text.push_str(source);
    text
}

/// A source file's name as a compiler message shows it (`fallback` where the path has none).
pub(crate) fn file_name(path: &std::path::Path, fallback: &str) -> String {
    path.file_name()
        .map(|f| f.to_string_lossy().replace(['"', '\\'], "_"))
        .unwrap_or_else(|| fallback.into())
}

/// The last lines of a compiler log (the errors are at its end).
pub(crate) fn tail(log: &str) -> String {
    const MAX: usize = 4000;
    if log.len() <= MAX {
        return log.to_string();
    }
    let mut start = log.len() - MAX;
    while !log.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &log[start..])
}
