//! Throughput of the storages under many workers: `cargo bench -p ktune-store --bench
//! throughput [-- WORKERS EVALUATIONS]` (default 16 workers, 4000 evaluations).
//!
//! Every worker repeats what a real worker does per evaluation, back to back with no
//! measurement in between: read the records others made since its last look
//! (`records_since`), claim a configuration (against the study's budget) and record its
//! outcome. The result is how many such evaluation cycles per second the storage sustains
//! (three storage operations each), i.e. the rate of evaluations above which the store,
//! not the GPUs, would be the limit. SQLite runs on a file in the system's temporary folder;
//! PostgreSQL on the server of `KTUNE_PG_URL` (skipped without it).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use ktune_core::{Claim, Outcome, Record, Recorded, Timings};
use ktune_space::{Parameter, SearchSpace};
use ktune_store::{Fingerprint, Location};

fn space() -> SearchSpace {
    SearchSpace::new(
        vec![Parameter::integer_range("x", 0, 999_999, 1).expect("a valid parameter")],
        &[] as &[&str],
    )
    .expect("a valid space")
}

/// Runs `workers` threads, each with its own connection, until the study holds `budget`
/// records; the cycles per second and the median cycle time.
fn measure(location: &Location, study: &str, workers: usize, budget: usize) -> (f64, f64) {
    let space = Arc::new(space());
    let fingerprint = Fingerprint::new(&space, r#"{"bench":"throughput"}"#, "time");
    drop(
        location
            .open_study(study, &fingerprint)
            .expect("the study opens"),
    );
    let next = Arc::new(AtomicU32::new(0));
    let started = Instant::now();
    let cycles: Vec<Vec<f64>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (space, next, fingerprint) = (space.clone(), next.clone(), &fingerprint);
                scope.spawn(move || {
                    let mut store = location
                        .open_study(study, fingerprint)
                        .expect("the study opens");
                    let id = format!("worker-{w}");
                    let mut last: Option<u64> = None;
                    let mut times = Vec::new();
                    loop {
                        let t = Instant::now();
                        let seen = store.records_since(&space, last).expect("records");
                        if let Some(r) = seen.last() {
                            last = Some(r.seq);
                        }
                        let x = next.fetch_add(1, Ordering::Relaxed);
                        let config = vec![x];
                        match store
                            .claim(&config, &id, Duration::from_secs(60), Some(budget))
                            .expect("claim")
                        {
                            Claim::Granted => {}
                            Claim::BudgetSpent => break,
                            other => panic!("fresh configuration {x} was {other:?}"),
                        }
                        let record = Record {
                            config,
                            outcome: Outcome::ok(
                                vec![f64::from(x % 1000) + 0.5],
                                Timings {
                                    compile: 1.25,
                                    benchmark: 0.5,
                                    ..Timings::default()
                                },
                            ),
                            clock: t.elapsed().as_secs_f64(),
                        };
                        match store
                            .record(&space, &id, &record, Some(budget))
                            .expect("record")
                        {
                            Recorded::New(_) => {}
                            other => panic!("record of a granted claim was {other:?}"),
                        }
                        times.push(t.elapsed().as_secs_f64());
                    }
                    times
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker panicked"))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut all: Vec<f64> = cycles.into_iter().flatten().collect();
    assert_eq!(all.len(), budget, "the study holds exactly its budget");
    all.sort_by(f64::total_cmp);
    (budget as f64 / elapsed, all[all.len() / 2])
}

fn main() {
    // `cargo bench` passes `--bench`; numbers are ours.
    let numbers: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let workers = numbers.first().copied().unwrap_or(16);
    let budget = numbers.get(1).copied().unwrap_or(4000);
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut storages = vec![(
        "SQLite (WAL, one file)".to_string(),
        Location::Sqlite(dir.path().join("throughput.db")),
    )];
    match std::env::var("KTUNE_PG_URL") {
        Ok(url) if !url.is_empty() => storages.push((
            "PostgreSQL".to_string(),
            Location::parse(&url).expect("KTUNE_PG_URL is a PostgreSQL URL"),
        )),
        _ => eprintln!("SKIPPED PostgreSQL: KTUNE_PG_URL is not set"),
    }
    println!("{workers} workers, {budget} evaluations; one cycle = records_since + claim + record");
    println!("| storage | cycles/s | storage operations/s | median cycle (ms) |");
    println!("|---|---:|---:|---:|");
    for (name, location) in &storages {
        let study = ktune_store::conformance::unique("throughput");
        let (rate, median) = measure(location, &study, workers, budget);
        println!(
            "| {name} | {rate:.0} | {:.0} | {:.2} |",
            3.0 * rate,
            median * 1000.0
        );
    }
}
