//! Fuzzing of the spec readers (see [`crate::expr`]'s fuzz module for the approach): mutated
//! `ktune.toml` files (the examples), T1 problems (the shared ones) and Kernel Tuner caches
//! are read and, where they read, built with a small enumeration limit. Nothing may panic;
//! every error must render.

use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;

use super::SpaceSpec;
use crate::expr::fuzz::{mutate, run_target};

fn repo(rel: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// Seeds: every file that exists of `paths`, plus `extra`.
fn seeds(paths: &[std::path::PathBuf], extra: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = paths
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    out.extend(extra.iter().map(|s| s.to_string()));
    out
}

fn pick_and_mutate(seeds: &[String], rng: &mut Xoshiro256PlusPlus) -> String {
    let mut text = seeds[rng.random_range(0..seeds.len())].clone();
    for _ in 0..rng.random_range(1..4) {
        text = mutate(&text, rng);
    }
    text
}

/// Reads and builds, checking that errors render.
fn read_and_build(spec: Result<SpaceSpec, crate::SpaceError>) -> Result<(), String> {
    match spec {
        Ok(spec) => {
            match spec.build_limited(2e6) {
                Ok(space) => {
                    let _ = space.size();
                }
                Err(e) => {
                    let _ = e.to_string();
                }
            }
            Ok(())
        }
        Err(e) => {
            let _ = e.to_string();
            Ok(())
        }
    }
}

const TOML: &str = "name = \"t\"\nconstraints = [\"a * b <= 64\", \"c != 'x' or a > 2\"]\n[[parameter]]\nname = \"a\"\nrange = { start = 1, stop = 64, factor = 2 }\n[[parameter]]\nname = \"b\"\nvalues = \"[2**i for i in range(5)]\"\n[[parameter]]\nname = \"c\"\ntype = \"categorical\"\nvalues = [\"x\", \"y\"]\n[[parameter]]\nname = \"o\"\ntype = \"permutation\"\nitems = [\"i\", \"j\", \"k\"]\n";

const CACHE: &str = "{\n\"tune_params_keys\": [\"x\", \"y\"],\n\"tune_params\": {\"x\": [1, 2, 4], \"y\": [0.5, 1.0]},\n\"objective\": \"time\",\n\"cache\": {\n\"1,0.5\": {\"x\": 1, \"y\": 0.5, \"time\": 3.5},\n\"2,0.5\": {\"x\": 2, \"y\": 0.5, \"time\": \"RuntimeFailedConfig\"},\n\"4,1.0\": {\"x\": 4, \"y\": 1.0, \"time\": 1.5}}\n}\n";

#[test]
fn fuzz_toml_specs() {
    let examples = [
        "examples/convolution.toml",
        "examples/matmul-cpu/ktune.toml",
        "examples/loop-order-cpu/ktune.toml",
        "examples/cuda-matmul/ktune.toml",
        "examples/cuda-convolution/ktune.toml",
    ];
    let seeds = seeds(
        &examples.iter().map(|p| repo(p)).collect::<Vec<_>>(),
        &[TOML],
    );
    run_target("toml", &mut |rng| pick_and_mutate(&seeds, rng), &|text| {
        read_and_build(SpaceSpec::from_toml_str(text, "fuzz.toml"))
    });
}

#[test]
fn fuzz_t1_specs() {
    let shared = ["convolution", "dedispersion", "gemm", "hotspot"]
        .map(|n| repo(&format!("../shared/data/t1/{n}.json")));
    let seeds = seeds(
        &shared,
        &[
            "{\"ConfigurationSpace\": {\"TuningParameters\": [{\"Name\": \"a\", \"Type\": \"int\", \"Values\": \"[1, 2, 4]\"}], \"Conditions\": [{\"Parameters\": [\"a\"], \"Expression\": \"a > 1\"}]}}",
        ],
    );
    run_target("t1", &mut |rng| pick_and_mutate(&seeds, rng), &|text| {
        read_and_build(SpaceSpec::from_t1_str(text, "fuzz.json"))
    });
}

#[test]
fn fuzz_cache_files() {
    let seeds = seeds(&[], &[CACHE]);
    run_target("cache", &mut |rng| pick_and_mutate(&seeds, rng), &|text| {
        read_and_build(SpaceSpec::from_cache_str(text, "fuzz.json"))
    });
}
