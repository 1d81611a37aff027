//! The problem's runner opened: the `[runner]` section made into a [`Runner`] for its space,
//! one runner per `[[instance]]` where there are instances.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use ktune_core::Runner;
use ktune_runners::{CommandRunner, CudaError, CudaRunner, OpenClError, OpenClRunner};
use ktune_space::SearchSpace;

use crate::{InstanceSpec, ProblemError, ProblemSpec, RunnerSpec};

/// A runner opened for a problem's space.
pub struct OpenedRunner {
    /// The runner.
    pub runner: Box<dyn Runner>,
    /// Configurations to ask for at a time (compiled in parallel).
    pub jobs: usize,
    /// Set by a runner that can only go on in a new process (a CUDA context poisoned by a
    /// kernel fault): the command line then restarts itself and resumes from its database.
    pub fresh_process: Option<Arc<AtomicBool>>,
    /// What it measures on and with, for the front end to show (the CUDA runner's GPU,
    /// NVRTC and compile jobs).
    pub description: Option<String>,
}

impl ProblemSpec {
    /// Opens the `[runner]` section's runner for `space` (which may need a compiler or a
    /// GPU); errors name the section and the file where the section is at fault.
    pub fn open_runner(&self, space: &SearchSpace) -> Result<OpenedRunner, ProblemError> {
        let file = self.path.display().to_string();
        let Some(spec) = &self.runner else {
            return Err(ProblemError::NoRunner { file });
        };
        if self.instances.is_empty() {
            return self.open_one(spec, space, None);
        }
        // One runner per instance, as one runner; runners of one device share the flag
        // that a new process is needed (a fault on one poisons the context of all).
        let flag = Arc::<AtomicBool>::default();
        let mut runners: Vec<(String, Box<dyn Runner>)> = Vec::new();
        // The first instance's jobs, device and whether it needs a new process after a fault.
        let mut first: Option<(usize, bool, Option<String>)> = None;
        for i in &self.instances {
            let opened = self.open_one(spec, space, Some((i, &flag)))?;
            first.get_or_insert((
                opened.jobs,
                opened.fresh_process.is_some(),
                opened.description,
            ));
            runners.push((i.name.clone(), opened.runner));
        }
        let (jobs, restarts, description) = first.expect("at least one instance");
        let names: Vec<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
        let mut instances = ktune_runners::Instances::new(runners);
        if restarts {
            instances = instances.stop_when(Arc::clone(&flag));
        }
        let each = format!(
            "{} instances, each configuration measured on all: {}",
            names.len(),
            names.join(", ")
        );
        Ok(OpenedRunner {
            runner: Box::new(instances),
            jobs,
            fresh_process: restarts.then_some(flag),
            description: Some(match description {
                Some(d) => format!("{d}; {each}"),
                None => each,
            }),
        })
    }

    /// Opens the runner of `spec`, for one instance (its name, variables and the flag its
    /// runner sets when a new process is needed) where given.
    fn open_one(
        &self,
        spec: &RunnerSpec,
        space: &SearchSpace,
        instance: Option<(&InstanceSpec, &Arc<AtomicBool>)>,
    ) -> Result<OpenedRunner, ProblemError> {
        let file = self.path.display().to_string();
        let instance_name = instance.map(|(i, _)| i.name.as_str());
        match spec {
            RunnerSpec::Command(spec) => {
                let runner = CommandRunner::for_instance(
                    spec,
                    space,
                    &self.dir,
                    instance.map(|(i, _)| (i.name.as_str(), i.vars.as_slice())),
                )
                .map_err(|e| ProblemError::Runner {
                    section: None,
                    source: Box::new(e),
                })?;
                Ok(OpenedRunner {
                    runner: Box::new(runner),
                    jobs: spec.jobs,
                    fresh_process: None,
                    description: None,
                })
            }
            RunnerSpec::Cuda(spec) => {
                let spec = for_instance(&**spec, instance, &file, |s, vars| s.bound(vars, space))?;
                let mut runner = CudaRunner::new(&spec, space, &self.dir).map_err(|e| {
                    let at_fault = matches!(e, CudaError::Spec(_) | CudaError::Source { .. });
                    runner_error(at_fault, &file, instance_name, Box::new(e))
                })?;
                if let Some((_, flag)) = instance {
                    runner.share_fresh_process(Arc::clone(flag));
                }
                let d = runner.device();
                let (version, library) = runner.compiler();
                let description = format!(
                    "{} (compute capability {}.{}), NVRTC {} ({}), {} compile jobs",
                    d.name,
                    d.compute_capability / 10,
                    d.compute_capability % 10,
                    version.map_or("?".into(), |(a, b)| format!("{a}.{b}")),
                    library.display(),
                    runner.jobs()
                );
                Ok(OpenedRunner {
                    jobs: runner.jobs(),
                    fresh_process: Some(runner.fresh_process_needed()),
                    description: Some(description),
                    runner: Box::new(runner),
                })
            }
            RunnerSpec::OpenCl(spec) => {
                let spec = for_instance(&**spec, instance, &file, |s, vars| s.bound(vars, space))?;
                let mut runner = OpenClRunner::new(&spec, space, &self.dir).map_err(|e| {
                    let at_fault = matches!(e, OpenClError::Spec(_) | OpenClError::Source { .. });
                    runner_error(at_fault, &file, instance_name, Box::new(e))
                })?;
                if let Some((_, flag)) = instance {
                    runner.share_fresh_process(Arc::clone(flag));
                }
                let d = runner.device_info();
                let description = format!(
                    "{} ({}, {}; platform {} \"{}\", device {}), {} build jobs",
                    d.name,
                    d.version,
                    d.driver,
                    d.platform.0,
                    d.platform.1,
                    d.index,
                    runner.jobs()
                );
                Ok(OpenedRunner {
                    jobs: runner.jobs(),
                    fresh_process: Some(runner.fresh_process_needed()),
                    description: Some(description),
                    runner: Box::new(runner),
                })
            }
        }
    }
}

/// A kernel runner's section as `instance` sees it: its variables bound by `bind`, or the
/// section itself; a binding error names the instance.
fn for_instance<'s, S: Clone>(
    spec: &'s S,
    instance: Option<(&InstanceSpec, &Arc<AtomicBool>)>,
    file: &str,
    bind: impl FnOnce(&S, &[(String, String)]) -> Result<S, String>,
) -> Result<Cow<'s, S>, ProblemError> {
    match instance {
        None => Ok(Cow::Borrowed(spec)),
        Some((i, _)) => bind(spec, &i.vars)
            .map(Cow::Owned)
            .map_err(|m| ProblemError::Section {
                section: "instance",
                file: file.to_string(),
                message: format!("instance `{}`: {m}", i.name),
            }),
    }
}

/// A kernel runner's error opening: where the spec is at fault, named with its file and the
/// instance it was opened for; otherwise (a driver missing, ...) as the runner said it.
fn runner_error(
    at_fault: bool,
    file: &str,
    instance: Option<&str>,
    source: Box<dyn std::error::Error + Send + Sync>,
) -> ProblemError {
    match instance {
        Some(name) if at_fault => ProblemError::Section {
            section: "instance",
            file: file.to_string(),
            message: format!("instance `{name}`: {source}"),
        },
        _ => ProblemError::Runner {
            section: at_fault.then(|| file.to_string()),
            source,
        },
    }
}
