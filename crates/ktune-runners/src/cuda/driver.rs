//! The GPU side: the CUDA driver API through cudarc's raw bindings, loaded at run time.
//!
//! One primary context on one device, one stream, the kernel arguments allocated once and
//! kept for the whole run. A kernel fault (illegal address, misaligned access, trap, ...)
//! poisons a CUDA context; [`Gpu::recover`] resets the primary context and uploads the
//! arguments again, so one faulting configuration does not end the tuning run.
//!
//! Every `unsafe` block below calls the driver with handles this type created and pointers
//! into memory it owns for the duration of the call.
//!
//! Why one file of over 800 lines: every call into the driver lives here, behind safe
//! methods, so that the rest of the runner holds no `unsafe` code and one file shows every
//! assumption about the driver (contexts, streams, events, faults) in one place.

use std::ffi::{c_int, c_void};
use std::time::{Duration, Instant};

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction,
    CUfunction_attribute, CUmodule, CUresult, CUstream,
};

use super::data::{HostArg, HostConstant};
use super::launch::Launch;
use super::nvrtc::Compiled;

/// Why something on the GPU did not work.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuError {
    /// This configuration cannot be launched (too many resources, invalid dimensions); the
    /// context is fine.
    Launch(String),
    /// The module could not be loaded (bad image, no code for this GPU).
    Load(String),
    /// The kernel faulted; the context must be recreated before the next configuration.
    Fault(String),
    /// The launch ran past its time limit.
    Timeout(f64),
    /// The device cannot be used at all.
    Setup(String),
    /// The kernel's parameters do not match the arguments (their number or sizes): every
    /// configuration would fail the same way, or worse, launch with garbage.
    Arguments(String),
}

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GpuError::Launch(m)
            | GpuError::Load(m)
            | GpuError::Fault(m)
            | GpuError::Setup(m)
            | GpuError::Arguments(m) => f.write_str(m),
            GpuError::Timeout(s) => write!(f, "ran past its timeout ({s:.1} s)"),
        }
    }
}

/// What is known about the device.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// Its name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability as one number (90 for 9.0).
    pub compute_capability: i32,
    /// NVML's identifier (`GPU-xxxxxxxx-xxxx-...`).
    pub uuid: String,
    /// Streaming multiprocessors.
    pub multiprocessors: i32,
    /// Threads per block at most.
    pub max_threads_per_block: i32,
    /// Shared memory per block an opted-in kernel may use, in bytes.
    pub max_shared_per_block: i32,
    /// The driver's CUDA version (12080 for 12.8).
    pub driver_version: i32,
    /// Bytes of L2 cache.
    pub l2_bytes: i32,
}

fn describe(r: CUresult) -> String {
    let e = DriverError(r);
    match (e.error_name(), e.error_string()) {
        (Ok(n), Ok(s)) => format!("{} ({})", n.to_string_lossy(), s.to_string_lossy()),
        _ => format!("{r:?}"),
    }
}

/// Why the arguments do not fit the kernel's parameters of `sizes` bytes, if they do not:
/// their number, then each one's size. `passed`: per argument its name, the bytes it passes
/// and its type in words.
pub(super) fn parameter_mismatch(
    sizes: &[usize],
    passed: &[(String, usize, String)],
) -> Option<String> {
    if sizes.len() != passed.len() {
        let names: Vec<&str> = passed.iter().map(|(n, _, _)| n.as_str()).collect();
        return Some(format!(
            "the kernel takes {} parameter{} but {} argument{} given ({}): give one \
             argument per kernel parameter, in order",
            sizes.len(),
            if sizes.len() == 1 { "" } else { "s" },
            passed.len(),
            if passed.len() == 1 { " is" } else { "s are" },
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    }
    for (i, (size, (name, bytes, what))) in sizes.iter().zip(passed).enumerate() {
        if size != bytes {
            return Some(format!(
                "argument {i} (`{name}`, {what}) passes {bytes} bytes, but the kernel's \
                 parameter {i} takes {size}: give it the type the kernel declares"
            ));
        }
    }
    None
}

/// Per argument: its name, the bytes it passes to the kernel (a pointer's for an array) and
/// its type in words, for [`parameter_mismatch`].
pub(super) fn passed_arguments(args: &[HostArg]) -> Vec<(String, usize, String)> {
    args.iter()
        .map(|a| match a {
            HostArg::Array { name, dtype, .. } => (
                name.clone(),
                std::mem::size_of::<CUdeviceptr>(),
                format!(
                    "{} {} array, passed as a pointer",
                    article(*dtype),
                    dtype.name()
                ),
            ),
            HostArg::Scalar { name, dtype, bytes } => (
                name.clone(),
                bytes.len(),
                format!("{} {} scalar", article(*dtype), dtype.name()),
            ),
        })
        .collect()
}

/// "a float32", "an int32", "a uint8".
fn article(dtype: super::data::DType) -> &'static str {
    if dtype.name().starts_with('i') {
        "an"
    } else {
        "a"
    }
}

/// Errors that leave the context unusable (the "sticky" ones).
fn is_sticky(r: CUresult) -> bool {
    use sys::CUresult::*;
    matches!(
        r,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

fn ok(r: CUresult) -> bool {
    r == sys::CUresult::CUDA_SUCCESS
}

fn setup(r: CUresult, what: &str) -> Result<(), GpuError> {
    if ok(r) {
        Ok(())
    } else {
        Err(GpuError::Setup(format!("{what}: {}", describe(r))))
    }
}

/// Whether the CUDA driver library can be loaded.
pub fn driver_available() -> bool {
    // SAFETY: only tries to dlopen the library by its candidate names.
    unsafe { sys::is_culib_present() }
}

/// The GPU `ordinal` and what is known about it. The caller checked [`driver_available`].
fn device_info(ordinal: usize) -> Result<(CUdevice, DeviceInfo), GpuError> {
    // SAFETY: see the module documentation.
    unsafe {
        setup(sys::cuInit(0), "cuInit")?;
        let mut driver_version: c_int = 0;
        setup(
            sys::cuDriverGetVersion(&mut driver_version),
            "driver version",
        )?;
        let mut count: c_int = 0;
        setup(sys::cuDeviceGetCount(&mut count), "counting devices")?;
        if count <= 0 {
            return Err(GpuError::Setup(
                "the CUDA driver is installed but sees no GPU".into(),
            ));
        }
        if ordinal >= count as usize {
            return Err(GpuError::Setup(format!(
                "[runner] device = {ordinal}, but there are only {count} GPUs (0 to {})",
                count - 1
            )));
        }
        let mut device: CUdevice = 0;
        setup(
            sys::cuDeviceGet(&mut device, ordinal as c_int),
            "cuDeviceGet",
        )?;
        let attr = |a: CUdevice_attribute| -> i32 {
            let mut v: c_int = 0;
            if ok(sys::cuDeviceGetAttribute(&mut v, a, device)) {
                v
            } else {
                0
            }
        };
        use sys::CUdevice_attribute::*;
        let major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        let minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        let mut uuid = sys::CUuuid { bytes: [0; 16] };
        let _ = sys::cuDeviceGetUuid(&mut uuid, device);
        let info = DeviceInfo {
            name: cudarc::driver::result::device::get_name(device)
                .unwrap_or_else(|_| format!("CUDA device {ordinal}")),
            compute_capability: major * 10 + minor,
            uuid: nvml_uuid(&uuid.bytes.map(|b| b as u8)),
            multiprocessors: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            max_threads_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
            max_shared_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN),
            driver_version,
            l2_bytes: attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        };
        Ok((device, info))
    }
}

/// Every GPU the CUDA driver sees, in its order (for `ktune devices`); `Err` says why there
/// are none to list (no driver, a driver that fails).
pub fn devices() -> Result<Vec<DeviceInfo>, GpuError> {
    if !driver_available() {
        return Err(GpuError::Setup(
            "no CUDA driver found (libcuda.so could not be loaded)".into(),
        ));
    }
    let mut count: c_int = 0;
    // SAFETY: initialising the driver and counting devices take no handles.
    unsafe {
        setup(sys::cuInit(0), "cuInit")?;
        setup(sys::cuDeviceGetCount(&mut count), "counting devices")?;
    }
    (0..count.max(0) as usize)
        .map(|i| device_info(i).map(|(_, info)| info))
        .collect()
}

/// A loaded kernel.
pub struct Kernel {
    module: CUmodule,
    function: CUfunction,
}

/// One device, its context, a stream and the kernel arguments.
pub struct Gpu {
    device: CUdevice,
    context: CUcontext,
    stream: CUstream,
    start: CUevent,
    end: CUevent,
    /// Per argument: the device pointer of an array (0 for a scalar).
    pointers: Vec<CUdeviceptr>,
    /// Per argument: a scalar's bytes in an 8-byte-aligned cell.
    scalars: Vec<[u64; 1]>,
    /// Per argument: its name, the bytes it passes (a pointer's 8 for an array) and its type
    /// in words, to check against the kernel's parameters.
    passed: Vec<(String, usize, String)>,
    /// A buffer twice the size of the L2 cache, written between timed launches to flush
    /// it (0 when flushing is off).
    flush: CUdeviceptr,
    /// Whether the flush buffer is wanted (it is made again after a context reset).
    flush_wanted: bool,
    /// The context is poisoned (a sticky fault it could not be reset from): its handles
    /// must not be touched again, not even to free them.
    abandoned: bool,
    /// The device.
    pub info: DeviceInfo,
}

impl Gpu {
    /// Opens device `ordinal` and uploads `args`. The caller checked [`driver_available`].
    pub fn open(ordinal: usize, args: &[HostArg]) -> Result<Gpu, GpuError> {
        let (device, info) = device_info(ordinal)?;
        // SAFETY: see the module documentation.
        unsafe {
            let mut gpu = Gpu {
                device,
                context: std::ptr::null_mut(),
                stream: std::ptr::null_mut(),
                start: std::ptr::null_mut(),
                end: std::ptr::null_mut(),
                pointers: Vec::new(),
                scalars: Vec::new(),
                passed: passed_arguments(args),
                flush: 0,
                flush_wanted: false,
                abandoned: false,
                info,
            };
            gpu.create(args)?;
            Ok(gpu)
        }
    }

    /// Retains the primary context and makes the stream, the events and the arguments.
    unsafe fn create(&mut self, args: &[HostArg]) -> Result<(), GpuError> {
        unsafe {
            setup(
                sys::cuDevicePrimaryCtxRetain(&mut self.context, self.device),
                "creating the CUDA context",
            )?;
            setup(sys::cuCtxSetCurrent(self.context), "cuCtxSetCurrent")?;
            setup(
                sys::cuStreamCreate(&mut self.stream, 0),
                "creating a CUDA stream",
            )?;
            setup(sys::cuEventCreate(&mut self.start, 0), "creating an event")?;
            setup(sys::cuEventCreate(&mut self.end, 0), "creating an event")?;
            self.pointers.clear();
            self.scalars.clear();
            for a in args {
                let mut ptr: CUdeviceptr = 0;
                let mut cell = [0u64; 1];
                match a {
                    HostArg::Array { name, bytes, .. } => {
                        // A zero-length array still gets a valid pointer.
                        let r = sys::cuMemAlloc_v2(&mut ptr, bytes.len().max(1));
                        if !ok(r) {
                            return Err(GpuError::Setup(format!(
                                "allocating {} bytes for argument `{name}`: {}",
                                bytes.len(),
                                describe(r)
                            )));
                        }
                        self.pointers.push(ptr);
                        self.upload(self.pointers.len() - 1, bytes)?;
                    }
                    HostArg::Scalar { bytes, .. } => {
                        let n = bytes.len().min(8);
                        std::ptr::copy_nonoverlapping(
                            bytes.as_ptr(),
                            cell.as_mut_ptr() as *mut u8,
                            n,
                        );
                        self.pointers.push(0);
                    }
                }
                self.scalars.push(cell);
            }
            if self.flush_wanted {
                self.alloc_flush()?;
            }
            Ok(())
        }
    }

    /// Allocates the L2 flush buffer.
    unsafe fn alloc_flush(&mut self) -> Result<(), GpuError> {
        let bytes = self.flush_bytes();
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: the context is current; the pointer is written by the driver.
        let r = unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) };
        if !ok(r) {
            return Err(GpuError::Setup(format!(
                "allocating {bytes} bytes to flush the L2 cache: {}",
                describe(r)
            )));
        }
        self.flush = ptr;
        Ok(())
    }

    fn flush_bytes(&self) -> usize {
        // Twice the cache, so that nothing a kernel left there survives; 8 MiB when the
        // driver does not say.
        2 * (self.info.l2_bytes.max(0) as usize).max(4 << 20)
    }

    /// Flush the L2 cache before every timed launch from now on (`true`), or stop.
    pub fn set_l2_flush(&mut self, on: bool) -> Result<(), GpuError> {
        self.flush_wanted = on;
        if on && self.flush == 0 {
            // SAFETY: the context is current (bound by the caller or at open).
            unsafe { self.alloc_flush() }?;
        }
        Ok(())
    }

    /// Writes the flush buffer on the stream (evicting whatever the L2 cache held).
    fn flush_l2(&self) -> Result<(), GpuError> {
        // SAFETY: the buffer and the stream are live; the write stays inside the buffer.
        let r = unsafe { sys::cuMemsetD8Async(self.flush, 0, self.flush_bytes(), self.stream) };
        self.classify(r, "flushing the L2 cache")
    }

    /// Runs `kernel` `k` times and returns the mean time of one launch in milliseconds.
    /// Without flushing, the `k` launches are queued back to back between one pair of
    /// events (so kernels shorter than the events' resolution are timed well); with
    /// flushing, each launch is timed alone after the L2 cache was flushed.
    pub fn time_launches(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        k: usize,
        timeout: Duration,
    ) -> Result<f64, GpuError> {
        let k = k.max(1);
        if self.flush != 0 && self.flush_wanted {
            let mut total = 0.0;
            for _ in 0..k {
                self.flush_l2()?;
                total += self.run(kernel, launch, timeout)?;
            }
            return Ok(total / k as f64);
        }
        self.time_queued(kernel, launch, k, timeout)
    }

    /// Queues `k` launches of `kernel` back to back between one pair of events and waits for
    /// them (each launch given `timeout`); the mean time of one launch in milliseconds.
    fn time_queued(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        k: usize,
        timeout: Duration,
    ) -> Result<f64, GpuError> {
        let mut params = self.params();
        // SAFETY: the events and the stream are live.
        unsafe {
            self.classify(
                sys::cuEventRecord(self.start, self.stream),
                "recording an event",
            )?;
            for _ in 0..k {
                self.enqueue(kernel, launch, &mut params)?;
            }
            self.classify(
                sys::cuEventRecord(self.end, self.stream),
                "recording an event",
            )?;
            // Each launch already ran once within its timeout.
            self.wait(timeout.saturating_mul(k.min(u32::MAX as usize) as u32))?;
            let mut ms = 0f32;
            self.classify(
                sys::cuEventElapsedTime(&mut ms, self.start, self.end),
                "reading the kernel time",
            )?;
            Ok(ms as f64 / k as f64)
        }
    }

    /// Makes this context current on the calling thread.
    pub fn bind(&self) -> Result<(), GpuError> {
        // SAFETY: see the module documentation.
        setup(
            unsafe { sys::cuCtxSetCurrent(self.context) },
            "cuCtxSetCurrent",
        )
    }

    /// Copies `bytes` into argument `i`'s device array.
    pub fn upload(&self, i: usize, bytes: &[u8]) -> Result<(), GpuError> {
        if bytes.is_empty() {
            return Ok(());
        }
        // SAFETY: the allocation has at least `bytes.len()` bytes.
        let r = unsafe {
            sys::cuMemcpyHtoD_v2(
                self.pointers[i],
                bytes.as_ptr() as *const c_void,
                bytes.len(),
            )
        };
        self.classify(r, "copying to the GPU")
    }

    /// Reads `len` bytes of argument `i`'s device array.
    pub fn download(&self, i: usize, len: usize) -> Result<Vec<u8>, GpuError> {
        let mut out = vec![0u8; len];
        if len == 0 {
            return Ok(out);
        }
        // SAFETY: the allocation has at least `len` bytes.
        let r =
            unsafe { sys::cuMemcpyDtoH_v2(out.as_mut_ptr() as *mut c_void, self.pointers[i], len) };
        self.classify(r, "copying from the GPU")?;
        Ok(out)
    }

    fn classify(&self, r: CUresult, what: &str) -> Result<(), GpuError> {
        if ok(r) {
            Ok(())
        } else if is_sticky(r) || !self.context_healthy() {
            Err(GpuError::Fault(format!("{what}: {}", describe(r))))
        } else {
            Err(GpuError::Launch(format!("{what}: {}", describe(r))))
        }
    }

    fn context_healthy(&self) -> bool {
        // SAFETY: see the module documentation.
        unsafe { ok(sys::cuCtxSynchronize()) }
    }

    /// Loads a compiled image and finds the kernel in it; checks the launch against the
    /// kernel's limits so that resource problems get a precise message; copies `constants`
    /// into the module's `__constant__` variables of those names (a module without one is
    /// left as it is: the configuration's code may not use it).
    pub fn load(
        &self,
        compiled: &Compiled,
        launch: &Launch,
        constants: &[HostConstant],
    ) -> Result<Kernel, GpuError> {
        let (image, lowered_name) = (&compiled.image, &compiled.lowered_name);
        // SAFETY: `image` is a CUBIN or NUL-terminated PTX that lives through the call.
        unsafe {
            let mut module: CUmodule = std::ptr::null_mut();
            let r = sys::cuModuleLoadData(&mut module, image.as_ptr() as *const c_void);
            if !ok(r) {
                return Err(GpuError::Load(format!(
                    "loading the compiled kernel: {}",
                    describe(r)
                )));
            }
            let mut function: CUfunction = std::ptr::null_mut();
            let r = sys::cuModuleGetFunction(&mut function, module, lowered_name.as_ptr());
            let kernel = Kernel { module, function };
            if !ok(r) {
                self.unload(kernel);
                return Err(GpuError::Load(format!(
                    "the module has no kernel `{}`: {}",
                    lowered_name.to_string_lossy(),
                    describe(r)
                )));
            }
            if let Err(why) = self.check_parameters(function) {
                self.unload(kernel);
                return Err(GpuError::Arguments(why));
            }
            let fattr = |a: CUfunction_attribute| -> i32 {
                let mut v: c_int = 0;
                if ok(sys::cuFuncGetAttribute(&mut v, a, function)) {
                    v
                } else {
                    0
                }
            };
            use sys::CUfunction_attribute::*;
            let max_threads = fattr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
            let threads = launch.threads();
            if max_threads > 0 && threads > max_threads as u64 {
                let regs = fattr(CU_FUNC_ATTRIBUTE_NUM_REGS);
                self.unload(kernel);
                return Err(GpuError::Launch(format!(
                    "too many resources requested for launch: {threads} threads per block, but \
                     this kernel can run at most {max_threads} ({regs} registers per thread)"
                )));
            }
            for c in constants {
                let (mut ptr, mut size): (CUdeviceptr, usize) = (0, 0);
                let r = sys::cuModuleGetGlobal_v2(&mut ptr, &mut size, module, c.name.as_ptr());
                if r == sys::CUresult::CUDA_ERROR_NOT_FOUND {
                    continue;
                }
                let copied = if !ok(r) {
                    Err(format!("finding it: {}", describe(r)))
                } else if size < c.bytes.len() {
                    Err(format!(
                        "the kernel declares {size} bytes, the spec gives {}",
                        c.bytes.len()
                    ))
                } else {
                    let r =
                        sys::cuMemcpyHtoD_v2(ptr, c.bytes.as_ptr() as *const c_void, c.bytes.len());
                    if ok(r) { Ok(()) } else { Err(describe(r)) }
                };
                if let Err(why) = copied {
                    self.unload(kernel);
                    return Err(GpuError::Launch(format!(
                        "constant `{}`: {why}",
                        c.name.to_string_lossy()
                    )));
                }
            }
            if launch.shared_bytes > 48 * 1024 {
                // More than 48 KiB of dynamic shared memory needs an opt-in per kernel.
                let r = sys::cuFuncSetAttribute(
                    function,
                    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    launch.shared_bytes as c_int,
                );
                if !ok(r) {
                    self.unload(kernel);
                    return Err(GpuError::Launch(format!(
                        "{} bytes of dynamic shared memory: {}",
                        launch.shared_bytes,
                        describe(r)
                    )));
                }
            }
            Ok(kernel)
        }
    }

    /// Compares the kernel's parameters (their number and sizes, from `cuFuncGetParamInfo`,
    /// CUDA 12.4 and later) with the arguments: the driver launches with whatever it is
    /// given, so a missing or wrongly sized argument would otherwise be read as garbage.
    /// Older drivers cannot tell; then nothing is checked.
    fn check_parameters(&self, function: CUfunction) -> Result<(), String> {
        if self.info.driver_version < 12040 {
            return Ok(());
        }
        let mut sizes: Vec<usize> = Vec::new();
        loop {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `function` is live; the out-pointers point to locals.
            let r =
                unsafe { sys::cuFuncGetParamInfo(function, sizes.len(), &mut offset, &mut size) };
            if r == sys::CUresult::CUDA_ERROR_INVALID_VALUE {
                break;
            }
            if !ok(r) || sizes.len() > 4096 {
                return Ok(());
            }
            sizes.push(size);
        }
        if sizes.is_empty() {
            // No parameter at all is also what a driver that cannot look into this
            // function would say: a kernel of no parameters is not worth a false alarm.
            return Ok(());
        }
        parameter_mismatch(&sizes, &self.passed).map_or(Ok(()), Err)
    }

    /// Unloads a kernel's module.
    pub fn unload(&self, kernel: Kernel) {
        // SAFETY: the module came from `load` and is unloaded once.
        unsafe {
            sys::cuModuleUnload(kernel.module);
        }
    }

    /// The kernel parameter array for `cuLaunchKernel`: pointers into `self`.
    fn params(&self) -> Vec<*mut c_void> {
        (0..self.pointers.len())
            .map(|i| {
                if self.pointers[i] != 0 {
                    &self.pointers[i] as *const CUdeviceptr as *mut c_void
                } else {
                    self.scalars[i].as_ptr() as *mut c_void
                }
            })
            .collect()
    }

    /// Queues one launch of `kernel` on the stream without waiting for it.
    fn enqueue(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        params: &mut [*mut c_void],
    ) -> Result<(), GpuError> {
        // SAFETY: the parameter pointers point into `self`, which outlives the launch (every
        // caller waits for the stream before returning); the kernel's handles are live.
        let r = unsafe {
            sys::cuLaunchKernel(
                kernel.function,
                launch.grid[0],
                launch.grid[1],
                launch.grid[2],
                launch.block[0],
                launch.block[1],
                launch.block[2],
                launch.shared_bytes,
                self.stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        self.classify(r, "launching the kernel")
    }

    /// Launches `kernel` once and waits for it, up to `timeout`; returns the kernel time in
    /// milliseconds from CUDA events.
    pub fn run(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        timeout: Duration,
    ) -> Result<f64, GpuError> {
        self.time_queued(kernel, launch, 1, timeout)
    }

    /// Waits for the end event, polling, so that a hanging kernel becomes a timeout instead
    /// of a hung tuner.
    pub fn wait(&self, timeout: Duration) -> Result<(), GpuError> {
        let started = Instant::now();
        loop {
            // SAFETY: the event is live.
            let r = unsafe { sys::cuEventQuery(self.end) };
            if ok(r) {
                return Ok(());
            }
            if r != sys::CUresult::CUDA_ERROR_NOT_READY {
                return Err(self.classify(r, "running the kernel").unwrap_err());
            }
            let waited = started.elapsed();
            if waited > timeout {
                return Err(GpuError::Timeout(waited.as_secs_f64()));
            }
            // Spin briefly for short kernels, then sleep so a long one does not burn a core.
            if waited < Duration::from_millis(2) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    }

    /// Resets the context after a fault and uploads `args` again. On `Err` the GPU is
    /// unusable in this process (see [`Gpu::abandon`]).
    pub fn recover(&mut self, args: &[HostArg]) -> Result<(), GpuError> {
        // SAFETY: see the module documentation. The reset destroys every handle made in
        // the old context, so they are forgotten before anything can use or free them.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.device);
            self.forget_handles();
            let r = sys::cuDevicePrimaryCtxReset_v2(self.device);
            if !ok(r) {
                self.abandon();
                return Err(GpuError::Setup(format!(
                    "resetting the CUDA context after a kernel fault: {}",
                    describe(r)
                )));
            }
            self.create(args).inspect_err(|_| self.abandon())
        }
    }

    fn forget_handles(&mut self) {
        self.context = std::ptr::null_mut();
        self.stream = std::ptr::null_mut();
        self.start = std::ptr::null_mut();
        self.end = std::ptr::null_mut();
        self.pointers.clear();
        self.scalars.clear();
        self.flush = 0;
    }

    /// Gives the GPU up in this process: nothing is called on it again, not even on drop
    /// (the driver frees everything when the process ends).
    pub fn abandon(&mut self) {
        self.abandoned = true;
        self.forget_handles();
    }

    /// Queues `batch` launches of `kernel` back to back, with no wait between them, and
    /// waits for the last (up to `timeout`). Waiting for each launch would leave the GPU idle between them,
    /// so the power of a short kernel would be measured as mostly idle power.
    pub fn run_batch(
        &self,
        kernel: &Kernel,
        launch: &Launch,
        batch: usize,
        timeout: Duration,
    ) -> Result<(), GpuError> {
        let mut params = self.params();
        for _ in 0..batch.max(1) {
            self.enqueue(kernel, launch, &mut params)?;
        }
        // SAFETY: the event and the stream are live.
        self.classify(
            unsafe { sys::cuEventRecord(self.end, self.stream) },
            "recording an event",
        )?;
        // A batch is a few milliseconds of a kernel that already ran within its timeout.
        self.wait(timeout)
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if self.abandoned || self.context.is_null() {
            return;
        }
        // SAFETY: live handles created by this value; freeing each once.
        unsafe {
            sys::cuCtxSetCurrent(self.context);
            for &p in self.pointers.iter().chain([&self.flush]) {
                if p != 0 {
                    sys::cuMemFree_v2(p);
                }
            }
            for event in [self.start, self.end] {
                if !event.is_null() {
                    sys::cuEventDestroy_v2(event);
                }
            }
            if !self.stream.is_null() {
                sys::cuStreamDestroy_v2(self.stream);
            }
            sys::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

/// NVML's spelling of a device UUID: `GPU-` and the 16 bytes as 8-4-4-4-12 hex digits.
pub fn nvml_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "GPU-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
