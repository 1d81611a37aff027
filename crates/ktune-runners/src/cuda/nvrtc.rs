//! Compiling one configuration with NVRTC (the CUDA runtime compiler), loaded at run time.
//!
//! NVRTC is a host library and thread-safe for separate programs, so configurations are
//! compiled on worker threads while the GPU benchmarks another one. The result is a CUBIN for
//! the device's architecture when NVRTC supports it (no JIT at load time), else PTX for the
//! newest architecture it knows.

use std::ffi::{CStr, CString, c_char, c_int};
use std::time::Instant;

use cudarc::nvrtc::sys;

/// NVRTC's output for one configuration.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// A CUBIN, or PTX text ending in NUL.
    pub image: Vec<u8>,
    /// The kernel's lowered (mangled) name, to look it up in the module.
    pub lowered_name: CString,
    /// Seconds NVRTC took.
    pub seconds: f64,
}

/// Whether NVRTC can be loaded.
pub fn available() -> bool {
    // SAFETY: only tries to dlopen the library by its candidate names.
    unsafe { sys::is_culib_present() }
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Option<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the caller checked `available()`; both pointers are valid.
    let r = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
    (r == sys::nvrtcResult::NVRTC_SUCCESS).then_some((major, minor))
}

/// The architectures (e.g. 90 for sm_90) this NVRTC can generate code for.
pub fn supported_archs() -> Vec<i32> {
    let mut n: c_int = 0;
    // SAFETY: valid out-pointers; the array has the size NVRTC reported.
    unsafe {
        if sys::nvrtcGetNumSupportedArchs(&mut n) != sys::nvrtcResult::NVRTC_SUCCESS || n <= 0 {
            return Vec::new();
        }
        let mut archs = vec![0 as c_int; n as usize];
        if sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) != sys::nvrtcResult::NVRTC_SUCCESS {
            return Vec::new();
        }
        archs
    }
}

/// The `-arch` option for a device of compute capability `cc` (e.g. 90), and whether it
/// yields a CUBIN (`sm_XY`) or PTX for the driver to JIT (`compute_XY`, when NVRTC does not
/// know the device).
pub fn arch_option(cc: i32, supported: &[i32]) -> (String, bool) {
    if supported.is_empty() || supported.contains(&cc) {
        (format!("--gpu-architecture=sm_{cc}"), true)
    } else {
        let best = supported
            .iter()
            .copied()
            .filter(|&a| a <= cc)
            .max()
            .unwrap_or(supported[0]);
        (format!("--gpu-architecture=compute_{best}"), false)
    }
}

fn error_text(r: sys::nvrtcResult) -> String {
    // SAFETY: NVRTC returns a static NUL-terminated string for every result code.
    unsafe {
        let p = sys::nvrtcGetErrorString(r);
        if p.is_null() {
            format!("{r:?}")
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    }
}

/// Destroys the program when dropped, whatever path the compile takes.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed once.
        unsafe {
            sys::nvrtcDestroyProgram(&mut self.0);
        }
    }
}

impl Program {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointers; the buffer has the size NVRTC reported.
        unsafe {
            if sys::nvrtcGetProgramLogSize(self.0, &mut size) != sys::nvrtcResult::NVRTC_SUCCESS
                || size <= 1
            {
                return String::new();
            }
            let mut buf = vec![0u8; size];
            if sys::nvrtcGetProgramLog(self.0, buf.as_mut_ptr() as *mut c_char)
                != sys::nvrtcResult::NVRTC_SUCCESS
            {
                return String::new();
            }
            buf.truncate(size - 1);
            String::from_utf8_lossy(&buf).trim().to_string()
        }
    }
}

/// Compiles `source` (named `file_name` in messages) with `options`, keeping the kernel
/// named by `name_expression` (`kernel` or `kernel<float, 16>`). `Err` is the compiler's
/// log (or why NVRTC could not run).
pub fn compile(
    source: &str,
    file_name: &str,
    name_expression: &str,
    options: &[String],
    cubin: bool,
) -> Result<Compiled, String> {
    let started = Instant::now();
    let src = CString::new(source).map_err(|_| "the source contains a NUL byte".to_string())?;
    let name = CString::new(file_name).unwrap_or_else(|_| c"kernel.cu".to_owned());
    let expr = CString::new(name_expression)
        .map_err(|_| "the kernel name contains a NUL byte".to_string())?;
    let opts: Vec<CString> = options
        .iter()
        .map(|o| CString::new(o.as_str()))
        .collect::<Result<_, _>>()
        .map_err(|_| "a compiler option contains a NUL byte".to_string())?;
    let opt_ptrs: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: every pointer passed below points into CStrings that outlive the calls; the
    // program handle is owned by `Program` and destroyed once.
    unsafe {
        let mut raw: sys::nvrtcProgram = std::ptr::null_mut();
        let r = sys::nvrtcCreateProgram(
            &mut raw,
            src.as_ptr(),
            name.as_ptr(),
            0,
            std::ptr::null(),
            std::ptr::null(),
        );
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!(
                "NVRTC could not create the program: {}",
                error_text(r)
            ));
        }
        let prog = Program(raw);
        let r = sys::nvrtcAddNameExpression(prog.0, expr.as_ptr());
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(format!(
                "NVRTC rejected the kernel name `{name_expression}`: {}",
                error_text(r)
            ));
        }
        let r = sys::nvrtcCompileProgram(prog.0, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
        if r != sys::nvrtcResult::NVRTC_SUCCESS {
            let log = prog.log();
            return Err(if log.is_empty() { error_text(r) } else { log });
        }
        let mut lowered: *const c_char = std::ptr::null();
        let r = sys::nvrtcGetLoweredName(prog.0, expr.as_ptr(), &mut lowered);
        if r != sys::nvrtcResult::NVRTC_SUCCESS || lowered.is_null() {
            return Err(format!(
                "the source has no kernel `{name_expression}` ({}); is it declared __global__?",
                error_text(r)
            ));
        }
        // The lowered name lives in the program: copy it before the program is destroyed.
        let lowered_name = CStr::from_ptr(lowered).to_owned();
        let mut size = 0usize;
        let image = if cubin {
            let r = sys::nvrtcGetCUBINSize(prog.0, &mut size);
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("NVRTC gave no CUBIN: {}", error_text(r)));
            }
            let mut buf = vec![0u8; size];
            let r = sys::nvrtcGetCUBIN(prog.0, buf.as_mut_ptr() as *mut c_char);
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("NVRTC gave no CUBIN: {}", error_text(r)));
            }
            buf
        } else {
            let r = sys::nvrtcGetPTXSize(prog.0, &mut size);
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("NVRTC gave no PTX: {}", error_text(r)));
            }
            let mut buf = vec![0u8; size];
            let r = sys::nvrtcGetPTX(prog.0, buf.as_mut_ptr() as *mut c_char);
            if r != sys::nvrtcResult::NVRTC_SUCCESS {
                return Err(format!("NVRTC gave no PTX: {}", error_text(r)));
            }
            buf
        };
        Ok(Compiled {
            image,
            lowered_name,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}
