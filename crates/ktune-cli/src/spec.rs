//! A spec opened for running: read and checked, its space built, its runner opened.
//! `ktune tune`, its shared-study workers and `ktune results --rerank` all start here.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Result, bail};
use ktune_core::Runner;
use ktune_problem::{ProblemSpec, RunnerSpec};
use ktune_runners::{CommandRunner, CudaError, CudaRunner};
use ktune_space::SearchSpace;

/// A spec read and its runner opened.
pub(crate) struct Opened {
    pub(crate) space: SearchSpace,
    pub(crate) runner: Box<dyn Runner>,
    /// Configurations to ask for at a time (compiled in parallel).
    pub(crate) jobs: usize,
    /// Set by a runner that can only go on in a new process (a CUDA context poisoned by a
    /// kernel fault): `ktune tune` then restarts itself and resumes from the database.
    pub(crate) fresh_process: Option<Arc<AtomicBool>>,
}

/// Reads the spec at `spec_path` (every section typed and checked, see [`ProblemSpec`]).
pub(crate) fn read_spec(spec_path: &Path) -> Result<ProblemSpec> {
    let problem = ProblemSpec::from_path(spec_path)?;
    for w in &problem.space.warnings {
        eprintln!("warning: {w}");
    }
    Ok(problem)
}

/// Builds the problem's space and opens its runner.
pub(crate) fn open_spec(problem: &ProblemSpec, verbose: bool, max_checks: f64) -> Result<Opened> {
    let spec_path = &problem.path;
    let space = crate::space::build_with_progress(&problem.space, max_checks)?;
    let Some(runner_spec) = &problem.runner else {
        bail!(
            "`{}` has no [runner] section: say how to compile and run a configuration",
            spec_path.display()
        );
    };
    let mut fresh_process: Option<Arc<AtomicBool>> = None;
    let (runner, jobs): (Box<dyn Runner>, usize) = match runner_spec {
        RunnerSpec::Command(runner_spec) => {
            let jobs = runner_spec.jobs;
            (
                Box::new(CommandRunner::new(runner_spec, &space, &problem.dir)?),
                jobs,
            )
        }
        RunnerSpec::Cuda(runner_spec) => {
            let runner = CudaRunner::new(runner_spec, &space, &problem.dir).map_err(|e| {
                let spec_problem = matches!(e, CudaError::Spec(_) | CudaError::Source { .. });
                let e = anyhow::Error::from(e);
                if spec_problem {
                    e.context(format!("the [runner] section of `{}`", spec_path.display()))
                } else {
                    e
                }
            })?;
            if verbose {
                let d = runner.device();
                let (version, library) = runner.compiler();
                eprintln!(
                    "ktune tune: {} (compute capability {}.{}), NVRTC {} ({}), {} compile jobs",
                    d.name,
                    d.compute_capability / 10,
                    d.compute_capability % 10,
                    version.map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                    library.display(),
                    runner.jobs()
                );
            }
            let jobs = runner.jobs();
            fresh_process = Some(runner.fresh_process_needed());
            (Box::new(runner), jobs)
        }
        other => bail!(
            "[runner] kind = \"{}\" in `{}` cannot be tuned by this ktune",
            other.kind(),
            spec_path.display()
        ),
    };
    Ok(Opened {
        space,
        runner,
        jobs,
        fresh_process,
    })
}
