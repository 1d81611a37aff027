//! `ktune` with the CUDA runner where no GPU is needed: the examples' spaces, clear errors for
//! bad CUDA specs, and a clear message (not a panic, no database) where no driver exists.
//! With a GPU (`--ignored`): a kernel fault poisons the process's CUDA context, and `ktune
//! tune` restarts itself and finishes the run; outputs that all differ from the reference stop
//! the run with an error, their results kept. The other GPU runs are in ktune-runners'
//! ignored tests and BENCHMARKS.md.

use std::path::{Path, PathBuf};

use crate::common::{assert_mentions, ktune, space_json};

fn examples() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples"))
}

#[test]
fn the_cuda_examples_have_the_spaces_they_describe() {
    for (name, size) in [
        ("cuda-vector-add", "32"),
        ("cuda-matmul", "140"),
        ("cuda-matmul-sizes", "140"),
        // Kernel Tuner's convolution space, as in the shared T1 file.
        ("cuda-convolution", "4362"),
        ("cuda-reduction", "1008"),
    ] {
        let j = space_json(&examples().join(name).join("ktune.toml"));
        assert_eq!(j["size"].to_string(), size, "{name}: {j}");
    }
}

#[test]
fn without_a_driver_tune_says_so_and_writes_nothing() {
    if ktune_runners::cuda::driver::driver_available() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    let out = ktune()
        .arg("tune")
        .arg(examples().join("cuda-vector-add/ktune.toml"))
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no CUDA driver found"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!db.exists());
}

#[test]
fn bad_cuda_specs_name_the_problem_and_where() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k() {}\n",
    )
    .unwrap();
    let write = |runner: &str| {
        let spec = format!(
            "[[parameter]]\nname = \"block_size_x\"\nvalues = [32, 64]\n\n[runner]\nkind = \"cuda\"\nsource = \"k.cu\"\nkernel = \"k\"\n{runner}"
        );
        let path = dir.path().join("ktune.toml");
        std::fs::write(&path, spec).unwrap();
        let out = ktune()
            .arg("tune")
            .arg(&path)
            .args(["--max-evals", "2"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = write("problem_size = [64]\ngrid_div_x = [\"block_size_x * tile\"]");
    assert_mentions(&e, &["[runner] section", "grid_div_x"]);
    assert_mentions(&e, &["tile", "^"]);
    let e = write("problem_size = [64]\nrepeats = 3");
    assert!(e.contains("repeats"), "{e}");
    let e = write("problem_size = [64]\nobjective = \"GFLOP/s\"");
    assert!(e.contains("needs `flops`"), "{e}");
    let e = write("problem_size = [64]\nkind2 = 1");
    assert!(e.contains("kind2"), "{e}");
    std::fs::remove_file(dir.path().join("k.cu")).unwrap();
    let e = write("problem_size = [64]");
    assert_mentions(&e, &["cannot read the kernel source", "k.cu"]);
}

/// A spec in `dir` for the kernel `k(float *x, int n)` with `body`, over `block_size_x = 64`
/// and `mode` (`mode`: the rest of its `[[parameter]]` table), on 4096 elements, verified
/// exactly; `runner` and `verify` are added to their sections.
fn mode_kernel(dir: &Path, body: &str, mode: &str, runner: &str, verify: &str) -> PathBuf {
    std::fs::write(
        dir.join("k.cu"),
        format!(
            "extern \"C\" __global__ void k(float *x, int n) {{\n    \
             int i = blockIdx.x * block_size_x + threadIdx.x;\n{body}}}\n"
        ),
    )
    .unwrap();
    let spec = dir.join("ktune.toml");
    std::fs::write(
        &spec,
        format!(
            "[[parameter]]\nname = \"block_size_x\"\nvalues = [64]\n\n\
             [[parameter]]\nname = \"mode\"\n{mode}\n\n\
             [runner]\nkind = \"cuda\"\nsource = \"k.cu\"\nkernel = \"k\"\nproblem_size = [4096]\n{runner}\n\
             [[runner.argument]]\nname = \"x\"\ntype = \"float\"\nsize = 4096\noutput = true\n\
             [[runner.argument]]\nname = \"n\"\ntype = \"int\"\nvalue = 4096\n\
             [runner.verify]\natol = 0.0\n{verify}\n"
        ),
    )
    .unwrap();
    spec
}

/// `ktune tune spec --db db args...`: whether it succeeded, and its standard error.
fn tune(spec: &Path, db: &Path, args: &[&str]) -> (bool, String) {
    let out = ktune()
        .arg("tune")
        .arg(spec)
        .args(args)
        .args(["--quiet", "--db"])
        .arg(db)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The results recorded in `db`, as `ktune results --format json` lists them.
fn results(db: &Path) -> Vec<serde_json::Value> {
    let out = ktune()
        .args(["results", "--format", "json"])
        .arg(db)
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn kernel_faults_restart_ktune_and_the_run_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = mode_kernel(
        dir.path(),
        "#if mode == 1 || mode == 4\n    \
         x[i + (1 << 30)] = 1.0f;          // far out of bounds: a sticky kernel fault\n\
         #else\n    if (i < n) x[i] = 1.0f;\n#endif\n",
        "values = [0, 1, 2, 3, 4, 5]\ndefault = 0",
        "jobs = 1",
        "",
    );
    let db = dir.path().join("r.db");
    let (ok, err) = tune(
        &spec,
        &db,
        &["--strategy", "brute_force", "--max-evals", "6"],
    );
    assert!(ok, "{err}");
    // Two faults, two restarts, and every configuration evaluated once.
    assert!(err.contains("restarting to continue (1 of"), "{err}");
    assert!(err.contains("restarting to continue (2 of"), "{err}");
    assert!(!err.contains("(3 of"), "{err}");
    let rows = results(&db);
    assert_eq!(rows.len(), 6, "{rows:?}");
    for r in &rows {
        let mode = r["params"]["mode"].as_i64().unwrap();
        if mode == 1 || mode == 4 {
            assert_eq!(r["status"], "runtime", "{r}");
            assert!(
                r["reason"].as_str().unwrap().contains("kernel fault"),
                "{r}"
            );
        } else {
            assert_eq!(r["status"], "ok", "{r}");
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn outputs_that_all_differ_from_the_reference_stop_the_run_with_their_results_kept() {
    let dir = tempfile::tempdir().unwrap();
    // The reference configuration (mode 0) comes last: the first configurations to run all
    // write something else, as with a reference that is itself wrong.
    let spec = mode_kernel(
        dir.path(),
        "    if (i < n) x[i] = (float)mode;\n",
        "values = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0]",
        "jobs = 4",
        "reference = { mode = 0 }",
    );
    let db = dir.path().join("r.db");
    let (ok, err) = tune(
        &spec,
        &db,
        &[
            "--strategy",
            "brute_force",
            "--max-evals",
            "13",
            "--no-default",
        ],
    );
    assert!(!ok, "{err}");
    assert!(
        err.contains(
            "the first 8 configurations that ran all gave outputs different from the reference \
             configuration's output (block_size_x=64, mode=0) (the first: "
        ),
        "{err}"
    );
    let rows = results(&db);
    assert_eq!(rows.len(), 8, "{rows:?}");
    assert!(
        rows.iter().all(|r| r["status"] == "wrong_output"),
        "{rows:?}"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn the_matmul_is_tuned_for_three_sizes_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let spec = examples().join("cuda-matmul-sizes/ktune.toml");
    let args = ["--strategy", "random", "--seed", "1", "--max-evals", "6"];
    let (ok, err) = tune(&spec, &db, &args);
    assert!(ok, "{err}");
    let rows = results(&db);
    assert_eq!(rows.len(), 6, "{rows:?}");
    for r in &rows {
        assert_eq!(r["status"], "ok", "{r}");
        let t: Vec<f64> = ["w1024", "w2048", "w4096"]
            .iter()
            .map(|n| r["observed"][format!("time@{n}")].as_f64().unwrap())
            .collect();
        // 8 and 64 times the work of the smallest.
        assert!(t[0] < t[1] && t[1] < t[2], "{r}");
        let mean = (t[0] * t[1] * t[2]).cbrt();
        assert!(
            (mean - r["objective"].as_f64().unwrap()).abs() < 1e-9 * mean,
            "{r}"
        );
    }
    let out = ktune()
        .arg("tune")
        .arg(&spec)
        .args(args)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("0 this run, 6 resumed"), "{text}");
}

/// A kernel fault on one instance poisons the process's CUDA context for every instance:
/// the configuration fails naming the instance, ktune restarts, and the rest of the study
/// is measured on both instances in the new process.
#[test]
#[ignore = "needs an NVIDIA GPU, its driver and NVRTC: run with --ignored on a GPU machine"]
fn a_kernel_fault_on_one_instance_restarts_and_fails_only_that_configuration() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("k.cu"),
        "extern \"C\" __global__ void k(float *x, int n) {\n\
         int i = blockIdx.x * block_size_x + threadIdx.x;\n\
         #if mode == 1\n\
         if (N == 8192) x[i + (1 << 30)] = 1.0f;  // far out of bounds on the large instance\n\
         #endif\n\
         if (i < n) x[i] = 1.0f;\n}\n",
    )
    .unwrap();
    let spec = dir.path().join("ktune.toml");
    std::fs::write(
        &spec,
        "[[parameter]]\nname = \"block_size_x\"\nvalues = [64]\n\n\
         [[parameter]]\nname = \"mode\"\nvalues = [0, 1, 2]\n\n\
         [[instance]]\nname = \"small\"\nN = 4096\n\n\
         [[instance]]\nname = \"large\"\nN = 8192\n\n\
         [runner]\nkind = \"cuda\"\nsource = \"k.cu\"\nkernel = \"k\"\nproblem_size = [\"N\"]\njobs = 4\n\
         [[runner.argument]]\nname = \"x\"\ntype = \"float\"\nsize = \"N\"\noutput = true\n\
         [[runner.argument]]\nname = \"n\"\ntype = \"int\"\nvalue = \"N\"\n\
         [runner.verify]\natol = 0.0\n",
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let (ok, err) = tune(
        &spec,
        &db,
        &["--strategy", "brute_force", "--max-evals", "3"],
    );
    assert!(ok, "{err}");
    assert!(err.contains("restarting to continue (1 of"), "{err}");
    let rows = results(&db);
    assert_eq!(rows.len(), 3, "{rows:?}");
    for r in &rows {
        if r["params"]["mode"] == 1 {
            assert_eq!(r["status"], "runtime", "{r}");
            let reason = r["reason"].as_str().unwrap();
            assert!(reason.starts_with("instance large: "), "{r}");
            assert!(reason.contains("kernel fault"), "{r}");
        } else {
            assert_eq!(r["status"], "ok", "{r}");
            assert!(r["observed"]["time@large"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
}
