//! Runners, one file each, all behind [`ktune_core::Runner`].
//!
//! - [`command`]: compiles and runs external programs, one configuration at a time, with
//!   timeouts that kill the process group, parsing the objective from their output.
//! - [`cuda`]: compiles CUDA kernels with NVRTC and times them with CUDA events on a GPU,
//!   checking their output; the driver, NVRTC and NVML are loaded at run time.
//! - [`opencl`]: builds OpenCL kernels with `clBuildProgram` and times them with profiling
//!   events on any OpenCL device (CPUs through PoCL); the ICD loader is loaded at run time.
//! - [`kernel`]: what the CUDA and OpenCL runners share (launch rules, arguments, output
//!   checks).
//! - [`measure`]: how both runners repeat a measurement (adaptive repetition, early abort,
//!   several runs per sample for short ones), shared machinery.
//! - [`simulate`]: replays a brute-forced Kernel Tuner cache file, with a simulated clock
//!   (the BO paper's simulation mode), so strategies can be compared without a GPU.
//! - [`conformance`]: the suite every runner's tests run.
#![deny(missing_docs)]

pub mod command;
pub mod conformance;
pub mod cuda;
pub mod instances;
pub mod kernel;
pub mod measure;
pub mod opencl;
pub mod simulate;

pub use command::{CommandError, CommandRunner, CommandSpec, CommandTemplate, ObjectiveSpec};
pub use cuda::{CudaError, CudaRunner, CudaSpec};
pub use instances::Instances;
pub use measure::{Measure, MeasureSpec};
pub use opencl::{OpenClError, OpenClRunner, OpenClSpec};
pub use simulate::{Simulation, SimulationError, SimulationRunner};
