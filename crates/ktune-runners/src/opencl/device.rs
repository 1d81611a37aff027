//! One OpenCL device through the ICD loader (`libOpenCL.so.1`, loaded at run time by
//! `opencl3`'s `dynamic` feature): the platforms and devices there are, a context and a
//! profiling queue, the arguments' buffers, programs built from source (on any thread), and
//! kernels launched and timed with profiling events.
//!
//! Every call that can fail returns a [`DeviceError`]; nothing here panics on an OpenCL
//! error (the crate's `ExecuteKernel` builder panics on missing arguments, so launches go
//! through `clEnqueueNDRangeKernel` directly).

use std::sync::Arc;
use std::time::{Duration, Instant};

use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::{CL_DEVICE_TYPE_ALL, Device};
use opencl3::error_codes::{
    CL_INVALID_KERNEL_NAME, CL_PLATFORM_NOT_FOUND_KHR, ClError, DLOPEN_FUNCTION_NOT_AVAILABLE,
    DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::event::{CL_COMPLETE, Event};
use opencl3::kernel::{Kernel, set_kernel_arg};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE, ClMem};
use opencl3::platform::{Platform, get_platforms};
use opencl3::program::Program;
use opencl3::types::{CL_BLOCKING, cl_device_id};

use super::spec::Selector;
use crate::kernel::data::HostArg;
use crate::kernel::launch::Launch;

/// Why an OpenCL call failed.
#[derive(Debug, Clone, PartialEq)]
pub enum DeviceError {
    /// No OpenCL ICD loader (`libOpenCL.so.1`) could be loaded.
    NoLibrary,
    /// The loader found no platform (no ICD installed).
    NoPlatform,
    /// Setting up the device (context, queue, buffers) failed.
    Setup(String),
    /// The kernel's arguments do not fit its parameters.
    Arguments(String),
    /// The kernel could not be created from the built program.
    Load(String),
    /// The launch was refused or the kernel failed while running.
    Launch(String),
    /// The kernel ran past its timeout (seconds waited).
    Timeout(f64),
}

impl std::fmt::Display for DeviceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceError::NoLibrary => write!(
                f,
                "no OpenCL library found (libOpenCL.so.1 could not be loaded): install an ICD loader \
                 (Debian: ocl-icd-libopencl1) and a driver (for the CPU: pocl-opencl-icd; AMD: ROCm's \
                 OpenCL; Intel: intel-opencl-icd; NVIDIA: its driver), or set OPENCL_DYLIB_PATH"
            ),
            DeviceError::NoPlatform => write!(
                f,
                "the OpenCL loader found no platform: no driver (ICD) is installed under /etc/OpenCL/vendors \
                 (for the CPU: pocl-opencl-icd)"
            ),
            DeviceError::Setup(m)
            | DeviceError::Arguments(m)
            | DeviceError::Load(m)
            | DeviceError::Launch(m) => write!(f, "{m}"),
            DeviceError::Timeout(s) => write!(f, "the kernel ran for over {s:.1} s"),
        }
    }
}

/// An OpenCL error as a message: what was being done and the error's name.
fn failed(what: &str, e: ClError) -> String {
    format!("{what}: {e}")
}

/// The error of a call made before any device is open: a missing library or platform told
/// apart from the rest.
fn listing_error(e: ClError) -> DeviceError {
    match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED | DLOPEN_FUNCTION_NOT_AVAILABLE => DeviceError::NoLibrary,
        CL_PLATFORM_NOT_FOUND_KHR => DeviceError::NoPlatform,
        _ => DeviceError::Setup(failed("listing the OpenCL platforms", e)),
    }
}

/// What is known about one OpenCL device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// The platform's index and name.
    pub platform: (usize, String),
    /// The device's index within its platform.
    pub index: usize,
    /// The device's name.
    pub name: String,
    /// Its vendor.
    pub vendor: String,
    /// Its OpenCL version string.
    pub version: String,
    /// Its driver's version.
    pub driver: String,
    /// The most work-items in one work-group.
    pub max_work_group_size: usize,
    /// The most work-items per dimension of a work-group.
    pub max_work_item_sizes: Vec<usize>,
    /// Whether it is the CPU (PoCL, Intel's CPU runtime): kernels then run on the cores that
    /// would build the next programs.
    pub is_cpu: bool,
}

fn info(platform: (usize, String), index: usize, device: &Device) -> DeviceInfo {
    DeviceInfo {
        platform,
        index,
        name: device.name().unwrap_or_default().trim().to_string(),
        vendor: device.vendor().unwrap_or_default().trim().to_string(),
        version: device.version().unwrap_or_default().trim().to_string(),
        driver: device
            .driver_version()
            .unwrap_or_default()
            .trim()
            .to_string(),
        max_work_group_size: device.max_work_group_size().unwrap_or(0),
        max_work_item_sizes: device.max_work_item_sizes().unwrap_or_default(),
        is_cpu: device
            .dev_type()
            .is_ok_and(|t| t & opencl3::device::CL_DEVICE_TYPE_CPU != 0),
    }
}

/// Every OpenCL device of every platform, in the loader's order.
///
/// Read once per process and kept: PoCL initialises its devices on the first call that asks
/// for them, and two threads doing that at once crashed inside it (two runners opened by
/// parallel tests: a segmentation fault in `clGetDeviceInfo` while the other thread was in
/// `pocl_init_default_device_infos`). The first call here does it alone; the loader keeps
/// its platforms for the life of the process anyway.
pub fn devices() -> Result<Vec<DeviceInfo>, DeviceError> {
    static DEVICES: std::sync::OnceLock<Result<Vec<DeviceInfo>, DeviceError>> =
        std::sync::OnceLock::new();
    DEVICES.get_or_init(read_devices).clone()
}

fn read_devices() -> Result<Vec<DeviceInfo>, DeviceError> {
    let platforms = get_platforms().map_err(listing_error)?;
    if platforms.is_empty() {
        return Err(DeviceError::NoPlatform);
    }
    let mut out = Vec::new();
    for (p, platform) in platforms.iter().enumerate() {
        let name = platform.name().unwrap_or_default().trim().to_string();
        // A platform without devices of a type answers CL_DEVICE_NOT_FOUND: no devices.
        for (d, id) in platform
            .get_devices(CL_DEVICE_TYPE_ALL)
            .unwrap_or_default()
            .into_iter()
            .enumerate()
        {
            out.push(info((p, name.clone()), d, &Device::new(id)));
        }
    }
    Ok(out)
}

/// How the devices there are read in a message.
pub fn describe_devices(devices: &[DeviceInfo]) -> String {
    if devices.is_empty() {
        return "none".into();
    }
    devices
        .iter()
        .map(|d| {
            format!(
                "platform {} ({}) device {} ({})",
                d.platform.0, d.platform.1, d.index, d.name
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Whether `selector` picks the item at `index` called `name` (a name matches as a
/// case-insensitive part).
fn picks(selector: &Selector, index: usize, name: &str) -> bool {
    match selector {
        Selector::Index(i) => *i == index,
        Selector::Name(n) => name.to_lowercase().contains(&n.to_lowercase()),
    }
}

/// A kernel created from a built program, with its arguments set.
pub struct LoadedKernel {
    kernel: Kernel,
}

/// A built program.
pub struct Built {
    program: Program,
}

/// An OpenCL device opened for tuning: a context, an in-order profiling queue and one
/// buffer per array argument.
pub struct OpenClDevice {
    /// What is known about it.
    pub info: DeviceInfo,
    id: cl_device_id,
    context: Arc<Context>,
    queue: CommandQueue,
    /// Per argument: its buffer (arrays) or `None` (scalars).
    buffers: Vec<Option<Buffer<u8>>>,
}

impl OpenClDevice {
    /// Opens the device `platform` and `device` select and allocates the arrays of `args`.
    pub fn open(
        platform: &Selector,
        device: &Selector,
        args: &[HostArg],
    ) -> Result<OpenClDevice, DeviceError> {
        let all = devices()?;
        let platforms = get_platforms().map_err(listing_error)?;
        let not_there = |what: String| {
            DeviceError::Setup(format!(
                "{what}; the OpenCL devices here: {}",
                describe_devices(&all)
            ))
        };
        let (p, chosen): (usize, &Platform) = platforms
            .iter()
            .enumerate()
            .find(|(i, pl)| picks(platform, *i, &pl.name().unwrap_or_default()))
            .ok_or_else(|| not_there(format!("no OpenCL platform {platform}")))?;
        let ids = chosen.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default();
        let (d, id) = ids
            .iter()
            .enumerate()
            .find(|(i, id)| picks(device, *i, &Device::new(**id).name().unwrap_or_default()))
            .map(|(i, id)| (i, *id))
            .ok_or_else(|| not_there(format!("no device {device} on OpenCL platform {p}")))?;
        let dev = Device::new(id);
        let info = info(
            (p, chosen.name().unwrap_or_default().trim().to_string()),
            d,
            &dev,
        );
        let context = Arc::new(
            Context::from_device(&dev)
                .map_err(|e| DeviceError::Setup(failed("creating an OpenCL context", e)))?,
        );
        // SAFETY: the device belongs to the context. clCreateCommandQueue (OpenCL 1.2,
        // deprecated in 2.0 but in every driver) works on NVIDIA's 1.2 platforms too.
        #[allow(deprecated)]
        let queue = unsafe { CommandQueue::create(&context, id, CL_QUEUE_PROFILING_ENABLE) }
            .map_err(|e| DeviceError::Setup(failed("creating a profiling command queue", e)))?;
        let mut opened = OpenClDevice {
            info,
            id,
            context,
            queue,
            buffers: Vec::new(),
        };
        for a in args {
            opened.buffers.push(match a {
                HostArg::Array { name, bytes, .. } => {
                    // SAFETY: no host pointer; the size is the array's (at least one byte:
                    // OpenCL refuses empty buffers).
                    let mut buffer = unsafe {
                        Buffer::<u8>::create(
                            &opened.context,
                            CL_MEM_READ_WRITE,
                            bytes.len().max(1),
                            std::ptr::null_mut(),
                        )
                    }
                    .map_err(|e| {
                        DeviceError::Setup(failed(
                            &format!("allocating {} bytes for argument `{name}`", bytes.len()),
                            e,
                        ))
                    })?;
                    if !bytes.is_empty() {
                        // SAFETY: the buffer holds `bytes.len()` bytes; the write blocks.
                        unsafe {
                            opened.queue.enqueue_write_buffer(
                                &mut buffer,
                                CL_BLOCKING,
                                0,
                                bytes,
                                &[],
                            )
                        }
                        .map_err(|e| {
                            DeviceError::Setup(failed(&format!("copying argument `{name}`"), e))
                        })?;
                    }
                    Some(buffer)
                }
                HostArg::Scalar { .. } => None,
            });
        }
        Ok(opened)
    }

    /// Builds `source` with `options` for this device (callable from any thread: the
    /// OpenCL API is thread-safe but for setting a kernel's arguments). `Err` is the build
    /// log, or the error where there is none.
    pub fn build(&self, source: &str, options: &str) -> Result<Built, String> {
        build_on(&self.context, self.id, source, options)
    }

    /// A builder that can move to worker threads.
    pub fn builder(&self) -> Builder {
        Builder {
            context: Arc::clone(&self.context),
            id: self.id,
        }
    }

    /// Creates kernel `name` from `built` and sets `args` (the arrays' buffers, the scalars'
    /// values).
    pub fn load(
        &self,
        built: &Built,
        name: &str,
        args: &[HostArg],
    ) -> Result<LoadedKernel, DeviceError> {
        let kernel = Kernel::create(&built.program, name).map_err(|e| {
            if e.0 == CL_INVALID_KERNEL_NAME {
                let names = built.program.get_kernel_names().unwrap_or_default();
                DeviceError::Arguments(format!(
                    "the program has no kernel `{name}` (its kernels: {})",
                    if names.is_empty() { "none" } else { &names }
                ))
            } else {
                DeviceError::Load(failed(&format!("creating kernel `{name}`"), e))
            }
        })?;
        let declared = kernel.num_args().unwrap_or(args.len() as u32) as usize;
        if declared != args.len() {
            return Err(DeviceError::Arguments(format!(
                "kernel `{name}` takes {declared} arguments, and {} are given ({})",
                args.len(),
                args.iter()
                    .map(HostArg::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for (i, (a, buffer)) in args.iter().zip(&self.buffers).enumerate() {
            let index = i as u32;
            // SAFETY: the kernel is live; the pointer and size describe the value passed
            // (a cl_mem handle, or the scalar's bytes), which OpenCL copies.
            let set = match (a, buffer) {
                (HostArg::Array { .. }, Some(b)) => unsafe { kernel.set_arg(index, &b.get()) },
                (HostArg::Scalar { bytes, .. }, _) => unsafe {
                    set_kernel_arg(
                        kernel.get(),
                        index,
                        bytes.len(),
                        bytes.as_ptr() as *const std::ffi::c_void,
                    )
                    .map_err(ClError)
                },
                (HostArg::Array { .. }, None) => Ok(()),
            };
            set.map_err(|e| {
                let declared = kernel.get_arg_type_name(index).unwrap_or_default();
                DeviceError::Arguments(format!(
                    "argument {} (`{}`) does not fit the kernel's parameter {}{}: {e}",
                    i + 1,
                    a.name(),
                    i + 1,
                    if declared.is_empty() {
                        String::new()
                    } else {
                        format!(" (`{declared}`)")
                    }
                ))
            })?;
        }
        Ok(LoadedKernel { kernel })
    }

    /// Queues one launch of `kernel`.
    fn enqueue(&self, kernel: &LoadedKernel, launch: &Launch) -> Result<Event, DeviceError> {
        let global: [usize; 3] =
            [0, 1, 2].map(|d| launch.grid[d] as usize * launch.block[d] as usize);
        let local: [usize; 3] = launch.block.map(|b| b as usize);
        // SAFETY: the kernel's arguments are all set (checked in `load`); the sizes are
        // arrays of three.
        unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.kernel.get(),
                3,
                std::ptr::null(),
                global.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| DeviceError::Launch(failed("launching the kernel", e)))
    }

    /// Waits for `event`, polling, so that a kernel that runs too long becomes a timeout
    /// instead of a hung tuner.
    fn wait(&self, event: &Event, timeout: Duration) -> Result<(), DeviceError> {
        let started = Instant::now();
        // Some drivers run nothing until the queue is flushed.
        self.queue
            .flush()
            .map_err(|e| DeviceError::Launch(failed("flushing the queue", e)))?;
        loop {
            let status = event
                .command_execution_status()
                .map_err(|e| DeviceError::Launch(failed("waiting for the kernel", e)))?;
            if status.0 == CL_COMPLETE {
                return Ok(());
            }
            if status.0 < 0 {
                return Err(DeviceError::Launch(format!(
                    "the kernel failed while running: {}",
                    ClError(status.0)
                )));
            }
            let waited = started.elapsed();
            if waited > timeout {
                return Err(DeviceError::Timeout(waited.as_secs_f64()));
            }
            if waited < Duration::from_millis(2) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Waits for everything queued, up to `timeout`.
    pub fn finish(&self, timeout: Duration) -> Result<(), DeviceError> {
        // SAFETY: a marker has no arguments.
        let marker = unsafe { self.queue.enqueue_marker_with_wait_list(&[]) }
            .map_err(|e| DeviceError::Launch(failed("queueing a marker", e)))?;
        self.wait(&marker, timeout)
    }

    /// Runs `kernel` `k` times back to back and returns the mean time of one launch in
    /// milliseconds, from the first launch's start to the last one's end (profiling
    /// events, nanoseconds).
    pub fn time_launches(
        &self,
        kernel: &LoadedKernel,
        launch: &Launch,
        k: usize,
        timeout: Duration,
    ) -> Result<f64, DeviceError> {
        let k = k.max(1);
        let first = self.enqueue(kernel, launch)?;
        let mut last = None;
        for _ in 1..k {
            last = Some(self.enqueue(kernel, launch)?);
        }
        let last = last.as_ref().unwrap_or(&first);
        self.wait(
            last,
            timeout.saturating_mul(k.min(u32::MAX as usize) as u32),
        )?;
        let read = |e: ClError| DeviceError::Launch(failed("reading the profiling times", e));
        let start = first.profiling_command_start().map_err(read)?;
        let end = last.profiling_command_end().map_err(read)?;
        Ok(end.saturating_sub(start) as f64 * 1e-6 / k as f64)
    }

    /// Launches `kernel` once and waits for it, up to `timeout`; the kernel time in ms.
    pub fn run(
        &self,
        kernel: &LoadedKernel,
        launch: &Launch,
        timeout: Duration,
    ) -> Result<f64, DeviceError> {
        self.time_launches(kernel, launch, 1, timeout)
    }

    /// Copies `bytes` into argument `i`'s buffer.
    pub fn upload(&mut self, i: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        let (queue, buffers) = (&self.queue, &mut self.buffers);
        let Some(Some(buffer)) = buffers.get_mut(i) else {
            return Ok(());
        };
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the buffer was made for this argument's bytes; the write blocks.
        unsafe { queue.enqueue_write_buffer(buffer, CL_BLOCKING, 0, bytes, &[]) }
            .map(|_| ())
            .map_err(|e| DeviceError::Launch(failed("restoring an output array", e)))
    }

    /// The contents of argument `i`'s buffer (`len` bytes).
    pub fn download(&self, i: usize, len: usize) -> Result<Vec<u8>, DeviceError> {
        let mut out = vec![0u8; len];
        let Some(Some(buffer)) = self.buffers.get(i) else {
            return Ok(out);
        };
        if len > 0 {
            // SAFETY: the buffer holds `len` bytes; the read blocks.
            unsafe {
                self.queue
                    .enqueue_read_buffer(buffer, CL_BLOCKING, 0, &mut out, &[])
            }
            .map_err(|e| DeviceError::Launch(failed("reading an output array", e)))?;
        }
        Ok(out)
    }
}

/// Builds programs for one device from worker threads.
#[derive(Clone)]
pub struct Builder {
    context: Arc<Context>,
    id: cl_device_id,
}

// SAFETY: a device id is a handle that OpenCL lets any thread use; the context is Sync.
unsafe impl Send for Builder {}
unsafe impl Sync for Builder {}

impl Builder {
    /// See [`OpenClDevice::build`].
    pub fn build(&self, source: &str, options: &str) -> Result<Built, String> {
        build_on(&self.context, self.id, source, options)
    }
}

fn build_on(
    context: &Context,
    id: cl_device_id,
    source: &str,
    options: &str,
) -> Result<Built, String> {
    let mut program = Program::create_from_source(context, source)
        .map_err(|e| failed("creating the program", e))?;
    match program.build(&[id], options) {
        Ok(()) => Ok(Built { program }),
        Err(e) => {
            let log = program.get_build_log(id).unwrap_or_default();
            Err(if log.trim().is_empty() {
                failed("building the program", e)
            } else {
                log.trim_end().to_string()
            })
        }
    }
}
