//! The problem's runner opened: the `[runner]` section made into a [`Runner`] for its space.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use ktune_core::Runner;
use ktune_runners::{CommandRunner, CudaError, CudaRunner, OpenClError, OpenClRunner};
use ktune_space::SearchSpace;

use crate::{ProblemError, ProblemSpec, RunnerSpec};

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
        if !self.instances.is_empty() {
            let RunnerSpec::Command(spec) = spec else {
                return Err(ProblemError::Section {
                    section: "instance",
                    file,
                    message: "instances are measured by the command runner (kind = \"command\"); the CUDA and OpenCL runners take one problem size".into(),
                });
            };
            let mut runners: Vec<(String, Box<dyn Runner>)> = Vec::new();
            for i in &self.instances {
                let runner = CommandRunner::for_instance(
                    spec,
                    space,
                    &self.dir,
                    Some((i.name.as_str(), i.vars.as_slice())),
                )
                .map_err(|e| ProblemError::Runner {
                    section: None,
                    source: Box::new(e),
                })?;
                runners.push((i.name.clone(), Box::new(runner)));
            }
            let names: Vec<&str> = self.instances.iter().map(|i| i.name.as_str()).collect();
            return Ok(OpenedRunner {
                runner: Box::new(ktune_runners::Instances::new(runners)),
                jobs: spec.jobs,
                fresh_process: None,
                description: Some(format!(
                    "{} instances, each configuration measured on all: {}",
                    names.len(),
                    names.join(", ")
                )),
            });
        }
        match spec {
            RunnerSpec::Command(spec) => {
                let runner = CommandRunner::new(spec, space, &self.dir).map_err(|e| {
                    ProblemError::Runner {
                        section: None,
                        source: Box::new(e),
                    }
                })?;
                Ok(OpenedRunner {
                    runner: Box::new(runner),
                    jobs: spec.jobs,
                    fresh_process: None,
                    description: None,
                })
            }
            RunnerSpec::Cuda(spec) => {
                let runner = CudaRunner::new(spec, space, &self.dir).map_err(|e| {
                    let at_fault = matches!(e, CudaError::Spec(_) | CudaError::Source { .. });
                    ProblemError::Runner {
                        section: at_fault.then_some(file),
                        source: Box::new(e),
                    }
                })?;
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
                let runner = OpenClRunner::new(spec, space, &self.dir).map_err(|e| {
                    let at_fault = matches!(e, OpenClError::Spec(_) | OpenClError::Source { .. });
                    ProblemError::Runner {
                        section: at_fault.then_some(file),
                        source: Box::new(e),
                    }
                })?;
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
