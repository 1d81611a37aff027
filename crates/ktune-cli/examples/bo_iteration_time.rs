//! Median strategy time of one Bayesian-optimisation iteration (ask + tell) at about 220
//! observations, on brute-forced spaces in simulation:
//! `cargo run --release -p ktune-cli --example bo_iteration_time -- ../shared/data/spaces/dedispersion_*.json.gz`
//!
//! Options before the files: `--strategy <spec>` (default `bayes_opt`), `--at <n>` (the
//! observation count to time around, ±10; default 220), `--seeds <k>` (default 5),
//! `--leave-one-out` (each file's strategy is told every other file as a prior, as
//! `ktune bench --transfer leave-one-out` does; the process's peak memory is printed at the
//! end, all simulations and priors included).

use ktune_core::testing::Timed;
use ktune_core::{Budget, Rng, Tuner};
use ktune_runners::Simulation;
use rand::SeedableRng;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut take = |flag: &str, default: &str| -> String {
        match args.iter().position(|a| a == flag) {
            Some(i) if i + 1 < args.len() => {
                let v = args.remove(i + 1);
                args.remove(i);
                v
            }
            _ => default.to_string(),
        }
    };
    let spec = take("--strategy", "bayes_opt");
    let at: usize = take("--at", "220").parse().unwrap_or(220);
    let seeds: u64 = take("--seeds", "5").parse().unwrap_or(5);
    let loo = match args.iter().position(|a| a == "--leave-one-out") {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    };
    let paths = args;
    if paths.is_empty() {
        eprintln!(
            "usage: bo_iteration_time [--strategy spec] [--at n] [--seeds k] <cache files...>"
        );
        std::process::exit(2);
    }
    let sims: Vec<Simulation> = paths
        .iter()
        .map(|path| {
            Simulation::open(path.as_ref(), None, None).unwrap_or_else(|e| {
                eprintln!("error: {e}");
                std::process::exit(1);
            })
        })
        .collect();
    for (i, sim) in sims.iter().enumerate() {
        let priors: Vec<ktune_core::MatchedPrior> = if loo {
            sims.iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, other)| {
                    other
                        .prior()
                        .match_onto(sim.space(), sim.objective().direction)
                        .ok()
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut near_220 = Vec::new();
        let mut priors_told = Vec::new();
        for seed in 0..seeds {
            let (_, inner) = match ktune_strategies::create_spec(&spec) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("error: {e}");
                    std::process::exit(2);
                }
            };
            let mut timed = Timed::new(inner);
            let mut runner = sim.runner();
            let budget = Budget::evaluations(at + 20);
            Tuner::new(sim.space(), &mut runner, budget)
                .priors(&priors)
                .run(&mut timed, &mut Rng::seed_from_u64(seed))
                .expect("simulation runs");
            priors_told.push(timed.priors_told);
            near_220.extend(
                timed
                    .samples
                    .iter()
                    .filter(|(n, _)| (at.saturating_sub(10)..=at + 10).contains(n))
                    .map(|(_, t)| *t),
            );
        }
        near_220.sort_by(f64::total_cmp);
        let Some(&median) = near_220.get(near_220.len() / 2) else {
            eprintln!("{}: no iteration timed", sim.name());
            continue;
        };
        priors_told.sort_by(f64::total_cmp);
        println!(
            "{}: {} candidates, {} priors, {spec}: median ask+tell at {}-{} observations: {:.2} ms ({} iterations, {seeds} seeds); priors told in {:.1} ms (median)",
            sim.name(),
            sim.space().size(),
            priors.len(),
            at.saturating_sub(10),
            at + 10,
            median * 1e3,
            near_220.len(),
            priors_told[priors_told.len() / 2] * 1e3
        );
    }
    // The peak resident memory of the whole process (Linux), every simulation and prior in it.
    if let Some(kb) = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
    {
        println!("peak memory of the process: {:.0} MB", kb as f64 / 1024.0);
    }
}
