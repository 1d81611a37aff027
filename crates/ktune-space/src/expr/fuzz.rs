//! Fuzzing of the constraint language, on the stable toolchain: random expressions from a
//! grammar (and random mutations of them, for the lexer and parser) are compiled and, where
//! they compile, evaluated on random assignments and checked against the tree-walking
//! interpreter (the reference evaluator, itself checked against CPython by the golden tests).
//! Nothing may panic, and the two evaluators must agree.
//!
//! Why not cargo-fuzz: libFuzzer needs a nightly toolchain, which CI does not have; a seeded
//! generator inside `cargo test` runs wherever the tests run, reproduces any failure from its
//! seed, and needs no extra tool. Each target runs for `KTUNE_FUZZ_SECONDS` (default 2;
//! `.ci/run` gives 60). An input that failed once is kept in `fuzz/corpus/<target>/` beside
//! the crate and replayed by every run.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::compile::Compiler;
use super::interp::Interp;
use super::parser::parse;
use super::tests::{agree, env_for};
use super::*;

/// How long each target runs.
pub(crate) fn budget() -> Duration {
    let secs = std::env::var("KTUNE_FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(2.0);
    Duration::from_secs_f64(secs)
}

/// The regression corpus of a target: every file in `fuzz/corpus/<target>/`.
pub(crate) fn corpus(target: &str) -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    let mut out: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            let text = String::from_utf8_lossy(&std::fs::read(&p).ok()?).into_owned();
            Some((p, text))
        })
        .collect();
    out.sort();
    out
}

/// Runs `check` on the corpus, then on generated inputs until the budget is spent. A panic
/// or a failed check reports the input (and writes it under `target/fuzz-failures/`).
pub(crate) fn run_target(
    target: &str,
    generate: &mut dyn FnMut(&mut Xoshiro256PlusPlus) -> String,
    check: &dyn Fn(&str) -> Result<(), String>,
) -> usize {
    let fail = |input: &str, why: String| -> ! {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/fuzz-failures");
        let _ = std::fs::create_dir_all(&dir);
        let file = dir.join(format!("{target}-{:016x}.txt", fxhash(input)));
        let _ = std::fs::write(&file, input);
        panic!(
            "fuzz target `{target}`: {why}\ninput (also in {}):\n{input}",
            file.display()
        );
    };
    let run = |input: &str| {
        let started = Instant::now();
        match catch_unwind(AssertUnwindSafe(|| check(input))) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => fail(input, why),
            Err(_) => fail(input, "panicked".into()),
        }
        // A hang shows up as an input that takes far too long.
        if started.elapsed() > Duration::from_secs(20) {
            fail(input, format!("took {:?}", started.elapsed()));
        }
    };
    for (_, input) in corpus(target) {
        run(&input);
    }
    let seed = std::env::var("KTUNE_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x006b_7475_6e65_u64);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let deadline = Instant::now() + budget();
    let mut n = 0;
    while n == 0 || Instant::now() < deadline {
        let input = generate(&mut rng);
        run(&input);
        n += 1;
    }
    eprintln!(
        "fuzz target `{target}`: {n} inputs in {:?}, no failure",
        budget()
    );
    n
}

fn fxhash(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// Mutates text: a few random byte-level edits (insertions of interesting tokens, deletions,
/// duplications, truncation).
pub(crate) fn mutate(text: &str, rng: &mut Xoshiro256PlusPlus) -> String {
    const TOKENS: &[&str] = &[
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "=",
        "\"",
        "'",
        "\n",
        " ",
        "-",
        "+",
        "*",
        "**",
        "//",
        "%",
        "<",
        "==",
        "not ",
        " and ",
        " or ",
        " if ",
        " else ",
        "in",
        "1e308",
        "-0",
        "9223372036854775807",
        "nan",
        "inf",
        "[[parameter]]",
        "0x",
        "\\",
        "#",
        "é",
        "\u{0}",
        "true",
        "null",
        "99999999999999999999",
        "range(",
        "2**",
        "[i for i in range(3)]",
    ];
    let mut bytes: Vec<char> = text.chars().collect();
    for _ in 0..rng.random_range(1..4) {
        let at = if bytes.is_empty() {
            0
        } else {
            rng.random_range(0..=bytes.len())
        };
        match rng.random_range(0..5) {
            0 | 1 => {
                let t = TOKENS[rng.random_range(0..TOKENS.len())];
                for (k, c) in t.chars().enumerate() {
                    bytes.insert(at + k, c);
                }
            }
            2 if !bytes.is_empty() => {
                let end = (at + rng.random_range(1..8)).min(bytes.len());
                bytes.drain(at.min(end)..end);
            }
            3 if !bytes.is_empty() => {
                let end = (at + rng.random_range(1..16)).min(bytes.len());
                let piece: Vec<char> = bytes[at.min(end)..end].to_vec();
                for (k, c) in piece.into_iter().enumerate() {
                    bytes.insert(at + k, c);
                }
            }
            _ => bytes.truncate(at),
        }
    }
    bytes.into_iter().collect()
}

/// A random expression over x, y, z (int), r, s (real), b (bool) and c (string).
fn expression(rng: &mut Xoshiro256PlusPlus, depth: u32) -> String {
    let leaf = |rng: &mut Xoshiro256PlusPlus| -> String {
        match rng.random_range(0..12) {
            0 => "x".into(),
            1 => "y".into(),
            2 => "z".into(),
            3 => "r".into(),
            4 => "s".into(),
            5 => "b".into(),
            6 => ["0", "1", "2", "-3", "7", "64", "9223372036854775807"][rng.random_range(0..7)]
                .into(),
            7 => ["0.0", "0.5", "-2.5", "1e3", "1e308"][rng.random_range(0..5)].into(),
            8 => ["True", "False"][rng.random_range(0..2)].into(),
            9 => "(c == 'a')".into(),
            10 => "block_size_x".into(),
            _ => "tile".into(),
        }
    };
    if depth == 0 || rng.random_range(0..4) == 0 {
        return leaf(rng);
    }
    let sub = |rng: &mut Xoshiro256PlusPlus| expression(rng, depth - 1);
    match rng.random_range(0..11) {
        0..=2 => {
            let op = ["+", "-", "*", "/", "//", "%", "**"][rng.random_range(0..7)];
            format!("({} {op} {})", sub(rng), sub(rng))
        }
        3 | 4 => {
            let op = ["<", "<=", "==", "!=", ">", ">="][rng.random_range(0..6)];
            format!("({} {op} {})", sub(rng), sub(rng))
        }
        5 => {
            let op = [" and ", " or "][rng.random_range(0..2)];
            format!("({}{op}{})", sub(rng), sub(rng))
        }
        6 => format!("(not {})", sub(rng)),
        7 => format!("({} if {} else {})", sub(rng), sub(rng), sub(rng)),
        8 => {
            let f = ["min", "max", "abs", "int", "float", "round"][rng.random_range(0..6)];
            if matches!(f, "min" | "max") {
                format!("{f}({}, {})", sub(rng), sub(rng))
            } else {
                format!("{f}({})", sub(rng))
            }
        }
        9 => format!("({} in [{}, {}, 4])", sub(rng), sub(rng), sub(rng)),
        _ => format!("(-{})", sub(rng)),
    }
}

fn fuzz_symbols() -> Vec<Symbol> {
    use ExprType::*;
    [
        ("x", Int),
        ("y", Int),
        ("z", Int),
        ("r", Real),
        ("s", Real),
        ("b", Bool),
        ("c", Str),
        ("block_size_x", Int),
        ("tile", Int),
    ]
    .into_iter()
    .map(|(n, t)| Symbol::new(n, t))
    .collect()
}

fn assignment(rng: &mut Xoshiro256PlusPlus, interner: &mut Interner) -> Vec<Scalar> {
    let int = |rng: &mut Xoshiro256PlusPlus| -> i64 {
        [0, 1, -1, 2, 7, -3, 64, 1 << 40, i64::MAX, i64::MIN][rng.random_range(0..10)]
    };
    let real = |rng: &mut Xoshiro256PlusPlus| -> f64 {
        [0.0, -0.0, 0.5, -2.5, 1e300, 3.0][rng.random_range(0..6)]
    };
    let c = ["a", "b", ""][rng.random_range(0..3)];
    vec![
        Scalar::Int(int(rng)),
        Scalar::Int(int(rng)),
        Scalar::Int(int(rng)),
        Scalar::Real(real(rng)),
        Scalar::Real(real(rng)),
        Scalar::Bool(rng.random_range(0..2) == 1),
        Scalar::Str(interner.intern(c)),
        Scalar::Int(int(rng)),
        Scalar::Int(int(rng)),
    ]
}

/// Compiles `src`; where it compiles, evaluates it on a few assignments (derived from the
/// text, so a corpus file replays exactly) with both evaluators.
fn check_expression(src: &str) -> Result<(), String> {
    let symbols = fuzz_symbols();
    let mut interner = Interner::default();
    // Errors are fine; they must render (with the caret) without panicking.
    let tree = match parse(src) {
        Ok(t) => t,
        Err(e) => {
            let _ = e.render(src);
            return Ok(());
        }
    };
    let compiled = match Compiler::new(&symbols, &mut interner).expr(&tree) {
        Ok(c) => c.into_scalar_fn(),
        Err(e) => {
            let _ = e.render(src);
            return Ok(());
        }
    };
    let _ = Constraint::compile(src, &symbols, &mut interner);
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(fxhash(src));
    for _ in 0..4 {
        let values = assignment(&mut rng, &mut interner);
        let got = compiled(&values);
        let reference = Interp::new(env_for(&symbols, &values, &interner)).eval(&tree);
        if !agree(&got, &reference, &interner) {
            return Err(format!(
                "compiled {got:?} but the interpreter {reference:?} on {values:?}"
            ));
        }
    }
    Ok(())
}

#[test]
fn fuzz_constraint_language() {
    let n = run_target(
        "constraint",
        &mut |rng| {
            let e = expression(rng, 5);
            if rng.random_range(0..4) == 0 {
                mutate(&e, rng)
            } else {
                e
            }
        },
        &check_expression,
    );
    assert!(n > 0);
}
