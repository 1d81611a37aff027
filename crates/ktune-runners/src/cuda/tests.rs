//! Tests of the CUDA runner. Everything up to the GPU runs here; the tests marked
//! `#[ignore = "needs an NVIDIA GPU ..."]` run on a GPU machine with `cargo test -- --ignored`.

use std::path::{Path, PathBuf};

use ktune_space::{Parameter, SearchSpace, Value};

use super::data::{DType, HostArg, build_args, compare, npy_bytes, read_elements};
use super::launch::define_text;
use super::*;

fn space() -> SearchSpace {
    SearchSpace::new(
        vec![
            Parameter::integer("block_size_x", [32, 64, 128]).unwrap(),
            Parameter::integer("block_size_y", [1, 2, 4]).unwrap(),
            Parameter::integer("tile", [1, 2, 0]).unwrap(),
            Parameter::boolean("fast").unwrap(),
        ],
        &["block_size_x * block_size_y <= 256"],
    )
    .unwrap()
}

fn config(space: &SearchSpace, bx: i64, by: i64, tile: i64, fast: bool) -> Configuration {
    space
        .configuration_of(&[
            Value::Int(bx),
            Value::Int(by),
            Value::Int(tile),
            Value::Bool(fast),
        ])
        .unwrap()
}

/// A spec from TOML, with a kernel source file written into `dir`.
fn spec_in(dir: &Path, text: &str) -> CudaSpec {
    std::fs::write(
        dir.join("k.cu"),
        "extern \"C\" __global__ void k(float *x, int n) {}\n",
    )
    .unwrap();
    let full = format!("source = \"k.cu\"\nkernel = \"k\"\n{text}");
    toml::from_str(&full).unwrap_or_else(|e| panic!("{e}\n{full}"))
}

fn problem(text: &str) -> Result<Problem, CudaError> {
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(dir.path(), text);
    Problem::new(&spec, &space(), dir.path())
}

#[track_caller]
fn problem_err(text: &str) -> String {
    ktune_core::testing::refusal(problem(text))
}

#[test]
fn grids_divide_the_problem_size_by_the_block_rounding_up() {
    let s = space();
    let p = problem("problem_size = [1000, 30]").unwrap();
    let l = p.launch(&s, &config(&s, 128, 2, 1, false)).unwrap();
    assert_eq!(l.block, [128, 2, 1]);
    assert_eq!(l.grid, [8, 15, 1]);
    assert_eq!(l.threads(), 256);
    assert_eq!(l.shared_bytes, 0);
    assert_eq!(l.name_expression, "k");
}

#[test]
fn grid_divisors_are_products_of_expressions() {
    let s = space();
    let p = problem(
        "problem_size = [4096, \"64 * block_size_y\"]\n\
         grid_div_x = [\"block_size_x\", \"tile if tile > 0 else 1\"]\n\
         grid_div_y = [\"block_size_y * 2\"]",
    )
    .unwrap();
    let l = p.launch(&s, &config(&s, 64, 4, 2, false)).unwrap();
    assert_eq!(l.grid, [32, 32, 1]);
    let l = p.launch(&s, &config(&s, 64, 4, 0, false)).unwrap();
    assert_eq!(l.grid, [64, 32, 1]);
}

#[test]
fn an_empty_grid_divisor_makes_the_problem_size_the_grid() {
    // Kernel Tuner's `grid_div_x = []`: the problem size counts blocks, not threads.
    let s = space();
    let p = problem("problem_size = [\"block_size_y * 10\", 6]\ngrid_div_x = []").unwrap();
    let l = p.launch(&s, &config(&s, 128, 4, 1, false)).unwrap();
    assert_eq!(l.block, [128, 4, 1]);
    assert_eq!(l.grid, [40, 2, 1]);
}

#[test]
fn block_names_that_are_not_parameters_take_kernel_tuners_defaults() {
    let s = SearchSpace::new(
        vec![Parameter::integer("tile", [1, 2]).unwrap()],
        &[] as &[&str],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(dir.path(), "problem_size = [1024]");
    let p = Problem::new(&spec, &s, dir.path()).unwrap();
    let l = p.launch(&s, &s.configuration(1)).unwrap();
    assert_eq!(l.block, [256, 1, 1]);
    assert_eq!(l.grid, [4, 1, 1]);
    let defines: Vec<String> = l.defines.iter().map(|(k, v)| format!("{k}={v}")).collect();
    assert_eq!(
        defines,
        [
            "grid_size_x=4",
            "grid_size_y=1",
            "grid_size_z=1",
            "block_size_x=256",
            "block_size_y=1",
            "block_size_z=1",
            "tile=2",
            "kernel_tuner=1",
            "ktune=1"
        ]
    );
}

#[test]
fn every_parameter_becomes_a_define_and_a_template_argument() {
    let s = space();
    let p = problem(
        "problem_size = [256]\ntemplate_args = [\"float\", \"{block_size_x}\", \"{fast}\"]\n\
         shared_memory = \"block_size_x * 4 * (tile + 1)\"\nflops = \"2.0 * block_size_x\"",
    )
    .unwrap();
    let l = p.launch(&s, &config(&s, 32, 4, 2, true)).unwrap();
    assert_eq!(l.name_expression, "k<float, 32, 1>");
    assert_eq!(l.shared_bytes, 384);
    assert_eq!(l.flops, Some(64.0));
    let has = |k: &str, v: &str| l.defines.iter().any(|(a, b)| a == k && b == v);
    assert!(
        has("block_size_x", "32") && has("block_size_y", "4"),
        "{:?}",
        l.defines
    );
    assert!(has("block_size_z", "1") && has("fast", "1") && has("tile", "2"));
    assert!(has("grid_size_x", "8"));
    let options = p.compiler_options("--gpu-architecture=sm_90");
    assert_eq!(options[0], "--gpu-architecture=sm_90");
    assert!(options[1].starts_with("--include-path="), "{options:?}");
    assert!(!options.iter().any(|o| o.starts_with("-D")), "{options:?}");
    // The defines are lines of the source, before the kernel's own first line.
    let text = p.source_with_defines(&l);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.contains(&"#define block_size_x 32"), "{text}");
    assert!(lines.contains(&"#define fast 1"), "{text}");
    let line1 = lines
        .iter()
        .position(|l| l.starts_with("#line 1 "))
        .unwrap();
    assert_eq!(line1, l.defines.len(), "{text}");
    assert_eq!(lines[line1], "#line 1 \"k.cu\"");
    assert_eq!(lines[line1 + 1..].join("\n"), p.source.trim_end());
}

#[test]
fn values_are_written_as_c_source() {
    assert_eq!(define_text(&Value::Bool(true)), "1");
    assert_eq!(define_text(&Value::Bool(false)), "0");
    assert_eq!(define_text(&Value::Real(0.5)), "0.5");
    assert_eq!(define_text(&Value::Real(2.0)), "2.0");
    assert_eq!(define_text(&Value::Int(-3)), "-3");
    assert_eq!(define_text(&Value::Str("float4".into())), "float4");
    assert_eq!(define_text(&Value::Perm(vec![2, 0, 1])), "{2, 0, 1}");
}

#[test]
fn configurations_that_cannot_launch_say_why() {
    let s = space();
    let p = problem("problem_size = [1024]\ngrid_div_x = [\"tile\"]").unwrap();
    let e = p.launch(&s, &config(&s, 32, 1, 0, false)).unwrap_err();
    assert!(
        e.contains("grid_div_x `tile`") || e.contains("divisor"),
        "{e}"
    );
    let p = problem("problem_size = [1024]\ngrid_div_x = [\"1 // tile\"]").unwrap();
    let e = p.launch(&s, &config(&s, 32, 1, 0, false)).unwrap_err();
    assert!(e.contains("division") || e.contains("zero"), "{e}");
    let p = problem("problem_size = [1024]\nshared_memory = \"0 - block_size_x\"").unwrap();
    let e = p.launch(&s, &config(&s, 32, 1, 1, false)).unwrap_err();
    assert!(e.contains("shared_memory"), "{e}");
}

#[test]
fn bad_specs_are_clear_errors() {
    let e = problem_err("problem_size = []");
    assert!(e.contains("problem_size needs one to three"), "{e}");
    let e = problem_err("problem_size = [1, 2, 3, 4]");
    assert!(e.contains("problem_size"), "{e}");
    let e = problem_err("problem_size = [0]");
    assert!(e.contains("at least 1"), "{e}");
    // An unknown name in an expression is drawn with a caret under it.
    let e = problem_err("problem_size = [1024]\ngrid_div_x = [\"block_size_x * tile_x\"]");
    ktune_core::testing::assert_mentions(&e, &["grid_div_x", "tile_x", "^"]);
    // Said once, not once before the drawing and again inside it.
    assert_eq!(e.matches("unknown name").count(), 1, "{e}");
    let e = problem_err("problem_size = [8]\nrepeat = 0");
    assert!(e.contains("repeat"), "{e}");
    let e = problem_err("problem_size = [8]\nkernel_timeout = -1.0");
    assert!(e.contains("kernel_timeout"), "{e}");
    let e = problem_err("problem_size = [8]\nobjective = \"GFLOP/s\"");
    assert!(e.contains("needs `flops`"), "{e}");
    let e = problem_err("problem_size = [8]\nobjective = \"energy\"\npower = false");
    assert!(e.contains("needs power"), "{e}");
    let e = problem_err("problem_size = [8]\ntemplate_args = [\"{nope}\"]");
    assert!(e.contains("nope"), "{e}");
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"complex64\"\nsize = 4",
    );
    ktune_core::testing::assert_mentions(&e, &["argument `x`", "unknown type"]);
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"int\"\nvalue = 1\n\
         [[argument]]\nname = \"x\"\ntype = \"int\"\nvalue = 2",
    );
    assert!(e.contains("two arguments are called `x`"), "{e}");
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\n[verify]",
    );
    assert!(e.contains("nothing to verify"), "{e}");
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\noutput = true\n\
         [verify]\nreference = { block_size_x = 48 }",
    );
    assert!(
        e.contains("block_size_x = 48 is not one of its values"),
        "{e}"
    );
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\noutput = true\n\
         [verify]\nreference = { warp = 32 }",
    );
    assert!(e.contains("`warp` is not a parameter"), "{e}");
    let e = problem_err(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\noutput = true\n\
         [verify]\nreference = { block_size_x = 128, block_size_y = 4 }",
    );
    assert!(e.contains("violates the constraints"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let spec: CudaSpec =
        toml::from_str("source = \"missing.cu\"\nkernel = \"k\"\nproblem_size = [8]").unwrap();
    let e = Problem::new(&spec, &space(), dir.path()).err().unwrap();
    assert!(matches!(e, CudaError::Source { .. }), "{e}");
    assert!(e.to_string().contains("missing.cu"), "{e}");
    // Unknown keys are refused by the TOML reader with the key's name.
    let e = toml::from_str::<CudaSpec>(
        "source = \"k.cu\"\nkernel = \"k\"\nproblem_size = [8]\nrepeats = 3",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("repeats"), "{e}");
}

#[test]
fn the_reference_is_the_default_configuration_with_the_given_values() {
    let text = "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\n\
                output = true\n[verify]\nreference = { block_size_y = 2, fast = true }";
    let p = problem(text).unwrap();
    let s = space();
    assert_eq!(p.reference(), Some(&config(&s, 32, 2, 1, true)));
    assert_eq!(p.checking.tolerances, Some((1e-6, 0.0)));
    // Without [verify] and expected files there is no verification and no reference.
    let p = problem(
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4\noutput = true",
    )
    .unwrap();
    assert_eq!(p.reference(), None);
    assert_eq!(p.checking.tolerances, None);
}

#[test]
fn metrics_follow_the_objective() {
    let names = |text: &str| -> Vec<(String, Direction)> {
        problem(text)
            .unwrap()
            .metrics()
            .iter()
            .map(|m| (m.name.clone(), m.direction))
            .collect()
    };
    use Direction::*;
    assert_eq!(
        names("problem_size = [8]"),
        [("time".into(), Minimize), ("time stdev".into(), Minimize)]
    );
    assert_eq!(
        names("problem_size = [8]\nobjective = \"GFLOP/s\"\nflops = \"2 * 8\""),
        [
            ("GFLOP/s".into(), Maximize),
            ("time".into(), Minimize),
            ("time stdev".into(), Minimize)
        ]
    );
    assert_eq!(
        names("problem_size = [8]\nobjective = \"GFLOP/s per watt\"\nflops = \"16\"")[0],
        ("GFLOP/s per watt".into(), Maximize)
    );
    assert_eq!(
        names("problem_size = [8]\nobjective = \"energy\"")[0],
        ("energy".into(), Minimize)
    );
    // Several objectives first, in the order given, then the time where it is not one.
    assert_eq!(
        names("problem_size = [8]\nobjectives = [\"time\", \"energy\"]"),
        [
            ("time".into(), Minimize),
            ("energy".into(), Minimize),
            ("time stdev".into(), Minimize)
        ]
    );
    assert_eq!(
        names("problem_size = [8]\nobjectives = [\"energy\", \"GFLOP/s\"]\nflops = \"16\""),
        [
            ("energy".into(), Minimize),
            ("GFLOP/s".into(), Maximize),
            ("time".into(), Minimize),
            ("time stdev".into(), Minimize)
        ]
    );
    let e = problem_err("problem_size = [8]\nobjectives = [\"time\", \"GFLOP/s\"]");
    ktune_core::testing::assert_mentions(&e, &["GFLOP/s", "flops"]);
    let e = problem_err("problem_size = [8]\nobjectives = [\"time\", \"energy\"]\npower = false");
    ktune_core::testing::assert_mentions(&e, &["energy", "power = false"]);
    let e = problem_err("problem_size = [8]\nobjectives = [\"time\", \"time\"]");
    ktune_core::testing::assert_mentions(&e, &["`time` is listed twice"]);
    let e = problem_err("problem_size = [8]\nobjective = \"energy\"\nobjectives = [\"time\"]");
    ktune_core::testing::assert_mentions(&e, &["`objective` or `objectives`"]);
}

fn arg_specs(text: &str) -> Vec<ArgumentSpec> {
    #[derive(serde::Deserialize)]
    struct Args {
        argument: Vec<ArgumentSpec>,
    }
    toml::from_str::<Args>(text).unwrap().argument
}

#[test]
fn constants_are_filled_like_arrays_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let specs = arg_specs(
        "[[argument]]\nname = \"d_filter\"\ntype = \"float32\"\nsize = 4\nfill = 2.5\n\
         [[argument]]\nname = \"d_r\"\ntype = \"int32\"\nsize = 3\nfill = \"random\"\nseed = 4",
    );
    let c = super::data::build_constants(&specs, 2, dir.path()).unwrap();
    assert_eq!(c[0].name.to_str().unwrap(), "d_filter");
    assert_eq!(c[0].bytes, 2.5f32.to_le_bytes().repeat(4));
    assert_eq!(c[1].bytes.len(), 12);
    // The same fill and seed give the same contents as a kernel argument: a kernel can read
    // one array from constant memory or from an argument and agree.
    let a = build_args(&specs[1..], dir.path()).unwrap();
    assert!(matches!(&a[0], HostArg::Array { bytes, .. } if *bytes == c[1].bytes));
    let err = |text: &str| {
        super::data::build_constants(&arg_specs(text), 0, dir.path())
            .err()
            .unwrap()
    };
    let e = err("[[argument]]\nname = \"k\"\ntype = \"int32\"\nvalue = 3");
    ktune_core::testing::assert_mentions(&e, &["constant `k`", "not `value`"]);
    let e = err("[[argument]]\nname = \"k\"\ntype = \"int32\"\nsize = 3\noutput = true");
    assert!(e.contains("constant `k`"), "{e}");
    let e = err("[[argument]]\nname = \"k\"\ntype = \"int32\"\nsize = 3\n\
         [[argument]]\nname = \"k\"\ntype = \"int32\"\nsize = 1");
    assert!(e.contains("two constants are called `k`"), "{e}");
    let e = err("[[argument]]\nname = \"k\"\ntype = \"float7\"\nsize = 3");
    ktune_core::testing::assert_mentions(&e, &["constant `k`", "float7"]);
    // In a spec, errors name the section.
    let e = problem_err(
        "problem_size = [8]\n[[constant]]\nname = \"c\"\ntype = \"float32\"\nfill = 1.0",
    );
    ktune_core::testing::assert_mentions(&e, &["[runner] constant `c`", "size"]);
}

#[test]
fn arguments_are_filled_as_declared() {
    let dir = tempfile::tempdir().unwrap();
    let args = build_args(
        &arg_specs(
            "[[argument]]\nname = \"z\"\ntype = \"float32\"\nsize = 3\n\
             [[argument]]\nname = \"c\"\ntype = \"int16\"\nsize = 2\nfill = -7\n\
             [[argument]]\nname = \"h\"\ntype = \"double\"\nsize = 2\nfill = 0.5\n\
             [[argument]]\nname = \"r\"\ntype = \"float\"\nsize = 1000\nfill = \"random\"\nrange = [2.0, 3.0]\nseed = 9\n\
             [[argument]]\nname = \"ri\"\ntype = \"uint8\"\nsize = 1000\nfill = \"random\"\n\
             [[argument]]\nname = \"n\"\ntype = \"int64\"\nvalue = 9007199254740993\n\
             [[argument]]\nname = \"s\"\ntype = \"float\"\nvalue = 1.5",
        ),
        dir.path(),
    )
    .unwrap();
    let array = |i: usize| match &args[i] {
        HostArg::Array { dtype, bytes, .. } => (*dtype, bytes.clone()),
        other => panic!("{other:?}"),
    };
    assert_eq!(array(0), (DType::F32, vec![0u8; 12]));
    let (d, b) = array(1);
    assert_eq!((d.get(&b, 0), d.get(&b, 1)), (-7.0, -7.0));
    let (d, b) = array(2);
    assert_eq!(d.get(&b, 1), 0.5);
    let (d, b) = array(3);
    let xs: Vec<f64> = (0..1000).map(|i| d.get(&b, i)).collect();
    assert!(xs.iter().all(|&x| (2.0..3.0).contains(&x)), "in range");
    assert!(
        xs.iter().any(|&x| x < 2.1) && xs.iter().any(|&x| x > 2.9),
        "spread"
    );
    let (d, b) = array(4);
    let ys: Vec<f64> = (0..1000).map(|i| d.get(&b, i)).collect();
    assert!(
        ys.iter()
            .all(|&y| y.fract() == 0.0 && (0.0..100.0).contains(&y))
    );
    assert!(ys.iter().any(|&y| y >= 90.0));
    // Exact beyond 2^53.
    assert_eq!(
        args[5],
        HostArg::Scalar {
            name: "n".into(),
            dtype: DType::I64,
            bytes: 9007199254740993i64.to_le_bytes().to_vec()
        }
    );
    assert_eq!(
        args[6],
        HostArg::Scalar {
            name: "s".into(),
            dtype: DType::F32,
            bytes: 1.5f32.to_le_bytes().to_vec()
        }
    );
    // The same seed gives the same data: runs are reproducible.
    let again = build_args(
        &arg_specs("[[argument]]\nname = \"r\"\ntype = \"float\"\nsize = 1000\nfill = \"random\"\nrange = [2.0, 3.0]\nseed = 9"),
        dir.path(),
    )
    .unwrap();
    assert_eq!(again[0], args[3].clone());
}

/// What `cuFuncGetParamInfo` reports (each parameter's size) is compared with what the
/// arguments pass: their number first, then each size, naming the argument and its type.
#[test]
fn arguments_are_checked_against_the_kernels_parameter_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let args = build_args(
        &arg_specs(
            "[[argument]]\nname = \"c\"\ntype = \"float32\"\nsize = 4\n\
             [[argument]]\nname = \"flags\"\ntype = \"uint8\"\nsize = 4\n\
             [[argument]]\nname = \"n\"\ntype = \"int64\"\nvalue = 4",
        ),
        dir.path(),
    )
    .unwrap();
    let passed = driver::passed_arguments(&args);
    // `void k(float *c, unsigned char *flags, long n)`: it fits.
    assert_eq!(driver::parameter_mismatch(&[8, 8, 8], &passed), None);
    // `void k(float *c, unsigned char *flags, int n)`: n is too wide.
    assert_eq!(
        driver::parameter_mismatch(&[8, 8, 4], &passed).as_deref(),
        Some(
            "argument 2 (`n`, an int64 scalar) passes 8 bytes, but the kernel's parameter 2 \
             takes 4: give it the type the kernel declares"
        )
    );
    // `void k(float *c, float4 v, long n)`: a 16-byte struct by value, not a pointer.
    let m = driver::parameter_mismatch(&[8, 16, 8], &passed).unwrap();
    assert!(
        m.starts_with("argument 1 (`flags`, a uint8 array, passed as a pointer) passes 8 bytes"),
        "{m}"
    );
    // One parameter too many, or too few.
    assert_eq!(
        driver::parameter_mismatch(&[8, 8, 8, 4], &passed).as_deref(),
        Some(
            "the kernel takes 4 parameters but 3 arguments are given (c, flags, n): give one \
             argument per kernel parameter, in order"
        )
    );
    let m = driver::parameter_mismatch(&[8], &passed[..0]).unwrap();
    assert!(
        m.starts_with("the kernel takes 1 parameter but 0 arguments are given (none)"),
        "{m}"
    );
}

#[test]
fn bad_arguments_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = |text: &str| build_args(&arg_specs(text), dir.path()).unwrap_err();
    let e = err("[[argument]]\nname = \"n\"\ntype = \"int8\"\nvalue = 300");
    assert!(e.contains("300 does not fit"), "{e}");
    let e = err("[[argument]]\nname = \"n\"\ntype = \"int\"\nvalue = 1.5");
    assert!(e.contains("is not a int"), "{e}");
    let e = err("[[argument]]\nname = \"a\"\ntype = \"float\"");
    assert!(e.contains("give `size`"), "{e}");
    let e = err("[[argument]]\nname = \"a\"\ntype = \"float\"\nsize = 2\nvalue = 1");
    assert!(e.contains("not both"), "{e}");
    let e = err("[[argument]]\nname = \"a\"\ntype = \"float\"\nsize = 2\nfill = \"ones\"");
    assert!(e.contains("fill"), "{e}");
    let e = err(
        "[[argument]]\nname = \"a\"\ntype = \"float\"\nsize = 2\nfill = \"random\"\nrange = [1.0, 1.0]",
    );
    assert!(e.contains("empty"), "{e}");
    let e = err("[[argument]]\nname = \"a\"\ntype = \"float\"\nsize = 2\nfile = \"nope.npy\"");
    ktune_core::testing::assert_mentions(&e, &["argument `a`", "nope.npy"]);
    let e = err("[[argument]]\nname = \"s\"\ntype = \"float\"\nvalue = 1.0\noutput = true");
    assert!(e.contains("scalar"), "{e}");
}

#[test]
fn npy_and_raw_files_are_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let mut raw = Vec::new();
    for x in [1.5f32, -2.0, 3.25] {
        raw.extend(x.to_le_bytes());
    }
    let npy = dir.path().join("x.npy");
    std::fs::write(&npy, npy_bytes(DType::F32, &raw)).unwrap();
    assert_eq!(read_elements(&npy, DType::F32, 3).unwrap(), raw);
    let e = read_elements(&npy, DType::F64, 3).unwrap_err();
    ktune_core::testing::assert_mentions(&e, &["<f4", "<f8"]);
    let e = read_elements(&npy, DType::F32, 4).unwrap_err();
    ktune_core::testing::assert_mentions(&e, &["12 bytes", "16"]);
    let bin = dir.path().join("x.bin");
    std::fs::write(&bin, &raw).unwrap();
    assert_eq!(read_elements(&bin, DType::F32, 3).unwrap(), raw);
    // A header NumPy itself wrote (numpy 1.26, np.save of np.arange(3, dtype=np.int32)).
    let mut numpy = b"\x93NUMPY\x01\x00v\x00".to_vec();
    let mut header = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }".to_string();
    while header.len() < 117 {
        header.push(' ');
    }
    header.push('\n');
    numpy.extend(header.as_bytes());
    for i in 0..3i32 {
        numpy.extend(i.to_le_bytes());
    }
    let f = dir.path().join("n.npy");
    std::fs::write(&f, &numpy).unwrap();
    let b = read_elements(&f, DType::I32, 3).unwrap();
    assert_eq!(DType::I32.get(&b, 2), 2.0);
    let at = numpy.windows(5).position(|w| w == b"False").unwrap();
    let mut fortran = numpy.clone();
    fortran[at..at + 5].copy_from_slice(b"True ");
    std::fs::write(&f, &fortran).unwrap();
    assert!(
        read_elements(&f, DType::I32, 3)
            .unwrap_err()
            .contains("Fortran")
    );
    std::fs::write(&f, b"not numpy at all").unwrap();
    assert!(
        read_elements(&f, DType::I32, 3)
            .unwrap_err()
            .contains("magic")
    );
}

#[test]
fn outputs_are_compared_within_the_tolerance() {
    let enc = |xs: &[f64]| {
        let mut b = Vec::new();
        for &x in xs {
            DType::F32.encode(x, &mut b);
        }
        b
    };
    let want = enc(&[1.0, 2.0, f64::NAN, 100.0]);
    assert_eq!(compare(DType::F32, &want, &want, 0.0, 0.0), None);
    let close = enc(&[1.0 + 1e-7, 2.0, f64::NAN, 100.001]);
    assert_eq!(compare(DType::F32, &close, &want, 1e-6, 1e-5), None);
    let m = compare(DType::F32, &close, &want, 1e-6, 0.0).unwrap();
    assert_eq!((m.count, m.total, m.first.0), (1, 4, 3));
    let wrong = enc(&[1.0, 5.0, 0.0, 100.0]);
    let m = compare(DType::F32, &wrong, &want, 1e-3, 0.0).unwrap();
    assert_eq!(m.count, 2);
    assert_eq!(m.first, (1, 5.0, 2.0));
    assert_eq!(m.max_abs, f64::INFINITY);
    let text = m.to_string();
    ktune_core::testing::assert_mentions(&text, &["2 of 4 elements differ", "[1]: 5 instead of 2"]);
    // Integers compare exactly with atol 0.
    let mut a = Vec::new();
    let mut b = Vec::new();
    DType::I64.encode(1e15, &mut a);
    DType::I64.encode(1e15 + 1.0, &mut b);
    assert!(compare(DType::I64, &a, &b, 0.0, 0.0).is_some());
}

#[test]
fn the_architecture_option_falls_back_to_ptx_for_unknown_devices() {
    assert_eq!(
        nvrtc::arch_option(90, &[75, 80, 86, 89, 90]),
        ("--gpu-architecture=sm_90".into(), true)
    );
    assert_eq!(
        nvrtc::arch_option(120, &[75, 80, 90]),
        ("--gpu-architecture=compute_90".into(), false)
    );
    assert_eq!(
        nvrtc::arch_option(86, &[]),
        ("--gpu-architecture=sm_86".into(), true)
    );
}

#[test]
fn uuids_are_written_as_nvml_does() {
    let bytes: [u8; 16] = [
        0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd,
        0xef,
    ];
    assert_eq!(
        driver::nvml_uuid(&bytes),
        "GPU-12345678-9abc-def0-0123-456789abcdef"
    );
}

#[test]
fn without_a_driver_the_runner_says_so() {
    if driver::driver_available() {
        eprintln!("skipped: this machine has a CUDA driver (the GPU tests cover it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = spec_in(dir.path(), "problem_size = [8]");
    let e = CudaRunner::new(&spec, &space(), dir.path()).err().unwrap();
    assert!(matches!(e, CudaError::NoDriver), "{e}");
    assert!(e.to_string().contains("no CUDA driver found"), "{e}");
}

// ---- On a GPU: `cargo test -p ktune-runners -- --ignored` ----

const GPU: &str = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine";

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// The runner and space of an example directory's ktune.toml, with `edit` applied to the
/// [runner] table.
fn example(name: &str, edit: impl FnOnce(&mut toml::Table)) -> (CudaRunner, SearchSpace) {
    assert!(
        driver::driver_available(),
        "no CUDA driver on this machine: this test needs a GPU"
    );
    let dir = examples().join(name);
    let path = dir.join("ktune.toml");
    let space = ktune_space::spec::SpaceSpec::from_path(&path)
        .unwrap()
        .build()
        .unwrap();
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut runner = doc["runner"].as_table().unwrap().clone();
    edit(&mut runner);
    let spec: CudaSpec = toml::Value::Table(runner).try_into().unwrap();
    let r = CudaRunner::new(&spec, &space, &dir).unwrap_or_else(|e| panic!("{e}"));
    (r, space)
}

fn by_values(space: &SearchSpace, values: &[(&str, i64)]) -> Configuration {
    let mut c = space.default_configuration().unwrap();
    for (name, v) in values {
        let p = space.param_index(name).unwrap();
        c[p] = space.params()[p]
            .values()
            .iter()
            .position(|x| x == &Value::Int(*v))
            .unwrap() as u32;
    }
    c
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn vector_add_is_timed_and_verified_on_the_gpu() {
    let _ = GPU;
    let (mut r, space) = example("cuda-vector-add", |_| {});
    let configs: Vec<Configuration> = [32, 256, 1024]
        .iter()
        .map(|&b| by_values(&space, &[("block_size_x", b)]))
        .collect();
    let out = r.evaluate(&space, &configs).unwrap();
    for o in &out {
        let Outcome::Ok {
            values,
            observed,
            timings,
            ..
        } = o
        else {
            panic!("{o:?}")
        };
        assert!(values[0] > 0.0 && values[0] < 100.0, "{values:?}");
        assert_eq!(observed["times_ms"].as_array().unwrap().len(), 7);
        assert!(
            observed["device"].as_str().unwrap().contains("NVIDIA"),
            "{observed:?}"
        );
        // A shared study's worker records the same name.
        assert_eq!(Runner::device(&r).as_deref(), observed["device"].as_str());
        assert!(timings.compile > 0.0 && timings.verification > 0.0);
    }
}

/// The kernel's parameters are checked against the arguments when it is loaded: a missing
/// argument or one of the wrong size is named, and the run stops instead of launching with
/// garbage (at the reference configuration when there is one, at the first otherwise).
#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn arguments_that_do_not_match_the_kernel_are_named() {
    let _ = GPU;
    assert!(driver::driver_available(), "no CUDA driver on this machine");
    let dir = examples().join("cuda-vector-add");
    let path = dir.join("ktune.toml");
    let space = ktune_space::spec::SpaceSpec::from_path(&path)
        .unwrap()
        .build()
        .unwrap();
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let runner_with = |edit: &dyn Fn(&mut toml::Table)| {
        let mut runner = doc["runner"].as_table().unwrap().clone();
        edit(&mut runner);
        let spec: CudaSpec = toml::Value::Table(runner).try_into().unwrap();
        CudaRunner::new(&spec, &space, &dir)
    };
    let drop_n = |r: &mut toml::Table| {
        r["argument"].as_array_mut().unwrap().pop();
    };
    let n_as_int64 = |r: &mut toml::Table| {
        let args = r["argument"].as_array_mut().unwrap();
        args[3].as_table_mut().unwrap()["type"] = "int64".into();
    };
    let version = runner_with(&|_| {})
        .unwrap_or_else(|e| panic!("{e}"))
        .device()
        .driver_version;
    if version < 12040 {
        eprintln!(
            "SKIPPED: driver {version} is older than CUDA 12.4 and cannot tell a kernel's parameters"
        );
        return;
    }
    // With verification, the reference configuration is the first to load.
    let Err(e) = runner_with(&drop_n) else {
        panic!("a missing argument was not noticed")
    };
    let e = e.to_string();
    assert!(
        e.contains("the kernel takes 4 parameters but 3 arguments are given (c, a, b)"),
        "{e}"
    );
    let Err(e) = runner_with(&n_as_int64) else {
        panic!("an int64 for an int was not noticed")
    };
    let e = e.to_string();
    assert!(
        e.contains(
            "argument 3 (`n`, an int64 scalar) passes 8 bytes, but the kernel's parameter 3 takes 4"
        ),
        "{e}"
    );
    // Without verification the default configuration is loaded at start-up to check them.
    let Err(e) = runner_with(&|r: &mut toml::Table| {
        drop_n(r);
        r.remove("verify");
    }) else {
        panic!("a missing argument was not noticed without verification")
    };
    assert!(e.to_string().contains("takes 4 parameters"), "{e}");
    // A kernel whose parameters depend on a configuration's values: the default one fits,
    // so tuning starts, and the configuration that does not fit fails alone, named.
    let tmp = tempfile::tempdir().unwrap();
    let source = tmp.path().join("vector_add_extra.cu");
    std::fs::write(
        &source,
        "extern \"C\" __global__ void vector_add(float *c, const float *a, const float *b, int n\n\
         #if block_size_x == 32\n, int extra\n#endif\n) {\n\
         int i = blockIdx.x * block_size_x + threadIdx.x;\n if (i < n) c[i] = a[i] + b[i];\n}\n",
    )
    .unwrap();
    let mut r = runner_with(&|r: &mut toml::Table| {
        r["source"] = source.display().to_string().into();
        r.remove("verify");
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let configs: Vec<Configuration> = [32, 64]
        .iter()
        .map(|&b| by_values(&space, &[("block_size_x", b)]))
        .collect();
    let out = r.evaluate(&space, &configs).unwrap();
    assert_eq!(out[0].failure(), Some(FailureKind::Compile), "{:?}", out[0]);
    let Outcome::Failed { reason, .. } = &out[0] else {
        unreachable!()
    };
    assert!(
        reason.contains("the kernel takes 5 parameters but 4 arguments are given"),
        "{reason}"
    );
    assert!(matches!(out[1], Outcome::Ok { .. }), "{:?}", out[1]);
}

/// With the time budget spent, a batch ends as out of time before anything is compiled or
/// launched (nothing is recorded, so a longer run measures it later); with time left the
/// same batch runs whole.
#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn nothing_starts_after_the_time_budget_ran_out() {
    let (mut r, space) = example("cuda-vector-add", |_| {});
    let configs: Vec<Configuration> = [64, 128]
        .iter()
        .map(|&b| by_values(&space, &[("block_size_x", b)]))
        .collect();
    r.set_time_left(Some(0.0));
    match r.evaluate(&space, &configs) {
        Err(CoreError::OutOfTime { outcomes }) => assert!(outcomes.is_empty(), "{outcomes:?}"),
        other => panic!("{other:?}"),
    }
    r.set_time_left(Some(600.0));
    let out = r.evaluate(&space, &configs).unwrap();
    assert_eq!(out.len(), 2);
    assert!(out.iter().all(|o| o.objective().is_some()), "{out:?}");
    r.set_time_left(None);
    assert_eq!(r.evaluate(&space, &configs).unwrap().len(), 2);
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn energy_is_measured_between_updates_of_the_energy_counter() {
    let (mut r, space) = example("cuda-vector-add", |t| {
        t.insert("objective".into(), "energy".into());
        t.insert("power_seconds".into(), toml::Value::Float(0.3));
    });
    let configs = [by_values(&space, &[("block_size_x", 256)])];
    let out = r.evaluate(&space, &configs).unwrap();
    let Outcome::Ok {
        values, observed, ..
    } = &out[0]
    else {
        panic!("{:?}", out[0])
    };
    let watts = observed["power_w"].as_f64().unwrap();
    let time_ms = values[1];
    // A busy GPU draws more than idle and less than any board's limit; the energy of a
    // launch is that power times its duration.
    assert!(watts > 50.0 && watts < 1500.0, "{observed:?}");
    assert!((values[0] - watts * time_ms * 1e-3).abs() <= 1e-9 * values[0].abs().max(1.0));
    assert_eq!(observed["power_source"], "energy counter", "{observed:?}");
    assert!(observed["power_window_s"].as_f64().unwrap() >= 0.3);
    assert!(!observed["power_samples_w"].as_array().unwrap().is_empty());
}

/// A kernel that fails as its `mode` says: 1 faults (far out of bounds), 2 writes the wrong
/// output, 3 does not compile (on line 9 of `k.cu`); 0 is right.
const FAILING_KERNEL: &str = r#"
extern "C" __global__ void k(float *x, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
#if mode == 1
    x[i + (1 << 30)] = 1.0f;          // far out of bounds: a kernel fault
#elif mode == 2
    if (i < n) x[i] = 2.0f;           // wrong output
#elif mode == 3
    this does not compile;
#else
    if (i < n) x[i] = 1.0f;
#endif
}
"#;

/// [`FAILING_KERNEL`] as `k.cu` in a folder of its own, the space of `blocks` × `modes`,
/// and its spec: 4096 floats, verified against block 64 in mode 0.
fn failing_kernel(blocks: &[i64], modes: &[i64]) -> (tempfile::TempDir, SearchSpace, CudaSpec) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cu"), FAILING_KERNEL).unwrap();
    let space = SearchSpace::new(
        vec![
            Parameter::integer("block_size_x", blocks.iter().copied()).unwrap(),
            Parameter::integer("mode", modes.iter().copied()).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let spec: CudaSpec = toml::from_str(
        "source = \"k.cu\"\nkernel = \"k\"\nproblem_size = [4096]\n\
         [[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4096\noutput = true\n\
         [[argument]]\nname = \"n\"\ntype = \"int\"\nvalue = 4096\n\
         [verify]\nreference = { block_size_x = 64, mode = 0 }",
    )
    .unwrap();
    (dir, space, spec)
}

/// The CUDA runner passes the runner conformance suite: two block sizes measured; wrong
/// output, a compile error and a launch the GPU refuses as failures; it measures again.
#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn the_cuda_runner_passes_the_runner_conformance_suite() {
    let (dir, space, spec) = failing_kernel(&[64, 128, 2048], &[0, 2, 3]);
    let c = |b: i64, m: i64| {
        space
            .configuration_of(&[Value::Int(b), Value::Int(m)])
            .unwrap()
    };
    let fixture = crate::conformance::Fixture {
        succeed: vec![c(64, 0), c(128, 0)],
        fail: vec![
            (c(64, 2), FailureKind::WrongOutput),
            (c(64, 3), FailureKind::Compile),
            (c(2048, 0), FailureKind::Runtime),
        ],
        repeatable: false,
        remeasures: true,
        space: space.clone(),
    };
    crate::conformance::run_all(
        &mut || {
            Box::new(CudaRunner::new(&spec, &space, dir.path()).unwrap_or_else(|e| panic!("{e}")))
        },
        &fixture,
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn failures_on_the_gpu_are_outcomes_and_tuning_goes_on() {
    let (dir, space, spec) = failing_kernel(&[64, 2048], &[0, 1, 2, 3]);
    let mut r = CudaRunner::new(&spec, &space, dir.path()).unwrap_or_else(|e| panic!("{e}"));
    let c = |b: i64, m: i64| {
        space
            .configuration_of(&[Value::Int(b), Value::Int(m)])
            .unwrap()
    };
    // A kernel fault (mode 1) poisons the process's CUDA context for good, so it is tested
    // end to end in its own process (ktune-cli's tests/cli/cuda.rs: `ktune tune` restarts).
    let out = r
        .evaluate(
            &space,
            &[c(64, 0), c(64, 2), c(64, 3), c(2048, 0), c(64, 0)],
        )
        .unwrap();
    let kinds: Vec<Option<FailureKind>> = out.iter().map(|o| o.failure()).collect();
    assert_eq!(
        kinds,
        [
            None,
            Some(FailureKind::WrongOutput),
            Some(FailureKind::Compile),
            Some(FailureKind::Runtime),
            None
        ],
        "{out:#?}"
    );
    let reason = |i: usize| match &out[i] {
        Outcome::Failed { reason, .. } => reason.clone(),
        _ => String::new(),
    };
    assert!(reason(1).contains("output `x`"), "{}", reason(1));
    // NVRTC's message, on the kernel file's own line (9: `this does not compile;`).
    assert!(reason(2).contains("k.cu(9)"), "{}", reason(2));
    assert!(reason(3).contains("2048"), "{}", reason(3));
    assert!(
        !r.fresh_process_needed()
            .load(std::sync::atomic::Ordering::SeqCst)
    );
}

// ---- NVRTC without a GPU: run where libnvrtc can be found (KTUNE_NVRTC, the library
// path or a CUDA toolkit); .ci/run provides one from the nvidia-cuda-nvrtc wheel ----

/// NVRTC, or `None` after saying on stderr why the test cannot run here.
fn nvrtc_or_skip(test: &str) -> Option<&'static nvrtc::Nvrtc> {
    match nvrtc::Nvrtc::get() {
        Ok(n) => Some(n),
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            None
        }
    }
}

/// The problem of an example's ktune.toml (no GPU needed).
fn example_problem(name: &str) -> (Problem, SearchSpace) {
    let dir = examples().join(name);
    let path = dir.join("ktune.toml");
    let space = ktune_space::spec::SpaceSpec::from_path(&path)
        .unwrap()
        .build()
        .unwrap();
    let doc: toml::Table = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let spec: CudaSpec = doc["runner"].clone().try_into().unwrap();
    let p = Problem::new(&spec, &space, &dir).unwrap_or_else(|e| panic!("{e}"));
    (p, space)
}

#[test]
fn the_candidates_for_nvrtc_cover_cuda_13_and_honour_the_environment() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    };
    let c = nvrtc::candidates(&env(&[("CUDA_HOME", "/opt/my-cuda")]));
    let names: Vec<String> = c.iter().map(|p| p.display().to_string()).collect();
    // The CUDA 13 runtime library first (no development symlink needed), then 12, 11.2,
    // then the unversioned name; then toolkit directories, $CUDA_HOME before the defaults.
    assert_eq!(
        names[..4],
        [
            "libnvrtc.so.13",
            "libnvrtc.so.12",
            "libnvrtc.so.11.2",
            "libnvrtc.so"
        ]
    );
    let home = names
        .iter()
        .position(|n| n == "/opt/my-cuda/lib64/libnvrtc.so.13")
        .unwrap();
    let default = names
        .iter()
        .position(|n| n == "/usr/local/cuda/lib64/libnvrtc.so.13")
        .unwrap();
    assert!(home < default, "{names:?}");
    // KTUNE_NVRTC names the one file to use.
    let c = nvrtc::candidates(&env(&[
        ("KTUNE_NVRTC", "/x/libnvrtc.so.13"),
        ("CUDA_HOME", "/opt/my-cuda"),
    ]));
    assert_eq!(c, [PathBuf::from("/x/libnvrtc.so.13")]);
}

#[test]
fn a_library_that_is_not_nvrtc_or_none_at_all_is_a_clear_error() {
    let missing = nvrtc::Nvrtc::find(&[PathBuf::from("/nonexistent/libnvrtc.so.13")])
        .err()
        .unwrap();
    ktune_core::testing::assert_mentions(&missing, &["/nonexistent/libnvrtc.so.13", "KTUNE_NVRTC"]);
    // libc is loadable but has none of NVRTC's entry points.
    let wrong = nvrtc::Nvrtc::find(&[PathBuf::from("libc.so.6")])
        .err()
        .unwrap();
    ktune_core::testing::assert_mentions(&wrong, &["not NVRTC", "nvrtcVersion"]);
}

#[test]
fn every_example_kernel_compiles_with_nvrtc() {
    let Some(nvrtc) = nvrtc_or_skip("every_example_kernel_compiles_with_nvrtc") else {
        return;
    };
    let (arch, cubin) = nvrtc::arch_option(90, &nvrtc.supported_archs());
    for (name, kernel) in [
        ("cuda-vector-add", "vector_add"),
        ("cuda-matmul", "matmul"),
        ("cuda-convolution", "convolution_kernel"),
        ("cuda-reduction", "reduce_sum"),
    ] {
        let (p, space) = example_problem(name);
        // The default configuration and a spread of others, across the whole space.
        let n = space.size();
        let mut ranks: Vec<u64> = (0..8u64).map(|i| i * n / 8).collect();
        ranks.push(n - 1);
        let mut configs = vec![space.default_configuration().unwrap()];
        configs.extend(ranks.iter().map(|&r| space.configuration(r)));
        for c in &configs {
            let launch = p.launch(&space, c).unwrap();
            let compiled = nvrtc
                .compile(
                    &p.source_with_defines(&launch),
                    "k.cu",
                    &launch.name_expression,
                    &p.compiler_options(&arch),
                    cubin,
                )
                .unwrap_or_else(|log| panic!("{name} {}: {log}", space.describe(c)));
            assert!(compiled.image.len() > 100, "{name}");
            // extern "C" kernels keep their name.
            assert_eq!(compiled.lowered_name.to_str().unwrap(), kernel);
        }
    }
}

#[test]
fn parameters_named_like_cuda_header_identifiers_compile() {
    // `mode` and `layer` are names inside NVRTC's built-in headers: passed as -D options
    // they broke those headers; as #define lines of the source they do not.
    let Some(nvrtc) = nvrtc_or_skip("parameters_named_like_cuda_header_identifiers_compile") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = mode + layer; }\n",
    )
    .unwrap();
    let space = SearchSpace::new(
        vec![
            Parameter::integer("mode", [0, 1]).unwrap(),
            Parameter::integer("layer", [2]).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let spec: CudaSpec = toml::from_str(
        "source = \"k.cu\"\nkernel = \"k\"\nproblem_size = [32]\n\
         [[argument]]\nname = \"a\"\ntype = \"float\"\nsize = 256\n",
    )
    .unwrap();
    let p = Problem::new(&spec, &space, dir.path()).unwrap();
    let launch = p.launch(&space, &space.configuration(1)).unwrap();
    let (arch, cubin) = nvrtc::arch_option(90, &nvrtc.supported_archs());
    nvrtc
        .compile(
            &p.source_with_defines(&launch),
            "k.cu",
            "k",
            &p.compiler_options(&arch),
            cubin,
        )
        .unwrap_or_else(|log| panic!("{log}"));
    // A compile error still points at the kernel file's own line.
    std::fs::write(
        dir.path().join("k.cu"),
        "// line 1\nextern \"C\" __global__ void k(float *a) { a[0] = undefined_name; }\n",
    )
    .unwrap();
    let p = Problem::new(&spec, &space, dir.path()).unwrap();
    let log = nvrtc
        .compile(
            &p.source_with_defines(&launch),
            "k.cu",
            "k",
            &p.compiler_options(&arch),
            cubin,
        )
        .err()
        .unwrap();
    ktune_core::testing::assert_mentions(&log, &["k.cu(2)", "undefined_name"]);
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn adaptive_repetition_early_abort_and_l2_flush_on_the_gpu() {
    let _ = GPU;
    let adaptive = |flush: bool| {
        move |t: &mut toml::Table| {
            t.remove("repeat");
            t.insert("flush_l2".into(), toml::Value::Boolean(flush));
            let measure: toml::Table =
                toml::from_str("min = 5\nmax = 200\ntarget = 0.01\nmin_sample_seconds = 0.002")
                    .unwrap();
            t.insert("measure".into(), toml::Value::Table(measure));
        }
    };
    let (mut r, space) = example("cuda-vector-add", adaptive(false));
    let configs: Vec<Configuration> = [32, 256]
        .iter()
        .map(|&b| by_values(&space, &[("block_size_x", b)]))
        .collect();
    let out = r.evaluate(&space, &configs).unwrap();
    for o in &out {
        let samples = o.samples().unwrap_or_else(|| panic!("{o:?}"));
        let s = o.summary().unwrap();
        eprintln!("{s:?} runs per sample {}", samples.runs_per_sample);
        // Stopped at ±1% (or at the maximum, or after 2 s), each sample about 2 ms of
        // back-to-back launches of a kernel of well under a millisecond (calibrated on one
        // launch, which may be slower than the warm ones: at least 1 ms).
        assert!(s.relative_half_width() <= 0.01 || s.n == 200 || o.timings().benchmark > 2.0);
        assert!(samples.runs_per_sample > 1, "{samples:?}");
        assert!(s.mean * samples.runs_per_sample as f64 >= 1.0, "{s:?}");
        assert!(
            o.observed()["sm_clocks_mhz"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        );
    }
    // Three times slower than a best that is far better than anything: aborted early.
    r.set_incumbent(Some(out[1].objective().unwrap() / 10.0));
    let slow = r.evaluate(&space, &configs[1..]).unwrap();
    let s = slow[0].samples().unwrap();
    assert!(s.aborted && s.values.len() < 5, "{s:?}");
    // Interleaved re-measurement.
    let again = r.remeasure(&space, &configs, 6).unwrap();
    assert!(
        again.iter().all(|o| o.summary().is_some_and(|s| s.n == 6)),
        "{again:?}"
    );
    // With the L2 cache flushed before every launch, each launch is timed alone.
    let (mut r, space) = example("cuda-vector-add", adaptive(true));
    let flushed = r.evaluate(&space, &configs[1..]).unwrap();
    let s = flushed[0]
        .summary()
        .unwrap_or_else(|| panic!("{flushed:?}"));
    eprintln!("flushed: {s:?}");
    assert!(s.mean > 0.0 && s.n >= 5);
}

#[test]
fn clock_variation_is_flagged_per_configuration_and_warned_about_per_run() {
    let mut c = super::ClockRange::default();
    assert_eq!(c.warning(0.05), None);
    // Steady at boost clock: nothing to say.
    assert!(!c.note(&[1980, 1980, 1975], 0.05));
    assert!(!c.note(&[], 0.05));
    assert_eq!(c.warning(0.05), None);
    // Throttled within one configuration (1980 -> 1700 MHz, 14%).
    assert!(c.note(&[1980, 1700], 0.05));
    let w = c.warning(0.05).unwrap();
    ktune_core::testing::assert_mentions(&w, &["between 1700 and 1980 MHz", "14%"]);
    assert!(w.contains("of 1 configurations"), "{w}");
    // Steady within each configuration, but at different clocks across the run.
    let mut d = super::ClockRange::default();
    assert!(!d.note(&[1980, 1980], 0.05));
    assert!(!d.note(&[1755, 1755], 0.05));
    assert!(
        d.warning(0.05)
            .unwrap()
            .contains("between 1755 and 1980 MHz")
    );
    assert_eq!(d.warning(0.2), None);
}

#[test]
fn numpy_descriptions_map_to_element_types() {
    for t in [
        DType::F32,
        DType::F64,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::U8,
        DType::U16,
        DType::U32,
        DType::U64,
    ] {
        assert_eq!(DType::from_npy_descr(t.npy_descr()), Some(t));
    }
    assert_eq!(DType::from_npy_descr("=f4"), Some(DType::F32));
    // Big-endian, booleans, complex numbers and half precision are refused.
    for d in [">f4", "|b1", "<c8", "<f2", "", "<"] {
        assert_eq!(DType::from_npy_descr(d), None, "{d}");
    }
}

#[test]
fn a_problem_takes_its_source_and_arguments_from_memory() {
    let s = space();
    let spec: CudaSpec =
        toml::from_str("source = \"unused.cu\"\nkernel = \"k\"\nproblem_size = [1000]").unwrap();
    let array = |name: &str, output: bool, expected: Option<Vec<u8>>| HostArg::Array {
        name: name.into(),
        dtype: DType::F32,
        bytes: vec![0; 4000],
        output,
        expected,
    };
    let p = Problem::from_parts(
        &spec,
        &s,
        "extern \"C\" __global__ void k(float *c) {}\n".into(),
        PathBuf::from("vector_add.cu"),
        vec![array("c", true, Some(vec![0; 4000]))],
        Vec::new(),
    )
    .unwrap();
    // No file was read: the text given is what gets compiled, named as given.
    let l = p.launch(&s, &config(&s, 128, 2, 1, false)).unwrap();
    let text = p.source_with_defines(&l);
    assert!(
        text.contains("#line 1 \"vector_add.cu\"\nextern \"C\""),
        "{text}"
    );
    // Expected outputs switch verification on; no reference configuration is needed.
    assert!(p.reference().is_none());
    let err = Problem::from_parts(
        &spec,
        &s,
        String::new(),
        PathBuf::from("k.cu"),
        vec![array("a", false, None), array("a", false, None)],
        Vec::new(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("two arguments are called `a`"), "{err}");
}

#[test]
fn the_configuration_checked_first_is_the_default_where_it_is_in_the_space() {
    let with_default = |bx: i64, by: i64| {
        SearchSpace::new(
            vec![
                Parameter::integer("block_size_x", [32, 64, 128])
                    .unwrap()
                    .with_default(&Value::Int(bx))
                    .unwrap(),
                Parameter::integer("block_size_y", [1, 2, 4])
                    .unwrap()
                    .with_default(&Value::Int(by))
                    .unwrap(),
            ],
            &["block_size_x * block_size_y <= 256"],
        )
        .unwrap()
    };
    let s = with_default(64, 4);
    assert_eq!(
        s.values(&configuration_to_check(&s).unwrap()),
        [&Value::Int(64), &Value::Int(4)]
    );
    // A default that breaks a restriction, or none at all (Kernel Tuner's tune_params): the
    // first configuration, so that the arguments are still checked before tuning.
    let s = with_default(128, 4);
    assert_eq!(configuration_to_check(&s), Some(s.configuration(0)));
    let s = space();
    assert_eq!(s.default_configuration(), None);
    assert_eq!(configuration_to_check(&s), Some(s.configuration(0)));
}

/// `[runner.defines]` reach every configuration's program after the parameters; a define
/// that would redefine a parameter or a launch define, or that is not a name, is refused.
#[test]
fn runner_defines_are_defined_for_every_configuration() {
    let s = space();
    let p = problem("problem_size = [64]\ndefines = { N = 64, T = \"float\", on = true }").unwrap();
    let l = p.launch(&s, &config(&s, 32, 1, 1, false)).unwrap();
    let text = p.source_with_defines(&l);
    for line in ["#define N 64", "#define T float", "#define on 1"] {
        assert!(text.lines().any(|l| l == line), "{text}");
    }
    let e = problem_err("problem_size = [64]\ndefines = { tile = 3 }");
    ktune_core::testing::assert_mentions(&e, &["[runner.defines]", "`tile`"]);
    let e = problem_err("problem_size = [64]\ndefines = { grid_size_x = 3 }");
    ktune_core::testing::assert_mentions(&e, &["[runner.defines]", "grid_size_x"]);
    let e = problem_err("problem_size = [64]\ndefines = { \"a-b\" = 3 }");
    ktune_core::testing::assert_mentions(&e, &["`a-b` is not a name"]);
    let e = problem_err("problem_size = [64]\ndefines = { N = [1, 2] }");
    ktune_core::testing::assert_mentions(&e, &["[runner.defines] N", "not a number"]);
}

/// An instance's variables bound into the section: defined in the program (overriding a
/// define of the same name), its values in the expressions of the launch, the flops and
/// the arguments' sizes and scalars, and in `{N}` of their files.
#[test]
fn an_instance_binds_its_variables_into_the_section() {
    let dir = tempfile::tempdir().unwrap();
    let data: Vec<u8> = (0..32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(dir.path().join("x_32.raw"), &data).unwrap();
    let spec = spec_in(
        dir.path(),
        "problem_size = [\"N\", \"2 * N // block_size_y\"]\nflops = \"2 * N ** 2\"\n\
         shared_memory = \"4 * N\"\ndefines = { N = 1, M = 2 }\n\
         [[argument]]\nname = \"x\"\ntype = \"float\"\nsize = \"N\"\nfile = \"x_{N}.raw\"\n\
         [[argument]]\nname = \"n\"\ntype = \"int\"\nvalue = \"N * 2\"\n",
    );
    let s = space();
    let vars = vec![("N".to_string(), "32".to_string())];
    let bound = spec.bound(&vars, &s).unwrap();
    let p = Problem::new(&bound, &s, dir.path()).unwrap();
    let l = p.launch(&s, &config(&s, 32, 2, 1, false)).unwrap();
    assert_eq!(l.grid, [1, 16, 1]);
    assert_eq!(l.flops, Some(2048.0));
    assert_eq!(l.shared_bytes, 128);
    let has = |k: &str, v: &str| l.defines.iter().any(|(a, b)| a == k && b == v);
    assert!(has("N", "32") && has("M", "2"), "{:?}", l.defines);
    match p.args() {
        [
            HostArg::Array { bytes, .. },
            HostArg::Scalar { bytes: n, .. },
        ] => {
            assert_eq!(bytes, &data);
            assert_eq!(n, &64i32.to_le_bytes());
        }
        other => panic!("{other:?}"),
    }
    // Without the instance, [runner.defines]' N = 1 stands for N: the file x_1.raw.
    let e = ktune_core::testing::refusal(Problem::new(&spec, &s, dir.path()));
    ktune_core::testing::assert_mentions(&e, &["x_1.raw"]);
    // A variable that is also a parameter is ambiguous.
    let clash = vec![("tile".to_string(), "2".to_string())];
    let e = spec.bound(&clash, &s).map(|_| ()).unwrap_err();
    assert!(e.contains("`tile` is both a parameter"), "{e}");
    // A size that names no variable says what it is not.
    let unbound = spec_in(
        dir.path(),
        "problem_size = [8]\n[[argument]]\nname = \"x\"\ntype = \"float\"\nsize = \"M * 2\"\n",
    );
    let e = ktune_core::testing::refusal(Problem::new(&unbound, &s, dir.path()));
    ktune_core::testing::assert_mentions(
        &e,
        &["argument `x`", "size = \"M * 2\"", "[[instance]] variables"],
    );
}
