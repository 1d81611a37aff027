//! Compiling one configuration with NVRTC (the CUDA runtime compiler), loaded at run time.
//!
//! NVRTC is a host library and thread-safe for separate programs, so configurations are
//! compiled on worker threads while the GPU benchmarks another one. The result is a CUBIN for
//! the device's architecture when NVRTC supports it (no JIT at load time), else PTX for the
//! newest architecture it knows.
//!
//! NVRTC is bound here, by hand, rather than through cudarc's `nvrtc` module: cudarc looks
//! the library up by a fixed list of names for one CUDA major version (`libnvrtc.so`,
//! `libnvrtc.so.12`, ...), so with its CUDA 12 bindings a CUDA 13 installation that has only
//! `libnvrtc.so.13` (the runtime packages, the `nvidia-cuda-nvrtc` wheel) is not found, and it
//! cannot be pointed at a file. The fifteen entry points used below have had the same C
//! signatures since CUDA 11.2, so one binding serves CUDA 11, 12 and 13; [`Nvrtc::find`]
//! searches the places a toolkit is installed (see [`candidates`]).

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Instant;

use libloading::Library;

/// The environment variable that names the NVRTC library file to use.
pub const NVRTC_ENV: &str = "KTUNE_NVRTC";

type Res = c_int;
type Prog = *mut std::ffi::c_void;
const SUCCESS: Res = 0;

/// NVRTC's entry points, resolved once from the library.
struct Api {
    version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> Res,
    num_supported_archs: unsafe extern "C" fn(*mut c_int) -> Res,
    supported_archs: unsafe extern "C" fn(*mut c_int) -> Res,
    error_string: unsafe extern "C" fn(Res) -> *const c_char,
    create_program: unsafe extern "C" fn(
        *mut Prog,
        *const c_char,
        *const c_char,
        c_int,
        *const *const c_char,
        *const *const c_char,
    ) -> Res,
    destroy_program: unsafe extern "C" fn(*mut Prog) -> Res,
    add_name_expression: unsafe extern "C" fn(Prog, *const c_char) -> Res,
    compile_program: unsafe extern "C" fn(Prog, c_int, *const *const c_char) -> Res,
    lowered_name: unsafe extern "C" fn(Prog, *const c_char, *mut *const c_char) -> Res,
    log_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    log: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    cubin_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    cubin: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
    ptx_size: unsafe extern "C" fn(Prog, *mut usize) -> Res,
    ptx: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
}

/// A loaded NVRTC library.
pub struct Nvrtc {
    api: Api,
    /// The file it was loaded from (or the name the loader resolved).
    pub path: PathBuf,
    /// Kept loaded for as long as the function pointers in `api` are used.
    _lib: Library,
}

/// Where NVRTC is looked for, in order: the file `KTUNE_NVRTC` names (and nothing else when
/// it is set); the names the dynamic loader resolves through `LD_LIBRARY_PATH` and the
/// `ldconfig` cache, newest CUDA first (`libnvrtc.so.13`, `.so.12`, `.so.11.2`, then the
/// unversioned `libnvrtc.so` of a development install); then the `lib64` and `lib`
/// directories of `$CUDA_HOME`, `$CUDA_PATH`, `/usr/local/cuda`, every `/usr/local/cuda-X.Y`
/// (newest first) and `/opt/cuda`.
pub fn candidates(env: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    if let Some(file) = env(NVRTC_ENV).filter(|f| !f.is_empty()) {
        return vec![PathBuf::from(file)];
    }
    const NAMES: [&str; 4] = [
        "libnvrtc.so.13",
        "libnvrtc.so.12",
        "libnvrtc.so.11.2",
        "libnvrtc.so",
    ];
    let mut out: Vec<PathBuf> = NAMES.iter().map(PathBuf::from).collect();
    let mut roots: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| env(v).filter(|s| !s.is_empty()).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/cuda"));
    roots.extend(versioned_toolkits(Path::new("/usr/local")));
    roots.push(PathBuf::from("/opt/cuda"));
    for root in roots {
        for lib in ["lib64", "lib"] {
            for name in NAMES {
                let p = root.join(lib).join(name);
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// `dir/cuda-X.Y` directories, newest version first.
fn versioned_toolkits(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(Vec<u32>, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let version = name.strip_prefix("cuda-")?;
            let key: Vec<u32> = version
                .split('.')
                .map(|p| p.parse().ok())
                .collect::<Option<_>>()?;
            Some((key, e.path()))
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0));
    found.into_iter().map(|(_, p)| p).collect()
}

impl Nvrtc {
    /// NVRTC, loaded on first use and kept for the process; `Err` says where it was looked
    /// for.
    pub fn get() -> Result<&'static Nvrtc, String> {
        static NVRTC: OnceLock<Result<Nvrtc, String>> = OnceLock::new();
        NVRTC
            .get_or_init(|| Nvrtc::find(&candidates(&|v| std::env::var(v).ok())))
            .as_ref()
            .map_err(|e| e.clone())
    }

    /// Loads the first of `candidates` that is an NVRTC library.
    pub fn find(candidates: &[PathBuf]) -> Result<Nvrtc, String> {
        let mut tried = Vec::new();
        for c in candidates {
            // A bare name goes to the dynamic loader's search; a path must exist.
            if c.components().count() > 1 && !c.exists() {
                continue;
            }
            match Nvrtc::load(c) {
                Ok(n) => return Ok(n),
                Err(e) => tried.push(format!("{}: {e}", c.display())),
            }
        }
        let searched: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
        Err(format!(
            "NVRTC (the CUDA runtime compiler, libnvrtc.so) could not be loaded; looked for {}{}. \
             Install the CUDA toolkit (or the nvidia-cuda-nvrtc package) and put its library \
             directory on LD_LIBRARY_PATH, or name the file in {NVRTC_ENV}=/path/to/libnvrtc.so.13",
            searched.join(", "),
            if tried.is_empty() {
                String::new()
            } else {
                format!(" (found but unusable: {})", tried.join("; "))
            }
        ))
    }

    /// Loads NVRTC from `file` (a path, or a name for the loader to resolve).
    pub fn load(file: &Path) -> Result<Nvrtc, String> {
        // SAFETY: loading NVRTC runs its initialisers, which have no preconditions; every
        // symbol is looked up with the C signature NVRTC declares for it (nvrtc.h, unchanged
        // from CUDA 11.2 to 13), and the pointers are used only while `_lib` is loaded.
        unsafe {
            let lib = Library::new(file.as_os_str()).map_err(|e| e.to_string())?;
            macro_rules! sym {
                ($name:literal) => {
                    *lib.get(concat!($name, "\0").as_bytes())
                        .map_err(|e| format!("not NVRTC: no `{}` ({e})", $name))?
                };
            }
            let api = Api {
                version: sym!("nvrtcVersion"),
                num_supported_archs: sym!("nvrtcGetNumSupportedArchs"),
                supported_archs: sym!("nvrtcGetSupportedArchs"),
                error_string: sym!("nvrtcGetErrorString"),
                create_program: sym!("nvrtcCreateProgram"),
                destroy_program: sym!("nvrtcDestroyProgram"),
                add_name_expression: sym!("nvrtcAddNameExpression"),
                compile_program: sym!("nvrtcCompileProgram"),
                lowered_name: sym!("nvrtcGetLoweredName"),
                log_size: sym!("nvrtcGetProgramLogSize"),
                log: sym!("nvrtcGetProgramLog"),
                cubin_size: sym!("nvrtcGetCUBINSize"),
                cubin: sym!("nvrtcGetCUBIN"),
                ptx_size: sym!("nvrtcGetPTXSize"),
                ptx: sym!("nvrtcGetPTX"),
            };
            Ok(Nvrtc {
                api,
                path: file.to_path_buf(),
                _lib: lib,
            })
        }
    }

    /// NVRTC's version, `(major, minor)`.
    pub fn version(&self) -> Option<(i32, i32)> {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: both pointers are valid for writes.
        let r = unsafe { (self.api.version)(&mut major, &mut minor) };
        (r == SUCCESS).then_some((major, minor))
    }

    /// The architectures (e.g. 90 for sm_90) this NVRTC can generate code for.
    pub fn supported_archs(&self) -> Vec<i32> {
        let mut n: c_int = 0;
        // SAFETY: valid out-pointers; the array has the size NVRTC reported.
        unsafe {
            if (self.api.num_supported_archs)(&mut n) != SUCCESS || n <= 0 {
                return Vec::new();
            }
            let mut archs = vec![0 as c_int; n as usize];
            if (self.api.supported_archs)(archs.as_mut_ptr()) != SUCCESS {
                return Vec::new();
            }
            archs
        }
    }

    fn error_text(&self, r: Res) -> String {
        // SAFETY: NVRTC returns a static NUL-terminated string for every result code.
        unsafe {
            let p = (self.api.error_string)(r);
            if p.is_null() {
                format!("NVRTC error {r}")
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        }
    }
}

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

/// Destroys the program when dropped, whatever path the compile takes.
struct Program<'a> {
    nvrtc: &'a Nvrtc,
    handle: Prog,
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvrtcCreateProgram and is destroyed once.
        unsafe {
            (self.nvrtc.api.destroy_program)(&mut self.handle);
        }
    }
}

impl Program<'_> {
    fn log(&self) -> String {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointers; the buffer has the size NVRTC reported.
        unsafe {
            if (self.nvrtc.api.log_size)(self.handle, &mut size) != SUCCESS || size <= 1 {
                return String::new();
            }
            let mut buf = vec![0u8; size];
            if (self.nvrtc.api.log)(self.handle, buf.as_mut_ptr() as *mut c_char) != SUCCESS {
                return String::new();
            }
            buf.truncate(size - 1);
            String::from_utf8_lossy(&buf).trim().to_string()
        }
    }

    /// The compiled image: its size, then its bytes.
    fn image(
        &self,
        size_of: unsafe extern "C" fn(Prog, *mut usize) -> Res,
        get: unsafe extern "C" fn(Prog, *mut c_char) -> Res,
        what: &str,
    ) -> Result<Vec<u8>, String> {
        let mut size = 0usize;
        // SAFETY: valid program and out-pointer; the buffer has the size NVRTC reported.
        unsafe {
            let r = size_of(self.handle, &mut size);
            if r != SUCCESS {
                return Err(format!(
                    "NVRTC gave no {what}: {}",
                    self.nvrtc.error_text(r)
                ));
            }
            let mut buf = vec![0u8; size];
            let r = get(self.handle, buf.as_mut_ptr() as *mut c_char);
            if r != SUCCESS {
                return Err(format!(
                    "NVRTC gave no {what}: {}",
                    self.nvrtc.error_text(r)
                ));
            }
            Ok(buf)
        }
    }
}

impl Nvrtc {
    /// Compiles `source` (named `file_name` in messages) with `options`, keeping the kernel
    /// named by `name_expression` (`kernel` or `kernel<float, 16>`). `Err` is the
    /// compiler's log (or why NVRTC could not run).
    pub fn compile(
        &self,
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
        let api = &self.api;
        // SAFETY: every pointer passed below points into CStrings that outlive the calls;
        // the program handle is owned by `Program` and destroyed once.
        unsafe {
            let mut handle: Prog = std::ptr::null_mut();
            let r = (api.create_program)(
                &mut handle,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if r != SUCCESS {
                return Err(format!(
                    "NVRTC could not create the program: {}",
                    self.error_text(r)
                ));
            }
            let prog = Program {
                nvrtc: self,
                handle,
            };
            let r = (api.add_name_expression)(prog.handle, expr.as_ptr());
            if r != SUCCESS {
                return Err(format!(
                    "NVRTC rejected the kernel name `{name_expression}`: {}",
                    self.error_text(r)
                ));
            }
            let r = (api.compile_program)(prog.handle, opt_ptrs.len() as c_int, opt_ptrs.as_ptr());
            if r != SUCCESS {
                let log = prog.log();
                return Err(if log.is_empty() {
                    self.error_text(r)
                } else {
                    log
                });
            }
            let mut lowered: *const c_char = std::ptr::null();
            let r = (api.lowered_name)(prog.handle, expr.as_ptr(), &mut lowered);
            if r != SUCCESS || lowered.is_null() {
                return Err(format!(
                    "the source has no kernel `{name_expression}` ({}); is it declared __global__?",
                    self.error_text(r)
                ));
            }
            // The lowered name lives in the program: copy it before the program is destroyed.
            let lowered_name = CStr::from_ptr(lowered).to_owned();
            let image = if cubin {
                prog.image(api.cubin_size, api.cubin, "CUBIN")?
            } else {
                prog.image(api.ptx_size, api.ptx, "PTX")?
            };
            Ok(Compiled {
                image,
                lowered_name,
                seconds: started.elapsed().as_secs_f64(),
            })
        }
    }
}
