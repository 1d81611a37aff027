//! Timing of the incremental GP at BO scale (run with `--release`):
//!
//! ```text
//! cargo run --release -p ktune-model --example gp_timing
//! ```
//!
//! Builds m = 11130 random candidates in d = 8, observes 220 of them, and prints the
//! median time of one `observe` plus reading all variances (and means) at n ≈ 200..220.

use std::time::{Duration, Instant};

use ktune_model::{CandidateGp, Kernel, KernelKind};

const M: usize = 11_130;
const D: usize = 8;
const N: usize = 220;
/// Steps whose timings are reported (n at the time of the observation, 0-based).
const REPORT_FROM: usize = 200;

/// SplitMix64: deterministic, dependency-free random numbers in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), ktune_model::ModelError> {
    let mut rng = Rng(42);
    let cands: Vec<f64> = (0..M * D).map(|_| rng.next()).collect();
    let objective = |x: &[f64]| -> f64 {
        1e3 + x
            .iter()
            .enumerate()
            .map(|(i, v)| ((i + 1) as f64 * v).sin())
            .sum::<f64>()
    };
    let mut order: Vec<usize> = (0..M).collect();
    for i in 0..N {
        let j = i + (rng.next() * (M - i) as f64) as usize;
        order.swap(i, j);
    }

    let kernel = Kernel::new(KernelKind::Matern52, 0.5);
    let mut gp = CandidateGp::new(kernel, cands.clone(), D)?;
    let (mut t_obs, mut t_obs_var, mut t_all) = (Vec::new(), Vec::new(), Vec::new());
    let start = Instant::now();
    let mut checksum = 0.0;
    for (step, &j) in order[..N].iter().enumerate() {
        let y = objective(&cands[j * D..(j + 1) * D]);
        let t0 = Instant::now();
        gp.observe(j, y)?;
        let t1 = Instant::now();
        let vars = gp.variances();
        let t2 = Instant::now();
        let means = gp.means();
        let t3 = Instant::now();
        checksum += vars[0] + means[0];
        if step >= REPORT_FROM {
            t_obs.push(t1 - t0);
            t_obs_var.push(t2 - t0);
            t_all.push(t3 - t0);
        }
    }
    let total = start.elapsed();
    let t0 = Instant::now();
    gp.rebuild(Kernel::new(KernelKind::Matern52, 0.4))?;
    let t_rebuild = t0.elapsed();

    println!(
        "m = {M}, d = {D}, n = {N}, rayon threads = {}",
        rayon::current_num_threads()
    );
    println!("median over n = {REPORT_FROM}..{N}:");
    println!("  observe                       {:?}", median(t_obs));
    println!("  observe + variances()         {:?}", median(t_obs_var));
    println!("  observe + variances + means() {:?}", median(t_all));
    println!("all {N} observations (with reads): {total:?}; rebuild at n = {N}: {t_rebuild:?}");
    println!(
        "V storage: {:.1} MB; jitter events: {}; checksum {checksum:.6}",
        (N * M * 8) as f64 / 1e6,
        gp.jitter_events()
    );
    Ok(())
}
