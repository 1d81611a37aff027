//! How often the truly fastest of three close configurations is found: by one measurement
//! each (single shot), by the adaptive measurement of a tuning run (each configuration
//! measured alone, one after another), and by paired re-ranking (interleaved rounds).
//!
//! The program is real (compiled with gcc, run as a process by the command runner): it
//! reports `BASE · (1 + drift) · (1 + JITTER · u)` with `u` uniform in [-1, 1) from a seeded
//! generator and a slow drift `0.05 · sin(n / 15)` of the machine, where `n` counts every run
//! in the trial (a file in the working directory), so measurements taken at different times
//! see different speeds, as on a machine whose clocks or temperature wander.
//!
//!   cargo run --release -p ktune-runners --example rerank_rate -- [trials] [gap] [jitter]
//!
//! Defaults: 200 trials, true times 1, 1 + gap, 1 + 2·gap with gap = 0.03, jitter 0.1.

use ktune_core::Runner;
use ktune_runners::{CommandRunner, CommandSpec};
use ktune_space::{Parameter, SearchSpace, Value};

const PROGRAM: &str = r#"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    double b = atof(argv[1]), jit = atof(argv[2]);
    long trial = atol(argv[3]), n = 0;
    FILE *f = fopen("count", "r");
    if (f) { if (fscanf(f, "%ld", &n) != 1) n = 0; fclose(f); }
    f = fopen("count", "w"); fprintf(f, "%ld\n", n + 1); fclose(f);
    unsigned long long x = 88172645463325252ULL ^ (unsigned long long)(trial * 1000003 + n);
    for (int i = 0; i < 8; i++) { x ^= x << 13; x ^= x >> 7; x ^= x << 17; }
    double u = (double)(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    double drift = 0.05 * sin((double)n / 15.0 + trial);
    printf("time: %.9f ms\n", b * (1.0 + drift) * (1.0 + jit * u));
    return 0;
}
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let trials: usize = args.first().map_or(Ok(200), |s| s.parse())?;
    let gap: f64 = args.get(1).map_or(Ok(0.03), |s| s.parse())?;
    let jitter: f64 = args.get(2).map_or(Ok(0.1), |s| s.parse())?;
    let bases = [1.0, 1.0 + gap, 1.0 + 2.0 * gap];
    let space = SearchSpace::new(
        vec![
            Parameter::real("base", bases)?,
            Parameter::integer_range("trial", 0, trials as i64, 1)?,
        ],
        &[] as &[&str],
    )?;
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("drift.c"), PROGRAM)?;
    let spec = |measure: &str| -> Result<CommandSpec, toml::de::Error> {
        toml::from_str(&format!(
            "compile = [\"gcc\", \"-O1\", \"drift.c\", \"-o\", \"{{build_dir}}/drift\", \"-lm\"]\n\
             run = [\"{{build_dir}}/drift\", \"{{base}}\", \"{jitter}\", \"{{trial}}\"]\n\
             objective = {{ regex = 'time: (?P<value>[0-9.]+) ms' }}\n{measure}"
        ))
    };
    let mut single = CommandRunner::new(&spec("repeat = 1")?, &space, dir.path())?;
    let mut adaptive = CommandRunner::new(&spec("")?, &space, dir.path())?;
    let (mut right_single, mut right_adaptive, mut right_rerank) = (0, 0, 0);
    let (mut runs_adaptive, mut runs_rerank) = (0usize, 0usize);
    let started = std::time::Instant::now();
    for t in 0..trials {
        let configs: Vec<_> = bases
            .iter()
            .map(|&b| space.configuration_of(&[Value::Real(b), Value::Int(t as i64)]))
            .collect::<Option<_>>()
            .ok_or("configuration")?;
        let best = |outcomes: &[ktune_core::Outcome]| {
            (0..outcomes.len())
                .min_by(|&a, &b| {
                    let v = |i: usize| outcomes[i].objective().unwrap_or(f64::INFINITY);
                    v(a).total_cmp(&v(b))
                })
                .unwrap_or(0)
        };
        let _ = std::fs::remove_file(dir.path().join("count"));
        right_single += usize::from(best(&single.evaluate(&space, &configs)?) == 0);
        let _ = std::fs::remove_file(dir.path().join("count"));
        let a = adaptive.evaluate(&space, &configs)?;
        runs_adaptive += a
            .iter()
            .filter_map(|o| o.summary())
            .map(|s| s.n)
            .sum::<usize>();
        right_adaptive += usize::from(best(&a) == 0);
        let _ = std::fs::remove_file(dir.path().join("count"));
        let rounds = 10;
        right_rerank += usize::from(best(&adaptive.remeasure(&space, &configs, rounds)?) == 0);
        runs_rerank += rounds * configs.len();
    }
    let pct = |k: usize| 100.0 * k as f64 / trials as f64;
    println!(
        "{trials} trials, true times {bases:?} ms, jitter ±{:.0}% uniform, drift ±5%, {:.1} s",
        jitter * 100.0,
        started.elapsed().as_secs_f64()
    );
    println!(
        "single shot (1 run each):             fastest found in {:5.1}% (3 runs per trial)",
        pct(right_single)
    );
    println!(
        "adaptive, one after another (default): fastest found in {:5.1}% ({:.1} runs per trial)",
        pct(right_adaptive),
        runs_adaptive as f64 / trials as f64
    );
    println!(
        "paired re-ranking (10 rounds):        fastest found in {:5.1}% ({:.1} runs per trial)",
        pct(right_rerank),
        runs_rerank as f64 / trials as f64
    );
    Ok(())
}
