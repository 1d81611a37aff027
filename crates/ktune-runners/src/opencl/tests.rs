//! Tests of the OpenCL runner, on a real OpenCL device: PoCL on the CPU where no GPU driver
//! is installed (`.ci/run` installs `pocl-opencl-icd`). Where no OpenCL platform is there,
//! each test that needs one says so on stderr (`SKIPPED ...`) and passes; what needs no
//! device (the spec's checks) always runs.

use std::path::Path;

use ktune_core::{FailureKind, Outcome, Runner};
use ktune_space::{Configuration, Parameter, SearchSpace, Value};

use super::*;

/// Whether an OpenCL device is here; says why not on stderr.
fn opencl_or_skip(test: &str) -> bool {
    match device::devices() {
        Ok(d) if !d.is_empty() => true,
        Ok(_) => {
            eprintln!("SKIPPED {test}: the OpenCL platforms here have no device");
            false
        }
        Err(e) => {
            eprintln!("SKIPPED {test}: {e}");
            false
        }
    }
}

/// A kernel that fails on purpose by `mode`: 1 does not build, 2 writes a wrong output,
/// 3 runs for seconds (about 7 on two cores), 4 asks for a fixed work-group size of 64; otherwise it writes
/// `x[i] = 2 * i`.
const FAILING_KERNEL: &str = r#"
#if mode == 4
__attribute__((reqd_work_group_size(64, 1, 1)))
#endif
__kernel void k(__global float *x, const int n) {
    int i = get_global_id(0);
#if mode == 1
    this does not build;
#elif mode == 2
    if (i < n) x[i] = 1.0f;
#elif mode == 3
    float acc = 0.0f;
    for (int j = 0; j < n * 500; j++) acc = acc * 0.999999f + 1.0f;
    if (i < n) x[i] = 2.0f * i + (acc < 0.0f ? 1.0f : 0.0f);
#else
    if (i < n) x[i] = 2.0f * i;
#endif
}
"#;

/// [`FAILING_KERNEL`] as `k.cl` in a folder of its own, the space of `blocks` × `modes`, and
/// a spec of 4096 floats verified against block 64 in mode 0; `extra` adds to `[runner]`.
fn failing_kernel(
    blocks: &[i64],
    modes: &[i64],
    extra: &str,
) -> (tempfile::TempDir, SearchSpace, OpenClSpec) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cl"), FAILING_KERNEL).unwrap();
    let space = SearchSpace::new(
        vec![
            Parameter::integer("block_size_x", blocks.iter().copied()).unwrap(),
            Parameter::integer("mode", modes.iter().copied()).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let text = format!(
        "kind = \"opencl\"\nsource = \"k.cl\"\nkernel = \"k\"\nproblem_size = [4096]\n{extra}\n\
         [[argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4096\noutput = true\n\
         [[argument]]\nname = \"n\"\ntype = \"int\"\nvalue = 4096\n\
         [verify]\nreference = {{ block_size_x = 64, mode = 0 }}"
    );
    let spec: OpenClSpec = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    (dir, space, spec)
}

fn config(space: &SearchSpace, block: i64, mode: i64) -> Configuration {
    space
        .configuration_of(&[Value::Int(block), Value::Int(mode)])
        .unwrap()
}

fn reason(o: &Outcome) -> String {
    match o {
        Outcome::Failed { reason, .. } => reason.clone(),
        _ => String::new(),
    }
}

fn open(spec: &OpenClSpec, space: &SearchSpace, dir: &Path) -> OpenClRunner {
    OpenClRunner::new(spec, space, dir).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_opencl_runner_passes_the_runner_conformance_suite() {
    if !opencl_or_skip("the_opencl_runner_passes_the_runner_conformance_suite") {
        return;
    }
    let (dir, space, spec) = failing_kernel(&[32, 64, 128], &[0, 1, 2, 4], "");
    let c = |b, m| config(&space, b, m);
    let fixture = crate::conformance::Fixture {
        succeed: vec![c(64, 0), c(128, 0), c(64, 4)],
        fail: vec![
            (c(64, 2), FailureKind::WrongOutput),
            (c(64, 1), FailureKind::Compile),
            (c(128, 4), FailureKind::Runtime),
        ],
        repeatable: false,
        remeasures: true,
        space: space.clone(),
    };
    crate::conformance::run_all(&mut || Box::new(open(&spec, &space, dir.path())), &fixture);
}

#[test]
fn failures_on_the_device_are_outcomes_with_their_reasons_and_tuning_goes_on() {
    if !opencl_or_skip("failures_on_the_device_are_outcomes_with_their_reasons") {
        return;
    }
    let (dir, space, spec) = failing_kernel(&[32, 64, 128, 1 << 20], &[0, 1, 2, 4], "");
    let mut r = open(&spec, &space, dir.path());
    let c = |b, m| config(&space, b, m);
    let out = r
        .evaluate(
            &space,
            &[
                c(32, 0),
                c(64, 1),
                c(64, 2),
                c(128, 4),
                c(1 << 20, 0),
                c(128, 0),
            ],
        )
        .unwrap();
    let kinds: Vec<Option<FailureKind>> = out.iter().map(|o| o.failure()).collect();
    assert_eq!(
        kinds,
        [
            None,
            Some(FailureKind::Compile),
            Some(FailureKind::WrongOutput),
            Some(FailureKind::Runtime),
            Some(FailureKind::Runtime),
            None
        ],
        "{out:#?}"
    );
    // The build log, on the kernel file's own line (8: `this does not build;`).
    assert!(reason(&out[1]).contains("k.cl:8"), "{}", reason(&out[1]));
    assert!(
        reason(&out[2]).contains("output `x`"),
        "{}",
        reason(&out[2])
    );
    assert!(
        reason(&out[3]).contains("CL_INVALID_WORK_GROUP_SIZE"),
        "{}",
        reason(&out[3])
    );
    assert!(
        reason(&out[4]).contains("more than the device's maximum"),
        "{}",
        reason(&out[4])
    );
    // A measured configuration: time, its spread, the device and the launch recorded.
    let Outcome::Ok {
        values, observed, ..
    } = &out[0]
    else {
        unreachable!()
    };
    assert_eq!(values.len(), 2);
    assert!(values[0] > 0.0 && values[0].is_finite(), "{values:?}");
    assert_eq!(observed["local_size"], serde_json::json!([32, 1, 1]));
    assert_eq!(observed["global_size"], serde_json::json!([4096, 1, 1]));
    assert_eq!(
        observed["device"].as_str(),
        Some(r.device_info().name.as_str())
    );
    assert_eq!(Runner::device(&r), Some(r.device_info().name.clone()));
}

#[test]
fn a_kernel_past_its_timeout_is_a_timeout_and_the_next_one_is_measured() {
    if !opencl_or_skip("a_kernel_past_its_timeout_is_a_timeout") {
        return;
    }
    let (dir, space, spec) = failing_kernel(&[64], &[0, 3], "kernel_timeout = 2");
    let mut r = open(&spec, &space, dir.path());
    let out = r
        .evaluate(&space, &[config(&space, 64, 3), config(&space, 64, 0)])
        .unwrap();
    assert_eq!(out[0].failure(), Some(FailureKind::Timeout), "{out:#?}");
    assert!(
        reason(&out[0]).contains("kernel_timeout"),
        "{}",
        reason(&out[0])
    );
    assert_eq!(out[1].failure(), None, "{out:#?}");
    assert!(
        !r.fresh_process_needed()
            .load(std::sync::atomic::Ordering::SeqCst)
    );
}

#[test]
fn a_device_that_is_not_there_is_named_with_the_devices_that_are() {
    if !opencl_or_skip("a_device_that_is_not_there_is_named") {
        return;
    }
    let (dir, space, spec) = failing_kernel(&[64], &[0], "device = 7");
    let e = OpenClRunner::new(&spec, &space, dir.path())
        .err()
        .expect("device 7 is not there")
        .to_string();
    assert!(e.contains("no device 7 on OpenCL platform 0"), "{e}");
    assert!(e.contains("the OpenCL devices here: platform 0"), "{e}");
    let (dir, space, spec) = failing_kernel(&[64], &[0], "platform = \"no such vendor\"");
    let e = OpenClRunner::new(&spec, &space, dir.path())
        .err()
        .expect("no such platform")
        .to_string();
    assert!(
        e.contains("no OpenCL platform named \"no such vendor\""),
        "{e}"
    );
    // By a part of its name, any case.
    let name = device::devices().unwrap()[0].name.to_uppercase();
    let part: String = name.chars().take(6).collect();
    let (dir, space, spec) = failing_kernel(&[64], &[0], &format!("device = \"{part}\""));
    open(&spec, &space, dir.path());
}

#[test]
fn arguments_that_do_not_fit_the_kernel_are_refused_before_anything_is_measured() {
    if !opencl_or_skip("arguments_that_do_not_fit_the_kernel_are_refused") {
        return;
    }
    let (dir, space, mut spec) = failing_kernel(&[64], &[0], "");
    spec.arguments.pop();
    spec.verify = None;
    let e = OpenClRunner::new(&spec, &space, dir.path())
        .err()
        .expect("one argument short")
        .to_string();
    assert!(e.contains("takes 2 arguments, and 1 are given (x)"), "{e}");
    spec.kernel = "nope".into();
    let (dir2, _, _) = failing_kernel(&[64], &[0], "");
    let e = OpenClRunner::new(&spec, &space, dir2.path())
        .err()
        .expect("no such kernel")
        .to_string();
    assert!(e.contains("no kernel `nope` (its kernels: k)"), "{e}");
    drop(dir);
}

#[test]
fn the_reference_that_does_not_build_stops_the_run_before_it_starts() {
    if !opencl_or_skip("the_reference_that_does_not_build") {
        return;
    }
    let (dir, space, mut spec) = failing_kernel(&[64], &[0, 1], "");
    spec.verify.as_mut().unwrap().reference = Some(toml::from_str("mode = 1").unwrap());
    let e = OpenClRunner::new(&spec, &space, dir.path())
        .err()
        .expect("the reference does not build")
        .to_string();
    assert!(
        e.starts_with("verification: the reference configuration"),
        "{e}"
    );
    assert!(e.contains("k.cl:8"), "{e}");
}

#[test]
fn the_spec_is_checked_before_any_device_is_touched() {
    let space = SearchSpace::new(
        vec![Parameter::integer("block_size_x", [32, 64]).unwrap()],
        &[] as &[&str],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cl"), "__kernel void k() {}").unwrap();
    let refused = |text: &str| {
        let full = format!("source = \"k.cl\"\nkernel = \"k\"\nproblem_size = [64]\n{text}");
        match toml::from_str::<OpenClSpec>(&full) {
            Err(e) => e.to_string(),
            Ok(spec) => match Problem::new(&spec, &space, dir.path()) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("accepted: {full}"),
            },
        }
    };
    assert!(
        refused("objective = \"energy\"").contains("needs power readings"),
        "{}",
        refused("objective = \"energy\"")
    );
    assert!(refused("objective = \"GFLOP/s\"").contains("needs `flops`"));
    assert!(refused("kind = \"cuda\"").contains("is not the opencl runner"));
    assert!(refused("jobs = 0").contains("jobs: must be at least 1"));
    assert!(refused("kernel_timeout = -1").contains("kernel_timeout"));
    assert!(refused("shared_memory = \"64\"").contains("unknown field `shared_memory`"));
    assert!(refused("problem_size = [1, 2, 3, 4]").contains("duplicate key"));
    let missing = {
        let spec: OpenClSpec =
            toml::from_str("source = \"gone.cl\"\nkernel = \"k\"\nproblem_size = [64]").unwrap();
        Problem::new(&spec, &space, dir.path())
            .err()
            .unwrap()
            .to_string()
    };
    assert!(
        missing.contains("cannot read the kernel source"),
        "{missing}"
    );
}

#[test]
fn a_configuration_becomes_defines_before_the_source_and_global_sizes_are_grid_times_block() {
    let space = SearchSpace::new(
        vec![
            Parameter::integer("block_size_x", [16, 32]).unwrap(),
            Parameter::integer("tile", [1, 4]).unwrap(),
        ],
        &[] as &[&str],
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cl"), "__kernel void k() {}\n").unwrap();
    let spec: OpenClSpec = toml::from_str(
        "source = \"k.cl\"\nkernel = \"k\"\nproblem_size = [1000]\ngrid_div_x = [\"block_size_x\", \"tile\"]\n\
         compiler_options = [\"-cl-fast-relaxed-math\"]",
    )
    .unwrap();
    let p = Problem::new(&spec, &space, dir.path()).unwrap();
    let c = space
        .configuration_of(&[Value::Int(32), Value::Int(4)])
        .unwrap();
    let launch = p.launch(&space, &c).unwrap();
    // 1000 / (32 * 4) rounded up: 8 work-groups of 32, a global size of 256.
    assert_eq!(launch.grid, [8, 1, 1]);
    assert_eq!(launch.block, [32, 1, 1]);
    let text = p.source_with_defines(&launch);
    assert!(text.starts_with("#define grid_size_x 8\n"), "{text}");
    assert!(
        text.contains("#define block_size_x 32\n#define tile 4\n"),
        "{text}"
    );
    assert!(text.contains("#define kernel_tuner 1\n"), "{text}");
    assert!(
        text.ends_with("#line 1 \"k.cl\"\n__kernel void k() {}\n"),
        "{text}"
    );
    let options = p.build_options();
    assert!(options.ends_with("-cl-fast-relaxed-math"), "{options}");
    assert!(options.starts_with("-I \""), "{options}");
}
