//! Throughput of compiled constraints on varying inputs.
//!
//! Each iteration evaluates a constraint on every assignment of a small grid
//! (block sizes 1..=1024 in powers of two, tile 1..=8: 968 assignments), so the reported
//! throughput is in constraint evaluations per second.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ktune_space::expr::{Constraint, ExprType, Interner, Scalar, Symbol};

fn inputs() -> Vec<[Scalar; 4]> {
    let mut out = Vec::new();
    for bx in 0..11 {
        for by in 0..11 {
            for tile in 1..=8 {
                out.push([
                    Scalar::Int(1 << bx),
                    Scalar::Int(1 << by),
                    Scalar::Int(tile),
                    Scalar::Real(0.5 * tile as f64),
                ]);
            }
        }
    }
    out
}

fn bench_constraints(c: &mut Criterion) {
    let symbols = [
        Symbol::new("block_size_x", ExprType::Int),
        Symbol::new("block_size_y", ExprType::Int),
        Symbol::new("tile", ExprType::Int),
        Symbol::new("ratio", ExprType::Real),
    ];
    let mut interner = Interner::default();
    let inputs = inputs();
    let mut group = c.benchmark_group("constraint");
    group.throughput(Throughput::Elements(inputs.len() as u64));
    let cases = [
        (
            "and_mod",
            "block_size_x*block_size_y <= 1024 and tile % 2 == 0",
        ),
        ("chained", "32 <= block_size_x*block_size_y <= 1024"),
        (
            "mixed",
            "block_size_x / block_size_y > ratio and tile in [2, 4, 8]",
        ),
    ];
    for (name, src) in cases {
        let constraint = Constraint::compile(src, &symbols, &mut interner).expect("compiles");
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0usize;
                for v in &inputs {
                    n += usize::from(constraint.is_satisfied(black_box(v)));
                }
                n
            })
        });
    }
    // Baseline: the first constraint as a hand-written Rust closure behind the same API.
    let native = Constraint::from_fn("native and_mod", vec![0, 1, 2], |v| {
        match (v[0], v[1], v[2]) {
            (Scalar::Int(x), Scalar::Int(y), Scalar::Int(t)) => x * y <= 1024 && t % 2 == 0,
            _ => false,
        }
    });
    group.bench_function("native_and_mod", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for v in &inputs {
                n += usize::from(native.is_satisfied(black_box(v)));
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, bench_constraints);
criterion_main!(benches);
