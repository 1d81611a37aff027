//! Builds a spec's search space repeatedly, for profiling construction:
//! `cargo run --release -p ktune-space --example build_profile -- <spec> [repeats]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: build_profile <spec> [repeats]");
        std::process::exit(2);
    };
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let spec = match ktune_space::spec::SpaceSpec::from_path(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let started = std::time::Instant::now();
    let mut size = 0;
    for _ in 0..repeats {
        size = std::hint::black_box(spec.build().expect("spec builds")).size();
    }
    let per = started.elapsed().as_secs_f64() * 1e3 / repeats as f64;
    println!("{path}: {size} configurations, {per:.3} ms per build");
}
