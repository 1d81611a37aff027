//! `ktune space` end to end: reports, JSON, and errors that name the problem and where.

use crate::common::{Succeeds, assert_mentions, in_tempdir, ktune, repo, space_json, written};

#[test]
fn describes_the_example_spec() {
    let out = ktune()
        .arg("space")
        .arg(repo("examples/convolution.toml"))
        .succeeds();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_mentions(
        &text,
        &[
            "feasible size   4362",
            "Cartesian size  10240",
            "density         42.598%",
            "block_size_x",
        ],
    );
}

#[test]
fn json_report_for_a_t1_file() {
    let v = space_json(&repo("../shared/data/t1/gemm.json"));
    assert_eq!(v["size"], 116928);
    assert_eq!(v["format"], "T1");
    assert_eq!(v["parameters"].as_array().unwrap().len(), 17);
    assert!(v["groups"].as_array().unwrap().len() > 1);
}

#[test]
fn a_cache_file_gives_its_recorded_configurations() {
    let v = space_json(&repo("../shared/data/spaces/dedispersion_A100.json.gz"));
    assert_eq!(v["size"], 11130);
}

#[test]
fn errors_name_the_problem_and_the_place() {
    let (dir, spec) = in_tempdir(
        "ktune.toml",
        "constraints = [\"block_size_x * blok_size_y <= 1024\"]\n[[parameter]]\nname = \"block_size_x\"\nvalues = [1, 2]\n[[parameter]]\nname = \"block_size_y\"\nvalues = [1, 2]\n",
    );
    let err = ktune().arg("space").arg(&spec).fails();
    assert!(err.starts_with("error: "), "{err}");
    assert_mentions(&err, &["blok_size_y", "did you mean `block_size_y`?"]);
    assert!(err.contains("ktune.toml:1:32"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    ktune()
        .arg("space")
        .arg(dir.path().join("missing.toml"))
        .fails_saying(&["cannot read", "missing.toml"]);
}

/// The README's sample of `ktune space` is what the tool prints.
#[test]
fn the_readme_sample_matches_the_tool() {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let start = readme
        .find("$ ktune space ../shared/data/t1/gemm.json")
        .expect("the README shows `ktune space` on gemm");
    let sample: Vec<&str> = readme[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .filter(|l| *l != "...")
        .collect();
    assert!(sample.len() >= 4, "{sample:?}");
    let gemm = repo("../shared/data/t1/gemm.json");
    if !gemm.exists() {
        eprintln!("SKIPPED: {} is not there", gemm.display());
        return;
    }
    let out = ktune().arg("space").arg(gemm).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    for line in sample {
        assert!(
            text.lines().any(|l| l == line),
            "README line `{line}` not in:\n{text}"
        );
    }
}

/// Each cause is said once, even where an error quotes its source.
#[test]
fn errors_do_not_repeat_their_cause() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["space"], vec!["tune"], vec!["results"]] {
        let err = ktune().args(&args).arg(dir.path()).fails();
        let first = err.lines().next().unwrap_or_default().to_string();
        for phrase in [
            "Is a directory",
            "is a directory",
            "unable to open database file",
        ] {
            assert!(first.matches(phrase).count() <= 1, "{args:?}: {first}");
        }
        assert!(
            first.contains(&dir.path().display().to_string()),
            "{args:?}: {first}"
        );
    }
}

/// Twelve parameters of ten values tied by one constraint (10^12 combinations) are refused at
/// once, naming the group and the flag; a small limit refuses a small group too.
#[test]
fn an_exploding_group_is_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("explode.toml");
    let names: Vec<String> = (0..12).map(|i| format!("p{i}")).collect();
    let mut text = format!("constraints = [\"{} <= 30\"]\n", names.join(" + "));
    for n in &names {
        text.push_str(&format!(
            "[[parameter]]\nname = \"{n}\"\nvalues = [1,2,3,4,5,6,7,8,9,10]\n"
        ));
    }
    std::fs::write(&spec, &text).unwrap();
    let started = std::time::Instant::now();
    let err = ktune()
        .arg("space")
        .arg(&spec)
        .fails_saying(&["p0, p1, p2", "1000000000000 combinations"]);
    assert!(err.contains("--max-enumeration"), "{err}");
    // Refused before any enumeration (a generous bound for a debug build on a busy machine).
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    ktune()
        .args(["space", "--max-enumeration", "1000"])
        .arg(repo("examples/convolution.toml"))
        .fails_saying(&["the limit is 1e3"]);
}

/// `--prior`: how much of an earlier study maps onto the space, in the report and the JSON;
/// a prior that shares nothing, or is no cache, is a clear error.
#[test]
fn priors_say_how_much_of_them_maps_onto_the_space() {
    let spec = repo("examples/convolution.toml");
    let other_kernel = crate::common::shared_space("dedispersion_A100");
    let out = ktune()
        .arg("space")
        .arg(&spec)
        .arg("--prior")
        .arg(crate::common::shared_space("convolution_MI250X"))
        .arg("--prior")
        .arg(&other_kernel)
        .succeeds();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_mentions(
        &text,
        &[
            "priors (2)",
            "convolution_MI250X.json.gz: 4362 of 4362 measurements map onto 4362 configurations",
            "only in the prior: block_size_z",
            "only here (taken at their default): read_only",
        ],
    );
    let out = ktune()
        .arg("space")
        .arg(&spec)
        .arg("--json")
        .arg("--prior")
        .arg(&other_kernel)
        .succeeds();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["priors"][0];
    let n = |k: &str| p[k].as_u64().unwrap();
    // Every measurement is matched or dropped (here by the example's constraints), and the
    // other kernel's parameters fold it onto a few configurations.
    assert_eq!(n("measurements"), 11130, "{p}");
    assert_eq!(n("matched") + n("outside") + n("invalid"), 11130, "{p}");
    assert!(n("matched") > 10000 && n("configurations") < 100, "{p}");
    let dir = tempfile::tempdir().unwrap();
    let unrelated = written(
        dir.path(),
        "x.json",
        r#"{"tune_params_keys": ["x"], "tune_params": {"x": [1, 2]}, "cache": {"1": {"x": 1, "time": 1.0}}}"#,
    );
    for (prior, words) in [
        (&unrelated, "shares no parameter with the space: it has x;"),
        (
            &spec,
            "is not a ktune study, a Kernel Tuner cache or a T4 results file",
        ),
    ] {
        ktune()
            .arg("space")
            .arg(&spec)
            .arg("--prior")
            .arg(prior)
            .fails_saying(&[words]);
    }
}

/// The transfer example's spec reads the committed multi-size data as priors, in each of the
/// forms a prior comes in: a ktune study and its Kernel Tuner cache export say the same.
#[test]
fn the_transfer_example_maps_the_committed_studies_of_other_sizes() {
    let spec = repo("examples/transfer-cpu/n768.toml");
    for prior in [
        "bench/data/matmul-sizes/256.db",
        "bench/data/matmul-sizes/matmul_512.json.gz",
    ] {
        let out = ktune()
            .arg("space")
            .arg(&spec)
            .arg("--prior")
            .arg(repo(prior))
            .succeeds();
        let text = String::from_utf8(out.stdout).unwrap();
        assert_mentions(
            &text,
            &[
                "feasible size   384",
                "384 of 384 measurements map onto 384 configurations (384 moved to the nearest value)",
            ],
        );
    }
}

/// A name that is not a file of text (`/dev/zero`) is refused without reading it to the end
/// (before, `ktune tune /dev/zero` read gigabytes first).
#[test]
fn a_file_that_never_ends_is_refused_without_filling_the_memory() {
    ktune()
        .args(["space", "/dev/zero"])
        .fails_saying(&["cannot tell the format of `/dev/zero`"]);
    ktune()
        .args(["tune", "/dev/zero", "--max-evals", "2"])
        .fails_saying(&["cannot read `/dev/zero`", "larger than 16 MiB"]);
}
