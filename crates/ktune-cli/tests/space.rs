//! `ktune space` end to end: reports, JSON, and errors that name the problem and where.

use std::path::PathBuf;

use assert_cmd::Command;

fn ktune() -> Command {
    Command::cargo_bin("ktune").unwrap()
}

fn repo(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

#[test]
fn describes_the_example_spec() {
    let out = ktune()
        .arg("space")
        .arg(repo("examples/convolution.toml"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("feasible size   4362"), "{text}");
    assert!(text.contains("Cartesian size  10240"), "{text}");
    assert!(text.contains("density         42.598%"), "{text}");
    assert!(text.contains("block_size_x"), "{text}");
}

#[test]
fn json_report_for_a_t1_file() {
    let out = ktune()
        .args(["space", "--json"])
        .arg(repo("../shared/data/t1/gemm.json"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["size"], 116928);
    assert_eq!(v["format"], "T1");
    assert_eq!(v["parameters"].as_array().unwrap().len(), 17);
    assert!(v["groups"].as_array().unwrap().len() > 1);
}

#[test]
fn a_cache_file_gives_its_recorded_configurations() {
    let out = ktune()
        .args(["space", "--json"])
        .arg(repo("../shared/data/spaces/dedispersion_A100.json.gz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["size"], 11130);
}

#[test]
fn errors_name_the_problem_and_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("ktune.toml");
    std::fs::write(
        &spec,
        "constraints = [\"block_size_x * blok_size_y <= 1024\"]\n[[parameter]]\nname = \"block_size_x\"\nvalues = [1, 2]\n[[parameter]]\nname = \"block_size_y\"\nvalues = [1, 2]\n",
    )
    .unwrap();
    let out = ktune().arg("space").arg(&spec).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("error: "), "{err}");
    assert!(
        err.contains("blok_size_y") && err.contains("did you mean `block_size_y`?"),
        "{err}"
    );
    assert!(err.contains("ktune.toml:1:32"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let out = ktune()
        .arg("space")
        .arg(dir.path().join("missing.toml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("cannot read") && err.contains("missing.toml"),
        "{err}"
    );
}
