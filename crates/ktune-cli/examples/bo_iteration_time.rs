//! Median strategy time of one Bayesian-optimisation iteration (ask + tell) at about 220
//! observations, on brute-forced spaces in simulation:
//! `cargo run --release -p ktune-cli --example bo_iteration_time -- ../shared/data/spaces/dedispersion_*.json.gz`

use std::time::Instant;

use ktune_core::{Budget, History, Observation, Rng, Strategy, Tuner};
use ktune_runners::Simulation;
use ktune_space::{Configuration, SearchSpace};
use rand::SeedableRng;

/// Times every ask + tell of the wrapped strategy, with the number of observations so far.
struct Timed {
    inner: Box<dyn Strategy + Send>,
    observed: usize,
    pending: f64,
    samples: Vec<(usize, f64)>,
}

impl Strategy for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn ask(
        &mut self,
        space: &SearchSpace,
        history: &History,
        n: usize,
        rng: &mut Rng,
    ) -> Vec<Configuration> {
        let t = Instant::now();
        let out = self.inner.ask(space, history, n, rng);
        self.pending = t.elapsed().as_secs_f64();
        self.observed = history.len();
        out
    }
    fn tell(&mut self, space: &SearchSpace, observations: &[Observation]) {
        let t = Instant::now();
        self.inner.tell(space, observations);
        self.samples
            .push((self.observed, self.pending + t.elapsed().as_secs_f64()));
    }
}

fn main() {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        eprintln!("usage: bo_iteration_time <cache files...>");
        std::process::exit(2);
    }
    for path in paths {
        let sim = match Simulation::open(path.as_ref(), None, None) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        let mut near_220 = Vec::new();
        for seed in 0..5 {
            let (_, inner) = ktune_strategies::create_spec("bayes_opt").expect("registered");
            let mut timed = Timed {
                inner,
                observed: 0,
                pending: 0.0,
                samples: Vec::new(),
            };
            let mut runner = sim.runner();
            let budget = Budget {
                max_evaluations: Some(240),
                ..Budget::default()
            };
            Tuner::new(sim.space(), &mut runner, budget)
                .run(&mut timed, &mut Rng::seed_from_u64(seed))
                .expect("simulation runs");
            near_220.extend(
                timed
                    .samples
                    .iter()
                    .filter(|(n, _)| (210..=230).contains(n))
                    .map(|(_, t)| *t),
            );
        }
        near_220.sort_by(f64::total_cmp);
        let median = near_220[near_220.len() / 2];
        println!(
            "{}: {} candidates, median ask+tell at 210-230 observations: {:.2} ms ({} iterations, 5 seeds)",
            sim.name(),
            sim.space().size(),
            median * 1e3,
            near_220.len()
        );
    }
}
