//! `ktune` with the OpenCL runner on a real OpenCL device (PoCL on the CPU, which
//! `scripts/test.sh` installs): the examples' spaces, `ktune devices`, a real tuning run of
//! an example with its results and device recorded, a run stopped by outputs that all differ
//! from the reference's, and clear errors for a device that is not there and for bad OpenCL
//! specs. Where no OpenCL is installed, the tests that need it
//! say SKIPPED.

use std::path::Path;

use crate::common::{Succeeds, ktune, results_json, space_json};

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

/// Whether an OpenCL device is here; says why not on stderr.
fn opencl_or_skip(test: &str) -> bool {
    match ktune_runners::opencl::list_devices() {
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

#[test]
fn the_opencl_examples_have_the_spaces_they_describe() {
    for (name, size) in [
        ("opencl-vector-add", "28"),
        ("opencl-matmul", "280"),
        ("opencl-convolution", "405"),
    ] {
        let j = space_json(&examples().join(name).join("ktune.toml"));
        assert_eq!(j["size"].to_string(), size, "{name}: {j}");
    }
}

#[test]
fn devices_lists_the_opencl_devices_with_the_keys_that_pick_them() {
    let out = ktune().arg("devices").succeeds();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("CUDA (kind = \"cuda\"):"), "{text}");
    assert!(text.contains("OpenCL (kind = \"opencl\"):"), "{text}");
    let out = ktune().args(["devices", "--json"]).succeeds();
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    if !opencl_or_skip("devices_lists_the_opencl_devices") {
        assert!(j["opencl"]["unavailable"].is_string(), "{j}");
        return;
    }
    let first = ktune_runners::opencl::list_devices().unwrap()[0].clone();
    assert!(
        text.contains(&format!("platform = 0, device = 0: {}", first.name)),
        "{text}"
    );
    assert_eq!(j["opencl"]["devices"][0]["name"], first.name.as_str());
    assert_eq!(j["opencl"]["devices"][0]["platform"], 0);
}

#[test]
fn an_opencl_example_is_tuned_on_the_device_and_its_results_name_it() {
    if !opencl_or_skip("an_opencl_example_is_tuned_on_the_device") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("va.db");
    let out = ktune()
        .arg("tune")
        .arg(examples().join("opencl-vector-add/ktune.toml"))
        .arg("--db")
        .arg(&db)
        .args(["--max-evals", "6"])
        .succeeds();
    let err = String::from_utf8_lossy(&out.stderr);
    let device = ktune_runners::opencl::list_devices().unwrap()[0]
        .name
        .clone();
    assert!(err.contains(&device), "the run names its device: {err}");
    let rows = results_json(dir.path(), &[db.as_os_str()]);
    assert_eq!(rows.len(), 6);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r}");
        assert!(r["objective"].as_f64().unwrap() > 0.0, "{r}");
        assert_eq!(r["observed"]["device"], device.as_str(), "{r}");
    }
    // The export takes the device, the kernel and the problem size from the study.
    let wisdom = dir.path().join("va.wisdom");
    ktune()
        .arg("export")
        .arg(&db)
        .arg("--wisdom")
        .arg(&wisdom)
        .succeeds();
    let text = std::fs::read_to_string(&wisdom).unwrap();
    let mut lines = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    assert_eq!(lines.next().unwrap()["key"], "vector_add");
    let record = lines.next().unwrap();
    assert_eq!(record["problem_size"], serde_json::json!([4194304, 1, 1]));
    assert_eq!(record["environment"]["device_name"], device.as_str());
    // The Kernel Tuner cache export has the header Kernel Tuner needs to resume or simulate
    // from it, `cache` last (Kernel Tuner appends to it).
    let out = ktune()
        .args(["results", "--format", "cache"])
        .arg(&db)
        .succeeds();
    let text = String::from_utf8_lossy(&out.stdout);
    let cache: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(cache["device_name"], device.as_str());
    assert_eq!(cache["kernel_name"], "vector_add");
    assert_eq!(cache["problem_size"], serde_json::json!([4194304]));
    assert_eq!(cache["cache"].as_object().unwrap().len(), 6);
    assert!(text.trim_end().ends_with("}\n}"), "{text}");
    // Resuming runs nothing again.
    let out = ktune()
        .arg("tune")
        .arg(examples().join("opencl-vector-add/ktune.toml"))
        .arg("--db")
        .arg(&db)
        .args(["--max-evals", "6"])
        .succeeds();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 this run, 6 resumed"), "{text}");
}

#[test]
fn a_device_that_is_not_there_is_a_clear_error_and_nothing_is_written() {
    if !opencl_or_skip("a_device_that_is_not_there") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = std::fs::read_to_string(examples().join("opencl-vector-add/ktune.toml"))
        .unwrap()
        .replace("device = 0", "device = 9");
    let path = dir.path().join("ktune.toml");
    std::fs::write(&path, spec).unwrap();
    std::fs::copy(
        examples().join("opencl-vector-add/vector_add.cl"),
        dir.path().join("vector_add.cl"),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let err = ktune()
        .arg("tune")
        .arg(&path)
        .arg("--db")
        .arg(&db)
        .fails_saying(&[
            "no device 9 on OpenCL platform 0",
            "the OpenCL devices here",
        ]);
    assert!(!err.contains("panicked"), "{err}");
    assert!(!db.exists());
}

#[test]
fn bad_opencl_specs_name_the_problem_and_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("k.cl"), "__kernel void k() {}\n").unwrap();
    let run = |runner: &str| {
        let path = dir.path().join("ktune.toml");
        std::fs::write(
            &path,
            format!(
                "[[parameter]]\nname = \"block_size_x\"\nvalues = [32, 64]\n\n[runner]\nkind = \"opencl\"\nsource = \"k.cl\"\nkernel = \"k\"\n{runner}"
            ),
        )
        .unwrap();
        ktune()
            .arg("tune")
            .arg(&path)
            .arg("--db")
            .arg(dir.path().join("r.db"))
            .args(["--max-evals", "2"])
            .fails()
    };
    let err = run("problem_size = [64]\nobjectives = [\"time\", \"energy\"]");
    assert!(err.contains("needs power readings"), "{err}");
    assert!(err.contains("ktune.toml"), "{err}");
    let err = run("problem_size = [64]\ntemplate_args = [\"float\"]");
    assert!(err.contains("unknown field `template_args`"), "{err}");
    let err = run("problem_size = [64]\ngrid_div_x = [\"nope\"]");
    assert!(err.contains("grid_div_x") && err.contains("nope"), "{err}");
}

/// With no OpenCL driver (the ICD loader pointed at an empty folder, or no loader at all),
/// `ktune devices` says what is missing and `ktune tune` fails saying so, writing nothing.
#[test]
fn without_an_opencl_driver_tune_says_what_to_install() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("vendors");
    std::fs::create_dir(&empty).unwrap();
    let db = dir.path().join("r.db");
    let err = ktune()
        .env("OCL_ICD_VENDORS", &empty)
        .arg("tune")
        .arg(examples().join("opencl-vector-add/ktune.toml"))
        .arg("--db")
        .arg(&db)
        .fails();
    assert!(
        err.contains("found no platform") || err.contains("no OpenCL library found"),
        "{err}"
    );
    assert!(err.contains("pocl-opencl-icd"), "{err}");
    assert!(!db.exists());
    let out = ktune()
        .env("OCL_ICD_VENDORS", &empty)
        .arg("devices")
        .succeeds();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("OpenCL (kind = \"opencl\"):\n  none: "),
        "{text}"
    );
}

/// The tiled matmul and the convolution run on the device as their specs say: a few
/// evaluations each, every output checked against the default configuration's.
#[test]
fn the_matmul_and_convolution_examples_tune_on_the_device() {
    if !opencl_or_skip("the_matmul_and_convolution_examples_tune_on_the_device") {
        return;
    }
    for example in ["opencl-matmul", "opencl-convolution"] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        ktune()
            .arg("tune")
            .arg(examples().join(example).join("ktune.toml"))
            .arg("--db")
            .arg(&db)
            .args(["--max-evals", "3", "--strategy", "random", "--seed", "1"])
            .succeeds();
        let rows = results_json(dir.path(), &[db.as_os_str()]);
        assert_eq!(rows.len(), 3, "{example}");
        for r in &rows {
            assert_eq!(r["status"], "ok", "{example}: {r}");
            assert!(
                r["observed"]["gflops"].as_f64().unwrap() > 0.0,
                "{example}: {r}"
            );
        }
    }
}

/// A study of two problem sizes on the OpenCL runner: each instance's `N` is defined in the
/// program, sizes the arrays (`size = "N"`), the scalar (`value = "N"`) and the grid
/// (`problem_size = ["N"]`), and picks the instance's input and expected files
/// (`a_{N}.raw`); `[runner.defines]` reaches the program too. Every configuration is
/// measured on both, the objective is the geometric mean, each size's time is kept, and a
/// resumed study measures nothing again.
#[test]
fn instances_measure_each_configuration_on_every_problem_size() {
    if !opencl_or_skip("instances_measure_each_configuration_on_every_problem_size") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("scaled_add.cl"),
        "#ifndef N\n#error the instance's N is not defined\n#endif\n\
         __kernel void scaled_add(__global float *c, __global const float *a, const int n) {\n\
           int i = get_global_id(0);\n\
           if (i < n && n == N) c[i] = a[i] + SCALE;\n\
         }\n",
    )
    .unwrap();
    for n in [1000usize, 3000] {
        let a: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
        let c: Vec<u8> = (0..n)
            .flat_map(|i| (i as f32 + 2.0).to_le_bytes())
            .collect();
        std::fs::write(dir.path().join(format!("a_{n}.raw")), a).unwrap();
        std::fs::write(dir.path().join(format!("c_{n}.raw")), c).unwrap();
    }
    let spec = dir.path().join("ktune.toml");
    std::fs::write(
        &spec,
        r#"
[[parameter]]
name = "block_size_x"
values = [16, 32, 64]

[[instance]]
name = "small"
N = 1000

[[instance]]
name = "large"
N = 3000

[runner]
kind = "opencl"
source = "scaled_add.cl"
kernel = "scaled_add"
problem_size = ["N"]
repeat = 2

[runner.defines]
SCALE = 2.0

[[runner.argument]]
name = "c"
type = "float32"
size = "N"
expected = "c_{N}.raw"

[[runner.argument]]
name = "a"
type = "float32"
size = "N"
file = "a_{N}.raw"

[[runner.argument]]
name = "n"
type = "int32"
value = "N"
"#,
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let tune = || {
        ktune()
            .arg("tune")
            .arg(&spec)
            .arg("--db")
            .arg(&db)
            .args(["--strategy", "brute_force", "--max-evals", "3"])
            .succeeds()
    };
    let out = tune();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 instances, each configuration measured on all: small, large"),
        "{err}"
    );
    let rows = results_json(dir.path(), &[db.as_os_str()]);
    assert_eq!(rows.len(), 3);
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r}");
        let small = r["observed"]["time@small"].as_f64().unwrap();
        let large = r["observed"]["time@large"].as_f64().unwrap();
        let mean = r["objective"].as_f64().unwrap();
        assert!(((small * large).sqrt() - mean).abs() <= 1e-9 * mean, "{r}");
    }
    let out = tune();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 this run, 3 resumed"), "{text}");

    // A wrong expected file for one instance fails every configuration on it, by name.
    std::fs::write(dir.path().join("c_3000.raw"), vec![0u8; 3000 * 4]).unwrap();
    let db2 = dir.path().join("r2.db");
    ktune()
        .arg("tune")
        .arg(&spec)
        .arg("--db")
        .arg(&db2)
        .args(["--strategy", "brute_force", "--max-evals", "3"])
        .output()
        .unwrap();
    let rows = results_json(dir.path(), &[db2.as_os_str()]);
    assert!(!rows.is_empty());
    for r in &rows {
        assert_ne!(r["status"], "ok", "{r}");
        assert!(
            r["reason"]
                .as_str()
                .unwrap()
                .starts_with("instance large: "),
            "{r}"
        );
    }
}

/// Instance variables in a kernel runner's section: a name that is also a parameter, and a
/// size that names no variable, are refused naming the instance or the key.
#[test]
fn kernel_instances_with_bad_variables_name_the_problem() {
    if !opencl_or_skip("kernel_instances_with_bad_variables_name_the_problem") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cl"),
        "__kernel void k(__global float *a) {}\n",
    )
    .unwrap();
    let run = |instance: &str, size: &str| {
        let path = dir.path().join("ktune.toml");
        std::fs::write(
            &path,
            format!(
                "[[parameter]]\nname = \"block_size_x\"\nvalues = [32, 64]\n\n[[instance]]\nname = \"one\"\n{instance}\n\n[runner]\nkind = \"opencl\"\nsource = \"k.cl\"\nkernel = \"k\"\nproblem_size = [\"N\"]\n\n[[runner.argument]]\nname = \"a\"\ntype = \"float32\"\nsize = {size}\n"
            ),
        )
        .unwrap();
        let db = dir.path().join("r.db");
        let err = ktune()
            .arg("tune")
            .arg(&path)
            .arg("--db")
            .arg(&db)
            .args(["--max-evals", "2"])
            .fails();
        assert!(!db.exists(), "{err}");
        err
    };
    let err = run("N = 64\nblock_size_x = 3", "\"N\"");
    assert!(
        err.contains("instance `one`: `block_size_x` is both a parameter"),
        "{err}"
    );
    let err = run("N = 64", "\"M * 2\"");
    assert!(err.contains("instance `one`"), "{err}");
    assert!(err.contains("size = \"M * 2\""), "{err}");
    assert!(err.contains("[[instance]] variables"), "{err}");
}

/// Outputs that all differ from the reference's stop the run after eight configurations, with
/// a message naming the reference and their results kept (as on CUDA).
#[test]
fn outputs_that_all_differ_from_the_reference_stop_the_run_with_their_results_kept() {
    if !opencl_or_skip(
        "outputs_that_all_differ_from_the_reference_stop_the_run_with_their_results_kept",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cl"),
        "__kernel void k(__global float *x, const int n) {\n\
           int i = get_global_id(0);\n\
           if (i < n) x[i] = (float)mode;\n\
         }\n",
    )
    .unwrap();
    // The reference configuration (mode 0) comes last: the first configurations to run all
    // write something else, as with a reference that is itself wrong.
    let spec = dir.path().join("ktune.toml");
    std::fs::write(
        &spec,
        r#"
[[parameter]]
name = "block_size_x"
values = [64]

[[parameter]]
name = "mode"
values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0]

[runner]
kind = "opencl"
source = "k.cl"
kernel = "k"
problem_size = [4096]
# Batches of 4 whatever the machine's cores: the check runs after each batch, so 8 is reached
# exactly.
jobs = 4

[[runner.argument]]
name = "x"
type = "float32"
size = 4096
output = true

[[runner.argument]]
name = "n"
type = "int32"
value = 4096

[runner.verify]
atol = 0.0
reference = { mode = 0 }
"#,
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let err = ktune()
        .arg("tune")
        .arg(&spec)
        .arg("--db")
        .arg(&db)
        .args([
            "--strategy",
            "brute_force",
            "--max-evals",
            "13",
            "--no-default",
            "--quiet",
        ])
        .fails();
    assert!(
        err.contains(
            "the first 8 configurations that ran all gave outputs different from the reference \
             configuration's output (block_size_x=64, mode=0) (the first: "
        ),
        "{err}"
    );
    let rows = results_json(dir.path(), &[db.as_os_str()]);
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert!(
        rows.iter().all(|r| r["status"] == "wrong_output"),
        "{rows:?}"
    );
}
