//! Kernel arguments on the host: element types, fills, `.npy`/raw files, and the comparison
//! of outputs with a reference. Nothing here needs a GPU.

use std::path::Path;

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::spec::{ArgumentSpec, SizeSpec};

/// The element type of an argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    /// `float`
    F32,
    /// `double`
    F64,
    /// `signed char`
    I8,
    /// `short`
    I16,
    /// `int`
    I32,
    /// `long long`
    I64,
    /// `unsigned char`
    U8,
    /// `unsigned short`
    U16,
    /// `unsigned int`
    U32,
    /// `unsigned long long`
    U64,
}

impl DType {
    /// The type called `name` in a spec.
    pub fn parse(name: &str) -> Option<DType> {
        Some(match name {
            "float32" | "float" | "f32" => DType::F32,
            "float64" | "double" | "f64" => DType::F64,
            "int8" | "i8" | "char" => DType::I8,
            "int16" | "i16" | "short" => DType::I16,
            "int32" | "i32" | "int" => DType::I32,
            "int64" | "i64" | "long" => DType::I64,
            "uint8" | "u8" => DType::U8,
            "uint16" | "u16" => DType::U16,
            "uint32" | "u32" | "uint" => DType::U32,
            "uint64" | "u64" => DType::U64,
            _ => return None,
        })
    }

    /// Its name in a spec (`float32`, `int64`, ...).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "float32",
            DType::F64 => "float64",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::U8 => "uint8",
            DType::U16 => "uint16",
            DType::U32 => "uint32",
            DType::U64 => "uint64",
        }
    }

    /// The type of NumPy's `descr` (`<f4`, `|u1`, `=i8`, ...); `None` for big-endian,
    /// boolean, complex and other types a kernel argument cannot have.
    pub fn from_npy_descr(descr: &str) -> Option<DType> {
        let (order, code) = descr.split_at_checked(1)?;
        if !matches!(order, "<" | "|" | "=") {
            return None;
        }
        Some(match code {
            "f4" => DType::F32,
            "f8" => DType::F64,
            "i1" => DType::I8,
            "i2" => DType::I16,
            "i4" => DType::I32,
            "i8" => DType::I64,
            "u1" => DType::U8,
            "u2" => DType::U16,
            "u4" => DType::U32,
            "u8" => DType::U64,
            _ => return None,
        })
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 => 2,
            DType::F32 | DType::I32 | DType::U32 => 4,
            DType::F64 | DType::I64 | DType::U64 => 8,
        }
    }

    /// Whether it is a floating-point type.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }

    /// NumPy's `descr` for it, little-endian (`<f4`, `<i8`, `|u1`, ...).
    pub fn npy_descr(self) -> &'static str {
        match self {
            DType::F32 => "<f4",
            DType::F64 => "<f8",
            DType::I8 => "|i1",
            DType::I16 => "<i2",
            DType::I32 => "<i4",
            DType::I64 => "<i8",
            DType::U8 => "|u1",
            DType::U16 => "<u2",
            DType::U32 => "<u4",
            DType::U64 => "<u8",
        }
    }

    /// The little-endian bytes of `v` converted to this type (saturating for integers).
    pub fn encode(self, v: f64, out: &mut Vec<u8>) {
        match self {
            DType::F32 => out.extend((v as f32).to_le_bytes()),
            DType::F64 => out.extend(v.to_le_bytes()),
            DType::I8 => out.extend((v as i8).to_le_bytes()),
            DType::I16 => out.extend((v as i16).to_le_bytes()),
            DType::I32 => out.extend((v as i32).to_le_bytes()),
            DType::I64 => out.extend((v as i64).to_le_bytes()),
            DType::U8 => out.extend((v as u8).to_le_bytes()),
            DType::U16 => out.extend((v as u16).to_le_bytes()),
            DType::U32 => out.extend((v as u32).to_le_bytes()),
            DType::U64 => out.extend((v as u64).to_le_bytes()),
        }
    }

    /// The little-endian bytes of the integer `v` (exact, also beyond 2^53); false when it
    /// does not fit the type.
    fn encode_int(self, v: i64, out: &mut Vec<u8>) -> bool {
        // Each integer type converted without loss, or refused.
        macro_rules! exact {
            ($t:ty) => {
                <$t>::try_from(v)
                    .map(|x| out.extend(x.to_le_bytes()))
                    .is_ok()
            };
        }
        match self {
            DType::I8 => exact!(i8),
            DType::I16 => exact!(i16),
            DType::I32 => exact!(i32),
            DType::I64 => exact!(i64),
            DType::U8 => exact!(u8),
            DType::U16 => exact!(u16),
            DType::U32 => exact!(u32),
            DType::U64 => exact!(u64),
            DType::F32 | DType::F64 => {
                self.encode(v as f64, out);
                true
            }
        }
    }

    /// Element `i` of little-endian `bytes` as an `f64`.
    pub fn get(self, bytes: &[u8], i: usize) -> f64 {
        let s = self.size();
        let b = &bytes[i * s..(i + 1) * s];
        match self {
            DType::F32 => f32::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::F64 => f64::from_le_bytes(b.try_into().unwrap_or_default()),
            DType::I8 => i8::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::I16 => i16::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::I32 => i32::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::I64 => i64::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::U8 => b[0] as f64,
            DType::U16 => u16::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::U32 => u32::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
            DType::U64 => u64::from_le_bytes(b.try_into().unwrap_or_default()) as f64,
        }
    }
}

/// A kernel argument ready to be copied to the device.
#[derive(Clone, Debug, PartialEq)]
pub enum HostArg {
    /// A device array: its initial contents.
    Array {
        /// The argument's name.
        name: String,
        /// Element type.
        dtype: DType,
        /// Little-endian elements.
        bytes: Vec<u8>,
        /// Written by the kernel: restored before each configuration, verified after.
        output: bool,
        /// The expected contents, from a file.
        expected: Option<Vec<u8>>,
    },
    /// A scalar passed by value: its bytes.
    Scalar {
        /// The argument's name.
        name: String,
        /// Its type.
        dtype: DType,
        /// Little-endian value.
        bytes: Vec<u8>,
    },
}

impl HostArg {
    /// The argument's name.
    pub fn name(&self) -> &str {
        match self {
            HostArg::Array { name, .. } | HostArg::Scalar { name, .. } => name,
        }
    }
}

/// Builds the arguments of a spec; `dir` resolves relative file names. Errors name the
/// argument and what is wrong.
pub fn build_args(specs: &[ArgumentSpec], dir: &Path) -> Result<Vec<HostArg>, String> {
    specs
        .iter()
        .enumerate()
        .map(|(i, a)| build_arg(i, a, dir).map_err(|e| format!("argument `{}`: {e}", a.name)))
        .collect()
}

/// A `__constant__` symbol's initial contents, copied into every loaded module.
#[derive(Clone, Debug, PartialEq)]
pub struct HostConstant {
    /// The symbol's name in the kernel source.
    pub name: std::ffi::CString,
    /// Little-endian elements.
    pub bytes: Vec<u8>,
}

/// The value of a constant expression of a spec's `key` (`"N * N"` once an instance bound
/// `N`), as TOML would have given it.
fn constant(source: &str, key: &str) -> Result<toml::Value, String> {
    use ktune_space::expr::Literal;
    match ktune_space::expr::eval_const(source) {
        Ok(Literal::Int(n)) => Ok(toml::Value::Integer(n)),
        Ok(Literal::Real(x)) => Ok(toml::Value::Float(x)),
        Ok(Literal::Bool(b)) => Ok(toml::Value::Boolean(b)),
        Ok(Literal::Str(t)) => Err(format!(
            "`{key} = \"{source}\"` is the string {t:?}, not a number"
        )),
        Err(e) => Err(format!(
            "`{key} = \"{source}\"` is not a constant expression (are its names [[instance]] variables?): {}",
            e.render(source)
        )),
    }
}

/// Builds the `[[runner.constant]]` entries of a spec (Kernel Tuner's `cmem_args`): arrays
/// with `size` and a fill or file, and nothing that only kernel arguments have. Random fills
/// are seeded by position after the `first_index` kernel arguments unless given a seed.
pub fn build_constants(
    specs: &[ArgumentSpec],
    first_index: usize,
    dir: &Path,
) -> Result<Vec<HostConstant>, String> {
    let mut out: Vec<HostConstant> = Vec::new();
    for (i, a) in specs.iter().enumerate() {
        let what = |e: String| format!("constant `{}`: {e}", a.name);
        if a.value.is_some() || a.output || a.expected.is_some() {
            return Err(what(
                "a constant is an array copied into the kernel's __constant__ memory: give `size` \
                 (and `fill` or `file`), not `value`, `output` or `expected`"
                    .into(),
            ));
        }
        if a.size.is_none() {
            return Err(what("give `size`, the number of elements".into()));
        }
        let name = std::ffi::CString::new(a.name.as_str())
            .map_err(|_| what("the name contains a NUL byte".into()))?;
        if out.iter().any(|c| c.name == name) {
            return Err(format!("two constants are called `{}`", a.name));
        }
        match build_arg(first_index + i, a, dir).map_err(what)? {
            HostArg::Array { bytes, .. } => out.push(HostConstant { name, bytes }),
            HostArg::Scalar { .. } => {
                return Err(what("give `size`, the number of elements".into()));
            }
        }
    }
    Ok(out)
}

fn build_arg(index: usize, a: &ArgumentSpec, dir: &Path) -> Result<HostArg, String> {
    let dtype = DType::parse(&a.dtype).ok_or_else(|| {
        format!(
            "unknown type `{}`; use float32, float64, int8, int16, int32, int64, uint8, uint16, uint32 or uint64",
            a.dtype
        )
    })?;
    match (&a.size, &a.value) {
        (Some(_), Some(_)) => {
            Err("give `size` for an array or `value` for a scalar, not both".into())
        }
        (None, None) => Err("give `size` (a device array) or `value` (a scalar)".into()),
        (None, Some(v)) => {
            if a.fill.is_some() || a.file.is_some() || a.output || a.expected.is_some() {
                return Err(
                    "a scalar (`value`) takes no `fill`, `file`, `output` or `expected`".into(),
                );
            }
            let mut bytes = Vec::new();
            // An expression (`value = "N * N"`, with an [[instance]]'s N bound) is its value.
            let evaluated;
            let v = match v {
                toml::Value::String(e) => {
                    evaluated = constant(e, "value")?;
                    &evaluated
                }
                v => v,
            };
            match v {
                toml::Value::Integer(n) => {
                    if !dtype.encode_int(*n, &mut bytes) {
                        return Err(format!("{n} does not fit in {}", a.dtype));
                    }
                }
                toml::Value::Float(x) if dtype.is_float() => dtype.encode(*x, &mut bytes),
                toml::Value::Boolean(b) => dtype.encode(f64::from(u8::from(*b)), &mut bytes),
                other => return Err(format!("`value = {other}` is not a {}", a.dtype)),
            }
            Ok(HostArg::Scalar {
                name: a.name.clone(),
                dtype,
                bytes,
            })
        }
        (Some(size), None) => {
            let size = match size {
                SizeSpec::Int(n) => *n,
                SizeSpec::Expr(e) => match constant(e, "size")? {
                    toml::Value::Integer(n) => n,
                    other => {
                        return Err(format!("`size = \"{e}\"` is {other}, not a whole number"));
                    }
                },
            };
            let len = usize::try_from(size).map_err(|_| {
                if size < 0 {
                    format!("`size` is {size}, below 0")
                } else {
                    "`size` is too large".to_string()
                }
            })?;
            let bytes = match (&a.file, &a.fill) {
                (Some(_), Some(_)) => {
                    return Err("give `fill` or `file`, not both".into());
                }
                (Some(f), None) => read_elements(&dir.join(f), dtype, len)?,
                (None, fill) => fill_bytes(
                    dtype,
                    len,
                    fill.as_ref(),
                    a.range,
                    a.seed.unwrap_or(index as u64),
                )?,
            };
            let expected = a
                .expected
                .as_ref()
                .map(|f| read_elements(&dir.join(f), dtype, len))
                .transpose()?;
            Ok(HostArg::Array {
                name: a.name.clone(),
                dtype,
                bytes,
                output: a.output || expected.is_some(),
                expected,
            })
        }
    }
}

fn fill_bytes(
    dtype: DType,
    len: usize,
    fill: Option<&toml::Value>,
    range: Option<[f64; 2]>,
    seed: u64,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(len * dtype.size());
    match fill {
        None => out.resize(len * dtype.size(), 0),
        Some(toml::Value::String(s)) if s == "zeros" => out.resize(len * dtype.size(), 0),
        Some(toml::Value::String(s)) if s == "random" => {
            let [lo, hi] = range.unwrap_or(if dtype.is_float() {
                [0.0, 1.0]
            } else {
                [0.0, 100.0]
            });
            if !(lo < hi && lo.is_finite() && hi.is_finite()) {
                return Err(format!("`range = [{lo}, {hi}]` is empty"));
            }
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            for _ in 0..len {
                let v = if dtype.is_float() {
                    rng.random_range(lo..hi)
                } else {
                    // Integers in [lo, hi), uniformly.
                    (rng.random_range(lo.ceil()..hi.ceil())).floor()
                };
                dtype.encode(v, &mut out);
            }
        }
        Some(toml::Value::Integer(n)) => {
            let mut one = Vec::new();
            if !dtype.encode_int(*n, &mut one) {
                return Err(format!("fill {n} does not fit in the element type"));
            }
            for _ in 0..len {
                out.extend_from_slice(&one);
            }
        }
        Some(toml::Value::Float(x)) => {
            for _ in 0..len {
                dtype.encode(*x, &mut out);
            }
        }
        Some(other) => {
            return Err(format!(
                "`fill = {other}`: use \"random\", \"zeros\" or a number"
            ));
        }
    }
    Ok(out)
}

/// Reads `len` elements of `dtype` from a `.npy` file (C order, the same element type) or,
/// for any other extension, raw little-endian elements.
pub fn read_elements(path: &Path, dtype: DType, len: usize) -> Result<Vec<u8>, String> {
    let data = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    let body = if path.extension().is_some_and(|e| e == "npy") {
        npy_body(&data, dtype).map_err(|e| format!("`{}`: {e}", path.display()))?
    } else {
        &data[..]
    };
    let want = len * dtype.size();
    if body.len() != want {
        return Err(format!(
            "`{}` holds {} bytes of data, but {len} elements of this type need {want}",
            path.display(),
            body.len()
        ));
    }
    Ok(body.to_vec())
}

/// The data of a `.npy` file after checking its header. Written by hand: the format is a
/// magic string, a length and a Python dict literal, and the crates that read it bring an
/// array library with them.
pub fn npy_body(data: &[u8], dtype: DType) -> Result<&[u8], String> {
    if data.len() < 10 || &data[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (no \\x93NUMPY magic)".into());
    }
    let (header_len, start) = match data[6] {
        1 => (u16::from_le_bytes([data[8], data[9]]) as usize, 10),
        2 | 3 if data.len() >= 12 => (
            u32::from_le_bytes([data[8], data[9], data[10], data[11]]) as usize,
            12,
        ),
        v => return Err(format!(".npy format version {v} is not supported")),
    };
    let header = data
        .get(start..start + header_len)
        .ok_or("the .npy header is cut off")?;
    let header = std::str::from_utf8(header).map_err(|_| "the .npy header is not text")?;
    let field = |key: &str| -> Option<&str> {
        let at = header.find(&format!("'{key}':"))? + key.len() + 3;
        Some(header[at..].trim_start())
    };
    let descr = field("descr")
        .and_then(|s| s.strip_prefix('\''))
        .and_then(|s| s.split('\'').next())
        .ok_or("the .npy header has no descr")?;
    let want = dtype.npy_descr();
    // `|u1` and `<u1` (and `=`) mean the same for one-byte types.
    let same = descr == want
        || (dtype.size() == 1 && descr[1..] == want[1..])
        || (descr.starts_with('=') && descr[1..] == want[1..]);
    if !same {
        return Err(format!(
            "holds elements of type `{descr}`, but the argument is `{want}` (convert it with numpy's astype)"
        ));
    }
    if field("fortran_order").is_some_and(|s| s.starts_with("True")) {
        return Err("is in Fortran order; save it in C order (numpy.ascontiguousarray)".into());
    }
    Ok(&data[start + header_len..])
}

/// Writes `bytes` of `dtype` as a one-dimensional `.npy` file (version 1.0).
pub fn npy_bytes(dtype: DType, bytes: &[u8]) -> Vec<u8> {
    let len = bytes.len() / dtype.size();
    let mut header = format!(
        "{{'descr': '{}', 'fortran_order': False, 'shape': ({len},), }}",
        dtype.npy_descr()
    );
    // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(bytes);
    out
}

/// How an output differs from its reference.
#[derive(Clone, Debug, PartialEq)]
pub struct Mismatch {
    /// Elements outside the tolerance.
    pub count: usize,
    /// Elements compared.
    pub total: usize,
    /// The first such element: index, value, expected value.
    pub first: (usize, f64, f64),
    /// The largest absolute difference.
    pub max_abs: f64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (i, got, want) = self.first;
        write!(
            f,
            "{} of {} elements differ (largest difference {:.3e}); first at [{i}]: {got} instead of {want}",
            self.count, self.total, self.max_abs
        )
    }
}

/// Compares `got` with `want` element by element: equal when `|got - want| <= atol + rtol *
/// |want|` (NumPy's `isclose`), or both NaN.
pub fn compare(dtype: DType, got: &[u8], want: &[u8], atol: f64, rtol: f64) -> Option<Mismatch> {
    // Outputs are often tens of millions of elements, checked after every configuration:
    // the common float types get a loop over typed chunks (several times faster than going
    // through `DType::get`), which finds the first difference; the rest is then counted.
    let first = match dtype {
        DType::F32 => {
            first_difference::<4>(got, want, atol, rtol, |b| f32::from_le_bytes(b) as f64)
        }
        DType::F64 => first_difference::<8>(got, want, atol, rtol, f64::from_le_bytes),
        _ => Some(0),
    }?;
    let n = want.len() / dtype.size();
    let mut out: Option<Mismatch> = None;
    for i in first..n {
        let (g, w) = (dtype.get(got, i), dtype.get(want, i));
        if !close(g, w, atol, rtol) {
            let d = if (g - w).is_nan() {
                f64::INFINITY
            } else {
                (g - w).abs()
            };
            match &mut out {
                None => {
                    out = Some(Mismatch {
                        count: 1,
                        total: n,
                        first: (i, g, w),
                        max_abs: d,
                    })
                }
                Some(m) => {
                    m.count += 1;
                    m.max_abs = m.max_abs.max(d);
                }
            }
        }
    }
    out
}

fn close(g: f64, w: f64, atol: f64, rtol: f64) -> bool {
    (g.is_nan() && w.is_nan()) || g == w || (g - w).abs() <= atol + rtol * w.abs()
}

/// The index of the first element of `N`-byte values that differs, if any.
fn first_difference<const N: usize>(
    got: &[u8],
    want: &[u8],
    atol: f64,
    rtol: f64,
    value: impl Fn([u8; N]) -> f64,
) -> Option<usize> {
    let (g, w) = (got.chunks_exact(N), want.chunks_exact(N));
    for (i, (g, w)) in g.zip(w).enumerate() {
        // Bitwise-equal elements (the usual case) need no arithmetic.
        if g != w {
            let gv = value(g.try_into().unwrap_or([0; N]));
            let wv = value(w.try_into().unwrap_or([0; N]));
            if !close(gv, wv, atol, rtol) {
                return Some(i);
            }
        }
    }
    None
}
