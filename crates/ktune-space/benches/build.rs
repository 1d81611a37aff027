//! Building the T1 search spaces, and a 10^10-configuration space that factors into groups.
//!
//! Run with `cargo bench -p ktune-space --bench build`. Kernel Tuner 1.5 (python-constraint2)
//! takes about 1.2 s for gemm and 1.9 s for hotspot on the 2-core project machine.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use ktune_space::spec::SpaceSpec;
use ktune_space::{Parameter, SearchSpace};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

fn t1(name: &str) -> SpaceSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../../shared/data/t1/{name}.json"));
    SpaceSpec::from_path(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// 12 parameters of 10 values in 6 pairs restricted by `a <= b`: Cartesian 10^12, feasible
/// 55^6 ≈ 2.8e10, in 6 groups of 55 tuples.
fn factored_space() -> SearchSpace {
    let params: Vec<Parameter> = (0..12)
        .map(|i| Parameter::integer_range(format!("p{i}"), 1, 10, 1).unwrap())
        .collect();
    let constraints: Vec<String> = (0..6)
        .map(|i| format!("p{} <= p{}", 2 * i, 2 * i + 1))
        .collect();
    SearchSpace::new(params, &constraints).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(20);
    for name in ["convolution", "dedispersion", "gemm", "hotspot"] {
        let spec = t1(name);
        group.bench_function(name, |b| b.iter(|| black_box(spec.build().unwrap())));
    }
    group.bench_function("factored_2.8e10_build_and_sample_1000", |b| {
        b.iter(|| {
            let space = factored_space();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(1);
            black_box(space.sample_distinct(1000, &mut rng))
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
